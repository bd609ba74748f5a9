//! A client of AIMEM's HTTP profile, for any server that speaks it (`memport serve`, the AIMEM
//! reference): `push` sends a bundle to `POST {base}/import`, `pull` fetches
//! `GET {base}/export` (or `/export/stream`) into a file. Bodies stream from and to files,
//! never held whole; transient failures (no connection, 408, 429, 5xx) are retried with
//! backoff; the server's problem details are shown to the user.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::Value;

use crate::remote::client::wait;

/// How long a file stream waits for its consumer to take a block before it stops.
const STALLED: Duration = Duration::from_secs(120);
/// Attempts per request.
const ATTEMPTS: u32 = 5;
/// The first wait before a retry; each later one doubles.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait a server's `Retry-After` may ask for.
const LONGEST_BACKOFF: Duration = Duration::from_secs(30);

/// A request to an AIMEM server that failed (after its retries).
#[derive(Debug, thiserror::Error)]
pub enum BrainClientError {
    /// No answer: the server could not be reached, or the connection broke.
    #[error("{url}: {reason}")]
    Unreachable {
        /// The request's URL.
        url: String,
        /// What went wrong and what to do.
        reason: String,
    },
    /// The server answered with an error.
    #[error("{url}: the server answered {status}: {detail}")]
    Refused {
        /// The request's URL.
        url: String,
        /// Its HTTP status.
        status: u16,
        /// The problem details (RFC 7807 `title` and `detail`), or the body's start.
        detail: String,
    },
    /// A local file failed.
    #[error("{path}: {error}")]
    File {
        /// The file.
        path: String,
        /// What failed.
        error: std::io::Error,
    },
}

/// An AIMEM server: its profile's base URL (`https://host/v1/brain`) and a bearer token.
#[derive(Clone)]
pub struct BrainServer {
    base: String,
    token: String,
}

impl std::fmt::Debug for BrainServer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        formatter.debug_struct("BrainServer").field("base", &self.base).finish_non_exhaustive()
    }
}

impl BrainServer {
    /// The server at `base` (with or without `/v1/brain`; a trailing slash is dropped).
    pub fn new(base: &str, token: &str) -> BrainServer {
        let base = base.trim_end_matches('/');
        let base = if base.ends_with("/v1/brain") { base.to_owned() } else { format!("{base}/v1/brain") };
        BrainServer { base, token: token.trim().to_owned() }
    }

    /// Sends the bundle file at `bundle` to the server's import, and returns the server's
    /// summary (its JSON answer).
    ///
    /// # Errors
    /// [`BrainClientError`]: the server unreachable after the retries, its error answer, the
    /// file unreadable.
    pub fn push(&self, bundle: &Path) -> Result<Value, BrainClientError> {
        let url = format!("{}/import", self.base);
        let length = std::fs::metadata(bundle).map_err(|error| file_error(bundle, error))?.len();
        wait(async {
            let client = client(&url)?;
            let response = with_retries(&url, || {
                let body = reqwest::Body::wrap_stream(file_chunks(bundle.to_owned()));
                client
                    .post(&url)
                    .bearer_auth(&self.token)
                    .header(reqwest::header::CONTENT_TYPE, "application/aimem-bundle+json")
                    .header(reqwest::header::CONTENT_LENGTH, length)
                    .body(body)
                    .send()
            })
            .await?;
            let text = response.text().await.map_err(|error| unreachable(&url, &error))?;
            Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)))
        })
    }

    /// Fetches an export (`scope` FULL, DNA_ONLY or SINCE with `since`; the NDJSON stream when
    /// `stream`) into the file `into`. Returns its size.
    ///
    /// # Errors
    /// As [`BrainServer::push`]; the file cannot be written.
    pub fn pull(&self, scope: &str, since: Option<&str>, stream: bool, into: &Path) -> Result<u64, BrainClientError> {
        let mut url = format!("{}/export{}?scope={scope}", self.base, if stream { "/stream" } else { "" });
        if let Some(since) = since {
            url.push_str("&since=");
            url.push_str(&since.replace('+', "%2B").replace(':', "%3A"));
        }
        wait(async {
            let client = client(&url)?;
            let response = with_retries(&url, || client.get(&url).bearer_auth(&self.token).send()).await?;
            let mut file = std::fs::File::create(into).map_err(|error| file_error(into, error))?;
            let mut written = 0;
            let mut body = response.bytes_stream();
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|error| unreachable(&url, &error))?;
                file.write_all(&chunk).map_err(|error| file_error(into, error))?;
                written += chunk.len() as u64;
            }
            file.sync_all().map_err(|error| file_error(into, error))?;
            Ok(written)
        })
    }
}

fn client(url: &str) -> Result<reqwest::Client, BrainClientError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        // A server that stops sending mid-answer (an import may convert for minutes before it
        // answers, so this is per read, not for the whole request).
        .read_timeout(Duration::from_secs(600))
        .build()
        .map_err(|error| BrainClientError::Unreachable { url: url.to_owned(), reason: format!("cannot make an HTTP client: {error}") })
}

/// Sends the request `send` makes until it gets an answer that is not transient, waiting
/// 1, 2, 4, 8 s (or what `Retry-After` asks, at most 30 s) between attempts.
async fn with_retries<F, Fut>(url: &str, mut send: F) -> Result<reqwest::Response, BrainClientError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = reqwest::Result<reqwest::Response>>,
{
    let mut backoff = FIRST_BACKOFF;
    for attempt in 1..=ATTEMPTS {
        let last = attempt == ATTEMPTS;
        match send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status();
                let transient = matches!(status.as_u16(), 408 | 429 | 500 | 502 | 503 | 504);
                if !transient || last {
                    let body = response.text().await.unwrap_or_default();
                    return Err(BrainClientError::Refused { url: url.to_owned(), status: status.as_u16(), detail: problem_detail(&body) });
                }
                let asked = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| value.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                tokio::time::sleep(asked.unwrap_or(backoff).min(LONGEST_BACKOFF)).await;
            }
            Err(error) if last => return Err(unreachable(url, &error)),
            Err(_) => tokio::time::sleep(backoff).await,
        }
        backoff *= 2;
    }
    unreachable!("the last attempt returns")
}

/// What a problem+json (or plain) error body says, for people.
fn problem_detail(body: &str) -> String {
    let Ok(problem) = serde_json::from_str::<Value>(body) else {
        return body.chars().take(500).collect();
    };
    let text = |name: &str| problem[name].as_str().map(str::to_owned);
    let mut said = match (text("title"), text("detail")) {
        (Some(title), Some(detail)) if !detail.contains(&title) => format!("{title}: {detail}"),
        (_, Some(detail)) => detail,
        (Some(title), None) => title,
        (None, None) => match &problem["detail"] {
            Value::Null => body.chars().take(500).collect(),
            other => other.to_string(),
        },
    };
    let listed = problem["problems"].as_array().map_or(0, Vec::len) as u64;
    let count = problem["problem_count"].as_u64().unwrap_or(listed);
    if count > 1 {
        said.push_str(&format!(" ({count} problems in all)"));
    }
    said
}

fn unreachable(url: &str, error: &reqwest::Error) -> BrainClientError {
    let reason = if error.is_connect() {
        format!("cannot connect ({error}); check the URL and that the server is running")
    } else if error.is_timeout() {
        format!("the server did not answer in time ({error})")
    } else {
        error.to_string()
    };
    BrainClientError::Unreachable { url: url.to_owned(), reason }
}

fn file_error(path: &Path, error: std::io::Error) -> BrainClientError {
    BrainClientError::File { path: path.display().to_string(), error }
}

/// The file at `path` in blocks of 256 KiB, read on a blocking thread a few blocks ahead of
/// the consumer.
fn file_chunks(path: std::path::PathBuf) -> impl futures_util::Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    let (sender, receiver) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(4);
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let mut file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(error) => {
                let _ = sender.blocking_send(Err(error));
                return;
            }
        };
        loop {
            let mut block = vec![0; 1 << 18];
            match file.read(&mut block) {
                Ok(0) => break,
                Ok(read) => {
                    block.truncate(read);
                    // A consumer that takes nothing for STALLED is gone: stop, freeing the thread.
                    let sent = runtime.block_on(tokio::time::timeout(STALLED, sender.send(Ok(Bytes::from(block)))));
                    if !matches!(sent, Ok(Ok(()))) {
                        break;
                    }
                }
                Err(error) => {
                    let _ = sender.blocking_send(Err(error));
                    break;
                }
            }
        }
    });
    futures_util::stream::unfold(receiver, |mut receiver| async move { receiver.recv().await.map(|item| (item, receiver)) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_url_takes_the_profile_path_once() {
        assert_eq!(BrainServer::new("http://127.0.0.1:9420", "t").base, "http://127.0.0.1:9420/v1/brain");
        assert_eq!(BrainServer::new("http://127.0.0.1:9420/v1/brain/", "t").base, "http://127.0.0.1:9420/v1/brain");
    }

    #[test]
    fn a_problem_says_its_title_and_detail() {
        let body = r#"{"type":"https://aimem.dev/errors/checksum_mismatch","title":"checksum_mismatch","status":409,"detail":"the checksum differs"}"#;
        assert_eq!(problem_detail(body), "checksum_mismatch: the checksum differs");
        assert_eq!(problem_detail(r#"{"detail":"Bearer token required"}"#), "Bearer token required");
        assert_eq!(problem_detail("Internal Server Error"), "Internal Server Error");
    }
}
