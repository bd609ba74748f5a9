//! Sources: what an input is, which provider made it (by content, never by name alone), and
//! the decoder that turns its framed elements into canonical conversations.
//!
//! Contract: [`plan_input`] looks at an input once and returns the streams to frame in order
//! plus a [`Decoder`]; the engine frames each stream with [`json_array::ArrayFramer`] on one
//! thread and calls [`Decoder::decode`] for each element on the worker pool, in any order.

pub mod chatgpt;
pub mod claude;
pub mod container;
pub mod json_array;
pub mod lenient;

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::error::{ConfigError, RunError};
use crate::model::{Conversation, Micros, Origin, Provider, Warnings};
use container::{Container, Entry};

/// How many bytes of a file are looked at to tell what it holds.
const SNIFF_BYTES: usize = 256 << 10;

/// Which messages of a branched conversation flow on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BranchPolicy {
    /// Only the thread the user last saw (`current_node` up to the root).
    #[default]
    Active,
    /// Every branch: regenerations and edited prompts too.
    All,
}

/// Options that change how elements decode.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// Which branches flow on.
    pub branches: BranchPolicy,
    /// The export time; the last fallback for records without any time.
    pub exported_at: Micros,
}

/// A record that could not be used, with where it was and why.
#[derive(Debug, Clone)]
pub struct RecordReject {
    /// File or `archive.zip!entry`.
    pub file: Arc<str>,
    /// Byte offset of the record (the conversation element) in that file.
    pub offset: u64,
    /// Index of the element in the file's array.
    pub index: u64,
    /// Conversation id when it could be read.
    pub conversation_id: Option<String>,
    /// Message id for a message-level reject.
    pub message_id: Option<String>,
    /// What is wrong, for people.
    pub reason: String,
}

impl RecordReject {
    /// A reject of the record at `origin`, in conversation `conversation_id` when known.
    pub fn new(origin: &Origin, conversation_id: Option<&str>, reason: String) -> Self {
        RecordReject {
            file: origin.file.clone(),
            offset: origin.offset,
            index: origin.index,
            conversation_id: conversation_id.map(str::to_owned),
            message_id: None,
            reason,
        }
    }

    /// Marks this reject as concerning one message.
    pub fn with_message(mut self, message_id: &str) -> Self {
        self.message_id = Some(message_id.to_owned());
        self
    }
}

/// One decoded element.
#[derive(Debug)]
pub struct Decoded {
    /// The conversation, with every message classified.
    pub conversation: Conversation,
    /// Messages that could not be read (the rest of the conversation goes on).
    pub rejected_messages: Vec<RecordReject>,
    /// Things worth reporting.
    pub warnings: Warnings,
}

/// Turns framed elements of one input into conversations. Shared by all workers.
pub trait Decoder: Send + Sync {
    /// Decodes one element. `Err` rejects the whole element.
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject>;
}

/// One input, looked at and ready to read.
pub struct InputPlan {
    /// The path the user gave.
    pub path: String,
    /// Which provider made it.
    pub provider: Provider,
    /// Era or layout, for `inspect` and the report (`2023-2025 single file`, `2026 shards`).
    pub layout: String,
    /// Size of the input on disk.
    pub bytes_on_disk: u64,
    /// The files to frame, in order.
    pub streams: Vec<Entry>,
    /// Decoder for their elements.
    pub decoder: Arc<dyn Decoder>,
    /// Warnings found while looking (manifest differences).
    pub warnings: Warnings,
    /// Explanations for those warnings, for people.
    pub notes: Vec<String>,
    /// Assets the export contains.
    pub asset_count: usize,
}

/// What a file's first bytes say it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    /// A JSON array of ChatGPT conversations (elements with `mapping`).
    ChatGptConversations,
    /// An empty JSON array.
    EmptyArray,
    /// A JSON array of Claude conversations (`chat_messages`).
    ClaudeConversations,
    /// Something else.
    Other,
}

/// Tells what a file holds from its first bytes.
pub fn sniff(prefix: &[u8]) -> Sniffed {
    let text = prefix.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(prefix);
    let start = text.iter().position(|byte| !byte.is_ascii_whitespace());
    let Some(start) = start else { return Sniffed::Other };
    if text[start] != b'[' {
        return Sniffed::Other;
    }
    let rest = &text[start + 1..];
    match rest.iter().position(|byte| !byte.is_ascii_whitespace()) {
        Some(position) if rest[position] == b']' => return Sniffed::EmptyArray,
        Some(position) if rest[position] != b'{' => return Sniffed::Other,
        None => return Sniffed::Other,
        _ => {}
    }
    if memchr::memmem::find(rest, b"\"mapping\"").is_some() {
        Sniffed::ChatGptConversations
    } else if memchr::memmem::find(rest, b"\"chat_messages\"").is_some() {
        Sniffed::ClaudeConversations
    } else {
        Sniffed::Other
    }
}

fn sniff_entry(entry: &Entry) -> Result<Sniffed, RunError> {
    let mut reader = entry.open()?.take(SNIFF_BYTES as u64);
    let mut prefix = Vec::with_capacity(SNIFF_BYTES);
    reader.read_to_end(&mut prefix).map_err(|error| RunError::read(entry.display.to_string(), error))?;
    Ok(sniff(&prefix))
}

/// Looks at one input and plans how to read it.
///
/// # Errors
/// [`ConfigError`] when the path cannot be opened or holds no supported export; I/O errors.
pub fn plan_input(path: &Path) -> Result<InputPlan, RunError> {
    let container = Container::open(path)?;
    let bytes_on_disk = match &container {
        Container::Folder(_) => 0,
        _ => std::fs::metadata(path).map(|metadata| metadata.len()).unwrap_or(0),
    };
    let entries = container.entries()?;
    let candidates: Vec<Entry> = match &container {
        Container::File(_) => entries.clone(),
        _ => entries.iter().filter(|entry| chatgpt::is_conversation_file_name(entry.base_name())).cloned().collect(),
    };
    let mut chatgpt_files = Vec::new();
    let mut claude_files = Vec::new();
    let mut empty_files = Vec::new();
    let mut not_conversations = Vec::new();
    for entry in candidates {
        match sniff_entry(&entry)? {
            Sniffed::ChatGptConversations => chatgpt_files.push(entry),
            Sniffed::ClaudeConversations => claude_files.push(entry),
            Sniffed::EmptyArray => empty_files.push(entry),
            Sniffed::Other => not_conversations.push(format!("{} is not a conversation array", entry.display)),
        }
    }
    if !chatgpt_files.is_empty() && !claude_files.is_empty() {
        return Err(ConfigError::NotAnExport {
            path: path.to_owned(),
            reason: "holds both ChatGPT and Claude conversation files; give each export as its own input".into(),
        }
        .into());
    }
    if !claude_files.is_empty() {
        claude_files.extend(empty_files);
        chatgpt::sort_conversation_entries(&mut claude_files);
        let layout = match &container {
            Container::Zip(_) => "zip, Claude conversations.json",
            Container::Folder(_) => "folder, Claude conversations.json",
            Container::File(_) => "file, Claude conversations array",
        };
        return Ok(InputPlan {
            path: path.display().to_string(),
            provider: Provider::Claude,
            layout: layout.to_owned(),
            bytes_on_disk: if bytes_on_disk == 0 { claude_files.iter().map(|entry| entry.size).sum() } else { bytes_on_disk },
            streams: claude_files,
            decoder: Arc::new(claude::ClaudeDecoder),
            warnings: Warnings::default(),
            notes: Vec::new(),
            asset_count: 0,
        });
    }
    let mut conversation_files = chatgpt_files;
    conversation_files.extend(empty_files);
    if conversation_files.is_empty() {
        let found = if not_conversations.is_empty() { "no conversations*.json file".to_owned() } else { not_conversations.join("; ") };
        return Err(ConfigError::NotAnExport {
            path: path.to_owned(),
            reason: format!("no ChatGPT or Claude conversations found ({found}); give the export zip, its unzipped folder, or its conversations.json (other providers arrive in a later version)"),
        }
        .into());
    }
    chatgpt::sort_conversation_entries(&mut conversation_files);
    let mut warnings = Warnings::default();
    let mut notes = Vec::new();
    let sibling_entries = match &container {
        Container::File(file) => match file.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            Some(parent) => Container::Folder(parent.to_owned()).entries().unwrap_or_default(),
            None => Container::Folder(".".into()).entries().unwrap_or_default(),
        },
        _ => entries.clone(),
    };
    if !matches!(container, Container::File(_)) {
        chatgpt::check_manifest(&entries, &conversation_files, &mut warnings, &mut notes);
    }
    let (names, name_map_problem) = chatgpt::assets::AssetIndex::read_name_map(&sibling_entries);
    if let Some(problem) = name_map_problem {
        warnings.add("asset_name_map_unreadable");
        notes.push(problem);
    }
    let assets = chatgpt::assets::AssetIndex::build(&sibling_entries, &names);
    let sharded = conversation_files.iter().any(|entry| entry.base_name().starts_with("conversations-"));
    let layout = match (&container, sharded) {
        (Container::Zip(_), true) => "zip, 2026 sharded conversations-NNN.json",
        (Container::Zip(_), false) => "zip, single conversations.json (2023-2025)",
        (Container::Folder(_), true) => "folder, 2026 sharded conversations-NNN.json",
        (Container::Folder(_), false) => "folder, single conversations.json (2023-2025)",
        (Container::File(_), true) => "file, one 2026 shard",
        (Container::File(_), false) => "file, conversations array",
    };
    let asset_count = assets.len();
    Ok(InputPlan {
        path: path.display().to_string(),
        provider: Provider::ChatGpt,
        layout: layout.to_owned(),
        bytes_on_disk: if bytes_on_disk == 0 { conversation_files.iter().map(|entry| entry.size).sum() } else { bytes_on_disk },
        streams: conversation_files,
        decoder: Arc::new(ChatGptDecoder { assets }),
        warnings,
        notes,
        asset_count,
    })
}

struct ChatGptDecoder {
    assets: chatgpt::assets::AssetIndex,
}

impl Decoder for ChatGptDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        chatgpt::normalize::decode_conversation(bytes, origin, &self.assets, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_by_content() {
        assert_eq!(sniff(b"\xEF\xBB\xBF [ {\"title\":\"x\",\"mapping\":{}}]"), Sniffed::ChatGptConversations);
        assert_eq!(sniff(b"[{\"uuid\":\"x\",\"chat_messages\":[]}]"), Sniffed::ClaudeConversations);
        assert_eq!(sniff(b"[ ]"), Sniffed::EmptyArray);
        assert_eq!(sniff(b"{\"mapping\":1}"), Sniffed::Other);
    }
}
