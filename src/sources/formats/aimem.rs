//! AIMEM bundles and NDJSON streams as input (memory-formats.md §2).
//!
//! A consumer must verify a bundle before importing it, so the input is first checked the way
//! `memport validate` checks it, and refused whole when it fails (409 checksum, 422 malformed).
//! Then the chunks are read in order, each joined with the `temporal` edge that points at it:
//! memport writes temporal edges in the order of their target chunks, so one pass over the
//! edges beside the pass over the chunks finds every parent without holding the edges in
//! memory. A file in another order (another producer's, a server's export) is found so in a
//! first pass over the ids and read through a temporary file instead ([`super::aimem_order`]):
//! every edge is kept in any order.
//!
//! memport's own chunks name provider, conversation and message in their URN and their role,
//! flags and zone in tags, so its bundles convert back to the same chunks and edges: reading
//! an export memport wrote and writing it again is a no-op for a consumer (the draft's
//! Level 3). Split chunks (`part-i-of-n`) are joined back into one message. memport's
//! extracted memories are read whole: their type, slot, confidence and language from their
//! tags, their evidence, supersession and entities from their edges and links
//! ([`super::aimem_links`]); AIMEM has no place for a memory's value or its evidence's quotes,
//! so those come back empty. Other producers' chunks become memory records that keep their
//! `memory_type` as an `aimem-type:<type>` label and their tags as labels; their edges,
//! entities and chunk-entity links are not carried. The conversations the envelope's
//! `x-memport-retracted` lists (a sync delta's) go to every output as retractions, and its
//! `x-memport-withdrawn-messages` lists as withdrawals of those messages.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::error::RunError;
use crate::model::{Conversation, MemoryKind, MemoryRecord, Origin, Provider, Role, Warnings};
use crate::sources::container::Entry;
use crate::sources::contract::{DecodeOptions, Decoded, Decoder, RecordReject};
use crate::sources::formats::aimem_links::{self, ExtractedLinks, MOST_LINK_BYTES, NotCollected, may_be_memory_edge};
use crate::sources::formats::aimem_order::{Reordered, in_reader_order, insert_parent, temporal_edge};
use crate::sources::formats::grouped::{ArrayRecords, GroupingReader, LineRecords, RecordSource, SourceProblem, string_at};
use crate::sources::formats::{MessageFields, ParentLinks, decoded, parse_group, push_turn, refuse, retractions, role_named};
use crate::sources::json_array::ArrayFramer;
use crate::timefmt::parse_rfc3339;
use crate::validate::aimem::{RETRACTED_MEMBER, WITHDRAWN_MEMBER};

/// What the envelope of a checked input says.
pub struct Envelope {
    /// NDJSON stream rather than one bundle.
    pub ndjson: bool,
    /// The producer namespace of its URNs.
    pub producer: String,
    /// Warnings for the run report.
    pub warnings: Warnings,
    /// Notes for people.
    pub notes: Vec<String>,
    /// The records are in the order memport writes them: one pass joins chunks and edges.
    pub in_reader_order: bool,
    /// The conversations its `x-memport-retracted` lists (a sync delta's), for every output.
    pub retracted: Vec<crate::model::RetractedConversation>,
    /// Entries of that list that are not readable retractions.
    pub retractions_unreadable: u64,
    /// The links of memport's extracted memories (`None` when there were too many to hold).
    pub links: Option<Arc<ExtractedLinks>>,
}

/// Checks an AIMEM input as a consumer must before importing it, and reads its envelope.
///
/// # Errors
/// [`crate::error::ConfigError::NotAnExport`] naming the first problem when the input fails the
/// consumer checks; I/O errors.
pub fn check_input(path: &Path) -> Result<Envelope, RunError> {
    let display = path.display().to_string();
    let open = || crate::remote::open_path(path).map(BufReader::new).map_err(|error| RunError::read(&display, error));
    let mut first_line = Vec::new();
    open()?.take(64 << 20).read_until(b'\n', &mut first_line).map_err(|error| RunError::read(&display, error))?;
    let envelope_line = serde_json::from_slice::<Value>(&first_line).ok().filter(|line| line.get("chunks").is_none());
    let ndjson = envelope_line.as_ref().is_some_and(|envelope| envelope.get("format").is_some());
    // Whether the records are in memport's order is found on a thread of its own while the
    // consumer checks run (on the worker pool): it costs no time before the first record is read.
    let open_boxed = || -> Result<Box<dyn Read + Send>, RunError> { Ok(Box::new(open()?)) };
    // So are the links of its extracted memories.
    let (validation, in_reader_order, links) = std::thread::scope(|scope| {
        let order = scope.spawn(|| {
            chunks_and_edges(&open_boxed, &display, ndjson).map_or(true, |(chunks, edges)| in_reader_order(chunks, edges, id_and_group_key))
        });
        let links = scope.spawn(|| memory_links(&open_boxed, &display, ndjson));
        let validation = crate::validate::aimem::validate_file_keeping_envelope(path);
        (validation, order.join().unwrap_or(true), links.join())
    });
    let links = links.map_err(|_| RunError::read(&display, std::io::Error::other("reading the memories' links panicked")))??;
    let (mut validation, envelope) = validation?;
    let foreign_ids = crate::validate::aimem::tolerate_foreign_ids(&mut validation);
    if let Some(problem) = validation.problems.first() {
        let more = validation.problem_count().saturating_sub(1);
        let more = if more > 0 { format!(" (and {more} more)") } else { String::new() };
        return Err(refuse(
            path,
            format!(
                "this AIMEM bundle fails the consumer checks a reader must run before importing it: {} {} at {}: {}{more}; see them all with `memport validate {}`",
                problem.status,
                problem.code,
                problem.location,
                problem.message,
                path.display()
            ),
        ));
    }
    // The envelope as the checks read it (a bundle's last member of a name, as a parsed value
    // keeps): its producer, model and memport's retractions, checked above.
    let producer = envelope.get("producer").and_then(Value::as_str).unwrap_or_default().to_owned();
    let embedding_model = envelope.get("embedding_model").and_then(Value::as_str).map(str::to_owned);
    let listed = envelope.get(RETRACTED_MEMBER).cloned().unwrap_or_default();
    let (mut retracted, mut retractions_unreadable) = retractions::from_list(&listed, &crate::model::RetractionMemberNames::SNAKE_CASE);
    let withdrawn = envelope.get(WITHDRAWN_MEMBER).cloned().unwrap_or_default();
    let (withdrawals, withdrawals_unreadable) =
        retractions::withdrawals_from_list(&withdrawn, &crate::model::RetractionMemberNames::SNAKE_CASE);
    crate::model::RetractedConversation::merge(&mut retracted, withdrawals);
    retractions_unreadable += withdrawals_unreadable;
    let mut warnings = Warnings::default();
    let mut notes = Vec::new();
    if let Some(model) = embedding_model {
        // The draft: a consumer that drops embeddings must say so, naming the model, and must
        // never re-embed.
        warnings.add(format!("aimem_embeddings_dropped:{model}"));
        notes.push(format!(
            "{display}: the chunks' embeddings (model {model}) are not carried: the canonical model has no vectors; nothing was re-embedded"
        ));
    }
    if let Some((_, notice)) = foreign_ids {
        warnings.add("aimem_foreign_chunk_ids");
        notes.push(format!("{display}: {notice}"));
    }
    for notice in validation.notices {
        warnings.add("aimem_input_notice");
        notes.push(format!("{display}: {notice}"));
    }
    let links = match links {
        Ok(links) => Some(Arc::new(links)),
        Err(NotCollected::TooMany) => {
            warnings.add("aimem_memory_links_not_read");
            notes.push(format!(
                "{display}: the extracted memories' edges, entities and links hold more than {} MiB, more than memport keeps in memory: \
                 they are read as plain memories (their text, type and tags)",
                MOST_LINK_BYTES >> 20
            ));
            None
        }
    };
    Ok(Envelope { ndjson, producer, warnings, notes, in_reader_order, retracted, retractions_unreadable, links })
}

/// Chunks, each with the source of the edge that targets it (as a `_parent` member).
struct ChunksWithParents {
    chunks: Box<dyn RecordSource>,
    edges: Box<dyn RecordSource>,
    /// The next edge not yet joined: (source, target).
    next_edge: Option<(String, String)>,
    edges_done: bool,
}

impl ChunksWithParents {
    fn load_edge(&mut self) {
        while self.next_edge.is_none() && !self.edges_done {
            let mut edge = Vec::new();
            match self.edges.next_record(&mut edge) {
                Ok(Some(_)) => {
                    // Only a temporal edge links a chunk to its parent.
                    if let Some(edge) = temporal_edge(&edge) {
                        self.next_edge = Some(edge);
                    }
                }
                // Edges were checked with the rest; a problem here only loses parent links.
                Ok(None) | Err(_) => self.edges_done = true,
            }
        }
    }
}

impl RecordSource for ChunksWithParents {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
        let start = out.len();
        let Some(offset) = self.chunks.next_record(out)? else { return Ok(None) };
        self.load_edge();
        let id = string_at(&out[start..], &["id"]);
        let joined = match (&self.next_edge, id) {
            (Some((_, target)), Some(id)) if *target == id => self.next_edge.take().map(|(source, _)| source),
            _ => None,
        };
        if let Some(source) = joined {
            insert_parent(out, start, &source);
        }
        Ok(Some(offset))
    }
}

/// The `_kind` of an NDJSON line: read from where memport writes it (first) without parsing,
/// else parsed.
fn line_kind_is(line: &[u8], kind: &str) -> bool {
    if let Some(rest) = line.strip_prefix(b"{\"_kind\":\"") {
        return rest.strip_prefix(kind.as_bytes()).is_some_and(|after| after.first() == Some(&b'"'));
    }
    string_at(line, &["_kind"]).as_deref() == Some(kind)
}

fn is_chunk_line(line: &[u8]) -> bool {
    line_kind_is(line, "chunk")
}

fn is_edge_line(line: &[u8]) -> bool {
    line_kind_is(line, "edge")
}

/// A file's chunk records and edge records, each read from the start.
type ChunksAndEdges = (Box<dyn RecordSource>, Box<dyn RecordSource>);

/// Opens the file from its start.
type Open<'a> = &'a (dyn Fn() -> Result<Box<dyn Read + Send>, RunError> + Sync);

/// The chunk records and the edge records of a bundle or an NDJSON stream.
fn chunks_and_edges(open: Open, display: &str, ndjson: bool) -> Result<ChunksAndEdges, RunError> {
    Ok(if ndjson {
        let chunks = LineRecords::new(BufReader::with_capacity(1 << 16, open()?), display, is_chunk_line);
        let edges = LineRecords::new(BufReader::with_capacity(1 << 16, open()?), display, is_edge_line);
        (Box::new(chunks), Box::new(edges))
    } else {
        let chunks = ArrayRecords::new(ArrayFramer::member_array(open()?, "chunks"), display);
        let edges = ArrayRecords::new(ArrayFramer::member_array(open()?, "edges"), display);
        (Box::new(chunks), Box::new(edges))
    })
}

/// Whether an NDJSON line may hold one of an extracted memory's links: an edge of an extension
/// type, a chunk-entity link, an entity.
fn may_be_link_line(line: &[u8]) -> bool {
    (is_edge_line(line) && may_be_memory_edge(line)) || line_kind_is(line, "chunk_entity") || line_kind_is(line, "entity")
}

/// The links of the extracted memories of a bundle or an NDJSON stream ([`super::aimem_links`]).
fn memory_links(open: Open, display: &str, ndjson: bool) -> Result<Result<ExtractedLinks, NotCollected>, RunError> {
    if ndjson {
        let lines = LineRecords::new(BufReader::with_capacity(1 << 16, open()?), display, may_be_link_line);
        return Ok(aimem_links::collect_mixed(Box::new(lines), |collector, line| {
            if is_edge_line(line) {
                collector.edge(line)
            } else if line_kind_is(line, "chunk_entity") {
                collector.link(line)
            } else {
                collector.entity(line)
            }
        }));
    }
    let member = |name: &str| -> Result<Box<dyn RecordSource>, RunError> {
        Ok(Box::new(ArrayRecords::new(ArrayFramer::member_array(open()?, name), display)))
    };
    // Opened only when a memory links to an entity; a file that cannot be opened again then
    // only loses the entities.
    Ok(aimem_links::collect(member("edges")?, member("chunk_entities")?, || member("entities").ok()))
}

/// The chunks of a bundle (or with `ndjson` a stream), each with its parent, grouped by
/// conversation: in one pass when the file is `in_order` (as [`check_input`] found), else
/// through [`Reordered`].
///
/// # Errors
/// I/O errors opening it, or the temporary file of records out of order.
pub fn grouped_chunks(entry: &Entry, ndjson: bool, in_order: bool) -> Result<GroupingReader, RunError> {
    let open = || entry.open();
    let (chunks, edges) = chunks_and_edges(&open, &entry.display, ndjson)?;
    let joined: Box<dyn RecordSource> = if in_order {
        Box::new(ChunksWithParents { chunks, edges, next_edge: None, edges_done: false })
    } else {
        let reordered = Reordered::load(chunks, edges, group_key)
            .map_err(|problem| RunError::read(entry.display.to_string(), std::io::Error::other(problem.message)))?;
        Box::new(reordered)
    };
    Ok(GroupingReader::new(joined, group_key))
}

/// The parts of a memport chunk URN's local part: provider, conversation (or `mem`/`h`), and
/// the message id (or hash). A split chunk's piece suffix (`.p2`) is checked and dropped.
pub(super) struct Local<'a> {
    pub provider: &'a str,
    pub middle: &'a str,
    pub last: &'a str,
}

pub(super) fn local_of(id: &str) -> Option<Local<'_>> {
    let local = id.strip_prefix("urn:aimem:")?.split_once(':')?.1;
    let parts: Vec<&str> = local.split('.').collect();
    match parts.len() {
        3 => {}
        4 => {
            parts[3].strip_prefix('p')?.parse::<u32>().ok()?;
        }
        _ => return None,
    }
    let is_provider = parts[0].bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-' || byte == b'_');
    is_provider.then_some(Local { provider: parts[0], middle: parts[1], last: parts[2] })
}

/// The tags of a raw chunk record.
fn raw_tags(record: &[u8]) -> Vec<String> {
    sonic_rs::get(record, &["tags"]).ok().and_then(|tags| sonic_rs::from_str::<Vec<String>>(tags.as_raw_str()).ok()).unwrap_or_default()
}

/// Whether tags mark one of memport's message chunks.
fn is_message_tags<S: AsRef<str>>(tags: &[S]) -> bool {
    tags.iter().any(|tag| tag.as_ref().starts_with("role-")) && tags.iter().any(|tag| tag.as_ref().starts_with("src-"))
}

/// memport's chunks of one conversation share a key (by the URN, or for a hashed URN by the
/// source and conversation tags); the pieces of one of memport's memories share one; other
/// producers' chunks stand alone.
fn group_key(record: &[u8]) -> Option<String> {
    let id = string_at(record, &["id"])?;
    group_key_of(&id, &raw_tags(record))
}

/// A chunk's id and group key, from one read of the record (the order check's).
fn id_and_group_key(record: &[u8]) -> (Option<String>, Option<String>) {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<String>,
        #[serde(default)]
        tags: Vec<String>,
    }
    match sonic_rs::from_slice::<Head>(record) {
        Ok(Head { id: Some(id), tags }) => {
            let key = group_key_of(&id, &tags);
            (Some(id), key)
        }
        _ => (string_at(record, &["id"]), group_key(record)),
    }
}

/// [`group_key`] of a chunk's id and tags.
fn group_key_of(id: &str, tags: &[String]) -> Option<String> {
    let local = local_of(id)?;
    if is_message_tags(tags) {
        if local.middle == "h" {
            let tag = |prefix: &str| tags.iter().find(|tag| tag.starts_with(prefix)).cloned().unwrap_or_default();
            return Some(format!("{}\0{}", tag("src-"), tag("conv-")));
        }
        return Some(format!("{}.{}", local.provider, local.middle));
    }
    (local.middle == "mem" && tags.iter().any(|tag| tag == "provider-memory")).then(|| format!("{}.mem.{}", local.provider, local.last))
}

/// Decodes groups of chunks.
pub struct AimemDecoder {
    /// The input's producer: other producers' memories are kept under this name.
    pub producer: String,
    /// The links of its extracted memories, when they were read.
    pub links: Option<Arc<ExtractedLinks>>,
}

impl Decoder for AimemDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        let (origin, records) = parse_group(bytes, &origin)?;
        // Each chunk (with the pieces split from it) on its own merits: memport's message chunks
        // make the conversation, any other chunk a memory.
        let units = units(&records);
        let (messages, memories): (Vec<&[Value]>, Vec<&[Value]>) = units.into_iter().partition(|unit| is_message_tags(&tags(&unit[0])));
        let mut element = match messages.first() {
            Some(_) => conversation_of(&messages, origin, options),
            None => {
                let Some(first) = memories.first() else { return Err(RecordReject::new(&origin, None, "an empty group".into())) };
                let provider = memory_provider(&first[0], &self.producer);
                decoded(
                    Conversation::memories_only(provider, first[0]["id"].as_str().unwrap_or_default().to_owned(), origin, Vec::new()),
                    Vec::new(),
                    Warnings::default(),
                )
            }
        };
        for unit in memories {
            match memory_of(unit, &self.producer, self.links.as_deref()) {
                Ok(memory) => element.conversation.memories.push(memory),
                Err(reason) => {
                    let reason = format!("chunk {}: {reason}", unit[0]["id"].as_str().unwrap_or("without an id"));
                    element.rejected_messages.push(RecordReject::new(&element.conversation.origin, None, reason));
                }
            }
        }
        if element.conversation.memories_only && element.conversation.memories.is_empty() {
            let reason = element.rejected_messages.pop().map(|reject| reject.reason);
            return Err(RecordReject::new(&element.conversation.origin, None, reason.unwrap_or_else(|| "an empty group".into())));
        }
        Ok(element)
    }
}

/// Splits a group into chunks, each with the pieces split from it that follow it (`<id>.p2`,
/// `<id>.p3`, …).
fn units(records: &[Value]) -> Vec<&[Value]> {
    let mut units = Vec::new();
    let mut position = 0;
    while position < records.len() {
        let id = records[position]["id"].as_str().unwrap_or_default();
        let mut end = position + 1;
        while end < records.len()
            && !id.is_empty()
            && records[end]["id"]
                .as_str()
                .and_then(|next| next.strip_prefix(id))
                .and_then(|rest| rest.strip_prefix(".p"))
                .is_some_and(|number| !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit()))
        {
            end += 1;
        }
        units.push(&records[position..end]);
        position = end;
    }
    units
}

fn tags(chunk: &Value) -> Vec<&str> {
    chunk["tags"].as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

fn source_of(tags: &[&str]) -> Option<Provider> {
    tags.iter().find_map(|tag| tag.strip_prefix("src-")).map(Provider::named)
}

fn memory_provider(chunk: &Value, producer: &str) -> Provider {
    source_of(&tags(chunk)).unwrap_or_else(|| Provider::named(producer))
}

/// The tag memport gives a memory withdrawn (AIMEM has no deletion).
const RETRACTED_TAG: &str = "retracted";

/// Whether `tag` is one memport adds itself (so not a label).
fn is_structural_tag(tag: &str) -> bool {
    tag == "provider-memory" || tag == RETRACTED_TAG || tag.starts_with("src-") || tag.starts_with("kind-") || is_part_tag(tag)
}

fn is_part_tag(tag: &str) -> bool {
    tag.strip_prefix("part-")
        .and_then(|rest| rest.split_once("-of-"))
        .is_some_and(|(index, count)| index.bytes().all(|byte| byte.is_ascii_digit()) && count.bytes().all(|byte| byte.is_ascii_digit()))
}

/// The text of a chunk and the pieces split from it.
fn joined_text(unit: &[Value]) -> Result<String, String> {
    let mut text = String::new();
    for record in unit {
        text.push_str(record["content"].as_str().ok_or("a chunk without `content` text")?);
    }
    Ok(text)
}

fn memory_of(unit: &[Value], producer: &str, links: Option<&ExtractedLinks>) -> Result<MemoryRecord, String> {
    let first = &unit[0];
    let text = joined_text(unit)?;
    if text.trim().is_empty() {
        return Err("a chunk without text: a memory needs some".into());
    }
    let created_at = first["created_at"].as_str().and_then(parse_rfc3339).ok_or("a chunk without a readable `created_at`")?;
    let tags = tags(first);
    let id = first["id"].as_str().unwrap_or_default();
    if let Some(links) = links
        && let Some(memory) = aimem_links::extracted_memory(id, &text, created_at, &tags, memory_provider(first, producer), links)
    {
        return Ok(memory);
    }
    let own_kind = tags.iter().find_map(|tag| tag.strip_prefix("kind-")).and_then(MemoryKind::named);
    let mut memory = match (tags.contains(&"provider-memory"), own_kind, local_of(id)) {
        (true, Some(kind), Some(local)) if local.middle == "mem" => {
            let labels = tags.iter().filter(|tag| !is_structural_tag(tag)).map(|tag| (*tag).to_owned()).collect();
            let mut memory = MemoryRecord::new(memory_provider(first, producer), kind, text, created_at, labels);
            memory.id = format!("{}.mem.{}", local.provider, local.last);
            memory
        }
        _ => {
            let memory_type = first["memory_type"].as_str().unwrap_or("fact");
            let (kind, mut labels) = MemoryKind::from_foreign_type(memory_type, "aimem-type");
            labels.extend(tags.iter().filter(|tag| !is_part_tag(tag) && **tag != RETRACTED_TAG).map(|tag| (*tag).to_owned()));
            let mut memory = MemoryRecord::new(memory_provider(first, producer), kind, text, created_at, labels);
            // memport's extracted memories keep their id (`mem-…`), so reading them again with
            // extraction on does not extract them a second time.
            let local = id.strip_prefix("urn:aimem:").and_then(|rest| rest.split_once(':')).map(|(_, local)| local);
            if tags.contains(&"extracted")
                && let Some(local) = local.filter(|local| local.starts_with("mem-"))
            {
                memory.id = local.to_owned();
            }
            memory
        }
    };
    // AIMEM has no deletion: memport tags a memory whose conversations a sync retracted. The
    // tag is the flag (not a label, so the id does not depend on it), which a writer turns back
    // into its format's mark.
    memory.retracted_in_input = tags.contains(&RETRACTED_TAG);
    Ok(memory)
}

/// The zone a `tz-assumed-<zone>` tag names (`utc`, `p02-00`, `m05-30`); another tag's text is
/// kept as it is.
fn zone_of(tag: &str) -> String {
    let is_offset = |offset: &str| {
        offset.len() == 5 && offset.bytes().enumerate().all(|(at, byte)| if at == 2 { byte == b'-' } else { byte.is_ascii_digit() })
    };
    match tag.split_at_checked(1) {
        Some(("p", offset)) if is_offset(offset) => format!("+{}", offset.replace('-', ":")),
        Some(("m", offset)) if is_offset(offset) => format!("-{}", offset.replace('-', ":")),
        _ if tag == "utc" => "UTC".to_owned(),
        _ => tag.to_owned(),
    }
}

fn conversation_of(units: &[&[Value]], origin: Origin, options: &DecodeOptions) -> Decoded {
    let first = &units[0][0];
    let first_tags = tags(first);
    let provider = source_of(&first_tags).unwrap_or(Provider::Other("aimem"));
    let first_id = first["id"].as_str().unwrap_or_default();
    let conversation_tag = first_tags.iter().find_map(|tag| tag.strip_prefix("conv-")).unwrap_or_default();
    // A hashed URN keeps neither id: the conversation tag (lowercase, at most 64 characters)
    // is the best name left.
    let conversation_id = match local_of(first_id) {
        Some(local) if local.middle != "h" => local.middle.to_owned(),
        _ => conversation_tag.to_owned(),
    };
    let mut holder = Conversation::empty(provider, conversation_id, origin);
    holder.assumed_time_zone = first_tags.iter().find_map(|tag| tag.strip_prefix("tz-assumed-")).map(zone_of);
    let mut warnings = Warnings::default();
    // Every chunk id of the conversation first, so a parent written after its child (not
    // memport's order, but possible) is still found.
    let mut links = ParentLinks::new();
    for unit in units {
        if let Some(local) = unit[0]["id"].as_str().and_then(local_of) {
            for piece in *unit {
                if let Some(piece_id) = piece["id"].as_str() {
                    links.add(piece_id, local.last);
                }
            }
        }
    }
    let mut rejected = Vec::new();
    for unit in units {
        let record = &unit[0];
        let id = record["id"].as_str().unwrap_or_default();
        let Some(local) = local_of(id) else {
            rejected.push(RecordReject::new(&holder.origin, Some(&holder.id), format!("chunk id `{id}` is not one memport writes")));
            continue;
        };
        if local.middle == "h" {
            warnings.add("aimem_hashed_ids");
        }
        let message_id = local.last.to_owned();
        let text = match joined_text(unit) {
            Ok(text) => text,
            Err(reason) => {
                rejected.push(RecordReject::new(&holder.origin, Some(&holder.id), reason).with_message(&message_id));
                continue;
            }
        };
        let tags = tags(record);
        let role = tags.iter().find_map(|tag| tag.strip_prefix("role-")).and_then(role_named).unwrap_or(Role::User);
        let mut fields = MessageFields::new(message_id, role, text);
        fields.created_at = record["created_at"].as_str().and_then(parse_rfc3339);
        fields.is_thought = tags.contains(&"thought");
        fields.on_active_branch = !tags.contains(&"off-branch");
        fields.parent_id = links.parent_of(record["_parent"].as_str(), &mut warnings);
        push_turn(&mut holder, fields, options);
    }
    holder.messages = parents_first(std::mem::take(&mut holder.messages));
    decoded(holder, rejected, warnings)
}

/// `messages` with each after its parent, otherwise in the order given: a file in another
/// order than memport's (a question and its answer of the same second, sorted by id) still
/// gives a thread every writer links parent to child.
fn parents_first(messages: Vec<crate::model::Message>) -> Vec<crate::model::Message> {
    let position: rustc_hash::FxHashMap<&str, usize> =
        messages.iter().enumerate().map(|(index, message)| (message.id.as_str(), index)).collect();
    let mut order = Vec::with_capacity(messages.len());
    let mut placed = vec![false; messages.len()];
    for start in 0..messages.len() {
        // The unplaced ancestors of `start`, nearest last; a cycle stops at a message seen.
        let mut chain = vec![start];
        let mut seen = rustc_hash::FxHashSet::default();
        seen.insert(start);
        let mut current = start;
        while let Some(&parent) = messages[current].parent_id.as_deref().and_then(|id| position.get(id)) {
            if placed[parent] || !seen.insert(parent) {
                break;
            }
            chain.push(parent);
            current = parent;
        }
        for &index in chain.iter().rev() {
            if !placed[index] {
                placed[index] = true;
                order.push(index);
            }
        }
    }
    let mut slots: Vec<Option<crate::model::Message>> = messages.into_iter().map(Some).collect();
    order.into_iter().filter_map(|index| slots[index].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urn_locals_split_into_provider_conversation_message_and_piece() {
        let local = local_of("urn:aimem:memport:chatgpt.c-1.m_2.p3").unwrap();
        assert_eq!((local.provider, local.middle, local.last), ("chatgpt", "c-1", "m_2"));
        assert!(local_of("urn:aimem:memport:chatgpt.c-1.m_2.x3").is_none());
        assert!(local_of("urn:aimem:other:a.b").is_none());
        assert!(local_of("not-a-urn").is_none());
    }

    #[test]
    fn zone_tags_give_back_the_zone() {
        assert_eq!(zone_of("utc"), "UTC");
        assert_eq!(zone_of("p02-00"), "+02:00");
        assert_eq!(zone_of("m05-30"), "-05:30");
        assert_eq!(zone_of("pacific-auckland"), "pacific-auckland");
    }

    #[test]
    fn part_tags_are_told_from_labels() {
        assert!(is_part_tag("part-2-of-10"));
        assert!(!is_part_tag("part-of-it"));
    }
}
