//! AIMEM records in any order. memport writes a conversation's chunks together and each
//! `temporal` edge in the order of its target chunk, so one pass joins chunks with their
//! parents and groups them ([`super::aimem`]). Another producer may not: a server that stores
//! the records exports chunks by time across conversations and edges in its database's order.
//!
//! [`in_reader_order`] finds out in a first pass over the ids alone, in bounded memory (one
//! 64-bit hash per conversation seen). When the records are not in that order, [`Reordered`]
//! spills them to a temporary SQLite file (edges keyed by target, chunks by conversation) and
//! hands them on grouped, each conversation where its first chunk was, its chunks in file
//! order, each with its parent: every edge is kept, whatever the order, and memory stays flat.

use std::hash::BuildHasher;

use rusqlite::{Connection, params};

use super::grouped::{GroupKey, RecordSource, SourceProblem, string_at};

/// Chunks handed on per query.
const BATCH: i64 = 2048;

/// The source and target of a `temporal` edge record; `None` for any other edge.
pub fn temporal_edge(edge: &[u8]) -> Option<(String, String)> {
    if string_at(edge, &["edge_type"]).as_deref() != Some("temporal") {
        return None;
    }
    Some((string_at(edge, &["source_id"])?, string_at(edge, &["target_id"])?))
}

fn key_hash(key: &str) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(key)
}

/// A chunk's id and group key, read together (one parse of the record).
pub type IdAndKey = fn(&[u8]) -> (Option<String>, Option<String>);

/// Whether the one-pass join works: every conversation's chunks are together and each
/// temporal edge comes in the order of its target chunk. A source that cannot be read to its
/// end counts as in order: the one-pass reader reports the problem where it is.
pub fn in_reader_order(mut chunks: Box<dyn RecordSource>, mut edges: Box<dyn RecordSource>, id_and_key: IdAndKey) -> bool {
    let mut next_edge = || -> Option<Option<String>> {
        loop {
            let mut edge = Vec::new();
            match edges.next_record(&mut edge) {
                Ok(Some(_)) => {
                    if let Some((_, target)) = temporal_edge(&edge) {
                        return Some(Some(target));
                    }
                }
                Ok(None) => return Some(None),
                Err(_) => return None,
            }
        }
    };
    let Some(mut waiting) = next_edge() else { return true };
    let mut closed = rustc_hash::FxHashSet::default();
    let mut current: Option<u64> = None;
    loop {
        let mut chunk = Vec::new();
        match chunks.next_record(&mut chunk) {
            Ok(Some(_)) => {}
            Ok(None) => return waiting.is_none(),
            Err(_) => return true,
        }
        let (id, key) = id_and_key(&chunk);
        if let Some(group) = key.map(|key| key_hash(&key))
            && current != Some(group)
        {
            if let Some(previous) = current.replace(group) {
                closed.insert(previous);
            }
            if closed.contains(&group) {
                return false;
            }
        }
        if waiting.is_some() && waiting == id {
            match next_edge() {
                Some(next) => waiting = next,
                None => return true,
            }
        }
    }
}

/// The chunks of a file not in reader order, regrouped through a temporary SQLite file.
pub struct Reordered {
    connection: Connection,
    /// Deleted when the reader is dropped.
    _file: tempfile::NamedTempFile,
    /// The next position to hand on, and the batch read ahead: (offset, record, parent).
    position: i64,
    batch: std::collections::VecDeque<(u64, Vec<u8>, Option<String>)>,
    /// A problem that stopped reading the chunks, reported after the chunks before it.
    problem: Option<SourceProblem>,
}

fn spill_error(error: impl std::fmt::Display) -> SourceProblem {
    SourceProblem { offset: 0, message: format!("reordering the AIMEM records in a temporary file: {error}") }
}

impl Reordered {
    /// Reads every edge and chunk into the temporary file.
    ///
    /// # Errors
    /// The temporary file failing. A source's problem is reported after the chunks read before
    /// it, as the one-pass reader does.
    pub fn load(mut chunks: Box<dyn RecordSource>, mut edges: Box<dyn RecordSource>, key: GroupKey) -> Result<Reordered, SourceProblem> {
        let file = tempfile::Builder::new().prefix("memport-aimem-order-").tempfile().map_err(spill_error)?;
        let connection = Connection::open(file.path()).map_err(spill_error)?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -16384; BEGIN;
                 CREATE TABLE parents (target TEXT PRIMARY KEY, source TEXT NOT NULL) WITHOUT ROWID;
                 CREATE TABLE groups (key TEXT PRIMARY KEY, first INTEGER NOT NULL) WITHOUT ROWID;
                 CREATE TABLE chunks (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, id TEXT, offset INTEGER NOT NULL, record BLOB NOT NULL);",
            )
            .map_err(spill_error)?;
        let mut problem = None;
        {
            let mut parent = connection.prepare("INSERT OR IGNORE INTO parents (target, source) VALUES (?1, ?2)").map_err(spill_error)?;
            loop {
                let mut edge = Vec::new();
                match edges.next_record(&mut edge) {
                    Ok(Some(_)) => {
                        if let Some((source, target)) = temporal_edge(&edge) {
                            parent.execute(params![target, source]).map_err(spill_error)?;
                        }
                    }
                    Ok(None) => break,
                    // The edges were checked with the rest: a problem here only loses parents.
                    Err(_) => break,
                }
            }
            let mut group = connection.prepare("INSERT OR IGNORE INTO groups (key, first) VALUES (?1, ?2)").map_err(spill_error)?;
            let mut chunk_row =
                connection.prepare("INSERT INTO chunks (seq, key, id, offset, record) VALUES (?1, ?2, ?3, ?4, ?5)").map_err(spill_error)?;
            let mut seq: i64 = 0;
            loop {
                let mut chunk = Vec::new();
                let offset = match chunks.next_record(&mut chunk) {
                    Ok(Some(offset)) => offset,
                    Ok(None) => break,
                    Err(error) => {
                        problem = Some(error);
                        break;
                    }
                };
                seq += 1;
                // A chunk that stands alone is a group of its own.
                let group_key = key(&chunk).map_or_else(|| format!("\0{seq}"), |key| format!("k{key}"));
                group.execute(params![group_key, seq]).map_err(spill_error)?;
                let id = string_at(&chunk, &["id"]);
                chunk_row.execute(params![seq, group_key, id, i64::try_from(offset).unwrap_or(i64::MAX), chunk]).map_err(spill_error)?;
            }
        }
        connection
            .execute_batch(
                "CREATE TABLE ordered (position INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
                 INSERT INTO ordered (seq) SELECT c.seq FROM chunks c JOIN groups g ON g.key = c.key ORDER BY g.first, c.seq;
                 COMMIT;",
            )
            .map_err(spill_error)?;
        Ok(Reordered { connection, _file: file, position: 1, batch: std::collections::VecDeque::new(), problem })
    }

    fn read_batch(&mut self) -> Result<(), SourceProblem> {
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT c.offset, c.record, p.source FROM ordered o JOIN chunks c ON c.seq = o.seq
                 LEFT JOIN parents p ON p.target = c.id WHERE o.position >= ?1 ORDER BY o.position LIMIT ?2",
            )
            .map_err(spill_error)?;
        let rows = statement
            .query_map(params![self.position, BATCH], |row| {
                Ok((row.get::<_, i64>(0)?.unsigned_abs(), row.get::<_, Vec<u8>>(1)?, row.get::<_, Option<String>>(2)?))
            })
            .map_err(spill_error)?;
        for row in rows {
            self.batch.push_back(row.map_err(spill_error)?);
        }
        self.position += BATCH;
        Ok(())
    }
}

/// Puts `"_parent": source` first in the chunk record that starts at `start` of `out`.
pub fn insert_parent(out: &mut Vec<u8>, start: usize, source: &str) {
    if let Some(brace) = out[start..].iter().position(|byte| *byte == b'{') {
        let mut member = b"\"_parent\":".to_vec();
        crate::jcs::write_string(&mut member, source);
        member.push(b',');
        let at = start + brace + 1;
        out.splice(at..at, member);
    }
}

impl RecordSource for Reordered {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
        if self.batch.is_empty() {
            self.read_batch()?;
        }
        let Some((offset, record, parent)) = self.batch.pop_front() else {
            return match self.problem.take() {
                Some(problem) => Err(problem),
                None => Ok(None),
            };
        };
        let start = out.len();
        out.extend_from_slice(&record);
        if let Some(source) = parent {
            insert_parent(out, start, &source);
        }
        Ok(Some(offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records from a list, then maybe a problem.
    struct Listed(std::collections::VecDeque<String>, Option<SourceProblem>);

    impl RecordSource for Listed {
        fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
            match self.0.pop_front() {
                Some(record) => {
                    out.extend_from_slice(record.as_bytes());
                    Ok(Some(0))
                }
                None => self.1.take().map_or(Ok(None), Err),
            }
        }
    }

    fn chunk(id: &str, conversation: &str) -> String {
        format!(r#"{{"id":"{id}","conversation":"{conversation}"}}"#)
    }

    fn edge(source: &str, target: &str) -> String {
        format!(r#"{{"edge_type":"temporal","source_id":"{source}","target_id":"{target}"}}"#)
    }

    fn id_and_key(record: &[u8]) -> (Option<String>, Option<String>) {
        (string_at(record, &["id"]), string_at(record, &["conversation"]))
    }

    fn key(record: &[u8]) -> Option<String> {
        string_at(record, &["conversation"])
    }

    fn source(records: &[String]) -> Box<dyn RecordSource> {
        Box::new(Listed(records.iter().cloned().collect(), None))
    }

    #[test]
    fn memports_order_is_recognized_and_any_other_is_not() {
        let chunks = [chunk("a1", "a"), chunk("a2", "a"), chunk("b1", "b"), chunk("b2", "b")];
        let edges = [edge("a1", "a2"), edge("b1", "b2")];
        assert!(in_reader_order(source(&chunks), source(&edges), id_and_key));
        let reversed_edges = [edge("b1", "b2"), edge("a1", "a2")];
        assert!(!in_reader_order(source(&chunks), source(&reversed_edges), id_and_key), "edges out of target order");
        let interleaved = [chunk("a1", "a"), chunk("b1", "b"), chunk("a2", "a"), chunk("b2", "b")];
        assert!(!in_reader_order(source(&interleaved), source(&[]), id_and_key), "a conversation split apart");
    }

    #[test]
    fn reordered_records_come_grouped_with_their_parents_and_a_problem_comes_last() {
        let chunks = [chunk("a2", "a"), chunk("b1", "b"), chunk("a1", "a"), chunk("b2", "b")];
        let edges = [edge("b1", "b2"), edge("a1", "a2")];
        let problem = SourceProblem { offset: 99, message: "truncated".into() };
        let listed = Box::new(Listed(chunks.iter().cloned().collect(), Some(problem)));
        let mut reordered = Reordered::load(listed, source(&edges), key).unwrap();
        let mut read = Vec::new();
        loop {
            let mut out = Vec::new();
            match reordered.next_record(&mut out) {
                Ok(Some(_)) => read.push(String::from_utf8(out).unwrap()),
                Ok(None) => panic!("the problem is reported"),
                Err(problem) => {
                    assert_eq!(problem.offset, 99);
                    break;
                }
            }
        }
        let ids: Vec<String> = read.iter().map(|record| string_at(record.as_bytes(), &["id"]).unwrap()).collect();
        assert_eq!(ids, ["a2", "a1", "b1", "b2"], "grouped where each conversation first appears, in file order within");
        assert_eq!(string_at(read[0].as_bytes(), &["_parent"]).as_deref(), Some("a1"));
        assert_eq!(string_at(read[3].as_bytes(), &["_parent"]).as_deref(), Some("b1"));
        assert_eq!(string_at(read[1].as_bytes(), &["_parent"]), None);
    }
}
