//! Content hashes: PAM §6 `content_hash` (the dedup key) and plain SHA-256 helpers.

use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

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
    let mut in_space = false;
    for c in lowered.nfc() {
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
    for &byte in stripped.as_bytes() {
        if ASCII_PYTHON_WHITESPACE[usize::from(byte)] {
            pending_space = true;
            continue;
        }
        if filled + 2 > buffer.len() {
            hasher.update(&buffer[..filled]);
            filled = 0;
        }
        if pending_space {
            buffer[filled] = b' ';
            filled += 1;
            pending_space = false;
        }
        buffer[filled] = byte.to_ascii_lowercase();
        filled += 1;
    }
    hasher.update(&buffer[..filled]);
    hasher.finalize().into()
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
        for text in ["  Hello \t\n World  ", "a\u{1c}b", "", "   ", &"Ab ".repeat(5000)] {
            assert_eq!(pam_content_digest(text), sha256(pam_normalize(text).as_bytes()), "{text:?}");
        }
    }

    #[test]
    fn published_vector() {
        let digest = pam_content_digest("User is a cloud infrastructure engineer");
        assert_eq!(sha256_label(&digest), "sha256:e1bae3ec291c99eced01fc91b4152a0cef541fccf2034fc11b3f90f4e4d79b6e");
    }
}
