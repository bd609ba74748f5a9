//! Claude exports (provider-formats.md §2): `conversations.json` as a bare array, in a zip, a
//! folder or on its own, detected by content (`chat_messages`), since ChatGPT uses the same name.
//!
//! Read: conversations and their messages (content blocks, attachments' extracted text, file
//! names); projects (`projects.json` or `projects/<uuid>.json`) and `memories.json` as provider
//! memories ([`side_files`]). `users.json` is PII and never opened.

pub mod normalize;
pub mod raw;
pub mod side_files;

use std::sync::Arc;

use crate::model::Origin;
use crate::sources::container::Entry;
use crate::sources::contract::{DecodeOptions, Decoded, Decoder, Framing, InputPlan, RecordReject, Stream};

/// The name of Claude's memories file. Found by content like the others; the name picks out
/// one that does not read as memories (cut short, UTF-16), to be reported rather than passed
/// over.
pub const MEMORIES_FILE: &str = "memories.json";
/// The name of Claude's list of projects: as [`MEMORIES_FILE`], the name picks out a broken one.
pub const PROJECTS_FILE: &str = "projects.json";

/// The side files of a Claude export, found by content.
#[derive(Debug, Default)]
pub struct SideFiles {
    /// `projects.json`: an array of projects.
    pub project_lists: Vec<Entry>,
    /// `projects/<uuid>.json`: one project each.
    pub project_files: Vec<Entry>,
    /// `memories.json`.
    pub memory_files: Vec<Entry>,
}

/// Plans a Claude export: its conversation files in order, then projects and memories.
pub fn plan(plan: &mut InputPlan, container_kind: &str, mut conversation_files: Vec<Entry>, side_files: SideFiles) {
    crate::sources::chatgpt::sort_conversation_entries(&mut conversation_files);
    let conversations = Arc::new(ClaudeDecoder) as Arc<dyn Decoder>;
    let projects = Arc::new(side_files::ClaudeProjectDecoder) as Arc<dyn Decoder>;
    let memories = Arc::new(side_files::ClaudeMemoriesDecoder) as Arc<dyn Decoder>;
    let SideFiles { project_lists, project_files, memory_files } = side_files;
    let mut parts = Vec::new();
    if !conversation_files.is_empty() {
        parts.push(count_label(conversation_files.len(), "conversations file"));
    }
    if !project_lists.is_empty() || !project_files.is_empty() {
        parts.push(if project_files.is_empty() { "projects.json".to_owned() } else { count_label(project_files.len(), "project file") });
    }
    if !memory_files.is_empty() {
        parts.push(MEMORIES_FILE.to_owned());
    }
    plan.layout = format!("{container_kind}, Claude export: {}", parts.join(", "));
    plan.streams.extend(conversation_files.into_iter().map(|entry| Stream::new(entry, Framing::Array, conversations.clone())));
    plan.streams.extend(project_lists.into_iter().map(|entry| Stream::new(entry, Framing::Array, projects.clone())));
    plan.streams.extend(project_files.into_iter().map(|entry| Stream::new(entry, Framing::Whole, projects.clone())));
    plan.streams.extend(memory_files.into_iter().map(|entry| Stream::new(entry, Framing::Whole, memories.clone())));
}

fn count_label(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

/// Decodes Claude conversation elements.
pub struct ClaudeDecoder;

impl Decoder for ClaudeDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let mut decoded = normalize::decode_conversation(bytes, origin, options)?;
        if options.keep_provider_fields {
            crate::sources::provider_fields::attach(&mut decoded.conversation, crate::sources::provider_fields::claude(bytes));
        }
        Ok(decoded)
    }
}
