//! `memport serve --mcp` driven by a real MCP client, the official Python SDK's (PyPI `mcp`,
//! installed by `scripts/test`), through tests/mcp_client.py: the six UMP tools listed, recall,
//! remember, revise, forget and erase, each answered as UMP says; afterwards the store holds
//! what the client did.

use std::path::Path;
use std::process::Command;

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
    let seen: serde_json::Value = serde_json::from_slice(output.stdout.trim_ascii()).unwrap();
    let store = Store::open(&store, false).unwrap();
    let erased = seen["erased"].as_str().unwrap();
    assert!(store.get(erased).unwrap().is_none(), "the erased record is gone from the store");
    assert!(store.is_erased(erased).unwrap(), "and its erasure is remembered");
    let tombstoned = store.get(seen["tombstoned"].as_str().unwrap()).unwrap().unwrap();
    assert_eq!(tombstoned["lifecycle"]["status"], "tombstoned");
    assert!(store.check_integrity().unwrap().is_empty());
}
