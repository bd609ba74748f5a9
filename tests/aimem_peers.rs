//! memport against another implementation of AIMEM's HTTP profile (`../shared/peers`, run by
//! scripts/test): the reference's black-box conformance runner passes against `memport serve`,
//! twice on one store (the second run re-imports every valid bundle); and `memport push` into
//! the reference server and `memport pull` back (its JSON export and its stream, whose chunk
//! ids keep memport's namespace under the server's own producer) give the same memories.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;

use memport::serve::token::Verb;
use memport::sinks::OutputFormat;
use serde_json::Value;

use crate::http_binding::{memport, start_over, token};
use crate::util::{convert_all_branches, examples, shared};

fn python() -> String {
    let python = std::env::var("MEMPORT_TEST_PYTHON").unwrap_or_default();
    assert!(
        std::path::Path::new(&python).is_file(),
        "MEMPORT_TEST_PYTHON ({python:?}) is not set; run the tests with scripts/test, which installs httpx for the runner"
    );
    python
}

#[test]
fn the_reference_conformance_runner_passes_against_memport_serve() {
    let claude: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("claude-small")).collect();
    let server = start_over(&claude, &[]);
    let writer = token(&[Verb::Write, Verb::Export], None, 3600);
    let runner = shared("peers/aimem-reference/tests/conformance/conformance.py");
    for run in ["first", "second"] {
        let output = Command::new(python())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .arg(&runner)
            .arg("run")
            .arg(format!("http://127.0.0.1:{}", server.port))
            .arg(&writer)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "the {run} run:\n{stdout}{}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains("Total: 28 passed, 0 failed"), "the {run} run:\n{stdout}");
    }
}

/// The reference server's address and admin secret, from scripts/test.
fn reference() -> (String, String) {
    let started = std::env::var("MEMPORT_TEST_AIMEM_REFERENCE").unwrap_or_default();
    let (url, secret) = started.split_once(' ').unwrap_or_else(|| {
        panic!("MEMPORT_TEST_AIMEM_REFERENCE ({started:?}) is not set; run the tests with scripts/test, which starts the reference server")
    });
    (url.to_owned(), secret.to_owned())
}

/// A new tenant on the reference server; its API key.
fn provision(url: &str, secret: &str) -> String {
    let address = url.trim_start_matches("http://");
    let body = br#"{"name":"memport-tests"}"#;
    let mut stream = TcpStream::connect(address).unwrap();
    let head = format!(
        "POST /v1/admin/provision HTTP/1.1\r\nHost: {address}\r\nX-Admin-Secret: {secret}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (_, json) = response.split_once("\r\n\r\n").unwrap();
    let provisioned: Value = serde_json::from_str(json).unwrap_or_else(|error| panic!("{error}: {response}"));
    provisioned["api_key"].as_str().unwrap().to_owned()
}

/// What a bundle holds, told apart from ids (a server keeps them under its own producer) and
/// order: each chunk as (content, memory type, tags), how many edges of each type, and each
/// chunk-entity link as (chunk content, entity name and kind).
#[derive(Debug, PartialEq)]
struct Held {
    chunks: std::collections::BTreeSet<(String, String, String)>,
    edges: std::collections::BTreeMap<String, usize>,
    links: std::collections::BTreeSet<(String, String, String)>,
}

fn memories(bundle: &std::path::Path) -> Held {
    let bundle: Value = serde_json::from_slice(&std::fs::read(bundle).unwrap()).unwrap();
    let chunks = bundle["chunks"].as_array().unwrap();
    let content: std::collections::HashMap<&str, &str> =
        chunks.iter().map(|chunk| (local(&chunk["id"]), chunk["content"].as_str().unwrap())).collect();
    let entities: std::collections::HashMap<&str, (String, String)> = bundle["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entity| (local(&entity["id"]), (entity["name"].to_string(), entity["kind"].to_string())))
        .collect();
    let mut edges = std::collections::BTreeMap::new();
    for edge in bundle["edges"].as_array().unwrap() {
        *edges.entry(edge["edge_type"].as_str().unwrap().to_owned()).or_insert(0) += 1;
    }
    Held {
        chunks: chunks
            .iter()
            .map(|chunk| (chunk["content"].as_str().unwrap().to_owned(), chunk["memory_type"].to_string(), chunk["tags"].to_string()))
            .collect(),
        edges,
        links: bundle["chunk_entities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|link| {
                let (name, kind) = entities[local(&link["entity_id"])].clone();
                (content[local(&link["chunk_id"])].to_owned(), name, kind)
            })
            .collect(),
    }
}

/// The local part of a URN (`urn:aimem:<producer>:<local>`).
fn local(urn: &Value) -> &str {
    urn.as_str().unwrap().splitn(4, ':').nth(3).unwrap()
}

#[test]
fn push_into_the_reference_server_and_pull_back_give_the_same_memories() {
    let (url, secret) = reference();
    let folder = tempfile::tempdir().unwrap();
    let token_file = folder.path().join("token");
    std::fs::write(&token_file, provision(&url, &secret)).unwrap();
    let chatgpt: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("chatgpt-small")).collect();
    let original = folder.path().join("original");
    convert_all_branches(&chatgpt, &original, &[OutputFormat::Aimem], 2);
    let bundle = original.join(OutputFormat::Aimem.default_file_name());

    for attempt in ["first", "again"] {
        let pushed = memport().arg("push").arg(&bundle).args(["--to", &url]).arg("--token-file").arg(&token_file).output().unwrap();
        assert!(pushed.status.success(), "{attempt}: {}", String::from_utf8_lossy(&pushed.stderr));
        let summary: Value = serde_json::from_slice(&pushed.stdout).unwrap();
        let (inserted, skipped) = if attempt == "first" {
            ("chunks_inserted", "chunks_skipped_idempotent")
        } else {
            ("chunks_skipped_idempotent", "chunks_inserted")
        };
        assert!(summary[inserted].as_u64().unwrap() > 300 && summary[skipped] == 0, "{attempt}: {summary}");
    }

    let expected = memories(&bundle);
    // The extracted memories, their evidence, supersession and entities are part of it.
    for kind in ["x-derived-from", "x-supersedes", "temporal"] {
        assert!(expected.edges.get(kind).is_some_and(|count| *count > 0), "{kind}: {:?}", expected.edges);
    }
    assert!(!expected.links.is_empty());
    for stream in [false, true] {
        let pulled = folder.path().join(format!("pulled-{stream}.aimem.json"));
        let mut pull = memport();
        pull.args(["pull", &format!("{url}/v1/brain"), "--to", "aimem", "--extract", "off", "--branches", "all"])
            .arg("-o")
            .arg(&pulled)
            .arg("--token-file")
            .arg(&token_file);
        if stream {
            pull.arg("--stream");
        }
        let output = pull.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        // The reference keeps memport's chunk ids under its own producer: read with a notice.
        assert!(stderr.contains("not in the envelope's producer namespace"), "{stderr}");
        let got = memories(&pulled);
        let differ: Vec<_> = got.chunks.symmetric_difference(&expected.chunks).collect();
        assert!(differ.is_empty(), "stream {stream}: the same memories come back; these differ: {differ:?}");
        assert_eq!(got.edges, expected.edges, "stream {stream}: every edge comes back");
        assert_eq!(got.links, expected.links, "stream {stream}: every memory's entities come back");
        assert!(memport::validate::validate_path(&pulled).unwrap().is_valid());
    }
}
