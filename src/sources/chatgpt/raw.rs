//! Serde model of a ChatGPT export element, every field lenient (see [`crate::sources::lenient`]).
//!
//! Strings borrow from the element's bytes where they have no escapes. Fields not listed here
//! are skipped without allocation. Field names are the export's own (provider-formats.md §1).
#![allow(missing_docs)]

use std::borrow::Cow;

use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::sources::lenient::{self, List, Object, OrderedEntries};

/// One element of `conversations.json`.
#[derive(Debug, Deserialize)]
pub struct RawConversation<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub conversation_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub title: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "lenient::number")]
    pub create_time: Option<f64>,
    #[serde(default, deserialize_with = "lenient::number")]
    pub update_time: Option<f64>,
    #[serde(borrow, default)]
    pub mapping: Option<OrderedEntries<'a, Object<RawNode<'a>>>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub current_node: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub default_model_slug: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "lenient::boolean")]
    pub is_archived: Option<bool>,
}

/// A value of `mapping`.
#[derive(Debug, Deserialize)]
pub struct RawNode<'a> {
    #[serde(borrow, default)]
    pub message: Object<Box<RawMessage<'a>>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub parent: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub children: Option<List<LenientString<'a>>>,
}

/// A string in a list of strings; other JSON is `None`.
#[derive(Debug)]
pub struct LenientString<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for LenientString<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        lenient::string(deserializer).map(LenientString)
    }
}

/// `mapping[*].message`.
#[derive(Debug, Deserialize)]
pub struct RawMessage<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub author: Object<RawAuthor<'a>>,
    #[serde(default, deserialize_with = "lenient::number")]
    pub create_time: Option<f64>,
    #[serde(borrow, default)]
    pub content: Object<RawContent<'a>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub status: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "lenient::number")]
    pub weight: Option<f64>,
    #[serde(borrow, default)]
    pub metadata: Object<RawMetadata<'a>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub recipient: Option<Cow<'a, str>>,
}

/// `message.author`.
#[derive(Debug, Deserialize)]
pub struct RawAuthor<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub role: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub name: Option<Cow<'a, str>>,
}

/// `message.metadata`: only the keys that change what a message becomes.
#[derive(Debug, Default, Deserialize)]
pub struct RawMetadata<'a> {
    #[serde(default, deserialize_with = "lenient::boolean")]
    pub is_visually_hidden_from_conversation: Option<bool>,
    #[serde(default, deserialize_with = "lenient::boolean")]
    pub is_user_system_message: Option<bool>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub model_slug: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub user_context_message_data: Object<RawUserContext<'a>>,
    #[serde(borrow, default)]
    pub content_references: Option<List<Object<RawContentReference<'a>>>>,
}

/// 2023 custom instructions (`metadata.user_context_message_data`).
#[derive(Debug, Deserialize)]
pub struct RawUserContext<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub about_user_message: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub about_model_message: Option<Cow<'a, str>>,
}

/// One `metadata.content_references` entry: how a citation marker in the text is shown.
#[derive(Debug, Deserialize)]
pub struct RawContentReference<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub matched_text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub alt: Option<Cow<'a, str>>,
}

/// `message.content`: the union of the fields every known `content_type` uses.
#[derive(Debug, Deserialize)]
pub struct RawContent<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub content_type: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub parts: Option<List<RawPart<'a>>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub language: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub result: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub summary: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub title: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub url: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub snippet: Option<Cow<'a, str>>,
    /// `reasoning_recap` carries its line here.
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub thoughts: Option<List<Object<RawThought<'a>>>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub user_profile: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub user_instructions: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub model_set_context: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub screenshot: Object<RawPartObject<'a>>,
}

/// One `thoughts[]` entry of a reasoning message.
#[derive(Debug, Deserialize)]
pub struct RawThought<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub summary: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub content: Option<Cow<'a, str>>,
}

/// An element of `parts`: text, or an object with its own `content_type`.
#[derive(Debug)]
pub enum RawPart<'a> {
    /// A string part.
    Text(Cow<'a, str>),
    /// An object part (asset pointer, transcription, …).
    Object(RawPartObject<'a>),
    /// Anything else (numbers, nulls, lists): nothing to render.
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for RawPart<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PartVisitor(std::marker::PhantomData))
    }
}

struct PartVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for PartVisitor<'a> {
    type Value = RawPart<'a>;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Self::Value, E> {
        Ok(RawPart::Text(Cow::Borrowed(value)))
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        Ok(RawPart::Text(Cow::Owned(value.to_owned())))
    }
    fn visit_string<E: de::Error>(self, value: String) -> Result<Self::Value, E> {
        Ok(RawPart::Text(Cow::Owned(value)))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        RawPartObject::deserialize(de::value::MapAccessDeserializer::new(map)).map(RawPart::Object)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(RawPart::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(RawPart::Other)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(RawPart::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(RawPart::Other)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(RawPart::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(RawPart::Other)
    }
}

/// An object part of `parts` (or `content.screenshot`).
#[derive(Debug, Default, Deserialize)]
pub struct RawPartObject<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub content_type: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub asset_pointer: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub audio_asset_pointer: Object<Box<RawPartObject<'a>>>,
    #[serde(borrow, default)]
    pub video_container_asset_pointer: Object<Box<RawPartObject<'a>>>,
}
