//! Walks the regrouping index in chronological order and assembles each closed conversation as
//! one element, reading its records back from the spill file or, in runs of nearby records with
//! one `pread`, from the input itself.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::grouper::Grouper;
use super::index::{ENTRY_BYTES, IndexEntry, Source};
use super::rows::push_binary_header;

/// Index entries read from disk at a time.
const ENTRIES_PER_BLOCK: usize = 32 * 1024;

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
    /// The elements of an index of `total` entries (walked backwards when `newest_first`).
    pub(super) fn new(
        spill: File,
        input: Option<File>,
        index: File,
        total: u64,
        newest_first: bool,
        grouper: Grouper,
        element_prefix: Vec<u8>,
    ) -> Self {
        GroupedElements {
            spill,
            input,
            index,
            total,
            walked: 0,
            newest_first,
            block: Vec::new(),
            block_position: 0,
            grouper,
            element_prefix,
            span: Vec::new(),
            elements: 0,
            position: 1,
        }
    }

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
            if let Some(rows) = self.grouper.next_ready() {
                break rows;
            }
            match self.next_entry()? {
                Some(entry) => self.grouper.assign(&entry),
                None if !self.grouper.has_open() => return Ok(None),
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
