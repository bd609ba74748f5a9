//! Builders of the malformed-input corpus: minimal valid files of every provider and memory
//! format, written by the test itself, and the ways to break them (nesting, truncation,
//! encodings, zips, FIFOs).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{conversation, text_node};

/// Levels of nesting in the deep cases: far beyond what a recursive parser's stack holds.
pub const DEPTH: usize = 100_000;
/// A JSON string put where raw bytes (not necessarily JSON) are spliced in afterwards.
pub const HOLE: &str = "@@HOLE@@";
/// The Gemini conversation URL every generated record carries.
const GEMINI_URL: &str = "https://gemini.google.com/app/abc123";

/// Writes `bytes` to `dir/relative`, creating its folders, and returns the path.
pub fn put(dir: &Path, relative: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().expect("a parent folder")).expect("folders created");
    std::fs::write(&path, bytes).expect("file written");
    path
}

/// Reads a file the builder wrote.
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// `text` with the JSON string `"@@HOLE@@"` replaced by `raw`.
pub fn splice(text: &str, raw: &str) -> String {
    let hole = format!("\"{HOLE}\"");
    assert!(text.contains(&hole), "nothing to splice into");
    text.replacen(&hole, raw, 1)
}

/// Every occurrence of `from` in `haystack` replaced by `to`.
pub fn replace_bytes(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut rest = haystack;
    while let Some(at) = rest.windows(from.len()).position(|window| window == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// `[[[…]]]`, [`DEPTH`] levels.
pub fn deep_array() -> String {
    "[".repeat(DEPTH) + &"]".repeat(DEPTH)
}

/// `{"a":{"a":…1…}}`, [`DEPTH`] levels.
pub fn deep_object() -> String {
    "{\"a\":".repeat(DEPTH) + "1" + &"}".repeat(DEPTH)
}

/// A JSON string of `bytes` letters.
pub fn huge_string(bytes: usize) -> String {
    format!("\"{}\"", "x".repeat(bytes))
}

/// `text` in UTF-16 little-endian, with or without its byte-order mark.
pub fn utf16le(text: &str, bom: bool) -> Vec<u8> {
    let mut out = if bom { vec![0xFF, 0xFE] } else { Vec::new() };
    for unit in text.encode_utf16() {
        out.extend_from_slice(&unit.to_le_bytes());
    }
    out
}

/// `text` in UTF-16 big-endian with its byte-order mark.
pub fn utf16be(text: &str) -> Vec<u8> {
    let mut out = vec![0xFE, 0xFF];
    for unit in text.encode_utf16() {
        out.extend_from_slice(&unit.to_be_bytes());
    }
    out
}

/// `text` in UTF-32 little-endian with its byte-order mark.
pub fn utf32le(text: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE, 0x00, 0x00];
    for character in text.chars() {
        out.extend_from_slice(&u32::from(character).to_le_bytes());
    }
    out
}

/// Rewrites a UTF-8 file as UTF-16 LE with a byte-order mark.
pub fn rewrite_as_utf16(path: &Path) {
    let text = String::from_utf8(read(path)).expect("UTF-8");
    std::fs::write(path, utf16le(&text, true)).expect("rewritten");
}

/// Keeps the first `fraction` of a file.
pub fn truncate(path: &Path, fraction: f64) {
    let bytes = read(path);
    let keep = (bytes.len() as f64 * fraction) as usize;
    std::fs::write(path, &bytes[..keep]).expect("truncated");
}

/// Inserts `insert` right after the last occurrence of `anchor` in a file (the last record
/// belongs to the second conversation, so the first one stays whole).
pub fn insert_after_last(path: &Path, anchor: &str, insert: &str) {
    let text = String::from_utf8(read(path)).expect("UTF-8");
    let at = text.rfind(anchor).unwrap_or_else(|| panic!("{anchor} in {}", path.display())) + anchor.len();
    std::fs::write(path, format!("{}{insert}{}", &text[..at], &text[at..])).expect("rewritten");
}

/// A FIFO at `path` (opening it blocks until someone writes: the no-hang cases).
pub fn fifo(path: &Path) -> PathBuf {
    std::fs::create_dir_all(path.parent().expect("a parent folder")).expect("folders created");
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
    path.to_owned()
}

/// A symbolic link at `path` to `target`.
pub fn symlink(target: &str, path: &Path) -> PathBuf {
    std::fs::create_dir_all(path.parent().expect("a parent folder")).expect("folders created");
    std::os::unix::fs::symlink(target, path).expect("symlink created");
    path.to_owned()
}

/// Compact JSON.
pub fn to_json(value: &Value) -> String {
    serde_json::to_string(value).expect("serializable")
}

// ---------------------------------------------------------------------------------------------
// ChatGPT

/// A ChatGPT conversation: a question and an answer. Texts differ between ids, so content
/// dedup drops nothing and the written counts are exact.
pub fn chatgpt_conversation(id: &str, question: &str) -> Value {
    conversation(
        id,
        vec![
            text_node("u", Some("root"), "user", question, 1_700_000_001.0),
            text_node("a", Some("u"), "assistant", &format!("the answer in {id}"), 1_700_000_002.0),
        ],
        Some("a"),
    )
}

/// The first conversation of the two-conversation export.
pub fn chatgpt_first() -> String {
    to_json(&chatgpt_conversation("c1", "first question"))
}

/// The second conversation of the two-conversation export.
pub fn chatgpt_second() -> String {
    to_json(&chatgpt_conversation("c2", "second question"))
}

/// A valid export of two conversations (four messages).
pub fn chatgpt_two() -> String {
    format!("[{},{}]", chatgpt_first(), chatgpt_second())
}

/// The two-conversation export with the second conversation changed by `mutate`.
pub fn chatgpt_second_mutated(mutate: impl FnOnce(&mut Value)) -> String {
    let mut second = chatgpt_conversation("c2", "second question");
    mutate(&mut second);
    format!("[{},{}]", chatgpt_first(), to_json(&second))
}

/// `in/conversations.json`.
pub fn chatgpt_file(dir: &Path, bytes: impl AsRef<[u8]>) -> PathBuf {
    put(dir, "in/conversations.json", bytes)
}

/// The two-conversation export cut at the byte `at` computes from the two elements' texts
/// (the file is `[` first `,` second `]`).
pub fn chatgpt_cut(dir: &Path, at: impl Fn(&str, &str) -> usize) -> PathBuf {
    let (first, second) = (chatgpt_first(), chatgpt_second());
    let text = format!("[{first},{second}]");
    let cut = at(first.as_str(), second.as_str());
    chatgpt_file(dir, &text.as_bytes()[..cut])
}

/// Where the second element starts in the two-conversation export.
pub fn second_start(first: &str) -> usize {
    first.len() + 2
}

/// A folder `in/` holding `files`.
pub fn folder(dir: &Path, files: &[(&str, &[u8])]) -> PathBuf {
    for (name, bytes) in files {
        put(dir, &format!("in/{name}"), bytes);
    }
    let folder = dir.join("in");
    std::fs::create_dir_all(&folder).expect("folder created");
    folder
}

/// A 2026 export: two shards and their manifest.
pub fn chatgpt_shards(dir: &Path, first: &[u8], second: &[u8]) -> PathBuf {
    let manifest = json!({"export_files": [
        {"path": "conversations-000.json", "size_bytes": first.len()},
        {"path": "conversations-001.json", "size_bytes": second.len()},
    ]});
    folder(
        dir,
        &[("conversations-000.json", first), ("conversations-001.json", second), ("export_manifest.json", to_json(&manifest).as_bytes())],
    )
}

/// The first shard: one conversation.
pub fn shard_one() -> String {
    format!("[{}]", chatgpt_first())
}

/// The second shard: the other conversation.
pub fn shard_two() -> String {
    format!("[{}]", chatgpt_second())
}

/// A zip at `in/export.zip` of `entries` (deflated, or stored).
pub fn zip(dir: &Path, entries: &[(&str, &[u8])], deflated: bool) -> PathBuf {
    let path = dir.join("in/export.zip");
    std::fs::create_dir_all(dir.join("in")).expect("folder created");
    std::fs::write(&path, zip_bytes(entries, deflated)).expect("zip written");
    path
}

/// A zip archive of `entries`, in memory.
pub fn zip_bytes(entries: &[(&str, &[u8])], deflated: bool) -> Vec<u8> {
    let method = if deflated { zip::CompressionMethod::Deflated } else { zip::CompressionMethod::Stored };
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::<u8>::new()));
    for (name, bytes) in entries {
        writer.start_file(*name, options).expect("entry started");
        writer.write_all(bytes).expect("entry written");
    }
    writer.finish().expect("zip finished").into_inner()
}

/// A zip with two entries named `conversations.json`: the zip crate refuses to write a
/// duplicate name, so the second entry is written under a name of the same length and renamed
/// in the bytes (local header and central directory; names are not covered by the CRC).
pub fn zip_with_duplicate_names(dir: &Path) -> PathBuf {
    let first = format!("[{}]", chatgpt_first());
    let second = format!("[{}]", chatgpt_second());
    let bytes = zip_bytes(&[("conversations.json", first.as_bytes()), ("conversationX.json", second.as_bytes())], true);
    put(dir, "in/export.zip", replace_bytes(&bytes, b"conversationX.json", b"conversations.json"))
}

/// A zip whose `conversations.json` inflates to 200 MB: `before`, 200 MiB of spaces, `after`.
/// Spaces compress about 1000:1, so the archive stays small.
pub fn zip_bomb(dir: &Path, before: &str, after: &str) -> PathBuf {
    let path = dir.join("in/export.zip");
    std::fs::create_dir_all(dir.join("in")).expect("folder created");
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let mut writer = zip::ZipWriter::new(std::fs::File::create(&path).expect("zip created"));
    writer.start_file("conversations.json", options).expect("entry started");
    writer.write_all(before.as_bytes()).expect("written");
    let spaces = vec![b' '; 1 << 20];
    for _ in 0..200 {
        writer.write_all(&spaces).expect("written");
    }
    writer.write_all(after.as_bytes()).expect("written");
    writer.finish().expect("zip finished");
    path
}

// ---------------------------------------------------------------------------------------------
// Claude

/// A Claude conversation: a question and an answer.
pub fn claude_conversation(uuid: &str, question: &str) -> Value {
    let message = |suffix: &str, sender: &str, text: &str, time: &str| {
        json!({
            "uuid": format!("{uuid}-{suffix}"), "text": text, "content": [{"type": "text", "text": text}],
            "sender": sender, "created_at": time, "updated_at": time, "attachments": [], "files": [],
        })
    };
    json!({
        "uuid": uuid,
        "name": format!("chat {uuid}"),
        "summary": "",
        "created_at": "2026-04-05T17:33:03.490423Z",
        "updated_at": "2026-04-05T18:02:21.359524Z",
        "account": {"uuid": "account"},
        "chat_messages": [
            message("q", "human", question, "2026-04-05T17:33:09.476778Z"),
            message("a", "assistant", format!("the answer in {uuid}").as_str(), "2026-04-05T17:33:19.476778Z"),
        ],
    })
}

/// A valid Claude export of two conversations.
pub fn claude_two() -> String {
    to_json(&json!([claude_conversation("k1", "first question"), claude_conversation("k2", "second question")]))
}

/// The two-conversation Claude export with the second conversation changed by `mutate`.
pub fn claude_second_mutated(mutate: impl FnOnce(&mut Value)) -> String {
    let mut second = claude_conversation("k2", "second question");
    mutate(&mut second);
    to_json(&json!([claude_conversation("k1", "first question"), second]))
}

/// `in/conversations.json`.
pub fn claude_file(dir: &Path, bytes: impl AsRef<[u8]>) -> PathBuf {
    put(dir, "in/conversations.json", bytes)
}

/// A 2026 delivery manifest listing two zips; with `one_zip`, the first sits beside it.
pub fn claude_manifest(dir: &Path, one_zip: bool) -> PathBuf {
    let manifest = json!({"files": [
        {"name": "conversations-000.zip", "url": "https://example.com/export/conversations-000.zip"},
        {"name": "conversations-001.zip", "url": "https://example.com/export/conversations-001.zip"},
    ]});
    if one_zip {
        put(dir, "in/conversations-000.zip", zip_bytes(&[("conversations.json", claude_two().as_bytes())], true));
    }
    put(dir, "in/manifest.json", to_json(&manifest))
}

// ---------------------------------------------------------------------------------------------
// Grok

/// A Grok conversation (2026 shape): a question and an answer.
pub fn grok_conversation(id: &str, question: &str) -> Value {
    let response = |suffix: &str, parent: &str, sender: &str, text: &str, millis: i64| {
        json!({
            "response": {
                "_id": format!("{id}-{suffix}"), "message": text, "sender": sender,
                "create_time": {"$date": {"$numberLong": millis.to_string()}}, "parent_response_id": parent,
            },
            "share_link": null,
        })
    };
    json!({
        "conversation": {
            "id": id, "title": format!("chat {id}"), "create_time": "2025-10-24T20:50:04.832395Z",
            "modify_time": "2025-10-24T20:57:39.114456Z", "leaf_response_id": null,
        },
        "responses": [
            response("q", "not-exported", "human", question, 1_761_339_005_114),
            response("a", format!("{id}-q").as_str(), "assistant", format!("the answer in {id}").as_str(), 1_761_339_065_114),
        ],
    })
}

/// `prod-grok-backend.json` with these conversations.
pub fn grok_backend(conversations: Value) -> String {
    to_json(&json!({"conversations": conversations, "projects": [], "tasks": []}))
}

/// A valid Grok export of two conversations.
pub fn grok_two() -> String {
    grok_backend(json!([grok_conversation("g1", "first question"), grok_conversation("g2", "second question")]))
}

/// The two-conversation Grok export with the second conversation changed by `mutate`.
pub fn grok_second_mutated(mutate: impl FnOnce(&mut Value)) -> String {
    let mut second = grok_conversation("g2", "second question");
    mutate(&mut second);
    grok_backend(json!([grok_conversation("g1", "first question"), second]))
}

/// `in/prod-grok-backend.json`.
pub fn grok_file(dir: &Path, bytes: impl AsRef<[u8]>) -> PathBuf {
    put(dir, "in/prod-grok-backend.json", bytes)
}

// ---------------------------------------------------------------------------------------------
// Copilot

/// The activity-history header row, with the BOM the real exports carry.
pub const COPILOT_HEADER: &str = "\u{feff}Conversation,Time,Author,Message\r\n";

/// Two conversations, newest first as exported, an answer before its question.
const COPILOT_ROWS: [[&str; 4]; 4] = [
    ["Plants", "2026-06-01T10:29:09", "AI", "\"Water less, and check the roots.\""],
    ["Plants", "2026-06-01T10:29:09", "Human", "Why are my leaves yellow?"],
    ["Trips", "2026-05-01T08:00:00", "AI", "Lisbon is lovely in May."],
    ["Trips", "2026-05-01T08:00:00", "Human", "Where should I go in May?"],
];

/// A valid activity history: `extra` rows first (the newest), then four good rows.
pub fn copilot_with(extra: &[[&str; 4]]) -> String {
    let mut text = COPILOT_HEADER.to_owned();
    // Joined first: the extra rows borrow for less long than the constant ones.
    let rows = extra.iter().map(|row| row.join(",")).chain(COPILOT_ROWS.iter().map(|row| row.join(",")));
    for row in rows {
        text.push_str(&row);
        text.push_str("\r\n");
    }
    text
}

/// `in/copilot-activity-history.csv`.
pub fn copilot_file(dir: &Path, bytes: impl AsRef<[u8]>) -> PathBuf {
    put(dir, "in/copilot-activity-history.csv", bytes)
}

// ---------------------------------------------------------------------------------------------
// Gemini

/// A Gemini Apps activity record with a prompt and an answer.
pub fn gemini_record(title: &str, time: &str, answer_html: &str) -> Value {
    json!({
        "header": "Gemini Apps", "title": title, "time": time, "products": ["Gemini Apps"],
        "activityControls": ["Gemini Apps Activity"], "details": [{"name": GEMINI_URL, "url": GEMINI_URL}],
        "safeHtmlItem": [{"html": answer_html}],
    })
}

/// The newer of the two records.
pub fn gemini_newer() -> Value {
    gemini_record("Prompted second question", "2026-02-04T10:05:11.063Z", "<p>The second answer.</p>")
}

/// The older of the two records.
pub fn gemini_older() -> Value {
    gemini_record("Prompted first question", "2026-02-04T10:02:11.063Z", "<p>The first answer.</p>")
}

/// A valid `MyActivity.json`: two records, newest first.
pub fn gemini_two() -> String {
    to_json(&json!([gemini_newer(), gemini_older()]))
}

/// A Takeout folder `in/` with the Gemini Apps activity file `file_name` holding `bytes`.
pub fn gemini_takeout(dir: &Path, file_name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    put(dir, &format!("in/Takeout/My Activity/Gemini Apps/{file_name}"), bytes);
    dir.join("in")
}

/// The start of a `MyActivity.html` page.
pub const GEMINI_HTML_HEAD: &str = "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=UTF-8\">\
<title>My Activity</title></head><body><div class=\"mdl-grid\">\n";
/// The end of a `MyActivity.html` page.
pub const GEMINI_HTML_TAIL: &str = "</div></body></html>\n";

/// One `outer-cell` record of `MyActivity.html`, as the English Takeout writes it.
pub fn gemini_cell(prompt: &str, when: &str, answer_html: &str) -> String {
    format!(
        "<div class=\"outer-cell mdl-cell mdl-cell--12-col mdl-shadow--2dp\"><div class=\"mdl-grid\">\
<div class=\"header-cell mdl-cell mdl-cell--12-col\"><p class=\"mdl-typography--title\">Gemini Apps<br></p></div>\
<div class=\"content-cell mdl-cell mdl-cell--6-col mdl-typography--body-1\">Prompted&nbsp;{prompt}<br>{when}<br>{answer_html}</div>\
<div class=\"content-cell mdl-cell mdl-cell--6-col mdl-typography--body-1 mdl-typography--text-right\"></div>\
<div class=\"content-cell mdl-cell mdl-cell--12-col mdl-typography--caption\"><b>Products:</b><br>&emsp;Gemini Apps<br></div>\
</div></div>\n"
    )
}

/// A valid `MyActivity.html`: two records, newest first.
pub fn gemini_html_two() -> String {
    format!(
        "{GEMINI_HTML_HEAD}{}{}{GEMINI_HTML_TAIL}",
        gemini_cell("second question", "Jul 26, 2026, 9:07:57 AM CEST", "<p>The second answer, in full.</p>"),
        gemini_cell("first question", "Jul 26, 2026, 8:07:57 AM CEST", "<p>The first answer, in full.</p>"),
    )
}

// ---------------------------------------------------------------------------------------------
// memport's own formats

/// Where a memory format is written in `in/`.
fn memory_file_name(format: &str) -> &'static str {
    match format {
        "aimem" => "memory.aimem.json",
        "aimem-ndjson" => "memory.aimem.ndjson",
        "mif" => "memory.mif.json",
        "ump" => "memory.ump.json",
        "ump-ndjson" => "memory.ump.ndjson",
        "aime" => "memory.aime.json",
        "pam" => "store",
        "ump-md" => "records",
        other => panic!("not a memory format: {other}"),
    }
}

/// A valid memory-format input: the two-conversation ChatGPT export converted by memport
/// itself (so the checksums, ids and shapes are exactly what memport writes), in `in/`.
pub fn memory_input(dir: &Path, format: &str) -> PathBuf {
    let export = put(dir, "src/conversations.json", chatgpt_two());
    let output = dir.join("in").join(memory_file_name(format));
    std::fs::create_dir_all(dir.join("in")).expect("folder created");
    let result = Command::new(env!("CARGO_BIN_EXE_memport"))
        .arg("convert")
        .arg(export)
        .args(["--to", format, "--extract", "off", "-q", "-o"])
        .arg(&output)
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .output()
        .expect("memport runs");
    assert!(result.status.success(), "building the {format} input: {}", String::from_utf8_lossy(&result.stderr));
    std::fs::remove_dir_all(dir.join("src")).expect("scratch export removed");
    output
}

/// A memory-format input changed by `mutate`.
pub fn memory_input_mutated(dir: &Path, format: &str, mutate: impl FnOnce(&Path)) -> PathBuf {
    let path = memory_input(dir, format);
    mutate(path.as_path());
    path
}

/// The files of a folder, sorted by name.
pub fn files_in(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder).expect("readable folder").map(|entry| entry.expect("entry").path()).collect();
    files.sort();
    files
}

/// The second conversation file of a PAM store (`conversations/chatgpt-c2.json`).
pub fn pam_second_conversation(store: &Path) -> PathBuf {
    store.join("conversations/chatgpt-c2.json")
}

/// Points the store's index entry of the second conversation at `reference`.
pub fn pam_point_second_at(store: &Path, reference: &str) {
    let index = store.join("memory-store.json");
    let bytes = replace_bytes(&read(&index), b"conversations/chatgpt-c2.json", reference.as_bytes());
    std::fs::write(index, bytes).expect("rewritten");
}

/// The last `.ump.md` file of a folder, by name.
pub fn last_ump_md(folder: &Path) -> PathBuf {
    files_in(folder).pop().expect("a record file")
}

/// The export `in/conversations.json` and a pipeline file `pipe.toml` beside `in/` holding
/// `toml`; returns the pipeline file.
pub fn pipeline(dir: &Path, toml: impl AsRef<[u8]>) -> PathBuf {
    chatgpt_file(dir, chatgpt_two());
    put(dir, "pipe.toml", toml)
}
