//! `memport validate` for PAM v1.0: a store folder (`memory-store.json` and the conversation
//! files its index points to), or one memory-store, conversation or embeddings file.
//!
//! Problems are the schema's rules and the errors of the spec repo's validator and the SDK's
//! deep checks (422, or 409 for a content hash or checksum that does not match); their
//! warnings are notices. The store file is parsed whole (it holds memories and the index, not
//! messages); conversation files are read one at a time.

pub mod conversation;
pub mod store;

use std::collections::BTreeSet;
use std::path::{Component, Path};

use serde_json::Value;

use crate::error::RunError;
use crate::validate::input_file::special_file_kind;
use crate::validate::rules::{self, Findings, join};
use crate::validate::{Problem, Problems, Validation};

/// Validates a store folder: the store file, then every conversation file.
///
/// # Errors
/// I/O errors reading the files.
pub fn validate_folder(folder: &Path) -> Result<Validation, RunError> {
    let (mut problems, mut notices) = (Problems::new(), Vec::new());
    let store_path = folder.join(crate::spec::pam::STORE_FILE);
    let mut records = 0;
    if let Some(root) = parse(&store_path, "memory-store.json", &mut problems)? {
        let mut findings = Findings { file: "memory-store.json".into(), problems: &mut problems, notices: &mut notices };
        let facts = store::check_store(&root, &mut findings);
        drop(root);
        records += facts.memories + facts.index.len() as u64;
        let mut listed = BTreeSet::new();
        for entry in &facts.index {
            let Some(reference) = &entry.file_ref else { continue };
            let at = format!("{}/storage/ref", entry.pointer);
            if !stays_inside(reference) {
                findings.malformed("storage_outside_store", &at, format!("`{reference}` leads outside the store folder"));
                continue;
            }
            let path = folder.join(reference);
            listed.insert(path.clone());
            // A named pipe blocks whoever opens it and a device never ends: looked at, not
            // opened, and not called missing.
            if let Some(kind) = special_file_kind(&path) {
                findings.malformed("not_a_regular_file", &at, format!("`{reference}` is {kind}, not a regular file; it was not opened"));
                continue;
            }
            if !path.is_file() {
                findings.malformed("missing_file", &at, format!("the conversation file `{reference}` does not exist"));
                continue;
            }
            check_conversation_file(&path, reference, Some(entry), facts.schema_version.as_deref(), &mut problems, &mut notices)?;
            findings = Findings { file: "memory-store.json".into(), problems: &mut problems, notices: &mut notices };
        }
        let conversations = folder.join(crate::spec::pam::CONVERSATIONS_FOLDER);
        if let Ok(entries) = std::fs::read_dir(&conversations) {
            let mut unlisted: Vec<_> =
                entries.flatten().map(|entry| entry.path()).filter(|path| path.extension().is_some_and(|ext| ext == "json")).collect();
            // Files only: a folder named like one holds no conversation, and a named pipe or a
            // device is never opened (`parse` says what it is).
            unlisted.retain(|path| !listed.contains(path) && !path.is_dir());
            unlisted.sort();
            for path in unlisted {
                let name = format!("conversations/{}", path.file_name().map(|name| name.to_string_lossy()).unwrap_or_default());
                notices.push(format!("{name}: not listed in the store's conversations_index"));
                check_conversation_file(&path, &name, None, facts.schema_version.as_deref(), &mut problems, &mut notices)?;
            }
        }
    }
    // The store's embeddings file, when it has one (pam.md §3.3).
    let embeddings_path = folder.join(crate::spec::pam::EMBEDDINGS_FILE);
    if embeddings_path.is_file()
        && let Some(root) = parse(&embeddings_path, crate::spec::pam::EMBEDDINGS_FILE, &mut problems)?
    {
        let mut findings = Findings { file: crate::spec::pam::EMBEDDINGS_FILE.into(), problems: &mut problems, notices: &mut notices };
        records += check_embeddings(&root, &mut findings);
    }
    Ok(Validation { path: folder.display().to_string(), format: "pam", records, problems, notices })
}

/// Validates one PAM file; a `memory-store.json` beside its conversation files is checked as
/// the store folder it belongs to.
///
/// # Errors
/// I/O errors reading it.
pub fn validate_file(path: &Path) -> Result<Validation, RunError> {
    let folder = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if path.file_name().is_some_and(|name| name == crate::spec::pam::STORE_FILE)
        && folder.join(crate::spec::pam::CONVERSATIONS_FOLDER).is_dir()
    {
        let mut validation = validate_folder(folder)?;
        validation.path = path.display().to_string();
        return Ok(validation);
    }
    let (mut problems, mut notices) = (Problems::new(), Vec::new());
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let mut records = 0;
    if let Some(root) = parse(path, &name, &mut problems)? {
        let mut findings = Findings { file: name, problems: &mut problems, notices: &mut notices };
        match root.get("schema").and_then(Value::as_str) {
            Some("portable-ai-memory-conversation") => records = conversation::check_conversation(&root, &mut findings).messages,
            Some("portable-ai-memory-embeddings") => records = check_embeddings(&root, &mut findings),
            _ => {
                let facts = store::check_store(&root, &mut findings);
                records = facts.memories + facts.index.len() as u64;
                if facts.index.iter().any(|entry| entry.file_ref.is_some()) {
                    findings.notice(
                        "/conversations_index",
                        "the conversation files were not checked: validate the store's folder to check them too",
                    );
                }
            }
        }
    }
    Ok(Validation { path: path.display().to_string(), format: "pam", records, problems, notices })
}

fn parse(path: &Path, name: &str, problems: &mut Problems) -> Result<Option<Value>, RunError> {
    if let Some(kind) = special_file_kind(path) {
        let message = format!("{name} is {kind}, not a regular file; it was not opened");
        problems.push(Problem { status: 422, code: "not_a_regular_file", location: name.to_owned(), message });
        return Ok(None);
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            problems.push(Problem {
                status: 422,
                code: "missing_file",
                location: name.to_owned(),
                message: format!("{name} does not exist"),
            });
            return Ok(None);
        }
        Err(error) => return Err(RunError::read(path.display().to_string(), error)),
    };
    match serde_json::from_slice(&bytes) {
        Ok(value) => Ok(Some(value)),
        Err(error) => {
            problems.push(Problem { status: 422, code: "not_json", location: name.to_owned(), message: format!("not JSON: {error}") });
            Ok(None)
        }
    }
}

fn stays_inside(reference: &str) -> bool {
    let path = Path::new(reference);
    !reference.is_empty() && path.components().all(|component| matches!(component, Component::Normal(_) | Component::CurDir))
}

fn check_conversation_file(
    path: &Path,
    name: &str,
    entry: Option<&store::IndexEntry>,
    store_version: Option<&str>,
    problems: &mut Problems,
    notices: &mut Vec<String>,
) -> Result<(), RunError> {
    let Some(root) = parse(path, name, problems)? else { return Ok(()) };
    let mut findings = Findings { file: name.to_owned(), problems, notices };
    let facts = conversation::check_conversation(&root, &mut findings);
    if let (Some(store_version), Some(version)) = (store_version, facts.schema_version.as_deref())
        && store_version != version
    {
        findings.malformed("schema_version_mismatch", "/schema_version", format!("`{version}` differs from the store's `{store_version}`"));
    }
    let Some(entry) = entry else { return Ok(()) };
    if facts.id.as_deref() != Some(entry.id.as_str()) {
        findings.malformed("index_mismatch", "/id", format!("the store's index lists this file as conversation `{}`", entry.id));
    }
    if entry.title.is_some() && facts.title != entry.title {
        findings.malformed("index_mismatch", "/title", "the title differs from the store's index");
    }
    if entry.platform.is_some() && facts.platform != entry.platform {
        findings.malformed("index_mismatch", "/provider/name", "the provider differs from the platform in the store's index");
    }
    if let Some(count) = entry.message_count
        && count != facts.messages
    {
        findings.malformed("index_mismatch", "/messages", format!("{} messages, the store's index says {count}", facts.messages));
    }
    Ok(())
}

/// An embeddings file (pam.md §3.3): shape, unique ids and memory ids, vector lengths.
fn check_embeddings(root: &Value, findings: &mut Findings<'_>) -> u64 {
    let Some(file) = findings.object(root, "") else { return 0 };
    findings.members(file, "", &["schema", "schema_version", "embeddings"], &["schema", "schema_version", "embeddings"]);
    findings.matching(file, "schema_version", "", false, "a schema version such as 1.0", rules::is_schema_version);
    let embeddings = findings.array(file, "embeddings", "").cloned().unwrap_or_default();
    let (mut ids, mut memory_ids) = (BTreeSet::new(), BTreeSet::new());
    for (position, embedding) in embeddings.iter().enumerate() {
        let pointer = format!("/embeddings/{position}");
        let Some(object) = findings.object(embedding, &pointer) else { continue };
        findings.members(
            object,
            &pointer,
            &["id", "memory_id", "model", "dimensions", "created_at"],
            &["id", "memory_id", "model", "dimensions", "vector", "storage", "created_at"],
        );
        findings.date_time(object, "created_at", &pointer, false);
        let dimensions = findings.count(object, "dimensions", &pointer, false);
        if dimensions == Some(0) {
            findings.malformed("out_of_range", &join(&pointer, "dimensions"), "dimensions must be at least 1");
        }
        if let (Some(dimensions), Some(vector)) = (dimensions, object.get("vector").and_then(Value::as_array))
            && vector.len() as u64 != dimensions
        {
            findings.malformed(
                "dimensions_mismatch",
                &join(&pointer, "vector"),
                format!("{} numbers, dimensions says {dimensions}", vector.len()),
            );
        }
        for (name, seen) in [("id", &mut ids), ("memory_id", &mut memory_ids)] {
            if let Some(value) = findings.string(object, name, &pointer, false)
                && !seen.insert(value.to_owned())
            {
                findings.malformed("duplicate_id", &join(&pointer, name), format!("`{value}` appears twice"));
            }
        }
    }
    embeddings.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards `validate` on a store folder holding named pipes (a listed conversation file,
    /// an unlisted one): opening them blocked the run. They are problems, never opened.
    #[test]
    fn named_pipes_in_a_store_are_problems_not_opened() {
        let store = tempfile::tempdir().unwrap();
        std::fs::create_dir(store.path().join("conversations")).unwrap();
        let store_file = r#"{"schema":"portable-ai-memory","schema_version":"1.0","memories":[],
            "conversations_index":[{"id":"c1","storage":{"type":"file","ref":"conversations/c1.json"}}]}"#;
        std::fs::write(store.path().join("memory-store.json"), store_file).unwrap();
        for name in ["c1.json", "unlisted.json"] {
            let pipe = store.path().join("conversations").join(name);
            if !std::process::Command::new("mkfifo").arg(&pipe).status().is_ok_and(|status| status.success()) {
                return;
            }
        }
        let validation = validate_folder(store.path()).unwrap();
        let refused: Vec<(&str, &str)> = validation
            .problems
            .iter()
            .filter(|problem| problem.code == "not_a_regular_file")
            .map(|problem| (problem.location.as_str(), problem.message.as_str()))
            .collect();
        assert_eq!(
            refused,
            [
                (
                    "memory-store.json#/conversations_index/0/storage/ref",
                    "`conversations/c1.json` is a named pipe (FIFO), not a regular file; it was not opened"
                ),
                (
                    "conversations/unlisted.json",
                    "conversations/unlisted.json is a named pipe (FIFO), not a regular file; it was not opened"
                ),
            ]
        );
    }

    #[test]
    fn storage_refs_stay_in_the_store() {
        assert!(stays_inside("conversations/a.json") && stays_inside("./a.json"));
        assert!(!stays_inside("../a.json") && !stays_inside("/etc/passwd") && !stays_inside(""));
    }
}
