//! `memport sync`: each new full export becomes a delta against what earlier runs emitted.
//!
//! A sync opens its state ([`sqlite::SqliteState`], or [`postgres_state::PostgresState`] for
//! many workers sharing one database) and starts one write transaction, reads
//! the inputs through the usual pipeline with a [`delta::StateDelta`] deciding what is new,
//! writes the run's outputs into a staging folder under `OUT/runs/`, renames it to
//! `OUT/runs/<run-id>/`, and only then commits the state. A sync stopped at any point leaves
//! the state as it was; the next one removes what it left and, given the same inputs and
//! export time, writes the same outputs byte for byte (`sync.json` differs only in its timing,
//! thread count and paths).

pub mod delta;
pub mod inputs;
pub mod merge;
pub mod postgres_state;
pub mod sqlite;
pub mod state;
pub mod status;
pub mod stored;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{ConfigError, RunError};
use crate::outputs::{parquet_runs, sync_upload};
use crate::pipeline::report::RunReport;
use crate::pipeline::{Options, run_with_delta};
use crate::sinks::OutputFormat;
use crate::timefmt::format_rfc3339;

use self::delta::{DeltaCounts, MemoryDeltaCounts, StateDelta};
use self::state::{RunEntry, StateError, StateStore};

/// The folder under `-o` that holds one folder per run.
pub const RUNS_FOLDER: &str = "runs";
/// The file in each run folder that describes the run.
pub const SYNC_REPORT: &str = "sync.json";
/// The folder under `-o` that holds the one Parquet dataset every run adds a partition to.
pub const PARQUET_FOLDER: &str = "parquet";
/// The file in each run folder that lists the run's retractions (NDJSON).
pub const RETRACTIONS_FILE: &str = "retractions.ndjson";

/// What a sync needs.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// The conversion options; their outputs are ignored (each run gets its own folder).
    pub convert: Options,
    /// Formats written into each run folder.
    pub formats: Vec<OutputFormat>,
    /// The state file (made by the first sync).
    pub state: PathBuf,
    /// The folder whose `runs/` gets the run folders.
    pub output_root: PathBuf,
    /// The memory store `--to store` loads each run into, when not `memory.db` beside `runs/`:
    /// a store in PostgreSQL (`--store postgres://…`).
    pub store: Option<PathBuf>,
}

/// One retraction: a conversation emitted before and absent from a complete export now, or
/// messages of one erased from the memory store since.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Retraction {
    /// The provider's name.
    pub provider: &'static str,
    /// The conversation's id as earlier runs wrote it.
    pub conversation_id: String,
    /// Its title when last written.
    pub title: Option<String>,
    /// The run that retracted it.
    pub retracted_by: String,
    /// The messages withdrawn, when the run withdrew only these (erased from the memory store)
    /// and not the whole conversation.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub message_ids: Vec<String>,
}

/// What a sync did: written as `sync.json` in its run folder.
#[derive(Debug, Serialize)]
pub struct SyncReport {
    /// This run's id (its folder's name).
    pub run_id: String,
    /// The run this delta applies to; none for the first.
    pub base_run_id: Option<String>,
    /// The export time of the base run: the delta holds what changed since then.
    pub since: Option<String>,
    /// Whether everything was written (no earlier run, or the options changed), and why.
    pub full: bool,
    /// Why the run is full, when it is.
    pub full_because: Option<String>,
    /// What became of the conversations.
    pub conversations: DeltaCounts,
    /// What became of the extracted memories.
    pub memories: MemoryDeltaCounts,
    /// Why no conversations were retracted for an input, when one was partial.
    pub no_retractions_because: Vec<String>,
    /// The run folder.
    pub run_folder: String,
    /// Leftovers of stopped syncs that were removed.
    pub removed_leftovers: Vec<String>,
    /// The conversion's own report (counts, outputs, warnings).
    pub run: RunReport,
}

/// Opens the state `location` names: a PostgreSQL URL (`postgres://…`; the rows of
/// `tenant`), else a SQLite file (made when `create`).
///
/// # Errors
/// When the state cannot be opened: missing, not a memport state, newer, unreachable.
pub fn open_state(location: &Path, tenant: &str, create: bool) -> Result<Box<dyn StateStore>, StateError> {
    let text = location.to_string_lossy();
    if crate::store::is_postgres_url(&text) {
        Ok(Box::new(postgres_state::PostgresState::open(&text, tenant)?))
    } else {
        Ok(Box::new(sqlite::SqliteState::open(location, create)?))
    }
}

/// Runs one sync.
///
/// # Errors
/// State errors (busy, corrupt, newer), config errors, and what a conversion can fail with.
pub fn sync(options: &SyncOptions) -> Result<SyncReport, RunError> {
    let state_error = |error: StateError| RunError::State(error.to_string());
    if options.formats.is_empty() {
        return Err(ConfigError::Option { option: "--to".into(), reason: "name at least one format".into() }.into());
    }
    let on_server = crate::store::is_postgres_url(&options.state.to_string_lossy());
    // A cron line's first sync names a state in a folder that may not exist yet.
    if let Some(folder) = options.state.parent().filter(|folder| !on_server && !folder.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder).map_err(|error| RunError::write(folder.display().to_string(), error))?;
    }
    let mut store = open_state(&options.state, &options.convert.settings.tenant_id(), true).map_err(state_error)?;
    store.begin().map_err(state_error)?;
    let runs = store.runs().map_err(state_error)?;
    let last = runs.last();
    let options_digest = options_digest(options);
    let full_because = match last {
        None => Some("the first sync on this state: everything is written".to_owned()),
        Some(run) if run.options_digest != options_digest => {
            Some("the options differ from the previous sync's: everything is written again".to_owned())
        }
        Some(_) => None,
    };
    let mut input_records = Vec::with_capacity(options.convert.inputs.len());
    for input in &options.convert.inputs {
        let checksum = inputs::checksum(input).map_err(|error| RunError::read(input.display().to_string(), error))?;
        input_records.push(InputRecord { path: input.display().to_string(), checksum });
    }
    let run_id = run_id(options.convert.exported_at, last.map(|run| run.run_id.as_str()), &options_digest, &input_records);
    // A sync to object storage builds its run in a local folder and uploads it before the
    // state commits (see `crate::outputs::sync_upload`).
    let remote_root = crate::remote::ObjectUrl::of(&options.output_root);
    let local_root = match &remote_root {
        Some(_) => Some(tempfile::Builder::new().prefix("memport-sync-").tempdir().map_err(|error| RunError::Temporary {
            purpose: "the run to upload".into(),
            folder: std::env::temp_dir().display().to_string(),
            source: error,
        })?),
        None => None,
    };
    let output_root = local_root.as_ref().map_or_else(|| options.output_root.clone(), |folder| folder.path().to_owned());
    let runs_folder = output_root.join(RUNS_FOLDER);
    std::fs::create_dir_all(&runs_folder).map_err(|error| RunError::write(runs_folder.display().to_string(), error))?;
    let committed: Vec<&str> = runs.iter().map(|run| run.run_id.as_str()).collect();
    let mut removed_leftovers = remove_leftovers(&runs_folder, &committed)?;
    let dataset = output_root.join(PARQUET_FOLDER);
    if dataset.is_dir() {
        removed_leftovers
            .extend(parquet_runs::remove_uncommitted(&dataset, &committed)?.into_iter().map(|name| format!("{PARQUET_FOLDER}/{name}")));
    }
    if let Some(root) = &remote_root {
        removed_leftovers.extend(sync_upload::remove_uncommitted(root, RUNS_FOLDER, PARQUET_FOLDER, parquet_runs::RUNS_TABLE, &committed)?);
    }
    // The memory store is one file beside `runs/` that each run loads its delta into (in a
    // copy, moved into place with the run), so `memport serve` answers from all the history;
    // or a store in PostgreSQL, which the run loads in place in one transaction.
    let store_file = options.store.clone().unwrap_or_else(|| output_root.join(OutputFormat::Store.default_file_name()));
    let store_in_database = crate::store::is_postgres_url(&store_file.to_string_lossy());
    let keeps_store = options.formats.contains(&OutputFormat::Store);
    if options.store.is_some() && !(keeps_store && store_in_database) {
        return Err(ConfigError::Option {
            option: "--store".into(),
            reason: "names a memory store in PostgreSQL (postgres://…) that `--to store` loads each run into; add store to --to, or leave --store out for memory.db beside runs/".into(),
        }
        .into());
    }
    if keeps_store && remote_root.is_some() && !store_in_database {
        return Err(ConfigError::Option {
            option: "--to".into(),
            reason: "the memory store is a local file that `memport serve` opens: sync it to a local folder, keep it in PostgreSQL (--store postgres://…), or leave `store` out of --to"
                .into(),
        }
        .into());
    }
    let staging = runs_folder.join(format!(".{run_id}.partial"));
    std::fs::create_dir(&staging).map_err(|error| RunError::write(staging.display().to_string(), error))?;
    let staged_store = match store_in_database {
        true => store_file.clone(),
        false => staging.join(OutputFormat::Store.default_file_name()),
    };
    // The store's other writers (`memport serve`) wait from the copy until the run has moved
    // its copy into place or failed, so nothing they write is left in the file replaced.
    let store_hold = match keeps_store && store_file.is_file() {
        true => match crate::sinks::store::seed_from_target(&store_file, &staged_store) {
            Ok(hold) => hold,
            Err(error) => {
                store.rollback();
                let _ = std::fs::remove_dir_all(&staging);
                return Err(error);
            }
        },
        false => None,
    };
    let incremental = crate::sinks::Incremental {
        export_id: export_id(&run_id),
        base_export_id: last.filter(|_| full_because.is_none()).map(|run| export_id(&run.run_id)),
        since: last.filter(|_| full_because.is_none()).and_then(|run| crate::timefmt::parse_rfc3339(&run.exported_at)),
    };
    // What was erased in the store is left out of every output, whether or not this run loads
    // into the store.
    // A store that cannot be read stops the run rather than have it write what was erased.
    let erasures_from = store_file.is_file().then_some(store_file.as_path());
    let result = run_into(options, store.as_mut(), &run_id, full_because.is_some(), incremental, (&staging, &staged_store), erasures_from);
    let RunDone { report: mut run, conversations: delta_counts, memories: memory_counts, retractions, no_retractions_because } =
        match result {
            Ok(done) => done,
            Err(error) => {
                store.rollback();
                let _ = std::fs::remove_dir_all(&staging);
                return Err(error);
            }
        };
    // The outputs are named where they will be once the run folder is in place; the Parquet
    // rows join the one dataset beside `runs/`.
    let (staged_prefix, final_prefix) = (staging.display().to_string(), runs_folder.join(&run_id).display().to_string());
    for output in &mut run.outputs {
        if output.format == OutputFormat::Parquet.name() {
            output.path = dataset.display().to_string();
        } else if output.format == OutputFormat::Store.name() {
            output.path = crate::store::shown_location(&store_file);
        } else if let Some(rest) = output.path.strip_prefix(&staged_prefix) {
            output.path = format!("{final_prefix}{rest}");
        }
    }
    let mut report = SyncReport {
        run_id: run_id.clone(),
        base_run_id: last.filter(|_| full_because.is_none()).map(|run| run.run_id.clone()),
        since: last.filter(|_| full_because.is_none()).map(|run| run.exported_at.clone()),
        full: full_because.is_some(),
        full_because,
        conversations: delta_counts,
        memories: memory_counts,
        no_retractions_because,
        run_folder: runs_folder.join(&run_id).display().to_string(),
        removed_leftovers,
        run,
    };
    if let Some(root) = &remote_root {
        // Named where they will be once uploaded.
        let (local_prefix, remote_prefix) = (output_root.display().to_string(), root.to_string());
        let rename = |path: &mut String| {
            if let Some(rest) = path.strip_prefix(&local_prefix) {
                *path = format!("{remote_prefix}{rest}");
            }
        };
        rename(&mut report.run_folder);
        report.run.outputs.iter_mut().for_each(|output| rename(&mut output.path));
    }
    let entry = RunEntry {
        run_id: run_id.clone(),
        sequence: last.map_or(1, |run| run.sequence + 1),
        exported_at: format_rfc3339(options.convert.exported_at),
        base_run_id: report.base_run_id.clone(),
        full: report.full,
        options_digest,
        options_json: options_json(options),
        inputs_json: serde_json::to_string(&input_records).unwrap_or_default(),
        counts_json: serde_json::json!({"conversations": report.conversations, "memories": report.memories}).to_string(),
        outputs_json: serde_json::to_string(&report.run.outputs).unwrap_or_default(),
    };
    let finish = (|| -> Result<(), RunError> {
        write_retractions(&staging.join(RETRACTIONS_FILE), &retractions)?;
        let staged_dataset = staging.join(OutputFormat::Parquet.default_file_name());
        if options.formats.contains(&OutputFormat::Parquet) {
            let row = parquet_runs::RunRow {
                run_id: run_id.clone(),
                sequence: entry.sequence,
                exported_at: options.convert.exported_at,
                base_run_id: entry.base_run_id.clone(),
                full: entry.full,
                inputs_json: entry.inputs_json.clone(),
                counts_json: entry.counts_json.clone(),
                options_json: entry.options_json.clone(),
            };
            parquet_runs::publish_run(&staged_dataset, &dataset, &run_id, &row)?;
            // What is left of the staged dataset is its manifest of the parts just moved.
            std::fs::remove_dir_all(&staged_dataset).map_err(|error| RunError::write(staged_dataset.display().to_string(), error))?;
        }
        if keeps_store && !store_in_database {
            // Loading is idempotent: should the state not commit after this, the next sync
            // loads the same delta again and changes nothing.
            std::fs::rename(&staged_store, &store_file).map_err(|error| RunError::write(store_file.display().to_string(), error))?;
        }
        let sync_report = staging.join(SYNC_REPORT);
        let text = serde_json::to_vec_pretty(&report).map_err(|error| RunError::Internal(error.to_string()))?;
        std::fs::write(&sync_report, [text.as_slice(), b"\n"].concat())
            .map_err(|error| RunError::write(sync_report.display().to_string(), error))?;
        let target = runs_folder.join(&run_id);
        // The same run id means the same base, inputs, options and export time: a folder of
        // that name is this run, written by a sync stopped before it committed.
        if target.join(SYNC_REPORT).is_file() {
            std::fs::remove_dir_all(&target).map_err(|error| RunError::write(target.display().to_string(), error))?;
        }
        std::fs::rename(&staging, &target).map_err(|error| RunError::write(target.display().to_string(), error))?;
        sync_folder(&runs_folder);
        if let Some(root) = &remote_root {
            sync_upload::publish_run_tree(
                &output_root,
                root,
                &format!("{PARQUET_FOLDER}/{}", parquet_runs::RUNS_TABLE),
                !options.convert.settings.quiet,
            )?;
        }
        Ok(())
    })();
    // The store is in place (or the run failed): its writers go on.
    drop(store_hold);
    if let Err(error) = finish {
        store.rollback();
        let _ = std::fs::remove_dir_all(&staging);
        if dataset.is_dir() {
            let _ = parquet_runs::remove_uncommitted(&dataset, &committed);
        }
        return Err(error);
    }
    store.commit(&entry).map_err(state_error)?;
    Ok(report)
}

/// The conversion of one run into `staging` (the memory store into `memory_store`: a staged
/// copy, or a store in PostgreSQL), then the retractions.
fn run_into(
    options: &SyncOptions,
    store: &mut dyn StateStore,
    run_id: &str,
    full: bool,
    incremental: crate::sinks::Incremental,
    (staging, memory_store): (&Path, &Path),
    erasures_from: Option<&Path>,
) -> Result<RunDone, RunError> {
    let mut convert = options.convert.clone();
    convert.incremental = Some(incremental);
    convert.erasures_from.extend(erasures_from.map(Path::to_owned));
    convert.outputs = options
        .formats
        .iter()
        .map(|format| match format {
            OutputFormat::Store => (*format, memory_store.to_owned()),
            _ => (*format, staging.join(format.default_file_name())),
        })
        .collect();
    convert.report = None;
    convert.rejects = Some(staging.join("rejects.ndjson"));
    let mut delta = StateDelta::new(store, run_id.to_owned(), options.convert.exported_at, full);
    let report = run_with_delta(&convert, Some(&mut delta))?;
    let retractions = delta
        .retracted()
        .iter()
        .map(|retracted| Retraction {
            provider: retracted.provider.as_str(),
            conversation_id: retracted.conversation_id.clone(),
            title: retracted.title.clone(),
            retracted_by: retracted.retracted_by.clone(),
            message_ids: retracted.messages.clone(),
        })
        .collect();
    Ok(RunDone {
        report,
        conversations: delta.counts(),
        memories: delta.memory_counts(),
        retractions,
        no_retractions_because: delta.partial_inputs().to_vec(),
    })
}

/// What the conversion of a run did.
struct RunDone {
    report: RunReport,
    conversations: DeltaCounts,
    memories: MemoryDeltaCounts,
    retractions: Vec<Retraction>,
    no_retractions_because: Vec<String>,
}

/// An input as the run log records it.
#[derive(Debug, Serialize)]
struct InputRecord {
    path: String,
    checksum: String,
}

/// The run id: the export time, then a digest of everything that decides the run's outputs
/// (the base run, the options, the inputs' checksums). A rerun of a stopped sync gets the same.
fn run_id(exported_at: i64, base: Option<&str>, options_digest: &str, inputs: &[InputRecord]) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(base.unwrap_or("").as_bytes());
    hasher.update(&[0]);
    hasher.update(options_digest.as_bytes());
    for input in inputs {
        hasher.update(&[0]);
        hasher.update(input.checksum.as_bytes());
    }
    let time: String = format_rfc3339(exported_at).chars().filter(|character| character.is_ascii_alphanumeric()).collect();
    format!("{time}-{}", &hasher.finalize().to_hex()[..12])
}

/// The export id of a run's outputs (PAM `export_id`; a delta's `base_export_id` names its
/// base's): a UUID derived from the run id.
pub fn export_id(run_id: &str) -> String {
    crate::spec::ids::uuid_v4_shaped(&format!("memport-sync-run:{run_id}"))
}

/// The options that shape what a run writes, as JSON: a sync with other options writes
/// everything again (a delta would mix two shapes).
fn options_json(options: &SyncOptions) -> String {
    // Written by earlier versions into every state: the same settings must give the same text
    // (`the_options_digest_of_a_state_stays_what_earlier_versions_wrote`).
    let settings = &options.convert.settings;
    serde_json::json!({
        "formats": options.formats.iter().map(|format| format.name()).collect::<Vec<_>>(),
        "branches": format!("{:?}", settings.branches),
        "dedup": format!("{:?}", settings.dedup),
        "producer": settings.producer,
        "tenant": settings.tenant_id(),
        "owner_id": settings.owner_id,
        "partition_by_provider": settings.partition_by_provider(),
        "gap_minutes": settings.gap_minutes,
        "time_zone": format!("{:?}", settings.timezone),
        "extraction": format!("{:?}", settings.extraction()),
        "signed": options.convert.sign_key.is_some(),
    })
    .to_string()
}

fn options_digest(options: &SyncOptions) -> String {
    blake3::hash(options_json(options).as_bytes()).to_hex()[..16].to_owned()
}

/// Removes what stopped syncs left in `runs/`: staging folders, and run folders the state
/// never committed (a sync stopped between renaming its folder and committing). Returns
/// their names.
fn remove_leftovers(runs_folder: &Path, committed: &[&str]) -> Result<Vec<String>, RunError> {
    let mut removed = Vec::new();
    let entries = std::fs::read_dir(runs_folder).map_err(|error| RunError::read(runs_folder.display().to_string(), error))?;
    let mut names: Vec<String> = entries.filter_map(Result::ok).map(|entry| entry.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in names {
        let path = runs_folder.join(&name);
        let staging = name.starts_with('.') && name.ends_with(".partial");
        let uncommitted = !name.starts_with('.') && !committed.contains(&name.as_str()) && path.join(SYNC_REPORT).is_file();
        if path.is_dir() && (staging || uncommitted) {
            std::fs::remove_dir_all(&path).map_err(|error| RunError::write(path.display().to_string(), error))?;
            removed.push(name);
        }
    }
    Ok(removed)
}

fn write_retractions(path: &Path, retractions: &[Retraction]) -> Result<(), RunError> {
    let write = || -> std::io::Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
        for retraction in retractions {
            serde_json::to_writer(&mut file, retraction)?;
            file.write_all(b"\n")?;
        }
        file.into_inner().map_err(std::io::IntoInnerError::into_error)?.sync_all()
    };
    write().map_err(|error| RunError::write(path.display().to_string(), error))
}

/// Makes a rename in `folder` durable before the state says the run happened.
fn sync_folder(folder: &Path) {
    if let Ok(handle) = std::fs::File::open(folder) {
        let _ = handle.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards states written by earlier versions: a sync compares its options with the last
    /// run's by this text, so a change in it would make every user's next sync a full one.
    #[test]
    fn the_options_digest_of_a_state_stays_what_earlier_versions_wrote() {
        let options = SyncOptions {
            convert: crate::pipeline::Options::default(),
            formats: vec![OutputFormat::AimemNdjson, OutputFormat::Pam],
            state: PathBuf::from("state.db"),
            output_root: PathBuf::from("memory"),
            store: None,
        };
        assert_eq!(
            options_json(&options),
            r#"{"branches":"Active","dedup":"Content","extraction":"ExtractionSettings { extract: Some(ConsolidateOptions { min_confidence: 0.5, keep_personal: false }), redact_secrets: false }","formats":["aimem-ndjson","pam"],"gap_minutes":60,"owner_id":"local-user","partition_by_provider":false,"producer":"memport","signed":false,"tenant":"066fd77f-92e3-526a-ab8b-42f9569768b2","time_zone":"TimeZone { offset_seconds: 0, label: \"UTC\" }"}"#
        );
    }
}
