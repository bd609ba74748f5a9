//! PAM §6 text normalization (strip, full Unicode lowercase, NFC, each whitespace run to one
//! space), the text every content hash and dedup key is taken of. It runs over every message:
//! ASCII text is mapped in one pass the compiler vectorizes, the ASCII stretches of other text
//! go 32 bytes at a time, and other characters are looked up in tables built as they are met.

use std::sync::atomic::{AtomicU64, Ordering};

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

use crate::ascii_word::{HIGH_BITS, ONES};

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
    let mut out = Vec::new();
    normalize_into(content, &mut out);
    into_text(out)
}

/// Normalized bytes as a `String`. Normalization writes whole characters only, so the lossy
/// path is never taken.
fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// Writes [`pam_normalize`]`(content)` into `out` (cleared first), reusing its allocation.
pub fn normalize_into(content: &str, out: &mut Vec<u8>) {
    out.clear();
    let stripped = trim_python_whitespace(content);
    if stripped.is_ascii() {
        // ASCII is already NFC and lowercases byte by byte.
        out.extend_from_slice(stripped.as_bytes());
        map_ascii(out);
        collapse_spaces(out);
        return;
    }
    if stripped.contains('\u{3a3}') {
        // Σ lowercases by context (Final_Sigma): let the standard library handle the whole text.
        out.extend_from_slice(collapse_whitespace(stripped.to_lowercase().nfc(), stripped.len()).as_bytes());
        return;
    }
    // Lowercase and collapse whitespace in one pass, then compose (NFC) only when a character
    // that can change under NFC appeared. NFC never turns a non-space into whitespace, so
    // collapsing first gives the reference's result.
    if lower_and_collapse(stripped, out) {
        *out = compose_where_needed(into_text(std::mem::take(out))).into_bytes();
    }
}

/// `text` without Python whitespace at either end. Most texts start and end with a printable
/// ASCII character, which is checked first: trimming by character costs a call per message.
fn trim_python_whitespace(text: &str) -> &str {
    let is_plain_edge = |byte: &u8| (b'!'..0x80).contains(byte);
    if text.as_bytes().first().is_some_and(is_plain_edge) && text.as_bytes().last().is_some_and(is_plain_edge) {
        return text;
    }
    text.trim_matches(is_python_whitespace)
}

/// Lowercases ASCII text in place and makes each whitespace byte a space. A loop of plain
/// byte arithmetic, which the compiler turns into vector instructions.
fn map_ascii(text: &mut [u8]) {
    for byte in text {
        let value = *byte;
        let lowered = value | (u8::from(value.wrapping_sub(b'A') < 26) << 5);
        *byte = if is_ascii_python_whitespace(value) { b' ' } else { lowered };
    }
}

/// Whether an ASCII byte is Python whitespace (0x09–0x0D, 0x1C–0x20); plain comparisons, so
/// that loops over bytes can be vectorized.
fn is_ascii_python_whitespace(byte: u8) -> bool {
    (byte.wrapping_sub(0x09) < 5) | (byte.wrapping_sub(0x1c) < 5)
}

/// Drops every space that follows a space, in place (`text` does not end in one).
fn collapse_spaces(text: &mut Vec<u8>) {
    let Some(first) = next_double_space(text, 0) else { return };
    let (mut read, mut write) = (first, first);
    while read < text.len() {
        while text.get(read) == Some(&b' ') {
            read += 1;
        }
        let next = next_double_space(text, read).unwrap_or(text.len());
        text.copy_within(read..next, write);
        write += next - read;
        read = next;
    }
    text.truncate(write);
}

/// The first position at or after `from` holding a space right after a space, eight bytes at a
/// time (SWAR, exact for ASCII bytes).
fn next_double_space(text: &[u8], from: usize) -> Option<usize> {
    let mut carry = if from > 0 && text.get(from - 1) == Some(&b' ') { 0x80 } else { 0 };
    let mut position = from;
    while let Some(word) = text.get(position..position + 8) {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(word).unwrap_or_default()) ^ (ONES * u64::from(b' '));
        // Exact zero-byte test: no borrow crosses bytes, so no byte is flagged wrongly.
        let spaces = !(((word & !HIGH_BITS) + !HIGH_BITS) | word) & HIGH_BITS;
        let double = spaces & ((spaces << 8) | carry);
        if double != 0 {
            return Some(position + (double.trailing_zeros() / 8) as usize);
        }
        carry = (spaces >> 56) & 0x80;
        position += 8;
    }
    let mut after_space = carry != 0;
    for (offset, &byte) in text.get(position..).unwrap_or_default().iter().enumerate() {
        if byte == b' ' && after_space {
            return Some(position + offset);
        }
        after_space = byte == b' ';
    }
    None
}

/// Lowercases `text` (stripped: no whitespace at either end) into `out`, each whitespace run
/// written as one space. Returns whether a character that is not an NFC boundary was written,
/// so that the text may need composing.
///
/// Because `text` never ends in whitespace, the first whitespace of a run can be written as a
/// space at once and the rest of the run dropped: the result is the same as writing one space
/// before the next other character.
fn lower_and_collapse(text: &str, out: &mut Vec<u8>) -> bool {
    let bytes = text.as_bytes();
    out.reserve(bytes.len());
    let mut after_space = false;
    let mut maybe_not_nfc = false;
    let mut position = 0;
    loop {
        position = copy_plain_ascii(bytes, position, &mut after_space, out);
        // What ended the run, and what follows it up to the next ASCII character that is not
        // whitespace after whitespace: text in other scripts stays in this loop.
        loop {
            let Some(&byte) = bytes.get(position) else { return maybe_not_nfc };
            if byte < 0x80 {
                let whitespace = bytes[position..].iter().take_while(|&&byte| is_ascii_python_whitespace(byte)).count();
                if whitespace == 0 || !after_space {
                    break;
                }
                // Whitespace after whitespace: the rest of the run is dropped.
                position += whitespace;
                continue;
            }
            let Some(c) = text.get(position..).and_then(|rest| rest.chars().next()) else { return maybe_not_nfc };
            let width = c.len_utf8();
            if is_python_whitespace(c) {
                if !after_space {
                    out.push(b' ');
                }
                after_space = true;
            } else {
                after_space = false;
                match bmp_facts(c) {
                    Some(facts) if !facts.lowercase_changes => {
                        out.extend_from_slice(&bytes[position..position + width]);
                        maybe_not_nfc |= facts.not_nfc_boundary;
                    }
                    _ => {
                        for lower in c.to_lowercase() {
                            maybe_not_nfc |= bmp_facts(lower).map_or_else(|| !is_nfc_boundary(lower), |facts| facts.not_nfc_boundary);
                            out.extend_from_slice(lower.encode_utf8(&mut [0; 4]).as_bytes());
                        }
                    }
                }
            }
            position += width;
        }
    }
}

/// Copies the ASCII bytes from `position` that normalize one to one (lowercased, whitespace
/// as a space), and returns where they end: at a byte that is not ASCII, or at whitespace
/// right after whitespace. Goes 32 bytes at a time while none such is among them.
fn copy_plain_ascii(bytes: &[u8], mut position: usize, after_space: &mut bool, out: &mut Vec<u8>) -> usize {
    while let Some(block) = bytes.get(position..position + 32) {
        let mut words = [0u64; 4];
        let mut found = [(0u64, 0u64); 4];
        let mut carry = u64::from(*after_space) << 7;
        for ((word, found), bytes) in words.iter_mut().zip(&mut found).zip(block.chunks_exact(8)) {
            *word = u64::from_le_bytes(<[u8; 8]>::try_from(bytes).unwrap_or_default());
            *found = specials(*word, carry);
            carry = (found.1 >> 56) & 0x80;
        }
        // Written word by word, straight from registers: staging the block in a stack array
        // and copying it out stalls on store forwarding.
        if found.iter().all(|&(special, _)| special == 0) {
            for (word, (_, whitespace)) in words.into_iter().zip(found) {
                out.extend_from_slice(&map_word(word, whitespace).to_le_bytes());
            }
            *after_space = carry != 0;
            position += 32;
            continue;
        }
        for (word, (special, whitespace)) in words.into_iter().zip(found) {
            let plain = if special == 0 { 8 } else { (special.trailing_zeros() / 8) as usize };
            position = finish_run(&map_word(word, whitespace).to_le_bytes()[..plain], position, after_space, out);
            if plain < 8 {
                return position;
            }
        }
    }
    // Fewer than 32 bytes left: word by word, the last one padded with bytes that are not
    // ASCII, and so end the run.
    loop {
        let rest = bytes.get(position..).unwrap_or_default();
        let mut padded = [0x80u8; 8];
        let length = rest.len().min(8);
        padded[..length].copy_from_slice(&rest[..length]);
        let word = u64::from_le_bytes(padded);
        let (special, whitespace) = specials(word, u64::from(*after_space) << 7);
        let plain = if special == 0 { 8 } else { (special.trailing_zeros() / 8) as usize };
        position = finish_run(&map_word(word, whitespace).to_le_bytes()[..plain], position, after_space, out);
        if plain < 8 {
            return position;
        }
    }
}

/// Writes the mapped run `mapped` that starts at `position` and returns where it ends.
fn finish_run(mapped: &[u8], position: usize, after_space: &mut bool, out: &mut Vec<u8>) -> usize {
    if let Some(&last) = mapped.last() {
        out.extend_from_slice(mapped);
        *after_space = last == b' ';
    }
    position + mapped.len()
}

/// For eight bytes: the high bit of each byte that ends a plain run (not ASCII, or whitespace
/// right after whitespace; `carry` is 0x80 when the byte before the word was whitespace), and
/// the high bit of each whitespace byte. The lowest flagged byte is exact: every byte below it
/// is ASCII, and the sums below never carry out of an ASCII byte.
fn specials(word: u64, carry: u64) -> (u64, u64) {
    let not_ascii = word & HIGH_BITS;
    let low = word & !HIGH_BITS;
    // Adding `0x80 - n` to a byte below 0x80 sets its high bit exactly when it is at least `n`.
    let at_least = |n: u8| (low + ONES * (0x80 - u64::from(n))) & HIGH_BITS;
    // Python's ASCII whitespace: 0x09–0x0D and 0x1C–0x20.
    let whitespace = (at_least(0x09) & !at_least(0x0e)) | (at_least(0x1c) & !at_least(0x21));
    let double = whitespace & ((whitespace << 8) | carry);
    (not_ascii | double, whitespace)
}

/// `word` normalized byte by byte (exact for ASCII bytes; the others are never written):
/// `A`–`Z` lowercased, the bytes flagged in `whitespace` made spaces.
fn map_word(word: u64, whitespace: u64) -> u64 {
    let low = word & !HIGH_BITS;
    // High bit set on `A`–`Z`; moved to bit 5, it makes them lowercase.
    let at_least_a = (low + ONES * (0x80 - u64::from(b'A'))) & HIGH_BITS;
    let past_z = (low + ONES * (0x80 - u64::from(b'Z') - 1)) & HIGH_BITS;
    let lowered = word | ((at_least_a & !past_z) >> 2);
    let whitespace_bytes = (whitespace >> 7) * 0xff;
    (lowered & !whitespace_bytes) | (whitespace_bytes & (ONES * 0x20))
}

/// What normalization needs to know of a character of the Basic Multilingual Plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CharFacts {
    /// Its full lowercase is not the character itself.
    lowercase_changes: bool,
    /// It can change under NFC or combine with what precedes it ([`is_nfc_boundary`] is false).
    not_nfc_boundary: bool,
}

/// [`CharFacts`] of the BMP, 64 characters to a word, each group of 64 worked out the first
/// time one of its characters is asked about: the standard library's lowercase lookup and the
/// NFC tables cost a search each, and text in one script keeps meeting the same few groups.
struct FactTables {
    /// Bit `g % 64` of word `g / 64`: group `g` is worked out.
    ready: [AtomicU64; 16],
    lowercase_changes: [AtomicU64; 1024],
    not_nfc_boundary: [AtomicU64; 1024],
}

static FACTS: FactTables = FactTables {
    ready: [const { AtomicU64::new(0) }; 16],
    lowercase_changes: [const { AtomicU64::new(0) }; 1024],
    not_nfc_boundary: [const { AtomicU64::new(0) }; 1024],
};

/// The facts of `c`, or `None` outside the BMP (those are worked out directly).
fn bmp_facts(c: char) -> Option<CharFacts> {
    let code = u32::from(c);
    if code > 0xffff {
        return None;
    }
    let group = (code >> 6) as usize;
    let ready = &FACTS.ready[group >> 6];
    let ready_bit = 1u64 << (group & 63);
    if ready.load(Ordering::Acquire) & ready_bit == 0 {
        // Threads that race here compute and store the same words.
        let (changes, not_boundary) = work_out_group(group);
        FACTS.lowercase_changes[group].store(changes, Ordering::Relaxed);
        FACTS.not_nfc_boundary[group].store(not_boundary, Ordering::Relaxed);
        ready.fetch_or(ready_bit, Ordering::Release);
    }
    let bit = 1u64 << (code & 63);
    Some(CharFacts {
        lowercase_changes: FACTS.lowercase_changes[group].load(Ordering::Relaxed) & bit != 0,
        not_nfc_boundary: FACTS.not_nfc_boundary[group].load(Ordering::Relaxed) & bit != 0,
    })
}

/// The two fact words of group `group`. Surrogate code points are no characters; they are
/// marked as changing so that nothing would take the table's word for them.
fn work_out_group(group: usize) -> (u64, u64) {
    let (mut changes, mut not_boundary) = (0u64, 0u64);
    for offset in 0..64u32 {
        let code = ((group as u32) << 6) | offset;
        let Some(c) = char::from_u32(code) else {
            changes |= 1 << offset;
            continue;
        };
        let mut lower = c.to_lowercase();
        if !(lower.len() == 1 && lower.next() == Some(c)) {
            changes |= 1 << offset;
        }
        if !is_nfc_boundary(c) {
            not_boundary |= 1 << offset;
        }
    }
    (changes, not_boundary)
}

/// Whether `c` begins a stretch of text that normalizes (NFC) on its own: a character below
/// U+0300, or a starter whose quick check says Yes. Nothing before it reorders past it or
/// composes with it (characters that compose with the one before them have quick check Maybe).
fn is_nfc_boundary(c: char) -> bool {
    c < '\u{300}' || (canonical_combining_class(c) == 0 && is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes)
}

/// `text` in NFC, composing only the stretches that can change (each begins at an
/// [`is_nfc_boundary`] character). Text in scripts that need no composing is then checked
/// character by character and copied no more.
fn compose_where_needed(text: String) -> String {
    let mut composed: Option<String> = None;
    // Text up to `copied` is in `composed`; the stretch being read starts at `stretch_start`.
    let (mut copied, mut stretch_start, mut stretch_changes) = (0, 0, false);
    for (position, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        let is_boundary = bmp_facts(c).map_or_else(|| is_nfc_boundary(c), |facts| !facts.not_nfc_boundary);
        if !is_boundary {
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
        Some(mut out) => {
            out.push_str(&text[copied..]);
            // The reference collapses after composing. Every whitespace is a space by now, NFC
            // keeps a space a space and makes no whitespace of other characters, so only two
            // spaces that came to meet would need it.
            if out.contains("  ") { collapse_whitespace(out.chars(), out.len()) } else { out }
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::hash::{pam_content_digest, sha256};

    /// PAM's reference normalization: strip, lowercase, NFC, collapse whitespace runs.
    fn reference(text: &str) -> String {
        let lowered = text.trim_matches(is_python_whitespace).to_lowercase();
        collapse_whitespace(lowered.nfc(), lowered.len())
    }

    /// Text of a number of picks in `lengths` from `alphabet` (characters or fragments), each
    /// pick uniform; proptest shrinks it toward fewer picks from the front of the alphabet.
    fn text_over<T>(alphabet: Vec<T>, lengths: std::ops::Range<usize>) -> impl Strategy<Value = String>
    where
        T: Clone + std::fmt::Debug + 'static,
        String: FromIterator<T>,
    {
        prop::collection::vec(prop::sample::select(alphabet), lengths).prop_map(|picks| picks.into_iter().collect::<String>())
    }

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
            assert_eq!(pam_normalize(text), reference(text), "{text:?}");
        }
        let long_words = "ABCDEFGHIJ\tKLMNOPQRSTUVWXYZ abcdefgh12345678\n\n\nXYZ ".repeat(300);
        for text in ["  Hello \t\n World  ", "a\u{1c}b", "", "   ", &"Ab ".repeat(5000), &long_words, "x\u{1}y"] {
            assert_eq!(pam_content_digest(text), sha256(pam_normalize(text).as_bytes()), "{text:?}");
        }
    }

    /// Up to 59 characters at the edges of each eight-byte test: around 'A', 'Z', the space and
    /// the control range.
    fn ascii_edge_text() -> impl Strategy<Value = String> {
        let alphabet = vec!['@', 'A', 'M', 'Z', '[', '`', 'a', 'z', ' ', ' ', ' ', '\t', '\n', '\u{1c}', '\u{1f}', '!', '\u{7f}', '\u{1}'];
        text_over(alphabet, 0..60)
    }

    /// Up to 79 fragments: ASCII words long enough for the eight-byte steps, between characters
    /// that are not.
    fn mixed_text() -> impl Strategy<Value = String> {
        let alphabet = vec![
            "Hello", "wORLD", "ab cd", " ", " ", "A", "z", "\t", "\n", "\u{1c}", "É", "é", "e\u{301}", "\u{3000}", "\u{a0}", "Ǆ", "İ", "ß",
            "한", "\u{85}", "!",
        ];
        text_over(alphabet, 0..80)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5_000))]

        #[test]
        fn eight_byte_steps_hash_like_the_normalized_text(text in ascii_edge_text()) {
            let lowered = text.trim_matches(is_python_whitespace).to_lowercase();
            let reference = collapse_whitespace(lowered.chars(), lowered.len());
            prop_assert_eq!(pam_content_digest(&text), sha256(reference.as_bytes()), "{:?}", text);
        }

        #[test]
        fn mixed_text_normalizes_like_the_reference(text in mixed_text()) {
            prop_assert_eq!(pam_normalize(&text), reference(&text), "{:?}", text);
        }
    }

    /// Up to 11 pieces: starters, combining marks of several classes (reordered by NFC),
    /// precomposed letters, singletons that NFC replaces (Å sign, CJK compatibility), Hangul jamo
    /// that compose, and characters that need nothing.
    fn composable_text() -> impl Strategy<Value = String> {
        let alphabet = vec![
            "a", "e", "A", " ", "é", "\u{301}", "\u{300}", "\u{327}", "\u{323}", "\u{31b}", "\u{35c}", "\u{212b}", "\u{f900}", "\u{1100}",
            "\u{1161}", "\u{11a8}", "\u{ac00}", "한", "漢", "ö", "o\u{308}", "\u{3099}", "か", "\u{30ab}", "Ǆ", "\u{0344}",
        ];
        text_over(alphabet, 0..12)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn composing_stretches_matches_composing_the_whole_text(raw in composable_text()) {
            // As normalization hands it over: trimmed, whitespace runs collapsed.
            let text = collapse_whitespace(raw.trim().chars(), raw.len());
            let reference: String = collapse_whitespace(text.nfc(), text.len());
            prop_assert_eq!(compose_where_needed(text.clone()), reference, "{:?}", text);
        }
    }

    #[test]
    fn char_tables_agree_with_the_lookups_they_stand_for() {
        for c in (0..=0xffffu32).filter_map(char::from_u32) {
            let mut lower = c.to_lowercase();
            let expected =
                CharFacts { lowercase_changes: !(lower.len() == 1 && lower.next() == Some(c)), not_nfc_boundary: !is_nfc_boundary(c) };
            assert_eq!(bmp_facts(c), Some(expected), "{c:?}");
        }
        assert_eq!(bmp_facts('\u{1f600}'), None);
    }

    /// Up to 39 pieces: stretches longer than the 32-byte steps, whitespace runs across their
    /// edges, and characters of scripts without case between them.
    fn texts_in_several_scripts() -> impl Strategy<Value = String> {
        let pieces = vec![
            "The Quick Brown Fox Jumps Over The Lazy Dog ",
            "  \t\n  ",
            "Привет МИР ",
            "日本語のテキスト。",
            "ÀÉÎÕÜ ",
            "e\u{301}\u{323} ",
            "x",
            "\u{3000}",
            "SHOUTING_WITH_UNDERSCORES_AND_DIGITS_0123456789",
            "\u{1f600}",
            "İ",
        ];
        text_over(pieces, 0..40)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        #[test]
        fn long_texts_in_several_scripts_normalize_like_the_reference(text in texts_in_several_scripts()) {
            prop_assert_eq!(pam_normalize(&text), reference(&text), "{:?}", text);
        }
    }
}
