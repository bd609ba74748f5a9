//! AIME v1.0 (memory-formats.md §5): how a document names itself.

use super::json_member::has_member;

/// Whether a file's first bytes name AIME (`"format": "aime"`).
pub fn looks_like_aime(head: &[u8]) -> bool {
    has_member(head, "format", b"\"aime\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aime_documents_name_their_format() {
        assert!(looks_like_aime(br#"{"format" : "aime","version":"1.0"}"#));
        assert!(!looks_like_aime(br#"{"format":"aimem-bundle"}"#));
        assert!(!looks_like_aime(br#"{"content":"\"format\":\"aime\""}"#));
    }
}
