//! Decodes one Claude conversation into the canonical model: rebuilds the edit/retry tree from
//! `parent_message_uuid` (a flat list is one thread), picks the active path (newest leaf),
//! renders `content[]` blocks in preference to the flat `text`, and classifies every message.

use rustc_hash::FxHashMap;

use crate::hash::ContentKey;
use crate::model::{Asset, AssetKind, Conversation, Disposition, Message, Micros, Origin, Part, Provider, Role, SkipReason, Warnings};
use crate::sources::chatgpt::render::parts_to_text;
use crate::sources::claude::raw::{RawConversation, RawMessage};
use crate::sources::contract::{BranchPolicy, DecodeOptions, Decoded, RecordReject};
use crate::sources::lenient::ArrayField;
use crate::sources::lenient::Object;
use crate::sources::tree::Tree;
use crate::timefmt::{TimeError, read_rfc3339};

/// The uuid Claude uses as the parent of a conversation's first message.
const ROOT_SENTINEL: &str = "00000000-0000-4000-8000-000000000000";

/// Decodes one element. `Err` rejects the whole conversation.
pub fn decode_conversation(bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
    let mut warnings = Warnings::default();
    let reject = |conversation_id: Option<&str>, reason: String| RecordReject::new(&origin, conversation_id, reason);
    let raw: RawConversation = sonic_rs::from_slice(bytes).map_err(|error| reject(None, format!("invalid JSON: {error}")))?;
    let Some(id) = raw.uuid.as_deref().filter(|id| !id.is_empty()) else {
        return Err(reject(None, "conversation has no `uuid`".into()));
    };
    let raw_messages = match raw.chat_messages.as_ref() {
        Some(ArrayField::Array(messages)) => messages.as_slice(),
        // Not "a conversation without messages": the export is damaged here, and the messages
        // it held are lost.
        Some(ArrayField::Not(found)) => return Err(reject(Some(id), format!("`chat_messages` is {found}, not an array of messages"))),
        None => return Err(reject(Some(id), "conversation has no `chat_messages` array".into())),
    };
    // Conversation times date the messages that have none; one that cannot be right would
    // date them wrongly, so the conversation is rejected with it.
    let conversation_time = read_time("created_at", raw.created_at.as_deref()).map_err(|reason| reject(Some(id), reason))?;
    let updated_time = read_time("updated_at", raw.updated_at.as_deref()).map_err(|reason| reject(Some(id), reason))?;

    // Usable messages, in array order, with their times; the rest are rejected one by one.
    let mut rejected_messages = Vec::new();
    let mut usable: Vec<(&str, &RawMessage)> = Vec::with_capacity(raw_messages.len());
    let mut times: Vec<Option<Micros>> = Vec::with_capacity(raw_messages.len());
    let mut position_of: FxHashMap<&str, usize> = FxHashMap::with_capacity_and_hasher(raw_messages.len(), Default::default());
    for (index, entry) in raw_messages.iter().enumerate() {
        let problem = match entry {
            Object::Present(message) => match (message.uuid.as_deref().filter(|uuid| !uuid.is_empty()), message.sender.as_deref()) {
                (Some(uuid), Some(_)) if position_of.contains_key(uuid) => Some((Some(uuid), format!("message `{uuid}` appears twice"))),
                (Some(uuid), Some(_)) => match read_time("created_at", message.created_at.as_deref()) {
                    Ok(time) => {
                        position_of.insert(uuid, usable.len());
                        usable.push((uuid, message));
                        times.push(time);
                        None
                    }
                    Err(reason) => Some((Some(uuid), reason)),
                },
                (uuid, None) => Some((uuid, "message has no `sender`".to_owned())),
                (None, _) => Some((None, format!("chat_messages[{index}] has no `uuid`"))),
            },
            _ => Some((None, format!("chat_messages[{index}] is not an object"))),
        };
        if let Some((message_id, reason)) = problem {
            let mut rejected = reject(Some(id), reason);
            rejected.message_id = message_id.map(str::to_owned);
            rejected_messages.push(rejected);
        }
    }

    // Parents: explicit links when the export has them, else one linear thread.
    let linked = usable.iter().any(|(_, message)| message.parent_message_uuid.is_some());
    let parents: Vec<Option<usize>> = usable
        .iter()
        .enumerate()
        .map(|(position, (_, message))| {
            if linked {
                message
                    .parent_message_uuid
                    .as_deref()
                    .filter(|parent| *parent != ROOT_SENTINEL)
                    .and_then(|parent| position_of.get(parent).copied())
                    .filter(|&parent| parent != position)
            } else {
                position.checked_sub(1)
            }
        })
        .collect();
    let tree = Tree::new(parents);
    let on_path = tree.path_to(tree.newest_leaf(&times));
    let order = tree.preorder();

    let fallback_time = conversation_time.unwrap_or(options.exported_at);
    let mut conversation = Conversation {
        provider: Provider::Claude,
        id: id.to_owned(),
        title: raw.name.as_deref().filter(|name| !name.is_empty()).map(str::to_owned),
        created_at: conversation_time,
        updated_at: updated_time,
        model: None,
        system_instruction: None,
        is_archived: false,
        messages: Vec::with_capacity(usable.len()),
        memories: Vec::new(),
        memories_only: false,
        is_repeat: false,
        assumed_time_zone: None,
        origin: origin.clone(),
    };
    let mut effective_time: Vec<Micros> = vec![fallback_time; usable.len()];
    for position in order {
        let (uuid, message) = usable[position];
        let parent_time = tree.parents[position].map(|parent| effective_time[parent]);
        let created_at = times[position].or(parent_time).unwrap_or(fallback_time);
        effective_time[position] = created_at;
        let role = match message.sender.as_deref() {
            Some("human" | "user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some(other) => {
                warnings.add(format!("unknown_role:{other}"));
                Role::Tool
            }
            None => Role::Tool,
        };
        let parts = render(message, &mut warnings);
        let text = match parts.as_slice() {
            [Part::Text(only)] => only.clone(),
            _ => parts_to_text(&parts),
        };
        let on_active_branch = on_path[position];
        let disposition = if options.branches == BranchPolicy::Active && !on_active_branch {
            Disposition::Skip(SkipReason::OffBranch)
        } else if text.trim().is_empty() {
            Disposition::Skip(SkipReason::Empty)
        } else {
            Disposition::Keep
        };
        let is_thought = parts.iter().all(|part| matches!(part, Part::Thinking(_))) && !parts.is_empty();
        let content_key = if disposition == Disposition::Keep { options.content_key(&text) } else { ContentKey::default() };
        conversation.messages.push(Message {
            id: uuid.to_owned(),
            parent_id: tree.parents[position].map(|parent| usable[parent].0.to_owned()),
            role,
            author_name: None,
            created_at,
            time_known: times[position].is_some(),
            parts: if matches!(parts.as_slice(), [Part::Text(_)]) { Vec::new() } else { parts },
            text,
            is_thought,
            provider_fields: None,
            model: None,
            status: None,
            on_active_branch,
            content_key,
            disposition,
            discloses: false,
        });
    }
    Ok(Decoded { conversation, rejected_messages, warnings, retractions: Vec::new() })
}

/// The time in the field `field`: `Ok(None)` when it is absent or in a form memport does not
/// read (the export's habit: the message takes its parent's time and keeps its place), `Err`
/// with the reason for one that reads but cannot be right (`2026-02-30`, which the calendar
/// arithmetic would roll over into March, or a time past 9999 once in UTC).
fn read_time(field: &str, text: Option<&str>) -> Result<Option<Micros>, String> {
    let Some(text) = text else { return Ok(None) };
    match read_rfc3339(text) {
        Ok(time) => Ok(Some(time)),
        Err(TimeError::Unreadable) => Ok(None),
        Err(error) => Err(format!("`{field}` `{text}`: {error}")),
    }
}

/// `content[]` blocks when present, else the flat `text`; then attachments and files.
fn render(message: &RawMessage, warnings: &mut Warnings) -> Vec<Part> {
    let mut parts = Vec::new();
    let blocks = message.content.as_ref().map(|list| list.0.as_slice()).unwrap_or_default();
    if blocks.is_empty() {
        if let Some(text) = message.text.as_deref().filter(|text| !text.is_empty()) {
            parts.push(Part::Text(text.to_owned()));
        }
    } else {
        for block in blocks.iter().filter_map(Object::as_ref) {
            let kind = block.kind.as_deref().unwrap_or("");
            match kind {
                "text" => {
                    if let Some(text) = block.text.as_deref().filter(|text| !text.is_empty()) {
                        parts.push(Part::Text(text.to_owned()));
                    }
                }
                "thinking" => {
                    if let Some(thinking) = block.thinking.as_deref().filter(|text| !text.is_empty()) {
                        parts.push(Part::Thinking(thinking.to_owned()));
                    }
                }
                "tool_use" => parts.push(Part::Text(format!("[tool_use: {}]", block.name.as_deref().unwrap_or("")))),
                "tool_result" => {
                    let mut text = format!("[tool_result: {}]", block.name.as_deref().unwrap_or(""));
                    for nested in block.content.iter().flat_map(|list| list.0.iter()).filter_map(Object::as_ref) {
                        if let Some(nested_text) = nested.text.as_deref() {
                            text.push('\n');
                            text.push_str(nested_text);
                        }
                    }
                    parts.push(Part::Text(text));
                }
                "token_budget" => {}
                other => {
                    warnings.add(format!("unknown_block_type:{other}"));
                    parts.push(Part::Text(format!("[{other}]")));
                }
            }
        }
    }
    for attachment in message.attachments.iter().flat_map(|list| list.0.iter()).filter_map(Object::as_ref) {
        if let Some(extracted) = attachment.extracted_content.as_deref().filter(|text| !text.is_empty()) {
            parts.push(Part::Text(format!("[attachment: {}]\n{extracted}", attachment.file_name.as_deref().unwrap_or(""))));
        }
    }
    for file in message.files.iter().flat_map(|list| list.0.iter()).filter_map(Object::as_ref) {
        let name = file.file_name.as_deref().unwrap_or("").to_owned();
        warnings.add("asset_missing");
        parts.push(Part::Asset(Asset { kind: AssetKind::File, pointer: name.clone(), resolved: None, name: Some(name) }));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> DecodeOptions {
        DecodeOptions { branches: BranchPolicy::Active, exported_at: 0, keep_provider_fields: false, dedup_keys: false, pam_digests: false }
    }

    fn origin() -> Origin {
        Origin { file: "conversations.json".into(), offset: 0, index: 1 }
    }

    /// Guards the shape of `chat_messages`: an object there read as an empty list, so the
    /// conversation was written with 0 messages and nothing said what was lost.
    #[test]
    fn a_chat_messages_object_rejects_the_conversation_naming_the_field() {
        let reject = decode_conversation(br#"{"uuid":"k2","chat_messages":{"a":1}}"#, origin(), &options()).err();
        assert_eq!(reject.as_ref().map(|reject| reject.reason.as_str()), Some("`chat_messages` is an object, not an array of messages"));
        assert_eq!(reject.and_then(|reject| reject.conversation_id).as_deref(), Some("k2"));
        let reject = decode_conversation(br#"{"uuid":"k2","chat_messages":"[]"}"#, origin(), &options()).err();
        assert_eq!(reject.map(|reject| reject.reason).as_deref(), Some("`chat_messages` is a string, not an array of messages"));
        let empty = decode_conversation(br#"{"uuid":"k2","chat_messages":[]}"#, origin(), &options()).unwrap();
        assert!(empty.conversation.messages.is_empty() && empty.rejected_messages.is_empty());
    }

    /// Guards the calendar check of Claude times: 2026-02-30 was rolled over to 2026-03-02 and
    /// written as if it were right. A message dated so is rejected with the date; a
    /// conversation dated so is rejected whole (its time dates the messages without one).
    #[test]
    fn a_time_on_a_day_its_month_does_not_have_is_rejected_naming_the_date() {
        let element = br#"{"uuid":"k2","created_at":"2026-02-01T10:00:00Z","chat_messages":[
            {"uuid":"q","sender":"human","text":"question","created_at":"2026-02-28T17:33:09Z"},
            {"uuid":"a","sender":"assistant","text":"answer","created_at":"2026-02-30T17:33:19Z"},
            {"uuid":"b","sender":"human","text":"later","created_at":"yesterday"}]}"#;
        let decoded = decode_conversation(element, origin(), &options()).unwrap();
        let rejected: Vec<(Option<&str>, &str)> =
            decoded.rejected_messages.iter().map(|reject| (reject.message_id.as_deref(), reject.reason.as_str())).collect();
        assert_eq!(rejected, [(Some("a"), "`created_at` `2026-02-30T17:33:19Z`: 2026-02-30 is not a date: February 2026 has 28 days")]);
        let kept: Vec<(&str, bool)> =
            decoded.conversation.messages.iter().map(|message| (message.id.as_str(), message.time_known)).collect();
        // A time in no form memport reads is the export's habit, not an error: the message stays.
        assert_eq!(kept, [("q", true), ("b", false)]);

        let element = br#"{"uuid":"k3","created_at":"9999-12-31T23:30:00-05:00","chat_messages":[]}"#;
        let reject = decode_conversation(element, origin(), &options()).err().map(|reject| reject.reason);
        assert_eq!(reject.as_deref(), Some("`created_at` `9999-12-31T23:30:00-05:00`: outside years 0001-9999 once converted to UTC"));
    }
}
