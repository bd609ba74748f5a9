//! AIMEM (draft-vu-aimem-bundle-00): how a bundle or stream names itself and the producer
//! namespace rule that every chunk id carries.

use super::json_member::has_member;
use crate::error::ConfigError;

/// Whether a file's first bytes hold AIMEM's own members (`chunks` of a bundle, `_kind` of a
/// stream line).
pub fn looks_like_aimem(bytes: &[u8]) -> bool {
    has_member(bytes, "chunks", b"") || has_member(bytes, "_kind", b"")
}

/// Whether `producer` is an AIMEM producer namespace (`^[a-z0-9-]{1,63}$`).
pub fn is_producer(producer: &str) -> bool {
    (1..=63).contains(&producer.len()) && producer.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
}

/// Checks an AIMEM producer namespace given as `--producer`.
///
/// # Errors
/// [`ConfigError::Option`] saying what is allowed.
pub fn check_producer(producer: &str) -> Result<(), ConfigError> {
    if is_producer(producer) {
        Ok(())
    } else {
        Err(ConfigError::Option {
            option: "--producer".into(),
            reason: format!("`{producer}` is not a producer namespace: use 1-63 characters of a-z, 0-9 and `-`"),
        })
    }
}

/// memport's envelope extension listing the conversations a sync retracted.
pub const RETRACTED_MEMBER: &str = "x-memport-retracted";
/// memport's envelope extension listing the messages a sync withdrew (erased from its memory
/// store since an earlier run wrote them).
pub const WITHDRAWN_MEMBER: &str = "x-memport-withdrawn-messages";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn producer_namespaces_are_short_lowercase_names() {
        assert!(is_producer("memport"));
        assert!(is_producer("a-1"));
        assert!(!is_producer(""));
        assert!(!is_producer("Memport"));
        assert!(!is_producer(&"a".repeat(64)));
        assert!(check_producer("bad_producer").is_err());
    }

    #[test]
    fn aimem_files_are_known_by_their_own_members() {
        assert!(looks_like_aimem(br#"{"format":"aimem-bundle","chunks":[]}"#));
        assert!(looks_like_aimem(br#"{"_kind":"chunk"}"#));
        assert!(!looks_like_aimem(br#"{"text":"\"chunks\": []"}"#));
    }
}
