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
//! - a quoted field left open at the end of the file runs to the end of the file.

use std::borrow::Cow;
use std::io::{self, Read};
use std::ops::Range;

/// Bytes read from the input at a time.
const READ_BYTES: usize = 1 << 20;

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
    /// The line the `csv` crate reports for it: 1 + the line ends before the end of the
    /// previous row (so blank lines before a row do not count).
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
    /// The `csv` crate's line number at the end of the previous row.
    line: u64,
    /// Line ends of blank lines already skipped past `next`'s old place: counted into `line`
    /// after the next row (the `csv` crate numbers a row from where the previous one ended).
    skipped_lines: u64,
    eof: bool,
}

impl<R: Read> RowScanner<R> {
    /// Scans `reader` from its start.
    pub fn new(reader: R) -> Self {
        RowScanner { reader, buffer: vec![0; READ_BYTES], filled: 0, next: 0, base: 0, line: 1, skipped_lines: 0, eof: false }
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
    /// I/O errors reading the input.
    pub fn next_row(&mut self, fields: &mut Vec<Range<usize>>) -> io::Result<Option<ScannedRow<'_>>> {
        loop {
            let skipped = self.buffer[self.next..self.filled].iter().position(|&byte| byte != b'\n' && byte != b'\r');
            let Some(skipped) = skipped else {
                if self.eof {
                    return Ok(None);
                }
                // Only blank lines so far: drop them rather than keep them in the buffer, so a
                // long run of them costs no memory.
                self.skipped_lines += memchr::memchr_iter(b'\n', &self.buffer[self.next..self.filled]).count() as u64;
                self.next = self.filled;
                self.refill()?;
                continue;
            };
            let start = self.next + skipped;
            match scan_row(&self.buffer[..self.filled], start, self.eof, fields) {
                Scan::NeedMore => self.refill()?,
                Scan::Row { end, next } => {
                    let line = self.line;
                    self.line += std::mem::take(&mut self.skipped_lines);
                    self.line += memchr::memchr_iter(b'\n', &self.buffer[self.next..next]).count() as u64;
                    self.next = next;
                    return Ok(Some(ScannedRow { offset: self.base + start as u64, line, bytes: &self.buffer[start..end] }));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows as (line, cells) the way the `csv` crate reads them.
    fn csv_crate_rows(text: &[u8]) -> Vec<(u64, Vec<Vec<u8>>)> {
        let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text);
        let mut rows = Vec::new();
        let mut record = csv::ByteRecord::new();
        loop {
            let line = reader.position().line();
            if !reader.read_byte_record(&mut record).unwrap() {
                return rows;
            }
            rows.push((line, record.iter().map(<[u8]>::to_vec).collect()));
        }
    }

    fn scanned_rows(text: &[u8]) -> Vec<(u64, Vec<Vec<u8>>)> {
        let mut scanner = RowScanner::new(text);
        // A tiny buffer, so rows cross refills.
        scanner.buffer = vec![0; 4];
        let mut fields = Vec::new();
        let mut rows = Vec::new();
        while let Some(row) = scanner.next_row(&mut fields).unwrap() {
            let cells = fields.iter().map(|range| cell(&row.bytes[range.clone()]).into_owned()).collect();
            rows.push((row.line, cells));
        }
        rows
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
            assert_eq!(scanned_rows(case), csv_crate_rows(case), "{}", String::from_utf8_lossy(case));
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
            assert_eq!(scanned_rows(&text), csv_crate_rows(&text), "{:?}", String::from_utf8_lossy(&text));
        }
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
        assert_eq!(row, csv_crate_rows(&text).get(1).map(|(line, cells)| (*line, cells.join(&b","[..]))));
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
}
