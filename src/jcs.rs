//! RFC 8785 (JCS) canonical JSON: sorted keys, no whitespace, ECMAScript number form.
//!
//! AIMEM checksums and PAM integrity hash the canonical form of parsed JSON, never file bytes.
//! Writers in this crate emit structs whose fields are declared in canonical order; this module
//! canonicalizes arbitrary values for validation and for PAM's memory checksum.

use serde_json::Value;

/// Appends the canonical form of `value` to `out`.
pub fn write_canonical(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => write_number(out, number),
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            out.push(b'[');
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push(b',');
                }
                write_canonical(out, item);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            let mut keys: Vec<&String> = members.keys().collect();
            // RFC 8785 sorts by UTF-16 code units.
            keys.sort_by(|left, right| left.encode_utf16().cmp(right.encode_utf16()));
            out.push(b'{');
            for (position, key) in keys.into_iter().enumerate() {
                if position > 0 {
                    out.push(b',');
                }
                write_string(out, key);
                out.push(b':');
                if let Some(member) = members.get(key) {
                    write_canonical(out, member);
                }
            }
            out.push(b'}');
        }
    }
}

/// The canonical form of `value` as bytes.
pub fn to_canonical_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write_canonical(&mut out, value);
    out
}

/// Largest integer an IEEE double holds exactly; beyond it JCS writes the double's form.
const MAX_SAFE_INTEGER: u64 = 1 << 53;

fn write_number(out: &mut Vec<u8>, number: &serde_json::Number) {
    if let Some(integer) = number.as_i64().filter(|integer| integer.unsigned_abs() <= MAX_SAFE_INTEGER) {
        out.extend_from_slice(integer.to_string().as_bytes());
    } else if let Some(integer) = number.as_u64().filter(|integer| *integer <= MAX_SAFE_INTEGER) {
        out.extend_from_slice(integer.to_string().as_bytes());
    } else if let Some(float) = number.as_f64() {
        let mut buffer = ryu_js::Buffer::new();
        out.extend_from_slice(buffer.format(float).as_bytes());
    }
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
pub fn write_string(out: &mut Vec<u8>, text: &str) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut run_start = 0;
    let mut position = 0;
    while position < bytes.len() {
        // Skip eight bytes at a time while none of them needs escaping.
        if position + 8 <= bytes.len() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[position..position + 8]);
            let mask = escape_mask(u64::from_le_bytes(word));
            if mask == 0 {
                position += 8;
                continue;
            }
            // The lowest flagged byte is exact (see `escape_mask`): jump straight to it.
            position += (mask.trailing_zeros() / 8) as usize;
        }
        let byte = bytes[position];
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => {
                position += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[run_start..position]);
        if escape.is_empty() {
            const DIGITS: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(DIGITS[usize::from(byte >> 4)]);
            out.push(DIGITS[usize::from(byte & 0x0f)]);
        } else {
            out.extend_from_slice(escape);
        }
        position += 1;
        run_start = position;
    }
    out.extend_from_slice(&bytes[run_start..]);
    out.push(b'"');
}

/// The high bit of each byte of `word` that is below 0x20, `"` or `\` (SWAR: the classic
/// has-zero-byte test). Borrows can flag bytes above a real match but never below it, so the
/// lowest flagged byte is always one that needs escaping.
fn escape_mask(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |value: u64| value.wrapping_sub(ONES) & !value & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    let quote = has_zero(word ^ (ONES * u64::from(b'"')));
    let backslash = has_zero(word ^ (ONES * u64::from(b'\\')));
    below_space | quote | backslash
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn word_scan_agrees_with_bytewise_escaping() {
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
        ];
        for sample in samples {
            let mut fast = Vec::new();
            write_string(&mut fast, sample);
            assert_eq!(String::from_utf8(fast).unwrap(), serde_json::to_string(sample).unwrap(), "{sample:?}");
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
