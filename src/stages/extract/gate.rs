//! The gate in front of extraction: one pass over a user message's words tells whether it may
//! say anything about the user in any of the five languages. Most messages of a history hold no
//! first-person word at all (a request, a pasted text, a follow-up), and are not cut into
//! sentences or clauses. Without the gate, cutting and reading every message cost as much as
//! the rest of a conversion.

use std::sync::LazyLock;

use super::language::{self, Language};
use super::sentences;
use super::word_table::{WordTable, for_each_word_told};

/// A word's part in the gate: it may open a statement about the user.
const OPENS_STATEMENT: u8 = 1;

/// Every language's words that may open a statement about the user: subjects, possessives,
/// the user as an object, French elisions, and the words of standing wishes.
const OPENERS: &[&str] = &[
    "i", "i'm", "im", "i've", "ive", "i'll", "i'd", "my", "me", "mine", "myself", "we", "we're", "we've", "we'll", "us", "our", "always",
    "never", "ever", "ich", "mein", "meine", "meinen", "meinem", "meiner", "meines", "mich", "mir", "wir", "unser", "unsere", "immer",
    "nie", "niemals", "je", "j'", "mon", "ma", "mes", "moi", "nous", "notre", "nos", "toujours", "jamais", "yo", "mi", "mis", "nosotros",
    "nosotras", "nuestro", "nuestra", "siempre", "nunca", "já", "můj", "moje", "moji", "mé", "mého", "mému", "mém", "mým", "mou", "mých",
    "mě", "mně", "náš", "naše", "vždy", "vždycky", "nikdy", "jsem",
];

/// Every opener.
static WORDS: LazyLock<WordTable> = LazyLock::new(|| {
    let mut words = WordTable::default();
    for opener in OPENERS {
        words.insert_or(opener, OPENS_STATEMENT);
    }
    words
});

/// For each pair of an ASCII word's first two bytes ([`pair_index`]), the byte lengths of the
/// ASCII openers that start so, as bits: most words ("the", "and", "in", "is") have no opener
/// of their shape and are not looked up at all.
static OPENER_SHAPES: LazyLock<[u16; 1024]> = LazyLock::new(|| {
    let mut shapes = [0u16; 1024];
    for opener in OPENERS.iter().filter(|opener| opener.is_ascii()) {
        shapes[pair_index(opener.as_bytes())] |= 1 << opener.len();
    }
    shapes
});

/// Where a word of at least one ASCII byte (a letter, digit or apostrophe each) is in
/// [`OPENER_SHAPES`]: its first two bytes (the second 0 for a one-letter word) lowercased, five
/// bits each. Some bytes share their five bits (an apostrophe and "g"): such words are looked up
/// and found not to be openers.
fn pair_index(word: &[u8]) -> usize {
    let first = usize::from(word[0] | 0x20) & 31;
    let second = word.get(1).map_or(0, |byte| usize::from(byte | 0x20) & 31);
    first << 5 | second
}

/// Whether `text` may say something about the user: one of its words opens a statement in
/// any language, or, where a sentence of the message may read as Spanish or Czech (which leave
/// the subject out), a word has a first-person verb ending. Only the part of a message where
/// the user's own sentences are looked for is read ([`sentences::readable`]): the rest of a
/// pasted document would be passed over anyway.
pub fn may_disclose(text: &str) -> bool {
    let text = sentences::readable(text);
    let mut reading = Reading::default();
    if for_each_word_told(text, |word, ascii| reading.opens_statement(word, ascii)) {
        return true;
    }
    // The languages are told only for the few messages that need them: a second pass.
    reading.verb_ending && language::may_be_read_as(text, &[Language::Spanish, Language::Czech])
}

/// What the gate has seen of a message so far.
#[derive(Default)]
struct Reading {
    /// Whether a word had a Spanish or Czech first-person verb ending.
    verb_ending: bool,
    /// The lowercased word, reused.
    folded: String,
}

impl Reading {
    /// Reads one word (`ascii` when it is); true when it opens a statement about the user.
    #[inline(always)]
    fn opens_statement(&mut self, word: &str, ascii: bool) -> bool {
        // No opener is longer.
        if word.len() > 12 {
            return false;
        }
        if ascii {
            // Nearly every word: read on its bytes, and looked up only when an opener has its
            // first two letters and length.
            let bytes = word.as_bytes();
            let elided = bytes.len() >= 2 && bytes[1] == b'\'' && matches!(bytes[0].to_ascii_lowercase(), b'j' | b'i' | b'm');
            let shaped = OPENER_SHAPES[pair_index(bytes)] & (1 << bytes.len()) != 0;
            if elided || (shaped && WORDS.get_ascii(bytes, &mut self.folded) & OPENS_STATEMENT != 0) {
                return true;
            }
            if !self.verb_ending {
                let last = bytes[bytes.len() - 1].to_ascii_lowercase();
                let before_last = bytes.len().checked_sub(2).map(|at| bytes[at].to_ascii_lowercase());
                // "-o" ("vivo"), Spanish "-oy" ("soy", "voy", "estoy"), Czech "-ji"/"-ju".
                self.verb_ending = (bytes.len() >= 4 && last == b'o')
                    || (before_last == Some(b'o') && last == b'y' && bytes.len() <= 5)
                    || (before_last == Some(b'j') && matches!(last, b'i' | b'u'));
            }
            return false;
        }
        let part = WORDS.get(word, &mut self.folded);
        let lower = self.folded.as_str();
        if part & OPENS_STATEMENT != 0 || lower.starts_with("j'") || lower.starts_with("i'") || lower.starts_with("m'") {
            return true;
        }
        self.verb_ending = self.verb_ending
            || (lower.len() >= 4 && lower.ends_with('o'))
            || ["ím", "ám", "ji", "ju", "é", "í"].iter().any(|ending| lower.ends_with(ending));
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_person_word_of_any_language_opens_the_gate() {
        for text in ["I live in Leeds", "Ich wohne in Graz", "J’habite à Lyon", "My husband", "Mám psa.", "Vivo en Sevilla."] {
            assert!(may_disclose(text), "{text:?}");
        }
    }

    #[test]
    fn a_message_with_no_first_person_word_stays_out() {
        for text in ["Can you summarize this article?", "Fix the bug in line 3.", "Hello, also the video into the radio."] {
            assert!(!may_disclose(text), "{text:?}");
        }
    }

    #[test]
    fn only_the_first_paragraph_of_a_pasted_document_is_read() {
        let document = format!("Summarize this.\n\n{}\nI live in Leeds.", "The committee met on Tuesday. ".repeat(100));
        assert!(!may_disclose(&document));
        assert!(may_disclose(&format!("I live in Leeds.\n\n{document}")));
    }
}
