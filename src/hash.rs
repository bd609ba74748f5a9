//! Content hashes: PAM §6 `content_hash` (the dedup key) and plain SHA-256 helpers.

use sha2::{Digest, Sha256};
use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

use crate::ascii_word::{HIGH_BITS, ONES, printable_ascii};

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
    if stripped.is_ascii() {
        // ASCII lowercases character by character and is already NFC.
        return collapse_whitespace(stripped.chars().map(|c| c.to_ascii_lowercase()), stripped.len());
    }
    if stripped.contains('\u{3a3}') {
        // Σ lowercases by context (Final_Sigma): let the standard library handle the whole text.
        return collapse_whitespace(stripped.to_lowercase().nfc(), stripped.len());
    }
    // Lowercase and collapse whitespace in one pass (ASCII bytes through a table, other
    // characters one by one), then compose (NFC) only when a character that could change under
    // NFC appeared and the quick check is not sure. NFC never turns a non-space into
    // whitespace, so collapsing first gives the reference's result.
    let mut out = String::with_capacity(stripped.len());
    let mut maybe_not_nfc = false;
    let mut in_space = false;
    let bytes = stripped.as_bytes();
    let mut position = 0;
    while position < bytes.len() {
        // Eight ASCII bytes at once where they hold no whitespace run, as in the ASCII-only path.
        // A space the word ends with is held back like any other, so a run it starts collapses.
        if let Some(mapped) = bytes.get(position..position + 8).and_then(|word| lowercase_word(word, in_space)) {
            if in_space {
                out.push(' ');
            }
            in_space = mapped[7] == b' ';
            let kept = if in_space { &mapped[..7] } else { &mapped[..] };
            // `lowercase_word` only returns printable ASCII.
            out.push_str(std::str::from_utf8(kept).unwrap_or_default());
            position += 8;
            continue;
        }
        let byte = bytes[position];
        if byte < 0x80 {
            let mapped = ASCII_PAM_MAP[usize::from(byte)];
            position += 1;
            if mapped == b' ' {
                in_space = true;
                continue;
            }
            if in_space {
                out.push(' ');
                in_space = false;
            }
            out.push(char::from(mapped));
            continue;
        }
        let Some(c) = stripped[position..].chars().next() else { break };
        position += c.len_utf8();
        if is_python_whitespace(c) {
            in_space = true;
            continue;
        }
        if in_space {
            out.push(' ');
            in_space = false;
        }
        for lower in c.to_lowercase() {
            // Below U+0300 every character is NFC-stable and never combines backwards.
            maybe_not_nfc |= lower >= '\u{300}';
            out.push(lower);
        }
    }
    if maybe_not_nfc {
        return compose_where_needed(out);
    }
    out
}

/// `text` in NFC, composing only the stretches that can change. A character below U+0300, or
/// a starter whose quick check says Yes, begins a stretch that normalizes on its own: nothing
/// before it reorders past it or composes with it (characters that compose with the one before
/// them have quick check Maybe). Text in scripts that need no composing is then checked
/// character by character, as the quick check did anyway, and copied no more.
fn compose_where_needed(text: String) -> String {
    let is_boundary =
        |c: char| c < '\u{300}' || (canonical_combining_class(c) == 0 && is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes);
    let mut composed: Option<String> = None;
    // Text up to `copied` is in `composed`; the stretch being read starts at `stretch_start`.
    let (mut copied, mut stretch_start, mut stretch_changes) = (0, 0, false);
    for (position, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        if !is_boundary(c) {
            stretch_changes = true;
            continue;
        }
        if stretch_changes {
            let out = composed.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..stretch_start]);
            out.extend(text[stretch_start..position].nfc());
            copied = position;
        }
        (stretch_start, stretch_changes) = (position, false);
    }
    match composed {
        // NFC never makes whitespace of other characters; collapsed again all the same, as
        // the reference collapses after composing.
        Some(mut out) => {
            out.push_str(&text[copied..]);
            collapse_whitespace(out.chars(), out.len())
        }
        None => text,
    }
}

/// Collects `chars`, turning each run of Python whitespace into one space (`chars` has none at
/// either end).
fn collapse_whitespace(chars: impl Iterator<Item = char>, capacity: usize) -> String {
    let mut out = String::with_capacity(capacity);
    let mut in_space = false;
    for c in chars {
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
    let mut hasher = Sha256::new();
    for_each_normalized_piece(content, |piece| hasher.update(piece));
    hasher.finalize().into()
}

/// What a message's text is known by: its dedup key and, when an output writes it, its PAM
/// `content_hash` digest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContentKey {
    /// XXH3-128 of the PAM-normalized text: two texts that normalize alike (PAM §6) share it.
    /// It never leaves the run, so a fast hash will do (see [`content_key`]).
    pub dedup: u128,
    /// The PAM `content_hash` digest ([`pam_content_digest`]), when it was asked for.
    pub pam_digest: Option<[u8; 32]>,
}

/// The [`ContentKey`] of `content`, normalized once for both hashes; the SHA-256 digest only
/// `with_pam_digest`. Dedup compares keys within one run and nothing stores them, so the key
/// need not be a cryptographic hash: 128 bits make an accidental collision as unlikely as
/// with the digest's first 128 bits, which dedup keyed on before, and XXH3 runs at memory
/// speed where SHA-256 cost a twentieth of a Gemini conversion.
pub fn content_key(content: &str, with_pam_digest: bool) -> ContentKey {
    let mut dedup = twox_hash::XxHash3_128::new();
    let mut digest = with_pam_digest.then(Sha256::new);
    for_each_normalized_piece(content, |piece| {
        dedup.write(piece);
        if let Some(digest) = &mut digest {
            digest.update(piece);
        }
    });
    ContentKey { dedup: dedup.finish_128(), pam_digest: digest.map(|digest| digest.finalize().into()) }
}

/// Hands the PAM-normalized UTF-8 bytes of `content` to `take`, in pieces (their concatenation
/// is [`pam_normalize`]`(content)`).
fn for_each_normalized_piece(content: &str, mut take: impl FnMut(&[u8])) {
    let stripped = content.trim_matches(is_python_whitespace);
    if !stripped.is_ascii() {
        take(pam_normalize(stripped).as_bytes());
        return;
    }
    // ASCII fast path, branch-free: every byte is mapped (whitespace to a space, letters to
    // lowercase) and written; the write position advances past a space only when the previous
    // byte was not whitespace, so runs collapse. `stripped` has no whitespace at either end.
    // Eight bytes are mapped at once where they hold no whitespace run.
    let bytes = stripped.as_bytes();
    let mut buffer = [0u8; 4096];
    let mut filled = 0;
    let mut previous_was_space = 0usize;
    let mut position = 0;
    let mut bytewise_until = 0;
    while position < bytes.len() {
        if filled + 8 > buffer.len() {
            take(&buffer[..filled]);
            filled = 0;
        }
        if position >= bytewise_until {
            let mapped = bytes.get(position..position + 8).and_then(|word| lowercase_word(word, previous_was_space == 1));
            if let Some(mapped) = mapped {
                buffer[filled..filled + 8].copy_from_slice(&mapped);
                filled += 8;
                previous_was_space = usize::from(mapped[7] == b' ');
                position += 8;
                continue;
            }
            bytewise_until = position + 8;
        }
        let mapped = ASCII_PAM_MAP[usize::from(bytes[position])];
        let is_space = usize::from(mapped == b' ');
        buffer[filled] = mapped;
        filled += 1 - (is_space & previous_was_space);
        previous_was_space = is_space;
        position += 1;
    }
    take(&buffer[..filled]);
}

/// Eight ASCII bytes lowercased, when none is a control character and no two spaces (nor
/// `after_space` and a leading space) meet: then they normalize to themselves but for case.
fn lowercase_word(bytes: &[u8], after_space: bool) -> Option<[u8; 8]> {
    let (word, space) = printable_ascii(bytes)?;
    let space_before = (space << 8) | if after_space { 0x80 } else { 0 };
    if space & space_before != 0 {
        return None;
    }
    // High bit set on `A`–`Z`; moved to bit 5, it makes them lowercase.
    let at_least_a = (word + ONES * (0x80 - u64::from(b'A'))) & HIGH_BITS;
    let past_z = (word + ONES * (0x80 - u64::from(b'Z') - 1)) & HIGH_BITS;
    let upper = at_least_a & !past_z;
    Some((word | (upper >> 2)).to_le_bytes())
}

/// ASCII byte → its PAM-normalized form: Python whitespace (0x09–0x0D, 0x1C–0x20) becomes a
/// space, `A`–`Z` become lowercase, everything else stays.
static ASCII_PAM_MAP: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = match byte as u8 {
            0x09..=0x0d | 0x1c..=0x20 => b' ',
            upper @ b'A'..=b'Z' => upper + 32,
            other => other,
        };
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

/// Appends [`sha256_label`]`(digest)` to `out` as bytes, for writers that build records as
/// bytes.
pub fn push_sha256_label(out: &mut Vec<u8>, digest: &[u8; 32]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"sha256:");
    for byte in digest {
        out.push(DIGITS[usize::from(byte >> 4)]);
        out.push(DIGITS[usize::from(byte & 0x0f)]);
    }
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
        for text in ["ÇA VA? Ǆ", "İstanbul  ΣΟΦΟΣ σ", "cafe\u{301} \u{2000}x", "한국어 텍스트", "Ａ\u{212b}", "x\u{3000}\u{3000}y"]
        {
            let lowered = text.trim_matches(is_python_whitespace).to_lowercase();
            let reference = collapse_whitespace(lowered.nfc(), lowered.len());
            assert_eq!(pam_normalize(text), reference, "{text:?}");
        }
        let long_words = "ABCDEFGHIJ\tKLMNOPQRSTUVWXYZ abcdefgh12345678\n\n\nXYZ ".repeat(300);
        for text in ["  Hello \t\n World  ", "a\u{1c}b", "", "   ", &"Ab ".repeat(5000), &long_words, "x\u{1}y"] {
            assert_eq!(pam_content_digest(text), sha256(pam_normalize(text).as_bytes()), "{text:?}");
        }
    }

    #[test]
    fn eight_byte_steps_hash_like_the_normalized_text() {
        // Bytes at the edges of each test: around 'A', 'Z', the space and the control range.
        let alphabet = ['@', 'A', 'M', 'Z', '[', '`', 'a', 'z', ' ', ' ', ' ', '\t', '\n', '\u{1c}', '\u{1f}', '!', '\u{7f}', '\u{1}'];
        let mut next = crate::test_support::fixed_seed_numbers(0x2545_f491_4f6c_dd1d);
        for _ in 0..5_000 {
            let text: String = (0..next() % 60).map(|_| alphabet[next() % alphabet.len()]).collect();
            let lowered = text.trim_matches(is_python_whitespace).to_lowercase();
            let reference = collapse_whitespace(lowered.chars(), lowered.len());
            assert_eq!(pam_content_digest(&text), sha256(reference.as_bytes()), "{text:?}");
        }
    }

    #[test]
    fn mixed_text_normalizes_like_the_reference() {
        // ASCII words long enough for the eight-byte steps, between characters that are not.
        let alphabet = [
            "Hello", "wORLD", "ab cd", " ", " ", "A", "z", "\t", "\n", "\u{1c}", "É", "é", "e\u{301}", "\u{3000}", "\u{a0}", "Ǆ", "İ", "ß",
            "한", "\u{85}", "!",
        ];
        let mut next = crate::test_support::fixed_seed_numbers(0x0bad_5eed_1234_5678);
        for _ in 0..5_000 {
            let text: String = (0..next() % 80).map(|_| alphabet[next() % alphabet.len()]).collect();
            let lowered = text.trim_matches(is_python_whitespace).to_lowercase();
            let reference = collapse_whitespace(lowered.nfc(), lowered.len());
            assert_eq!(pam_normalize(&text), reference, "{text:?}");
        }
    }

    #[test]
    fn composing_stretches_matches_composing_the_whole_text() {
        // Starters, combining marks of several classes (reordered by NFC), precomposed letters,
        // singletons that NFC replaces (Å sign, CJK compatibility), Hangul jamo that compose,
        // and characters that need nothing.
        let alphabet = [
            "a", "e", "A", " ", "é", "\u{301}", "\u{300}", "\u{327}", "\u{323}", "\u{31b}", "\u{35c}", "\u{212b}", "\u{f900}", "\u{1100}",
            "\u{1161}", "\u{11a8}", "\u{ac00}", "한", "漢", "ö", "o\u{308}", "\u{3099}", "か", "\u{30ab}", "Ǆ", "\u{0344}",
        ];
        let mut next = crate::test_support::fixed_seed_numbers(0x00c0_4905_e5ee_d5ed);
        for _ in 0..20_000 {
            let raw: String = (0..next() % 12).map(|_| alphabet[next() % alphabet.len()]).collect();
            // As normalization hands it over: trimmed, whitespace runs collapsed.
            let text = collapse_whitespace(raw.trim().chars(), raw.len());
            let reference: String = collapse_whitespace(text.nfc(), text.len());
            assert_eq!(compose_where_needed(text.clone()), reference, "{text:?}");
        }
    }

    #[test]
    fn content_keys_hash_the_normalized_text_once_for_both() {
        let long_words = "ABCDEFGHIJ\tKLMNOPQRSTUVWXYZ abcdefgh12345678\n\n\nXYZ ".repeat(300);
        for text in ["  Hello \t\n World  ", "hello world", "ÇA  VA?", "", &long_words] {
            let normalized = pam_normalize(text);
            let with_digest = content_key(text, true);
            assert_eq!(with_digest.dedup, twox_hash::XxHash3_128::oneshot(normalized.as_bytes()), "{text:?}");
            assert_eq!(with_digest.pam_digest, Some(pam_content_digest(text)), "{text:?}");
            assert_eq!(content_key(text, false), ContentKey { pam_digest: None, ..with_digest }, "{text:?}");
        }
        // Texts that normalize alike share a key; others do not.
        assert_eq!(content_key("Hello   World", false), content_key("hello world", false));
        assert_ne!(content_key("hello world", false), content_key("hello  worlds", false));
    }

    #[test]
    fn labels_as_bytes_match_labels_as_text() {
        let digest = sha256(b"memport");
        let mut bytes = b"x".to_vec();
        push_sha256_label(&mut bytes, &digest);
        assert_eq!(bytes, format!("x{}", sha256_label(&digest)).into_bytes());
    }

    #[test]
    fn published_vector() {
        let digest = pam_content_digest("User is a cloud infrastructure engineer");
        assert_eq!(sha256_label(&digest), "sha256:e1bae3ec291c99eced01fc91b4152a0cef541fccf2034fc11b3f90f4e4d79b6e");
    }
}
