//! Cuts a sentence into clauses: at semicolons and dashes, at a comma or a conjunction that
//! opens a new clause ("…, I live in Leeds", "… and my wife works at…", "… because I'm
//! vegan"), so each clause says one thing and a fact inside a question ("I'm a teacher, how do
//! I…?") stands apart from the question.

use super::lexicon::{Lexicon, WordClasses};
use crate::stages::extract::language::Language;
use crate::stages::extract::lowered::fold_into;

/// One word of a sentence as the cut reads it.
struct Told<'a> {
    /// Where it starts in the sentence.
    start: usize,
    /// As written, with its punctuation.
    raw: &'a str,
    /// Lowercased, without the punctuation around it.
    bare: std::borrow::Cow<'a, str>,
    /// Its word classes (of the word without its closing apostrophes).
    classes: WordClasses,
    /// Whether it can start a subject.
    subject: bool,
}

/// The clauses of `sentence`, as byte ranges into it, in order.
pub fn clauses(sentence: &str, lexicon: &Lexicon) -> Vec<std::ops::Range<usize>> {
    // Each word's bare form, classes and whether it can start a subject, told once: the checks
    // below look at a word's neighbours and at every word since the last cut. One vector for
    // all of it: a sentence's allocations cost more than its lookups in a conversion.
    // Room for every word at once (about one in five bytes starts one): collected from an
    // iterator of no known length, the vector grew three or four times a sentence.
    let mut told: Vec<Told<'_>> = Vec::with_capacity(sentence.len() / 5 + 2);
    told.extend(sentence.split_whitespace().map(|raw| {
        let bare = bare(raw);
        // Looked up once a word: the subject test and the conjunction tests ask about the
        // same word.
        let classes = lexicon.classes(bare.trim_end_matches('\''));
        let subject = lexicon.starts_subject(&bare, classes);
        Told { start: raw.as_ptr() as usize - sentence.as_ptr() as usize, raw, bare, classes, subject }
    }));
    // The clauses found so far, and where the one under way starts.
    let mut clauses = Vec::with_capacity(4);
    let mut clause_start = 0;
    // The word index of the last cut, and of the last word since it that starts a subject.
    let mut cut_index = 0;
    let mut last_subject: Option<usize> = None;
    for index in 1..told.len() {
        if told[index - 1].subject {
            last_subject = Some(index - 1);
        }
        let start = told[index].start;
        let previous = told[index - 1].raw;
        let word = told[index].bare.as_ref();
        let next = told.get(index + 1).map_or("", |next| next.bare.as_ref());
        let after_mark =
            previous.ends_with(',') || previous.ends_with(';') || previous.ends_with(':') || matches!(previous, "-" | "–" | "—");
        // A label after a comma ("…, token: ghp_…") opens what it labels.
        let label = previous.ends_with(',') && told[index].raw.ends_with(':');
        let hard = previous.ends_with(';') || previous.ends_with(':') || matches!(previous, "–" | "—") || label;
        // After a comma, "and"/"or" go on a list ("to grill, garden, and go gambling") unless
        // a subject follows them.
        // Told only after a mark: the word lists are not searched for every word.
        let opens = after_mark
            && !word.ends_with('\'')
            && told[index].classes.opens_clause()
            && !matches!(word, "and" | "or" | "plus" | "und" | "oder" | "et" | "ou" | "y" | "e" | "o" | "a" | "i" | "nebo");
        // Classes are of the word without its closing apostrophes, and a conjunction has none.
        let conjunction_before_subject =
            !word.ends_with('\'') && told[index].classes.is_conjunction() && told.get(index + 1).is_some_and(|next| next.subject);
        // A run-on ("I'm a chef I love cooking") starts a clause at the user's own "I", unless a
        // word before it makes the clause depend on another ("if I", "when I", "the book I read").
        // …and only after a clause that already had the user as its subject ("Last year I ran",
        // "Maybe I will" are one clause).
        let had_subject = index - cut_index >= 3 && last_subject.is_some_and(|at| at >= cut_index);
        let run_on = lexicon.language == Language::English
            && had_subject
            && (word == "i" || word.starts_with("i'") || word == "im" || word == "we" || word.starts_with("we'"))
            && !matches!(
                told[index - 1].bare.as_ref(),
                "if" | "when"
                    | "whenever"
                    | "unless"
                    | "whether"
                    | "than"
                    | "as"
                    | "that"
                    | "what"
                    | "where"
                    | "how"
                    | "why"
                    | "who"
                    | "which"
                    | "wish"
                    | "suppose"
                    | "and"
                    | "or"
                    | "but"
                    | "so"
                    | "because"
                    | "since"
                    | "while"
                    | "until"
                    | "before"
                    | "after"
                    | "once"
                    | "think"
                    | "guess"
                    | "believe"
                    | "hope"
                    | "know"
                    | "feel"
                    | "say"
                    | "saying"
                    | "says"
                    | "said"
                    | "mean"
                    | "bet"
                    | "like"
                    | "things"
                    | "thing"
                    | "one"
                    | "ones"
                    | "time"
                    | "place"
                    | "way"
                    | "everything"
                    | "anything"
                    | "something"
                    | "all"
                    | "do"
                    | "does"
                    | "did"
                    | "can"
                    | "could"
                    | "would"
                    | "should"
                    | "will"
                    | "am"
                    | "are"
                    | "is"
                    | "was"
                    | "were"
                    | "have"
                    | "has"
                    | "had"
                    | "shall"
                    | "may"
                    | "might"
                    | "must"
            );
        // "I love dogs, they're the best": someone else's clause starts after the comma.
        // "I'm George, what's your name?", "I'm from Ohio, have you been?": a question to the
        // other person starts after the comma.
        let asks_back = lexicon.language == Language::English
            && previous.ends_with(',')
            && (matches!(word, "what's" | "how's" | "where's" | "who's")
                || (matches!(word, "have" | "do" | "did" | "are" | "were" | "can" | "could" | "would" | "will" | "what" | "how")
                    && matches!(next, "you" | "about")));
        let other_subject = asks_back
            || lexicon.language == Language::English
                && previous.ends_with(',')
                && matches!(
                    word,
                    "they" | "they're" | "he" | "he's" | "she" | "she's" | "it" | "it's" | "there's" | "you" | "you're" | "that's"
                );
        if hard
            || (after_mark && (opens || told[index].subject))
            || other_subject
            || conjunction_before_subject
            || (!word.ends_with('\'') && told[index].classes.is_subordinator())
            || run_on
        {
            push_clause(sentence, clause_start..start, &mut clauses);
            clause_start = start;
            cut_index = index;
        }
    }
    push_clause(sentence, clause_start..sentence.len(), &mut clauses);
    clauses
}

/// Keeps `range` of `sentence` as a clause unless it is only white space.
fn push_clause(sentence: &str, range: std::ops::Range<usize>, clauses: &mut Vec<std::ops::Range<usize>>) {
    if !sentence[range.clone()].trim().is_empty() {
        clauses.push(range);
    }
}

/// A raw word lowercased, without the punctuation around it.
fn bare(word: &str) -> std::borrow::Cow<'_, str> {
    let trimmed = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’');
    // Most words are plain lowercase ASCII: no copy for them.
    if trimmed.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'\'') {
        std::borrow::Cow::Borrowed(trimmed)
    } else {
        // Lowercased and its apostrophes made plain in one pass (one allocation for an ASCII word).
        let mut folded = String::with_capacity(trimmed.len());
        fold_into(trimmed, &mut folded);
        std::borrow::Cow::Owned(folded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(sentence: &str, language: Language) -> Vec<&str> {
        clauses(sentence, Lexicon::of(language)).into_iter().map(|range| sentence[range].trim()).collect()
    }

    #[test]
    fn a_clause_starts_at_a_new_subject_or_a_subordinator() {
        assert_eq!(
            split("I'm a teacher in Denver, how do I keep toddlers busy?", Language::English),
            ["I'm a teacher in Denver,", "how do I keep toddlers busy?"]
        );
        assert_eq!(
            split("I live in Austin, Texas and my wife works at a bakery.", Language::English),
            ["I live in Austin, Texas", "and my wife works at a bakery."]
        );
        assert_eq!(split("I love to bake cookies and knit", Language::English), ["I love to bake cookies and knit"]);
        assert_eq!(
            split("I don't eat meat, so keep the recipes vegetarian.", Language::English),
            ["I don't eat meat,", "so keep the recipes vegetarian."]
        );
        assert_eq!(
            split("For the app I'm building we chose Postgres.", Language::English),
            ["For the app I'm building", "we chose Postgres."]
        );
        assert_eq!(split("What should I cook because I'm vegan?", Language::English), ["What should I cook", "because I'm vegan?"]);
    }

    #[test]
    fn pro_drop_languages_cut_before_a_first_person_verb() {
        assert_eq!(split("Vivo en Sevilla y trabajo en un hospital.", Language::Spanish), ["Vivo en Sevilla", "y trabajo en un hospital."]);
        assert_eq!(split("Bydlím v Brně a pracuji jako zedník.", Language::Czech), ["Bydlím v Brně", "a pracuji jako zedník."]);
        assert_eq!(split("Mám psa a kočku.", Language::Czech), ["Mám psa a kočku."]);
    }
}
