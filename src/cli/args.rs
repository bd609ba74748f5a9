//! The command line's arguments, as clap reads them: the commands, their options and the
//! help they print. `main.rs` parses these and hands the library what they say.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::pipeline::{DedupPolicy, Settings};

/// The `memport` command line.
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
    after_help = "Examples:\n  memport convert ~/Downloads/chatgpt-export.zip --to aimem-ndjson -o brain.aimem.ndjson --report run.json\n  memport convert conversations.json --to aimem -o brain.aimem.json\n  memport convert claude-export/ grok.zip takeout.zip --to aimem-ndjson -o all.aimem.ndjson\n  memport convert copilot-activity-history.csv --timezone +02:00 --to aimem -o copilot.aimem.json\n  memport convert export.zip --to aimem,aimem-ndjson -o out/\n  memport convert export.zip --to pam -o my-memory/\n  memport convert export.zip --to pam,mif,ump,aime -o out/\n  memport convert memories.mif.json --to pam -o my-memory/\n  memport convert my-memory/ --to aimem-ndjson -o brain.aimem.ndjson\n  memport convert chatgpt.zip claude.zip takeout.zip --to parquet -o corpus/ --branches all\n  memport convert s3://exports/u123/chatgpt.zip --to parquet,pam -o s3://memory/u123/   (AWS_* variables or ~/.aws)\n  memport run pipelines/chatgpt-to-aimem.toml\n  memport inspect export.zip\n  memport convert export.zip --to store -o memory.db && memport serve memory.db --mcp\n  memport convert export.zip --to store -o postgres://me@db.example/memory\n  memport validate brain.aimem.json my-memory/\n\nExit codes: 0 success; 1 finished with rejected records (see --rejects) or an invalid file; 2 error (bad arguments, unreadable input, write failure)."
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// memport's commands.
#[derive(Subcommand)]
pub enum Command {
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
        #[arg(long, value_enum, default_value_t, hide_possible_values = true, value_name = "content|off")]
        dedup: DedupPolicy,
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
    /// Serve a memory store (made with `--to store`) to AI assistants: UMP's six operations
    /// (capabilities, recall, remember, get, revise, forget) as MCP tools on stdin/stdout
    /// (`--mcp`), or as UMP's HTTP binding (`--listen ADDRESS`: /ump/recall, /ump/remember,
    /// /ump/memory/ID, /ump/revise, /ump/forget, /ump/capabilities), where every call but
    /// capabilities needs a capability token (`memport token issue`); on the same address the
    /// MCP tools over MCP's streamable HTTP transport (/mcp) and AIMEM's HTTP profile
    /// (/v1/brain/export, /v1/brain/export/stream, /v1/brain/import): whole bundles out of and
    /// into the store.
    ///
    /// Add it to an MCP host's configuration as a command, e.g. for Claude Code:
    /// `claude mcp add memory -- memport serve /path/to/memory.db --mcp`. Recall ranks the
    /// store's memories and messages by text relevance, recency and salience. Writes happen in
    /// one transaction each; `--read-only` refuses them.
    #[command(
        after_help = "Examples:\n  memport convert chatgpt-export.zip --to store -o memory.db\n  memport serve memory.db --mcp\n  memport token issue memory.db --key owner.key --verbs read --ttl 24h > token\n  memport serve memory.db --listen 127.0.0.1:9420\n  memport serve postgres://me@db.example/memory --listen 127.0.0.1:9420   (a store in PostgreSQL)\n  curl -H \"Authorization: Bearer $(cat token)\" -d '{\"query\": \"where do I live\"}' http://127.0.0.1:9420/ump/recall\n  curl -H \"Authorization: Bearer $(cat token)\" 'http://127.0.0.1:9420/v1/brain/export?scope=SINCE&since=2026-10-01' -o delta.aimem.json\n  curl -H \"Authorization: Bearer $(cat token)\" --data-binary @brain.aimem.json http://127.0.0.1:9420/v1/brain/import"
    )]
    Serve {
        /// The store: its file, or its PostgreSQL database (postgres://user:password@host/db).
        store: PathBuf,
        /// Speak MCP on stdin/stdout (the default without --listen).
        #[arg(long, conflicts_with = "listen")]
        mcp: bool,
        /// Serve UMP's HTTP binding on this address (e.g. 127.0.0.1:9420) instead.
        #[arg(long, value_name = "ADDRESS")]
        listen: Option<std::net::SocketAddr>,
        /// With --listen: answer 408 to a request not read and answered in this many seconds
        /// (a slow or stalled client).
        #[arg(long, value_name = "SECONDS", default_value_t = 10, requires = "listen")]
        request_timeout: u64,
        /// With --listen: the largest AIMEM bundle `POST /v1/brain/import` takes (413
        /// beyond), like 512M or 8G.
        #[arg(long, value_name = "SIZE", default_value = "4G", requires = "listen")]
        max_import: crate::pipeline::settings::RecordSize,
        /// Refuse remember, revise, forget and imports.
        #[arg(long)]
        read_only: bool,
    },
    /// Capability tokens for `memport serve --listen`.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Import memory into an AIMEM server (`POST /v1/brain/import` of AIMEM's HTTP profile):
    /// `memport serve`, the AIMEM reference or any server that speaks the profile. An AIMEM
    /// bundle is checked and sent as it is; anything else memport reads (an export, PAM, an
    /// AIMEM stream, …) is converted to a bundle first. The body streams from disk; transient
    /// failures are retried with backoff; the server's summary is printed on stdout and its
    /// problem details on failure.
    #[command(
        after_help = "Examples:\n  memport push brain.aimem.json --to https://host/v1/brain --token-file token\n  memport push chatgpt-export.zip --to http://127.0.0.1:9420 --token-file token\n  MEMPORT_TOKEN=$(cat token) memport push my-memory/ --to http://127.0.0.1:9420"
    )]
    Push(Box<PushArgs>),
    /// Export memory from an AIMEM server (`GET /v1/brain/export` of AIMEM's HTTP profile) into
    /// any format memport writes: the whole brain, its DNA-class memories, or what was created
    /// since a time. The bundle is downloaded to a temporary file, checked, then converted like
    /// `memport convert` would. A server that keeps imported chunks' ids under its own
    /// producer (the AIMEM reference) is read with a notice; the outputs carry memport's ids.
    #[command(
        after_help = "Examples:\n  memport pull https://host/v1/brain --to aimem -o brain.aimem.json --token-file token\n  memport pull https://host/v1/brain --scope SINCE --since 2026-10-01 --to pam -o delta/ --token-file token\n  memport pull http://127.0.0.1:9420 --scope DNA_ONLY --stream --to ump-ndjson -o dna.ump.ndjson --token-file token"
    )]
    Pull(Box<PullArgs>),
    /// Forget records of a memory store: tombstone them (out of recall, kept for audit), or
    /// with --hard erase each record and its text for good. An erasure is remembered in the
    /// store, so later runs that load the same export into it do not bring the record back.
    #[command(
        after_help = "Examples:\n  memport forget memory.db urn:ump:nvsw2ljzgi3g...\n  memport forget memory.db urn:ump:nvsw2ljzgi3g... --hard --reason \"erasure request\""
    )]
    Forget {
        /// The store: its file, or its PostgreSQL database (postgres://user:password@host/db).
        store: PathBuf,
        /// Record ids (`urn:ump:…`), as `memport serve` shows them.
        #[arg(required = true)]
        ids: Vec<String>,
        /// Erase the records and their text instead of tombstoning them.
        #[arg(long)]
        hard: bool,
        /// Why, kept with an erasure.
        #[arg(long, default_value = "forgotten on the command line")]
        reason: String,
    },
}

/// `memport convert`'s arguments.
#[derive(Args)]
pub struct ConvertArgs {
    /// Export zips, unzipped folders or conversation files, read in the order given; or files
    /// of memport's formats (a PAM store folder or memory-store.json, MIF, UMP JSON/NDJSON or a
    /// folder of .ump.md files, AIME, an AIMEM bundle or stream). Any of them may be on S3:
    /// s3://bucket/export.zip (read by range), s3://bucket/folder/ (its objects).
    #[arg(value_parser = parse_location, required = true)]
    pub inputs: Vec<PathBuf>,
    /// What to write, and where.
    #[command(flatten)]
    pub out: OutputArgs,
    /// Leave out of every output what this memory store erased for good (`memport forget
    /// --hard`); repeatable. A store the run loads into (`--to store`) counts without it.
    #[arg(long, value_name = "STORE")]
    pub erasures_from: Vec<PathBuf>,
    /// How records are read and written.
    #[command(flatten)]
    pub settings: Settings,
}

/// What a conversion writes and where: `convert`'s and `pull`'s outputs.
#[derive(Args)]
pub struct OutputArgs {
    /// Output formats, comma-separated: aimem (bundle JSON), aimem-ndjson (stream), parquet
    /// (a folder of tables: conversations, messages, memories, assets), pam (a PAM v1.0 store
    /// folder: memory-store.json and conversations/), mif (MIF v2 JSON), ump (UMP 0.1 JSON
    /// array), ump-ndjson, ump-md (a folder of .ump.md records), aime (AIME v1.0 JSON), store
    /// (a memory store, the SQLite file `memport serve` answers from, or with -o
    /// postgres://user:password@host/db a store in PostgreSQL; a run loads its records into the
    /// store already there).
    #[arg(long = "to", value_name = "FORMAT[,FORMAT]", value_delimiter = ',', required = true)]
    pub formats: Vec<String>,
    /// Output file for one format; a folder for several (memory.aimem.json, memory.aimem.ndjson,
    /// parquet/, pam/, memory.mif.json, memory.ump.json, memory.ump.ndjson, ump-md/,
    /// memory.aime.json, memory.db). Parquet, PAM and ump-md always write a folder. s3://bucket/prefix/
    /// writes to S3: built locally (in TMPDIR), uploaded, and published when the run succeeds.
    #[arg(value_parser = parse_location, short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Write the JSON run report here (counts, warnings, outputs).
    #[arg(value_parser = parse_location, long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Write rejected records here as NDJSON (file, byte offset, conversation id, reason).
    #[arg(value_parser = parse_location, long, value_name = "FILE")]
    pub rejects: Option<PathBuf>,
}

/// Where an AIMEM server is and the token it takes.
#[derive(Args)]
pub struct ServerArgs {
    /// A file holding the bearer token the server gave (`memport token issue` for `memport
    /// serve`); without it, the MEMPORT_TOKEN environment variable.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

/// `memport push`'s arguments.
#[derive(Args)]
pub struct PushArgs {
    /// What to send: an AIMEM bundle, or anything `memport convert` reads.
    pub input: PathBuf,
    /// The server's AIMEM profile: https://host/v1/brain (or just https://host).
    #[arg(long = "to", value_name = "URL")]
    pub server: String,
    /// The server's token.
    #[command(flatten)]
    pub access: ServerArgs,
    /// How a non-AIMEM input is converted.
    #[command(flatten)]
    pub settings: Settings,
}

/// `memport pull`'s arguments.
#[derive(Args)]
pub struct PullArgs {
    /// The server's AIMEM profile: https://host/v1/brain (or just https://host).
    pub server: String,
    /// What to export: FULL (everything), DNA_ONLY (identity, preferences, decisions, pitfalls,
    /// procedures) or SINCE (what was created since --since).
    #[arg(long, default_value = "FULL", value_parser = ["FULL", "DNA_ONLY", "SINCE"])]
    pub scope: String,
    /// With --scope SINCE: the start, an ISO-8601 date or time (2026-10-01, 2026-10-01T00:00:00Z).
    #[arg(long, value_name = "TIME", required_if_eq("scope", "SINCE"))]
    pub since: Option<String>,
    /// Fetch the NDJSON stream (/export/stream) instead of one JSON bundle.
    #[arg(long)]
    pub stream: bool,
    /// What to write, and where (as `memport convert`).
    #[command(flatten)]
    pub out: OutputArgs,
    /// The server's token.
    #[command(flatten)]
    pub access: ServerArgs,
    /// How the bundle is converted.
    #[command(flatten)]
    pub settings: Settings,
}

/// `memport sync`'s arguments.
#[derive(Args)]
pub struct SyncArgs {
    /// This month's export: zips, unzipped folders or files. Conversations missing from a
    /// whole export (a zip or folder) are retracted; a lone file never retracts anything.
    #[arg(value_parser = parse_location, required_unless_present = "status")]
    pub inputs: Vec<PathBuf>,
    /// What earlier runs wrote: a SQLite file, made by the first sync; or a PostgreSQL
    /// database shared by many workers (postgres://user:password@host/db; each --tenant's
    /// rows apart, one sync per tenant at a time).
    #[arg(long, value_name = "FILE|URL")]
    pub state: PathBuf,
    /// Print the state's runs and per-provider totals instead of syncing.
    #[arg(long, conflicts_with_all = ["inputs", "formats", "output"])]
    pub status: bool,
    /// With --status: print JSON.
    #[arg(long, requires = "status")]
    pub json: bool,
    /// Output formats of each run, comma-separated (as for convert). Two grow across runs
    /// beside runs/ instead of going into each run's folder: parquet (OUT/parquet/) and store
    /// (OUT/memory.db, every run's records for `memport serve`, deleted conversations
    /// tombstoned).
    #[arg(long = "to", value_name = "FORMAT[,FORMAT]", value_delimiter = ',', required_unless_present = "status")]
    pub formats: Vec<String>,
    /// The folder that gets runs/<run-id>/ for each sync; or s3://bucket/prefix/, where each
    /// run is uploaded and published before the state records it.
    #[arg(value_parser = parse_location, short, long, value_name = "OUT", required_unless_present = "status")]
    pub output: Option<PathBuf>,
    /// With --to store: keep the memory store in PostgreSQL instead of OUT/memory.db
    /// (postgres://user:password@host/db; a schema other than public with
    /// ?options=-csearch_path%3DNAME). Each run loads into it in one transaction.
    #[arg(long, value_name = "URL", conflicts_with = "status")]
    pub store: Option<PathBuf>,
    /// How records are read and written.
    #[command(flatten)]
    pub settings: Settings,
}

/// `memport merge`'s arguments.
#[derive(Args)]
pub struct MergeArgs {
    /// The store the delta applies to: the first sync's OUT/runs/<run-id>/pam/, or the folder an
    /// earlier merge wrote.
    pub base: PathBuf,
    /// The delta: the pam/ folder of a later sync run (its run folder is taken too).
    pub delta: PathBuf,
    /// The folder the merged store is written to: new, empty, or a store memport wrote.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Print the merge report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// A path as given, or an object-storage URL (`s3://bucket/key`, kept as it is); a `file://`
/// URL is the local path it names.
pub fn parse_location(text: &str) -> Result<PathBuf, String> {
    Ok(crate::remote::local_form(std::path::Path::new(text)))
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Command, ConvertArgs};

    /// `memport convert in --to aimem -o out` followed by `extra`.
    fn convert_with(extra: &[&str]) -> Result<ConvertArgs, clap::Error> {
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
            assert_eq!(convert_with(extra).map(|args| args.settings.timezone.label).ok().as_deref(), Some("-05:00"), "{extra:?}");
        }
        // Negative numbers reach the checks that say what is wrong with them.
        assert_eq!(convert_with(&["--min-confidence", "-0.5"]).map(|args| args.settings.min_confidence).ok(), Some(-0.5));
        let error = convert_with(&["--gap-minutes", "-5"]).err().map(|error| error.kind());
        assert_eq!(error, Some(clap::error::ErrorKind::ValueValidation));
    }

    /// Guards `--threads`: 0 is refused with a reason, and a count is kept.
    #[test]
    fn threads_are_at_least_one() {
        let error = convert_with(&["--threads", "0"]).err().map(|error| error.to_string()).unwrap_or_default();
        assert!(error.contains("at least 1 worker thread"), "{error}");
        let error = convert_with(&["--threads", "-3"]).err().map(|error| error.to_string()).unwrap_or_default();
        assert!(error.contains("not a number of worker threads"), "{error}");
        assert_eq!(convert_with(&["--threads", "3"]).map(|args| args.settings.threads).ok(), Some(Some(3)));
    }
}

/// `memport token`'s commands.
#[derive(Subcommand)]
pub enum TokenCommand {
    /// Issue a capability token (UMP §5.2): verbs × scope × expiry, signed with the store
    /// owner's Ed25519 key and printed once on stdout. The first token names the store's owner
    /// key; every later one must be signed with the same key, and the server checks each call's
    /// token against it. Keep the token like a password: memport never logs it.
    #[command(
        after_help = "Examples:\n  openssl genpkey -algorithm ed25519 -out owner.key\n  memport token issue memory.db --key owner.key --verbs read --ttl 24h > reader.token\n  memport token issue memory.db --key owner.key --verbs read,write --agent chatgpt --ttl 7d"
    )]
    Issue {
        /// The store: its file, or its PostgreSQL database (postgres://user:password@host/db).
        store: PathBuf,
        /// The owner's Ed25519 private key: PKCS#8 PEM, 64 hex digits or 32 raw bytes.
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// What the token allows, comma-separated: read (recall, get), write (remember,
        /// revise, forget), derive (remember), export.
        #[arg(long, value_delimiter = ',', required = true)]
        verbs: Vec<String>,
        /// How long it is valid: a number with s, m, h or d (30m, 24h, 7d).
        #[arg(long, default_value = "24h")]
        ttl: String,
        /// Reach only the records of this agent (the provider they came from: chatgpt,
        /// claude, …); the whole store when left out.
        #[arg(long)]
        agent: Option<String>,
    },
}
