//! Runs a conversion: checks options, locks what it writes, plans inputs, builds stages and
//! sinks, executes the graph, assembles the run report, and only then puts the outputs, the
//! rejects file and the report in place.

pub mod config;
pub mod delta;
pub mod engine;
pub mod extraction;
pub mod inspect;
pub mod memories_preview;
pub mod rejects;
pub mod report;
pub mod settings;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::{ConfigError, RunError};
use crate::model::{Micros, Warnings};
use crate::outputs::guard::{Layout, OutputGuard, Placement};
use crate::outputs::paths as output_paths;
use crate::outputs::publish::{self, StagedOutput};
use crate::outputs::upload::{RemoteOutputs, Target};
use crate::sinks::aimem::AimemSettings;
use crate::sinks::{OutputFormat, SinkSettings};
use crate::sources::{self, DecodeOptions};
use crate::stages::erasures::{ErasedIds, Erasures};
use crate::stages::{Stage, dedup::Dedup, read_back::ReadBackLinks, unique_ids::UniqueIds};
use crate::timefmt::format_rfc3339;
use rejects::RejectsWriter;
use report::{InputSummary, OutputSummary, ReportedOptions, RunReport};
use tempfile::TempPath;

pub use settings::{DEFAULT_PRODUCER, DedupPolicy, Settings, default_tenant_id, default_threads};

/// Everything a conversion needs, checked by [`Options::validate`]: what to read and write,
/// and the [`Settings`] that say how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Inputs in the order they are read.
    pub inputs: Vec<PathBuf>,
    /// UMP records a caller hands over through memory, read after `inputs` (a store's
    /// export: see [`crate::sources::supplied`]).
    pub supplied: Option<crate::sources::supplied::SuppliedInput>,
    /// Other files the run reads and must never write (the pipeline file it came from).
    pub also_read: Vec<PathBuf>,
    /// Each format with its output path.
    pub outputs: Vec<(OutputFormat, PathBuf)>,
    /// Where to write the JSON run report.
    pub report: Option<PathBuf>,
    /// Where to write rejected records (NDJSON).
    pub rejects: Option<PathBuf>,
    /// The export time written to outputs (the command line takes `--exported-at`,
    /// `SOURCE_DATE_EPOCH` or now; the library reads no clock, and defaults to 1970-01-01).
    pub exported_at: Micros,
    /// How records are read and written, as the command line or a pipeline file gave them.
    pub settings: Settings,
    /// The key `settings.sign_key` names, loaded: signs PAM stores (§18) and UMP records.
    pub sign_key: Option<crate::signing::SignKey>,
    /// Set by a sync: its outputs are part of a series (export ids, a delta's base and since).
    pub incremental: Option<crate::sinks::Incremental>,
    /// The inputs hold only memories of a DNA class (a store's `DNA_ONLY` export, chosen by
    /// its caller): AIMEM says `scope: "DNA_ONLY"`.
    pub dna_only: bool,
    /// Memory stores whose erasures the run honours (`--erasures-from`, a sync's store),
    /// besides any store it loads into: what they erased is written to no output.
    pub erasures_from: Vec<PathBuf>,
    /// The chunk-entity links an AIMEM output will hold, known before the run (a store's
    /// export reads its memories first, [`crate::sinks::aimem::links_of`]): the output is
    /// hashed as it is written instead of read back and hashed at the end.
    pub aimem_links: Option<std::sync::Arc<[u8]>>,
    /// The input is memories read apart from the messages and memories they link to (a
    /// store's export reads its memories first): a read-back memory never waits for what it
    /// links to ([`ReadBackLinks::never_waiting`]).
    pub memories_apart: bool,
    /// The messages the input's memories name as evidence, known before the run (a store's
    /// export reads its memories first): the only messages keyed for their links
    /// ([`ReadBackLinks::knowing`]).
    pub evidence_named: Option<std::sync::Arc<crate::stages::read_back::NamedEvidence>>,
}

impl Options {
    /// Checks everything that can be checked before reading, and reports every problem at once.
    ///
    /// # Errors
    /// [`ConfigError::Options`] listing each problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut problems = Vec::new();
        if self.inputs.is_empty() && self.supplied.is_none() {
            problems.push("no input given: name an export zip, folder or conversations.json".to_owned());
        }
        if self.outputs.is_empty() {
            problems.push("no output format given (--to)".to_owned());
        }
        problems.extend(self.settings.problems());
        if self.sign_key.is_some() && !self.outputs.iter().any(|(format, _)| format.needs().signs) {
            problems.push("--sign-key signs PAM stores and UMP records, and no such format is among the outputs".to_owned());
        }
        // No output, report or rejects file may be an input, be inside an input folder or hold
        // an input, or be another of them: checked before anything is opened for writing.
        let read: Vec<PathBuf> = self.inputs.iter().chain(&self.also_read).cloned().collect();
        problems.extend(output_paths::problems(&read, &self.outputs, self.report.as_deref(), self.rejects.as_deref()));
        if problems.is_empty() { Ok(()) } else { Err(ConfigError::Options { problems }) }
    }
}

/// Runs one conversion end to end and returns its report (also written to `--report`).
///
/// # Errors
/// Config and I/O errors. Bad records never stop a run: they are counted and written to the
/// rejects file.
pub fn run(options: &Options) -> Result<RunReport, RunError> {
    let mut local = options.clone();
    let targets = local
        .outputs
        .iter_mut()
        .map(|(format, path)| Target { path, folder: format.is_folder() })
        .chain(local.rejects.iter_mut().map(|path| Target { path, folder: false }))
        .chain(local.report.iter_mut().map(|path| Target { path, folder: false }))
        .collect();
    // Outputs on object storage are written locally, then uploaded and published.
    let Some(remote) = RemoteOutputs::prepare(targets, !options.settings.quiet)? else {
        return run_with_delta(options, None);
    };
    let mut report = run_with_delta(&local, None)?;
    for output in &mut report.outputs {
        if let Some(url) = remote.url_of(Path::new(&output.path)) {
            output.path = url;
        }
    }
    // Written again, naming the objects.
    if let Some(path) = &local.report {
        let staged = report.write_staged(path)?;
        staged.persist(path).map_err(|error| RunError::write(path.display().to_string(), error.error))?;
    }
    remote.publish()?;
    Ok(report)
}

/// [`run`], with a sync's [`DeltaFilter`] deciding what is new: it sees the planned inputs
/// first, then every conversation read.
///
/// # Errors
/// As [`run`], and the filter's errors (its state cannot be read or written).
pub fn run_with_delta(options: &Options, delta: Option<&mut dyn delta::DeltaFilter>) -> Result<RunReport, RunError> {
    let started = Instant::now();
    options.validate()?;
    // An output memport may not replace stops the run before any work; checked again, under
    // the lock, when the output is published.
    // A memory store in PostgreSQL is loaded in place (its URL names no file to stage).
    let in_database = |path: &Path| crate::store::is_postgres_url(&path.to_string_lossy());
    for (format, path) in options.outputs.iter().filter(|(_, path)| !in_database(path)) {
        publish::check_target(*format, path)?;
    }
    // Declared before everything it guards, so it drops last: the staged outputs and temporary
    // files are gone by the time it removes its lock files and the folders the run created.
    let mut guard = OutputGuard::default();
    let mut layouts = Vec::with_capacity(options.outputs.len());
    for (format, path) in &options.outputs {
        if in_database(path) {
            layouts.push(None);
            continue;
        }
        let layout = Layout::of(path, publish::placement(*format))?;
        guard.hold(&layout)?;
        layouts.push(Some(layout));
    }
    for path in options.report.iter().chain(options.rejects.iter()) {
        guard.hold(&Layout::of(path, Placement::Beside)?)?;
    }
    let settings = &options.settings;
    let source = settings.source_options();
    let extraction_settings = settings.extraction();
    let threads = settings.threads();
    let mut plans = Vec::with_capacity(options.inputs.len());
    for input in &options.inputs {
        plans.push(sources::plan_input(input, &source)?);
    }
    plans.extend(options.supplied.as_ref().map(sources::formats::plan_supplied_ump));
    let mut warnings = Warnings::default();
    let mut notes = Vec::new();
    let inputs: Vec<InputSummary> = plans.iter().map(input_summary).collect();
    let delta = match delta {
        Some(filter) => {
            let index = filter.prepare(&plans)?;
            Some(delta::DeltaStage::new(filter, index))
        }
        None => None,
    };
    for plan in &plans {
        warnings.merge(&plan.warnings);
        notes.extend(plan.notes.iter().cloned());
    }
    notes.extend(guard.notes().iter().cloned());
    let total_bytes: u64 = plans.iter().flat_map(|plan| plan.streams.iter()).map(|stream| stream.entry.size).sum();
    let progress = make_progress(!settings.quiet, total_bytes);
    let sink_settings = SinkSettings {
        aimem: AimemSettings {
            producer: settings.producer.clone(),
            tenant_id: settings.tenant_id(),
            exported_at: options.exported_at,
            links_expected: extraction_settings.extract.is_some(),
            since: options.incremental.as_ref().and_then(|incremental| incremental.since),
            dna_only: options.dna_only,
            predicted_links: options.aimem_links.clone(),
        },
        partition_by_provider: settings.partition_by_provider(),
        owner_id: settings.owner_id.clone(),
        sign_key: options.sign_key.clone(),
        mif_vendor_extensions: carried_vendor_extensions(&plans),
        incremental: options.incremental.clone(),
    };
    // Each sink builds its output in a staging folder; the outputs are published only after
    // the report is written (see `publish_run`).
    let mut staged = Vec::with_capacity(options.outputs.len());
    let mut sinks = Vec::with_capacity(options.outputs.len());
    for ((format, path), layout) in options.outputs.iter().zip(&layouts) {
        let (output, sink) = match layout {
            Some(layout) => StagedOutput::build(*format, layout, &sink_settings)?,
            None => StagedOutput::in_database(*format, path, &sink_settings)?,
        };
        staged.push(output);
        sinks.push(sink);
    }
    let mut stages: Vec<Box<dyn Stage + '_>> = vec![Box::new(UniqueIds::default())];
    let erased = erased_in_stores(&options.outputs, &options.erasures_from)?;
    if !erased.is_empty() {
        notes.push(format!("{} records erased in the memory store are left out of every output (counted as `erased`)", erased.len()));
        // Before extraction's step on the workers: nothing is extracted from an erased message.
        stages.push(Box::new(Erasures::new(erased)));
    }
    if settings.dedup == DedupPolicy::Content {
        stages.push(Box::new(Dedup::default()));
    }
    if let Some(delta) = delta {
        stages.push(Box::new(delta));
    }
    // After every stage that decides what is written, before extraction's.
    if plans.iter().any(|plan| matches!(plan.format, Some("ump" | "pam" | "aimem"))) {
        stages.push(Box::new(match &options.evidence_named {
            _ if options.memories_apart => ReadBackLinks::never_waiting(),
            Some(named) => ReadBackLinks::knowing(named.clone()),
            None => ReadBackLinks::default(),
        }));
    }
    if extraction_settings.extract.is_some() || extraction_settings.redact_secrets {
        stages.push(Box::new(extraction::ExtractionStage::new(extraction_settings)?));
    }
    let (rejects, rejects_file) = match options.rejects.as_deref() {
        Some(path) => {
            let (writer, file) = RejectsWriter::create_staged(path)?;
            (writer, Some(file))
        }
        None => (RejectsWriter::create(None)?, None),
    };
    let decode_options = DecodeOptions {
        branches: settings.branches,
        exported_at: options.exported_at,
        // Only the formats that keep everything pay for the provider fields.
        keep_provider_fields: options.outputs.iter().any(|(format, _)| format.needs().provider_fields),
        dedup_keys: settings.dedup == DedupPolicy::Content,
        // Most outputs hash what they write themselves; the digests are for those that do not.
        pam_digests: options.outputs.iter().any(|(format, _)| format.needs().pam_digests),
    };
    let result = engine::execute(
        engine::Reading { plans, decode: decode_options, element_limit: source.max_record_bytes },
        threads,
        stages,
        sinks,
        rejects,
        progress,
    )?;
    warnings.merge(&result.warnings);
    notes.extend(result.notes);
    debug_assert!(result.counts.balances(), "counts must balance: {:?}", result.counts);
    let mut report = RunReport {
        memport_version: env!("CARGO_PKG_VERSION"),
        inputs,
        counts: result.counts,
        outputs: result
            .outputs
            .into_iter()
            .map(|summary| OutputSummary { format: summary.format, path: summary.path, records: summary.records, bytes: summary.bytes })
            .collect(),
        warnings: Default::default(),
        notes,
        options: ReportedOptions {
            threads,
            exported_at: format_rfc3339(options.exported_at),
            tenant: settings.tenant_id(),
            settings: settings.clone(),
        },
        rejects: result.rejects,
        memories_extracted: result.memories,
        secrets_redacted: result.redacted,
        elapsed_seconds: 0.0,
    };
    debug_assert!(report.memories_extracted.as_ref().is_none_or(|counts| counts.balances()), "memory counts must balance");
    report.set_warnings(&warnings);
    report.elapsed_seconds = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    let rejects_file = rejects_file.zip(options.rejects.as_deref());
    publish_run(&report, options.report.as_deref(), staged, rejects_file)?;
    // Published: the folders the run created hold its outputs now.
    guard.keep_folders();
    Ok(report)
}

/// Puts a finished run's files in place, in the order that keeps a failure from leaving new
/// outputs beside no report: the report is written (to a temporary file) first, and a report
/// that cannot be written stops the run with no output replaced; then the outputs are
/// published; then the rejects file and the report are renamed into place, the report last,
/// so a report in place says its outputs are.
///
/// # Errors
/// I/O errors writing the report, publishing an output or renaming the report or rejects file.
fn publish_run(
    report: &RunReport,
    report_path: Option<&Path>,
    staged: Vec<StagedOutput>,
    rejects_file: Option<(TempPath, &Path)>,
) -> Result<(), RunError> {
    let report_file = report_path.map(|path| report.write_staged(path).map(|file| (file, path))).transpose()?;
    for output in staged {
        output.publish()?;
    }
    if let Some((file, path)) = rejects_file {
        file.persist(path).map_err(|error| RunError::write(path.display().to_string(), error.error))?;
    }
    if let Some((file, path)) = report_file {
        file.persist(path).map_err(|error| RunError::write(path.display().to_string(), error.error))?;
    }
    Ok(())
}

/// Other systems' MIF `vendor_extensions` of every input; the first input that names a system
/// wins.
fn carried_vendor_extensions(plans: &[sources::InputPlan]) -> Vec<(String, serde_json::Value)> {
    let mut carried: Vec<(String, serde_json::Value)> = Vec::new();
    for (system, value) in plans.iter().flat_map(|plan| plan.carried.mif_vendor_extensions.iter()) {
        if !carried.iter().any(|(known, _)| known == system) {
            carried.push((system.clone(), value.clone()));
        }
    }
    carried
}

/// What the report says of one planned input.
fn input_summary(plan: &sources::InputPlan) -> InputSummary {
    InputSummary {
        path: plan.path.clone(),
        provider: plan.format.unwrap_or(plan.provider.as_str()),
        layout: plan.layout.clone(),
        bytes: plan.bytes_on_disk,
        files: {
            // A PAM store is read in two passes over its memory-store.json; name it once.
            let mut files: Vec<String> = plan.streams.iter().map(|stream| stream.entry.name.clone()).collect();
            files.dedup();
            files
        },
    }
}

fn make_progress(wanted: bool, total_bytes: u64) -> ProgressBar {
    if !wanted || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The records erased for good in the memory stores the run loads into (`--to store` at a path
/// that holds one already, or a sync's copy of its store) and in `erasures_from`: what the
/// owner erased there stays out of every output of the run.
///
/// # Errors
/// [`RunError::Write`] when a store there cannot be read.
fn erased_in_stores(outputs: &[(OutputFormat, PathBuf)], erasures_from: &[PathBuf]) -> Result<ErasedIds, RunError> {
    type Erased = (std::collections::HashSet<String>, Vec<crate::model::ErasedMessage>);
    let read = |path: &Path| -> Result<Erased, crate::store::StoreError> {
        let store = crate::store::Store::open(path, false)?;
        Ok((store.erased_ids()?, store.erased_messages()?))
    };
    let (mut erased, mut messages) = (std::collections::HashSet::new(), Vec::new());
    let store_there = |path: &Path| path.is_file() || crate::store::is_postgres_url(&path.to_string_lossy());
    for (_, path) in outputs.iter().filter(|(format, path)| *format == OutputFormat::Store && store_there(path)) {
        let ids = match read(path) {
            // A database without a store yet: the run makes it.
            Err(crate::store::StoreError::NotAStore) if !path.is_file() => continue,
            read => read.map_err(|error| {
                RunError::write(crate::store::shown_location(path), std::io::Error::other(format!("reading its erasures: {error}")))
            })?,
        };
        erased.extend(ids.0);
        messages.extend(ids.1);
    }
    for path in erasures_from {
        let ids = read(path).map_err(|error| ConfigError::Input {
            path: path.clone(),
            reason: format!(
                "is a memory store whose erasures this run honours, but cannot be read: {error} \
                 (a store made with `--to store`; wait for a writer holding it, or check the file)"
            ),
        })?;
        erased.extend(ids.0);
        messages.extend(ids.1);
    }
    Ok(ErasedIds::with_messages(erased, messages))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::output_file::tests::names_in;

    fn example_options(out: &Path) -> Options {
        Options {
            inputs: vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples").join("chatgpt-small")],
            outputs: vec![(OutputFormat::AimemNdjson, out.join("memory.aimem.ndjson"))],
            report: Some(out.join("run.json")),
            rejects: Some(out.join("rejects.ndjson")),
            settings: Settings { threads: Some(1), quiet: true, extract: settings::Extractor::Off, ..Settings::default() },
            ..Options::default()
        }
    }

    fn empty_report() -> RunReport {
        RunReport {
            memport_version: env!("CARGO_PKG_VERSION"),
            inputs: Vec::new(),
            counts: report::Counts::new(),
            outputs: Vec::new(),
            warnings: Default::default(),
            notes: Vec::new(),
            options: ReportedOptions {
                threads: 1,
                exported_at: format_rfc3339(0),
                tenant: default_tenant_id(DEFAULT_PRODUCER),
                settings: Settings::default(),
            },
            rejects: 0,
            memories_extracted: None,
            secrets_redacted: Default::default(),
            elapsed_seconds: 0.0,
        }
    }

    #[test]
    fn a_report_that_cannot_be_written_leaves_no_new_output_in_place() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("memory.mif.json");
        std::fs::write(&target, b"the previous run's").unwrap();
        let layout = Layout::of(&target, publish::placement(OutputFormat::Mif)).unwrap();
        let (staged, sink) = StagedOutput::build(OutputFormat::Mif, &layout, &SinkSettings::for_tests()).unwrap();
        sink.finish().unwrap();
        // A file where the report's folder would be: the report cannot be written.
        std::fs::write(folder.path().join("blocked"), b"").unwrap();
        let report_path = folder.path().join("blocked").join("run.json");
        let error = publish_run(&empty_report(), Some(&report_path), vec![staged], None).unwrap_err();
        assert!(error.to_string().contains("run.json"), "{error}");
        assert_eq!(std::fs::read(&target).unwrap(), b"the previous run's", "the old output stays");
        assert_eq!(names_in(folder.path()), ["blocked", "memory.mif.json"], "the staged output is gone");
    }

    #[test]
    fn publishing_puts_outputs_then_rejects_and_report_in_place() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("memory.mif.json");
        let layout = Layout::of(&target, publish::placement(OutputFormat::Mif)).unwrap();
        let (staged, sink) = StagedOutput::build(OutputFormat::Mif, &layout, &SinkSettings::for_tests()).unwrap();
        sink.finish().unwrap();
        let rejects_path = folder.path().join("rejects.ndjson");
        let (writer, rejects_file) = RejectsWriter::create_staged(&rejects_path).unwrap();
        writer.finish().unwrap();
        let report_path = folder.path().join("run.json");
        publish_run(&empty_report(), Some(&report_path), vec![staged], Some((rejects_file, &rejects_path))).unwrap();
        assert_eq!(names_in(folder.path()), ["memory.mif.json", "rejects.ndjson", "run.json"]);
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();
        assert_eq!(report["rejects"], 0);
    }

    #[test]
    fn a_run_on_an_output_another_run_holds_stops_at_once() {
        let out = tempfile::tempdir().unwrap();
        let options = example_options(out.path());
        let mut other_run = OutputGuard::default();
        other_run.hold(&Layout::of(&options.outputs[0].1, Placement::Beside).unwrap()).unwrap();
        let error = run(&options).unwrap_err();
        assert!(matches!(error, RunError::Busy { .. }), "{error}");
        assert_eq!(names_in(out.path()), [".memport-memory.aimem.ndjson.lock"], "only the other run's lock file");
        drop(other_run);
        run(&options).unwrap();
        assert_eq!(
            names_in(out.path()),
            ["memory.aimem.ndjson", "rejects.ndjson", "run.json"],
            "no lock, staging or temporary file is left"
        );
    }

    #[test]
    fn a_failed_run_removes_the_folders_it_created() {
        let folder = tempfile::tempdir().unwrap();
        let mut options = example_options(&folder.path().join("new").join("out"));
        options.inputs = vec![folder.path().join("missing.json")];
        assert!(run(&options).is_err(), "a missing input stops the run");
        assert!(names_in(folder.path()).is_empty(), "{:?}", names_in(folder.path()));
    }

    #[test]
    fn a_report_naming_the_input_stops_the_run_before_anything_is_written() {
        let out = tempfile::tempdir().unwrap();
        let input = out.path().join("chatgpt.json");
        std::fs::write(&input, b"[]").unwrap();
        let mut options = example_options(out.path());
        options.inputs = vec![input.clone()];
        options.report = Some(input.clone());
        let error = run(&options).unwrap_err();
        assert!(matches!(error, RunError::Config(ConfigError::Options { .. })), "{error}");
        assert!(
            error.to_string().contains(&format!("--report names the input {}; give the report another path", input.display())),
            "{error}"
        );
        assert_eq!(std::fs::read(&input).unwrap(), b"[]");
        assert_eq!(names_in(out.path()), ["chatgpt.json"]);
    }
}
