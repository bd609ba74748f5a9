//! The index recall ranks text with: an in-memory search index (tantivy) of every record's
//! text and the columns recall filters on, kept in step with the store through its change log.
//!
//! Why not the store's own FTS5 table: FTS5 computes BM25 for every record holding a query
//! word (it reads each one's length from a B-tree), so a common word in the 256 MB export's
//! store (27,000 records hold "work") costs 40–80 ms a query, and recall's p99 under load was
//! seconds. tantivy keeps the lengths in a byte array and skips documents that cannot reach the
//! top (block-max WAND): the same top 400 in 0.02–0.5 ms (docs/design-decisions.md).
//!
//! The index is derived data, held only in memory: built from the records the first time a
//! recall needs it (about 1 s per 100,000 records) and brought up to date before each recall
//! by reading the records the change log ([`super::schema`]'s `record_changes`, written by
//! triggers whoever writes) names since. Nothing of it is written to disk, so a record erased
//! for good leaves no copy of its words there. A store in PostgreSQL is indexed the same way
//! (its `memport_store_changes` log, [`super::postgres`]) rather than searched with `ts_rank`
//! over its `tsvector` index, which reads every matching row (150–250 ms for a common word in
//! the 256 MB export's store).
//!
//! When a run moves a new store into place under a server, the index of the new file is built
//! in the background ([`super::Store::search_index`]); until it is ready, recall searches the
//! index of the replaced file and reads each hit from the new file by `seq`, keeping it only if
//! the record there has the same id ([`Hit::id_hash`]).

use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};
use tantivy::collector::TopDocs;
use tantivy::columnar::{Column, StrColumn};
use tantivy::indexer::NoMergePolicy;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{FAST, Field, INDEXED, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer};
use tantivy::{DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use super::StoreError;

/// The analyzer of records' text and of queries: words of letters and digits, lowercased,
/// accents folded, English stems (as the store's FTS5 index reads text).
const ANALYZER: &str = "memport";
/// The index writer's memory budget (tantivy's smallest per thread is 15 MB).
const WRITER_BUDGET: usize = 48 << 20;

/// The fields of the index.
struct Fields {
    text: Field,
    seq: Field,
    kind: Field,
    owner: Field,
    agent: Field,
    session: Field,
    created_us: Field,
    valid_from_us: Field,
    valid_to_us: Field,
    salience: Field,
    superseded: Field,
    id_hash: Field,
}

/// A candidate of a recall: a record whose text matches, with the columns it is ranked on.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The record's `seq` in the store.
    pub seq: i64,
    /// BM25 of its text for the query (higher is better).
    pub score: f64,
    /// `time.created`, microseconds.
    pub created_us: i64,
    /// `lifecycle.salience`, when the record has one.
    pub salience: Option<f64>,
    /// Whether `scope.agent` is the agent [`Only::rank_agent`] names (`None` when it names none).
    pub agent_matches: Option<bool>,
    /// Whether `scope.session` is the session [`Only::rank_session`] names.
    pub session_matches: Option<bool>,
    /// `valid_from`, microseconds.
    pub valid_from_us: Option<i64>,
    /// `valid_to`, microseconds.
    pub valid_to_us: Option<i64>,
    /// A later record supersedes it.
    pub superseded: bool,
    /// [`id_hash`] of the record's id: a hit of an index built from a file a run has since
    /// replaced is read from the new file by `seq` only if the record there has this id.
    pub id_hash: u64,
}

/// The hash of a record id the index keeps for each record (see [`Hit::id_hash`]).
pub fn id_hash(id: &str) -> u64 {
    twox_hash::XxHash3_128::oneshot(id.as_bytes()) as u64
}

/// What a search is limited to (the filters of [`super::recall::RecallQuery`] that are terms;
/// tombstoned records are never in the index).
#[derive(Debug, Clone, Default)]
pub struct Only<'a> {
    /// Any of these kinds; all kinds when empty.
    pub kinds: &'a [String],
    /// This owner's records.
    pub owner: Option<&'a str>,
    /// This agent's records.
    pub agent: Option<&'a str>,
    /// The agent whose records rank higher (each hit says whether it is its).
    pub rank_agent: Option<&'a str>,
    /// The session whose records rank higher.
    pub rank_session: Option<&'a str>,
}

/// The index writer and the last change of the store's log it holds.
struct Writing {
    writer: IndexWriter,
    /// The last `record_changes.change` applied; `None` when the store had no change log (an
    /// older store opened read-only; a writer that opens it later adds one, from change 1).
    applied: Option<i64>,
}

/// The search index of one store (shared by every connection a server opens to it).
pub struct SearchIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    writing: Mutex<Writing>,
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(64))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(Stemmer::new(Language::English))
        .build()
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text = TextOptions::default()
        .set_indexing_options(TextFieldIndexing::default().set_tokenizer(ANALYZER).set_index_option(IndexRecordOption::WithFreqs));
    let fields = Fields {
        text: builder.add_text_field("text", text),
        seq: builder.add_i64_field("seq", INDEXED | FAST),
        kind: builder.add_text_field("kind", STRING),
        owner: builder.add_text_field("owner", STRING),
        agent: builder.add_text_field("agent", STRING | FAST),
        session: builder.add_text_field("session", STRING | FAST),
        created_us: builder.add_i64_field("created_us", FAST),
        valid_from_us: builder.add_i64_field("valid_from_us", FAST),
        valid_to_us: builder.add_i64_field("valid_to_us", FAST),
        salience: builder.add_f64_field("salience", FAST),
        superseded: builder.add_u64_field("superseded", FAST),
        id_hash: builder.add_u64_field("id_hash", FAST),
    };
    (builder.build(), fields)
}

/// One live record's columns as the index holds them.
pub struct IndexedRow<'a> {
    /// `seq`.
    pub seq: i64,
    /// The text searched.
    pub text: &'a str,
    /// `kind`.
    pub kind: &'a str,
    /// `owner`.
    pub owner: &'a str,
    /// `scope.agent`.
    pub agent: Option<&'a str>,
    /// `scope.session`.
    pub session: Option<&'a str>,
    /// `time.created`, microseconds.
    pub created_us: i64,
    /// `valid_from`, microseconds.
    pub valid_from_us: Option<i64>,
    /// `valid_to`, microseconds.
    pub valid_to_us: Option<i64>,
    /// `lifecycle.salience`.
    pub salience: Option<f64>,
    /// A later record supersedes it.
    pub superseded: bool,
    /// The record's id.
    pub id: &'a str,
}

/// Visits one row: its `seq`, and its columns unless a value is not of its column's type
/// (written by another tool): such a record is left out of recall rather than failing the index.
pub type Visit<'v> = dyn FnMut(i64, Option<IndexedRow<'_>>) -> Result<(), StoreError> + 'v;

/// Where an index reads a store's records and change log: a store file's connection, or a
/// store in PostgreSQL. Only committed records may be read: a rolled-back change would stay
/// in the index.
pub trait Source {
    /// The last change in the store's change log: `None` without a log, 0 for an empty one.
    ///
    /// # Errors
    /// [`StoreError::InTransaction`] inside a transaction; the database's errors.
    fn latest_change(&self) -> Result<Option<i64>, StoreError>;
    /// The first change of the log after `applied`, if any.
    ///
    /// # Errors
    /// The database's errors.
    fn first_change_after(&self, applied: i64) -> Result<Option<i64>, StoreError>;
    /// The `seq` of each record changed after change `applied` up to `latest`, once each.
    ///
    /// # Errors
    /// The database's errors.
    fn changed_seqs(&self, applied: i64, latest: i64) -> Result<Vec<i64>, StoreError>;
    /// Visits the live records of `seq` after `after` in order, at most `limit`; returns how
    /// many rows it visited.
    ///
    /// # Errors
    /// The database's errors, and `visit`'s.
    fn live_rows_after(&self, after: i64, limit: i64, visit: &mut Visit<'_>) -> Result<i64, StoreError>;
    /// Visits the record at `seq` if it is there and live.
    ///
    /// # Errors
    /// The database's errors, and `visit`'s.
    fn live_row_at(&self, seq: i64, visit: &mut Visit<'_>) -> Result<(), StoreError>;
}

/// The columns of `records` a document is made of, in this order.
const COLUMNS: &str = "seq, text, kind, owner, agent, session, created_us, valid_from_us, valid_to_us, salience, superseded, id";
/// The records in the index: a tombstoned one is never recalled.
const INDEXED_ROWS: &str = "status != 'tombstoned'";

impl Source for Connection {
    fn latest_change(&self) -> Result<Option<i64>, StoreError> {
        if !self.is_autocommit() {
            return Err(StoreError::InTransaction);
        }
        let has_log: bool = self
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'record_changes')")?
            .query_row([], |row| row.get(0))?;
        if !has_log {
            return Ok(None);
        }
        let latest: Option<i64> = self
            .prepare_cached("SELECT seq FROM sqlite_sequence WHERE name = 'record_changes'")?
            .query_row([], |row| row.get(0))
            .optional()?;
        Ok(Some(latest.unwrap_or(0)))
    }

    fn first_change_after(&self, applied: i64) -> Result<Option<i64>, StoreError> {
        Ok(self.prepare_cached("SELECT min(change) FROM record_changes WHERE change > ?1")?.query_row([applied], |row| row.get(0))?)
    }

    fn changed_seqs(&self, applied: i64, latest: i64) -> Result<Vec<i64>, StoreError> {
        Ok(self
            .prepare_cached("SELECT DISTINCT seq FROM record_changes WHERE change > ?1 AND change <= ?2")?
            .query_map([applied, latest], |row| row.get(0))?
            .collect::<Result<_, _>>()?)
    }

    fn live_rows_after(&self, after: i64, limit: i64, visit: &mut Visit<'_>) -> Result<i64, StoreError> {
        let mut statement =
            self.prepare_cached(&format!("SELECT {COLUMNS} FROM records WHERE seq > ?1 AND {INDEXED_ROWS} ORDER BY seq LIMIT ?2"))?;
        let mut rows = statement.query(params![after, limit])?;
        let mut read = 0;
        while let Some(row) = rows.next()? {
            read += 1;
            visit(row.get(0)?, sqlite_row(row))?;
        }
        Ok(read)
    }

    fn live_row_at(&self, seq: i64, visit: &mut Visit<'_>) -> Result<(), StoreError> {
        let mut statement = self.prepare_cached(&format!("SELECT {COLUMNS} FROM records WHERE seq = ?1 AND {INDEXED_ROWS}"))?;
        let mut rows = statement.query(params![seq])?;
        if let Some(row) = rows.next()? {
            visit(seq, sqlite_row(row))?;
        }
        Ok(())
    }
}

/// The columns of one row of `records` read as [`COLUMNS`]; `None` when a value is not of its
/// column's type.
fn sqlite_row<'a>(row: &'a rusqlite::Row<'_>) -> Option<IndexedRow<'a>> {
    let text = |column: usize| row.get_ref(column).ok()?.as_str().ok();
    let optional_text = |column: usize| row.get_ref(column).ok()?.as_str_or_null().ok();
    Some(IndexedRow {
        seq: row.get(0).ok()?,
        text: text(1)?,
        kind: text(2)?,
        owner: text(3)?,
        agent: optional_text(4)?,
        session: optional_text(5)?,
        created_us: row.get(6).ok()?,
        valid_from_us: row.get(7).ok()?,
        valid_to_us: row.get(8).ok()?,
        salience: row.get(9).ok()?,
        superseded: row.get(10).ok()?,
        id: text(11)?,
    })
}

impl SearchIndex {
    /// Builds the index of every record in the store `source` reads.
    ///
    /// # Errors
    /// The database's and tantivy's errors.
    pub fn build(source: &dyn Source) -> Result<SearchIndex, StoreError> {
        let (schema, fields) = schema();
        let index = Index::create_in_ram(schema);
        index.tokenizers().register(ANALYZER, analyzer());
        let threads = std::thread::available_parallelism().map_or(1, |count| count.get()).clamp(1, 4);
        let mut writer = index.writer_with_num_threads(threads, WRITER_BUDGET * threads)?;
        // No merges of its own while it builds: the merge into one segment below takes them all.
        writer.set_merge_policy(Box::new(NoMergePolicy));
        let applied = fill(&fields, &writer, source)?;
        writer.commit()?;
        // One segment: each segment is searched for its own best, and with one the search
        // skips the most (recalls of three common words took twice as long over eight).
        let segments = index.searchable_segment_ids()?;
        if segments.len() > 1 {
            writer.merge(&segments).wait()?;
        }
        // Updates come a few records at a time: one thread is enough, and holds less memory.
        writer.wait_merging_threads()?;
        let writer = index.writer_with_num_threads(1, WRITER_BUDGET)?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(SearchIndex { index, reader, fields, writing: Mutex::new(Writing { writer, applied }) })
    }

    /// The last change of the store's log the index holds (`None`: the store had no log).
    pub fn applied(&self) -> Option<i64> {
        self.writing.lock().unwrap_or_else(std::sync::PoisonError::into_inner).applied
    }

    /// Brings the index up to date with the store `source` reads: every record the change
    /// log names since the last update is indexed again, or taken out when it is gone.
    ///
    /// # Errors
    /// The database's and tantivy's errors; [`StoreError::InTransaction`] inside a transaction.
    pub fn refresh(&self, source: &dyn Source) -> Result<(), StoreError> {
        // The log's end is read under the lock: read before it, a recall that waited there could
        // hold an end older than what another one applied meanwhile, and build the index again.
        let mut writing = self.writing.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(latest) = source.latest_change()? else { return Ok(()) };
        // A log behind the index is another file's (a store moved into place whose inode
        // was reused): `catch_up` finds the log does not go on from the index and builds again.
        if latest == writing.applied.unwrap_or(0) {
            return Ok(());
        }
        match self.catch_up(&mut writing, source, latest).and_then(|applied| Ok((applied, writing.writer.commit()?))) {
            Ok((applied, _)) => {
                writing.applied = applied;
                self.reader.reload()?;
                Ok(())
            }
            Err(error) => {
                // Nothing half-applied stays queued for the next commit.
                writing.writer.rollback()?;
                Err(error)
            }
        }
    }

    /// Queues what the log names after `writing.applied` up to `latest` (or, when part of the
    /// log is gone, every record again); returns the change the index then holds.
    fn catch_up(&self, writing: &mut Writing, source: &dyn Source, latest: i64) -> Result<Option<i64>, StoreError> {
        let applied = writing.applied.unwrap_or(0);
        if source.first_change_after(applied)? != Some(applied + 1) {
            // Part of the log is gone (a bulk load clears it): start again from the records.
            writing.writer.delete_all_documents()?;
            return fill(&self.fields, &writing.writer, source);
        }
        for seq in source.changed_seqs(applied, latest)? {
            writing.writer.delete_term(Term::from_field_i64(self.fields.seq, seq));
            source.live_row_at(seq, &mut |_, row| {
                if let Some(row) = row {
                    writing.writer.add_document(document(&self.fields, &row))?;
                }
                Ok(())
            })?;
        }
        Ok(Some(latest))
    }

    /// The records matching any of `words` (after analysis) within `only`, best BM25 first,
    /// at most `limit` of them.
    ///
    /// # Errors
    /// tantivy errors.
    pub fn search(&self, words: &[&str], only: &Only<'_>, limit: usize) -> Result<Vec<Hit>, StoreError> {
        let mut terms: Vec<Term> = Vec::new();
        let mut analyzer = self.index.tokenizers().get(ANALYZER).unwrap_or_else(analyzer);
        for word in words {
            let mut stream = analyzer.token_stream(word);
            while let Some(token) = stream.next() {
                let term = Term::from_field_text(self.fields.text, &token.text);
                if !terms.contains(&term) {
                    terms.push(term);
                }
            }
        }
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let text: Box<dyn Query> = Box::new(BooleanQuery::new(
            terms
                .into_iter()
                .map(|term| (Occur::Should, Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)) as Box<dyn Query>))
                .collect(),
        ));
        let term = |field: Field, value: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(Term::from_field_text(field, value), IndexRecordOption::Basic))
        };
        let filter = |query: Box<dyn Query>| -> Box<dyn Query> { Box::new(ConstScoreQuery::new(query, 0.0)) };
        // Without filters the query is the words alone, so tantivy can skip what cannot reach
        // the top; a filter is a clause that adds nothing to the score.
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        if !only.kinds.is_empty() {
            let kinds = only.kinds.iter().map(|kind| (Occur::Should, term(self.fields.kind, kind))).collect();
            clauses.push((Occur::Must, filter(Box::new(BooleanQuery::new(kinds)))));
        }
        if let Some(owner) = only.owner {
            clauses.push((Occur::Must, filter(term(self.fields.owner, owner))));
        }
        if let Some(agent) = only.agent {
            clauses.push((Occur::Must, filter(term(self.fields.agent, agent))));
        }
        let query: Box<dyn Query> = if clauses.is_empty() {
            text
        } else {
            clauses.push((Occur::Must, text));
            Box::new(BooleanQuery::new(clauses))
        };
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit.max(1)).order_by_score())?;
        let mut hits = Vec::with_capacity(top.len());
        // Each segment's columns are opened once (opening one looks it up by name), and the
        // agent and session asked for are looked up once per segment, as term ordinals: reading
        // each hit's text back from the dictionary would cost more than the search.
        let mut opened: Vec<Option<SegmentColumns>> = (0..searcher.segment_readers().len()).map(|_| None).collect();
        for (score, DocAddress { segment_ord, doc_id }) in top {
            let columns = match &mut opened[segment_ord as usize] {
                Some(columns) => columns,
                empty => empty.insert(SegmentColumns::open(searcher.segment_reader(segment_ord), only)?),
            };
            hits.push(Hit {
                seq: columns.seq.first(doc_id).unwrap_or_default(),
                score: f64::from(score),
                created_us: columns.created_us.first(doc_id).unwrap_or_default(),
                salience: columns.salience.first(doc_id),
                agent_matches: columns.agent.as_ref().map(|wanted| wanted.holds(doc_id)),
                session_matches: columns.session.as_ref().map(|wanted| wanted.holds(doc_id)),
                valid_from_us: columns.valid_from_us.first(doc_id),
                valid_to_us: columns.valid_to_us.first(doc_id),
                superseded: columns.superseded.first(doc_id).unwrap_or_default() != 0,
                id_hash: columns.id_hash.first(doc_id).unwrap_or_default(),
            });
        }
        Ok(hits)
    }
}

/// The fast columns of one segment a hit is read from.
struct SegmentColumns {
    seq: Column<i64>,
    created_us: Column<i64>,
    salience: Column<f64>,
    agent: Option<Wanted>,
    session: Option<Wanted>,
    valid_from_us: Column<i64>,
    valid_to_us: Column<i64>,
    superseded: Column<u64>,
    id_hash: Column<u64>,
}

/// A text column and the ordinal of the value asked for in it (`None`: no record of the
/// segment has that value).
struct Wanted {
    column: Option<StrColumn>,
    ordinal: Option<u64>,
}

impl Wanted {
    fn new(column: Option<StrColumn>, value: &str) -> Result<Wanted, StoreError> {
        let ordinal = match &column {
            Some(column) => column.dictionary().term_ord(value).map_err(tantivy::TantivyError::from)?,
            None => None,
        };
        Ok(Wanted { column, ordinal })
    }

    fn holds(&self, doc: tantivy::DocId) -> bool {
        match (&self.column, self.ordinal) {
            (Some(column), Some(ordinal)) => column.term_ords(doc).next() == Some(ordinal),
            _ => false,
        }
    }
}

impl SegmentColumns {
    fn open(segment: &tantivy::SegmentReader, only: &Only<'_>) -> Result<SegmentColumns, StoreError> {
        let columns = segment.fast_fields();
        let wanted = |name: &str, value: Option<&str>| -> Result<Option<Wanted>, StoreError> {
            value.map(|value| Wanted::new(columns.str(name)?, value)).transpose()
        };
        Ok(SegmentColumns {
            seq: columns.i64("seq")?,
            created_us: columns.i64("created_us")?,
            salience: columns.f64("salience")?,
            agent: wanted("agent", only.rank_agent)?,
            session: wanted("session", only.rank_session)?,
            valid_from_us: columns.i64("valid_from_us")?,
            valid_to_us: columns.i64("valid_to_us")?,
            superseded: columns.u64("superseded")?,
            id_hash: columns.u64("id_hash")?,
        })
    }
}

/// Rows read at once while the index is filled.
const FILL_CHUNK: i64 = 10_000;

/// Adds every live record of the store `source` reads to `writer`, in chunks by `seq`, each
/// read on its own, so no read lock is held for the whole build (a writer of the store would
/// wait past its busy timeout). Returns the log's last change as read before the first chunk:
/// what changes after it is in the log, and the next refresh applies it again.
fn fill(fields: &Fields, writer: &IndexWriter, source: &dyn Source) -> Result<Option<i64>, StoreError> {
    let applied = source.latest_change()?;
    let mut after = i64::MIN;
    loop {
        let read = source.live_rows_after(after, FILL_CHUNK, &mut |seq, row| {
            after = seq;
            if let Some(row) = row {
                writer.add_document(document(fields, &row))?;
            }
            Ok(())
        })?;
        if read < FILL_CHUNK {
            return Ok(applied);
        }
    }
}

/// The document of one record.
fn document(fields: &Fields, row: &IndexedRow<'_>) -> TantivyDocument {
    let mut document = TantivyDocument::default();
    document.add_i64(fields.seq, row.seq);
    document.add_text(fields.text, row.text);
    document.add_text(fields.kind, row.kind);
    document.add_text(fields.owner, row.owner);
    for (field, value) in [(fields.agent, row.agent), (fields.session, row.session)] {
        if let Some(value) = value {
            document.add_text(field, value);
        }
    }
    document.add_i64(fields.created_us, row.created_us);
    for (field, value) in [(fields.valid_from_us, row.valid_from_us), (fields.valid_to_us, row.valid_to_us)] {
        if let Some(value) = value {
            document.add_i64(field, value);
        }
    }
    if let Some(salience) = row.salience {
        document.add_f64(fields.salience, salience);
    }
    document.add_u64(fields.superseded, u64::from(row.superseded));
    document.add_u64(fields.id_hash, id_hash(row.id));
    document
}
