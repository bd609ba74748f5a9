//! RFC 8785 (JCS) canonical JSON: sorted keys, no whitespace, ECMAScript number form.
//!
//! AIMEM checksums and PAM integrity hash the canonical form of parsed JSON, never file bytes.
//! Writers in this crate emit records whose fields are declared in canonical order and escape
//! their strings with [`write_string`] (a measured hot-path kernel); parsed values (validation,
//! PAM's memory checksum, signatures) are canonicalized by the `serde_json_canonicalizer` crate.

use serde_json::Value;

/// Appends the canonical form of `value` to `out` (serde_json_canonicalizer).
pub fn write_canonical(out: &mut Vec<u8>, value: &Value) {
    // The canonicalizer fails only on NaN or infinite numbers, which a parsed `Value` cannot
    // hold, and on write errors, which a `Vec` never has.
    #[expect(clippy::expect_used, reason = "a parsed Value has only finite numbers and a Vec never fails to write")]
    serde_json_canonicalizer::to_writer(value, out).expect("a Value always has a canonical form");
}

/// The canonical form of `value` as bytes.
pub fn to_canonical_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write_canonical(&mut out, value);
    out
}

/// Writes `["a","b",…]` (strings escaped as [`write_string`] does).
pub fn write_string_array<'a>(out: &mut Vec<u8>, items: impl IntoIterator<Item = &'a str>) {
    out.push(b'[');
    for (index, item) in items.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_string(out, item);
    }
    out.push(b']');
}

/// Writes a JSON string escaping only `"`, `\`, and control characters, as JCS requires.
///
/// The escaping is sonic-rs's vectorized string formatter, which escapes exactly that set with
/// the short forms (`\b \t \n \f \r`) and lowercase `\u00xx` (checked against the bytewise
/// reference in the tests). It reserves six bytes per input byte, so long texts are handed to
/// it in pieces: a message of many megabytes must not reserve six times its size.
pub fn write_string(out: &mut Vec<u8>, text: &str) {
    use sonic_rs::format::{CompactFormatter, Formatter};
    /// Largest piece escaped at once; its worst case (`\u00xx` for every byte) is 96 KiB.
    const PIECE: usize = 16 * 1024;
    out.reserve(text.len() + 2);
    out.push(b'"');
    let mut rest = text;
    while !rest.is_empty() {
        let mut split = rest.len().min(PIECE);
        while !rest.is_char_boundary(split) {
            split -= 1;
        }
        let (piece, after) = rest.split_at(split);
        // Writing into a Vec cannot fail: its `WriteExt` only reserves.
        let _ = CompactFormatter.write_string_fast(out, piece, false);
        rest = after;
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The bytewise JCS escaping `write_string` must agree with.
    fn reference_string(text: &str) -> String {
        let mut out = String::from('"');
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    fn canonical(value: Value) -> String {
        String::from_utf8(to_canonical_vec(&value)).unwrap()
    }

    #[test]
    fn sorts_keys_and_formats_numbers_like_ecmascript() {
        assert_eq!(canonical(json!({"b": 1, "a": 2})), r#"{"a":2,"b":1}"#);
        assert_eq!(canonical(json!({"v": 1.0})), r#"{"v":1}"#);
        assert_eq!(canonical(json!([0.00005, 1e-7, 0.85])), "[0.00005,1e-7,0.85]");
        let parsed: Value = serde_json::from_str("[0.9500000000000001, 9007199254740993, 1e21]").unwrap();
        assert_eq!(canonical(parsed), "[0.9500000000000001,9007199254740992,1e+21]");
    }

    #[test]
    fn vectorized_escaping_agrees_with_bytewise_escaping() {
        let every_char_below_0x80: String = (0u8..0x80).map(char::from).collect();
        // Longer than one piece, with a multi-byte character across the piece boundary.
        let across_pieces = format!("{}é€😀\n{}", "a".repeat(16 * 1024 - 1), "\"b\\".repeat(20_000));
        let samples = [
            "",
            "plain text that is long enough",
            "tab\there and more text",
            "q\"uote in the middle of it",
            "back\\slash somewhere far along",
            "\u{1f}\u{7f}é€😀 trailing words",
            "abcdefgh\n",
            "x\n\n\"\\\u{0}yz1234567890\t\r\u{8}\u{c}end",
            "\"\"\"\"\"\"\"\"\"\\\\\\\\\\\\\\\\\\",
            "é€😀é€😀\u{1}é€😀é€😀\n",
            &every_char_below_0x80,
            &across_pieces,
        ];
        for sample in samples {
            let mut fast = b"before".to_vec();
            write_string(&mut fast, sample);
            let written = String::from_utf8(fast).unwrap();
            assert_eq!(written, format!("before{}", reference_string(sample)), "{sample:?}");
            assert_eq!(written["before".len()..], serde_json::to_string(sample).unwrap(), "{sample:?}");
        }
    }

    #[test]
    fn escapes_only_what_jcs_escapes() {
        assert_eq!(canonical(json!("a/é\u{1}\n\"")), "\"a/é\\u0001\\n\\\"\"");
    }

    #[test]
    fn sorts_by_utf16_code_units() {
        // U+1F600 (surrogates D83D DE00) sorts before U+FF61 in UTF-16, after it in UTF-8.
        let value = json!({"\u{FF61}": 2, "\u{1F600}": 1});
        assert_eq!(canonical(value), "{\"\u{1F600}\":1,\"\u{FF61}\":2}");
    }
}
