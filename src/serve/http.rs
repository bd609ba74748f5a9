//! UMP's HTTP binding (§4.2) on one listener, with axum:
//!
//! ```text
//! GET  /ump/capabilities        no token needed: discovery, no memory
//! POST /ump/recall              read
//! GET  /ump/memory/{id}         read
//! POST /ump/remember            write (or derive)
//! POST /ump/revise              write
//! POST /ump/forget              write; `hard: true` only with a token for the whole store
//! ANY  /mcp                     read (write for the writing tools): the same operations as
//!                               MCP tools over MCP's streamable HTTP transport
//! ```
//!
//! Every other call needs `Authorization: Bearer <capability token>` ([`super::token`]): none or
//! a bad one is 401 `unauthorized`, a verb or a record the token does not grant 403
//! `forbidden_scope`. Bodies are JSON, at most [`MAX_BODY`] bytes (413 beyond); a request that
//! takes longer than the request timeout in all ([`DEFAULT_REQUEST_TIMEOUT`] unless told), a
//! slow client's included, is answered 408.
//! Errors carry UMP's envelope `{"error": {"code", "message"}}`. Tokens are never logged: the
//! server logs nothing but its address.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::brain_routes;
use super::now_micros;
use super::operations::{self, ForgetRequest, GetRequest, RecallRequest, RememberRequest, ReviseRequest, UmpError};
use super::token::{Grant, Verb, verify};
use crate::store::Store;

/// The largest request body.
pub const MAX_BODY: usize = 1 << 20;
/// The longest a request may take, reading its body included, unless told otherwise.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest bundle an import takes unless told otherwise: 4 GiB.
pub const DEFAULT_MAX_IMPORT: u64 = 4 << 30;

/// What every handler shares.
#[derive(Clone)]
pub(super) struct Shared {
    /// The connection that writes.
    store: Arc<Mutex<Store>>,
    /// Read-only connections, so recalls run side by side (SQLite has many readers).
    readers: Arc<Vec<Mutex<Store>>>,
    next_reader: Arc<std::sync::atomic::AtomicUsize>,
    /// As many requests at the store at once as there are connections: the rest wait here,
    /// not in blocking threads of their own.
    at_the_store: Arc<tokio::sync::Semaphore>,
    /// The `did:key` tokens must be signed with.
    owner_key: String,
    /// The store's owner, who owns what an import brings.
    pub(super) owner: String,
    pub(super) writable: bool,
    /// The request timeout: an import's body gets it as grace before its rate is checked.
    pub(super) timeout: Duration,
    /// The largest bundle an import takes.
    pub(super) max_import: u64,
    /// Imports converting at once: the rest wait, so many imports do not crowd the memory.
    pub(super) importing: Arc<tokio::sync::Semaphore>,
    /// Worker threads of each export's or import's conversion.
    pub(super) conversion_threads: usize,
    /// How long a write may wait for the store (another writer, a run loading into it).
    write_wait: Duration,
    /// UMP's tools over MCP's streamable HTTP transport, for a token that grants writing, and
    /// for one that grants reading only.
    mcp: Option<Arc<(super::mcp::McpOverHttp, super::mcp::McpOverHttp)>>,
}

/// How much a client may ask of the server.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The longest a UMP request may take, reading its body included (408 beyond).
    pub request_timeout: Duration,
    /// The largest bundle `POST /v1/brain/import` takes (413 beyond).
    pub max_import: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { request_timeout: DEFAULT_REQUEST_TIMEOUT, max_import: DEFAULT_MAX_IMPORT }
    }
}

/// An error as an HTTP response with UMP's envelope.
pub(super) struct Failure(pub(super) StatusCode, pub(super) UmpError);

impl Failure {
    /// A failure of the server's own (500).
    pub(super) fn internal(message: impl Into<String>) -> Failure {
        Failure(StatusCode::INTERNAL_SERVER_ERROR, UmpError::new("internal", message))
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let mut response = (self.0, [(header::CONTENT_TYPE, "application/json")], self.1.envelope().to_string()).into_response();
        if self.0 == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        }
        if self.0 == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from_static("30"));
        }
        response
    }
}

impl From<crate::store::StoreError> for Failure {
    fn from(error: crate::store::StoreError) -> Failure {
        Failure::from(UmpError::from(error))
    }
}

impl From<UmpError> for Failure {
    fn from(error: UmpError) -> Failure {
        let status = match error.code {
            "not_found" => StatusCode::NOT_FOUND,
            "invalid_record" => StatusCode::BAD_REQUEST,
            "unauthorized" => StatusCode::UNAUTHORIZED,
            "forbidden_scope" => StatusCode::FORBIDDEN,
            "unsupported" => StatusCode::NOT_IMPLEMENTED,
            // The store is held by a run loading into it: nothing was done, try again later.
            "rate_limited" => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Failure(status, error)
    }
}

fn forbidden(message: impl Into<String>) -> Failure {
    Failure(StatusCode::FORBIDDEN, UmpError::new("forbidden_scope", message))
}

/// The grant of the request's bearer token, which must allow one of `verbs`.
pub(super) fn authorize(shared: &Shared, headers: &HeaderMap, verbs: &[Verb]) -> Result<Grant, Failure> {
    let unauthorized = |message: String| Failure(StatusCode::UNAUTHORIZED, UmpError::new("unauthorized", message));
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        // The scheme is case-insensitive (RFC 9110 §11.1).
        .and_then(|value| value.split_once(' ').filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer")).map(|(_, token)| token))
        .ok_or_else(|| unauthorized("send a capability token as `Authorization: Bearer <token>` (memport token issue)".into()))?;
    let grant = verify(token.trim(), &shared.owner_key, now_micros() / 1_000_000).map_err(|error| unauthorized(error.to_string()))?;
    if !verbs.iter().any(|verb| grant.allows(*verb)) {
        return Err(forbidden(format!(
            "the token does not grant {}",
            verbs.iter().map(|verb| format!("{verb:?}").to_lowercase()).collect::<Vec<_>>().join(" or ")
        )));
    }
    Ok(grant)
}

/// The JSON body as `T`: 413 past the limit, 400 `invalid_record` when it is not the shape.
fn body<T: DeserializeOwned>(bytes: Result<Bytes, BytesRejection>) -> Result<T, Failure> {
    let bytes = bytes.map_err(|rejection| Failure(rejection.status(), UmpError::new("invalid_record", rejection.body_text())))?;
    serde_json::from_slice(&bytes)
        .map_err(|error| Failure(StatusCode::BAD_REQUEST, UmpError::new("invalid_record", format!("the body: {error}"))))
}

/// Runs `work` on the store on a blocking thread, in one transaction when it writes.
pub(super) async fn with_store<T: Send + 'static>(
    shared: &Shared,
    writes: bool,
    work: impl FnOnce(&Store) -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    if writes && !shared.writable {
        return Err(Failure(StatusCode::FORBIDDEN, UmpError::new("unsupported", "this server was started read-only (--read-only)")));
    }
    // A write is refused (503) once it has waited `write_wait` in all, queued behind other
    // writes included, so the answer comes before the request times out (408) and says it was
    // not made.
    let asked = std::time::Instant::now();
    let write_wait = shared.write_wait;
    let _permit = shared.at_the_store.acquire().await;
    let (store, readers) = (shared.store.clone(), shared.readers.clone());
    let reader = shared.next_reader.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let joined = tokio::task::spawn_blocking(move || {
        // Each connection first follows the store's path to a new file a run moved there.
        if !writes && !readers.is_empty() {
            let mut store = readers[reader % readers.len()].lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            store.follow_file()?;
            return work(&store);
        }
        let mut store = store.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        store.follow_file()?;
        if !writes {
            return work(&store);
        }
        let left = write_wait.saturating_sub(asked.elapsed());
        if left.is_zero() {
            return Err(Failure::from(crate::store::StoreError::Busy));
        }
        store.set_busy_timeout(left);
        store.in_transaction(work)
    })
    .await;
    joined.unwrap_or_else(|error| Err(Failure(StatusCode::INTERNAL_SERVER_ERROR, UmpError::new("unsupported", error.to_string()))))
}

/// A record's agent, when the record exists.
fn agent_of(store: &Store, id: &str) -> Result<Option<String>, Failure> {
    let record = store.get(id).map_err(|error| Failure::from(UmpError::from(error)))?;
    let record = record.ok_or_else(|| Failure::from(UmpError::new("not_found", format!("no record has the id `{id}`"))))?;
    Ok(record["scope"]["agent"].as_str().map(str::to_owned))
}

fn json(value: Value) -> Response {
    (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

async fn capabilities(State(shared): State<Shared>) -> Response {
    json(operations::capabilities(shared.writable, &["mcp", "http", "file"]))
}

async fn recall(State(shared): State<Shared>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Result<Response, Failure> {
    let grant = authorize(&shared, &headers, &[Verb::Read])?;
    let request: RecallRequest = body(bytes)?;
    let only_agent = grant.scope.agent.clone();
    let value =
        with_store(&shared, false, move |store| Ok(operations::recall(store, &request, now_micros(), only_agent.as_deref())?)).await?;
    Ok(json(value))
}

async fn get_record(State(shared): State<Shared>, headers: HeaderMap, Path(id): Path<String>) -> Result<Response, Failure> {
    let grant = authorize(&shared, &headers, &[Verb::Read])?;
    let value = with_store(&shared, false, move |store| {
        if !grant.reaches(agent_of(store, &id)?.as_deref()) {
            return Err(forbidden(format!("the token does not reach the record `{id}`")));
        }
        Ok(operations::get(store, &GetRequest { id })?)
    })
    .await?;
    Ok(json(value))
}

async fn remember(State(shared): State<Shared>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Result<Response, Failure> {
    let grant = authorize(&shared, &headers, &[Verb::Write, Verb::Derive])?;
    let request: RememberRequest = body(bytes)?;
    if !grant.reaches(request.record["scope"]["agent"].as_str()) {
        return Err(forbidden("the token reaches only its agent's records: give the record that `scope.agent`"));
    }
    let method = if grant.allows(Verb::Write) { "http:ump.remember" } else { "http:ump.remember (derived)" };
    let value = with_store(&shared, true, move |store| Ok(operations::remember(store, &request, now_micros(), method)?)).await?;
    Ok(json(value))
}

async fn revise(State(shared): State<Shared>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Result<Response, Failure> {
    let grant = authorize(&shared, &headers, &[Verb::Write])?;
    let request: ReviseRequest = body(bytes)?;
    let value = with_store(&shared, true, move |store| {
        if !grant.reaches(agent_of(store, &request.id)?.as_deref()) {
            return Err(forbidden(format!("the token does not reach the record `{}`", request.id)));
        }
        Ok(operations::revise(store, &request, now_micros())?)
    })
    .await?;
    Ok(json(value))
}

async fn forget(State(shared): State<Shared>, headers: HeaderMap, bytes: Result<Bytes, BytesRejection>) -> Result<Response, Failure> {
    let grant = authorize(&shared, &headers, &[Verb::Write])?;
    let request: ForgetRequest = body(bytes)?;
    if request.hard == Some(true) && grant.scope.agent.is_some() {
        return Err(forbidden("erasing (hard: true) is the owner's: it needs a token for the whole store"));
    }
    let value = with_store(&shared, true, move |store| {
        if !grant.reaches(agent_of(store, &request.id)?.as_deref()) {
            return Err(forbidden(format!("the token does not reach the record `{}`", request.id)));
        }
        Ok(operations::forget(store, &request, now_micros())?)
    })
    .await?;
    Ok(json(value))
}

/// The server's connections to its store file.
pub struct Connections {
    /// The connection that writes (UMP's binding and imports).
    pub writer: Store,
    /// Read-only connections, for reads side by side.
    pub readers: Vec<Store>,
    /// A connection for the MCP tools at `/mcp`; without it `/mcp` is 404.
    pub mcp: Option<Store>,
}

/// The routes over the store's `connections`, checking tokens against `owner_key`, within
/// `limits`: UMP's binding, each request cut at the request timeout; the MCP tools over
/// streamable HTTP; and AIMEM's HTTP profile, whose bodies are bounded by size and rate instead
/// ([`super::brain_routes`]).
pub fn router(connections: Connections, owner_key: String, writable: bool, limits: Limits) -> Router {
    let Connections { writer: store, readers, mcp: mut mcp_store } = connections;
    // A write that waits for a run loading into the store is refused (503) before the
    // request times out (408), so the client knows it was not made. An MCP tool call waits
    // on a thread of the server's runtime, which other requests need: a second at most.
    let write_wait = limits.request_timeout / 2;
    if let Some(mcp_store) = mcp_store.as_mut() {
        mcp_store.set_busy_timeout(write_wait.min(Duration::from_secs(1)));
    }
    let at_the_store = Arc::new(tokio::sync::Semaphore::new(readers.len() + 1));
    let readers = Arc::new(readers.into_iter().map(Mutex::new).collect());
    let owner = store.owner().to_owned();
    let shared = Shared {
        store: Arc::new(Mutex::new(store)),
        readers,
        next_reader: Arc::default(),
        at_the_store,
        owner_key,
        owner,
        writable,
        timeout: limits.request_timeout,
        max_import: limits.max_import,
        importing: Arc::new(tokio::sync::Semaphore::new(1)),
        conversion_threads: crate::pipeline::default_threads(),
        write_wait,
        mcp: mcp_store.map(|store| {
            let tools = super::mcp::UmpTools::new(store, writable);
            Arc::new((super::mcp::streamable_http(tools.clone()), super::mcp::streamable_http(tools.read_only())))
        }),
    };
    let ump = Router::new()
        .route("/ump/capabilities", get(capabilities))
        .route("/ump/recall", post(recall))
        .route("/ump/memory/{id}", get(get_record))
        .route("/ump/remember", post(remember))
        .route("/ump/revise", post(revise))
        .route("/ump/forget", post(forget))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, limits.request_timeout));
    let brain = Router::new()
        .route("/v1/brain/export", get(brain_routes::export_bundle))
        .route("/v1/brain/export/stream", get(brain_routes::export_stream))
        .route("/v1/brain/import", post(brain_routes::import))
        .layer(DefaultBodyLimit::disable());
    let mcp = Router::new().route("/mcp", axum::routing::any(mcp_over_http));
    ump.merge(brain).merge(mcp).with_state(shared)
}

/// `/mcp`: MCP's streamable HTTP transport, for a token of the whole store that grants `read`
/// (and `write` for the writing tools). Sessions last as long as the client keeps them.
async fn mcp_over_http(State(shared): State<Shared>, request: axum::extract::Request) -> Result<Response, Failure> {
    let Some(services) = shared.mcp.clone() else {
        return Err(Failure(StatusCode::NOT_FOUND, UmpError::new("not_found", "this server does not serve MCP over HTTP")));
    };
    let grant = authorize(&shared, request.headers(), &[Verb::Read])?;
    if grant.scope.agent.is_some() {
        return Err(forbidden("MCP over HTTP needs a token for the whole store"));
    }
    let service = if grant.allows(Verb::Write) { &services.0 } else { &services.1 };
    Ok(service.handle(request).await.into_response())
}

/// Serves the routes on `address` until the process is stopped; calls `ready` with the
/// address bound (port 0 picks a free one).
///
/// # Errors
/// Binding or serving fails.
pub async fn serve(
    connections: Connections,
    owner_key: String,
    writable: bool,
    address: SocketAddr,
    limits: Limits,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(address).await?;
    ready(listener.local_addr()?);
    // Stopped by Ctrl-C or SIGTERM, it finishes what it is answering first (for up to
    // STOP_GRACE: an MCP client may hold a stream open for ever), so no import is cut and every
    // temporary file is removed.
    let (stopping, mut stopped) = tokio::sync::watch::channel(false);
    let serving = axum::serve(listener, router(connections, owner_key, writable, limits)).with_graceful_shutdown(async move {
        stop_signal().await;
        let _ = stopping.send(true);
    });
    tokio::select! {
        served = serving => served,
        _ = async move {
            let _ = stopped.wait_for(|stopped| *stopped).await;
            tokio::time::sleep(STOP_GRACE).await;
        } => Ok(()),
    }
}

/// How long a stopping server lets requests in flight finish.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Ctrl-C or SIGTERM.
async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = interrupt => {}
                _ = terminate.recv() => {}
            }
        }
        Err(_) => {
            let _ = interrupt.await;
        }
    }
}
