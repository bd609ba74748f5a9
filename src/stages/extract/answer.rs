//! Answers without a subject: "Insane Clown Posse." right after the assistant asked "What's your
//! favorite band?". The question names what the answer is; the answer alone says nothing. Only
//! a short answer that is a name or a noun phrase counts (no pronoun, no yes or no, no question
//! back), and only to a question about the user's favourite.

use super::MemoryType;
use super::clause::{Found, capitalized, words};
use super::language::Language;

/// Most words a subjectless answer may have.
const MOST_ANSWER_WORDS: usize = 5;

/// What the assistant's turn asks a favourite of, in its last question: "band" for "…! What's
/// your favorite band?", "type of music" for "What is your favourite type of music?".
pub fn favourite_asked(assistant_said: &str) -> Option<String> {
    let end = assistant_said.trim_end().strip_suffix('?')?;
    let question = end.rsplit(['.', '!', '?', '\n']).next()?;
    // Every way of asking names a favourite ("favorite", "favourite", "fave"): a question
    // without those letters is not lowercased.
    if !question.as_bytes().windows(3).any(|letters| letters.eq_ignore_ascii_case(b"fav")) {
        return None;
    }
    let question = question.trim().to_lowercase().replace('’', "'");
    // A lead-in ("So, what's…", "And who is…") asks the same.
    let question = ["so, ", "so ", "and ", "ok, ", "okay, "].iter().find_map(|lead| question.strip_prefix(lead)).unwrap_or(&question);
    let rest = ["what's your ", "what is your ", "who's your ", "who is your ", "what are your "]
        .iter()
        .find_map(|opening| question.strip_prefix(opening))?;
    let kind = ["favorite ", "favourite ", "fave "].iter().find_map(|word| rest.strip_prefix(word))?;
    let kind_words: Vec<&str> = kind.split_whitespace().collect();
    (!kind_words.is_empty() && kind_words.len() <= 4 && kind_words.iter().all(|word| word.chars().all(|c| c.is_alphabetic() || c == '-')))
        .then(|| kind_words.join(" "))
}

/// The favourite `sentence` names as a short answer to a question about the favourite `kind`.
pub fn answer(sentence: &str, kind: &str) -> Option<Found> {
    let mut text = sentence.trim().trim_end_matches(['.', '!']).trim();
    for opener in ["oh,", "oh", "well,", "hmm,", "definitely", "probably", "easy,", "easy:", "that's easy:", "it's"] {
        let rest = text.get(..opener.len()).filter(|head| head.eq_ignore_ascii_case(opener)).map(|_| &text[opener.len()..]);
        // A whole word only: "Ohio" does not open with "oh".
        if let Some(rest) = rest.filter(|rest| !rest.starts_with(char::is_alphabetic)) {
            text = rest.trim_start();
        }
    }
    let said = words::words(text, Language::English);
    let refuses = said.iter().any(|word| {
        matches!(
            word.lower.as_str(),
            "i" | "me"
                | "my"
                | "you"
                | "your"
                | "it"
                | "that"
                | "this"
                | "is"
                | "are"
                | "not"
                | "no"
                | "yes"
                | "yeah"
                | "idk"
                | "sure"
                | "hmm"
                | "don't"
                | "do"
                | "know"
                | "same"
                | "too"
                | "what"
                | "who"
                | "why"
                | "how"
                | "we"
                | "they"
                | "he"
                | "she"
                | "all"
                | "many"
                | "lots"
                | "so"
                | "hard"
                | "tough"
                | "depends"
                | "good"
                | "great"
                | "nice"
                | "cool"
                | "thanks"
        )
    });
    if said.is_empty() || said.len() > MOST_ANSWER_WORDS || refuses || text.contains(['?', ',', ';', ':']) {
        return None;
    }
    let start = sentence.find(text).unwrap_or(0);
    let statement = capitalized(&format!("their favorite {kind} is {}", words::joined(&said)));
    let mut found = Found::new(MemoryType::Preference, "favourite", &said, statement, 0.7, false)?;
    found.span = start..start + text.len();
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_about_a_favourite_names_what_the_answer_is() {
        assert_eq!(favourite_asked("Cool! What's your favorite band?").as_deref(), Some("band"));
        assert_eq!(favourite_asked("So, what is your favourite type of music?").as_deref(), Some("type of music"));
        assert_eq!(favourite_asked("What do you do for fun?"), None);
        assert_eq!(favourite_asked("What's your favorite band? I love Queen."), None);
    }

    #[test]
    fn a_short_named_answer_is_the_favourite_and_anything_else_is_not() {
        let found = answer("Insane Clown Posse.", "band").map(|found| found.statement);
        assert_eq!(found.as_deref(), Some("Their favorite band is Insane Clown Posse"));
        assert_eq!(answer("Oh, papaya!", "food").map(|found| found.statement).as_deref(), Some("Their favorite food is papaya"));
        assert_eq!(answer("Ohio.", "state").map(|found| found.statement).as_deref(), Some("Their favorite state is Ohio"));
        for reply in ["I don't know.", "That's a tough one.", "Yes!", "What about you?", "Hard to say, so many."] {
            assert!(answer(reply, "band").is_none(), "{reply:?}");
        }
    }
}
