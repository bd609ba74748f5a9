//! Groups consecutive records of a memory-format file that belong to one conversation into one
//! element, so that each conversation decodes whole (parent links, turn order) on one worker.
//!
//! The records come from a [`RecordSource`] (array elements, NDJSON lines, Markdown files). The
//! reader presents the groups as one JSON array the engine frames like any other input: each
//! element is `[<byte offset of the first record>, record, record, …]`. A record whose key is
//! `None` stands alone. A framing problem ends the array with a last element
//! `[<offset>, {"_frame_error": "…"}]`, which the decoder rejects with its reason, so what came
//! before is kept and the problem is reported where it is.

use std::io::{self, Read};

use crate::jcs::write_string;

/// Records of one file, in order.
pub trait RecordSource: Send {
    /// Appends the next record's bytes to `out` and returns its byte offset in the file, or
    /// `None` after the last one.
    ///
    /// # Errors
    /// A message for people saying what is wrong and where (the file is truncated, not an
    /// array, …); the records before it were delivered.
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, String>;
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

    fn next(&mut self) -> Result<Option<(u64, Vec<u8>)>, String> {
        if let Some(pending) = self.pending.take() {
            return Ok(Some(pending));
        }
        let mut record = Vec::new();
        Ok(self.source.next_record(&mut record)?.map(|offset| (offset, record)))
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
                self.out.extend_from_slice(b"[0,{\"_frame_error\":");
                write_string(&mut self.out, &problem);
                self.out.extend_from_slice(b"}]]");
                self.finished = true;
            }
            Ok(Some((offset, first))) => {
                separator(&mut self.out, self.groups);
                self.groups += 1;
                let key = (self.key)(&first);
                self.out.extend_from_slice(format!("[{offset},").as_bytes());
                self.out.extend_from_slice(&first);
                let mut size = first.len();
                while key.is_some() && size < MAX_GROUP_BYTES {
                    match self.next() {
                        Ok(Some((offset, record))) => {
                            if (self.key)(&record) == key {
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
                            // Close this group; the problem becomes the last element.
                            self.out.extend_from_slice(b"],\n[0,{\"_frame_error\":");
                            write_string(&mut self.out, &problem);
                            self.out.extend_from_slice(b"}");
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
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, String> {
        match self.framer.next_element_into(out) {
            Ok(found) => Ok(found.map(|(offset, _)| offset)),
            Err(error) => Err(format!("{}: {error}", self.display)),
        }
    }
}

/// Records that are the non-blank lines of an NDJSON file, optionally only those a filter
/// keeps (AIMEM's chunk lines).
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

impl<R: io::BufRead + Send> RecordSource for LineRecords<R> {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, String> {
        loop {
            let start = out.len();
            let offset = self.offset;
            let read = self.reader.read_until(b'\n', out).map_err(|error| format!("{}: byte {offset}: {error}", self.display))?;
            if read == 0 {
                return Ok(None);
            }
            self.offset += read as u64;
            while out.len() > start && matches!(out[out.len() - 1], b'\n' | b'\r' | b' ' | b'\t') {
                out.pop();
            }
            let line = &out[start..];
            let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) || !(self.keep)(line) {
                out.truncate(start);
                continue;
            }
            return Ok(Some(offset));
        }
    }
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
        fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, String> {
            if self.0.is_empty() {
                return match self.1.take() {
                    Some(problem) => Err(problem.to_owned()),
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
        assert_eq!(grouped(Vec::new(), None), serde_json::json!([]));
    }
}
