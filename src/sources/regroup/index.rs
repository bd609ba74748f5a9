//! One record's fixed-size entry in the regrouping index file: where its bytes are (spill or
//! input), its time and its conversation key's hash.

use crate::model::Micros;

/// Bytes of one index entry on disk.
pub(super) const ENTRY_BYTES: usize = 40;
/// The time stored for a record without one.
const NO_TIME: i64 = i64::MIN;

/// Where a record's bytes are read back from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// The spill file, as pushed (a whole binary row).
    Spill = 0,
    /// The input file: the record's bytes, behind a row header made from the index entry.
    Input = 1,
}

impl Source {
    pub(super) fn from_byte(byte: u8) -> Source {
        match byte {
            1 => Source::Input,
            _ => Source::Spill,
        }
    }
}

/// One record's index entry.
#[derive(Debug, Clone, Copy)]
pub(super) struct IndexEntry {
    pub(super) offset: u64,
    pub(super) length: u32,
    pub(super) explicit: bool,
    pub(super) source: Source,
    pub(super) time: Option<Micros>,
    pub(super) key: u64,
    /// The record's position in the input (for [`Source::Input`] records).
    pub(super) index: u64,
}

impl IndexEntry {
    /// Where the record ends in its file.
    pub(super) fn end(&self) -> u64 {
        self.offset + u64::from(self.length)
    }

    pub(super) fn encode(&self) -> [u8; ENTRY_BYTES] {
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

    pub(super) fn decode(bytes: &[u8]) -> IndexEntry {
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

#[cfg(test)]
mod tests {
    use super::*;

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
