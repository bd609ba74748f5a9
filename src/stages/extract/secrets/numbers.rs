//! Payment card and bank account numbers. A card number has the shape real ones are written in
//! (four groups of four, American Express's 4-6-5 or Diners' 4-6-4, split by one kind of
//! separator; or 13–19 digits in one run), an issuer's first digits, a Luhn check that passes,
//! and stands apart: a number inside a decimal (`0.4111111111111111`), a JSON value
//! (`"id": 4111111111111111`), an identifier (`order-4111…`) or a longer digit run is none. An
//! IBAN must pass its mod-97 check.

use std::sync::LazyLock;

use regex::Regex;

use super::{Secret, SecretKind};

/// Card-number shapes (ASCII digits only: other scripts' digits are no card). The groups share
/// one separator.
const CARD_SHAPE_PATTERN: &str = concat!(
    r"(?-u:\b)(?:[0-9]{4} [0-9]{4} [0-9]{4} [0-9]{4}",
    r"|[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{4}",
    r"|[0-9]{4} [0-9]{6} [0-9]{4,5}",
    r"|[0-9]{4}-[0-9]{6}-[0-9]{4,5}",
    r"|[0-9]{13,19})",
);
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static CARD_SHAPE: LazyLock<Regex> = LazyLock::new(|| Regex::new(CARD_SHAPE_PATTERN).expect("a valid card pattern"));

const IBAN_PATTERN: &str = r"(?-u:\b)[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?-u:\b)";
#[expect(clippy::expect_used, reason = "the pattern is a literal, checked by the tests")]
static IBAN: LazyLock<Regex> = LazyLock::new(|| Regex::new(IBAN_PATTERN).expect("a valid IBAN pattern"));

/// The patterns this module's finders start from: no match of any, no secret of theirs.
pub(super) const CUES: &[&str] = &[CARD_SHAPE_PATTERN, IBAN_PATTERN];

/// Pushes the card and bank account numbers in `text`.
pub fn find(text: &str, found: &mut Vec<Secret>) {
    // The digits of an IBAN-shaped text are an account number or nothing, never a card.
    let iban_shaped: Vec<(usize, usize)> = IBAN.find_iter(text).map(|hit| (hit.start(), hit.end())).collect();
    for hit in CARD_SHAPE.find_iter(text) {
        let inside_iban = iban_shaped.iter().any(|(start, end)| hit.start() < *end && *start < hit.end());
        let digits: Vec<u32> = hit.as_str().chars().filter_map(|c| c.to_digit(10)).collect();
        let one_run = digits.len() == hit.len();
        if !inside_iban
            && stands_apart(text, hit.start(), hit.end())
            && !(one_run && is_a_json_value(text, hit.start(), hit.end()))
            && has_an_issuer_prefix(&digits)
            && passes_luhn(&digits)
        {
            found.push(Secret { kind: SecretKind::CardNumber, start: hit.start(), end: hit.end() });
        }
    }
    for hit in IBAN.find_iter(text) {
        if passes_iban_check(hit.as_str()) {
            found.push(Secret { kind: SecretKind::BankAccount, start: hit.start(), end: hit.end() });
        }
    }
}

/// Whether a number stands on its own: no letter, digit or `_` touches it, it is no part of a
/// decimal (a `.` or `,` between it and a digit), no signed number (`-`, `+` before it), no part
/// of an identifier, path or range (`-`, `/`, `\`, `.` glued to it), and no exponent follows.
fn stands_apart(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let before_that = text[..start].chars().rev().nth(1);
    let after = text[end..].chars().next();
    let after_that = text[end..].chars().nth(1);
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
    if word(before) || word(after) {
        return false;
    }
    if matches!(before, Some('.' | '-' | '+' | '/' | '\\' | '@')) || (matches!(before, Some(',')) && digit(before_that)) {
        return false;
    }
    !(matches!(after, Some('.' | ',' | '-' | '/')) && digit(after_that))
}

/// Whether an unseparated number is a JSON value: after a member name's colon (`"n": …`) or
/// an array's `[`, before a `}` or `]`, or between two commas of a list. JSON writes card
/// numbers as strings; a bare number there is an amount, an id or a time.
fn is_a_json_value(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].trim_end();
    let previous = before.chars().next_back();
    let next = text[end..].trim_start().chars().next();
    let after_member_name = previous == Some(':') && before[..before.len() - 1].trim_end().ends_with('"');
    after_member_name || previous == Some('[') || matches!(next, Some('}' | ']')) || (previous == Some(',') && next == Some(','))
}

/// Whether the digits open the way card issuers' numbers do: 2 (Mastercard's 2221–2720), 3
/// (American Express, Diners, JCB), 4 (Visa), 5 (Mastercard, Maestro) or 6 (Discover,
/// UnionPay, Maestro). Times, phone numbers and snowflake ids opening with 1, 7, 8, 9 or 0 are
/// none.
fn has_an_issuer_prefix(digits: &[u32]) -> bool {
    let first_four = digits.iter().take(4).fold(0, |number, digit| number * 10 + digit);
    match digits.first() {
        Some(2) => (2221..=2720).contains(&first_four),
        Some(3..=6) => true,
        _ => false,
    }
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
        let mut found = Vec::new();
        find(text, &mut found);
        found.into_iter().map(|secret| secret.kind).collect()
    }

    #[test]
    fn card_and_account_numbers_need_their_shape_and_checksums() {
        assert_eq!(kinds("card 4111 1111 1111 1111 exp 12/29"), [SecretKind::CardNumber]);
        assert_eq!(kinds("4111 1111 1111 1111 123"), [SecretKind::CardNumber], "a CVV after the number");
        assert_eq!(kinds("4111-1111-1111-1111"), [SecretKind::CardNumber]);
        assert_eq!(kinds("my card: 4111111111111111, exp 12/29"), [SecretKind::CardNumber]);
        assert_eq!(kinds("{\"card\": \"4111111111111111\"}"), [SecretKind::CardNumber], "a card in a JSON string");
        assert_eq!(kinds("amex 3782 822463 10005"), [SecretKind::CardNumber]);
        assert!(kinds("account GB１２ ABCD EFGH IJKL MNOP").is_empty(), "full-width digits neither panic nor match");
        assert!(kinds("order 4111 1111 1111 1112").is_empty(), "fails Luhn");
        assert_eq!(kinds("IBAN DE89 3704 0044 0532 0130 00"), [SecretKind::BankAccount]);
        assert!(kinds("DE89 3704 0044 0532 0130 01").is_empty(), "fails mod 97");
    }

    #[test]
    fn numbers_in_decimals_json_values_ids_and_hashes_are_no_cards() {
        for text in [
            "{\"score\": 0.4111111111111111}",
            "{\"amount\": 4111111111111111}",
            "{\"ids\": [4111111111111111, 2]}",
            "values: 1, 4111111111111111, 3",
            "pi is 3.4111111111111111 or so",
            "it was 4111111111111111.5 units",
            "1,4111111111111111",
            "-4111111111111111",
            "order-4111111111111111",
            "v4111111111111111",
            "sha 9f2c4111111111111111ab00",
            "commit 4111111111111111e3",
            "ts 1700000000000000 and snowflake 1234567890123456789",
            "phone +4111111111111",
            "a longer run 41111111111111111111111",
            "version 4.1.1.1111111111111111",
            "2024-05-07 1111 2222",
        ] {
            assert!(kinds(text).is_empty(), "{text}: {:?}", kinds(text));
        }
    }
}
