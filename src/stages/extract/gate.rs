//! The gate in front of extraction: one pass over a user message's words tells whether it may
//! say anything about the user in any of the five languages. Most messages of a history hold no
//! first-person word at all (a request, a pasted text, a follow-up), and are not cut into
//! sentences or clauses. Without the gate, cutting and reading every message cost as much as
//! the rest of a conversion.

use std::sync::LazyLock;

use rustc_hash::FxHashMap;

use super::language::{self, Language};
use super::sentences;

/// A word's part in the gate: bit 7 when it may open a statement about the user, and the
/// languages it marks ([`language::marked_languages`]) in the low bits, so one lookup a word
/// does both.
const OPENS_STATEMENT: u8 = 0x80;

/// Every language's words that may open a statement about the user (subjects, possessives,
/// the user as an object, French elisions, and the words of standing wishes), and every word
/// that marks a language.
static WORDS: LazyLock<FxHashMap<&'static str, u8>> = LazyLock::new(|| {
    let mut words: FxHashMap<&'static str, u8> = language::marked_languages().collect();
    for opener in [
        "i", "i'm", "im", "i've", "ive", "i'll", "i'd", "my", "me", "mine", "myself", "we", "we're", "we've", "we'll", "us", "our",
        "always", "never", "ever", "ich", "mein", "meine", "meinen", "meinem", "meiner", "meines", "mich", "mir", "wir", "unser", "unsere",
        "immer", "nie", "niemals", "je", "j'", "mon", "ma", "mes", "moi", "nous", "notre", "nos", "toujours", "jamais", "yo", "mi", "mis",
        "nosotros", "nosotras", "nuestro", "nuestra", "siempre", "nunca", "já", "můj", "moje", "moji", "mé", "mého", "mému", "mém", "mým",
        "mou", "mých", "mě", "mně", "náš", "naše", "vždy", "vždycky", "nikdy", "jsem",
    ] {
        *words.entry(opener).or_default() |= OPENS_STATEMENT;
    }
    words
});

/// Whether `text` may say something about the user: one of its words opens a statement in
/// any language, or, where the message reads as Spanish or Czech (which leave the subject out),
/// a word has a first-person verb ending. Only the part of a message where the user's own
/// sentences are looked for is read ([`sentences::readable`]): the rest of a pasted document
/// would be passed over anyway.
pub fn may_disclose(text: &str) -> bool {
    let text = sentences::readable(text);
    let mut reading = Reading::default();
    let found = for_each_word(text, |word| reading.opens_statement(word));
    found
        || (reading.verb_ending
            && reading.scores.finish(text).iter().any(|language| matches!(language, Language::Spanish | Language::Czech)))
}

/// Calls `visit` with each word of `text` (runs of letters, digits and apostrophes) until it
/// returns true, and says whether it did. The same words as splitting at every other character,
/// found a byte at a time: an ASCII run (nearly every word) is a word as it stands; a run with
/// other bytes in it is split again by character.
fn for_each_word(text: &str, mut visit: impl FnMut(&str) -> bool) -> bool {
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

/// What the gate has seen of a message so far.
#[derive(Default)]
struct Reading {
    /// Whether a word had a Spanish or Czech first-person verb ending.
    verb_ending: bool,
    scores: language::Scores,
    /// The lowercased word, reused.
    folded: String,
}

impl Reading {
    /// Reads one word; true when it opens a statement about the user.
    fn opens_statement(&mut self, word: &str) -> bool {
        // No word of the table is longer (and a long word is a word of no language's list).
        if word.len() > 12 {
            self.scores.add_marked(0);
            return false;
        }
        let lower = if word.bytes().any(|byte| byte.is_ascii_uppercase() || byte >= 0x80) {
            self.folded.clear();
            self.folded.extend(word.chars().flat_map(char::to_lowercase).map(|c| if c == '’' { '\'' } else { c }));
            self.folded.as_str()
        } else {
            word
        };
        let part = WORDS.get(lower).copied().unwrap_or(0);
        if part & OPENS_STATEMENT != 0 || lower.starts_with("j'") || lower.starts_with("i'") || lower.starts_with("m'") {
            return true;
        }
        self.scores.add_marked(part);
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
    fn only_the_first_paragraph_of_a_pasted_document_is_read() {
        let document = format!("Summarize this.\n\n{}\nI live in Leeds.", "The committee met on Tuesday. ".repeat(100));
        assert!(!may_disclose(&document));
        assert!(may_disclose(&format!("I live in Leeds.\n\n{document}")));
    }
}
