//! Finds the rows and cells of a CSV by jumping between the bytes that matter (quotes,
//! commas, line ends) instead of stepping through every byte.
//!
//! The regrouping pass needs only where each row is and two cells of it (title and time); the
//! rows themselves are read back later and split in parallel by the decoders. Parsing every
//! byte through a general CSV state machine on the single reader thread was the slowest step
//! of a Copilot run (docs/design-decisions.md), so this scanner follows the same rules as
//! the `csv` crate's default reader and skips through quoted text with `memchr`:
//!
//! - a field that starts with `"` is quoted: `""` inside it is a quote, and the field's quoted
//!   part ends at a lone `"`; bytes after it, up to the next `,` or line end, belong to the
//!   field as they are (as do quotes inside a field that did not start with one);
//! - `\r`, `\n` and `\r\n` end a row; empty lines are skipped;
//! - a quoted field left open at the end of the file runs to the end of the file
//!   ([`quote_left_open`] tells, so the decoder can reject the row instead of writing the rest
//!   of the file as one message).
//!
//! Each row carries the line of the file it starts on, as editors, `grep -n` and `sed -n`
//! count them (1-based, one per `\n`), so a reject points at the line to look at; the `csv`
//! crate's positions count from the end of the previous row instead, which is a line early
//! after every `\r\n` and after blank lines.

use std::borrow::Cow;
use std::io::{self, Read};
use std::ops::Range;

/// Bytes read from the input at a time.
const READ_BYTES: usize = 1 << 20;
/// Longest row read. A row is held whole while it is scanned, so a quote left open near the
/// start of a large file would otherwise pull the rest of it into memory; Copilot rows are a
/// message each (answers of 2025 exports are cut to 100 characters).
pub const MAX_ROW_BYTES: usize = 64 << 20;

/// What scanning from a row's first byte found.
enum Scan {
    /// The row ends at `end` (its terminator, or the end of the data) and the next row's
    /// search starts at `next`.
    Row { end: usize, next: usize },
    /// The data ends inside the row: more is needed to know where it ends.
    NeedMore,
}

/// Splits the row starting at `start` in `data` into `fields` (ranges relative to `start`).
/// `at_eof` says that `data` ends where the input ends.
fn scan_row(data: &[u8], start: usize, at_eof: bool, fields: &mut Vec<Range<usize>>) -> Scan {
    fields.clear();
    let to_the_end = |fields: &mut Vec<Range<usize>>, field_start: usize| {
        if !at_eof {
            return Scan::NeedMore;
        }
        fields.push(field_start - start..data.len() - start);
        Scan::Row { end: data.len(), next: data.len() }
    };
    let mut position = start;
    loop {
        let field_start = position;
        let mut unquoted_from = position;
        if data.get(position) == Some(&b'"') {
            let mut at = position + 1;
            loop {
                let Some(found) = memchr::memchr(b'"', &data[at..]) else {
                    return to_the_end(fields, field_start);
                };
                let quote = at + found;
                match data.get(quote + 1) {
                    None => return to_the_end(fields, field_start),
                    Some(b'"') => at = quote + 2,
                    Some(_) => {
                        unquoted_from = quote + 1;
                        break;
                    }
                }
            }
        }
        let Some(found) = memchr::memchr3(b',', b'\n', b'\r', &data[unquoted_from..]) else {
            return to_the_end(fields, field_start);
        };
        let stop = unquoted_from + found;
        fields.push(field_start - start..stop - start);
        if data[stop] == b',' {
            position = stop + 1;
        } else {
            return Scan::Row { end: stop, next: stop + 1 };
        }
    }
}

/// Whether `raw` (one field's bytes, as [`cell`] takes them) opens a quote that never closes:
/// such a field ran to the end of the file, taking every row after it along.
pub fn quote_left_open(raw: &[u8]) -> bool {
    let Some(quoted) = raw.strip_prefix(b"\"") else { return false };
    let mut at = 0;
    loop {
        let Some(found) = memchr::memchr(b'"', &quoted[at..]) else { return true };
        let quote = at + found;
        if quoted.get(quote + 1) == Some(&b'"') {
            // `""` is a quote inside the field.
            at = quote + 2;
        } else {
            // A lone quote closes the field (the file may end right after it).
            return false;
        }
    }
}

/// Splits one whole row (without its line end) into `fields`, ranges into `row`.
pub fn split_row(row: &[u8], fields: &mut Vec<Range<usize>>) {
    // At the end of the data a row always completes.
    let _ = scan_row(row, 0, true, fields);
}

/// The value of a field as the `csv` crate reads it: quotes removed and `""` made `"`.
pub fn cell(raw: &[u8]) -> Cow<'_, [u8]> {
    let Some(quoted) = raw.strip_prefix(b"\"") else {
        return Cow::Borrowed(raw);
    };
    // The common case: one quoted run and nothing after it.
    if let Some(inner) = quoted.strip_suffix(b"\"")
        && memchr::memchr(b'"', inner).is_none()
    {
        return Cow::Borrowed(inner);
    }
    let mut value = Vec::with_capacity(quoted.len());
    let mut rest = quoted;
    loop {
        let Some(quote) = memchr::memchr(b'"', rest) else {
            // Left open at the end of the file.
            value.extend_from_slice(rest);
            break;
        };
        value.extend_from_slice(&rest[..quote]);
        if rest.get(quote + 1) == Some(&b'"') {
            value.push(b'"');
            rest = &rest[quote + 2..];
        } else {
            // After the closing quote, the rest of the field is taken as it is.
            value.extend_from_slice(&rest[quote + 1..]);
            break;
        }
    }
    Cow::Owned(value)
}

/// One row found by [`RowScanner`].
pub struct ScannedRow<'a> {
    /// Byte offset of the row's first byte in the input.
    pub offset: u64,
    /// The line of the file the row starts on: 1 + the `\n` bytes before its first byte (the
    /// header is line 1; a row whose quoted cells hold line breaks spans several lines).
    pub line: u64,
    /// The row's bytes, without its line end.
    pub bytes: &'a [u8],
}

/// Reads a CSV row by row, keeping each row's field ranges.
pub struct RowScanner<R> {
    reader: R,
    buffer: Vec<u8>,
    /// Bytes of `buffer` holding data.
    filled: usize,
    /// Where the next row's search starts in `buffer`.
    next: usize,
    /// Input offset of `buffer[0]`.
    base: u64,
    /// The line of the file `buffer[next]` is on.
    line: u64,
    /// Longest row read ([`MAX_ROW_BYTES`]; smaller in tests).
    max_row: usize,
    eof: bool,
}

impl<R: Read> RowScanner<R> {
    /// Scans `reader` from its start.
    pub fn new(reader: R) -> Self {
        RowScanner { reader, buffer: vec![0; READ_BYTES], filled: 0, next: 0, base: 0, line: 1, max_row: MAX_ROW_BYTES, eof: false }
    }

    /// Keeps the bytes from `next` on, moves them to the front and reads more after them.
    fn refill(&mut self) -> io::Result<()> {
        self.buffer.copy_within(self.next..self.filled, 0);
        self.filled -= self.next;
        self.base += self.next as u64;
        self.next = 0;
        if self.buffer.len() - self.filled < self.buffer.len() / 4 {
            // A row filling most of the buffer: make room for it.
            self.buffer.resize(self.buffer.len() * 2, 0);
        }
        loop {
            match self.reader.read(&mut self.buffer[self.filled..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(read) => {
                    self.filled += read;
                    return Ok(());
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }

    /// The next row, with its field ranges (relative to the row) in `fields`; `None` at the
    /// end of the input.
    ///
    /// # Errors
    /// I/O errors reading the input, and a row longer than [`MAX_ROW_BYTES`] (a quote left
    /// open, most likely: the error names the line the row starts on).
    pub fn next_row(&mut self, fields: &mut Vec<Range<usize>>) -> io::Result<Option<ScannedRow<'_>>> {
        loop {
            let skipped = self.buffer[self.next..self.filled].iter().position(|&byte| byte != b'\n' && byte != b'\r');
            let Some(skipped) = skipped else {
                if self.eof {
                    return Ok(None);
                }
                // Only blank lines so far: drop them rather than keep them in the buffer, so a
                // long run of them costs no memory.
                self.line += count_lines(&self.buffer[self.next..self.filled]);
                self.next = self.filled;
                self.refill()?;
                continue;
            };
            // The blank lines before the row are counted once the row is found, so a refill in
            // between (which keeps them) does not count them twice.
            let start = self.next + skipped;
            match scan_row(&self.buffer[..self.filled], start, self.eof, fields) {
                Scan::NeedMore if self.filled - start > self.max_row => {
                    let line = self.line + count_lines(&self.buffer[self.next..start]);
                    return Err(io::Error::other(format!(
                        "the row that starts on line {line} is longer than {} MiB; a quote opened in it is probably never closed",
                        self.max_row >> 20
                    )));
                }
                Scan::NeedMore => self.refill()?,
                Scan::Row { end, next } => {
                    let line = self.line + count_lines(&self.buffer[self.next..start]);
                    self.line = line + count_lines(&self.buffer[start..next]);
                    self.next = next;
                    return Ok(Some(ScannedRow { offset: self.base + start as u64, line, bytes: &self.buffer[start..end] }));
                }
            }
        }
    }
}

/// The line ends in `bytes`, as editors count lines: one per `\n` (a `\r\n` is one).
fn count_lines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows as (position of the end of the previous row, cells) the way the `csv` crate reads
    /// them.
    fn csv_crate_rows(text: &[u8]) -> Vec<(u64, Vec<Vec<u8>>)> {
        let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text);
        let mut rows = Vec::new();
        let mut record = csv::ByteRecord::new();
        loop {
            let previous_end = reader.position().byte();
            if !reader.read_byte_record(&mut record).unwrap() {
                return rows;
            }
            rows.push((previous_end, record.iter().map(<[u8]>::to_vec).collect()));
        }
    }

    /// Rows as (offset, line, cells) the way the scanner reads them.
    fn scanned_rows(text: &[u8]) -> Vec<(u64, u64, Vec<Vec<u8>>)> {
        let mut scanner = RowScanner::new(text);
        // A tiny buffer, so rows cross refills.
        scanner.buffer = vec![0; 4];
        let mut fields = Vec::new();
        let mut rows = Vec::new();
        while let Some(row) = scanner.next_row(&mut fields).unwrap() {
            let cells = fields.iter().map(|range| cell(&row.bytes[range.clone()]).into_owned()).collect();
            rows.push((row.offset, row.line, cells));
        }
        rows
    }

    /// The scanner reads the cells the `csv` crate reads; each row starts after the line ends
    /// that follow the previous row, on the line of the file its first byte is on.
    fn assert_reads_like_the_csv_crate(text: &[u8]) {
        let scanned = scanned_rows(text);
        let expected = csv_crate_rows(text);
        let context = String::from_utf8_lossy(text);
        assert_eq!(
            scanned.iter().map(|(_, _, cells)| cells).collect::<Vec<_>>(),
            expected.iter().map(|(_, cells)| cells).collect::<Vec<_>>(),
            "{context:?}"
        );
        for ((offset, line, _), (previous_end, _)) in scanned.iter().zip(&expected) {
            let (offset, previous_end) = (*offset as usize, *previous_end as usize);
            let between = text.get(previous_end..offset);
            assert!(
                between.is_some_and(|between| between.iter().all(|&byte| byte == b'\n' || byte == b'\r')),
                "{context:?}: row at {offset}"
            );
            assert_eq!(*line, 1 + count_lines(&text[..offset]), "{context:?}: row at {offset}");
        }
    }

    #[test]
    fn reads_rows_and_cells_like_the_csv_crate() {
        let cases: &[&[u8]] = &[
            b"a,b,c\n1,2,3\n",
            b"a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\r\n\r\n\n3,4",
            b"t,\"multi\nline\r\ntext\",end\n,\n,,\n",
            b"\"open quote\nto the end",
            b"\"closed\"tail,x\"y,\"\"\n",
            b"\n\n\r\rlast,",
            b"\"\"\"\",\"a\"\"\"\n",
            b"",
            b"\"",
            b"a\rb\r\nc\n\rd",
        ];
        for case in cases {
            assert_reads_like_the_csv_crate(case);
        }
    }

    #[test]
    fn random_csv_text_reads_like_the_csv_crate() {
        // Deterministic pseudo-random text over the bytes that matter to CSV.
        let alphabet = b"ab,\"\r\n ";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2_000 {
            let length = (state % 40) as usize;
            let mut text = Vec::with_capacity(length);
            for _ in 0..length {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            assert_reads_like_the_csv_crate(&text);
        }
    }

    /// Guards the line numbers rejects name: the file's own (header = 1), not the `csv`
    /// crate's, which fall a line short after each `\r\n` and after blank lines.
    #[test]
    fn rows_carry_the_line_of_the_file_they_start_on() {
        let text = b"h1,h2\r\nv1,\"a\r\nb\"\r\n\r\nv3,c\r\nv4,d";
        let lines: Vec<u64> = scanned_rows(text).iter().map(|(_, line, _)| *line).collect();
        assert_eq!(lines, [1, 2, 5, 6]);
        let lines: Vec<u64> = scanned_rows(b"h\n\n\nrow\nrow").iter().map(|(_, line, _)| *line).collect();
        assert_eq!(lines, [1, 4, 5]);
    }

    #[test]
    fn a_long_run_of_blank_lines_is_not_kept_in_memory() {
        let mut text = b"h1,h2\n".to_vec();
        text.extend(std::iter::repeat_n(b"\r\n".as_slice(), 2 * READ_BYTES).flatten());
        text.extend_from_slice(b"v1,v2\n");
        let mut scanner = RowScanner::new(&text[..]);
        let mut fields = Vec::new();
        assert!(scanner.next_row(&mut fields).unwrap().is_some());
        let row = scanner.next_row(&mut fields).unwrap().map(|row| (row.line, row.bytes.to_vec()));
        assert_eq!(row, Some((2 + 2 * READ_BYTES as u64, b"v1,v2".to_vec())));
        assert_eq!(scanner.buffer.len(), READ_BYTES, "blank lines grew the buffer");
    }

    #[test]
    fn offsets_point_at_each_rows_first_byte() {
        let text = b"h1,h2\r\n\r\nv1,v2\n";
        let mut scanner = RowScanner::new(&text[..]);
        let mut fields = Vec::new();
        assert_eq!(scanner.next_row(&mut fields).unwrap().map(|row| (row.offset, row.bytes.to_vec())), Some((0, b"h1,h2".to_vec())));
        let row = scanner.next_row(&mut fields).unwrap().unwrap();
        assert_eq!((row.offset, row.bytes), (9, &b"v1,v2"[..]));
        let mut split = Vec::new();
        split_row(row.bytes, &mut split);
        assert_eq!(split, fields);
        assert!(scanner.next_row(&mut fields).unwrap().is_none());
    }

    /// Guards the row limit: a quote left open near the start of a large file must not pull
    /// the rest of it into memory, and the error names the line the row starts on.
    #[test]
    fn a_row_longer_than_the_limit_is_an_error_naming_its_line() {
        let mut text = b"h1,h2\r\nv1,\"a quote left open\r\n".to_vec();
        text.extend(std::iter::repeat_n(b"v2,a row read into it\r\n".as_slice(), 100).flatten());
        let mut scanner = RowScanner::new(&text[..]);
        scanner.buffer = vec![0; 4];
        scanner.max_row = 16;
        let mut fields = Vec::new();
        assert!(scanner.next_row(&mut fields).unwrap().is_some());
        let error = scanner.next_row(&mut fields).err().map(|error| error.to_string()).unwrap_or_default();
        assert!(error.contains("starts on line 2"), "{error}");
    }

    /// Guards the open-quote check the decoder rejects rows by.
    #[test]
    fn a_quote_that_never_closes_is_told_from_closed_and_unquoted_fields() {
        assert!(quote_left_open(b"\"open\nto the end"));
        assert!(quote_left_open(b"\"ends in an escaped quote\"\""));
        assert!(quote_left_open(b"\""));
        assert!(!quote_left_open(b"\"closed\""));
        assert!(!quote_left_open(b"\"closed\"tail"));
        assert!(!quote_left_open(b"\"say \"\"hi\"\"\""));
        assert!(!quote_left_open(b"unquoted \" inside"));
        assert!(!quote_left_open(b""));
    }
}
