//! Content hashes: PAM §6 `content_hash` (the dedup key) and plain SHA-256 helpers.

use sha2::{Digest, Sha256};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

/// Whether `c` is whitespace for Python's `str.isspace()`, which PAM's reference uses.
///
/// Rust's `char::is_whitespace` lacks U+001C–U+001F, so hashes would differ without this.
pub fn is_python_whitespace(c: char) -> bool {
    matches!(c,
        '\u{9}'..='\u{d}' | '\u{1c}'..='\u{20}' | '\u{85}' | '\u{a0}' | '\u{1680}'
        | '\u{2000}'..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}')
}

/// PAM §6 normalization: strip, full Unicode lowercase, NFC, collapse whitespace runs to one space.
pub fn pam_normalize(content: &str) -> String {
    let stripped = content.trim_matches(is_python_whitespace);
    let mut out = String::with_capacity(stripped.len());
    if stripped.is_ascii() {
        // Fast path: ASCII lowercases byte for byte and is already NFC.
        let mut in_space = false;
        for byte in stripped.bytes() {
            if is_python_whitespace(byte as char) {
                in_space = true;
                continue;
            }
            if in_space {
                out.push(' ');
                in_space = false;
            }
            out.push(byte.to_ascii_lowercase() as char);
        }
        return out;
    }
    let lowered = stripped.to_lowercase();
    // Most text is already NFC; the quick check skips the (slow) composition pass for it.
    let composed: std::borrow::Cow<str> = if is_nfc_quick(lowered.chars()) == IsNormalized::Yes {
        std::borrow::Cow::Borrowed(&lowered)
    } else {
        std::borrow::Cow::Owned(lowered.nfc().collect())
    };
    let mut in_space = false;
    for c in composed.chars() {
        if is_python_whitespace(c) {
            in_space = true;
            continue;
        }
        if in_space {
            out.push(' ');
            in_space = false;
        }
        out.push(c);
    }
    out
}

/// The PAM `content_hash` digest of `content` (SHA-256 of the normalized UTF-8 bytes).
pub fn pam_content_digest(content: &str) -> [u8; 32] {
    let stripped = content.trim_matches(is_python_whitespace);
    if !stripped.is_ascii() {
        return sha256(pam_normalize(stripped).as_bytes());
    }
    // ASCII fast path: lowercase and collapse whitespace byte by byte through a small buffer
    // straight into the hasher (`stripped` has no whitespace at either end).
    let mut hasher = Sha256::new();
    let mut buffer = [0u8; 4096];
    let mut filled = 0;
    let mut pending_space = false;
    let bytes = stripped.as_bytes();
    let mut position = 0;
    while position < bytes.len() {
        if filled + 10 > buffer.len() {
            buffer[..filled].make_ascii_lowercase();
            hasher.update(&buffer[..filled]);
            filled = 0;
        }
        // Eight bytes at a time while none is at or below a space (all of Python's ASCII
        // whitespace is); the buffer is lowercased in bulk before hashing.
        if position + 8 <= bytes.len() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[position..position + 8]);
            if !has_byte_at_most_space(u64::from_le_bytes(word)) {
                if pending_space {
                    buffer[filled] = b' ';
                    filled += 1;
                    pending_space = false;
                }
                buffer[filled..filled + 8].copy_from_slice(&word);
                filled += 8;
                position += 8;
                continue;
            }
        }
        let byte = bytes[position];
        position += 1;
        if ASCII_PYTHON_WHITESPACE[usize::from(byte)] {
            pending_space = true;
            continue;
        }
        if pending_space {
            buffer[filled] = b' ';
            filled += 1;
            pending_space = false;
        }
        buffer[filled] = byte;
        filled += 1;
    }
    buffer[..filled].make_ascii_lowercase();
    hasher.update(&buffer[..filled]);
    hasher.finalize().into()
}

/// Whether any byte of `word` is 0x20 or less (SWAR has-less-than test; exact for ASCII input).
fn has_byte_at_most_space(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    word.wrapping_sub(ONES * 0x21) & !word & HIGHS != 0
}

/// Python's whitespace among ASCII bytes: 0x09–0x0D, 0x1C–0x20.
static ASCII_PYTHON_WHITESPACE: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 128 {
        table[byte] = matches!(byte, 0x09..=0x0d | 0x1c..=0x20);
        byte += 1;
    }
    table
};

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// `sha256:` followed by the lowercase hex of `digest`, the form every format here writes.
pub fn sha256_label(digest: &[u8; 32]) -> String {
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    push_hex(&mut out, digest);
    out
}

/// Appends lowercase hex of `bytes` to `out`.
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0x0f)] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdk_unit_facts() {
        assert_eq!(pam_normalize("  Hello  World  "), "hello world");
        assert_eq!(pam_normalize("a\t\nb"), "a b");
        assert_eq!(pam_normalize("caf\u{65}\u{301}"), pam_normalize("caf\u{e9}"));
        assert_eq!(pam_normalize("\u{1c}x\u{1f}y\u{85}"), "x y");
    }

    #[test]
    fn ascii_fast_path_matches_normalize() {
        let long_words = "ABCDEFGHIJ\tKLMNOPQRSTUVWXYZ abcdefgh12345678\n\n\nXYZ ".repeat(300);
        for text in ["  Hello \t\n World  ", "a\u{1c}b", "", "   ", &"Ab ".repeat(5000), &long_words, "x\u{1}y"] {
            assert_eq!(pam_content_digest(text), sha256(pam_normalize(text).as_bytes()), "{text:?}");
        }
    }

    #[test]
    fn published_vector() {
        let digest = pam_content_digest("User is a cloud infrastructure engineer");
        assert_eq!(sha256_label(&digest), "sha256:e1bae3ec291c99eced01fc91b4152a0cef541fccf2034fc11b3f90f4e4d79b6e");
    }
}
