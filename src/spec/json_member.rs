//! Finds a JSON member by its quoted name in raw bytes, without parsing: how a file's first
//! bytes name its format.

/// Whether `bytes` hold the member `"name"` followed (after `:` and any whitespace) by a value
/// starting with `value_prefix`. A quote inside a JSON string is escaped, so text that merely
/// mentions the member does not match.
pub fn has_member(bytes: &[u8], name: &str, value_prefix: &[u8]) -> bool {
    let quoted = format!("\"{name}\"");
    let skip_space = |rest: &[u8]| -> usize { rest.iter().take_while(|byte| byte.is_ascii_whitespace()).count() };
    memchr::memmem::find_iter(bytes, quoted.as_bytes()).any(|at| {
        let rest = &bytes[at + quoted.len()..];
        let Some(rest) = rest[skip_space(rest)..].strip_prefix(b":") else { return false };
        rest[skip_space(rest)..].starts_with(value_prefix)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_matches_with_any_spacing_and_a_mention_inside_a_string_does_not() {
        assert!(has_member(br#"{"schema" :  "portable-ai-memory"}"#, "schema", b"\"portable"));
        assert!(!has_member(br#"{"text":"\"schema\": \"portable-ai-memory\""}"#, "schema", b"\"portable"));
        assert!(has_member(br#"{"memories":[]}"#, "memories", b""));
        assert!(!has_member(br#"{"memories"}"#, "memories", b""));
    }
}
