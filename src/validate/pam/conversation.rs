//! Checks of a PAM conversation file (pam.md §3.2): the schema's rules, unique message ids and
//! the message graph (a missing parent or child is a problem, as in the spec repo's validator;
//! a link only one side states is a notice).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::validate::rules::{Findings, is_platform, is_schema_version, is_sha256_label, is_tool_version, join};

const ROOT_MEMBERS: [&str; 14] = [
    "schema",
    "schema_version",
    "id",
    "provider",
    "title",
    "temporal",
    "participants",
    "messages",
    "model",
    "system_instruction",
    "is_archived",
    "tags",
    "raw_metadata",
    "import_metadata",
];
const MESSAGE_MEMBERS: [&str; 14] = [
    "id",
    "provider_message_id",
    "role",
    "content",
    "created_at",
    "parent_id",
    "children_ids",
    "model",
    "is_thought",
    "token_count",
    "attachments",
    "citations",
    "tool_calls",
    "raw_metadata",
];
const ROLES: [&str; 4] = ["user", "assistant", "system", "tool"];
const PART_TYPES: [&str; 6] = ["text", "image", "code", "file", "audio", "video"];
const ATTACHMENT_TYPES: [&str; 5] = ["file", "image", "audio", "video", "document"];

/// What the store index compares with the file.
#[derive(Debug, Default)]
pub struct ConversationFacts {
    /// `id`.
    pub id: Option<String>,
    /// `title`.
    pub title: Option<String>,
    /// `provider.name`.
    pub platform: Option<String>,
    /// Number of messages.
    pub messages: u64,
    /// `schema_version`.
    pub schema_version: Option<String>,
}

/// Checks one parsed conversation file.
pub fn check_conversation(root: &Value, findings: &mut Findings<'_>) -> ConversationFacts {
    let mut facts = ConversationFacts::default();
    let Some(conversation) = findings.object(root, "") else { return facts };
    findings.members(conversation, "", &["schema", "schema_version", "id", "provider", "temporal", "messages"], &ROOT_MEMBERS);
    if conversation.get("schema").and_then(Value::as_str) != Some("portable-ai-memory-conversation") {
        findings.malformed("wrong_schema", "/schema", "must be \"portable-ai-memory-conversation\"");
    }
    findings.matching(conversation, "schema_version", "", false, "a schema version such as 1.0", is_schema_version);
    facts.schema_version = conversation.get("schema_version").and_then(Value::as_str).map(str::to_owned);
    facts.id = findings.string(conversation, "id", "", false).map(str::to_owned);
    if facts.id.as_deref() == Some("") {
        findings.malformed("empty_id", "/id", "the conversation id must not be empty");
    }
    facts.title = findings.string(conversation, "title", "", true).map(str::to_owned);
    findings.string(conversation, "model", "", true);
    findings.string(conversation, "system_instruction", "", true);
    findings.tags(conversation, "");
    if conversation.get("is_archived").is_some_and(|value| !value.is_boolean()) {
        findings.malformed("wrong_type", "/is_archived", "must be true or false");
    }
    if let Some(provider) = conversation.get("provider").and_then(|provider| findings.object(provider, "/provider")) {
        findings.members(provider, "/provider", &["name"], &["name", "conversation_id", "account_id", "export_format_version"]);
        findings.matching(provider, "name", "/provider", false, "a product name of 2-32 characters a-z, 0-9, `_`, `-`", is_platform);
        facts.platform = provider.get("name").and_then(Value::as_str).map(str::to_owned);
    }
    if let Some(temporal) = conversation.get("temporal").and_then(|temporal| findings.object(temporal, "/temporal")) {
        findings.members(temporal, "/temporal", &["created_at"], &["created_at", "updated_at"]);
        findings.date_time(temporal, "created_at", "/temporal", false);
        findings.date_time(temporal, "updated_at", "/temporal", true);
    }
    for (position, participant) in findings.array(conversation, "participants", "").cloned().unwrap_or_default().iter().enumerate() {
        let pointer = format!("/participants/{position}");
        if let Some(participant) = findings.object(participant, &pointer) {
            findings.members(participant, &pointer, &["role"], &["role", "name", "provider_id"]);
        }
    }
    if let Some(metadata) = conversation.get("import_metadata").and_then(|metadata| findings.object(metadata, "/import_metadata")) {
        let at = "/import_metadata";
        findings.members(metadata, at, &[], &["importer", "importer_version", "imported_at", "source_file", "source_checksum"]);
        findings.matching(metadata, "importer", at, true, "`name/X.Y.Z`", is_tool_version);
        findings.string(metadata, "importer_version", at, true);
        findings.date_time(metadata, "imported_at", at, true);
        findings.string(metadata, "source_file", at, true);
        findings.matching(metadata, "source_checksum", at, true, "`sha256:` and 64 lowercase hex digits", is_sha256_label);
    }
    if conversation.get("raw_metadata").is_some_and(|value| !value.is_object()) {
        findings.malformed("wrong_type", "/raw_metadata", "must be an object");
    }
    let messages = findings.array(conversation, "messages", "").cloned().unwrap_or_default();
    facts.messages = messages.len() as u64;
    check_messages(&messages, findings);
    facts
}

fn check_messages(messages: &[Value], findings: &mut Findings<'_>) {
    let mut position_of: HashMap<&str, usize> = HashMap::new();
    for (position, message) in messages.iter().enumerate() {
        let pointer = format!("/messages/{position}");
        let Some(object) = findings.object(message, &pointer) else { continue };
        check_message(object, &pointer, findings);
        if let Some(id) = object.get("id").and_then(Value::as_str)
            && let Some(first) = position_of.insert(id, position)
        {
            findings.malformed("duplicate_id", &join(&pointer, "id"), format!("message id `{id}` is already used by /messages/{first}"));
        }
    }
    let mut linear_time: Option<i64> = None;
    let mut branching = false;
    for (position, message) in messages.iter().enumerate() {
        let pointer = format!("/messages/{position}");
        let Some(object) = message.as_object() else { continue };
        let id = object.get("id").and_then(Value::as_str).unwrap_or_default();
        if let Some(parent) = object.get("parent_id").and_then(Value::as_str) {
            match position_of.get(parent) {
                None => findings.malformed("dangling_reference", &join(&pointer, "parent_id"), format!("no message has id `{parent}`")),
                Some(&parent_position) => {
                    let lists_child = messages[parent_position]
                        .get("children_ids")
                        .and_then(Value::as_array)
                        .is_some_and(|children| children.iter().any(|child| child.as_str() == Some(id)));
                    if !lists_child {
                        findings.notice(&pointer, format!("the parent `{parent}` does not list this message among its children"));
                    }
                }
            }
        }
        let children = object.get("children_ids").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        branching |= children.len() > 1;
        for (child_position, child) in children.iter().enumerate() {
            let Some(child) = child.as_str() else { continue };
            match position_of.get(child) {
                None => findings.malformed(
                    "dangling_reference",
                    &format!("{pointer}/children_ids/{child_position}"),
                    format!("no message has id `{child}`"),
                ),
                Some(&child_at) => {
                    if messages[child_at].get("parent_id").and_then(Value::as_str) != Some(id) {
                        findings.notice(&pointer, format!("the child `{child}` names another parent"));
                    }
                }
            }
        }
        let time = object.get("created_at").and_then(Value::as_str).and_then(crate::timefmt::parse_rfc3339);
        if let (Some(previous), Some(time)) = (linear_time, time)
            && time < previous
            && !branching
        {
            findings.notice(&pointer, "created_at goes back in time in a linear conversation");
        }
        linear_time = time.or(linear_time);
    }
}

fn check_message(message: &Map<String, Value>, pointer: &str, findings: &mut Findings<'_>) {
    findings.members(message, pointer, &["id", "role", "created_at"], &MESSAGE_MEMBERS);
    if findings.string(message, "id", pointer, false) == Some("") {
        findings.malformed("empty_id", &join(pointer, "id"), "the message id must not be empty");
    }
    findings.string(message, "provider_message_id", pointer, true);
    findings.one_of(message, "role", pointer, &ROLES, false);
    findings.date_time(message, "created_at", pointer, false);
    findings.string(message, "parent_id", pointer, true);
    findings.string(message, "model", pointer, true);
    findings.count(message, "token_count", pointer, true);
    if message.get("is_thought").is_some_and(|value| !value.is_boolean()) {
        findings.malformed("wrong_type", &join(pointer, "is_thought"), "must be true or false");
    }
    for (position, child) in findings.array(message, "children_ids", pointer).cloned().unwrap_or_default().iter().enumerate() {
        if child.as_str().is_none_or(str::is_empty) {
            findings.malformed("wrong_type", &format!("{pointer}/children_ids/{position}"), "children ids are non-empty strings");
        }
    }
    if let Some(content) = message.get("content").and_then(|content| findings.object(content, &join(pointer, "content"))) {
        let at = join(pointer, "content");
        findings.members(content, &at, &["type"], &["type", "text", "parts"]);
        findings.one_of(content, "type", &at, &["text", "multipart"], false);
        findings.string(content, "text", &at, true);
        for (position, part) in findings.array(content, "parts", &at).cloned().unwrap_or_default().iter().enumerate() {
            let part_at = format!("{at}/parts/{position}");
            if let Some(part) = findings.object(part, &part_at) {
                findings.members(part, &part_at, &["type"], &["type", "text", "language", "mime_type", "ref"]);
                findings.one_of(part, "type", &part_at, &PART_TYPES, false);
                for name in ["text", "language", "mime_type", "ref"] {
                    findings.string(part, name, &part_at, true);
                }
            }
        }
    }
    for (position, attachment) in findings.array(message, "attachments", pointer).cloned().unwrap_or_default().iter().enumerate() {
        let at = format!("{pointer}/attachments/{position}");
        if let Some(attachment) = findings.object(attachment, &at) {
            findings.members(attachment, &at, &["type"], &["type", "name", "mime_type", "size_bytes", "ref", "provider_id"]);
            findings.one_of(attachment, "type", &at, &ATTACHMENT_TYPES, false);
            findings.count(attachment, "size_bytes", &at, true);
            for name in ["name", "mime_type", "ref", "provider_id"] {
                findings.string(attachment, name, &at, true);
            }
        }
    }
    for (position, citation) in findings.array(message, "citations", pointer).cloned().unwrap_or_default().iter().enumerate() {
        let at = format!("{pointer}/citations/{position}");
        if let Some(citation) = findings.object(citation, &at) {
            findings.members(citation, &at, &[], &["title", "url", "snippet"]);
        }
    }
    for (position, call) in findings.array(message, "tool_calls", pointer).cloned().unwrap_or_default().iter().enumerate() {
        let at = format!("{pointer}/tool_calls/{position}");
        if let Some(call) = findings.object(call, &at) {
            findings.members(call, &at, &["name"], &["id", "name", "input", "output"]);
            if call.get("input").is_some_and(Value::is_array) {
                findings.malformed("wrong_type", &join(&at, "input"), "a tool call's input is an object, a string or null");
            }
            findings.string(call, "output", &at, true);
        }
    }
    if message.get("raw_metadata").is_some_and(|value| !value.is_object()) {
        findings.malformed("wrong_type", &join(pointer, "raw_metadata"), "must be an object");
    }
}
