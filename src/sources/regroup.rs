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

use std::collections::{BTreeSet, VecDeque};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

use rustc_hash::FxHashMap;

use crate::error::RunError;
use crate::model::Micros;

/// Most records one regrouped conversation holds.
pub const MAX_GROUP_RECORDS: usize = 2_000;
/// Most bytes of records one regrouped conversation holds.
pub const MAX_GROUP_BYTES: u64 = 16 << 20;
/// How long a conversation with an explicit id stays open without a new record: 7 days.
pub const KEYED_IDLE: Micros = 7 * 24 * 3600 * 1_000_000;
/// Bytes of one index entry on disk.
const ENTRY_BYTES: usize = 40;
/// Index entries read from disk at a time.
const ENTRIES_PER_BLOCK: usize = 32 * 1024;
/// The time stored for a record without one.
const NO_TIME: i64 = i64::MIN;

/// Where a record belongs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupKey {
    /// An explicit conversation id: every record with it is one conversation.
    Conversation(String),
    /// A title (or an empty string for untitled streams): grouped by time proximity.
    Title(String),
}

/// Bytes of a binary row's header: offset, index, length.
pub const BINARY_ROW_HEADER: usize = 20;

/// Appends a binary row (see [`BinaryRows`]) to `out`.
pub fn push_binary_row(out: &mut Vec<u8>, offset: u64, index: u64, bytes: &[u8]) {
    // Rows over 4 GiB are refused when they are indexed (`add_entry`).
    push_binary_header(out, offset, index, u32::try_from(bytes.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(bytes);
}

/// The index of a binary row that carries a problem instead of a record (a broken file, an
/// unreadable record): its bytes are the record's index (`u64` LE) and then the problem, in
/// words. Real indexes never come near it.
const PROBLEM_ROW: u64 = u64::MAX;

/// Appends a binary row that carries `problem` instead of record `index` found at `offset`.
pub fn push_problem_row(out: &mut Vec<u8>, offset: u64, index: u64, problem: &str) {
    push_binary_header(out, offset, PROBLEM_ROW, u32::try_from(8 + problem.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(&index.to_le_bytes());
    out.extend_from_slice(problem.as_bytes());
}

/// One row of a binary element.
#[derive(Debug, PartialEq, Eq)]
pub enum BinaryRow<'a> {
    /// A record's bytes.
    Record(&'a [u8]),
    /// What went wrong where a record was expected (see [`push_problem_row`]).
    Problem(String),
}

/// Reads a row from [`BinaryRows`] as `(offset, index, row)`, telling problems from records.
pub fn read_binary_row((offset, index, bytes): (u64, u64, &[u8])) -> (u64, u64, BinaryRow<'_>) {
    if index != PROBLEM_ROW {
        return (offset, index, BinaryRow::Record(bytes));
    }
    let (index, problem) = bytes.split_at_checked(8).unwrap_or((&[0; 8], bytes));
    let mut eight = [0u8; 8];
    eight.copy_from_slice(index);
    (offset, u64::from_le_bytes(eight), BinaryRow::Problem(String::from_utf8_lossy(problem).into_owned()))
}

/// Appends a binary row's header: the `length` bytes of the row follow it.
fn push_binary_header(out: &mut Vec<u8>, offset: u64, index: u64, length: u32) {
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(&index.to_le_bytes());
    out.extend_from_slice(&length.to_le_bytes());
}

/// Reads the rows of an element: `(offset, index, bytes)` in order, each stored as `offset (u64
/// LE), index (u64 LE), length (u32 LE), bytes` behind the element's prefix (see
/// [`Regrouper::set_element_prefix`]); `None` once a row is cut short (a broken element).
pub struct BinaryRows<'a> {
    rest: &'a [u8],
}

impl<'a> BinaryRows<'a> {
    /// The rows of `element`.
    pub fn new(element: &'a [u8]) -> Self {
        BinaryRows { rest: element }
    }

    /// True when every row was read and nothing is left over.
    pub fn is_done(&self) -> bool {
        self.rest.is_empty()
    }
}

impl<'a> Iterator for BinaryRows<'a> {
    type Item = (u64, u64, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let header = self.rest.get(..BINARY_ROW_HEADER)?;
        let word = |range: std::ops::Range<usize>| {
            let mut eight = [0u8; 8];
            eight.copy_from_slice(&header[range]);
            u64::from_le_bytes(eight)
        };
        let mut four = [0u8; 4];
        four.copy_from_slice(&header[16..20]);
        let length = u32::from_le_bytes(four) as usize;
        let bytes = self.rest.get(BINARY_ROW_HEADER..BINARY_ROW_HEADER + length)?;
        let row = (word(0..8), word(8..16), bytes);
        self.rest = &self.rest[BINARY_ROW_HEADER + length..];
        Some(row)
    }
}

/// Where a record's bytes are read back from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The spill file, as pushed (a whole binary row).
    Spill = 0,
    /// The input file: the record's bytes, behind a row header made from the index entry.
    Input = 1,
}

impl Source {
    fn from_byte(byte: u8) -> Source {
        match byte {
            1 => Source::Input,
            _ => Source::Spill,
        }
    }
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

/// One record's index entry.
#[derive(Debug, Clone, Copy)]
struct IndexEntry {
    offset: u64,
    length: u32,
    explicit: bool,
    source: Source,
    time: Option<Micros>,
    key: u64,
    /// The record's position in the input (for [`Source::Input`] records).
    index: u64,
}

impl IndexEntry {
    /// Where the record ends in its file.
    fn end(&self) -> u64 {
        self.offset + u64::from(self.length)
    }

    fn encode(&self) -> [u8; ENTRY_BYTES] {
        let mut bytes = [0u8; ENTRY_BYTES];
        bytes[0..8].copy_from_slice(&self.offset.to_le_bytes());
        bytes[8..12].copy_from_slice(&self.length.to_le_bytes());
        bytes[12] = u8::from(self.explicit);
        bytes[13] = self.source as u8;
        bytes[16..24].copy_from_slice(&self.time.unwrap_or(NO_TIME).to_le_bytes());
        bytes[24..32].copy_from_slice(&self.key.to_le_bytes());
        bytes[32..40].copy_from_slice(&self.index.to_le_bytes());
        bytes
    }

    fn decode(bytes: &[u8]) -> IndexEntry {
        let word = |range: std::ops::Range<usize>| {
            let mut eight = [0u8; 8];
            eight.copy_from_slice(&bytes[range]);
            eight
        };
        let mut four = [0u8; 4];
        four.copy_from_slice(&bytes[8..12]);
        let time = i64::from_le_bytes(word(16..24));
        IndexEntry {
            offset: u64::from_le_bytes(word(0..8)),
            length: u32::from_le_bytes(four),
            explicit: bytes[12] != 0,
            source: Source::from_byte(bytes[13]),
            time: (time != NO_TIME).then_some(time),
            key: u64::from_le_bytes(word(24..32)),
            index: u64::from_le_bytes(word(32..40)),
        }
    }
}

impl Regrouper {
    /// Starts a regrouping of `display` with the given proximity `gap`.
    ///
    /// # Errors
    /// When no temporary file can be created.
    pub fn new(display: &str, gap: Micros) -> Result<Self, RunError> {
        let temporary = || tempfile::tempfile().map_err(|error| RunError::write("a temporary file for regrouping", error));
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
        self.spill.write_all(row).map_err(|error| RunError::write(&self.display, error))?;
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
        self.index.write_all(&entry.encode()).map_err(|error| RunError::write(&self.display, error))?;
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
        let io_error = |error: io::Error| RunError::write(&display, error);
        let spill = self.spill.into_inner().map_err(|error| io_error(error.into_error()))?;
        let index = self.index.into_inner().map_err(|error| io_error(error.into_error()))?;
        // Newest first when the first timed record is later than the last one. Exports that
        // list oldest first (some Copilot layouts) keep their order.
        let newest_first = matches!((self.first_time, self.last_time), (Some(first), Some(last)) if first > last);
        Ok(GroupedElements {
            spill,
            input: self.input,
            index,
            total: self.records,
            walked: 0,
            newest_first,
            block: Vec::new(),
            block_position: 0,
            grouper: Grouper::new(self.gap, self.attach_untitled.then(|| key_hash(""))),
            element_prefix: self.element_prefix,
            span: Vec::new(),
            elements: 0,
            position: 1,
        })
    }
}

/// A conversation key or title as 64 bits. Keys never leave the run, so a fast hash will do:
/// SHA-256 here was a twentieth of the reader thread's time in the pass.
fn key_hash(key: &str) -> u64 {
    // The low 64 bits of the 128-bit hash.
    twox_hash::XxHash3_128::oneshot(key.as_bytes()) as u64
}

/// A conversation being gathered.
struct OpenGroup {
    number: u32,
    last_time: Option<Micros>,
    rows: Vec<IndexEntry>,
    bytes: u64,
}

/// Assigns records, in chronological order, to conversations and hands out closed ones.
struct Grouper {
    gap: Micros,
    untitled_key: Option<u64>,
    open: FxHashMap<(bool, u64), OpenGroup>,
    /// Open groups with a known last time, by (last time, number), per kind (title, explicit).
    by_time: [BTreeSet<(Micros, u32, u64)>; 2],
    /// The group of the record just assigned.
    previous: Option<(bool, u64)>,
    next_number: u32,
    /// Closed groups' rows, in the order they are written.
    ready: VecDeque<Vec<IndexEntry>>,
}

impl Grouper {
    fn new(gap: Micros, untitled_key: Option<u64>) -> Self {
        Grouper {
            gap,
            untitled_key,
            open: FxHashMap::default(),
            by_time: [BTreeSet::new(), BTreeSet::new()],
            previous: None,
            next_number: 0,
            ready: VecDeque::new(),
        }
    }

    fn idle_limit(&self, explicit: bool) -> Micros {
        if explicit { KEYED_IDLE.max(self.gap) } else { self.gap }
    }

    fn close(&mut self, key: (bool, u64)) {
        if let Some(group) = self.open.remove(&key) {
            if let Some(last) = group.last_time {
                self.by_time[usize::from(key.0)].remove(&(last, group.number, key.1));
            }
            if self.previous == Some(key) {
                self.previous = None;
            }
            self.ready.push_back(group.rows);
        }
    }

    /// Closes the groups idle for longer than their limit at `now`, oldest first.
    fn expire(&mut self, now: Micros) {
        for explicit in [false, true] {
            let limit = self.idle_limit(explicit);
            while let Some(&(last, _, key)) = self.by_time[usize::from(explicit)].first() {
                if now.saturating_sub(last) <= limit {
                    break;
                }
                self.close((explicit, key));
            }
        }
    }

    /// The bytes a record counts for against [`MAX_GROUP_BYTES`]: its own, without the header
    /// a spilled row carries, so a file groups the same read back or spilled.
    fn weight(entry: &IndexEntry) -> u32 {
        if entry.source == Source::Spill { entry.length.saturating_sub(BINARY_ROW_HEADER as u32) } else { entry.length }
    }

    fn fits(group: &OpenGroup, weight: u32) -> bool {
        group.rows.len() < MAX_GROUP_RECORDS && group.bytes + u64::from(weight) <= MAX_GROUP_BYTES
    }

    fn assign(&mut self, entry: &IndexEntry) {
        let weight = Grouper::weight(entry);
        if let Some(time) = entry.time {
            self.expire(time);
        }
        let own = (entry.explicit, entry.key);
        let mut target = None;
        if let Some(group) = self.open.get(&own) {
            if Self::fits(group, weight) {
                target = Some(own);
            } else {
                self.close(own);
            }
        }
        if target.is_none()
            && !entry.explicit
            && self.untitled_key == Some(entry.key)
            && let Some(previous) = self.previous
            && self.open.get(&previous).is_some_and(|group| {
                Self::fits(group, weight)
                    && match (group.last_time, entry.time) {
                        (Some(last), Some(time)) => time.saturating_sub(last) <= self.gap,
                        _ => true,
                    }
            })
        {
            target = Some(previous);
        }
        let key = match target {
            Some(key) => key,
            None => {
                let number = self.next_number;
                self.next_number += 1;
                self.open.insert(own, OpenGroup { number, last_time: None, rows: Vec::new(), bytes: 0 });
                own
            }
        };
        let Some(group) = self.open.get_mut(&key) else { return };
        group.rows.push(*entry);
        group.bytes += u64::from(weight);
        if let Some(time) = entry.time {
            let index = usize::from(key.0);
            if let Some(last) = group.last_time {
                self.by_time[index].remove(&(last, group.number, key.1));
            }
            // Times can step back a little (equal or shuffled stamps): keep the latest.
            let last = group.last_time.map_or(time, |last| last.max(time));
            group.last_time = Some(last);
            self.by_time[index].insert((last, group.number, key.1));
        }
        self.previous = Some(key);
    }

    /// Closes every open group, in the order they were opened.
    fn close_all(&mut self) {
        let mut remaining: Vec<(u32, (bool, u64))> = self.open.iter().map(|(key, group)| (group.number, *key)).collect();
        remaining.sort_unstable();
        for (_, key) in remaining {
            self.close(key);
        }
    }
}

/// The regrouped conversations, each assembled on demand from the spill file or the input.
pub struct GroupedElements {
    spill: File,
    input: Option<File>,
    index: File,
    total: u64,
    /// Index entries walked so far.
    walked: u64,
    newest_first: bool,
    block: Vec<IndexEntry>,
    block_position: usize,
    grouper: Grouper,
    element_prefix: Vec<u8>,
    /// Input bytes read at once for rows that lie close together in the input.
    span: Vec<u8>,
    /// Elements handed out so far.
    elements: u64,
    /// Where the next element would start in the JSON array `[<element>,\n<element>…]` of
    /// them all: the offset elements are reported at, as when that array was framed.
    position: u64,
}

impl GroupedElements {
    /// The next index entry in chronological order.
    fn next_entry(&mut self) -> io::Result<Option<IndexEntry>> {
        if self.block_position == self.block.len() {
            if self.walked == self.total {
                return Ok(None);
            }
            let count = (self.total - self.walked).min(ENTRIES_PER_BLOCK as u64);
            // Newest first: read blocks from the end of the index and walk them backwards.
            let first = if self.newest_first { self.total - self.walked - count } else { self.walked };
            let mut bytes = vec![0u8; count as usize * ENTRY_BYTES];
            self.index.read_exact_at(&mut bytes, first * ENTRY_BYTES as u64)?;
            self.block = bytes.chunks_exact(ENTRY_BYTES).map(IndexEntry::decode).collect();
            if self.newest_first {
                self.block.reverse();
            }
            self.block_position = 0;
            self.walked += count;
        }
        let entry = self.block[self.block_position];
        self.block_position += 1;
        Ok(Some(entry))
    }

    /// Appends a spilled row to `out`, as it was pushed.
    fn append_spilled_row(&self, row: &IndexEntry, out: &mut Vec<u8>) -> io::Result<()> {
        let start = out.len();
        out.resize(start + row.length as usize, 0);
        self.spill.read_exact_at(&mut out[start..], row.offset)
    }

    /// Where the run of rows from `first` (read back from the input) ends, exclusive: the rows
    /// after it that are read back too and lie close to it in the input join it (a
    /// conversation's records often follow one another in the file), so a run is read with
    /// one `pread` instead of one a record.
    fn close_input_rows_end(rows: &[IndexEntry], first: usize) -> usize {
        /// Bytes between two records a run may skip (separators and indentation).
        const GAP_PER_ROW: u64 = 64;
        /// Most bytes read at once.
        const MAX_SPAN: u64 = 1 << 20;
        let (mut low, mut high, mut bytes) = (rows[first].offset, rows[first].end(), u64::from(rows[first].length));
        let mut end = first + 1;
        while let Some(row) = rows.get(end).filter(|row| row.source == Source::Input) {
            let (next_low, next_high, next_bytes) = (low.min(row.offset), high.max(row.end()), bytes + u64::from(row.length));
            let span = next_high - next_low;
            if span > MAX_SPAN || span > next_bytes + GAP_PER_ROW * (end - first + 1) as u64 {
                break;
            }
            (low, high, bytes) = (next_low, next_high, next_bytes);
            end += 1;
        }
        end
    }

    /// Appends rows read back from the input, each behind a row header, reading the input span
    /// they cover once.
    fn append_input_rows(&mut self, rows: &[IndexEntry], out: &mut Vec<u8>) -> io::Result<()> {
        let Some(input) = &self.input else {
            return Err(io::Error::other("internal: a record to read back from an input that was not kept"));
        };
        let low = rows.iter().map(|row| row.offset).min().unwrap_or(0);
        let high = rows.iter().map(IndexEntry::end).max().unwrap_or(0);
        let length = usize::try_from(high - low).map_err(io::Error::other)?;
        // Grown, never shrunk: zeroing it again for every run of rows cost more than the copy.
        if self.span.len() < length {
            self.span.resize(length, 0);
        }
        input.read_exact_at(&mut self.span[..length], low)?;
        for row in rows {
            push_binary_header(out, row.offset, row.index, row.length);
            // Inside the span by how it was computed.
            let start = (row.offset - low) as usize;
            out.extend_from_slice(&self.span[start..start + row.length as usize]);
        }
        Ok(())
    }

    /// Appends the next conversation to `out` and returns where it is: its offset in the
    /// array of all conversations and its number; `None` after the last one.
    ///
    /// # Errors
    /// When the index, the spill or the input cannot be read.
    pub fn next_element_into(&mut self, out: &mut Vec<u8>) -> io::Result<Option<(u64, u64)>> {
        let rows = loop {
            if let Some(rows) = self.grouper.ready.pop_front() {
                break rows;
            }
            match self.next_entry()? {
                Some(entry) => self.grouper.assign(&entry),
                None if self.grouper.open.is_empty() => return Ok(None),
                None => self.grouper.close_all(),
            }
        };
        let start = out.len();
        out.extend_from_slice(&self.element_prefix);
        let mut first = 0;
        while first < rows.len() {
            if rows[first].source == Source::Spill {
                self.append_spilled_row(&rows[first], out)?;
                first += 1;
                continue;
            }
            let end = Self::close_input_rows_end(&rows, first);
            self.append_input_rows(&rows[first..end], out)?;
            first = end;
        }
        // Separated by `\n` (the first) or `,\n` in the array of all elements.
        let separator = if self.elements == 0 { 1 } else { 2 };
        let offset = self.position + separator;
        self.position = offset + (out.len() - start) as u64;
        let number = self.elements;
        self.elements += 1;
        Ok(Some((offset, number)))
    }

    /// Bytes of elements handed out so far.
    pub fn bytes_assembled(&self) -> u64 {
        self.position
    }
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

    #[test]
    fn spilled_binary_rows_count_their_own_bytes_as_read_back_ones_do() {
        // Two rows of half the byte cap each fill one conversation exactly, whether they were
        // spilled (with a binary row header each) or are read back from the input.
        let half = u32::try_from(MAX_GROUP_BYTES / 2).unwrap();
        let groups = |source: Source, length: u32| {
            let mut grouper = Grouper::new(10, None);
            for time in [1, 2] {
                let entry = IndexEntry { offset: 0, length, explicit: false, source, time: Some(time), key: 7, index: 0 };
                grouper.assign(&entry);
            }
            grouper.close_all();
            grouper.ready.iter().map(Vec::len).collect::<Vec<_>>()
        };
        assert_eq!(groups(Source::Input, half), [2]);
        assert_eq!(groups(Source::Spill, half + BINARY_ROW_HEADER as u32), [2]);
        assert_eq!(groups(Source::Input, half + 1), [1, 1]);
    }

    #[test]
    fn index_entries_round_trip() {
        let entry =
            IndexEntry { offset: 1 << 40, length: 7, explicit: true, source: Source::Input, time: Some(-5), key: u64::MAX, index: 9 };
        let decoded = IndexEntry::decode(&entry.encode());
        assert_eq!(
            (decoded.offset, decoded.length, decoded.explicit, decoded.source, decoded.time, decoded.key, decoded.index),
            (1 << 40, 7, true, Source::Input, Some(-5), u64::MAX, 9)
        );
        assert_eq!(IndexEntry::decode(&IndexEntry { time: None, ..entry }.encode()).time, None);
    }
}
