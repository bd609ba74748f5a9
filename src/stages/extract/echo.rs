//! Reactions to the assistant: "I love the fresh air!" right after the assistant described the
//! fresh air of a place, "I like number 3" after its list. A like or dislike whose object the
//! assistant's previous turn just stated (not asked about) answers the assistant's text; it says
//! nothing lasting about the user. An answer to a question ("Do you like hiking?" → "I love
//! hiking") is kept: only the assistant's statements count.

/// How much of the assistant's turn is read: its opening, where what the user reacts to is.
const READ_BYTES: usize = 4_000;

/// The statements of the assistant's previous turn. The turn is read again for each like or
/// dislike found in the reply (one or two at most), word by word with no allocation: building
/// a set of the turn's words cost an allocation a word and was a twentieth of extraction's
/// time in a conversion.
#[derive(Debug, Default)]
pub struct Echo<'a> {
    text: &'a str,
}

impl<'a> Echo<'a> {
    /// The opening of `assistant_text`, whose statements (not questions) are compared.
    pub fn of(assistant_text: &'a str) -> Echo<'a> {
        let mut end = assistant_text.len().min(READ_BYTES);
        while !assistant_text.is_char_boundary(end) {
            end -= 1;
        }
        Echo { text: &assistant_text[..end] }
    }

    /// Whether every content word of `value` was stated by the assistant.
    pub fn repeats(&self, value: &str) -> bool {
        let mut wanted: Vec<(String, bool)> = Vec::new();
        for_each_content_word(value, |stem| {
            if !wanted.iter().any(|(word, _)| word == stem) {
                wanted.push((stem.to_owned(), false));
            }
        });
        if wanted.is_empty() {
            return false;
        }
        let mut missing = wanted.len();
        self.for_each_stated_sentence(|sentence| {
            for_each_content_word(sentence, |stem| {
                if let Some((_, seen)) = wanted.iter_mut().find(|(word, seen)| !*seen && word == stem) {
                    *seen = true;
                    missing -= 1;
                }
            });
            missing == 0
        });
        missing == 0
    }

    /// Calls `visit` with each sentence of the text that is not a question, until it returns
    /// true.
    fn for_each_stated_sentence(&self, mut visit: impl FnMut(&str) -> bool) {
        let text = self.text;
        let mut sentence_start = 0;
        for (at, c) in text.char_indices() {
            if matches!(c, '.' | '!' | '?' | '\n') {
                if c != '?' && visit(&text[sentence_start..at]) {
                    return;
                }
                sentence_start = at + c.len_utf8();
            }
        }
        visit(&text[sentence_start..]);
    }
}

/// Calls `visit` with each content word of `text`: lowercase words of three letters or more,
/// cut to a five-letter stem, without the words that carry no content.
fn for_each_content_word(text: &str, mut visit: impl FnMut(&str)) {
    let mut lower = String::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.chars().nth(2).is_none() {
            continue;
        }
        lower.clear();
        if word.is_ascii() {
            lower.push_str(word);
            lower.make_ascii_lowercase();
        } else {
            lower.push_str(&word.to_lowercase());
        }
        if is_empty_word(&lower) {
            continue;
        }
        let stem_end = lower.char_indices().nth(5).map_or(lower.len(), |(at, _)| at);
        visit(&lower[..stem_end]);
    }
}

/// Words that carry no content.
fn is_empty_word(word: &str) -> bool {
    matches!(
        word,
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
