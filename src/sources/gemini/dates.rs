//! Reads the localized date-times of Takeout's HTML activity pages (`Jan 2, 2026, 10:00:00 AM
//! PST`, `27.08.2026, 20:04:54 MESZ`, `12. 1. 2026 19:01:56 SEČ`, `2026. 9. 8. 오후 1:54:14 KST`,
//! `2026/01/02 10:00:00 JST`, `17 de fev. de 2026, 14:51:53 BRT`, …) into UTC.
//!
//! Takeout writes every time in the zone in force at export time and names it by its
//! abbreviation, so the abbreviation's fixed offset is the right one to apply (a daylight-saving
//! lookup for the event's date would be an hour off half the year).

use crate::model::Micros;
use crate::timefmt::{check_day, check_range, days_from_civil, parse_offset};

/// Zone abbreviations seen in Takeout pages (and their common neighbours), in seconds east of UTC.
const ZONES: [(&str, i64); 41] = [
    ("UTC", 0),
    ("GMT", 0),
    ("Z", 0),
    ("WET", 0),
    ("WEZ", 0),
    ("BST", 3600),
    ("WEST", 3600),
    ("WESZ", 3600),
    ("CET", 3600),
    ("MEZ", 3600),
    ("SEČ", 3600),
    ("HNEC", 3600),
    ("CEST", 7200),
    ("MESZ", 7200),
    ("SELČ", 7200),
    ("HAEC", 7200),
    ("EET", 7200),
    ("OEZ", 7200),
    ("EEST", 10800),
    ("OESZ", 10800),
    ("MSK", 10800),
    ("IST", 19800),
    ("SGT", 28800),
    ("HKT", 28800),
    ("JST", 32400),
    ("KST", 32400),
    ("AEST", 36000),
    ("AEDT", 39600),
    ("NZST", 43200),
    ("NZDT", 46800),
    ("BRT", -10800),
    ("BRST", -7200),
    ("EST", -18000),
    ("EDT", -14400),
    ("CST", -21600),
    ("CDT", -18000),
    ("MST", -25200),
    ("MDT", -21600),
    ("PST", -28800),
    ("PDT", -25200),
    ("HST", -36000),
];

/// Month names and abbreviations (English, German, French, Spanish, Portuguese, Italian,
/// Dutch, Czech), matched on the lowercased word without its trailing dot.
const MONTHS: [(&str, i64); 43] = [
    ("jan", 1),
    ("jän", 1),
    ("ene", 1),
    ("gen", 1),
    ("janv", 1),
    ("led", 1),
    ("feb", 2),
    ("févr", 2),
    ("fév", 2),
    ("fev", 2),
    ("úno", 2),
    ("mar", 3),
    ("mär", 3),
    ("mars", 3),
    ("mrt", 3),
    ("bře", 3),
    ("apr", 4),
    ("avr", 4),
    ("abr", 4),
    ("dub", 4),
    ("may", 5),
    ("mai", 5),
    ("mei", 5),
    ("mag", 5),
    ("kvě", 5),
    ("jun", 6),
    ("juin", 6),
    ("giu", 6),
    ("čvn", 6),
    ("jul", 7),
    ("juil", 7),
    ("lug", 7),
    ("čvc", 7),
    ("aug", 8),
    ("août", 8),
    ("ago", 8),
    ("sep", 9),
    ("set", 9),
    ("oct", 10),
    ("okt", 10),
    ("ott", 10),
    ("out", 10),
    ("nov", 11),
];

fn month_of(word: &str) -> Option<i64> {
    let word = word.trim_end_matches('.').to_lowercase();
    if matches!(word.as_str(), "dec" | "déc" | "dez" | "dic" | "pro" | "december" | "dezember" | "décembre" | "diciembre" | "dicembre") {
        return Some(12);
    }
    if let Some((_, month)) = MONTHS.iter().find(|(name, _)| *name == word) {
        return Some(*month);
    }
    // Full names and longer abbreviations (`sept`, `januar`, `juillet`): the longest known prefix.
    MONTHS
        .iter()
        .filter(|(name, _)| name.chars().count() >= 3 && word.starts_with(name))
        .max_by_key(|(name, _)| name.len())
        .map(|(_, month)| *month)
}

/// Parses one Takeout date-time line into UTC microseconds, and whether its zone was known.
pub fn parse_takeout_time(text: &str) -> Option<(Micros, bool)> {
    let plain: String = text
        .chars()
        .map(|c| match c {
            '\u{200f}' | '\u{200e}' | '\u{60c}' => ' ',
            c if c.is_whitespace() => ' ',
            '年' | '月' => '/',
            '日' => ' ',
            other => other,
        })
        .collect();
    let mut tokens: Vec<&str> = plain.split([' ', ',']).filter(|token| !token.is_empty()).collect();
    // The zone: the last token, when it is one.
    let mut offset = None;
    if let Some(last) = tokens.last() {
        let upper = last.to_uppercase();
        if let Some((_, seconds)) = ZONES.iter().find(|(name, _)| *name == upper) {
            offset = Some(*seconds);
        } else if upper.starts_with("GMT") || upper.starts_with("UTC") {
            offset = parse_offset(&upper);
        }
        if offset.is_some() {
            tokens.pop();
        }
    }
    let mut hour = None;
    let mut minute = 0;
    let mut second = 0;
    let mut afternoon = None;
    let mut month_word = None;
    let mut numbers: Vec<(i64, usize)> = Vec::new();
    for token in tokens {
        if token.contains(':') {
            let mut parts = token.split(':');
            hour = Some(parts.next()?.parse::<i64>().ok()?);
            minute = parts.next()?.parse::<i64>().ok()?;
            second = parts.next().map_or(Some(0), |part| part.parse::<i64>().ok())?;
            continue;
        }
        match token.to_lowercase().as_str() {
            "am" | "a.m." | "vorm." | "오전" | "午前" | "ص" => {
                afternoon = Some(false);
                continue;
            }
            "pm" | "p.m." | "nachm." | "오후" | "午後" | "م" => {
                afternoon = Some(true);
                continue;
            }
            "de" | "del" | "um" | "à" | "a" | "às" | "alle" | "om" | "v" => continue,
            _ => {}
        }
        // Numbers may carry separators (`27.08.2026`, `2026/01/02`, `12.`).
        let pieces: Vec<&str> = token.split(['.', '/', '-']).filter(|piece| !piece.is_empty()).collect();
        if pieces.iter().all(|piece| piece.chars().all(|c| c.is_ascii_digit())) {
            numbers.extend(pieces.iter().filter_map(|piece| piece.parse::<i64>().ok().map(|number| (number, piece.len()))));
        } else if let Some(month) = month_of(token) {
            month_word = Some(month);
        }
    }
    let mut hour = hour?;
    match afternoon {
        Some(true) if hour < 12 => hour += 12,
        Some(false) if hour == 12 => hour = 0,
        _ => {}
    }
    let (year, month, day) = match (month_word, numbers.as_slice()) {
        // `Jan 2, 2026` and `2 Jan 2026`.
        (Some(month), [(first, first_len), (second, _)]) => {
            if *first_len == 4 {
                (*first, month, *second)
            } else {
                (*second, month, *first)
            }
        }
        // `2026/01/02`, `2026. 9. 8.`: year first.
        (None, [(year, 4), (month, _), (day, _)]) => (*year, *month, *day),
        // `27.08.2026`, `12. 1. 2026`: day first.
        (None, [(day, _), (month, _), (year, 4)]) => (*year, *month, *day),
        _ => return None,
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    // A day its month does not have would roll over into the next month, and a year past 9999
    // would be written wrapped; both make the record's date unreadable instead.
    check_day(year, month, day).ok()?;
    if !(1..=9999).contains(&year) {
        return None;
    }
    let local = (days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second) * 1_000_000;
    let utc = check_range(local - offset.unwrap_or(0) * 1_000_000).ok()?;
    Some((utc, offset.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timefmt::parse_rfc3339;

    fn utc(text: &str) -> Micros {
        parse_rfc3339(text).unwrap()
    }

    #[test]
    fn reads_the_locales_takeout_writes() {
        let cases = [
            ("Jan 2, 2026, 10:00:00 AM PST", "2026-01-02T18:00:00Z"),
            ("Aug 21, 2026, 12:13:55\u{202f}PM IST", "2026-08-21T06:43:55Z"),
            ("27.08.2026, 20:04:54 MESZ", "2026-08-27T18:04:54Z"),
            ("1. 1. 2026 10:00:00 SEČ", "2026-01-01T09:00:00Z"),
            ("2026. 9. 8. 오후 1:54:14 KST", "2026-09-08T04:54:14Z"),
            ("2026/01/02 10:00:00 JST", "2026-01-02T01:00:00Z"),
            ("17 de fev. de 2026, 14:51:53 BRT", "2026-02-17T17:51:53Z"),
            ("15 jun 2026, 20:30:41 CEST", "2026-06-15T18:30:41Z"),
            ("28 févr. 2026, 22:30:00 UTC+1", "2026-02-28T21:30:00Z"),
            ("18 Sept 2025, 12:02:52 CET", "2025-09-18T11:02:52Z"),
            ("2026年7月30日 00:23:06 CEST", "2026-07-29T22:23:06Z"),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_takeout_time(text), Some((utc(expected), true)), "{text}");
        }
        assert_eq!(parse_takeout_time("Jun 23, 2015, 2:43:45 PM"), Some((utc("2015-06-23T14:43:45Z"), false)));
        assert_eq!(parse_takeout_time("image_1.png"), None);
        assert_eq!(parse_takeout_time("Prompted hello"), None);
    }

    /// Guards the calendar and range checks: `Feb 30` must not roll over to March, and a late
    /// 9999 time in a zone west of UTC must not wrap to year 0000.
    #[test]
    fn impossible_and_out_of_range_dates_are_unreadable() {
        assert_eq!(parse_takeout_time("Feb 30, 2026, 10:00:00 AM UTC"), None);
        assert_eq!(parse_takeout_time("31.04.2026, 10:00:00 MESZ"), None);
        assert_eq!(parse_takeout_time("Feb 29, 2024, 10:00:00 AM UTC"), Some((utc("2024-02-29T10:00:00Z"), true)));
        assert_eq!(parse_takeout_time("Dec 31, 9999, 11:00:00 PM PST"), None);
        assert_eq!(parse_takeout_time("Dec 31, 9999, 11:00:00 PM UTC"), Some((utc("9999-12-31T23:00:00Z"), true)));
    }
}
