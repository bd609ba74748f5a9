//! The `memport` command line: parses arguments, calls the library, prints the error chain and
//! maps outcomes to exit codes. `anyhow` lives here only.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Parser;

use memport::cli::args::{Cli, Command, ConvertArgs, MergeArgs, PullArgs, PushArgs, ServerArgs, SyncArgs, TokenCommand};
use memport::cli::{inspect_text, run_text, threads, validate_text};
use memport::pipeline::config;
use memport::pipeline::report::RunReport;
use memport::pipeline::{Options, Settings, default_threads};
use memport::sinks::{OutputFormat, output_paths};
use memport::timefmt::parse_rfc3339;

#[path = "main/allocator.rs"]
mod allocator;

// mimalloc for the many short strings of the decode workers, the system allocator for huge
// blocks (docs/design-decisions.md#memory).
#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

/// Exit code: the run finished but some records were rejected, or a file is invalid.
const EXIT_PROBLEMS: u8 = 1;
/// Exit code: bad arguments, configuration or I/O; nothing usable was written.
const EXIT_FAILED: u8 = 2;

fn main() -> ExitCode {
    allocator::keep_freed_memory_mapped();
    // Off glibc there is nothing to set.
    let _ = allocator::one_system_arena();
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
        Command::Push(args) => push(*args),
        Command::Pull(args) => pull(*args),
        Command::Run { pipeline, exported_at, json } => match config::load_job(&pipeline, resolve_exported_at(exported_at.as_deref())?)? {
            config::Job::Convert(mut options) => {
                check_inputs(&options.inputs)?;
                // The pipeline file's `threads` was checked (at least 1) as it was loaded.
                options.settings.threads = Some(capped_threads(options.settings.threads(), "threads"));
                let report = memport::run(&options)?;
                finish_run(&report, json)
            }
            config::Job::Sync { mut options, state, output, formats, store } => {
                check_inputs(&options.inputs)?;
                options.settings.threads = Some(capped_threads(options.settings.threads(), "threads"));
                run_sync(&memport::sync::SyncOptions { convert: options, formats, state, output_root: output, store }, json)
            }
        },
        Command::Inspect { inputs, json, memories: true, dedup } => {
            check_inputs(&inputs)?;
            inspect_memories(inputs, json, dedup)
        }
        Command::Inspect { inputs, json, memories: false, .. } => {
            check_inputs(&inputs)?;
            inspect(inputs, json)
        }
        Command::Validate { files, json } => validate(files, json),
        Command::Serve { store, mcp: _, listen, request_timeout, max_import, read_only } => {
            let limits = memport::serve::http::Limits {
                request_timeout: std::time::Duration::from_secs(request_timeout.max(1)),
                max_import: max_import.bytes(),
            };
            serve(&store, listen, limits, read_only)
        }
        Command::Token(TokenCommand::Issue { store, key, verbs, ttl, agent }) => issue_token(&store, &key, &verbs, &ttl, agent),
        Command::Forget { store, ids, hard, reason } => forget(&store, &ids, hard, &reason),
    }
}

/// `memport forget`: tombstones (or with `hard` erases) records of a store, all or none.
fn forget(path: &Path, ids: &[String], hard: bool, reason: &str) -> Result<u8> {
    let shown = memport::store::shown_location(path);
    let mut store = memport::store::Store::open(path, true).with_context(|| format!("opening the store {shown}"))?;
    let now = memport::serve::now_micros();
    let results = store
        .in_transaction(|store| {
            ids.iter().map(|id| store.forget(id, reason, hard, now).map(|result| (id, result))).collect::<Result<Vec<_>, _>>()
        })
        .with_context(|| format!("nothing was changed in {shown}"))?;
    for (id, result) in results {
        match result {
            memport::store::edit::Forgotten::Erased { derived } if derived > 0 => {
                eprintln!("memport: {id}: erased, with {derived} memories derived from it")
            }
            _ => eprintln!("memport: {id}: {}", result.name()),
        }
    }
    Ok(0)
}

/// `memport serve`: the store's records as UMP tools over MCP on stdio, until the client
/// closes it (nothing but the protocol goes to stdout), or as UMP's HTTP binding on `listen`.
fn serve(path: &Path, listen: Option<std::net::SocketAddr>, limits: memport::serve::http::Limits, read_only: bool) -> Result<u8> {
    let in_database = memport::store::is_postgres_url(&path.to_string_lossy());
    let shown = memport::store::shown_location(path);
    if !in_database && !path.is_file() {
        bail!("{shown}: no such store file; make one with `memport convert EXPORT --to store -o {shown}`");
    }
    let mut store = memport::store::Store::open(path, !read_only).with_context(|| format!("opening the store {shown}"))?;
    let Some(address) = listen else {
        // An MCP host waits for the server's first answer: the index is built beside it.
        if store.searches_in_memory() {
            warm_search_index(path, &mut store)?;
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the server's runtime")?;
        runtime
            .block_on(memport::serve::mcp::serve_stdio(store, !read_only))
            .map_err(|message| anyhow::anyhow!("serving MCP on stdio: {message}"))?;
        return Ok(0);
    };
    let Some(owner_key) = store.owner_key()? else {
        bail!(
            "{shown} has no owner key yet, so no token could be checked: issue one first with `memport token issue {shown} --key OWNER_KEY --verbs read`"
        );
    };
    if store.searches_in_memory() {
        // Built before the port opens, so no request waits for it past its timeout: a client
        // finds the port closed until the server can answer (about 1 s per 100,000 records).
        eprintln!("memport: indexing {shown} for recall");
        store.search_index().with_context(|| format!("indexing the store {shown} for recall"))?;
    }
    // One read-only connection per core and a spare: recalls run side by side.
    let mut readers = (0..=memport::pipeline::default_threads())
        .map(|_| memport::store::Store::open(path, false))
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("opening the store {shown}"))?;
    let mut mcp_store = memport::store::Store::open(path, !read_only).with_context(|| format!("opening the store {shown}"))?;
    for connection in readers.iter_mut().chain([&mut mcp_store]) {
        connection.share_search_index(&store);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the server's runtime")?;
    runtime
        .block_on(memport::serve::http::serve(
            memport::serve::http::Connections { writer: store, readers, mcp: Some(mcp_store) },
            owner_key,
            !read_only,
            address,
            limits,
            |bound| {
                eprintln!(
                    "memport: serving {shown} on http://{bound}/ump/ (UMP's HTTP binding), http://{bound}/mcp (MCP) and http://{bound}/v1/brain/ (AIMEM's HTTP profile); Ctrl-C stops"
                );
            },
        ))
        .with_context(|| format!("serving on {address}"))?;
    Ok(0)
}

/// Builds recall's search index of the store at `path` on a thread of its own, for `store`
/// and the connections that share its index, so the server answers at once and the first
/// recall waits only for what is left of the build.
fn warm_search_index(path: &Path, store: &mut memport::store::Store) -> Result<()> {
    let mut warm = memport::store::Store::open(path, false).with_context(|| format!("opening the store {}", path.display()))?;
    warm.share_search_index(store);
    std::thread::spawn(move || {
        if let Err(error) = warm.search_index() {
            eprintln!("memport: building the search index: {error} (recall will try again)");
        }
    });
    Ok(())
}

/// `memport token issue`: a capability token for the store, signed with the owner's key.
fn issue_token(path: &Path, key: &Path, verbs: &[String], ttl: &str, agent: Option<String>) -> Result<u8> {
    use memport::serve::token::{Grant, TokenScope, Verb, issue};
    let key = memport::signing::SignKey::load(key)?;
    let verbs = verbs
        .iter()
        .map(|name| Verb::parse(name).with_context(|| format!("--verbs: `{name}` is not a verb (read, write, derive, export)")))
        .collect::<Result<Vec<_>>>()?;
    let seconds = parse_duration(ttl).with_context(|| format!("--ttl: `{ttl}` is not a duration (30m, 24h, 7d)"))?;
    let shown = memport::store::shown_location(path);
    let store = memport::store::Store::open(path, true).with_context(|| format!("opening the store {shown}"))?;
    let did = key.did_key();
    match store.owner_key()? {
        Some(owner) if owner != did => bail!("{shown}'s tokens are signed with the owner key {owner}; this key is {did}"),
        Some(_) => {}
        None => store.set_owner_key(&did)?,
    }
    let now = memport::serve::now_micros() / 1_000_000;
    let grant = Grant { iss: did, verbs, scope: TokenScope { agent }, iat: now, exp: now.saturating_add(seconds) };
    println!("{}", issue(&grant, &key));
    Ok(0)
}

/// Seconds in `30s`, `30m`, `24h` or `7d`.
fn parse_duration(text: &str) -> Option<i64> {
    let text = text.trim();
    let unit = match text.chars().last()? {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return None,
    };
    let number: i64 = text[..text.len() - 1].parse().ok().filter(|number| *number > 0)?;
    number.checked_mul(unit)
}

/// Refuses inputs that are not regular files or folders before anything opens them: a device
/// is read forever and a named pipe blocks until something writes to it.
fn check_inputs(inputs: &[PathBuf]) -> Result<()> {
    for input in inputs {
        memport::validate::input_file::check_regular_input(input)?;
    }
    Ok(())
}

/// `requested` workers, lowered to what this machine can use, saying so on stderr.
fn capped_threads(requested: usize, option: &str) -> usize {
    let (threads, note) = threads::capped_threads(requested, option);
    if let Some(note) = note {
        eprintln!("memport: {note}");
    }
    threads
}

fn convert(args: ConvertArgs) -> Result<u8> {
    check_inputs(&args.inputs)?;
    let formats = parse_formats(&args.out.formats)?;
    let outputs = output_paths(&formats, &args.out.output)?;
    let mut options = conversion_options(args.inputs, outputs, args.out.report, args.out.rejects, args.settings)?;
    options.erasures_from = args.erasures_from;
    let report = memport::run(&options)?;
    finish_run(&report, false)
}

/// The bearer token for an AIMEM server: `--token-file`, else `MEMPORT_TOKEN`.
fn server_token(access: &ServerArgs) -> Result<String> {
    if let Some(path) = &access.token_file {
        let token = std::fs::read_to_string(path).with_context(|| format!("reading the token file {}", path.display()))?;
        return Ok(token.trim().to_owned());
    }
    match std::env::var("MEMPORT_TOKEN") {
        Ok(token) if !token.trim().is_empty() => Ok(token.trim().to_owned()),
        _ => bail!("the server needs a token: give --token-file FILE, or set MEMPORT_TOKEN"),
    }
}

/// `memport push`: an AIMEM bundle (made from the input when it is not one) sent to a server.
fn push(args: PushArgs) -> Result<u8> {
    check_inputs(std::slice::from_ref(&args.input))?;
    let server = memport::remote::brain_http::BrainServer::new(&args.server, &server_token(&args.access)?);
    let folder = tempfile::Builder::new().prefix("memport-push-").tempdir().context("making a temporary folder")?;
    // An AIMEM bundle goes as it is, checked first (another producer's ids are the server's to
    // judge); anything else is converted. Only a file that names AIMEM's members is checked as
    // a bundle: validation reads any other file as one and would refuse an export.
    let is_export = args.input.is_file()
        && !matches!(
            memport::sources::detect::sniff(&memport::spec::detect::file_head(&args.input)),
            memport::sources::detect::Sniffed::Other | memport::sources::detect::Sniffed::EmptyArray
        );
    let looks_like_bundle = !is_export && memport::spec::detect::memory_format_of(&args.input) == Some("an AIMEM file");
    let validation = if looks_like_bundle { memport::validate::validate_path(&args.input).ok() } else { None };
    let bundle = if let Some(mut validation) = validation.filter(|validation| validation.format == "aimem") {
        memport::validate::aimem::tolerate_foreign_ids(&mut validation);
        if !validation.is_valid() {
            eprint!("{}", validate_text::validations_text(std::slice::from_ref(&validation)));
            bail!("{} is not a bundle a server accepts; nothing was sent", args.input.display());
        }
        args.input.clone()
    } else {
        // A server of the reference's kind imports bundles only: anything else becomes one. An
        // AIMEM stream is carried over whole (every branch, every record, no extraction).
        let settings = if looks_like_bundle { args.settings.keeping_every_record() } else { args.settings };
        let bundle = folder.path().join("push.aimem.json");
        let options = conversion_options(vec![args.input.clone()], vec![(OutputFormat::Aimem, bundle.clone())], None, None, settings)?;
        let report = memport::run(&options)?;
        eprint!("{}", run_text::run_summary(&report));
        bundle
    };
    let summary = server.push(&bundle)?;
    print_json(&summary)?;
    eprintln!("memport: {} imported into {}", args.input.display(), args.server);
    Ok(0)
}

/// `memport pull`: a server's export, downloaded, checked and converted to the formats asked.
fn pull(args: PullArgs) -> Result<u8> {
    let server = memport::remote::brain_http::BrainServer::new(&args.server, &server_token(&args.access)?);
    let folder = tempfile::Builder::new().prefix("memport-pull-").tempdir().context("making a temporary folder")?;
    let bundle = folder.path().join(if args.stream { "pulled.aimem.ndjson" } else { "pulled.aimem.json" });
    let since = args.since.as_deref().filter(|_| args.scope == "SINCE");
    let bytes = server.pull(&args.scope, since, args.stream, &bundle)?;
    if !args.settings.quiet {
        eprintln!("memport: pulled {bytes} bytes ({} export) from {}", args.scope, args.server);
    }
    let formats = parse_formats(&args.out.formats)?;
    let outputs = output_paths(&formats, &args.out.output)?;
    let options = conversion_options(vec![bundle], outputs, args.out.report, args.out.rejects, args.settings)?;
    let report = memport::run(&options)?;
    finish_run(&report, false)
}

fn sync(args: SyncArgs) -> Result<u8> {
    if args.status {
        let tenant = args.settings.tenant_id();
        let status = memport::sync::status::read(&args.state, &tenant)?;
        if args.json {
            print_json(&status)?;
        } else {
            print!("{}", status.to_text());
        }
        return Ok(0);
    }
    check_inputs(&args.inputs)?;
    let formats = parse_formats(&args.formats)?;
    // Required by clap unless --status, which returned above.
    let output_root = args.output.context("-o is required")?;
    let convert = conversion_options(args.inputs, Vec::new(), None, None, args.settings)?;
    run_sync(&memport::sync::SyncOptions { convert, formats, state: args.state, output_root, store: args.store }, false)
}

/// Runs a sync and says what it did; with `json`, prints its report (`sync.json`) on stdout.
fn run_sync(options: &memport::sync::SyncOptions, json: bool) -> Result<u8> {
    let report = memport::sync::sync(options)?;
    if json {
        print_json(&report)?;
    }
    eprint!("{}", run_text::sync_summary(&report));
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
        print_json(&report)?;
    }
    eprint!("{}", run_text::merge_summary(&report));
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
    mut settings: Settings,
) -> Result<Options> {
    settings.threads = settings.threads.map(|threads| capped_threads(threads, "--threads"));
    Ok(Options {
        inputs,
        supplied: None,
        also_read: Vec::new(),
        outputs,
        report,
        rejects,
        exported_at: resolve_exported_at(settings.exported_at.as_deref())?,
        sign_key: settings.sign_key.as_deref().map(memport::signing::SignKey::load).transpose()?,
        settings,
        incremental: None,
        dna_only: false,
        erasures_from: Vec::new(),
        aimem_links: None,
        memories_apart: false,
        evidence_named: None,
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

/// Says what a run did (its report on stdout with `json`) and gives its exit code.
fn finish_run(report: &RunReport, json: bool) -> Result<u8> {
    if json {
        print_json(report)?;
    }
    eprint!("{}", run_text::run_summary(report));
    Ok(if report.rejects > 0 { EXIT_PROBLEMS } else { 0 })
}

/// `value` as pretty JSON on stdout.
fn print_json(value: &impl serde::Serialize) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut stdout, value)?;
    writeln!(stdout)?;
    Ok(())
}

fn inspect(inputs: Vec<PathBuf>, json: bool) -> Result<u8> {
    let mut inspections = Vec::with_capacity(inputs.len());
    for input in inputs {
        let source = memport::sources::SourceOptions::default();
        inspections.push(memport::pipeline::inspect::inspect_input(&input, &source, default_threads(), true)?);
    }
    if json {
        print_json(&inspect_text::inspections_json(&inspections))?;
    } else {
        print!("{}", inspect_text::inspections_text(&inspections));
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
        print_json(&inspect_text::memories_json(&preview))?;
    } else {
        print!("{}", inspect_text::memories_text(&preview));
    }
    Ok(0)
}

fn validate(files: Vec<PathBuf>, json: bool) -> Result<u8> {
    let mut results = Vec::with_capacity(files.len());
    for file in files {
        results.push(memport::validate::validate_path(&file)?);
    }
    let all_valid = results.iter().all(memport::validate::Validation::is_valid);
    if json {
        print_json(&results)?;
    } else {
        print!("{}", validate_text::validations_text(&results));
    }
    Ok(if all_valid { 0 } else { EXIT_PROBLEMS })
}
