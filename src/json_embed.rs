//! Embedding JSON fragments that came from the input (provider fields, unknown content) in
//! output JSON, so that the output stays valid for strict readers whatever the input held.

use crate::jcs::write_string;

/// Embeds `json` as it is when it is JSON that strict readers accept, else as a string, so the
/// file stays valid whatever a decoder left there. (serde's `IgnoredAny` skips string escapes
/// without checking surrogates, hence the separate check.)
pub fn write_json_or_string(out: &mut Vec<u8>, json: &str) {
    let embeddable =
        !json.is_empty() && !has_unpaired_surrogate_escape(json.as_bytes()) && serde_json::from_str::<serde::de::IgnoredAny>(json).is_ok();
    if embeddable {
        out.extend_from_slice(json.as_bytes());
    } else {
        write_string(out, json);
    }
}

/// Whether `json` has a `\uD800`–`\uDFFF` escape that is not half of a high-low pair. Errs on
/// the side of yes (an escaped backslash before `u` also counts), which only costs a parse.
pub fn has_unpaired_surrogate_escape(json: &[u8]) -> bool {
    let escape_at = |position: usize| -> Option<u16> {
        let digits = json.get(position + 2..position + 6)?;
        if json.get(position..position + 2)? != b"\\u" {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let mut skip_until = 0;
    for position in memchr::memmem::find_iter(json, b"\\u") {
        if position < skip_until {
            continue;
        }
        match escape_at(position) {
            Some(0xD800..=0xDBFF) => match escape_at(position + 6) {
                Some(0xDC00..=0xDFFF) => skip_until = position + 12,
                _ => return true,
            },
            Some(0xDC00..=0xDFFF) => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_unpaired_surrogate_escapes_only() {
        assert!(!has_unpaired_surrogate_escape(br#"{"a":"\ud83d\ude00 ok \u00e9"}"#));
        assert!(has_unpaired_surrogate_escape(br#"{"a":"\ud83d x"}"#));
        assert!(has_unpaired_surrogate_escape(br#"{"a":"\ude00"}"#));
        assert!(has_unpaired_surrogate_escape(br#"{"a":"\ud83d"}"#));
        assert!(!has_unpaired_surrogate_escape(br#"{"a":"plain"}"#));
    }
}
