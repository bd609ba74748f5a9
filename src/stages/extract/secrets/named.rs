//! Secrets said in prose after a word that names them: "<something> password/passcode/PIN/
//! passphrase/secret/token/API key … is|: VALUE" in the five languages ("the wifi password at the
//! office is X", "my aws_secret_access_key is …", "das WLAN-Passwort im Büro lautet …"), and
//! one-time codes after a word that names them. Which names count and which values are words
//! is [`super::words`]'s.

use std::sync::LazyLock;

use regex::Regex;

use super::predicates::is_a_predicate;
use super::words::{Family, family_of, is_a_reference, looks_machine_made};
use super::{Secret, SecretKind};

/// The words that name a secret, found first by a literal search (fast over long transcripts);
/// each hit is then widened to the whole identifier it stands in (`wifipassword`,
/// `WLAN-Passwort`, `aws_secret_access_key`, `PIN-Nummer`), which [`family_of_name`] judges.
const NAME_PATTERN: &str = concat!(
    r"(?i)mot de passe|api[ \-]key|access[ \-]key|secret[ \-]key|private[ \-]key|client[ \-]secret|auth[ \-]token|access[ \-]token|",
    r"pin[ \-](?:code|kód|nummer|number)|password|passwort|kennwort|passphrase|passcode|passwd|geheimzahl|contraseña|hesl(?:o|a|u|em)|",
    r"token|secret|apikey|pin|mdp|clave|digicode|",
    // A code that opens something: "wifi code", "WLAN-Code", "code wifi", "code de la porte",
    // "código del wifi", "kód k wifi", "door code", "Türcode".
    r"(?:wi-?fi|wlan|door|gate|garage|alarm|tür|haustür|tor|alarmanlage|tresor|porte|portail|alarme|coffre|",
    r"puerta|portal|alarma|caja fuerte|dveří|brány|alarmu|trezoru)[ \-]?(?:code|kód|código)|",
    r"(?:code|código|kód)(?: (?:du |de la |de l'|d'|de |del |de la |k |ke |od |do |na )?(?:wi-?fi|wlan|porte|portail|alarme|coffre|",
    r"puerta|portal|alarma|caja fuerte|dveří|dveře|brány|bránu|alarmu|trezoru|entrée|garage))"
);
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(NAME_PATTERN).expect("a valid secret-name pattern"));

/// What may stand between a secret's name and its verb or value, from just after the name: a
/// phrase that opens with a preposition or a relative word, or one other word (`gap`).
macro_rules! gap {
    () => {
        concat!(
            r"(?i)^(?P<gap>\s+(?:(?:for|to|of|at|on|in|from|with|that|which|i|we|you|für|fürs|zum|zur|vom|von|im|am|an|bei|des|der|ich|",
            r"du|de|pour|à|au|aux|que|sur|del|para|en|con|k|ke|od|do|na|pro|v|ve|které|který|co)\s[^.!?;:=\n\x22]{0,48}?|[\w\-]+))?"
        )
    };
}

/// What follows a name, read from just after it: what may stand between name and verb, the verb
/// (or `:`/`=`) and the value, quoted (spaces allowed) or one run of non-space characters.
///
/// Between name and verb may stand a phrase that opens with a preposition or a relative word
/// ("at the office", "for the router", "I use for work", "im Büro", "du wifi", "del wifi", "k
/// wifi"), or one other word ("password wifi"), checked in [`find`].
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static AFTER_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        gap!(),
        r"(?:\s+(?P<verb>is|was|are|ist|war|lautet|lautete|est|était|c'est|c’est|es|era|je|bylo|byl|byla)\s+",
        r"(?:(?:now|still|actually|jetzt|noch|maintenant|toujours|ahora|todavía|teď|pořád)\s+)?(?:set to\s+)?|\s*[:=]\s*)",
        r"(?:[\x22'`«“„‚](?P<quoted>[^\x22'`»”“‘’\n]{3,100})[\x22'`»”“‘’]|(?P<value>[^\s\x22'`«»“”„]{3,}))"
    ))
    .expect("a valid named-secret pattern")
});

/// What follows a name said without a verb ("… and the password Limon$71", "mit dem Passwort
/// Holunder!38", "s heslem Sumec_1987", "heslo do intranetu Knedlik55"): the same phrase or word
/// may stand between, then the value, which must hold a digit or a symbol (a plain word after a
/// name is what the name is said about: "the password again", "password protected").
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static BARE_AFTER_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(gap!(), r"\s+(?P<value>[^\s\x22'`«»“”„]*[0-9!$%&*#_+~^][^\s\x22'`«»“”„]*)"))
        .expect("a valid bare named-secret pattern")
});

/// Words that stand after a password's name and make it the name of something else ("password
/// manager", "password policy"): then what follows is no password.
const OTHER_THINGS: [&str; 24] = [
    "manager",
    "managers",
    "policy",
    "policies",
    "length",
    "hint",
    "hints",
    "reset",
    "strength",
    "rules",
    "requirements",
    "field",
    "prompt",
    "generator",
    "vault",
    "app",
    "change",
    "recovery",
    "protection",
    "expiry",
    "expiration",
    "economy",
    "holder",
    "type",
];

/// A word naming a one-time code, then the code (4–8 digits).
const ONE_TIME_CODE_PATTERN: &str = concat!(
    r"(?i)(?-u:\b)(?:otp|2fa|one[- ]time (?:code|password)|verification code|security code|login code|",
    r"bestätigungscode|einmalcode|code de vérification|código de verificación|ověřovací kód)",
    r"(?:\s+(?:is|ist|est|es|je|lautet))?\s*[:=]?\s*(?P<value>[0-9]{4,8})(?-u:\b)"
);
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static ONE_TIME_CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(ONE_TIME_CODE_PATTERN).expect("a valid code pattern"));

/// The patterns this module's finders start from: no match of any, no secret of theirs.
pub(super) const CUES: &[&str] = &[NAME_PATTERN, ONE_TIME_CODE_PATTERN];

/// Pushes the secrets named in prose in `text`.
pub fn find(text: &str, found: &mut Vec<Secret>) {
    let identifier = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let mut read_up_to = 0;
    for hit in NAME.find_iter(text) {
        // A hit inside a name already read (`secret` and `access_key` in one identifier).
        if hit.start() < read_up_to {
            continue;
        }
        let start = text[..hit.start()].trim_end_matches(identifier).len();
        let end = text.len() - text[hit.end()..].trim_start_matches(identifier).len();
        read_up_to = end;
        let name = &text[start..end];
        let Some(family) = family_of_name(name) else { continue };
        let said = AFTER_NAME.captures(&text[end..]).and_then(|captures| value_after(&captures, family, end));
        let bare = || BARE_AFTER_NAME.captures(&text[end..]).and_then(|captures| bare_value_after(&captures, family, name, end));
        if let Some(secret) = said.or_else(bare) {
            found.push(secret);
        }
    }
    for captures in ONE_TIME_CODE.captures_iter(text) {
        if let Some(value) = captures.name("value") {
            found.push(Secret { kind: SecretKind::OneTimeCode, start: value.start(), end: value.end() });
        }
    }
}

/// The secret read after a name of `family`, if its value is one; `offset` is where the
/// captures' text starts in the whole text.
fn value_after(captures: &regex::Captures<'_>, family: Family, offset: usize) -> Option<Secret> {
    // One word between the name and its verb ("password wifi") is a qualifier, unless it makes
    // the name another thing's ("password manager"); a value after it must look like a secret,
    // not merely like a word.
    let mut family = family;
    if let Some(gap) = captures.name("gap") {
        // Czech "je" (is) is French "je" (I) after a relative word: "le code wifi du gîte que je
        // gère c'est …" names no value with "je".
        let last_word = gap.as_str().rsplit(char::is_whitespace).next().unwrap_or_default().to_lowercase();
        let french_subject = ["que", "qu", "où", "dont", "si", "quand", "comme", "lorsque", "puisque", "et", "mais", "ou", "donc"];
        if captures.name("verb").is_some_and(|verb| verb.as_str().eq_ignore_ascii_case("je"))
            && french_subject.contains(&last_word.as_str())
        {
            return None;
        }
        let word = gap.as_str().trim();
        if !word.contains(char::is_whitespace) {
            if names_another_thing(word) {
                return None;
            }
            family = Family::Token;
        }
    }
    if let Some(quoted) = captures.name("quoted") {
        let text = quoted.as_str().trim();
        let secret = !is_a_predicate(text) && !is_a_reference(text) && (family == Family::Password || looks_machine_made(text));
        return secret.then(|| Secret { kind: kind_of(family), start: offset + quoted.start(), end: offset + quoted.end() });
    }
    let value = captures.name("value")?;
    // The span keeps a closing "!" (part of many passwords); the check reads the value without
    // any closing punctuation ("the token is expired!").
    let kept = value.as_str().trim_end_matches(['.', ',', ';', ':', ')', '?']);
    let bare = kept.trim_end_matches(['!', ')', '.', ',']);
    let secret = !is_a_reference(bare)
        && match family {
            Family::Password => bare.chars().count() >= 3 && !is_a_predicate(bare),
            Family::Token => looks_machine_made(bare),
        };
    (secret && !kept.is_empty()).then(|| Secret {
        kind: kind_of(family),
        start: offset + value.start(),
        end: offset + value.start() + kept.len(),
    })
}

/// Whether a word after a secret's name makes it the name of another thing ("password
/// manager") or is itself a name of a secret.
fn names_another_thing(word: &str) -> bool {
    OTHER_THINGS.contains(&word.to_lowercase().as_str()) || family_of(word).is_some()
}

/// The secret read after a name of `family` said without a verb, if its value is one: shaped
/// like a password (six characters or more, letters with a digit or a symbol; a PIN's four to
/// eight digits) or, for a token, machine-made. An e-mail address after the name is a login,
/// not its password.
fn bare_value_after(captures: &regex::Captures<'_>, family: Family, name: &str, offset: usize) -> Option<Secret> {
    if captures.name("gap").is_some_and(|gap| names_another_thing(gap.as_str().trim())) {
        return None;
    }
    let value = captures.name("value")?;
    // Emphasis around a word ("token **queue**") is markup, not part of a value.
    let kept = value.as_str().trim_end_matches(['.', ',', ';', ':', ')', '?', '!']);
    let markup = ['*', '_', '~'];
    if kept.starts_with(markup) || kept.ends_with(markup) {
        return None;
    }
    if kept.chars().all(char::is_alphabetic) {
        return None;
    }
    let characters = kept.chars().count();
    let letters = kept.chars().any(char::is_alphabetic);
    let digits_only = !kept.is_empty() && kept.chars().all(|c| c.is_ascii_digit());
    let name = name.to_lowercase();
    let pin = ["pin", "code", "kód"].iter().any(|word| name.contains(word));
    let secret = !is_a_reference(kept)
        && !kept.contains('@')
        && match family {
            Family::Password => {
                (characters >= 6 && letters && !is_a_predicate(kept)) || (pin && digits_only && (4..=8).contains(&characters))
            }
            Family::Token => looks_machine_made(kept),
        };
    secret.then(|| Secret { kind: kind_of(family), start: offset + value.start(), end: offset + value.start() + kept.len() })
}

/// What a name said in prose names: "PIN code" and "PIN-Nummer" are PINs; "clave" is also
/// "the key to" something, so its value must look like a secret.
fn family_of_name(name: &str) -> Option<Family> {
    let lower = name.to_lowercase();
    let pin_words = ["pin code", "pin-code", "pincode", "pin kód", "pin-kód", "pin number", "pin-nummer", "pin nummer"];
    if pin_words.contains(&lower.as_str()) {
        return Some(Family::Password);
    }
    if lower == "clave" {
        return Some(Family::Token);
    }
    // "wifi code", "code de la porte", "digicode": a code that opens something is chosen like a
    // password.
    if ["code", "kód", "código"].iter().any(|code| lower.contains(code)) {
        return Some(Family::Password);
    }
    family_of(name)
}

/// The kind a family's secret is reported as.
pub fn kind_of(family: Family) -> SecretKind {
    match family {
        Family::Password => SecretKind::Password,
        Family::Token => SecretKind::ApiKey,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> Vec<&str> {
        let mut found = Vec::new();
        find(text, &mut found);
        found.iter().map(|secret| &text[secret.start..secret.end]).collect()
    }

    #[test]
    fn a_password_named_with_words_between_name_and_value_is_found() {
        for (text, value) in [
            ("the wifi password at the office is sunflower", "sunflower"),
            ("The WiFi password at the office is Tr0ub4dor&3.", "Tr0ub4dor&3"),
            ("our alarm PIN is 4821", "4821"),
            ("the passcode for the garage door was 9931", "9931"),
            ("the password I use for everything is hunter22!", "hunter22!"),
            ("the router's admin password: BlueFish42", "BlueFish42"),
            ("the passphrase is 'correct horse battery staple'", "correct horse battery staple"),
            ("my aws_secret_access_key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            ("the API key for staging is abc123def456", "abc123def456"),
            ("Das WLAN-Passwort im Büro lautet Sonnenblume7", "Sonnenblume7"),
            ("Unser Wlanpasswort ist jetzt Haus2024", "Haus2024"),
            ("le mot de passe du wifi est soleil123", "soleil123"),
            ("la contraseña del wifi es gato1234", "gato1234"),
            ("heslo k wifi je kocka123", "kocka123"),
            ("the password wifi is Kx93-aa-7", "Kx93-aa-7"),
        ] {
            assert_eq!(masked(text), [value], "{text}");
        }
    }

    #[test]
    fn a_password_given_after_its_name_without_a_verb_is_found() {
        for (text, value) in [
            ("my login is jo@example.org and the password Limon$71, can you help", "Limon$71"),
            ("entro como lucia@example.es y la contraseña Limon$71 no la cambio", "Limon$71"),
            ("ich melde mich mit dem Passwort Holunder!38 an – reicht das?", "Holunder!38"),
            ("do banky chodím s heslem Sumec_1987", "Sumec_1987"),
            ("uživatel je pavel a heslo do intranetu Knedlik55, díky", "Knedlik55"),
            ("le compte c'est paul et le mdp Glycine1999", "Glycine1999"),
            ("log in with the password hunter22 and the user admin", "hunter22"),
            ("unsere Alarmanlage, PIN 4821, ist neu", "4821"),
        ] {
            assert_eq!(masked(text), [value], "{text}");
        }
    }

    #[test]
    fn a_code_that_opens_something_is_found() {
        for (text, value) in [
            ("le code wifi de l'appart que je loue c'est Romarin*512, merci", "Romarin*512"),
            ("the door code is 4471", "4471"),
            ("der WLAN-Code lautet Sonne2024", "Sonne2024"),
            ("el código del wifi es Playa_2023", "Playa_2023"),
            ("mon mot de passe c'est soleil123", "soleil123"),
        ] {
            assert_eq!(masked(text), [value], "{text}");
        }
    }

    #[test]
    fn words_after_a_name_without_a_verb_are_no_passwords() {
        for text in [
            "I forgot my password again, 2nd time this week",
            "the password protected file",
            "I changed my password 3 times",
            "my password for 2FA",
            "the password manager Bitwarden2 is great",
            "mit dem Passwort vom Büro",
            "the code is below",
            "the door code is on the fridge",
            "my password to jo@example.org was sent",
            "the issue user token **queue** vector",
            "write safe code from result_2 on",
        ] {
            assert!(masked(text).is_empty(), "{text}: {:?}", masked(text));
        }
    }

    #[test]
    fn words_said_about_passwords_are_no_passwords() {
        for text in [
            "my password manager is 1Password",
            "my password is wrong",
            "the password is too short",
            "the password for the router is written on the back",
            "the token is valid",
            "the token is expired!",
            "the secret to good bread is patience",
            "the password policy is strict",
            "das Passwort ist falsch",
            "le mot de passe est expiré",
            "the password length is 12",
            "my secretary is Maria",
        ] {
            assert!(masked(text).is_empty(), "{text}: {:?}", masked(text));
        }
    }
}
