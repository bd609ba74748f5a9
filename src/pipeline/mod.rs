//! Runs a conversion: checks options, plans inputs, builds stages and sinks, executes the graph
//! and assembles the run report.

pub mod config;
pub mod engine;
pub mod extraction;
pub mod memories_preview;
pub mod rejects;
pub mod report;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::{ConfigError, RunError};
use crate::model::{Micros, Warnings};
use crate::sinks::aimem::AimemSettings;
use crate::sinks::{self, OutputFormat, SinkSettings};
use crate::sources::{self, BranchPolicy, DecodeOptions, SourceOptions};
use crate::stages::{Stage, dedup::Dedup, unique_ids::UniqueIds};
use crate::timefmt::format_rfc3339;
use rejects::RejectsWriter;
use report::{InputSummary, OptionsSummary, OutputSummary, RunReport};

/// Whether duplicate messages are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DedupPolicy {
    /// By PAM content hash; the first occurrence in input order wins.
    #[default]
    Content,
    /// Keep every message.
    Off,
}

/// Everything a conversion needs, checked by [`Options::validate`].
#[derive(Debug, Clone)]
pub struct Options {
    /// Inputs in the order they are read.
    pub inputs: Vec<PathBuf>,
    /// Each format with its output path.
    pub outputs: Vec<(OutputFormat, PathBuf)>,
    /// Decode threads.
    pub threads: usize,
    /// Where to write the JSON run report.
    pub report: Option<PathBuf>,
    /// Where to write rejected records (NDJSON).
    pub rejects: Option<PathBuf>,
    /// The export time written to outputs.
    pub exported_at: Micros,
    /// AIMEM producer namespace.
    pub producer: String,
    /// AIMEM tenant id.
    pub tenant_id: String,
    /// Dedup policy.
    pub dedup: DedupPolicy,
    /// Branch policy.
    pub branches: BranchPolicy,
    /// How sources without conversation ids or zones are read (gap, time zone).
    pub source: SourceOptions,
    /// Parquet: write `provider=<name>` partition folders.
    pub partition_by_provider: bool,
    /// PAM: `owner.id` of the store.
    pub owner_id: String,
    /// Signs PAM stores (§18) and UMP records (integrity) when given.
    pub sign_key: Option<crate::signing::SignKey>,
    /// Draw a progress bar (only when stderr is a terminal).
    pub progress: bool,
    /// Memory extraction and secret masking (`--extract`, `--min-confidence`,
    /// `--extract-pii`, `--redact`).
    pub extraction: extraction::ExtractionSettings,
}

/// Default worker count: every core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map(usize::from).unwrap_or(1)
}

/// The tenant id used when none is given: a UUID derived from the producer, so runs repeat.
pub fn default_tenant_id(producer: &str) -> String {
    crate::spec::ids::uuid_v5_shaped(&format!("memport-tenant:{producer}"))
}

impl Options {
    /// Checks everything that can be checked before reading, and reports every problem at once.
    ///
    /// # Errors
    /// [`ConfigError::Option`] listing each problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut problems = Vec::new();
        if self.inputs.is_empty() {
            problems.push("no input given: name an export zip, folder or conversations.json".to_owned());
        }
        if self.outputs.is_empty() {
            problems.push("no output format given (--to)".to_owned());
        }
        if self.threads == 0 {
            problems.push("--threads must be at least 1".to_owned());
        }
        if let Err(error) = crate::spec::aimem::check_producer(&self.producer) {
            problems.push(error.to_string());
        }
        if self.sign_key.is_some() && !self.outputs.iter().any(|(format, _)| format.needs().signs) {
            problems.push("--sign-key signs PAM stores and UMP records, and no such format is among the outputs".to_owned());
        }
        if self.owner_id.trim().is_empty() {
            problems.push("--owner-id must not be empty".to_owned());
        }
        if self.tenant_id.trim().is_empty() {
            problems.push("--tenant must not be empty".to_owned());
        }
        let mut seen = std::collections::BTreeSet::new();
        for (_, path) in &self.outputs {
            if !seen.insert(path) {
                problems.push(format!("two formats would write to {}", path.display()));
            }
        }
        if problems.is_empty() { Ok(()) } else { Err(ConfigError::Option { option: "convert".into(), reason: problems.join("; ") }) }
    }
}

/// Runs one conversion end to end and returns its report (also written to `--report`).
///
/// # Errors
/// Config and I/O errors. Bad records never stop a run: they are counted and written to the
/// rejects file.
pub fn run(options: &Options) -> Result<RunReport, RunError> {
    let started = Instant::now();
    options.validate()?;
    let mut plans = Vec::with_capacity(options.inputs.len());
    for input in &options.inputs {
        plans.push(sources::plan_input(input, &options.source)?);
    }
    let mut warnings = Warnings::default();
    let mut notes = Vec::new();
    let inputs: Vec<InputSummary> = plans
        .iter()
        .map(|plan| InputSummary {
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
        })
        .collect();
    for plan in &plans {
        warnings.merge(&plan.warnings);
        notes.extend(plan.notes.iter().cloned());
    }
    let total_bytes: u64 = plans.iter().flat_map(|plan| plan.streams.iter()).map(|stream| stream.entry.size).sum();
    let progress = make_progress(options.progress, total_bytes);
    let settings = SinkSettings {
        aimem: AimemSettings {
            producer: options.producer.clone(),
            tenant_id: options.tenant_id.clone(),
            exported_at: options.exported_at,
            links_expected: options.extraction.extract.is_some(),
        },
        partition_by_provider: options.partition_by_provider,
        owner_id: options.owner_id.clone(),
        sign_key: options.sign_key.clone(),
        mif_vendor_extensions: carried_vendor_extensions(&plans),
    };
    let mut sinks = Vec::with_capacity(options.outputs.len());
    for (format, path) in &options.outputs {
        sinks.push(sinks::build(*format, path, &settings)?);
    }
    let mut stages: Vec<Box<dyn Stage>> = vec![Box::new(UniqueIds::default())];
    if options.dedup == DedupPolicy::Content {
        stages.push(Box::new(Dedup::default()));
    }
    let rejects = RejectsWriter::create(options.rejects.as_deref())?;
    let decode_options = DecodeOptions {
        branches: options.branches,
        exported_at: options.exported_at,
        // Only the formats that keep everything pay for the provider fields.
        keep_provider_fields: options.outputs.iter().any(|(format, _)| format.needs().provider_fields),
        dedup_keys: options.dedup == DedupPolicy::Content,
        // Most outputs hash what they write themselves; the digests are for those that do not.
        pam_digests: options.outputs.iter().any(|(format, _)| format.needs().pam_digests),
    };
    let result = engine::execute(plans, decode_options, options.threads, options.extraction, stages, sinks, rejects, progress)?;
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
        options: OptionsSummary {
            branches: match options.branches {
                BranchPolicy::Active => "active",
                BranchPolicy::All => "all",
            },
            dedup: match options.dedup {
                DedupPolicy::Content => "content",
                DedupPolicy::Off => "off",
            },
            threads: options.threads,
            exported_at: format_rfc3339(options.exported_at),
            producer: options.producer.clone(),
            extract: if options.extraction.extract.is_some() { "rules" } else { "off" },
            min_confidence: options.extraction.extract.map(|extract| (f64::from(extract.min_confidence) * 1000.0).round() / 1000.0),
            extract_pii: match options.extraction.extract {
                Some(extract) if extract.keep_personal => "keep",
                _ => "drop",
            },
            redact: if options.extraction.redact_secrets { "secrets" } else { "none" },
        },
        rejects: result.rejects,
        memories_extracted: result.memories,
        secrets_redacted: result.redacted,
        elapsed_seconds: 0.0,
    };
    debug_assert!(report.memories_extracted.as_ref().is_none_or(|counts| counts.balances()), "memory counts must balance");
    report.set_warnings(&warnings);
    report.elapsed_seconds = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    if let Some(path) = &options.report {
        let mut text = serde_json::to_vec_pretty(&report).map_err(|error| RunError::write(path.display().to_string(), error.into()))?;
        text.push(b'\n');
        std::fs::write(path, text).map_err(|error| RunError::write(path.display().to_string(), error))?;
    }
    Ok(report)
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
