//! Serde model of a Claude `conversations.json` element, every field lenient.
//!
//! Field names are the export's own (provider-formats.md §2.2).
#![allow(missing_docs)]

use std::borrow::Cow;

use serde::Deserialize;

use crate::sources::lenient::{self, ArrayField, List, Object};

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
