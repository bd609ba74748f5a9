//! AIMEM Consumer checks (draft-vu-aimem-bundle-00 §3–§4, in the reference's order): envelope,
//! checksum (409), chunks, duplicate ids, edges, entities, chunk-entity links, embeddings (422).
//! Envelope members the draft does not name are part of the checksum like any other; memport's
//! own extension `x-memport-retracted` (a sync's retractions) is checked for its shape.
//!
//! NDJSON streams are read in batches of lines: each batch is parsed, put in canonical form
//! and its chunks' contents hashed on every core while the batch before it is checked in order
//! on one (ids, problems, the canonical bytes spooled so the checksum is computed without
//! holding the stream). Bundles are read twice, a record at a time ([`object_stream`]): the
//! envelope first, then the records.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use rayon::prelude::*;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::RunError;
use crate::hash::{sha256, sha256_label};
use crate::jcs::{write_canonical, write_string};
use crate::key_set::{KeySet, key_of};
use crate::timefmt::parse_rfc3339;
use crate::validate::object_stream::{self, Scan};
use crate::validate::{Problem, Problems, Validation};

const ARRAY_KEYS: [&str; 4] = ["chunk_entities", "chunks", "edges", "entities"];
const MEMORY_TYPES: [&str; 8] = ["fact", "preference", "decision", "identity", "pitfall", "procedure", "episodic", "goal"];
const ZONES: [&str; 3] = ["critical", "important", "standard"];
const EDGE_TYPES: [&str; 4] = ["hebbian", "semantic", "temporal", "causal"];
const ENTITY_KINDS: [&str; 5] = ["person", "organization", "place", "technology", "concept"];
const MAX_CONTENT_CODE_POINTS: usize = 65_536;
pub use crate::spec::aimem::{RETRACTED_MEMBER, WITHDRAWN_MEMBER};

/// The problem of a chunk id outside the envelope's producer namespace. The draft forbids it,
/// and `memport validate` says so; but a server that keeps imported chunks' ids under its own
/// `producer` (the AIMEM reference does) exports nothing else once it holds another
/// producer's bundle, so readers tolerate it ([`tolerate_foreign_ids`]).
pub const FOREIGN_ID_CODE: &str = "urn_producer_mismatch";

/// Takes the foreign-id problems ([`FOREIGN_ID_CODE`]) out of `validation`, for a reader: the
/// ids are read as they are and memport's outputs give the records ids of their own. Returns
/// how many there were and the notice that says so (none when there were none).
pub fn tolerate_foreign_ids(validation: &mut Validation) -> Option<(u64, String)> {
    let foreign = validation.problems.remove_code(FOREIGN_ID_CODE);
    (foreign > 0).then(|| {
        (
            foreign,
            format!(
                "{foreign} chunk ids are not in the envelope's producer namespace (a server that keeps imported chunks' ids exports them so); \
                 read as they are, and given memport's own ids in what it writes"
            ),
        )
    })
}

/// Validates a bundle or an NDJSON stream.
///
/// # Errors
/// I/O errors.
pub fn validate_file(path: &Path) -> Result<Validation, RunError> {
    validate_file_keeping_envelope(path).map(|(validation, _)| validation)
}

/// [`validate_file`], and the envelope as checked: a bundle's members but its record arrays, or
/// a stream's first line (for a reader, which needs the producer and memport's retractions
/// without reading the file again).
///
/// # Errors
/// I/O errors.
pub fn validate_file_keeping_envelope(path: &Path) -> Result<(Validation, Map<String, Value>), RunError> {
    let display = path.display().to_string();
    let file = crate::remote::open_seekable_path(path).map_err(|error| RunError::read(&display, error))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let first_line_is_envelope = {
        let mut first = Vec::new();
        reader.by_ref().take(1 << 20).read_until(b'\n', &mut first).map_err(|error| RunError::read(&display, error))?;
        reader.seek(SeekFrom::Start(0)).map_err(|error| RunError::read(&display, error))?;
        serde_json::from_slice::<Map<String, Value>>(&first).is_ok_and(|object| !object.contains_key("chunks"))
    };
    let mut checker = Checker::new(&display)?;
    if first_line_is_envelope {
        checker.check_ndjson(reader)?;
    } else {
        checker.check_bundle(reader)?;
    }
    Ok(checker.finish(display))
}

struct Checker {
    display: String,
    format: &'static str,
    envelope: Map<String, Value>,
    /// Canonical bytes of each array, spooled in stream order (index = ARRAY_KEYS position).
    spools: Vec<(BufWriter<File>, u64)>,
    /// Which arrays the file has (absent ones are not part of the canonical form).
    present: [bool; 4],
    envelope_problems: Problems,
    record_problems: Problems,
    notices: Vec<String>,
    /// Chunk and entity ids, as keys of a set that spills to disk: a stream of millions of
    /// chunks is checked in bounded memory.
    chunk_ids: KeySet,
    entity_ids: KeySet,
    /// Edges and links are checked after every chunk and entity is known: spooled as
    /// `[location, record]` lines, in order.
    deferred: BufWriter<File>,
    /// A bundle's links, spooled apart so they are checked after its edges whatever the
    /// order of the two arrays in the file (a stream's are checked in the stream's order).
    deferred_links: Option<BufWriter<File>>,
    /// A bundle's entity problems, held until its edges are checked: they come after them.
    entity_problems: Option<Problems>,
    /// Whether a deferred record could not be spooled (reported at the end).
    spool_failed: Option<String>,
    any_embedding: Option<String>,
    embedding_lengths: Vec<(String, usize)>,
    records: u64,
}

impl Checker {
    fn new(display: &str) -> Result<Self, RunError> {
        let mut spools = Vec::with_capacity(4);
        for _ in ARRAY_KEYS {
            spools.push((
                BufWriter::with_capacity(1 << 20, tempfile::tempfile().map_err(|error| RunError::temporary("validation", error))?),
                0,
            ));
        }
        Ok(Checker {
            display: display.to_owned(),
            format: "aimem",
            envelope: Map::new(),
            spools,
            present: [true; 4],
            envelope_problems: Problems::new(),
            record_problems: Problems::new(),
            notices: Vec::new(),
            chunk_ids: KeySet::default(),
            entity_ids: KeySet::default(),
            deferred: BufWriter::new(tempfile::tempfile().map_err(|error| RunError::temporary("validation", error))?),
            deferred_links: None,
            entity_problems: None,
            spool_failed: None,
            any_embedding: None,
            embedding_lengths: Vec::new(),
            records: 0,
        })
    }

    /// Checks a bundle in two reads of the file, holding one record at a time: the first keeps
    /// the envelope's members (the producer, which comes after the chunks in canonical order, is
    /// needed to check them) and finds which arrays there are; the second checks each record.
    /// The problems come in the documented order whatever the order of the arrays in the file:
    /// chunks, then (at the end, when every id is known) edges, entities and links.
    fn check_bundle<R: Read + Seek>(&mut self, mut reader: R) -> Result<(), RunError> {
        let (members, arrays) = match object_stream::scan(&mut reader, &ARRAY_KEYS) {
            Ok(Scan::Object { members, arrays }) => (members, arrays),
            Ok(Scan::NotAnObject) => {
                self.envelope_problems.push(problem(422, "malformed_json", "/", "a bundle is a JSON object".into()));
                return Ok(());
            }
            Err(error) if error.is_io() => return Err(RunError::read(&self.display, error.into())),
            Err(error) => {
                self.envelope_problems.push(problem(422, "malformed_json", "/", format!("not JSON: {error}")));
                return Ok(());
            }
        };
        for (position, (key, member)) in ARRAY_KEYS.iter().zip(&arrays).enumerate() {
            if member.occurrences == 0 {
                self.present[position] = false;
            } else if !member.last_is_array {
                self.envelope_problems.push(problem(422, "malformed_envelope", &format!("/{key}"), format!("`{key}` must be an array")));
            }
        }
        self.envelope = members;
        reader.seek(SeekFrom::Start(0)).map_err(|error| RunError::read(&self.display, error))?;
        self.deferred_links = Some(BufWriter::new(tempfile::tempfile().map_err(|error| RunError::temporary("validation", error))?));
        let mut problems_by_array: [Problems; 4] = Default::default();
        let read = object_stream::for_each_item(&mut reader, &ARRAY_KEYS, &arrays, &mut |position, index, item| {
            std::mem::swap(&mut self.record_problems, &mut problems_by_array[position]);
            let checked = self.record(position, item, format!("/{}/{index}", ARRAY_KEYS[position]));
            std::mem::swap(&mut self.record_problems, &mut problems_by_array[position]);
            checked
        });
        match read {
            Ok(checked) => checked?,
            Err(error) if error.is_io() => return Err(RunError::read(&self.display, error.into())),
            Err(error) => {
                // The second read refused what the first accepted: the file changed between
                // the reads, or it holds an object whose first key is serde_json's raw-value
                // token, which only a parsed value reads in its own way. Either way the bundle is
                // not JSON as a whole parse would read it: that problem alone, as for a file
                // the first read refuses.
                *self = Checker::new(&self.display)?;
                self.envelope_problems.push(problem(422, "malformed_json", "/", format!("not JSON: {error}")));
                return Ok(());
            }
        }
        // Only chunks and entities are checked as they are read.
        self.record_problems.append(std::mem::take(&mut problems_by_array[1]));
        self.entity_problems = Some(std::mem::take(&mut problems_by_array[3]));
        self.flush_spools()
    }

    /// Writes out what the spools hold: a temporary file that cannot take it fails the run
    /// here, as an I/O error, rather than as a problem of the input.
    fn flush_spools(&mut self) -> Result<(), RunError> {
        for (spool, _) in &mut self.spools {
            spool.flush().map_err(|error| RunError::temporary("validation", error))?;
        }
        Ok(())
    }

    fn check_ndjson(&mut self, reader: impl BufRead) -> Result<(), RunError> {
        self.format = "aimem-ndjson";
        let mut counters = [0usize; 4];
        let mut lines = reader.split(b'\n');
        let mut line_number = 0usize;
        let mut batch: Vec<(usize, Vec<u8>)> = Vec::new();
        // The batch read before this one, parsed, not yet checked.
        let mut parsed: Vec<ReadLine> = Vec::new();
        loop {
            // Lines are read here in batches. A batch is parsed and put in canonical form on
            // every core while the batch before it is checked in order (the checksum, the id
            // sets and the problems follow the stream's order); memory holds two batches.
            batch.clear();
            let mut batch_bytes = 0usize;
            while batch_bytes < BATCH_BYTES && batch.len() < BATCH_LINES {
                let Some(line) = lines.next() else { break };
                line_number += 1;
                let line = match line {
                    Ok(line) => line,
                    Err(error) => {
                        // What was read before the error is checked first: its problems and
                        // errors come before this one, as the stream's order has them.
                        self.check_lines(std::mem::take(&mut parsed), &mut counters)?;
                        return Err(RunError::read(&self.display, error));
                    }
                };
                batch_bytes += line.len();
                batch.push((line_number, line));
            }
            let to_check = std::mem::take(&mut parsed);
            let (next, checked) = rayon::join(
                || batch.par_iter().map(|(line_number, line)| ReadLine::of(*line_number, line)).collect::<Vec<ReadLine>>(),
                || self.check_lines(to_check, &mut counters),
            );
            checked?;
            if next.is_empty() {
                return self.flush_spools();
            }
            parsed = next;
        }
    }

    /// Checks the lines of one batch, in order.
    fn check_lines(&mut self, lines: Vec<ReadLine>, counters: &mut [usize; 4]) -> Result<(), RunError> {
        for read in lines {
            match read {
                ReadLine::Blank => {}
                ReadLine::Problem(problem) => self.record_problems.push(problem),
                ReadLine::Object(mut object) => {
                    for key in ARRAY_KEYS {
                        if object.remove(key).is_some() {
                            self.envelope_problems.push(problem(
                                422,
                                "malformed_envelope",
                                "line 1",
                                format!("the envelope line must not carry `{key}`; records follow as lines"),
                            ));
                        }
                    }
                    self.envelope = *object;
                }
                ReadLine::Record(record) => self.record_read(*record, counters)?,
            }
        }
        Ok(())
    }

    /// Checks one record of an NDJSON stream, read by [`ReadLine::of`].
    fn record_read(&mut self, record: RecordRead, counters: &mut [usize; 4]) -> Result<(), RunError> {
        let RecordRead { line_number, position, value, canonical, computed } = record;
        let location = format!("line {line_number} (/{}/{})", ARRAY_KEYS[position], counters[position]);
        counters[position] += 1;
        self.spool_canonical(position, &canonical)?;
        self.check_record(position, value, &location, computed)
    }

    /// Spools one record's canonical bytes and checks what can be checked now.
    fn record(&mut self, position: usize, value: Value, location: String) -> Result<(), RunError> {
        let mut canonical = Vec::with_capacity(512);
        write_canonical(&mut canonical, &value);
        self.spool_canonical(position, &canonical)?;
        self.check_record(position, value, &location, Computed::default())
    }

    /// Appends a record's canonical bytes to its array's spool (the checksum's input).
    fn spool_canonical(&mut self, position: usize, canonical: &[u8]) -> Result<(), RunError> {
        self.records += 1;
        let (spool, count) = &mut self.spools[position];
        let written = if *count > 0 { spool.write_all(b",") } else { Ok(()) };
        written.and_then(|()| spool.write_all(canonical)).map_err(|error| RunError::temporary("validation", error))?;
        *count += 1;
        Ok(())
    }

    /// Checks a chunk or an entity now; spools an edge or a link to check at the end, as a
    /// `[location, record]` line. `computed` holds what a worker computed of it already (an
    /// edge's or link's JSON, made here when no worker made it: the bundle's records).
    fn check_record(&mut self, position: usize, value: Value, location: &str, computed: Computed) -> Result<(), RunError> {
        match position {
            1 => self.check_chunk(&value, location, &computed),
            3 => self.check_entity(&value, location),
            _ => {
                let deferred = match (&mut self.deferred_links, position) {
                    (Some(links), 0) => links,
                    _ => &mut self.deferred,
                };
                let json = match computed.json {
                    Some(json) => Ok(json),
                    None => serde_json::to_vec(&value).map_err(std::io::Error::from),
                };
                json.and_then(|json| {
                    deferred.write_all(b"[")?;
                    serde_json::to_writer(&mut *deferred, location)?;
                    deferred.write_all(b",")?;
                    deferred.write_all(&json)?;
                    deferred.write_all(b"]\n")
                })
                .map_err(|error| RunError::temporary("validation", error))?;
            }
        }
        Ok(())
    }

    /// Whether `id` is among the ids of `set`.
    fn knows(set: &mut KeySet, id: &str, failed: &mut Option<String>) -> bool {
        match set.contains(key_of(&sha256(id.as_bytes()))) {
            Ok(found) => found,
            Err(error) => {
                failed.get_or_insert_with(|| error.to_string());
                false
            }
        }
    }

    /// Checks the spooled edges and links, now that every chunk and entity is known.
    /// A bundle's entity problems come between its edges' and its links' (a stream's edges and
    /// links are checked in the stream's order, its entities as they come).
    fn check_deferred(&mut self) -> std::io::Result<()> {
        let edges = std::mem::replace(&mut self.deferred, BufWriter::new(tempfile::tempfile()?));
        let checked = self.check_spooled(edges);
        if let Some(problems) = self.entity_problems.take() {
            self.record_problems.append(problems);
        }
        checked?;
        match self.deferred_links.take() {
            Some(links) => self.check_spooled(links),
            None => Ok(()),
        }
    }

    /// Checks the `[location, record]` lines of one spool of edges and links.
    fn check_spooled(&mut self, spool: BufWriter<File>) -> std::io::Result<()> {
        let mut spool = spool.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        spool.seek(SeekFrom::Start(0))?;
        for line in BufReader::new(spool).lines() {
            let line = line?;
            let Ok(Value::Array(pair)) = serde_json::from_str::<Value>(&line) else { continue };
            let (Some(location), Some(record)) = (pair.first().and_then(Value::as_str), pair.get(1)) else { continue };
            if location.contains("/edges/") {
                self.check_edge(record, location);
            } else {
                self.check_link(record, location);
            }
        }
        Ok(())
    }

    fn check_chunk(&mut self, chunk: &Value, location: &str, computed: &Computed) {
        let problems = &mut self.record_problems;
        let Some(chunk) = chunk.as_object() else {
            problems.push(problem(422, "malformed_chunk", location, "a chunk is an object".into()));
            return;
        };
        match chunk.get("id").and_then(Value::as_str) {
            Some(id) => {
                if let Err(reason) = check_urn(id) {
                    problems.push(problem(422, "invalid_urn", &format!("{location}/id"), reason));
                } else if let Some(producer) = self.envelope.get("producer").and_then(Value::as_str)
                    && !id
                        .strip_prefix("urn:aimem:")
                        .is_some_and(|rest| rest.starts_with(producer) && rest[producer.len()..].starts_with(':'))
                {
                    problems.push(problem(
                        422,
                        "urn_producer_mismatch",
                        &format!("{location}/id"),
                        format!("`{id}` is not in the envelope's producer namespace `{producer}`"),
                    ));
                }
                let inserted = self.chunk_ids.insert(key_of(&sha256(id.as_bytes())));
                if let Err(error) = &inserted {
                    self.spool_failed.get_or_insert_with(|| error.to_string());
                }
                if inserted.is_ok_and(|fresh| !fresh) {
                    problems.push(problem(422, "duplicate_chunk_id", &format!("{location}/id"), format!("chunk id `{id}` appears twice")));
                }
            }
            None => problems.push(problem(422, "missing_field", &format!("{location}/id"), "chunk has no string `id`".into())),
        }
        match chunk.get("content").and_then(Value::as_str) {
            Some("") => problems.push(problem(422, "empty_content", &format!("{location}/content"), "content must not be empty".into())),
            Some(content) => {
                let code_points = computed.content_code_points.unwrap_or_else(|| content.chars().count());
                if code_points > MAX_CONTENT_CODE_POINTS {
                    problems.push(problem(
                        422,
                        "content_too_long",
                        &format!("{location}/content"),
                        format!("{code_points} code points; the limit is {MAX_CONTENT_CODE_POINTS}"),
                    ));
                }
                match chunk.get("content_hash").and_then(Value::as_str) {
                    None => problems.push(problem(
                        422,
                        "missing_field",
                        &format!("{location}/content_hash"),
                        "chunk has no `content_hash` (required by the reference consumer)".into(),
                    )),
                    Some(hash) if !is_sha256_label(hash) => problems.push(problem(
                        422,
                        "invalid_hash_format",
                        &format!("{location}/content_hash"),
                        "content_hash must be `sha256:` + 64 lowercase hex digits".into(),
                    )),
                    Some(hash) => {
                        let expected = sha256_label(&computed.content_digest.unwrap_or_else(|| sha256(content.as_bytes())));
                        if hash != expected {
                            problems.push(problem(
                                422,
                                "hash_mismatch",
                                &format!("{location}/content_hash"),
                                format!("content hashes to {expected}"),
                            ));
                        }
                    }
                }
            }
            None => problems.push(problem(422, "missing_field", &format!("{location}/content"), "chunk has no string `content`".into())),
        }
        match chunk.get("memory_type").and_then(Value::as_str) {
            Some(kind) if MEMORY_TYPES.contains(&kind) => {}
            other => problems.push(problem(
                422,
                "invalid_memory_type",
                &format!("{location}/memory_type"),
                format!("{} is not one of {}", describe(other), MEMORY_TYPES.join(", ")),
            )),
        }
        if let Some(zone) = chunk.get("zone").filter(|zone| !zone.is_null())
            && !zone.as_str().is_some_and(|zone| ZONES.contains(&zone))
        {
            problems.push(problem(422, "invalid_zone", &format!("{location}/zone"), format!("zone must be one of {}", ZONES.join(", "))));
        }
        if let Some(pinned) = chunk.get("is_pinned")
            && !pinned.is_boolean()
        {
            problems.push(problem(422, "invalid_is_pinned", &format!("{location}/is_pinned"), "is_pinned must be true or false".into()));
        }
        check_time(problems, chunk.get("created_at"), &format!("{location}/created_at"), true);
        if let Some(tags) = chunk.get("tags") {
            let valid = tags
                .as_array()
                .is_some_and(|tags| tags.iter().all(|tag| tag.as_str().is_some_and(|tag| (1..=64).contains(&tag.chars().count()))));
            if !valid {
                problems.push(problem(422, "invalid_tags", &format!("{location}/tags"), "tags must be strings of 1-64 code points".into()));
            }
        }
        if let Some(embedding) = chunk.get("embedding").filter(|embedding| !embedding.is_null()) {
            self.any_embedding.get_or_insert_with(|| format!("{location}/embedding"));
            match embedding.as_str().and_then(base64_decoded_length) {
                Some(length) => self.embedding_lengths.push((format!("{location}/embedding"), length)),
                None => problems.push(problem(
                    422,
                    "invalid_embedding",
                    &format!("{location}/embedding"),
                    "embedding must be padded base64".into(),
                )),
            }
        }
    }

    fn check_entity(&mut self, entity: &Value, location: &str) {
        let problems = &mut self.record_problems;
        match entity.get("id").and_then(Value::as_str) {
            Some(id) => {
                if let Err(reason) = check_urn(id) {
                    problems.push(problem(422, "invalid_urn", &format!("{location}/id"), reason));
                }
                if let Err(error) = self.entity_ids.insert(key_of(&sha256(id.as_bytes()))) {
                    self.spool_failed.get_or_insert_with(|| error.to_string());
                }
            }
            None => problems.push(problem(422, "missing_field", &format!("{location}/id"), "entity has no string `id`".into())),
        }
        if entity.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
            problems.push(problem(
                422,
                "invalid_entity_name",
                &format!("{location}/name"),
                "entity name must be a non-empty string".into(),
            ));
        }
        let kind = entity.get("kind").and_then(Value::as_str);
        if !kind.is_some_and(|kind| ENTITY_KINDS.contains(&kind) || kind.starts_with("x-")) {
            problems.push(problem(
                422,
                "invalid_entity_kind",
                &format!("{location}/kind"),
                format!("{} is not one of {} or an x- extension", describe(kind), ENTITY_KINDS.join(", ")),
            ));
        }
        check_time(problems, entity.get("created_at"), &format!("{location}/created_at"), true);
    }

    fn check_edge(&mut self, edge: &Value, location: &str) {
        let problems = &mut self.record_problems;
        for (key, code) in [("source_id", "edge_source_unknown"), ("target_id", "edge_target_unknown")] {
            match edge.get(key).and_then(Value::as_str) {
                Some(id) if Self::knows(&mut self.chunk_ids, id, &mut self.spool_failed) => {}
                Some(id) => {
                    problems.push(problem(422, code, &format!("{location}/{key}"), format!("`{id}` is not a chunk of this bundle")))
                }
                None => problems.push(problem(422, "missing_field", &format!("{location}/{key}"), format!("edge has no string `{key}`"))),
            }
        }
        let edge_type = edge.get("edge_type").and_then(Value::as_str);
        if !edge_type.is_some_and(|kind| EDGE_TYPES.contains(&kind) || kind.starts_with("x-")) {
            problems.push(problem(
                422,
                "invalid_edge_type",
                &format!("{location}/edge_type"),
                format!("{} is not one of {} or an x- extension", describe(edge_type), EDGE_TYPES.join(", ")),
            ));
        }
        match edge.get("weight").and_then(Value::as_f64) {
            Some(weight) if (0.0..=1.0).contains(&weight) => {}
            Some(weight) => problems.push(problem(
                422,
                "edge_weight_out_of_range",
                &format!("{location}/weight"),
                format!("weight {weight} is outside [0, 1]"),
            )),
            None => problems.push(problem(422, "missing_field", &format!("{location}/weight"), "edge has no numeric `weight`".into())),
        }
        check_time(problems, edge.get("created_at"), &format!("{location}/created_at"), true);
    }

    fn check_link(&mut self, link: &Value, location: &str) {
        let problems = &mut self.record_problems;
        for (key, is_chunk, code) in [("chunk_id", true, "link_chunk_unknown"), ("entity_id", false, "link_entity_unknown")] {
            let known = if is_chunk { &mut self.chunk_ids } else { &mut self.entity_ids };
            match link.get(key).and_then(Value::as_str) {
                Some(id) if Self::knows(known, id, &mut self.spool_failed) => {}
                Some(id) => problems.push(problem(422, code, &format!("{location}/{key}"), format!("`{id}` is not in this bundle"))),
                None => problems.push(problem(422, "missing_field", &format!("{location}/{key}"), format!("link has no string `{key}`"))),
            }
        }
    }

    fn check_envelope(&mut self) {
        let envelope = &self.envelope;
        let problems = &mut self.envelope_problems;
        match envelope.get("format").and_then(Value::as_str) {
            Some("aimem-bundle") => {}
            Some("memoryai-bundle") => {
                self.notices.push("legacy format value `memoryai-bundle` accepted (producers should write `aimem-bundle`)".into())
            }
            other => {
                problems.push(problem(422, "bad_format", "/format", format!("format is {}, expected \"aimem-bundle\"", describe(other))))
            }
        }
        match envelope.get("version") {
            Some(Value::String(version)) if version == "1" => {}
            other => problems.push(problem(
                422,
                "unsupported_version",
                "/version",
                format!("version is {}, this consumer reads version \"1\"", other.map_or("absent".into(), Value::to_string)),
            )),
        }
        for key in ["producer", "tenant_id", "exported_at", "scope"] {
            if !envelope.get(key).is_some_and(Value::is_string) {
                problems.push(problem(422, "missing_field", &format!("/{key}"), format!("envelope has no string `{key}`")));
            }
        }
        if let Some(producer) = envelope.get("producer").and_then(Value::as_str)
            && !crate::spec::aimem::is_producer(producer)
        {
            problems.push(problem(422, "invalid_producer", "/producer", format!("`{producer}` does not match ^[a-z0-9-]{{1,63}}$")));
        }
        match envelope.get("scope").and_then(Value::as_str) {
            Some("FULL" | "DNA_ONLY") | None => {}
            Some("SINCE") => {
                if envelope.get("since").and_then(Value::as_str).is_none_or(|since| parse_rfc3339(since).is_none()) {
                    problems.push(problem(422, "since_missing", "/since", "scope SINCE needs an ISO-8601 `since`".into()));
                }
            }
            Some(other) => {
                problems.push(problem(422, "invalid_scope", "/scope", format!("scope `{other}` is not FULL, DNA_ONLY or SINCE")))
            }
        }
        if let Some(retracted) = envelope.get(RETRACTED_MEMBER) {
            check_retracted(problems, RETRACTED_MEMBER, retracted, envelope.get("producer").and_then(Value::as_str));
        }
        if let Some(withdrawn) = envelope.get(WITHDRAWN_MEMBER) {
            check_retracted(problems, WITHDRAWN_MEMBER, withdrawn, envelope.get("producer").and_then(Value::as_str));
        }
    }

    fn check_checksum(&mut self) -> Result<(), RunError> {
        let Some(declared) =
            self.envelope.get("checksum").and_then(Value::as_str).filter(|declared| is_sha256_label(declared)).map(str::to_owned)
        else {
            self.envelope_problems.push(problem(
                422,
                "missing_checksum",
                "/checksum",
                "envelope has no `checksum` of the form sha256:<64 hex>".into(),
            ));
            return Ok(());
        };
        let mut members: Vec<(String, Option<usize>)> =
            self.envelope.keys().filter(|key| *key != "checksum").map(|key| (key.clone(), None)).collect();
        for (position, key) in ARRAY_KEYS.iter().enumerate() {
            if self.present[position] {
                members.push(((*key).to_owned(), Some(position)));
            }
        }
        members.sort_by(|left, right| left.0.encode_utf16().cmp(right.0.encode_utf16()));
        let mut hasher = Sha256::new();
        let mut bytes = Vec::with_capacity(1024);
        bytes.push(b'{');
        for (index, (key, array)) in members.iter().enumerate() {
            if index > 0 {
                bytes.push(b',');
            }
            write_string(&mut bytes, key);
            bytes.push(b':');
            match array {
                Some(position) => {
                    bytes.push(b'[');
                    hasher.update(&bytes);
                    bytes.clear();
                    let (spool, _) = &mut self.spools[*position];
                    spool.flush().map_err(|error| RunError::temporary("validation", error))?;
                    let spool = spool.get_mut();
                    spool.seek(SeekFrom::Start(0)).map_err(|error| RunError::read("temporary file", error))?;
                    let mut buffer = vec![0u8; 1 << 16];
                    loop {
                        let read = spool.read(&mut buffer).map_err(|error| RunError::read("temporary file", error))?;
                        if read == 0 {
                            break;
                        }
                        hasher.update(&buffer[..read]);
                    }
                    bytes.push(b']');
                }
                None => {
                    if let Some(value) = self.envelope.get(key) {
                        write_canonical(&mut bytes, value);
                    }
                }
            }
        }
        bytes.push(b'}');
        hasher.update(&bytes);
        let digest: [u8; 32] = hasher.finalize().into();
        let actual = sha256_label(&digest);
        if actual != declared {
            self.envelope_problems.push(problem(
                409,
                "checksum_mismatch",
                "/checksum",
                format!("declared {declared}, content hashes to {actual}"),
            ));
        }
        Ok(())
    }

    fn finish(mut self, path: String) -> (Validation, Map<String, Value>) {
        self.check_envelope();
        if let Err(error) = self.check_checksum() {
            self.envelope_problems.push(problem(422, "unreadable", "/", error.to_string()));
        }
        if let Err(error) = self.check_deferred() {
            self.spool_failed.get_or_insert_with(|| error.to_string());
        }
        if let Some(error) = self.spool_failed.take() {
            self.envelope_problems.push(problem(422, "unreadable", "/", format!("a temporary file failed while checking ids: {error}")));
        }
        if let Some(location) = &self.any_embedding {
            let dimension = self.envelope.get("embedding_dim").and_then(Value::as_u64);
            let model = self.envelope.get("embedding_model").and_then(Value::as_str);
            match (dimension, model) {
                (Some(dimension), Some(_)) => {
                    for (location, length) in &self.embedding_lengths {
                        if dimension.checked_mul(4) != Some(*length as u64) {
                            self.record_problems.push(problem(
                                422,
                                "embedding_dimension_mismatch",
                                location,
                                format!("{length} bytes; embedding_dim {dimension} needs 4 bytes per dimension"),
                            ));
                        }
                    }
                }
                _ => self.record_problems.push(problem(
                    422,
                    "embedding_envelope_missing",
                    location,
                    "chunks carry embeddings but the envelope lacks embedding_dim or embedding_model".into(),
                )),
            }
        }
        let mut problems = self.envelope_problems;
        // Envelope-field problems come before the checksum in the reference's order.
        problems.sort_by_key(|problem| problem.code == "checksum_mismatch" || problem.code == "missing_checksum");
        problems.append(self.record_problems);
        (Validation { path, format: self.format, records: self.records, problems, notices: self.notices }, self.envelope)
    }
}

/// memport's `x-memport-retracted` and `x-memport-withdrawn-messages` envelope members (named
/// `member`): an array of objects with string `provider`, `conversation_id` and
/// `retracted_by`, an ISO-8601 `retracted_at`, and a `chunk_id_prefix` in the producer's URN
/// namespace or null (other members are allowed); a withdrawal also names its messages, as a
/// non-empty array of strings `message_ids` and their chunks' ids `chunk_ids`, in the
/// producer's namespace.
fn check_retracted(problems: &mut Problems, member: &str, value: &Value, producer: Option<&str>) {
    let pointer = format!("/{member}");
    let Some(entries) = value.as_array() else {
        problems.push(problem(422, "invalid_extension", &pointer, format!("`{member}` must be an array")));
        return;
    };
    for (index, entry) in entries.iter().enumerate() {
        let at = format!("{pointer}/{index}");
        let Some(entry) = entry.as_object() else {
            problems.push(problem(422, "invalid_extension", &at, "a retraction is an object".into()));
            continue;
        };
        for key in ["provider", "conversation_id", "retracted_by"] {
            if !entry.get(key).is_some_and(Value::is_string) {
                problems.push(problem(422, "invalid_extension", &format!("{at}/{key}"), format!("a retraction needs a string `{key}`")));
            }
        }
        check_time(problems, entry.get("retracted_at"), &format!("{at}/retracted_at"), true);
        if member == WITHDRAWN_MEMBER {
            for key in ["message_ids", "chunk_ids"] {
                let strings = entry.get(key).and_then(Value::as_array).filter(|list| !list.is_empty() && list.iter().all(Value::is_string));
                if strings.is_none() {
                    problems.push(problem(
                        422,
                        "invalid_extension",
                        &format!("{at}/{key}"),
                        format!("a withdrawal needs `{key}`, a non-empty array of strings"),
                    ));
                }
            }
            let foreign = entry
                .get("chunk_ids")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .find(|id| producer.is_some_and(|producer| !id.starts_with(&format!("urn:aimem:{producer}:"))));
            if let (Some(id), Some(producer)) = (foreign, producer) {
                problems.push(problem(
                    422,
                    "invalid_extension",
                    &format!("{at}/chunk_ids"),
                    format!("`{id}` is not in the envelope's producer namespace `{producer}`"),
                ));
            }
        }
        match entry.get("chunk_id_prefix") {
            None | Some(Value::Null) => {}
            Some(Value::String(prefix)) => {
                if let Some(producer) = producer
                    && !prefix.starts_with(&format!("urn:aimem:{producer}:"))
                {
                    problems.push(problem(
                        422,
                        "invalid_extension",
                        &format!("{at}/chunk_id_prefix"),
                        format!("`{prefix}` is not in the envelope's producer namespace `{producer}`"),
                    ));
                }
            }
            Some(_) => problems.push(problem(
                422,
                "invalid_extension",
                &format!("{at}/chunk_id_prefix"),
                "chunk_id_prefix must be a string or null".into(),
            )),
        }
    }
}

/// Most bytes of NDJSON lines read in one batch.
const BATCH_BYTES: usize = 1 << 20;
/// Most lines read in one batch.
const BATCH_LINES: usize = 2048;

/// One NDJSON line, parsed on a worker.
enum ReadLine {
    /// An empty line.
    Blank,
    /// A line that is no record: not UTF-8, not JSON, not an object, or of no known kind.
    Problem(Problem),
    /// The first line, an object: the envelope.
    Object(Box<Map<String, Value>>),
    /// A record of a known kind.
    Record(Box<RecordRead>),
}

/// A record of an NDJSON stream with what the workers computed of it.
struct RecordRead {
    line_number: usize,
    /// Its array's place in [`ARRAY_KEYS`].
    position: usize,
    /// The record without `_kind`.
    value: Value,
    /// Its canonical form (RFC 8785), for the checksum.
    canonical: Vec<u8>,
    /// What the checks of the record need that was computed on the worker.
    computed: Computed,
}

/// What a worker computes of a record for the checks made in order: a chunk's content's
/// SHA-256 and length, an edge's or link's line for the deferred checks.
#[derive(Default)]
struct Computed {
    content_digest: Option<[u8; 32]>,
    content_code_points: Option<usize>,
    /// The record as compact JSON.
    json: Option<Vec<u8>>,
}

impl ReadLine {
    /// Reads line `line_number`.
    fn of(line_number: usize, line: &[u8]) -> ReadLine {
        let Ok(line) = std::str::from_utf8(line) else {
            return ReadLine::Problem(problem(422, "malformed_json", &format!("line {line_number}"), "not UTF-8".into()));
        };
        if line.trim().is_empty() {
            return ReadLine::Blank;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(error) => {
                return ReadLine::Problem(problem(422, "malformed_json", &format!("line {line_number}"), format!("not JSON: {error}")));
            }
        };
        let Value::Object(object) = value else {
            return ReadLine::Problem(problem(
                422,
                "malformed_json",
                &format!("line {line_number}"),
                "each line must be a JSON object".into(),
            ));
        };
        if line_number == 1 {
            return ReadLine::Object(Box::new(object));
        }
        ReadLine::record(line_number, object)
    }

    /// Reads a record line's object: its kind, its canonical form and a chunk's content hash.
    fn record(line_number: usize, mut object: Map<String, Value>) -> ReadLine {
        let position = match object.remove("_kind").as_ref().and_then(Value::as_str) {
            Some("chunk_entity") => 0,
            Some("chunk") => 1,
            Some("edge") => 2,
            Some("entity") => 3,
            _ => {
                return ReadLine::Problem(problem(
                    422,
                    "unknown_kind",
                    &format!("line {line_number}"),
                    "`_kind` must be chunk, edge, entity or chunk_entity".into(),
                ));
            }
        };
        let value = Value::Object(object);
        let mut canonical = Vec::with_capacity(512);
        write_canonical(&mut canonical, &value);
        let mut computed = Computed::default();
        match (position, value.get("content").and_then(Value::as_str)) {
            (1, Some(content)) => {
                computed.content_digest = Some(sha256(content.as_bytes()));
                computed.content_code_points = Some(content.chars().count());
            }
            (1 | 3, _) => {}
            // Serializing a `Value` to a `Vec` cannot fail.
            _ => computed.json = serde_json::to_vec(&value).ok(),
        }
        ReadLine::Record(Box::new(RecordRead { line_number, position, value, canonical, computed }))
    }
}

fn problem(status: u16, code: &'static str, location: &str, message: String) -> Problem {
    Problem { status, code, location: location.to_owned(), message }
}

fn describe(value: Option<&str>) -> String {
    value.map_or("absent".to_owned(), |value| format!("`{value}`"))
}

fn is_sha256_label(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte)))
}

fn check_time(problems: &mut Problems, value: Option<&Value>, location: &str, required: bool) {
    match value.and_then(Value::as_str) {
        Some(text) if parse_rfc3339(text).is_some() => {}
        Some(text) => problems.push(problem(422, "invalid_timestamp", location, format!("`{text}` is not an ISO-8601 date-time"))),
        None if required => problems.push(problem(422, "missing_field", location, "timestamp is missing".into())),
        None => {}
    }
}

/// `urn:aimem:<producer>:<local>` with the spec's rules for both parts.
fn check_urn(id: &str) -> Result<(), String> {
    let Some(rest) = id.strip_prefix("urn:aimem:") else {
        return Err(format!("`{id}` does not start with urn:aimem:"));
    };
    let Some((producer, local)) = rest.split_once(':') else {
        return Err(format!("`{id}` has no `<producer>:<local>` part"));
    };
    if !crate::spec::aimem::is_producer(producer) {
        return Err(format!("producer `{producer}` in `{id}` does not match ^[a-z0-9-]{{1,63}}$"));
    }
    if local.is_empty() || local.len() > 256 || !local.bytes().all(|byte| (0x21..=0x7e).contains(&byte) && byte != b':') {
        return Err(format!("local part of `{id}` must be 1-256 printable ASCII characters without `:`"));
    }
    Ok(())
}

/// Decoded length of padded base64, or `None` when it is not valid base64.
fn base64_decoded_length(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let padding = bytes.iter().rev().take_while(|&&byte| byte == b'=').count();
    if padding > 2 {
        return None;
    }
    let body = &bytes[..bytes.len() - padding];
    if !body.iter().all(|&byte| byte.is_ascii_alphanumeric() || byte == b'+' || byte == b'/') {
        return None;
    }
    Some(bytes.len() / 4 * 3 - padding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urns() {
        assert!(check_urn("urn:aimem:memport:chatgpt.a.b").is_ok());
        assert!(check_urn("not-a-urn").is_err());
        assert!(check_urn("urn:aimem:BAD:x").is_err());
        assert!(check_urn("urn:aimem:p:a:b").is_err());
    }

    /// `bundle` with its checksum, written to a file, validated.
    fn validated(mut bundle: Value) -> Validation {
        let checksum = sha256_label(&sha256(&crate::jcs::to_canonical_vec(&bundle)));
        bundle["checksum"] = Value::String(checksum);
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&serde_json::to_vec(&bundle).unwrap()).unwrap();
        validate_file(file.path()).unwrap()
    }

    fn graph(kind: &str, linked_entity: &str) -> Value {
        let content = "Lives in Leeds";
        serde_json::json!({
            "chunk_entities": [{"chunk_id": "urn:aimem:p:mem-1", "entity_id": linked_entity}],
            "chunks": [
                {"content": content, "content_hash": sha256_label(&sha256(content.as_bytes())), "created_at": "2024-01-01T00:00:00Z",
                 "id": "urn:aimem:p:mem-1", "memory_type": "identity", "zone": "important"},
                {"content": "I live in Leeds.", "content_hash": sha256_label(&sha256(b"I live in Leeds.")), "created_at": "2024-01-01T00:00:00Z",
                 "id": "urn:aimem:p:chatgpt.c.m", "memory_type": "episodic"},
            ],
            "edges": [{"created_at": "2024-01-01T00:00:00Z", "edge_type": "x-derived-from", "source_id": "urn:aimem:p:mem-1",
                       "target_id": "urn:aimem:p:chatgpt.c.m", "weight": 1}],
            "entities": [{"created_at": "2024-01-01T00:00:00Z", "id": "urn:aimem:p:entity.ent-1", "kind": kind, "name": "Leeds"}],
            "exported_at": "2024-01-01T00:00:00Z", "format": "aimem-bundle", "producer": "p", "scope": "FULL", "tenant_id": "t", "version": "1",
        })
    }

    #[test]
    fn a_bundles_problems_come_in_the_documented_order_whatever_the_order_of_its_members() {
        let mut bundle = graph("animal", "urn:aimem:p:entity.ent-2");
        bundle["chunks"][0]["content_hash"] = sha256_label(&sha256(b"something else")).into();
        bundle["edges"][0]["target_id"] = "urn:aimem:p:nowhere".into();
        let checksum = sha256_label(&sha256(&crate::jcs::to_canonical_vec(&bundle)));
        // Links first and chunks last, after the envelope's members (the producer among them,
        // which the chunks' checks need), and an earlier `chunks` that a parsed object (the
        // last of a repeated key wins) leaves out.
        let member = |key: &str| format!("\"{key}\":{}", bundle[key]);
        let text = format!(
            "{{{},\"chunks\":[{{\"not\":\"read\"}}],{},{},\"checksum\":\"{checksum}\",{},{},{},{},{},{},{}}}",
            member("chunk_entities"),
            member("entities"),
            member("edges"),
            member("producer"),
            member("exported_at"),
            member("format"),
            member("scope"),
            member("tenant_id"),
            member("version"),
            member("chunks"),
        );
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        let validation = validate_file(file.path()).unwrap();
        assert_eq!(validation.records, 5);
        let found: Vec<(&str, &str)> =
            (&validation.problems).into_iter().map(|problem| (problem.code, problem.location.as_str())).collect();
        assert_eq!(
            found,
            [
                ("hash_mismatch", "/chunks/0/content_hash"),
                ("edge_target_unknown", "/edges/0/target_id"),
                ("invalid_entity_kind", "/entities/0/kind"),
                ("link_entity_unknown", "/chunk_entities/0/entity_id")
            ]
        );
    }

    #[test]
    fn entities_links_and_extension_edges_are_checked() {
        let valid = validated(graph("place", "urn:aimem:p:entity.ent-1"));
        assert!(valid.problems.is_empty(), "{:?}", valid.problems);
        assert!(validated(graph("x-animal", "urn:aimem:p:entity.ent-1")).problems.is_empty());
        let codes: Vec<&str> = validated(graph("animal", "urn:aimem:p:entity.ent-2")).problems.iter().map(|problem| problem.code).collect();
        assert_eq!(codes, ["invalid_entity_kind", "link_entity_unknown"]);
    }

    #[test]
    fn memports_retraction_extension_is_hashed_and_checked() {
        let mut bundle = graph("place", "urn:aimem:p:entity.ent-1");
        bundle[RETRACTED_MEMBER] = serde_json::json!([{
            "chunk_id_prefix": "urn:aimem:p:chatgpt.c.",
            "conversation_id": "c",
            "provider": "chatgpt",
            "retracted_at": "2024-01-02T00:00:00Z",
            "retracted_by": "run-2",
        }]);
        let valid = validated(bundle.clone());
        assert!(valid.problems.is_empty(), "{:?}", valid.problems);
        bundle[RETRACTED_MEMBER][0]["retracted_at"] = Value::from("yesterday");
        bundle[RETRACTED_MEMBER][0]["chunk_id_prefix"] = Value::from("urn:aimem:other:chatgpt.c.");
        let codes: Vec<&str> = validated(bundle.clone()).problems.iter().map(|problem| problem.code).collect();
        assert_eq!(codes, ["invalid_timestamp", "invalid_extension"]);
        bundle[RETRACTED_MEMBER] = Value::from("c");
        let codes: Vec<&str> = validated(bundle).problems.iter().map(|problem| problem.code).collect();
        assert_eq!(codes, ["invalid_extension"]);
    }

    #[test]
    fn memports_withdrawal_extension_needs_its_messages_and_their_chunks_in_the_namespace() {
        let mut bundle = graph("place", "urn:aimem:p:entity.ent-1");
        bundle[WITHDRAWN_MEMBER] = serde_json::json!([{
            "chunk_id_prefix": "urn:aimem:p:chatgpt.c.",
            "chunk_ids": ["urn:aimem:p:chatgpt.c.m1"],
            "conversation_id": "c",
            "message_ids": ["m1"],
            "provider": "chatgpt",
            "retracted_at": "2024-01-02T00:00:00Z",
            "retracted_by": "run-2",
        }]);
        let valid = validated(bundle.clone());
        assert!(valid.problems.is_empty(), "{:?}", valid.problems);
        bundle[WITHDRAWN_MEMBER][0]["chunk_ids"] = serde_json::json!(["urn:aimem:other:chatgpt.c.m1"]);
        bundle[WITHDRAWN_MEMBER][0]["message_ids"] = serde_json::json!([]);
        let problems = validated(bundle).problems;
        let pointers: Vec<&str> = problems.iter().map(|problem| problem.location.as_str()).collect();
        assert_eq!(pointers, ["/x-memport-withdrawn-messages/0/message_ids", "/x-memport-withdrawn-messages/0/chunk_ids"], "{problems:?}");
    }

    #[test]
    fn base64_lengths() {
        assert_eq!(base64_decoded_length("AAAAAA=="), Some(4));
        assert_eq!(base64_decoded_length("AAAA"), Some(3));
        assert_eq!(base64_decoded_length("AA*A"), None);
    }

    /// An NDJSON stream of several batches: every problem is found, in the order of the lines,
    /// as when the stream was checked line by line on one thread.
    #[test]
    fn a_stream_of_several_batches_is_checked_in_line_order() {
        let chunk = |number: usize, content: &str, hash: &str| {
            serde_json::json!({"_kind": "chunk", "content": content, "content_hash": hash, "created_at": "2024-01-01T00:00:00Z",
                               "id": format!("urn:aimem:p:c-{number}"), "memory_type": "fact"})
            .to_string()
        };
        let mut lines = vec![
            serde_json::json!({"exported_at": "2024-01-01T00:00:00Z", "format": "aimem-ndjson", "producer": "p",
                                                "scope": "FULL", "tenant_id": "t", "version": "1"})
            .to_string(),
        ];
        let chunks = 2 * BATCH_LINES + 100;
        let (duplicate, wrong_hash) = (BATCH_LINES + 100, 2 * BATCH_LINES + 50);
        for number in 2..=chunks {
            let content = format!("fact {number}");
            let hash = sha256_label(&sha256(content.as_bytes()));
            lines.push(match number {
                5 => "{not json".to_owned(),
                // The id of line 3 again, in the second batch.
                _ if number == duplicate => chunk(3, &content, &hash),
                // A wrong hash in the third batch.
                _ if number == wrong_hash => chunk(number, &content, &sha256_label(&sha256(b"something else"))),
                _ => chunk(number, &content, &hash),
            });
        }
        lines.push(
            serde_json::json!({"_kind": "edge", "created_at": "2024-01-01T00:00:00Z", "edge_type": "temporal",
                               "source_id": "urn:aimem:p:c-2", "target_id": "urn:aimem:p:nowhere", "weight": 1})
            .to_string(),
        );
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(lines.join("\n").as_bytes()).unwrap();
        let validation = validate_file(file.path()).unwrap();
        assert_eq!(validation.records, chunks as u64 - 1);
        let found: Vec<(&str, &str)> = (&validation.problems)
            .into_iter()
            .filter(|problem| problem.location.starts_with("line"))
            .map(|problem| (problem.code, problem.location.split(' ').nth(1).unwrap_or_default()))
            .collect();
        let codes: Vec<&str> = found.iter().map(|(code, _)| *code).collect();
        assert_eq!(codes, ["malformed_json", "duplicate_chunk_id", "hash_mismatch", "edge_target_unknown"], "{found:?}");
        let line_numbers: Vec<String> = found.iter().map(|(_, line)| (*line).to_owned()).collect();
        assert_eq!(&line_numbers[..3], ["5".to_owned(), duplicate.to_string(), wrong_hash.to_string()]);
    }
}
