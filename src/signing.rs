//! Ed25519 keys for `--sign-key`, `did:key` identifiers, and the two signature schemes memport
//! writes and checks: PAM §18 (a signature over the RFC 8785 form of checksum, export id,
//! export date and owner id) and UMP 0.1 integrity (a BLAKE3 content hash of the record's
//! RFC 8785 form, signed as the BLAKE3 digest of that hash's text; memory-formats.md §4.3).

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
use ed25519_dalek::pkcs8::DecodePrivateKey;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde_json::Value;

use crate::error::ConfigError;
use crate::jcs::to_canonical_vec;

/// Multicodec prefix of an Ed25519 public key (`0xed 0x01`), as in `did:key`.
const ED25519_MULTICODEC: [u8; 2] = [0xed, 0x01];

/// A signing key read from `--sign-key`.
#[derive(Clone)]
pub struct SignKey {
    key: SigningKey,
}

impl std::fmt::Debug for SignKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        formatter.debug_struct("SignKey").field("did", &self.did_key()).finish()
    }
}

impl SignKey {
    /// Reads a key file: a PKCS#8 PEM Ed25519 private key (`openssl genpkey -algorithm ed25519`),
    /// the 32-byte seed as 64 hex digits, or the 32 raw bytes of the seed.
    ///
    /// # Errors
    /// [`ConfigError::Option`] saying what the file should hold.
    pub fn load(path: &Path) -> Result<SignKey, ConfigError> {
        let problem = |reason: String| ConfigError::Option { option: "--sign-key".into(), reason: format!("{}: {reason}", path.display()) };
        let bytes = std::fs::read(path).map_err(|error| problem(format!("cannot read it ({error})")))?;
        let seed = seed_from_key_file(&bytes).ok_or_else(|| {
            problem(
                "not an Ed25519 private key: give a PKCS#8 PEM file (openssl genpkey -algorithm ed25519), 64 hex digits or 32 raw bytes"
                    .into(),
            )
        })?;
        Ok(SignKey::from_seed(&seed))
    }

    /// The key of a 32-byte seed.
    pub fn from_seed(seed: &[u8; 32]) -> SignKey {
        SignKey { key: SigningKey::from_bytes(seed) }
    }

    /// The public key as multibase base58btc with the Ed25519 multicodec prefix (`z6Mk…`).
    pub fn multibase_public_key(&self) -> String {
        let mut prefixed = ED25519_MULTICODEC.to_vec();
        prefixed.extend_from_slice(self.key.verifying_key().as_bytes());
        format!("z{}", bs58::encode(prefixed).into_string())
    }

    /// `did:key:z6Mk…`.
    pub fn did_key(&self) -> String {
        format!("did:key:{}", self.multibase_public_key())
    }

    /// Signs `message`.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }
}

fn seed_from_key_file(bytes: &[u8]) -> Option<[u8; 32]> {
    let text = std::str::from_utf8(bytes).ok().map(str::trim);
    if let Some(text) = text {
        if text.starts_with("-----BEGIN PRIVATE KEY-----") {
            return SigningKey::from_pkcs8_pem(text).ok().map(|key| key.to_bytes());
        }
        if text.len() == 64 && text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return data_encoding::HEXLOWER_PERMISSIVE.decode(text.as_bytes()).ok()?.try_into().ok();
        }
    }
    bytes.try_into().ok()
}

/// The Ed25519 public key in `text`: `did:key:z…` (a `#fragment` is ignored), multibase `z…`
/// with the multicodec prefix, or plain base58 of the 32 bytes (the PAM schema's wording).
pub fn public_key_from_text(text: &str) -> Option<VerifyingKey> {
    let text = text.strip_prefix("did:key:").unwrap_or(text);
    let text = text.split('#').next().unwrap_or(text);
    let bytes = match text.strip_prefix('z').and_then(|rest| bs58::decode(rest).into_vec().ok()) {
        Some(decoded) if decoded.starts_with(&ED25519_MULTICODEC) && decoded.len() == 34 => decoded[2..].to_vec(),
        _ => bs58::decode(text).into_vec().ok()?,
    };
    VerifyingKey::from_bytes(&bytes.try_into().ok()?).ok()
}

/// PAM §18.3: the RFC 8785 bytes that are signed.
pub fn pam_signature_payload(checksum: &str, export_id: &str, export_date: &str, owner_id: &str) -> Vec<u8> {
    to_canonical_vec(&serde_json::json!({
        "checksum": checksum,
        "export_id": export_id,
        "export_date": export_date,
        "owner_id": owner_id,
    }))
}

/// PAM `signature.value`: base64url of the signature, without padding (the schema's pattern
/// has no `=`).
pub fn pam_signature_value(key: &SignKey, payload: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(key.sign(payload))
}

/// Whether `value` (base64url, padded or not) is a valid signature of `payload` by `public_key`.
pub fn verify_pam_signature(public_key: &VerifyingKey, payload: &[u8], value: &str) -> bool {
    let decoded = URL_SAFE_NO_PAD.decode(value.trim_end_matches('=')).or_else(|_| URL_SAFE.decode(value));
    decoded
        .ok()
        .and_then(|bytes| Signature::from_slice(&bytes).ok())
        .is_some_and(|signature| public_key.verify(payload, &signature).is_ok())
}

/// UMP `content_hash`: `blake3:` + lowercase base32 of BLAKE3 over the RFC 8785 form of the
/// record without `integrity`.
pub fn ump_content_hash(record: &Value) -> String {
    let mut without = record.clone();
    if let Some(object) = without.as_object_mut() {
        object.remove("integrity");
    }
    let digest = blake3::hash(&to_canonical_vec(&without));
    format!("blake3:{}", crate::spec::ump::base32_lower(digest.as_bytes()))
}

/// UMP `integrity` for `record`: content hash, signature (`ed25519:` + padded base64 of the
/// signature over the BLAKE3 digest of the hash's text) and signer (`did:key`).
pub fn ump_integrity(key: &SignKey, record: &Value) -> Value {
    let content_hash = ump_content_hash(record);
    let signature = key.sign(blake3::hash(content_hash.as_bytes()).as_bytes());
    serde_json::json!({
        "content_hash": content_hash,
        "signature": format!("ed25519:{}", STANDARD.encode(signature)),
        "signer": key.did_key(),
    })
}

/// How a UMP record's `integrity` block checks out.
#[derive(Debug, PartialEq, Eq)]
pub enum UmpIntegrity {
    /// Hash and signature both verify.
    Verified,
    /// The content hash is not the record's.
    HashMismatch,
    /// The signer is not an Ed25519 `did:key`, so nothing can be verified.
    UnknownSigner,
    /// The signature does not verify.
    BadSignature,
}

/// Checks a UMP record's `integrity` block (which must have all three members).
pub fn verify_ump_integrity(record: &Value) -> UmpIntegrity {
    let integrity = &record["integrity"];
    let (Some(content_hash), Some(signature), Some(signer)) =
        (integrity["content_hash"].as_str(), integrity["signature"].as_str(), integrity["signer"].as_str())
    else {
        return UmpIntegrity::BadSignature;
    };
    if ump_content_hash(record) != content_hash {
        return UmpIntegrity::HashMismatch;
    }
    let Some(public_key) = public_key_from_text(signer) else { return UmpIntegrity::UnknownSigner };
    let signature = signature
        .strip_prefix("ed25519:")
        .and_then(|encoded| STANDARD.decode(encoded).ok())
        .and_then(|bytes| Signature::from_slice(&bytes).ok());
    match signature {
        Some(signature) if public_key.verify(blake3::hash(content_hash.as_bytes()).as_bytes(), &signature).is_ok() => {
            UmpIntegrity::Verified
        }
        _ => UmpIntegrity::BadSignature,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_key() -> SignKey {
        let mut seed = [0u8; 32];
        for (index, byte) in seed.iter_mut().enumerate() {
            *byte = index as u8;
        }
        SignKey::from_seed(&seed)
    }

    #[test]
    fn key_files_in_every_accepted_form_give_the_same_key() {
        let key = test_key();
        let hex: String = (0u8..32).map(|byte| format!("{byte:02x}")).collect();
        assert_eq!(seed_from_key_file(hex.as_bytes()), Some(*key.key.as_bytes()));
        let raw: Vec<u8> = (0u8..32).collect();
        assert_eq!(seed_from_key_file(&raw), Some(*key.key.as_bytes()));
        // RFC 8410's PKCS#8 v1 layout, written out as an independent reference: the DER prefix
        // of an Ed25519 private key, then the 32-byte seed.
        const PKCS8_ED25519_PREFIX: [u8; 16] =
            [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
        let mut der = PKCS8_ED25519_PREFIX.to_vec();
        der.extend_from_slice(&raw);
        let pem = format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", STANDARD.encode(der));
        assert_eq!(seed_from_key_file(pem.as_bytes()), Some(*key.key.as_bytes()));
        assert_eq!(seed_from_key_file(pem.trim_end().as_bytes()), Some(*key.key.as_bytes()), "no final newline");
        assert_eq!(seed_from_key_file(hex.to_ascii_uppercase().as_bytes()), Some(*key.key.as_bytes()));
        assert_eq!(seed_from_key_file(b"not a key"), None);
    }

    #[test]
    fn did_key_round_trips_and_pam_signatures_verify() {
        let key = test_key();
        assert!(key.did_key().starts_with("did:key:z6Mk"));
        let public = public_key_from_text(&format!("{}#{}", key.did_key(), key.multibase_public_key())).unwrap();
        let payload = pam_signature_payload("sha256:00", "id", "2026-01-01T00:00:00Z", "owner");
        let value = pam_signature_value(&key, &payload);
        assert!(verify_pam_signature(&public, &payload, &value));
        assert!(!verify_pam_signature(&public, b"other", &value));
    }

    #[test]
    fn ump_integrity_verifies_and_detects_changes() {
        let key = test_key();
        let mut record = serde_json::json!({"ump": "0.1", "id": "urn:ump:abc", "kind": "semantic", "body": {"text": "x"}});
        record["integrity"] = ump_integrity(&key, &record);
        assert_eq!(verify_ump_integrity(&record), UmpIntegrity::Verified);
        record["body"]["text"] = "y".into();
        assert_eq!(verify_ump_integrity(&record), UmpIntegrity::HashMismatch);
    }
}
