//! Serde model of a Claude `conversations.json` element, every field lenient.
//!
//! Field names are the export's own (provider-formats.md §2.2).
#![allow(missing_docs)]

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::sources::lenient::{self, List, Object};

/// One element of `conversations.json`.
#[derive(Debug, Deserialize)]
pub struct RawConversation<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub uuid: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub created_at: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub updated_at: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub chat_messages: Option<ArrayField<Object<Box<RawMessage<'a>>>>>,
}

/// `chat_messages[]`.
#[derive(Debug, Deserialize)]
pub struct RawMessage<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub uuid: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub sender: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub content: Option<List<Object<RawBlock<'a>>>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub created_at: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub parent_message_uuid: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub attachments: Option<List<Object<RawAttachment<'a>>>>,
    #[serde(borrow, default)]
    pub files: Option<List<Object<RawFile<'a>>>>,
}

/// A `content[]` block.
#[derive(Debug, Deserialize)]
pub struct RawBlock<'a> {
    #[serde(borrow, default, rename = "type", deserialize_with = "lenient::string")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub name: Option<Cow<'a, str>>,
    /// `tool_result` carries nested blocks here.
    #[serde(borrow, default)]
    pub content: Option<List<Object<RawNestedBlock<'a>>>>,
}

/// A block nested in a `tool_result`.
#[derive(Debug, Deserialize)]
pub struct RawNestedBlock<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub text: Option<Cow<'a, str>>,
}

/// `attachments[]`: pasted or extracted text.
#[derive(Debug, Deserialize)]
pub struct RawAttachment<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub file_name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub extracted_content: Option<Cow<'a, str>>,
}

/// `files[]`: uploads whose bytes the export does not include.
#[derive(Debug, Deserialize)]
pub struct RawFile<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::string")]
    pub file_name: Option<Cow<'a, str>>,
}

/// A field that must hold an array: its elements, each read with `T`, or the kind of JSON
/// value found instead. [`List`] reads any other value as an empty list, which is right for
/// lists inside a message but not for the list that holds the messages: a `chat_messages`
/// object would pass for a conversation without messages (0 messages, no reject), so this
/// keeps what was there for the decoder to name. Grok's `responses` use it too.
#[derive(Debug)]
pub enum ArrayField<T> {
    /// The elements, in order.
    Array(Vec<T>),
    /// What the field held instead, for people: "an object", "a string", ….
    Not(&'static str),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ArrayField<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ArrayFieldVisitor(PhantomData))
    }
}

struct ArrayFieldVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ArrayFieldVisitor<T> {
    type Value = ArrayField<T>;
    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element::<T>()? {
            items.push(item);
        }
        Ok(ArrayField::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ArrayField::Not("an object"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("a string"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("a boolean"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("a number"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("a number"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("null"))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ArrayField::Not("null"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards the shape of the message list: an object where the array belongs must not read
    /// as an empty list (a conversation of 0 messages), while lists inside messages stay
    /// lenient.
    #[test]
    fn an_array_field_keeps_what_it_held_instead_of_an_array() {
        let read = |json: &str| serde_json::from_str::<ArrayField<u8>>(json).unwrap();
        assert!(matches!(read("[1, 2]"), ArrayField::Array(items) if items == [1, 2]));
        assert!(matches!(read(r#"{"a": [1]}"#), ArrayField::Not("an object")));
        assert!(matches!(read(r#""[]""#), ArrayField::Not("a string")));
        assert!(matches!(read("7"), ArrayField::Not("a number")));
        let conversation: RawConversation = sonic_rs::from_str(r#"{"uuid": "k", "chat_messages": {"a": 1}}"#).unwrap();
        assert!(matches!(conversation.chat_messages, Some(ArrayField::Not("an object"))));
        let conversation: RawConversation = sonic_rs::from_str(r#"{"uuid": "k", "chat_messages": null}"#).unwrap();
        assert!(conversation.chat_messages.is_none());
    }
}
