//! The building blocks of the PAM and UMP checks: a problem list that knows which file it is in, and
//! the schema rules (required members, closed objects, enums, patterns, date-times) written
//! out in Rust, so `memport validate` needs no schema files at run time.

use serde_json::{Map, Value};

use crate::timefmt::parse_rfc3339;
use crate::validate::{Problem, Problems};

/// Problems and notices of one file, located by JSON pointer within it.
pub struct Findings<'a> {
    /// The file's name as shown in locations (`memory-store.json`, `conversations/x.json`).
    pub file: String,
    /// Problems of the whole validation.
    pub problems: &'a mut Problems,
    /// Notices of the whole validation.
    pub notices: &'a mut Vec<String>,
}

impl Findings<'_> {
    /// A schema problem (422).
    pub fn malformed(&mut self, code: &'static str, pointer: &str, message: impl Into<String>) {
        self.problems.push(Problem { status: 422, code, location: format!("{}#{pointer}", self.file), message: message.into() });
    }

    /// A hash or checksum that does not match the content (409).
    pub fn mismatch(&mut self, code: &'static str, pointer: &str, message: impl Into<String>) {
        self.problems.push(Problem { status: 409, code, location: format!("{}#{pointer}", self.file), message: message.into() });
    }

    /// Something the reference tools warn about but accept.
    pub fn notice(&mut self, pointer: &str, message: impl AsRef<str>) {
        self.notices.push(format!("{}#{pointer}: {}", self.file, message.as_ref()));
    }

    /// `value` as an object, or a problem.
    pub fn object<'v>(&mut self, value: &'v Value, pointer: &str) -> Option<&'v Map<String, Value>> {
        let object = value.as_object();
        if object.is_none() {
            self.malformed("not_an_object", pointer, "must be a JSON object");
        }
        object
    }

    /// Checks that `object` has every `required` member and nothing outside `allowed`.
    pub fn members(&mut self, object: &Map<String, Value>, pointer: &str, required: &[&str], allowed: &[&str]) {
        for name in required {
            if !object.contains_key(*name) {
                self.malformed("missing_member", pointer, format!("`{name}` is required"));
            }
        }
        for name in object.keys() {
            if !allowed.contains(&name.as_str()) {
                self.malformed("unknown_member", &join(pointer, name), format!("`{name}` is not a member the schema allows here"));
            }
        }
    }

    /// A string member, if present and a string; a problem when present and not a string (or
    /// null when `nullable`).
    pub fn string<'v>(&mut self, object: &'v Map<String, Value>, name: &str, pointer: &str, nullable: bool) -> Option<&'v str> {
        match object.get(name) {
            None => None,
            Some(Value::String(text)) => Some(text),
            Some(Value::Null) if nullable => None,
            Some(_) => {
                self.malformed("wrong_type", &join(pointer, name), if nullable { "must be a string or null" } else { "must be a string" });
                None
            }
        }
    }

    /// A string member that must be one of `allowed`.
    pub fn one_of(&mut self, object: &Map<String, Value>, name: &str, pointer: &str, allowed: &[&str], nullable: bool) {
        if let Some(text) = self.string(object, name, pointer, nullable)
            && !allowed.contains(&text)
        {
            self.malformed("not_in_enum", &join(pointer, name), format!("`{text}` is not one of {}", allowed.join(", ")));
        }
    }

    /// A string member that must pass `check`, described by `what` in the message.
    pub fn matching(
        &mut self,
        object: &Map<String, Value>,
        name: &str,
        pointer: &str,
        nullable: bool,
        what: &str,
        check: fn(&str) -> bool,
    ) {
        if let Some(text) = self.string(object, name, pointer, nullable)
            && !check(text)
        {
            self.malformed("bad_pattern", &join(pointer, name), format!("`{text}` is not {what}"));
        }
    }

    /// An RFC 3339 date-time member; returns its value in microseconds.
    pub fn date_time(&mut self, object: &Map<String, Value>, name: &str, pointer: &str, nullable: bool) -> Option<i64> {
        let text = self.string(object, name, pointer, nullable)?;
        let parsed = parse_rfc3339(text);
        if parsed.is_none() {
            self.malformed("bad_date_time", &join(pointer, name), format!("`{text}` is not an RFC 3339 date-time"));
        }
        parsed
    }

    /// An array member (`None` when absent); a problem when present and not an array.
    pub fn array<'v>(&mut self, object: &'v Map<String, Value>, name: &str, pointer: &str) -> Option<&'v Vec<Value>> {
        match object.get(name) {
            None => None,
            Some(Value::Array(items)) => Some(items),
            Some(_) => {
                self.malformed("wrong_type", &join(pointer, name), "must be an array");
                None
            }
        }
    }

    /// A non-negative integer member, if present.
    pub fn count(&mut self, object: &Map<String, Value>, name: &str, pointer: &str, nullable: bool) -> Option<u64> {
        match object.get(name) {
            None => None,
            Some(Value::Null) if nullable => None,
            Some(value) => {
                let count = value.as_u64();
                if count.is_none() {
                    self.malformed("wrong_type", &join(pointer, name), "must be a non-negative integer");
                }
                count
            }
        }
    }

    /// A list of tags: strings of `^[a-z0-9][a-z0-9_-]*$`, each once.
    pub fn tags(&mut self, object: &Map<String, Value>, pointer: &str) {
        let Some(tags) = self.array(object, "tags", pointer) else { return };
        let mut seen = std::collections::HashSet::new();
        for (position, tag) in tags.iter().enumerate() {
            let at = format!("{pointer}/tags/{position}");
            match tag.as_str() {
                Some(text) if is_tag(text) => {
                    if !seen.insert(text) {
                        self.malformed("duplicate_tag", &at, format!("tag `{text}` appears twice"));
                    }
                }
                _ => self.malformed("bad_pattern", &at, "tags are strings of a-z, 0-9, `_` and `-`, starting with a letter or digit"),
            }
        }
    }
}

/// `pointer` + `/` + `name`, escaped per RFC 6901.
pub fn join(pointer: &str, name: &str) -> String {
    format!("{pointer}/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// `^[0-9]+\.[0-9]+(-(rc|alpha|beta)[0-9]*)?$`
pub fn is_schema_version(text: &str) -> bool {
    let (core, suffix) = text.split_once('-').map_or((text, None), |(core, suffix)| (core, Some(suffix)));
    let core_ok = core.split_once('.').is_some_and(|(major, minor)| is_digits(major) && is_digits(minor));
    let suffix_ok = suffix.is_none_or(|suffix| {
        ["rc", "alpha", "beta"]
            .iter()
            .any(|label| suffix.strip_prefix(label).is_some_and(|rest| rest.bytes().all(|byte| byte.is_ascii_digit())))
    });
    core_ok && suffix_ok
}

/// `^sha256:[a-f0-9]{64}$`
pub fn is_sha256_label(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f')))
}

/// `^[a-z0-9_-]{2,32}$` (platform and provider names).
pub fn is_platform(text: &str) -> bool {
    (2..=32).contains(&text.len()) && text.bytes().all(|byte| matches!(byte, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

/// `^[a-zA-Z0-9_-]+/[0-9]+\.[0-9]+\.[0-9]+$` (`exported_by`, `extractor`, `importer`).
pub fn is_tool_version(text: &str) -> bool {
    text.split_once('/').is_some_and(|(name, version)| {
        !name.is_empty()
            && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-'))
            && version.split('.').count() == 3
            && version.split('.').all(is_digits)
    })
}

/// `^did:[a-z0-9]+:.+$`
pub fn is_did(text: &str) -> bool {
    text.strip_prefix("did:").and_then(|rest| rest.split_once(':')).is_some_and(|(method, id)| {
        !method.is_empty() && method.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit()) && !id.is_empty()
    })
}

/// `^[a-z0-9][a-z0-9_-]*$`
pub fn is_tag(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes.next().is_some_and(|first| first.is_ascii_lowercase() || first.is_ascii_digit())
        && bytes.all(|byte| matches!(byte, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_agree_with_the_schema() {
        assert!(is_schema_version("1.0") && is_schema_version("2.10-rc1") && is_schema_version("1.0-beta"));
        assert!(!is_schema_version("1") && !is_schema_version("1.0-gamma") && !is_schema_version("v1.0"));
        assert!(is_sha256_label(&format!("sha256:{}", "a".repeat(64))) && !is_sha256_label(&format!("sha256:{}", "A".repeat(64))));
        assert!(is_platform("chatgpt") && !is_platform("x") && !is_platform("ChatGPT"));
        assert!(is_tool_version("memport/0.1.0") && !is_tool_version("memport/0.1") && !is_tool_version("/1.2.3"));
        assert!(is_did("did:key:z6Mk") && !is_did("did::x") && !is_did("did:key:"));
        assert!(is_tag("rust_lang-2") && !is_tag("-x") && !is_tag("Rust") && !is_tag(""));
    }
}
