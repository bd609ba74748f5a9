//! AIMEM's HTTP profile over a store, apart from HTTP: exporting the store as an AIMEM bundle
//! (`FULL`, `DNA_ONLY`, `SINCE`) and importing a bundle into it.
//!
//! Both go through memport's own conversion, so a bundle served is one `memport validate`
//! accepts and a bundle imported is read exactly as `memport convert` reads it: an export
//! hands the chosen records, as UMP NDJSON lines, straight to a conversion to AIMEM running on
//! another thread as they are read ([`crate::sources::supplied`]), which writes the bundle to
//! a temporary folder (the bundle's checksum covers the whole file, so it is complete before
//! the first byte is sent); an import checks the bundle (checksum 409, everything else 422), converts it to
//! UMP records in a temporary folder, and only then loads them into the store in one
//! transaction, honouring what the bundle withdraws ([`load`]). A
//! record whose id the store holds is kept as stored, so the same bundle twice
//! changes nothing, and neither does the store's own export coming back; memory stays bounded at any size, since every step streams through files.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use tempfile::TempDir;

use crate::error::RunError;
use crate::model::{ERASED_MEMORY_TEXT, ErasedMessage, Micros};
use crate::pipeline::{self, Options, Settings};
use crate::sinks::{Incremental, OutputFormat};
use crate::sources::formats::ump;
use crate::sources::supplied::{ReaderGone, SuppliedInput};
use crate::spec::ump::message_record_id;
use crate::stages::read_back::{NamedEvidence, UNFORESEEN_EVIDENCE};
use crate::store::{ExportFilter, Put, Store, StoreError};
use crate::timefmt::parse_rfc3339;
use crate::validate::{self, Problem, Problems};

/// What can go wrong exporting or importing a bundle.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BrainError {
    /// The bundle is not one memport accepts: the problems, the first deciding the status
    /// (409 checksum mismatch, else 422).
    #[error("the bundle is invalid: {}", .0.first().map_or("", |problem| problem.message.as_str()))]
    Invalid(Problems),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Converting failed (a temporary file could not be written, …).
    #[error(transparent)]
    Run(#[from] RunError),
    /// A temporary file failed.
    #[error("a temporary file: {0}")]
    Io(#[from] std::io::Error),
}

/// Why reading the store for an export stopped.
enum ExportEnd {
    Store(StoreError),
    /// The conversion stopped reading (it failed, and says why).
    Stopped(ReaderGone),
}

impl From<StoreError> for ExportEnd {
    fn from(error: StoreError) -> Self {
        ExportEnd::Store(error)
    }
}

/// Which part of the store an export holds (AIMEM's `scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every live record.
    Full,
    /// The memories of a DNA class only.
    DnaOnly,
    /// The records created at or after this time (microseconds).
    Since(Micros),
}

/// An exported bundle in a temporary folder, removed when this is dropped.
pub struct ExportedBundle {
    /// The bundle file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Holds the folder.
    _folder: TempDir,
}

/// Settings every conversion here runs with: every record the file holds (the store and a
/// bundle hold what their owner chose to keep), no progress bars, `threads` workers.
fn conversion_settings(threads: usize, owner: &str) -> Settings {
    Settings { quiet: true, threads: Some(threads), owner_id: owner.to_owned(), ..Settings::default() }.keeping_every_record()
}

/// Exports the records `filter` and `scope` choose as an AIMEM bundle (`ndjson`: the
/// envelope line, then one record a line), exported at `exported_at`.
///
/// The bundle's checksum covers its chunk-entity links first, and they come with its
/// memories, which come last: so where the store can read its memories apart, they are
/// converted alone first, and the bundle is hashed as it is written with their links instead
/// of read back and hashed again at the end ([`crate::sinks::aimem::links_of`]).
///
/// # Errors
/// Store, conversion and temporary-file errors.
pub fn export(
    store: &Store,
    scope: Scope,
    agent: Option<String>,
    ndjson: bool,
    exported_at: Micros,
    threads: usize,
) -> Result<ExportedBundle, BrainError> {
    let folder = tempfile::Builder::new().prefix("memport-export-").tempdir()?;
    let since = match scope {
        Scope::Since(since) => Some(since),
        _ => None,
    };
    let filter = ExportFilter { since, dna_only: scope == Scope::DnaOnly, agent, memories_only: false };
    let conversion = Conversion { store, scope, exported_at, threads };
    // A DNA-only export holds nothing but memories: it would be converted twice.
    let known = if scope != Scope::DnaOnly && store.lists_memories_apart() {
        conversion.memories_first(&filter, folder.path())?
    } else {
        Known::default()
    };
    let (format, name) =
        if ndjson { (OutputFormat::AimemNdjson, "bundle.aimem.ndjson") } else { (OutputFormat::Aimem, "bundle.aimem.json") };
    let path = folder.path().join(name);
    let links = known.links.clone();
    let report = conversion.run(&filter, format, &path, known, None)?;
    if report.warnings.contains_key(UNFORESEEN_EVIDENCE) {
        // A memory stored between the two reads (or one of the episodic kind with a session)
        // names a message the first read did not know of, whose evidence may be left out:
        // made again, keying every message.
        std::fs::remove_file(&path)?;
        conversion.run(&filter, format, &path, Known { links, evidence: None }, None)?;
    }
    let bytes = std::fs::metadata(&path)?.len();
    Ok(ExportedBundle { path, bytes, _folder: folder })
}

/// What an export's conversion knows before it reads, from its memories read first.
#[derive(Default)]
struct Known {
    /// The bundle's chunk-entity links ([`Options::aimem_links`]).
    links: Option<std::sync::Arc<[u8]>>,
    /// The messages the memories name as evidence ([`Options::evidence_named`]).
    evidence: Option<std::sync::Arc<NamedEvidence>>,
}

/// What every conversion of one export shares.
struct Conversion<'a> {
    store: &'a Store,
    scope: Scope,
    exported_at: Micros,
    threads: usize,
}

impl Conversion<'_> {
    /// What the export chosen by `filter` knows from its memories, converted alone first (in
    /// `folder`): the chunk-entity links, and the messages they name as evidence (with those
    /// of the memories of the episodic kind, which that conversion does not read), unless
    /// there are too many or the store cannot find them all.
    fn memories_first(&self, filter: &ExportFilter, folder: &Path) -> Result<Known, BrainError> {
        let memories = folder.join("memories.aimem.ndjson");
        let memories_only = ExportFilter { memories_only: true, ..filter.clone() };
        let mut named = NamedEvidence::default();
        self.run(&memories_only, OutputFormat::AimemNdjson, &memories, Known::default(), Some(&mut named))?;
        let links = crate::sinks::aimem::links_of(&memories)?;
        std::fs::remove_file(&memories)?;
        let complete = self.store.for_each_sessionless_episodic(|record| {
            ump::each_evidence_named(record, |conversation, message| named.add(conversation, message));
        })?;
        let evidence = (complete && !named.is_full()).then(|| std::sync::Arc::new(named));
        Ok(Known { links: Some(links.into()), evidence })
    }

    /// Converts the records `filter` chooses to `format` at `path`, with what is `known`
    /// beforehand; adds the messages the memories read name as evidence to `named`, when
    /// given. Returns the run's report.
    fn run(
        &self,
        filter: &ExportFilter,
        format: OutputFormat,
        path: &Path,
        known: Known,
        mut named: Option<&mut NamedEvidence>,
    ) -> Result<pipeline::report::RunReport, BrainError> {
        let (records, mut sender) = SuppliedInput::new("the store's records");
        let since = filter.since;
        let options = Options {
            supplied: Some(records),
            outputs: vec![(format, path.to_owned())],
            exported_at: self.exported_at,
            settings: conversion_settings(self.threads, self.store.owner()),
            incremental: since.map(|since| Incremental { export_id: String::new(), base_export_id: None, since: Some(since) }),
            dna_only: self.scope == Scope::DnaOnly,
            aimem_links: known.links,
            // Their links alone are wanted: none waits for what it links to.
            memories_apart: filter.memories_only,
            evidence_named: known.evidence,
            ..Options::default()
        };
        // The conversion reads the records as this thread reads them from the store: the two
        // overlap, and the records never go through a file.
        let (count, report) = std::thread::scope(|scope| {
            let conversion = std::thread::Builder::new()
                .name("memport-export".into())
                // `options` moves in and goes with the run: a run that fails before it reads its
                // input drops the input's channel, so this thread's sends fail instead of blocking.
                .spawn_scoped(scope, move || pipeline::run(&options))
                .map_err(BrainError::Io)?;
            let read = self.store.for_each_exported(filter, |exported| {
                if let Some(named) = named.as_deref_mut() {
                    ump::each_evidence_named(exported.record, |conversation, message| named.add(conversation, message));
                }
                let key = ump::stored_group_key(exported.kind, exported.agent, exported.record);
                sender.send_record(key, exported.record.as_bytes()).map_err(ExportEnd::Stopped)
            });
            let count = match read {
                Ok(count) => sender.finish().map(|()| count).map_err(ExportEnd::Stopped),
                Err(ExportEnd::Store(error)) => {
                    // The conversion's read fails (it rejects the rest of its input), and the
                    // store's error below refuses its bundle: a cut read is never served as whole.
                    sender.fail(std::io::Error::other(error.to_string()));
                    Err(ExportEnd::Store(error))
                }
                Err(stopped) => {
                    drop(sender);
                    Err(stopped)
                }
            };
            let report = conversion.join().map_err(|_| std::io::Error::other("the export's conversion panicked"))?;
            // A conversion that failed says why; the store's read stopped because of it.
            let report = report?;
            match count {
                Ok(count) => Ok((count, report)),
                Err(ExportEnd::Store(error)) => Err(BrainError::Store(error)),
                Err(ExportEnd::Stopped(_)) => Err(std::io::Error::other("the export's conversion stopped reading the store").into()),
            }
        })?;
        // A reject would be a record the store holds that memport cannot read back.
        if report.rejects > 0 && count > 0 {
            return Err(std::io::Error::other(format!("{} stored records could not be converted to AIMEM", report.rejects)).into());
        }
        Ok(report)
    }
}

/// A bundle checked and converted, ready to load: its UMP records in a temporary folder.
pub struct PreparedImport {
    records: PathBuf,
    /// Records the bundle held (chunks, edges, entities, links).
    pub bundle_records: u64,
    /// What a consumer should know (a legacy format value, …).
    pub notices: Vec<String>,
    _folder: TempDir,
}

/// Checks the AIMEM bundle (JSON or NDJSON) at `bundle` and converts it to the UMP records
/// the store keeps, owned by `owner`. Nothing is written to the store yet.
///
/// # Errors
/// [`BrainError::Invalid`] with the problems of a bundle memport does not accept (also one
/// whose records memport rejects on reading); conversion and temporary-file errors.
pub fn prepare_import(bundle: &Path, owner: &str, threads: usize) -> Result<PreparedImport, BrainError> {
    let mut validation = validate::aimem::validate_file(bundle)?;
    if let Some((_, notice)) = validate::aimem::tolerate_foreign_ids(&mut validation) {
        validation.notices.push(notice);
    }
    if !validation.is_valid() {
        return Err(BrainError::Invalid(validation.problems));
    }
    let folder = tempfile::Builder::new().prefix("memport-import-").tempdir()?;
    let records = folder.path().join("records.ump.ndjson");
    let rejects = folder.path().join("rejects.ndjson");
    let options = Options {
        inputs: vec![bundle.to_owned()],
        outputs: vec![(OutputFormat::UmpNdjson, records.clone())],
        rejects: Some(rejects.clone()),
        settings: conversion_settings(threads, owner),
        ..Options::default()
    };
    // The bundle passed the checks; what still fails to read is the bundle's doing: 422.
    let report = pipeline::run(&options).map_err(|error| match error {
        RunError::Write { .. } => BrainError::Run(error),
        other => BrainError::Invalid(Problems::from(vec![Problem {
            status: 422,
            code: "unreadable_bundle",
            location: "/".into(),
            message: other.to_string(),
        }])),
    })?;
    if report.rejects > 0 {
        return Err(BrainError::Invalid(rejected_records(&rejects)?));
    }
    Ok(PreparedImport { records, bundle_records: validation.records, notices: validation.notices, _folder: folder })
}

/// The rejects of a conversion, as problems (the first listed, all counted).
fn rejected_records(rejects: &Path) -> Result<Problems, BrainError> {
    let mut problems = Problems::new();
    for line in BufReader::new(File::open(rejects)?).lines() {
        let reject: Value = serde_json::from_str(&line?).unwrap_or(Value::Null);
        let location = format!("record {} (byte {})", reject["index"], reject["offset"]);
        let message = reject["reason"].as_str().unwrap_or("memport could not read the record").to_owned();
        problems.push(Problem { status: 422, code: "record_rejected", location, message });
    }
    Ok(problems)
}

/// What an import did to the store.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct ImportSummary {
    /// Records the bundle held (chunks, edges, entities, links).
    pub bundle_records: u64,
    /// UMP records new to the store.
    pub inserted: u64,
    /// UMP records the store holds already with the same text: a re-import, or the store's
    /// own export coming back (the stored record, which may say more, is kept).
    pub skipped_idempotent: u64,
    /// UMP records erased for good earlier (`forget --hard`), not stored again.
    pub skipped_erased: u64,
    /// Messages the bundle withdraws (erased where it was made): erased here too.
    pub withdrawn_messages: u64,
    /// Records of the conversations the bundle retracts (deleted from the user's export):
    /// tombstoned here.
    pub tombstoned_retracted: u64,
    /// Records the store holds that the bundle withdraws (memories its maker retracted, or
    /// erased): tombstoned here, or erased with their words.
    pub withdrawn_records: u64,
    /// Ids the store holds with another text: not imported (AIMEM's idempotency rule 2); the
    /// store's record stays.
    pub rejected_conflict: Vec<String>,
    /// What a consumer should know about the bundle.
    pub notices: Vec<String>,
}

/// Loads a prepared import into `store`; call it in a transaction, so a failure leaves
/// nothing of it. First what the bundle withdraws: a message it lists as withdrawn (erased
/// where the bundle was made, memport's `x-memport-withdrawn-messages`) is erased here too,
/// with what was derived from it, and a conversation it retracts (`x-memport-retracted`) has
/// its records tombstoned, as a sync's `--to store` does; an import needs a token for the whole
/// store, as erasing does. Then the records: one whose id the store holds is never replaced
/// (the same text is a no-op, another text a conflict), so a forgotten record stays forgotten
/// and a revised one revised; but one the bundle withdraws (tombstoned there, live here) is
/// tombstoned here, or erased when the bundle says its words were erased.
///
/// # Errors
/// Store errors, and a record file that cannot be read.
pub fn load(store: &Store, prepared: &PreparedImport) -> Result<ImportSummary, BrainError> {
    let mut summary =
        ImportSummary { bundle_records: prepared.bundle_records, notices: prepared.notices.clone(), ..ImportSummary::default() };
    for_each_record(&prepared.records, |record| {
        match Withdrawal::of(&record) {
            Some(Withdrawal::Message(message, reason, at)) => {
                // Counted once: the same bundle again erases nothing more.
                let id = message_record_id(&message.provider, &message.conversation_id, &message.message_id);
                if !store.is_erased(&id)? {
                    store.erase_message(&message, &reason, at)?;
                    summary.withdrawn_messages += 1;
                }
            }
            Some(Withdrawal::Conversation(provider, conversation)) => {
                summary.tombstoned_retracted += store.tombstone_session(&provider, &conversation)?;
            }
            None => {}
        }
        Ok(())
    })?;
    for_each_record(&prepared.records, |record| {
        // Its id is the erased message's own: erased above, and never stored.
        if matches!(Withdrawal::of(&record), Some(Withdrawal::Message(..))) {
            return Ok(());
        }
        let id = record["id"].as_str().unwrap_or_default();
        let refused = |error: StoreError| match error {
            StoreError::InvalidRecord(reason) => BrainError::Invalid(Problems::from(vec![Problem {
                status: 422,
                code: "invalid_record",
                location: id.to_owned(),
                message: reason,
            }])),
            other => BrainError::Store(other),
        };
        if let Some(stored) = store.get(id)? {
            if withdraws(&record, &stored) {
                // A memory the bundle's maker erased (its words gone) is erased here; one it
                // retracted, tombstoned.
                let erased = record["body"]["text"] == ERASED_MEMORY_TEXT;
                let at = record["time"]["created"].as_str().and_then(parse_rfc3339).unwrap_or_default();
                store.forget(id, "withdrawn by an imported bundle", erased, at)?;
                summary.withdrawn_records += 1;
            } else if stored["body"]["text"] == record["body"]["text"] {
                summary.skipped_idempotent += 1;
            } else {
                summary.rejected_conflict.push(id.to_owned());
            }
            return Ok(());
        }
        match store.put(&record).map_err(refused)? {
            Put::Created | Put::Replaced => summary.inserted += 1,
            Put::Unchanged => summary.skipped_idempotent += 1,
            Put::Erased => summary.skipped_erased += 1,
        }
        Ok(())
    })?;
    Ok(summary)
}

/// Whether `record`, a bundle's, withdraws `stored`, the store's record of the same id: the
/// bundle has it tombstoned (memport's bundles mark a memory their maker retracted, or erased
/// with its words, so) while the store holds it live, or holds the words the bundle says were
/// erased.
fn withdraws(record: &Value, stored: &Value) -> bool {
    let tombstoned = |record: &Value| record["lifecycle"]["status"] == "tombstoned";
    let erased = |record: &Value| record["body"]["text"] == ERASED_MEMORY_TEXT;
    tombstoned(record) && (!tombstoned(stored) || (erased(record) && !erased(stored)))
}

/// Calls `visit` with each record of a prepared import's record file, in order.
fn for_each_record(records: &Path, mut visit: impl FnMut(Value) -> Result<(), BrainError>) -> Result<(), BrainError> {
    for line in BufReader::with_capacity(1 << 20, File::open(records)?).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        visit(serde_json::from_str(&line).map_err(|error| StoreError::InvalidRecord(error.to_string()))?)?;
    }
    Ok(())
}

/// What a bundle's tombstone record withdraws (how a UMP record carries a retraction).
enum Withdrawal {
    /// A message erased where the bundle was made: which, why, and when.
    Message(ErasedMessage, String, Micros),
    /// A conversation the user deleted: its provider and id.
    Conversation(String, String),
}

impl Withdrawal {
    /// The withdrawal a tombstoned record states, if it states one.
    fn of(record: &Value) -> Option<Withdrawal> {
        if record["lifecycle"]["status"] != "tombstoned" {
            return None;
        }
        let structured = &record["body"]["structured"];
        let text = |value: &Value, name: &str| value[name].as_str().filter(|text| !text.is_empty()).map(str::to_owned);
        let message = &structured["retracted_message"];
        if message.is_object() {
            let erased = ErasedMessage {
                provider: text(message, "provider")?,
                conversation_id: text(message, "conversation_id")?,
                message_id: text(message, "message_id")?,
            };
            let reason = format!("withdrawn by run {}", message["retracted_by"].as_str().unwrap_or("(unnamed)"));
            let at = record["time"]["created"].as_str().and_then(parse_rfc3339).unwrap_or_default();
            return Some(Withdrawal::Message(erased, reason, at));
        }
        let conversation = &structured["retracted_conversation"];
        Some(Withdrawal::Conversation(text(conversation, "provider")?, text(conversation, "conversation_id")?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::record;

    /// The export reads the store's records without parsing each to check it is JSON (memport
    /// wrote them so): one edited into something else fails the export, never leaves a bundle
    /// that lacks it.
    #[test]
    fn a_stored_record_that_is_no_longer_json_fails_the_export() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("m.db");
        let store = Store::create(&path, "owner").unwrap();
        store.put(&record("urn:ump:aa", "Keeps bees", "2026-01-02T03:04:05Z")).unwrap();
        store.put(&record("urn:ump:bb", "Keeps goats", "2026-01-02T03:04:05Z")).unwrap();
        let whole = export(&store, Scope::Full, None, true, 0, 1).unwrap();
        assert!(std::fs::read_to_string(&whole.path).unwrap().contains("Keeps goats"));
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute("UPDATE records SET record = '{\"ump\":\"0.1\",\"id\":' WHERE id = 'urn:ump:bb'", [])
            .unwrap();
        for ndjson in [true, false] {
            assert!(export(&store, Scope::Full, None, ndjson, 0, 1).is_err(), "ndjson: {ndjson}");
        }
    }

    /// The links the memories alone give are the ones the whole export writes, so the export
    /// is hashed once, while it is written; the messages they name as evidence are all the
    /// export keys; and it is the same bundle as without either.
    #[test]
    fn the_links_of_the_memories_alone_are_the_links_of_the_whole_export() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("m.db");
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/chatgpt-small");
        let options = Options {
            inputs: vec![example],
            outputs: vec![(OutputFormat::Store, path.clone())],
            settings: Settings { quiet: true, ..Settings::default() },
            ..Options::default()
        };
        pipeline::run(&options).unwrap();
        let store = Store::open(&path, false).unwrap();
        assert!(store.lists_memories_apart());
        let conversion = Conversion { store: &store, scope: Scope::Full, exported_at: 0, threads: 2 };
        // Every filter of the memories' own query: the whole store, and a `SINCE` one.
        for since in [None, Some(1)] {
            let whole = ExportFilter { since, ..ExportFilter::default() };
            let known = conversion.memories_first(&whole, folder.path()).unwrap();
            let links = known.links.clone().unwrap();
            assert!(links.len() > 100, "the example's memories name entities");
            assert!(known.evidence.is_some(), "the example's memories name messages");
            let written = folder.path().join(format!("whole-{since:?}.aimem.ndjson"));
            conversion.run(&whole, OutputFormat::AimemNdjson, &written, Known::default(), None).unwrap();
            let written_links = crate::sinks::aimem::links_of(&written).unwrap();
            assert_eq!(String::from_utf8_lossy(&written_links), String::from_utf8_lossy(&links), "since {since:?}");
            let knowing = folder.path().join(format!("knowing-{since:?}.aimem.ndjson"));
            let report = conversion.run(&whole, OutputFormat::AimemNdjson, &knowing, known, None).unwrap();
            assert!(!report.warnings.contains_key(UNFORESEEN_EVIDENCE), "{:?}", report.warnings);
            assert!(std::fs::read(&knowing).unwrap() == std::fs::read(&written).unwrap(), "since {since:?}");
        }
        // The whole store, converted without the links above.
        let unhelped = folder.path().join(format!("whole-{:?}.aimem.ndjson", None::<i64>));
        let exported = export(&store, Scope::Full, None, true, 0, 2).unwrap();
        assert!(std::fs::read(&exported.path).unwrap() == std::fs::read(&unhelped).unwrap(), "the same bundle");
        assert!(crate::validate::aimem::validate_file(&exported.path).unwrap().is_valid());
    }
}
