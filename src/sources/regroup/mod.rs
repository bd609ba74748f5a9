//! Regroups flat activity records (Copilot CSV rows, Gemini activity records) into
//! conversations: the exports list records newest first, interleave conversations and carry no
//! conversation ids, so each record gets a fixed-size index entry in a temporary file (and is
//! copied to a spill file, unless it can be read back from the input file itself), then the
//! index is walked in chronological order and each conversation is assembled, on demand, as
//! one element handed straight to the engine (no second framing pass): the records' raw bytes
//! one after another, each behind a small header (see [`BinaryRows`]), never re-encoded.
//!
//! Grouping walks the records in chronological order (the index file read backwards when the
//! export lists newest first; ties keep the file's order reversed, so an answer stays after the
//! question it shares a timestamp with). A record with a conversation key (Gemini's
//! conversation URL) joins that key's conversation. Otherwise it joins the open conversation of
//! its title (Copilot) or of the keyless stream (Gemini) when it comes at most `gap` after that
//! conversation's last record, and starts a new one otherwise.
//!
//! With [`Regrouper::attach_untitled`] (Gemini), a record with neither id nor title (a feedback
//! or "Used Gemini Apps" record) may also join the conversation of the record just before it,
//! within the gap: it is about that exchange.
//!
//! A conversation is written out once it is closed: when the walk passes `gap` after its last
//! record (for keyed conversations [`KEYED_IDLE`]), at [`MAX_GROUP_RECORDS`] records or
//! [`MAX_GROUP_BYTES`] bytes, or at the end. So memory holds only the conversations active in
//! the last window of time, never the whole index, and stays flat however long the export is.
//! A keyed conversation resumed after more than [`KEYED_IDLE`] is written as a continuation with
//! the same conversation id (its messages keep their own ids).

//!
//! The parts: [`rows`] (the binary row format of an element), [`index`] (the fixed-size index
//! entry of a record), [`grouper`] (which conversation a record joins), [`read_back`] (walking
//! the index and assembling each conversation); this module spills and indexes the records.

mod grouper;
mod index;
mod read_back;
mod rows;

use std::fs::File;
use std::io::{self, BufWriter, Write};

use crate::error::RunError;
use crate::model::Micros;
use grouper::Grouper;
use index::{IndexEntry, Source};
pub use read_back::GroupedElements;
pub use rows::{BINARY_ROW_HEADER, BinaryRow, BinaryRows, push_binary_row, push_problem_row, read_binary_row, rows_fingerprint};

/// Most records one regrouped conversation holds.
pub const MAX_GROUP_RECORDS: usize = 2_000;
/// Most bytes of records one regrouped conversation holds.
pub const MAX_GROUP_BYTES: u64 = 16 << 20;
/// How long a conversation with an explicit id stays open without a new record: 7 days.
pub const KEYED_IDLE: Micros = 7 * 24 * 3600 * 1_000_000;

/// Where a record belongs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupKey {
    /// An explicit conversation id: every record with it is one conversation.
    Conversation(String),
    /// A title (or an empty string for untitled streams): grouped by time proximity.
    Title(String),
}

/// Spills records and reads them back grouped into conversations.
pub struct Regrouper {
    spill: BufWriter<File>,
    /// The input file itself, when records can be read back from it (an unpacked file, not a
    /// zip entry): then they are not copied to the spill at all.
    input: Option<File>,
    spilled: u64,
    index: BufWriter<File>,
    records: u64,
    first_time: Option<Micros>,
    last_time: Option<Micros>,
    gap: Micros,
    display: String,
    attach_untitled: bool,
    element_prefix: Vec<u8>,
}

impl Regrouper {
    /// Starts a regrouping of `display` with the given proximity `gap`.
    ///
    /// # Errors
    /// When no temporary file can be created.
    pub fn new(display: &str, gap: Micros) -> Result<Self, RunError> {
        let temporary = || tempfile::tempfile().map_err(|error| RunError::temporary(format!("regrouping {display}"), error));
        Ok(Regrouper {
            spill: BufWriter::with_capacity(1 << 20, temporary()?),
            input: None,
            spilled: 0,
            index: BufWriter::with_capacity(1 << 16, temporary()?),
            records: 0,
            first_time: None,
            last_time: None,
            gap,
            display: display.to_owned(),
            attach_untitled: false,
            element_prefix: Vec::new(),
        })
    }

    /// Starts every element with `prefix` (what the decoder needs to know about the whole
    /// file, such as a CSV header's column positions).
    pub fn set_element_prefix(&mut self, prefix: Vec<u8>) {
        self.element_prefix = prefix;
    }

    /// Lets records keyed by an empty title join the conversation of the record before them
    /// (whatever its key) when it is within the gap.
    pub fn attach_untitled(mut self) -> Self {
        self.attach_untitled = true;
        self
    }

    /// Reads records pushed with [`Regrouper::push_input_record`] back from `input`, the file
    /// being regrouped, instead of copying them to the spill.
    pub fn read_back_from(mut self, input: File) -> Self {
        self.input = Some(input);
        self
    }

    /// Whether records can be read back from the input (see [`Regrouper::read_back_from`]).
    pub fn reads_back(&self) -> bool {
        self.input.is_some()
    }

    /// Adds one record in file order, copied to the spill: `row` is a whole binary row (see
    /// [`push_binary_row`] and [`push_problem_row`]).
    ///
    /// # Errors
    /// When the spill files cannot be written.
    pub fn push(&mut self, key: &GroupKey, time: Option<Micros>, row: &[u8]) -> Result<(), RunError> {
        let length = u32::try_from(row.len()).map_err(|_| RunError::Internal("a single activity record over 4 GiB".into()))?;
        let offset = self.spilled;
        self.spill.write_all(row).map_err(|error| RunError::temporary(format!("regrouping {}", self.display), error))?;
        self.spilled += u64::from(length);
        self.add_entry(key, time, offset, length, Source::Spill, 0)
    }

    /// Adds one record of the input, `length` bytes at `offset`, that is read back from it
    /// later (see [`Regrouper::read_back_from`]) as a binary row with `offset` and `index`.
    ///
    /// # Errors
    /// When the index cannot be written.
    pub fn push_input_record(
        &mut self,
        key: &GroupKey,
        time: Option<Micros>,
        (offset, index): (u64, u64),
        length: usize,
    ) -> Result<(), RunError> {
        let length = u32::try_from(length).map_err(|_| RunError::Internal("a single activity record over 4 GiB".into()))?;
        self.add_entry(key, time, offset, length, Source::Input, index)
    }

    fn add_entry(
        &mut self,
        key: &GroupKey,
        time: Option<Micros>,
        offset: u64,
        length: u32,
        source: Source,
        index: u64,
    ) -> Result<(), RunError> {
        let (explicit, key_text) = match key {
            GroupKey::Conversation(id) => (true, id.as_str()),
            GroupKey::Title(title) => (false, title.as_str()),
        };
        let entry = IndexEntry { offset, length, explicit, source, time, key: key_hash(key_text), index };
        self.index.write_all(&entry.encode()).map_err(|error| RunError::temporary(format!("regrouping {}", self.display), error))?;
        self.records += 1;
        if let Some(time) = time {
            self.first_time.get_or_insert(time);
            self.last_time = Some(time);
        }
        Ok(())
    }

    /// Returns the conversations, one element each.
    ///
    /// # Errors
    /// When the spill files cannot be flushed.
    pub fn finish(self) -> Result<GroupedElements, RunError> {
        let display = self.display.clone();
        let io_error = |error: io::Error| RunError::temporary(format!("regrouping {display}"), error);
        let spill = self.spill.into_inner().map_err(|error| io_error(error.into_error()))?;
        let index = self.index.into_inner().map_err(|error| io_error(error.into_error()))?;
        // Newest first when the first timed record is later than the last one. Exports that
        // list oldest first (some Copilot layouts) keep their order.
        let newest_first = matches!((self.first_time, self.last_time), (Some(first), Some(last)) if first > last);
        let grouper = Grouper::new(self.gap, self.attach_untitled.then(|| key_hash("")));
        Ok(GroupedElements::new(spill, self.input, index, self.records, newest_first, grouper, self.element_prefix))
    }
}

/// A conversation key or title as 64 bits. Keys never leave the run, so a fast hash will do:
/// SHA-256 here was a twentieth of the reader thread's time in the pass.
fn key_hash(key: &str) -> u64 {
    // The low 64 bits of the 128-bit hash.
    twox_hash::XxHash3_128::oneshot(key.as_bytes()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element's rows as `(offset, index, text)`, checking the offsets elements are
    /// reported at.
    fn elements(regrouper: Regrouper) -> Vec<Vec<(u64, u64, String)>> {
        let mut elements = regrouper.finish().unwrap();
        let mut all = Vec::new();
        let mut position = 1;
        let mut element = Vec::new();
        while let Some((offset, number)) = elements.next_element_into(&mut element).unwrap() {
            position += if number == 0 { 1 } else { 2 };
            assert_eq!(offset, position, "an element's offset is where it would start in an array of them all");
            position += element.len() as u64;
            let mut rows = BinaryRows::new(&element);
            all.push(rows.by_ref().map(|(offset, index, bytes)| (offset, index, String::from_utf8(bytes.to_vec()).unwrap())).collect());
            assert!(rows.is_done());
            element.clear();
        }
        all
    }

    /// The indexes of the records in each conversation, for records pushed as `(key, time)`
    /// with their position as index.
    fn grouped(records: &[(GroupKey, Option<Micros>)], gap: Micros) -> Vec<Vec<u64>> {
        let mut regrouper = Regrouper::new("test", gap).unwrap();
        let mut row = Vec::new();
        for (index, (key, time)) in records.iter().enumerate() {
            row.clear();
            push_binary_row(&mut row, 0, index as u64, b"{}");
            regrouper.push(key, *time, &row).unwrap();
        }
        elements(regrouper).into_iter().map(|rows| rows.into_iter().map(|(_, index, _)| index).collect()).collect()
    }

    #[test]
    fn newest_first_is_reversed_and_titles_split_by_gap() {
        let hour = 3_600_000_000;
        let title = |text: &str| GroupKey::Title(text.into());
        let records = [(title("a"), Some(10 * hour)), (title("b"), Some(2 * hour)), (title("a"), Some(hour)), (title("a"), Some(hour))];
        // "a" closes when the walk passes an hour after its last record (at "a" 10h). Ties keep
        // the file's order reversed.
        assert_eq!(grouped(&records, hour), [vec![3, 2], vec![1], vec![0]]);
    }

    #[test]
    fn explicit_keys_group_across_gaps_until_idle_for_a_week() {
        let key = |text: &str| GroupKey::Conversation(text.into());
        let day = 24 * 3_600_000_000;
        let records = [(key("x"), Some(9 * day)), (key("x"), Some(day)), (key("y"), Some(2)), (key("x"), Some(1))];
        // Conversations are written as they close: y (idle since 2) before x (idle since a day).
        assert_eq!(grouped(&records, 10), [vec![2], vec![3, 1], vec![0]]);
        assert!(grouped(&[], 10).is_empty());
    }

    #[test]
    fn records_read_back_from_the_input_come_with_the_same_headers_as_spilled_ones() {
        // Two records next to each other (read with one `pread`), one far from them (read on
        // its own) and a spilled problem row.
        let mut input = tempfile::tempfile().unwrap();
        let text = format!(r#"[{{"a":1}},{{"b":2}},{}{{"c":3}}]"#, " ".repeat(500));
        input.write_all(text.as_bytes()).unwrap();
        let far = text.find(r#"{"c":3}"#).unwrap();
        let mut regrouper = Regrouper::new("test", 10).unwrap().read_back_from(input);
        assert!(regrouper.reads_back());
        let key = GroupKey::Conversation("x".into());
        // Newest first in the file: the spilled problem is the oldest.
        regrouper.push_input_record(&key, Some(4), (far as u64, 3), 7).unwrap();
        regrouper.push_input_record(&key, Some(3), (9, 2), 7).unwrap();
        regrouper.push_input_record(&key, Some(2), (1, 1), 7).unwrap();
        let mut problem = Vec::new();
        push_problem_row(&mut problem, 25, 3, "cut off");
        regrouper.push(&key, Some(1), &problem).unwrap();
        let rows = elements(regrouper);
        assert_eq!(rows.len(), 1);
        let expected = [(1, 1, r#"{"a":1}"#.to_owned()), (9, 2, r#"{"b":2}"#.to_owned()), (far as u64, 3, r#"{"c":3}"#.to_owned())];
        assert_eq!(rows[0][1..], expected);
        let (offset, index, problem) = &rows[0][0];
        let header = (*offset, *index, problem.as_bytes());
        assert_eq!(read_binary_row(header), (25, 3, BinaryRow::Problem("cut off".into())));
    }
}
