//! AIMEM writers (draft-vu-aimem-bundle-00): the bundle (`--to aimem`) and the NDJSON stream
//! (`--to aimem-ndjson`), which differ only in framing.
//!
//! Both compute the envelope checksum (SHA-256 over the RFC 8785 form of the bundle without
//! `checksum`) in one pass and bounded memory. JCS orders the envelope's members
//! `chunk_entities, chunks, edges, entities, exported_at, format, producer, scope, tenant_id,
//! version`, and every record is written in canonical form, so the hash is fed the canonical
//! bytes as they are produced. Edges are spilled to a temporary file until the chunks are done;
//! the NDJSON form also spills chunks, because its envelope line (with the checksum) comes first.

pub mod records;

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tempfile::NamedTempFile;

use crate::error::RunError;
use crate::jcs::write_string;
use crate::model::Conversation;
use crate::sinks::{AimemSettings, Sink, SinkSummary};
use crate::timefmt::format_rfc3339;

const BUFFER: usize = 1 << 20;

/// How the records are laid out in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One JSON object.
    Bundle,
    /// Envelope line, then one `_kind`-tagged record per line.
    Ndjson,
}

/// Writes one AIMEM file.
pub struct AimemSink {
    framing: Framing,
    settings: AimemSettings,
    target: PathBuf,
    /// The final file, under a temporary name in the target's folder.
    output: BufWriter<NamedTempFile>,
    /// NDJSON only: chunk lines until the envelope can be written.
    chunk_spool: Option<BufWriter<File>>,
    /// Canonical edge records, one per line, until the chunks are done.
    edge_spool: BufWriter<File>,
    checksum: Sha256,
    chunks: u64,
    edges: u64,
    scratch: Vec<u8>,
}

impl AimemSink {
    /// Creates the sink; nothing appears at `target` until [`Sink::finish`].
    ///
    /// # Errors
    /// I/O errors creating temporary files beside `target`.
    pub fn create(target: &Path, framing: Framing, settings: AimemSettings) -> Result<AimemSink, RunError> {
        let folder = target.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let display = target.display().to_string();
        std::fs::create_dir_all(folder).map_err(|error| RunError::write(&display, error))?;
        let output = tempfile::Builder::new().prefix(".memport-").suffix(".partial").tempfile_in(folder).map_err(|error| RunError::write(&display, error))?;
        let chunk_spool = match framing {
            Framing::Bundle => None,
            Framing::Ndjson => Some(BufWriter::with_capacity(BUFFER, tempfile::tempfile_in(folder).map_err(|error| RunError::write(&display, error))?)),
        };
        let edge_spool = BufWriter::with_capacity(BUFFER, tempfile::tempfile_in(folder).map_err(|error| RunError::write(&display, error))?);
        let mut sink = AimemSink {
            framing,
            settings,
            target: target.to_owned(),
            output: BufWriter::with_capacity(BUFFER, output),
            chunk_spool,
            edge_spool,
            checksum: Sha256::new(),
            chunks: 0,
            edges: 0,
            scratch: Vec::with_capacity(1 << 16),
        };
        let opening = b"{\"chunk_entities\":[],\"chunks\":[";
        sink.checksum.update(opening);
        if framing == Framing::Bundle {
            sink.output.write_all(opening).map_err(|error| RunError::write(&display, error))?;
        }
        Ok(sink)
    }

    fn write_error(&self, error: io::Error) -> RunError {
        RunError::write(self.target.display().to_string(), error)
    }

    fn write_conversation(&mut self, conversation: &Conversation) -> io::Result<()> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let AimemSink { framing, settings, output, chunk_spool, edge_spool, checksum, chunks, edges, .. } = self;
        let framing = *framing;
        let result = records::map_conversation(
            conversation,
            &settings.producer,
            &mut scratch,
            |chunk| {
                if *chunks > 0 {
                    checksum.update(b",");
                }
                checksum.update(chunk);
                match (framing, chunk_spool.as_mut()) {
                    (Framing::Ndjson, Some(spool)) => {
                        spool.write_all(b"{\"_kind\":\"chunk\",")?;
                        spool.write_all(&chunk[1..])?;
                        spool.write_all(b"\n")?;
                    }
                    _ => {
                        if *chunks > 0 {
                            output.write_all(b",")?;
                        }
                        output.write_all(chunk)?;
                    }
                }
                *chunks += 1;
                Ok(())
            },
            |edge| {
                edge_spool.write_all(edge)?;
                edge_spool.write_all(b"\n")?;
                *edges += 1;
                Ok(())
            },
        );
        self.scratch = scratch;
        result
    }

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

    fn complete(mut self) -> io::Result<SinkSummary> {
        let tail = self.envelope_tail();
        self.checksum.update(b"],\"edges\":[");
        if self.framing == Framing::Bundle {
            self.output.write_all(b"],\"edges\":[")?;
        }
        let mut edge_file = self.edge_spool.into_inner().map_err(io::IntoInnerError::into_error)?;
        edge_file.seek(SeekFrom::Start(0))?;
        let mut edge_lines = BufReader::with_capacity(BUFFER, edge_file);
        let mut line = Vec::with_capacity(512);
        let mut first = true;
        // Edges are hashed after every chunk, as canonical member order requires.
        loop {
            line.clear();
            if edge_lines.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            let record = line.strip_suffix(b"\n").unwrap_or(&line);
            if !first {
                self.checksum.update(b",");
            }
            self.checksum.update(record);
            if self.framing == Framing::Bundle {
                if !first {
                    self.output.write_all(b",")?;
                }
                self.output.write_all(record)?;
            }
            first = false;
        }
        self.checksum.update(b"],");
        self.checksum.update(&tail);
        self.checksum.update(b"}");
        let digest: [u8; 32] = self.checksum.finalize().into();
        let checksum_label = crate::hash::sha256_label(&digest);
        match self.framing {
            Framing::Bundle => {
                self.output.write_all(b"],")?;
                self.output.write_all(&tail)?;
                self.output.write_all(b",\"checksum\":\"")?;
                self.output.write_all(checksum_label.as_bytes())?;
                self.output.write_all(b"\"}\n")?;
            }
            Framing::Ndjson => {
                // Envelope line: the members other than the four arrays, in canonical order.
                let mut envelope = Vec::with_capacity(320);
                envelope.extend_from_slice(b"{\"checksum\":\"");
                envelope.extend_from_slice(checksum_label.as_bytes());
                envelope.extend_from_slice(b"\",");
                envelope.extend_from_slice(tail.strip_prefix(b"\"entities\":[],".as_slice()).unwrap_or(&tail));
                envelope.extend_from_slice(b"}\n");
                self.output.write_all(&envelope)?;
                if let Some(spool) = self.chunk_spool.take() {
                    let mut chunk_file = spool.into_inner().map_err(io::IntoInnerError::into_error)?;
                    chunk_file.seek(SeekFrom::Start(0))?;
                    io::copy(&mut chunk_file, &mut self.output)?;
                }
                let mut edge_file = edge_lines.into_inner();
                edge_file.seek(SeekFrom::Start(0))?;
                let mut edge_lines = BufReader::with_capacity(BUFFER, edge_file);
                loop {
                    line.clear();
                    if edge_lines.read_until(b'\n', &mut line)? == 0 {
                        break;
                    }
                    self.output.write_all(b"{\"_kind\":\"edge\",")?;
                    self.output.write_all(&line[1..])?;
                }
            }
        }
        let temporary = self.output.into_inner().map_err(io::IntoInnerError::into_error)?;
        temporary.as_file().sync_data()?;
        let bytes = temporary.as_file().metadata()?.len();
        temporary.persist(&self.target).map_err(|error| error.error)?;
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
    fn write_batch(&mut self, batch: &[Conversation]) -> Result<(), RunError> {
        for conversation in batch {
            self.write_conversation(conversation).map_err(|error| self.write_error(error))?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<SinkSummary, RunError> {
        let target = self.target.display().to_string();
        self.complete().map_err(|error| RunError::write(target, error))
    }
}
