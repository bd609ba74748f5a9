//! Regroups flat activity records (Copilot CSV rows, Gemini activity records) into
//! conversations: the exports list records newest first, interleave conversations and carry no
//! conversation ids, so records are spilled to a temporary file, grouped, and written back as
//! a JSON array of `{"rows":[…]}` conversation elements that the engine frames like any other.
//!
//! Grouping walks the records in chronological order. A record with a conversation key (Gemini's
//! conversation URL) joins that key's conversation. Otherwise it joins the open conversation of
//! its title (Copilot) or of the keyless stream (Gemini) when it comes at most `gap` after that
//! conversation's last record, and starts a new one otherwise.
//!
//! With [`Regrouper::attach_untitled`] (Gemini), a record with neither id nor title (a feedback
//! or "Used Gemini Apps" record) may also join the conversation of the record just before it,
//! within the gap: it is about that exchange.
//!
//! A conversation is closed at [`MAX_GROUP_RECORDS`] records or [`MAX_GROUP_BYTES`] bytes and
//! the next record starts a new one, so one element never grows without bound (a day of
//! back-to-back prompts without conversation URLs would otherwise be one conversation).
//!
//! Memory: the record text lives in the spill file; only a 32-byte index entry per record (and
//! one map entry per open title) stays in memory.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

use rustc_hash::FxHashMap;

use crate::error::RunError;
use crate::hash::sha256;
use crate::model::Micros;

/// Most records one regrouped conversation holds.
pub const MAX_GROUP_RECORDS: u32 = 2_000;
/// Most bytes of records one regrouped conversation holds.
pub const MAX_GROUP_BYTES: u64 = 16 << 20;

/// Where a record belongs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupKey {
    /// An explicit conversation id: every record with it is one conversation.
    Conversation(String),
    /// A title (or an empty string for untitled streams): grouped by time proximity.
    Title(String),
}

/// Spills records and writes them back grouped into conversations.
pub struct Regrouper {
    spill: BufWriter<File>,
    spilled: u64,
    index: Vec<IndexEntry>,
    gap: Micros,
    display: String,
    attach_untitled: bool,
}

#[derive(Debug, Clone, Copy)]
struct IndexEntry {
    offset: u64,
    length: u32,
    time: Option<Micros>,
    key: u64,
    explicit: bool,
    conversation: u32,
}

impl Regrouper {
    /// Starts a regrouping of `display` with the given proximity `gap`.
    ///
    /// # Errors
    /// When no temporary file can be created.
    pub fn new(display: &str, gap: Micros) -> Result<Self, RunError> {
        let file = tempfile::tempfile().map_err(|error| RunError::write("a temporary file for regrouping", error))?;
        Ok(Regrouper {
            spill: BufWriter::with_capacity(1 << 20, file),
            spilled: 0,
            index: Vec::new(),
            gap,
            display: display.to_owned(),
            attach_untitled: false,
        })
    }

    /// Lets records keyed by an empty title join the conversation of the record before them
    /// (whatever its key) when it is within the gap.
    pub fn attach_untitled(mut self) -> Self {
        self.attach_untitled = true;
        self
    }

    /// Adds one record (a JSON object) in file order.
    ///
    /// # Errors
    /// When the spill file cannot be written.
    pub fn push(&mut self, key: &GroupKey, time: Option<Micros>, record_json: &[u8]) -> Result<(), RunError> {
        let (explicit, key_text) = match key {
            GroupKey::Conversation(id) => (true, id.as_str()),
            GroupKey::Title(title) => (false, title.as_str()),
        };
        let key_bits = key_hash(key_text);
        let length = u32::try_from(record_json.len()).map_err(|_| RunError::Internal("a single activity record over 4 GiB".into()))?;
        self.spill.write_all(record_json).map_err(|error| RunError::write(&self.display, error))?;
        self.index.push(IndexEntry { offset: self.spilled, length, time, key: key_bits, explicit, conversation: 0 });
        self.spilled += u64::from(length);
        Ok(())
    }

    /// Groups the records and returns a reader over the JSON array of conversations.
    ///
    /// # Errors
    /// When the spill or the output file cannot be written or read back.
    pub fn finish(mut self) -> Result<Box<dyn Read + Send>, RunError> {
        let display = self.display.clone();
        let io_error = |error: io::Error| RunError::write(&display, error);
        let spill = self.spill.into_inner().map_err(|error| io_error(error.into_error()))?;
        let index = &mut self.index;
        if is_newest_first(index) {
            index.reverse();
        }
        let untitled_key = self.attach_untitled.then(|| key_hash(""));
        assign_conversations(index, self.gap, untitled_key);
        // Conversations in order of their first record; the stable sort keeps records in
        // chronological order inside each.
        index.sort_by_key(|entry| entry.conversation);
        let output = tempfile::tempfile().map_err(io_error)?;
        let mut writer = BufWriter::with_capacity(1 << 20, output);
        let mut record = Vec::new();
        writer.write_all(b"[").map_err(io_error)?;
        let mut current: Option<u32> = None;
        for entry in index.iter() {
            if current != Some(entry.conversation) {
                let opening: &[u8] = if current.is_none() { b"\n{\"rows\":[\n" } else { b"]},\n{\"rows\":[\n" };
                writer.write_all(opening).map_err(io_error)?;
                current = Some(entry.conversation);
            } else {
                writer.write_all(b",\n").map_err(io_error)?;
            }
            record.resize(entry.length as usize, 0);
            spill.read_exact_at(&mut record, entry.offset).map_err(io_error)?;
            writer.write_all(&record).map_err(io_error)?;
        }
        writer.write_all(if current.is_some() { b"]}\n]\n" } else { b"]\n" }).map_err(io_error)?;
        let mut output = writer.into_inner().map_err(|error| io_error(error.into_error()))?;
        output.seek(SeekFrom::Start(0)).map_err(io_error)?;
        Ok(Box::new(BufReader::with_capacity(1 << 20, output)))
    }
}

fn key_hash(key: &str) -> u64 {
    let digest = sha256(key.as_bytes());
    let mut bits = [0u8; 8];
    bits.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(bits)
}

/// Newest first when the first timed record is later than the last one. Exports that list
/// oldest first (some Copilot layouts) keep their order; ties keep file order either way.
fn is_newest_first(index: &[IndexEntry]) -> bool {
    let first = index.iter().find_map(|entry| entry.time);
    let last = index.iter().rev().find_map(|entry| entry.time);
    matches!((first, last), (Some(first), Some(last)) if first > last)
}

/// An open conversation of one key while grouping.
struct OpenGroup {
    number: u32,
    last_time: Option<Micros>,
    records: u32,
    bytes: u64,
}

/// Whether a record of `length` bytes at `time` may join `group`.
fn may_join(group: &OpenGroup, explicit: bool, time: Option<Micros>, length: u32, gap: Micros) -> bool {
    if group.records >= MAX_GROUP_RECORDS || group.bytes + u64::from(length) > MAX_GROUP_BYTES {
        return false;
    }
    match (group.last_time, time) {
        _ if explicit => true,
        (Some(last), Some(time)) => time.saturating_sub(last) <= gap,
        // Without a time the record stays with the conversation it was listed in.
        _ => true,
    }
}

/// Numbers conversations in chronological order of their first record. `untitled_key`: the key
/// of records that may join the previous record's conversation.
fn assign_conversations(index: &mut [IndexEntry], gap: Micros, untitled_key: Option<u64>) {
    let mut open: FxHashMap<(bool, u64), OpenGroup> = FxHashMap::default();
    let mut previous: Option<(bool, u64)> = None;
    let mut next = 0u32;
    for entry in index.iter_mut() {
        let own = (entry.explicit, entry.key);
        let mut target = open.get(&own).filter(|group| may_join(group, entry.explicit, entry.time, entry.length, gap)).map(|_| own);
        if target.is_none()
            && !entry.explicit
            && untitled_key == Some(entry.key)
            && let Some(previous) = previous
            && open.get(&previous).is_some_and(|group| may_join(group, false, entry.time, entry.length, gap))
        {
            target = Some(previous);
        }
        if let Some(key) = target
            && let Some(group) = open.get_mut(&key)
        {
            entry.conversation = group.number;
            group.records += 1;
            group.bytes += u64::from(entry.length);
            if entry.time.is_some() {
                group.last_time = entry.time;
            }
            previous = Some(key);
            continue;
        }
        entry.conversation = next;
        open.insert(own, OpenGroup { number: next, last_time: entry.time, records: 1, bytes: u64::from(entry.length) });
        previous = Some(own);
        next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grouped(records: &[(GroupKey, Option<Micros>, &str)], gap: Micros) -> serde_json::Value {
        let mut regrouper = Regrouper::new("test", gap).unwrap();
        for (key, time, json) in records {
            regrouper.push(key, *time, json.as_bytes()).unwrap();
        }
        let mut text = String::new();
        regrouper.finish().unwrap().read_to_string(&mut text).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn newest_first_is_reversed_and_titles_split_by_gap() {
        let hour = 3_600_000_000;
        let title = |text: &str| GroupKey::Title(text.into());
        let value = grouped(
            &[
                (title("a"), Some(10 * hour), "3"),
                (title("b"), Some(2 * hour), "2"),
                (title("a"), Some(hour), "1"),
                (title("a"), Some(hour), "0"),
            ],
            hour,
        );
        assert_eq!(value, serde_json::json!([{"rows":[0,1]},{"rows":[2]},{"rows":[3]}]));
    }

    #[test]
    fn explicit_keys_group_whatever_the_gap() {
        let key = |text: &str| GroupKey::Conversation(text.into());
        let value = grouped(&[(key("x"), Some(1), "0"), (key("y"), Some(2), "1"), (key("x"), Some(1_000_000_000_000), "2")], 10);
        assert_eq!(value, serde_json::json!([{"rows":[0,2]},{"rows":[1]}]));
        assert_eq!(grouped(&[], 10), serde_json::json!([]));
    }
}
