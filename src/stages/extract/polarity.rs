//! Whether a statement says that something is not so ("Is not a vegetarian", "Isst kein
//! Fleisch", "N'aime pas le café"): the consolidator keys a negated statement apart from its
//! positive one, so "I'm a vegetarian" and a later "I'm not a vegetarian" stay two memories
//! instead of one memory whose evidence contradicts its text.

use super::clause::lexicon::Lexicon;
use super::language::Language;

/// Whether `statement` (written by a clause reader, in `language`) is negated. `evidence` is
/// the clause as the user wrote it: a Czech verb carries its negation as a prefix ("nejím"),
/// told there by the verb the prefix leaves.
pub fn says_not(statement: &str, evidence: &str, language: Language) -> bool {
    let lexicon = Lexicon::of(language);
    let negation = |word: &str| match language {
        Language::English => matches!(word, "not" | "never" | "no" | "cannot") || word.ends_with("n't"),
        // "plus" is "more" as often as "no longer"; the reader writes "ne"/"n'" with it.
        Language::French => matches!(word, "ne" | "pas" | "jamais" | "rien") || word.starts_with("n'"),
        _ => lexicon.negations.contains(&word),
    };
    if words(statement).any(|word| negation(&word)) {
        return true;
    }
    language == Language::Czech
        && words(evidence)
            .any(|word| word.strip_prefix("ne").is_some_and(|verb| verb.chars().count() > 1 && lexicon.verb_class(verb).is_some()))
}

/// The lowercase words of `text`, with `’` read as `'`.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|word| !word.is_empty())
        .map(|word| word.to_lowercase().replace('’', "'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negations_are_told_in_every_language_and_their_positives_are_not() {
        for (statement, evidence, language) in [
            ("Is not a vegetarian", "I'm not a vegetarian", Language::English),
            ("Doesn't drink coffee", "I don't drink coffee", Language::English),
            ("Has never been to Japan", "I've never been to Japan", Language::English),
            ("Isst kein Fleisch", "Ich esse kein Fleisch", Language::German),
            ("N'aime pas le café", "Je n'aime pas le café", Language::French),
            ("No come carne", "No como carne", Language::Spanish),
            ("Nejí maso", "Nejím maso", Language::Czech),
        ] {
            assert!(says_not(statement, evidence, language), "{statement}");
        }
        for (statement, evidence, language) in [
            ("Is a vegetarian", "I'm a vegetarian", Language::English),
            ("Knows Nottingham well", "I know Nottingham well", Language::English),
            ("Isst gern Fleisch", "Ich esse gern Fleisch", Language::German),
            ("Aime plus le thé que le café", "J'aime plus le thé que le café", Language::French),
            ("Come carne", "Como carne", Language::Spanish),
            ("Pracuje v nemocnici", "Pracuji v nemocnici", Language::Czech),
        ] {
            assert!(!says_not(statement, evidence, language), "{statement}");
        }
    }
}
