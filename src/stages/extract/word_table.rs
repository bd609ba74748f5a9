//! Words found and looked up fast, for the passes over every word of every user message (the
//! gate, the language scores, each sentence's own gate): [`for_each_word`] finds a text's words
//! 64 bytes at a time, and a [`WordTable`] holds lowercase words, each with a small value, looked
//! up case-insensitively. Nearly every word is ASCII and at most eight bytes long; such a word is
//! lowercased and packed into one `u64` on the stack and found in an open-addressing table. Other words
//! are lowercased (Unicode, with `’` read as `'`) into a reused buffer and found by their text.

use rustc_hash::FxHashMap;

use crate::ascii_word::{HIGH_BITS, ONES};

/// Words and their values, looked up without regard to case.
#[derive(Debug, Default)]
pub struct WordTable {
    /// ASCII words of one to eight bytes, packed ([`pack`]).
    short: PackedWords,
    /// Every other word, lowercase.
    long: FxHashMap<Box<str>, u8>,
    /// The shapes of the words held ([`shape`]): for each first letter, the lengths, as bits.
    /// Most words looked up have no word of their shape in the table, and are told so without
    /// being packed and hashed.
    shapes: [u16; 32],
}

/// Where a word (of at least one byte) is in [`WordTable::shapes`], and its bit there: its first
/// byte's low five bits (the same for a letter in either case), and its length in bytes (every
/// length past 15 shares bit 0). Words that are the same but for the case of ASCII letters have
/// the same shape.
#[inline]
fn shape(word: &[u8]) -> (usize, u16) {
    let first = word.first().map_or(0, |&byte| usize::from(byte & 31));
    let bit = if word.len() < 16 { 1 << word.len() } else { 1 };
    (first, bit)
}

impl WordTable {
    /// Ors `value` into the value of `word` (written in lowercase).
    pub fn insert_or(&mut self, word: &str, value: u8) {
        let (first, bit) = shape(word.as_bytes());
        self.shapes[first] |= bit;
        match pack(word.as_bytes()) {
            Some(key) => self.short.insert_or(key, value),
            None => *self.long.entry(word.into()).or_default() |= value,
        }
    }

    /// The value of the ASCII word `word` (letters, digits and apostrophes, any case), 0 when
    /// it is not in the table.
    #[inline]
    pub fn get_ascii(&self, word: &[u8], folded: &mut String) -> u8 {
        if !self.may_hold(word) {
            return 0;
        }
        match pack(word) {
            Some(key) => self.short.get(key),
            None => {
                folded.clear();
                folded.extend(word.iter().map(|byte| char::from(byte.to_ascii_lowercase())));
                self.long.get(folded.as_str()).copied().unwrap_or(0)
            }
        }
    }

    /// The value of `word` in any case, 0 when it is not in the table; `folded` is left holding
    /// a non-ASCII word lowercased (with `’` as `'`).
    pub fn get(&self, word: &str, folded: &mut String) -> u8 {
        folded.clear();
        if word.is_ascii() {
            return self.get_ascii(word.as_bytes(), folded);
        }
        folded.extend(word.chars().flat_map(char::to_lowercase).map(|c| if c == '’' { '\'' } else { c }));
        self.get_lowercase(folded)
    }

    /// The value of `word` with only its ASCII letters lowercased (as `eq_ignore_ascii_case`
    /// compares), 0 when it is not in the table.
    pub fn get_ignoring_ascii_case(&self, word: &str, folded: &mut String) -> u8 {
        if word.is_ascii() {
            return self.get_ascii(word.as_bytes(), folded);
        }
        folded.clear();
        folded.extend(word.chars().map(|c| c.to_ascii_lowercase()));
        self.long.get(folded.as_str()).copied().unwrap_or(0)
    }

    /// The value of `word`, written in lowercase, 0 when it is not in the table.
    pub fn get_lowercase(&self, word: &str) -> u8 {
        if !self.may_hold(word.as_bytes()) {
            return 0;
        }
        match pack(word.as_bytes()) {
            Some(key) => self.short.get(key),
            None => self.long.get(word).copied().unwrap_or(0),
        }
    }
}

impl WordTable {
    /// Whether the table holds a word of the shape of `word` (compared as the lookups compare).
    #[inline]
    fn may_hold(&self, word: &[u8]) -> bool {
        let (first, bit) = shape(word);
        self.shapes[first] & bit != 0
    }
}

/// Packed words and their values in an open-addressing table a quarter full: a lookup is one
/// multiplication and, for nearly every word, one or two slots read. The passes over every word
/// of every user message look up most words, and nearly all of them are not in the table.
#[derive(Debug, Default)]
struct PackedWords {
    /// The packed words, 0 in an empty slot (no packed word is 0); a power of two long.
    keys: Vec<u64>,
    /// Each slot's value.
    values: Vec<u8>,
    /// Words held.
    len: usize,
}

impl PackedWords {
    /// The slot where the search for `key` starts in a table of `slots` slots (a power of two).
    fn home(key: u64, slots: usize) -> usize {
        // Fibonacci hashing: the multiplication's high bits mix every byte of the word.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - slots.trailing_zeros())) as usize
    }

    /// Ors `value` into the value of `key`.
    fn insert_or(&mut self, key: u64, value: u8) {
        if (self.len + 1) * 4 > self.keys.len() {
            let old = std::mem::take(self);
            let slots = (old.keys.len() * 2).max(64);
            *self = PackedWords { keys: vec![0; slots], values: vec![0; slots], len: 0 };
            for (&old_key, &old_value) in old.keys.iter().zip(&old.values).filter(|(key, _)| **key != 0) {
                self.insert_or(old_key, old_value);
            }
        }
        let mask = self.keys.len() - 1;
        let mut slot = Self::home(key, self.keys.len());
        while self.keys[slot] != 0 && self.keys[slot] != key {
            slot = (slot + 1) & mask;
        }
        if self.keys[slot] == 0 {
            self.keys[slot] = key;
            self.len += 1;
        }
        self.values[slot] |= value;
    }

    /// The value of `key`, 0 when it is not in the table.
    #[inline]
    fn get(&self, key: u64) -> u8 {
        if self.keys.is_empty() {
            return 0;
        }
        let mask = self.keys.len() - 1;
        let mut slot = Self::home(key, self.keys.len());
        loop {
            // A quarter full: an empty slot ends every search.
            match self.keys[slot] {
                0 => return 0,
                found if found == key => return self.values[slot],
                _ => slot = (slot + 1) & mask,
            }
        }
    }
}

/// Calls `visit` with each word of `text` (runs of letters, digits and apostrophes) until it
/// returns true, and says whether it did. The same words as splitting at every other character,
/// found by byte class ([`for_each_word_told`]): an ASCII run (nearly every word) is a word as it stands; a run with
/// other bytes in it is split again by character.
#[inline]
pub fn for_each_word(text: &str, mut visit: impl FnMut(&str) -> bool) -> bool {
    for_each_word_told(text, |word, _| visit(word))
}

/// [`for_each_word`], telling `visit` whether each word is ASCII (known from the walk, so the
/// passes over every word need not look again).
///
/// The text is walked 64 bytes at a time: each block's bytes become two bit masks (word bytes,
/// non-ASCII bytes) with no branch ([`block_masks`]), and the words are found in the masks by counting zeros. A
/// walk that tested each byte and branched at each word's ends spent most of its time on the
/// branches it mispredicted, one or two a word.
#[inline(always)]
pub fn for_each_word_told(text: &str, mut visit: impl FnMut(&str, bool) -> bool) -> bool {
    let bytes = text.as_bytes();
    // The word under way, when it started in an earlier block: its start, and whether it has a
    // non-ASCII byte so far.
    let mut open: Option<(usize, bool)> = None;
    let mut base = 0;
    while base < bytes.len() {
        let block = &bytes[base..bytes.len().min(base + 64)];
        let (word_bits, other_bits) = block_masks(block);
        let mut at = 0u32;
        loop {
            let (start, other_before) = match open {
                Some(started) => started,
                None => {
                    let ahead = if at >= 64 { 0 } else { word_bits >> at };
                    if ahead == 0 {
                        break;
                    }
                    at += ahead.trailing_zeros();
                    (base + at as usize, false)
                }
            };
            // Here `at` is below 64: the word starts in this block. It ends at the block's next
            // separator, if it has one.
            let length = (!word_bits >> at).trailing_zeros().min(block.len() as u32 - at);
            let run_bits = if length >= 64 { u64::MAX } else { (1u64 << length) - 1 };
            let other = other_before || (other_bits >> at) & run_bits != 0;
            at += length;
            if at as usize == block.len() && base + block.len() < bytes.len() {
                // The word goes on into the next block.
                open = Some((start, other));
                break;
            }
            open = None;
            // The word ends at an ASCII byte or the end of the text: a character boundary.
            if visit_run(&text[start..base + at as usize], other, &mut visit) {
                return true;
            }
        }
        base += block.len();
    }
    false
}

/// Visits a run of word bytes: as it stands when ASCII, else split again by character.
#[inline(always)]
fn visit_run(run: &str, other: bool, visit: &mut impl FnMut(&str, bool) -> bool) -> bool {
    if !other {
        return visit(run, true);
    }
    run.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|word| !word.is_empty())
        .any(|word| visit(word, word.is_ascii()))
}

/// The bit masks of a block of at most 64 bytes: its word bytes (ASCII letters, digits and
/// apostrophes, and every byte of a non-ASCII character) and its non-ASCII bytes, bit `n` for
/// byte `n`. Eight bytes are classed at once as one `u64` (each class a range or a value of the
/// low seven bits, tested with no carry between bytes), about three times faster than a
/// lookup a byte: the walks run over every byte of every user message.
#[inline(always)]
fn block_masks(block: &[u8]) -> (u64, u64) {
    let mut padded = [0u8; 64];
    let block = match <&[u8; 64]>::try_from(block) {
        Ok(full) => full,
        Err(_) => {
            // A zero byte is no part of a word.
            padded[..block.len()].copy_from_slice(block);
            &padded
        }
    };
    let (mut word_bits, mut other_bits) = (0u64, 0u64);
    for (index, eight) in block.chunks_exact(8).enumerate() {
        let mut array = [0u8; 8];
        array.copy_from_slice(eight);
        let (word, other) = eight_masks(u64::from_le_bytes(array));
        word_bits |= word << (index * 8);
        other_bits |= other << (index * 8);
    }
    (word_bits, other_bits)
}

/// [`block_masks`] of eight bytes (little-endian in `chunk`): eight bits each.
#[inline(always)]
fn eight_masks(chunk: u64) -> (u64, u64) {
    let other = chunk & HIGH_BITS;
    let low = chunk & !HIGH_BITS;
    // With the high bits clear, `low + (0x80 - lo)` sets a byte's high bit where it is at least
    // `lo`, and `low + (0x7F - hi)` where it is past `hi`; nothing carries into the next byte.
    let within = |value: u64, lo: u8, hi: u8| (value + ONES * u64::from(0x80 - lo)) & !(value + ONES * u64::from(0x7F - hi));
    let digit = within(low, b'0', b'9');
    let letter = within(low | (ONES * 0x20), b'a', b'z');
    let apostrophe = !((low ^ (ONES * u64::from(b'\''))) + ONES * 0x7F);
    let word = (digit | letter | apostrophe | other) & HIGH_BITS;
    (gather_high_bits(word), gather_high_bits(other))
}

/// The high bit of each byte of `mask` (its only bits), byte `n`'s as bit `n`: one
/// multiplication puts each at its place in the top byte, and no two products overlap.
#[inline(always)]
fn gather_high_bits(mask: u64) -> u64 {
    (mask >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// An ASCII word of one to eight letters, digits and apostrophes as one `u64`: its bytes
/// lowercased, little-endian, zero past its end (no word holds a zero byte, so words of
/// different lengths differ). `None` for other words.
#[inline]
fn pack(word: &[u8]) -> Option<u64> {
    if word.is_empty() || word.len() > 8 {
        return None;
    }
    let mut bytes = [0u8; 8];
    bytes[..word.len()].copy_from_slice(word);
    let packed = u64::from_le_bytes(bytes);
    if packed & HIGH_BITS != 0 {
        return None;
    }
    // With the high bits clear, adding sets a byte's high bit where the byte is at least 'A',
    // and where it is past 'Z' (no byte carries into the next): the upper-case letters get
    // 0x20 added, as `to_ascii_lowercase` does, all eight at once.
    let at_least_a = packed + ONES * (0x80 - u64::from(b'A'));
    let past_z = packed + ONES * (0x80 - u64::from(b'Z') - 1);
    Some(packed | ((at_least_a & !past_z & HIGH_BITS) >> 2))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn table() -> WordTable {
        let mut table = WordTable::default();
        for (word, value) in [("i'm", 1), ("always", 2), ("toujours", 4), ("nosotros", 8), ("bevorzuge", 16), ("můj", 32), ("me", 64)] {
            table.insert_or(word, value);
        }
        table.insert_or("me", 1);
        table
    }

    #[test]
    fn words_are_found_in_any_case() {
        let (table, mut folded) = (table(), String::new());
        for (word, value) in [("I'M", 1), ("Always", 2), ("TOUJOURS", 4), ("nosotros", 8), ("Bevorzuge", 16), ("MŮJ", 32), ("Me", 65)] {
            assert_eq!(table.get(word, &mut folded), value, "{word}");
        }
    }

    #[test]
    fn a_table_of_many_words_finds_each_and_no_other() {
        let mut table = WordTable::default();
        let words: Vec<String> = (0..3_000).map(|n| format!("w{n}")).collect();
        for (n, word) in words.iter().enumerate() {
            table.insert_or(word, 1 << (n % 8));
        }
        table.insert_or("w7", 1);
        let mut folded = String::new();
        for (n, word) in words.iter().enumerate() {
            let expected = if word == "w7" { 1 << 7 | 1 } else { 1 << (n % 8) };
            assert_eq!(table.get(&word.to_uppercase(), &mut folded), expected, "{word}");
        }
        for absent in ["w3000", "x1", "w", "w12345678"] {
            assert_eq!(table.get(absent, &mut folded), 0, "{absent}");
        }
    }

    #[test]
    fn ignoring_ascii_case_leaves_other_letters_as_they_are() {
        let (table, mut folded) = (table(), String::new());
        assert_eq!(table.get_ignoring_ascii_case("MŮJ", &mut folded), 0);
        assert_eq!(table.get_ignoring_ascii_case("Můj", &mut folded), 32);
        assert_eq!(table.get_ignoring_ascii_case("NOSOTROS", &mut folded), 8);
    }

    #[test]
    fn words_are_found_as_splitting_at_every_other_character_finds_them() {
        let long = "Ich wohne in Graz, Österreich — naïve café; I'm a nurse. ".repeat(9);
        let runs = format!("{}x{}é{} {}", "a".repeat(63), "b".repeat(64), "c".repeat(70), "d".repeat(64));
        for text in
            ["“I’m a nurse”—and I live in Zürich.", "Vivo en Sevilla; ¿y tú?", "ok,,  don't  x1 naïve—café 42", "", "¡¿", &long, &runs]
        {
            let mut walked = Vec::new();
            for_each_word(text, |word| {
                walked.push(word.to_owned());
                false
            });
            let mut told = Vec::new();
            for_each_word_told(text, |word, ascii| {
                assert_eq!(ascii, word.is_ascii(), "{word:?}");
                told.push(word.to_owned());
                false
            });
            assert_eq!(walked, told);
            assert_eq!(walked, split_by_character(text), "{text:?}");
        }
    }

    #[test]
    fn packing_lowercases_as_to_ascii_lowercase_does() {
        for word in ["I'M", "Always", "zZaA@[`{", "0129'", "x", "ABCDEFGH", "MiXeD"] {
            let mut expected = [0u8; 8];
            for (packed, byte) in expected.iter_mut().zip(word.bytes()) {
                *packed = byte.to_ascii_lowercase();
            }
            assert_eq!(pack(word.as_bytes()), Some(u64::from_le_bytes(expected)), "{word}");
        }
        assert_eq!(pack(b""), None);
        assert_eq!(pack(b"toolongword"), None);
        assert_eq!(pack("můj".as_bytes()), None);
    }

    #[test]
    fn other_words_and_prefixes_are_not_found() {
        let (table, mut folded) = (table(), String::new());
        for word in ["i", "alway", "alwayss", "toujoursx", "bevorzug", "můjx", "", "I’M"] {
            assert_eq!(table.get(word, &mut folded), if word == "I’M" { 1 } else { 0 }, "{word}");
        }
    }

    /// Split at every character that is not a letter, digit or apostrophe: what the walk finds.
    fn split_by_character(text: &str) -> Vec<String> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')).filter(|word| !word.is_empty()).map(str::to_owned).collect()
    }

    /// Text of words, separators and non-ASCII letters and marks in runs of any length, so
    /// words start, end and cross every place in a 64-byte block.
    fn mixed_text() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "a", "I'm", "word", "x1", " ", "  ", ",", "\n", "’", "é", "ü", "ř", "—", "“", "🙂", "日本", "naïve", "'", "-", "0",
        ]);
        prop::collection::vec(piece, 0..200).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn the_block_walk_finds_the_words_splitting_by_character_finds(text in mixed_text(), stop_after in 0usize..40) {
            let mut walked = Vec::new();
            for_each_word_told(&text, |word, ascii| {
                assert_eq!(ascii, word.is_ascii(), "{word:?}");
                walked.push(word.to_owned());
                false
            });
            prop_assert_eq!(&walked, &split_by_character(&text), "{:?}", text);
            // Stopping: the walk ends at the word that said so, and says it did.
            let mut seen = 0;
            let stopped = for_each_word(&text, |_| {
                seen += 1;
                seen > stop_after
            });
            prop_assert_eq!(stopped, walked.len() > stop_after);
            prop_assert_eq!(seen, walked.len().min(stop_after + 1));
        }

        #[test]
        fn a_look_up_finds_what_comparing_lowercase_words_finds(
            held in proptest::collection::vec("[a-zA-Z'ůé]{1,12}", 0..20),
            asked in proptest::collection::vec("[a-zA-Z'ůéŮ]{0,12}", 1..20),
        ) {
            // The table's shapes must never turn away a word it holds, in any case.
            let mut table = WordTable::default();
            for (index, word) in held.iter().enumerate() {
                table.insert_or(&word.to_lowercase(), 1 << (index % 8));
            }
            let mut folded = String::new();
            for word in asked.iter().chain(&held) {
                let lower = word.to_lowercase();
                let expected = held.iter().enumerate().filter(|(_, held)| held.to_lowercase() == lower).fold(0u8, |value, (index, _)| value | 1 << (index % 8));
                prop_assert_eq!(table.get(word, &mut folded), expected, "{:?}", word);
                prop_assert_eq!(table.get_lowercase(&lower), expected, "{:?}", lower);
            }
        }
    }
}
