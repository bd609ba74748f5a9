//! Standing wishes to the assistant: "Please always answer in metric units", "Never suggest
//! npm", "From now on, call me Sam", "Antworte immer auf Deutsch", "Réponds toujours en
//! français". They are instructions (PAM's `instruction`), kept as said.

use super::words::{Word, joined};
use super::{Found, capitalized};
use crate::stages::extract::MemoryType;
use crate::stages::extract::language::Language;

/// Words that make an imperative a standing wish.
fn standing(language: Language) -> &'static [&'static str] {
    match language {
        Language::English => &["always", "never", "from now on", "going forward", "in future", "in the future", "every time", "by default"],
        Language::German => &["immer", "nie", "niemals", "ab jetzt", "von nun an", "künftig", "grundsätzlich"],
        Language::French => &["toujours", "jamais", "désormais", "dorénavant", "à l'avenir", "par défaut"],
        Language::Spanish => &["siempre", "nunca", "a partir de ahora", "de ahora en adelante", "por defecto"],
        Language::Czech => &["vždy", "vždycky", "nikdy", "od teď", "odteď", "napříště"],
    }
}

/// Words a standing wish is not opened with (a subject: "I always…" is a habit).
fn subjects(language: Language) -> &'static [&'static str] {
    match language {
        Language::English => &[
            "i", "we", "my", "our", "it", "he", "she", "they", "this", "that", "there", "you", "what", "how", "why", "do", "does", "is",
            "are", "can",
        ],
        Language::German => &["ich", "wir", "mein", "meine", "es", "er", "sie", "das", "du", "was", "wie", "warum"],
        Language::French => &["je", "j'", "nous", "mon", "ma", "il", "elle", "c'", "ce", "on", "tu", "vous", "que", "qu'", "comment"],
        Language::Spanish => &["yo", "nosotros", "mi", "él", "ella", "eso", "esto", "tú", "qué", "cómo"],
        Language::Czech => &["já", "my", "můj", "moje", "on", "ona", "to", "ty", "co", "jak", "proč"],
    }
}

/// The standing wish `words` state, if they state one.
pub fn read(words: &[Word], language: Language) -> Option<Found> {
    let mut start = 0;
    while words.get(start).is_some_and(|word| {
        matches!(
            word.lower.as_str(),
            "please" | "pls" | "bitte" | "stp" | "svp" | "por" | "favor" | "prosím" | "and" | "also" | "und" | "et" | "y" | "a"
        )
    }) {
        start += 1;
    }
    let words = &words[start..];
    let first = words.first()?;
    let do_not = first.lower == "do" && words.get(1).is_some_and(|word| word.lower == "not");
    if (subjects(language).contains(&first.lower.as_str()) && !do_not) || words.len() < 3 || words.len() > 20 {
        return None;
    }
    // The wish is said at the start: "Always answer…", "Never suggest…", "From now on, call
    // me…", "Don't ever…", "Answer always…" ("But it's not always easy" is no wish).
    // Its marker's first word is one of the first four: most clauses have none, and are passed
    // over on their words.
    let opening_words = &words[..words.len().min(4)];
    let may_say_marker = opening_words.iter().any(|word| {
        (language == Language::English && word.lower == "ever")
            || standing(language)
                .iter()
                .any(|marker| marker.strip_prefix(word.lower.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with(' ')))
    });
    if !may_say_marker {
        return None;
    }
    let mut opening = String::with_capacity(64);
    for word in words.iter().take(4) {
        opening.push(' ');
        opening.push_str(&word.lower);
    }
    opening.push(' ');
    let never_ever = language == Language::English && opening.contains(" not ever ");
    if !never_ever && !standing(language).iter().any(|marker| says_phrase(&opening, marker)) {
        return None;
    }
    // "Going forward then" is no wish: besides its marker it says nothing to do.
    if words.iter().skip(2).all(|word| matches!(word.lower.as_str(), "then" | "so" | "now" | "too" | "ok" | "okay" | "please")) {
        return None;
    }
    let lexicon = super::lexicon::Lexicon::of(language);
    if lexicon.lead_ins.contains(&first.lower.as_str())
        || words
            .iter()
            .take(3)
            .any(|word| matches!(word.lower.as_str(), "it" | "is" | "was" | "are" | "i" | "es" | "ist" | "c'est" | "est" | "je" | "to"))
    {
        return None;
    }
    let text = joined(words);
    Some(Found {
        memory_type: MemoryType::Procedure,
        slot: "instruction",
        value: text.clone(),
        statement: capitalized(&text),
        confidence: 0.85,
        change: false,
        span: 0..0,
    })
}

/// Whether `padded` (words between single spaces, a space at each end) holds the words of
/// `phrase` in a row.
fn says_phrase(padded: &str, phrase: &str) -> bool {
    padded.match_indices(phrase).any(|(at, _)| padded[..at].ends_with(' ') && padded[at + phrase.len()..].starts_with(' '))
}
