//! Words found and looked up fast, for the passes over every word of every user message (the
//! gate, the language scores, each sentence's own gate): [`for_each_word`] walks a text's words a
//! byte at a time, and a [`WordTable`] holds lowercase words, each with a small value, looked up
//! case-insensitively. Nearly every word is ASCII and at most eight bytes long; such a word is
//! lowercased and packed into one `u64` on the stack and found by integer hashing. Other words
//! are lowercased (Unicode, with `’` read as `'`) into a reused buffer and found by their text.

use rustc_hash::FxHashMap;

use crate::ascii_word::{HIGH_BITS, ONES};

/// Words and their values, looked up without regard to case.
#[derive(Debug, Default)]
pub struct WordTable {
    /// ASCII words of one to eight bytes, packed ([`pack`]).
    short: FxHashMap<u64, u8>,
    /// Every other word, lowercase.
    long: FxHashMap<Box<str>, u8>,
}

impl WordTable {
    /// Ors `value` into the value of `word` (written in lowercase).
    pub fn insert_or(&mut self, word: &str, value: u8) {
        match pack(word.as_bytes()) {
            Some(key) => *self.short.entry(key).or_default() |= value,
            None => *self.long.entry(word.into()).or_default() |= value,
        }
    }

    /// The value of the ASCII word `word` (letters, digits and apostrophes, any case), 0 when
    /// it is not in the table.
    pub fn get_ascii(&self, word: &[u8], folded: &mut String) -> u8 {
        match pack(word) {
            Some(key) => self.short.get(&key).copied().unwrap_or(0),
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
        match pack(word.as_bytes()) {
            Some(key) => self.short.get(&key).copied().unwrap_or(0),
            None => self.long.get(word).copied().unwrap_or(0),
        }
    }
}

/// Calls `visit` with each word of `text` (runs of letters, digits and apostrophes) until it
/// returns true, and says whether it did. The same words as splitting at every other character,
/// found a byte at a time: an ASCII run (nearly every word) is a word as it stands; a run with
/// other bytes in it is split again by character.
pub fn for_each_word(text: &str, mut visit: impl FnMut(&str) -> bool) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        while at < bytes.len() && BYTE_CLASS[usize::from(bytes[at])] == SEPARATOR {
            at += 1;
        }
        if at == bytes.len() {
            return false;
        }
        let start = at;
        let mut classes = 0;
        while at < bytes.len() {
            let class = BYTE_CLASS[usize::from(bytes[at])];
            if class == SEPARATOR {
                break;
            }
            classes |= class;
            at += 1;
        }
        // The run ends at an ASCII byte or the end of the text: a character boundary.
        let run = &text[start..at];
        let stop = if classes & OTHER == 0 {
            visit(run)
        } else {
            run.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')).filter(|word| !word.is_empty()).any(&mut visit)
        };
        if stop {
            return true;
        }
    }
}

/// In [`BYTE_CLASS`]: a byte that is no part of a word.
const SEPARATOR: u8 = 0;
/// In [`BYTE_CLASS`]: an ASCII letter, digit or apostrophe.
const ASCII_WORD: u8 = 1;
/// In [`BYTE_CLASS`]: a byte of a non-ASCII character (told apart by character afterwards).
const OTHER: u8 = 2;

/// Each byte's part in a word, looked up instead of tested: the walk runs over every byte of
/// every user message.
static BYTE_CLASS: [u8; 256] = {
    let mut classes = [SEPARATOR; 256];
    let mut byte = 0;
    while byte < 256 {
        let value = byte as u8;
        classes[byte] = if value >= 0x80 {
            OTHER
        } else if value.is_ascii_alphanumeric() || value == b'\'' {
            ASCII_WORD
        } else {
            SEPARATOR
        };
        byte += 1;
    }
    classes
};

/// An ASCII word of one to eight letters, digits and apostrophes as one `u64`: its bytes
/// lowercased, little-endian, zero past its end (no word holds a zero byte, so words of
/// different lengths differ). `None` for other words.
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
    fn ignoring_ascii_case_leaves_other_letters_as_they_are() {
        let (table, mut folded) = (table(), String::new());
        assert_eq!(table.get_ignoring_ascii_case("MŮJ", &mut folded), 0);
        assert_eq!(table.get_ignoring_ascii_case("Můj", &mut folded), 32);
        assert_eq!(table.get_ignoring_ascii_case("NOSOTROS", &mut folded), 8);
    }

    #[test]
    fn words_are_found_as_splitting_at_every_other_character_finds_them() {
        for text in ["“I’m a nurse”—and I live in Zürich.", "Vivo en Sevilla; ¿y tú?", "ok,,  don't  x1 naïve—café 42", "", "¡¿"]
        {
            let mut walked = Vec::new();
            for_each_word(text, |word| {
                walked.push(word.to_owned());
                false
            });
            let split: Vec<&str> =
                text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')).filter(|word| !word.is_empty()).collect();
            assert_eq!(walked, split, "{text:?}");
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
}
