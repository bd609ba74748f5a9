//! Groups consecutive records of a memory-format file that belong to one conversation into one
//! element, so that each conversation decodes whole (parent links, turn order) on one worker.
//!
//! The records come from a [`RecordSource`] (array elements, NDJSON lines, Markdown files). The
//! reader hands the engine the groups as the elements of one JSON array, each whole as it is
//! made (with the offsets and limits the array framer would give them, had it framed the
//! array's text): each element is `[<byte offset of the first record>, record, record, …]`. A
//! record whose key is `None` stands alone. A record the source could not read (an NDJSON line that is not JSON,
//! an unreadable `.ump.md` file) travels as `{"_record_error": "…"}` in a group of its own; a
//! framing problem (a truncated array) ends the array with a last element
//! `[<offset>, {"_frame_error": "…"}]`. The decoders reject both with their reason and offset,
//! so what came before is kept and the problem is reported where it is.

use std::io::{self, Read};

use crate::jcs::write_string;
use crate::sources::json_array::{DEFAULT_ELEMENT_LIMIT, FrameError, MAX_DEPTH};
use crate::sources::json_walk::deepest_nesting;

/// Why a record source stopped early; the records before it were delivered.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct SourceProblem {
    /// Byte offset in the file the problem is at.
    pub offset: u64,
    /// What is wrong, and where, for people.
    pub message: String,
}

/// Records of one file, in order.
pub trait RecordSource: Send {
    /// Appends the next record's bytes to `out` and returns its byte offset in the file, or
    /// `None` after the last one.
    ///
    /// # Errors
    /// A [`SourceProblem`] when the file cannot be read on (it is truncated, not an array, …).
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem>;

    /// The group key of the record [`RecordSource::next_record`] gave last, when the source
    /// knows it (a store's export reads it from the store: [`crate::sources::supplied`]);
    /// `None` to have it read from the record's bytes.
    fn known_key(&mut self) -> Option<Option<String>> {
        None
    }
}

/// Whether a record stands for one the source could not read.
fn is_record_error(record: &[u8]) -> bool {
    record.starts_with(b"{\"_record_error\"")
}

/// Appends the record that stands for one that could not be read, saying why.
pub fn record_error(out: &mut Vec<u8>, reason: &str) {
    out.extend_from_slice(b"{\"_record_error\":");
    write_string(out, reason);
    out.push(b'}');
}

/// The conversation a record belongs to, from its raw bytes; `None` for a record that stands
/// alone (a memory).
pub type GroupKey = fn(&[u8]) -> Option<String>;

/// A group is cut at this size even when the next record has the same key: a broken or hostile
/// file cannot make one element grow without bound (the decoder sees the rest as a repeat).
const MAX_GROUP_BYTES: usize = 256 << 20;

/// The groups of a record source, handed to the engine one element at a time
/// ([`GroupingReader::next_element_into`]).
pub struct GroupingReader {
    source: Box<dyn RecordSource>,
    key: GroupKey,
    /// The first record of the next group (its offset, bytes and key), read while closing the
    /// previous one.
    pending: Option<Taken>,
    /// A problem the source stopped at inside a group: the element after that group.
    problem: Option<SourceProblem>,
    /// The source has no more records (it ended, or stopped at a problem).
    ended: bool,
    /// Elements handed out so far.
    elements: u64,
    /// The length of the array text so far, as a framer reading it would count it: where the
    /// next element's offset comes from.
    consumed: u64,
    /// Elements longer than this are rejected ([`GroupingReader::with_element_limit`]).
    element_limit: u64,
    /// The last element was handed out (and the array's closing `]` counted).
    finished: bool,
}

impl GroupingReader {
    /// Groups the records of `source` by `key`.
    pub fn new(source: Box<dyn RecordSource>, key: GroupKey) -> Self {
        GroupingReader {
            source,
            key,
            pending: None,
            problem: None,
            ended: false,
            elements: 0,
            consumed: 0,
            element_limit: DEFAULT_ELEMENT_LIMIT,
            finished: false,
        }
    }

    /// Rejects elements longer than `limit` bytes, as the array framer does
    /// ([`crate::sources::json_array::ArrayFramer::with_element_limit`]).
    #[must_use]
    pub fn with_element_limit(mut self, limit: u64) -> Self {
        self.element_limit = limit;
        self
    }

    fn next(&mut self) -> Result<Option<Taken>, SourceProblem> {
        if let Some(pending) = self.pending.take() {
            return Ok(Some(pending));
        }
        if self.ended {
            return Ok(None);
        }
        let mut record = Vec::new();
        let Some(offset) = self.source.next_record(&mut record)? else { return Ok(None) };
        // Told once a record, though a group's first is read while closing the group before.
        // Records the source could not read stand alone.
        let key = match self.source.known_key() {
            _ if is_record_error(&record) => None,
            Some(known) => known,
            None => (self.key)(&record),
        };
        Ok(Some(Taken { offset, record, key }))
    }

    /// Appends the next element to `out`: a group `[<offset>, record, …]`, or the element that
    /// reports where the source stopped (`[<offset>, {"_frame_error": …}]`, always the last).
    /// Returns how deeply the element nests, as far as the limit needs it told (exact when it
    /// reaches [`MAX_DEPTH`], else some depth below it); `None` after the last element.
    fn write_element(&mut self, out: &mut Vec<u8>) -> Option<u64> {
        if let Some(problem) = self.problem.take() {
            write_problem(out, &problem);
            return Some(2);
        }
        match self.next() {
            Ok(None) => {
                self.ended = true;
                None
            }
            Err(problem) => {
                self.ended = true;
                write_problem(out, &problem);
                Some(2)
            }
            Ok(Some(Taken { offset, record: first, key })) => {
                out.push(b'[');
                out.extend_from_slice(offset.to_string().as_bytes());
                out.push(b',');
                out.extend_from_slice(&first);
                let mut deepest = depth_bound(&first);
                let mut size = first.len();
                while key.is_some() && size < MAX_GROUP_BYTES {
                    match self.next() {
                        Ok(Some(taken)) => {
                            if taken.key == key {
                                size += taken.record.len();
                                deepest = deepest.max(depth_bound(&taken.record));
                                out.push(b',');
                                out.extend_from_slice(&taken.record);
                            } else {
                                self.pending = Some(taken);
                                break;
                            }
                        }
                        Ok(None) => {
                            self.ended = true;
                            break;
                        }
                        Err(problem) => {
                            // This group closes; the problem is the next element, and the last.
                            self.ended = true;
                            self.problem = Some(problem);
                            break;
                        }
                    }
                }
                out.push(b']');
                Some(deepest + 1)
            }
        }
    }

    /// Appends the next element to `out` and returns its offset and index in the array text
    /// (as [`crate::sources::json_array::ArrayFramer`] would frame them from it), or `None`
    /// after the last. The groups are whole when made: framing their text again to find where
    /// each ends cost the reader of a store's export a quarter of its time.
    ///
    /// # Errors
    /// An element longer than the element limit or nested deeper than [`MAX_DEPTH`]
    /// ([`FrameError::ElementTooLarge`], [`FrameError::ElementTooDeep`]): it is dropped from
    /// `out` and the next can be read.
    pub fn next_element_into(&mut self, out: &mut Vec<u8>) -> Result<Option<(u64, u64)>, FrameError> {
        // The array's text: `[`, the elements with `,\n` between them, `]`.
        let offset = if self.elements == 0 { 1 } else { self.consumed + 2 };
        let start = out.len();
        let Some(depth) = self.write_element(out) else {
            if !self.finished {
                self.finished = true;
                self.consumed = if self.elements == 0 { 2 } else { self.consumed + 1 };
            }
            return Ok(None);
        };
        let index = self.elements;
        self.elements += 1;
        let length = (out.len() - start) as u64;
        self.consumed = offset + length;
        // Both at once: the framer tells the depth first, unless it read past the limit in an
        // earlier read of its own than the one that went too deep (a group over a MiB long).
        if depth > MAX_DEPTH {
            out.truncate(start);
            return Err(FrameError::ElementTooDeep { index, element_offset: offset, depth });
        }
        if length > self.element_limit {
            out.truncate(start);
            return Err(FrameError::ElementTooLarge { index, element_offset: offset, length, limit: self.element_limit });
        }
        Ok(Some((offset, index)))
    }

    /// The length of the array text handed out so far, for progress.
    pub fn bytes_consumed(&self) -> u64 {
        self.consumed
    }
}

/// A record as the grouping reader read it.
struct Taken {
    /// Its byte offset in the file.
    offset: u64,
    record: Vec<u8>,
    /// Its group key.
    key: Option<String>,
}

/// Appends the element that says where the source stopped, and why.
fn write_problem(out: &mut Vec<u8>, problem: &SourceProblem) {
    out.extend_from_slice(format!("[{},{{\"_frame_error\":", problem.offset).as_bytes());
    write_string(out, &problem.message);
    out.extend_from_slice(b"}]");
}

/// How deeply `record` nests, as far as [`MAX_DEPTH`] needs it told: the exact depth when it
/// has as many opening brackets as the limit, else its count of them (it nests no deeper than
/// that). Counting bytes is far cheaper than walking its strings, and nearly every record has
/// a few dozen.
fn depth_bound(record: &[u8]) -> u64 {
    let openings = opening_brackets(record);
    if openings < MAX_DEPTH { openings } else { deepest_nesting(record) }
}

/// The `[` and `{` bytes of `bytes`, in strings or not.
fn opening_brackets(bytes: &[u8]) -> u64 {
    // Counted in bytes, 255 at most a count: the compiler makes each count a few vector
    // compares and subtractions per 32 bytes (summed as `u64` one by one, it made a loop that
    // cost more than walking the record).
    bytes.chunks(255).map(|chunk| u64::from(chunk.iter().fold(0u8, |count, &byte| count + u8::from(byte == b'[' || byte == b'{')))).sum()
}

/// Records that are the elements of a JSON array (top level, or under a member path).
pub struct ArrayRecords<R: Read + Send> {
    framer: crate::sources::json_array::ArrayFramer<R>,
    display: String,
}

impl<R: Read + Send> ArrayRecords<R> {
    /// The elements `framer` frames, named `display` in problems.
    pub fn new(framer: crate::sources::json_array::ArrayFramer<R>, display: &str) -> Self {
        ArrayRecords { framer, display: display.to_owned() }
    }
}

impl<R: Read + Send> RecordSource for ArrayRecords<R> {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
        let start = out.len();
        match self.framer.next_element_into(out) {
            Ok(found) => Ok(found.map(|(offset, _)| offset)),
            Err(error) if error.is_element_only() => {
                // Too large or too deep to read: rejected on its own, and the file goes on.
                out.truncate(start);
                record_error(out, &format!("{}: {error}", self.display));
                Ok(Some(error.offset()))
            }
            Err(error) => {
                out.truncate(start);
                Err(SourceProblem { offset: error.offset(), message: format!("{}: {error}", self.display) })
            }
        }
    }
}

/// Longest NDJSON line read as a record; a longer one is rejected (and skipped to its end)
/// rather than held.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Records that are the non-blank lines of an NDJSON file, optionally only those a filter
/// keeps (AIMEM's chunk lines). A kept line that is not JSON, or any line too long, becomes a
/// `_record_error` record: one bad line never swallows the lines after it.
pub struct LineRecords<R: io::BufRead + Send> {
    reader: R,
    offset: u64,
    display: String,
    keep: fn(&[u8]) -> bool,
}

impl<R: io::BufRead + Send> LineRecords<R> {
    /// Every non-blank line that `keep` accepts.
    pub fn new(reader: R, display: &str, keep: fn(&[u8]) -> bool) -> Self {
        LineRecords { reader, offset: 0, display: display.to_owned(), keep }
    }
}

impl<R: io::BufRead + Send> LineRecords<R> {
    /// Reads up to the next newline into `out`, keeping at most [`MAX_LINE_BYTES`]; returns the
    /// bytes consumed and whether the line was too long.
    fn read_line(&mut self, out: &mut Vec<u8>) -> io::Result<(usize, bool)> {
        let mut consumed = 0;
        let mut too_long = false;
        loop {
            let available = self.reader.fill_buf()?;
            if available.is_empty() {
                return Ok((consumed, too_long));
            }
            let (taken, ends) = match memchr::memchr(b'\n', available) {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            if !too_long && out.len() + taken <= MAX_LINE_BYTES {
                out.extend_from_slice(&available[..taken]);
            } else {
                too_long = true;
            }
            self.reader.consume(taken);
            consumed += taken;
            if ends {
                return Ok((consumed, too_long));
            }
        }
    }
}

impl<R: io::BufRead + Send> RecordSource for LineRecords<R> {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
        let mut line = Vec::new();
        loop {
            line.clear();
            let offset = self.offset;
            let (read, too_long) = self
                .read_line(&mut line)
                .map_err(|error| SourceProblem { offset, message: format!("{}: byte {offset}: {error}", self.display) })?;
            if read == 0 {
                return Ok(None);
            }
            self.offset += read as u64;
            if too_long {
                record_error(out, &format!("{}: byte {offset}: a line longer than {MAX_LINE_BYTES} bytes", self.display));
                return Ok(Some(offset));
            }
            // A line the filter passes over is not checked: it is not read as a record. (AIMEM,
            // the one filtered input, is checked whole before it is read.)
            if !(self.keep)(trimmed(&line)) {
                continue;
            }
            match checked_line(&line, true) {
                Ok(Some(text)) => out.extend_from_slice(text),
                Ok(None) => continue,
                Err(problem) => record_error(out, &format!("{}: byte {offset}: {problem}", self.display)),
            }
            return Ok(Some(offset));
        }
    }
}

/// A line without its byte-order mark and surrounding blanks.
fn trimmed(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line).trim_ascii()
}

/// The record a line of an NDJSON file holds (`None` for a blank line), or what is wrong with
/// it: not JSON (when `check_json`), or too deep to read. Whether it is too long is told where
/// it is read. Records memport itself wrote as JSON (a store's, each written from a parsed
/// value) are not parsed to check they are: one that is not JSON after all fails where the
/// decoder parses its group, and that group is rejected (an export refuses any reject), so the
/// check buys nothing there; in a store's export it was a twelfth of the work.
///
/// # Errors
/// Why the line is not a record, for people.
pub fn checked_line(line: &[u8], check_json: bool) -> Result<Option<&[u8]>, String> {
    let text = trimmed(line);
    if text.is_empty() {
        return Ok(None);
    }
    if check_json && let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(text) {
        return Err(format!("the line is not JSON: {error}"));
    }
    match too_deep(text) {
        Some(problem) => Err(format!("the line {problem}")),
        None => Ok(Some(text)),
    }
}

/// One file, whole, as one record: the file if it is JSON, else a record error saying why.
pub struct WholeFile {
    entry: Option<crate::sources::container::Entry>,
}

impl WholeFile {
    /// The file `entry` as one record.
    pub fn new(entry: crate::sources::container::Entry) -> Self {
        WholeFile { entry: Some(entry) }
    }
}

impl RecordSource for WholeFile {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
        let Some(entry) = self.entry.take() else { return Ok(None) };
        let limit = crate::sources::json_array::MAX_ELEMENT_BYTES as u64;
        match entry.read_small(limit) {
            Ok(bytes) => {
                let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
                match serde_json::from_slice::<serde::de::IgnoredAny>(text) {
                    Ok(_) => match too_deep(text) {
                        None => out.extend_from_slice(text.trim_ascii()),
                        Some(problem) => record_error(out, &format!("{}: the file {problem}", entry.display)),
                    },
                    Err(error) => record_error(out, &format!("{}: not JSON: {error}", entry.display)),
                }
            }
            Err(error) => record_error(out, &error.to_string()),
        }
        Ok(Some(0))
    }
}

/// Why a record is too deep to read, if it is: the readers after this recurse once a level
/// (`sonic_rs::get` in [`string_at`] overflowed the stack at 100,000 levels), and the framed
/// records are held to the same limit by the array framer.
fn too_deep(record: &[u8]) -> Option<String> {
    let limit = MAX_DEPTH;
    // No deeper than its count of opening brackets: counted, not walked, for nearly every record.
    if opening_brackets(record) <= limit {
        return None;
    }
    let deepest = deepest_nesting(record);
    (deepest > limit).then(|| format!("nests arrays and objects more than {limit} levels deep ({deepest} levels); it was skipped"))
}

/// The string at `path` of the JSON object `record`, read without parsing the rest.
pub fn string_at(record: &[u8], path: &[&str]) -> Option<String> {
    let value = sonic_rs::get(record, path).ok()?;
    sonic_rs::from_str::<String>(value.as_raw_str()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The groups as the text of one JSON array, every element as made (none rejected).
    fn array_text(mut reader: GroupingReader) -> Vec<u8> {
        let mut text = b"[".to_vec();
        let mut first = true;
        loop {
            let before = text.len();
            if !first {
                text.extend_from_slice(b",\n");
            }
            if reader.write_element(&mut text).is_none() {
                text.truncate(before);
                text.push(b']');
                return text;
            }
            first = false;
        }
    }

    struct Fixed(Vec<&'static str>, Option<&'static str>);

    impl RecordSource for Fixed {
        fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
            if self.0.is_empty() {
                return match self.1.take() {
                    Some(problem) => Err(SourceProblem { offset: 9, message: problem.to_owned() }),
                    None => Ok(None),
                };
            }
            out.extend_from_slice(self.0.remove(0).as_bytes());
            Ok(Some(7))
        }
    }

    fn grouped(records: Vec<&'static str>, problem: Option<&'static str>) -> serde_json::Value {
        let text = array_text(GroupingReader::new(Box::new(Fixed(records, problem)), |record| string_at(record, &["c"])));
        serde_json::from_slice(&text).unwrap()
    }

    #[test]
    fn consecutive_records_of_one_key_form_one_group_and_keyless_ones_stand_alone() {
        let groups = grouped(vec![r#"{"c":"a","n":1}"#, r#"{"c":"a","n":2}"#, r#"{"n":3}"#, r#"{"n":4}"#, r#"{"c":"b","n":5}"#], None);
        let sizes: Vec<usize> = groups.as_array().unwrap().iter().map(|group| group.as_array().unwrap().len() - 1).collect();
        assert_eq!(sizes, vec![2, 1, 1, 1]);
        assert_eq!(groups[0][0], 7);
    }

    #[test]
    fn a_framing_problem_becomes_the_last_element_after_what_came_before() {
        let groups = grouped(vec![r#"{"c":"a"}"#, r#"{"c":"a"}"#], Some("cut at byte 9"));
        assert_eq!(groups.as_array().unwrap().len(), 2);
        assert_eq!(groups[1][1]["_frame_error"], "cut at byte 9");
        assert_eq!(groups[1][0], 9);
        assert_eq!(grouped(Vec::new(), None), serde_json::json!([]));
    }

    /// Records made by the test, with a problem after them if any.
    struct Made(std::collections::VecDeque<Vec<u8>>, Option<String>, u64);

    impl RecordSource for Made {
        fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
            let Some(record) = self.0.pop_front() else {
                return match self.1.take() {
                    Some(message) => Err(SourceProblem { offset: self.2, message }),
                    None => Ok(None),
                };
            };
            out.extend_from_slice(&record);
            self.2 += record.len() as u64 + 1;
            Ok(Some(self.2 - record.len() as u64 - 1))
        }
    }

    fn reader(records: &[Vec<u8>], problem: Option<&str>, limit: u64) -> GroupingReader {
        let made = Made(records.iter().cloned().collect(), problem.map(str::to_owned), 0);
        GroupingReader::new(Box::new(made), |record| string_at(record, &["c"])).with_element_limit(limit)
    }

    /// An element's offset, index and bytes, or why it was rejected.
    type HandedOut = Result<((u64, u64), Vec<u8>), String>;

    /// Each element or rejection, and the bytes consumed at the end.
    type Framing = (Vec<HandedOut>, u64);

    /// Records, the problem after them, and the element limit.
    type Case<'a> = (Vec<Vec<u8>>, Option<&'a str>, u64);

    fn handed_out(mut next: impl FnMut(&mut Vec<u8>) -> Result<Option<(u64, u64)>, FrameError>) -> Vec<HandedOut> {
        let mut seen = Vec::new();
        loop {
            let mut out = b"kept".to_vec();
            match next(&mut out) {
                Ok(Some(at)) => seen.push(Ok((at, out))),
                Ok(None) => return seen,
                Err(error) if error.is_element_only() => {
                    assert_eq!(out, b"kept", "a rejected element leaves nothing behind");
                    seen.push(Err(error.to_string()));
                }
                Err(error) => panic!("{error}"),
            }
        }
    }

    /// The elements as the engine gets them, and as an array framer frames the groups' text.
    fn both_ways(records: &[Vec<u8>], problem: Option<&str>, limit: u64) -> (Framing, Framing) {
        let mut direct = reader(records, problem, limit);
        let elements = handed_out(|out| direct.next_element_into(out));
        let text = array_text(reader(records, problem, u64::MAX));
        let mut framer = crate::sources::json_array::ArrayFramer::new(&text[..]).with_element_limit(limit);
        let framed = handed_out(|out| framer.next_element_into(out));
        ((elements, direct.bytes_consumed()), (framed, framer.bytes_consumed()))
    }

    fn nested(depth: usize) -> Vec<u8> {
        format!(r#"{{"c":"a","d":{}1{}}}"#, "[".repeat(depth - 1), "]".repeat(depth - 1)).into_bytes()
    }

    #[test]
    fn groups_handed_out_whole_are_the_elements_a_framer_finds_in_their_text() {
        let plain = |text: &str| text.as_bytes().to_vec();
        let cases: Vec<Case> = vec![
            (Vec::new(), None, u64::MAX),
            (Vec::new(), Some("cut at once"), u64::MAX),
            (vec![plain(r#"{"c":"a","n":1}"#), plain(r#"{"c":"a","n":2}"#), plain(r#"{"n":3}"#), plain(r#"{"c":"b"}"#)], None, u64::MAX),
            (vec![plain(r#"{"c":"a"}"#), plain(r#"{"c":"a"}"#)], Some("cut in a group"), u64::MAX),
            (vec![plain(r#"{"_record_error":"bad line"}"#), plain(r#"{"c":"a"}"#)], Some("cut after a group"), u64::MAX),
            // At the depth limit a record is read; in its group it is one level too deep.
            (vec![plain(r#"{"c":"b"}"#), nested(511), nested(512), plain(r#"{"c":"b"}"#)], None, u64::MAX),
            (vec![plain(r#"{"n":1}"#), plain(&format!(r#"{{"c":"a","t":"{}"}}"#, "x".repeat(100))), plain(r#"{"n":2}"#)], None, 60),
        ];
        for (records, problem, limit) in cases {
            let (direct, framed) = both_ways(&records, problem, limit);
            assert_eq!(direct, framed, "{problem:?} {limit}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_records_group_as_their_text_frames(
            picks in proptest::collection::vec(0..7usize, 0..24),
            problem in proptest::option::of("[a-z ]{1,12}"),
            limit in proptest::sample::select(vec![40u64, 200, u64::MAX]),
        ) {
            let palette = [
                br#"{"c":"a","n":1}"#.to_vec(),
                br#"{"c":"b","t":"[{\"x\"}]"}"#.to_vec(),
                br#"{"n":2}"#.to_vec(),
                br#"{"_record_error":"line 3: not JSON"}"#.to_vec(),
                format!(r#"{{"c":"a","t":"{}"}}"#, "y".repeat(90)).into_bytes(),
                nested(512),
                nested(40),
            ];
            let records: Vec<Vec<u8>> = picks.iter().map(|&pick| palette[pick].clone()).collect();
            let (direct, framed) = both_ways(&records, problem.as_deref(), limit);
            proptest::prop_assert_eq!(direct, framed);
        }
    }

    #[test]
    fn a_record_is_too_deep_only_past_the_limit_however_many_brackets_its_strings_hold() {
        assert!(too_deep(&nested(512)).is_none());
        assert!(too_deep(&nested(513)).unwrap().contains("(513 levels)"));
        let brackets_in_a_string = format!(r#"{{"t":"{}"}}"#, "[{".repeat(600));
        assert!(too_deep(brackets_in_a_string.as_bytes()).is_none());
    }

    #[test]
    fn a_bad_ndjson_line_is_a_record_of_its_own_and_the_lines_after_it_are_read() {
        let input = b"\xEF\xBB\xBF{\"c\":\"a\",\"n\":1}\n{\"c\":\"a\",\"n\":\n\n{\"c\":\"a\",\"n\":3}\r\n";
        let lines = LineRecords::new(&input[..], "f.ndjson", |_| true);
        let text = array_text(GroupingReader::new(Box::new(lines), |record| string_at(record, &["c"])));
        let groups: serde_json::Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(groups.as_array().unwrap().len(), 3, "{groups}");
        assert_eq!(groups[0][1]["n"], 1);
        assert_eq!(groups[1][0], 19, "the bad line's own offset");
        assert!(groups[1][1]["_record_error"].as_str().unwrap().contains("byte 19"));
        assert_eq!(groups[2][1]["n"], 3);
    }

    #[test]
    fn records_written_as_json_are_handed_on_unparsed_and_still_held_to_the_depth_limit() {
        assert_eq!(checked_line(b"{\"n\":1}\n", false), Ok(Some(&b"{\"n\":1}"[..])));
        assert_eq!(checked_line(b"  \n", false), Ok(None));
        // Not JSON, and not looked at: the decoder parsing its group rejects it.
        assert_eq!(checked_line(b"{\"n\":", false), Ok(Some(&b"{\"n\":"[..])));
        assert!(checked_line(b"{\"n\":", true).is_err_and(|problem| problem.starts_with("the line is not JSON")));
        let deep = nested(513);
        assert!(checked_line(&deep, false).is_err_and(|problem| problem.contains("nests arrays and objects more than")));
    }
}
