//! UMP `recall` (§3.2): records matching a query, ranked by text relevance, recency and
//! salience, each with the signals its score came from.
//!
//! Relevance is BM25 over the records' text (the in-memory [`super::search`] index), taken
//! relative to the best match of the query (so 1.0 is the best and the scale does not depend
//! on the corpus). Recency halves every [`RECENCY_HALF_LIFE_DAYS`] before the query's `valid_at`. Salience is the record's own
//! `lifecycle.salience`, else 0.7 for a memory and 0.4 for a message (its evidence). Only
//! records valid at `valid_at` and not tombstoned are candidates: `valid_from` ≤ it <
//! `valid_to`, and a superseded record without a `valid_to` (memport's own memories) counts
//! as valid until its successor was created. A query with no words returns the most recent
//! records.

use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};

use super::search::{self, Hit, Only};
use super::{IndexInUse, Store, StoreError};
use crate::model::Micros;

/// Days after which a record's recency signal is halved.
pub const RECENCY_HALF_LIFE_DAYS: f64 = 180.0;
/// The most records one recall returns.
pub const MAX_RECALL: usize = 50;
/// How many best text matches are ranked again with the other signals.
const CANDIDATES: usize = 100;
/// Until when a record `r` that is superseded and has no `valid_to` counts as valid: its first
/// successor's creation (its own creation when no successor is stored), in SQL.
const SUPERSEDED_UNTIL: &str =
    "coalesce((SELECT min(s.created_us) FROM json_each(r.record, '$.superseded_by') j JOIN records s ON s.id = j.value), r.created_us)";
/// Weights of the signals in the score.
const WEIGHTS: (f64, f64, f64) = (0.6, 0.25, 0.15);

/// A candidate as read from the columns, before its record is.
struct Candidate {
    seq: i64,
    created_us: i64,
    salience: Option<f64>,
    /// See [`scope_match`].
    scope_match: f64,
    /// BM25 (higher is better), 0 without a query.
    rank: f64,
    /// The hash of the record's id, for a hit of an index of a replaced file
    /// ([`super::IndexInUse::of_replaced_file`]): the record read by `seq` must have it.
    id_hash: Option<u64>,
}

/// What to recall.
#[derive(Debug, Clone, Default)]
pub struct RecallQuery {
    /// Words to look for; empty for the most recent records.
    pub query: String,
    /// Only these kinds, when given.
    pub kinds: Vec<String>,
    /// Only records of this owner, when given.
    pub owner: Option<String>,
    /// Only records of this agent (a capability token's scope), when given.
    pub only_agent: Option<String>,
    /// Ranked higher when the record's `scope.agent` / `scope.session` match.
    pub agent: Option<String>,
    /// See `agent`.
    pub session: Option<String>,
    /// The point in time the records must be valid at.
    pub valid_at: Micros,
    /// At most this many (capped at [`MAX_RECALL`]).
    pub limit: usize,
}

/// One recalled record with its signals and score.
#[derive(Debug, Clone)]
pub struct Recalled {
    /// The UMP record.
    pub record: Value,
    /// `similarity`, `recency`, `salience`, `scope_match`, each 0..1.
    pub signals: Value,
    /// The combined score, 0..1.
    pub score: f64,
}

/// Words of a question that say nothing of what it is about, in the languages extraction
/// reads: matched, they would rank any record with "do" or "the" (the index stems English
/// words, so "lives" finds "live").
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "did", "do", "does", "for", "from", "have", "how", "i", "in", "is", "it", "me", "my", "of",
    "on", "or", "the", "to", "was", "what", "when", "where", "which", "who", "why", "with", "you", "your", "der", "die", "das", "und",
    "ich", "ist", "wo", "wie", "was", "le", "la", "les", "et", "je", "est", "où", "que", "el", "los", "las", "y", "yo", "es", "dónde",
    "qué", "a", "je", "jsem", "kde", "co", "se",
];

/// The words of `query` recall looks for: each of two or more characters that is not a
/// function word; a record matches with any of them.
fn query_words(query: &str) -> Vec<&str> {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 2 && !FUNCTION_WORDS.contains(&word.to_lowercase().as_str()))
        .collect()
}

impl Store {
    /// Runs `query` (see the module docs).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn recall(&self, query: &RecallQuery) -> Result<Vec<Recalled>, StoreError> {
        let words = query_words(&query.query);
        let rows = match self.sqlite() {
            Ok(_) if words.is_empty() => self.most_recent(query)?,
            // Without words, or without a change log to keep the index in step (a store of
            // version 1 opened only for reading), the database's own indexes serve.
            Err(database) if words.is_empty() || self.schema_version < super::postgres::CHANGE_LOG_VERSION => {
                candidates_in_postgres(database, &words, query)?
            }
            Err(database) => return self.recall_in_postgres(database, &words, query),
            Ok(_) => self.best_matches(&self.search_index()?, &words, query)?,
        };
        let scored = ranked(rows, &words, query);
        let in_database = match self.sqlite() {
            Ok(_) => std::collections::HashMap::new(),
            Err(database) => database.live_records_at(scored.iter().map(|scored| scored.seq).collect())?,
        };
        self.read_back(scored, in_database)
    }

    /// Recall over the in-memory index of a store in PostgreSQL, in one round trip when nothing
    /// was written since the index was last brought up to date: the index is searched as it
    /// stands, and the records returned are read together with the change log's end. Should the
    /// log have moved on, the index catches up and is searched again (the round trips of a
    /// refresh, and one more for the records).
    fn recall_in_postgres(
        &self,
        database: &super::postgres::Database,
        words: &[&str],
        query: &RecallQuery,
    ) -> Result<Vec<Recalled>, StoreError> {
        let index = self.search_index_of(database, false)?;
        // Read before the search: a refresh by another recall meanwhile only makes the index
        // newer than this says, which at worst searches once more.
        let applied = index.index.applied().unwrap_or(0);
        let scored = ranked(self.best_matches(&index, words, query)?, words, query);
        let (in_database, latest) = database.live_records_and_latest_change(scored.iter().map(|scored| scored.seq).collect())?;
        if latest == applied {
            return self.read_back(scored, in_database);
        }
        let index = self.search_index_of(database, true)?;
        let scored = ranked(self.best_matches(&index, words, query)?, words, query);
        let in_database = database.live_records_at(scored.iter().map(|scored| scored.seq).collect())?;
        self.read_back(scored, in_database)
    }

    /// The records of `scored`, best first: from a store file one by one, from PostgreSQL out
    /// of `in_database` (read in one round trip for all of them).
    fn read_back(&self, scored: Vec<Scored>, mut in_database: super::postgres::LiveRecords) -> Result<Vec<Recalled>, StoreError> {
        let mut recalled = Vec::with_capacity(scored.len());
        for Scored { score, seq, id_hash, signals } in scored {
            let live = match self.sqlite() {
                Ok(connection) => connection
                    .prepare_cached("SELECT id, record FROM records WHERE seq = ?1 AND status != 'tombstoned'")?
                    .query_row([seq], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))
                    .optional()?,
                Err(_) => in_database.remove(&seq),
            };
            // A record erased or tombstoned since the search is not recalled.
            let Some((id, json)) = live else {
                continue;
            };
            // Nor is another record under the `seq` of a replaced file's hit.
            if id_hash.is_some_and(|hash| hash != search::id_hash(&id)) {
                continue;
            }
            if let Ok(record) = serde_json::from_str(&json) {
                recalled.push(Recalled { record, signals, score });
            }
        }
        Ok(recalled)
    }

    /// The records valid at the query's time, most recent first (a query without words).
    fn most_recent(&self, query: &RecallQuery) -> Result<Vec<Candidate>, StoreError> {
        let Ok(connection) = self.sqlite() else { return Err(StoreError::NotAFile("index in memory")) };
        let kinds = format!(",{},", query.kinds.join(","));
        let sql = format!(
            "SELECT r.seq, r.created_us, r.salience, r.agent, r.session FROM records r
             WHERE r.status != 'tombstoned'
             AND (?1 OR instr(?2, ',' || r.kind || ',') > 0)
             AND (?3 IS NULL OR r.owner = ?3)
             AND (?6 IS NULL OR r.agent = ?6)
             AND (r.valid_from_us IS NULL OR r.valid_from_us <= ?4)
             AND (r.valid_to_us IS NULL OR r.valid_to_us > ?4)
             AND NOT (r.superseded AND r.valid_to_us IS NULL AND {SUPERSEDED_UNTIL} <= ?4)
             ORDER BY r.created_us DESC, r.seq LIMIT ?5"
        );
        let mut statement = connection.prepare_cached(&sql)?;
        let rows = statement.query_map(
            params![query.kinds.is_empty(), kinds, query.owner, query.valid_at, CANDIDATES as i64, query.only_agent],
            |row| {
                let (agent, session): (Option<String>, Option<String>) = (row.get(3)?, row.get(4)?);
                Ok(Candidate {
                    seq: row.get(0)?,
                    created_us: row.get(1)?,
                    salience: row.get(2)?,
                    scope_match: scope_match([(agent.as_deref(), query.agent.as_deref()), (session.as_deref(), query.session.as_deref())]),
                    rank: 0.0,
                    id_hash: None,
                })
            },
        )?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The [`CANDIDATES`] records valid at the query's time whose text matches `words` best
    /// (BM25, from the search index). The index filters by kind, owner, agent and status; the
    /// times are checked here, and when too many of the best are not valid at that time, more
    /// are asked for, so the result is the best valid ones.
    fn best_matches(&self, in_use: &IndexInUse, words: &[&str], query: &RecallQuery) -> Result<Vec<Candidate>, StoreError> {
        let IndexInUse { index, of_replaced_file } = in_use;
        let of_replaced_file = *of_replaced_file;
        let only = Only {
            kinds: &query.kinds,
            owner: query.owner.as_deref(),
            agent: query.only_agent.as_deref(),
            rank_agent: query.agent.as_deref(),
            rank_session: query.session.as_deref(),
        };
        let mut limit = CANDIDATES;
        loop {
            let hits = index.search(words, &only, limit)?;
            let exhausted = hits.len() < limit;
            let mut valid = Vec::with_capacity(CANDIDATES);
            for hit in hits {
                if valid.len() == CANDIDATES {
                    break;
                }
                if self.valid_at(&hit, query.valid_at)? {
                    valid.push(Candidate {
                        seq: hit.seq,
                        created_us: hit.created_us,
                        salience: hit.salience,
                        scope_match: share_matched([hit.agent_matches, hit.session_matches]),
                        rank: hit.score,
                        id_hash: of_replaced_file.then_some(hit.id_hash),
                    });
                }
            }
            if valid.len() == CANDIDATES || exhausted {
                return Ok(valid);
            }
            limit *= 4;
        }
    }

    /// Whether the record of `hit` is valid at `at`: `valid_from` ≤ it < `valid_to`, and a
    /// superseded record without `valid_to` until its first successor was created.
    fn valid_at(&self, hit: &Hit, at: Micros) -> Result<bool, StoreError> {
        if hit.valid_from_us.is_some_and(|from| from > at) || hit.valid_to_us.is_some_and(|to| to <= at) {
            return Ok(false);
        }
        if !hit.superseded || hit.valid_to_us.is_some() {
            return Ok(true);
        }
        let until: Option<i64> = match self.sqlite() {
            Ok(connection) => connection
                .prepare_cached(&format!("SELECT {SUPERSEDED_UNTIL} FROM records r WHERE r.seq = ?1"))?
                .query_row([hit.seq], |row| row.get(0))
                .optional()?,
            Err(database) => database.superseded_until(hit.seq)?,
        };
        Ok(until.is_some_and(|until| until > at))
    }
}

/// A candidate ranked: its score and signals, and where its record is.
struct Scored {
    score: f64,
    seq: i64,
    id_hash: Option<u64>,
    signals: Value,
}

/// `rows` ranked by text relevance (against the best of them), recency and salience, best
/// first (ties by `seq`), cut to the query's limit.
fn ranked(rows: Vec<Candidate>, words: &[&str], query: &RecallQuery) -> Vec<Scored> {
    // Ranked on the columns; only the records returned are read and parsed.
    let best = rows.iter().map(|row| row.rank).fold(0.0_f64, f64::max);
    let mut scored: Vec<Scored> = rows
        .into_iter()
        .map(|candidate| {
            let similarity = if words.is_empty() || best <= 0.0 { 0.0 } else { (candidate.rank / best).clamp(0.0, 1.0) };
            let age_days = ((query.valid_at - candidate.created_us) as f64 / 86_400e6).max(0.0);
            let recency = 0.5_f64.powf(age_days / RECENCY_HALF_LIFE_DAYS);
            let salience = candidate.salience.unwrap_or(0.5).clamp(0.0, 1.0);
            let scope_match = candidate.scope_match;
            let (text_weight, recency_weight, salience_weight) = WEIGHTS;
            let score = if words.is_empty() {
                (recency + salience) / 2.0
            } else {
                text_weight * similarity + recency_weight * recency + salience_weight * salience
            };
            let signals = json!({
                "similarity": round(similarity),
                "recency": round(recency),
                "salience": round(salience),
                "scope_match": round(scope_match),
            });
            Scored { score: round(score * (0.9 + 0.1 * scope_match)), seq: candidate.seq, id_hash: candidate.id_hash, signals }
        })
        .collect();
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.seq.cmp(&b.seq)));
    scored.truncate(query.limit.clamp(1, MAX_RECALL));
    scored
}

/// The [`CANDIDATES`] records of a store in PostgreSQL valid at the query's time, most recent
/// first without words (else best text matches first by `ts_rank` of its `tsvector` index: a
/// store without the change log the in-memory index follows).
fn candidates_in_postgres(database: &super::postgres::Database, words: &[&str], query: &RecallQuery) -> Result<Vec<Candidate>, StoreError> {
    let filter = super::postgres::Candidates {
        words: words.iter().map(|word| (*word).to_owned()).collect(),
        kinds: query.kinds.clone(),
        owner: query.owner.clone(),
        only_agent: query.only_agent.clone(),
        valid_at: query.valid_at,
        limit: CANDIDATES as i64,
    };
    Ok(database
        .candidates(filter)?
        .into_iter()
        .map(|(seq, created_us, salience, agent, session, rank)| Candidate {
            seq,
            created_us,
            salience,
            scope_match: scope_match([(agent.as_deref(), query.agent.as_deref()), (session.as_deref(), query.session.as_deref())]),
            rank,
            id_hash: None,
        })
        .collect())
}

/// The share of the query's scope members (agent, session) the record's scope has too; 1.0
/// when the query names none. Each pair is (the record's, the query's).
fn scope_match(pairs: [(Option<&str>, Option<&str>); 2]) -> f64 {
    share_matched(pairs.map(|(have, want)| want.map(|want| have == Some(want))))
}

/// The share of `true` among the members asked for (`Some`); 1.0 when none is.
fn share_matched(asked: [Option<bool>; 2]) -> f64 {
    let asked: Vec<bool> = asked.into_iter().flatten().collect();
    if asked.is_empty() {
        return 1.0;
    }
    asked.iter().filter(|matched| **matched).count() as f64 / asked.len() as f64
}

/// Three decimals: signals are for people and re-ranking, not for their last bits.
fn round(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::super::Put;
    use super::super::tests::record;
    use super::*;
    use crate::timefmt::parse_rfc3339;

    fn store_with(records: &[Value]) -> (tempfile::TempDir, Store) {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::create(&folder.path().join("m.db"), "owner").unwrap();
        for record in records {
            assert_eq!(store.put(record).unwrap(), Put::Created);
        }
        (folder, store)
    }

    fn query(text: &str) -> RecallQuery {
        RecallQuery { query: text.into(), valid_at: parse_rfc3339("2026-06-01T00:00:00Z").unwrap(), limit: 10, ..RecallQuery::default() }
    }

    #[test]
    fn the_record_saying_the_query_words_ranks_first_with_its_signals() {
        let (_folder, store) = store_with(&[
            record("urn:ump:aa", "Works as a carpenter in Oslo", "2026-01-01T00:00:00Z"),
            record("urn:ump:bb", "Has two children", "2026-05-01T00:00:00Z"),
            record("urn:ump:cc", "Is learning carpentry? No: woodworking in Oslo", "2025-01-01T00:00:00Z"),
        ]);
        let results = store.recall(&query("carpenter job")).unwrap();
        assert_eq!(results[0].record["id"], "urn:ump:aa");
        assert_eq!(results[0].signals["similarity"], 1.0);
        assert!(results.iter().all(|result| result.record["id"] != "urn:ump:bb"), "a record without the words is not recalled");
        for name in ["similarity", "recency", "salience", "scope_match"] {
            assert!(results[0].signals[name].is_f64(), "{name}");
        }
    }

    #[test]
    fn tombstoned_and_not_yet_or_no_longer_valid_records_are_not_recalled() {
        let mut past = record("urn:ump:aa", "Lives in Lisbon", "2025-01-01T00:00:00Z");
        past["time"]["valid_to"] = Value::from("2026-03-01T00:00:00Z");
        let now = record("urn:ump:bb", "Lives in Oslo", "2026-03-01T00:00:00Z");
        let mut gone = record("urn:ump:cc", "Lives in Rome", "2026-03-01T00:00:00Z");
        super::super::set_status(&mut gone, "tombstoned");
        let (_folder, store) = store_with(&[past, now, gone]);
        let ids = |at: &str| -> Vec<Value> {
            let mut at_query = query("lives");
            at_query.valid_at = parse_rfc3339(at).unwrap();
            store.recall(&at_query).unwrap().into_iter().map(|result| result.record["id"].clone()).collect()
        };
        assert_eq!(ids("2026-06-01T00:00:00Z"), vec![Value::from("urn:ump:bb")]);
        assert_eq!(ids("2025-06-01T00:00:00Z"), vec![Value::from("urn:ump:aa")]);
    }

    #[test]
    fn query_words_that_look_like_fts_operators_are_plain_words() {
        let (_folder, store) = store_with(&[record("urn:ump:aa", "Says NOT and OR often", "2026-01-01T00:00:00Z")]);
        assert_eq!(store.recall(&query("NOT \"OR\" (near) *")).unwrap().len(), 1);
        assert_eq!(store.recall(&query("")).unwrap().len(), 1, "no words: the most recent records");
    }
}

#[cfg(test)]
mod search_index_tests {
    use super::super::Put;
    use super::super::tests::record;
    use super::*;
    use crate::timefmt::parse_rfc3339;

    fn ids(store: &Store, text: &str) -> Vec<String> {
        let query = RecallQuery {
            query: text.into(),
            valid_at: parse_rfc3339("2026-06-01T00:00:00Z").unwrap(),
            limit: 10,
            ..RecallQuery::default()
        };
        store.recall(&query).unwrap().into_iter().map(|result| result.record["id"].as_str().unwrap().to_owned()).collect()
    }

    #[test]
    fn recall_sees_what_another_connection_wrote_after_the_index_was_built() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("m.db");
        let writer = Store::create(&path, "owner").unwrap();
        writer.put(&record("urn:ump:aa", "Works as a carpenter", "2026-01-01T00:00:00Z")).unwrap();
        let reader = Store::open(&path, false).unwrap();
        assert_eq!(ids(&reader, "carpenter"), ["urn:ump:aa"], "the index is built on first use");
        // Another connection (a server's writer, or another process) adds, replaces and erases.
        writer.put(&record("urn:ump:bb", "Bought a carpenter's plane", "2026-02-01T00:00:00Z")).unwrap();
        let mut changed = record("urn:ump:aa", "Works as a nurse", "2026-01-01T00:00:00Z");
        changed["lifecycle"]["confidence"] = Value::from(0.9);
        assert_eq!(writer.put(&changed).unwrap(), Put::Replaced);
        assert_eq!(ids(&reader, "carpenter"), ["urn:ump:bb"], "the replaced text no longer matches");
        assert_eq!(ids(&reader, "nurse"), ["urn:ump:aa"]);
        writer.forget("urn:ump:bb", "test", true, 0).unwrap();
        assert!(ids(&reader, "carpenter").is_empty(), "an erased record is gone from the index");
    }

    #[test]
    fn a_store_loaded_in_bulk_after_the_index_was_built_is_indexed_again() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("m.db");
        let writer = Store::create(&path, "owner").unwrap();
        writer.put(&record("urn:ump:aa", "Plays the cello", "2026-01-01T00:00:00Z")).unwrap();
        let reader = Store::open(&path, false).unwrap();
        assert_eq!(ids(&reader, "cello"), ["urn:ump:aa"]);
        // A bulk load clears the change log: the index cannot catch up record by record.
        writer.begin_bulk_load().unwrap();
        writer.put(&record("urn:ump:bb", "Plays the cello in an orchestra", "2026-02-01T00:00:00Z")).unwrap();
        writer.end_bulk_load().unwrap();
        let mut found = ids(&reader, "cello");
        found.sort();
        assert_eq!(found, ["urn:ump:aa", "urn:ump:bb"]);
    }

    #[test]
    fn recall_inside_a_write_transaction_is_refused_instead_of_indexing_what_may_roll_back() {
        let folder = tempfile::tempdir().unwrap();
        let mut store = Store::create(&folder.path().join("m.db"), "owner").unwrap();
        store.put(&record("urn:ump:aa", "Plays the cello", "2026-01-01T00:00:00Z")).unwrap();
        let query = RecallQuery {
            query: "cello".into(),
            valid_at: parse_rfc3339("2026-06-01T00:00:00Z").unwrap(),
            limit: 10,
            ..RecallQuery::default()
        };
        let refused = store.in_transaction(|store| store.recall(&query).map(|_| ()));
        assert!(matches!(refused, Err(StoreError::InTransaction)), "{refused:?}");
        assert_eq!(ids(&store, "cello"), ["urn:ump:aa"], "outside the transaction recall works");
    }

    #[test]
    fn a_row_another_tool_wrote_with_a_value_of_the_wrong_type_is_left_out_not_the_index() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::create(&folder.path().join("m.db"), "owner").unwrap();
        store.put(&record("urn:ump:aa", "Plays the cello", "2026-01-01T00:00:00Z")).unwrap();
        store
            .connection()
            .execute(
                "INSERT INTO records (id, kind, status, owner, text, created_us, superseded, record)
                 VALUES ('urn:ump:bb', 'semantic', 'active', 'owner', X'63656c6c6f', 0, 0, '{}')",
                [],
            )
            .unwrap();
        assert_eq!(ids(&store, "cello"), ["urn:ump:aa"]);
    }

    #[test]
    fn more_candidates_are_searched_when_the_best_matches_are_not_valid_at_the_time() {
        // More records than one search's candidates match best but are no longer valid: the
        // valid one, a weaker match, is still found.
        let folder = tempfile::tempdir().unwrap();
        let store = Store::create(&folder.path().join("m.db"), "owner").unwrap();
        for index in 0..(CANDIDATES + 20) {
            let mut old = record(&format!("urn:ump:old{index}"), "garden garden garden", "2025-01-01T00:00:00Z");
            old["time"]["valid_to"] = Value::from("2025-06-01T00:00:00Z");
            store.put(&old).unwrap();
        }
        store.put(&record("urn:ump:now", "Has a small garden behind a long house by the sea", "2026-01-01T00:00:00Z")).unwrap();
        assert_eq!(ids(&store, "garden"), ["urn:ump:now"]);
    }

    /// Waits until `store`'s recall uses the index of the file in place, built in the
    /// background after a run moved it there.
    fn until_the_new_files_index_is_built(store: &Store) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while store.search_index().unwrap().of_replaced_file {
            assert!(std::time::Instant::now() < deadline, "the new file's index was never built");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Guards against recalls that wait for the whole index to be built again (about 1 s per
    /// 100,000 records) each time a run moves a new store under a server.
    #[test]
    fn recall_uses_the_replaced_files_index_until_the_new_files_is_built_in_the_background() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("m.db");
        Store::create(&path, "owner").unwrap().put(&record("urn:ump:aa", "Keeps bees", "2026-01-01T00:00:00Z")).unwrap();
        let mut reader = Store::open(&path, false).unwrap();
        assert_eq!(ids(&reader, "bees"), ["urn:ump:aa"]);
        // A run loads into a copy and moves it into place.
        let copy = path.with_extension("copy");
        reader.copy_to(&copy).unwrap();
        Store::open(&copy, true).unwrap().put(&record("urn:ump:bb", "Keeps bees and sells their honey", "2026-02-01T00:00:00Z")).unwrap();
        std::fs::rename(&copy, &path).unwrap();
        assert!(reader.follow_file().unwrap());

        assert!(reader.search_index().unwrap().of_replaced_file, "the first recall does not wait for the build");
        let found = ids(&reader, "bees");
        assert!(found == ["urn:ump:aa"] || found.len() == 2, "what the old index holds is read from the new file: {found:?}");
        until_the_new_files_index_is_built(&reader);
        let mut found = ids(&reader, "bees");
        found.sort();
        assert_eq!(found, ["urn:ump:aa", "urn:ump:bb"]);
        assert!(!reader.search_index().unwrap().of_replaced_file);
    }

    /// Guards against recalling an unrelated record: a hit of the replaced file's index is
    /// read from the new file by `seq`, where another record may be.
    #[test]
    fn a_hit_of_the_replaced_files_index_is_not_taken_for_the_other_record_under_its_seq() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("m.db");
        Store::create(&path, "owner").unwrap().put(&record("urn:ump:aa", "Keeps bees", "2026-01-01T00:00:00Z")).unwrap();
        let mut reader = Store::open(&path, false).unwrap();
        assert_eq!(ids(&reader, "bees"), ["urn:ump:aa"]);
        // Another store, whose first record is another, moved over the path.
        let other = folder.path().join("other.db");
        Store::create(&other, "owner").unwrap().put(&record("urn:ump:cc", "Keeps bees", "2026-01-01T00:00:00Z")).unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert!(reader.follow_file().unwrap());

        assert!(ids(&reader, "bees").is_empty(), "the hit's seq holds another record in the new file");
        until_the_new_files_index_is_built(&reader);
        assert_eq!(ids(&reader, "bees"), ["urn:ump:cc"]);
    }
}
