//! Deterministic UUIDs: RFC 4122 ids derived from a name's SHA-256, so the same input gives the
//! same ids on every run (memport never draws random ids).

use uuid::Builder;

use crate::hash::sha256;

/// The first 16 bytes of `name`'s SHA-256.
fn name_digest(name: &str) -> [u8; 16] {
    let digest = sha256(name.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes
}

/// A UUID with the version 4 and RFC 4122 variant bits, derived from `name` (so it repeats):
/// the shape schemas that ask for a random UUID accept.
pub fn uuid_v4_shaped(name: &str) -> String {
    Builder::from_random_bytes(name_digest(name)).into_uuid().hyphenated().to_string()
}

/// A name-based UUID with the version 5 and RFC 4122 variant bits, derived from `name`'s
/// SHA-256 (version 5 proper would hash with SHA-1 under a namespace).
pub fn uuid_v5_shaped(name: &str) -> String {
    Builder::from_sha1_bytes(name_digest(name)).into_uuid().hyphenated().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit layout by hand, as RFC 4122 §4.1 gives it.
    fn shaped_by_hand(name: &str, version: u8) -> String {
        let mut bytes = name_digest(name);
        bytes[6] = (bytes[6] & 0x0f) | (version << 4);
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
    }

    #[test]
    fn the_crate_sets_the_same_bits_as_rfc_4122_by_hand() {
        for name in ["", "chatgpt:c:m", "memport-tenant:memport", "ü"] {
            assert_eq!(uuid_v4_shaped(name), shaped_by_hand(name, 4), "{name}");
            assert_eq!(uuid_v5_shaped(name), shaped_by_hand(name, 5), "{name}");
        }
    }
}
