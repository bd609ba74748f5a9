//! UMP's writing operations on a store (§3.3–3.6): `remember` a new record, `revise` one into
//! a successor that supersedes it, `forget` one (tombstone, or erase for good).
//!
//! A remembered record gets what the reference server fills in when it is missing: `ump`,
//! the store's owner and `private` visibility, `created`/`observed`/`valid_from` of now,
//! `valid_to: null`, `status: active` with confidence 0.6, an empty `superseded_by`, and a
//! provenance naming the caller. Its id is content-addressed (`urn:ump:` + the base32 BLAKE3
//! of the record with `id: ""`). Remembering what a current record (active, not superseded)
//! of the same kind and owner already says merges into that record.

use serde_json::{Map, Value, json};

use super::{Put, Store, StoreError, set_status};
use crate::model::{ErasedMessage, Micros};
use crate::spec::ump::message_record_id;
use crate::timefmt::format_rfc3339;

/// What `remember` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remembered {
    /// A new record.
    Created,
    /// The same record was there: nothing changed.
    Merged,
}

impl Remembered {
    /// UMP's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Remembered::Created => "created",
            Remembered::Merged => "merged",
        }
    }
}

/// What `forget` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forgotten {
    /// The record is kept, tombstoned: out of recall, there for audit.
    Tombstoned,
    /// The record and its text are gone, and so are the `derived` memories that quote it; their
    /// ids are remembered so no later load brings them back.
    Erased {
        /// Records derived from it (memories whose evidence it is), erased with it.
        derived: u64,
    },
}

impl Forgotten {
    /// The result's name.
    pub fn name(self) -> &'static str {
        match self {
            Forgotten::Tombstoned => "tombstoned",
            Forgotten::Erased { .. } => "erased",
        }
    }
}

/// Sets `object[name]` to `value` unless it has the member already.
fn default_member(object: &mut Map<String, Value>, name: &str, value: Value) {
    object.entry(name.to_owned()).or_insert(value);
}

/// The member `name` of `object` as an object, made empty when missing or not an object.
fn object_member<'a>(object: &'a mut Map<String, Value>, name: &str) -> &'a mut Map<String, Value> {
    let member = object.entry(name.to_owned()).or_insert_with(|| Value::Object(Map::new()));
    if !member.is_object() {
        *member = Value::Object(Map::new());
    }
    match member {
        Value::Object(inner) => inner,
        _ => unreachable!("made an object just above"),
    }
}

/// The content-addressed id of `record`: base32 BLAKE3 of its canonical form with `id: ""`.
pub fn content_id(record: &Value) -> String {
    let mut blank = record.clone();
    if let Some(object) = blank.as_object_mut() {
        object.insert("id".into(), Value::from(""));
        object.remove("integrity");
    }
    let hash = crate::signing::ump_content_hash(&blank);
    format!("urn:ump:{}", hash.trim_start_matches("blake3:"))
}

/// Merges `patch` into `target`: objects member by member, anything else replaced.
fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (name, value) in patch {
                match target.get_mut(name) {
                    Some(existing) if existing.is_object() && value.is_object() => merge(existing, value),
                    _ => {
                        target.insert(name.clone(), value.clone());
                    }
                }
            }
        }
        (target, patch) => *target = patch.clone(),
    }
}

impl Store {
    /// Fills in what a partial record leaves out (see the module docs), without an id when it
    /// has none: the record `remember` would store.
    pub fn complete(&self, partial: &Value, now: Micros, actor_kind: &str, method: &str) -> Result<Value, StoreError> {
        let Value::Object(mut object) = partial.clone() else {
            return Err(StoreError::InvalidRecord("a record is a JSON object".into()));
        };
        let now_text = format_rfc3339(now);
        default_member(&mut object, "ump", Value::from("0.1"));
        let scope = object_member(&mut object, "scope");
        default_member(scope, "owner", Value::from(self.owner()));
        default_member(scope, "visibility", Value::from("private"));
        let owner = scope["owner"].clone();
        let time = object_member(&mut object, "time");
        default_member(time, "created", Value::from(now_text.clone()));
        default_member(time, "observed", Value::from(now_text.clone()));
        default_member(time, "valid_from", Value::from(now_text));
        default_member(time, "valid_to", Value::Null);
        let lifecycle = object_member(&mut object, "lifecycle");
        default_member(lifecycle, "status", Value::from("active"));
        default_member(lifecycle, "confidence", json!(0.6));
        default_member(&mut object, "superseded_by", json!([]));
        default_member(&mut object, "provenance", json!({"actor": owner, "actor_kind": actor_kind, "method": method}));
        Ok(Value::Object(object))
    }

    /// Stores `record` (completed with [`Store::complete`]), giving it its content id when it
    /// has none. Returns its id and what happened.
    ///
    /// # Errors
    /// [`StoreError::InvalidRecord`], SQLite errors.
    pub fn remember(&self, mut record: Value) -> Result<(String, Remembered), StoreError> {
        let has_id = record["id"].as_str().is_some_and(|id| !id.is_empty());
        if !has_id {
            let id = content_id(&record);
            record["id"] = Value::from(id);
        }
        let id = record["id"].as_str().unwrap_or_default().to_owned();
        if let Some(same) = self.current_record_saying(&record)? {
            return Ok((same, Remembered::Merged));
        }
        if let Some(existing) = self.get(&id)? {
            if existing == record {
                return Ok((id, Remembered::Merged));
            }
            return Err(StoreError::InvalidRecord(format!("a different record has the id `{id}`: revise it instead")));
        }
        match self.put(&record)? {
            Put::Erased => Err(StoreError::InvalidRecord(format!("the record `{id}` was erased for good and cannot be stored again"))),
            _ => Ok((id, Remembered::Created)),
        }
    }

    /// The id of a current record (active, not superseded) of the same kind, owner and text as
    /// `record`: remembering what the store already holds merges into it.
    fn current_record_saying(&self, record: &Value) -> Result<Option<String>, StoreError> {
        use rusqlite::OptionalExtension;
        let (Some(kind), Some(text)) = (record["kind"].as_str(), record["body"]["text"].as_str()) else { return Ok(None) };
        let owner = record["scope"]["owner"].as_str().unwrap_or_default();
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(database) => return database.current_record_saying(text, kind, owner),
        };
        Ok(connection
            .prepare_cached(
                "SELECT id FROM records WHERE text = ?1 AND kind = ?2 AND owner = ?3 AND status = 'active' AND NOT superseded ORDER BY seq LIMIT 1",
            )?
            .query_row([text, kind, owner], |row| row.get(0))
            .optional()?)
    }

    /// Replaces the record `id` by a successor with `patch` merged in: the successor
    /// `supersedes` it and is valid from the patch's `time.valid_from` (else now); the old
    /// record stays, valid until then and `superseded_by` the successor. Returns the
    /// successor's id.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::InvalidRecord`] for a tombstoned record or a
    /// patch that would change the id; SQLite errors.
    pub fn revise(&self, id: &str, patch: &Value, now: Micros) -> Result<String, StoreError> {
        let mut old = self.get(id)?.ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        if old["lifecycle"]["status"] == "tombstoned" {
            return Err(StoreError::InvalidRecord(format!("the record `{id}` is forgotten; remember a new one instead")));
        }
        if !patch.is_object() || patch.get("id").is_some() {
            return Err(StoreError::InvalidRecord("a patch is an object of the members to change, without `id`".into()));
        }
        let now_text = format_rfc3339(now);
        let mut successor = old.clone();
        if let Some(object) = successor.as_object_mut() {
            object.remove("integrity");
            object.insert("id".into(), Value::from(""));
        }
        merge(&mut successor, patch);
        let valid_from = patch["time"]["valid_from"].as_str().map_or_else(|| now_text.clone(), str::to_owned);
        successor["supersedes"] = json!([id]);
        successor["superseded_by"] = json!([]);
        successor["time"]["created"] = Value::from(now_text.clone());
        successor["time"]["observed"] = Value::from(now_text);
        successor["time"]["valid_from"] = Value::from(valid_from.clone());
        successor["time"]["valid_to"] = Value::Null;
        let successor_id = content_id(&successor);
        successor["id"] = Value::from(successor_id.clone());
        if let Some(object) = old.as_object_mut() {
            object.remove("integrity");
        }
        old["time"]["valid_to"] = Value::from(valid_from);
        let mut superseded_by: Vec<Value> = old["superseded_by"].as_array().cloned().unwrap_or_default();
        superseded_by.push(Value::from(successor_id.clone()));
        old["superseded_by"] = Value::Array(superseded_by);
        self.put(&successor)?;
        self.put(&old)?;
        Ok(successor_id)
    }

    /// Forgets the record `id`: tombstones it, or with `hard` erases it and its text and
    /// remembers the erasure (with `reason`) so no later load stores it again.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], SQLite errors.
    pub fn forget(&self, id: &str, reason: &str, hard: bool, now: Micros) -> Result<Forgotten, StoreError> {
        let connection = match self.sqlite() {
            Ok(connection) => connection,
            Err(_) => return self.forget_in_postgres(id, reason, hard, now),
        };
        let row: Option<(i64, String)> = {
            use rusqlite::OptionalExtension;
            connection
                .prepare_cached("SELECT seq, text FROM records WHERE id = ?1")?
                .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?
        };
        let Some((seq, text)) = row else {
            // Erased already (by an earlier call, or with the message it was derived from).
            if hard && self.is_erased(id)? {
                return Ok(Forgotten::Erased { derived: 0 });
            }
            return Err(StoreError::NotFound(id.to_owned()));
        };
        if hard {
            // The memories derived from it quote its words in their evidence: erased with it.
            let derived: Vec<(i64, String, String)> = connection
                .prepare_cached(
                    "SELECT DISTINCT records.seq, records.id, records.text FROM relations JOIN records ON records.seq = relations.seq \
                     WHERE relations.type = 'derived_from' AND relations.target = ?1 ORDER BY records.seq",
                )?
                .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<Result<_, _>>()?;
            self.erase(seq, id, &text, reason, now)?;
            for (derived_seq, derived_id, derived_text) in &derived {
                self.erase(*derived_seq, derived_id, derived_text, reason, now)?;
            }
            return Ok(Forgotten::Erased { derived: derived.len() as u64 });
        }
        self.tombstone(id)
    }

    /// [`Store::forget`] in a store in PostgreSQL.
    fn forget_in_postgres(&self, id: &str, reason: &str, hard: bool, now: Micros) -> Result<Forgotten, StoreError> {
        let super::Db::Postgres(database) = &self.db else { unreachable!("called for a store in PostgreSQL") };
        let seq = database.seq_of(id)?;
        let Some(seq) = seq else {
            // Erased already (by an earlier call, or with the message it was derived from).
            if hard && self.is_erased(id)? {
                return Ok(Forgotten::Erased { derived: 0 });
            }
            return Err(StoreError::NotFound(id.to_owned()));
        };
        if !hard {
            return self.tombstone(id);
        }
        // The memories derived from it quote its words in their evidence: erased with it.
        let derived = database.derived_from(id)?;
        let erased_at = format_rfc3339(now);
        let mut erased: Vec<(i64, String)> = vec![(seq, id.to_owned())];
        erased.extend(derived.iter().cloned());
        for (seq, id) in &erased {
            let json = database.record_at(*seq)?;
            let message = json.as_deref().and_then(|json| message_named(json, id));
            database.delete(*seq)?;
            let named =
                message.as_ref().map(|(provider, conversation, message)| (provider.as_str(), conversation.as_str(), message.as_str()));
            database.add_erasure(id, reason, &erased_at, named, true)?;
        }
        Ok(Forgotten::Erased { derived: derived.len() as u64 })
    }

    /// Tombstones the record `id`: kept for audit, out of recall.
    fn tombstone(&self, id: &str) -> Result<Forgotten, StoreError> {
        let mut record = self.get(id)?.ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        if let Some(object) = record.as_object_mut() {
            object.remove("integrity");
        }
        set_status(&mut record, "tombstoned");
        self.put(&record)?;
        Ok(Forgotten::Tombstoned)
    }

    /// Erases the record of a message another store erased (a sync's delta withdrawing it), or,
    /// when this store does not hold it, remembers the erasure all the same, so no later load
    /// stores it.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn erase_message(&self, message: &ErasedMessage, reason: &str, now: Micros) -> Result<Forgotten, StoreError> {
        let id = message_record_id(&message.provider, &message.conversation_id, &message.message_id);
        match self.forget(&id, reason, true, now) {
            Err(StoreError::NotFound(_)) => {
                let connection = match self.sqlite() {
                    Ok(connection) => connection,
                    Err(database) => {
                        let named = (message.provider.as_str(), message.conversation_id.as_str(), message.message_id.as_str());
                        database.add_erasure(&id, reason, &format_rfc3339(now), Some(named), false)?;
                        return Ok(Forgotten::Erased { derived: 0 });
                    }
                };
                connection
                    .prepare_cached(
                        "INSERT OR IGNORE INTO erasures (id, reason, erased_at, provider, conversation, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    )?
                    .execute(rusqlite::params![
                        id,
                        reason,
                        &format_rfc3339(now),
                        message.provider,
                        message.conversation_id,
                        message.message_id
                    ])?;
                Ok(Forgotten::Erased { derived: 0 })
            }
            done => done,
        }
    }

    /// Deletes the record at `seq` with its text and links, and remembers its erasure: for a
    /// message's record (its id made of the provider, conversation and message ids it names),
    /// with those ids.
    fn erase(&self, seq: i64, id: &str, text: &str, reason: &str, now: Micros) -> Result<(), StoreError> {
        use rusqlite::OptionalExtension;
        let Ok(connection) = self.sqlite() else { unreachable!("erased in PostgreSQL by forget_in_postgres") };
        let named: (Option<String>, Option<String>, Option<String>) = connection
            .prepare_cached(
                // A record that is not JSON (a store edited by hand) is still erased, as no message.
                "SELECT json_extract(record, '$.body.structured.source_kind'), json_extract(record, '$.body.structured.conversation_id'), \
                 json_extract(record, '$.body.structured.message_id') FROM records WHERE seq = ?1 AND json_valid(record)",
            )?
            .query_row([seq], |row| Ok((row.get(0).ok().flatten(), row.get(1).ok().flatten(), row.get(2).ok().flatten())))
            .optional()?
            .unwrap_or_default();
        let message = match named {
            (Some(provider), Some(conversation), Some(message)) if message_record_id(&provider, &conversation, &message) == id => {
                Some((provider, conversation, message))
            }
            _ => None,
        };
        super::unindex(connection, seq, text)?;
        connection.prepare_cached("DELETE FROM records WHERE seq = ?1")?.execute([seq])?;
        let (provider, conversation, message) = message.map_or((None, None, None), |(p, c, m)| (Some(p), Some(c), Some(m)));
        connection
            .prepare_cached(
                "INSERT OR REPLACE INTO erasures (id, reason, erased_at, provider, conversation, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(rusqlite::params![id, reason, &format_rfc3339(now), provider, conversation, message])?;
        Ok(())
    }
}

/// The provider, conversation and message ids a message's record (its JSON) was written
/// under, when its id is made of them (`id`): what a sync needs to withdraw it.
fn message_named(json: &str, id: &str) -> Option<(String, String, String)> {
    let record: Value = serde_json::from_str(json).ok()?;
    let structured = &record["body"]["structured"];
    let named = (structured["source_kind"].as_str()?, structured["conversation_id"].as_str()?, structured["message_id"].as_str()?);
    (message_record_id(named.0, named.1, named.2) == id).then(|| (named.0.to_owned(), named.1.to_owned(), named.2.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::super::recall::RecallQuery;
    use super::*;
    use crate::timefmt::parse_rfc3339;

    fn at(text: &str) -> Micros {
        parse_rfc3339(text).unwrap()
    }

    fn store() -> (tempfile::TempDir, Store) {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::create(&folder.path().join("m.db"), "did:key:zOwner").unwrap();
        (folder, store)
    }

    fn remembered(store: &Store, text: &str, now: &str) -> String {
        let partial = json!({"kind": "semantic", "body": {"text": text}});
        let record = store.complete(&partial, at(now), "agent", "test").unwrap();
        store.remember(record).unwrap().0
    }

    #[test]
    fn remembering_fills_the_defaults_and_the_same_record_twice_is_merged() {
        let (_folder, store) = store();
        let partial = json!({"kind": "semantic", "body": {"text": "Prefers tea"}});
        let record = store.complete(&partial, at("2026-06-01T00:00:00Z"), "agent", "test").unwrap();
        assert_eq!(record["scope"]["owner"], "did:key:zOwner");
        assert_eq!(record["lifecycle"]["status"], "active");
        assert_eq!(record["time"]["valid_to"], Value::Null);
        let (id, first) = store.remember(record.clone()).unwrap();
        assert!(id.starts_with("urn:ump:") && id[8..].bytes().all(|b| matches!(b, b'a'..=b'z' | b'2'..=b'7')), "{id}");
        assert_eq!(first, Remembered::Created);
        assert_eq!(store.remember(record).unwrap(), (id.clone(), Remembered::Merged));
        let later = store.complete(&partial, at("2026-07-01T00:00:00Z"), "agent", "test").unwrap();
        assert_eq!(store.remember(later).unwrap(), (id, Remembered::Merged), "said again later, still the same memory");
    }

    #[test]
    fn revising_keeps_the_old_record_valid_until_the_successor_starts() {
        let (_folder, store) = store();
        let old = remembered(&store, "Lives in Lisbon", "2026-01-01T00:00:00Z");
        let patch = json!({"body": {"text": "Lives in Oslo"}, "time": {"valid_from": "2026-04-01T00:00:00Z"}});
        let new = store.revise(&old, &patch, at("2026-04-02T00:00:00Z")).unwrap();
        let old_record = store.get(&old).unwrap().unwrap();
        assert_eq!(old_record["superseded_by"], json!([new]));
        assert_eq!(old_record["time"]["valid_to"], "2026-04-01T00:00:00Z");
        assert_eq!(store.get(&new).unwrap().unwrap()["supersedes"], json!([old]));
        let lives_at = |when: &str| {
            let query = RecallQuery { query: "lives".into(), valid_at: at(when), limit: 5, ..RecallQuery::default() };
            store.recall(&query).unwrap().into_iter().map(|r| r.record["body"]["text"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
        };
        assert_eq!(lives_at("2026-05-01T00:00:00Z"), ["Lives in Oslo"]);
        assert_eq!(lives_at("2026-02-01T00:00:00Z"), ["Lives in Lisbon"]);
    }

    #[test]
    fn erasing_a_message_erases_the_memories_quoting_it_and_leaves_no_word_of_it_in_the_file() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("m.db");
        let mut store = Store::create(&path, "owner").unwrap();
        let message = crate::store::tests::record("urn:ump:mm", "I was diagnosed with zygomycosis", "2026-01-02T03:04:05Z");
        let mut memory = crate::store::tests::record("urn:ump:me", "Has zygomycosis", "2026-01-02T03:04:05Z");
        memory["relations"] = json!([{"type": "derived_from", "target": "urn:ump:mm"}]);
        let other = crate::store::tests::record("urn:ump:ot", "Lives in Leeds", "2026-01-02T03:04:05Z");
        // An older version of the message, replaced before the erasure, must go too.
        let older = crate::store::tests::record("urn:ump:mm", "I think I have zygomycosis", "2026-01-02T03:04:05Z");
        for record in [&older, &message, &memory, &other] {
            store.put(record).unwrap();
        }
        let forgotten =
            store.in_transaction(|store| store.forget("urn:ump:mm", "erasure request", true, at("2026-02-01T00:00:00Z"))).unwrap();
        assert_eq!(forgotten, Forgotten::Erased { derived: 1 });
        assert!(store.get("urn:ump:me").unwrap().is_none(), "the memory quoting it is erased with it");
        assert!(store.get("urn:ump:ot").unwrap().is_some());
        let erased: std::collections::BTreeSet<String> = store.erased_ids().unwrap().into_iter().collect();
        assert_eq!(erased, ["urn:ump:me".to_owned(), "urn:ump:mm".to_owned()].into_iter().collect());
        assert_eq!(
            store.forget("urn:ump:me", "erasure request", true, at("2026-02-01T00:00:00Z")).unwrap(),
            Forgotten::Erased { derived: 0 },
            "erasing it again is no error"
        );
        drop(store);
        let bytes = std::fs::read(&path).unwrap();
        // The stem too: the full-text index holds "zygomycosi".
        assert!(!bytes.windows(b"zygomycosi".len()).any(|window| window == b"zygomycosi"), "no copy of the words is left in the file");
    }

    #[test]
    fn erasing_a_message_remembers_which_message_it_was_and_erasing_a_memory_does_not() {
        let (_folder, store) = store();
        let id = message_record_id("chatgpt", "c1", "m1");
        let mut message = crate::store::tests::record(&id, "My password is hunter2", "2026-01-02T03:04:05Z");
        message["body"]["structured"] = json!({"source_kind": "chatgpt", "conversation_id": "c1", "message_id": "m1"});
        // A record that names a message but is not under that message's id (a memory quoting it).
        let mut other = crate::store::tests::record("urn:ump:xx", "Names a message", "2026-01-02T03:04:05Z");
        other["body"]["structured"] = json!({"source_kind": "chatgpt", "conversation_id": "c1", "message_id": "m2"});
        let memory = crate::store::tests::record("urn:ump:me", "Likes tea", "2026-01-02T03:04:05Z");
        for record in [&message, &other, &memory] {
            store.put(record).unwrap();
        }
        for erased in [id.as_str(), "urn:ump:xx", "urn:ump:me"] {
            store.forget(erased, "asked", true, at("2026-02-01T00:00:00Z")).unwrap();
        }
        let named = crate::store::ErasedMessage { provider: "chatgpt".into(), conversation_id: "c1".into(), message_id: "m1".into() };
        assert_eq!(store.erased_messages().unwrap(), [named]);
        assert_eq!(store.erased_ids().unwrap().len(), 3);
    }

    /// Guards erasure of a record a hand-edited store holds as broken JSON: reading which
    /// message it was must not stop the erasure.
    #[test]
    fn a_record_that_is_no_longer_json_is_still_erased() {
        let (_folder, store) = store();
        store.put(&crate::store::tests::record("urn:ump:bb", "My password is hunter2", "2026-01-02T03:04:05Z")).unwrap();
        store.connection().execute("UPDATE records SET record = '{broken' WHERE id = 'urn:ump:bb'", []).unwrap();
        assert_eq!(store.forget("urn:ump:bb", "asked", true, at("2026-02-01T00:00:00Z")).unwrap(), Forgotten::Erased { derived: 0 });
        assert!(store.is_erased("urn:ump:bb").unwrap() && store.erased_messages().unwrap().is_empty());
    }

    #[test]
    fn a_soft_forget_tombstones_and_a_hard_one_erases_for_good() {
        let (_folder, store) = store();
        let soft = remembered(&store, "Has a cat", "2026-01-01T00:00:00Z");
        assert_eq!(store.forget(&soft, "user_revoked", false, at("2026-02-01T00:00:00Z")).unwrap(), Forgotten::Tombstoned);
        assert_eq!(store.get(&soft).unwrap().unwrap()["lifecycle"]["status"], "tombstoned");
        let hard = remembered(&store, "Password hint is blue", "2026-01-01T00:00:00Z");
        let record = store.get(&hard).unwrap().unwrap();
        assert_eq!(store.forget(&hard, "erasure request", true, at("2026-02-01T00:00:00Z")).unwrap(), Forgotten::Erased { derived: 0 });
        assert!(store.get(&hard).unwrap().is_none());
        assert_eq!(store.put(&record).unwrap(), Put::Erased, "a later load does not bring it back");
        let query = RecallQuery { query: "password".into(), valid_at: at("2026-03-01T00:00:00Z"), limit: 5, ..RecallQuery::default() };
        assert!(store.recall(&query).unwrap().is_empty());
        assert!(store.check_integrity().unwrap().is_empty());
        assert_eq!(store.forget(&hard, "again", true, 0).unwrap(), Forgotten::Erased { derived: 0 }, "erased already");
        assert!(matches!(store.forget(&hard, "again", false, 0), Err(StoreError::NotFound(_))), "nothing left to tombstone");
    }
}
