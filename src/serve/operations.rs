//! UMP's six operations (§3) over a store, independent of the binding that carries them:
//! each takes its request as UMP shapes it and answers UMP's response, or an error with one of
//! UMP's codes (§3.7).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::model::Micros;
use crate::store::recall::{MAX_RECALL, RecallQuery};
use crate::store::{Store, StoreError};
use crate::timefmt::parse_rfc3339;

/// The record kinds of UMP 0.1.
pub const KINDS: [&str; 5] = ["semantic", "episodic", "procedural", "working", "identity"];

/// An operation's failure, as UMP names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UmpError {
    /// `not_found`, `invalid_record`, `unsupported`, …
    pub code: &'static str,
    /// What went wrong, for people.
    pub message: String,
}

impl UmpError {
    /// An error of `code` saying `message`.
    pub fn new(code: &'static str, message: impl Into<String>) -> UmpError {
        UmpError { code, message: message.into() }
    }

    /// UMP's error envelope: `{"error": {"code", "message"}}`.
    pub fn envelope(&self) -> Value {
        json!({"error": {"code": self.code, "message": self.message}})
    }
}

impl From<StoreError> for UmpError {
    fn from(error: StoreError) -> UmpError {
        match error {
            StoreError::NotFound(_) => UmpError::new("not_found", error.to_string()),
            StoreError::InvalidRecord(_) => UmpError::new("invalid_record", error.to_string()),
            // UMP's code for "not now": a run of memport is loading into the store.
            StoreError::Busy => UmpError::new("rate_limited", error.to_string()),
            // The store's own failure: nothing the caller sent was wrong.
            other => UmpError::new("unsupported", format!("the store failed: {other}")),
        }
    }
}

/// `capabilities` request.
#[derive(Debug, Deserialize, JsonSchema, Default)]
pub struct CapabilitiesRequest {
    /// The client's name and UMP version, e.g. `{"name": "claude-code", "ump": "0.1"}`.
    pub client: Option<Value>,
}

/// The part of a scope a recall is limited to or ranked by.
#[derive(Debug, Deserialize, JsonSchema, Default)]
pub struct ScopeFilter {
    /// Only records of this owner.
    pub owner: Option<String>,
    /// Records of this agent (the assistant a message came from) rank higher.
    pub agent: Option<String>,
    /// Records of this session (a conversation id) rank higher.
    pub session: Option<String>,
    /// Accepted for UMP's shape; memport's records name no project.
    pub project: Option<String>,
}

/// A recall's filter.
#[derive(Debug, Deserialize, JsonSchema, Default)]
pub struct RecallFilter {
    /// Only these kinds.
    pub kind: Option<Vec<String>>,
    /// The point in time the records must be valid at (RFC 3339); default now.
    pub valid_at: Option<String>,
}

/// `recall` request.
#[derive(Debug, Deserialize, JsonSchema, Default)]
pub struct RecallRequest {
    /// What to look for, in words.
    pub query: Option<String>,
    /// Owner to limit to; agent and session to prefer.
    pub scope: Option<ScopeFilter>,
    /// Kinds and point in time.
    pub filter: Option<RecallFilter>,
    /// At most this many results (default 10, at most 50).
    pub limit: Option<usize>,
    /// A client's steer; memport ranks the same way whatever it says.
    pub ranking_hints: Option<Value>,
}

/// `remember` request.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RememberRequest {
    /// A partial UMP record: at least `kind` and `body.text`; the server fills the rest.
    pub record: Value,
}

/// `get` request.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetRequest {
    /// The record id (`urn:ump:…`).
    pub id: String,
}

/// `revise` request.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviseRequest {
    /// The record to revise.
    pub id: String,
    /// The members to change, e.g. `{"body": {"text": "…"}, "time": {"valid_from": "…"}}`.
    pub patch: Value,
}

/// `forget` request.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ForgetRequest {
    /// The record to forget.
    pub id: String,
    /// Why, kept with an erasure.
    pub reason: Option<String>,
    /// Erase the record and its text for good instead of tombstoning it (owner only).
    pub hard: Option<bool>,
}

/// `capabilities`: what this server does.
pub fn capabilities(writable: bool, bindings: &[&str]) -> Value {
    json!({
        "server": {"name": "memport", "version": env!("CARGO_PKG_VERSION")},
        "ump": "0.1",
        "conformance": "L2",
        "kinds": KINDS,
        "bindings": bindings,
        "retrieval_signals": ["similarity", "recency", "salience", "scope_match"],
        "max_recall": MAX_RECALL,
        "writable": writable,
    })
}

/// `recall`: ranked records with their signals.
///
/// # Errors
/// `invalid_record` for an unreadable `valid_at` or an unknown kind; store failures.
pub fn recall(store: &Store, request: &RecallRequest, now: Micros, only_agent: Option<&str>) -> Result<Value, UmpError> {
    let filter = request.filter.as_ref();
    let valid_at = match filter.and_then(|filter| filter.valid_at.as_deref()) {
        None => now,
        Some(text) => {
            parse_rfc3339(text).ok_or_else(|| UmpError::new("invalid_record", format!("valid_at `{text}` is not an RFC 3339 time")))?
        }
    };
    let kinds = filter.and_then(|filter| filter.kind.clone()).unwrap_or_default();
    if let Some(unknown) = kinds.iter().find(|kind| !KINDS.contains(&kind.as_str())) {
        return Err(UmpError::new("invalid_record", format!("`{unknown}` is not a UMP kind ({})", KINDS.join(", "))));
    }
    let scope = request.scope.as_ref();
    let query = RecallQuery {
        query: request.query.clone().unwrap_or_default(),
        kinds,
        owner: scope.and_then(|scope| scope.owner.clone()),
        agent: scope.and_then(|scope| scope.agent.clone()),
        session: scope.and_then(|scope| scope.session.clone()),
        only_agent: only_agent.map(str::to_owned),
        valid_at,
        limit: request.limit.unwrap_or(10),
    };
    let results: Vec<Value> = store
        .recall(&query)?
        .into_iter()
        .map(|recalled| json!({"record": recalled.record, "signals": recalled.signals, "score": recalled.score}))
        .collect();
    Ok(json!({"results": results}))
}

/// `remember`: stores a record (completed with the server's defaults), or finds it stored.
///
/// # Errors
/// `invalid_record` for a record UMP 0.1 refuses once completed; store failures.
pub fn remember(store: &Store, request: &RememberRequest, now: Micros, method: &str) -> Result<Value, UmpError> {
    let mut record = store.complete(&request.record, now, "agent", method)?;
    if record.get("id").is_none() {
        record["id"] = Value::from(crate::store::edit::content_id(&record));
    }
    if let Some(problem) = crate::validate::ump::record_problems(&record).into_iter().next() {
        return Err(UmpError::new("invalid_record", format!("{}: {}", problem.location, problem.message)));
    }
    let (id, result) = store.remember(record)?;
    Ok(json!({"id": id, "result": result.name()}))
}

/// `get`: one record.
///
/// # Errors
/// `not_found`; store failures.
pub fn get(store: &Store, request: &GetRequest) -> Result<Value, UmpError> {
    let record = store.get(&request.id)?.ok_or_else(|| UmpError::new("not_found", format!("no record has the id `{}`", request.id)))?;
    Ok(json!({"record": record}))
}

/// `revise`: a successor that supersedes the record.
///
/// # Errors
/// `not_found`, `invalid_record`; store failures.
pub fn revise(store: &Store, request: &ReviseRequest, now: Micros) -> Result<Value, UmpError> {
    let id = store.revise(&request.id, &request.patch, now)?;
    let successor = store.get(&id)?.unwrap_or(Value::Null);
    if let Some(problem) = crate::validate::ump::record_problems(&successor).into_iter().next() {
        return Err(UmpError::new("invalid_record", format!("the revised record: {}: {}", problem.location, problem.message)));
    }
    Ok(json!({"id": id, "supersedes": [request.id]}))
}

/// `forget`: tombstone, or erase with `hard`.
///
/// # Errors
/// `not_found`; store failures.
pub fn forget(store: &Store, request: &ForgetRequest, now: Micros) -> Result<Value, UmpError> {
    let reason = request.reason.as_deref().unwrap_or("forgotten");
    let result = store.forget(&request.id, reason, request.hard.unwrap_or(false), now)?;
    Ok(json!({"result": result.name()}))
}
