//! AIMEM's HTTP profile on `memport serve --listen`, and `memport push` and `pull` against it:
//! exports in every scope are bundles memport accepts; an import is checked (409 checksum,
//! 422 content hash, malformed, empty), bounded (413, 408 for one byte a second), refused
//! without the verb or for one agent's token, changes nothing when refused, is idempotent, takes
//! the server's own export back as a no-op, and twenty at once lose nothing.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use memport::serve::token::Verb;
use memport::sinks::OutputFormat;
use serde_json::{Value, json};

use crate::http_binding::{Server, memport, record_count, start_over, token};
use crate::sync::{memport_sync_to, run_folders, succeed};
use crate::util::{convert_all_branches_without_extraction, examples};

/// One request; the status, the headers (lowercase names) and the body.
pub(crate) fn exchange(server: &Server, method: &str, path: &str, token: Option<&str>, body: &[u8]) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let auth = token.map(|token| format!("Authorization: Bearer {token}\r\n")).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let split = memchr::memmem::find(&response, b"\r\n\r\n").map_or(response.len(), |at| at + 4);
    let head = String::from_utf8_lossy(&response[..split]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let mut body = response[split..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    (status, head, body)
}

/// The payload of a chunked body.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = memchr::memmem::find(body, b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&body[..line_end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        out.extend_from_slice(&body[line_end + 2..line_end + 2 + size]);
        body = &body[line_end + 2 + size + 2..];
    }
    out
}

fn json_of(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or(Value::Null)
}

/// A bundle of the bundled ChatGPT example, as `memport convert --to aimem` writes it.
pub(crate) fn chatgpt_bundle(folder: &Path) -> Vec<u8> {
    let chatgpt: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("chatgpt-small")).collect();
    convert_all_branches_without_extraction(&chatgpt, folder, &[OutputFormat::Aimem], 2);
    std::fs::read(folder.join(OutputFormat::Aimem.default_file_name())).unwrap()
}

/// `bundle` with its checksum computed again (after an edit).
fn with_checksum(mut bundle: Value) -> Vec<u8> {
    bundle.as_object_mut().unwrap().remove("checksum");
    let digest = memport::hash::sha256(&memport::jcs::to_canonical_vec(&bundle));
    bundle["checksum"] = json!(format!("sha256:{}", digest.iter().map(|byte| format!("{byte:02x}")).collect::<String>()));
    bundle.to_string().into_bytes()
}

fn claude_store_server(options: &[&str]) -> Server {
    let claude: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("claude-small")).collect();
    start_over(&claude, options)
}

#[test]
fn an_export_in_each_scope_is_a_bundle_memport_accepts() {
    let server = claude_store_server(&[]);
    let exporter = token(&[Verb::Export], None, 3600);
    let mut chunk_counts = Vec::new();
    for (query, stream, scope) in [
        ("", false, "FULL"),
        ("?scope=DNA_ONLY", false, "DNA_ONLY"),
        ("?scope=SINCE&since=2025-01-01T00%3A00%3A00Z", false, "SINCE"),
        ("?scope=FULL", true, "FULL"),
    ] {
        let path = format!("/v1/brain/export{}{query}", if stream { "/stream" } else { "" });
        let (status, head, body) = exchange(&server, "GET", &path, Some(&exporter), b"");
        assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
        let media = if stream { "application/x-ndjson" } else { "application/aimem-bundle+json" };
        assert!(head.contains(&format!("content-type: {media}")), "{path}: {head}");
        let file = server.folder.path().join(format!("export-{scope}.aimem.{}", if stream { "ndjson" } else { "json" }));
        std::fs::write(&file, &body).unwrap();
        let validation = memport::validate::validate_path(&file).unwrap();
        assert!(validation.is_valid(), "{path}: {:?}", validation.problems);
        let envelope: Value = if stream {
            serde_json::from_slice(body.split(|byte| *byte == b'\n').next().unwrap()).unwrap()
        } else {
            serde_json::from_slice(&body).unwrap()
        };
        assert_eq!(envelope["scope"], scope, "{path}");
        if !stream {
            let chunks = envelope["chunks"].as_array().unwrap().clone();
            if scope == "SINCE" {
                assert_eq!(envelope["since"], "2025-01-01T00:00:00Z");
                assert!(chunks.iter().all(|chunk| chunk["created_at"].as_str().unwrap() >= "2025-01-01"), "SINCE holds only later chunks");
            }
            if scope == "DNA_ONLY" {
                assert!(chunks.iter().all(|chunk| chunk["memory_type"] != "episodic"), "DNA_ONLY holds memories only");
            }
            chunk_counts.push(chunks.len());
        }
    }
    let [full, dna, since] = chunk_counts[..] else { panic!("three bundles") };
    // The FULL export holds every live record of the store: read back, as many UMP records.
    let back = server.folder.path().join("back");
    let mut options = crate::util::options(&[server.folder.path().join("export-FULL.aimem.json")], &back, &[OutputFormat::UmpNdjson]);
    options.settings.extract = memport::pipeline::settings::Extractor::Off;
    options.settings.branches = memport::sources::BranchPolicy::All;
    options.settings.dedup = memport::pipeline::DedupPolicy::Off;
    memport::run(&options).unwrap();
    let (stored, tombstoned) = record_count(&server.store);
    assert_eq!(crate::util::ndjson(&back.join(OutputFormat::UmpNdjson.default_file_name())).len() as u64, stored - tombstoned);
    assert!(dna > 0 && dna < full && since > 0 && since < full, "each scope is a part: {chunk_counts:?}");

    // The scheme is case-insensitive.
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        stream,
        "GET /v1/brain/export?scope=DNA_ONLY HTTP/1.1\r\nHost: localhost\r\nauthorization: bearer {exporter}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    assert_eq!(crate::http_binding::read_response(stream).0, 200, "a lowercase bearer");

    // Who may export: a token with the verb; 401 with a Bearer challenge without one.
    let (status, head, body) = exchange(&server, "GET", "/v1/brain/export", None, b"");
    assert_eq!((status, json_of(&body)["title"].as_str()), (401, Some("unauthorized")));
    assert!(head.contains("www-authenticate: bearer") && head.contains("application/problem+json"), "{head}");
    let (status, _, body) = exchange(&server, "GET", "/v1/brain/export", Some(&token(&[Verb::Read], None, 3600)), b"");
    assert_eq!((status, json_of(&body)["title"].as_str()), (403, Some("forbidden_scope")));
    for (query, code) in [("?scope=SINCE", "since_required"), ("?scope=SINCE&since=last-week", "bad_since"), ("?scope=ALL", "bad_scope")] {
        let (status, _, body) = exchange(&server, "GET", &format!("/v1/brain/export{query}"), Some(&exporter), b"");
        assert_eq!((status, json_of(&body)["title"].as_str()), (422, Some(code)), "{query}");
    }
}

/// What is sent (what, token, body) and what comes back (status, problem title).
type RefusedImport<'a> = (&'a str, Option<&'a str>, &'a [u8], u16, &'a str);

#[test]
fn an_import_is_checked_and_idempotent_and_a_refused_one_changes_nothing() {
    let server = claude_store_server(&["--request-timeout", "2", "--max-import", "512K"]);
    let folder = tempfile::tempdir().unwrap();
    let bundle = chatgpt_bundle(folder.path());
    let importer = token(&[Verb::Write, Verb::Export], None, 3600);
    let before = record_count(&server.store);

    let (status, _, body) = exchange(&server, "POST", "/v1/brain/import", Some(&importer), &bundle);
    let summary = json_of(&body);
    assert_eq!(status, 200, "{summary}");
    let inserted = summary["inserted"].as_u64().unwrap();
    assert!(inserted > 300, "{summary}");
    assert_eq!(record_count(&server.store).0, before.0 + inserted);
    let (_, _, body) = exchange(&server, "POST", "/v1/brain/import", Some(&importer), &bundle);
    let again = json_of(&body);
    assert_eq!((again["inserted"].as_u64(), again["skipped_idempotent"].as_u64()), (Some(0), Some(inserted)), "{again}");

    // The server's own export comes back as a no-op (AIMEM Level 3).
    let (_, _, export) = exchange(&server, "GET", "/v1/brain/export", Some(&importer), b"");
    let (status, _, body) = exchange(&server, "POST", "/v1/brain/import", Some(&importer), &export);
    let round = json_of(&body);
    assert_eq!(
        (status, round["inserted"].as_u64(), round["rejected_conflict"].as_array().map(Vec::len)),
        (200, Some(0), Some(0)),
        "{round}"
    );
    let after = record_count(&server.store);

    let mut tampered: Value = serde_json::from_slice(&bundle).unwrap();
    tampered["chunks"][0]["content"] = json!("Some other words");
    let bad_checksum = tampered.to_string().into_bytes();
    let bad_hash = with_checksum(tampered);
    let agent_token = token(&[Verb::Write], Some("chatgpt"), 3600);
    let reader = token(&[Verb::Read, Verb::Export], None, 3600);
    let cases: [RefusedImport; 7] = [
        ("no token", None, &bundle, 401, "unauthorized"),
        ("a token without write", Some(&reader), &bundle, 403, "forbidden_scope"),
        ("a token for one agent", Some(&agent_token), &bundle, 403, "forbidden_scope"),
        ("a bad checksum", Some(&importer), &bad_checksum, 409, "checksum_mismatch"),
        ("a chunk with a bad content hash", Some(&importer), &bad_hash, 422, "hash_mismatch"),
        ("a body that is not JSON", Some(&importer), b"{\"chunks\": [", 422, "malformed_json"),
        ("no body", Some(&importer), b"", 422, "empty_body"),
    ];
    for (what, token, body, status, code) in cases {
        let (got, head, answer) = exchange(&server, "POST", "/v1/brain/import", token, body);
        let problem = json_of(&answer);
        assert_eq!((got, problem["title"].as_str()), (status, Some(code)), "{what}: {problem}");
        assert!(head.contains("content-type: application/problem+json"), "{what}: {head}");
        assert_eq!(problem["status"], status, "{what}");
    }
    let (status, _, _) = exchange(&server, "POST", "/v1/brain/import", Some(&importer), &vec![b' '; 600 << 10]);
    assert_eq!(status, 413, "a body over --max-import");

    // A client sending one byte a second is cut off once the grace has passed.
    let started = Instant::now();
    let status = crate::http_binding::send_slowly(&server, "/v1/brain/import", &importer, 100_000, &bundle[..8]);
    assert_eq!(status, 408, "a client sending one byte a second");
    assert!(started.elapsed() < Duration::from_secs(9), "cut off after the grace, in {:?}", started.elapsed());
    assert_eq!(record_count(&server.store), after, "no refused import changed the store");
}

/// Twenty bundles of different memories, each of `records` UMP records.
fn distinct_bundles(folder: &Path, count: usize, records: usize) -> Vec<PathBuf> {
    (0..count)
        .map(|bundle| {
            let ump = folder.join(format!("b{bundle}.ump.ndjson"));
            let lines: String = (0..records)
                .map(|index| {
                    let record = json!({
                        "ump": "0.1",
                        "id": format!("urn:ump:test-{bundle}-{index}"),
                        "kind": "semantic",
                        "body": {"text": format!("Synthetic fact {index} of bundle {bundle}: the tide table lists {} marks", bundle * 100 + index)},
                        "scope": {"owner": "local-user"},
                        "time": {"created": format!("2025-02-{:02}T10:00:00Z", index % 28 + 1)},
                    });
                    format!("{record}\n")
                })
                .collect();
            std::fs::write(&ump, lines).unwrap();
            let out = folder.join(format!("b{bundle}"));
            convert_all_branches_without_extraction(&[ump], &out, &[OutputFormat::Aimem], 1);
            out.join(OutputFormat::Aimem.default_file_name())
        })
        .collect()
}

#[test]
fn twenty_concurrent_imports_of_different_bundles_lose_nothing() {
    let server = claude_store_server(&[]);
    let folder = tempfile::tempdir().unwrap();
    let bundles = distinct_bundles(folder.path(), 20, 15);
    let importer = token(&[Verb::Write], None, 3600);
    let before = record_count(&server.store).0;
    let inserted: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = bundles
            .iter()
            .map(|bundle| {
                let (server, importer) = (&server, &importer);
                scope.spawn(move || {
                    let (status, _, body) = exchange(server, "POST", "/v1/brain/import", Some(importer), &std::fs::read(bundle).unwrap());
                    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
                    json_of(&body)["inserted"].as_u64().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|handle| handle.join().unwrap()).collect()
    });
    assert!(inserted.iter().all(|count| *count == 15), "each import stored its records: {inserted:?}");
    assert_eq!(record_count(&server.store).0, before + 300, "nothing lost");
}

#[test]
fn push_and_pull_move_memory_through_a_server() {
    let server = claude_store_server(&[]);
    let folder = tempfile::tempdir().unwrap();
    let token_file = folder.path().join("token");
    std::fs::write(&token_file, token(&[Verb::Write, Verb::Export], None, 3600)).unwrap();
    let url = format!("http://127.0.0.1:{}", server.port);
    let chatgpt = examples().into_iter().find(|path| path.ends_with("chatgpt-small")).unwrap();
    // An export folder is converted to a bundle first, then sent.
    let pushed = memport().arg("push").arg(&chatgpt).args(["--to", &url, "--quiet"]).arg("--token-file").arg(&token_file).output().unwrap();
    assert!(pushed.status.success(), "{}", String::from_utf8_lossy(&pushed.stderr));
    let summary: Value = serde_json::from_slice(&pushed.stdout).unwrap();
    assert!(summary["inserted"].as_u64().unwrap() > 300, "{summary}");

    let delta = folder.path().join("delta");
    let pulled = memport()
        .args(["pull", &format!("{url}/v1/brain"), "--scope", "SINCE", "--since", "2023-06-12", "--stream", "--to", "pam", "--quiet"])
        .arg("-o")
        .arg(&delta)
        .arg("--token-file")
        .arg(&token_file)
        .output()
        .unwrap();
    assert!(pulled.status.success(), "{}", String::from_utf8_lossy(&pulled.stderr));
    let validation = memport::validate::validate_path(&delta).unwrap();
    assert!(validation.is_valid() && validation.records > 0, "{:?}", validation.problems);

    // The server's own stream pushed back: carried whole (not deduplicated, every branch),
    // so every record is there already.
    let (_, _, stream) = exchange(&server, "GET", "/v1/brain/export/stream", Some(&std::fs::read_to_string(&token_file).unwrap()), b"");
    let streamed = folder.path().join("server.aimem.ndjson");
    std::fs::write(&streamed, stream).unwrap();
    let pushed =
        memport().arg("push").arg(&streamed).args(["--to", &url, "--quiet"]).arg("--token-file").arg(&token_file).output().unwrap();
    assert!(pushed.status.success(), "{}", String::from_utf8_lossy(&pushed.stderr));
    let back: Value = serde_json::from_slice(&pushed.stdout).unwrap();
    assert_eq!((back["inserted"].as_u64(), back["rejected_conflict"].as_array().map(Vec::len)), (Some(0), Some(0)), "{back}");

    // An export's file (not a bundle, though validation would read it as a broken one) is
    // converted too: the same records, all there already.
    let file = chatgpt.join("conversations.json");
    let pushed = memport().arg("push").arg(&file).args(["--to", &url, "--quiet"]).arg("--token-file").arg(&token_file).output().unwrap();
    assert!(pushed.status.success(), "{}", String::from_utf8_lossy(&pushed.stderr));
    let again: Value = serde_json::from_slice(&pushed.stdout).unwrap();
    assert_eq!((again["inserted"].as_u64(), again["skipped_idempotent"].as_u64()), (Some(0), summary["inserted"].as_u64()), "{again}");

    // A refusal shows the server's problem and sends nothing twice.
    std::fs::write(&token_file, token(&[Verb::Read], None, 3600)).unwrap();
    let refused =
        memport().arg("push").arg(&chatgpt).args(["--to", &url, "--quiet"]).arg("--token-file").arg(&token_file).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && stderr.contains("403") && stderr.contains("does not grant write"), "{stderr}");
}

/// Guards a sync's delta pushed to a server: the messages and memories it withdraws (erased in
/// the memory store the sync keeps) were listed as conflicts and stayed in the server's store,
/// and the conversations it retracts kept their records live. They are now erased and
/// tombstoned there, once: the same delta again changes nothing.
#[test]
fn a_delta_imported_erases_what_it_withdraws_and_tombstones_the_conversations_it_retracts() {
    let folder = tempfile::tempdir().unwrap();
    let (state, out) = (folder.path().join("state.db"), folder.path().join("out"));
    let export = crate::util::root().join("examples/chatgpt-small");
    let formats = "store,aimem,ump-ndjson";
    succeed(&mut memport_sync_to(formats, &export, &state, &out, "2026-01-01T00:00:00Z"));
    let first_run = run_folders(&out).into_iter().next().unwrap();
    let records = crate::util::ndjson(&first_run.join("memory.ump.ndjson"));
    let said = |record: &&Value| record["body"]["text"].as_str().is_some_and(|text| text.starts_with("I don't eat meat"));
    let message = records.iter().find(said).unwrap();
    let (message_id, words) = (message["id"].as_str().unwrap(), message["body"]["text"].as_str().unwrap().to_owned());
    let its_conversation = message["body"]["structured"]["conversation_id"].as_str().unwrap();
    // And a memory, said in another message.
    let derived_from_other = |record: &&Value| {
        record["provenance"]["actor_kind"] == "scan"
            && record["relations"].as_array().is_some_and(|relations| !relations.iter().any(|relation| relation["target"] == message_id))
    };
    let memory = records.iter().find(derived_from_other).unwrap();
    let (memory_id, memory_words) = (memory["id"].as_str().unwrap(), memory["body"]["text"].as_str().unwrap().to_owned());
    let forgotten = crate::util::forget_hard(&out.join("memory.db"), &[message_id, memory_id]);
    assert!(forgotten.status.success(), "{}", String::from_utf8_lossy(&forgotten.stderr));
    // The next month's export lacks another conversation: the user deleted it.
    let mut conversations: Vec<Value> = serde_json::from_slice(&std::fs::read(export.join("conversations.json")).unwrap()).unwrap();
    let deleted = conversations.iter().position(|conversation| conversation["id"] != its_conversation).unwrap();
    let deleted_id = conversations.remove(deleted)["id"].as_str().unwrap().to_owned();
    let next_month = folder.path().join("next-month");
    std::fs::create_dir(&next_month).unwrap();
    std::fs::write(next_month.join("conversations.json"), serde_json::to_vec(&conversations).unwrap()).unwrap();
    let before = run_folders(&out);
    succeed(&mut memport_sync_to(formats, &next_month, &state, &out, "2026-02-01T00:00:00Z"));
    let delta = run_folders(&out).difference(&before).next().cloned().unwrap();
    let bundle = std::fs::read(delta.join(OutputFormat::Aimem.default_file_name())).unwrap();
    let envelope = json_of(&bundle);
    assert_eq!(envelope["x-memport-withdrawn-messages"].as_array().map(Vec::len), Some(1), "{envelope}");
    assert_eq!(envelope["x-memport-retracted"][0]["conversation_id"], deleted_id.as_str(), "{envelope}");

    // A server holding what the first month held.
    let server = start_over(&[export], &[]);
    let store_words = || std::fs::read(&server.store).unwrap();
    assert!(memchr::memmem::find(&store_words(), words.as_bytes()).is_some());
    let (_, tombstoned_before) = record_count(&server.store);
    assert!(memchr::memmem::find(&store_words(), memory_words.as_bytes()).is_some());
    let owner = token(&[Verb::Write], None, 3600);
    let (status, _, body) = exchange(&server, "POST", "/v1/brain/import", Some(&owner), &bundle);
    let summary = json_of(&body);
    assert_eq!((status, summary["withdrawn_messages"].as_u64()), (200, Some(1)), "{summary}");
    assert!(summary["withdrawn_records"].as_u64().unwrap() >= 1, "the erased memory at least: {summary}");
    let held = memport::store::Store::open(&server.store, false).unwrap();
    assert!(held.get(memory_id).unwrap().is_none() && held.is_erased(memory_id).unwrap(), "the erased memory is erased here too");
    drop(held);
    assert!(memchr::memmem::find(&store_words(), memory_words.as_bytes()).is_none(), "no word of the erased memory is left");
    let tombstoned = summary["tombstoned_retracted"].as_u64().unwrap();
    assert!(tombstoned > 0, "{summary}");
    assert_eq!(summary["rejected_conflict"], json!([]), "{summary}");
    assert!(memchr::memmem::find(&store_words(), words.as_bytes()).is_none(), "no word of the withdrawn message is left in the store");
    let (_, tombstoned_after) = record_count(&server.store);
    assert!(tombstoned_after >= tombstoned_before + tombstoned, "{tombstoned_before} then {tombstoned_after}");

    let (status, _, body) = exchange(&server, "POST", "/v1/brain/import", Some(&owner), &bundle);
    let again = json_of(&body);
    assert_eq!(
        (
            status,
            again["withdrawn_messages"].as_u64(),
            again["tombstoned_retracted"].as_u64(),
            again["withdrawn_records"].as_u64(),
            again["inserted"].as_u64()
        ),
        (200, Some(0), Some(0), Some(0), Some(0)),
        "{again}"
    );
}

#[test]
fn a_stores_export_keeps_extracted_memories_with_their_evidence_entities_and_supersession() {
    let chatgpt: Vec<PathBuf> = examples().into_iter().filter(|path| path.ends_with("chatgpt-small")).collect();
    let server = start_over(&chatgpt, &[]);
    let (status, _, body) = exchange(&server, "GET", "/v1/brain/export?scope=FULL", Some(&token(&[Verb::Export], None, 3600)), b"");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let exported = json_of(&body);
    let folder = tempfile::tempdir().unwrap();
    crate::util::convert_all_branches(&chatgpt, folder.path(), &[OutputFormat::Aimem], 2);
    let direct: Value =
        serde_json::from_slice(&std::fs::read(folder.path().join(OutputFormat::Aimem.default_file_name())).unwrap()).unwrap();
    let edges = |bundle: &Value, kind: &str| bundle["edges"].as_array().unwrap().iter().filter(|edge| edge["edge_type"] == kind).count();
    assert!(
        edges(&direct, "x-derived-from") > 0 && edges(&direct, "x-supersedes") > 0,
        "the example's memories have evidence and a successor"
    );
    for member in ["chunks", "edges", "entities", "chunk_entities"] {
        assert_eq!(exported[member], direct[member], "{member}: the store's export is the direct conversion's");
    }
    // Exports without the messages or the older memories link only to what they hold.
    for query in ["?scope=DNA_ONLY", "?scope=SINCE&since=2025-05-12T00%3A00%3A00Z"] {
        let (status, _, body) =
            exchange(&server, "GET", &format!("/v1/brain/export{query}"), Some(&token(&[Verb::Export], None, 3600)), b"");
        assert_eq!(status, 200, "{query}");
        let file = folder.path().join("part.aimem.json");
        std::fs::write(&file, &body).unwrap();
        let validation = memport::validate::validate_path(&file).unwrap();
        assert!(validation.is_valid(), "{query}: {:?}", validation.problems);
    }
}
