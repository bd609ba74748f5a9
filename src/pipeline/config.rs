//! Pipeline files (`memport run pipeline.toml`): plain data, parsed, then checked with every
//! problem reported at once, then turned into [`Options`].
//!
//! ```toml
//! version = 1
//! inputs = ["exports/chatgpt-export.zip"]
//! branches = "active"        # or "all"
//! dedup = "content"          # or "off"
//! gap_minutes = 60           # Gemini/Copilot: a longer pause starts a new conversation
//! timezone = "UTC"           # Copilot: the zone of its zoneless times, e.g. "+02:00"
//! max_record_size = "256M"   # larger conversations are skipped and rejected
//! extract = "rules"          # or "off": typed memories from what the user said
//! min_confidence = 0.5       # extracted memories below this are dropped (and counted)
//! extract_pii = "drop"       # or "keep": contact details, marked not exportable
//! redact = "none"            # or "secrets": mask API keys, passwords, card numbers in transcripts
//!
//! [[outputs]]
//! format = "aimem-ndjson"
//! path = "out/memory.aimem.ndjson"
//! ```
//! Relative paths are relative to the pipeline file's folder.
//!
//! A `[sync]` table instead of `[[outputs]]` makes the file a sync job (`memport sync` with
//! these inputs and options, from cron as `memport run sync.toml`):
//!
//! ```toml
//! [sync]
//! state = "state.db"                  # the sync's state file, or a postgres:// URL
//! output = "memory"                   # gets runs/<run-id>/
//! formats = ["aimem-ndjson", "pam"]
//! store = "postgres://…"              # optional, with "store" among the formats: the memory
//!                                     # store in PostgreSQL, instead of memory.db beside runs/
//! ```

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::ConfigError;
use crate::pipeline::{Options, Settings};
use crate::sinks::OutputFormat;
use crate::validate::input_file::{UTF16_ADVICE, special_file_kind, utf16_encoding};

/// A pipeline file as written: the entries that are there and of the right type. It is read
/// key by key ([`load`]), so that an unknown key or a value of the wrong type is one problem
/// among the others, not the only one reported.
#[derive(Debug, Clone)]
pub struct PipelineFile {
    /// Format version of the pipeline file; only 1 exists.
    pub version: u32,
    /// Inputs, read in order.
    pub inputs: Vec<PathBuf>,
    /// Outputs, all written from one read.
    pub outputs: Vec<OutputEntry>,
    /// Run report path.
    pub report: Option<PathBuf>,
    /// Rejects file path.
    pub rejects: Option<PathBuf>,
    /// How records are read and written: the command line's settings, by the same names
    /// (`_` for `-`), defaults for those not given.
    pub settings: Settings,
    /// The `[sync]` table: the file is a sync job.
    pub sync: Option<SyncTable>,
}

/// The `[sync]` table of a pipeline file.
#[derive(Debug, Clone, Default)]
pub struct SyncTable {
    /// The state file.
    pub state: Option<PathBuf>,
    /// The folder that gets `runs/<run-id>/`.
    pub output: Option<PathBuf>,
    /// Formats of each run, as `--to` names them.
    pub formats: Option<Vec<String>>,
    /// The memory store in PostgreSQL (`--store`).
    pub store: Option<PathBuf>,
}

/// The keys of the `[sync]` table.
const SYNC_KEYS: [&str; 4] = ["state", "output", "formats", "store"];

/// What a pipeline file asks for.
#[derive(Debug, Clone)]
pub enum Job {
    /// A conversion to its `[[outputs]]`.
    Convert(Options),
    /// A sync (its `[sync]` table); `options.outputs` is empty, as each run gets its own.
    Sync {
        /// Inputs and how they are read and written.
        options: Options,
        /// The state file.
        state: PathBuf,
        /// The folder that gets `runs/<run-id>/`.
        output: PathBuf,
        /// Formats of each run.
        formats: Vec<OutputFormat>,
        /// The memory store in PostgreSQL `store` loads each run into, as `sync --store` names it.
        store: Option<PathBuf>,
    },
}

/// The keys of a pipeline file that are not [`Settings`].
const FILE_KEYS: [&str; 6] = ["version", "inputs", "outputs", "report", "rejects", "sync"];

/// The command line's settings that a pipeline file does not take: the export time comes from
/// `memport run --exported-at`, and a run always says how it goes.
const COMMAND_LINE_ONLY: [&str; 2] = ["exported_at", "quiet"];

/// The settings a pipeline file takes, as the command line names them with `_` for `-`.
fn setting_keys() -> Vec<String> {
    Settings::augment_args(clap::Command::new("memport"))
        .get_arguments()
        .map(|argument| argument.get_id().as_str().to_owned())
        .filter(|id| !COMMAND_LINE_ONLY.contains(&id.as_str()))
        .collect()
}

/// One `[[outputs]]` table.
#[derive(Debug, Clone)]
pub struct OutputEntry {
    /// Where the table is among the file's `[[outputs]]`, from 0 (problems name it).
    pub position: usize,
    /// Format name as for `--to`.
    pub format: String,
    /// Output file.
    pub path: PathBuf,
}

/// The keys of an `[[outputs]]` table.
const OUTPUT_KEYS: [&str; 2] = ["format", "path"];

/// Loads and checks a pipeline file.
///
/// # Errors
/// [`ConfigError::Pipeline`] with every problem found, each naming its key: unknown keys,
/// values of the wrong type and values that cannot be used, all at once. A file that cannot be
/// read as TOML at all (not a regular file, empty, UTF-16, not UTF-8, a syntax error) is that
/// one problem. A sync job (a `[sync]` table) is refused: [`load_job`] reads both.
pub fn load(path: &Path, exported_at: i64) -> Result<Options, ConfigError> {
    match load_job(path, exported_at)? {
        Job::Convert(options) => Ok(options),
        Job::Sync { .. } => Err(ConfigError::Pipeline {
            path: path.to_owned(),
            reason: "this file is a sync job ([sync]); run it with `memport run`".to_owned(),
        }),
    }
}

/// Loads and checks a pipeline file: a conversion, or a sync job when it has a `[sync]` table.
///
/// # Errors
/// As [`load`], with the `[sync]` table's problems among the others.
pub fn load_job(path: &Path, exported_at: i64) -> Result<Job, ConfigError> {
    let pipeline_error = |reason: String| ConfigError::Pipeline { path: path.to_owned(), reason };
    let text = read_text(path).map_err(pipeline_error)?;
    let table: toml::Table = toml::from_str(&text).map_err(|error| pipeline_error(error.to_string()))?;
    let mut problems = Vec::new();
    let file = read_settings(table, &mut problems);
    let base = path.parent().unwrap_or(Path::new("."));
    let resolve = |relative: &Path| if relative.is_absolute() { relative.to_owned() } else { base.join(relative) };
    if file.version != 1 {
        problems.push(format!("version: {} is not supported (use 1)", file.version));
    }
    let mut outputs = Vec::new();
    for output in &file.outputs {
        match OutputFormat::parse(&output.format) {
            Ok(format) => outputs.push((format, resolve(&output.path))),
            Err(error) => problems.push(format!("outputs[{}].format: {error}", output.position)),
        }
    }
    let mut settings = file.settings;
    settings.sign_key = settings.sign_key.as_deref().map(resolve);
    let sign_key = match settings.sign_key.as_deref().map(crate::signing::SignKey::load).transpose() {
        Ok(key) => key,
        Err(error) => {
            problems.push(format!("sign_key: {error}"));
            None
        }
    };
    let options = Options {
        inputs: file.inputs.iter().map(|input| resolve(input)).collect(),
        supplied: None,
        // The pipeline file is read too: no output, report or rejects file may replace it.
        also_read: vec![path.to_owned()],
        outputs,
        report: file.report.as_deref().map(resolve),
        rejects: file.rejects.as_deref().map(resolve),
        exported_at,
        settings,
        sign_key,
        incremental: None,
        dna_only: false,
        erasures_from: Vec::new(),
        aimem_links: None,
        memories_apart: false,
        evidence_named: None,
    };
    let job = match file.sync {
        None => Job::Convert(options),
        Some(sync) => sync_job(options, &sync, &resolve, &mut problems),
    };
    let checked = match &job {
        Job::Convert(options) => options.validate(),
        // Checked as the outputs of a run into the output folder would be: never inside an
        // input, never the pipeline file.
        Job::Sync { options, output, formats, .. } => {
            let mut outputs = options.clone();
            outputs.outputs = formats.iter().map(|format| (*format, output.join(format.default_file_name()))).collect();
            if outputs.outputs.is_empty() { Ok(()) } else { outputs.validate() }
        }
    };
    if let Err(error) = checked {
        problems.push(error.to_string());
    }
    if problems.is_empty() { Ok(job) } else { Err(pipeline_error(problems.join("\n  "))) }
}

/// The sync job of a file with a `[sync]` table.
fn sync_job(options: Options, sync: &SyncTable, resolve: &dyn Fn(&Path) -> PathBuf, problems: &mut Vec<String>) -> Job {
    if options.report.is_some() || options.rejects.is_some() {
        problems.push("report, rejects: a sync writes its report (sync.json) and rejects into each run folder; leave them out".to_owned());
    }
    let mut formats = Vec::new();
    for name in sync.formats.iter().flatten() {
        match OutputFormat::parse(name) {
            Ok(format) if formats.contains(&format) => problems.push(format!("sync.formats: {name} is named twice")),
            Ok(format) => formats.push(format),
            Err(error) => problems.push(format!("sync.formats: {error}")),
        }
    }
    // A database URL (`postgres://…`) is not a path beside the pipeline file.
    let located = |path: &Path| if path.to_string_lossy().contains("://") { path.to_owned() } else { resolve(path) };
    Job::Sync {
        options,
        state: sync.state.as_deref().map(located).unwrap_or_default(),
        output: sync.output.as_deref().map(resolve).unwrap_or_default(),
        formats,
        store: sync.store.as_deref().map(located),
    }
}

/// The text of a pipeline file, or why it cannot be had: a device or a named pipe is refused
/// before it is opened (`/dev/zero` was read forever, a named pipe blocked the run), and a
/// UTF-16 file is named as such rather than as "not valid UTF-8".
fn read_text(path: &Path) -> Result<String, String> {
    if let Some(kind) = special_file_kind(path) {
        return Err(format!("is {kind}, not a regular file; a pipeline is a TOML file"));
    }
    let bytes = std::fs::read(path).map_err(|error| format!("{error}; check the path"))?;
    if utf16_encoding(&bytes).is_some() {
        return Err(UTF16_ADVICE.to_owned());
    }
    let text = String::from_utf8(bytes)
        .map_err(|error| format!("byte {} is not UTF-8; a pipeline file is UTF-8 text", error.utf8_error().valid_up_to()))?;
    if text.trim_start_matches('\u{feff}').trim().is_empty() {
        return Err("is empty: a pipeline file holds `version = 1`, its `inputs` and at least one [[outputs]] table".to_owned());
    }
    // TOML allows no byte-order mark; an editor may still write one.
    Ok(text.strip_prefix('\u{feff}').map(str::to_owned).unwrap_or(text))
}

/// Reads the settings of a parsed pipeline file key by key, adding a problem for each key it
/// does not know, each value of the wrong type (read as absent) and each setting that must be
/// there and is not. Reading the file into [`PipelineFile`] in one go stopped at the first
/// such problem, so the others (an unknown output format, say) went unreported.
fn read_settings(mut table: toml::Table, problems: &mut Vec<String>) -> PipelineFile {
    if !table.contains_key("version") {
        problems.push("version: missing; the file starts with `version = 1`".to_owned());
    }
    // Missing or of the wrong type, it was said; 1 keeps it from being said again.
    let version = take(&mut table, "version", problems).unwrap_or(1);
    let inputs_given = table.contains_key("inputs");
    let inputs: Option<Vec<PathBuf>> = take(&mut table, "inputs", problems);
    if inputs.as_ref().map_or(!inputs_given, Vec::is_empty) {
        problems.push("inputs: name at least one export".to_owned());
    }
    let sync = match table.remove("sync") {
        None => None,
        Some(toml::Value::Table(sync)) => Some(read_sync(sync, problems)),
        Some(other) => {
            problems.push(format!("sync: found {}, where a [sync] table belongs", other.type_str()));
            Some(SyncTable::default())
        }
    };
    let outputs: Vec<OutputEntry> = match table.remove("outputs") {
        Some(_) if sync.is_some() => {
            problems.push(
                "outputs: a sync writes each run into [sync] output's runs/ folder; name its formats in [sync] formats, not in [[outputs]]"
                    .to_owned(),
            );
            Vec::new()
        }
        Some(toml::Value::Array(tables)) if !tables.is_empty() => {
            tables.into_iter().enumerate().filter_map(|(position, output)| read_output(position, output, problems)).collect()
        }
        None if sync.is_some() => Vec::new(),
        None | Some(toml::Value::Array(_)) => {
            problems.push("outputs: add at least one [[outputs]] table (or a [sync] table)".to_owned());
            Vec::new()
        }
        Some(other) => {
            problems.push(format!("outputs: found {}, where [[outputs]] tables belong", other.type_str()));
            Vec::new()
        }
    };
    let report = take(&mut table, "report", problems);
    let rejects = take(&mut table, "rejects", problems);
    PipelineFile {
        version,
        inputs: inputs.unwrap_or_default(),
        outputs,
        report,
        rejects,
        settings: read_run_settings(table, problems),
        sync,
    }
}

/// The [`Settings`] among a pipeline file's keys (the file's own keys taken out), each key
/// read alone so that every unknown key and every unusable value is a problem of its own;
/// those read as absent take the default.
fn read_run_settings(table: toml::Table, problems: &mut Vec<String>) -> Settings {
    let keys = setting_keys();
    let all: Vec<&str> = FILE_KEYS.iter().copied().chain(keys.iter().map(String::as_str)).collect();
    let mut usable = toml::Table::new();
    for (key, value) in table {
        if !keys.contains(&key) {
            problems.push(format!("{key}: not a pipeline setting (the settings are {})", all.join(", ")));
            continue;
        }
        let alone = toml::Table::from_iter([(key.clone(), value.clone())]);
        match Settings::deserialize(alone) {
            Ok(_) => {
                usable.insert(key, value);
            }
            Err(error) => problems.push(format!("{key}: {}", error.message())),
        }
    }
    // Every value read alone, so they read together.
    Settings::deserialize(usable).unwrap_or_else(|error| {
        problems.push(error.message().to_owned());
        Settings::default()
    })
}

/// The `[sync]` table, with a problem for each key it does not know or lacks.
fn read_sync(mut table: toml::Table, problems: &mut Vec<String>) -> SyncTable {
    for key in table.keys().filter(|key| !SYNC_KEYS.contains(&key.as_str())) {
        problems.push(format!("sync.{key}: not a sync setting (the settings are {})", SYNC_KEYS.join(", ")));
    }
    let sync = SyncTable {
        state: take(&mut table, "state", problems),
        output: take(&mut table, "output", problems),
        formats: take(&mut table, "formats", problems),
        store: take(&mut table, "store", problems),
    };
    if sync.state.is_none() {
        problems.push("sync.state: missing; name the state file, like state = \"state.db\"".to_owned());
    }
    if sync.output.is_none() {
        problems.push("sync.output: missing; name the folder that gets runs/<run-id>/".to_owned());
    }
    if sync.formats.as_ref().is_none_or(Vec::is_empty) {
        problems.push("sync.formats: name at least one format, like formats = [\"aimem-ndjson\"]".to_owned());
    }
    sync
}

/// One `[[outputs]]` table, `None` (with its problems) when it lacks a usable `format` or
/// `path`.
fn read_output(position: usize, output: toml::Value, problems: &mut Vec<String>) -> Option<OutputEntry> {
    let mut table = match output {
        toml::Value::Table(table) => table,
        other => {
            problems.push(format!("outputs[{position}]: found {}, where a table with `format` and `path` belongs", other.type_str()));
            return None;
        }
    };
    for key in table.keys().filter(|key| !OUTPUT_KEYS.contains(&key.as_str())) {
        problems.push(format!("outputs[{position}].{key}: not an output setting (an output has `format` and `path`)"));
    }
    let mut required = |key: &str, what: &str| -> Option<toml::Value> {
        let value = table.remove(key);
        if value.is_none() {
            problems.push(format!("outputs[{position}].{key}: missing; give {what}"));
        }
        value
    };
    let format = required("format", "the format, as for --to");
    let path = required("path", "the file or folder to write");
    let format: Option<String> = format.and_then(|value| typed(value, &format!("outputs[{position}].format"), problems));
    let path: Option<PathBuf> = path.and_then(|value| typed(value, &format!("outputs[{position}].path"), problems));
    Some(OutputEntry { position, format: format?, path: path? })
}

/// Takes `key` out of `table` as a `T`: `None` when it is absent, or when it has another type
/// (a problem naming the key).
fn take<T: DeserializeOwned>(table: &mut toml::Table, key: &str, problems: &mut Vec<String>) -> Option<T> {
    typed(table.remove(key)?, key, problems)
}

/// `value` as a `T`, or `None` and a problem naming it as `name`.
fn typed<T: DeserializeOwned>(value: toml::Value, name: &str, problems: &mut Vec<String>) -> Option<T> {
    match <T as Deserialize>::deserialize(value) {
        Ok(typed) => Some(typed),
        Err(error) => {
            problems.push(format!("{name}: {}", error.message()));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_table_makes_a_sync_job_with_paths_beside_the_file() {
        let folder = tempfile::tempdir().unwrap();
        let export = folder.path().join("export.json");
        std::fs::write(&export, "[]").unwrap();
        let path = folder.path().join("sync.toml");
        std::fs::write(
            &path,
            "version = 1\ninputs = [\"export.json\"]\n[sync]\nstate = \"state.db\"\noutput = \"memory\"\nformats = [\"aimem-ndjson\", \"pam\"]\n",
        )
        .unwrap();
        match load_job(&path, 0).unwrap() {
            Job::Sync { options, state, output, formats, store } => {
                assert_eq!(options.inputs, vec![export.clone()]);
                assert!(options.outputs.is_empty());
                assert_eq!(state, folder.path().join("state.db"));
                assert_eq!(output, folder.path().join("memory"));
                assert_eq!(formats, vec![OutputFormat::AimemNdjson, OutputFormat::Pam]);
                assert_eq!(store, None);
            }
            Job::Convert(_) => panic!("a [sync] table makes a sync job"),
        }
        let error = load(&path, 0).unwrap_err().to_string();
        assert!(error.contains("sync job"), "{error}");

        // A store in PostgreSQL is named by its URL, which is not a path beside the file.
        let url = "postgres://me@db/memory?options=-csearch_path%3Dalice";
        std::fs::write(
            &path,
            format!("version = 1\ninputs = [\"export.json\"]\n[sync]\nstate = \"{url}\"\noutput = \"memory\"\nformats = [\"store\"]\nstore = \"{url}\"\n"),
        )
        .unwrap();
        match load_job(&path, 0).unwrap() {
            Job::Sync { state, store, .. } => assert_eq!((state, store), (PathBuf::from(url), Some(PathBuf::from(url)))),
            Job::Convert(_) => panic!("a [sync] table makes a sync job"),
        }
    }

    #[test]
    fn a_sync_table_with_outputs_or_without_its_settings_says_every_problem() {
        let error = load_error(
            b"version = 1\ninputs = [\"x.json\"]\nreport = \"r.json\"\n[[outputs]]\nformat = \"aimem\"\npath = \"o.json\"\n[sync]\nformats = [\"nope\"]\ncolour = 1\n",
        );
        for expected in [
            "outputs: a sync writes",
            "report, rejects",
            "sync.state: missing",
            "sync.output: missing",
            "sync.formats: ",
            "sync.colour: not a sync setting",
        ] {
            assert!(error.contains(expected), "{expected} missing from: {error}");
        }
    }

    /// Writes `text` as `pipeline.toml` in a new folder and loads it; returns the error.
    fn load_error(text: &[u8]) -> String {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("pipeline.toml");
        std::fs::write(&path, text).unwrap();
        load(&path, 0).err().map(|error| error.to_string()).unwrap_or_default()
    }

    const VALID: &str = "version = 1\ninputs = [\"export.zip\"]\n\n[[outputs]]\nformat = \"aimem\"\npath = \"out.aimem.json\"\n";

    /// Guards "every problem at once" for unknown keys and values of the wrong type: the file
    /// was read in one go, which stopped at the first such problem, so an unknown output
    /// format in the same file went unreported.
    #[test]
    fn unknown_keys_and_wrong_types_are_reported_with_every_other_problem() {
        let text = VALID.replace("version = 1\n", "version = 1\ncolour = \"blue\"\nthreads = \"many\"\n").replace("\"aimem\"", "\"docx\"");
        let error = load_error(text.as_bytes());
        for needle in [
            "colour: not a pipeline setting (the settings are version, inputs, outputs,",
            "threads: invalid type: string \"many\", expected usize",
            "outputs[0].format: option --to: unknown format `docx`",
        ] {
            assert!(error.contains(needle), "{needle} in {error}");
        }
        let text = format!("{VALID}\n[[outputs]]\nformat = 7\ncolor = 1\n\n[[outputs]]\nformat = \"docx\"\npath = \"x\"\n");
        let error = load_error(text.as_bytes());
        for needle in [
            "outputs[1].color: not an output setting",
            "outputs[1].path: missing",
            "outputs[1].format: invalid type: integer `7`, expected a string",
            "outputs[2].format: option --to: unknown format `docx`",
        ] {
            assert!(error.contains(needle), "{needle} in {error}");
        }
        assert!(load_error(b"inputs = [\"x\"]\n").contains("version: missing"));
    }

    /// Guards the pipeline file's own reading: a UTF-16 file was "not valid UTF-8", an empty
    /// one a missing `version`, and `/dev/zero` or a named pipe were read forever or blocked.
    #[test]
    fn a_pipeline_file_that_is_no_text_file_says_what_it_is() {
        let utf16: Vec<u8> = format!("\u{feff}{VALID}").encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert!(load_error(&utf16).ends_with(&format!("pipeline.toml: {UTF16_ADVICE}")));
        assert!(load_error(b" \n").contains("pipeline.toml: is empty"));
        let error = load(Path::new("/dev/zero"), 0).err().map(|error| error.to_string()).unwrap_or_default();
        assert_eq!(error, "pipeline /dev/zero: is a character device, not a regular file; a pipeline is a TOML file");
        let folder = tempfile::tempdir().unwrap();
        let pipe = folder.path().join("pipe.toml");
        if std::process::Command::new("mkfifo").arg(&pipe).status().is_ok_and(|status| status.success()) {
            let error = load(&pipe, 0).err().map(|error| error.to_string()).unwrap_or_default();
            assert!(error.ends_with("pipe.toml: is a named pipe (FIFO), not a regular file; a pipeline is a TOML file"), "{error}");
        }
    }

    #[test]
    fn a_pipeline_whose_output_is_its_own_input_is_refused_before_anything_is_written() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("chatgpt.json"), b"[]").unwrap();
        let pipeline = folder.path().join("pipeline.toml");
        std::fs::write(
            &pipeline,
            "version = 1\ninputs = [\"chatgpt.json\"]\nreport = \"chatgpt.json\"\n\n[[outputs]]\nformat = \"aimem\"\npath = \"chatgpt.json\"\n",
        )
        .unwrap();
        let error = load(&pipeline, 0).unwrap_err().to_string();
        let input = folder.path().join("chatgpt.json");
        assert!(error.contains(&format!("-o names the input {}; give the output another path", input.display())), "{error}");
        assert!(error.contains(&format!("--report names the input {}; give the report another path", input.display())), "{error}");
        assert_eq!(std::fs::read(&input).unwrap(), b"[]", "the input is untouched");
        let mut left: Vec<_> =
            std::fs::read_dir(folder.path()).unwrap().flatten().map(|entry| entry.file_name().to_string_lossy().into_owned()).collect();
        left.sort();
        assert_eq!(left, ["chatgpt.json", "pipeline.toml"], "nothing was created");
    }
}
