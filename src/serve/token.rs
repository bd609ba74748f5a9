//! Capability tokens (UMP §5.2): verbs × scope × expiry, signed with the store owner's Ed25519
//! key and checked on every HTTP call.
//!
//! A token is `ump-cap.` + base64url(grant JSON) + `.` + base64url(Ed25519 signature of those
//! JSON bytes). The grant names its issuer (the owner's `did:key`), its verbs (`read`, `write`,
//! `derive`, `export`), its scope (all of the store, or one agent: the records of one
//! provider) and its issue and expiry times in seconds since the epoch. The store remembers the
//! owner's `did:key` the first time a token is issued from it; every later token must be signed
//! with the same key, and the server checks each token against it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signature, Verifier};
use serde::{Deserialize, Serialize};

use crate::signing::{SignKey, public_key_from_text};

/// What every token starts with.
pub const TOKEN_PREFIX: &str = "ump-cap.";

/// What a token lets its bearer do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verb {
    /// recall and get.
    Read,
    /// remember, revise, forget.
    Write,
    /// remember records derived from what was read.
    Derive,
    /// export whole.
    Export,
}

impl Verb {
    /// Parses a verb as given to `--verbs`.
    pub fn parse(name: &str) -> Option<Verb> {
        match name.trim() {
            "read" => Some(Verb::Read),
            "write" => Some(Verb::Write),
            "derive" => Some(Verb::Derive),
            "export" => Some(Verb::Export),
            _ => None,
        }
    }
}

/// Which records a token reaches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenScope {
    /// Only records of this agent (`scope.agent`: the provider they came from); all when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// The signed content of a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// The owner's `did:key`, whose key signed it.
    pub iss: String,
    /// What it allows.
    pub verbs: Vec<Verb>,
    /// Which records.
    pub scope: TokenScope,
    /// Issued at, seconds since the epoch.
    pub iat: i64,
    /// Expires at, seconds since the epoch.
    pub exp: i64,
}

impl Grant {
    /// Whether it allows `verb`.
    pub fn allows(&self, verb: Verb) -> bool {
        self.verbs.contains(&verb)
    }

    /// Whether it reaches a record of `agent` (`scope.agent`).
    pub fn reaches(&self, agent: Option<&str>) -> bool {
        self.scope.agent.as_deref().is_none_or(|only| agent == Some(only))
    }
}

/// Why a token was refused (401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not of the token's shape.
    #[error("not a capability token (they start with `ump-cap.`; issue one with `memport token issue`)")]
    Malformed,
    /// Signed by another key than the store owner's.
    #[error("the token is not signed by this store's owner key")]
    BadSignature,
    /// Past its expiry.
    #[error("the token expired")]
    Expired,
}

/// Signs `grant` with `key`.
pub fn issue(grant: &Grant, key: &SignKey) -> String {
    let payload = serde_json::to_vec(grant).unwrap_or_default();
    let signature = key.sign(&payload);
    format!("{TOKEN_PREFIX}{}.{}", URL_SAFE_NO_PAD.encode(&payload), URL_SAFE_NO_PAD.encode(signature))
}

/// Checks `token` against the owner `did` at `now` (seconds) and returns what it grants.
///
/// # Errors
/// [`TokenError`] saying why it is refused.
pub fn verify(token: &str, owner_did: &str, now: i64) -> Result<Grant, TokenError> {
    let body = token.strip_prefix(TOKEN_PREFIX).ok_or(TokenError::Malformed)?;
    let (payload, signature) = body.split_once('.').ok_or(TokenError::Malformed)?;
    let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| TokenError::Malformed)?;
    let signature =
        URL_SAFE_NO_PAD.decode(signature).ok().and_then(|bytes| Signature::from_slice(&bytes).ok()).ok_or(TokenError::Malformed)?;
    let key = public_key_from_text(owner_did).ok_or(TokenError::BadSignature)?;
    key.verify(&payload, &signature).map_err(|_| TokenError::BadSignature)?;
    let grant: Grant = serde_json::from_slice(&payload).map_err(|_| TokenError::Malformed)?;
    if grant.iss != owner_did {
        return Err(TokenError::BadSignature);
    }
    if grant.exp <= now {
        return Err(TokenError::Expired);
    }
    Ok(grant)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> SignKey {
        SignKey::from_seed(&[byte; 32])
    }

    fn grant(owner: &SignKey, verbs: Vec<Verb>) -> Grant {
        Grant { iss: owner.did_key(), verbs, scope: TokenScope::default(), iat: 1_000, exp: 2_000 }
    }

    #[test]
    fn a_token_verifies_against_its_owner_until_it_expires() {
        let owner = key(1);
        let token = issue(&grant(&owner, vec![Verb::Read]), &owner);
        let checked = verify(&token, &owner.did_key(), 1_500).unwrap();
        assert!(checked.allows(Verb::Read) && !checked.allows(Verb::Write));
        assert_eq!(verify(&token, &owner.did_key(), 2_000), Err(TokenError::Expired));
    }

    #[test]
    fn another_key_a_changed_grant_or_garbage_is_refused() {
        let (owner, stranger) = (key(1), key(2));
        let forged = issue(&grant(&owner, vec![Verb::Read]), &stranger);
        assert_eq!(verify(&forged, &owner.did_key(), 1_500), Err(TokenError::BadSignature));
        let token = issue(&grant(&owner, vec![Verb::Read]), &owner);
        let (head, signature) = token.rsplit_once('.').unwrap();
        let widened = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&grant(&owner, vec![Verb::Read, Verb::Write])).unwrap());
        let tampered = format!("{TOKEN_PREFIX}{widened}.{signature}");
        assert_eq!(verify(&tampered, &owner.did_key(), 1_500), Err(TokenError::BadSignature));
        assert!(head.starts_with(TOKEN_PREFIX));
        for garbage in ["", "Bearer", "ump-cap.", "ump-cap.x.y", "ump-cap.e30.AAAA"] {
            assert!(verify(garbage, &owner.did_key(), 1_500).is_err(), "{garbage}");
        }
    }

    #[test]
    fn a_scoped_token_reaches_only_its_agent() {
        let owner = key(1);
        let mut scoped = grant(&owner, vec![Verb::Read]);
        scoped.scope.agent = Some("chatgpt".into());
        assert!(scoped.reaches(Some("chatgpt")));
        assert!(!scoped.reaches(Some("claude")) && !scoped.reaches(None));
        assert!(grant(&owner, vec![Verb::Read]).reaches(None));
    }
}
