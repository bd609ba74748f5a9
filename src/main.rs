//! The `memport` command line: parses arguments, calls the library, prints the error chain and
//! maps outcomes to exit codes. `anyhow` lives here only.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};

use memport::pipeline::config::{self, parse_branches, parse_dedup};
use memport::pipeline::report::RunReport;
use memport::pipeline::{Options, default_tenant_id, default_threads};
use memport::sinks::{OutputFormat, output_paths};
use memport::timefmt::parse_rfc3339;

// mimalloc: the decode workers allocate many short strings; glibc malloc cost ~8% of the run
// (docs/design-decisions.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's C `mi_option_e` (the Rust bindings name only some
/// options); the test below checks that mimalloc reads it back as set.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Tells mimalloc to keep memory it has freed mapped instead of returning it to the system
/// ("purging") a second later. A run frees and reallocates its batches all the time at the same
/// peak; purged pages came straight back as page faults, and each purge is a `madvise` whose
/// TLB flush interrupts the other cores. On the 4 GB Gemini export that was 12 of 15.7 s of
/// kernel time; peak RSS rose from 232 to 253 MiB (docs/design-decisions.md).
#[allow(unsafe_code)]
fn keep_freed_memory_mapped() {
    // SAFETY: `mi_option_set` stores an integer in mimalloc's option table, which it reads
    // atomically; -1 is a documented value of this option ("no purging at all"), and it is set
    // before any worker thread starts.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

/// Exit code: the run finished but some records were rejected, or a file is invalid.
const EXIT_PROBLEMS: u8 = 1;
/// Exit code: bad arguments, configuration or I/O; nothing usable was written.
const EXIT_FAILED: u8 = 2;

/// Most decode workers `--threads` gets per core. The workers are CPU-bound (parse, normalize,
/// hash, encode), so more than a few per core only take turns; and each one lets the reader
/// queue three more batches of about 1 MiB, so a count far past the cores costs memory for
/// nothing (`--threads 10000` asked for 30,000 batches in flight). Four per core leaves room
/// for a worker waiting on a spilled dedup run without another idling.
const THREADS_PER_CORE: usize = 4;
/// Most decode workers on any machine (about 770 batches in flight, under 1 GiB), unless it
/// has more cores than that: then one per core, as without `--threads`.
const MAX_THREADS: usize = 256;

#[derive(Parser)]
#[command(
    name = "memport",
    version,
    about = "Move AI-assistant memory between systems: ChatGPT, Claude, Grok, Copilot and Gemini exports in, AIMEM, PAM, MIF, UMP, AIME and Parquet out, streaming, in flat memory.",
    long_about = "memport reads the data export an AI assistant gives you: ChatGPT, Claude (with its \
projects and memories), Grok, Microsoft Copilot CSVs and Gemini activity from Google Takeout (JSON or \
HTML). Give the zip as downloaded, the unzipped folder, a folder of several zips, or the main file; \
the provider and era are told apart by content, never by file name. It writes portable memory: an \
AIMEM bundle or NDJSON stream, a PAM v1.0 store (memory-store.json and one file per \
conversation), MIF v2, UMP 0.1 records, an AIME v1.0 document, or a Parquet dataset for analysis, with the provider's own memories (custom \
instructions, saved memories, project knowledge) as memories. Its own formats are inputs too: a PAM \
store, a MIF, UMP, AIME or AIMEM file converts to any other format, and converting memport's output \
again gives the same records. It streams, so a 5 GB export needs no more memory \
than a small one, and the same input always gives byte-identical output.",
    after_help = "Examples:\n  memport convert ~/Downloads/chatgpt-export.zip --to aimem-ndjson -o brain.aimem.ndjson --report run.json\n  memport convert conversations.json --to aimem -o brain.aimem.json\n  memport convert claude-export/ grok.zip takeout.zip --to aimem-ndjson -o all.aimem.ndjson\n  memport convert copilot-activity-history.csv --timezone +02:00 --to aimem -o copilot.aimem.json\n  memport convert export.zip --to aimem,aimem-ndjson -o out/\n  memport convert export.zip --to pam -o my-memory/\n  memport convert export.zip --to pam,mif,ump,aime -o out/\n  memport convert memories.mif.json --to pam -o my-memory/\n  memport convert my-memory/ --to aimem-ndjson -o brain.aimem.ndjson\n  memport convert chatgpt.zip claude.zip takeout.zip --to parquet -o corpus/ --branches all\n  memport convert s3://exports/u123/chatgpt.zip --to parquet,pam -o s3://memory/u123/   (AWS_* variables or ~/.aws)\n  memport run pipelines/chatgpt-to-aimem.toml\n  memport inspect export.zip\n  memport validate brain.aimem.json my-memory/\n\nExit codes: 0 success; 1 finished with rejected records (see --rejects) or an invalid file; 2 error (bad arguments, unreadable input, write failure)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Convert exports into one or more formats from a single read.
    Convert(Box<ConvertArgs>),
    /// Turn this month's full export into a delta against what earlier syncs wrote: only new
    /// and changed conversations and messages, plus retractions of conversations the user
    /// deleted, into OUT/runs/<run-id>/. The state file remembers what was written; the first
    /// sync on a new state writes everything. Run it from cron with each new export.
    Sync(Box<SyncArgs>),
    /// Apply a PAM delta (the pam/ folder of a sync run) to a PAM store, writing the merged store
    /// to OUT (PAM §16, incremental merge).
    ///
    /// BASE is a PAM store folder: the full store of a state's first sync (OUT/runs/<run-id>/pam/),
    /// or the folder an earlier merge wrote. DELTA is the pam/ folder of a later sync run, an
    /// incremental export. Memories are upserted by id and never deleted: a retracted one is kept,
    /// marked retracted, and each supersedes relation of the delta marks the memory it supersedes.
    /// Relations are unioned by id. Conversations are upserted by id: a conversation in both keeps
    /// the base's messages in their order, each replaced by the delta's message of the same id,
    /// followed by the delta's new messages; a conversation the delta retracts (the user deleted it)
    /// keeps its file and is tagged retracted. The merged store is a full export named by the
    /// delta's export_id, its total_memories and checksum computed again; it is unsigned.
    ///
    /// Deltas must be applied in order: each names the store it was made against
    /// (base_export_id), so the first delta goes onto the first sync's full store, the second onto
    /// the store that merge wrote, and so on. A delta applied to any other store is refused and
    /// nothing is written. OUT must be a new or empty folder, or a store memport wrote (an earlier
    /// merge's output is replaced), never BASE or DELTA.
    #[command(
        after_help = "Examples:\n  memport merge ~/memory/runs/<run-1>/pam ~/memory/runs/<run-2>/pam -o ~/memory/merged-2\n  memport merge ~/memory/merged-2 ~/memory/runs/<run-3>/pam -o ~/memory/merged-3\n  memport merge ~/memory/merged-3 ~/memory/runs/<run-4>/pam -o ~/memory/merged-4 --json > merge.json\n\nRun folders sort by export time, and each run's sync.json names the run it follows (base_run_id)."
    )]
    Merge(Box<MergeArgs>),
    /// Run a pipeline file (TOML) such as pipelines/chatgpt-to-aimem.toml.
    Run {
        /// The pipeline file.
        pipeline: PathBuf,
        /// Export time written to outputs (RFC 3339); default SOURCE_DATE_EPOCH, else now.
        #[arg(long, value_name = "TIME")]
        exported_at: Option<String>,
        /// Print the run report as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Say what an input is (provider, layout, files) and count its records without writing.
    /// With --memories: preview the memories extraction finds in what the user said about
    /// themselves (type, statement, how often said), writing nothing.
    Inspect {
        /// Export zips, folders or files.
        #[arg(value_parser = parse_location, required = true)]
        inputs: Vec<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Preview the extracted memories instead of counting records.
        #[arg(long)]
        memories: bool,
        /// With --memories: content (as a conversion reads: a repeated message is evidence
        /// once) or off (every copy is evidence).
        #[arg(long, default_value = "content", value_name = "content|off")]
        dedup: String,
    },
    /// Check AIMEM (bundle or NDJSON), PAM (a store folder, or one memory-store, conversation or
    /// embeddings file), MIF, UMP (JSON, NDJSON, a .ump.md file or a folder of them) and AIME
    /// files the way a consumer does; list every problem with where it is (file#JSON-pointer).
    /// The format is told from the content.
    Validate {
        /// Files or PAM store folders to check.
        #[arg(value_parser = parse_location, required = true)]
        files: Vec<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct ConvertArgs {
    /// Export zips, unzipped folders or conversation files, read in the order given; or files
    /// of memport's formats (a PAM store folder or memory-store.json, MIF, UMP JSON/NDJSON or a
    /// folder of .ump.md files, AIME, an AIMEM bundle or stream). Any of them may be on S3:
    /// s3://bucket/export.zip (read by range), s3://bucket/folder/ (its objects).
    #[arg(value_parser = parse_location, required = true)]
    inputs: Vec<PathBuf>,
    /// Output formats, comma-separated: aimem (bundle JSON), aimem-ndjson (stream), parquet
    /// (a folder of tables: conversations, messages, memories, assets), pam (a PAM v1.0 store
    /// folder: memory-store.json and conversations/), mif (MIF v2 JSON), ump (UMP 0.1 JSON
    /// array), ump-ndjson, ump-md (a folder of .ump.md records), aime (AIME v1.0 JSON).
    #[arg(long = "to", value_name = "FORMAT[,FORMAT]", value_delimiter = ',', required = true)]
    formats: Vec<String>,
    /// Output file for one format; a folder for several (memory.aimem.json, memory.aimem.ndjson,
    /// parquet/, pam/, memory.mif.json, memory.ump.json, memory.ump.ndjson, ump-md/,
    /// memory.aime.json). Parquet, PAM and ump-md always write a folder. s3://bucket/prefix/
    /// writes to S3: built locally (in TMPDIR), uploaded, and published when the run succeeds.
    #[arg(value_parser = parse_location, short, long, value_name = "OUT")]
    output: PathBuf,
    /// Write the JSON run report here (counts, warnings, outputs).
    #[arg(value_parser = parse_location, long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Write rejected records here as NDJSON (file, byte offset, conversation id, reason).
    #[arg(value_parser = parse_location, long, value_name = "FILE")]
    rejects: Option<PathBuf>,
    #[command(flatten)]
    conversion: ConversionArgs,
}

#[derive(Args)]
struct SyncArgs {
    /// This month's export: zips, unzipped folders or files. Conversations missing from a
    /// whole export (a zip or folder) are retracted; a lone file never retracts anything.
    #[arg(value_parser = parse_location, required_unless_present = "status")]
    inputs: Vec<PathBuf>,
    /// What earlier runs wrote: a SQLite file, made by the first sync; or a PostgreSQL
    /// database shared by many workers (postgres://user:password@host/db; each --tenant's
    /// rows apart, one sync per tenant at a time).
    #[arg(long, value_name = "FILE|URL")]
    state: PathBuf,
    /// Print the state's runs and per-provider totals instead of syncing.
    #[arg(long, conflicts_with_all = ["inputs", "formats", "output"])]
    status: bool,
    /// With --status: print JSON.
    #[arg(long, requires = "status")]
    json: bool,
    /// Output formats of each run, comma-separated (as for convert).
    #[arg(long = "to", value_name = "FORMAT[,FORMAT]", value_delimiter = ',', required_unless_present = "status")]
    formats: Vec<String>,
    /// The folder that gets runs/<run-id>/ for each sync; or s3://bucket/prefix/, where each
    /// run is uploaded and published before the state records it.
    #[arg(value_parser = parse_location, short, long, value_name = "OUT", required_unless_present = "status")]
    output: Option<PathBuf>,
    #[command(flatten)]
    conversion: ConversionArgs,
}

#[derive(Args)]
struct MergeArgs {
    /// The store the delta applies to: the first sync's OUT/runs/<run-id>/pam/, or the folder an
    /// earlier merge wrote.
    base: PathBuf,
    /// The delta: the pam/ folder of a later sync run (its run folder is taken too).
    delta: PathBuf,
    /// The folder the merged store is written to: new, empty, or a store memport wrote.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Print the merge report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// How records are read and written: shared by `convert` and `sync`.
#[derive(Args)]
struct ConversionArgs {
    /// Decode threads, at least 1 [default: every core]; more than 4 per core (at most 256) are
    /// lowered to that. Output is identical at any count.
    #[arg(long, value_parser = parse_threads, allow_negative_numbers = true)]
    threads: Option<usize>,
    /// Export time written to outputs (RFC 3339); default SOURCE_DATE_EPOCH, else now.
    #[arg(long, value_name = "TIME")]
    exported_at: Option<String>,
    /// AIMEM producer namespace (a-z, 0-9, -), part of every chunk id.
    #[arg(long, default_value = "memport")]
    producer: String,
    /// AIMEM tenant id [default: a UUID derived from the producer].
    #[arg(long)]
    tenant: Option<String>,
    /// content: drop messages whose PAM content hash was seen earlier (first wins); off: keep all.
    #[arg(long, default_value = "content", value_name = "content|off")]
    dedup: String,
    /// active: only the thread the user last saw; all: every regeneration and edit too.
    #[arg(long, default_value = "active", value_name = "active|all")]
    branches: String,
    /// Gemini and Copilot exports have no conversation ids: records further apart than this
    /// start a new conversation (Gemini records with a conversation URL are grouped by it).
    #[arg(long, default_value_t = config::DEFAULT_GAP_MINUTES, value_name = "MINUTES", allow_negative_numbers = true)]
    gap_minutes: u64,
    /// Zone of times written without one (Copilot CSVs): UTC or a fixed offset like +02:00.
    /// Outputs tag such messages with the zone assumed.
    // A fixed offset west of UTC starts with `-` (`--timezone -05:00`): without this clap takes
    // it for an option and refuses it. The value is checked as an offset, so a flag taken by
    // mistake (`--timezone --quiet`) is refused there.
    #[arg(long, default_value = "UTC", value_name = "OFFSET", allow_hyphen_values = true)]
    timezone: String,
    /// Largest conversation (or memory-format record) read, like 256M or 2G: a larger one is
    /// skipped and rejected, and the run goes on. One record is held in memory while it is
    /// read, so this bounds what a broken or hostile file can take.
    #[arg(long, default_value = config::DEFAULT_MAX_RECORD_SIZE, value_name = "SIZE")]
    max_record_size: String,
    /// Parquet only: `provider` writes Hive-style folders (messages/provider=claude/…) that
    /// DuckDB, Polars, Spark and pyarrow read as a column; `none` one folder per table.
    #[arg(long, default_value = "none", value_name = "provider|none")]
    partition_by: String,
    /// The owner written as PAM `owner.id`, MIF `export_meta.user_id` and UMP `scope.owner`
    /// (exports do not name their owner without personal data).
    #[arg(long, default_value = config::DEFAULT_OWNER_ID, value_name = "ID")]
    owner_id: String,
    /// Sign PAM stores (PAM §18: Ed25519 over checksum, export id, date and owner) and UMP
    /// records (BLAKE3 content hash, Ed25519, did:key signer) with this Ed25519 private key:
    /// PKCS#8 PEM (openssl genpkey -algorithm ed25519), 64 hex digits or 32 raw bytes.
    #[arg(long, value_name = "FILE")]
    sign_key: Option<PathBuf>,
    /// rules: extract typed memories (identity, preferences, relationships, goals, decisions,
    /// standing instructions, pitfalls, skills, environment, projects, facts) from what the
    /// user said about themselves, with evidence, into every format; off: transcripts and the
    /// provider's own memories only.
    #[arg(long, default_value = "rules", value_name = "rules|off")]
    extract: String,
    /// Extracted memories less sure than this (0 to 1) are dropped and counted; a statement
    /// said again grows surer. 0.5 keeps every plain statement and drops a hedged one
    /// ("maybe", "I think") said once, unless its rule is very sure.
    #[arg(
        long,
        default_value_t = memport::stages::extract::consolidate::DEFAULT_MIN_CONFIDENCE,
        value_name = "0..1",
        allow_negative_numbers = true
    )]
    min_confidence: f32,
    /// drop: leave out extracted contact details (e-mail, phone, street address); keep: write
    /// them, marked not exportable where the format can say so (PAM, UMP).
    #[arg(long, default_value = "drop", value_name = "drop|keep")]
    extract_pii: String,
    /// secrets: mask API keys, tokens, private keys, passwords, card and account numbers and
    /// one-time codes in every transcript written, as [REDACTED:<kind>] (content hashes are
    /// over the masked text); none: write the text as it is.
    #[arg(long, default_value = "none", value_name = "secrets|none")]
    redact: String,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> ExitCode {
    keep_freed_memory_mapped();
    match run(Cli::parse()) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            if is_broken_pipe(&error) {
                return ExitCode::SUCCESS;
            }
            eprintln!("memport: error: {}", error_chain(&error));
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// The error and its causes, each cause only when the message does not already say it (the
/// library's errors include their source in their own message).
fn error_chain(error: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Convert(args) => convert(*args),
        Command::Sync(args) => sync(*args),
        Command::Merge(args) => merge(*args),
        Command::Run { pipeline, exported_at, json } => match config::load_job(&pipeline, resolve_exported_at(exported_at.as_deref())?)? {
            config::Job::Convert(mut options) => {
                check_inputs(&options.inputs)?;
                // The pipeline file's `threads` was checked (at least 1) as it was loaded.
                options.threads = capped_threads(options.threads, "threads");
                let report = memport::run(&options)?;
                finish_run(&report, json)
            }
            config::Job::Sync { mut options, state, output, formats } => {
                check_inputs(&options.inputs)?;
                options.threads = capped_threads(options.threads, "threads");
                run_sync(&memport::sync::SyncOptions { convert: options, formats, state, output_root: output }, json)
            }
        },
        Command::Inspect { inputs, json, memories: true, dedup } => {
            check_inputs(&inputs)?;
            inspect_memories(inputs, json, parse_dedup(&dedup)?)
        }
        Command::Inspect { inputs, json, memories: false, .. } => {
            check_inputs(&inputs)?;
            inspect(inputs, json)
        }
        Command::Validate { files, json } => validate(files, json),
    }
}

/// Refuses inputs that are not regular files or folders before anything opens them: a device
/// is read forever and a named pipe blocks until something writes to it.
fn check_inputs(inputs: &[PathBuf]) -> Result<()> {
    for input in inputs {
        memport::validate::input_file::check_regular_input(input)?;
    }
    Ok(())
}

/// A path as given, or an object-storage URL (`s3://bucket/key`, kept as it is); a `file://`
/// URL is the local path it names.
fn parse_location(text: &str) -> std::result::Result<PathBuf, String> {
    Ok(memport::remote::local_form(std::path::Path::new(text)))
}

/// `--threads` as given: a whole number, at least 1.
fn parse_threads(text: &str) -> std::result::Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("memport needs at least 1 worker thread; leave --threads out to use every core".to_owned()),
        Ok(threads) => Ok(threads),
        Err(_) => Err(format!("`{text}` is not a number of worker threads (1 or more)")),
    }
}

/// The most workers worth running on `cores` cores (see [`THREADS_PER_CORE`]).
fn max_threads(cores: usize) -> usize {
    cores.saturating_mul(THREADS_PER_CORE).min(MAX_THREADS).max(cores)
}

/// `requested` workers, lowered to [`max_threads`] of this machine with a note on stderr
/// naming `option`.
fn capped_threads(requested: usize, option: &str) -> usize {
    let cores = default_threads();
    let most = max_threads(cores);
    if requested > most {
        eprintln!(
            "memport: {option} {requested} is more workers than this machine can use; using {most} ({THREADS_PER_CORE} per core on {cores} cores, at most {MAX_THREADS})"
        );
        return most;
    }
    requested
}

fn convert(args: ConvertArgs) -> Result<u8> {
    check_inputs(&args.inputs)?;
    let formats = parse_formats(&args.formats)?;
    let outputs = output_paths(&formats, &args.output)?;
    let options = conversion_options(args.inputs, outputs, args.report, args.rejects, args.conversion)?;
    let report = memport::run(&options)?;
    finish_run(&report, false)
}

fn sync(args: SyncArgs) -> Result<u8> {
    if args.status {
        let tenant = args.conversion.tenant.clone().unwrap_or_else(|| default_tenant_id(&args.conversion.producer));
        let status = memport::sync::status::read(&args.state, &tenant)?;
        if args.json {
            let mut stdout = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut stdout, &status)?;
            writeln!(stdout)?;
        } else {
            print!("{}", status.to_text());
        }
        return Ok(0);
    }
    check_inputs(&args.inputs)?;
    let formats = parse_formats(&args.formats)?;
    // Required by clap unless --status, which returned above.
    let output_root = args.output.context("-o is required")?;
    let convert = conversion_options(args.inputs, Vec::new(), None, None, args.conversion)?;
    run_sync(&memport::sync::SyncOptions { convert, formats, state: args.state, output_root }, false)
}

/// Runs a sync and says what it did; with `json`, prints its report (`sync.json`) on stdout.
fn run_sync(options: &memport::sync::SyncOptions, json: bool) -> Result<u8> {
    let report = memport::sync::sync(options)?;
    if json {
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut stdout, &report)?;
        writeln!(stdout)?;
    }
    let conversations = &report.conversations;
    match &report.full_because {
        Some(reason) => eprintln!("memport: sync {}: full run ({reason})", report.run_id),
        None => eprintln!(
            "memport: sync {}: delta since {} (run {})",
            report.run_id,
            report.since.as_deref().unwrap_or("-"),
            report.base_run_id.as_deref().unwrap_or("-")
        ),
    }
    eprintln!(
        "memport: conversations: {} new, {} changed, {} changed with nothing new, {} unchanged, {} retracted",
        conversations.new, conversations.changed, conversations.changed_nothing_new, conversations.unchanged, conversations.retracted
    );
    for reason in &report.no_retractions_because {
        eprintln!("memport: no retractions for {reason}");
    }
    for removed in &report.removed_leftovers {
        eprintln!("memport: removed {removed}, left by a sync that stopped before it finished");
    }
    let code = finish_run(&report.run, false)?;
    eprintln!("memport: run folder {}", report.run_folder);
    Ok(code)
}

/// Applies a PAM delta to a store and says what it did; with `--json`, prints the report on
/// stdout.
fn merge(args: MergeArgs) -> Result<u8> {
    let options = memport::sync::merge::MergeOptions { base: args.base, delta: args.delta, output: args.output };
    let report = memport::sync::merge::merge(&options)?;
    if args.json {
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut stdout, &report)?;
        writeln!(stdout)?;
    }
    let (memories, conversations) = (&report.memories, &report.conversations);
    eprintln!(
        "memport: merged {} (export {}) into {} (export {})",
        report.delta, report.delta_export_id, report.base, report.base_export_id
    );
    eprintln!(
        "memport: memories: {} ({} new, {} updated, {} retracted, {} superseded); {} relations",
        memories.total, memories.inserted, memories.updated, memories.retracted, memories.superseded, report.relations
    );
    eprintln!(
        "memport: conversations: {} ({} new, {} updated, {} retracted, {} files copied unchanged); messages: {} replaced, {} appended",
        conversations.total,
        conversations.inserted,
        conversations.updated,
        conversations.retracted,
        conversations.copied,
        conversations.messages_replaced,
        conversations.messages_appended
    );
    for warning in &report.warnings {
        eprintln!("memport: warning: {warning}");
    }
    eprintln!("memport: wrote {} (export {}): the next delta applies to it", report.output, report.merged_export_id);
    Ok(0)
}

fn parse_formats(names: &[String]) -> Result<Vec<OutputFormat>> {
    let mut formats = Vec::with_capacity(names.len());
    for name in names {
        formats.push(OutputFormat::parse(name)?);
    }
    Ok(formats)
}

/// The library's options from the command line's.
fn conversion_options(
    inputs: Vec<PathBuf>,
    outputs: Vec<(OutputFormat, PathBuf)>,
    report: Option<PathBuf>,
    rejects: Option<PathBuf>,
    args: ConversionArgs,
) -> Result<Options> {
    Ok(Options {
        inputs,
        also_read: Vec::new(),
        outputs,
        threads: args.threads.map_or_else(default_threads, |threads| capped_threads(threads, "--threads")),
        report,
        rejects,
        exported_at: resolve_exported_at(args.exported_at.as_deref())?,
        tenant_id: args.tenant.unwrap_or_else(|| default_tenant_id(&args.producer)),
        producer: args.producer,
        dedup: parse_dedup(&args.dedup)?,
        branches: parse_branches(&args.branches)?,
        source: config::parse_source_options(args.gap_minutes, &args.timezone, &args.max_record_size)?,
        partition_by_provider: config::parse_partition_by(&args.partition_by)?,
        owner_id: args.owner_id,
        sign_key: args.sign_key.as_deref().map(memport::signing::SignKey::load).transpose()?,
        progress: !args.quiet,
        extraction: config::parse_extraction(&args.extract, args.min_confidence, &args.extract_pii, &args.redact)?,
        incremental: None,
    })
}

/// The export time: `--exported-at`, else `SOURCE_DATE_EPOCH`, else now (whole seconds).
fn resolve_exported_at(flag: Option<&str>) -> Result<i64> {
    if let Some(text) = flag {
        return match parse_rfc3339(text) {
            Some(micros) => Ok(micros),
            None => bail!("--exported-at `{text}` is not an RFC 3339 time such as 2026-01-31T12:00:00Z"),
        };
    }
    if let Ok(epoch) = std::env::var("SOURCE_DATE_EPOCH") {
        let seconds: i64 = epoch.trim().parse().with_context(|| format!("SOURCE_DATE_EPOCH `{epoch}` is not whole seconds since 1970"))?;
        return memport::timefmt::micros_from_epoch_seconds(seconds as f64)
            .with_context(|| format!("SOURCE_DATE_EPOCH `{epoch}` is outside years 1-9999"));
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).context("the system clock is before 1970")?;
    Ok(now.as_secs() as i64 * 1_000_000)
}

fn finish_run(report: &RunReport, json: bool) -> Result<u8> {
    if json {
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut stdout, report)?;
        writeln!(stdout)?;
    }
    let counts = &report.counts;
    let skipped: u64 = counts.messages_skipped.values().sum();
    eprintln!(
        "memport: {} conversations ({} rejected), {} messages: {} written, {} duplicate, {} skipped ({}), {} rejected in {:.2}s",
        counts.conversations_read,
        counts.conversations_rejected,
        counts.messages_read,
        counts.messages_written,
        counts.messages_duplicate,
        skipped,
        counts.messages_skipped.iter().map(|(reason, count)| format!("{reason} {count}")).collect::<Vec<_>>().join(", "),
        counts.messages_rejected,
        report.elapsed_seconds,
    );
    if counts.memories_read > 0 {
        eprintln!(
            "memport: {} provider memories: {} written, {} repeated (same kind and text as an earlier one)",
            counts.memories_read, counts.memories_written, counts.memories_duplicate
        );
    }
    if let Some(memories) = &report.memories_extracted {
        eprintln!(
            "memport: {} memories extracted ({} current, {} superseded and kept) from {} candidates: {} merged as more evidence, {} already in the input, {} dropped (secret {}, low confidence {}, contact details {}, repeated messages {})",
            memories.written + memories.superseded_kept,
            memories.written,
            memories.superseded_kept,
            memories.candidates,
            memories.merged,
            memories.already_in_input,
            memories.dropped_secret + memories.dropped_low_confidence + memories.dropped_personal + memories.dropped_unwritten_message,
            memories.dropped_secret,
            memories.dropped_low_confidence,
            memories.dropped_personal,
            memories.dropped_unwritten_message,
        );
    }
    let redacted: u64 = report.secrets_redacted.values().sum();
    if redacted > 0 {
        eprintln!(
            "memport: {redacted} secrets masked in transcripts ({})",
            report.secrets_redacted.iter().map(|(kind, count)| format!("{kind} {count}")).collect::<Vec<_>>().join(", ")
        );
    }
    for output in &report.outputs {
        eprintln!("memport: wrote {} ({}, {} records, {} bytes)", output.path, output.format, output.records, output.bytes);
    }
    for note in &report.notes {
        eprintln!("memport: note: {note}");
    }
    if report.rejects > 0 {
        eprintln!("memport: {} records were rejected; --rejects FILE lists where and why", report.rejects);
        return Ok(EXIT_PROBLEMS);
    }
    Ok(0)
}

fn inspect(inputs: Vec<PathBuf>, json: bool) -> Result<u8> {
    let mut inspections = Vec::with_capacity(inputs.len());
    for input in inputs {
        inspections.push(memport::pipeline::inspect::inspect_input(
            &input,
            &memport::sources::SourceOptions::default(),
            default_threads(),
            true,
        )?);
    }
    if json {
        let summaries: Vec<_> = inspections
            .iter()
            .map(|inspection| {
                serde_json::json!({"inputs": [inspection.input], "counts": inspection.counts, "warnings": inspection.warnings.0, "notes": inspection.notes})
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&summaries)?);
        return Ok(0);
    }
    for inspection in &inspections {
        let input = &inspection.input;
        println!("{}\n  provider: {}\n  layout:   {}\n  size:     {} bytes", input.path, input.provider, input.layout, input.bytes);
        for file in &input.files {
            println!("  reads:    {file}");
        }
        let counts = &inspection.counts;
        println!(
            "  records:  {} conversations ({} unreadable), {} messages ({} unreadable), {} provider memories",
            counts.conversations_read, counts.conversations_rejected, counts.messages_read, counts.messages_rejected, counts.memories_read
        );
        println!(
            "  by policy (all branches, no dedup): {}",
            counts.messages_skipped.iter().map(|(reason, count)| format!("{reason} {count}")).collect::<Vec<_>>().join(", ")
        );
        for (warning, count) in &inspection.warnings.0 {
            println!("  warning:  {warning} x{count}");
        }
        for note in &inspection.notes {
            println!("  note:     {note}");
        }
    }
    Ok(0)
}

fn inspect_memories(inputs: Vec<PathBuf>, json: bool, dedup: memport::pipeline::DedupPolicy) -> Result<u8> {
    let preview = memport::pipeline::memories_preview::preview_memories(
        &inputs,
        &memport::sources::SourceOptions::default(),
        memport::stages::extract::consolidate::ConsolidateOptions::default(),
        dedup,
        default_threads(),
    )?;
    if json {
        let memories: Vec<_> = preview
            .memories
            .iter()
            .filter_map(|memory| memory.extracted.as_deref().map(|extracted| (memory, extracted)))
            .map(|(memory, extracted)| {
                serde_json::json!({
                    "id": memory.id,
                    "type": extracted.memory_type.as_str(),
                    "slot": extracted.slot,
                    "value": extracted.value,
                    "statement": memory.text,
                    "language": extracted.language,
                    "confidence": (f64::from(extracted.confidence) * 100.0).round() / 100.0,
                    "first_seen": memport::timefmt::format_rfc3339(extracted.first_seen),
                    "last_seen": memport::timefmt::format_rfc3339(extracted.last_seen),
                    "evidence": extracted.evidence.iter().map(|evidence| serde_json::json!({
                        "provider": evidence.provider.as_str(),
                        "conversation_id": evidence.conversation_id,
                        "message_id": evidence.message_id,
                        "span": [evidence.span.0, evidence.span.1],
                    })).collect::<Vec<_>>(),
                    "supersedes": extracted.supersedes,
                    "superseded_by": extracted.superseded_by,
                    "entities": extracted.entities.iter().map(|entity| serde_json::json!({"name": entity.name, "kind": entity.kind.as_str()})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let summary = serde_json::json!({
            "conversations": preview.conversations,
            "unreadable": preview.unreadable,
            "counts": preview.counts,
            "memories": memories,
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(0);
    }
    println!("{:<12}  {:>4}  {:>5}  statement", "type", "said", "conf");
    for memory in &preview.memories {
        let Some(extracted) = memory.extracted.as_deref() else { continue };
        let note = if extracted.superseded_by.is_some() { "  (no longer current)" } else { "" };
        let statement: String = memory.text.chars().take(100).collect();
        println!(
            "{:<12}  {:>4}  {:>5.2}  {statement}{note}",
            extracted.memory_type.as_str(),
            extracted.evidence_count,
            extracted.confidence
        );
    }
    let counts = &preview.counts;
    println!(
        "{} memories ({} no longer current) from {} conversations ({} unreadable); of {} candidates, {} were said again, \
         {} held a secret, {} were below the confidence floor, {} were contact details and {} came from repeated messages. \
         Nothing was written.",
        counts.written + counts.superseded_kept,
        counts.superseded_kept,
        preview.conversations,
        preview.unreadable,
        counts.candidates,
        counts.merged,
        counts.dropped_secret,
        counts.dropped_low_confidence,
        counts.dropped_personal,
        counts.dropped_unwritten_message,
    );
    Ok(0)
}

fn validate(files: Vec<PathBuf>, json: bool) -> Result<u8> {
    let mut all_valid = true;
    let mut results = Vec::with_capacity(files.len());
    for file in files {
        let result = memport::validate::validate_path(&file)?;
        all_valid &= result.is_valid();
        results.push(result);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        for result in &results {
            if result.is_valid() {
                println!("{}: valid {} ({} records)", result.path, result.format, result.records);
            } else if result.format == memport::validate::UNKNOWN_FORMAT {
                // No format to name: the one problem says what the file is instead.
                for problem in &result.problems {
                    println!("{}: invalid: {}", result.path, problem.message);
                }
            } else {
                println!("{}: invalid {} ({}; {} problems)", result.path, result.format, result.status(), result.problems.len());
                for problem in &result.problems {
                    println!("  {} {} at {}: {}", problem.status, problem.code, problem.location, problem.message);
                }
            }
            for notice in &result.notices {
                println!("  notice: {notice}");
            }
        }
    }
    Ok(if all_valid { 0 } else { EXIT_PROBLEMS })
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Command, MAX_THREADS, max_threads};

    /// `memport convert in --to aimem -o out` followed by `extra`.
    fn convert_with(extra: &[&str]) -> Result<super::ConvertArgs, clap::Error> {
        let mut args = vec!["memport", "convert", "in", "--to", "aimem", "-o", "out"];
        args.extend_from_slice(extra);
        match Cli::try_parse_from(args)?.command {
            Command::Convert(args) => Ok(*args),
            _ => panic!("parsed as another command"),
        }
    }

    /// Guards the clap attributes: a debug build checks them only when they are used.
    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// Guards `--timezone -05:00` as the docs write it: a value that starts with `-` is the
    /// option's value, not another option.
    #[test]
    fn a_negative_offset_is_a_timezone_value_in_either_form() {
        for extra in [&["--timezone", "-05:00"][..], &["--timezone=-05:00"][..]] {
            assert_eq!(convert_with(extra).map(|args| args.conversion.timezone).ok().as_deref(), Some("-05:00"), "{extra:?}");
        }
        // Negative numbers reach the checks that say what is wrong with them.
        assert_eq!(convert_with(&["--min-confidence", "-0.5"]).map(|args| args.conversion.min_confidence).ok(), Some(-0.5));
        let error = convert_with(&["--gap-minutes", "-5"]).err().map(|error| error.kind());
        assert_eq!(error, Some(clap::error::ErrorKind::ValueValidation));
    }

    /// Guards `--threads`: 0 is refused with a reason, a count is kept, and the cap is at least
    /// one per core, at most four per core and 256.
    #[test]
    fn threads_are_at_least_one_and_capped() {
        let error = convert_with(&["--threads", "0"]).err().map(|error| error.to_string()).unwrap_or_default();
        assert!(error.contains("at least 1 worker thread"), "{error}");
        let error = convert_with(&["--threads", "-3"]).err().map(|error| error.to_string()).unwrap_or_default();
        assert!(error.contains("not a number of worker threads"), "{error}");
        assert_eq!(convert_with(&["--threads", "3"]).map(|args| args.conversion.threads).ok(), Some(Some(3)));
        assert_eq!(max_threads(1), 4);
        assert_eq!(max_threads(2), 8);
        assert_eq!(max_threads(64), MAX_THREADS);
        assert_eq!(max_threads(1024), 1024);
        assert_eq!(super::capped_threads(1, "--threads"), 1);
        assert_eq!(super::capped_threads(usize::MAX, "--threads"), max_threads(memport::pipeline::default_threads()));
    }

    /// Guards `MI_OPTION_PURGE_DELAY`: option 15 must be the purge delay, whose default in the
    /// mimalloc built here is 1000 ms (no option next to it has that default).
    #[test]
    #[allow(unsafe_code)]
    fn the_option_set_is_mimallocs_purge_delay() {
        // SAFETY: `mi_option_get` reads an integer from mimalloc's option table.
        let default = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(default, 1000);
        }
        super::keep_freed_memory_mapped();
        // SAFETY: as above.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) }, -1);
    }
}
