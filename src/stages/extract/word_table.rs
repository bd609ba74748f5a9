//! Words found and looked up fast, for the passes over every word of every user message (the
//! gate, the language scores, each sentence's own gate): [`for_each_word`] walks a text's words a
//! byte at a time, and a [`WordTable`] holds lowercase words, each with a small value, looked up
//! case-insensitively. Nearly
//! every word is ASCII and at most eight bytes long; such a word is lowercased and packed into
//! one `u64` on the stack and found by integer hashing. Other words are lowercased (Unicode,
//! with `’` read as `'`) into a reused buffer and found by their text.

use rustc_hash::FxHashMap;

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
    /// the word lowercased (with `’` as `'`) when it had to be folded, and empty otherwise.
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
    while at < bytes.len() {
        if !is_word_byte(bytes[at]) {
            at += 1;
            continue;
        }
        let start = at;
        let mut ascii = true;
        while at < bytes.len() && is_word_byte(bytes[at]) {
            ascii &= bytes[at] < 0x80;
            at += 1;
        }
        // The run ends at an ASCII byte or the end of the text: a character boundary.
        let run = &text[start..at];
        let stop = if ascii {
            visit(run)
        } else {
            run.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')).filter(|word| !word.is_empty()).any(&mut visit)
        };
        if stop {
            return true;
        }
    }
    false
}

/// Whether `byte` may be part of a word: an ASCII letter, digit or apostrophe, or any byte of a
/// non-ASCII character (told apart by character afterwards).
fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'\'' || byte >= 0x80
}

/// An ASCII word of one to eight letters, digits and apostrophes as one `u64`: its bytes
/// lowercased, little-endian, zero past its end (no word holds a zero byte, so words of
/// different lengths differ). `None` for other words.
fn pack(word: &[u8]) -> Option<u64> {
    if word.is_empty() || word.len() > 8 || !word.is_ascii() {
        return None;
    }
    let mut bytes = [0u8; 8];
    for (packed, byte) in bytes.iter_mut().zip(word) {
        *packed = byte.to_ascii_lowercase();
    }
    Some(u64::from_le_bytes(bytes))
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
    fn other_words_and_prefixes_are_not_found() {
        let (table, mut folded) = (table(), String::new());
        for word in ["i", "alway", "alwayss", "toujoursx", "bevorzug", "můjx", "", "I’M"] {
            assert_eq!(table.get(word, &mut folded), if word == "I’M" { 1 } else { 0 }, "{word}");
        }
    }
}
