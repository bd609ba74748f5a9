//! AIMEM's HTTP profile (draft §4) beside UMP's binding on the same listener:
//!
//! ```text
//! GET  /v1/brain/export?scope=FULL|DNA_ONLY|SINCE&since=…   export   application/aimem-bundle+json
//! GET  /v1/brain/export/stream?scope=…                      export   application/x-ndjson
//! POST /v1/brain/import                                     write    a bundle (JSON or NDJSON)
//! ```
//!
//! The same capability tokens as UMP's routes. Errors are RFC 7807 `application/problem+json`
//! with the AIMEM error codes (`checksum_mismatch` 409, `invalid_urn` 422, …), and an import's
//! body lists every problem found. The body of an import is spooled to a temporary file as it
//! arrives, at most the server's import limit (413 beyond), at no less than
//! [`MIN_UPLOAD_RATE`] after the request timeout's grace (408 for a client slower than that);
//! an export is streamed from a temporary file, so neither holds a bundle in memory.

use std::io::Write;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::json;

use super::brain::{self, BrainError, Scope};
use super::http::{Failure, Shared, authorize, with_store};
use super::now_micros;
use super::token::Verb;
use crate::timefmt::parse_rfc3339;
use crate::validate::Problems;

/// AIMEM's media type for a bundle.
pub const BUNDLE_MEDIA_TYPE: &str = "application/aimem-bundle+json";
/// The slowest an import's body may arrive once the request timeout has passed: 1 MiB/s.
pub const MIN_UPLOAD_RATE: u64 = 1 << 20;
/// How many problems an answer lists at most.
const LISTED_PROBLEMS: usize = 100;

/// An RFC 7807 problem.
pub(super) struct ProblemResponse {
    status: StatusCode,
    code: String,
    detail: String,
    problems: Problems,
}

impl ProblemResponse {
    fn new(status: StatusCode, code: &str, detail: impl Into<String>) -> ProblemResponse {
        ProblemResponse { status, code: code.to_owned(), detail: detail.into(), problems: Problems::new() }
    }
}

impl IntoResponse for ProblemResponse {
    fn into_response(self) -> Response {
        let mut body = json!({
            "type": format!("https://aimem.dev/errors/{}", self.code),
            "title": self.code,
            "status": self.status.as_u16(),
            "detail": self.detail,
        });
        if !self.problems.is_empty() {
            body["problems"] = self.problems.iter().take(LISTED_PROBLEMS).map(|problem| json!(problem)).collect();
            body["problem_count"] = json!(self.problems.total());
        }
        let mut response = (self.status, [(header::CONTENT_TYPE, "application/problem+json")], body.to_string()).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        }
        response
    }
}

impl From<Failure> for ProblemResponse {
    fn from(Failure(status, error): Failure) -> ProblemResponse {
        ProblemResponse::new(status, error.code, error.message)
    }
}

impl From<BrainError> for ProblemResponse {
    fn from(error: BrainError) -> ProblemResponse {
        match error {
            BrainError::Invalid(problems) => {
                let first = problems.first();
                let status =
                    first.and_then(|problem| StatusCode::from_u16(problem.status).ok()).unwrap_or(StatusCode::UNPROCESSABLE_ENTITY);
                let code = first.map_or("invalid_bundle", |problem| problem.code);
                let detail = first.map_or_else(String::new, |problem| format!("[{code}] {} at {}", problem.message, problem.location));
                ProblemResponse { status, code: code.to_owned(), detail, problems }
            }
            other => ProblemResponse::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", other.to_string()),
        }
    }
}

/// The export's scope from the query (`scope`, `since`; FULL when none).
fn scope_of(query: Option<&str>) -> Result<Scope, ProblemResponse> {
    let mut scope = "FULL".to_owned();
    let mut since = None;
    for (name, value) in form_urlencoded_pairs(query.unwrap_or_default()) {
        match name.as_str() {
            "scope" => scope = value,
            "since" => since = Some(value),
            _ => {}
        }
    }
    let unprocessable = StatusCode::UNPROCESSABLE_ENTITY;
    match scope.as_str() {
        "FULL" => Ok(Scope::Full),
        "DNA_ONLY" => Ok(Scope::DnaOnly),
        "SINCE" => {
            let since = since
                .ok_or_else(|| ProblemResponse::new(unprocessable, "since_required", "scope=SINCE needs `since`, an ISO-8601 time"))?;
            let micros = parse_rfc3339(&since)
                .or_else(|| parse_rfc3339(&format!("{since}T00:00:00Z")))
                .ok_or_else(|| ProblemResponse::new(unprocessable, "bad_since", format!("`since` is not an ISO-8601 time: {since:?}")))?;
            Ok(Scope::Since(micros))
        }
        other => Err(ProblemResponse::new(unprocessable, "bad_scope", format!("`scope` is FULL, DNA_ONLY or SINCE, not {other:?}"))),
    }
}

/// `name=value` pairs of a query string, percent-decoded (`+` is a space).
fn form_urlencoded_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |text: &str| {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut index = 0;
        while index < bytes.len() {
            match bytes[index] {
                b'+' => out.push(b' '),
                b'%' if index + 2 < bytes.len() => {
                    match std::str::from_utf8(&bytes[index + 1..index + 3]).ok().and_then(|hex| u8::from_str_radix(hex, 16).ok()) {
                        Some(byte) => {
                            out.push(byte);
                            index += 2;
                        }
                        None => out.push(b'%'),
                    }
                }
                byte => out.push(byte),
            }
            index += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(name), decode(value))
        })
        .collect()
}

async fn export(shared: Shared, headers: HeaderMap, query: Option<String>, ndjson: bool) -> Result<Response, ProblemResponse> {
    let grant = authorize(&shared, &headers, &[Verb::Export])?;
    let scope = scope_of(query.as_deref())?;
    let agent = grant.scope.agent.clone();
    // Whole seconds, like the command line's export time.
    let exported_at = now_micros() / 1_000_000 * 1_000_000;
    let threads = shared.conversion_threads;
    let bundle = with_store(&shared, false, move |store| {
        brain::export(store, scope, agent, ndjson, exported_at, threads).map_err(|error| Failure::internal(error.to_string()))
    })
    .await?;
    let media_type = if ndjson { "application/x-ndjson" } else { BUNDLE_MEDIA_TYPE };
    let length = bundle.bytes;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, media_type.to_owned()), (header::CONTENT_LENGTH, length.to_string())],
        Body::from_stream(super::bundle_body::bundle_body(bundle.path.clone(), bundle)),
    )
        .into_response())
}

pub(super) async fn export_bundle(State(shared): State<Shared>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    export(shared, headers, query, false).await.unwrap_or_else(IntoResponse::into_response)
}

pub(super) async fn export_stream(State(shared): State<Shared>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    export(shared, headers, query, true).await.unwrap_or_else(IntoResponse::into_response)
}

pub(super) async fn import(State(shared): State<Shared>, headers: HeaderMap, body: Body) -> Response {
    import_body(shared, headers, body).await.unwrap_or_else(IntoResponse::into_response)
}

async fn import_body(shared: Shared, headers: HeaderMap, body: Body) -> Result<Response, ProblemResponse> {
    let grant = authorize(&shared, &headers, &[Verb::Write])?;
    if grant.scope.agent.is_some() {
        return Err(ProblemResponse::new(
            StatusCode::FORBIDDEN,
            "forbidden_scope",
            "an import is the owner's: it needs a token for the whole store",
        ));
    }
    if !shared.writable {
        return Err(ProblemResponse::new(StatusCode::FORBIDDEN, "unsupported", "this server was started read-only (--read-only)"));
    }
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|value| value.to_str().ok()).and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > shared.max_import) {
        return Err(too_large(shared.max_import));
    }
    let spooled = spool(&shared, body).await?;
    let _converting = shared.importing.acquire().await;
    let (owner, threads) = (shared.owner.clone(), shared.conversion_threads);
    let prepared = tokio::task::spawn_blocking(move || {
        let prepared = brain::prepare_import(spooled.path(), &owner, threads);
        drop(spooled);
        prepared
    })
    .await
    .map_err(|error| ProblemResponse::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", error.to_string()))??;
    let summary = with_store(&shared, true, move |store| {
        let summary = brain::load(store, &prepared).map_err(|error| Failure::internal(error.to_string()))?;
        serde_json::to_value(summary).map_err(|error| Failure::internal(error.to_string()))
    })
    .await?;
    Ok((StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], summary.to_string()).into_response())
}

/// Writes the request body to a temporary file: 413 past the import limit, 408 when it comes
/// slower than [`MIN_UPLOAD_RATE`] once the request timeout has passed.
async fn spool(shared: &Shared, body: Body) -> Result<tempfile::NamedTempFile, ProblemResponse> {
    let internal =
        |error: std::io::Error| ProblemResponse::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", format!("spooling the body: {error}"));
    let mut file = tempfile::Builder::new().prefix("memport-upload-").suffix(".aimem").tempfile().map_err(internal)?;
    let started = Instant::now();
    let mut received: u64 = 0;
    let mut chunks = body.into_data_stream();
    loop {
        let allowed = shared.timeout + std::time::Duration::from_secs_f64(received as f64 / MIN_UPLOAD_RATE as f64);
        let Some(remaining) = allowed.checked_sub(started.elapsed()) else {
            return Err(too_slow());
        };
        let chunk = match tokio::time::timeout(remaining, chunks.next()).await {
            Err(_) => return Err(too_slow()),
            Ok(None) => break,
            Ok(Some(Err(error))) => {
                return Err(ProblemResponse::new(StatusCode::BAD_REQUEST, "bad_body", format!("reading the body: {error}")));
            }
            Ok(Some(Ok(chunk))) => chunk,
        };
        received += chunk.len() as u64;
        if received > shared.max_import {
            return Err(too_large(shared.max_import));
        }
        tokio::task::block_in_place(|| file.write_all(&chunk)).map_err(internal)?;
    }
    tokio::task::block_in_place(|| file.flush()).map_err(internal)?;
    if received == 0 {
        return Err(ProblemResponse::new(StatusCode::UNPROCESSABLE_ENTITY, "empty_body", "the request has no body: POST an AIMEM bundle"));
    }
    Ok(file)
}

fn too_large(limit: u64) -> ProblemResponse {
    ProblemResponse::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!("the bundle is over this server's import limit of {limit} bytes (memport serve --max-import)"),
    )
}

fn too_slow() -> ProblemResponse {
    ProblemResponse::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", "the body came too slowly; send it again")
}
