//! AIMEM writers (draft-vu-aimem-bundle-00): the bundle (`--to aimem`) and the NDJSON stream
//! (`--to aimem-ndjson`), which differ only in framing.
//!
//! Both compute the envelope checksum (SHA-256 over the RFC 8785 form of the bundle without
//! `checksum`) in one pass and bounded memory. JCS orders the envelope's members
//! `chunk_entities, chunks, edges, entities, exported_at, format, producer, scope, tenant_id,
//! version`, and every record is written in canonical form, so the hash is fed the canonical
//! bytes as they are produced. Edges are spilled, framed as the output writes them, to a
//! temporary file until the chunks are done; the NDJSON form writes its envelope line (which
//! comes first) with a placeholder checksum of the same length and overwrites it at the end.
//! Records are serialized on the worker pool by [`AimemEncoder`]; the sink only hashes and
//! writes, in order.
//!
//! Extracted memories (the last batches of a run) bring entities and chunk-entity links, few
//! enough to hold until the end. Entities come after the edges in canonical order, so they
//! join the envelope's tail. Links come first, before the chunks already hashed and written:
//! when there are any, the output is hashed a second time at the end in canonical order after
//! the links: the chunks read back from the output (two reads in flight, ahead of the
//! hashing), then the edges from their spool, while the edges are copied into the output. The
//! chunks are read from the page cache: a run that expects links has the kernel read each
//! block of the output back into it as soon as the block is written
//! ([`DirectWriter::cache_written_blocks`]), so the end of the run waits on the hash, not the
//! disk. The bundle's leading empty `"chunk_entities":[],` is blanked with
//! spaces and the links written before the checksum instead (member order does not matter to
//! consumers; whitespace between members is JSON). A run that extracts expects links and
//! hashes only that once, at the end; a run that does not extract hashes while it writes and
//! pays nothing more. A run told its links before it starts
//! ([`AimemSettings::predicted_links`]: a store's export reads its memories first) hashes
//! while it writes with those links first, and reads the output back only if its links differ.
//!
//! AIMEM has no deletion. A sync's retractions ([`Sink::retract`]) are the envelope extension
//! member `x-memport-retracted`, present only when there are any: one object per retracted
//! conversation (`provider`, `conversation_id`, `chunk_id_prefix`, the URN prefix of its
//! chunks or null when their URNs are hashed, `conversation_tag`, the `conv-` tag its chunks
//! carry, `retracted_by`, `retracted_at`). It sorts after `version`, so it is the last member
//! of the hashed form, which the checksum covers like any other. The NDJSON envelope line,
//! written first without it, is rewritten at the end one member longer, the records moved up
//! to make room. Messages a sync withdraws (erased from its memory store since an earlier run
//! wrote them) are listed the same way under `x-memport-withdrawn-messages`, each entry also
//! naming `message_ids` and the `chunk_ids` they were written as.

mod memory_records;
pub mod records;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::buffers::BufferPool;
use crate::error::RunError;
use crate::jcs::write_string;
use crate::model::Conversation;
use crate::model::Micros;
use crate::model::{RetractedConversation, RetractionMemberNames};
use crate::sinks::direct_reader::DirectReader;
use crate::sinks::direct_writer::DirectWriter;
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary, output_file};
use crate::spec::aimem::{RETRACTED_MEMBER, WITHDRAWN_MEMBER};
use crate::timefmt::format_rfc3339;

const BUFFER: usize = 1 << 20;

/// Settings of the AIMEM sinks.
#[derive(Debug, Clone)]
pub struct AimemSettings {
    /// Producer namespace (`^[a-z0-9-]{1,63}$`), part of every chunk id.
    pub producer: String,
    /// Tenant id written in the envelope.
    pub tenant_id: String,
    /// The export time written in the envelope.
    pub exported_at: Micros,
    /// The run extracts memories, so entity links (which come first in canonical order) are
    /// likely: the output is hashed once at the end instead of also while it is written.
    pub links_expected: bool,
    /// A delta of a sync: `scope: "SINCE"` with this `since` instead of `scope: "FULL"`.
    pub since: Option<Micros>,
    /// The records are a DNA-only selection: `scope: "DNA_ONLY"` (when not a delta).
    pub dna_only: bool,
    /// The chunk-entity links the output will hold, in canonical form and comma-joined, when
    /// the caller knows them before the run (a store's export reads its memories first): the
    /// output is hashed while it is written, with these links first, and hashed again at the
    /// end only if the run's links turn out different.
    pub predicted_links: Option<Arc<[u8]>>,
}

/// How the records are laid out in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One JSON object.
    Bundle,
    /// Envelope line, then one `_kind`-tagged record per line.
    Ndjson,
}

/// Canonical chunk, edge, entity and link records of one batch, made on a worker thread.
pub type EncodedBatch = records::RecordBuffers;

/// Encodes conversations into AIMEM records; shared by the worker threads.
pub struct AimemEncoder {
    producer: String,
    framing: Framing,
    /// Buffers the sink hands back after writing, reused here.
    buffers: BufferPool,
}

impl Encoder for AimemEncoder {
    fn encode(&self, batch: &[Conversation]) -> Encoded {
        // Size the buffers once: growing them by doubling cost more than encoding (page faults).
        let (mut text_bytes, mut messages) = (0, 0);
        for message in batch.iter().flat_map(|conversation| &conversation.messages) {
            text_bytes += message.text.len();
            messages += 1;
        }
        let mut chunks = self.buffers.take();
        chunks.reserve(text_bytes + text_bytes / 8 + messages * 512);
        let mut edge_lines = self.buffers.take();
        edge_lines.reserve(messages * 320);
        let mut encoded = EncodedBatch {
            chunks,
            chunk_ends: Vec::with_capacity(messages),
            edge_lines,
            edge_count: 0,
            entities: Vec::new(),
            chunk_entities: Vec::new(),
        };
        for conversation in batch {
            map_conversation(conversation, &self.producer, self.framing, &mut encoded);
        }
        Encoded::Aimem(encoded)
    }
}

/// Appends the records of one conversation to `out`: its memories (provider memories and
/// those memport extracted, in their order), then its kept messages.
pub fn map_conversation(conversation: &Conversation, producer: &str, framing: Framing, out: &mut records::RecordBuffers) {
    let provider = conversation.provider.as_str();
    for memory in conversation.memories.iter().filter(|memory| memory.is_written() && !memory.text.is_empty()) {
        match &memory.extracted {
            Some(extracted) => memory_records::map_extracted(memory, extracted, provider, producer, framing, out),
            None => records::map_provider_memory(memory, provider, producer, framing, out),
        }
    }
    records::map_messages(conversation, producer, framing, out);
}

/// Writes one AIMEM file.
pub struct AimemSink {
    framing: Framing,
    settings: AimemSettings,
    target: PathBuf,
    /// The final file, under a temporary name in the target's folder.
    output: DirectWriter,
    /// Edge records framed as the output writes them, until the chunks are done.
    edge_spool: BufWriter<File>,
    checksum: Sha256,
    chunks: u64,
    edges: u64,
    /// Entity and chunk-entity link records in canonical form, in input order.
    entities: Vec<Vec<u8>>,
    chunk_entities: Vec<Vec<u8>>,
    /// Bytes given to `output` so far, and where the chunk records start in it.
    written: u64,
    chunks_start: u64,
    buffers: BufferPool,
    /// The envelope's `,"x-memport-retracted":[…]` member in canonical form, or nothing.
    retracted_member: Vec<u8>,
}

/// Length of the NDJSON envelope line's checksum value (`sha256:` + 64 hex digits).
const CHECKSUM_PLACEHOLDER: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
/// The empty links member the bundle opens with, blanked when there are links after all.
const EMPTY_CHUNK_ENTITIES: &[u8] = b"\"chunk_entities\":[],";

impl AimemSink {
    /// Creates the sink writing the file `target`, which must not exist (a run gives it a path
    /// in a staging folder); its edge spool is an unnamed temporary file beside it.
    ///
    /// # Errors
    /// I/O errors creating either.
    pub fn create(target: &Path, framing: Framing, settings: AimemSettings) -> Result<AimemSink, RunError> {
        let folder = output_file::folder_of(target);
        let display = target.display().to_string();
        let output = output_file::create_output(target).map_err(|error| RunError::write(&display, error))?;
        let edge_spool = BufWriter::with_capacity(BUFFER, tempfile::tempfile_in(folder).map_err(|error| RunError::write(&display, error))?);
        let mut sink = AimemSink {
            framing,
            settings,
            target: target.to_owned(),
            output,
            edge_spool,
            checksum: Sha256::new(),
            chunks: 0,
            edges: 0,
            entities: Vec::new(),
            chunk_entities: Vec::new(),
            written: 0,
            chunks_start: 0,
            buffers: BufferPool::default(),
            retracted_member: Vec::new(),
        };
        let opening = [b"{".as_slice(), EMPTY_CHUNK_ENTITIES, b"\"chunks\":[".as_slice()].concat();
        if sink.settings.links_expected {
            // The chunks are read back at the end to be hashed: from memory, not the disk.
            sink.output.cache_written_blocks();
        } else if let Some(links) = &sink.settings.predicted_links {
            // The hashed form opens with the links the run is told it will write (the file
            // opens as always: its links are written before the checksum).
            sink.checksum.update(b"{\"chunk_entities\":[");
            sink.checksum.update(links);
            sink.checksum.update(b"],\"chunks\":[");
        } else {
            sink.checksum.update(&opening);
        }
        let first_bytes = match framing {
            Framing::Bundle => opening,
            // The envelope line comes first but its checksum is known only at the end: write it
            // with a placeholder of the same length now and overwrite it in `complete`.
            Framing::Ndjson => envelope_line(&sink.envelope_rest(), CHECKSUM_PLACEHOLDER),
        };
        sink.output.write_all(&first_bytes).map_err(|error| RunError::write(&display, error))?;
        sink.written = first_bytes.len() as u64;
        sink.chunks_start = sink.written;
        Ok(sink)
    }

    /// Writes `bytes` to the output, counting them.
    fn emit(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.output.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    fn write_encoded(&mut self, batch: &mut EncodedBatch) -> io::Result<()> {
        self.entities.append(&mut batch.entities);
        self.chunk_entities.append(&mut batch.chunk_entities);
        if batch.chunk_ends.is_empty() {
            self.edge_spool.write_all(&batch.edge_lines)?;
            self.edges += batch.edge_count;
            return Ok(());
        }
        match self.framing {
            Framing::Bundle => {
                // `,`-separated canonical records: written and hashed as they are, except the
                // comma before the very first chunk of the array.
                let bytes = if self.chunks == 0 { &batch.chunks[1..] } else { &batch.chunks[..] };
                if !self.settings.links_expected {
                    self.checksum.update(bytes);
                }
                self.output.write_all(bytes)?;
                self.written += bytes.len() as u64;
            }
            Framing::Ndjson => {
                // The hash covers each line's canonical record: `{` + members (the line without
                // its `"_kind"` member and newline), comma-separated.
                let mut start = 0;
                let ends = if self.settings.links_expected { &[][..] } else { &batch.chunk_ends[..] };
                for (position, &end) in ends.iter().enumerate() {
                    let line = &batch.chunks[start..end];
                    start = end;
                    if self.chunks > 0 || position > 0 {
                        self.checksum.update(b",");
                    }
                    self.checksum.update(b"{");
                    self.checksum.update(&line[records::NDJSON_CHUNK_PREFIX.len()..line.len() - 1]);
                }
                self.emit(&batch.chunks)?;
            }
        }
        self.chunks += batch.chunk_ends.len() as u64;
        self.edge_spool.write_all(&batch.edge_lines)?;
        self.edges += batch.edge_count;
        Ok(())
    }

    /// The envelope members from `entities` on, in canonical order, without braces.
    fn envelope_tail(&self) -> Vec<u8> {
        let rest = self.envelope_rest();
        let mut tail = Vec::with_capacity(rest.len() + 16 + self.entities.iter().map(|record| record.len() + 1).sum::<usize>());
        tail.extend_from_slice(b"\"entities\":[");
        tail.extend_from_slice(&joined(&self.entities));
        tail.extend_from_slice(b"],");
        tail.extend_from_slice(&rest);
        tail
    }

    /// The envelope members after the four arrays, in canonical order, without braces.
    fn envelope_rest(&self) -> Vec<u8> {
        let mut tail = Vec::with_capacity(256);
        tail.extend_from_slice(b"\"exported_at\":");
        write_string(&mut tail, &format_rfc3339(self.settings.exported_at));
        tail.extend_from_slice(b",\"format\":\"aimem-bundle\",\"producer\":");
        write_string(&mut tail, &self.settings.producer);
        match self.settings.since {
            None if self.settings.dna_only => tail.extend_from_slice(b",\"scope\":\"DNA_ONLY\""),
            None => tail.extend_from_slice(b",\"scope\":\"FULL\""),
            Some(since) => {
                tail.extend_from_slice(b",\"scope\":\"SINCE\",\"since\":");
                write_string(&mut tail, &format_rfc3339(since));
            }
        }
        tail.extend_from_slice(b",\"tenant_id\":");
        write_string(&mut tail, &self.settings.tenant_id);
        tail.extend_from_slice(b",\"version\":\"1\"");
        tail.extend_from_slice(&self.retracted_member);
        tail
    }
}

/// The envelope members `,"x-memport-retracted":[…]` (whole conversations) and
/// `,"x-memport-withdrawn-messages":[…]` (some messages of one) in canonical form (members of
/// each entry in JCS order; the two names sort in this order, after `version`), each only when
/// it has entries.
fn retracted_member(producer: &str, retracted: &[RetractedConversation]) -> Vec<u8> {
    let entry_of = |conversation: &RetractedConversation| {
        // The members the readers look for are named as MIF names them; the chunk prefix
        // and tag are AIMEM's own, for a consumer that drops the chunks.
        let names = RetractionMemberNames::SNAKE_CASE;
        let provider = conversation.provider.as_str();
        let mut entry = serde_json::Map::new();
        entry.insert(names.provider.into(), provider.into());
        entry.insert(names.conversation_id.into(), conversation.conversation_id.as_str().into());
        entry.insert("chunk_id_prefix".into(), records::conversation_urn_prefix(producer, provider, &conversation.conversation_id).into());
        entry.insert("conversation_tag".into(), records::tag_for("conv-", &conversation.conversation_id).into());
        entry.insert(names.retracted_by.into(), conversation.retracted_by.as_str().into());
        entry.insert(names.retracted_at.into(), format_rfc3339(conversation.retracted_at).into());
        // What the other formats' retractions name too, so a delta read back loses none of it.
        if let Some(title) = &conversation.title {
            entry.insert(names.title.into(), title.as_str().into());
        }
        if let Some(created_at) = conversation.created_at {
            entry.insert(names.created_at.into(), format_rfc3339(created_at).into());
        }
        if conversation.is_of_messages() {
            entry.insert(names.message_ids.into(), conversation.messages.clone().into());
            // The ids of the chunks the messages were written as, for a consumer that knows
            // nothing of memport's retractions.
            let chunk_ids: Vec<String> = conversation
                .messages
                .iter()
                .map(|message| records::chunk_urn(producer, provider, &conversation.conversation_id, message))
                .collect();
            entry.insert("chunk_ids".into(), chunk_ids.into());
        }
        serde_json::Value::Object(entry)
    };
    let mut member = Vec::new();
    let (whole, of_messages) = RetractedConversation::whole_and_of_messages(retracted);
    for (name, listed) in [(RETRACTED_MEMBER, whole), (WITHDRAWN_MEMBER, of_messages)] {
        if listed.is_empty() {
            continue;
        }
        member.extend_from_slice(b",");
        write_string(&mut member, name);
        member.push(b':');
        let entries: Vec<serde_json::Value> = listed.into_iter().map(entry_of).collect();
        crate::jcs::write_canonical(&mut member, &serde_json::Value::Array(entries));
    }
    member
}

/// Moves bytes `from..` of `file` up by `by` bytes, the last block first, so no byte is
/// overwritten before it has moved.
fn shift_up(file: &File, from: u64, by: u64) -> io::Result<()> {
    let mut block = vec![0u8; BUFFER];
    let mut end = file.metadata()?.len();
    while end > from {
        let start = end.saturating_sub(BUFFER as u64).max(from);
        let size = usize::try_from(end - start).map_err(io::Error::other)?;
        file.read_exact_at(&mut block[..size], start)?;
        file.write_all_at(&block[..size], start + by)?;
        end = start;
    }
    Ok(())
}

/// The NDJSON envelope line: every member but the four arrays (`rest`, from
/// `AimemSink::envelope_rest`), in canonical order.
fn envelope_line(rest: &[u8], checksum_label: &str) -> Vec<u8> {
    let mut line = Vec::with_capacity(320);
    line.extend_from_slice(b"{\"checksum\":");
    write_string(&mut line, checksum_label);
    line.push(b',');
    line.extend_from_slice(rest);
    line.extend_from_slice(b"}\n");
    line
}

/// Canonical records joined with `,`.
fn joined(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(records.iter().map(|record| record.len() + 1).sum());
    for (index, record) in records.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.extend_from_slice(record);
    }
    out
}

/// The chunk-entity links of the AIMEM NDJSON file at `path`, in canonical form and
/// comma-joined as the checksum covers them ([`AimemSettings::predicted_links`]): a run over
/// the same memories writes these links.
///
/// # Errors
/// I/O errors reading the file.
pub fn links_of(path: &Path) -> io::Result<Vec<u8>> {
    let mut links = Vec::new();
    let mut reader = io::BufReader::new(File::open(path)?);
    let mut line = Vec::new();
    while io::BufRead::read_until(&mut reader, b'\n', &mut line)? > 0 {
        if let Some(members) = line.strip_prefix(records::NDJSON_CHUNK_ENTITY_PREFIX) {
            if !links.is_empty() {
                links.push(b',');
            }
            links.push(b'{');
            links.extend_from_slice(members.strip_suffix(b"\n").unwrap_or(members));
        }
        line.clear();
    }
    Ok(links)
}

/// Copies the spooled edges from byte `skip` to the output and returns how many bytes.
fn copy_edges(spool: &File, skip: u64, output: &mut DirectWriter) -> io::Result<u64> {
    let mut block = vec![0u8; BUFFER];
    let mut offset = skip;
    loop {
        let read = spool.read_at(&mut block, offset)?;
        if read == 0 {
            return Ok(offset - skip);
        }
        output.write_all(&block[..read])?;
        offset += read as u64;
    }
}

/// Feeds records into a checksum in canonical form, from bytes given in pieces of any size:
/// bundle records are already `,`-separated canonical records; NDJSON lines lose their opening
/// `prefix` (`{` and the `"_kind"` member) and newline, get `{` back and are joined with `,`.
struct RecordHasher {
    checksum: Sha256,
    framing: Framing,
    prefix: &'static [u8],
    /// The start of a line the last piece cut.
    partial_line: Vec<u8>,
    first: bool,
}

impl RecordHasher {
    fn new(checksum: Sha256, framing: Framing, prefix: &'static [u8]) -> RecordHasher {
        RecordHasher { checksum, framing, prefix, partial_line: Vec::new(), first: true }
    }

    fn update(&mut self, mut data: &[u8]) {
        if self.framing == Framing::Bundle {
            self.checksum.update(data);
            return;
        }
        if !self.partial_line.is_empty() {
            let Some(end) = memchr::memchr(b'\n', data) else {
                self.partial_line.extend_from_slice(data);
                return;
            };
            let mut line = std::mem::take(&mut self.partial_line);
            line.extend_from_slice(&data[..=end]);
            self.hash_line(&line);
            line.clear();
            self.partial_line = line;
            data = &data[end + 1..];
        }
        while let Some(end) = memchr::memchr(b'\n', data) {
            self.hash_line(&data[..=end]);
            data = &data[end + 1..];
        }
        self.partial_line.extend_from_slice(data);
    }

    fn hash_line(&mut self, line: &[u8]) {
        if !self.first {
            self.checksum.update(b",");
        }
        self.first = false;
        self.checksum.update(b"{");
        self.checksum.update(line.get(self.prefix.len()..line.len().saturating_sub(1)).unwrap_or_default());
    }

    fn finish(self) -> io::Result<Sha256> {
        if !self.partial_line.is_empty() {
            return Err(io::Error::other("the AIMEM records end inside a line"));
        }
        Ok(self.checksum)
    }
}

/// Feeds bytes `start..until` of `file` (to its end when shorter) into `checksum` in canonical
/// form ([`RecordHasher`]).
fn hash_records(
    file: &File,
    path: Option<&Path>,
    start: u64,
    until: u64,
    framing: Framing,
    prefix: &'static [u8],
    checksum: Sha256,
) -> io::Result<Sha256> {
    let mut hasher = RecordHasher::new(checksum, framing, prefix);
    for_each_block(file, path, start, until, |data| hasher.update(data))?;
    hasher.finish()
}

/// Blocks each reader reads ahead of the hashing: a second hash pass reads the whole output
/// back, and the reads overlap the hashing instead of alternating with it.
const READ_AHEAD_BLOCKS: usize = 1;
/// Bytes per block read back.
const READ_BLOCK: usize = 4 << 20;
/// Threads reading blocks in turn. Two reads in flight got 25–35% more out of the benchmark
/// VM's disk than one (4 MiB direct reads of a 950 MB output: 450–710 MB/s with one,
/// 600–950 MB/s with two; more did not add).
const READERS: usize = 2;

/// Calls `visit` with bytes `start..until` of `file` (to its end when shorter), in order, in
/// blocks read by [`READERS`] other threads in turn; around the page cache ([`DirectReader`])
/// when its `path` is given.
fn for_each_block(file: &File, path: Option<&Path>, start: u64, until: u64, mut visit: impl FnMut(&[u8])) -> io::Result<()> {
    std::thread::scope(|scope| {
        let mut readers = Vec::with_capacity(READERS);
        for first_block in 0..READERS {
            let (full_sender, full) = std::sync::mpsc::sync_channel::<io::Result<Vec<u8>>>(READ_AHEAD_BLOCKS);
            let (empty_sender, empty) = std::sync::mpsc::channel::<Vec<u8>>();
            for _ in 0..=READ_AHEAD_BLOCKS {
                // The receiver is alive until the reader ends, which needs these blocks first.
                let _ = empty_sender.send(Vec::with_capacity(READ_BLOCK));
            }
            scope.spawn(move || read_every_other_block(file, path, (start, until), first_block, &empty, &full_sender));
            readers.push((full, empty_sender));
        }
        // Block `index` comes from reader `index % READERS`. A reader that has nothing more to
        // read hangs up, and a block shorter than the others is the last one.
        for index in 0.. {
            let (full, empty_sender) = &readers[index % READERS];
            let Ok(block) = full.recv() else { break };
            let block = block?;
            visit(&block);
            let last = block.len() < READ_BLOCK;
            let _ = empty_sender.send(block);
            if last {
                break;
            }
        }
        Ok(())
    })
}

/// One of [`for_each_block`]'s readers: blocks `first_block`, `first_block + READERS`, … of
/// bytes `range.0..range.1`, read into the buffers that come back through `empty` and sent on
/// `full`; it ends at the end of the range or of the file, or when the hashing side hangs up.
fn read_every_other_block(
    file: &File,
    path: Option<&Path>,
    (start, until): (u64, u64),
    first_block: usize,
    empty: &std::sync::mpsc::Receiver<Vec<u8>>,
    full: &std::sync::mpsc::SyncSender<io::Result<Vec<u8>>>,
) {
    let mut reader = match DirectReader::new(file, path, READ_BLOCK) {
        Ok(reader) => reader,
        Err(error) => {
            let _ = full.send(Err(error));
            return;
        }
    };
    let mut offset = start.saturating_add((first_block * READ_BLOCK) as u64);
    while let Ok(mut block) = empty.recv() {
        let wanted = usize::try_from(until.saturating_sub(offset)).unwrap_or(usize::MAX).min(READ_BLOCK);
        if wanted == 0 {
            break;
        }
        block.resize(wanted, 0);
        match reader.read_at(&mut block, offset) {
            Ok(0) => break,
            Ok(read) => {
                block.truncate(read);
                if full.send(Ok(block)).is_err() {
                    break;
                }
            }
            Err(error) => {
                let _ = full.send(Err(error));
                break;
            }
        }
        offset = offset.saturating_add((READERS * READ_BLOCK) as u64);
    }
}

/// The chunk records as the end-of-run hash reads them: from the output file where they are
/// in it, then the writer's copy of the last ones (still in its buffer when the hash starts).
struct ChunkRegion {
    /// A handle on the output file, opened for reading.
    file: File,
    /// Where it is, when it was written around the page cache and is read back so too; `None`
    /// when its blocks were read back into the page cache as they were written, or the file
    /// system holds it in memory (tmpfs, where direct writes are refused).
    direct_path: Option<PathBuf>,
    start: u64,
    /// The file offset where `buffered` starts; every chunk byte before it is in the file.
    buffered_at: u64,
    buffered: Vec<u8>,
}

/// The checksum, up to the end of the edge records, of a bundle whose chunk-entity links
/// (`links`, joined) come first in canonical order: everything after them is hashed now, the
/// chunks read back from the output and the edges from their spool (still in the page cache),
/// while the caller copies the same edges into the output.
fn hash_after_links(
    links: &[u8],
    chunks: &ChunkRegion,
    framing: Framing,
    spool: &File,
    skip: u64,
    chunks_read: std::sync::mpsc::Sender<()>,
) -> io::Result<Sha256> {
    let mut checksum = Sha256::new();
    checksum.update(b"{\"chunk_entities\":[");
    checksum.update(links);
    checksum.update(b"],\"chunks\":[");
    let chunk_prefix = if framing == Framing::Bundle { &b""[..] } else { records::NDJSON_CHUNK_PREFIX };
    let mut hasher = RecordHasher::new(checksum, framing, chunk_prefix);
    let in_file_until = chunks.buffered_at.max(chunks.start);
    if chunks.direct_path.is_none() {
        // Read from the page cache: the copy does not compete with these reads for the disk.
        let _ = chunks_read.send(());
    }
    for_each_block(&chunks.file, chunks.direct_path.as_deref(), chunks.start, in_file_until, |data| hasher.update(data))?;
    let buffered_from = usize::try_from(chunks.start.saturating_sub(chunks.buffered_at)).unwrap_or(usize::MAX);
    hasher.update(chunks.buffered.get(buffered_from..).unwrap_or_default());
    // The disk is free for the edges' copy now (the edges are hashed from the page cache).
    drop(chunks_read);
    let mut checksum = hasher.finish()?;
    checksum.update(b"],\"edges\":[");
    hash_records(spool, None, skip, u64::MAX, framing, records::NDJSON_EDGE_PREFIX, checksum)
}

impl AimemSink {
    /// Ends the file; also tells whether the output was hashed at the end (read back).
    fn complete(mut self) -> io::Result<(SinkSummary, bool)> {
        let framing = self.framing;
        let tail = self.envelope_tail();
        let rest = self.envelope_rest();
        // Links come before the chunks in canonical order: with any, the output is hashed
        // again once it is complete (see the module docs), unless the hash while writing
        // started with these very links.
        let chunk_entities = (!self.chunk_entities.is_empty()).then(|| joined(&self.chunk_entities));
        let hashed_with_these_links = match &self.settings.predicted_links {
            Some(predicted) => chunk_entities.as_deref().unwrap_or_default() == &predicted[..],
            None => chunk_entities.is_none(),
        };
        // Hashed once at the end: with other links than the hash while writing started with,
        // or when the run expected links and so did not hash while writing.
        let hash_at_end = !hashed_with_these_links || self.settings.links_expected;
        // The end-of-run hash reads the chunks back from the file; the last chunk bytes are
        // still in the writer's buffer (the edges' copy pushes them out), so it gets a copy.
        let chunk_region = if hash_at_end {
            let (buffered_at, buffered) = self.output.buffered();
            let file = File::open(self.output.path())?;
            // Read around the page cache only when the chunks were not read back into it.
            let around_the_cache = self.output.is_direct() && !self.output.caches_written_blocks();
            let direct_path = around_the_cache.then(|| self.output.path().to_owned());
            Some(ChunkRegion { file, direct_path, start: self.chunks_start, buffered_at, buffered: buffered.to_vec() })
        } else {
            None
        };
        if framing == Framing::Bundle {
            self.emit(b"],\"edges\":[")?;
        }
        let spool = self.edge_spool.into_inner().map_err(io::IntoInnerError::into_error)?;
        // Bundle edges are spooled as `,` + record: the first one's comma is not written.
        let skip = u64::from(framing == Framing::Bundle && self.edges > 0);
        let output = &mut self.output;
        let spool = &spool;
        // One thread copies the spooled edges into the output while another hashes: edges are
        // hashed after every chunk, as canonical member order requires, and from the spool,
        // which holds them as the output frames them. Chunks read back from the disk (when
        // they are not in the page cache) come first: the copy waits for them, as writing
        // beside those reads slowed both (on the 1 GB bench the end of the run took 1.6 s so,
        // and about 1.3 s one after the other).
        let (chunks_read, chunks_were_read) = std::sync::mpsc::channel();
        let (copied, mut checksum) = std::thread::scope(|scope| -> io::Result<(u64, Sha256)> {
            let hashing = match &chunk_region {
                Some(chunks) => {
                    let links = chunk_entities.as_deref().unwrap_or_default();
                    scope.spawn(move || hash_after_links(links, chunks, framing, spool, skip, chunks_read))
                }
                None => {
                    drop(chunks_read);
                    let mut checksum = std::mem::replace(&mut self.checksum, Sha256::new());
                    checksum.update(b"],\"edges\":[");
                    scope.spawn(move || hash_records(spool, None, skip, u64::MAX, framing, records::NDJSON_EDGE_PREFIX, checksum))
                }
            };
            // Told (or hung up on) when the chunks are read, at once without a read-back, or on
            // an error, which the join reports.
            let _ = chunks_were_read.recv();
            let copied = copy_edges(spool, skip, output)?;
            let checksum = hashing.join().map_err(|_| io::Error::other("the hashing thread stopped"))??;
            Ok((copied, checksum))
        })?;
        drop(chunk_region);
        self.written += copied;
        checksum.update(b"],");
        checksum.update(&tail);
        checksum.update(b"}");
        let digest: [u8; 32] = checksum.finalize().into();
        let checksum_label = crate::hash::sha256_label(&digest);
        // What follows the edges is small: assembled here and written at once.
        let mut end = Vec::with_capacity(tail.len() + 128);
        match framing {
            Framing::Bundle => {
                end.extend_from_slice(b"],");
                end.extend_from_slice(&tail);
                if let Some(links) = &chunk_entities {
                    end.extend_from_slice(b",\"chunk_entities\":[");
                    end.extend_from_slice(links);
                    end.push(b']');
                }
                end.extend_from_slice(b",\"checksum\":\"");
                end.extend_from_slice(checksum_label.as_bytes());
                end.extend_from_slice(b"\"}\n");
            }
            Framing::Ndjson => {
                // After the chunks and edges, as the reference writes them: entities, then links.
                for (prefix, lines) in
                    [(records::NDJSON_ENTITY_PREFIX, &self.entities), (records::NDJSON_CHUNK_ENTITY_PREFIX, &self.chunk_entities)]
                {
                    for record in lines {
                        end.extend_from_slice(prefix);
                        end.extend_from_slice(record.strip_prefix(b"{").unwrap_or(record.as_slice()));
                        end.push(b'\n');
                    }
                }
            }
        }
        self.output.write_all(&end)?;
        let file = &self.output.finish()?;
        if framing == Framing::Bundle && chunk_entities.is_some() {
            // The links are written before the checksum instead of in the opening.
            file.write_all_at(&[b' '; EMPTY_CHUNK_ENTITIES.len()], 1)?;
        }
        if framing == Framing::Ndjson {
            let line = envelope_line(&rest, &checksum_label);
            // The line written first had no retractions; with them it is longer, and the
            // records move up to make room (a delta's retractions are few, its records too).
            let first_line = self.chunks_start;
            let line_length = line.len() as u64;
            debug_assert!(line_length >= first_line, "the envelope line only grows");
            if line_length > first_line {
                shift_up(file, first_line, line_length - first_line)?;
            }
            file.write_all_at(&line, 0)?;
        }
        let bytes = file.metadata()?.len();
        let summary = SinkSummary {
            format: match framing {
                Framing::Bundle => "aimem",
                Framing::Ndjson => "aimem-ndjson",
            },
            path: self.target.display().to_string(),
            records: self.chunks + self.edges + self.entities.len() as u64 + self.chunk_entities.len() as u64,
            bytes,
        };
        Ok((summary, hash_at_end))
    }
}

impl Sink for AimemSink {
    fn encoder(&self) -> Arc<dyn Encoder> {
        Arc::new(AimemEncoder { producer: self.settings.producer.clone(), framing: self.framing, buffers: self.buffers.clone() })
    }

    fn write_batch(&mut self, batch: Encoded) -> Result<(), RunError> {
        let Encoded::Aimem(mut batch) = batch else {
            return Err(RunError::write(
                self.target.display().to_string(),
                io::Error::other("internal: the AIMEM sink got another sink's batch"),
            ));
        };
        self.write_encoded(&mut batch).map_err(|error| RunError::write(self.target.display().to_string(), error))?;
        self.buffers.give(batch.chunks);
        self.buffers.give(batch.edge_lines);
        Ok(())
    }

    fn retract(&mut self, retracted: &[RetractedConversation]) -> Result<(), RunError> {
        self.retracted_member = retracted_member(&self.settings.producer, &RetractedConversation::sorted(retracted));
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError> {
        let target = self.target.display().to_string();
        self.complete().map(|(summary, _)| summary).map_err(|error| RunError::write(target, error))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::memory_records::tests::{FIRST_SEEN, entity, extracted_memory, origin};
    use super::*;
    use crate::model::extracted::{EntityKind, EntityRef, MemoryType};
    use crate::model::{Message, Provider};

    /// A conversation whose second message is split into two chunks.
    fn conversation() -> Conversation {
        let mut conversation = Conversation::empty(Provider::ChatGpt, "c1".to_owned(), origin());
        conversation.messages = vec![
            Message::user_for_tests("m0", None, "I live in York.", FIRST_SEEN),
            Message::user_for_tests(
                "m1",
                Some("m0"),
                &format!("I moved to Leeds. {}", "x".repeat(records::MAX_CHUNK_CODE_POINTS)),
                FIRST_SEEN,
            ),
            Message::user_for_tests("m2", Some("m1"), "My dog Rex loves Leeds.", FIRST_SEEN),
        ];
        conversation
    }

    /// The memories extracted from [`conversation`], as the pipeline sends them last.
    fn memories() -> Conversation {
        let leeds = entity("ent-0001", "Leeds", EntityKind::Place, true);
        let mut old = extracted_memory("mem-00000000000000000001", "Lives in York", MemoryType::Identity, &["m0"], Vec::new());
        let mut home = extracted_memory("mem-00000000000000000002", "Lives in Leeds", MemoryType::Identity, &["m1"], vec![leeds.clone()]);
        let dog = extracted_memory(
            "mem-00000000000000000003",
            "Has a dog called Rex",
            MemoryType::Relationship,
            &["m2"],
            vec![entity("ent-0002", "Rex", EntityKind::Animal, true), EntityRef { first_mention: false, ..leeds }],
        );
        if let Some(details) = old.extracted.as_mut() {
            details.superseded_by = Some(home.id.clone());
        }
        if let Some(details) = home.extracted.as_mut() {
            details.supersedes = Some(old.id.clone());
        }
        Conversation::memories_only(Provider::ChatGpt, "extracted-memories".to_owned(), origin(), vec![old, home, dog])
    }

    /// The file written from `batches`, and what `memport validate` says of it.
    fn written(framing: Framing, batches: &[Vec<Conversation>]) -> (Vec<u8>, crate::validate::Validation) {
        // No retractions: the sink is told so, and writes what it wrote before there were any.
        written_retracting(framing, batches, &[])
    }

    /// The file written from `batches` and then `retracted`, and what `memport validate` says
    /// of it.
    fn written_retracting(
        framing: Framing,
        batches: &[Vec<Conversation>],
        retracted: &[RetractedConversation],
    ) -> (Vec<u8>, crate::validate::Validation) {
        written_expecting(framing, batches, retracted, false)
    }

    /// [`written_retracting`], hashing only at the end when `links_expected`.
    fn written_expecting(
        framing: Framing,
        batches: &[Vec<Conversation>],
        retracted: &[RetractedConversation],
        links_expected: bool,
    ) -> (Vec<u8>, crate::validate::Validation) {
        let (bytes, _, validation, target) = written_by(framing, batches, retracted, links_expected, None);
        // memport reads its own output back (a reader checks it as a consumer first).
        if validation.is_valid() {
            assert!(crate::sources::formats::aimem::check_input(&target.path).is_ok());
        }
        (bytes, validation)
    }

    /// The file written from `batches` by a sink told beforehand that the links will be
    /// `predicted`, whether it read the output back to hash it at the end, and what `memport
    /// validate` says of it.
    fn written_predicting(
        framing: Framing,
        batches: &[Vec<Conversation>],
        predicted: &[u8],
    ) -> (Vec<u8>, bool, crate::validate::Validation) {
        let (bytes, hashed_at_end, validation, _) = written_by(framing, batches, &[], false, Some(predicted));
        (bytes, hashed_at_end, validation)
    }

    /// A written file, kept until dropped.
    struct Written {
        path: PathBuf,
        _folder: tempfile::TempDir,
    }

    /// The file a sink writes from `batches` and then `retracted` (expecting links, or told
    /// them beforehand as `predicted`), whether it read the output back to hash it at the end,
    /// what `memport validate` says of it, and the file.
    fn written_by(
        framing: Framing,
        batches: &[Vec<Conversation>],
        retracted: &[RetractedConversation],
        links_expected: bool,
        predicted: Option<&[u8]>,
    ) -> (Vec<u8>, bool, crate::validate::Validation, Written) {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("out.aimem");
        let settings = AimemSettings {
            producer: "memport".to_owned(),
            tenant_id: "tenant".to_owned(),
            exported_at: FIRST_SEEN,
            links_expected,
            since: None,
            dna_only: false,
            predicted_links: predicted.map(Arc::from),
        };
        let mut sink = AimemSink::create(&target, framing, settings).unwrap();
        let encoder = sink.encoder();
        for batch in batches {
            sink.write_batch(encoder.encode(batch)).unwrap();
        }
        sink.retract(retracted).unwrap();
        let (_, hashed_at_end) = sink.complete().unwrap();
        let validation = crate::validate::aimem::validate_file(&target).unwrap();
        (std::fs::read(&target).unwrap(), hashed_at_end, validation, Written { path: target, _folder: folder })
    }

    #[test]
    fn links_told_beforehand_are_hashed_while_writing_and_other_links_read_back_at_the_end() {
        let batches = [many_conversations(), vec![memories()]];
        let folder = tempfile::tempdir().unwrap();
        let stream = folder.path().join("stream.aimem.ndjson");
        std::fs::write(&stream, written(Framing::Ndjson, &batches).0).unwrap();
        let links = links_of(&stream).unwrap();
        assert_eq!(links.iter().filter(|byte| **byte == b'{').count(), 3, "the three links, joined");
        // The first two links, without the last.
        let fewer = &links[..links.windows(2).rposition(|pair| pair == b",{").unwrap()];
        for framing in [Framing::Bundle, Framing::Ndjson] {
            let (expected, _) = written(framing, &batches);
            for (predicted, read_back) in [(&links[..], false), (fewer, true), (&[][..], true)] {
                let (bytes, hashed_at_end, validation) = written_predicting(framing, &batches, predicted);
                assert!(validation.is_valid(), "{framing:?}: {:?}", validation.problems);
                assert_eq!(hashed_at_end, read_back, "{framing:?}, {} bytes of links told", predicted.len());
                assert!(bytes == expected, "{framing:?}: the same bytes either way");
            }
        }
        // No links told and none written: hashed while writing, as a run that does not extract.
        let without = [many_conversations()];
        let (bytes, hashed_at_end, validation) = written_predicting(Framing::Ndjson, &without, b"");
        assert!(validation.is_valid() && !hashed_at_end);
        assert!(bytes == written(Framing::Ndjson, &without).0);
    }

    /// The checksum a bundle declares, and the one its canonical form has.
    fn checksums(bundle: &Value) -> (String, String) {
        let mut unsigned = bundle.clone();
        let declared = unsigned.as_object_mut().unwrap().remove("checksum").unwrap();
        let actual = crate::hash::sha256_label(&crate::hash::sha256(&crate::jcs::to_canonical_vec(&unsigned)));
        (declared.as_str().unwrap().to_owned(), actual)
    }

    fn envelope_checksum(ndjson: &[u8]) -> String {
        let first_line = ndjson.split(|byte| *byte == b'\n').next().unwrap();
        let envelope: Value = serde_json::from_slice(first_line).unwrap();
        envelope["checksum"].as_str().unwrap().to_owned()
    }

    #[test]
    fn a_bundle_with_entities_verifies_and_links_memories_to_messages_and_entities() {
        let batches = [vec![conversation()], vec![memories()]];
        let (bytes, validation) = written(Framing::Bundle, &batches);
        assert!(validation.is_valid(), "{:?}", validation.problems);
        // The empty links member of the opening is blanked; the links come before the checksum.
        assert!(bytes.starts_with(format!("{{{}\"chunks\":[", " ".repeat(EMPTY_CHUNK_ENTITIES.len())).as_bytes()));
        let bundle: Value = serde_json::from_slice(&bytes).unwrap();
        let (declared, actual) = checksums(&bundle);
        assert_eq!(declared, actual);
        assert_eq!(bundle["chunks"].as_array().unwrap().len(), 4 + 3);
        assert_eq!(bundle["entities"].as_array().unwrap().len(), 2);
        assert_eq!(bundle["entities"][1]["kind"], "x-animal");
        let links = bundle["chunk_entities"].as_array().unwrap();
        assert_eq!(links.len(), 3);
        assert_eq!(links[0]["chunk_id"], "urn:aimem:memport:mem-00000000000000000002");
        assert_eq!(links[0]["entity_id"], "urn:aimem:memport:entity.ent-0001");
        let edges = bundle["edges"].as_array().unwrap();
        let edge = |edge_type: &str, source: &str| {
            edges.iter().find(|edge| edge["edge_type"] == edge_type && edge["source_id"] == source).cloned().unwrap()
        };
        // The split message's first part carries the message's own URN.
        assert_eq!(edge("x-derived-from", "urn:aimem:memport:mem-00000000000000000002")["target_id"], "urn:aimem:memport:chatgpt.c1.m1");
        assert_eq!(
            edge("x-supersedes", "urn:aimem:memport:mem-00000000000000000002")["target_id"],
            "urn:aimem:memport:mem-00000000000000000001"
        );
        assert_eq!(edges.iter().filter(|edge| edge["edge_type"] == "temporal").count(), 3);
        let home = bundle["chunks"].as_array().unwrap().iter().find(|chunk| chunk["content"] == "Lives in Leeds").unwrap();
        assert_eq!(home["zone"], "important");
    }

    #[test]
    fn the_stream_carries_the_same_checksum_with_entities_and_links_last() {
        let batches = [vec![conversation()], vec![memories()]];
        let (bundle, _) = written(Framing::Bundle, &batches);
        let (stream, validation) = written(Framing::Ndjson, &batches);
        assert!(validation.is_valid(), "{:?}", validation.problems);
        let bundle: Value = serde_json::from_slice(&bundle).unwrap();
        assert_eq!(envelope_checksum(&stream), bundle["checksum"].as_str().unwrap());
        let kinds: Vec<String> = stream
            .split(|byte| *byte == b'\n')
            .skip(1)
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice::<Value>(line).unwrap()["_kind"].as_str().unwrap().to_owned())
            .collect();
        let order = |kind: &str| kinds.iter().position(|each| each == kind).unwrap();
        assert!(order("chunk") < order("edge") && order("edge") < order("entity") && order("entity") < order("chunk_entity"));
        assert_eq!(kinds.iter().filter(|kind| *kind == "chunk_entity").count(), 3);
        assert_eq!(kinds.last().map(String::as_str), Some("chunk_entity"));
    }

    /// Conversations whose records fill several of the output writer's blocks.
    fn many_conversations() -> Vec<Conversation> {
        (0..2000)
            .map(|index| {
                let mut conversation = Conversation::empty(Provider::ChatGpt, format!("many-{index}"), origin());
                conversation.messages = vec![
                    Message::user_for_tests("m0", None, &format!("Question {index}: {}", "q".repeat(3000)), FIRST_SEEN),
                    Message::user_for_tests("m1", Some("m0"), &format!("Answer {index}: {}", "a".repeat(3000)), FIRST_SEEN),
                ];
                conversation
            })
            .chain([conversation()])
            .collect()
    }

    #[test]
    fn an_output_larger_than_a_write_block_hashes_the_same_when_hashed_at_the_end() {
        for batches in [vec![many_conversations(), vec![memories()]], vec![many_conversations()]] {
            for framing in [Framing::Bundle, Framing::Ndjson] {
                let (while_writing, _) = written_expecting(framing, &batches, &[], false);
                let (at_the_end, validation) = written_expecting(framing, &batches, &[], true);
                assert!(validation.is_valid(), "{framing:?}: {:?}", validation.problems);
                assert!(at_the_end.len() > 2 * (4 << 20), "the output spans several blocks");
                assert!(while_writing == at_the_end, "{framing:?}: the same bytes either way");
            }
        }
    }

    #[test]
    fn blocks_read_back_in_turn_come_in_order_for_any_range() {
        let folder = tempfile::tempdir().unwrap();
        for size in [0, 5, READ_BLOCK, 2 * READ_BLOCK, 3 * READ_BLOCK + 5] {
            let bytes: Vec<u8> = (0..size).map(|index| (index % 251) as u8).collect();
            let path = folder.path().join(format!("file-{size}"));
            std::fs::write(&path, &bytes).unwrap();
            let file = File::open(&path).unwrap();
            for (start, until) in [(0, u64::MAX), (7, u64::MAX), (3, size as u64 - size.min(2) as u64), (READ_BLOCK as u64, u64::MAX)] {
                for direct in [Some(path.as_path()), None] {
                    let mut seen = Vec::new();
                    for_each_block(&file, direct, start, until, |data| seen.extend_from_slice(data)).unwrap();
                    let from = (start as usize).min(size);
                    let to = usize::try_from(until).unwrap_or(usize::MAX).min(size).max(from);
                    assert!(seen == bytes[from..to], "size {size}, {start}..{until}, direct {}", direct.is_some());
                }
            }
        }
    }

    #[test]
    fn without_extracted_memories_both_forms_open_and_hash_as_before() {
        let batches = [vec![conversation()]];
        let (bytes, validation) = written(Framing::Bundle, &batches);
        assert!(validation.is_valid(), "{:?}", validation.problems);
        assert!(bytes.starts_with(b"{\"chunk_entities\":[],\"chunks\":[{"));
        let bundle: Value = serde_json::from_slice(&bytes).unwrap();
        let (declared, actual) = checksums(&bundle);
        assert_eq!(declared, actual);
        assert!(String::from_utf8(bytes).unwrap().ends_with(&format!(
            "],\"entities\":[],\"exported_at\":\"2024-01-01T00:00:00Z\",\"format\":\"aimem-bundle\",\"producer\":\"memport\",\"scope\":\"FULL\",\"tenant_id\":\"tenant\",\"version\":\"1\",\"checksum\":\"{declared}\"}}\n"
        )));
        let (stream, validation) = written(Framing::Ndjson, &batches);
        assert!(validation.is_valid(), "{:?}", validation.problems);
        assert_eq!(envelope_checksum(&stream), declared);
        assert!(stream.starts_with(format!("{{\"checksum\":\"{declared}\",\"exported_at\":").as_bytes()));
    }

    fn retraction(provider: Provider, conversation_id: &str) -> RetractedConversation {
        RetractedConversation {
            provider,
            conversation_id: conversation_id.to_owned(),
            title: Some("Gone".to_owned()),
            created_at: None,
            retracted_by: "20240102T000000Z-000000000002".to_owned(),
            retracted_at: FIRST_SEEN + 86_400_000_000,
            messages: Vec::new(),
        }
    }

    #[test]
    fn retractions_are_an_envelope_extension_the_checksum_covers_in_both_forms() {
        // Given out of order: written by provider, then id.
        let retracted = [retraction(Provider::Claude, "a b"), retraction(Provider::ChatGpt, "c0")];
        let mut with_retracted_dog = memories();
        if let Some(details) = with_retracted_dog.memories[2].extracted.as_mut() {
            details.retracted = true;
        }
        // Hashed while written (no links), and hashed again at the end (links).
        for batches in [vec![vec![conversation()]], vec![vec![conversation()], vec![with_retracted_dog.clone()]]] {
            let (bytes, validation) = written_retracting(Framing::Bundle, &batches, &retracted);
            assert!(validation.is_valid(), "{:?}", validation.problems);
            let bundle: Value = serde_json::from_slice(&bytes).unwrap();
            let (declared, actual) = checksums(&bundle);
            assert_eq!(declared, actual, "the checksum covers the extension");
            let listed = bundle["x-memport-retracted"].clone();
            assert_eq!(
                listed,
                serde_json::json!([
                    {
                        "chunk_id_prefix": "urn:aimem:memport:chatgpt.c0.",
                        "conversation_id": "c0",
                        "conversation_tag": "conv-c0",
                        "provider": "chatgpt",
                        "retracted_at": "2024-01-02T00:00:00Z",
                        "retracted_by": "20240102T000000Z-000000000002",
                        "title": "Gone",
                    },
                    {
                        "chunk_id_prefix": null,
                        "conversation_id": "a b",
                        "conversation_tag": "conv-a-b",
                        "provider": "claude",
                        "retracted_at": "2024-01-02T00:00:00Z",
                        "retracted_by": "20240102T000000Z-000000000002",
                        "title": "Gone",
                    },
                ])
            );
            // Canonical order: after `version`, the last member before the checksum.
            assert!(String::from_utf8_lossy(&bytes).contains("\"version\":\"1\",\"x-memport-retracted\":[{\"chunk_id_prefix\":"));

            let (stream, validation) = written_retracting(Framing::Ndjson, &batches, &retracted);
            assert!(validation.is_valid(), "{:?}", validation.problems);
            assert_eq!(envelope_checksum(&stream), declared, "over the full bundle form");
            let mut lines = stream.split(|byte| *byte == b'\n').filter(|line| !line.is_empty());
            let envelope: Value = serde_json::from_slice(lines.next().unwrap()).unwrap();
            assert_eq!(envelope["x-memport-retracted"], listed);
            // The records moved up whole to make room for the longer envelope line.
            let records: Vec<Value> = lines.map(|line| serde_json::from_slice(line).unwrap()).collect();
            let chunks = bundle["chunks"].as_array().unwrap();
            assert_eq!(records.iter().filter(|record| record["_kind"] == "chunk").count(), chunks.len());
            assert_eq!(records[0]["id"], chunks[0]["id"]);
        }

        let (bytes, _) = written_retracting(Framing::Bundle, &[vec![conversation()], vec![with_retracted_dog]], &retracted);
        let bundle: Value = serde_json::from_slice(&bytes).unwrap();
        let dog = bundle["chunks"].as_array().unwrap().iter().find(|chunk| chunk["content"] == "Has a dog called Rex").unwrap();
        assert!(dog["tags"].as_array().unwrap().iter().any(|tag| tag == "retracted"));
        // Its messages are in retracted conversations: no edge leads there.
        let dog_id = dog["id"].clone();
        assert!(bundle["edges"].as_array().unwrap().iter().all(|edge| edge["source_id"] != dog_id));
    }

    /// Guards the `retracted` tag: it says a memory was withdrawn in its input, and nothing
    /// else; another format's label of that name is not written as it.
    #[test]
    fn only_a_memory_withdrawn_in_its_input_is_tagged_retracted() {
        let memory = |retracted: bool| {
            let mut memory = crate::model::MemoryRecord::new(
                Provider::ChatGpt,
                crate::model::MemoryKind::Fact,
                "Likes tea".into(),
                FIRST_SEEN,
                vec!["retracted".into()],
            );
            memory.retracted_in_input = retracted;
            memory
        };
        for retracted in [false, true] {
            let conversation = Conversation::memories_only(Provider::ChatGpt, "m".into(), origin(), vec![memory(retracted)]);
            let (bytes, validation) = written(Framing::Bundle, &[vec![conversation]]);
            assert!(validation.is_valid(), "{:?}", validation.problems);
            let bundle: Value = serde_json::from_slice(&bytes).unwrap();
            let tags = bundle["chunks"][0]["tags"].as_array().unwrap().clone();
            assert_eq!(tags.iter().filter(|tag| *tag == "retracted").count(), usize::from(retracted), "{tags:?}");
        }
    }
}
