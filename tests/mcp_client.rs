//! `memport serve` driven by a real MCP client, the official Python SDK's (PyPI `mcp`,
//! installed by `scripts/test`), through tests/mcp_client.py, over stdio (`--mcp`) and over
//! MCP's streamable HTTP transport (`--listen`, at `/mcp`, with capability tokens): the six UMP
//! tools listed, recall, remember, revise, forget and erase, each answered as UMP says (a
//! read-only token's writes refused); afterwards the store holds what the client did.

use std::path::Path;
use std::process::Command;

use memport::serve::token::Verb;
use memport::sinks::OutputFormat;
use memport::store::Store;

use crate::util::{convert_all_branches as convert, examples, root};

#[test]
fn an_mcp_host_lists_recalls_remembers_revises_and_forgets() {
    let python = std::env::var("MEMPORT_TEST_PYTHON").unwrap_or_default();
    assert!(
        Path::new(&python).is_file(),
        "MEMPORT_TEST_PYTHON ({python:?}) is not set; run the tests with scripts/test, which installs the MCP SDK"
    );
    let out = tempfile::tempdir().unwrap();
    let chatgpt = examples().into_iter().find(|path| path.ends_with("chatgpt-small")).unwrap();
    convert(&[chatgpt], out.path(), &[OutputFormat::Store], 2);
    let store = out.path().join("memory.db");
    let output =
        Command::new(&python).arg(root().join("tests/mcp_client.py")).arg(env!("CARGO_BIN_EXE_memport")).arg(&store).output().unwrap();
    assert!(
        output.status.success(),
        "the MCP client's checks:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_store_holds_what_the_client_did(&store, &output.stdout);
}

fn assert_store_holds_what_the_client_did(store: &Path, stdout: &[u8]) {
    let seen: serde_json::Value = serde_json::from_slice(stdout.trim_ascii()).unwrap();
    let store = Store::open(store, false).unwrap();
    let erased = seen["erased"].as_str().unwrap();
    assert!(store.get(erased).unwrap().is_none(), "the erased record is gone from the store");
    assert!(store.is_erased(erased).unwrap(), "and its erasure is remembered");
    let tombstoned = store.get(seen["tombstoned"].as_str().unwrap()).unwrap().unwrap();
    assert_eq!(tombstoned["lifecycle"]["status"], "tombstoned");
    assert!(store.check_integrity().unwrap().is_empty());
}

#[test]
fn an_mcp_host_does_the_same_over_streamable_http_with_tokens() {
    let python = std::env::var("MEMPORT_TEST_PYTHON").unwrap_or_default();
    assert!(Path::new(&python).is_file(), "MEMPORT_TEST_PYTHON ({python:?}) is not set; run the tests with scripts/test");
    let chatgpt: Vec<_> = examples().into_iter().filter(|path| path.ends_with("chatgpt-small")).collect();
    let server = crate::http_binding::start_over(&chatgpt, &[]);
    let writer = crate::http_binding::token(&[Verb::Read, Verb::Write], None, 3600);
    let reader = crate::http_binding::token(&[Verb::Read], None, 3600);
    let output = Command::new(&python)
        .arg(root().join("tests/mcp_client.py"))
        .args(["--http", &format!("http://127.0.0.1:{}/mcp", server.port), &writer, &reader])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the MCP client's checks over HTTP:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_store_holds_what_the_client_did(&server.store, &output.stdout);
    // Without a token, nothing.
    let (status, _) = crate::http_binding::request(&server, "POST", "/mcp", None, b"{}");
    assert_eq!(status, 401);
}
