//! The canonical record model every source normalizes to and every sink reads from.
//!
//! It follows the PAM conversation schema (conversation → messages with roles, content parts,
//! parent links) plus a memory record for what a provider already stores as memory. Sources fill
//! it; stages only change a message's [`Disposition`]; sinks never see provider JSON.

pub mod extracted;
pub mod retraction;
pub mod slots;

use std::sync::Arc;

use crate::hash::ContentKey;

pub use retraction::{ErasedMessage, RetractedConversation, RetractionMemberNames};

/// Microseconds since the Unix epoch, UTC.
pub type Micros = i64;

/// Which assistant an export came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI ChatGPT.
    ChatGpt,
    /// Anthropic Claude (claude.ai).
    Claude,
    /// xAI Grok.
    Grok,
    /// Microsoft Copilot (consumer).
    Copilot,
    /// Google Gemini Apps (Takeout My Activity).
    Gemini,
    /// Another platform or system, named in a memory-format input (a PAM store's
    /// `provider.name`, a MIF `source.agent`, an AIMEM producer): kept by name. See
    /// [`Provider::named`].
    Other(&'static str),
}

impl Provider {
    /// The product name used in ids, tags and PAM `provider.name`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::ChatGpt => "chatgpt",
            Provider::Claude => "claude",
            Provider::Grok => "grok",
            Provider::Copilot => "copilot",
            Provider::Gemini => "gemini",
            Provider::Other(name) => name,
        }
    }

    /// The provider of memport's own sources called `name`, if it is one.
    pub fn own_named(name: &str) -> Option<Provider> {
        const OWN: [Provider; 5] = [Provider::ChatGpt, Provider::Claude, Provider::Grok, Provider::Copilot, Provider::Gemini];
        OWN.into_iter().find(|provider| provider.as_str() == name)
    }

    /// The provider called `name` in a memory-format input. memport's own providers by their
    /// names; any other name that is a plain lowercase word (`perplexity`, `shodh-memory`) as
    /// [`Provider::Other`]; anything else as `other`.
    pub fn named(name: &str) -> Provider {
        if let Some(provider) = Provider::own_named(name) {
            return provider;
        }
        // PAM's platform pattern, the strictest of the formats: `^[a-z0-9_-]{2,32}$`.
        let is_plain = (2..=32).contains(&name.len())
            && name.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-' || byte == b'_');
        if !is_plain {
            return Provider::Other("other");
        }
        Provider::Other(intern_provider_name(name))
    }
}

/// The `'static` copy of an other platform's name, kept once per distinct name. There is no
/// cap on how many: a cap would make which names survive depend on the order the worker
/// threads decode in, and output must not. Real inputs name a handful of platforms; each name
/// costs at most 32 bytes plus a set entry, and needs a record of its own to appear.
fn intern_provider_name(name: &str) -> &'static str {
    static NAMES: std::sync::Mutex<Option<std::collections::HashSet<&'static str>>> = std::sync::Mutex::new(None);
    // A poisoned lock only means another thread panicked while inserting a name; the set is
    // still a valid set of names.
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let names = names.get_or_insert_with(Default::default);
    if let Some(known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// Who wrote a message, after normalization.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The person.
    User,
    /// The model.
    Assistant,
    /// Instructions or context set by the platform.
    System,
    /// A tool call result or tool traffic.
    Tool,
}

impl Role {
    /// The lowercase name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Tool => "tool",
        }
    }
}

/// Why a message read from the input is not written. Each variant is a named policy in the
/// run report, so every message read is accounted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// Plumbing the provider hides from the user: system prompts, custom-instruction and
    /// memory-context messages (kept as conversation context, not as turns).
    Hidden,
    /// Not on the active branch and `--branches active` is in force.
    OffBranch,
    /// Nothing left after rendering (for example an interrupted answer with no text).
    Empty,
    /// An activity record that is not a turn (Gemini feedback, "Used Gemini Apps", Canvas
    /// events without an answer): counted, not written.
    Activity,
    /// Marked as not for export by its owner (UMP `consent.exportable: false` in a
    /// memory-format input): counted, not written.
    NotExportable,
    /// A sync emitted it in an earlier run, unchanged: counted, not written again.
    EmittedBefore,
    /// Erased for good from the run's memory store (`memport forget --hard`, UMP `forget` with
    /// `hard: true`): counted, written to no output.
    Erased,
    /// Withdrawn in the memory-format input it was read from (UMP `lifecycle.status:
    /// tombstoned`): counted, not written as if it were current.
    Retracted,
}

impl SkipReason {
    /// The key used in the run report.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Hidden => "hidden",
            SkipReason::OffBranch => "off_branch",
            SkipReason::Empty => "empty",
            SkipReason::Activity => "activity",
            SkipReason::NotExportable => "not_exportable",
            SkipReason::EmittedBefore => "emitted_before",
            SkipReason::Erased => "erased",
            SkipReason::Retracted => "retracted",
        }
    }

    /// Every reason, in report order.
    pub const ALL: [SkipReason; 8] = [
        SkipReason::Hidden,
        SkipReason::OffBranch,
        SkipReason::Empty,
        SkipReason::Activity,
        SkipReason::NotExportable,
        SkipReason::EmittedBefore,
        SkipReason::Erased,
        SkipReason::Retracted,
    ];
}

/// What happens to a message. Sources set `Keep` or `Skip`; the dedup stage may set `Duplicate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// Written by every sink.
    Keep,
    /// Left out by a named policy.
    Skip(SkipReason),
    /// Same `content_hash` as a message written earlier in input order.
    Duplicate,
}

/// What kind of binary an asset pointer refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssetKind {
    /// A picture (upload or generated).
    Image,
    /// Sound (voice chats).
    Audio,
    /// Video frames or containers.
    Video,
    /// Anything else.
    File,
}

impl AssetKind {
    /// Lowercase name used in rendered text and outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            AssetKind::Image => "image",
            AssetKind::Audio => "audio",
            AssetKind::Video => "video",
            AssetKind::File => "file",
        }
    }
}

/// A reference to a binary the message points at, resolved against the export when possible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asset {
    /// Image, audio, video or file.
    pub kind: AssetKind,
    /// The pointer as the provider wrote it (`file-service://…`, `sediment://…`).
    pub pointer: String,
    /// The zip entry or file path it resolves to; `None` when the export does not include it.
    pub resolved: Option<String>,
    /// The original file name, where the export says it.
    pub name: Option<String>,
}

/// One typed piece of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Prose or markdown.
    Text(String),
    /// Source code with its language (`unknown` when the provider did not say).
    Code {
        /// Language name as given by the provider.
        language: String,
        /// The code.
        text: String,
    },
    /// A binary the message refers to.
    Asset(Asset),
    /// Reasoning shown apart from the answer (Claude `thinking` blocks): kept, but not part of
    /// the text that text-only formats carry.
    Thinking(String),
    /// A content type memport does not know yet, kept as raw JSON so nothing is lost.
    Raw {
        /// The provider's content type name.
        content_type: String,
        /// The content object, compact JSON.
        json: String,
    },
}

/// One message of a conversation, normalized.
#[derive(Debug, Clone)]
pub struct Message {
    /// Provider message id (ChatGPT: the node id).
    pub id: String,
    /// Provider id of the parent message that is itself a message (tree parent), if any.
    pub parent_id: Option<String>,
    /// Normalized role.
    pub role: Role,
    /// Tool or plugin name for tool traffic, or the provider's role when it was unknown.
    pub author_name: Option<String>,
    /// Message time; the conversation or parent time when the provider left it out.
    pub created_at: Micros,
    /// False when `created_at` was filled in from the conversation or a parent.
    pub time_known: bool,
    /// Typed content. Empty when the message is one plain text part: then `text` is that part
    /// (most messages; keeping it once saves a copy of every message's text).
    pub parts: Vec<Part>,
    /// The content rendered as plain text/markdown: what text-only formats carry.
    pub text: String,
    /// Reasoning (thoughts, recaps) rather than a visible answer.
    pub is_thought: bool,
    /// The provider's own fields of this message that memport does not model, as compact JSON
    /// (`{"metadata":{…},…}`); only read when an output carries them (Parquet).
    pub provider_fields: Option<Box<str>>,
    /// Model that wrote it, where known.
    pub model: Option<String>,
    /// Provider status such as `in_progress`, where it is not the normal finished state.
    pub status: Option<String>,
    /// Whether the message lies on the conversation's active thread.
    pub on_active_branch: bool,
    /// The dedup key of `text` and, when an output writes it, its PAM §6 `content_hash` digest
    /// ([`DecodeOptions::content_key`](crate::sources::DecodeOptions::content_key)). Sources
    /// compute it for messages that flow on (`Keep`) only; it is empty for skipped ones.
    pub content_key: ContentKey,
    /// Written, skipped by a policy, or a duplicate.
    pub disposition: Disposition,
    /// Extraction found something the user says about themselves in it: dedup keeps such a
    /// message in each conversation that says it, since saying it again is evidence too.
    pub discloses: bool,
}

/// What kind of memory a provider keeps, mapped to each format's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryKind {
    /// What the person told the provider about themselves (ChatGPT "about you").
    Identity,
    /// How the person wants answers (ChatGPT "how should ChatGPT respond").
    Preference,
    /// Something the provider remembered (ChatGPT saved memories, Claude's memory summaries).
    Fact,
    /// Standing instructions of a project (Claude project prompt).
    ProjectInstruction,
    /// Knowledge attached to a project (Claude project description and documents).
    ProjectKnowledge,
}

impl MemoryKind {
    /// Short name used in ids and tags.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::Identity => "identity",
            MemoryKind::Preference => "preference",
            MemoryKind::Fact => "fact",
            MemoryKind::ProjectInstruction => "project-instruction",
            MemoryKind::ProjectKnowledge => "project-knowledge",
        }
    }

    /// The kind named `name` (as [`MemoryKind::as_str`] writes it).
    pub fn named(name: &str) -> Option<MemoryKind> {
        [MemoryKind::Identity, MemoryKind::Preference, MemoryKind::Fact, MemoryKind::ProjectInstruction, MemoryKind::ProjectKnowledge]
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }

    /// The kind of a memory another system typed `memory_type`, with the labels that keep
    /// that type: `<prefix>:<type>` (`mif-type:decision`), which the same format's writer
    /// uses again, so a type memport has no kind for survives a round trip.
    pub fn from_foreign_type(memory_type: &str, prefix: &str) -> (MemoryKind, Vec<String>) {
        let kind = match memory_type {
            "identity" => MemoryKind::Identity,
            "preference" => MemoryKind::Preference,
            "instruction" | "procedure" | "procedural" => MemoryKind::ProjectInstruction,
            "project" => MemoryKind::ProjectKnowledge,
            _ => MemoryKind::Fact,
        };
        (kind, vec![format!("{prefix}:{memory_type}")])
    }

    /// AIMEM `memory_type` (memory-formats.md: fact, preference, decision, identity, pitfall,
    /// procedure, episodic, goal).
    pub fn aimem_type(self) -> &'static str {
        match self {
            MemoryKind::Identity => "identity",
            MemoryKind::Preference => "preference",
            MemoryKind::Fact | MemoryKind::ProjectKnowledge => "fact",
            MemoryKind::ProjectInstruction => "procedure",
        }
    }

    /// PAM memory `type` (pam.md §3).
    pub fn pam_type(self) -> &'static str {
        match self {
            MemoryKind::Identity => "identity",
            MemoryKind::Preference | MemoryKind::ProjectInstruction => "instruction",
            MemoryKind::Fact => "context",
            MemoryKind::ProjectKnowledge => "project",
        }
    }
}

/// A memory the provider already keeps (custom instructions, saved memories, project knowledge).
#[derive(Debug, Clone)]
pub struct MemoryRecord {
    /// Stable id: `<provider>.mem.<first 16 bytes of SHA-256 over kind and text, hex>`, so the
    /// same memory repeated in many conversations (custom instructions) is one record.
    pub id: String,
    /// What it is.
    pub kind: MemoryKind,
    /// The memory text.
    pub text: String,
    /// When the provider recorded it (or the conversation it came with started).
    pub created_at: Micros,
    /// Extra labels: the project it belongs to, the document name (`project:<id>`, `doc:<name>`).
    pub labels: Vec<String>,
    /// True when an earlier memory had the same id (the same kind and text): not written again.
    pub is_duplicate: bool,
    /// False when its owner marked it as not for export (PAM `access.exportable: false`, UMP
    /// `consent.exportable: false`): counted, not written.
    pub exportable: bool,
    /// Erased for good from the run's memory store: counted, written to no output.
    pub erased: bool,
    /// Withdrawn in the memory-format input it was read from (UMP `lifecycle.status:
    /// tombstoned`, PAM `status: retracted`, MIF `metadata.status: retracted`, AIME
    /// `retracted: true`, an AIMEM chunk tagged `retracted`): counted, and written marked as
    /// withdrawn in each format's terms, so a forgotten memory never comes back as a current
    /// one (and a delta read back still retracts it).
    pub retracted_in_input: bool,
    /// Read back from a memory format before what it links to (the messages of its evidence,
    /// the memory it supersedes or was superseded by), or after such a memory: counted with its
    /// record, but written by the read-back stage at the end of the run, once the whole input
    /// says what is written.
    pub written_at_end: bool,
    /// Its vector, when a memory-format input carried one (PAM `embeddings.json`, MIF
    /// `embeddings`): memport computes none, and never re-embeds.
    pub embedding: Option<Box<Embedding>>,
    /// What extraction knows about it (type, evidence, supersession, entities) when memport
    /// extracted it from what the user said; `None` for a memory the provider kept.
    pub extracted: Option<Box<extracted::Extracted>>,
}

/// A memory's embedding as another system computed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// Its id in the input (PAM `emb-001`), when it had one.
    pub id: Option<String>,
    /// The model that computed it.
    pub model: String,
    /// Its length.
    pub dimensions: u64,
    /// The numbers, when the input held them (a PAM embedding may point to storage instead).
    pub vector: Option<Vec<f64>>,
    /// When it was computed, when the input says.
    pub created_at: Option<Micros>,
}

impl MemoryRecord {
    /// A memory with its content-derived id.
    pub fn new(provider: Provider, kind: MemoryKind, text: String, created_at: Micros, labels: Vec<String>) -> Self {
        let mut keyed = Vec::with_capacity(text.len() + 32);
        keyed.extend_from_slice(kind.as_str().as_bytes());
        keyed.push(0);
        for label in &labels {
            keyed.extend_from_slice(label.as_bytes());
            keyed.push(0);
        }
        keyed.extend_from_slice(text.as_bytes());
        let mut id = format!("{}.mem.", provider.as_str());
        crate::hash::push_hex(&mut id, &crate::hash::sha256(&keyed)[..16]);
        MemoryRecord {
            id,
            kind,
            text,
            created_at,
            labels,
            is_duplicate: false,
            exportable: true,
            erased: false,
            retracted_in_input: false,
            written_at_end: false,
            embedding: None,
            extracted: None,
        }
    }

    /// The type another system gave this memory in `format` (`mif-type`, `pam-type`,
    /// `ump-kind`, `aimem-type`), kept as a label when it was read: that format's writer uses
    /// it instead of the kind's mapping.
    pub fn format_type(&self, format: &str) -> Option<&str> {
        self.labels.iter().find_map(|label| label.strip_prefix(format).and_then(|rest| rest.strip_prefix(':')))
    }

    /// Whether sinks write it with its record: the run writes it
    /// ([`MemoryRecord::is_kept`]), and not at the end ([`MemoryRecord::written_at_end`]).
    pub fn is_written(&self) -> bool {
        self.is_kept() && !self.written_at_end
    }

    /// Whether the run writes it, with its record or at the end: not a duplicate, not marked
    /// as not for export, not erased. One retracted in its input is written, marked as
    /// withdrawn.
    pub fn is_kept(&self) -> bool {
        self.exportable && !self.is_duplicate && !self.erased
    }

    /// Whether it is written as withdrawn: retracted in its input, or by a sync.
    pub fn is_withdrawn(&self) -> bool {
        self.retracted_in_input || self.extracted.as_ref().is_some_and(|extracted| extracted.retracted)
    }

    /// Takes out everything the memory said, keeping what names it (id, kind, type, slot,
    /// times, supersession links) and its withdrawal: what a withdrawal of an erased memory
    /// carries, so the erased words are written nowhere again. Only the labels that name a
    /// format's type stay (a project or document label says what the memory was about).
    pub fn empty_of_what_it_said(&mut self) {
        ERASED_MEMORY_TEXT.clone_into(&mut self.text);
        self.labels.retain(|label| label.split_once(':').is_some_and(|(prefix, _)| prefix.ends_with("-type") || prefix.ends_with("-kind")));
        self.embedding = None;
        if let Some(extracted) = self.extracted.as_deref_mut() {
            extracted.value.clear();
            extracted.evidence.clear();
            extracted.entities.clear();
        }
    }
}

/// The text of a withdrawn memory that its owner erased ([`MemoryRecord::empty_of_what_it_said`]).
pub const ERASED_MEMORY_TEXT: &str = "Erased at the owner's request.";

impl Message {
    /// A kept user message with plain text, for tests of what is written from messages.
    #[cfg(test)]
    pub fn user_for_tests(id: &str, parent: Option<&str>, text: &str, created_at: Micros) -> Message {
        Message {
            id: id.to_owned(),
            parent_id: parent.map(str::to_owned),
            role: Role::User,
            author_name: None,
            created_at,
            time_known: true,
            parts: Vec::new(),
            text: text.to_owned(),
            is_thought: false,
            provider_fields: None,
            model: None,
            status: None,
            on_active_branch: true,
            content_key: ContentKey::default(),
            disposition: Disposition::Keep,
            discloses: false,
        }
    }
}

/// Where a record came from: enough to find it again in the input.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The file or `archive.zip!entry` that holds it.
    pub file: Arc<str>,
    /// Byte offset of the record's first byte in that file (uncompressed for zip entries).
    pub offset: u64,
    /// Position of the record in the file's top-level array, from 0.
    pub index: u64,
}

/// One conversation, normalized, with every message the provider stored (skipped ones included,
/// marked by their [`Disposition`]) in tree order.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// Which provider.
    pub provider: Provider,
    /// Provider conversation id.
    pub id: String,
    /// Title shown in the provider's UI.
    pub title: Option<String>,
    /// Creation time.
    pub created_at: Option<Micros>,
    /// Last update time.
    pub updated_at: Option<Micros>,
    /// Default model of the conversation.
    pub model: Option<String>,
    /// Custom instructions and other context the provider injected (not turns).
    pub system_instruction: Option<String>,
    /// Archived in the provider's UI.
    pub is_archived: bool,
    /// Messages in tree order (pre-order, children in creation order).
    pub messages: Vec<Message>,
    /// Memories the provider keeps alongside this conversation.
    pub memories: Vec<MemoryRecord>,
    /// The zone zoneless provider times were read in (`UTC`, `+02:00`), when some were:
    /// Copilot writes local times without a zone.
    pub assumed_time_zone: Option<String>,
    /// True when an earlier input already held this conversation (overlapping exports): set by
    /// the unique-id stage.
    pub is_repeat: bool,
    /// True for a record that carries provider memories and no conversation (Claude
    /// `memories.json`, a Claude project): not counted as a conversation.
    pub memories_only: bool,
    /// Where it was read.
    pub origin: Origin,
}

impl Conversation {
    /// Raises an update time that comes before the creation time (a provider's clock, or
    /// update times kept to the second beside creation times kept to the microsecond) to the
    /// creation time, which formats require (PAM: `updated_at` ≥ `created_at`). Returns
    /// whether it did, for the run report.
    pub fn raise_update_time(&mut self) -> bool {
        match (self.created_at, self.updated_at) {
            (Some(created), Some(updated)) if updated < created => {
                self.updated_at = Some(created);
                true
            }
            _ => false,
        }
    }

    /// A conversation of `provider` with id `id` and nothing else known yet.
    pub fn empty(provider: Provider, id: String, origin: Origin) -> Conversation {
        Conversation {
            provider,
            id,
            title: None,
            created_at: None,
            updated_at: None,
            model: None,
            system_instruction: None,
            is_archived: false,
            messages: Vec::new(),
            memories: Vec::new(),
            assumed_time_zone: None,
            is_repeat: false,
            memories_only: false,
            origin,
        }
    }

    /// A record that only carries `memories` (a Claude project, a memory-format file's
    /// memories): not counted as a conversation.
    pub fn memories_only(provider: Provider, id: String, origin: Origin, memories: Vec<MemoryRecord>) -> Conversation {
        Conversation { memories, memories_only: true, ..Conversation::empty(provider, id, origin) }
    }
}

/// Counts of things worth telling the user that did not stop a record, by kind
/// (`asset_missing`, `unknown_content_type:<name>`, …). They go to the run report.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Warnings(pub std::collections::BTreeMap<String, u64>);

impl Warnings {
    /// Counts one more warning of `kind`.
    pub fn add(&mut self, kind: impl AsRef<str>) {
        let kind = kind.as_ref();
        match self.0.get_mut(kind) {
            Some(count) => *count += 1,
            None => {
                self.0.insert(kind.to_owned(), 1);
            }
        }
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Warnings) {
        for (kind, count) in &other.0 {
            *self.0.entry(kind.clone()).or_insert(0) += count;
        }
    }
}
