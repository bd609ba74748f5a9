//! The gate in front of extraction: one pass over a user message's words tells whether it may
//! say anything about the user in any of the five languages. Most messages of a history hold no
//! first-person word at all (a request, a pasted text, a follow-up), and are not cut into
//! sentences or clauses. Without the gate, cutting and reading every message cost as much as
//! the rest of a conversion.

use std::sync::LazyLock;

use rustc_hash::FxHashMap;

use super::language::{self, Language};

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
/// a word has a first-person verb ending.
pub fn may_disclose(text: &str) -> bool {
    let mut verb_ending = false;
    let mut scores = language::Scores::default();
    let mut folded = String::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')) {
        if word.is_empty() {
            continue;
        }
        // No word of the table is longer (and a long word is a word of no language's list).
        if word.len() > 12 {
            scores.add_marked(0);
            continue;
        }
        let lower = if word.bytes().any(|byte| byte.is_ascii_uppercase() || byte >= 0x80) {
            folded.clear();
            folded.extend(word.chars().flat_map(char::to_lowercase).map(|c| if c == '’' { '\'' } else { c }));
            folded.as_str()
        } else {
            word
        };
        let part = WORDS.get(lower).copied().unwrap_or(0);
        if part & OPENS_STATEMENT != 0 || lower.starts_with("j'") || lower.starts_with("i'") || lower.starts_with("m'") {
            return true;
        }
        scores.add_marked(part);
        verb_ending = verb_ending
            || (lower.len() >= 4 && lower.ends_with('o'))
            || ["ím", "ám", "ji", "ju", "é", "í"].iter().any(|ending| lower.ends_with(ending));
    }
    verb_ending && scores.finish(text).iter().any(|language| matches!(language, Language::Spanish | Language::Czech))
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
}
