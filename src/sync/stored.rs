//! How both state stores keep keys and counts in their columns: message and conversation keys
//! as 8 little-endian bytes each, fingerprints as 16 bytes, counts as signed 64-bit integers.

use super::state::{Fingerprint, MessageKey};

/// Keys as stored: 8 bytes each, little-endian, in the order given (sorted by the callers).
pub fn encode_keys(keys: &[MessageKey]) -> Vec<u8> {
    keys.iter().flat_map(|key| key.to_le_bytes()).collect()
}

/// Keys read back; a trailing partial key (a damaged row) is dropped.
pub fn decode_keys(bytes: &[u8]) -> Vec<MessageKey> {
    bytes.chunks_exact(8).map(|chunk| u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]))).collect()
}

/// A fingerprint read back: the first 16 bytes, zero-padded if the column was short.
pub fn fingerprint_of(bytes: &[u8]) -> Fingerprint {
    let mut fingerprint = [0u8; 16];
    let length = bytes.len().min(16);
    fingerprint[..length].copy_from_slice(&bytes[..length]);
    fingerprint
}

/// A count as the database returns it (a `sum` of no rows is NULL; a negative one is damage).
pub fn count(value: Option<i64>) -> u64 {
    value.and_then(|value| u64::try_from(value).ok()).unwrap_or(0)
}

/// A count as stored.
pub fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_a_partial_key_is_dropped() {
        let keys = [1, u64::MAX, 42];
        let mut bytes = encode_keys(&keys);
        assert_eq!(decode_keys(&bytes), keys);
        bytes.push(7);
        assert_eq!(decode_keys(&bytes), keys);
        assert_eq!(fingerprint_of(&[1, 2]), [1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!((count(None), count(Some(-1)), count(Some(5)), signed(u64::MAX)), (0, 0, 5, i64::MAX));
    }
}
