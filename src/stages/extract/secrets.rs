//! Finds secrets people paste into chats (API keys and tokens, private keys, passwords, card
//! and bank account numbers, one-time codes), so they are never extracted as memories and can be
//! masked in transcripts. Each finding is a byte span with its kind.

use std::sync::LazyLock;

use regex::Regex;

/// What kind of secret a span holds; its name is the placeholder's (`[REDACTED:api_key]`, MIF's convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SecretKind {
    /// A provider API key or access token with a known prefix, or a JSON Web Token.
    ApiKey,
    /// A PEM private key block.
    PrivateKey,
    /// A password or passphrase given after a word that names it.
    Password,
    /// A payment card number (13–19 digits that pass the Luhn check).
    CardNumber,
    /// An IBAN that passes its mod-97 check.
    BankAccount,
    /// A one-time or verification code given after a word that names it.
    OneTimeCode,
}

impl SecretKind {
    /// The name in placeholders and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::ApiKey => "api_key",
            SecretKind::PrivateKey => "private_key",
            SecretKind::Password => "password",
            SecretKind::CardNumber => "card_number",
            SecretKind::BankAccount => "bank_account",
            SecretKind::OneTimeCode => "one_time_code",
        }
    }
}

/// One secret found: its kind and where it is (byte offsets into the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// What it is.
    pub kind: SecretKind,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

#[expect(clippy::expect_used, reason = "the patterns are literals, checked by the tests")]
static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\b(?:",
        r"sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}",
        r"|gh[pousr]_[A-Za-z0-9]{30,}",
        r"|github_pat_[A-Za-z0-9_]{30,}",
        r"|AKIA[0-9A-Z]{16}",
        r"|AIza[0-9A-Za-z_\-]{35}",
        r"|xox[abposr]-[A-Za-z0-9\-]{10,}",
        r"|glpat-[A-Za-z0-9_\-]{20,}",
        r"|eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
        r")"
    ))
    .expect("a valid token pattern")
});

#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static PRIVATE_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z]+ )?PRIVATE KEY-----|\z)").expect("a valid key pattern")
});

/// A word naming a password or a secret token in one of the five languages, then `is` (or
/// `:`/`=`) and the value: one run of non-space characters ([`looks_like_a_secret_value`]
/// decides).
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static NAMED_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:password|passphrase|passwd|pwd|pin|api[ _-]?key|secret|token|passwort|kennwort|geheimzahl|",
        r"mot de passe|mdp|code secret|contraseña|clave|heslo)",
        r"(?:\s+(?:is|ist|est|es|je|lautet|was|war)\s+|\s*[:=]\s*)[\x22'`]?(?P<value>[^\s\x22'`]{4,})"
    ))
    .expect("a valid named-secret pattern")
});

/// A word naming a one-time code, then the code (4–8 digits).
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static ONE_TIME_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:otp|2fa|one[- ]time (?:code|password)|verification code|security code|login code|",
        r"bestätigungscode|einmalcode|code de vérification|código de verificación|ověřovací kód)",
        r"(?:\s+(?:is|ist|est|es|je|lautet))?\s*[:=]?\s*(?P<value>[0-9]{4,8})\b"
    ))
    .expect("a valid code pattern")
});

/// Card-number shapes: four groups of four digits or American Express's 4-6-5 split by spaces
/// or dashes, or 13–19 digits in one run (ASCII digits only: other scripts' digits are no card).
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static DIGIT_RUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:[0-9]{4}[ \-]){3}[0-9]{4}\b|\b[0-9]{4}[ \-][0-9]{6}[ \-][0-9]{5}\b|\b[0-9]{13,19}\b")
        .expect("a valid digit-run pattern")
});

#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static IBAN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b").expect("a valid IBAN pattern"));

/// Every secret in `text`, in order of where they start; overlapping findings are merged into
/// the first one.
pub fn find(text: &str) -> Vec<Secret> {
    let mut found = Vec::new();
    let mut push = |kind, start, end| found.push(Secret { kind, start, end });
    for hit in TOKENS.find_iter(text) {
        push(SecretKind::ApiKey, hit.start(), hit.end());
    }
    for hit in PRIVATE_KEY.find_iter(text) {
        push(SecretKind::PrivateKey, hit.start(), hit.end());
    }
    for captures in NAMED_SECRET.captures_iter(text) {
        if let Some(value) = captures.name("value").filter(|value| looks_like_a_secret_value(value.as_str())) {
            push(SecretKind::Password, value.start(), value.end());
        }
    }
    for captures in ONE_TIME_CODE.captures_iter(text) {
        if let Some(value) = captures.name("value") {
            push(SecretKind::OneTimeCode, value.start(), value.end());
        }
    }
    // The digits of an IBAN-shaped text are an account number or nothing, never a card.
    let iban_shaped: Vec<(usize, usize)> = IBAN.find_iter(text).map(|hit| (hit.start(), hit.end())).collect();
    for hit in DIGIT_RUN.find_iter(text) {
        let inside_iban = iban_shaped.iter().any(|(start, end)| hit.start() < *end && *start < hit.end());
        let digits: Vec<u32> = hit.as_str().chars().filter_map(|c| c.to_digit(10)).collect();
        if !inside_iban && passes_luhn(&digits) {
            push(SecretKind::CardNumber, hit.start(), hit.end());
        }
    }
    for hit in IBAN.find_iter(text) {
        if passes_iban_check(hit.as_str()) {
            push(SecretKind::BankAccount, hit.start(), hit.end());
        }
    }
    found.sort_by_key(|secret| (secret.start, std::cmp::Reverse(secret.end)));
    let mut merged: Vec<Secret> = Vec::with_capacity(found.len());
    for secret in found {
        match merged.last_mut() {
            Some(last) if secret.start < last.end => last.end = last.end.max(secret.end),
            _ => merged.push(secret),
        }
    }
    merged
}

/// Whether `text` holds any secret.
pub fn contains_secret(text: &str) -> bool {
    !find(text).is_empty()
}

/// `text` with every secret replaced by a typed placeholder (`[REDACTED:password]`, the form
/// MIF's privacy convention uses), and how many were replaced.
pub fn redact(text: &str) -> (String, usize) {
    let mut replaced = 0;
    match redact_counting(text, |_| replaced += 1) {
        Some(redacted) => (redacted, replaced),
        None => (text.to_owned(), 0),
    }
}

/// `text` with every secret replaced by its placeholder, calling `counted` with each secret's
/// kind; `None` (and no allocation) when `text` holds no secret.
pub fn redact_counting(text: &str, mut counted: impl FnMut(SecretKind)) -> Option<String> {
    let secrets = find(text);
    if secrets.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for secret in &secrets {
        // Overlapping finds (a token inside a named password) are one secret.
        if secret.start < at {
            continue;
        }
        out.push_str(&text[at..secret.start]);
        out.push_str("[REDACTED:");
        out.push_str(secret.kind.as_str());
        out.push(']');
        at = secret.end;
        counted(secret.kind);
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// Whether a value named as a password or token looks like one rather than a word ("the token
/// is valid"): it has a digit or a symbol, or is long.
fn looks_like_a_secret_value(value: &str) -> bool {
    let value = value.trim_end_matches(['.', ',', ';', ')', '!', '?', '"', '\'']);
    value.chars().count() >= 4 && (value.chars().any(|c| !c.is_alphabetic()) || value.chars().count() >= 12)
}

/// The Luhn check of a card number's digits.
fn passes_luhn(digits: &[u32]) -> bool {
    if !(13..=19).contains(&digits.len()) || digits.iter().all(|digit| *digit == digits[0]) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(position, digit)| if position % 2 == 1 { if digit * 2 > 9 { digit * 2 - 9 } else { digit * 2 } } else { *digit })
        .sum();
    sum.is_multiple_of(10)
}

/// The ISO 13616 check of an IBAN: the first four characters moved to the end, letters as
/// numbers (A = 10), the whole number mod 97 is 1.
fn passes_iban_check(text: &str) -> bool {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    // Byte 4 must be a character boundary, and only ASCII letters and digits carry values.
    if !compact.is_ascii() || !(15..=34).contains(&compact.len()) {
        return false;
    }
    let rearranged = compact[4..].chars().chain(compact[..4].chars());
    let mut remainder = 0u32;
    for character in rearranged {
        let value = match character.to_digit(36) {
            Some(value) => value,
            None => return false,
        };
        remainder = if value >= 10 { (remainder * 100 + value) % 97 } else { (remainder * 10 + value) % 97 };
    }
    remainder == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<SecretKind> {
        find(text).into_iter().map(|secret| secret.kind).collect()
    }

    #[test]
    fn provider_tokens_and_private_keys_are_found() {
        assert_eq!(kinds("my key is sk-proj-abcdefghijklmnopqrstuvwx1234"), [SecretKind::ApiKey]);
        assert_eq!(kinds("use ghp_abcdefghijklmnopqrstuvwxyz0123456789 here"), [SecretKind::ApiKey]);
        assert_eq!(kinds("AKIAABCDEFGHIJKLMNOP"), [SecretKind::ApiKey]);
        assert_eq!(kinds("-----BEGIN PRIVATE KEY-----\nMC4CAQ\n-----END PRIVATE KEY-----"), [SecretKind::PrivateKey]);
    }

    #[test]
    fn passwords_and_codes_are_found_in_every_language() {
        for text in [
            "my password is hunter22",
            "Mein Passwort ist Sommer2024!",
            "mon mot de passe est soleil123",
            "mi contraseña es gato1234",
            "moje heslo je kocka123",
        ] {
            assert_eq!(kinds(text), [SecretKind::Password], "{text}");
        }
        assert_eq!(kinds("the verification code is 482913"), [SecretKind::OneTimeCode]);
        assert_eq!(kinds("Der Bestätigungscode lautet 5521"), [SecretKind::OneTimeCode]);
    }

    #[test]
    fn card_and_account_numbers_need_their_checksums() {
        assert_eq!(kinds("card 4111 1111 1111 1111 exp 12/29"), [SecretKind::CardNumber]);
        assert_eq!(kinds("4111 1111 1111 1111 123"), [SecretKind::CardNumber], "a CVV after the number");
        assert_eq!(kinds("amex 3782 822463 10005"), [SecretKind::CardNumber]);
        assert!(kinds("account GB１２ ABCD EFGH IJKL MNOP").is_empty(), "full-width digits neither panic nor match");
        assert!(kinds("order 4111 1111 1111 1112").is_empty(), "fails Luhn");
        assert_eq!(kinds("IBAN DE89 3704 0044 0532 0130 00"), [SecretKind::BankAccount]);
        assert!(kinds("DE89 3704 0044 0532 0130 01").is_empty(), "fails mod 97");
    }

    #[test]
    fn ordinary_text_has_no_secrets() {
        for text in [
            "I live in Leeds and work as a nurse",
            "my password manager is great",
            "the token is valid",
            "the token is expired!",
            "my password is wrong?",
            "the token economy",
            "call me at 10",
            "error code 4040 again",
        ] {
            assert!(kinds(text).is_empty(), "{text}: {:?}", find(text));
        }
    }

    #[test]
    fn redaction_puts_a_typed_placeholder_where_each_secret_was() {
        let (redacted, count) = redact("key sk-abcdefghijklmnopqrstuvwxyz and password: s3cr3t!!");
        assert_eq!(redacted, "key [REDACTED:api_key] and password: [REDACTED:password]");
        assert_eq!(count, 2);
    }
}
