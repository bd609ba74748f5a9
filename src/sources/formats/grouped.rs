//! Groups consecutive records of a memory-format file that belong to one conversation into one
//! element, so that each conversation decodes whole (parent links, turn order) on one worker.
//!
//! The records come from a [`RecordSource`] (array elements, NDJSON lines, Markdown files). The
//! reader presents the groups as one JSON array the engine frames like any other input: each
//! element is `[<byte offset of the first record>, record, record, …]`. A record whose key is
//! `None` stands alone. A record the source could not read (an NDJSON line that is not JSON,
//! an unreadable `.ump.md` file) travels as `{"_record_error": "…"}` in a group of its own; a
//! framing problem (a truncated array) ends the array with a last element
//! `[<offset>, {"_frame_error": "…"}]`. The decoders reject both with their reason and offset,
//! so what came before is kept and the problem is reported where it is.

use std::io::{self, Read};

use crate::jcs::write_string;

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

/// The JSON array of groups, as a reader.
pub struct GroupingReader {
    source: Box<dyn RecordSource>,
    key: GroupKey,
    /// The first record of the next group, read while closing the previous one.
    pending: Option<(u64, Vec<u8>)>,
    out: Vec<u8>,
    position: usize,
    started: bool,
    finished: bool,
    groups: u64,
}

impl GroupingReader {
    /// Groups the records of `source` by `key`.
    pub fn new(source: Box<dyn RecordSource>, key: GroupKey) -> Self {
        GroupingReader { source, key, pending: None, out: Vec::new(), position: 0, started: false, finished: false, groups: 0 }
    }

    fn next(&mut self) -> Result<Option<(u64, Vec<u8>)>, SourceProblem> {
        if let Some(pending) = self.pending.take() {
            return Ok(Some(pending));
        }
        let mut record = Vec::new();
        Ok(self.source.next_record(&mut record)?.map(|offset| (offset, record)))
    }

    /// The group key of `record`; records the source could not read stand alone.
    fn key_of(&self, record: &[u8]) -> Option<String> {
        if is_record_error(record) { None } else { (self.key)(record) }
    }

    /// Fills `out` with the next piece of the array.
    fn refill(&mut self) {
        self.out.clear();
        self.position = 0;
        if !self.started {
            self.started = true;
            self.out.push(b'[');
        }
        let separator = |out: &mut Vec<u8>, groups: u64| {
            if groups > 0 {
                out.extend_from_slice(b",\n");
            }
        };
        match self.next() {
            Ok(None) => {
                self.out.push(b']');
                self.finished = true;
            }
            Err(problem) => {
                separator(&mut self.out, self.groups);
                self.out.extend_from_slice(format!("[{},{{\"_frame_error\":", problem.offset).as_bytes());
                write_string(&mut self.out, &problem.message);
                self.out.extend_from_slice(b"}]]");
                self.finished = true;
            }
            Ok(Some((offset, first))) => {
                separator(&mut self.out, self.groups);
                self.groups += 1;
                let key = self.key_of(&first);
                self.out.extend_from_slice(format!("[{offset},").as_bytes());
                self.out.extend_from_slice(&first);
                let mut size = first.len();
                while key.is_some() && size < MAX_GROUP_BYTES {
                    match self.next() {
                        Ok(Some((offset, record))) => {
                            if self.key_of(&record) == key {
                                size += record.len();
                                self.out.push(b',');
                                self.out.extend_from_slice(&record);
                            } else {
                                self.pending = Some((offset, record));
                                break;
                            }
                        }
                        Ok(None) => break,
                        Err(problem) => {
                            // Close this group; the problem becomes the last element, and the
                            // array ends after it.
                            self.out.extend_from_slice(format!("],\n[{},{{\"_frame_error\":", problem.offset).as_bytes());
                            write_string(&mut self.out, &problem.message);
                            self.out.extend_from_slice(b"}]");
                            self.finished = true;
                            break;
                        }
                    }
                }
                self.out.push(b']');
            }
        }
    }
}

impl Read for GroupingReader {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        while self.position >= self.out.len() {
            if self.finished {
                return Ok(0);
            }
            self.refill();
        }
        let count = buffer.len().min(self.out.len() - self.position);
        buffer[..count].copy_from_slice(&self.out[self.position..self.position + count]);
        self.position += count;
        Ok(count)
    }
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
const MAX_LINE_BYTES: usize = 64 << 20;

/// Records that are the non-blank lines of an NDJSON file, optionally only those a filter
/// keeps (AIMEM's chunk lines). A line that is not JSON, or is too long, becomes a
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
            let text = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line).trim_ascii();
            if text.is_empty() {
                continue;
            }
            if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(text) {
                record_error(out, &format!("{}: byte {offset}: the line is not JSON: {error}", self.display));
                return Ok(Some(offset));
            }
            if let Some(problem) = too_deep(text) {
                record_error(out, &format!("{}: byte {offset}: the line {problem}", self.display));
                return Ok(Some(offset));
            }
            if !(self.keep)(text) {
                continue;
            }
            out.extend_from_slice(text);
            return Ok(Some(offset));
        }
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
    let limit = crate::sources::json_array::MAX_DEPTH;
    let deepest = crate::sources::json_walk::deepest_nesting(record);
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
        let mut text = String::new();
        GroupingReader::new(Box::new(Fixed(records, problem)), |record| string_at(record, &["c"])).read_to_string(&mut text).unwrap();
        serde_json::from_str(&text).unwrap()
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

    #[test]
    fn a_bad_ndjson_line_is_a_record_of_its_own_and_the_lines_after_it_are_read() {
        let input = b"\xEF\xBB\xBF{\"c\":\"a\",\"n\":1}\n{\"c\":\"a\",\"n\":\n\n{\"c\":\"a\",\"n\":3}\r\n";
        let lines = LineRecords::new(&input[..], "f.ndjson", |_| true);
        let mut text = String::new();
        GroupingReader::new(Box::new(lines), |record| string_at(record, &["c"])).read_to_string(&mut text).unwrap();
        let groups: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(groups.as_array().unwrap().len(), 3, "{groups}");
        assert_eq!(groups[0][1]["n"], 1);
        assert_eq!(groups[1][0], 19, "the bad line's own offset");
        assert!(groups[1][1]["_record_error"].as_str().unwrap().contains("byte 19"));
        assert_eq!(groups[2][1]["n"], 3);
    }
}
