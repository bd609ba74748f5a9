//! The localized title verbs of Gemini activity records (`Prompted <prompt>`): which records are
//! prompts and what the prompt is. Strings come from parsers written against real exports in
//! each language (English, German, French, Spanish, Italian, Czech, Japanese, Korean, Greek;
//! Portuguese exports keep the English verb). A record whose verb is not known but which
//! carries an answer is still a prompt/answer pair, with its title kept whole.

use std::borrow::Cow;

/// Prompt prefixes; matched after non-breaking and narrow spaces are made plain.
const PROMPT_PREFIXES: [&str; 10] = [
    "Prompted",
    "Eingegebener Prompt:",
    "Prompt :",
    "Prompt:",
    "Hiciste la petición",
    "Has dicho:",
    "Hai chiesto:",
    "Pokyn",
    "送信したメッセージ:",
    "Υποβλήθηκε το ερώτημα",
];

/// Korean puts the marker after the prompt: `<prompt> 항목을 검색함`.
const PROMPT_SUFFIXES: [&str; 1] = ["항목을 검색함"];

/// The prompt of a record titled `title`, when the title says it is a prompt (the prompt may be
/// empty: an image-only prompt).
pub fn prompt_of(title: &str) -> Option<String> {
    // Every one of those spaces starts with byte 0xC2 or 0xE2; most titles have neither and are
    // matched as they are (a copy a character at a time was a twentieth of a Gemini run).
    let plain: Cow<str> = if memchr::memchr2(0xc2, 0xe2, title.as_bytes()).is_none() {
        Cow::Borrowed(title)
    } else {
        Cow::Owned(title.chars().map(|c| if matches!(c, '\u{a0}' | '\u{202f}' | '\u{2003}' | '\u{2009}') { ' ' } else { c }).collect())
    };
    for prefix in PROMPT_PREFIXES {
        if let Some(rest) = plain.strip_prefix(prefix) {
            // `Prompted` must be followed by a space (or nothing): `Promptedness` is not a verb.
            if rest.is_empty() || rest.starts_with(' ') || prefix.ends_with(':') {
                return Some(rest.trim().to_owned());
            }
        }
    }
    for suffix in PROMPT_SUFFIXES {
        if let Some(rest) = plain.trim_end().strip_suffix(suffix) {
            return Some(rest.trim().to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_in_several_languages() {
        assert_eq!(prompt_of("Prompted What is Rust?").as_deref(), Some("What is Rust?"));
        assert_eq!(prompt_of("Prompted ").as_deref(), Some(""));
        assert_eq!(prompt_of("Eingegebener Prompt: Hallo").as_deref(), Some("Hallo"));
        assert_eq!(prompt_of("Prompt\u{202f}: Bonjour").as_deref(), Some("Bonjour"));
        assert_eq!(prompt_of("Pokyn\u{a0}Ahoj").as_deref(), Some("Ahoj"));
        assert_eq!(prompt_of("送信したメッセージ: こんにちは").as_deref(), Some("こんにちは"));
        assert_eq!(prompt_of("날씨 알려줘 항목을 검색함").as_deref(), Some("날씨 알려줘"));
        assert_eq!(prompt_of("Gave feedback: Good response"), None);
        assert_eq!(prompt_of("Used Gemini Apps"), None);
    }
}
