//! What an extracted memory carries besides its text: its type in memport's taxonomy (and that
//! type's name in each format), every piece of evidence, when it was first and last said, how
//! sure extraction is, what it supersedes, and the entities it names. The extraction stage fills
//! it; every sink writes it where its format has a place.

use super::{Micros, Provider};

/// The name and version of the extractor, written as each memory's provenance.
pub const EXTRACTOR: &str = concat!("memport-rules/", env!("CARGO_PKG_VERSION"));
/// How memories were extracted (PAM `provenance.extraction_method`).
pub const EXTRACTION_METHOD: &str = "rules";

/// The kinds of memory extraction yields (the taxonomy; mapped to each format's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryType {
    /// Name, age, pronouns, home, origin, nationality, languages, occupation, employer, education.
    Identity,
    /// Likes, dislikes, favourites, diet, style and format wishes.
    Preference,
    /// Family, partner, friends, pets, colleagues.
    Relationship,
    /// Plans, intentions, what they learn.
    Goal,
    /// What they (or their team) decided.
    Decision,
    /// Standing wishes to the assistant: always, never, from now on, remember.
    Procedure,
    /// What did not work or must be avoided.
    Pitfall,
    /// What they are good at.
    Skill,
    /// Operating systems, tools, devices, stack.
    Environment,
    /// What they build or work on.
    Project,
    /// Other durable self-facts and habits.
    Fact,
    /// Events and situations: what happened to the user, where they are now.
    Context,
}

impl MemoryType {
    /// The provider-memory kind closest to the type, for what only knows kinds.
    pub fn memory_kind(self) -> super::MemoryKind {
        match self {
            MemoryType::Identity | MemoryType::Relationship => super::MemoryKind::Identity,
            MemoryType::Preference => super::MemoryKind::Preference,
            MemoryType::Procedure => super::MemoryKind::ProjectInstruction,
            _ => super::MemoryKind::Fact,
        }
    }

    /// Every type, in report order.
    pub const ALL: [MemoryType; 12] = [
        MemoryType::Identity,
        MemoryType::Preference,
        MemoryType::Relationship,
        MemoryType::Goal,
        MemoryType::Decision,
        MemoryType::Procedure,
        MemoryType::Pitfall,
        MemoryType::Skill,
        MemoryType::Environment,
        MemoryType::Project,
        MemoryType::Fact,
        MemoryType::Context,
    ];

    /// The name in reports, previews and tags.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::Identity => "identity",
            MemoryType::Preference => "preference",
            MemoryType::Relationship => "relationship",
            MemoryType::Goal => "goal",
            MemoryType::Decision => "decision",
            MemoryType::Procedure => "procedure",
            MemoryType::Pitfall => "pitfall",
            MemoryType::Skill => "skill",
            MemoryType::Environment => "environment",
            MemoryType::Project => "project",
            MemoryType::Fact => "fact",
            MemoryType::Context => "context",
        }
    }

    /// AIMEM `memory_type` (fact, preference, decision, identity, pitfall, procedure, goal).
    pub fn aimem_type(self) -> &'static str {
        match self {
            MemoryType::Identity | MemoryType::Relationship => "identity",
            MemoryType::Preference => "preference",
            MemoryType::Goal => "goal",
            MemoryType::Decision => "decision",
            MemoryType::Procedure => "procedure",
            MemoryType::Pitfall => "pitfall",
            MemoryType::Skill | MemoryType::Environment | MemoryType::Project | MemoryType::Fact | MemoryType::Context => "fact",
        }
    }

    /// Whether AIMEM counts it as DNA-class (never silently decayed or superseded).
    pub fn is_dna_class(self) -> bool {
        matches!(self.aimem_type(), "preference" | "decision" | "identity" | "pitfall" | "procedure")
    }

    /// PAM memory `type` (pam.md §3: fact, preference, skill, context, relationship, goal,
    /// instruction, identity, environment, project, custom).
    pub fn pam_type(self) -> &'static str {
        match self {
            MemoryType::Identity => "identity",
            MemoryType::Preference => "preference",
            MemoryType::Relationship => "relationship",
            MemoryType::Goal => "goal",
            MemoryType::Decision | MemoryType::Pitfall | MemoryType::Fact => "fact",
            MemoryType::Procedure => "instruction",
            MemoryType::Skill => "skill",
            MemoryType::Environment => "environment",
            MemoryType::Project => "project",
            MemoryType::Context => "context",
        }
    }

    /// MIF `memory_type` (memory-formats.md §3: semantic facts, preferences, decisions,
    /// learnings; unknown types are accepted).
    pub fn mif_type(self) -> &'static str {
        match self {
            MemoryType::Identity | MemoryType::Relationship | MemoryType::Fact | MemoryType::Environment | MemoryType::Project => "fact",
            MemoryType::Preference => "preference",
            MemoryType::Decision => "decision",
            MemoryType::Goal => "goal",
            MemoryType::Procedure => "instruction",
            MemoryType::Pitfall => "error",
            MemoryType::Skill => "learning",
            MemoryType::Context => "context",
        }
    }

    /// UMP `kind` (semantic, episodic, procedural, working, identity).
    pub fn ump_kind(self) -> &'static str {
        match self {
            MemoryType::Identity | MemoryType::Relationship => "identity",
            MemoryType::Procedure => "procedural",
            MemoryType::Context => "episodic",
            _ => "semantic",
        }
    }

    /// The type named `name` (as [`MemoryType::as_str`] writes it).
    pub fn named(name: &str) -> Option<MemoryType> {
        MemoryType::ALL.into_iter().find(|memory_type| memory_type.as_str() == name)
    }
}

/// One place the user said it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The provider of the conversation.
    pub provider: Provider,
    /// The conversation, as the output names it.
    pub conversation_id: String,
    /// The message.
    pub message_id: String,
    /// The sentence's byte span in the message text.
    pub span: (usize, usize),
    /// The sentence, verbatim (with secrets masked when `--redact secrets` is in force).
    pub text: String,
    /// When the message was written.
    pub time: Micros,
}

/// The kinds of entity a memory can name (AIMEM's entity kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityKind {
    /// A named person.
    Person,
    /// A company, school or other body.
    Organization,
    /// A town, country or region.
    Place,
    /// A tool, system, device or language of computing.
    Technology,
    /// A field, subject or skill.
    Concept,
    /// A named animal (AIMEM extension kind `x-animal`).
    Animal,
}

impl EntityKind {
    /// The AIMEM `kind` (also used by the other formats).
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Person => "person",
            EntityKind::Organization => "organization",
            EntityKind::Place => "place",
            EntityKind::Technology => "technology",
            EntityKind::Concept => "concept",
            EntityKind::Animal => "x-animal",
        }
    }

    /// Every kind.
    pub const ALL: [EntityKind; 6] =
        [EntityKind::Person, EntityKind::Organization, EntityKind::Place, EntityKind::Technology, EntityKind::Concept, EntityKind::Animal];

    /// The kind named `name` (as [`EntityKind::as_str`] writes it).
    pub fn named(name: &str) -> Option<EntityKind> {
        EntityKind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

/// The languages extraction reads, by BCP 47 tag (a memory's `language`).
pub const LANGUAGES: [&str; 5] = ["en", "de", "fr", "es", "cs"];

/// The tag `name` as one of [`LANGUAGES`].
pub fn language_named(name: &str) -> Option<&'static str> {
    LANGUAGES.into_iter().find(|tag| *tag == name)
}

/// An entity a memory names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityRef {
    /// Deterministic id from the normalized name and kind (`ent-…`).
    pub id: String,
    /// The name as first said.
    pub name: String,
    /// What it is.
    pub kind: EntityKind,
    /// When a memory naming it was first said.
    pub first_seen: Micros,
    /// True on the one memory of the run that first names it: sinks with an entity table write
    /// the entity there, so each entity is written once.
    pub first_mention: bool,
}

/// An extracted memory's confidence as a decimal of two places in the form RFC 8785 prints
/// numbers (`0.95`, `0.5`, `1`), so every format writes the same figure, and a signed record's
/// hash covers what the file shows.
pub fn confidence_decimal(confidence: f32) -> String {
    // Saturating cast: NaN becomes 0, and the clamp keeps the rest within 0..=100.
    let hundredths = (f64::from(confidence).clamp(0.0, 1.0) * 100.0).round() as u8;
    match hundredths {
        0 => "0".to_owned(),
        100 => "1".to_owned(),
        _ if hundredths.is_multiple_of(10) => format!("0.{}", hundredths / 10),
        _ => format!("0.{hundredths:02}"),
    }
}

/// Everything extraction knows about one memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    /// Its type.
    pub memory_type: MemoryType,
    /// The slot it fills (`home`, `likes`, …).
    pub slot: &'static str,
    /// The value as first said (`Leeds`).
    pub value: String,
    /// The language of the statement (`en`, `de`, `fr`, `es`, `cs`).
    pub language: &'static str,
    /// How sure: grows with each piece of evidence.
    pub confidence: f32,
    /// Every place the user said it, in input order.
    pub evidence: Vec<Evidence>,
    /// How many pieces of evidence there are (`evidence.len()`, kept for sinks that write only
    /// a count).
    pub evidence_count: u64,
    /// When it was first said.
    pub first_seen: Micros,
    /// When it was last said.
    pub last_seen: Micros,
    /// The id of the memory this one replaced (a new home supersedes the old one).
    pub supersedes: Option<String>,
    /// The id of the memory that replaced this one, if any: it is kept, marked as no longer
    /// current.
    pub superseded_by: Option<String>,
    /// A contact detail (e-mail, phone, street address): written only under
    /// `--extract-pii keep`, and then marked not exportable where the format can say so.
    pub personal: bool,
    /// The entities it names.
    pub entities: Vec<EntityRef>,
    /// Every conversation it was said in was retracted: written again so a reader marks it,
    /// never silently dropped.
    pub retracted: bool,
}
