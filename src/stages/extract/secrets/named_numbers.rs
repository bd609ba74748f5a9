//! Numbers people give when they ask about taxes, forms, banking and travel, told by the word
//! that names them in one of the five languages: identity numbers (a social security,
//! passport, identity card, tax or driving licence number: "my SSN is 123-45-6789", "Mi DNI es
//! 71530246P", "meine Steuer-ID: 12 345 678 901", "numéro de sécu 1 85 05 78 006 084 36",
//! "rodné číslo 905123/1234"), then five digits or more in groups of digits and capitals; bank
//! account numbers and sort codes ("account number 12345678", "Kontonummer 1234567890", "sort
//! code 12-34-56"), six digits or more; and a card's security code ("CVV 123"), 3–4 digits.

use std::sync::LazyLock;

use regex::Regex;

use super::{Secret, SecretKind};

/// A name of an identity number, then what may stand between it and the number: a verb, `:`,
/// `=` or `#`. The short capitalised names (`SSN`, `DNI`, `NIE`, `NIF`, `NIR`, `DIČ`) are
/// matched only in capitals: "nie" is German for "never". Word boundaries are ASCII ones: a
/// Unicode boundary would make the set of every finder's cues ([`super::find`]) fall back to a
/// slower engine on any text that is not ASCII.
const NAMED_NUMBER_PATTERN: &str = concat!(
    r"(?:(?-u:\b)(?:SSN|DNI|NIE|NIF|NIR|DIČ)|(?i:(?-u:\b)(?:social security (?:number|no\.?|#)|passport (?:number|no\.?|#)|",
    r"national insurance (?:number|no\.?)|ni number|driver'?s licen[cs]e (?:number|no\.?|#)|driving licen[cs]e (?:number|no\.?)|",
    r"tax (?:id|identification number|number)|national id(?:entity)? (?:number|no\.?)|id (?:card )?number|",
    r"personalausweis(?:nummer)?|ausweisnummer|(?:reise)?passnummer|steuer-?id|steueridentifikationsnummer|",
    r"sozialversicherungsnummer|steuernummer|führerscheinnummer|",
    r"numéro de (?:sécurité sociale|sécu|passeport|carte d'identité|carte vitale|permis)|numéro fiscal|",
    r"número de (?:la )?(?:seguridad social|pasaporte|identidad|documento)|",
    r"rodné číslo|rodného čísla|daňové identifikační číslo)|číslo (?:pasu|občanky|občanského průkazu|op|řidičáku)))",
    r"(?i:\s+(?:is|was|ist|lautet|est|c'est|c’est|es|je|zní))?\s*[:=#]?\s*",
    r"(?P<number>[0-9A-Z](?:[0-9A-Z]|[ \-/.][0-9A-Z]){4,30})"
);
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static NAMED_NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(NAMED_NUMBER_PATTERN).expect("a valid identity-number pattern"));

/// A name of a bank account number or sort code, then a verb, `:`, `=` or `#`, then digits in
/// groups.
const ACCOUNT_NUMBER_PATTERN: &str = concat!(
    r"(?i)(?:(?-u:\b)(?:(?:bank )?account (?:number|no\.?|#)|acct\.? (?:number|no\.?|#)|routing (?:number|no\.?)|sort code|",
    r"kontonummer|bankleitzahl|numéro de compte|n° de compte|número de cuenta)|číslo (?:bankovního )?účtu)",
    r"(?:\s+(?:is|was|ist|lautet|est|c'est|c’est|es|je))?\s*[:=#]?\s*",
    r"(?P<number>[0-9](?:[0-9]|[ \-/][0-9]){5,30})"
);
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static ACCOUNT_NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(ACCOUNT_NUMBER_PATTERN).expect("a valid account-number pattern"));

/// A card's security code after its name: three or four digits.
const SECURITY_CODE_PATTERN: &str = concat!(
    r"(?:(?-u:\b)(?:CVV2?|CVC2?|CSC)|(?i:(?-u:\b)(?:card security code|cryptogramme)))",
    r"(?i:\s+(?:is|ist|est|es|je))?\s*[:=#]?\s*(?P<number>[0-9]{3,4})"
);
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static SECURITY_CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(SECURITY_CODE_PATTERN).expect("a valid security-code pattern"));

/// The patterns this module's finders start from.
pub(super) const CUES: &[&str] = &[NAMED_NUMBER_PATTERN, ACCOUNT_NUMBER_PATTERN, SECURITY_CODE_PATTERN];

/// Pushes the identity numbers, account numbers and card security codes in `text` said after a
/// word that names one.
pub fn find(text: &str, found: &mut Vec<Secret>) {
    let shapes: [(&Regex, usize, SecretKind); 3] = [
        (&NAMED_NUMBER, 5, SecretKind::IdNumber),
        (&ACCOUNT_NUMBER, 6, SecretKind::BankAccount),
        (&SECURITY_CODE, 3, SecretKind::CardNumber),
    ];
    for (pattern, fewest_digits, kind) in shapes {
        for captures in pattern.captures_iter(text) {
            let Some(number) = captures.name("number") else { continue };
            let digits = number.as_str().bytes().filter(u8::is_ascii_digit).count();
            // A number that runs on into a word or a decimal ("12345abc", "123.45") is
            // something else's.
            let mut after = text[number.end()..].chars();
            let runs_on = match (after.next(), after.next()) {
                (Some(next), _) if next.is_alphanumeric() => true,
                (Some('.' | ','), Some(then)) => then.is_ascii_digit(),
                _ => false,
            };
            if digits >= fewest_digits && !runs_on {
                found.push(Secret { kind, start: number.start(), end: number.end() });
            }
        }
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
    fn identity_and_account_numbers_named_in_any_language_are_found() {
        for (text, number) in [
            ("my SSN is 123-45-6789 and I file jointly", "123-45-6789"),
            ("I'm renewing it, passport number: X1234567.", "X1234567"),
            ("Mi DNI es 71530246P y vivo en Murcia", "71530246P"),
            ("tengo NIE X-1234567-L desde 2019", "X-1234567-L"),
            ("Meine Steuer-ID ist 12 345 678 901, ich bin Rentner", "12 345 678 901"),
            ("mon numéro de sécu c'est 1 85 05 78 006 084 36", "1 85 05 78 006 084 36"),
            ("moje rodné číslo je 905123/1234", "905123/1234"),
            ("Ausweisnummer L01X00T47", "L01X00T47"),
            ("my account number is 40312288, I bank online", "40312288"),
            ("meine Kontonummer: 1234567890, ich bin Rentnerin", "1234567890"),
            ("número de cuenta 2100 0418 4502 0005 1332", "2100 0418 4502 0005 1332"),
            ("the card ends in 4242, CVV 319", "319"),
            ("sort code 20-45-77 for the transfer", "20-45-77"),
        ] {
            assert_eq!(masked(text), [number], "{text}");
        }
    }

    #[test]
    fn words_near_numbers_that_are_no_identity_numbers_are_left() {
        for text in [
            "ich war nie 12345 Meter tief",
            "my passport number is on the back page",
            "the DNI office opens at 9",
            "my tax number went up by 12%",
            "I lost my passport in 2019",
            "the SSN field takes 9 digits",
            "my account number is on the statement",
            "the CVV field is 3 digits",
            "account number 12345.67 was the balance",
        ] {
            assert!(masked(text).is_empty(), "{text}: {:?}", masked(text));
        }
    }
}
