//! Whether a statement says that something is not so ("Is not a vegetarian", "Isst kein
//! Fleisch", "N'aime pas le café"): the consolidator keys a negated statement apart from its
//! positive one, so "I'm a vegetarian" and a later "I'm not a vegetarian" stay two memories
//! instead of one memory whose evidence contradicts its text.

use super::clause::lexicon::Lexicon;
use super::language::Language;
use super::lowered::fold_into;

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
    // One buffer for every word's lowercase form: this runs on every candidate.
    let mut folded = String::new();
    if any_word(statement, &mut folded, negation) {
        return true;
    }
    language == Language::Czech
        && any_word(evidence, &mut folded, |word| {
            word.strip_prefix("ne").is_some_and(|verb| verb.chars().count() > 1 && lexicon.verb_class(verb).is_some())
        })
}

/// Whether `test` holds for one of the words of `text`, each lowercased (with `’` read as `'`)
/// into `folded`.
fn any_word(text: &str, folded: &mut String, mut test: impl FnMut(&str) -> bool) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')).filter(|word| !word.is_empty()).any(|word| {
        fold_into(word, folded);
        test(folded)
    })
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
