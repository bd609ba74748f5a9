//! Reads what regrouping needs of one Gemini activity record, its time and conversation URL,
//! without parsing the rest: the record's top-level members are walked by their quotes and
//! brackets (a string is crossed from quote to quote, so a long escape-dense answer costs one
//! `memchr` per quote), and only `time`, `titleUrl` and `details` are parsed. Whether the whole
//! record is valid JSON is the decoder's question: it parses each record on its own and
//! rejects the ones that are not.

use memchr::memchr;

use crate::model::Micros;
use crate::sources::gemini::raw::RawKeys;
use crate::sources::json_array::trailing_backslashes;
use crate::sources::regroup::GroupKey;
use crate::timefmt::parse_rfc3339;

/// The members regrouping reads.
const KEY_MEMBERS: [&[u8]; 3] = [b"time", b"titleUrl", b"details"];

/// The conversation a record belongs to and its time. A record whose members cannot be walked,
/// or whose key members cannot be read, has neither (it joins the keyless stream).
pub fn read_keys(record: &[u8]) -> (GroupKey, Option<Micros>) {
    // The key members, copied into a small object and parsed with the lenient model.
    let mut key_members = Vec::with_capacity(256);
    key_members.push(b'{');
    let walked = for_each_member(record, |name, value| {
        if KEY_MEMBERS.contains(&name) {
            if key_members.len() > 1 {
                key_members.push(b',');
            }
            key_members.push(b'"');
            key_members.extend_from_slice(name);
            key_members.extend_from_slice(b"\":");
            key_members.extend_from_slice(value);
        }
    });
    key_members.push(b'}');
    let keys: Option<RawKeys> = if walked { sonic_rs::from_slice(&key_members).ok() } else { None };
    let time = keys.as_ref().and_then(|keys| keys.time.as_deref()).and_then(parse_rfc3339);
    let key = match keys.as_ref().and_then(RawKeys::conversation_id) {
        Some(id) => GroupKey::Conversation(id),
        None => GroupKey::Title(String::new()),
    };
    (key, time)
}

/// Calls `visit` with the raw name (between its quotes) and raw value of each top-level member
/// of the object `record`. Returns false when `record` is not an object whose members can be
/// walked; values are not validated.
fn for_each_member<'a>(record: &'a [u8], mut visit: impl FnMut(&'a [u8], &'a [u8])) -> bool {
    let mut position = skip_whitespace(record, 0);
    if record.get(position) != Some(&b'{') {
        return false;
    }
    position = skip_whitespace(record, position + 1);
    if record.get(position) == Some(&b'}') {
        return skip_whitespace(record, position + 1) == record.len();
    }
    loop {
        if record.get(position) != Some(&b'"') {
            return false;
        }
        let Some(name_end) = string_end(record, position) else { return false };
        let name = &record[position + 1..name_end - 1];
        position = skip_whitespace(record, name_end);
        if record.get(position) != Some(&b':') {
            return false;
        }
        let value_start = skip_whitespace(record, position + 1);
        let Some(value_end) = value_end(record, value_start) else { return false };
        visit(name, &record[value_start..value_end]);
        position = skip_whitespace(record, value_end);
        match record.get(position) {
            Some(b',') => position = skip_whitespace(record, position + 1),
            Some(b'}') => return skip_whitespace(record, position + 1) == record.len(),
            _ => return false,
        }
    }
}

fn skip_whitespace(bytes: &[u8], mut position: usize) -> usize {
    while bytes.get(position).is_some_and(|byte| matches!(byte, b' ' | b'\n' | b'\r' | b'\t')) {
        position += 1;
    }
    position
}

/// Where the string whose opening quote is at `open` ends (just past its closing quote).
fn string_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut scan_from = open + 1;
    loop {
        let quote = scan_from + memchr(b'"', bytes.get(scan_from..)?)?;
        // Every scan starts at a byte that is not escaped, so the backslashes right before the
        // quote are all in this window.
        if trailing_backslashes(&bytes[scan_from..quote]).is_multiple_of(2) {
            return Some(quote + 1);
        }
        scan_from = quote + 1;
    }
}

/// Where the value starting at `start` ends.
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match *bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut position = start;
            loop {
                match *bytes.get(position)? {
                    b'"' => {
                        position = string_end(bytes, position)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(position + 1);
                        }
                    }
                    _ => {}
                }
                position += 1;
            }
        }
        _ => {
            let length =
                bytes[start..].iter().take_while(|byte| !matches!(byte, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')).count();
            (length > 0).then_some(start + length)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(record: &str) -> Option<Vec<(String, String)>> {
        let mut found = Vec::new();
        let walked = for_each_member(record.as_bytes(), |name, value| {
            found.push((String::from_utf8_lossy(name).into_owned(), String::from_utf8_lossy(value).into_owned()));
        });
        walked.then_some(found)
    }

    #[test]
    fn walks_top_level_members_across_escapes_and_nesting() {
        let record =
            r#" { "title" : "say \"hi\" \\" , "details":[{"url":"u}]"}],"n":-1.5e3,"b":true,"html":"\u003cp\u003e\\\"]}","e":{} } "#;
        let found = members(record).unwrap();
        let names: Vec<&str> = found.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["title", "details", "n", "b", "html", "e"]);
        assert_eq!(found[0].1, r#""say \"hi\" \\""#);
        assert_eq!(found[1].1, r#"[{"url":"u}]"}]"#);
        assert_eq!(found[2].1, "-1.5e3");
        assert_eq!(found[4].1, r#""\u003cp\u003e\\\"]}""#);
        assert_eq!(found[5].1, "{}");
        assert_eq!(members("{}"), Some(Vec::new()));
    }

    #[test]
    fn walking_agrees_with_a_parser_on_generated_records() {
        // Short texts over JSON's structural characters, from a fixed-seed generator: never a
        // panic, and every text a JSON parser reads as an object is walked to the same member
        // names and values.
        let alphabet: Vec<&str> = vec!["{", "}", "[", "]", "\"", "\\", ":", ",", " ", "\n", "a", "1", "\"k\":", "\"s\"", "\\\""];
        let mut state: u64 = 0x853c_49e6_748f_ea9b;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        let mut objects = 0;
        for _ in 0..20_000 {
            let mut text = String::from("{");
            for _ in 0..next() % 12 {
                text.push_str(alphabet[next() % alphabet.len()]);
            }
            if next() % 2 == 0 {
                text.push('}');
            }
            let walked = members(&text);
            if let Ok(serde_json::Value::Object(parsed)) = serde_json::from_str::<serde_json::Value>(&text) {
                objects += 1;
                let walked = walked.unwrap_or_else(|| panic!("{text:?} is an object"));
                let names: Vec<String> = walked.iter().map(|(name, _)| serde_json::from_str(&format!("\"{name}\"")).unwrap()).collect();
                let mut expected: Vec<&String> = parsed.keys().collect();
                let mut found: Vec<&String> = names.iter().collect();
                expected.sort();
                found.sort();
                found.dedup();
                assert_eq!(found, expected, "{text:?}");
                // A repeated name keeps its last value in the parser's map.
                for ((_, value), name) in walked.iter().zip(&names) {
                    if names.iter().filter(|other| *other == name).count() == 1 {
                        let value: serde_json::Value = serde_json::from_str(value).unwrap();
                        assert_eq!(parsed.get(name), Some(&value), "{text:?}");
                    }
                }
            }
        }
        assert!(objects > 100, "only {objects} generated texts were objects");
    }

    #[test]
    fn records_that_cannot_be_walked_have_no_keys() {
        for broken in [r#"{"time":"2024-01-01T00:00:00Z""#, r#"{"time" "x"}"#, "[1]", r#"{"a":"unclosed}"#, "{} x", r#"{"a":}"#, ""] {
            assert_eq!(members(broken), None, "{broken}");
            assert_eq!(read_keys(broken.as_bytes()), (GroupKey::Title(String::new()), None), "{broken}");
        }
    }

    #[test]
    fn reads_time_and_conversation_from_either_place() {
        let from_details = r#"{"title":"Prompted x","time":"2024-05-01T10:00:00.5Z","details":[{"name":"n","url":"https://gemini.google.com/app/abc"}],"safeHtmlItem":[{"html":"\u003cp\u003e"}]}"#;
        let (key, time) = read_keys(from_details.as_bytes());
        assert_eq!(key, GroupKey::Conversation("abc".into()));
        assert_eq!(time, parse_rfc3339("2024-05-01T10:00:00.5Z"));
        let from_title_url = r#"{"titleUrl":"https://gemini.google.com/app/def","time":"2024-05-01T10:00:00Z"}"#;
        assert_eq!(read_keys(from_title_url.as_bytes()).0, GroupKey::Conversation("def".into()));
        // A value of the wrong type is read leniently, as by the full model.
        assert_eq!(read_keys(br#"{"time":12,"details":"x"}"#), (GroupKey::Title(String::new()), None));
    }
}
