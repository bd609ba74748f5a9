//! PAM v1.0 (pam.md): the store's file and folder names and how its files name themselves.

use super::json_member::has_member;

/// The store's index file.
pub const STORE_FILE: &str = "memory-store.json";
/// The store's embeddings file, written when memories carry embeddings.
pub const EMBEDDINGS_FILE: &str = "embeddings.json";
/// Folder of the conversation files.
pub const CONVERSATIONS_FOLDER: &str = "conversations";

/// Whether a file's first bytes name a PAM schema (a store, conversation or embeddings file).
pub fn looks_like_pam(head: &[u8]) -> bool {
    has_member(head, "schema", b"\"portable-ai-memory")
}

/// Whether a file's first bytes look like a PAM memory store (not a conversation file).
pub fn looks_like_store(head: &[u8]) -> bool {
    looks_like_pam(head) && has_member(head, "memories", b"") || has_member(head, "conversations_index", b"")
}

/// Whether a file's first bytes hold a `messages` member (a PAM conversation file's).
pub fn has_messages(head: &[u8]) -> bool {
    has_member(head, "messages", b"")
}

/// The tag of the index entry of messages a sync withdraws.
pub const WITHDRAWN_TAG: &str = "messages-withdrawn";
/// What a withdrawal's index id adds to the PAM id of the conversation (a character no plain
/// conversation id has, so it names no conversation of its own).
pub const WITHDRAWN_SUFFIX: &str = "~withdrawn";
/// The `raw_metadata` member of a withdrawal's file that names the messages.
pub const WITHDRAWN_MEMBER: &str = "memport_withdrawn_messages";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pam_files_name_their_schema() {
        assert!(looks_like_pam(br#"{"schema" : "portable-ai-memory","memories":[]}"#));
        assert!(looks_like_pam(br#"{"messages":[],"schema":"portable-ai-memory-conversation"}"#));
        assert!(!looks_like_pam(br#"{"chunks":[{"content":"\"schema\": \"portable-ai-memory\""}]}"#));
        assert!(looks_like_store(br#"{"schema":"portable-ai-memory","memories":[]}"#));
        assert!(!looks_like_store(br#"{"schema":"portable-ai-memory-conversation","messages":[]}"#));
    }
}
