//! The run's settings: one type, [`Settings`], that the command line reads (clap, flattened
//! into `convert` and `sync`), pipeline files read key by key (serde, every problem listed at
//! once) and the run report echoes (serde). Its defaults are the command line's, written once
//! in its clap attributes. The settings that take one of a few named values are enums that
//! derive clap's `ValueEnum`, serde and `Default`; the ones shared with the sources
//! ([`crate::sources::BranchPolicy`], [`crate::sources::TimeZone`]) are defined there the same
//! way.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use clap::{Args, FromArgMatches, ValueEnum};
use serde::{Deserialize, Serialize};

use crate::pipeline::extraction::ExtractionSettings;
use crate::sources::{BranchPolicy, SourceOptions, TimeZone};
use crate::stages::extract::consolidate::{ConsolidateOptions, DEFAULT_MIN_CONFIDENCE};

/// The producer namespace when none is given (`--producer`).
pub const DEFAULT_PRODUCER: &str = "memport";

/// PAM `owner.id` when none is given.
pub const DEFAULT_OWNER_ID: &str = "local-user";

/// Default pause, in minutes, that starts a new conversation in exports without ids.
pub const DEFAULT_GAP_MINUTES: u64 = 60;

/// `--max-record-size` when not given.
pub const DEFAULT_MAX_RECORD_SIZE: &str = "256M";

/// The longest `--gap-minutes`: a year.
const MAX_GAP_MINUTES: u64 = 525_600;

/// How records are read and written, shared by `convert`, `sync` and pipeline files. The
/// command line's arguments, the pipeline file's keys (the same names with `_`) and the run
/// report's `options` are this one type.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Decode threads, at least 1 [default: every core]; more than 4 per core (at most 256) are
    /// lowered to that. Output is identical at any count.
    #[arg(long, value_parser = parse_threads, allow_negative_numbers = true)]
    // The report says how many were used (`ReportedOptions`).
    #[serde(skip_serializing)]
    pub threads: Option<usize>,
    /// Export time written to outputs (RFC 3339); default SOURCE_DATE_EPOCH, else now.
    #[arg(long, value_name = "TIME")]
    // A pipeline file takes it from `memport run --exported-at`; the report says the time used.
    #[serde(skip)]
    pub exported_at: Option<String>,
    /// AIMEM producer namespace (a-z, 0-9, -), part of every chunk id.
    #[arg(long, default_value = DEFAULT_PRODUCER)]
    pub producer: String,
    /// AIMEM tenant id [default: a UUID derived from the producer].
    #[arg(long)]
    // The report gives the tenant used (`ReportedOptions`).
    #[serde(skip_serializing)]
    pub tenant: Option<String>,
    /// content: drop messages whose PAM content hash was seen earlier (first wins); off: keep all.
    #[arg(long, value_enum, default_value_t, hide_possible_values = true, value_name = "content|off")]
    pub dedup: DedupPolicy,
    /// active: only the thread the user last saw; all: every regeneration and edit too.
    #[arg(long, value_enum, default_value_t, hide_possible_values = true, value_name = "active|all")]
    pub branches: BranchPolicy,
    /// Gemini and Copilot exports have no conversation ids: records further apart than this
    /// start a new conversation (Gemini records with a conversation URL are grouped by it).
    #[arg(long, default_value_t = DEFAULT_GAP_MINUTES, value_name = "MINUTES", allow_negative_numbers = true)]
    pub gap_minutes: u64,
    /// Zone of times written without one (Copilot CSVs): UTC or a fixed offset like +02:00.
    /// Outputs tag such messages with the zone assumed.
    // A fixed offset west of UTC starts with `-` (`--timezone -05:00`): without this clap takes
    // it for an option and refuses it. The value is checked as an offset, so a flag taken by
    // mistake (`--timezone --quiet`) is refused there.
    #[arg(long, default_value = "UTC", value_name = "OFFSET", allow_hyphen_values = true)]
    pub timezone: TimeZone,
    /// Largest conversation (or memory-format record) read, like 256M or 2G: a larger one is
    /// skipped and rejected, and the run goes on. One record is held in memory while it is
    /// read, so this bounds what a broken or hostile file can take.
    #[arg(long, default_value = DEFAULT_MAX_RECORD_SIZE, value_name = "SIZE")]
    pub max_record_size: RecordSize,
    /// Parquet only: `provider` writes Hive-style folders (messages/provider=claude/…) that
    /// DuckDB, Polars, Spark and pyarrow read as a column; `none` one folder per table.
    #[arg(long, value_enum, default_value_t, hide_possible_values = true, value_name = "provider|none")]
    pub partition_by: Partitioning,
    /// The owner written as PAM `owner.id`, MIF `export_meta.user_id` and UMP `scope.owner`
    /// (exports do not name their owner without personal data).
    #[arg(long, default_value = DEFAULT_OWNER_ID, value_name = "ID")]
    pub owner_id: String,
    /// Sign PAM stores (PAM §18: Ed25519 over checksum, export id, date and owner) and UMP
    /// records (BLAKE3 content hash, Ed25519, did:key signer) with this Ed25519 private key:
    /// PKCS#8 PEM (openssl genpkey -algorithm ed25519), 64 hex digits or 32 raw bytes.
    #[arg(long, value_name = "FILE")]
    // The report says nothing of keys.
    #[serde(skip_serializing)]
    pub sign_key: Option<PathBuf>,
    /// rules: extract typed memories (identity, preferences, relationships, goals, decisions,
    /// standing instructions, pitfalls, skills, environment, projects, facts) from what the
    /// user said about themselves, with evidence, into every format; off: transcripts and the
    /// provider's own memories only.
    #[arg(long, value_enum, default_value_t, hide_possible_values = true, value_name = "rules|off")]
    pub extract: Extractor,
    /// Extracted memories less sure than this (0 to 1) are dropped and counted; a statement
    /// said again grows surer. 0.5 keeps every plain statement and drops a hedged one
    /// ("maybe", "I think") said once, unless its rule is very sure.
    #[arg(long, default_value_t = DEFAULT_MIN_CONFIDENCE, value_name = "0..1", allow_negative_numbers = true)]
    pub min_confidence: f32,
    /// drop: leave out extracted contact details (e-mail, phone, street address); keep: write
    /// them, marked not exportable where the format can say so (PAM, UMP).
    #[arg(long, value_enum, default_value_t, hide_possible_values = true, value_name = "drop|keep")]
    pub extract_pii: PiiPolicy,
    /// secrets: mask API keys, tokens, private keys, passwords, card and account numbers,
    /// one-time codes and identity numbers in every transcript written, as [REDACTED:<kind>]
    /// (content hashes are over the masked text); none: write the text as it is.
    #[arg(long, value_enum, default_value_t, hide_possible_values = true, value_name = "secrets|none")]
    pub redact: Redaction,
    /// No progress bar.
    #[arg(short, long)]
    // A pipeline file's run draws its bar like any other; the report has no use for it.
    #[serde(skip)]
    pub quiet: bool,
}

/// The command line's defaults, read from the clap attributes above: they are written once.
impl Default for Settings {
    fn default() -> Self {
        let command = Settings::augment_args(clap::Command::new("memport"));
        // No setting is required and every default parses (`the_defaults_are_the_command_lines`),
        // so an empty command line always gives settings.
        let matches = command.try_get_matches_from(["memport"]).expect("every setting has a default");
        Settings::from_arg_matches(&matches).expect("the matches are the settings' own")
    }
}

impl Settings {
    /// These settings, reading every record of a memory file as it is: every branch, no
    /// deduplication, no extraction (the memories are there already). For carrying a store
    /// or a bundle from one place to another whole.
    pub fn keeping_every_record(self) -> Settings {
        Settings { extract: Extractor::Off, branches: BranchPolicy::All, dedup: DedupPolicy::Off, ..self }
    }

    /// What is wrong with values that are of the right type but out of range, each problem
    /// naming its option. Checked with the rest of a run's options ([`crate::pipeline::Options::validate`]).
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.gap_minutes == 0 || self.gap_minutes > MAX_GAP_MINUTES {
            problems.push(format!("--gap-minutes: {} is out of range; give 1 to {MAX_GAP_MINUTES} minutes", self.gap_minutes));
        }
        if !(0.0..=1.0).contains(&self.min_confidence) {
            problems.push(format!("--min-confidence: {} is out of range; give a number from 0 to 1, such as 0.5", self.min_confidence));
        }
        if self.threads == Some(0) {
            problems.push("--threads must be at least 1".to_owned());
        }
        if let Err(error) = crate::spec::aimem::check_producer(&self.producer) {
            problems.push(error.to_string());
        }
        if self.owner_id.trim().is_empty() {
            problems.push("--owner-id must not be empty".to_owned());
        }
        if self.tenant.as_deref().is_some_and(|tenant| tenant.trim().is_empty()) {
            problems.push("--tenant must not be empty".to_owned());
        }
        problems
    }

    /// Decode threads: as given, else every core.
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or_else(default_threads)
    }

    /// The AIMEM tenant id: as given, else a UUID derived from the producer, so runs repeat.
    pub fn tenant_id(&self) -> String {
        self.tenant.clone().unwrap_or_else(|| default_tenant_id(&self.producer))
    }

    /// How the sources read: the gap, the zone of zoneless times, the largest record.
    pub fn source_options(&self) -> SourceOptions {
        SourceOptions {
            gap: self.gap_minutes.min(MAX_GAP_MINUTES) as i64 * 60 * 1_000_000,
            time_zone: self.timezone.clone(),
            max_record_bytes: self.max_record_size.bytes(),
        }
    }

    /// What the run extracts and masks.
    pub fn extraction(&self) -> ExtractionSettings {
        let extract = match self.extract {
            Extractor::Rules => {
                Some(ConsolidateOptions { min_confidence: self.min_confidence, keep_personal: self.extract_pii == PiiPolicy::Keep })
            }
            Extractor::Off => None,
        };
        ExtractionSettings { extract, redact_secrets: self.redact == Redaction::Secrets }
    }

    /// Whether a Parquet dataset gets `provider=<name>` folders.
    pub fn partition_by_provider(&self) -> bool {
        self.partition_by == Partitioning::Provider
    }
}

/// Default worker count: every core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map(usize::from).unwrap_or(1)
}

/// The tenant id used when none is given: a UUID derived from the producer, so runs repeat.
pub fn default_tenant_id(producer: &str) -> String {
    crate::spec::ids::uuid_v5_shaped(&format!("memport-tenant:{producer}"))
}

/// `--threads` as given: a whole number, at least 1.
pub fn parse_threads(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("memport needs at least 1 worker thread; leave --threads out to use every core".to_owned()),
        Ok(threads) => Ok(threads),
        Err(_) => Err(format!("`{text}` is not a number of worker threads (1 or more)")),
    }
}

/// A record size limit (`--max-record-size`), as written (`256M`, `2G`, `1.5GiB`, `1048576`)
/// and in bytes: K, M, G, T are powers of 1024, with or without `iB`/`B`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RecordSize {
    text: String,
    bytes: u64,
}

/// Smallest and largest `--max-record-size`: below 1 KiB not even a short conversation fits;
/// above 64 GiB the limit no longer protects the machine's memory.
const RECORD_SIZE_RANGE: std::ops::RangeInclusive<u64> = 1 << 10..=64 << 30;

impl RecordSize {
    /// The limit in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl FromStr for RecordSize {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let not_a_size = || format!("`{text}` is not a size; write it like 256M, 2G or 1048576 (bytes)");
        let trimmed = text.trim();
        let digits_end = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(digits_end);
        let shift = match unit.trim().to_ascii_uppercase().as_str() {
            "" | "B" => 0,
            "K" | "KB" | "KIB" => 10,
            "M" | "MB" | "MIB" => 20,
            "G" | "GB" | "GIB" => 30,
            "T" | "TB" | "TIB" => 40,
            _ => return Err(not_a_size()),
        };
        let value: f64 = number.parse().map_err(|_| not_a_size())?;
        // A float this large or this small is out of range either way; the cast saturates.
        let bytes = (value * (1u64 << shift) as f64).round() as u64;
        if !RECORD_SIZE_RANGE.contains(&bytes) {
            return Err(format!("`{text}` is out of range; give 1K to 64G"));
        }
        Ok(RecordSize { text: trimmed.to_owned(), bytes })
    }
}

impl TryFrom<String> for RecordSize {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

impl From<RecordSize> for String {
    fn from(size: RecordSize) -> String {
        size.text
    }
}

impl fmt::Display for RecordSize {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.text)
    }
}

/// Whether duplicate messages are dropped (`--dedup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DedupPolicy {
    /// By PAM content hash; the first occurrence in input order wins.
    #[default]
    Content,
    /// Keep every message.
    Off,
}

/// Whether memories are extracted from what the user said (`--extract`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Extractor {
    /// Read the user's clauses in five languages.
    #[default]
    Rules,
    /// Transcripts and the provider's own memories only.
    Off,
}

/// What becomes of extracted contact details (`--extract-pii`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PiiPolicy {
    /// Left out.
    #[default]
    Drop,
    /// Written, marked not exportable where the format can say so.
    Keep,
}

/// What is masked in the transcripts written (`--redact`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Redaction {
    /// Nothing: the text as it is.
    #[default]
    None,
    /// API keys, tokens, private keys, passwords, card and account numbers, one-time codes,
    /// identity numbers.
    Secrets,
}

/// How a Parquet dataset is laid out (`--partition-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Partitioning {
    /// One folder per table.
    #[default]
    None,
    /// Hive-style `provider=<name>` folders in each table.
    Provider,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards `Default`: it is what an empty command line gives, so a library caller, a
    /// pipeline file and the command line agree.
    #[test]
    fn the_defaults_are_the_command_lines() {
        let settings = Settings::default();
        assert_eq!(settings.producer, DEFAULT_PRODUCER);
        assert_eq!(settings.owner_id, DEFAULT_OWNER_ID);
        assert_eq!(settings.extract, Extractor::Rules);
        assert_eq!(settings.min_confidence, DEFAULT_MIN_CONFIDENCE);
        assert_eq!(settings.max_record_size.bytes(), 256 << 20);
        assert_eq!(settings.timezone, TimeZone::utc());
        assert_eq!(settings.threads, None);
        assert!(settings.problems().is_empty());
        assert_eq!(settings.extraction(), ExtractionSettings::default());
        assert_eq!(settings.source_options().max_record_bytes, SourceOptions::default().max_record_bytes);
    }

    #[test]
    fn a_value_is_read_by_its_name_and_a_wrong_one_names_the_valid_ones() {
        let settings: Settings = toml::from_str("redact = \"secrets\"\ntimezone = \"-05:00\"").unwrap();
        assert_eq!(settings.redact, Redaction::Secrets);
        assert_eq!(settings.timezone.offset_seconds, -5 * 3600);
        let error = toml::from_str::<Settings>("dedup = \"maybe\"").err().map(|error| error.message().to_owned()).unwrap_or_default();
        assert!(error.contains("unknown variant `maybe`, expected `content` or `off`"), "{error}");
        let error =
            toml::from_str::<Settings>("max_record_size = \"lots\"").err().map(|error| error.message().to_owned()).unwrap_or_default();
        assert!(error.contains("`lots` is not a size"), "{error}");
    }

    #[test]
    fn the_report_names_each_value_as_the_command_line_does() {
        assert_eq!(serde_json::to_value(Partitioning::Provider).ok(), Some(serde_json::json!("provider")));
        assert_eq!(serde_json::to_value(PiiPolicy::default()).ok(), Some(serde_json::json!("drop")));
        assert_eq!(Extractor::default().to_possible_value().map(|value| value.get_name().to_owned()).as_deref(), Some("rules"));
        let echoed = serde_json::to_value(Settings::default()).unwrap_or_default();
        assert_eq!(echoed["max_record_size"], "256M");
        assert_eq!(echoed["timezone"], "UTC");
        assert!(echoed.get("sign_key").is_none() && echoed.get("quiet").is_none(), "{echoed}");
    }

    #[test]
    fn values_out_of_range_are_each_a_problem() {
        let settings = Settings { gap_minutes: 0, min_confidence: 1.5, threads: Some(0), ..Settings::default() };
        let problems = settings.problems().join("\n");
        for needle in ["--gap-minutes: 0 is out of range", "--min-confidence: 1.5 is out of range", "--threads must be at least 1"] {
            assert!(problems.contains(needle), "{needle} in {problems}");
        }
        assert!(Settings { min_confidence: f32::NAN, ..Settings::default() }.problems()[0].contains("NaN"));
    }

    #[test]
    fn record_sizes_read_with_binary_units() {
        let bytes = |text: &str| text.parse::<RecordSize>().map(|size| size.bytes());
        assert_eq!(bytes("256M"), Ok(256 << 20));
        assert_eq!(bytes("2G"), Ok(2 << 30));
        assert_eq!(bytes("1.5GiB"), Ok(3 << 29));
        assert_eq!(bytes(" 4096 "), Ok(4096));
        assert_eq!(bytes("64kb"), Ok(64 << 10));
    }

    #[test]
    fn record_sizes_out_of_range_or_unreadable_are_refused() {
        for text in ["0", "100", "65G", "1T", "lots", "5X", "", "-1M", "1e9"] {
            assert!(text.parse::<RecordSize>().is_err(), "{text} was accepted");
        }
    }
}
