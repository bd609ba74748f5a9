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

pub mod records;

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::buffers::BufferPool;
use crate::error::RunError;
use crate::jcs::write_string;
use crate::model::Conversation;
use crate::model::Micros;
use crate::sinks::direct_writer::DirectWriter;
use crate::sinks::{Encoded, Encoder, Sink, SinkSummary, output_file};
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
}

/// How the records are laid out in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One JSON object.
    Bundle,
    /// Envelope line, then one `_kind`-tagged record per line.
    Ndjson,
}

/// Canonical chunk and edge records of one batch, made on a worker thread.
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
        let mut encoded = EncodedBatch { chunks, chunk_ends: Vec::with_capacity(messages), edge_lines, edge_count: 0 };
        for conversation in batch {
            records::map_conversation(conversation, &self.producer, self.framing, &mut encoded);
        }
        Encoded::Aimem(encoded)
    }
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
    buffers: BufferPool,
}

/// Length of the NDJSON envelope line's checksum value (`sha256:` + 64 hex digits).
const CHECKSUM_PLACEHOLDER: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

impl AimemSink {
    /// Creates the sink; nothing appears at `target` until [`Sink::finish`].
    ///
    /// # Errors
    /// I/O errors creating temporary files beside `target`.
    pub fn create(target: &Path, framing: Framing, settings: AimemSettings) -> Result<AimemSink, RunError> {
        let folder = output_file::folder_of(target);
        let display = target.display().to_string();
        let output = output_file::create_partial(target).map_err(|error| RunError::write(&display, error))?;
        let edge_spool = BufWriter::with_capacity(BUFFER, tempfile::tempfile_in(folder).map_err(|error| RunError::write(&display, error))?);
        let mut sink = AimemSink {
            framing,
            settings,
            target: target.to_owned(),
            output: DirectWriter::new(output),
            edge_spool,
            checksum: Sha256::new(),
            chunks: 0,
            edges: 0,
            buffers: BufferPool::default(),
        };
        let opening = b"{\"chunk_entities\":[],\"chunks\":[";
        sink.checksum.update(opening);
        let first_bytes = match framing {
            Framing::Bundle => opening.to_vec(),
            // The envelope line comes first but its checksum is known only at the end: write it
            // with a placeholder of the same length now and overwrite it in `complete`.
            Framing::Ndjson => envelope_line(&sink.envelope_tail(), CHECKSUM_PLACEHOLDER),
        };
        sink.output.write_all(&first_bytes).map_err(|error| RunError::write(&display, error))?;
        Ok(sink)
    }

    fn write_encoded(&mut self, batch: &EncodedBatch) -> io::Result<()> {
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
                self.checksum.update(bytes);
                self.output.write_all(bytes)?;
            }
            Framing::Ndjson => {
                // The hash covers each line's canonical record: `{` + members (the line without
                // its `"_kind"` member and newline), comma-separated.
                let mut start = 0;
                for (position, &end) in batch.chunk_ends.iter().enumerate() {
                    let line = &batch.chunks[start..end];
                    start = end;
                    if self.chunks > 0 || position > 0 {
                        self.checksum.update(b",");
                    }
                    self.checksum.update(b"{");
                    self.checksum.update(&line[records::NDJSON_CHUNK_PREFIX.len()..line.len() - 1]);
                }
                self.output.write_all(&batch.chunks)?;
            }
        }
        self.chunks += batch.chunk_ends.len() as u64;
        self.edge_spool.write_all(&batch.edge_lines)?;
        self.edges += batch.edge_count;
        Ok(())
    }

    /// The envelope members after the four arrays, in canonical order, without braces.
    fn envelope_tail(&self) -> Vec<u8> {
        let mut tail = Vec::with_capacity(256);
        tail.extend_from_slice(b"\"entities\":[],\"exported_at\":");
        write_string(&mut tail, &format_rfc3339(self.settings.exported_at));
        tail.extend_from_slice(b",\"format\":\"aimem-bundle\",\"producer\":");
        write_string(&mut tail, &self.settings.producer);
        tail.extend_from_slice(b",\"scope\":\"FULL\",\"tenant_id\":");
        write_string(&mut tail, &self.settings.tenant_id);
        tail.extend_from_slice(b",\"version\":\"1\"");
        tail
    }
}

/// The NDJSON envelope line: every member but the four arrays, in canonical order.
fn envelope_line(tail: &[u8], checksum_label: &str) -> Vec<u8> {
    {
        let mut line = Vec::with_capacity(320);
        line.extend_from_slice(b"{\"checksum\":");
        write_string(&mut line, checksum_label);
        line.push(b',');
        line.extend_from_slice(tail.strip_prefix(b"\"entities\":[],".as_slice()).unwrap_or(tail));
        line.extend_from_slice(b"}\n");
        line
    }
}

/// Copies the spooled edges from byte `skip` to the output.
fn copy_edges(spool: &File, skip: u64, output: &mut DirectWriter) -> io::Result<()> {
    let mut block = vec![0u8; BUFFER];
    let mut offset = skip;
    loop {
        let read = spool.read_at(&mut block, offset)?;
        if read == 0 {
            return Ok(());
        }
        output.write_all(&block[..read])?;
        offset += read as u64;
    }
}

/// Feeds the spooled edges from byte `skip` into `checksum` in canonical form: bundle records
/// are already `,`-separated canonical records; NDJSON lines lose their `"_kind"` member and
/// newline and are joined with `,`.
fn hash_edges(spool: &File, skip: u64, framing: Framing, mut checksum: Sha256) -> io::Result<Sha256> {
    let mut block = vec![0u8; BUFFER];
    let mut offset = skip;
    let mut partial_line = Vec::new();
    let mut first = true;
    let mut hash_line = |line: &[u8], checksum: &mut Sha256| {
        if !first {
            checksum.update(b",");
        }
        first = false;
        checksum.update(b"{");
        checksum.update(line.get(records::NDJSON_EDGE_PREFIX.len()..line.len().saturating_sub(1)).unwrap_or_default());
    };
    loop {
        let read = spool.read_at(&mut block, offset)?;
        if read == 0 {
            break;
        }
        offset += read as u64;
        let mut data = &block[..read];
        if framing == Framing::Bundle {
            checksum.update(data);
            continue;
        }
        if !partial_line.is_empty() {
            let Some(end) = memchr::memchr(b'\n', data) else {
                partial_line.extend_from_slice(data);
                continue;
            };
            partial_line.extend_from_slice(&data[..=end]);
            hash_line(&partial_line, &mut checksum);
            partial_line.clear();
            data = &data[end + 1..];
        }
        while let Some(end) = memchr::memchr(b'\n', data) {
            hash_line(&data[..=end], &mut checksum);
            data = &data[end + 1..];
        }
        partial_line.extend_from_slice(data);
    }
    if !partial_line.is_empty() {
        return Err(io::Error::other("the edge spool ends inside a line"));
    }
    Ok(checksum)
}

impl AimemSink {
    fn complete(mut self) -> io::Result<SinkSummary> {
        let tail = self.envelope_tail();
        self.checksum.update(b"],\"edges\":[");
        if self.framing == Framing::Bundle {
            self.output.write_all(b"],\"edges\":[")?;
        }
        let spool = self.edge_spool.into_inner().map_err(io::IntoInnerError::into_error)?;
        // Bundle edges are spooled as `,` + record: the first one's comma is not written.
        let skip = u64::from(self.framing == Framing::Bundle && self.edges > 0);
        // The spool already holds the edges as the output frames them, so one thread copies
        // them while another hashes them: edges are hashed after every chunk, as canonical
        // member order requires, and the end of a run waits on nothing else.
        let framing = self.framing;
        let checksum = std::mem::replace(&mut self.checksum, Sha256::new());
        let output = &mut self.output;
        self.checksum = std::thread::scope(|scope| -> io::Result<Sha256> {
            let hashing = scope.spawn(|| hash_edges(&spool, skip, framing, checksum));
            copy_edges(&spool, skip, output)?;
            hashing.join().map_err(|_| io::Error::other("the edge hashing thread stopped"))?
        })?;
        self.checksum.update(b"],");
        self.checksum.update(&tail);
        self.checksum.update(b"}");
        let digest: [u8; 32] = self.checksum.clone().finalize().into();
        let checksum_label = crate::hash::sha256_label(&digest);
        if self.framing == Framing::Bundle {
            self.output.write_all(b"],")?;
            self.output.write_all(&tail)?;
            self.output.write_all(b",\"checksum\":\"")?;
            self.output.write_all(checksum_label.as_bytes())?;
            self.output.write_all(b"\"}\n")?;
        }
        let envelope = (self.framing == Framing::Ndjson).then(|| envelope_line(&tail, &checksum_label));
        let mut temporary = self.output.into_temporary()?;
        if let Some(envelope) = envelope {
            let file = temporary.as_file_mut();
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&envelope)?;
        }
        let bytes = output_file::persist(temporary, &self.target)?;
        Ok(SinkSummary {
            format: match self.framing {
                Framing::Bundle => "aimem",
                Framing::Ndjson => "aimem-ndjson",
            },
            path: self.target.display().to_string(),
            records: self.chunks + self.edges,
            bytes,
        })
    }
}

impl Sink for AimemSink {
    fn encoder(&self) -> Arc<dyn Encoder> {
        Arc::new(AimemEncoder { producer: self.settings.producer.clone(), framing: self.framing, buffers: self.buffers.clone() })
    }

    fn write_batch(&mut self, batch: Encoded) -> Result<(), RunError> {
        let Encoded::Aimem(batch) = batch else {
            return Err(RunError::write(
                self.target.display().to_string(),
                io::Error::other("internal: the AIMEM sink got another sink's batch"),
            ));
        };
        self.write_encoded(&batch).map_err(|error| RunError::write(self.target.display().to_string(), error))?;
        self.buffers.give(batch.chunks);
        self.buffers.give(batch.edge_lines);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError> {
        let target = self.target.display().to_string();
        self.complete().map_err(|error| RunError::write(target, error))
    }
}
