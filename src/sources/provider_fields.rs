//! Keeps each message's provider fields as compact JSON, for outputs that carry the provider's
//! own data (the Parquet `metadata` column). Only done when a run asks for it
//! ([`crate::sources::DecodeOptions::keep_provider_fields`]): it is a second pass over the
//! element that the memory formats do not need. Fields are cut out with [`json_walk`] in one
//! pass; sonic-rs only finds the arrays of the Claude, Grok and Gemini shapes.
//!
//! The text fields memport renders (`content`, `text`, `message`) are left out: they are in
//! the message's text and parts already. Everything else is kept as the provider wrote it.

use std::collections::HashMap;

use sonic_rs::JsonValueTrait;

use crate::model::Conversation;
use crate::sources::json_walk;

/// The provider fields of one message: every member of the object at `start` in `bytes`
/// except the `skip` names, as a compact JSON object (values exactly as written), and the
/// object's end. The fields are `None` when nothing is left; the whole result is `None` when
/// there is no object at `start`.
fn members_without(bytes: &[u8], start: usize, skip: &[&str]) -> Option<(Option<String>, usize)> {
    let mut fields = Vec::with_capacity(512);
    fields.push(b'{');
    let end = json_walk::walk_object(bytes, start, |key, value| {
        let value_end = json_walk::value_end(bytes, value)?;
        // Keys are compared without their quotes; none of the names skipped needs escaping.
        if !skip.iter().any(|name| key.get(1..key.len() - 1) == Some(name.as_bytes())) {
            if fields.len() > 1 {
                fields.push(b',');
            }
            fields.extend_from_slice(key);
            fields.push(b':');
            fields.extend_from_slice(&bytes[value..value_end]);
        }
        Some(value_end)
    })?;
    fields.push(b'}');
    let fields = if fields.len() > 2 { String::from_utf8(fields).ok() } else { None };
    Some((fields, end))
}

/// [`members_without`] of a whole JSON text (a sonic-rs raw value).
pub fn object_without(object: &str, skip: &[&str]) -> Option<String> {
    let start = json_walk::skip_whitespace(object.as_bytes(), 0);
    members_without(object.as_bytes(), start, skip)?.0
}

/// Sets each message's provider fields from `by_id` (message id → fields).
pub fn attach(conversation: &mut Conversation, mut by_id: HashMap<String, String>) {
    if by_id.is_empty() {
        return;
    }
    for message in &mut conversation.messages {
        if let Some(fields) = by_id.remove(&message.id) {
            message.provider_fields = Some(fields.into_boxed_str());
        }
    }
}

/// ChatGPT: `mapping.<node id>.message`, without `content`, keyed by node id. One pass over
/// the element ([`json_walk`]): this runs for every conversation of a Parquet run.
pub fn chatgpt(element: &[u8]) -> HashMap<String, String> {
    let mut by_id = HashMap::new();
    let start = json_walk::skip_whitespace(element, 0);
    json_walk::walk_object(element, start, |key, value| {
        if key != b"\"mapping\"" || element.get(value) != Some(&b'{') {
            return json_walk::value_end(element, value);
        }
        json_walk::walk_object(element, value, |node_id, node| {
            if element.get(node) != Some(&b'{') {
                return json_walk::value_end(element, node);
            }
            json_walk::walk_object(element, node, |member, message| {
                if member != b"\"message\"" || element.get(message) != Some(&b'{') {
                    return json_walk::value_end(element, message);
                }
                let (fields, end) = members_without(element, message, &["content"])?;
                if let (Some(fields), Some(id)) = (fields, json_walk::key_text(node_id)) {
                    by_id.entry(id).or_insert(fields);
                }
                Some(end)
            })
        })
    });
    by_id
}

/// Claude: `chat_messages[*]`, without `text` and `content`, keyed by `uuid`.
pub fn claude(element: &[u8]) -> HashMap<String, String> {
    let mut by_id = HashMap::new();
    let Ok(messages) = sonic_rs::get(element, ["chat_messages"]) else { return by_id };
    for message in sonic_rs::to_array_iter(messages.as_raw_str()) {
        let Ok(message) = message else { break };
        let raw = message.as_raw_str();
        let Some(uuid) = string_member(raw, "uuid") else { continue };
        if let Some(fields) = object_without(raw, &["text", "content"]) {
            by_id.entry(uuid).or_insert(fields);
        }
    }
    by_id
}

/// Grok: `responses[*].response`, without `message`, keyed by `_id` or `response_id`.
pub fn grok(element: &[u8]) -> HashMap<String, String> {
    let mut by_id = HashMap::new();
    let Ok(responses) = sonic_rs::get(element, ["responses"]) else { return by_id };
    for entry in sonic_rs::to_array_iter(responses.as_raw_str()) {
        let Ok(entry) = entry else { break };
        let Ok(response) = sonic_rs::get_from_str(entry.as_raw_str(), ["response"]) else { continue };
        let raw = response.as_raw_str();
        let Some(id) = string_member(raw, "_id").or_else(|| string_member(raw, "response_id")) else { continue };
        if let Some(fields) = object_without(raw, &["message"]) {
            by_id.entry(id).or_insert(fields);
        }
    }
    by_id
}

/// Gemini: an activity record without the answer HTML (`safeHtmlItem`).
pub fn gemini_record(record: &[u8]) -> Option<String> {
    std::str::from_utf8(record).ok().and_then(|record| object_without(record, &["safeHtmlItem"]))
}

fn string_member(object: &str, key: &str) -> Option<String> {
    let value = sonic_rs::get_from_str(object, [key]).ok()?;
    value.as_str().map(str::to_owned).filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_raw_values_and_drop_rendered_text() {
        let fields = object_without(r#"{"content":{"parts":["hi"]},"metadata":{"a":[1,2.50]},"we\"ird":null}"#, &["content"]);
        assert_eq!(fields.as_deref(), Some(r#"{"metadata":{"a":[1,2.50]},"we\"ird":null}"#));
        assert_eq!(object_without(r#"{"content":1}"#, &["content"]), None);
        assert_eq!(object_without("[1,2]", &[]), None);
    }

    #[test]
    fn chatgpt_fields_are_keyed_by_node() {
        let element =
            br#"{"mapping":{"n1":{"message":{"id":"n1","content":{"parts":["x"]},"metadata":{"model_slug":"m"}}},"n0":{"message":null}}}"#;
        let fields = chatgpt(element);
        assert_eq!(fields.len(), 1);
        assert_eq!(fields["n1"], r#"{"id":"n1","metadata":{"model_slug":"m"}}"#);
    }

    #[test]
    fn claude_and_grok_fields_are_keyed_by_their_ids() {
        let claude_element = br#"{"chat_messages":[{"uuid":"u1","text":"t","content":[],"files":[{"file_name":"a"}]}]}"#;
        assert_eq!(claude(claude_element)["u1"], r#"{"uuid":"u1","files":[{"file_name":"a"}]}"#);
        let grok_element = br#"{"responses":[{"response":{"_id":"r1","message":"m","query_type":"q"}}]}"#;
        assert_eq!(grok(grok_element)["r1"], r#"{"_id":"r1","query_type":"q"}"#);
    }
}
