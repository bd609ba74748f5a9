//! Content hashes: PAM §6 `content_hash` (the dedup key), plain SHA-256 helpers, and the
//! fingerprints a sync knows elements by.

use sha2::{Digest, Sha256};

pub use crate::normalize::pam_normalize;

/// The PAM `content_hash` digest of `content` (SHA-256 of the normalized UTF-8 bytes).
pub fn pam_content_digest(content: &str) -> [u8; 32] {
    with_normalized(content, sha256)
}

thread_local! {
    /// Each thread's buffer for normalized text, reused from message to message.
    static NORMALIZED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Largest normalized text whose buffer is kept for the next message.
const KEPT_BUFFER_BYTES: usize = 1 << 20;

/// Hands the PAM-normalized UTF-8 bytes of `content` to `take`.
fn with_normalized<T>(content: &str, take: impl FnOnce(&[u8]) -> T) -> T {
    NORMALIZED.with_borrow_mut(|buffer| {
        crate::normalize::normalize_into(content, buffer);
        let taken = take(buffer);
        // One long message must not pin its size for the rest of the run.
        if buffer.capacity() > KEPT_BUFFER_BYTES {
            *buffer = Vec::new();
        }
        taken
    })
}

/// What a message's text is known by: its dedup key and, when an output writes it, its PAM
/// `content_hash` digest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContentKey {
    /// XXH3-128 of the PAM-normalized text: two texts that normalize alike (PAM §6) share it.
    /// It never leaves the run, so a fast hash will do (see [`content_key`]).
    pub dedup: u128,
    /// The PAM `content_hash` digest ([`pam_content_digest`]), when it was asked for.
    pub pam_digest: Option<[u8; 32]>,
}

/// The [`ContentKey`] of `content`, normalized once for both hashes; the SHA-256 digest only
/// `with_pam_digest`. Dedup compares keys within one run and nothing stores them, so the key
/// need not be a cryptographic hash: 128 bits make an accidental collision as unlikely as
/// with the digest's first 128 bits, which dedup keyed on before, and XXH3 runs at memory
/// speed where SHA-256 cost a twentieth of a Gemini conversion.
pub fn content_key(content: &str, with_pam_digest: bool) -> ContentKey {
    with_normalized(content, |normalized| ContentKey {
        dedup: twox_hash::XxHash3_128::oneshot(normalized),
        pam_digest: with_pam_digest.then(|| sha256(normalized)),
    })
}

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// `sha256:` followed by the lowercase hex of `digest`, the form every format here writes.
pub fn sha256_label(digest: &[u8; 32]) -> String {
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    push_hex(&mut out, digest);
    out
}

/// Appends [`sha256_label`]`(digest)` to `out` as bytes, for writers that build records as
/// bytes.
pub fn push_sha256_label(out: &mut Vec<u8>, digest: &[u8; 32]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"sha256:");
    for byte in digest {
        out.push(DIGITS[usize::from(byte >> 4)]);
        out.push(DIGITS[usize::from(byte & 0x0f)]);
    }
}

/// Appends lowercase hex of `bytes` to `out`.
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0x0f)] as char);
    }
}

/// A fingerprint of an element's bytes as the export holds them: the first 16 bytes of their
/// BLAKE3 hash. A sync skips an element whose fingerprint an earlier run recorded.
pub type Fingerprint = [u8; 16];

/// The fingerprint of `bytes`.
pub fn fingerprint(bytes: &[u8]) -> Fingerprint {
    fingerprint_of(blake3::Hasher::new().update(bytes))
}

/// The fingerprint a hasher fed by hand stands for.
pub fn fingerprint_of(hasher: &blake3::Hasher) -> Fingerprint {
    let mut fingerprint = [0u8; 16];
    fingerprint.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    fingerprint
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_keys_hash_the_normalized_text_once_for_both() {
        let long_words = "ABCDEFGHIJ\tKLMNOPQRSTUVWXYZ abcdefgh12345678\n\n\nXYZ ".repeat(300);
        for text in ["  Hello \t\n World  ", "hello world", "ÇA  VA?", "", &long_words] {
            let normalized = pam_normalize(text);
            let with_digest = content_key(text, true);
            assert_eq!(with_digest.dedup, twox_hash::XxHash3_128::oneshot(normalized.as_bytes()), "{text:?}");
            assert_eq!(with_digest.pam_digest, Some(pam_content_digest(text)), "{text:?}");
            assert_eq!(content_key(text, false), ContentKey { pam_digest: None, ..with_digest }, "{text:?}");
        }
        // Texts that normalize alike share a key; others do not.
        assert_eq!(content_key("Hello   World", false), content_key("hello world", false));
        assert_ne!(content_key("hello world", false), content_key("hello  worlds", false));
    }

    #[test]
    fn labels_as_bytes_match_labels_as_text() {
        let digest = sha256(b"memport");
        let mut bytes = b"x".to_vec();
        push_sha256_label(&mut bytes, &digest);
        assert_eq!(bytes, format!("x{}", sha256_label(&digest)).into_bytes());
    }

    #[test]
    fn published_vector() {
        let digest = pam_content_digest("User is a cloud infrastructure engineer");
        assert_eq!(sha256_label(&digest), "sha256:e1bae3ec291c99eced01fc91b4152a0cef541fccf2034fc11b3f90f4e4d79b6e");
    }
}
