//! Anchors the relative times of an English statement to the message's date, so a memory read
//! years later still says when: "ran a half marathon yesterday", written on 2023-05-08, becomes
//! "ran a half marathon on 2023-05-07"; "last year" becomes "in 2022", "two months ago" "in
//! March 2023", "last May" "in May 2023", "on Saturday" the Saturday ahead (or, said of the
//! past, the one before).

use std::sync::LazyLock;

use regex::{Captures, Regex};

use crate::model::Micros;
use crate::timefmt::{civil_from_days, days_from_civil};

const MONTHS: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const WEEKDAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

#[expect(clippy::expect_used, reason = "a literal pattern, checked by the tests")]
pub(super) static RELATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:",
        r"(?P<day>yesterday|today|tonight|tomorrow|this morning|this afternoon|this evening|last night)",
        r"|(?P<rel>last|next|this|this past) (?P<unit>week|month|year|summer|winter|spring|fall|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december)",
        r"|(?P<count>\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve) (?P<ago>day|week|month|year)s? ago",
        r"|on (?P<on_day>monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?: (?P<part>morning|afternoon|evening|night))?",
        r"|(?P<weekend>this weekend)",
        r"|in (?P<month>january|february|march|april|june|july|august|september|october|november|december)\b(?: (?:of )?(?:this|last) year)?(?P<year> \d{4})?",
        r")\b"
    ))
    .expect("a valid relative-time pattern")
});

/// `statement` with its relative times written as dates, counted from `time` (the message's
/// time); `past` tells whether the statement is about the past (an "in May" said of the past
/// is the last May, of the future the next).
pub fn anchor(statement: &str, time: Micros, past: bool) -> String {
    if time <= 0 || !RELATIVE.is_match(statement) {
        return statement.to_owned();
    }
    let today = time.div_euclid(86_400_000_000);
    RELATIVE
        .replace_all(statement, |captures: &Captures| written(captures, today, past).unwrap_or_else(|| captures[0].to_owned()))
        .into_owned()
}

fn written(captures: &Captures, today: i64, past: bool) -> Option<String> {
    let (year, month, _) = civil_from_days(today);
    if let Some(day) = captures.name("day") {
        let offset = match day.as_str().to_lowercase().as_str() {
            "yesterday" | "last night" => -1,
            "tomorrow" => 1,
            _ => 0,
        };
        return Some(format!("on {}", date(today + offset)));
    }
    // "on Saturday", "this weekend": the one ahead, or in a statement of the past the one
    // before.
    let nearest = |weekday: i64| {
        // 1970-01-01 was a Thursday (index 3).
        let delta = weekday - (today + 3).rem_euclid(7);
        today
            + if past {
                if delta < 0 { delta } else { delta - 7 }
            } else if delta > 0 {
                delta
            } else {
                delta + 7
            }
    };
    if let Some(day) = captures.name("on_day") {
        let weekday = WEEKDAYS.iter().position(|name| name.eq_ignore_ascii_case(day.as_str()))? as i64;
        return Some(match captures.name("part") {
            Some(part) => format!("on the {} of {}", part.as_str().to_lowercase(), date(nearest(weekday))),
            None => format!("on {}", date(nearest(weekday))),
        });
    }
    if captures.name("weekend").is_some() {
        return Some(format!("on the weekend of {}", date(nearest(5))));
    }
    if let Some(unit) = captures.name("unit") {
        let direction = match captures.name("rel").map(|rel| rel.as_str().to_lowercase()).as_deref() {
            Some("last" | "this past") => -1,
            Some("next") => 1,
            _ => 0,
        };
        let unit = unit.as_str().to_lowercase();
        if let Some(weekday) = WEEKDAYS.iter().position(|name| *name == unit) {
            // 1970-01-01 was a Thursday (index 3).
            let today_weekday = (today + 3).rem_euclid(7);
            let delta = weekday as i64 - today_weekday;
            let offset = match direction {
                -1 => {
                    if delta < 0 {
                        delta
                    } else {
                        delta - 7
                    }
                }
                1 => {
                    if delta > 0 {
                        delta
                    } else {
                        delta + 7
                    }
                }
                _ => delta,
            };
            return Some(format!("on {}", date(today + offset)));
        }
        if let Some(named) = MONTHS.iter().position(|name| name.eq_ignore_ascii_case(&unit)) {
            let named = named as i64 + 1;
            let in_year = match direction {
                -1 => {
                    if named < month {
                        year
                    } else {
                        year - 1
                    }
                }
                1 => {
                    if named > month {
                        year
                    } else {
                        year + 1
                    }
                }
                _ => year,
            };
            return Some(format!("in {} {in_year}", MONTHS[(named - 1) as usize]));
        }
        return Some(match unit.as_str() {
            "week" => format!("in the week of {}", date(today + 7 * direction)),
            "month" => {
                let (in_year, in_month) = shifted_month(year, month, direction);
                format!("in {} {in_year}", MONTHS[(in_month - 1) as usize])
            }
            "year" => format!("in {}", year + direction),
            season => {
                let season = if season == "autumn" { "fall" } else { season };
                let season_year = if direction < 0 && !season_is_over(season, month) { year - 1 } else { year + i64::from(direction > 0) };
                format!("in {season} {season_year}")
            }
        });
    }
    if let Some(unit) = captures.name("ago") {
        let count = number(&captures["count"])?;
        let unit = unit.as_str().to_lowercase();
        return Some(match unit.as_str() {
            "day" => format!("on {}", date(today - count)),
            "week" => format!("around {}", date(today - 7 * count)),
            "month" => {
                let (in_year, in_month) = shifted_month(year, month, -count);
                format!("in {} {in_year}", MONTHS[(in_month - 1) as usize])
            }
            _ => format!("in {}", year - count),
        });
    }
    let named = MONTHS.iter().position(|name| name.eq_ignore_ascii_case(&captures["month"]))? as i64 + 1;
    if let Some(explicit) = captures.name("year") {
        return Some(format!("in {}{}", MONTHS[(named - 1) as usize], explicit.as_str()));
    }
    let in_year = if past {
        if named <= month { year } else { year - 1 }
    } else if named >= month {
        year
    } else {
        year + 1
    };
    Some(format!("in {} {in_year}", MONTHS[(named - 1) as usize]))
}

/// Whether `season` of this year has ended by `month` (a "last summer" said in October is this
/// year's).
pub(super) fn season_is_over(season: &str, month: i64) -> bool {
    match season {
        "spring" => month > 5,
        "summer" => month > 8,
        "fall" => month > 11,
        _ => month >= 3,
    }
}

pub(super) fn shifted_month(year: i64, month: i64, by: i64) -> (i64, i64) {
    let index = year * 12 + (month - 1) + by;
    (index.div_euclid(12), index.rem_euclid(12) + 1)
}

pub(super) fn date(days: i64) -> String {
    let (year, month, day) = civil_from_days(days);
    debug_assert_eq!(days_from_civil(year, month, day), days);
    format!("{year:04}-{month:02}-{day:02}")
}

fn number(word: &str) -> Option<i64> {
    Some(match word.to_lowercase().as_str() {
        "a" | "an" | "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "twelve" => 12,
        digits => digits.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-05-08T12:00:00Z, a Monday.
    const MONDAY: Micros = 1_683_547_200_000_000;

    #[test]
    fn relative_days_weeks_months_and_years_become_dates() {
        assert_eq!(anchor("Ran a half marathon yesterday", MONDAY, true), "Ran a half marathon on 2023-05-07");
        assert_eq!(anchor("Ran a half marathon last Sunday", MONDAY, true), "Ran a half marathon on 2023-05-07");
        assert_eq!(anchor("Moved to Oslo last year", MONDAY, true), "Moved to Oslo in 2022");
        assert_eq!(anchor("Got married two months ago", MONDAY, true), "Got married in March 2023");
        assert_eq!(anchor("Graduated in June", MONDAY, true), "Graduated in June 2022");
        assert_eq!(anchor("Will start a new job in June", MONDAY, false), "Will start a new job in June 2023");
        assert_eq!(anchor("Visited Rome last summer", MONDAY, true), "Visited Rome in summer 2022");
        assert_eq!(anchor("Adopted a cat 3 days ago", MONDAY, true), "Adopted a cat on 2023-05-05");
        assert_eq!(anchor("Is moving to Lyon next month", MONDAY, false), "Is moving to Lyon in June 2023");
        assert_eq!(anchor("Is going to a wedding on Saturday", MONDAY, false), "Is going to a wedding on 2023-05-13");
        assert_eq!(anchor("Ran a 10k on Saturday", MONDAY, true), "Ran a 10k on 2023-05-06");
        assert_eq!(anchor("Is flying to Rome on Monday", MONDAY, false), "Is flying to Rome on 2023-05-15");
        assert_eq!(anchor("Is going to a wedding this weekend", MONDAY, false), "Is going to a wedding on the weekend of 2023-05-13");
        assert_eq!(anchor("Goes swimming on Saturdays", MONDAY, false), "Goes swimming on Saturdays");
        assert_eq!(anchor("Is going to a concert on Saturday night", MONDAY, false), "Is going to a concert on the night of 2023-05-13");
    }

    #[test]
    fn a_statement_without_relative_times_or_a_date_is_unchanged() {
        assert_eq!(anchor("Lives in Leeds", MONDAY, false), "Lives in Leeds");
        assert_eq!(anchor("Ran yesterday", 0, true), "Ran yesterday");
    }
}
