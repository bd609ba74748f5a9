//! Reactions to the assistant: "I love the fresh air!" right after the assistant described the
//! fresh air of a place, "I like number 3" after its list. A like or dislike whose object the
//! assistant's previous turn just stated (not asked about) answers the assistant's text; it says
//! nothing lasting about the user. An answer to a question ("Do you like hiking?" → "I love
//! hiking") is kept: only the assistant's statements count.

use std::collections::HashSet;

/// How much of the assistant's turn is read: its opening, where what the user reacts to is.
const READ_BYTES: usize = 4_000;

/// The content words the assistant's previous turn stated.
#[derive(Debug, Default)]
pub struct Echo {
    words: HashSet<String>,
}

impl Echo {
    /// The words of the statements (not the questions) of `assistant_text`.
    pub fn of(assistant_text: &str) -> Echo {
        let mut end = assistant_text.len().min(READ_BYTES);
        while !assistant_text.is_char_boundary(end) {
            end -= 1;
        }
        let mut words = HashSet::new();
        let text = &assistant_text[..end];
        let mut sentence_start = 0;
        for (at, c) in text.char_indices() {
            if matches!(c, '.' | '!' | '?' | '\n') {
                if c != '?' {
                    words.extend(content_words(&text[sentence_start..at]));
                }
                sentence_start = at + c.len_utf8();
            }
        }
        words.extend(content_words(&text[sentence_start..]));
        Echo { words }
    }

    /// Whether every content word of `value` was stated by the assistant.
    pub fn repeats(&self, value: &str) -> bool {
        let mut value_words = content_words(value).peekable();
        value_words.peek().is_some() && value_words.all(|word| self.words.contains(&word))
    }
}

/// Lowercase words of three letters or more, cut to a five-letter stem, without the words
/// that carry no content.
fn content_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|word| {
            !matches!(
                word.as_str(),
                "the"
                    | "and"
                    | "that"
                    | "this"
                    | "those"
                    | "these"
                    | "with"
                    | "for"
                    | "your"
                    | "their"
                    | "all"
                    | "very"
                    | "really"
                    | "too"
                    | "also"
                    | "well"
                    | "just"
                    | "much"
                    | "lot"
                    | "lots"
                    | "der"
                    | "die"
                    | "das"
                    | "und"
                    | "les"
                    | "des"
                    | "una"
                    | "los"
                    | "las"
            )
        })
        .map(|word| word.chars().take(5).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_like_of_what_the_assistant_just_stated_is_an_echo() {
        let echo = Echo::of("The mountains have fresh air and quiet trails. Option 3 is the cheapest.");
        assert!(echo.repeats("the fresh air"));
        assert!(echo.repeats("option 3"));
        assert!(!echo.repeats("hiking in the Alps"));
        // Agreeing with what the assistant said is no news: "I love the fresh air too".
        assert!(echo.repeats("the fresh air too"));
    }

    #[test]
    fn what_the_assistant_asked_about_is_no_echo() {
        let echo = Echo::of("That sounds lovely! Do you like hiking?");
        assert!(!echo.repeats("hiking"));
    }
}
