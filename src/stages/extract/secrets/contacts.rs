//! Contact details in a sentence: e-mail addresses and phone numbers, which evidence quotes
//! mask as `[REDACTED:email]` and `[REDACTED:phone]` unless the memory is itself the contact
//! detail kept under `--extract-pii keep`. A phone number is told by a leading `+` (8–15
//! digits), by the North American 3-3-4 shape or the French one in pairs, or by its shape
//! beside a word that names a phone in one of the five languages ("call me on 07700 900123",
//! "Handy 0171 1234567").
//! Transcripts keep contact details: they are the user's own words, not secrets.

use std::sync::LazyLock;

use regex::Regex;

/// What kind of contact detail a span holds; its name is the placeholder's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactKind {
    /// An e-mail address.
    Email,
    /// A phone number.
    Phone,
}

impl ContactKind {
    /// The name in placeholders.
    pub fn as_str(self) -> &'static str {
        match self {
            ContactKind::Email => "email",
            ContactKind::Phone => "phone",
        }
    }
}

/// One contact detail found: its kind and where it is (byte offsets into the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contact {
    /// What it is.
    pub kind: ContactKind,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[a-z0-9][a-z0-9._%+\-]*@[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?)*\.[a-z]{2,24}\b")
        .expect("a valid e-mail pattern")
});

/// A `+` and an international number.
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static INTERNATIONAL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\+[1-9][0-9 \-.()/]{6,22}[0-9]").expect("a valid phone pattern"));

/// The North American shape: `(555) 123-4567`, `555-123-4567`, `555.123.4567`.
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static NORTH_AMERICAN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\([2-9][0-9]{2}\) ?[0-9]{3}[\-.][0-9]{4}|\b[2-9][0-9]{2}-[0-9]{3}-[0-9]{4}|\b[2-9][0-9]{2}\.[0-9]{3}\.[0-9]{4}")
        .expect("a valid phone pattern")
});

/// The French national shape: ten digits from a leading 0, written in pairs (`04 50 55 12 98`,
/// `06.12.34.56.78`): no date, amount or version is written so.
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static FRENCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b0[1-9](?: [0-9]{2}){4}|\b0[1-9](?:\.[0-9]{2}){4}|\b0[1-9](?:-[0-9]{2}){4}").expect("a valid phone pattern")
});

/// Any phone-like run of digits and separators, taken only beside a [`PHONE_WORD`].
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static PHONE_SHAPE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\(?[0-9][0-9 \-.()/]{5,18}[0-9]").expect("a valid phone pattern"));

/// Words that say a number is a phone's, in the five languages.
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static PHONE_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:phone|telephone|tel|mobile|cell|cellphone|call|text me|sms|whatsapp|signal|fax|reach me|ring me|number|",
        r"telefon\w*|handy\w*|nummer|ruf\w*|anruf\w*|erreichbar|festnetz\w*|mobilnummer|",
        r"téléphone|portable|numéro|appel\w*|joindre|",
        r"teléfono|telefono|móvil|movil|celular|número|llám\w*|llama\w*|",
        r"číslo|mobil|zavolej\w*|volej\w*)\b"
    ))
    .expect("a valid phone-word pattern")
});

/// Every contact detail in `text`, in order of where they start, none overlapping.
pub fn find(text: &str) -> Vec<Contact> {
    let mut found = Vec::new();
    if text.contains('@') {
        for hit in EMAIL.find_iter(text) {
            if is_an_address(text, hit.start(), hit.end()) {
                found.push(Contact { kind: ContactKind::Email, start: hit.start(), end: hit.end() });
            }
        }
    }
    // Every phone shape holds a digit: most clauses have none, and are not searched three
    // more times.
    if !text.bytes().any(|byte| byte.is_ascii_digit()) {
        return found;
    }
    let mut phone = |start: usize, end: usize| found.push(Contact { kind: ContactKind::Phone, start, end });
    for hit in INTERNATIONAL.find_iter(text) {
        let digits = hit.as_str().bytes().filter(u8::is_ascii_digit).count();
        if (8..=15).contains(&digits) && digit_run_ends(text, hit.start(), hit.end()) {
            phone(hit.start(), hit.end());
        }
    }
    for hit in NORTH_AMERICAN.find_iter(text).chain(FRENCH.find_iter(text)) {
        if digit_run_ends(text, hit.start(), hit.end()) {
            phone(hit.start(), hit.end());
        }
    }
    if PHONE_WORD.is_match(text) {
        for hit in PHONE_SHAPE.find_iter(text) {
            if looks_like_a_phone_number(hit.as_str()) && digit_run_ends(text, hit.start(), hit.end()) {
                phone(hit.start(), hit.end());
            }
        }
    }
    found.sort_by_key(|contact| (contact.start, std::cmp::Reverse(contact.end)));
    let mut merged: Vec<Contact> = Vec::with_capacity(found.len());
    for contact in found {
        match merged.last_mut() {
            Some(last) if contact.start < last.end => last.end = last.end.max(contact.end),
            _ => merged.push(contact),
        }
    }
    merged
}

/// Whether an e-mail-shaped match is a person's address rather than a URL's user info
/// (`https://jo@host`, `user:pass@host`, whose password is a secret of its own) or an SSH
/// remote (`git@github.com:org/repo`).
fn is_an_address(text: &str, start: usize, end: usize) -> bool {
    let before = &text[..start];
    let in_url = before.ends_with('/') || (before.ends_with(':') && !before.to_ascii_lowercase().ends_with("mailto:"));
    let ssh_remote = text[end..].starts_with(':') && text[end..].chars().nth(1).is_some_and(|c| !c.is_whitespace());
    !in_url && !ssh_remote
}

/// Whether a number ends where its digits do: no digit, letter, or decimal part touches it.
fn digit_run_ends(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    let after_that = text[end..].chars().nth(1);
    let touches = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let glued_before = matches!(before, Some('.' | ',' | '-' | '/'));
    let decimal_after = matches!(after, Some('.' | ',' | '-' | '/')) && after_that.is_some_and(|c| c.is_ascii_digit());
    !(touches(before) || touches(after) || glued_before || decimal_after)
}

/// Whether a digit run beside a phone word is shaped like a phone number: 7–13 digits, and not
/// a date (`2024-05-07`, `07.05.2024`), an IP address, years (`2010 - 2015`), or a decimal.
fn looks_like_a_phone_number(candidate: &str) -> bool {
    let digits = candidate.bytes().filter(u8::is_ascii_digit).count();
    if !(7..=13).contains(&digits) {
        return false;
    }
    let groups: Vec<&str> = candidate.split(|c: char| !c.is_ascii_digit()).filter(|group| !group.is_empty()).collect();
    let separators: String = candidate.chars().filter(|c| !c.is_ascii_digit()).collect();
    let dotted_only = !separators.is_empty() && separators.chars().all(|c| c == '.');
    let date = groups.len() == 3 && (groups[0].len() == 4 || groups[2].len() == 4) && groups.iter().all(|group| group.len() <= 4);
    let ip_address = dotted_only && groups.len() == 4 && groups.iter().all(|group| group.len() <= 3);
    let decimal = groups.len() == 2 && matches!(separators.as_str(), "." | ",");
    let years = groups.iter().all(|group| group.len() == 4 && (group.starts_with("19") || group.starts_with("20")));
    !(date || ip_address || decimal || years)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(&str, ContactKind)> {
        find(text).into_iter().map(|contact| (&text[contact.start..contact.end], contact.kind)).collect()
    }

    #[test]
    fn addresses_and_numbers_are_found() {
        use ContactKind::{Email, Phone};
        for (text, expected) in [
            ("I'm a nurse, mail me at jo.smith+work@example.co.uk.", vec![("jo.smith+work@example.co.uk", Email)]),
            ("write to mailto:jo@example.org", vec![("jo@example.org", Email)]),
            ("I live in Leeds, my number is +44 7700 900123", vec![("+44 7700 900123", Phone)]),
            ("I work at Acme, (555) 123-4567 is my desk", vec![("(555) 123-4567", Phone)]),
            ("I teach math, 555-234-5678", vec![("555-234-5678", Phone)]),
            ("call me on 07700 900123, I'm a plumber", vec![("07700 900123", Phone)]),
            ("mein Handy ist 0171 1234567", vec![("0171 1234567", Phone)]),
            ("Meine Handynummer ist 0151 2298770, ich bin Dachdecker", vec![("0151 2298770", Phone)]),
            ("moje číslo je 603 123 456", vec![("603 123 456", Phone)]),
            // The French pairs need no word naming a phone.
            ("Je suis kiné à Annecy, prise de rdv au 04 50 55 12 98", vec![("04 50 55 12 98", Phone)]),
            ("dispo au 06.12.34.56.78 le soir", vec![("06.12.34.56.78", Phone)]),
        ] {
            assert_eq!(found(text), expected, "{text}");
        }
    }

    #[test]
    fn numbers_and_addresses_that_are_something_else_are_left() {
        for text in [
            "I moved here on 2024-05-07",
            "my phone was bought on 07.05.2024",
            "the server at 192.168.100.200 is mine",
            "version 1.2.3 of the app",
            "I paid 1234.56 for the phone",
            "clone git@github.com:org/repo.git",
            "https://jo@example.com/path",
            "I have 3 kids and 2 cats",
            "the build 20240507 finished",
            "order 123456789 shipped",
            "I was a nurse from 2010 - 2015, call it a phase",
        ] {
            assert!(found(text).is_empty(), "{text}: {:?}", found(text));
        }
    }

    #[test]
    fn a_clause_without_digits_still_gives_its_addresses_and_no_phone() {
        use ContactKind::Email;
        assert_eq!(
            found("call me or text me, jo@example.org or ann@example.com"),
            vec![("jo@example.org", Email), ("ann@example.com", Email)]
        );
        assert!(found("my phone number is on the card, ring me").is_empty());
    }
}
