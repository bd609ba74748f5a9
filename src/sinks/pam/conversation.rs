//! Maps one canonical conversation to a PAM conversation file and its `conversations_index`
//! entry (pam.md §3.2, §8), written directly as compact JSON.
//!
//! Only messages that flow on (`Keep`) are written, as in every memory format. A kept message's
//! `parent_id` is its nearest kept ancestor, so under `--branches all` the file holds the whole
//! tree and under `--branches active` the active thread as a chain; `children_ids` are the
//! inverse links in tree order. What PAM has no field for (provider fields memport does not
//! model, reasoning blocks, unknown content types, status) goes to `raw_metadata`, which the
//! schema leaves open.

use rustc_hash::FxHashMap;

use crate::hash::{push_hex, sha256};
use crate::jcs::{write_string, write_string_array};
use crate::json_embed::{has_unpaired_surrogate_escape, write_json_or_string};
use crate::model::{Asset, Conversation, Message, Micros, Part, Provider, RetractedConversation};
use crate::sinks::written_tree::{is_written, nearest_written_ancestors};
use crate::spec::pam::{WITHDRAWN_MEMBER, WITHDRAWN_SUFFIX, WITHDRAWN_TAG};
use crate::timefmt::format_rfc3339;

/// `importer` of `import_metadata` and `extractor` of memory provenance: `name/semver`.
pub const IMPORTER: &str = concat!("memport/", env!("CARGO_PKG_VERSION"));

/// Longest provider id used as is in a file name; longer or unusual ids are hashed.
const MAX_PLAIN_ID_LENGTH: usize = 96;

/// The PAM id of a conversation, also its file name without `.json`: `<provider>-<id>`, with
/// the provider id hashed (`h<32 hex>`) when it is not a plain file name. The provider prefix
/// keeps ids of different providers apart. A conversation read again from an overlapping
/// export gets `-r<hash of where it was read>`, so its new messages have a file of their own.
pub fn conversation_pam_id(conversation: &Conversation) -> String {
    let mut id = first_reading_pam_id(conversation.provider, &conversation.id);
    if conversation.is_repeat {
        let mut origin = conversation.origin.file.as_bytes().to_vec();
        origin.extend_from_slice(&conversation.origin.index.to_le_bytes());
        id.push_str("-r");
        push_hex(&mut id, &sha256(&origin)[..4]);
    }
    id
}

/// The PAM id of the first reading of `provider`'s conversation `conversation_id`:
/// [`conversation_pam_id`] without the suffix of a repeat. Extracted memories name the
/// conversation of their evidence by it (evidence knows the conversation, not the reading), and
/// the first reading always has a file and an index entry.
pub fn first_reading_pam_id(provider: Provider, conversation_id: &str) -> String {
    let plain = !conversation_id.is_empty()
        && conversation_id.len() <= MAX_PLAIN_ID_LENGTH
        && !conversation_id.starts_with('.')
        && conversation_id.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'));
    let mut id = String::with_capacity(MAX_PLAIN_ID_LENGTH + 16);
    id.push_str(provider.as_str());
    id.push('-');
    if plain {
        id.push_str(conversation_id);
    } else {
        id.push('h');
        push_hex(&mut id, &sha256(conversation_id.as_bytes())[..16]);
    }
    id
}

/// A conversation file and its index entry.
#[derive(Debug)]
pub struct EncodedConversation {
    /// PAM id; the file is `conversations/<pam_id>.json`.
    pub pam_id: String,
    /// The file's bytes.
    pub file: Vec<u8>,
    /// The `conversations_index` entry, compact JSON.
    pub index_entry: Vec<u8>,
}

/// What the conversation file says about where it came from.
pub struct FileContext<'a> {
    /// `import_metadata.imported_at`: the run's export time, so reruns are identical.
    pub imported_at: Micros,
    /// Memory ids derived from this conversation (`derived_memories`).
    pub derived_memories: &'a [String],
}

/// Encodes `conversation`, or `None` for a repeat that brings no new message.
pub fn encode(conversation: &Conversation, context: &FileContext<'_>) -> Option<EncodedConversation> {
    let kept: Vec<usize> = (0..conversation.messages.len()).filter(|&position| is_written(&conversation.messages[position])).collect();
    if conversation.is_repeat && kept.is_empty() {
        return None;
    }
    let pam_id = conversation_pam_id(conversation);
    let parents = nearest_written_ancestors(conversation);
    let mut children: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
    for &position in &kept {
        if let Some(parent) = parents[position] {
            children.entry(parent).or_default().push(position);
        }
    }
    let created_at = conversation_created_at(conversation, context.imported_at);

    // Size the file once: text (an eighth more for escapes), provider fields, parts and the
    // members around them. Growing by doubling would hold up to twice the file in memory.
    let content_bytes: usize = kept
        .iter()
        .map(|&position| {
            let message = &conversation.messages[position];
            let parts: usize = message.parts.iter().map(part_bytes).sum();
            message.text.len() + message.text.len() / 8 + message.provider_fields.as_deref().map_or(0, str::len) + parts
        })
        .sum();
    let context_bytes = conversation.system_instruction.as_deref().map_or(0, str::len) + conversation.title.as_deref().map_or(0, str::len);
    let mut out = Vec::with_capacity(content_bytes + context_bytes + kept.len() * 400 + 512);
    out.extend_from_slice(b"{\"schema\":\"portable-ai-memory-conversation\",\"schema_version\":\"1.0\",\"id\":");
    write_string(&mut out, &pam_id);
    out.extend_from_slice(b",\"provider\":{\"name\":");
    write_string(&mut out, conversation.provider.as_str());
    out.extend_from_slice(b",\"conversation_id\":");
    write_string(&mut out, &conversation.id);
    out.extend_from_slice(b"},\"title\":");
    write_optional(&mut out, conversation.title.as_deref());
    out.extend_from_slice(b",\"temporal\":");
    write_temporal(&mut out, created_at, conversation.updated_at);
    if let Some(model) = &conversation.model {
        out.extend_from_slice(b",\"model\":");
        write_string(&mut out, model);
    }
    if let Some(instruction) = &conversation.system_instruction {
        out.extend_from_slice(b",\"system_instruction\":");
        write_string(&mut out, instruction);
    }
    out.extend_from_slice(b",\"is_archived\":");
    out.extend_from_slice(if conversation.is_archived { b"true" } else { b"false" });
    if let Some(zone) = &conversation.assumed_time_zone {
        out.extend_from_slice(b",\"raw_metadata\":{\"assumed_time_zone\":");
        write_string(&mut out, zone);
        out.push(b'}');
    }
    out.extend_from_slice(b",\"import_metadata\":{\"importer\":");
    write_string(&mut out, IMPORTER);
    out.extend_from_slice(b",\"importer_version\":");
    write_string(&mut out, &format!("{}-importer/{}", conversation.provider.as_str(), env!("CARGO_PKG_VERSION")));
    out.extend_from_slice(b",\"imported_at\":");
    write_string(&mut out, &format_rfc3339(context.imported_at));
    out.extend_from_slice(b",\"source_file\":");
    write_string(&mut out, source_file_name(&conversation.origin.file));
    out.extend_from_slice(b"},\"messages\":[");
    for (index, &position) in kept.iter().enumerate() {
        out.extend_from_slice(if index == 0 { b"\n" } else { b",\n" });
        let message = &conversation.messages[position];
        let parent = parents[position].map(|parent| conversation.messages[parent].id.as_str());
        let child_ids = children.get(&position).map(|list| list.iter().map(|&child| conversation.messages[child].id.as_str()).collect());
        write_message(&mut out, message, parent, child_ids.unwrap_or_default());
    }
    out.extend_from_slice(b"]}\n");

    let mut entry = Vec::with_capacity(256);
    entry.extend_from_slice(b"{\"id\":");
    write_string(&mut entry, &pam_id);
    entry.extend_from_slice(b",\"platform\":");
    write_string(&mut entry, conversation.provider.as_str());
    entry.extend_from_slice(b",\"title\":");
    write_optional(&mut entry, conversation.title.as_deref());
    entry.extend_from_slice(format!(",\"message_count\":{}", kept.len()).as_bytes());
    entry.extend_from_slice(b",\"temporal\":");
    write_temporal(&mut entry, created_at, conversation.updated_at);
    entry.extend_from_slice(b",\"storage\":{\"type\":\"file\",\"ref\":");
    write_string(&mut entry, &format!("conversations/{pam_id}.json"));
    entry.extend_from_slice(b",\"format\":\"json\"}");
    if !context.derived_memories.is_empty() {
        entry.extend_from_slice(b",\"derived_memories\":");
        write_string_array(&mut entry, context.derived_memories.iter().map(String::as_str));
    }
    entry.push(b'}');
    Some(EncodedConversation { pam_id, file: out, index_entry: entry })
}

/// The `conversations_index` entry of a conversation a sync retracts: the id and platform its
/// live entry had, its title, its start (the retraction time when unknown) and the retraction
/// time as `updated_at`, tagged `retracted`, with `message_count: null` and no `storage`: its
/// file is gone. `derived_memories` are the memories whose provenance names it.
pub fn retraction_index_entry(retracted: &RetractedConversation, derived_memories: &[String]) -> Vec<u8> {
    let mut entry = Vec::with_capacity(256);
    entry.extend_from_slice(b"{\"id\":");
    write_string(&mut entry, &first_reading_pam_id(retracted.provider, &retracted.conversation_id));
    entry.extend_from_slice(b",\"platform\":");
    write_string(&mut entry, retracted.provider.as_str());
    entry.extend_from_slice(b",\"title\":");
    write_optional(&mut entry, retracted.title.as_deref());
    entry.extend_from_slice(b",\"message_count\":null,\"temporal\":");
    write_temporal(&mut entry, retracted.created_at.unwrap_or(retracted.retracted_at), Some(retracted.retracted_at));
    entry.extend_from_slice(b",\"tags\":[\"retracted\"]");
    if !derived_memories.is_empty() {
        entry.extend_from_slice(b",\"derived_memories\":");
        write_string_array(&mut entry, derived_memories.iter().map(String::as_str));
    }
    entry.push(b'}');
    entry
}

/// The file and `conversations_index` entry of messages a sync withdraws (erased from its memory
/// store since an earlier run wrote them), and the file's name without `.json`. PAM has no
/// member for them, so they are a conversation document of their own, with no messages, whose
/// `raw_metadata.memport_withdrawn_messages` names the conversation's PAM id
/// (`conversation`), its `conversation_id`, the `message_ids`, `retracted_by` and
/// `retracted_at`; its entry is tagged `messages-withdrawn` (`memport merge` takes the
/// messages out of the base's file; other readers see a conversation with no messages).
pub fn withdrawal_files(withdrawn: &RetractedConversation, imported_at: Micros) -> (String, Vec<u8>, Vec<u8>) {
    let conversation = first_reading_pam_id(withdrawn.provider, &withdrawn.conversation_id);
    let id = format!("{conversation}{WITHDRAWN_SUFFIX}");
    let created_at = withdrawn.created_at.unwrap_or(withdrawn.retracted_at);
    let mut file = Vec::with_capacity(512);
    file.extend_from_slice(b"{\"schema\":\"portable-ai-memory-conversation\",\"schema_version\":\"1.0\",\"id\":");
    write_string(&mut file, &id);
    file.extend_from_slice(b",\"provider\":{\"name\":");
    write_string(&mut file, withdrawn.provider.as_str());
    file.extend_from_slice(b",\"conversation_id\":");
    write_string(&mut file, &withdrawn.conversation_id);
    file.extend_from_slice(b"},\"title\":");
    write_optional(&mut file, withdrawn.title.as_deref());
    file.extend_from_slice(b",\"temporal\":");
    write_temporal(&mut file, created_at, Some(withdrawn.retracted_at));
    file.extend_from_slice(b",\"raw_metadata\":{");
    write_string(&mut file, WITHDRAWN_MEMBER);
    file.extend_from_slice(b":{\"conversation\":");
    write_string(&mut file, &conversation);
    file.extend_from_slice(b",\"conversation_id\":");
    write_string(&mut file, &withdrawn.conversation_id);
    file.extend_from_slice(b",\"message_ids\":");
    write_string_array(&mut file, withdrawn.messages.iter().map(String::as_str));
    file.extend_from_slice(b",\"retracted_by\":");
    write_string(&mut file, &withdrawn.retracted_by);
    file.extend_from_slice(b",\"retracted_at\":");
    write_string(&mut file, &format_rfc3339(withdrawn.retracted_at));
    file.extend_from_slice(b"}},\"import_metadata\":{\"importer\":");
    write_string(&mut file, IMPORTER);
    file.extend_from_slice(b",\"imported_at\":");
    write_string(&mut file, &format_rfc3339(imported_at));
    file.extend_from_slice(b"},\"messages\":[]}\n");

    let mut entry = Vec::with_capacity(256);
    entry.extend_from_slice(b"{\"id\":");
    write_string(&mut entry, &id);
    entry.extend_from_slice(b",\"platform\":");
    write_string(&mut entry, withdrawn.provider.as_str());
    entry.extend_from_slice(b",\"title\":");
    write_optional(&mut entry, withdrawn.title.as_deref());
    entry.extend_from_slice(b",\"message_count\":0,\"temporal\":");
    write_temporal(&mut entry, created_at, Some(withdrawn.retracted_at));
    entry.extend_from_slice(b",\"tags\":[");
    write_string(&mut entry, WITHDRAWN_TAG);
    entry.extend_from_slice(b"],\"storage\":{\"type\":\"file\",\"ref\":");
    write_string(&mut entry, &format!("conversations/{id}.json"));
    entry.extend_from_slice(b",\"format\":\"json\"}}");
    (id, file, entry)
}

/// Bytes a part adds to the file beyond the rendered text (its own copy of text or JSON).
fn part_bytes(part: &Part) -> usize {
    match part {
        Part::Text(text) | Part::Thinking(text) => text.len() + 32,
        Part::Code { language, text } => language.len() + text.len() + 48,
        Part::Asset(asset) => 2 * asset.pointer.len() + asset.resolved.as_deref().map_or(0, str::len) * 2 + 96,
        Part::Raw { content_type, json } => content_type.len() + json.len() + 48,
    }
}

/// The conversation's start: the provider's time, else its first message's, else the export
/// time (PAM requires one; never the wall clock).
pub fn conversation_created_at(conversation: &Conversation, fallback: Micros) -> Micros {
    conversation
        .created_at
        .or_else(|| conversation.messages.iter().filter(|message| message.time_known).map(|message| message.created_at).min())
        .unwrap_or(fallback)
}

/// The file name (and zip entry) a conversation was read from, without the folders leading to
/// it: enough to find it again, without writing the user's paths into the store.
fn source_file_name(origin: &str) -> &str {
    let archive_end = origin.find('!').unwrap_or(origin.len());
    let start = origin[..archive_end].rfind('/').map_or(0, |slash| slash + 1);
    &origin[start..]
}

fn write_optional(out: &mut Vec<u8>, value: Option<&str>) {
    match value {
        Some(text) => write_string(out, text),
        None => out.extend_from_slice(b"null"),
    }
}

fn write_temporal(out: &mut Vec<u8>, created_at: Micros, updated_at: Option<Micros>) {
    out.extend_from_slice(b"{\"created_at\":");
    write_string(out, &format_rfc3339(created_at));
    out.extend_from_slice(b",\"updated_at\":");
    match updated_at {
        // PAM requires `updated_at` ≥ `created_at`; `created_at` may be a fallback here (no
        // creation time in the source) that comes after the source's update time.
        Some(updated) => write_string(out, &format_rfc3339(updated.max(created_at))),
        None => out.extend_from_slice(b"null"),
    }
    out.push(b'}');
}

fn write_message(out: &mut Vec<u8>, message: &Message, parent: Option<&str>, children: Vec<&str>) {
    out.extend_from_slice(b"{\"id\":");
    write_string(out, &message.id);
    out.extend_from_slice(b",\"provider_message_id\":");
    write_string(out, &message.id);
    out.extend_from_slice(b",\"role\":\"");
    out.extend_from_slice(message.role.as_str().as_bytes());
    out.extend_from_slice(b"\",\"created_at\":");
    write_string(out, &format_rfc3339(message.created_at));
    out.extend_from_slice(b",\"parent_id\":");
    write_optional(out, parent);
    out.extend_from_slice(b",\"children_ids\":");
    write_string_array(out, children.iter().copied());
    write_content(out, message);
    if let Some(model) = &message.model {
        out.extend_from_slice(b",\"model\":");
        write_string(out, model);
    }
    out.extend_from_slice(b",\"is_thought\":");
    out.extend_from_slice(if message.is_thought { b"true" } else { b"false" });
    let assets: Vec<&Asset> =
        message.parts.iter().filter_map(|part| if let Part::Asset(asset) = part { Some(asset) } else { None }).collect();
    if !assets.is_empty() {
        out.extend_from_slice(b",\"attachments\":[");
        for (index, asset) in assets.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"type\":\"");
            out.extend_from_slice(asset.kind.as_str().as_bytes());
            out.extend_from_slice(b"\",\"name\":");
            write_optional(out, asset.name.as_deref());
            out.extend_from_slice(b",\"ref\":");
            write_optional(out, asset.resolved.as_deref());
            out.extend_from_slice(b",\"provider_id\":");
            write_string(out, &asset.pointer);
            out.push(b'}');
        }
        out.push(b']');
    }
    write_raw_metadata(out, message);
    out.push(b'}');
}

/// `content`: plain `text` for one-part messages; `multipart` with typed parts otherwise, with
/// the rendered text beside them so text-only readers still get everything.
fn write_content(out: &mut Vec<u8>, message: &Message) {
    let visible_parts = message.parts.iter().filter(|part| !matches!(part, Part::Thinking(_) | Part::Raw { .. })).count();
    if message.parts.is_empty() || visible_parts == 0 {
        out.extend_from_slice(b",\"content\":{\"type\":\"text\",\"text\":");
        write_string(out, &message.text);
        out.push(b'}');
        return;
    }
    out.extend_from_slice(b",\"content\":{\"type\":\"multipart\",\"text\":");
    write_string(out, &message.text);
    out.extend_from_slice(b",\"parts\":[");
    let mut first = true;
    for part in &message.parts {
        let opening: &[u8] = if first { b"{\"type\":\"" } else { b",{\"type\":\"" };
        match part {
            Part::Text(text) => {
                out.extend_from_slice(opening);
                out.extend_from_slice(b"text\",\"text\":");
                write_string(out, text);
            }
            Part::Code { language, text } => {
                out.extend_from_slice(opening);
                out.extend_from_slice(b"code\",\"text\":");
                write_string(out, text);
                out.extend_from_slice(b",\"language\":");
                write_string(out, language);
            }
            Part::Asset(asset) => {
                out.extend_from_slice(opening);
                out.extend_from_slice(asset.kind.as_str().as_bytes());
                out.extend_from_slice(b"\",\"ref\":");
                write_string(out, asset.resolved.as_deref().unwrap_or(&asset.pointer));
            }
            Part::Thinking(_) | Part::Raw { .. } => continue,
        }
        out.push(b'}');
        first = false;
    }
    out.extend_from_slice(b"]}");
}

/// `raw_metadata`: what PAM has no field for, so a round trip loses nothing memport read.
fn write_raw_metadata(out: &mut Vec<u8>, message: &Message) {
    let thinking: Vec<&str> =
        message.parts.iter().filter_map(|part| if let Part::Thinking(text) = part { Some(text.as_str()) } else { None }).collect();
    let unmapped: Vec<(&str, &str)> = message
        .parts
        .iter()
        .filter_map(|part| if let Part::Raw { content_type, json } = part { Some((content_type.as_str(), json.as_str())) } else { None })
        .collect();
    let has_any = message.provider_fields.is_some()
        || !thinking.is_empty()
        || !unmapped.is_empty()
        || message.status.is_some()
        || message.author_name.is_some()
        || !message.time_known
        || !message.on_active_branch;
    if !has_any {
        return;
    }
    out.extend_from_slice(b",\"raw_metadata\":{");
    let mut first = true;
    let mut member = |out: &mut Vec<u8>, name: &[u8]| {
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'"');
        out.extend_from_slice(name);
        out.extend_from_slice(b"\":");
    };
    if let Some(author) = &message.author_name {
        member(out, b"author_name");
        write_string(out, author);
    }
    if let Some(status) = &message.status {
        member(out, b"status");
        write_string(out, status);
    }
    if !message.time_known {
        // `created_at` was filled in from the conversation or the parent.
        member(out, b"created_at_estimated");
        out.extend_from_slice(b"true");
    }
    if !message.on_active_branch {
        member(out, b"on_active_branch");
        out.extend_from_slice(b"false");
    }
    if !thinking.is_empty() {
        member(out, b"thinking");
        write_string_array(out, thinking.iter().copied());
    }
    if !unmapped.is_empty() {
        member(out, b"unmapped_parts");
        out.push(b'[');
        for (index, (content_type, json)) in unmapped.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"content_type\":");
            write_string(out, content_type);
            out.extend_from_slice(b",\"content\":");
            write_json_or_string(out, json);
            out.push(b'}');
        }
        out.push(b']');
    }
    if let Some(fields) = &message.provider_fields {
        member(out, b"provider");
        // The fields are members cut from an element that parsed, so they are JSON; only an
        // unpaired surrogate escape (which the sources repair in text) would make strict
        // readers refuse them. Checking for that is far cheaper than parsing every message.
        if has_unpaired_surrogate_escape(fields.as_bytes()) {
            write_string(out, fields);
        } else {
            out.extend_from_slice(fields.as_bytes());
        }
    }
    out.push(b'}');
}
