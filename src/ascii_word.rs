//! Eight bytes of text tested at once, as one `u64` (bit tricks, exact for ASCII bytes), for the
//! loops that run over every byte of every message: the PAM hash and answer HTML to text.

/// The high bit of every byte of a word.
pub const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
/// The low bit of every byte of a word.
pub const ONES: u64 = 0x0101_0101_0101_0101;

/// When `bytes` are eight printable ASCII bytes (0x20–0x7F): them as a little-endian word, and
/// a mask with the high bit of each byte that is a space. `None` otherwise.
pub fn printable_ascii(bytes: &[u8]) -> Option<(u64, u64)> {
    let word = u64::from_le_bytes(<[u8; 8]>::try_from(bytes).ok()?);
    if word & HIGH_BITS != 0 {
        return None;
    }
    // With the high bits clear, adding sets a byte's high bit exactly when the byte is at
    // least 0x20 (below are control characters), or when it is not a space.
    let printable = (word + ONES * 0x60) & HIGH_BITS;
    let not_space = ((word ^ (ONES * 0x20)) + ONES * 0x7f) & HIGH_BITS;
    (printable == HIGH_BITS).then_some((word, !not_space & HIGH_BITS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_the_spaces_of_printable_words_only() {
        assert_eq!(printable_ascii(b"a b~ c!d"), Some((u64::from_le_bytes(*b"a b~ c!d"), 0x80 << 8 | 0x80 << 32)));
        assert_eq!(printable_ascii(b"        ").map(|(_, spaces)| spaces), Some(HIGH_BITS));
        assert_eq!(printable_ascii(b"del\x7fok!!").map(|(_, spaces)| spaces), Some(0));
        assert_eq!(printable_ascii(b"tab\there"), None);
        assert_eq!(printable_ascii(b"caf\xc3\xa9 ok"), None);
        assert_eq!(printable_ascii(b"short"), None);
    }
}
