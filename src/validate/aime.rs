//! AIME v1.0 checks (memory-formats.md §5): the spec's `validateAIME()` (format, truthy
//! version, metadata and messages; each message with a truthy id, timestamp, role and content)
//! and the field tables behind the derived schema (roles, ISO 8601 times, counts, relationship
//! strengths), plus unique ids and relationship targets. Every problem is 422; the document is
//! parsed whole.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::RunError;
use crate::timefmt::parse_rfc3339;
use crate::validate::{Problem, Problems, Validation};

const ROLES: [&str; 3] = ["user", "assistant", "system"];

/// Validates one AIME document.
///
/// # Errors
/// I/O errors reading it.
pub fn validate_file(path: &Path) -> Result<Validation, RunError> {
    let display = path.display().to_string();
    let bytes = crate::remote::read_path(path).map_err(|error| RunError::read(&display, error))?;
    let mut checker = Checker::default();
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(root) => checker.check(&root),
        Err(error) => checker.problem("not_json", "", format!("not JSON: {error}")),
    }
    Ok(Validation { path: display, format: "aime", records: checker.records, problems: checker.problems, notices: checker.notices })
}

#[derive(Default)]
struct Checker {
    problems: Problems,
    notices: Vec<String>,
    records: u64,
}

impl Checker {
    fn problem(&mut self, code: &'static str, pointer: &str, message: impl Into<String>) {
        self.problems.push(Problem { status: 422, code, location: pointer.to_owned(), message: message.into() });
    }

    fn check(&mut self, root: &Value) {
        let Some(document) = root.as_object() else {
            self.problem("not_an_object", "", "an AIME document is a JSON object");
            return;
        };
        if document.get("format").and_then(Value::as_str) != Some("aime") {
            self.problem("wrong_format", "/format", "must be \"aime\"");
        }
        match document.get("version") {
            Some(Value::String(version)) if !version.is_empty() => {
                if version.split('.').next().and_then(|major| major.parse::<u32>().ok()).is_none_or(|major| major > 1) {
                    self.notices.push(format!("/version: `{version}` is newer than 1.0; the spec's validator only warns"));
                }
            }
            _ => self.problem("missing_member", "/version", "a non-empty version string is required"),
        }
        let metadata = document.get("metadata").and_then(Value::as_object);
        if metadata.is_none() {
            self.problem("missing_member", "/metadata", "a metadata object is required");
        }
        let encrypted = metadata.and_then(|metadata| metadata.get("encrypted")).and_then(Value::as_bool) == Some(true);
        let Some(messages) = document.get("messages").and_then(Value::as_array) else {
            if encrypted && document.get("data").is_some_and(Value::is_string) {
                self.notices.push("/data: an encrypted payload; its messages were not checked".to_owned());
            } else {
                self.problem("missing_member", "/messages", "a messages array is required");
            }
            return;
        };
        self.records = messages.len() as u64;
        if let Some(metadata) = metadata {
            self.check_metadata(metadata, messages.len());
        }
        let mut ids = HashSet::new();
        for (position, message) in messages.iter().enumerate() {
            let pointer = format!("/messages/{position}");
            let Some(message) = message.as_object() else {
                self.problem("not_an_object", &pointer, "a message is a JSON object");
                continue;
            };
            if let Some(id) = self.check_message(message, &pointer)
                && !ids.insert(id.to_owned())
            {
                self.problem("duplicate_id", &format!("{pointer}/id"), format!("message id `{id}` appears twice"));
            }
        }
        for (position, message) in messages.iter().enumerate() {
            let relationships = message.get("relationships").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            for (index, relationship) in relationships.iter().enumerate() {
                if let Some(target) = relationship.get("target").and_then(Value::as_str)
                    && !ids.contains(target)
                {
                    self.problem(
                        "dangling_reference",
                        &format!("/messages/{position}/relationships/{index}/target"),
                        format!("no message has id `{target}`"),
                    );
                }
            }
        }
    }

    fn check_metadata(&mut self, metadata: &Map<String, Value>, message_count: usize) {
        for name in ["created"] {
            if let Some(value) = metadata.get(name) {
                self.check_time(value, &format!("/metadata/{name}"));
            }
        }
        if let Some(range) = metadata.get("dateRange").and_then(Value::as_object) {
            for name in ["start", "end"] {
                if let Some(value) = range.get(name) {
                    self.check_time(value, &format!("/metadata/dateRange/{name}"));
                }
            }
        }
        match metadata.get("messageCount") {
            None => {}
            Some(count) if count.as_u64() == Some(message_count as u64) => {}
            Some(count) if count.as_u64().is_some() => {
                self.problem("count_mismatch", "/metadata/messageCount", format!("says {count}, the document has {message_count} messages"))
            }
            Some(_) => self.problem("wrong_type", "/metadata/messageCount", "must be a non-negative integer"),
        }
        for name in ["compressed", "encrypted"] {
            if metadata.get(name).is_some_and(|value| !value.is_boolean()) {
                self.problem("wrong_type", &format!("/metadata/{name}"), "must be true or false");
            }
        }
    }

    fn check_message<'m>(&mut self, message: &'m Map<String, Value>, pointer: &str) -> Option<&'m str> {
        let truthy_string = |name: &str| message.get(name).and_then(Value::as_str).filter(|text| !text.is_empty());
        for name in ["id", "timestamp", "role", "content"] {
            if truthy_string(name).is_none() {
                self.problem("missing_member", &format!("{pointer}/{name}"), format!("`{name}` must be a non-empty string"));
            }
        }
        if let Some(role) = truthy_string("role")
            && !ROLES.contains(&role)
        {
            self.problem("not_in_enum", &format!("{pointer}/role"), format!("`{role}` is not user, assistant or system"));
        }
        if let Some(timestamp) = message.get("timestamp").filter(|value| value.is_string()) {
            self.check_time(timestamp, &format!("{pointer}/timestamp"));
        }
        if message.get("metadata").is_some_and(|value| !value.is_object()) {
            self.problem("wrong_type", &format!("{pointer}/metadata"), "must be an object");
        }
        if let Some(relationships) = message.get("relationships") {
            match relationships.as_array() {
                None => self.problem("wrong_type", &format!("{pointer}/relationships"), "must be an array"),
                Some(relationships) => {
                    for (index, relationship) in relationships.iter().enumerate() {
                        let at = format!("{pointer}/relationships/{index}");
                        if relationship.get("type").and_then(Value::as_str).is_none()
                            || relationship.get("target").and_then(Value::as_str).is_none()
                        {
                            self.problem("missing_member", &at, "a relationship needs a type and a target");
                        }
                        if let Some(strength) = relationship.get("strength")
                            && !strength.as_f64().is_some_and(|value| (0.0..=1.0).contains(&value))
                        {
                            self.problem("out_of_range", &format!("{at}/strength"), "strength is a number from 0 to 1");
                        }
                    }
                }
            }
        }
        truthy_string("id")
    }

    fn check_time(&mut self, value: &Value, pointer: &str) {
        if value.as_str().and_then(parse_rfc3339).is_none() {
            self.problem("bad_date_time", pointer, format!("{value} is not an ISO 8601 date-time with a zone"));
        }
    }
}
