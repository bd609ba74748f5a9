//! Sources: what an input is, which provider made it (by content, never by name alone), and
//! the decoder that turns its framed elements into canonical conversations.
//!
//! Contract: [`plan_input`] looks at an input once and returns the streams to frame in order
//! plus a [`Decoder`]; the engine frames each stream with [`json_array::ArrayFramer`] on one
//! thread and calls [`Decoder::decode`] for each element on the worker pool, in any order.

pub mod chatgpt;
pub mod claude;
pub mod container;
pub mod copilot;
pub mod detect;
pub mod formats;
pub mod gemini;
pub mod grok;
pub mod html_text;
pub mod json_array;
pub mod json_walk;
pub mod lenient;
pub mod manifest;
pub mod provider_fields;
pub mod read_ahead;
pub mod regroup;
pub mod tree;

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::error::{ConfigError, RunError};
use crate::hash::{ContentKey, content_key};
use crate::model::{Conversation, Micros, Origin, Provider, Warnings};
use container::{Container, Entry};
pub use detect::{Sniffed, sniff};
use json_array::{ArrayFramer, FrameError};

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
    /// Also keep each message's unmodeled provider fields ([`provider_fields`]), for outputs
    /// that carry them.
    pub keep_provider_fields: bool,
    /// Messages get a dedup key (the dedup stage runs).
    pub dedup_keys: bool,
    /// Messages also get their PAM `content_hash` digest, for outputs that write it (Parquet).
    pub pam_digests: bool,
}

impl DecodeOptions {
    /// What a kept message's `text` is known by, as far as this run needs it.
    pub fn content_key(&self, text: &str) -> ContentKey {
        if !self.dedup_keys && !self.pam_digests {
            return ContentKey::default();
        }
        content_key(text, self.pam_digests)
    }
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

/// How a stream's bytes become framed elements.
#[derive(Debug, Clone)]
pub enum Framing {
    /// Elements of a top-level JSON array.
    Array,
    /// Elements of the array under one member of a top-level object (Grok).
    Member(&'static str),
    /// The whole document as one element (small side files).
    Whole,
    /// Rows of a Copilot CSV, regrouped into conversations first.
    CopilotCsv(copilot::CsvLayout, SourceOptions),
    /// Records of a Gemini `MyActivity.json`, regrouped into conversations first.
    GeminiActivity(SourceOptions),
    /// Records of a Gemini `MyActivity.html` page, regrouped into conversations first.
    GeminiActivityHtml(SourceOptions),
    /// Records of one of memport's own output formats, grouped by conversation.
    MemoryFormat(formats::RecordLayout),
}

/// Document-level data of a memory-format input that an output of the same format carries on.
#[derive(Debug, Clone, Default)]
pub struct Carried {
    /// Other systems' `vendor_extensions` of a MIF input, by system name (MIF: "MUST be
    /// preserved on round-trip").
    pub mif_vendor_extensions: Vec<(String, serde_json::Value)>,
}

/// One file of an input, with how to frame it and who decodes its elements.
#[derive(Clone)]
pub struct Stream {
    /// The file.
    pub entry: Entry,
    /// How its bytes become elements.
    pub framing: Framing,
    /// Decoder for its elements.
    pub decoder: Arc<dyn Decoder>,
}

impl Stream {
    fn new(entry: Entry, framing: Framing, decoder: Arc<dyn Decoder>) -> Self {
        Stream { entry, framing, decoder }
    }

    /// Opens the file and returns its elements. Regrouped sources index the whole file first
    /// (on the calling thread, with CPU work in batches on `pool`).
    ///
    /// # Errors
    /// I/O errors opening or regrouping the file.
    pub fn elements(&self, pool: &rayon::ThreadPool) -> Result<Elements, RunError> {
        let reader = self.entry.open()?;
        let display = &self.entry.display;
        Ok(match &self.framing {
            Framing::Array => Elements::Framed(ArrayFramer::new(reader)),
            Framing::Member(name) => Elements::Framed(ArrayFramer::member_array(reader, name)),
            Framing::Whole => Elements::Framed(ArrayFramer::whole_document(reader)),
            Framing::CopilotCsv(layout, options) => {
                Elements::Grouped(copilot::regroup(reader, display, *layout, options, self.entry.reopen_on_disk())?)
            }
            Framing::GeminiActivity(options) => {
                Elements::Grouped(gemini::regroup(reader, display, options, self.entry.reopen_on_disk(), pool)?)
            }
            Framing::GeminiActivityHtml(options) => Elements::Grouped(gemini::html::regroup(reader, display, options)?),
            Framing::MemoryFormat(layout) => {
                // The grouped reader opens the file itself (AIMEM reads it twice: chunks and edges).
                drop(reader);
                Elements::Framed(ArrayFramer::new(formats::open_records(layout, &self.entry)?))
            }
        })
    }
}

/// Where a stream's elements come from.
pub enum Elements {
    /// Framed from the JSON text of the file (or of a reader over it).
    Framed(ArrayFramer<Box<dyn Read + Send>>),
    /// Regrouped conversations, assembled one element at a time (no framing needed).
    Grouped(regroup::GroupedElements),
}

impl Elements {
    /// Appends the next element to `out` and returns its offset and index; `None` at the end.
    ///
    /// # Errors
    /// Framing errors (where the text broke) and I/O errors.
    pub fn next_element_into(&mut self, out: &mut Vec<u8>) -> Result<Option<(u64, u64)>, FrameError> {
        match self {
            Elements::Framed(framer) => framer.next_element_into(out),
            Elements::Grouped(grouped) => grouped.next_element_into(out).map_err(FrameError::Io),
        }
    }

    /// Bytes read (framed) or assembled (grouped) so far, for progress.
    pub fn bytes_consumed(&self) -> u64 {
        match self {
            Elements::Framed(framer) => framer.bytes_consumed(),
            Elements::Grouped(grouped) => grouped.bytes_assembled(),
        }
    }
}

/// The zone zoneless times are read in (Copilot CSVs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeZone {
    /// Seconds east of UTC.
    pub offset_seconds: i64,
    /// How outputs name it (`UTC`, `+02:00`).
    pub label: String,
}

impl TimeZone {
    /// Parses `UTC`, `Z`, `+02:00`, `-0530`, `UTC+1`.
    ///
    /// # Errors
    /// A message for people when the text is not a fixed offset.
    pub fn parse(text: &str) -> Result<TimeZone, String> {
        match crate::timefmt::parse_offset(text) {
            Some(0) => Ok(TimeZone::utc()),
            Some(offset_seconds) => {
                let sign = if offset_seconds < 0 { '-' } else { '+' };
                let magnitude = offset_seconds.abs();
                Ok(TimeZone { offset_seconds, label: format!("{sign}{:02}:{:02}", magnitude / 3600, magnitude % 3600 / 60) })
            }
            None => Err(format!(
                "`{text}` is not a fixed UTC offset; give one like `UTC`, `+02:00` or `-05:00` (zone names such as Europe/Berlin are not supported)"
            )),
        }
    }

    /// UTC.
    pub fn utc() -> TimeZone {
        TimeZone { offset_seconds: 0, label: "UTC".into() }
    }
}

/// Options that shape how sources are read before decoding.
#[derive(Debug, Clone)]
pub struct SourceOptions {
    /// Records without a conversation id further apart than this start a new conversation.
    pub gap: Micros,
    /// The zone of zoneless times.
    pub time_zone: TimeZone,
}

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions { gap: 60 * 60 * 1_000_000, time_zone: TimeZone::utc() }
    }
}

/// One input, looked at and ready to read.
pub struct InputPlan {
    /// The path the user gave.
    pub path: String,
    /// Which provider made it.
    pub provider: Provider,
    /// For an input in one of memport's own formats (a PAM store, a MIF document, …), that
    /// format: it names the input in reports instead of `provider`, and its records carry
    /// their own providers.
    pub format: Option<&'static str>,
    /// What the input carries for the outputs beyond its records.
    pub carried: Carried,
    /// Era or layout, for `inspect` and the report (`2023-2025 single file`, `2026 shards`).
    pub layout: String,
    /// Size of the input on disk.
    pub bytes_on_disk: u64,
    /// The files to frame, in order.
    pub streams: Vec<Stream>,
    /// Warnings found while looking (manifest differences).
    pub warnings: Warnings,
    /// Explanations for those warnings, for people.
    pub notes: Vec<String>,
    /// Assets the export contains.
    pub asset_count: usize,
}

/// Files never opened, not even to look at them: they hold only personal data
/// (provider-formats.md §6).
const PII_FILES: [&str; 6] =
    ["user.json", "users.json", "ads.json", "model_comparisons.json", "prod-mc-auth-mgmt-api.json", "prod-mc-billing.json"];

/// Whether an entry is worth looking into: text formats exports use, minus the PII files.
fn is_candidate(entry: &Entry) -> bool {
    let name = entry.base_name().to_ascii_lowercase();
    let text_format = [".json", ".csv", ".html", ".htm"].iter().any(|extension| name.ends_with(extension));
    text_format && !PII_FILES.contains(&name.as_str())
}

fn sniff_entry(entry: &Entry) -> Result<Sniffed, RunError> {
    let mut reader = entry.open()?.take(SNIFF_BYTES as u64);
    let mut prefix = Vec::with_capacity(SNIFF_BYTES);
    reader.read_to_end(&mut prefix).map_err(|error| RunError::read(entry.display.to_string(), error))?;
    Ok(sniff(&prefix))
}

fn provider_of(sniffed: Sniffed) -> Option<Provider> {
    match sniffed {
        Sniffed::ChatGptConversations => Some(Provider::ChatGpt),
        Sniffed::ClaudeConversations | Sniffed::ClaudeMemories | Sniffed::ClaudeProjects | Sniffed::ClaudeProject => Some(Provider::Claude),
        Sniffed::GrokBackend => Some(Provider::Grok),
        Sniffed::CopilotCsv(_) => Some(Provider::Copilot),
        Sniffed::GeminiActivityJson | Sniffed::GeminiActivityHtml => Some(Provider::Gemini),
        Sniffed::EmptyArray | Sniffed::Other => None,
    }
}

/// Looks at one input and plans how to read it.
///
/// # Errors
/// [`ConfigError`] when the path cannot be opened or holds no supported export; I/O errors.
pub fn plan_input(path: &Path, options: &SourceOptions) -> Result<InputPlan, RunError> {
    if let Some(plan) = formats::pam::plan_store(path)? {
        return Ok(plan);
    }
    // A file whose first MiB names PAM, AIME, MIF or UMP is read as that format before any
    // provider sniffing (a PAM conversation file would otherwise pass for a Claude manifest).
    // AIMEM's markers are plain member names, so AIMEM is only tried when no export is found.
    if formats::names_a_memory_format(path)
        && let Some(plan) = formats::plan_memory_format(path)?
    {
        return Ok(plan);
    }
    let mut manifest_notes: Vec<String> = Vec::new();
    let mut from_manifest = false;
    let mut container = Container::open(path)?;
    let mut bytes_on_disk = match &container {
        Container::Folder(_) => 0,
        _ => std::fs::metadata(path).map(|metadata| metadata.len()).unwrap_or(0),
    };
    let mut entries = container.entries()?;
    // A delivery manifest (Claude 2026) names the files to download; read those beside it.
    if let (Container::File(file), [entry]) = (&container, entries.as_slice())
        && matches!(sniff_entry(entry), Ok(Sniffed::Other))
        && let Some(listed) = manifest::listed_files(entry)
    {
        let folder = file.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
        let beside = Container::Folder(folder.clone()).entries()?;
        let (present, missing) = manifest::select(&beside, &listed);
        if present.is_empty() {
            return Err(ConfigError::NotAnExport {
                path: path.to_owned(),
                reason: format!(
                    "is a download manifest listing {}, but none of them is in {}; download them next to it",
                    listed.join(", "),
                    folder.display()
                ),
            }
            .into());
        }
        container = Container::Folder(folder);
        entries = present;
        from_manifest = true;
        bytes_on_disk = 0;
        manifest_notes =
            missing.into_iter().map(|name| format!("{}: lists {name}, which is not beside it; it is not read", path.display())).collect();
    }
    let mut found: Vec<(Sniffed, Entry)> = Vec::new();
    let mut not_exports = Vec::new();
    for entry in entries.iter().filter(|entry| matches!(container, Container::File(_)) || is_candidate(entry)) {
        match sniff_entry(entry)? {
            Sniffed::Other => not_exports.push(entry.display.to_string()),
            sniffed => found.push((sniffed, entry.clone())),
        }
    }
    let providers: std::collections::BTreeSet<Provider> = found.iter().filter_map(|(sniffed, _)| provider_of(*sniffed)).collect();
    if providers.len() > 1 {
        let names: Vec<&str> = providers.iter().map(|provider| provider.as_str()).collect();
        return Err(ConfigError::NotAnExport {
            path: path.to_owned(),
            reason: format!("holds exports of several providers ({}); give each export as its own input", names.join(", ")),
        }
        .into());
    }
    let container_kind = match &container {
        _ if from_manifest => "manifest of several downloads",
        Container::Zip(_) => "zip",
        Container::Folder(_) => "folder",
        Container::File(_) => "file",
    };
    let provider = match providers.first() {
        Some(provider) => *provider,
        // Only empty conversation arrays: an export without conversations.
        None if found.iter().any(|(_, entry)| entry.base_name().starts_with("conversations")) => Provider::ChatGpt,
        None => {
            if let Some(plan) = formats::plan_memory_format(path)? {
                return Ok(plan);
            }
            if let Some(format) = crate::validate::memory_format_of(path) {
                return Err(ConfigError::NotAnExport {
                    path: path.to_owned(),
                    reason: format!(
                        "this looks like {format}, but memport found no records it can read in it (check it with `memport validate {}`)",
                        path.display()
                    ),
                }
                .into());
            }
            let looked_at = if not_exports.is_empty() {
                "no .json, .csv or .html file".to_owned()
            } else {
                format!("looked at {}", not_exports.iter().take(5).cloned().collect::<Vec<_>>().join(", "))
            };
            return Err(ConfigError::NotAnExport {
                path: path.to_owned(),
                reason: format!(
                    "no ChatGPT, Claude, Grok, Copilot or Gemini export found ({looked_at}); give the export zip, its unzipped folder, or its main file"
                ),
            }
            .into());
        }
    };
    let of = |wanted: fn(Sniffed) -> bool| -> Vec<Entry> {
        found.iter().filter(|(sniffed, _)| wanted(*sniffed)).map(|(_, entry)| entry.clone()).collect()
    };
    let empty_conversation_files: Vec<Entry> =
        of(|sniffed| sniffed == Sniffed::EmptyArray).into_iter().filter(|entry| entry.base_name().starts_with("conversations")).collect();
    let mut plan = InputPlan {
        path: path.display().to_string(),
        provider,
        format: None,
        carried: Carried::default(),
        layout: String::new(),
        bytes_on_disk,
        streams: Vec::new(),
        warnings: Warnings::default(),
        notes: Vec::new(),
        asset_count: 0,
    };
    for note in manifest_notes {
        plan.warnings.add("manifest_file_missing");
        plan.notes.push(note);
    }
    match provider {
        Provider::ChatGpt => {
            let mut conversation_files = of(|sniffed| sniffed == Sniffed::ChatGptConversations);
            conversation_files.extend(empty_conversation_files);
            plan_chatgpt(&mut plan, &container, &entries, conversation_files);
        }
        Provider::Claude => {
            let mut conversation_files = of(|sniffed| sniffed == Sniffed::ClaudeConversations);
            conversation_files.extend(empty_conversation_files);
            chatgpt::sort_conversation_entries(&mut conversation_files);
            let conversations = Arc::new(claude::ClaudeDecoder) as Arc<dyn Decoder>;
            let projects = Arc::new(claude::side_files::ClaudeProjectDecoder) as Arc<dyn Decoder>;
            let memories = Arc::new(claude::side_files::ClaudeMemoriesDecoder) as Arc<dyn Decoder>;
            let project_lists = of(|sniffed| sniffed == Sniffed::ClaudeProjects);
            let project_files = of(|sniffed| sniffed == Sniffed::ClaudeProject);
            let memory_files = of(|sniffed| sniffed == Sniffed::ClaudeMemories);
            let mut parts = Vec::new();
            if !conversation_files.is_empty() {
                parts.push(count_label(conversation_files.len(), "conversations file"));
            }
            if !project_lists.is_empty() || !project_files.is_empty() {
                parts.push(if project_files.is_empty() {
                    "projects.json".to_owned()
                } else {
                    count_label(project_files.len(), "project file")
                });
            }
            if !memory_files.is_empty() {
                parts.push("memories.json".to_owned());
            }
            plan.layout = format!("{container_kind}, Claude export: {}", parts.join(", "));
            plan.streams.extend(conversation_files.into_iter().map(|entry| Stream::new(entry, Framing::Array, conversations.clone())));
            plan.streams.extend(project_lists.into_iter().map(|entry| Stream::new(entry, Framing::Array, projects.clone())));
            plan.streams.extend(project_files.into_iter().map(|entry| Stream::new(entry, Framing::Whole, projects.clone())));
            plan.streams.extend(memory_files.into_iter().map(|entry| Stream::new(entry, Framing::Whole, memories.clone())));
        }
        Provider::Grok => {
            let assets = grok::GrokAssets::build(&entries);
            plan.asset_count = assets.len();
            let decoder = Arc::new(grok::GrokDecoder { assets }) as Arc<dyn Decoder>;
            plan.layout = format!("{container_kind}, Grok prod-grok-backend.json");
            let backends = of(|sniffed| sniffed == Sniffed::GrokBackend);
            plan.streams.extend(backends.into_iter().map(|entry| Stream::new(entry, Framing::Member("conversations"), decoder.clone())));
        }
        Provider::Copilot => {
            let mut layouts = Vec::new();
            for (sniffed, entry) in &found {
                if let Sniffed::CopilotCsv(layout) = sniffed {
                    layouts.push(layout.describe());
                    let decoder = Arc::new(copilot::CopilotDecoder { layout: *layout, options: options.clone() });
                    plan.streams.push(Stream::new(entry.clone(), Framing::CopilotCsv(*layout, options.clone()), decoder));
                }
            }
            layouts.dedup();
            plan.layout = format!("{container_kind}, {}", layouts.join(" + "));
        }
        // Sniffing names memport's own providers only; other platforms come from memory-format
        // inputs, planned above.
        Provider::Other(_) => {}
        Provider::Gemini => {
            let json_files = of(|sniffed| sniffed == Sniffed::GeminiActivityJson);
            let html_files = of(|sniffed| sniffed == Sniffed::GeminiActivityHtml);
            // The user picks one format in Takeout; if both are there, JSON (UTC times to the
            // millisecond) is read and the HTML copy is not.
            let html = json_files.is_empty();
            if !html && !html_files.is_empty() {
                plan.warnings.add("gemini_html_ignored");
                plan.notes.push(format!("{}: Gemini activity is read from the JSON file; the HTML copy is not read", path.display()));
            }
            plan.layout = format!("{container_kind}, Google Takeout My Activity (Gemini Apps, {})", if html { "HTML" } else { "JSON" });
            for entry in if html { html_files } else { json_files } {
                let decoder = Arc::new(gemini::GeminiDecoder { files: gemini::TakeoutFiles::beside(&entry, &entries) });
                let framing = if html { Framing::GeminiActivityHtml(options.clone()) } else { Framing::GeminiActivity(options.clone()) };
                plan.streams.push(Stream::new(entry, framing, decoder));
            }
        }
    }
    if plan.bytes_on_disk == 0 {
        plan.bytes_on_disk = plan.streams.iter().map(|stream| stream.entry.size).sum();
    }
    Ok(plan)
}

fn count_label(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

fn plan_chatgpt(plan: &mut InputPlan, container: &Container, entries: &[Entry], mut conversation_files: Vec<Entry>) {
    chatgpt::sort_conversation_entries(&mut conversation_files);
    let sibling_entries = match container {
        Container::File(file) => match file.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            Some(parent) => Container::Folder(parent.to_owned()).entries().unwrap_or_default(),
            None => Container::Folder(".".into()).entries().unwrap_or_default(),
        },
        _ => entries.to_vec(),
    };
    if !matches!(container, Container::File(_)) {
        chatgpt::check_manifest(entries, &conversation_files, &mut plan.warnings, &mut plan.notes);
    }
    let (names, name_map_problem) = chatgpt::assets::AssetIndex::read_name_map(&sibling_entries);
    if let Some(problem) = name_map_problem {
        plan.warnings.add("asset_name_map_unreadable");
        plan.notes.push(problem);
    }
    let assets = chatgpt::assets::AssetIndex::build(&sibling_entries, &names);
    let sharded = conversation_files.iter().any(|entry| entry.base_name().starts_with("conversations-"));
    let layout = match (container, sharded) {
        (Container::Zip(_), true) => "zip, 2026 sharded conversations-NNN.json",
        (Container::Zip(_), false) => "zip, single conversations.json (2023-2025)",
        (Container::Folder(_), true) => "folder, 2026 sharded conversations-NNN.json",
        (Container::Folder(_), false) => "folder, single conversations.json (2023-2025)",
        (Container::File(_), true) => "file, one 2026 shard",
        (Container::File(_), false) => "file, conversations array",
    };
    plan.layout = layout.to_owned();
    plan.asset_count = assets.len();
    let decoder = Arc::new(ChatGptDecoder { assets }) as Arc<dyn Decoder>;
    plan.streams.extend(conversation_files.into_iter().map(|entry| Stream::new(entry, Framing::Array, decoder.clone())));
}

struct ChatGptDecoder {
    assets: chatgpt::assets::AssetIndex,
}

impl Decoder for ChatGptDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let mut decoded = chatgpt::normalize::decode_conversation(bytes, origin, &self.assets, options)?;
        if options.keep_provider_fields {
            provider_fields::attach(&mut decoded.conversation, provider_fields::chatgpt(bytes));
        }
        Ok(decoded)
    }
}
