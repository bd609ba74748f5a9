//! RFC 3339 UTC formatting and parsing of timestamps, without a calendar crate.

use crate::model::Micros;

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

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` into UTC microseconds.
pub fn parse_rfc3339(text: &str) -> Option<Micros> {
    let bytes = text.as_bytes();
    if bytes.len() < 20 {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = text.get(range)?;
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    };
    let separators_ok =
        bytes[4] == b'-' && bytes[7] == b'-' && matches!(bytes[10], b'T' | b't' | b' ') && bytes[13] == b':' && bytes[16] == b':';
    if !separators_ok {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
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
            return None;
        }
        let digits = &text[start..position.min(start + 6)];
        fraction_micros = digits.parse::<i64>().ok()? * 10i64.pow(6 - digits.len() as u32);
    }
    let offset_seconds = match bytes.get(position)? {
        b'Z' | b'z' if position + 1 == bytes.len() => 0,
        sign @ (b'+' | b'-') if position + 6 == bytes.len() && bytes[position + 3] == b':' => {
            let hours = number(position + 1..position + 3)?;
            let minutes = number(position + 4..position + 6)?;
            let magnitude = hours * 3600 + minutes * 60;
            if *sign == b'+' { magnitude } else { -magnitude }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_seconds;
    Some(seconds * 1_000_000 + fraction_micros)
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
    pub fn to_utc(self, assumed_offset_seconds: i64) -> Micros {
        self.naive - self.offset_seconds.unwrap_or(assumed_offset_seconds) * 1_000_000
    }
}

/// Parses the date-times of CSV exports: RFC 3339 with or without a zone
/// (`2026-07-06T15:38:42`), and US style `M/D/YYYY H:MM:SS [AM|PM] [±HH:MM]`.
pub fn parse_wall_time(text: &str) -> Option<WallTime> {
    let text = text.trim();
    if let Some(utc) = parse_rfc3339(text) {
        // parse_rfc3339 applied the zone already: the result is a UTC reading.
        return Some(WallTime { naive: utc, offset_seconds: Some(0) });
    }
    if text.len() >= 19 && text.as_bytes()[4] == b'-' {
        let naive = parse_rfc3339(&format!("{}Z", &text[..text.len().min(26)]))?;
        return Some(WallTime { naive, offset_seconds: None });
    }
    let (date, rest) = text.split_once(' ')?;
    let mut date_parts = date.split('/');
    let month: i64 = date_parts.next()?.parse().ok()?;
    let day: i64 = date_parts.next()?.parse().ok()?;
    let year: i64 = date_parts.next()?.parse().ok()?;
    let mut words = rest.split_whitespace();
    let mut clock = words.next()?.split(':');
    let mut hour: i64 = clock.next()?.parse().ok()?;
    let minute: i64 = clock.next()?.parse().ok()?;
    let second: i64 = clock.next().map_or(Some(0), |second| second.parse().ok())?;
    let mut offset_seconds = None;
    for word in words {
        match word.to_ascii_uppercase().as_str() {
            "AM" if hour == 12 => hour = 0,
            "PM" if hour < 12 => hour += 12,
            "AM" | "PM" => {}
            zone => offset_seconds = Some(parse_offset(zone)?),
        }
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let naive = (days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second) * 1_000_000;
    Some(WallTime { naive, offset_seconds })
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
fn civil_from_days(days: i64) -> (i64, i64, i64) {
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
        assert_eq!(naive.to_utc(2 * 3600), parse_rfc3339("2026-07-06T13:38:42Z").unwrap());
        let us = parse_wall_time("1/2/2026 3:04:05 PM +01:00").unwrap();
        assert_eq!(us.to_utc(0), parse_rfc3339("2026-01-02T14:04:05Z").unwrap());
        assert_eq!(parse_wall_time("2026-01-01T10:00:00Z").unwrap().to_utc(3600), parse_rfc3339("2026-01-01T10:00:00Z").unwrap());
        assert_eq!(parse_offset("-05:30"), Some(-(5 * 3600 + 30 * 60)));
        assert_eq!(parse_offset("Europe/Berlin"), None);
        assert_eq!(parse_wall_time("yesterday"), None);
    }

    #[test]
    fn rejects_non_finite_and_out_of_range() {
        assert_eq!(micros_from_epoch_seconds(f64::NAN), None);
        assert_eq!(micros_from_epoch_seconds(1e20), None);
    }
}
