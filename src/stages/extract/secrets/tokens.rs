//! Secrets told by their own shape, wherever they stand: provider keys and tokens with a known
//! prefix (OpenAI, Anthropic, Stripe, GitHub, GitLab, Slack, AWS, Google, Hugging Face, npm,
//! PyPI, SendGrid, Shopify, DigitalOcean, Square), JSON Web Tokens, bearer tokens, an AWS secret
//! access key beside its key id or the word "aws", PEM private key blocks, and passwords inside
//! a URL's user info (`scheme://user:pass@host`, any scheme).

use std::sync::LazyLock;

use regex::Regex;

use super::{Secret, SecretKind};

/// Provider key prefixes and their bodies.
const PREFIXED_PATTERN: &str = concat!(
    r"(?-u:\b)(?:",
    r"sk-(?:ant-|proj-|svcacct-)?[A-Za-z0-9_\-]{20,}",
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}",
    r"|whsec_[A-Za-z0-9]{20,}",
    r"|gh[pousr]_[A-Za-z0-9]{30,}",
    r"|github_pat_[A-Za-z0-9_]{30,}",
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}",
    r"|AIza[0-9A-Za-z_\-]{35}",
    r"|ya29\.[0-9A-Za-z_\-]{20,}",
    r"|GOCSPX-[0-9A-Za-z_\-]{20,}",
    r"|xox[abposre]-[A-Za-z0-9\-]{10,}",
    r"|xapp-[A-Za-z0-9\-]{10,}",
    r"|glpat-[A-Za-z0-9_\-]{20,}",
    r"|hf_[A-Za-z0-9]{30,}",
    r"|npm_[A-Za-z0-9]{36}",
    r"|pypi-[A-Za-z0-9_\-]{50,}",
    r"|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
    r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
    r"|dop_v1_[a-f0-9]{64}",
    r"|sq0(?:atp|csp)-[A-Za-z0-9_\-]{20,}",
    r"|eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
    r")"
);
#[expect(clippy::expect_used, reason = "the patterns are literals, checked by the tests")]
static PREFIXED: LazyLock<Regex> = LazyLock::new(|| Regex::new(PREFIXED_PATTERN).expect("a valid token pattern"));

/// A bearer or token credential in an `Authorization` header or a command.
const BEARER_PATTERN: &str = r"(?-u:\b)(?:Bearer|bearer|BEARER)\s+(?P<value>[A-Za-z0-9\-._~+/]{16,}=*)";
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static BEARER: LazyLock<Regex> = LazyLock::new(|| Regex::new(BEARER_PATTERN).expect("a valid bearer pattern"));

/// A run of base64 characters: 40 of them are an AWS secret access key's shape.
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static BASE64_RUN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-z0-9/+]{40,}").expect("a valid base64 pattern"));

/// What tells that a 40-character run is AWS's: a key id or the word, shortly before it.
const AWS_CUE_PATTERN: &str = r"(?-u:\b)(?i:aws)|(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)";
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static AWS_CUE: LazyLock<Regex> = LazyLock::new(|| Regex::new(AWS_CUE_PATTERN).expect("a valid cue pattern"));

/// How far before a 40-character run its AWS cue may stand, in bytes.
const AWS_CUE_REACH: usize = 120;

/// A PEM private key block: its header, then its body (base64 or the headers of an encrypted
/// key), up to its footer or the end of the text. A header alone (code that looks for one) is
/// no key.
const PRIVATE_KEY_PATTERN: &str =
    r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----\s+[A-Za-z0-9+/][\s\S]*?(?:-----END (?:[A-Z]+ )?PRIVATE KEY-----|\z)";
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static PRIVATE_KEY: LazyLock<Regex> = LazyLock::new(|| Regex::new(PRIVATE_KEY_PATTERN).expect("a valid key pattern"));

/// A URL's scheme and authority (up to the path, query or fragment).
const URL_AUTHORITY_PATTERN: &str = r"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://(?P<authority>[^\s/?#\x22'<>`]+)";
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static URL_AUTHORITY: LazyLock<Regex> = LazyLock::new(|| Regex::new(URL_AUTHORITY_PATTERN).expect("a valid URL pattern"));

/// The patterns this module's finders start from: no match of any, no secret of theirs.
pub(super) const CUES: &[&str] = &[PREFIXED_PATTERN, BEARER_PATTERN, AWS_CUE_PATTERN, PRIVATE_KEY_PATTERN, URL_AUTHORITY_PATTERN];

/// Pushes the secrets told by their shape in `text`.
pub fn find(text: &str, found: &mut Vec<Secret>) {
    for hit in PREFIXED.find_iter(text) {
        found.push(Secret { kind: SecretKind::ApiKey, start: hit.start(), end: hit.end() });
    }
    for captures in BEARER.captures_iter(text) {
        if let Some(value) = captures.name("value") {
            found.push(Secret { kind: SecretKind::ApiKey, start: value.start(), end: value.end() });
        }
    }
    find_aws_secret_keys(text, found);
    for hit in PRIVATE_KEY.find_iter(text) {
        found.push(Secret { kind: SecretKind::PrivateKey, start: hit.start(), end: hit.end() });
    }
    find_url_passwords(text, found);
}

/// AWS secret access keys: exactly 40 base64 characters with upper and lower case and a digit
/// or symbol, with an AWS key id or the word "aws" at most [`AWS_CUE_REACH`] bytes before. A
/// Git commit id (40 hex digits in one case) has no such mix.
fn find_aws_secret_keys(text: &str, found: &mut Vec<Secret>) {
    let cues: Vec<usize> = AWS_CUE.find_iter(text).map(|hit| hit.start()).collect();
    if cues.is_empty() {
        return;
    }
    for hit in BASE64_RUN.find_iter(text) {
        let value = hit.as_str();
        let bounded = !text[hit.end()..].starts_with('=') && !text[..hit.start()].ends_with(|c: char| c.is_ascii_alphanumeric());
        let mixed = value.bytes().any(|b| b.is_ascii_uppercase())
            && value.bytes().any(|b| b.is_ascii_lowercase())
            && value.bytes().any(|b| b.is_ascii_digit() || b == b'/' || b == b'+');
        let cued = cues.iter().any(|&cue| cue < hit.start() && hit.start() - cue <= AWS_CUE_REACH);
        if value.len() == 40 && bounded && mixed && cued {
            found.push(Secret { kind: SecretKind::ApiKey, start: hit.start(), end: hit.end() });
        }
    }
}

/// The password in a URL's user info (`postgres://app:PASS@db:5432`, `https://user:PASS@host`),
/// whatever the scheme; the user name stays. The user info ends at the authority's last `@`, so
/// an unescaped `@` inside the password is masked with it. A template (`${DB_PASS}`,
/// `<password>`) or a mask (`***`) is left.
fn find_url_passwords(text: &str, found: &mut Vec<Secret>) {
    for captures in URL_AUTHORITY.captures_iter(text) {
        let Some(authority) = captures.name("authority") else { continue };
        let Some(at) = authority.as_str().rfind('@') else { continue };
        let user_info = &authority.as_str()[..at];
        let Some(colon) = user_info.find(':') else { continue };
        let password = &user_info[colon + 1..];
        let template = password.starts_with(['$', '{', '<', '%']) || password.chars().all(|c| c == '*' || c == 'x' || c == 'X');
        if password.is_empty() || template {
            continue;
        }
        let start = authority.start() + colon + 1;
        found.push(Secret { kind: SecretKind::Password, start, end: start + password.len() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> Vec<(&str, SecretKind)> {
        let mut found = Vec::new();
        find(text, &mut found);
        found.iter().map(|secret| (&text[secret.start..secret.end], secret.kind)).collect()
    }

    #[test]
    fn provider_prefixes_are_found() {
        for key in [
            "sk_live_51H8abcDEFghiJKLmnoPQR",
            "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
            "rk_live_51H8abcDEFghiJKLmnoPQR",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "xoxb-1234567890-abcdefghij",
            "sk-proj-abcdefghijklmnopqrstuvwx1234",
            "hf_abcdefghijklmnopqrstuvwxyz0123456789",
            "glpat-abcdefghij0123456789",
            "AKIAIOSFODNN7EXAMPLE",
        ] {
            assert_eq!(masked(&format!("my key is {key}, thanks")), [(key, SecretKind::ApiKey)], "{key}");
        }
        assert_eq!(masked("Authorization: Bearer abcdef0123456789abcdef"), [("abcdef0123456789abcdef", SecretKind::ApiKey)]);
        assert!(masked("if text.starts_with(\"-----BEGIN PRIVATE KEY-----\") { parse(text) }").is_empty(), "a header alone");
    }

    #[test]
    fn an_aws_secret_key_is_found_beside_its_key_id_or_the_word_aws() {
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let beside_id = format!("AKIAIOSFODNN7EXAMPLE {secret}");
        assert_eq!(masked(&beside_id), [("AKIAIOSFODNN7EXAMPLE", SecretKind::ApiKey), (secret, SecretKind::ApiKey)]);
        assert_eq!(masked(&format!("my aws creds: {secret}")), [(secret, SecretKind::ApiKey)]);
        assert!(masked(&format!("a commit: {}", "0123456789abcdef0123456789abcdef01234567")).is_empty());
        assert!(masked(&format!("no cloud here: {secret}")).is_empty(), "without a cue a 40-character run is left");
        assert!(masked("aws commit 0123456789abcdef0123456789abcdef01234567 landed").is_empty(), "a commit id mixes no case");
    }

    #[test]
    fn url_passwords_are_found_in_any_scheme() {
        for (url, password) in [
            ("postgres://app:Sup3rSecret@db.internal:5432/app", "Sup3rSecret"),
            ("mongodb+srv://jo:pa55word@cluster0.example.net", "pa55word"),
            ("https://user:hunter2@example.com/path", "hunter2"),
            ("redis://:redispass@cache:6379", "redispass"),
            ("ftp://jo:p@ss@files.example.com", "p@ss"),
        ] {
            assert_eq!(masked(url), [(password, SecretKind::Password)], "{url}");
        }
        for url in ["https://example.com/a:b@c", "postgres://app:${DB_PASS}@db/app", "https://jo@example.com", "mysql://root:***@db"] {
            assert!(masked(url).is_empty(), "{url}: {:?}", masked(url));
        }
    }
}
