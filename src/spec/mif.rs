//! MIF v2 (memory-formats.md §3): how a document names itself.

use super::json_member::has_member;

/// Whether a file's first bytes hold a `mif_version` member.
pub fn looks_like_mif(head: &[u8]) -> bool {
    has_member(head, "mif_version", b"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mif_documents_name_their_version() {
        assert!(looks_like_mif(br#"{"mif_version" : "2.0"}"#));
        assert!(!looks_like_mif(br#"{"content":"mif_version"}"#));
    }
}
