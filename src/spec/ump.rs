//! UMP 0.1 (memory-formats.md §4): how records name themselves and the record id rule
//! (`urn:ump:` + lowercase base32, the Recall adapter's bridge of provider ids).

use std::path::Path;
use std::sync::LazyLock;

use data_encoding::{Encoding, Specification};

use super::json_member::has_member;
use crate::hash::sha256;

/// Longest provider id bridged as it is: its base32 form must leave room in a file name.
const MAX_BRIDGED_ID_BYTES: usize = 150;

/// Lowercase RFC 4648 base32 without padding.
static BASE32_LOWER: LazyLock<Encoding> = LazyLock::new(|| {
    let mut specification = Specification::new();
    specification.symbols.push_str("abcdefghijklmnopqrstuvwxyz234567");
    #[expect(clippy::expect_used, reason = "32 distinct ASCII symbols, no padding: a valid base32 specification")]
    specification.encoding().expect("a valid base32 alphabet")
});

/// Lowercase RFC 4648 base32 without padding.
pub fn base32_lower(bytes: &[u8]) -> String {
    BASE32_LOWER.encode(bytes)
}

/// The record id of a provider id: the reversible bridge when it fits a file name, else
/// base32 of the first 20 bytes of its SHA-256.
pub fn record_id(foreign_id: &str) -> String {
    if foreign_id.len() <= MAX_BRIDGED_ID_BYTES {
        format!("urn:ump:{}", base32_lower(foreign_id.as_bytes()))
    } else {
        format!("urn:ump:{}", base32_lower(&sha256(foreign_id.as_bytes())[..20]))
    }
}

/// The provider id a record id bridges (the inverse of [`record_id`] for an id it did not
/// hash); `None` for any other id.
pub fn foreign_id(record_id: &str) -> Option<String> {
    let encoded = record_id.strip_prefix("urn:ump:")?;
    let bytes = BASE32_LOWER.decode(encoded.as_bytes()).ok()?;
    // A hashed id decodes to 20 bytes that are rarely text; a bridged one re-encodes to itself.
    String::from_utf8(bytes).ok().filter(|id| id.len() <= MAX_BRIDGED_ID_BYTES && self::record_id(id) == record_id)
}

/// The record id of a message: the same for the message's own record and for an extracted
/// memory's evidence, which names the message by the same three ids.
pub fn message_record_id(provider: &str, conversation_id: &str, message_id: &str) -> String {
    record_id(&format!("{provider}:{conversation_id}:{message_id}"))
}

/// Whether a file's first bytes hold a `"ump": "…"` version member.
pub fn looks_like_ump(head: &[u8]) -> bool {
    has_member(head, "ump", b"\"")
}

/// Whether `folder` holds `.ump.md` records.
pub fn is_record_folder(folder: &Path) -> bool {
    std::fs::read_dir(folder).is_ok_and(|entries| entries.flatten().any(|entry| entry.file_name().to_string_lossy().ends_with(".ump.md")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_matches_rfc_4648_vectors() {
        for (input, expected) in
            [("", ""), ("f", "my"), ("fo", "mzxq"), ("foo", "mzxw6"), ("foob", "mzxw6yq"), ("fooba", "mzxw6ytb"), ("foobar", "mzxw6ytboi")]
        {
            assert_eq!(base32_lower(input.as_bytes()), expected, "{input}");
        }
    }

    #[test]
    fn a_bridged_id_reads_back_and_a_hashed_one_does_not() {
        assert_eq!(foreign_id(&record_id("mem-aa18d8d5acae3610de47")).as_deref(), Some("mem-aa18d8d5acae3610de47"));
        assert_eq!(foreign_id(&record_id(&"x".repeat(400))), None);
        assert_eq!(foreign_id("urn:ump:not base32!"), None);
        assert_eq!(foreign_id("urn:aimem:x"), None);
    }

    #[test]
    fn long_ids_are_hashed_to_fit_a_file_name() {
        assert_eq!(record_id("chatgpt:c:m"), format!("urn:ump:{}", base32_lower(b"chatgpt:c:m")));
        let long = record_id(&"x".repeat(400));
        assert_eq!(long.len(), "urn:ump:".len() + 32);
    }

    #[test]
    fn ump_records_name_their_version() {
        assert!(looks_like_ump(br#"[{"ump" : "0.1","id":"urn:ump:a"}]"#));
        assert!(!looks_like_ump(br#"{"text":"\"ump\": \"0.1\""}"#));
    }
}
