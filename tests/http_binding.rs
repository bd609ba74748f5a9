//! `memport serve --listen`: UMP's HTTP binding as a client on loopback sees it, through plain
//! HTTP/1.1 on a socket. The operations answer UMP's shapes; and the refusals: no token, a
//! token of another key, an expired token, a verb or an agent the token does not grant, a
//! malformed and an oversized body, a client sending one byte a second, each with its status,
//! UMP's error envelope, and the store unchanged.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use memport::serve::token::{Grant, TokenScope, Verb, issue};
use memport::signing::SignKey;
use memport::sinks::OutputFormat;
use memport::store::Store;
use serde_json::{Value, json};

use crate::util::{convert_all_branches as convert, examples};

pub(crate) const OWNER_SEED: [u8; 32] = [7; 32];

/// A server on a free loopback port over a store made from the bundled examples.
pub(crate) struct Server {
    child: Child,
    pub(crate) port: u16,
    pub(crate) store: PathBuf,
    pub(crate) folder: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn memport() -> Command {
    Command::new(env!("CARGO_BIN_EXE_memport"))
}

pub(crate) fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// A token of the owner key (issued by the library, so expiry can lie in the past).
pub(crate) fn token(verbs: &[Verb], agent: Option<&str>, expires_in: i64) -> String {
    let key = SignKey::from_seed(&OWNER_SEED);
    let grant = Grant {
        iss: key.did_key(),
        verbs: verbs.to_vec(),
        scope: TokenScope { agent: agent.map(str::to_owned) },
        iat: now() - 10,
        exp: now() + expires_in,
    };
    issue(&grant, &key)
}

fn start() -> Server {
    start_over(&examples(), &["--request-timeout", "2"])
}

/// A server over a store made from `inputs`, started with `options` beside `--listen`.
pub(crate) fn start_over(inputs: &[PathBuf], options: &[&str]) -> Server {
    let folder = tempfile::tempdir().unwrap();
    convert(inputs, folder.path(), &[OutputFormat::Store], 2);
    let store = folder.path().join("memory.db");
    start_at(store, folder, options)
}

/// A server over the store at `store` (a file, or a PostgreSQL URL), started with `options`
/// beside `--listen`, after its owner issued the first token.
pub(crate) fn start_at(store: PathBuf, folder: tempfile::TempDir, options: &[&str]) -> Server {
    let key = folder.path().join("owner.key");
    std::fs::write(&key, OWNER_SEED.iter().map(|byte| format!("{byte:02x}")).collect::<String>()).unwrap();
    // The first token names the owner key in the store, as a user does it.
    let issued =
        memport().args(["token", "issue"]).arg(&store).arg("--key").arg(&key).args(["--verbs", "read", "--ttl", "1h"]).output().unwrap();
    assert!(issued.status.success(), "{}", String::from_utf8_lossy(&issued.stderr));
    assert!(String::from_utf8_lossy(&issued.stdout).starts_with("ump-cap."));
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = memport()
        .arg("serve")
        .arg(&store)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(options)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "the server listens");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server { child, port, store, folder }
}

/// Sends one request and returns the status and the body as JSON (null when not JSON).
pub(crate) fn request(server: &Server, method: &str, path: &str, token: Option<&str>, body: &[u8]) -> (u16, Value) {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let auth = token.map(|token| format!("Authorization: Bearer {token}\r\n")).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    read_response(stream)
}

pub(crate) fn read_response(mut stream: TcpStream) -> (u16, Value) {
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    let status = text.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, body)| body).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn post(server: &Server, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
    request(server, "POST", path, token, body.to_string().as_bytes())
}

/// POSTs `sent` to `path` one byte a second, announcing `length` bytes, and returns the
/// status the server answers (a client too slow for it).
pub(crate) fn send_slowly(server: &Server, path: &str, token: &str, length: usize, sent: &[u8]) -> u16 {
    let mut slow = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    );
    slow.write_all(head.as_bytes()).unwrap();
    for byte in sent {
        if slow.write_all(&[*byte]).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    read_response(slow).0
}

pub(crate) fn record_count(store: &Path) -> (u64, u64) {
    Store::open(store, false).unwrap().counts().unwrap()
}

#[test]
fn a_client_recalls_remembers_revises_and_forgets_with_a_token_that_grants_it() {
    let server = start();
    let (status, capabilities) = request(&server, "GET", "/ump/capabilities", None, b"");
    assert_eq!((status, capabilities["ump"].as_str()), (200, Some("0.1")), "{capabilities}");
    let (reader, writer) = (token(&[Verb::Read], None, 3600), token(&[Verb::Read, Verb::Write], None, 3600));

    let (status, recalled) = post(&server, "/ump/recall", Some(&reader), &json!({"query": "where does the user live", "limit": 3}));
    assert_eq!(status, 200, "{recalled}");
    assert_eq!(recalled["results"][0]["record"]["body"]["text"], "Lives in York");
    assert!(recalled["results"][0]["signals"]["similarity"].is_f64());

    let (status, remembered) =
        post(&server, "/ump/remember", Some(&writer), &json!({"record": {"kind": "semantic", "body": {"text": "Prefers window seats"}}}));
    assert_eq!((status, remembered["result"].as_str()), (200, Some("created")), "{remembered}");
    let id = remembered["id"].as_str().unwrap().to_owned();
    let (status, got) = request(&server, "GET", &format!("/ump/memory/{id}"), Some(&reader), b"");
    assert_eq!((status, got["record"]["body"]["text"].as_str()), (200, Some("Prefers window seats")));
    let (status, revised) =
        post(&server, "/ump/revise", Some(&writer), &json!({"id": id, "patch": {"body": {"text": "Prefers aisle seats"}}}));
    assert_eq!((status, &revised["supersedes"]), (200, &json!([id])), "{revised}");
    let (status, forgotten) = post(&server, "/ump/forget", Some(&writer), &json!({"id": id, "hard": true, "reason": "test"}));
    assert_eq!((status, forgotten), (200, json!({"result": "erased"})));
    let (status, missing) = request(&server, "GET", &format!("/ump/memory/{id}"), Some(&reader), b"");
    assert_eq!((status, missing["error"]["code"].as_str()), (404, Some("not_found")));
}

/// Guards against a server that kept its connections on the store file a later run replaced:
/// it never served what the run loaded, and what it was told to write went into the replaced
/// file and was lost.
#[test]
fn a_running_server_serves_and_writes_the_store_a_later_run_loaded_into_place() {
    let chatgpt = examples()[0].clone();
    let server = start_over(std::slice::from_ref(&chatgpt), &["--request-timeout", "2"]);
    let (reader, writer) = (token(&[Verb::Read], None, 3600), token(&[Verb::Read, Verb::Write], None, 3600));
    // Words of the Claude example's first request, which the ChatGPT example does not hold.
    let query = json!({"query": "indexs CSV", "limit": 3});
    let (status, before) = post(&server, "/ump/recall", Some(&reader), &query);
    assert_eq!((status, before["results"].as_array().map(Vec::len)), (200, Some(0)), "{before}");

    let claude = examples()[1].clone();
    let loaded = memport().arg("convert").arg(&claude).args(["--to", "store", "-o"]).arg(&server.store).arg("-q").output().unwrap();
    assert!(loaded.status.success(), "{}", String::from_utf8_lossy(&loaded.stderr));
    // Recall answers at once from the replaced file's index while the new file's is built in
    // the background, then finds what the run loaded.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (status, after) = post(&server, "/ump/recall", Some(&reader), &query);
        assert_eq!(status, 200, "{after}");
        if !after["results"].as_array().unwrap().is_empty() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the server reads the store the run moved into place: {after}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    let remember = json!({"record": {"kind": "semantic", "body": {"text": "Keeps bees on the roof"}}});
    let (status, remembered) = post(&server, "/ump/remember", Some(&writer), &remember);
    assert_eq!(status, 200, "{remembered}");
    let id = remembered["id"].as_str().unwrap();
    assert!(Store::open(&server.store, false).unwrap().get(id).unwrap().is_some(), "written into the store in place");

    // While a run holds the store (from its copy until its copy is in place), a write is
    // refused in time and said so, and nothing is written.
    let counts = record_count(&server.store);
    let hold = memport::store::WriteHold::take(&server.store).unwrap().expect("a writable store is held");
    let other = json!({"record": {"kind": "semantic", "body": {"text": "Grows tomatoes"}}});
    let (status, refused) = post(&server, "/ump/remember", Some(&writer), &other);
    assert_eq!((status, refused["error"]["code"].as_str()), (503, Some("rate_limited")), "{refused}");
    assert_eq!(record_count(&server.store), counts);
    drop(hold);
    let (status, remembered) = post(&server, "/ump/remember", Some(&writer), &other);
    assert_eq!((status, remembered["result"].as_str()), (200, Some("created")), "{remembered}");
}

#[test]
fn every_refusal_has_its_status_and_envelope_and_changes_nothing() {
    let server = start();
    let before = record_count(&server.store);
    let remember = json!({"record": {"kind": "semantic", "body": {"text": "Should never be stored"}}});
    let stranger = {
        let key = SignKey::from_seed(&[9; 32]);
        let grant = Grant {
            iss: SignKey::from_seed(&OWNER_SEED).did_key(),
            verbs: vec![Verb::Write],
            scope: TokenScope::default(),
            iat: now(),
            exp: now() + 3600,
        };
        issue(&grant, &key)
    };
    let cases: [(&str, Option<String>, u16, &str); 5] = [
        ("no token", None, 401, "unauthorized"),
        ("a token signed by another key", Some(stranger), 401, "unauthorized"),
        ("an expired token", Some(token(&[Verb::Write], None, -60)), 401, "unauthorized"),
        ("a read-only token", Some(token(&[Verb::Read], None, 3600)), 403, "forbidden_scope"),
        ("a token for another agent", Some(token(&[Verb::Write], Some("claude"), 3600)), 403, "forbidden_scope"),
    ];
    for (what, token, status, code) in cases {
        let (got, body) = post(&server, "/ump/remember", token.as_deref(), &remember);
        assert_eq!((got, body["error"]["code"].as_str()), (status, Some(code)), "{what}: {body}");
    }
    let writer = token(&[Verb::Read, Verb::Write], None, 3600);
    let (status, body) = request(&server, "POST", "/ump/remember", Some(&writer), b"{\"record\": ");
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_record")), "a malformed body: {body}");
    let (status, body) = request(&server, "POST", "/ump/remember", Some(&writer), &vec![b' '; 2 << 20]);
    assert_eq!(status, 413, "an oversized body: {body}");

    // A scoped token sees only its agent's records, and may not erase.
    let claude_reader = token(&[Verb::Read, Verb::Write], Some("claude"), 3600);
    let (status, recalled) = post(&server, "/ump/recall", Some(&claude_reader), &json!({"query": "where does the user live"}));
    assert_eq!(status, 200);
    assert!(recalled["results"].as_array().unwrap().iter().all(|result| result["record"]["scope"]["agent"] == "claude"), "{recalled}");
    let york = post(&server, "/ump/recall", Some(&writer), &json!({"query": "York", "limit": 1})).1["results"][0]["record"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _) = request(&server, "GET", &format!("/ump/memory/{york}"), Some(&claude_reader), b"");
    assert_eq!(status, 403, "a record of another agent");
    let (status, _) = post(&server, "/ump/forget", Some(&claude_reader), &json!({"id": york, "hard": true}));
    assert_eq!(status, 403, "erasing needs a token for the whole store");

    // A client sending one byte a second is cut off.
    let started = Instant::now();
    let status = send_slowly(&server, "/ump/remember", &writer, 200, &remember.to_string().into_bytes()[..6]);
    assert_eq!(status, 408, "a slow client gets 408");
    assert!(started.elapsed() < Duration::from_secs(8), "within the request timeout, not when the client is done");

    assert_eq!(record_count(&server.store), before, "no refused request changed the store");
}
