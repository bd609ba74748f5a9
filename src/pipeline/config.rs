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

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::ConfigError;
use crate::pipeline::extraction::ExtractionSettings;
use crate::pipeline::{DedupPolicy, Options, default_tenant_id, default_threads};
use crate::sinks::OutputFormat;
use crate::sources::{BranchPolicy, SourceOptions, TimeZone};
use crate::stages::extract::consolidate::{ConsolidateOptions, DEFAULT_MIN_CONFIDENCE};

/// Default pause, in minutes, that starts a new conversation in exports without ids.
pub const DEFAULT_GAP_MINUTES: u64 = 60;

/// PAM `owner.id` when none is given.
pub const DEFAULT_OWNER_ID: &str = "local-user";

/// Builds the source options from `--gap-minutes` and `--timezone`.
///
/// # Errors
/// [`ConfigError::Option`] for a zero gap or a zone that is not a fixed offset.
pub fn parse_source_options(gap_minutes: u64, timezone: &str) -> Result<SourceOptions, ConfigError> {
    if gap_minutes == 0 || gap_minutes > 525_600 {
        return Err(ConfigError::Option {
            option: "gap-minutes".into(),
            reason: format!("{gap_minutes} is out of range; give 1 to 525600 minutes"),
        });
    }
    let time_zone = TimeZone::parse(timezone).map_err(|reason| ConfigError::Option { option: "timezone".into(), reason })?;
    Ok(SourceOptions { gap: gap_minutes as i64 * 60 * 1_000_000, time_zone })
}

/// A pipeline file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineFile {
    /// Format version of the pipeline file; only 1 exists.
    pub version: u32,
    /// Inputs, read in order.
    pub inputs: Vec<PathBuf>,
    /// Outputs, all written from one read.
    pub outputs: Vec<OutputEntry>,
    /// `active` (default) or `all`.
    pub branches: Option<String>,
    /// `content` (default) or `off`.
    pub dedup: Option<String>,
    /// AIMEM producer namespace (default `memport`).
    pub producer: Option<String>,
    /// AIMEM tenant id.
    pub tenant: Option<String>,
    /// Run report path.
    pub report: Option<PathBuf>,
    /// Rejects file path.
    pub rejects: Option<PathBuf>,
    /// Decode threads (default: every core).
    pub threads: Option<usize>,
    /// Minutes of pause that start a new conversation where an export has no ids (default 60).
    pub gap_minutes: Option<u64>,
    /// Zone of zoneless times (default UTC).
    pub timezone: Option<String>,
    /// Parquet partitioning: `provider` or `none` (default).
    pub partition_by: Option<String>,
    /// PAM store owner id (default `local-user`).
    pub owner_id: Option<String>,
    /// Ed25519 key that signs PAM and UMP output.
    pub sign_key: Option<PathBuf>,
    /// `rules` (default) or `off`.
    pub extract: Option<String>,
    /// Confidence floor of extracted memories, 0 to 1 (default 0.5).
    pub min_confidence: Option<f32>,
    /// `drop` (default) or `keep`: extracted contact details.
    pub extract_pii: Option<String>,
    /// `none` (default) or `secrets`.
    pub redact: Option<String>,
}

/// One `[[outputs]]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputEntry {
    /// Format name as for `--to`.
    pub format: String,
    /// Output file.
    pub path: PathBuf,
}

/// Builds the extraction settings from `--extract`, `--min-confidence`, `--extract-pii` and
/// `--redact`.
///
/// # Errors
/// [`ConfigError::Option`] naming the option and its valid values.
pub fn parse_extraction(extract: &str, min_confidence: f32, extract_pii: &str, redact: &str) -> Result<ExtractionSettings, ConfigError> {
    let problem = |option: &str, reason: String| ConfigError::Option { option: option.into(), reason };
    if !(0.0..=1.0).contains(&min_confidence) {
        return Err(problem("min-confidence", format!("{min_confidence} is out of range; give a number from 0 to 1, such as 0.5")));
    }
    let keep_personal = match extract_pii {
        "drop" => false,
        "keep" => true,
        other => return Err(problem("extract-pii", format!("`{other}` is not a policy (use `drop` or `keep`)"))),
    };
    let extract = match extract {
        "rules" => Some(ConsolidateOptions { min_confidence, keep_personal }),
        "off" => None,
        other => return Err(problem("extract", format!("`{other}` is not an extractor (use `rules` or `off`)"))),
    };
    let redact_secrets = match redact {
        "none" => false,
        "secrets" => true,
        other => return Err(problem("redact", format!("`{other}` is not a redaction (use `secrets` or `none`)"))),
    };
    Ok(ExtractionSettings { extract, redact_secrets })
}

/// Parses branch policy names.
///
/// # Errors
/// [`ConfigError::Option`] naming the valid values.
pub fn parse_branches(value: &str) -> Result<BranchPolicy, ConfigError> {
    match value {
        "active" => Ok(BranchPolicy::Active),
        "all" => Ok(BranchPolicy::All),
        other => Err(ConfigError::Option {
            option: "branches".into(),
            reason: format!("`{other}` is not a branch policy (use `active` or `all`)"),
        }),
    }
}

/// Parses dedup policy names.
///
/// # Errors
/// [`ConfigError::Option`] naming the valid values.
pub fn parse_dedup(value: &str) -> Result<DedupPolicy, ConfigError> {
    match value {
        "content" => Ok(DedupPolicy::Content),
        "off" => Ok(DedupPolicy::Off),
        other => {
            Err(ConfigError::Option { option: "dedup".into(), reason: format!("`{other}` is not a dedup policy (use `content` or `off`)") })
        }
    }
}

/// Parses `--partition-by`: `provider` gives Hive-style provider folders, `none` one folder per
/// table. Returns whether to partition by provider.
///
/// # Errors
/// [`ConfigError::Option`] naming the valid values.
pub fn parse_partition_by(value: &str) -> Result<bool, ConfigError> {
    match value {
        "provider" => Ok(true),
        "none" => Ok(false),
        other => Err(ConfigError::Option {
            option: "partition-by".into(),
            reason: format!("`{other}` is not a partitioning (use `provider` or `none`)"),
        }),
    }
}

/// Loads and checks a pipeline file.
///
/// # Errors
/// [`ConfigError::Pipeline`] with every problem found, each naming its key.
pub fn load(path: &Path, exported_at: i64) -> Result<Options, ConfigError> {
    let pipeline_error = |reason: String| ConfigError::Pipeline { path: path.to_owned(), reason };
    let text = std::fs::read_to_string(path).map_err(|error| pipeline_error(format!("{error}; check the path")))?;
    let file: PipelineFile = toml::from_str(&text).map_err(|error| pipeline_error(error.to_string()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let resolve = |relative: &Path| if relative.is_absolute() { relative.to_owned() } else { base.join(relative) };
    let mut problems = Vec::new();
    if file.version != 1 {
        problems.push(format!("version: {} is not supported (use 1)", file.version));
    }
    if file.inputs.is_empty() {
        problems.push("inputs: name at least one export".to_owned());
    }
    if file.outputs.is_empty() {
        problems.push("outputs: add at least one [[outputs]] table".to_owned());
    }
    let mut outputs = Vec::new();
    for (position, output) in file.outputs.iter().enumerate() {
        match OutputFormat::parse(&output.format) {
            Ok(format) => outputs.push((format, resolve(&output.path))),
            Err(error) => problems.push(format!("outputs[{position}].format: {error}")),
        }
    }
    let branches = match file.branches.as_deref().map(parse_branches).transpose() {
        Ok(branches) => branches.unwrap_or_default(),
        Err(error) => {
            problems.push(format!("branches: {error}"));
            BranchPolicy::default()
        }
    };
    let dedup = match file.dedup.as_deref().map(parse_dedup).transpose() {
        Ok(dedup) => dedup.unwrap_or_default(),
        Err(error) => {
            problems.push(format!("dedup: {error}"));
            DedupPolicy::default()
        }
    };
    let source = match parse_source_options(file.gap_minutes.unwrap_or(DEFAULT_GAP_MINUTES), file.timezone.as_deref().unwrap_or("UTC")) {
        Ok(source) => source,
        Err(error) => {
            problems.push(error.to_string());
            SourceOptions::default()
        }
    };
    let partition_by_provider = match file.partition_by.as_deref().map(parse_partition_by).transpose() {
        Ok(partition) => partition.unwrap_or(false),
        Err(error) => {
            problems.push(format!("partition_by: {error}"));
            false
        }
    };
    let producer = file.producer.clone().unwrap_or_else(|| "memport".to_owned());
    let sign_key = match file.sign_key.as_deref().map(|path| crate::signing::SignKey::load(&resolve(path))).transpose() {
        Ok(key) => key,
        Err(error) => {
            problems.push(format!("sign_key: {error}"));
            None
        }
    };
    let extraction = match parse_extraction(
        file.extract.as_deref().unwrap_or("rules"),
        file.min_confidence.unwrap_or(DEFAULT_MIN_CONFIDENCE),
        file.extract_pii.as_deref().unwrap_or("drop"),
        file.redact.as_deref().unwrap_or("none"),
    ) {
        Ok(settings) => settings,
        Err(error) => {
            problems.push(error.to_string());
            ExtractionSettings::default()
        }
    };
    let options = Options {
        inputs: file.inputs.iter().map(|input| resolve(input)).collect(),
        outputs,
        threads: file.threads.unwrap_or_else(default_threads),
        report: file.report.as_deref().map(resolve),
        rejects: file.rejects.as_deref().map(resolve),
        exported_at,
        tenant_id: file.tenant.clone().unwrap_or_else(|| default_tenant_id(&producer)),
        producer,
        dedup,
        branches,
        source,
        partition_by_provider,
        owner_id: file.owner_id.clone().unwrap_or_else(|| DEFAULT_OWNER_ID.to_owned()),
        sign_key,
        progress: true,
        extraction,
    };
    if let Err(error) = options.validate() {
        problems.push(error.to_string());
    }
    if problems.is_empty() { Ok(options) } else { Err(pipeline_error(problems.join("\n  "))) }
}

#[cfg(test)]
mod tests {
    use super::*;

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
