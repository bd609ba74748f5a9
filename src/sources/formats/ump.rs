//! UMP 0.1 records as input (memory-formats.md §4), in all three bindings: a JSON array (or one
//! record), NDJSON, and a folder of `.ump.md` files.
//!
//! Episodic records that name a conversation and a message in `body.structured` (memport's
//! own turns) become messages, grouped by conversation, with `depends_on` relations as parent
//! links. Every other record becomes a memory record: memport's own keep their kind, id and
//! labels; other producers' keep their kind as a `ump-kind:<kind>` label, which a UMP output
//! writes again. As an L0 consumer that exports, memport honours consent: a record with
//! `consent.exportable: false` is counted and not written, and each `consent.redact` path is
//! deleted before the record is read. A record with `lifecycle.status: tombstoned` was
//! forgotten: a turn is counted as retracted and left out, a memory counted and written again
//! marked so. memport's own tombstone of a conversation a sync retracted is a retraction, which
//! goes to every output in its own terms (one it cannot read is counted as
//! `retraction_unreadable`). A signed record whose `integrity` block does not verify
//! is rejected.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::error::RunError;
use crate::model::extracted::{EntityKind, EntityRef, Evidence, Extracted, MemoryType, language_named};
use crate::model::slots::slot_named;
use crate::model::{Conversation, MemoryKind, MemoryRecord, Origin, Provider, RetractedConversation, Role, Warnings};
use crate::signing::{UmpIntegrity, verify_ump_integrity};
use crate::sources::container::{Container, Entry};
use crate::sources::contract::{DecodeOptions, Decoded, Decoder, InputPlan, RecordReject, Stream};
use crate::sources::formats::grouped::{ArrayRecords, GroupingReader, LineRecords, RecordSource, SourceProblem, record_error, string_at};
use crate::sources::formats::ump_record::{Group, GroupFields, Record};
use crate::sources::formats::{MessageFields, ParentLinks, RecordLayout, decoded, parse_group, push_turn, redact, role_named};
use crate::sources::json_array::ArrayFramer;
use crate::spec::ump::foreign_id;
use crate::timefmt::parse_rfc3339;

/// Whether the UMP file at `path` is NDJSON (several JSON values, one per line) rather than
/// one array or record.
///
/// # Errors
/// I/O errors reading its start.
pub fn is_ndjson(path: &Path) -> Result<bool, RunError> {
    let display = path.display().to_string();
    let file = crate::remote::open_path(path).map_err(|error| RunError::read(&display, error))?;
    let mut reader = BufReader::new(file);
    // The first line whole (a record per line is at most this large), then whether anything
    // but white space follows it.
    let mut first_line = Vec::new();
    // The first line that is not blank.
    loop {
        first_line.clear();
        let read = (&mut reader).take(64 << 20).read_until(b'\n', &mut first_line).map_err(|error| RunError::read(&display, error))?;
        if read == 0 || !first_line.iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    let line = first_line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&first_line);
    if line.iter().find(|byte| !byte.is_ascii_whitespace()) != Some(&b'{') || serde_json::from_slice::<Value>(line).is_err() {
        // An array, or one record printed over several lines.
        return Ok(false);
    }
    let mut rest = [0u8; 4096];
    loop {
        let read = reader.read(&mut rest).map_err(|error| RunError::read(&display, error))?;
        if read == 0 {
            return Ok(false);
        }
        if rest[..read].iter().any(|byte| !byte.is_ascii_whitespace()) {
            return Ok(true);
        }
    }
}

/// A single record file (`{…}`) framed as an array of one.
struct SingleRecord<R: Read + Send> {
    framer: ArrayFramer<R>,
    display: String,
}

impl<R: Read + Send> RecordSource for SingleRecord<R> {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
        self.framer
            .next_element_into(out)
            .map(|found| found.map(|(offset, _)| offset))
            .map_err(|error| SourceProblem { offset: error.offset(), message: format!("{}: {error}", self.display) })
    }
}

/// The grouped records of a UMP JSON file (an array, or one record).
///
/// # Errors
/// I/O errors opening it.
pub fn json_records(entry: &Entry) -> Result<GroupingReader, RunError> {
    let mut head = [0u8; 4096];
    let read = entry.open()?.read(&mut head).map_err(|error| RunError::read(entry.display.to_string(), error))?;
    let is_array =
        head[..read].iter().find(|byte| !byte.is_ascii_whitespace() && **byte != 0xEF && **byte != 0xBB && **byte != 0xBF) == Some(&b'[');
    let source: Box<dyn RecordSource> = if is_array {
        Box::new(ArrayRecords::new(ArrayFramer::new(entry.open()?), &entry.display))
    } else {
        Box::new(SingleRecord { framer: ArrayFramer::whole_document(entry.open()?), display: entry.display.to_string() })
    };
    Ok(GroupingReader::new(source, group_key))
}

/// The grouped records of a UMP NDJSON file, from `reader`, its bytes (opened once: a
/// [supplied input](crate::sources::supplied) can be read only once). A supplied input's lines
/// are a store's records, which memport wrote as JSON: they are not parsed to check it.
pub fn ndjson_records(entry: &Entry, reader: Box<dyn Read + Send>) -> GroupingReader {
    let lines = LineRecords::new(BufReader::with_capacity(1 << 16, reader), &entry.display, |_| true);
    GroupingReader::new(Box::new(lines), group_key)
}

/// `.ump.md` files, one record each, in name order.
struct MarkdownFiles {
    files: Arc<Vec<Entry>>,
    next: usize,
}

impl RecordSource for MarkdownFiles {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
        let Some(entry) = self.files.get(self.next) else { return Ok(None) };
        self.next += 1;
        // Each file is one small record; the reference skips files over 512,000 bytes, memport
        // reads them (up to 64 MiB) rather than lose them. A file that cannot be read or
        // parsed is rejected on its own, and the folder goes on.
        let record = entry.read_small(64 << 20).map_err(|error| error.to_string()).and_then(|bytes| markdown_record(&bytes));
        match record {
            Ok(record) => out.extend_from_slice(record.to_string().as_bytes()),
            Err(reason) => record_error(out, &format!("{}: {reason}", entry.display)),
        }
        Ok(Some(0))
    }
}

/// The record of a `.ump.md` file: the JSON front matter with the text put back in `body.text`.
/// The writer's layout is `---\n<JSON>\n---\n\n<text>\n`; exactly that blank line and that
/// last newline are taken off, so the text comes back as it was written (the reference reader
/// also trims the text's leading blank lines and trailing white space, which loses them).
fn markdown_record(bytes: &[u8]) -> Result<Value, String> {
    // Said before "not UTF-8": a record saved by a Windows editor as "Unicode" is UTF-16, and
    // the advice converts it.
    if let Some(advice) = crate::validate::input_file::utf16_problem(bytes) {
        return Err(advice.to_owned());
    }
    let text = std::str::from_utf8(bytes).map_err(|error| format!("not UTF-8 text (byte {} is not UTF-8)", error.valid_up_to()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front, body) =
        text.strip_prefix("---\n").and_then(|rest| rest.split_once("\n---\n")).ok_or("no JSON front matter between `---` lines")?;
    let mut record: Value = serde_json::from_str(front).map_err(|error| format!("the front matter is not JSON: {error}"))?;
    let object = record.as_object_mut().ok_or("the front matter is not a JSON object")?;
    let body_object = object.entry("body").or_insert_with(|| Value::Object(Default::default()));
    if let Some(body_object) = body_object.as_object_mut() {
        let text = body.strip_prefix('\n').unwrap_or(body);
        body_object.insert("text".into(), Value::from(text.strip_suffix('\n').unwrap_or(text)));
    }
    Ok(record)
}

/// The grouped records of a folder of `.ump.md` files.
pub fn markdown_records(files: Arc<Vec<Entry>>) -> GroupingReader {
    GroupingReader::new(Box::new(MarkdownFiles { files, next: 0 }), group_key)
}

/// Plans a folder of `.ump.md` records.
///
/// # Errors
/// I/O errors listing it.
pub fn plan_markdown_folder(path: &Path) -> Result<InputPlan, RunError> {
    let files: Vec<Entry> = Container::Folder(path.to_owned())
        .entries()?
        .into_iter()
        .filter(|entry| !entry.name.contains('/') && entry.name.ends_with(".ump.md"))
        .collect();
    // The folder's entries are its regular files only, so a named pipe or a device among the
    // records is never opened (it would block the run or never end); it is said, not skipped
    // without a word.
    let mut warnings = Warnings::default();
    let mut notes = Vec::new();
    for (name, kind) in special_record_files(path) {
        warnings.add("ump_md_not_a_regular_file");
        notes.push(format!("{}: is {kind}, not a regular file; it was not read", path.join(name).display()));
    }
    let bytes_on_disk = files.iter().map(|entry| entry.size).sum();
    let count = files.len();
    let mut streams = Vec::new();
    if let Some(first) = files.first().cloned() {
        let decoder = Arc::new(UmpDecoder) as Arc<dyn Decoder>;
        streams.push(Stream::new(first, RecordLayout::UmpMarkdown(Arc::new(files)).framing(), decoder));
    }
    Ok(InputPlan {
        path: path.display().to_string(),
        provider: Provider::Other("memory-format"),
        format: Some("ump"),
        carried: crate::sources::contract::Carried::default(),
        layout: format!("UMP 0.1 records, a folder of {count} .ump.md files"),
        bytes_on_disk,
        streams,
        warnings,
        notes,
        asset_count: 0,
    })
}

/// The `.ump.md` names in `folder` that are neither regular files nor folders, with what each
/// is, in name order; looked at without opening them.
fn special_record_files(folder: &Path) -> Vec<(String, &'static str)> {
    let Ok(listing) = std::fs::read_dir(folder) else { return Vec::new() };
    let mut special: Vec<(String, &'static str)> = listing
        .flatten()
        .map(|item| item.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".ump.md"))
        .filter_map(|name| crate::validate::input_file::special_file_kind(&folder.join(&name)).map(|kind| (name, kind)))
        .collect();
    special.sort();
    special
}

/// Turns of one conversation share a key; other records stand alone.
pub fn group_key(record: &[u8]) -> Option<String> {
    let Some(fields) = GroupFields::parse(record) else { return group_key_by_paths(record) };
    if fields.kind() != Some("episodic") {
        return None;
    }
    let conversation = fields.conversation_id()?;
    fields.message_id()?;
    Some(format!("{}\0{conversation}", fields.agent().unwrap_or_default()))
}

/// [`group_key`] of a record whose members are not all of the types it reads (or repeated):
/// each member looked up on its own, as a string where it is one.
fn group_key_by_paths(record: &[u8]) -> Option<String> {
    if string_at(record, &["kind"]).as_deref() != Some("episodic") {
        return None;
    }
    let conversation = string_at(record, &["body", "structured", "conversation_id"])?;
    string_at(record, &["body", "structured", "message_id"])?;
    let agent = string_at(record, &["scope", "agent"]).unwrap_or_default();
    Some(format!("{agent}\0{conversation}"))
}

/// [`group_key`] of a record a memory store holds, told from the columns the store keeps
/// beside it (`kind` and `scope.agent`, each as a string) and its JSON as the store writes it
/// (`serde_json`'s, members in sorted order, none repeated): `body.structured` is its first
/// member, so its conversation and message are read without stepping over its text, which
/// [`group_key`] has to.
pub fn stored_group_key(kind: &str, agent: Option<&str>, record: &str) -> Option<String> {
    if kind != "episodic" {
        return None;
    }
    let agent = agent.unwrap_or_default();
    // Joined by hand: `format!` took a third of this function's time.
    let joined = |conversation: &str| {
        let mut key = String::with_capacity(agent.len() + 1 + conversation.len());
        key.push_str(agent);
        key.push('\0');
        key.push_str(conversation);
        key
    };
    if let Some(conversation) = stored_turn_conversation(record.as_bytes()) {
        return Some(joined(conversation));
    }
    let conversation = string_at(record.as_bytes(), &["body", "structured", "conversation_id"])?;
    string_at(record.as_bytes(), &["body", "structured", "message_id"])?;
    Some(joined(&conversation))
}

/// The conversation of a turn as the store writes every turn memport stores, read by hand:
/// `{"body":{"structured":{"conversation_id":"…"` (`,"conversation_title":"…"`) `,"message_id":"…"`,
/// the ids without escapes. `None` for any other record, which the general path reads: looking
/// the two ids up with `sonic_rs` took 4% of a store export's CPU, this a tenth of that.
fn stored_turn_conversation(record: &[u8]) -> Option<&str> {
    let rest = record.strip_prefix(br#"{"body":{"structured":{"conversation_id":""#)?;
    let (conversation, rest) = string_contents(rest)?;
    let rest = match rest.strip_prefix(br#","conversation_title":""#) {
        Some(title) => string_contents(title)?.1,
        None => rest,
    };
    let (message, _) = string_contents(rest.strip_prefix(br#","message_id":""#)?)?;
    if conversation.contains(&b'\\') || message.contains(&b'\\') {
        return None;
    }
    // Bytes of a `&str` cut at quotes, which are ASCII: always UTF-8.
    std::str::from_utf8(conversation).ok()
}

/// The contents of the JSON string whose opening quote precedes `text`, escapes as written, and
/// what follows its closing quote; `None` where it does not close.
fn string_contents(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut from = 0;
    loop {
        let at = from + memchr::memchr2(b'"', b'\\', text.get(from..)?)?;
        if text[at] == b'"' {
            return Some((&text[..at], &text[at + 1..]));
        }
        // An escape: the next byte is never the string's end.
        from = at + 2;
    }
}

/// Calls `visit` with the conversation and message ids each piece of evidence of the stored
/// memory `record` names (none where it is no memory memport extracted, or does not read).
pub fn each_evidence_named(record: &str, mut visit: impl FnMut(&str, &str)) {
    let whole: Value;
    let record = match sonic_rs::from_str::<Record>(record) {
        Ok(record) => record,
        // Read as the general reading reads it (see [`Group::parse`]).
        Err(_) => {
            let Ok(value) = serde_json::from_str::<Value>(record) else { return };
            whole = value;
            Record::from_value(&whole)
        }
    };
    for piece in record.structured().evidence.iter().flatten() {
        if let (Some(conversation), Some(message)) = (&piece.conversation_id, &piece.message_id) {
            visit(conversation, message);
        }
    }
}

/// Decodes groups of UMP records.
pub struct UmpDecoder;

impl Decoder for UmpDecoder {
    fn decode(&self, bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
        // Nearly every group: read straight into the members memport takes.
        if let Some(group) = Group::parse(bytes) {
            let origin = Origin { offset: group.offset, ..origin };
            return decode_records(group.records, origin, Warnings::default(), Vec::new(), options);
        }
        decode_whole(bytes, origin, options)
    }
}

/// Decodes a group read whole, as `serde_json::Value`s: what [`Group::parse`] leaves to it.
fn decode_whole(bytes: &[u8], origin: Origin, options: &DecodeOptions) -> Result<Decoded, RecordReject> {
    let (origin, mut records) = parse_group(bytes, &origin)?;
    let mut warnings = Warnings::default();
    // A record that does not verify is rejected on its own; the rest of its conversation
    // goes on.
    let mut unverified = Vec::new();
    records.retain(|record| match check_integrity(record) {
        Ok(()) => true,
        Err(reason) => {
            let structured = &record["body"]["structured"];
            let mut reject = RecordReject::new(&origin, structured["conversation_id"].as_str(), reason);
            if let Some(message) = structured["message_id"].as_str() {
                reject = reject.with_message(message);
            } else if let Some(id) = record["id"].as_str() {
                reject.reason = format!("record {id}: {}", reject.reason);
            }
            unverified.push(reject);
            false
        }
    });
    if records.is_empty() {
        return Err(unverified.into_iter().next().unwrap_or_else(|| RecordReject::new(&origin, None, "an empty group".into())));
    }
    for record in &mut records {
        if let Some(reason) = record["_record_error"].as_str() {
            return Err(RecordReject::new(&origin, None, reason.to_owned()));
        }
        let paths: Vec<String> =
            record["consent"]["redact"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
        if !paths.is_empty() {
            redact(record, &paths);
            warnings.add("ump_fields_redacted");
        }
    }
    let read = records.iter().map(Record::from_value).collect();
    decode_records(read, origin, warnings, unverified, options)
}

/// The element of a group's readable records: turns make the conversation, anything else
/// (another kind, or a turn whose ids a redaction removed) a memory, each record on its own
/// merits. `unverified` are the group's records rejected before.
fn decode_records(
    records: Vec<Record<'_>>,
    origin: Origin,
    warnings: Warnings,
    unverified: Vec<RecordReject>,
    options: &DecodeOptions,
) -> Result<Decoded, RecordReject> {
    // Nearly every group is turns alone: kept as it is rather than copied record by record.
    let (turns, others): (Vec<Record>, Vec<Record>) =
        if records.iter().all(is_turn) { (records, Vec::new()) } else { records.into_iter().partition(is_turn) };
    let mut element = if turns.is_empty() {
        let Some(first) = others.first() else { return Err(RecordReject::new(&origin, None, "an empty group".into())) };
        let holder =
            Conversation::memories_only(provider_of(first), first.id.as_deref().unwrap_or_default().to_owned(), origin, Vec::new());
        decoded(holder, Vec::new(), Warnings::default())
    } else {
        conversation_of(&turns, origin, options)
    };
    let conversation_id = (!element.conversation.memories_only).then(|| element.conversation.id.clone());
    for record in &others {
        // memport's tombstone of a conversation a sync retracted: a retraction, not a memory.
        if record.names_a_retraction() {
            match record.retraction() {
                Some(retraction) => RetractedConversation::merge(&mut element.retractions, [retraction]),
                None => element.warnings.add("retraction_unreadable"),
            }
            continue;
        }
        match memory_of(record) {
            Ok(memory) => element.conversation.memories.push(memory),
            Err(reason) => {
                let reason = format!("record {}: {reason}", record.id.as_deref().unwrap_or("without an id"));
                element.rejected_messages.push(RecordReject::new(&element.conversation.origin, conversation_id.as_deref(), reason));
            }
        }
    }
    let names_retractions = others.iter().any(Record::names_a_retraction);
    if element.conversation.memories_only && element.conversation.memories.is_empty() && !names_retractions {
        // A lone record that could not be read: the element is rejected with its reason.
        let reason = element.rejected_messages.pop().map(|reject| reject.reason);
        return Err(RecordReject::new(&element.conversation.origin, None, reason.unwrap_or_else(|| "an empty group".into())));
    }
    element.warnings.merge(&warnings);
    element.rejected_messages.extend(unverified);
    Ok(element)
}

/// Whether a record is a conversation turn (memport's episodic records name both ids).
fn is_turn(record: &Record) -> bool {
    let structured = record.structured();
    record.kind.as_deref() == Some("episodic") && structured.conversation_id.is_some() && structured.message_id.is_some()
}

/// A signed record must verify; an unsigned one is taken as it is.
fn check_integrity(record: &Value) -> Result<(), String> {
    if record.get("integrity").is_none() {
        return Ok(());
    }
    match verify_ump_integrity(record) {
        UmpIntegrity::Verified => Ok(()),
        UmpIntegrity::HashMismatch => Err("its integrity.content_hash does not match the record: it was changed after signing".into()),
        UmpIntegrity::UnknownSigner => Err("its signer is not an Ed25519 did:key, so its signature cannot be checked".into()),
        UmpIntegrity::BadSignature => Err("its integrity.signature does not verify".into()),
    }
}

fn provider_of(record: &Record) -> Provider {
    let named = record.structured().source_kind.as_deref().or_else(|| record.agent()).or_else(|| record.source_provider());
    named.map_or(Provider::Other("ump"), Provider::named)
}

fn memory_of(record: &Record) -> Result<MemoryRecord, String> {
    let text = record.text().ok_or("a record without `body.text`")?.to_owned();
    if text.trim().is_empty() {
        return Err("a record whose `body.text` is empty: a memory needs text".into());
    }
    let created_at = record.created().and_then(parse_rfc3339).ok_or("a record without a readable `time.created`")?;
    let structured = record.structured();
    let own_kind = structured.memory_kind.as_deref().and_then(MemoryKind::named);
    let mut memory = match (own_kind, structured.provider_memory_id.as_deref()) {
        (Some(kind), Some(id)) => {
            let mut memory = MemoryRecord::new(provider_of(record), kind, text, created_at, record.labels());
            memory.id = id.to_owned();
            memory
        }
        _ => {
            let kind_name = record.kind.as_deref().unwrap_or("semantic");
            let (kind, mut labels) = MemoryKind::from_foreign_type(kind_name, "ump-kind");
            labels.extend(record.labels());
            MemoryRecord::new(provider_of(record), kind, text, created_at, labels)
        }
    };
    memory.exportable = record.exportable();
    memory.retracted_in_input = record.tombstoned();
    if own_kind.is_some() {
        memory.extracted = extracted_of(record, provider_of(record), created_at).map(Box::new);
    }
    Ok(memory)
}

/// What extraction knew of a memory memport extracted (its `body.structured` names a type, slot
/// and language this build knows), read back: the evidence with its messages' ids, span and
/// quote, the entities, the supersession (memory ids again, from the record ids), so each output
/// writes it as it writes a memory extracted in the same run. `None` for any other memory.
fn extracted_of(record: &Record, own: Provider, created_at: crate::model::Micros) -> Option<Extracted> {
    let structured = record.structured();
    let memory_type = MemoryType::named(structured.memport_type.as_deref()?)?;
    let (slot, _) = slot_named(structured.slot.as_deref()?)?;
    let language = language_named(structured.language.as_deref()?)?;
    let seen = |time: &Option<std::borrow::Cow<'_, str>>| time.as_deref().and_then(parse_rfc3339).unwrap_or(created_at);
    let (first_seen, last_seen) = (seen(&structured.first_seen), seen(&structured.last_seen));
    let evidence: Vec<Evidence> = structured
        .evidence
        .iter()
        .flatten()
        .filter_map(|piece| {
            let span = match piece.span.as_deref() {
                Some(&[start, end]) if start <= end => (usize::try_from(start).ok()?, usize::try_from(end).ok()?),
                _ => return None,
            };
            // memport's providers, or the memory's own: a name is kept for good once seen, and
            // so needs a record of its own.
            let provider = piece.provider.as_deref()?;
            let provider = if provider == own.as_str() { own } else { Provider::own_named(provider)? };
            Some(Evidence {
                provider,
                conversation_id: piece.conversation_id.as_deref()?.to_owned(),
                message_id: piece.message_id.as_deref()?.to_owned(),
                span,
                text: piece.quote.as_deref()?.to_owned(),
                time: piece.said_at.as_deref().and_then(parse_rfc3339)?,
            })
        })
        .collect();
    let memory_ids = |ids: &Option<Vec<std::borrow::Cow<'_, str>>>| ids.iter().flatten().find_map(|id| foreign_id(id));
    let entities = structured
        .entities
        .iter()
        .flatten()
        .filter_map(|entity| {
            Some(EntityRef {
                id: entity.id.as_deref()?.to_owned(),
                name: entity.name.as_deref()?.to_owned(),
                kind: EntityKind::named(entity.kind.as_deref()?)?,
                first_seen,
                // Set in input order, where the entity is first named ([`crate::stages::unique_ids`]).
                first_mention: false,
            })
        })
        .collect();
    Some(Extracted {
        memory_type,
        slot,
        value: structured.value.as_deref().unwrap_or_default().to_owned(),
        language,
        confidence: structured.confidence.filter(|confidence| confidence.is_finite()).unwrap_or(0.5).clamp(0.0, 1.0) as f32,
        evidence_count: structured.evidence_count.unwrap_or(evidence.len() as u64),
        evidence,
        first_seen,
        last_seen,
        supersedes: memory_ids(&record.supersedes),
        superseded_by: memory_ids(&record.superseded_by),
        personal: structured.personal.unwrap_or(false),
        entities,
        retracted: record.tombstoned(),
    })
}

fn conversation_of(records: &[Record], origin: Origin, options: &DecodeOptions) -> Decoded {
    let first = &records[0];
    let structured = first.structured();
    let id = structured.conversation_id.as_deref().unwrap_or_default().to_owned();
    let mut holder = Conversation::empty(provider_of(first), id, origin);
    holder.title = structured.conversation_title.as_deref().map(str::to_owned);
    holder.assumed_time_zone = structured.assumed_time_zone.as_deref().map(str::to_owned);
    let mut links = ParentLinks::new();
    let mut warnings = Warnings::default();
    let mut rejected = Vec::new();
    // A folder of .ump.md files comes in file-name order; the turn index puts a conversation
    // back in order.
    let mut ordered: Vec<&Record> = records.iter().collect();
    ordered.sort_by_key(|record| record.structured().turn_index.unwrap_or(u64::MAX));
    for record in ordered {
        let structured = record.structured();
        let Some(message_id) = structured.message_id.as_deref().filter(|id| !id.is_empty()) else {
            rejected.push(RecordReject::new(&holder.origin, Some(&holder.id), "a turn without `body.structured.message_id`".into()));
            continue;
        };
        let Some(text) = record.text() else {
            rejected
                .push(RecordReject::new(&holder.origin, Some(&holder.id), "a turn without `body.text`".into()).with_message(message_id));
            continue;
        };
        let role = structured.role.as_deref().and_then(role_named).unwrap_or(Role::User);
        let mut fields = MessageFields::new(message_id.to_owned(), role, text.to_owned());
        fields.created_at = record.created().and_then(parse_rfc3339);
        fields.model = structured.model.as_deref().map(str::to_owned);
        fields.is_thought = structured.is_thought.unwrap_or(false);
        fields.on_active_branch = structured.on_active_branch.unwrap_or(true);
        fields.exportable = record.exportable();
        fields.retracted = record.tombstoned();
        fields.parent_id = links.parent_of(record.depends_on(), &mut warnings);
        if let Some(format_id) = record.id.as_deref() {
            links.add(format_id, message_id);
        }
        push_turn(&mut holder, fields, options);
    }
    decoded(holder, rejected, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_piece_of_a_stored_memorys_evidence_is_named() {
        let record = json!({
            "body": {"structured": {"evidence": [
                {"conversation_id": "c1", "message_id": "m1", "provider": "chatgpt", "quote": "I'm learning Linux.", "said_at": "2023-05-24T02:22:06Z", "span": [0, 19]},
                {"conversation_id": "c2", "message_id": "m\"2", "provider": "claude"},
                {"conversation_id": "c3"},
                "not a piece"
            ], "memport_type": "fact"}, "text": "Is learning Linux."},
            "id": "urn:ump:x", "kind": "semantic", "ump": "0.1"
        });
        let mut named = Vec::new();
        each_evidence_named(&record.to_string(), |conversation, message| named.push(format!("{conversation}/{message}")));
        assert_eq!(named, ["c1/m1", "c2/m\"2"]);
    }

    #[test]
    fn a_stored_records_key_from_its_columns_is_the_key_read_from_its_bytes() {
        let records = [
            json!({"kind": "episodic", "body": {"text": "hi", "structured": {"conversation_id": "c1", "message_id": "m1", "role": "user"}}, "scope": {"agent": "chatgpt"}}),
            json!({"kind": "episodic", "body": {"text": "a \"quoted\" text", "structured": {"conversation_id": "c\u{0}\n\"é", "message_id": "m"}}, "scope": {"owner": "o"}}),
            json!({"kind": "episodic", "body": {"text": "no message", "structured": {"conversation_id": "c1"}}, "scope": {"agent": "claude"}}),
            json!({"kind": "episodic", "body": {"text": "numbers", "structured": {"conversation_id": 7, "message_id": "m"}}, "scope": {"agent": "x"}}),
            json!({"kind": "episodic", "body": {"text": "odd agent", "structured": {"conversation_id": "c", "message_id": "m"}}, "scope": {"agent": 3}}),
            json!({"kind": "episodic", "body": {"text": "no structured"}, "scope": "nowhere"}),
            json!({"kind": "episodic", "body": {"text": "structured not an object", "structured": "c"}}),
            json!({"kind": "semantic", "body": {"text": "a memory", "structured": {"conversation_id": "c1", "message_id": "m1"}}, "scope": {"agent": "chatgpt"}}),
            json!({"kind": "episodic", "body": {"text": "t", "structured": {"conversation_id": "c1", "conversation_title": "a \"title\", \\\"message_id\":\"x", "message_id": "m1"}}}),
            json!({"kind": "episodic", "body": {"text": "t", "structured": {"conversation_id": "c\\1", "message_id": "m\"1"}}, "scope": {"agent": "a"}}),
            json!({"kind": "episodic", "body": {"text": "t", "structured": {"conversation_id": "c1", "message_id": 5}}, "scope": {"agent": "a"}}),
            json!({"kind": "episodic", "body": {"text": "t", "structured": {"conversation_id": "c1", "message_id": "m1", "role": "user", "turn_index": 3}}, "scope": {"agent": "a"}}),
            json!({"kind": "episodic", "body": {"text": "t", "structured": {"assumed_time_zone": "UTC", "conversation_id": "c1", "message_id": "m1"}}, "scope": {"agent": "a"}}),
            json!({"kind": "episodic", "body": {"text": "t", "structured": {"conversation_id": "c1", "conversation_title": "unclosed"}}}),
        ];
        for record in &records {
            // As the store writes a record, and the columns it keeps beside it.
            let json = serde_json::to_string(&record).unwrap();
            let (kind, agent) = (record["kind"].as_str().unwrap(), record["scope"]["agent"].as_str());
            assert_eq!(stored_group_key(kind, agent, &json), group_key(json.as_bytes()), "{json}");
        }
        let turn = serde_json::to_string(&records[0]).unwrap();
        assert_eq!(stored_turn_conversation(turn.as_bytes()), Some("c1"), "a stored turn is read by hand: {turn}");
        let titled = serde_json::to_string(&records[8]).unwrap();
        assert_eq!(stored_turn_conversation(titled.as_bytes()), Some("c1"), "past its title: {titled}");
    }

    #[test]
    fn a_markdown_record_gets_its_text_back_in_the_body() {
        let record = markdown_record(b"---\n{\"ump\":\"0.1\",\"body\":{\"structured\":{\"a\":1}}}\n---\n\n\nHello \n\n").unwrap();
        assert_eq!(record["body"]["text"], "\nHello \n");
        assert_eq!(record["body"]["structured"]["a"], 1);
        assert!(markdown_record(b"no front matter").is_err());
    }

    /// Guards the reason a UTF-16 `.ump.md` record is rejected with: "not UTF-8 text" did not
    /// say what it is or how to convert it.
    #[test]
    fn a_utf16_markdown_record_is_named_as_utf16() {
        let utf16: Vec<u8> = "\u{feff}---\n{\"ump\":\"0.1\"}\n---\n\nHello\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let reason = markdown_record(&utf16).err().unwrap_or_default();
        assert!(reason.starts_with("this file is UTF-16; memport reads UTF-8"), "{reason}");
        assert_eq!(markdown_record(b"---\n{\"a\":\"\xff\"}\n---\n").err().as_deref(), Some("not UTF-8 text (byte 10 is not UTF-8)"));
    }

    /// Guards a folder of records holding a named pipe: it must be left unopened (opening it
    /// blocks until something writes to it) and said, not read or skipped without a word.
    #[test]
    fn a_named_pipe_among_the_records_is_noted_and_never_opened() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("a.ump.md"), b"---\n{\"ump\":\"0.1\"}\n---\n\nHello\n").unwrap();
        let pipe = folder.path().join("zzzz.ump.md");
        if !std::process::Command::new("mkfifo").arg(&pipe).status().is_ok_and(|status| status.success()) {
            return;
        }
        assert_eq!(special_record_files(folder.path()), [("zzzz.ump.md".to_owned(), "a named pipe (FIFO)")]);
        let plan = plan_markdown_folder(folder.path()).unwrap();
        assert_eq!(plan.layout, "UMP 0.1 records, a folder of 1 .ump.md files");
        assert_eq!(plan.warnings.0.get("ump_md_not_a_regular_file"), Some(&1));
        assert!(plan.notes[0].ends_with("zzzz.ump.md: is a named pipe (FIFO), not a regular file; it was not read"), "{:?}", plan.notes);
    }

    /// Both readings of one group, as the decoder's results print.
    fn read_both_ways(group: &str) -> (String, String) {
        let origin = Origin { file: "records.ump.ndjson".into(), offset: 0, index: 0 };
        let options = DecodeOptions {
            branches: crate::sources::BranchPolicy::All,
            exported_at: 0,
            keep_provider_fields: false,
            dedup_keys: true,
            pam_digests: true,
        };
        let fast = UmpDecoder.decode(group.as_bytes(), origin.clone(), &options);
        let whole = decode_whole(group.as_bytes(), origin, &options);
        (format!("{fast:?}"), format!("{whole:?}"))
    }

    /// Guards the fast reading of UMP groups: whatever it reads, it reads as the whole reading
    /// does (turns, parents, memories, consent, rejects).
    #[test]
    fn a_group_read_directly_decodes_as_one_read_whole() {
        let turn = |id: &str, index: u64, role: &str, parent: &str| {
            format!(
                r#"{{"id":"urn:ump:{id}","kind":"episodic","body":{{"text":"said \"{id}\" é","structured":{{"source_kind":"chatgpt","conversation_id":"c1","conversation_title":"T","message_id":"{id}","role":"{role}","turn_index":{index},"model":"m"}}}},"scope":{{"agent":"chatgpt"}},"time":{{"created":"2024-05-01T10:00:0{index}Z"}},"relations":[{{"type":"depends_on","target":"urn:ump:{parent}"}}],"consent":{{"exportable":{}}}}}"#,
                index != 2
            )
        };
        let memory = r#"{"id":"urn:ump:n","kind":"semantic","body":{"text":"Likes tea","structured":{"memory_kind":"preference","provider_memory_id":"p1","labels":["a",1]}},"time":{"created":"2024-05-01T10:00:00Z"}}"#;
        let memory_plain = r#"{"id":"urn:ump:o","kind":"procedural","body":{"text":"Steps","structured":{"labels":["x"]}},"time":{"created":"2024-05-01T10:00:00Z"}}"#;
        let broken = r#"{"id":"urn:ump:q","kind":"semantic","body":{"text":" "},"time":{"created":"2024-05-01T10:00:00Z"}}"#;
        for group in [
            format!("[5,{},{},{}]", turn("b", 1, "assistant", "a"), turn("a", 0, "user", "none"), turn("c", 2, "user", "b")),
            format!("[9,{memory}]"),
            format!("[9,{memory_plain},{broken}]"),
            format!("[9,{broken}]"),
            format!("[3,{},{memory_plain}]", turn("a", 0, "user", "none")),
        ] {
            let (fast, whole) = read_both_ways(&group);
            assert_eq!(fast, whole, "{group}");
        }
        // The first memory's labels hold a number: the fast reading leaves it to the whole one.
        assert!(Group::parse(format!("[9,{memory}]").as_bytes()).is_none());
        assert!(Group::parse(format!("[9,{memory_plain}]").as_bytes()).is_some());
    }

    /// Guards the one way the two readings differ, on purpose: a member memport does not read is
    /// skipped, so a lone surrogate in it no longer loses the whole conversation.
    #[test]
    fn a_member_memport_does_not_read_does_not_lose_the_group() {
        let group = r#"[0,{"id":"urn:ump:a","kind":"episodic","body":{"text":"hi","structured":{"conversation_id":"c","message_id":"a"}},"time":{"created":"2024-05-01T10:00:00Z"},"x-note":"\ud800"}]"#;
        let (fast, whole) = read_both_ways(group);
        assert!(fast.starts_with("Ok("), "{fast}");
        assert!(whole.starts_with("Err("), "{whole}");
        // In a member it reads, the same escape leaves the group to the whole reading.
        let read = group.replace(r#""text":"hi""#, r#""text":"\ud800""#);
        let (fast, whole) = read_both_ways(&read);
        assert_eq!(fast, whole);
        assert!(fast.starts_with("Err("), "{fast}");
    }

    #[test]
    fn a_redacted_path_is_gone_and_its_siblings_stay() {
        let mut record = serde_json::json!({"body": {"structured": {"model": "m", "role": "user"}}});
        redact(&mut record, &["body.structured.model".to_owned(), "no.such.path".to_owned()]);
        assert_eq!(record, serde_json::json!({"body": {"structured": {"role": "user"}}}));
    }
}
