//! The harness the fuzz targets share: what a conversion does to each framed element, minus the
//! threads and the sinks, with the invariants a run relies on checked as it goes.
//!
//! The property every target checks is that memport never panics, aborts, overflows its stack,
//! hangs or runs out of memory on any input; a panic is a finding. Beyond that, [`Conversion`]
//! checks what must hold for every element a decoder sees (see [`Conversion::element`]), and the
//! helpers here give the targets the pieces they share: decode options, a work folder outside the
//! repository, a reader that hands out the input in uneven pieces ([`Trickle`]), and how one fuzz
//! input holds several files ([`FILE_SEPARATOR`]).

use std::fs;
use std::io::{self, Cursor, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

use memport::error::RunError;
use memport::model::{Disposition, Origin, SkipReason};
use memport::pipeline::extraction::{self, Collector, ExtractionSettings};
use memport::pipeline::report::Counts;
use memport::sources::container::{Container, Entry};
use memport::sources::json_array::{ArrayFramer, FrameError};
use memport::sources::regroup::GroupedElements;
use memport::sources::{BranchPolicy, DecodeOptions, Decoded, Decoder, Elements, Framing, InputPlan, RecordReject, Stream};
use memport::stages::dedup::Dedup;
use memport::stages::erasures::ErasedIds;
use memport::stages::extract::consolidate::ConsolidateOptions;
use memport::stages::extract::{secrets, Extraction};
use memport::stages::unique_ids::UniqueIds;
use memport::stages::Stage;
use memport::validate::Validation;

/// The export time every decode uses (2026-01-01T00:00:00Z): fixed, so a finding reproduces.
pub const EXPORTED_AT: i64 = 1_767_225_600_000_000;

/// Separates the files of one fuzz input for the targets that read several files (a PAM store
/// and its conversation files, a folder of `.ump.md` records). A NUL byte never occurs in the
/// JSON or Markdown those files hold, so a seed made of real files splits back exactly, and the
/// fuzzer can still add, drop or merge files by mutating it.
pub const FILE_SEPARATOR: &[u8] = b"\n\x00memport-fuzz-next-file\x00\n";

/// Decode options of `--branches active` with nothing extra asked of the decoders.
pub fn active_options() -> DecodeOptions {
    DecodeOptions {
        branches: BranchPolicy::Active,
        exported_at: EXPORTED_AT,
        keep_provider_fields: false,
        dedup_keys: false,
        pam_digests: false,
    }
}

/// Decode options of `--branches all` with everything an output may ask for: provider fields,
/// dedup keys and PAM digests.
pub fn all_options() -> DecodeOptions {
    DecodeOptions { branches: BranchPolicy::All, exported_at: EXPORTED_AT, keep_provider_fields: true, dedup_keys: true, pam_digests: true }
}

/// The worker pool the readers that need one (Gemini activity, the streams of a plan) run on.
pub fn pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .thread_name(|index| format!("fuzz-worker-{index}"))
            .build()
            .unwrap_or_else(|error| panic!("harness: cannot start the worker pool: {error}"))
    })
}

/// This process's work folder: `$MEMPORT_FUZZ_TMP/memport-fuzz-<pid>` (else under the system's
/// temporary folder). Never inside the repository; `scripts/fuzz` removes it after each target.
pub fn work_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::var_os("MEMPORT_FUZZ_TMP").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("memport-fuzz-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("harness: cannot create the work folder {}: {error}", dir.display()));
        dir
    })
    .as_path()
}

/// An empty folder `name` in the work folder (what the last input left there is removed).
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = work_dir().join(name);
    match fs::remove_dir_all(&dir) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => panic!("harness: cannot empty {}: {error}", dir.display()),
        _ => {}
    }
    fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("harness: cannot create {}: {error}", dir.display()));
    dir
}

/// Writes `data` to the file `name` in the work folder's `input` folder (alone there, so a reader
/// that looks beside its input finds nothing else) and returns its path.
pub fn input_file(name: &str, data: &[u8]) -> PathBuf {
    let dir = work_dir().join("input");
    fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("harness: cannot create {}: {error}", dir.display()));
    let path = dir.join(name);
    fs::write(&path, data).unwrap_or_else(|error| panic!("harness: cannot write {}: {error}", path.display()));
    path
}

/// The entry of the single file at `path`, as memport's planners make it.
pub fn file_entry(path: &Path) -> Option<Entry> {
    Container::File(path.to_path_buf()).entries().ok()?.into_iter().next()
}

/// How reports and rejects name a fuzzed file.
pub fn display(name: &str) -> Arc<str> {
    Arc::from(format!("fuzz/{name}"))
}

/// The files one fuzz input holds (see [`FILE_SEPARATOR`]), at most `most`; the last one takes
/// the rest of the input.
pub fn split_files(data: &[u8], most: usize) -> Vec<&[u8]> {
    let mut files = Vec::new();
    let mut rest = data;
    while files.len() + 1 < most {
        let Some(at) = find(rest, FILE_SEPARATOR) else { break };
        files.push(&rest[..at]);
        rest = &rest[at + FILE_SEPARATOR.len()..];
    }
    files.push(rest);
    files
}

/// Where `needle` first occurs in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// The path `reference` names inside `folder`, when it stays inside it: relative, made of plain
/// names only, short. A fuzzed PAM index decides where the harness writes a conversation file,
/// so nothing may lead out of the work folder.
pub fn inside(folder: &Path, reference: &str) -> Option<PathBuf> {
    let path = Path::new(reference);
    let components: Vec<Component<'_>> = path.components().collect();
    let plain = !components.is_empty() && components.len() <= 6 && components.iter().all(|part| matches!(part, Component::Normal(_)));
    (plain && reference.len() <= 200).then(|| folder.join(path))
}

/// A reader over `data` that hands it out in uneven pieces (sizes from a generator seeded by the
/// data, so a finding reproduces), to check that what a reader finds does not depend on how its
/// input arrives. The first piece is at least 3 bytes: a byte-order mark is documented to be
/// skipped only when the first read holds it whole, as any file read does.
pub struct Trickle {
    data: Vec<u8>,
    position: usize,
    state: u64,
    largest: usize,
    first: bool,
}

impl Trickle {
    /// Hands out `data` in pieces of 1 to about an eighth of its length (8 to 64 KiB).
    pub fn new(data: Vec<u8>) -> Trickle {
        // FNV-1a of the data; never 0, which xorshift would keep at 0.
        let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3));
        let largest = (data.len() / 8).clamp(8, 1 << 16);
        Trickle { data, position: 0, state: seed | 1, largest, first: true }
    }
}

impl Read for Trickle {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let left = self.data.len() - self.position;
        if left == 0 || buffer.is_empty() {
            return Ok(0);
        }
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let mut size = 1 + (self.state % self.largest as u64) as usize;
        if self.first {
            self.first = false;
            size = size.max(3);
        }
        let size = size.min(buffer.len()).min(left);
        buffer[..size].copy_from_slice(&self.data[self.position..self.position + size]);
        self.position += size;
        Ok(size)
    }
}

/// A boxed reader over a copy of `data`, as the readers that run on a thread of their own take it.
pub fn reader(data: &[u8]) -> Box<dyn Read + Send> {
    Box::new(Cursor::new(data.to_vec()))
}

/// The elements of the top-level JSON array `data` holds (`Framing::Array`).
pub fn framed(data: &[u8]) -> Elements {
    Elements::Framed(ArrayFramer::new(reader(data)))
}

/// The elements of the array under member `name` of the object `data` holds
/// (`Framing::Member`).
pub fn framed_member(data: &[u8], name: &str) -> Elements {
    Elements::Framed(ArrayFramer::member_array(reader(data), name))
}

/// The whole document `data` holds as one element (`Framing::Whole`).
pub fn framed_whole(data: &[u8]) -> Elements {
    Elements::Framed(ArrayFramer::whole_document(reader(data)))
}

/// Panics on the one error that is never bad input: [`RunError::Internal`] says a memport
/// invariant broke (a worker died, a spill record memport wrote itself did not read back).
pub fn check_run_error(error: &RunError, doing: &str) {
    if let RunError::Internal(message) = error {
        panic!("{doing}: an internal error, which is a bug whatever the input: {message}");
    }
}

/// Checks what `memport validate` promises for a readable file or folder at `path`: problems,
/// never an error about the input itself ("a file that is not JSON at all is a 422 problem, not
/// an error"), and every problem a 409 or a 422 with a code.
pub fn check_validation(result: Result<Validation, RunError>, path: &Path) {
    match result {
        Ok(validation) => {
            for problem in &validation.problems {
                assert!(
                    matches!(problem.status, 409 | 422) && !problem.code.is_empty(),
                    "validate: a problem with status {} and code {:?} at {} (only 409 and 422, each with a code, are documented)",
                    problem.status,
                    problem.code,
                    problem.location
                );
            }
            assert_eq!(
                validation.status(),
                validation.problems.first().map_or(200, |problem| problem.status),
                "validate: the status is not the first problem's"
            );
        }
        Err(RunError::Read { path: read, source, .. }) if read == path.display().to_string() => {
            panic!("validate: reading the readable input {read} failed ({source}) instead of reporting a problem in it")
        }
        Err(error) => check_run_error(&error, "validate"),
    }
}

/// The conversations `grouped` hands out, each as (offset, number, bytes).
///
/// # Errors
/// When its spill files or the input cannot be read back.
pub fn collect_grouped(mut grouped: GroupedElements) -> io::Result<Vec<(u64, u64, Vec<u8>)>> {
    let mut elements = Vec::new();
    loop {
        let mut bytes = Vec::new();
        match grouped.next_element_into(&mut bytes)? {
            Some((offset, number)) => elements.push((offset, number, bytes)),
            None => return Ok(elements),
        }
    }
}

/// Panics, naming the first difference, unless two readings of one input gave the same elements.
pub fn assert_same_elements(what: &str, first: &[(u64, u64, Vec<u8>)], second: &[(u64, u64, Vec<u8>)]) {
    for (position, (one, other)) in first.iter().zip(second).enumerate() {
        assert!(
            one == other,
            "{what}: element {position} differs: ({}, {}, {} bytes) against ({}, {}, {} bytes)",
            one.0,
            one.1,
            one.2.len(),
            other.0,
            other.1,
            other.2.len()
        );
    }
    assert_eq!(first.len(), second.len(), "{what}: the number of elements differs");
}

/// What a conversion does with each framed element, on one thread and without sinks: decode it
/// (under both branch policies), extract and mask secrets as the workers do, run the ordered
/// stages, count it for the report and hand its candidates to the extraction collector; at the
/// end, consolidate the extracted memories and hand them out in batches, as the engine does.
pub struct Conversion {
    active: DecodeOptions,
    all: DecodeOptions,
    settings: ExtractionSettings,
    stages: Vec<Box<dyn Stage>>,
    collector: Option<Collector>,
    counts: Counts,
}

impl Default for Conversion {
    fn default() -> Self {
        Conversion::new()
    }
}

impl Conversion {
    /// A conversion that extracts memories and masks secrets (`--extract rules --redact secrets`).
    pub fn new() -> Conversion {
        let consolidate = ConsolidateOptions::default();
        Conversion {
            active: active_options(),
            all: all_options(),
            settings: ExtractionSettings { extract: Some(consolidate), redact_secrets: true },
            stages: vec![Box::new(UniqueIds::default()), Box::new(Dedup::default())],
            // Without a temporary file for the evidence the rest still runs.
            collector: Collector::new(consolidate).ok(),
            counts: Counts::new(),
        }
    }

    /// Decodes one element with `decoder` and checks:
    ///
    /// - the branch policy and the output options change no more than the contract lets them:
    ///   both decodes reject the element, or neither does; they give the same conversation id,
    ///   the same messages (ids, roles, parents) and rejects and memories in the same number;
    ///   a disposition differs only where `--branches active` left a message out as off the
    ///   active branch, and `--branches all` never does;
    /// - decoders set only `Keep` and `Skip` (never `Duplicate`) and no memory is a duplicate
    ///   (only the stages decide those);
    /// - no reject's reason is an `internal` one (those mean memport's own intermediate records,
    ///   regrouped rows or grouped memory-format records, did not read back);
    /// - each extracted candidate's evidence is the text at its span in its message, after
    ///   secrets were masked, and holds no secret ("a sentence holding a secret never becomes a
    ///   memory", README);
    /// - the stages only turn kept messages into duplicates (they never drop or reorder).
    pub fn element(&mut self, decoder: &dyn Decoder, bytes: &[u8], origin: Origin) {
        let active = decoder.decode(bytes, origin.clone(), &self.active);
        let all = decoder.decode(bytes, origin.clone(), &self.all);
        let place = format!("element {} at byte {} of {}", origin.index, origin.offset, origin.file);
        match (active, all) {
            (Ok(active), Ok(all)) => {
                check_decoded(&active, false, &place);
                check_decoded(&all, true, &place);
                compare_policies(&active, &all, &place);
                self.collect(all, &place);
            }
            (Err(active), Err(all)) => {
                check_reject(&active, &place);
                check_reject(&all, &place);
                self.rejected_element();
            }
            (active, all) => panic!(
                "{place}: the branch policy and output options changed whether the element is rejected: active {}, all {}",
                outcome(&active),
                outcome(&all)
            ),
        }
    }

    /// Counts an element the framer skipped on its own (too large or too deep), as the engine
    /// does.
    pub fn rejected_element(&mut self) {
        self.counts.conversations_read += 1;
        self.counts.conversations_rejected += 1;
    }

    fn collect(&mut self, decoded: Decoded, place: &str) {
        let Decoded { mut conversation, rejected_messages, .. } = decoded;
        let findings = extraction::on_worker(&mut conversation, &self.settings, &self.all);
        if let Some(found) = &findings.extraction {
            check_candidates(&conversation, found, place);
        }
        let before: Vec<Disposition> = conversation.messages.iter().map(|message| message.disposition).collect();
        for stage in &mut self.stages {
            // The ordered stages take no findings of the workers' steps.
            if let Err(error) = stage.process(&mut conversation, None) {
                panic!("{place}: the {} stage failed: {error}", stage.name());
            }
        }
        assert_eq!(conversation.messages.len(), before.len(), "{place}: a stage dropped or added messages");
        for (message, was) in conversation.messages.iter().zip(&before) {
            assert!(
                message.disposition == *was || (*was == Disposition::Keep && message.disposition == Disposition::Duplicate),
                "{place}: a stage turned message {:?} from {was:?} into {:?}",
                message.id,
                message.disposition
            );
        }
        self.counts.add_conversation(&conversation);
        self.counts.messages_read += rejected_messages.len() as u64;
        self.counts.messages_rejected += rejected_messages.len() as u64;
        let failed = match (self.collector.as_mut(), findings.extraction) {
            (Some(collector), Some(found)) => collector.add(&conversation, found).is_err(),
            _ => false,
        };
        if failed {
            // The evidence spool could not be written (the temporary folder is full): not a
            // finding, and the consolidation can no longer be checked.
            self.collector = None;
        }
    }

    /// Checks that the counts balance, then consolidates the extracted memories, hands them all
    /// out in batches and checks that the memory counts balance too.
    pub fn finish(self) {
        assert!(self.counts.balances(), "the run's counts do not balance: {:?}", self.counts);
        let Some(collector) = self.collector else { return };
        // No earlier syncs and nothing erased in a store, as in a plain conversion.
        let Ok(mut consolidated) = collector.finish(&[], &ErasedIds::default()) else { return };
        let mut batch = 0u64;
        loop {
            match extraction::next_records(&mut consolidated, batch) {
                Ok(records) if records.is_empty() => break,
                Ok(_) => batch += 1,
                Err(_) => return,
            }
            assert!(batch < 1_000_000, "extraction: the memories-only records never end");
        }
        let counts = extraction::counts_of(&consolidated);
        assert!(counts.balances(), "extraction: the memory counts do not balance: {counts:?}");
    }
}

fn outcome(result: &Result<Decoded, RecordReject>) -> String {
    match result {
        Ok(decoded) => format!("decoded ({} messages)", decoded.conversation.messages.len()),
        Err(reject) => format!("rejected ({})", reject.reason),
    }
}

fn check_reject(reject: &RecordReject, place: &str) {
    assert!(!reject.reason.starts_with("internal"), "{place}: rejected for an internal reason: {}", reject.reason);
}

fn check_decoded(decoded: &Decoded, all_branches: bool, place: &str) {
    for message in &decoded.conversation.messages {
        assert!(message.disposition != Disposition::Duplicate, "{place}: the decoder marked message {:?} a duplicate", message.id);
        assert!(
            !(all_branches && message.disposition == Disposition::Skip(SkipReason::OffBranch)),
            "{place}: message {:?} is left out as off the active branch under --branches all",
            message.id
        );
    }
    for memory in &decoded.conversation.memories {
        assert!(!memory.is_duplicate, "{place}: the decoder marked memory {:?} a duplicate", memory.id);
    }
    for reject in &decoded.rejected_messages {
        check_reject(reject, place);
    }
}

fn compare_policies(active: &Decoded, all: &Decoded, place: &str) {
    let (one, other) = (&active.conversation, &all.conversation);
    assert_eq!(one.id, other.id, "{place}: the conversation id depends on the branch policy");
    assert_eq!(one.messages.len(), other.messages.len(), "{place}: the number of messages depends on the branch policy");
    assert_eq!(active.rejected_messages.len(), all.rejected_messages.len(), "{place}: the message rejects depend on the branch policy");
    assert_eq!(one.memories.len(), other.memories.len(), "{place}: the memories depend on the branch policy");
    for (message, same) in one.messages.iter().zip(&other.messages) {
        assert!(
            message.id == same.id && message.role == same.role && message.parent_id == same.parent_id,
            "{place}: message {:?} (role {:?}, parent {:?}) is message {:?} (role {:?}, parent {:?}) under --branches all",
            message.id,
            message.role,
            message.parent_id,
            same.id,
            same.role,
            same.parent_id
        );
        assert!(
            message.disposition == same.disposition || message.disposition == Disposition::Skip(SkipReason::OffBranch),
            "{place}: message {:?} is {:?} under --branches active but {:?} under --branches all",
            message.id,
            message.disposition,
            same.disposition
        );
    }
}

fn check_candidates(conversation: &memport::model::Conversation, extraction: &Extraction, place: &str) {
    for candidate in &extraction.candidates {
        let Some(message) = conversation.messages.get(candidate.message_index) else {
            panic!("{place}: a candidate names message {} of {}", candidate.message_index, conversation.messages.len());
        };
        // README: "A sentence holding a secret never becomes a memory."
        assert!(
            !secrets::contains_secret(&candidate.evidence),
            "{place}: candidate {:?} comes from a sentence that holds a secret: {:?}",
            candidate.statement,
            candidate.evidence
        );
        let (start, end) = candidate.span;
        assert!(
            message.text.get(start..end) == Some(candidate.evidence.as_str()),
            "{place}: the evidence of candidate {:?} ({:?}) is not the text at its span {start}..{end} of message {:?}",
            candidate.statement,
            candidate.evidence,
            message.id
        );
    }
}

/// Frames every element of `elements`, decodes it into `conversion` and stops as the engine
/// does: an element skipped on its own (too large or too deep) is counted and framing goes on;
/// any other framing error ends the stream. Framing stops early once `budget` bytes are read.
///
/// `own_records` says the elements come from memport's own grouped record array (a
/// memory-format stream): that array is built, not read, so any framing error in it other than
/// an element skipped on its own is a finding.
pub fn drain(conversion: &mut Conversion, elements: Elements, decoder: &dyn Decoder, file: &Arc<str>, own_records: bool, budget: u64) {
    let mut elements = elements;
    let mut bytes = Vec::new();
    loop {
        if elements.bytes_consumed() > budget {
            return;
        }
        bytes.clear();
        match elements.next_element_into(&mut bytes) {
            Ok(Some((offset, index))) => conversion.element(decoder, &bytes, Origin { file: file.clone(), offset, index }),
            Ok(None) => return,
            Err(FrameError::Io(_)) => return,
            Err(error) if error.is_element_only() => conversion.rejected_element(),
            Err(error) => {
                assert!(!own_records, "{file}: memport's own grouped record array does not frame: {error}");
                return;
            }
        }
    }
}

/// Opens `stream` as the engine does and drains it into `conversion` (see [`drain`]).
pub fn drain_stream(conversion: &mut Conversion, stream: &Stream, budget: u64) {
    let own_records = matches!(stream.framing, Framing::Own(_));
    match stream.elements(pool()) {
        Ok(elements) => drain(conversion, elements, &*stream.decoder, &stream.entry.display, own_records, budget),
        Err(error) => check_run_error(&error, "opening a stream"),
    }
}

/// Converts every stream of `plan`, in order, as one run, and finishes it.
pub fn drain_plan(plan: &InputPlan, budget: u64) {
    let mut conversion = Conversion::new();
    for stream in &plan.streams {
        drain_stream(&mut conversion, stream, budget);
    }
    conversion.finish();
}

/// Reads the memory-format file at `path` as `memport convert` does: planned by content, every
/// stream of the plan converted. When it is not planned as `format` (the fuzzer broke the
/// members that name the format), its records are read anyway through `direct`, the layouts and
/// decoders the plan of `format` would use, so the readers are fuzzed behind detection too.
pub fn memory_format_input(path: &Path, format: &str, direct: &[(memport::sources::formats::RecordLayout, Arc<dyn Decoder>)]) {
    let mut read_as_format = false;
    match memport::sources::formats::plan_memory_format(path) {
        Ok(Some(plan)) => {
            read_as_format = plan.format == Some(format);
            drain_plan(&plan, u64::MAX);
        }
        Ok(None) => {}
        Err(error) => check_run_error(&error, "planning a memory-format input"),
    }
    if read_as_format {
        return;
    }
    let Some(entry) = file_entry(path) else { return };
    let mut conversion = Conversion::new();
    for (layout, decoder) in direct {
        let stream = Stream::new(entry.clone(), layout.clone().framing(), decoder.clone());
        drain_stream(&mut conversion, &stream, u64::MAX);
    }
    conversion.finish();
}
