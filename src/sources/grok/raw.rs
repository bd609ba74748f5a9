//! Serde model of one element of `prod-grok-backend.json`'s `conversations` array, every field
//! lenient; both the 2025 shape (`conversation_id`, `response_id`, ISO times) and the 2026
//! shape (`id`, `_id`, Mongo `{"$date":{"$numberLong":…}}` times) read into the same fields.
#![allow(missing_docs)]

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::model::Micros;
use crate::sources::lenient::{self, List, Object, Text};
use crate::timefmt::{check_range, parse_rfc3339};

/// `{"conversation": {…}, "responses": [{"response": {…}}]}`.
#[derive(Debug, Deserialize)]
pub struct RawElement<'a> {
    #[serde(borrow, default)]
    pub conversation: Object<RawConversation<'a>>,
    #[serde(borrow, default)]
    pub responses: Option<List<Object<RawResponseEntry<'a>>>>,
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
/// `{"$date":"<ISO>"}` or `{"$date":<ms>}`, or a bare number of milliseconds. Anything else
/// (and an unparsable value) is `None`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct GrokTime(pub Option<Micros>);

impl<'de> Deserialize<'de> for GrokTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TimeVisitor).map(GrokTime)
    }
}

struct TimeVisitor;

/// Epoch milliseconds as microseconds, when they fall in years 0001–9999 (a time past them
/// would be written with a wrapped year).
fn from_millis(millis: f64) -> Option<Micros> {
    // The cast saturates far outside the range, which `check_range` then refuses.
    (millis.is_finite() && millis.abs() < 1e16).then(|| (millis * 1000.0).round() as Micros).and_then(|micros| check_range(micros).ok())
}

impl<'de> Visitor<'de> for TimeVisitor {
    type Value = Option<Micros>;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a time")
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        Ok(parse_rfc3339(value).or_else(|| value.parse::<f64>().ok().and_then(from_millis)))
    }
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        Ok(from_millis(value as f64))
    }
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        Ok(from_millis(value as f64))
    }
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        Ok(from_millis(value))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // `{"$date": …}` and `{"$numberLong": "…"}` both reduce to the inner value.
        let mut found = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "$date" || key == "$numberLong" {
                found = map.next_value::<GrokTime>()?.0;
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

    #[test]
    fn reads_both_clock_formats() {
        let parse = |json: &str| serde_json::from_str::<GrokTime>(json).unwrap().0;
        let expected = parse_rfc3339("2026-08-30T12:24:10.033Z");
        assert_eq!(parse(r#"{"$date":{"$numberLong":"1788092650033"}}"#), expected);
        assert_eq!(parse(r#""2026-08-30T12:24:10.033000Z""#), expected);
        assert_eq!(parse(r#"{"$date":"2026-08-30T12:24:10.033Z"}"#), expected);
        assert_eq!(parse(r#"{"$date":1788092650033}"#), expected);
        assert_eq!(parse("null"), None);
        assert_eq!(parse(r#"{"other":1}"#), None);
    }

    /// Guards the year range of epoch times: 10^15 ms is past year 9999 and would be written
    /// with a wrapped year.
    #[test]
    fn epoch_times_outside_years_1_to_9999_are_unread() {
        let parse = |json: &str| serde_json::from_str::<GrokTime>(json).unwrap().0;
        assert_eq!(parse(r#"{"$date":{"$numberLong":"1000000000000000"}}"#), None);
        assert_eq!(parse("-100000000000000"), None);
        assert_eq!(parse("253402300799000"), parse_rfc3339("9999-12-31T23:59:59Z"));
    }
}
