//! RFC 3339 UTC formatting and parsing of timestamps, without a calendar crate.
//!
//! Every time parsed here lies in years 0001–9999 in UTC: the four-digit RFC 3339 year cannot
//! say any other, so a time outside them (a late-9999 time read at a negative offset) is refused
//! rather than written with a wrapped year.

use crate::model::Micros;

/// 0001-01-01T00:00:00Z, the first time an RFC 3339 year can say.
pub const MIN_MICROS: Micros = -62_135_596_800_000_000;
/// 9999-12-31T23:59:59.999999Z, the last time an RFC 3339 year can say.
pub const MAX_MICROS: Micros = 253_402_300_799_999_999;

/// Why a date-time text cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeError {
    /// Not a date-time in a form memport reads.
    Unreadable,
    /// A day its month does not have (`2026-02-30`), which a calendar computation would
    /// otherwise roll over into the next month.
    NoSuchDay {
        /// The year as written.
        year: i64,
        /// The month, 1–12.
        month: i64,
        /// The day as written, 1–31.
        day: i64,
    },
    /// Outside years 0001–9999 once converted to UTC.
    OutOfRange,
}

impl std::fmt::Display for TimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            TimeError::Unreadable => f.write_str("not a date-time memport reads"),
            TimeError::NoSuchDay { year, month, day } => {
                let name = MONTH_NAMES.get((month - 1).clamp(0, 11) as usize).copied().unwrap_or("that month");
                write!(f, "{year:04}-{month:02}-{day:02} is not a date: {name} {year:04} has {} days", days_in_month(year, month))
            }
            TimeError::OutOfRange => f.write_str("outside years 0001-9999 once converted to UTC"),
        }
    }
}

impl std::error::Error for TimeError {}

/// English month names, for [`TimeError::NoSuchDay`].
const MONTH_NAMES: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/// Days in `month` (1–12) of `year`, proleptic Gregorian.
pub fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Refuses a day its month does not have; the caller has checked month 1–12 and day 1–31.
///
/// # Errors
/// [`TimeError::NoSuchDay`].
pub fn check_day(year: i64, month: i64, day: i64) -> Result<(), TimeError> {
    if day > days_in_month(year, month) { Err(TimeError::NoSuchDay { year, month, day }) } else { Ok(()) }
}

/// `micros` when it lies in years 0001–9999 ([`MIN_MICROS`]..=[`MAX_MICROS`]).
///
/// # Errors
/// [`TimeError::OutOfRange`] otherwise.
pub fn check_range(micros: Micros) -> Result<Micros, TimeError> {
    if (MIN_MICROS..=MAX_MICROS).contains(&micros) { Ok(micros) } else { Err(TimeError::OutOfRange) }
}

/// Converts float epoch seconds (ChatGPT's `create_time`) to microseconds, rounding to the
/// nearest microsecond. Returns `None` for NaN, infinities and values outside years 1–9999.
pub fn micros_from_epoch_seconds(seconds: f64) -> Option<Micros> {
    if !seconds.is_finite() {
        return None;
    }
    let micros = (seconds * 1_000_000.0).round();
    // Years 1..=9999 keep the four-digit RFC 3339 year.
    const MIN: f64 = -62_135_596_800_000_000.0;
    const MAX: f64 = 253_402_300_799_000_000.0;
    if !(MIN..=MAX).contains(&micros) {
        return None;
    }
    Some(micros as Micros)
}

/// Formats as `YYYY-MM-DDTHH:MM:SSZ`, adding `.ffffff` only when there are microseconds.
pub fn format_rfc3339(micros: Micros) -> String {
    let mut out = String::with_capacity(27);
    write_rfc3339(&mut out, micros);
    out
}

/// Appends the RFC 3339 form of `micros` to `out` (see [`format_rfc3339`]).
pub fn write_rfc3339(out: &mut String, micros: Micros) {
    let mut bytes = [0u8; 27];
    let length = rfc3339_bytes(&mut bytes, micros);
    // Every byte written is an ASCII digit or one of `-T:.Z`.
    out.push_str(std::str::from_utf8(&bytes[..length]).unwrap_or_default());
}

/// Appends the RFC 3339 form of `micros` to `out` as bytes (see [`format_rfc3339`]), for
/// writers that build records as bytes.
pub fn push_rfc3339_bytes(out: &mut Vec<u8>, micros: Micros) {
    let mut bytes = [0u8; 27];
    let length = rfc3339_bytes(&mut bytes, micros);
    out.extend_from_slice(&bytes[..length]);
}

/// Writes the RFC 3339 form of `micros` into `bytes` and returns its length (20 or 27). Filled
/// in place from a table of digit pairs: this runs for every record written, and building it
/// a character at a time with divisions showed up in profiles.
fn rfc3339_bytes(bytes: &mut [u8; 27], micros: Micros) -> usize {
    let seconds = micros.div_euclid(1_000_000);
    let sub_micros = micros.rem_euclid(1_000_000) as usize;
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400) as usize;
    let (year, month, day) = civil_from_days(days);
    let year = year.rem_euclid(10_000) as usize;
    put_pair(bytes, 0, year / 100);
    put_pair(bytes, 2, year % 100);
    bytes[4] = b'-';
    put_pair(bytes, 5, month as usize);
    bytes[7] = b'-';
    put_pair(bytes, 8, day as usize);
    bytes[10] = b'T';
    put_pair(bytes, 11, second_of_day / 3600);
    bytes[13] = b':';
    put_pair(bytes, 14, (second_of_day % 3600) / 60);
    bytes[16] = b':';
    put_pair(bytes, 17, second_of_day % 60);
    if sub_micros == 0 {
        bytes[19] = b'Z';
        return 20;
    }
    bytes[19] = b'.';
    put_pair(bytes, 20, sub_micros / 10_000);
    put_pair(bytes, 22, (sub_micros / 100) % 100);
    put_pair(bytes, 24, sub_micros % 100);
    bytes[26] = b'Z';
    27
}

/// Two decimal digits of `value` (below 100) at `at`.
fn put_pair(bytes: &mut [u8; 27], at: usize, value: usize) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";
    let value = value % 100;
    bytes[at] = PAIRS[value * 2];
    bytes[at + 1] = PAIRS[value * 2 + 1];
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` into UTC microseconds; `None` when it
/// cannot be read, names a day its month does not have, or lies outside years 0001–9999 in UTC
/// (see [`read_rfc3339`] for which).
pub fn parse_rfc3339(text: &str) -> Option<Micros> {
    read_rfc3339(text).ok()
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` into UTC microseconds.
///
/// # Errors
/// [`TimeError::NoSuchDay`] for a day its month does not have (`2026-02-30`),
/// [`TimeError::OutOfRange`] for a time outside years 0001–9999 once in UTC
/// (`9999-12-31T23:00:00-05:00`), [`TimeError::Unreadable`] for anything else that is not such
/// a time.
pub fn read_rfc3339(text: &str) -> Result<Micros, TimeError> {
    use TimeError::Unreadable;
    let bytes = text.as_bytes();
    if bytes.len() < 20 {
        return Err(Unreadable);
    }
    let number = |range: std::ops::Range<usize>| -> Result<i64, TimeError> {
        let digits = text.get(range).ok_or(Unreadable)?;
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Unreadable);
        }
        digits.parse().map_err(|_| Unreadable)
    };
    let separators_ok =
        bytes[4] == b'-' && bytes[7] == b'-' && matches!(bytes[10], b'T' | b't' | b' ') && bytes[13] == b':' && bytes[16] == b':';
    if !separators_ok {
        return Err(Unreadable);
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return Err(Unreadable);
    }
    let mut position = 19;
    let mut fraction_micros = 0i64;
    if bytes.get(position) == Some(&b'.') {
        position += 1;
        let start = position;
        while position < bytes.len() && bytes[position].is_ascii_digit() {
            position += 1;
        }
        if position == start {
            return Err(Unreadable);
        }
        let digits = &text[start..position.min(start + 6)];
        fraction_micros = digits.parse::<i64>().map_err(|_| Unreadable)? * 10i64.pow(6 - digits.len() as u32);
    }
    let offset_seconds = match bytes.get(position).ok_or(Unreadable)? {
        b'Z' | b'z' if position + 1 == bytes.len() => 0,
        sign @ (b'+' | b'-') if position + 6 == bytes.len() && bytes[position + 3] == b':' => {
            let hours = number(position + 1..position + 3)?;
            let minutes = number(position + 4..position + 6)?;
            let magnitude = hours * 3600 + minutes * 60;
            if *sign == b'+' { magnitude } else { -magnitude }
        }
        _ => return Err(Unreadable),
    };
    // Checked once the whole text is known to be a time, so a malformed text is unreadable
    // rather than a wrong date.
    check_day(year, month, day)?;
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_seconds;
    check_range(seconds * 1_000_000 + fraction_micros)
}

/// A wall-clock time that may or may not say its zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WallTime {
    /// The wall-clock reading as if it were UTC, in microseconds.
    pub naive: Micros,
    /// The zone's offset from UTC in seconds, when the text gives one.
    pub offset_seconds: Option<i64>,
}

impl WallTime {
    /// UTC microseconds, reading a zoneless time at `assumed_offset_seconds`.
    ///
    /// # Errors
    /// [`TimeError::OutOfRange`] when the offset moves the time outside years 0001–9999
    /// (`9999-12-31T23:00:00` read at `-05:00`).
    pub fn to_utc(self, assumed_offset_seconds: i64) -> Result<Micros, TimeError> {
        check_range(self.naive - self.offset_seconds.unwrap_or(assumed_offset_seconds) * 1_000_000)
    }
}

/// Parses the date-times of CSV exports: RFC 3339 with or without a zone
/// (`2026-07-06T15:38:42`), and US style `M/D/YYYY H:MM:SS [AM|PM] [±HH:MM]`; `None` when it
/// cannot (see [`read_wall_time`] for why).
pub fn parse_wall_time(text: &str) -> Option<WallTime> {
    read_wall_time(text).ok()
}

/// Parses the date-times of CSV exports, as [`parse_wall_time`].
///
/// # Errors
/// [`TimeError::NoSuchDay`] for a day its month does not have, [`TimeError::OutOfRange`] for a
/// time with a zone outside years 0001–9999 in UTC, [`TimeError::Unreadable`] otherwise.
pub fn read_wall_time(text: &str) -> Result<WallTime, TimeError> {
    use TimeError::Unreadable;
    let text = text.trim();
    match read_rfc3339(text) {
        // read_rfc3339 applied the zone already: the result is a UTC reading.
        Ok(utc) => return Ok(WallTime { naive: utc, offset_seconds: Some(0) }),
        Err(Unreadable) => {}
        Err(error) => return Err(error),
    }
    if text.len() >= 19 && text.as_bytes()[4] == b'-' {
        let zoneless = text.get(..text.len().min(26)).ok_or(Unreadable)?;
        let naive = read_rfc3339(&format!("{zoneless}Z"))?;
        return Ok(WallTime { naive, offset_seconds: None });
    }
    let (date, rest) = text.split_once(' ').ok_or(Unreadable)?;
    let mut date_parts = date.split('/');
    let mut part = || -> Result<i64, TimeError> { date_parts.next().ok_or(Unreadable)?.parse().map_err(|_| Unreadable) };
    let (month, day, year) = (part()?, part()?, part()?);
    let mut words = rest.split_whitespace();
    let mut clock = words.next().ok_or(Unreadable)?.split(':');
    let mut clock_part =
        || -> Result<Option<i64>, TimeError> { clock.next().map(|piece| piece.parse().map_err(|_| Unreadable)).transpose() };
    let mut hour = clock_part()?.ok_or(Unreadable)?;
    let minute = clock_part()?.ok_or(Unreadable)?;
    let second = clock_part()?.unwrap_or(0);
    let mut offset_seconds = None;
    for word in words {
        match word.to_ascii_uppercase().as_str() {
            "AM" if hour == 12 => hour = 0,
            "PM" if hour < 12 => hour += 12,
            "AM" | "PM" => {}
            zone => offset_seconds = Some(parse_offset(zone).ok_or(Unreadable)?),
        }
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return Err(Unreadable);
    }
    check_day(year, month, day)?;
    // The year may be any number here: keep the arithmetic in range before the caller checks
    // the UTC result.
    if !(1..=9999).contains(&year) {
        return Err(TimeError::OutOfRange);
    }
    let naive = (days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second) * 1_000_000;
    Ok(WallTime { naive, offset_seconds })
}

/// Parses `±HH:MM`, `±HHMM`, `UTC`/`Z` (and `UTC±HH:MM`, `GMT±HH:MM`) into seconds east of UTC.
pub fn parse_offset(text: &str) -> Option<i64> {
    let text = text.trim();
    let upper = text.to_ascii_uppercase();
    let rest = upper.strip_prefix("UTC").or_else(|| upper.strip_prefix("GMT")).unwrap_or(&upper);
    if rest.is_empty() || rest == "Z" {
        return Some(0);
    }
    let (sign, digits) = match rest.as_bytes().first()? {
        b'+' => (1, &rest[1..]),
        b'-' => (-1, &rest[1..]),
        _ => return None,
    };
    let (hours, minutes) = match digits.split_once(':') {
        Some((hours, minutes)) => (hours.parse::<i64>().ok()?, minutes.parse::<i64>().ok()?),
        None if digits.len() == 4 => (digits[..2].parse().ok()?, digits[2..].parse().ok()?),
        None => (digits.parse().ok()?, 0),
    };
    if hours > 18 || minutes > 59 {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60))
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// (year, month, day) to days since 1970-01-01, the inverse of [`civil_from_days`].
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_epoch_and_fractions() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        let micros = micros_from_epoch_seconds(1_695_838_574.123_456).unwrap();
        assert_eq!(format_rfc3339(micros), "2023-09-27T18:16:14.123456Z");
        assert_eq!(format_rfc3339(-1), "1969-12-31T23:59:59.999999Z");
    }

    #[test]
    fn parses_what_it_formats_and_offsets() {
        for micros in [0, 1_695_838_574_123_456, 951_782_400_000_000, -86_400_000_000] {
            assert_eq!(parse_rfc3339(&format_rfc3339(micros)), Some(micros));
        }
        assert_eq!(parse_rfc3339("2026-06-13T17:00:00+02:00"), parse_rfc3339("2026-06-13T15:00:00Z"));
        assert_eq!(parse_rfc3339("2026-06-13"), None);
        assert_eq!(parse_rfc3339("2026-13-13T15:00:00Z"), None);
    }

    #[test]
    fn parses_csv_wall_times() {
        let naive = parse_wall_time("2026-07-06T15:38:42").unwrap();
        assert_eq!(naive.offset_seconds, None);
        assert_eq!(naive.to_utc(2 * 3600), Ok(parse_rfc3339("2026-07-06T13:38:42Z").unwrap()));
        let us = parse_wall_time("1/2/2026 3:04:05 PM +01:00").unwrap();
        assert_eq!(us.to_utc(0), Ok(parse_rfc3339("2026-01-02T14:04:05Z").unwrap()));
        assert_eq!(parse_wall_time("2026-01-01T10:00:00Z").unwrap().to_utc(3600), Ok(parse_rfc3339("2026-01-01T10:00:00Z").unwrap()));
        assert_eq!(parse_offset("-05:30"), Some(-(5 * 3600 + 30 * 60)));
        assert_eq!(parse_offset("Europe/Berlin"), None);
        assert_eq!(parse_wall_time("yesterday"), None);
    }

    #[test]
    fn rejects_non_finite_and_out_of_range() {
        assert_eq!(micros_from_epoch_seconds(f64::NAN), None);
        assert_eq!(micros_from_epoch_seconds(1e20), None);
    }

    /// Guards the calendar check: days_from_civil rolls 2026-02-30 over to 2026-03-02, so a day
    /// its month does not have must be refused before it gets there, with the reason.
    #[test]
    fn a_day_the_month_does_not_have_is_refused_not_rolled_over() {
        let no_such_day = TimeError::NoSuchDay { year: 2026, month: 2, day: 30 };
        assert_eq!(read_rfc3339("2026-02-30T10:00:00Z"), Err(no_such_day));
        assert_eq!(read_wall_time("2026-02-30T10:03:00"), Err(no_such_day));
        assert_eq!(read_wall_time("2/30/2026 10:03:00 AM"), Err(no_such_day));
        assert_eq!(parse_wall_time("2026-02-30T10:03:00"), None);
        assert_eq!(no_such_day.to_string(), "2026-02-30 is not a date: February 2026 has 28 days");
        assert_eq!(read_rfc3339("2026-04-31T00:00:00+02:00"), Err(TimeError::NoSuchDay { year: 2026, month: 4, day: 31 }));
        // Leap years: every 4th, not every 100th, but every 400th.
        assert!(parse_rfc3339("2024-02-29T00:00:00Z").is_some());
        assert!(parse_rfc3339("2000-02-29T00:00:00Z").is_some());
        assert_eq!(read_rfc3339("2100-02-29T00:00:00Z"), Err(TimeError::NoSuchDay { year: 2100, month: 2, day: 29 }));
        assert_eq!(read_rfc3339("2026-02-30"), Err(TimeError::Unreadable));
        assert_eq!(read_rfc3339("2026-02-31T00:00:00 garbage"), Err(TimeError::Unreadable));
    }

    /// Guards the year range: RFC 3339 has four-digit years, and the formatter would write a
    /// time past 9999 in UTC as year 0000.
    #[test]
    fn times_outside_years_1_to_9999_in_utc_are_refused_not_wrapped() {
        assert_eq!(read_rfc3339("9999-12-31T23:00:00-05:00"), Err(TimeError::OutOfRange));
        assert_eq!(read_rfc3339("0001-01-01T00:30:00+01:00"), Err(TimeError::OutOfRange));
        assert_eq!(read_rfc3339("0000-06-01T00:00:00Z"), Err(TimeError::OutOfRange));
        let last = read_rfc3339("9999-12-31T23:59:59.999999Z");
        assert_eq!(last, Ok(MAX_MICROS));
        assert_eq!(format_rfc3339(MAX_MICROS), "9999-12-31T23:59:59.999999Z");
        assert_eq!(read_rfc3339("0001-01-01T00:00:00Z"), Ok(MIN_MICROS));
        assert_eq!(format_rfc3339(MIN_MICROS), "0001-01-01T00:00:00Z");
        let late = parse_wall_time("9999-12-31T23:00:00").unwrap();
        assert_eq!(late.to_utc(-5 * 3600), Err(TimeError::OutOfRange));
        assert!(late.to_utc(5 * 3600).is_ok());
        assert_eq!(read_wall_time("12/31/9999 11:00:00 PM -05:00"), Ok(WallTime { naive: late.naive, offset_seconds: Some(-5 * 3600) }));
        assert_eq!(read_wall_time("12/31/9999 11:00:00 PM -05:00").unwrap().to_utc(0), Err(TimeError::OutOfRange));
        assert_eq!(read_wall_time("1/1/10000 0:00:00"), Err(TimeError::OutOfRange));
    }
}
