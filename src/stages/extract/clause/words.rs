//! Words of a clause as the analysers read them: each with its text as written (names keep
//! their case, "C++" and "node.js" stay whole) and a lowercase form to compare, and with the
//! contractions a language writes ("I'm", "don't", "j'ai") opened into their words.

use compact_str::CompactString;

use crate::stages::extract::language::Language;

/// One word. Its text is held inline (a word is nearly always shorter than 24 bytes): every word
/// of every clause of a history's self-statements is made, copied and dropped, and allocating
/// each was a fifth of extraction's time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// As written (a contraction's parts are written out: "'m" is "am").
    pub text: CompactString,
    /// Lowercase, with typographic apostrophes made plain.
    pub lower: CompactString,
    /// Whether a comma (or semicolon) followed the word: where the items of a list part.
    pub comma: bool,
}

impl Word {
    /// A word as written.
    pub fn new(text: &str) -> Word {
        let lower = if text.is_ascii() {
            let mut lower = CompactString::new(text);
            lower.as_mut_str().make_ascii_lowercase();
            lower
        } else {
            CompactString::from(text.to_lowercase().replace('’', "'"))
        };
        Word { text: CompactString::new(text), lower, comma: false }
    }

    /// Whether the word starts with a capital letter (a name, in the middle of a clause).
    pub fn is_capitalized(&self) -> bool {
        self.text.chars().next().is_some_and(char::is_uppercase)
    }

    /// Whether the word is a number ("34", "2,5").
    pub fn is_number(&self) -> bool {
        self.lower.chars().next().is_some_and(|c| c.is_ascii_digit())
    }
}

/// Punctuation stripped from either end of a word.
fn is_edge_punctuation(c: char) -> bool {
    matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | '(' | ')' | '[' | ']' | '"' | '“' | '”' | '„' | '«' | '»' | '¿' | '¡' | '*' | '_' | '…')
}

/// The words of `text`, contractions opened for `language`.
pub fn words(text: &str, language: Language) -> Vec<Word> {
    // Room for a clause's words at once (about one in six bytes starts one): growing the
    // vector word by word allocated three or four times a clause.
    let mut words = Vec::with_capacity(text.len() / 6 + 2);
    let mut raws = text.split_whitespace().peekable();
    while let Some(raw) = raws.next() {
        let trimmed = raw.trim_matches(is_edge_punctuation).trim_matches(|c| c == '\'' || c == '’');
        if trimmed.is_empty() {
            continue;
        }
        match language {
            // "my name's Priya": after "name" the "'s" is always "is".
            Language::English
                if ends_with_s_for_is(trimmed)
                    && (raws.peek().is_some_and(|next| is_after_is(next)) || trimmed.to_lowercase().replace('’', "'") == "name's") =>
            {
                // "My dad's a plumber": the "'s" is "is" (before "a", "from", "not"…), not a
                // possessive ("my dad's car").
                let noun = &trimmed[..trimmed.len() - if trimmed.ends_with("'s") { 2 } else { "’s".len() }];
                words.push(Word::new(noun));
                words.push(Word::new("is"));
            }
            Language::English => open_english(trimmed, &mut words),
            Language::French => open_french(trimmed, &mut words),
            _ => words.push(Word::new(trimmed)),
        }
        if raw.trim_end_matches(['"', '”', '\'', ')']).ends_with([',', ';'])
            && let Some(last) = words.last_mut()
        {
            last.comma = true;
        }
    }
    words
}

/// The first word of `text` as [`words`] reads it, read from its first raw words only: those up
/// to the first that holds a word, and the one after it (which tells whether an "'s" is "is").
pub fn first_word(text: &str, language: Language) -> Option<Word> {
    let offset = |raw: &str| raw.as_ptr() as usize - text.as_ptr() as usize + raw.len();
    let mut raws = text.split_whitespace();
    let first = raws.by_ref().find(|raw| !raw.trim_matches(is_edge_punctuation).trim_matches(|c| c == '\'' || c == '’').is_empty())?;
    let end = raws.next().map_or(offset(first), offset);
    words(&text[..end], language).into_iter().next()
}

/// Whether the first word of `text` as [`words`] reads it is one of `wanted` (lowercase):
/// [`first_word`]'s answer, told without making the word where the first word is plain letters
/// as written (nearly every clause's), which is then itself in lowercase.
pub fn first_word_is(text: &str, language: Language, wanted: &[&str]) -> bool {
    let Some(first) = text
        .split_whitespace()
        .map(|raw| raw.trim_matches(is_edge_punctuation).trim_matches(|c| c == '\'' || c == '’'))
        .find(|word| !word.is_empty())
    else {
        return false;
    };
    // Only a word with an apostrophe, or an English contraction written without one, is read
    // as other words than itself (an "'s" read as "is" has an apostrophe too).
    if first.bytes().all(|byte| byte.is_ascii_alphabetic()) && !(language == Language::English && is_contraction_without_apostrophe(first))
    {
        return wanted.iter().any(|word| word.eq_ignore_ascii_case(first));
    }
    first_word(text, language).is_some_and(|word| wanted.contains(&word.lower.as_str()))
}

/// Whether a word ends with an "'s" that may be "is" (not "it's", "that's" and the like, which
/// [`open_english`] opens, nor "let's").
fn ends_with_s_for_is(word: &str) -> bool {
    (word.ends_with("'s") || word.ends_with("’s"))
        && word.chars().count() > 3
        && !["it's", "that's", "there's", "he's", "she's", "let's", "what's", "who's", "where's", "how's", "here's"]
            .iter()
            .any(|form| form.eq_ignore_ascii_case(&word.replace('’', "'")))
}

/// Whether a word can follow "is" but not a possessive "'s": an article, a preposition of
/// place or origin, a negation, an adverb of degree or frequency.
fn is_after_is(raw: &str) -> bool {
    let word = raw.trim_matches(is_edge_punctuation).to_lowercase();
    matches!(
        word.as_str(),
        "a" | "an"
            | "from"
            | "in"
            | "not"
            | "very"
            | "really"
            | "so"
            | "always"
            | "also"
            | "still"
            | "now"
            | "allergic"
            | "retired"
            | "married"
    )
}

/// English contractions written without an apostrophe, which [`open_english`] opens too.
const CONTRACTIONS_WITHOUT_APOSTROPHE: &[&str] =
    &["im", "ive", "dont", "doesnt", "didnt", "cant", "cannot", "wont", "wouldnt", "couldnt", "havent", "wasnt", "isnt", "gonna", "wanna"];

/// Whether `word` is an English contraction written without an apostrophe ("dont", "im").
fn is_contraction_without_apostrophe(word: &str) -> bool {
    CONTRACTIONS_WITHOUT_APOSTROPHE.iter().any(|form| form.eq_ignore_ascii_case(word))
}

/// English contractions: "I'm" → "I am", "don't" → "do not", "I've" → "I have".
fn open_english(word: &str, words: &mut Vec<Word>) {
    // Every contraction below is short and has an apostrophe or is one of a few written
    // without: other words are not lowercased.
    let may_be_contraction = word.len() <= 9 && (word.contains(['\'', '’']) || is_contraction_without_apostrophe(word));
    if !may_be_contraction {
        words.push(Word::new(word));
        return;
    }
    let lower = word.to_lowercase().replace('’', "'");
    let whole: Option<&[&str]> = match lower.as_str() {
        "im" | "i'm" => Some(&["I", "am"]),
        "ive" | "i've" => Some(&["I", "have"]),
        "i'll" => Some(&["I", "will"]),
        "i'd" => Some(&["I", "would"]),
        "dont" | "don't" => Some(&["do", "not"]),
        "doesn't" | "doesnt" => Some(&["does", "not"]),
        "didn't" | "didnt" => Some(&["did", "not"]),
        "can't" | "cant" | "cannot" => Some(&["can", "not"]),
        "won't" | "wont" => Some(&["will", "not"]),
        "wouldn't" | "wouldnt" => Some(&["would", "not"]),
        "couldn't" | "couldnt" => Some(&["could", "not"]),
        "haven't" | "havent" => Some(&["have", "not"]),
        "hasn't" => Some(&["has", "not"]),
        "wasn't" | "wasnt" => Some(&["was", "not"]),
        "isn't" | "isnt" => Some(&["is", "not"]),
        "aren't" => Some(&["are", "not"]),
        "we're" => Some(&["we", "are"]),
        "we've" => Some(&["we", "have"]),
        "we'll" => Some(&["we", "will"]),
        "we'd" => Some(&["we", "would"]),
        "gonna" => Some(&["going", "to"]),
        "wanna" => Some(&["want", "to"]),
        "it's" => Some(&["it", "is"]),
        "that's" => Some(&["that", "is"]),
        "there's" => Some(&["there", "is"]),
        "he's" => Some(&["he", "is"]),
        "she's" => Some(&["she", "is"]),
        "they're" => Some(&["they", "are"]),
        "you're" => Some(&["you", "are"]),
        _ => None,
    };
    match whole {
        Some(parts) => words.extend(parts.iter().map(|part| Word::new(part))),
        None => words.push(Word::new(word)),
    }
}

/// French elisions: "j'ai" → "j'" "ai", "n'aime" → "n'" "aime", "m'appelle" → "m'" "appelle".
fn open_french(word: &str, words: &mut Vec<Word>) {
    let apostrophe = word.char_indices().find(|(_, c)| *c == '\'' || *c == '’');
    match apostrophe {
        Some((at, c)) if at > 0 && at <= 2 && at + c.len_utf8() < word.len() => {
            let head = &word[..at];
            words.push(Word::new(&format!("{head}'")));
            open_french(&word[at + c.len_utf8()..], words);
        }
        _ => words.push(Word::new(word)),
    }
}

/// `words[from..]` written out as text, joined with spaces.
pub fn joined(words: &[Word]) -> String {
    let mut text = String::new();
    for word in words {
        if !text.is_empty() && !text.ends_with('\'') {
            text.push(' ');
        }
        text.push_str(&word.text);
    }
    text
}

/// `words` from `start` on (empty past the end): readers slice by positions they computed, and
/// a clause shorter than a pattern expects must never panic.
pub fn tail(words: &[Word], start: usize) -> &[Word] {
    words.get(start..).unwrap_or(&[])
}

/// `words[start..end]`, clamped to the words there are.
pub fn span(words: &[Word], start: usize, end: usize) -> &[Word] {
    let end = end.min(words.len());
    words.get(start.min(end)..end).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(text: &str, language: Language) -> Vec<String> {
        words(text, language).into_iter().map(|word| word.lower.to_string()).collect()
    }

    #[test]
    fn english_contractions_open_into_their_words() {
        assert_eq!(lower("I'm sure I don't eat C++.", Language::English), ["i", "am", "sure", "i", "do", "not", "eat", "c++"]);
        assert_eq!(lower("I’ve got node.js, (really)!", Language::English), ["i", "have", "got", "node.js", "really"]);
    }

    #[test]
    fn the_first_word_is_the_first_of_all_the_words() {
        for text in ["What am I doing wrong?", "  — Can't I?", "My dad's a plumber", "My dad's car", "j'ai un chat", "…", "", "“How” now"]
        {
            for language in Language::ALL {
                assert_eq!(first_word(text, language), words(text, language).into_iter().next(), "{text:?} {language:?}");
            }
        }
    }

    #[test]
    fn the_first_word_is_told_as_the_first_of_all_the_words_tells_it() {
        let wanted = ["what", "how", "why", "does", "is", "are", "can", "i", "je", "j'"];
        for text in [
            "What am I doing wrong?",
            "  — Can't I?",
            "CANNOT do it",
            "Isnt it?",
            "Doesn’t matter",
            "Why's a fish wet",
            "why's",
            "IS it",
            "“How” now",
            "how-to guide",
            "J'ai un chat",
            "Je suis",
            "Whatever",
            "im here",
            "(is) it",
            "Wh4t",
            "…",
            "",
        ] {
            for language in Language::ALL {
                let expected = first_word(text, language).is_some_and(|word| wanted.contains(&word.lower.as_str()));
                assert_eq!(first_word_is(text, language, &wanted), expected, "{text:?} {language:?}");
            }
        }
    }

    #[test]
    fn french_elisions_split_after_the_apostrophe() {
        assert_eq!(
            lower("J'ai un chat et je n'aime pas l'hiver", Language::French),
            ["j'", "ai", "un", "chat", "et", "je", "n'", "aime", "pas", "l'", "hiver"]
        );
        assert_eq!(joined(&words("j'habite à Lyon", Language::French)), "j'habite à Lyon");
    }
}
