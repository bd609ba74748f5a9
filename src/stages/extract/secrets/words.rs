//! The word checks every secret shape shares: whether a name (a word in prose, a config key, an
//! environment variable, a JSON member, a command-line flag) names a secret, and whether the
//! value given for it is a reference in code (`$TOKEN`) or looks machine-made. Whether it is an
//! ordinary word ("the password is wrong") is [`super::predicates`]'s.

/// What a name says its value is: a password people choose (any word but a predicate can be
/// one), or a machine-made token, key or secret (long or mixed, never a plain word).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// A password, passphrase, passcode or PIN.
    Password,
    /// A token, secret, API key, access key or private key.
    Token,
}

/// Word endings that name a password in the five languages (`wifipassword`, `WLAN-Passwort`
/// and `Wlanpasswort` end the same way; Czech "heslo" as it is declined: "s heslem").
const PASSWORD_ENDINGS: [&str; 12] = [
    "password",
    "passwort",
    "kennwort",
    "passphrase",
    "passcode",
    "passwd",
    "geheimzahl",
    "contraseña",
    "heslo",
    "hesla",
    "heslu",
    "heslem",
];
/// Whole name parts that name a password.
const PASSWORD_PARTS: [&str; 10] = ["pin", "pwd", "pass", "pw", "mdp", "clave", "storepass", "keypass", "srcstorepass", "deststorepass"];
/// Word endings that name a token or a secret (`GITHUB_TOKEN`, `client_secret`, `authtoken`).
const TOKEN_ENDINGS: [&str; 7] = ["token", "secret", "apikey", "accesskey", "secretkey", "privatekey", "credentials"];
/// The parts before `key` that make it a secret key (`api_key`, `AWS_SECRET_ACCESS_KEY`,
/// `X-Api-Key`), where `primary_key` and `sort_key` are none.
const KEY_QUALIFIERS: [&str; 15] = [
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "encryption",
    "client",
    "master",
    "app",
    "auth",
    "license",
    "licence",
    "subscription",
    "webhook",
    "session",
];

/// What a name's value is, when the name says it is a secret: its last part (split at `_`,
/// `-`, `.`, spaces and lower-to-upper case changes) names one. `max_tokens`, `token_count`,
/// `password_length` and `--token-file` name no secret.
pub fn family_of(name: &str) -> Option<Family> {
    let parts = parts_of(name);
    let last = parts.last()?;
    if PASSWORD_ENDINGS.iter().any(|ending| last.ends_with(ending)) || PASSWORD_PARTS.contains(&last.as_str()) {
        return Some(Family::Password);
    }
    if TOKEN_ENDINGS.iter().any(|ending| last.ends_with(ending)) {
        return Some(Family::Token);
    }
    let before = parts.len().checked_sub(2).and_then(|index| parts.get(index));
    if last == "key" && before.is_some_and(|before| KEY_QUALIFIERS.contains(&before.as_str())) {
        return Some(Family::Token);
    }
    None
}

/// A name's parts in lower case: `AWS_SECRET_ACCESS_KEY` → `aws secret access key`,
/// `clientSecret` → `client secret`, `mot de passe` → `mot de passe`.
fn parts_of(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut previous_lower = false;
    for character in name.chars() {
        if matches!(character, '_' | '-' | '.' | ' ') {
            if !part.is_empty() {
                parts.push(std::mem::take(&mut part));
            }
            previous_lower = false;
            continue;
        }
        if character.is_uppercase() && previous_lower && !part.is_empty() {
            parts.push(std::mem::take(&mut part));
        }
        previous_lower = character.is_lowercase();
        part.extend(character.to_lowercase());
    }
    if !part.is_empty() {
        parts.push(part);
    }
    // "mot de passe" is one name: its last part is "passe", which names nothing alone.
    if parts.len() >= 3 && parts[parts.len() - 3..] == ["mot", "de", "passe"] {
        parts.truncate(parts.len() - 3);
        parts.push("password".into());
    }
    parts
}

/// Whether a value given in code or a config is a reference rather than the secret: a
/// variable, a template, a call, a type, a field of an object (`$TOKEN`, `${DB_PASS}`,
/// `<your-key>`, `{{ secret }}`, `os.environ[…]`, `getenv(…)`, `self.password`, `***`).
pub fn is_a_reference(value: &str) -> bool {
    // `$TOKEN`, `${X}`, `$(cat f)`, `%APPDATA%`; "$ecret99" is a password.
    let variable =
        |rest: &str| rest.starts_with(['{', '(']) || rest.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    let starts_a_reference = value.strip_prefix('$').is_some_and(variable)
        || value.strip_prefix('%').is_some_and(|rest| rest.ends_with('%'))
        || value.starts_with(['{', '<', '(', '[']);
    let is_code = value.contains(['(', '[', '{']) || (value.contains('<') && value.contains('>'));
    let dotted_identifier = value.contains('.')
        && value.split('.').all(|part| {
            part.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    let masked_already = value.chars().all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '•')) || value.starts_with("[REDACTED");
    starts_a_reference || is_code || dotted_identifier || masked_already
}

/// Whether a value given for a name of the token family looks machine-made rather than like a
/// word ("the token is valid"): it has a digit or a symbol (hyphens and apostrophes inside
/// words are no symbols), or mixes case inside the word, or is long.
pub fn looks_machine_made(value: &str) -> bool {
    let length = value.chars().count();
    let has_digit_or_symbol = value.chars().any(|c| !(c.is_alphabetic() || c == '-' || c == '\''));
    let mixed_case = value.chars().skip(1).any(char::is_uppercase) && value.chars().any(char::is_lowercase);
    length >= 8 && (has_digit_or_symbol || mixed_case) || length >= 12 && !value.contains('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_secrets_are_told_by_their_last_part() {
        for name in ["password", "wifi password", "WLAN-Passwort", "Wlanpasswort", "DB_PASSWORD", "mot de passe", "heslo", "pin", "--pass"]
        {
            assert_eq!(family_of(name), Some(Family::Password), "{name}");
        }
        for name in ["aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "api_key", "X-Api-Key", "clientSecret", "GITHUB_TOKEN", "authtoken"]
        {
            assert_eq!(family_of(name), Some(Family::Token), "{name}");
        }
        for name in ["max_tokens", "token_count", "password_length", "token-file", "primary_key", "secretary", "tokenizer", "key", "spin"] {
            assert_eq!(family_of(name), None, "{name}");
        }
    }

    #[test]
    fn references_in_code_are_no_secrets() {
        for value in
            ["$TOKEN", "${DB_PASS}", "<your-key>", "os.environ", "getenv(\"X\")", "self.password", "***", "{{secret}}", "Option<String>"]
        {
            assert!(is_a_reference(value), "{value}");
        }
        for value in ["hunter22", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "p4ss.w0rd!", "$ecret99"] {
            assert!(!is_a_reference(value), "{value}");
        }
    }
}
