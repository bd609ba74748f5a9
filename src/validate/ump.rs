//! UMP 0.1 checks (memory-formats.md §4): every record against the 0.1 schema's rules (closed
//! objects at every level, the id pattern, kinds, scopes, times, lifecycle ranges, provenance,
//! consent, an integrity block complete or absent) plus unique ids, in any binding: a JSON
//! array or single record, NDJSON, one `.ump.md` file, or a folder of them. UMP 1.0 records (same
//! fields) are checked with the same rules and a notice. An `integrity` block is verified: the
//! BLAKE3 content hash and the Ed25519 signature of a `did:key` signer (409 when either fails).

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::RunError;
use crate::validate::input_file::special_file_kind;
use crate::validate::rules::{Findings, is_did, join};
use crate::validate::{Problem, Problems, Validation};

const KINDS: [&str; 5] = ["semantic", "episodic", "procedural", "working", "identity"];

/// Validates a folder of `.ump.md` records.
///
/// # Errors
/// I/O errors reading it.
pub fn validate_folder(folder: &Path) -> Result<Validation, RunError> {
    let display = folder.display().to_string();
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .map_err(|error| RunError::read(&display, error))?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".ump.md"))
        .collect();
    names.sort();
    let mut checker = Checker::default();
    for name in &names {
        let path = folder.join(name);
        // A named pipe blocks whoever opens it and a device never ends: looked at, not opened.
        if let Some(kind) = special_file_kind(&path) {
            checker.problems.push(Problem {
                status: 422,
                code: "not_a_regular_file",
                location: name.clone(),
                message: format!("is {kind}, not a regular file: a record is a file; it was not opened"),
            });
            continue;
        }
        // A folder named like a record holds none.
        if path.is_dir() {
            continue;
        }
        let text = std::fs::read(&path).map_err(|error| RunError::read(path.display().to_string(), error))?;
        checker.markdown(name, &text);
    }
    Ok(checker.finish(display))
}

/// Validates one UMP file in any binding (told apart by content).
///
/// # Errors
/// I/O errors reading it.
pub fn validate_file(path: &Path) -> Result<Validation, RunError> {
    let display = path.display().to_string();
    let bytes = crate::remote::read_path(path).map_err(|error| RunError::read(&display, error))?;
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let mut checker = Checker::default();
    if bytes.starts_with(b"---") {
        checker.markdown(&name, &bytes);
    } else {
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Array(records)) => {
                for (position, record) in records.iter().enumerate() {
                    checker.record(&name, &format!("/{position}"), record);
                }
            }
            Ok(record @ Value::Object(_)) => checker.record(&name, "", &record),
            Ok(_) => checker.problems.push(Problem {
                status: 422,
                code: "not_a_record",
                location: name.clone(),
                message: "a UMP file holds a record, an array of records, or one record per line".into(),
            }),
            // Not one JSON value: NDJSON, one record per line.
            Err(_) => {
                for (number, line) in bytes.split(|byte| *byte == b'\n').enumerate() {
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let location = format!("{name}:{}", number + 1);
                    match serde_json::from_slice::<Value>(line) {
                        Ok(record) => checker.record(&location, "", &record),
                        Err(error) => checker.problems.push(Problem {
                            status: 422,
                            code: "not_json",
                            location,
                            message: format!("not JSON: {error}"),
                        }),
                    }
                }
            }
        }
    }
    Ok(checker.finish(display))
}

/// The problems of one record against the UMP 0.1 rules (what `remember` refuses).
pub fn record_problems(record: &Value) -> Vec<Problem> {
    let mut checker = Checker::default();
    checker.record("record", "", record);
    checker.problems.to_vec()
}

#[derive(Default)]
struct Checker {
    problems: Problems,
    notices: Vec<String>,
    ids: HashSet<String>,
    records: u64,
    signed: u64,
    newer: u64,
}

impl Checker {
    fn finish(mut self, path: String) -> Validation {
        if self.signed > 0 {
            self.notices.push(format!("{} signed records: hash and signature verified", self.signed));
        }
        if self.newer > 0 {
            self.notices.push(format!("{} records say UMP 1.0; they were checked with the 0.1 rules, whose fields 1.0 keeps", self.newer));
        }
        Validation { path, format: "ump", records: self.records, problems: self.problems, notices: self.notices }
    }

    /// A `.ump.md` file: JSON front matter between `---` lines, then the text.
    fn markdown(&mut self, name: &str, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let parts = text.strip_prefix("---\n").and_then(|rest| rest.split_once("\n---\n"));
        let Some((front, body)) = parts else {
            self.problems.push(Problem {
                status: 422,
                code: "no_front_matter",
                location: name.to_owned(),
                message: "a .ump.md file starts with `---`, the record as JSON, and `---`".into(),
            });
            return;
        };
        match serde_json::from_str::<Value>(front) {
            Ok(mut record) => {
                // The reader puts the text back into body.text.
                if let Some(body_object) = record.get_mut("body").and_then(Value::as_object_mut) {
                    body_object.insert("text".into(), Value::from(body.trim_start_matches('\n').trim_end()));
                }
                if let Some(id) = record.get("id").and_then(Value::as_str)
                    && name != format!("{}.ump.md", id.trim_start_matches("urn:ump:"))
                {
                    self.notices.push(format!("{name}: the file name is not the record id (`{id}`)"));
                }
                self.record(name, "", &record);
            }
            Err(error) => self.problems.push(Problem {
                status: 422,
                code: "not_json",
                location: name.to_owned(),
                message: format!("the front matter is not JSON (YAML front matter is refused by the reference reader): {error}"),
            }),
        }
    }

    fn record(&mut self, file: &str, pointer: &str, record: &Value) {
        self.records += 1;
        let mut findings = Findings { file: file.to_owned(), problems: &mut self.problems, notices: &mut self.notices };
        let Some(object) = findings.object(record, pointer) else { return };
        findings.members(
            object,
            pointer,
            &["ump", "id", "kind", "body", "scope", "time"],
            &[
                "ump",
                "id",
                "kind",
                "body",
                "scope",
                "time",
                "lifecycle",
                "supersedes",
                "superseded_by",
                "relations",
                "provenance",
                "consent",
                "integrity",
            ],
        );
        match object.get("ump").and_then(Value::as_str) {
            Some("0.1") | None => {}
            Some("1.0") => self.newer += 1,
            Some(other) => findings.malformed("wrong_version", &join(pointer, "ump"), format!("`{other}` is not UMP 0.1")),
        }
        if let Some(id) = findings.string(object, "id", pointer, false) {
            let valid = id
                .strip_prefix("urn:ump:")
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|byte| matches!(byte, b'a'..=b'z' | b'2'..=b'7')));
            if !valid {
                findings.malformed("bad_pattern", &join(pointer, "id"), format!("`{id}` is not `urn:ump:` and lowercase base32"));
            }
            if !self.ids.insert(id.to_owned()) {
                findings.malformed("duplicate_id", &join(pointer, "id"), format!("record id `{id}` appears twice"));
            }
        }
        findings.one_of(object, "kind", pointer, &KINDS, false);
        check_body(object, pointer, &mut findings);
        check_scope(object, pointer, &mut findings);
        check_time(object, pointer, &mut findings);
        check_lifecycle(object, pointer, &mut findings);
        for name in ["supersedes", "superseded_by"] {
            for (index, item) in findings.array(object, name, pointer).cloned().unwrap_or_default().iter().enumerate() {
                if !item.is_string() {
                    findings.malformed("wrong_type", &format!("{pointer}/{name}/{index}"), "record ids are strings");
                }
            }
        }
        for (index, relation) in findings.array(object, "relations", pointer).cloned().unwrap_or_default().iter().enumerate() {
            let at = format!("{pointer}/relations/{index}");
            if let Some(relation) = findings.object(relation, &at) {
                findings.members(relation, &at, &["type", "target"], &["type", "target"]);
                findings.string(relation, "type", &at, false);
                findings.string(relation, "target", &at, false);
            }
        }
        check_provenance(object, pointer, &mut findings);
        check_consent(object, pointer, &mut findings);
        if let Some(integrity) = object.get("integrity") {
            let at = join(pointer, "integrity");
            if let Some(integrity) = findings.object(integrity, &at) {
                findings.members(integrity, &at, &["content_hash", "signature", "signer"], &["content_hash", "signature", "signer"]);
                findings.matching(integrity, "content_hash", &at, false, "`blake3:…`", |text| text.starts_with("blake3:"));
                findings.matching(integrity, "signature", &at, false, "`ed25519:…`", |text| text.starts_with("ed25519:"));
                findings.matching(integrity, "signer", &at, false, "a DID", is_did);
                if integrity.contains_key("content_hash") && integrity.contains_key("signature") && integrity.contains_key("signer") {
                    match crate::signing::verify_ump_integrity(record) {
                        crate::signing::UmpIntegrity::Verified => self.signed += 1,
                        crate::signing::UmpIntegrity::HashMismatch => findings.mismatch(
                            "content_hash_mismatch",
                            &join(&at, "content_hash"),
                            "the record's RFC 8785 form does not hash to it",
                        ),
                        crate::signing::UmpIntegrity::BadSignature => findings.mismatch(
                            "signature_invalid",
                            &join(&at, "signature"),
                            "the signature does not verify for the signer's key",
                        ),
                        crate::signing::UmpIntegrity::UnknownSigner => {
                            findings.notice(&at, "the signer is not an Ed25519 did:key, so the signature was not verified")
                        }
                    }
                }
            }
        }
    }
}

fn closed_object<'v>(
    record: &'v Map<String, Value>,
    name: &str,
    pointer: &str,
    required: &[&str],
    allowed: &[&str],
    findings: &mut Findings<'_>,
) -> Option<&'v Map<String, Value>> {
    let value = record.get(name)?;
    let at = join(pointer, name);
    let object = findings.object(value, &at)?;
    findings.members(object, &at, required, allowed);
    Some(object)
}

fn check_body(record: &Map<String, Value>, pointer: &str, findings: &mut Findings<'_>) {
    let Some(body) = closed_object(record, "body", pointer, &["text"], &["text", "structured"], findings) else { return };
    let at = join(pointer, "body");
    findings.string(body, "text", &at, false);
    if body.get("structured").is_some_and(|value| !value.is_object()) {
        findings.malformed("wrong_type", &join(&at, "structured"), "must be an object");
    }
}

fn check_scope(record: &Map<String, Value>, pointer: &str, findings: &mut Findings<'_>) {
    let Some(scope) = closed_object(
        record,
        "scope",
        pointer,
        &["owner", "visibility"],
        &["owner", "user", "project", "agent", "session", "visibility"],
        findings,
    ) else {
        return;
    };
    let at = join(pointer, "scope");
    for name in ["owner", "user", "project", "agent", "session"] {
        findings.string(scope, name, &at, false);
    }
    findings.one_of(scope, "visibility", &at, &["private", "shared", "public"], false);
}

fn check_time(record: &Map<String, Value>, pointer: &str, findings: &mut Findings<'_>) {
    let Some(time) = closed_object(record, "time", pointer, &["created"], &["created", "observed", "valid_from", "valid_to"], findings)
    else {
        return;
    };
    let at = join(pointer, "time");
    findings.date_time(time, "created", &at, false);
    findings.date_time(time, "observed", &at, false);
    let from = findings.date_time(time, "valid_from", &at, false);
    let to = findings.date_time(time, "valid_to", &at, true);
    if let (Some(from), Some(to)) = (from, to)
        && to < from
    {
        findings.malformed("temporal_order", &join(&at, "valid_to"), "valid_to is before valid_from");
    }
}

fn check_lifecycle(record: &Map<String, Value>, pointer: &str, findings: &mut Findings<'_>) {
    let Some(lifecycle) = closed_object(record, "lifecycle", pointer, &[], &["confidence", "salience", "decay", "status"], findings) else {
        return;
    };
    let at = join(pointer, "lifecycle");
    for name in ["confidence", "salience"] {
        if let Some(value) = lifecycle.get(name)
            && !value.as_f64().is_some_and(|number| (0.0..=1.0).contains(&number))
        {
            findings.malformed("out_of_range", &join(&at, name), "must be a number from 0 to 1");
        }
    }
    findings.string(lifecycle, "decay", &at, false);
    findings.one_of(lifecycle, "status", &at, &["active", "candidate", "tombstoned"], false);
}

fn check_provenance(record: &Map<String, Value>, pointer: &str, findings: &mut Findings<'_>) {
    let Some(provenance) = closed_object(
        record,
        "provenance",
        pointer,
        &["actor", "actor_kind", "method"],
        &["actor", "actor_kind", "method", "source", "evidence"],
        findings,
    ) else {
        return;
    };
    let at = join(pointer, "provenance");
    findings.string(provenance, "actor", &at, false);
    findings.string(provenance, "method", &at, false);
    findings.one_of(provenance, "actor_kind", &at, &["user", "agent", "model", "import", "scan"], false);
    if let Some(source) = closed_object(provenance, "source", &at, &[], &["ref", "provider"], findings) {
        findings.string(source, "ref", &join(&at, "source"), false);
        findings.string(source, "provider", &join(&at, "source"), false);
    } else if provenance.get("actor_kind").and_then(Value::as_str) == Some("import") {
        findings.notice(&at, "an imported record should name its source.provider");
    }
    for (index, evidence) in findings.array(provenance, "evidence", &at).cloned().unwrap_or_default().iter().enumerate() {
        let evidence_at = format!("{at}/evidence/{index}");
        if let Some(evidence) = findings.object(evidence, &evidence_at) {
            findings.members(evidence, &evidence_at, &["ref"], &["ref", "weight"]);
            if evidence.get("weight").is_some_and(|weight| !weight.is_number()) {
                findings.malformed("wrong_type", &join(&evidence_at, "weight"), "must be a number");
            }
        }
    }
}

fn check_consent(record: &Map<String, Value>, pointer: &str, findings: &mut Findings<'_>) {
    let Some(consent) = closed_object(record, "consent", pointer, &[], &["retention", "exportable", "redact"], findings) else { return };
    let at = join(pointer, "consent");
    findings.matching(consent, "retention", &at, false, "an ISO 8601 duration (starting with P)", |text| text.starts_with('P'));
    if consent.get("exportable").is_some_and(|value| !value.is_boolean()) {
        findings.malformed("wrong_type", &join(&at, "exportable"), "must be true or false");
    }
    for (index, path) in findings.array(consent, "redact", &at).cloned().unwrap_or_default().iter().enumerate() {
        if !path.is_string() {
            findings.malformed("wrong_type", &format!("{at}/redact/{index}"), "redact paths are strings");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards `validate` on a folder of records holding a named pipe: opening it blocked the
    /// run until something wrote to it. It is named as a problem and never opened.
    #[test]
    fn a_named_pipe_among_the_records_is_a_problem_not_opened() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("a.ump.md"), b"---\n{\"ump\":\"0.1\"}\n---\n\nHello\n").unwrap();
        let pipe = folder.path().join("zzzz.ump.md");
        if !std::process::Command::new("mkfifo").arg(&pipe).status().is_ok_and(|status| status.success()) {
            return;
        }
        let validation = validate_folder(folder.path()).unwrap();
        let problem = validation.problems.iter().find(|problem| problem.code == "not_a_regular_file");
        assert_eq!(problem.map(|problem| problem.location.as_str()), Some("zzzz.ump.md"));
        assert_eq!(
            problem.map(|problem| problem.message.as_str()),
            Some("is a named pipe (FIFO), not a regular file: a record is a file; it was not opened")
        );
    }
}
