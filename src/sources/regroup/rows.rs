//! The binary row format of a regrouped element: each record's bytes behind a small header
//! (offset, index, length), or a problem in words where a record could not be read.

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

/// The fingerprint of a regrouped element: its first `prefix` bytes and each row's length and
/// bytes, without the rows' offsets and indexes (where the records were in the file). A
/// broken element is fingerprinted whole.
pub fn rows_fingerprint(element: &[u8], prefix: usize) -> crate::hash::Fingerprint {
    let Some((head, rest)) = element.split_at_checked(prefix) else {
        return crate::hash::fingerprint(element);
    };
    let mut hasher = blake3::Hasher::new();
    hasher.update(head);
    let mut rows = BinaryRows::new(rest);
    for (_, index, bytes) in rows.by_ref() {
        // A problem row's bytes start with its record's index: that moves too.
        let bytes = if index == PROBLEM_ROW { bytes.get(8..).unwrap_or_default() } else { bytes };
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    if !rows.is_done() {
        return crate::hash::fingerprint(element);
    }
    crate::hash::fingerprint_of(&hasher)
}

/// Appends a binary row's header: the `length` bytes of the row follow it.
pub(super) fn push_binary_header(out: &mut Vec<u8>, offset: u64, index: u64, length: u32) {
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
