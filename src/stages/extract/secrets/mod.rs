//! Finds secrets people paste into chats (API keys and tokens, private keys, passwords, card
//! and bank account numbers, one-time codes, identity numbers), so they are never extracted as
//! memories and can be masked in transcripts, and cleans the evidence quotes of memories:
//! secrets and contact details (e-mail, phone) masked with typed placeholders. Each finding is
//! a byte span with its kind.
//!
//! The parts, one shape each: [`tokens`] (secrets told by their own shape: provider prefixes,
//! JWTs, bearer tokens, AWS secret keys, private keys, passwords in URLs), [`named`] (a secret
//! after a word that names it in prose), [`assignments`] (`key=value`, `key: value` and
//! command-line flags whose name names a secret), [`numbers`] (card and bank account numbers),
//! [`named_numbers`] (identity and account numbers and card security codes after a word that
//! names them),
//! [`contacts`] (e-mail addresses and phone numbers, masked in quotes only); [`words`] and
//! [`predicates`] hold the word checks they share.

pub mod assignments;
pub mod contacts;
pub mod named;
pub mod named_numbers;
pub mod numbers;
pub mod predicates;
pub mod tokens;
pub mod words;

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::RegexSet;

/// What kind of secret a span holds; its name is the placeholder's (`[REDACTED:api_key]`, MIF's convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SecretKind {
    /// A provider API key or access token with a known prefix, a JSON Web Token, a bearer
    /// token, an AWS secret access key, or a token, secret or key given to a name that says so.
    ApiKey,
    /// A PEM private key block.
    PrivateKey,
    /// A password, passphrase, passcode or PIN given after a word, key or flag that names it,
    /// or inside a URL's user info.
    Password,
    /// A payment card number (13–19 digits written as cards are, that pass the Luhn check), or
    /// a card's security code after its name.
    CardNumber,
    /// An IBAN that passes its mod-97 check, or an account number or sort code after a word
    /// that names it.
    BankAccount,
    /// A one-time or verification code given after a word that names it.
    OneTimeCode,
    /// A social security, passport, identity card, tax or driving licence number given after a
    /// word that names it.
    IdNumber,
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
            SecretKind::IdNumber => "id_number",
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

/// The patterns every finder starts from, in one set: a text none of them matches holds no
/// secret. Nearly every text is such a text, and one pass of the set over it costs about what
/// one of the dozen finders' passes did.
static ANY_CUE: LazyLock<RegexSet> = LazyLock::new(|| {
    // From the patterns' text: a finder's own regexes are compiled only when a text has a cue.
    RegexSet::new(cues()).expect("the finders' patterns are valid")
});

/// Every finder's cue patterns, as text.
fn cues() -> Vec<&'static str> {
    [tokens::CUES, named::CUES, assignments::CUES, numbers::CUES, named_numbers::CUES].concat()
}

/// Every secret in `text`, in order of where they start; overlapping findings are merged into
/// the first one.
pub fn find(text: &str) -> Vec<Secret> {
    if !ANY_CUE.is_match(text) {
        return Vec::new();
    }
    let mut found = Vec::new();
    tokens::find(text, &mut found);
    named::find(text, &mut found);
    assignments::find(text, &mut found);
    numbers::find(text, &mut found);
    named_numbers::find(text, &mut found);
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
    let spans = secrets.iter().map(|secret| {
        counted(secret.kind);
        (secret.start, secret.end, secret.kind.as_str())
    });
    Some(masked(text, spans.collect()))
}

/// `text` with every secret replaced by its typed placeholder: what `--redact secrets` does to
/// a transcript. Borrowed (no allocation) when `text` holds no secret.
pub fn mask_secrets(text: &str) -> Cow<'_, str> {
    match redact_counting(text, |_| {}) {
        Some(redacted) => Cow::Owned(redacted),
        None => Cow::Borrowed(text),
    }
}

/// A memory's evidence quote fit to write: every secret ([`find`]) and every contact detail
/// ([`contacts::find`]: e-mail addresses, phone numbers) replaced by its typed placeholder
/// (`[REDACTED:password]`, `[REDACTED:email]`, `[REDACTED:phone]`). A quote carries the whole
/// sentence a fact was said in, and the rest of that sentence is no part of the memory.
/// Borrowed (no allocation) when there is nothing to mask.
///
/// The quotes of a memory that is itself a contact detail (written only under `--extract-pii
/// keep`, marked not for export) keep their contact details: use [`mask_secrets`] for those.
pub fn clean_quote(quote: &str) -> Cow<'_, str> {
    let mut spans: Vec<(usize, usize, &'static str)> =
        find(quote).iter().map(|secret| (secret.start, secret.end, secret.kind.as_str())).collect();
    spans.extend(contacts::find(quote).iter().map(|contact| (contact.start, contact.end, contact.kind.as_str())));
    if spans.is_empty() {
        return Cow::Borrowed(quote);
    }
    // Secrets come first where a contact detail overlaps one: their kind names the span.
    spans.sort_by_key(|(start, end, _)| (*start, std::cmp::Reverse(*end)));
    let mut merged: Vec<(usize, usize, &'static str)> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.0 < last.1 => last.1 = last.1.max(span.1),
            _ => merged.push(span),
        }
    }
    Cow::Owned(masked(quote, merged))
}

/// `text` with each span (sorted, apart, on character boundaries) replaced by
/// `[REDACTED:<name>]`.
fn masked(text: &str, spans: Vec<(usize, usize, &'static str)>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, name) in spans {
        // Spans come apart from `find`; one that overlaps an earlier one is part of it.
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str("[REDACTED:");
        out.push_str(name);
        out.push(']');
        at = end;
    }
    out.push_str(&text[at..]);
    out
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

    /// The shapes issue 32 found unmasked, each as one of a class.
    #[test]
    fn the_shapes_redaction_missed_are_masked() {
        for (text, expected) in [
            (
                "I'm a teacher and the wifi password at the office is Tr0ub4dor&3",
                "I'm a teacher and the wifi password at the office is [REDACTED:password]",
            ),
            (
                "aws_access_key_id = AKIAIOSFODNN7EXAMPLE, aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_access_key_id = [REDACTED:api_key], aws_secret_access_key = [REDACTED:api_key]",
            ),
            ("I run a shop, stripe key sk_live_51H8abcDEFghiJKLmnoPQR", "I run a shop, stripe key [REDACTED:api_key]"),
            ("my db is postgres://jo:Sup3rSecret@db.example.com/app", "my db is postgres://jo:[REDACTED:password]@db.example.com/app"),
            ("I deploy with deploy.sh --password hunter22 every day", "I deploy with deploy.sh --password [REDACTED:password] every day"),
        ] {
            assert_eq!(redact(text).0, expected, "{text}");
        }
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
            r#"{"total": 4111111111111111, "ratio": 0.4111111111111111, "id": 5500000000000004}"#,
            "I upgraded to version 4.1.1.1111111111111111 and 2.31.0",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 by jo",
            "the price is 1234567890123.45 and the uuid 123e4567-e89b-12d3-a456-426614174000",
            "max_tokens: 4096, temperature: 0.7",
        ] {
            assert!(kinds(text).is_empty(), "{text}: {:?}", find(text));
        }
    }

    #[test]
    fn redaction_puts_a_typed_placeholder_where_each_secret_was() {
        let (redacted, count) = redact("key sk-abcdefghijklmnopqrstuvwxyz and password: s3cr3t!!");
        assert_eq!(redacted, "key [REDACTED:api_key] and password: [REDACTED:password]");
        assert_eq!(count, 2);
        assert!(matches!(mask_secrets("I live in Leeds"), Cow::Borrowed(_)));
    }

    /// Guards the speed of `--redact secrets`: one Unicode word boundary among the cues made
    /// the whole set leave its DFA on any text with a non-ASCII byte (twice the CPU time of a
    /// redacting run).
    #[test]
    fn no_cue_has_a_unicode_word_boundary() {
        for cue in cues() {
            let pattern = cue.replace(r"(?-u:\b)", "");
            assert!(!pattern.contains(r"\b"), "{cue}");
        }
    }

    #[test]
    fn quotes_lose_their_secrets_and_contact_details() {
        assert_eq!(
            clean_quote("I'm a nurse in Leeds, mail me at jo@example.org or call +44 7700 900123."),
            "I'm a nurse in Leeds, mail me at [REDACTED:email] or call [REDACTED:phone]."
        );
        assert_eq!(clean_quote("I live in Lyon and my password is hunter22"), "I live in Lyon and my password is [REDACTED:password]");
        assert_eq!(clean_quote("my db: postgres://jo:pa55@db.example.com"), "my db: postgres://jo:[REDACTED:password]@db.example.com");
        assert!(matches!(clean_quote("I live in Leeds."), Cow::Borrowed(_)), "nothing to mask, nothing allocated");
        assert_eq!(
            mask_secrets("mail jo@example.org, password hunter22"),
            "mail jo@example.org, password [REDACTED:password]",
            "transcripts keep contact details, not passwords, even without a verb"
        );
    }
}
