//! Tells what a file holds from its first bytes, by structure and never by name: ChatGPT,
//! Claude and DeepSeek all ship a `conversations.json`, and a Takeout archive holds a
//! `MyActivity.json` for every Google product.
//!
//! Before that, an input must be something to read at all: [`check_regular_input`] refuses
//! devices, named pipes and sockets, and [`utf16_problem`] says when a file is UTF-16 (the
//! checks themselves are `validate::input_file`'s, shared with `memport validate`).

use std::io::Read;

use serde_json::Value;

use crate::sources::container::Entry;
use crate::sources::copilot::CsvLayout;
use crate::sources::json_array::ArrayFramer;
use crate::validate::input_file::{UTF16_SAMPLE, utf16_problem};

/// Whether `entry` (a file of a zip or folder that sniffed as nothing memport reads) starts as
/// UTF-16 text, so the "no export found" error can say so; false when it cannot be read.
pub fn entry_is_utf16(entry: &Entry) -> bool {
    let mut head = Vec::with_capacity(UTF16_SAMPLE);
    let read = entry.open().is_ok_and(|reader| reader.take(UTF16_SAMPLE as u64).read_to_end(&mut head).is_ok());
    read && utf16_problem(&head).is_some()
}

/// Product headers and product names that mark Gemini activity records (the header is
/// localized in some accounts; older records say Bard).
const GEMINI_MARKERS: [&str; 4] = ["Gemini", "Bard", "gemini.google.com", "bard.google.com"];

/// What a file's first bytes say it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    /// A JSON array of ChatGPT conversations (elements with `mapping`).
    ChatGptConversations,
    /// A JSON array of Claude conversations (`chat_messages`).
    ClaudeConversations,
    /// Claude `memories.json`: an array of memory objects or one bare object.
    ClaudeMemories,
    /// Claude `projects.json`: an array of projects.
    ClaudeProjects,
    /// One Claude project (`projects/<uuid>.json`).
    ClaudeProject,
    /// Grok `prod-grok-backend.json`: an object whose `conversations` member holds
    /// `{conversation, responses}` pairs.
    GrokBackend,
    /// A Copilot activity CSV, by its header row.
    CopilotCsv(CsvLayout),
    /// Google Takeout My Activity records of Gemini Apps (JSON).
    GeminiActivityJson,
    /// Google Takeout My Activity page of Gemini Apps (HTML).
    GeminiActivityHtml,
    /// An empty JSON array.
    EmptyArray,
    /// Something else.
    Other,
}

/// Tells what a file holds from its first bytes (up to a few hundred KiB).
pub fn sniff(prefix: &[u8]) -> Sniffed {
    let text = prefix.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(prefix);
    let Some(start) = text.iter().position(|byte| !byte.is_ascii_whitespace()) else { return Sniffed::Other };
    match text[start] {
        b'[' => sniff_array(&text[start..]),
        b'{' => sniff_object(&text[start..]),
        b'<' => sniff_html(&text[start..]),
        _ => sniff_csv(text),
    }
}

fn sniff_array(text: &[u8]) -> Sniffed {
    let mut framer = ArrayFramer::new(text);
    let first = loop {
        match framer.next_element() {
            Ok(Some(element)) => break element.bytes,
            Ok(None) => return Sniffed::EmptyArray,
            // Too deep to read (rejected later on its own): the next element tells.
            Err(error) if error.is_element_only() => {}
            // The first element is longer than the prefix: look for telling keys instead.
            Err(_) => return sniff_array_keys(text),
        }
    };
    // A damaged first element (a lone surrogate escape, a stray byte) is the decoder's business
    // to reject; the keys still say whose export it is.
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(&first) else { return sniff_array_keys(&first) };
    if object.contains_key("mapping") {
        Sniffed::ChatGptConversations
    } else if object.contains_key("chat_messages") {
        Sniffed::ClaudeConversations
    } else if object.contains_key("conversations_memory") || object.contains_key("project_memories") {
        Sniffed::ClaudeMemories
    } else if object.contains_key("is_starter_project") || object.contains_key("prompt_template") {
        Sniffed::ClaudeProjects
    } else if is_gemini_record(&object) {
        Sniffed::GeminiActivityJson
    } else {
        Sniffed::Other
    }
}

/// Classifies an array whose first element cannot be parsed, by the keys its text contains.
fn sniff_array_keys(text: &[u8]) -> Sniffed {
    let contains = |needle: &[u8]| memchr::memmem::find(text, needle).is_some();
    if contains(b"\"mapping\"") {
        Sniffed::ChatGptConversations
    } else if contains(b"\"chat_messages\"") {
        Sniffed::ClaudeConversations
    } else if contains(b"\"prompt_template\"") || contains(b"\"is_starter_project\"") {
        Sniffed::ClaudeProjects
    } else if contains(b"\"header\"") && contains(b"\"time\"") && GEMINI_MARKERS.iter().any(|marker| contains(marker.as_bytes())) {
        Sniffed::GeminiActivityJson
    } else {
        Sniffed::Other
    }
}

/// A Takeout My Activity record of Gemini Apps: `header` and `time`, with a Gemini or
/// Bard product, header or URL.
fn is_gemini_record(object: &serde_json::Map<String, Value>) -> bool {
    if !(object.contains_key("header") && object.contains_key("time")) {
        return false;
    }
    let mentions_gemini = |value: Option<&Value>| match value {
        Some(Value::String(text)) => GEMINI_MARKERS.iter().any(|marker| text.contains(marker)),
        Some(Value::Array(items)) => items.iter().any(|item| {
            let text = match item {
                Value::String(text) => Some(text.as_str()),
                Value::Object(inner) => inner.get("url").and_then(Value::as_str),
                _ => None,
            };
            text.is_some_and(|text| GEMINI_MARKERS.iter().any(|marker| text.contains(marker)))
        }),
        _ => false,
    };
    // The product decides: a Chrome record can link to gemini.google.com. Only a record without
    // a header or products falls back to its URLs.
    if ["header", "products"].iter().any(|key| object.contains_key(*key)) {
        return ["header", "products"].iter().any(|key| mentions_gemini(object.get(*key)));
    }
    ["titleUrl", "details"].iter().any(|key| mentions_gemini(object.get(*key)))
}

fn sniff_object(text: &[u8]) -> Sniffed {
    let head = &text[..text.len().min(4096)];
    let contains = |haystack: &[u8], needle: &[u8]| memchr::memmem::find(haystack, needle).is_some();
    // Grok: `{"conversations":[{"conversation":{…},"responses":[…]}…`, whatever the spacing.
    if contains(head, b"\"conversations\"") && contains(text, b"\"conversation\"") && contains(text, b"\"responses\"") {
        return Sniffed::GrokBackend;
    }
    if contains(head, b"\"conversations_memory\"") || contains(head, b"\"project_memories\"") {
        return Sniffed::ClaudeMemories;
    }
    if contains(text, b"\"is_starter_project\"") || contains(text, b"\"prompt_template\"") {
        return Sniffed::ClaudeProject;
    }
    Sniffed::Other
}

fn sniff_html(text: &[u8]) -> Sniffed {
    if memchr::memmem::find(text, b"outer-cell").is_none() {
        return Sniffed::Other;
    }
    // The product header of the first record (`<p class="mdl-typography--title">Gemini Apps<br>`):
    // a Chrome or YouTube page can mention gemini.google.com, but its header is its own product.
    // The first record's product header (`<p class="mdl-typography--title">Gemini Apps<br>`) or
    // its products caption: a Chrome or YouTube page can mention gemini.google.com, but its
    // header and products are its own.
    let text_after = |marker: &[u8], limit: usize| -> String {
        let Some(position) = memchr::memmem::find(text, marker) else { return String::new() };
        let rest = &text[position + marker.len()..];
        String::from_utf8_lossy(&rest[..rest.len().min(limit)]).into_owned()
    };
    let header = text_after(b"mdl-typography--title\">", 200);
    let header = header.split('<').next().unwrap_or("");
    let caption = text_after(b"mdl-typography--caption\">", 300);
    let caption = caption.split("</div").next().unwrap_or("");
    let names_gemini = |text: &str| text.contains("Gemini") || text.contains("Bard");
    if names_gemini(header) || names_gemini(caption) { Sniffed::GeminiActivityHtml } else { Sniffed::Other }
}

fn sniff_csv(text: &[u8]) -> Sniffed {
    let line_end = memchr::memchr(b'\n', text).unwrap_or(text.len());
    let header = String::from_utf8_lossy(&text[..line_end]);
    match CsvLayout::from_header(header.trim_end_matches('\r')) {
        Some(layout) => Sniffed::CopilotCsv(layout),
        None => Sniffed::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_by_content() {
        assert_eq!(sniff(b"\xEF\xBB\xBF [ {\"title\":\"x\",\"mapping\":{}}]"), Sniffed::ChatGptConversations);
        assert_eq!(sniff(b"[{\"uuid\":\"x\",\"chat_messages\":[]}]"), Sniffed::ClaudeConversations);
        assert_eq!(sniff(b"[ ]"), Sniffed::EmptyArray);
        assert_eq!(sniff(b"{\"mapping\":1}"), Sniffed::Other);
        assert_eq!(sniff(b"{\"conversations_memory\":\"x\"}"), Sniffed::ClaudeMemories);
        assert_eq!(sniff(b"[{\"conversations_memory\":\"x\"}]"), Sniffed::ClaudeMemories);
        assert_eq!(sniff(b"[{\"uuid\":\"p\",\"is_starter_project\":true}]"), Sniffed::ClaudeProjects);
        assert_eq!(sniff(b"{\"conversations\": [{\"conversation\":{},\"responses\":[]}]}"), Sniffed::GrokBackend);
        assert_eq!(sniff(b"\xEF\xBB\xBFConversation,Time,Author,Message\r\n"), Sniffed::CopilotCsv(CsvLayout::ActivityHistory));
        let gemini = br#"[{"header":"Gemini Apps","title":"Prompted hi","time":"2026-01-01T00:00:00.000Z"}]"#;
        assert_eq!(sniff(gemini), Sniffed::GeminiActivityJson);
        let youtube = br#"[{"header":"YouTube","title":"Watched x","time":"2026-01-01T00:00:00.000Z","products":["YouTube"]}]"#;
        assert_eq!(sniff(youtube), Sniffed::Other);
        let chrome = br#"[{"header":"Chrome","title":"Visited Gemini","titleUrl":"https://gemini.google.com/app/x","time":"2026-01-01T00:00:00.000Z"}]"#;
        assert_eq!(sniff(chrome), Sniffed::Other);
    }

    /// Guards detection of UTF-16 exports (a Copilot CSV saved as "Unicode text"): they get
    /// the conversion to run, not "no export found".
    #[test]
    fn a_utf16_file_is_named_as_such() {
        use crate::validate::input_file::UTF16_ADVICE;
        let csv: Vec<u8> = "\u{feff}Conversation,Time,Author,Message\r\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert_eq!(sniff(&csv), Sniffed::Other);
        assert_eq!(utf16_problem(&csv), Some(UTF16_ADVICE));
        let without_mark: Vec<u8> = "[{\"mapping\": {}}]".encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(utf16_problem(&without_mark), Some(UTF16_ADVICE));
        assert_eq!(utf16_problem(b"\xEF\xBB\xBFConversation,Time,Author,Message\r\n"), None);
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("copilot-activity-history.csv");
        std::fs::write(&path, &csv).unwrap();
        let entries = crate::sources::container::Container::File(path.clone()).entries().unwrap();
        assert!(entries.iter().all(entry_is_utf16));
        std::fs::write(&path, b"Conversation,Time,Author,Message\r\n").unwrap();
        assert!(!entries.iter().any(entry_is_utf16));
    }
}
