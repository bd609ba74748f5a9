//! Checks of a PAM `memory-store.json` (pam.md §2–§5): the schema's rules, content hashes,
//! the integrity block, unique ids and every cross-reference, as the spec repo's validator
//! and the SDK's deep checks do (their errors are problems here, their warnings notices).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::hash::{pam_content_digest, sha256, sha256_label};
use crate::jcs::to_canonical_vec;
use crate::validate::rules::{Findings, is_did, is_platform, is_schema_version, is_sha256_label, is_tool_version, join};

const ROOT_MEMBERS: [&str; 16] = [
    "schema",
    "schema_version",
    "spec_uri",
    "export_id",
    "exported_by",
    "export_date",
    "owner",
    "memories",
    "relations",
    "conversations_index",
    "integrity",
    "export_type",
    "base_export_id",
    "since",
    "type_registry",
    "signature",
];
const MEMORY_MEMBERS: [&str; 14] = [
    "id",
    "type",
    "custom_type",
    "status",
    "content",
    "summary",
    "content_hash",
    "temporal",
    "provenance",
    "confidence",
    "access",
    "tags",
    "embedding_ref",
    "metadata",
];
const MEMORY_TYPES: [&str; 11] =
    ["fact", "preference", "skill", "context", "relationship", "goal", "instruction", "identity", "environment", "project", "custom"];
const STATUSES: [&str; 5] = ["active", "superseded", "deprecated", "retracted", "archived"];
const EXTRACTION_METHODS: [&str; 5] = ["llm_inference", "explicit_user_input", "api_export", "browser_extraction", "manual"];
const RELATION_TYPES: [&str; 6] = ["supports", "contradicts", "extends", "supersedes", "related_to", "derived_from"];
const STORAGE_TYPES: [&str; 5] = ["file", "database", "object_storage", "vector_db", "uri"];
const SIGNATURE_ALGORITHMS: [&str; 6] = ["Ed25519", "ES256", "ES384", "RS256", "RS384", "RS512"];

/// What the store says about its conversations, for the checks of the conversation files.
#[derive(Debug, Default)]
pub struct IndexEntry {
    /// Pointer of the entry in the store.
    pub pointer: String,
    /// Conversation id.
    pub id: String,
    /// `storage.ref` when `storage.type` is `file`.
    pub file_ref: Option<String>,
    /// `title`.
    pub title: Option<String>,
    /// `platform`.
    pub platform: Option<String>,
    /// `message_count`.
    pub message_count: Option<u64>,
}

/// What the store check found that the folder checks need.
#[derive(Debug, Default)]
pub struct StoreFacts {
    /// The store's `schema_version`.
    pub schema_version: Option<String>,
    /// `conversations_index` entries.
    pub index: Vec<IndexEntry>,
    /// Memories checked.
    pub memories: u64,
}

/// Checks one parsed memory store.
pub fn check_store(root: &Value, findings: &mut Findings<'_>) -> StoreFacts {
    let mut facts = StoreFacts::default();
    let Some(store) = findings.object(root, "") else { return facts };
    findings.members(store, "", &["schema", "schema_version", "owner", "memories"], &ROOT_MEMBERS);
    if store.get("schema").and_then(Value::as_str) != Some("portable-ai-memory") {
        findings.malformed("wrong_schema", "/schema", "must be \"portable-ai-memory\"");
    }
    findings.matching(store, "schema_version", "", false, "a schema version such as 1.0", is_schema_version);
    facts.schema_version = store.get("schema_version").and_then(Value::as_str).map(str::to_owned);
    findings.string(store, "export_id", "", true);
    findings.matching(store, "exported_by", "", true, "`name/X.Y.Z`", is_tool_version);
    let export_date = findings.date_time(store, "export_date", "", false);
    findings.date_time(store, "since", "", true);
    findings.one_of(store, "export_type", "", &["full", "incremental"], false);
    if store.get("export_type").and_then(Value::as_str) == Some("incremental")
        && (store.get("base_export_id").is_none_or(Value::is_null) || store.get("since").is_none_or(Value::is_null))
    {
        findings.notice("", "an incremental export should name its base_export_id and since");
    }
    if let Some(owner) = store.get("owner").and_then(|owner| findings.object(owner, "/owner")) {
        findings.members(owner, "/owner", &["id"], &["id", "did", "created_at"]);
        if owner.get("id").and_then(Value::as_str).is_none_or(str::is_empty) {
            findings.malformed("missing_member", "/owner/id", "the owner needs a non-empty id");
        }
        findings.matching(owner, "did", "/owner", true, "a DID (`did:<method>:<id>`)", is_did);
        findings.date_time(owner, "created_at", "/owner", true);
    }

    let mut ids: HashMap<String, String> = HashMap::new();
    let mut claim_id = |findings: &mut Findings<'_>, id: &str, pointer: &str| {
        if let Some(first) = ids.get(id) {
            findings.malformed("duplicate_id", pointer, format!("id `{id}` is already used at {first}"));
        } else {
            ids.insert(id.to_owned(), pointer.to_owned());
        }
    };

    let memories = findings.array(store, "memories", "").cloned().unwrap_or_default();
    let mut memory_ids = HashSet::new();
    let mut conversation_refs = Vec::new();
    let mut superseded_refs = Vec::new();
    for (position, memory) in memories.iter().enumerate() {
        let pointer = format!("/memories/{position}");
        let Some(object) = findings.object(memory, &pointer) else { continue };
        if let Some(id) = check_memory(object, &pointer, findings, &mut conversation_refs, &mut superseded_refs) {
            claim_id(findings, &id, &pointer);
            memory_ids.insert(id);
        }
    }
    facts.memories = memories.len() as u64;

    let relations = findings.array(store, "relations", "").cloned().unwrap_or_default();
    for (position, relation) in relations.iter().enumerate() {
        let pointer = format!("/relations/{position}");
        let Some(object) = findings.object(relation, &pointer) else { continue };
        findings.members(
            object,
            &pointer,
            &["id", "from", "to", "type", "created_at"],
            &["id", "from", "to", "type", "confidence", "created_at"],
        );
        findings.one_of(object, "type", &pointer, &RELATION_TYPES, false);
        findings.date_time(object, "created_at", &pointer, false);
        if let Some(id) = findings.string(object, "id", &pointer, false) {
            claim_id(findings, id, &pointer);
        }
        let from = findings.string(object, "from", &pointer, false);
        let to = findings.string(object, "to", &pointer, false);
        for (end, name) in [(from, "from"), (to, "to")] {
            if let Some(end) = end
                && !memory_ids.contains(end)
            {
                findings.malformed("dangling_reference", &join(&pointer, name), format!("no memory has id `{end}`"));
            }
        }
        if from.is_some() && from == to {
            findings.notice(&pointer, "the relation points from a memory to itself");
        }
    }

    let mut derived_pairs = Vec::new();
    let index = findings.array(store, "conversations_index", "").cloned().unwrap_or_default();
    for (position, entry) in index.iter().enumerate() {
        let pointer = format!("/conversations_index/{position}");
        let Some(object) = findings.object(entry, &pointer) else { continue };
        if let Some(entry) = check_index_entry(object, &pointer, findings, &mut derived_pairs) {
            claim_id(findings, &entry.id, &pointer);
            facts.index.push(entry);
        }
    }
    let conversation_ids: HashSet<&str> = facts.index.iter().map(|entry| entry.id.as_str()).collect();
    if !conversation_ids.is_empty() {
        for (pointer, conversation) in &conversation_refs {
            if !conversation_ids.contains(conversation.as_str()) {
                findings.malformed("dangling_reference", pointer, format!("no conversation in the index has id `{conversation}`"));
            }
        }
    }
    for (pointer, superseded_by) in &superseded_refs {
        if !memory_ids.contains(superseded_by) {
            findings.malformed("dangling_reference", pointer, format!("no memory has id `{superseded_by}`"));
        }
    }
    let refs_of: HashMap<&str, &str> = conversation_refs
        .iter()
        .filter_map(|(pointer, conversation)| Some((memory_id_at(&memories, pointer)?, conversation.as_str())))
        .collect();
    for (pointer, conversation, memory) in &derived_pairs {
        if !memory_ids.contains(memory) {
            findings.malformed("dangling_reference", pointer, format!("no memory has id `{memory}`"));
        } else if refs_of.get(memory.as_str()) != Some(&conversation.as_str()) {
            findings
                .notice(pointer, format!("memory `{memory}` is derived from this conversation but its conversation_ref does not say so"));
        }
    }

    check_integrity(store, &memories, findings);
    check_signature(store, export_date, findings);
    facts
}

fn memory_id_at<'v>(memories: &'v [Value], pointer: &str) -> Option<&'v str> {
    let position: usize = pointer.strip_prefix("/memories/")?.split('/').next()?.parse().ok()?;
    memories.get(position)?.get("id")?.as_str()
}

fn check_memory(
    memory: &Map<String, Value>,
    pointer: &str,
    findings: &mut Findings<'_>,
    conversation_refs: &mut Vec<(String, String)>,
    superseded_refs: &mut Vec<(String, String)>,
) -> Option<String> {
    findings.members(memory, pointer, &["id", "type", "content", "content_hash", "temporal", "provenance"], &MEMORY_MEMBERS);
    findings.one_of(memory, "type", pointer, &MEMORY_TYPES, false);
    findings.one_of(memory, "status", pointer, &STATUSES, false);
    let is_custom = memory.get("type").and_then(Value::as_str) == Some("custom");
    match memory.get("custom_type") {
        Some(Value::String(name)) if is_custom && !name.is_empty() => {}
        None | Some(Value::Null) if !is_custom => {}
        _ if is_custom => findings.malformed("custom_type", &join(pointer, "custom_type"), "a custom memory needs a non-empty custom_type"),
        _ => findings.malformed("custom_type", &join(pointer, "custom_type"), "custom_type must be null unless type is custom"),
    }
    findings.string(memory, "summary", pointer, true);
    findings.tags(memory, pointer);
    let content = findings.string(memory, "content", pointer, false);
    if content == Some("") {
        findings.malformed("empty_content", &join(pointer, "content"), "content must not be empty");
    }
    findings.matching(memory, "content_hash", pointer, false, "`sha256:` and 64 lowercase hex digits", is_sha256_label);
    if let (Some(content), Some(written)) = (content, memory.get("content_hash").and_then(Value::as_str)) {
        let expected = sha256_label(&pam_content_digest(content));
        if is_sha256_label(written) && written != expected {
            findings.mismatch("content_hash_mismatch", &join(pointer, "content_hash"), format!("the content hashes to {expected}"));
        }
    }
    if let Some(temporal) = memory.get("temporal").and_then(|temporal| findings.object(temporal, &join(pointer, "temporal"))) {
        let at = join(pointer, "temporal");
        findings.members(temporal, &at, &["created_at"], &["created_at", "updated_at", "valid_from", "valid_until", "superseded_by"]);
        let created = findings.date_time(temporal, "created_at", &at, false);
        let updated = findings.date_time(temporal, "updated_at", &at, true);
        let valid_from = findings.date_time(temporal, "valid_from", &at, true);
        let valid_until = findings.date_time(temporal, "valid_until", &at, true);
        if let (Some(created), Some(updated)) = (created, updated)
            && updated < created
        {
            findings.malformed("temporal_order", &join(&at, "updated_at"), "updated_at is before created_at");
        }
        if let (Some(from), Some(until)) = (valid_from, valid_until)
            && until < from
        {
            findings.malformed("temporal_order", &join(&at, "valid_until"), "valid_until is before valid_from");
        }
        if let Some(superseded_by) = findings.string(temporal, "superseded_by", &at, true) {
            superseded_refs.push((join(&at, "superseded_by"), superseded_by.to_owned()));
        }
        let superseded = memory.get("status").and_then(Value::as_str) == Some("superseded");
        if superseded != temporal.get("superseded_by").is_some_and(|value| !value.is_null()) {
            findings.notice(pointer, "status superseded and temporal.superseded_by should go together");
        }
        if let Some(confidence) = memory.get("confidence").and_then(Value::as_object)
            && let (Some(created), Some(reinforced)) =
                (created, confidence.get("last_reinforced").and_then(Value::as_str).and_then(crate::timefmt::parse_rfc3339))
            && reinforced < created
        {
            findings.notice(pointer, "confidence.last_reinforced is before created_at");
        }
    }
    if let Some(provenance) = memory.get("provenance").and_then(|provenance| findings.object(provenance, &join(pointer, "provenance"))) {
        let at = join(pointer, "provenance");
        findings.members(
            provenance,
            &at,
            &["platform"],
            &["platform", "platform_user_id", "conversation_ref", "message_ref", "extraction_method", "extracted_at", "extractor"],
        );
        findings.matching(provenance, "platform", &at, false, "a product name of 2-32 characters a-z, 0-9, `_`, `-`", is_platform);
        findings.one_of(provenance, "extraction_method", &at, &EXTRACTION_METHODS, true);
        findings.date_time(provenance, "extracted_at", &at, true);
        findings.matching(provenance, "extractor", &at, true, "`name/X.Y.Z`", is_tool_version);
        findings.string(provenance, "message_ref", &at, true);
        if let Some(conversation) = findings.string(provenance, "conversation_ref", &at, true) {
            conversation_refs.push((join(&at, "conversation_ref"), conversation.to_owned()));
        }
    }
    if let Some(confidence) = memory.get("confidence").and_then(|confidence| findings.object(confidence, &join(pointer, "confidence"))) {
        let at = join(pointer, "confidence");
        findings.members(confidence, &at, &[], &["initial", "current", "decay_model", "last_reinforced"]);
        for name in ["initial", "current"] {
            if let Some(value) = confidence.get(name)
                && !value.as_f64().is_some_and(|number| (0.0..=1.0).contains(&number))
            {
                findings.malformed("out_of_range", &join(&at, name), "must be a number from 0 to 1");
            }
        }
        findings.one_of(confidence, "decay_model", &at, &["time_linear", "time_exponential", "none"], true);
        findings.date_time(confidence, "last_reinforced", &at, true);
    }
    if let Some(access) = memory.get("access").and_then(|access| findings.object(access, &join(pointer, "access"))) {
        let at = join(pointer, "access");
        findings.members(access, &at, &[], &["visibility", "exportable", "shared_with"]);
        findings.one_of(access, "visibility", &at, &["private", "shared", "public"], false);
        if access.get("exportable").is_some_and(|value| !value.is_boolean()) {
            findings.malformed("wrong_type", &join(&at, "exportable"), "must be true or false");
        }
    }
    if let Some(metadata) = memory.get("metadata").and_then(Value::as_object)
        && let Some(language) = metadata.get("language").and_then(Value::as_str)
        && !is_language(language)
    {
        findings.notice(&format!("{pointer}/metadata/language"), format!("`{language}` is not a BCP 47 tag of the form the schema gives"));
    }
    let id = findings.string(memory, "id", pointer, false)?;
    Some(id.to_owned())
}

/// `^[a-z]{2,3}(-[A-Z][a-z]{3})?(-[A-Z]{2})?$`
fn is_language(text: &str) -> bool {
    let mut parts = text.split('-');
    let primary_ok =
        parts.next().is_some_and(|primary| (2..=3).contains(&primary.len()) && primary.bytes().all(|byte| byte.is_ascii_lowercase()));
    let rest: Vec<&str> = parts.collect();
    let script = |part: &str| {
        part.len() == 4 && part.as_bytes()[0].is_ascii_uppercase() && part.bytes().skip(1).all(|byte| byte.is_ascii_lowercase())
    };
    let region = |part: &str| part.len() == 2 && part.bytes().all(|byte| byte.is_ascii_uppercase());
    primary_ok
        && match rest.as_slice() {
            [] => true,
            [one] => script(one) || region(one),
            [first, second] => script(first) && region(second),
            _ => false,
        }
}

fn check_index_entry(
    entry: &Map<String, Value>,
    pointer: &str,
    findings: &mut Findings<'_>,
    derived_pairs: &mut Vec<(String, String, String)>,
) -> Option<IndexEntry> {
    findings.members(
        entry,
        pointer,
        &["id", "platform", "temporal"],
        &["id", "platform", "title", "temporal", "message_count", "tags", "derived_memories", "storage"],
    );
    findings.matching(entry, "platform", pointer, false, "a product name of 2-32 characters a-z, 0-9, `_`, `-`", is_platform);
    findings.tags(entry, pointer);
    // The schema allows null: an entry whose messages are not counted (a conversation a sync
    // retracted, whose file is gone).
    let message_count = findings.count(entry, "message_count", pointer, true);
    if let Some(temporal) = entry.get("temporal").and_then(|temporal| findings.object(temporal, &join(pointer, "temporal"))) {
        let at = join(pointer, "temporal");
        findings.members(temporal, &at, &["created_at"], &["created_at", "updated_at"]);
        findings.date_time(temporal, "created_at", &at, false);
        findings.date_time(temporal, "updated_at", &at, true);
    }
    let mut file_ref = None;
    if let Some(storage) = entry.get("storage").and_then(|storage| findings.object(storage, &join(pointer, "storage"))) {
        let at = join(pointer, "storage");
        findings.members(storage, &at, &["type", "ref"], &["type", "ref", "format"]);
        findings.one_of(storage, "type", &at, &STORAGE_TYPES, false);
        let reference = findings.string(storage, "ref", &at, false);
        if storage.get("type").and_then(Value::as_str) == Some("file") {
            file_ref = reference.map(str::to_owned);
        }
    }
    let id = findings.string(entry, "id", pointer, false)?.to_owned();
    for (position, derived) in findings.array(entry, "derived_memories", pointer).cloned().unwrap_or_default().iter().enumerate() {
        if let Some(memory) = derived.as_str() {
            derived_pairs.push((format!("{pointer}/derived_memories/{position}"), id.clone(), memory.to_owned()));
        }
    }
    Some(IndexEntry {
        pointer: pointer.to_owned(),
        id,
        file_ref,
        title: entry.get("title").and_then(Value::as_str).map(str::to_owned),
        platform: entry.get("platform").and_then(Value::as_str).map(str::to_owned),
        message_count,
    })
}

/// `integrity`: `total_memories` and the checksum over the canonical memories sorted by id.
/// The spec repo hashes the memories as written; the SDK hashes them without null members. A
/// store matching only the second is accepted with a notice.
fn check_integrity(store: &Map<String, Value>, memories: &[Value], findings: &mut Findings<'_>) {
    let Some(integrity) = store.get("integrity") else { return };
    let Some(integrity) = findings.object(integrity, "/integrity") else { return };
    findings.members(integrity, "/integrity", &["checksum", "total_memories"], &["canonicalization", "checksum", "total_memories"]);
    findings.one_of(integrity, "canonicalization", "/integrity", &["RFC8785"], false);
    findings.matching(integrity, "checksum", "/integrity", false, "`sha256:` and 64 lowercase hex digits", is_sha256_label);
    if let Some(total) = findings.count(integrity, "total_memories", "/integrity", false)
        && total != memories.len() as u64
    {
        findings.mismatch(
            "total_mismatch",
            "/integrity/total_memories",
            format!("says {total}, the store has {} memories", memories.len()),
        );
    }
    let Some(written) = integrity.get("checksum").and_then(Value::as_str).filter(|written| is_sha256_label(written)) else { return };
    let mut sorted: Vec<&Value> = memories.iter().collect();
    sorted.sort_by(|left, right| left.get("id").and_then(Value::as_str).cmp(&right.get("id").and_then(Value::as_str)));
    let as_written = checksum_of(sorted.iter().map(|memory| (*memory).clone()).collect());
    if written == as_written {
        return;
    }
    let without_nulls = checksum_of(sorted.iter().map(|memory| strip_nulls((*memory).clone())).collect());
    if written == without_nulls {
        findings.notice(
            "/integrity/checksum",
            "the checksum covers the memories without their null members (the Python SDK's form), not as written",
        );
    } else {
        findings.mismatch("checksum_mismatch", "/integrity/checksum", format!("the memories sorted by id hash to {as_written}"));
    }
}

fn checksum_of(memories: Vec<Value>) -> String {
    sha256_label(&sha256(&to_canonical_vec(&Value::Array(memories))))
}

fn strip_nulls(value: Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members.into_iter().filter(|(_, member)| !member.is_null()).map(|(key, member)| (key, strip_nulls(member))).collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

/// The signature block: its shape, the §18 rules, and for Ed25519 the signature itself over
/// the RFC 8785 form of checksum, export id, export date and owner id (409 when it fails).
fn check_signature(store: &Map<String, Value>, export_date: Option<i64>, findings: &mut Findings<'_>) {
    let Some(signature) = store.get("signature").filter(|signature| !signature.is_null()) else { return };
    let Some(signature) = findings.object(signature, "/signature") else { return };
    findings.members(
        signature,
        "/signature",
        &["algorithm", "public_key", "value", "signed_at"],
        &["algorithm", "public_key", "value", "signed_at", "key_id"],
    );
    findings.one_of(signature, "algorithm", "/signature", &SIGNATURE_ALGORITHMS, false);
    for name in ["export_id", "export_date"] {
        if store.get(name).is_none_or(|value| !value.is_string()) {
            findings.malformed("missing_member", &join("", name), format!("a signed store needs `{name}`"));
        }
    }
    if let Some(value) = findings.string(signature, "value", "/signature", false)
        && !value.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-'))
    {
        findings.malformed("bad_pattern", "/signature/value", "the signature value must be base64url");
    }
    if let (Some(signed_at), Some(export_date)) = (findings.date_time(signature, "signed_at", "/signature", false), export_date)
        && signed_at < export_date
    {
        findings.malformed("temporal_order", "/signature/signed_at", "the store is signed before its export_date");
    }
    if signature.get("algorithm").and_then(Value::as_str) != Some("Ed25519") {
        findings.notice("/signature", "memport verifies Ed25519 signatures only; this one was not verified");
        return;
    }
    let text = |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or_default().to_owned();
    let payload = crate::signing::pam_signature_payload(
        &text(store.get("integrity").and_then(|integrity| integrity.get("checksum"))),
        &text(store.get("export_id")),
        &text(store.get("export_date")),
        &text(store.get("owner").and_then(|owner| owner.get("id"))),
    );
    let public_key = signature.get("public_key").and_then(Value::as_str).and_then(crate::signing::public_key_from_text);
    let value = signature.get("value").and_then(Value::as_str).unwrap_or_default();
    match public_key {
        None => findings.mismatch(
            "signature_invalid",
            "/signature/public_key",
            "not an Ed25519 public key (did:key, multibase z… or base58), so the signature cannot hold",
        ),
        Some(public_key) if !crate::signing::verify_pam_signature(&public_key, &payload, value) => findings.mismatch(
            "signature_invalid",
            "/signature/value",
            "the signature does not verify over checksum, export_id, export_date and owner.id",
        ),
        Some(_) => {}
    }
}
