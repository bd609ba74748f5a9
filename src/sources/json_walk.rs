//! A one-pass walk over an in-memory JSON document that finds members and value boundaries
//! without building values: it tracks only strings and brackets, and crosses a string from
//! quote to quote. Used where a lazy look at an element is enough: provider fields (the
//! element was already parsed once) and the keys of Gemini activity records (parsed fully
//! later). Values are not validated; any surprise simply ends the walk with `None`.

use crate::sources::json_array::{find_quote, trailing_backslashes};

/// The deepest nesting of arrays and objects in `bytes`, counted without recursion (strings are
/// crossed quote to quote). Records that are not framed by the array framer (NDJSON lines,
/// whole files) are measured with it before anything that recurses reads them.
pub fn deepest_nesting(bytes: &[u8]) -> u64 {
    let (mut depth, mut deepest, mut position) = (0u64, 0u64, 0usize);
    while let Some(distance) = memchr::memchr3(b'"', b'[', b'{', &bytes[position..]) {
        let at = position + distance;
        // The closing brackets before the next opening one (or string) lower the depth first.
        let closes = bytes[position..at].iter().filter(|&&byte| byte == b']' || byte == b'}').count() as u64;
        depth = depth.saturating_sub(closes);
        if bytes[at] == b'"' {
            let Some(end) = string_end(bytes, at) else { return deepest };
            position = end;
        } else {
            depth += 1;
            deepest = deepest.max(depth);
            position = at + 1;
        }
    }
    deepest
}

/// Position of the first non-whitespace byte at or after `pos`.
pub fn skip_whitespace(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(pos) {
        pos += 1;
    }
    pos
}

/// End (exclusive) of the string whose opening quote is at `start`.
pub fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut scan_from = start + 1;
    loop {
        let quote = scan_from + find_quote(bytes.get(scan_from..)?)?;
        // Only a quote ends a string: jump from quote to quote and count the backslashes before
        // each (answer HTML is mostly `\u003c` escapes). Every scan starts at a byte that is not
        // escaped, so those backslashes are all in this window.
        if trailing_backslashes(&bytes[scan_from..quote]).is_multiple_of(2) {
            return Some(quote + 1);
        }
        scan_from = quote + 1;
    }
}

/// End (exclusive) of the value starting at `start` (no leading whitespace).
pub fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match *bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut pos = start;
            while let Some(&byte) = bytes.get(pos) {
                match byte {
                    b'"' => {
                        pos = string_end(bytes, pos)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(pos + 1);
                        }
                    }
                    _ => {}
                }
                pos += 1;
            }
            None
        }
        _ => {
            let mut pos = start;
            while let Some(&byte) = bytes.get(pos) {
                if matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                pos += 1;
            }
            // An empty value (`{"a":}`) is no value.
            (pos > start).then_some(pos)
        }
    }
}

/// Walks the members of the object starting at `start` (its `{`). For each member `visit` gets
/// the raw key (with its quotes) and the value's start, and returns the value's end: it may
/// descend into the value itself or call [`value_end`]. Returns the object's end.
pub fn walk_object<'a>(bytes: &'a [u8], start: usize, mut visit: impl FnMut(&'a [u8], usize) -> Option<usize>) -> Option<usize> {
    if bytes.get(start) != Some(&b'{') {
        return None;
    }
    let mut pos = skip_whitespace(bytes, start + 1);
    if bytes.get(pos) == Some(&b'}') {
        return Some(pos + 1);
    }
    loop {
        if bytes.get(pos) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, pos)?;
        let key = &bytes[pos..key_end];
        pos = skip_whitespace(bytes, key_end);
        if bytes.get(pos) != Some(&b':') {
            return None;
        }
        let value_start = skip_whitespace(bytes, pos + 1);
        let end = visit(key, value_start)?;
        pos = skip_whitespace(bytes, end);
        match bytes.get(pos) {
            Some(b',') => pos = skip_whitespace(bytes, pos + 1),
            Some(b'}') => return Some(pos + 1),
            _ => return None,
        }
    }
}

/// The text of a raw key (quotes included), unescaped when it needs to be.
pub fn key_text(raw_key: &[u8]) -> Option<String> {
    let inner = raw_key.get(1..raw_key.len().checked_sub(1)?)?;
    if inner.contains(&b'\\') { serde_json::from_slice(raw_key).ok() } else { std::str::from_utf8(inner).ok().map(str::to_owned) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_end_after_strings_with_escapes_and_nested_brackets() {
        let text = br#"{"a":"x\"}]","b":[1,{"c":"]"}],"d":-1.5e3 }"#;
        let mut seen = Vec::new();
        let end = walk_object(text, 0, |key, start| {
            let end = value_end(text, start)?;
            seen.push((key_text(key).unwrap(), String::from_utf8(text[start..end].to_vec()).unwrap()));
            Some(end)
        });
        assert_eq!(end, Some(text.len()));
        assert_eq!(seen, [("a".into(), r#""x\"}]""#.into()), ("b".into(), r#"[1,{"c":"]"}]"#.into()), ("d".into(), "-1.5e3".into())]);
    }

    #[test]
    fn broken_input_ends_the_walk() {
        assert_eq!(walk_object(br#"{"a":"unterminated"#, 0, |_, start| value_end(br#"{"a":"unterminated"#, start)), None);
        assert_eq!(walk_object(b"[1]", 0, |_, _| None), None);
        assert_eq!(key_text(br#""a\u0041""#).as_deref(), Some("aA"));
    }

    #[test]
    fn nesting_is_measured_without_counting_brackets_in_strings() {
        assert_eq!(deepest_nesting(br#"{"a":[1,{"b":"]]]{{{"}],"c":[[[]]]}"#), 4);
        assert_eq!(deepest_nesting(b"[][][]"), 1);
        assert_eq!(deepest_nesting(b"42"), 0);
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(deepest_nesting(deep.as_bytes()), 100_000);
    }
}
