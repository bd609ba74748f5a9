//! Secrets given to a name in code, configs and commands: `key=value`, `key: value`,
//! `"key": "value"`, `key => value` whose key names a secret (`DB_PASSWORD=…`,
//! `aws_secret_access_key = …`, `"api_key": "…"`, `client_secret: …`), and command-line flags
//! that take one (`--password X`, `--token=X`, `--api-key X`, `-storepass X`), plus the password
//! glued to MySQL's `-p` and given to `sshpass -p`. Which keys name a secret and which values
//! are references is [`super::words`]'s.

use std::sync::LazyLock;

use regex::Regex;

use super::named::kind_of;
use super::predicates::is_a_predicate;
use super::words::{Family, family_of, is_a_reference};
use super::{Secret, SecretKind};

/// A key (an identifier that holds a secret's name somewhere: checked in [`find`]), an
/// optional closing quote, the assignment, and the value, quoted or bare.
const ASSIGNMENT_PATTERN: &str = concat!(
    r"(?i)(?P<key>[\w.\-]*(?:pass|pwd|token|secret|key|pin|heslo|kennwort|contraseña|clave|mdp|credentials)[\w.\-]*)",
    r"(?P<closing>[\x22'\]]{0,2})[ \t]*(?P<assign>=>|:=|=|:)[ \t]*",
    r"(?:\x22(?P<double>[^\x22\n]{1,200})\x22|'(?P<single>[^'\n]{1,200})'|`(?P<tick>[^`\n]{1,200})`|(?P<bare>[^\s\x22'`,;)}\]]+))"
);
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| Regex::new(ASSIGNMENT_PATTERN).expect("a valid assignment pattern"));

/// A flag that holds a secret's name (checked in [`find`]) and its value, after `=` or
/// spaces.
const FLAG_PATTERN: &str = concat!(
    r"(?i)(?:^|[\s\x22'`(])--?(?P<flag>[\w\-]*(?:pass|pwd|token|secret|key|pin|credentials)[\w\-]*)(?:=|[ \t]+)",
    r"(?:\x22(?P<double>[^\x22\n]{1,200})\x22|'(?P<single>[^'\n]{1,200})'|(?P<bare>[^\s\x22'`]+))"
);
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static FLAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(FLAG_PATTERN).expect("a valid flag pattern"));

/// MySQL's password glued to `-p` (`mysql -u root -pS3cret`) and `sshpass -p X`.
const GLUED_PATTERN: &str = r"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)(?-u:\b)[^\n]*?\s-p(?P<glued>[^\s\x22'`]+)|(?-u:\b)sshpass\s+-p\s*(?P<given>[^\s\x22'`]+)";
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static GLUED: LazyLock<Regex> = LazyLock::new(|| Regex::new(GLUED_PATTERN).expect("a valid glued-password pattern"));

/// The patterns this module's finders start from: no match of any, no secret of theirs.
pub(super) const CUES: &[&str] = &[ASSIGNMENT_PATTERN, FLAG_PATTERN, GLUED_PATTERN];

/// Pushes the secrets given to a name in `text`.
pub fn find(text: &str, found: &mut Vec<Secret>) {
    for captures in ASSIGNMENT.captures_iter(text) {
        let Some(key) = captures.name("key") else { continue };
        let Some(family) = family_of(key.as_str()) else { continue };
        if is_a_heading(key.as_str(), &captures) {
            continue;
        }
        push_value(&captures, family, found);
    }
    for captures in FLAG.captures_iter(text) {
        let Some(flag) = captures.name("flag") else { continue };
        let Some(family) = family_of(flag.as_str()) else { continue };
        push_value(&captures, family, found);
    }
    for captures in GLUED.captures_iter(text) {
        if let Some(value) = captures.name("glued").or_else(|| captures.name("given"))
            && !is_a_reference(value.as_str())
        {
            found.push(Secret { kind: SecretKind::Password, start: value.start(), end: value.end() });
        }
    }
}

/// Whether a short name followed by a colon is a word of prose rather than a key ("in one
/// pass: runs of text", "Pin: the map"): `pass`, `pin`, `pw`, `pwd`, `mdp` and `clave` are keys
/// when written in capitals, quoted, or given with `=`; prose names a PIN in [`super::named`].
fn is_a_heading(key: &str, captures: &regex::Captures<'_>) -> bool {
    let short = ["pass", "pin", "pw", "pwd", "mdp", "clave"].contains(&key.to_lowercase().as_str());
    let colon = captures.name("assign").is_some_and(|assign| assign.as_str() == ":");
    let quoted = captures.name("closing").is_some_and(|closing| !closing.as_str().is_empty());
    let capitals = key.chars().all(|c| c.is_ascii_uppercase());
    short && colon && !quoted && !capitals
}

/// Pushes the value of an assignment or flag when it is a secret: no reference to one, no word
/// said about one, and long enough (four characters for a password or PIN, eight for a token).
fn push_value(captures: &regex::Captures<'_>, family: Family, found: &mut Vec<Secret>) {
    let quoted = captures.name("double").or_else(|| captures.name("single")).or_else(|| captures.name("tick"));
    let Some(value) = quoted.or_else(|| captures.name("bare")) else { return };
    // A bare value may end a sentence: its closing punctuation is no part of it.
    let text = if quoted.is_some() { value.as_str() } else { value.as_str().trim_end_matches(['.', ',', ';', ':', '?']) };
    let shortest = match family {
        Family::Password => 4,
        Family::Token => 8,
    };
    if text.chars().count() < shortest || is_a_reference(text) || is_a_predicate(text) || text.starts_with('-') {
        return;
    }
    found.push(Secret { kind: kind_of(family), start: value.start(), end: value.start() + text.len() });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> Vec<&str> {
        let mut found = Vec::new();
        find(text, &mut found);
        // A flag given with `=` is also an assignment: the module root merges the two.
        let mut values: Vec<&str> = found.iter().map(|secret| &text[secret.start..secret.end]).collect();
        values.dedup();
        values
    }

    #[test]
    fn values_given_to_secret_keys_are_found() {
        for (text, value) in [
            ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            ("DB_PASSWORD=hunter22", "hunter22"),
            (r#"{"api_key": "abcd1234efgh5678", "model": "x"}"#, "abcd1234efgh5678"),
            ("client_secret: s3cr3t-v4lue-99", "s3cr3t-v4lue-99"),
            ("$config['db_pass'] => 'changeme'", "changeme"),
            ("GITHUB_TOKEN=abcdefghijklmnop.", "abcdefghijklmnop"),
            ("X-Api-Key: 0f9e8d7c6b5a", "0f9e8d7c6b5a"),
            ("PASS: hunter22", "hunter22"),
            ("pwd=hunter22", "hunter22"),
        ] {
            assert_eq!(masked(text), [value], "{text}");
        }
    }

    #[test]
    fn secret_flags_are_found() {
        for (text, value) in [
            ("run it with --password hunter22 and wait", "hunter22"),
            ("psql --password=Sommer2024!", "Sommer2024!"),
            ("cli login --token 'abcd1234efgh'", "abcd1234efgh"),
            ("tool --api-key abcd1234efgh --verbose", "abcd1234efgh"),
            ("keytool -storepass hunter22 -list", "hunter22"),
            ("mysql -u root -pS3cretPw db", "S3cretPw"),
            ("sshpass -p hunter22 ssh jo@host", "hunter22"),
        ] {
            assert_eq!(masked(text), [value], "{text}");
        }
    }

    #[test]
    fn keys_and_flags_that_name_no_secret_or_hold_a_reference_are_left() {
        for text in [
            "max_tokens: 4096",
            "token_count = 12345678",
            "password_length: 16",
            "--token-file /etc/token.txt",
            "DB_PASSWORD=$DB_PASSWORD",
            "api_key = os.environ",
            "token = get_token()",
            "password: str",
            "secret: true",
            r#"{"primary_key": "id"}"#,
            "--password-stdin",
            "--no-password --verbose",
            "the key: always be kind",
            "Converts html in one pass: runs of plain text",
            "Pin: the one on the map",
        ] {
            assert!(masked(text).is_empty(), "{text}: {:?}", masked(text));
        }
    }
}
