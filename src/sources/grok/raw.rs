//! Serde model of one element of `prod-grok-backend.json`'s `conversations` array, every field
//! lenient; both the 2025 shape (`conversation_id`, `response_id`, ISO times) and the 2026
//! shape (`id`, `_id`, Mongo `{"$date":{"$numberLong":…}}` times) read into the same fields.
#![allow(missing_docs)]

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::model::Micros;
use crate::sources::lenient::ArrayField;
use crate::sources::lenient::{self, List, Object, Text};
use crate::timefmt::{TimeError, check_range, read_rfc3339};

/// `{"conversation": {…}, "responses": [{"response": {…}}]}`.
#[derive(Debug, Deserialize)]
pub struct RawElement<'a> {
    #[serde(borrow, default)]
    pub conversation: Object<RawConversation<'a>>,
    /// Anything but an array here is kept apart from an empty list ([`ArrayField`]): the
    /// conversation's responses are lost, not absent.
    #[serde(borrow, default)]
    pub responses: Option<ArrayField<Object<RawResponseEntry<'a>>>>,
}

#[derive(Debug, Deserialize)]
pub struct RawConversation<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub conversation_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub title: Option<Cow<'a, str>>,
    #[serde(default)]
    pub create_time: GrokTime,
    #[serde(default)]
    pub modify_time: GrokTime,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub leaf_response_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub system_prompt_name: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
pub struct RawResponseEntry<'a> {
    #[serde(borrow, default)]
    pub response: Object<RawResponse<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct RawResponse<'a> {
    #[serde(borrow, default, rename = "_id", deserialize_with = "lenient::string")]
    pub mongo_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub response_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub message: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub sender: Option<Cow<'a, str>>,
    #[serde(default)]
    pub create_time: GrokTime,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub parent_response_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub metadata: Object<RawMetadata<'a>>,
    #[serde(borrow, default)]
    pub generated_image_urls: Option<List<Text<'a>>>,
    #[serde(borrow, default)]
    pub image_attachments: Option<List<Text<'a>>>,
    #[serde(borrow, default)]
    pub file_attachments: Option<List<Text<'a>>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub thinking_trace: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub error: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "lenient::boolean")]
    pub partial: Option<bool>,
    #[serde(borrow, default)]
    pub cited_web_search_results: Option<List<Object<RawCitation<'a>>>>,
}

#[derive(Debug, Deserialize)]
pub struct RawMetadata<'a> {
    #[serde(borrow, default)]
    pub request_metadata: Object<RawRequestMetadata<'a>>,
    #[serde(borrow, default, rename = "requestModelDetails")]
    pub request_model_details: Object<RawModelDetails<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct RawRequestMetadata<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub resolved_model: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub model: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
pub struct RawModelDetails<'a> {
    #[serde(borrow, default, rename = "modelId", deserialize_with = "lenient::string")]
    pub model_id: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
pub struct RawCitation<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub url: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub title: Option<Cow<'a, str>>,
}

/// A Grok time: an ISO string, Mongo extended JSON `{"$date":{"$numberLong":"<ms>"}}` or
/// `{"$date":"<ISO>"}` or `{"$date":<ms>}`, or a bare number of milliseconds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub enum GrokTime {
    /// Absent, `null`, or in no form memport reads: the export's habit, so the response
    /// takes its parent's time.
    #[default]
    Unknown,
    /// UTC microseconds.
    At(Micros),
    /// A time that reads but cannot be right: a day its month does not have, or outside years
    /// 0001–9999 (which would be written with a wrapped year). The decoder rejects what it
    /// dates rather than fall back to another time without a word.
    Wrong {
        /// The value as written, for the reject.
        written: String,
        /// What is wrong with it.
        error: TimeError,
    },
}

impl GrokTime {
    /// The time when it was read.
    pub fn micros(&self) -> Option<Micros> {
        match self {
            GrokTime::At(micros) => Some(*micros),
            _ => None,
        }
    }

    /// Why the time cannot be right, naming the field it was in, when it cannot.
    pub fn problem(&self, field: &str) -> Option<String> {
        match self {
            GrokTime::Wrong { written, error } => Some(format!("`{field}` {written}: {error}")),
            _ => None,
        }
    }

    /// An epoch time in milliseconds, written as `written`.
    fn from_epoch_millis(millis: f64, written: impl fmt::Display) -> GrokTime {
        match from_millis(millis) {
            Ok(micros) => GrokTime::At(micros),
            // NaN or an infinity (a string such as "inf"): no time, not a wrong one.
            Err(TimeError::Unreadable) => GrokTime::Unknown,
            Err(error) => GrokTime::Wrong { written: format!("{written} (epoch milliseconds)"), error },
        }
    }
}

impl<'de> Deserialize<'de> for GrokTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TimeVisitor)
    }
}

struct TimeVisitor;

/// Epoch milliseconds as microseconds.
///
/// # Errors
/// [`TimeError::OutOfRange`] outside years 0001–9999 (a time past them would be written with a
/// wrapped year); [`TimeError::Unreadable`] for NaN and infinities.
fn from_millis(millis: f64) -> Result<Micros, TimeError> {
    if !millis.is_finite() {
        return Err(TimeError::Unreadable);
    }
    // Past 10^16 ms (year 318857) the product would saturate the cast; such times are far
    // outside the range anyway.
    if millis.abs() >= 1e16 {
        return Err(TimeError::OutOfRange);
    }
    check_range((millis * 1000.0).round() as Micros)
}

impl<'de> Visitor<'de> for TimeVisitor {
    type Value = GrokTime;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a time")
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        Ok(match read_rfc3339(value) {
            Ok(micros) => GrokTime::At(micros),
            // Milliseconds as a string (`$numberLong`), or no time at all.
            Err(TimeError::Unreadable) => match value.trim().parse::<f64>() {
                Ok(millis) => GrokTime::from_epoch_millis(millis, value),
                Err(_) => GrokTime::Unknown,
            },
            Err(error) => GrokTime::Wrong { written: format!("`{value}`"), error },
        })
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        Ok(GrokTime::from_epoch_millis(value as f64, value))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        Ok(GrokTime::from_epoch_millis(value as f64, value))
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        Ok(GrokTime::from_epoch_millis(value, value))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(GrokTime::Unknown)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(GrokTime::Unknown)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(GrokTime::Unknown)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(GrokTime::Unknown)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // `{"$date": …}` and `{"$numberLong": "…"}` both reduce to the inner value.
        let mut found = GrokTime::Unknown;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "$date" || key == "$numberLong" {
                found = map.next_value::<GrokTime>()?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timefmt::parse_rfc3339;

    fn parse(json: &str) -> GrokTime {
        serde_json::from_str::<GrokTime>(json).unwrap()
    }

    #[test]
    fn reads_both_clock_formats() {
        let expected = parse_rfc3339("2026-08-30T12:24:10.033Z");
        assert_eq!(parse(r#"{"$date":{"$numberLong":"1788092650033"}}"#).micros(), expected);
        assert_eq!(parse(r#""2026-08-30T12:24:10.033000Z""#).micros(), expected);
        assert_eq!(parse(r#"{"$date":"2026-08-30T12:24:10.033Z"}"#).micros(), expected);
        assert_eq!(parse(r#"{"$date":1788092650033}"#).micros(), expected);
        assert_eq!(parse("null"), GrokTime::Unknown);
        assert_eq!(parse(r#"{"other":1}"#), GrokTime::Unknown);
        assert_eq!(parse(r#""soon""#), GrokTime::Unknown);
    }

    /// Guards the year range of Grok times: 253402300800000 ms is 10000-01-01, i64::MAX ms is
    /// far past it, and 9999-12-31T23:30:00-05:00 is in year 10000 in UTC. They were read as
    /// no time, so the response silently took its parent's; they must say what is wrong.
    #[test]
    fn times_outside_years_1_to_9999_are_wrong_not_unknown() {
        let out_of_range = |written: &str| GrokTime::Wrong { written: written.to_owned(), error: TimeError::OutOfRange };
        assert_eq!(parse(r#"{"$date":{"$numberLong":"253402300800000"}}"#), out_of_range("253402300800000 (epoch milliseconds)"));
        assert_eq!(parse(r#"{"$date":{"$numberLong":"9223372036854775807"}}"#), out_of_range("9223372036854775807 (epoch milliseconds)"));
        assert_eq!(parse("-100000000000000"), out_of_range("-100000000000000 (epoch milliseconds)"));
        assert_eq!(parse(r#""9999-12-31T23:30:00-05:00""#), out_of_range("`9999-12-31T23:30:00-05:00`"));
        assert_eq!(parse("253402300799000").micros(), parse_rfc3339("9999-12-31T23:59:59Z"));
        assert_eq!(
            parse(r#""9999-12-31T23:30:00-05:00""#).problem("create_time").as_deref(),
            Some("`create_time` `9999-12-31T23:30:00-05:00`: outside years 0001-9999 once converted to UTC")
        );
        let no_such_day = parse(r#""2026-02-30T10:00:00Z""#);
        assert_eq!(
            no_such_day,
            GrokTime::Wrong { written: "`2026-02-30T10:00:00Z`".into(), error: TimeError::NoSuchDay { year: 2026, month: 2, day: 30 } }
        );
    }
}
