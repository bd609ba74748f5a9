//! Reads what regrouping needs of one Gemini activity record, its time and conversation URL,
//! without parsing the rest: the record's top-level members are walked by their quotes and
//! brackets (`json_walk`: a string is crossed from quote to quote, so a long escape-dense
//! answer costs one `memchr` per quote), and only `time`, `titleUrl` and `details` are parsed.
//! Whether the whole record is valid JSON is the decoder's question: it parses each record on
//! its own and rejects the ones that are not.

use crate::model::Micros;
use crate::sources::gemini::raw::RawKeys;
use crate::sources::json_walk::{skip_whitespace, value_end, walk_object};
use crate::sources::regroup::GroupKey;
use crate::timefmt::parse_rfc3339;

/// The members regrouping reads, as raw keys (with their quotes).
pub const KEY_MEMBERS: [&[u8]; 3] = [b"\"time\"", b"\"titleUrl\"", b"\"details\""];

/// The conversation a record belongs to and its time. A record whose members cannot be walked,
/// or whose key members cannot be read, has neither (it joins the keyless stream).
pub fn read_keys(record: &[u8]) -> (GroupKey, Option<Micros>) {
    // The key members, copied into a small object and parsed with the lenient model.
    let mut key_members = Vec::with_capacity(256);
    key_members.push(b'{');
    let walked = for_each_member(record, |raw_key, value| {
        if KEY_MEMBERS.contains(&raw_key) {
            if key_members.len() > 1 {
                key_members.push(b',');
            }
            key_members.extend_from_slice(raw_key);
            key_members.push(b':');
            key_members.extend_from_slice(value);
        }
    });
    key_members.push(b'}');
    if !walked {
        return (GroupKey::Title(String::new()), None);
    }
    keys_of_members(&key_members)
}

/// The conversation and time read from `members`, an object of a record's key members (as
/// [`read_keys`] gathers them, or as framing keeps them:
/// [`ArrayFramer::keeping_members`](crate::sources::json_array::ArrayFramer::keeping_members)).
pub fn keys_of_members(members: &[u8]) -> (GroupKey, Option<Micros>) {
    let keys: Option<RawKeys> = sonic_rs::from_slice(members).ok();
    let time = keys.as_ref().and_then(|keys| keys.time.as_deref()).and_then(parse_rfc3339);
    let key = match keys.as_ref().and_then(RawKeys::conversation_id) {
        Some(id) => GroupKey::Conversation(id),
        None => GroupKey::Title(String::new()),
    };
    (key, time)
}

/// Calls `visit` with the raw key (with its quotes) and raw value of each top-level member of
/// the object `record`. Returns false when `record` is not one object whose members can be
/// walked; values are not validated.
fn for_each_member<'a>(record: &'a [u8], mut visit: impl FnMut(&'a [u8], &'a [u8])) -> bool {
    let start = skip_whitespace(record, 0);
    let end = walk_object(record, start, |raw_key, value_start| {
        let end = value_end(record, value_start)?;
        visit(raw_key, &record[value_start..end]);
        Some(end)
    });
    end.is_some_and(|end| skip_whitespace(record, end) == record.len())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    use super::*;

    fn members(record: &str) -> Option<Vec<(String, String)>> {
        let mut found = Vec::new();
        let walked = for_each_member(record.as_bytes(), |name, value| {
            let name = &name[1..name.len() - 1];
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

    /// Short texts over JSON's structural characters: `{`, up to 11 fragments, then `}` or not.
    fn object_like_text() -> impl Strategy<Value = String> {
        let alphabet = vec!["{", "}", "[", "]", "\"", "\\", ":", ",", " ", "\n", "a", "1", "\"k\":", "\"s\"", "\\\""];
        (prop::collection::vec(prop::sample::select(alphabet), 0..12), any::<bool>())
            .prop_map(|(fragments, closed)| format!("{{{}{}", fragments.concat(), if closed { "}" } else { "" }))
    }

    #[test]
    fn walking_agrees_with_a_parser_on_generated_records() {
        // Never a panic, and every text a JSON parser reads as an object is walked to the same
        // member names and values. Closure style, so the objects can be counted over all cases.
        let objects = std::cell::Cell::new(0);
        proptest!(ProptestConfig::with_cases(20_000), |(text in object_like_text())| {
            let walked = members(&text);
            if let Ok(serde_json::Value::Object(parsed)) = serde_json::from_str::<serde_json::Value>(&text) {
                objects.set(objects.get() + 1);
                let walked = walked.ok_or_else(|| TestCaseError::fail(format!("{text:?} is an object")))?;
                let names: Vec<String> = walked.iter().map(|(name, _)| serde_json::from_str(&format!("\"{name}\"")).unwrap()).collect();
                let mut expected: Vec<&String> = parsed.keys().collect();
                let mut found: Vec<&String> = names.iter().collect();
                expected.sort();
                found.sort();
                found.dedup();
                prop_assert_eq!(found, expected, "{:?}", text);
                // A repeated name keeps its last value in the parser's map.
                for ((_, value), name) in walked.iter().zip(&names) {
                    if names.iter().filter(|other| *other == name).count() == 1 {
                        let value: serde_json::Value = serde_json::from_str(value).unwrap();
                        prop_assert_eq!(parsed.get(name), Some(&value), "{:?}", text);
                    }
                }
            }
        });
        // Cases stored after a failure run again and add to the count; it is a lower bound.
        let objects = objects.get();
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
    fn members_kept_while_framing_give_the_keys_a_walk_finds() {
        // Records built from key members (in any order, some repeated or of the wrong type)
        // and other members with nesting and escapes; framed keeping only the key members,
        // each gives the keys `read_keys` finds walking the whole record.
        let members = [
            r#""time":"2024-05-01T10:00:00.5Z""#,
            r#""time" : "2025-01-02T03:04:05Z""#,
            r#""time":17"#,
            r#""titleUrl":"https://gemini.google.com/app/t1""#,
            r#""details":[{"name":"x","url":"https://gemini.google.com/app/d1"}]"#,
            r#""details":[{"name":"Request","value":"say \"time\":1, {"}]"#,
            r#""details":"x""#,
            r#""title":"Prompted \"details\":[\\""#,
            r#""safeHtmlItem":[{"html":"\u003cp\u003e,\"titleUrl\":\"x\"}\\"}]"#,
            r#""nested":{"time":"2020-01-01T00:00:00Z","details":[]}"#,
            r#""n":-1.5e3"#,
        ];
        // Up to five members, joined by a comma or, one time in three, by a comma between
        // whitespace.
        let separator = prop_oneof![2 => Just(","), 1 => Just(" ,\n  ")];
        let record = (prop::collection::vec(prop::sample::select(members.to_vec()), 0..6), separator)
            .prop_map(|(picked, separator)| format!("{{{}}}", picked.join(separator)));
        // One array of 2,000 records generated once (not a property per record): the framer
        // reads them one after another, and the counts below hold over all of them.
        let mut runner = TestRunner::deterministic();
        let records = prop::collection::vec(record, 2_000).new_tree(&mut runner).expect("records are generated").current();
        let array = format!("[{}]", records.join(",\n"));
        let mut framer = crate::sources::json_array::ArrayFramer::new(array.as_bytes()).keeping_members(&KEY_MEMBERS);
        let mut kept = Vec::new();
        let (mut in_conversations, mut timed) = (0, 0);
        for record in &records {
            kept.clear();
            let (offset, _) = framer.next_element_into(&mut kept).unwrap().unwrap();
            assert_eq!((framer.bytes_consumed() - offset) as usize, record.len());
            let keys = keys_of_members(&kept);
            assert_eq!(keys, read_keys(record.as_bytes()), "{record}");
            in_conversations += usize::from(matches!(keys.0, GroupKey::Conversation(_)));
            timed += usize::from(keys.1.is_some());
        }
        assert!(framer.next_element_into(&mut kept).unwrap().is_none());
        assert!(in_conversations > 300 && timed > 300, "{in_conversations} in conversations, {timed} timed");
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
