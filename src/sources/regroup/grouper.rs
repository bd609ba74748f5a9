//! Which conversation each record joins, walked in chronological order: an explicit key's
//! conversation, else the open conversation of its title within the gap (and, for untitled
//! records, the conversation just before); conversations close when idle, full or at the end.

use std::collections::{BTreeSet, VecDeque};

use rustc_hash::FxHashMap;

use super::index::{IndexEntry, Source};
use super::{BINARY_ROW_HEADER, KEYED_IDLE, MAX_GROUP_BYTES, MAX_GROUP_RECORDS};
use crate::model::Micros;

/// A conversation being gathered.
struct OpenGroup {
    number: u32,
    last_time: Option<Micros>,
    rows: Vec<IndexEntry>,
    bytes: u64,
}

/// Assigns records, in chronological order, to conversations and hands out closed ones.
pub(super) struct Grouper {
    gap: Micros,
    untitled_key: Option<u64>,
    open: FxHashMap<(bool, u64), OpenGroup>,
    /// Open groups with a known last time, by (last time, number), per kind (title, explicit).
    by_time: [BTreeSet<(Micros, u32, u64)>; 2],
    /// The group of the record just assigned.
    previous: Option<(bool, u64)>,
    next_number: u32,
    /// Closed groups' rows, in the order they are written.
    ready: VecDeque<Vec<IndexEntry>>,
}

impl Grouper {
    pub(super) fn new(gap: Micros, untitled_key: Option<u64>) -> Self {
        Grouper {
            gap,
            untitled_key,
            open: FxHashMap::default(),
            by_time: [BTreeSet::new(), BTreeSet::new()],
            previous: None,
            next_number: 0,
            ready: VecDeque::new(),
        }
    }

    fn idle_limit(&self, explicit: bool) -> Micros {
        if explicit { KEYED_IDLE.max(self.gap) } else { self.gap }
    }

    fn close(&mut self, key: (bool, u64)) {
        if let Some(group) = self.open.remove(&key) {
            if let Some(last) = group.last_time {
                self.by_time[usize::from(key.0)].remove(&(last, group.number, key.1));
            }
            if self.previous == Some(key) {
                self.previous = None;
            }
            self.ready.push_back(group.rows);
        }
    }

    /// Closes the groups idle for longer than their limit at `now`, oldest first.
    fn expire(&mut self, now: Micros) {
        for explicit in [false, true] {
            let limit = self.idle_limit(explicit);
            while let Some(&(last, _, key)) = self.by_time[usize::from(explicit)].first() {
                if now.saturating_sub(last) <= limit {
                    break;
                }
                self.close((explicit, key));
            }
        }
    }

    /// The bytes a record counts for against [`MAX_GROUP_BYTES`]: its own, without the header
    /// a spilled row carries, so a file groups the same read back or spilled.
    fn weight(entry: &IndexEntry) -> u32 {
        if entry.source == Source::Spill { entry.length.saturating_sub(BINARY_ROW_HEADER as u32) } else { entry.length }
    }

    fn fits(group: &OpenGroup, weight: u32) -> bool {
        group.rows.len() < MAX_GROUP_RECORDS && group.bytes + u64::from(weight) <= MAX_GROUP_BYTES
    }

    pub(super) fn assign(&mut self, entry: &IndexEntry) {
        let weight = Grouper::weight(entry);
        if let Some(time) = entry.time {
            self.expire(time);
        }
        let own = (entry.explicit, entry.key);
        let mut target = None;
        if let Some(group) = self.open.get(&own) {
            if Self::fits(group, weight) {
                target = Some(own);
            } else {
                self.close(own);
            }
        }
        if target.is_none()
            && !entry.explicit
            && self.untitled_key == Some(entry.key)
            && let Some(previous) = self.previous
            && self.open.get(&previous).is_some_and(|group| {
                Self::fits(group, weight)
                    && match (group.last_time, entry.time) {
                        (Some(last), Some(time)) => time.saturating_sub(last) <= self.gap,
                        _ => true,
                    }
            })
        {
            target = Some(previous);
        }
        let key = match target {
            Some(key) => key,
            None => {
                let number = self.next_number;
                self.next_number += 1;
                self.open.insert(own, OpenGroup { number, last_time: None, rows: Vec::new(), bytes: 0 });
                own
            }
        };
        let Some(group) = self.open.get_mut(&key) else { return };
        group.rows.push(*entry);
        group.bytes += u64::from(weight);
        if let Some(time) = entry.time {
            let index = usize::from(key.0);
            if let Some(last) = group.last_time {
                self.by_time[index].remove(&(last, group.number, key.1));
            }
            // Times can step back a little (equal or shuffled stamps): keep the latest.
            let last = group.last_time.map_or(time, |last| last.max(time));
            group.last_time = Some(last);
            self.by_time[index].insert((last, group.number, key.1));
        }
        self.previous = Some(key);
    }

    /// The next closed group's rows, in the order groups closed.
    pub(super) fn next_ready(&mut self) -> Option<Vec<IndexEntry>> {
        self.ready.pop_front()
    }

    /// Whether any group is still open.
    pub(super) fn has_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// Closes every open group, in the order they were opened.
    pub(super) fn close_all(&mut self) {
        let mut remaining: Vec<(u32, (bool, u64))> = self.open.iter().map(|(key, group)| (group.number, *key)).collect();
        remaining.sort_unstable();
        for (_, key) in remaining {
            self.close(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_binary_rows_count_their_own_bytes_as_read_back_ones_do() {
        // Two rows of half the byte cap each fill one conversation exactly, whether they were
        // spilled (with a binary row header each) or are read back from the input.
        let half = u32::try_from(MAX_GROUP_BYTES / 2).unwrap();
        let groups = |source: Source, length: u32| {
            let mut grouper = Grouper::new(10, None);
            for time in [1, 2] {
                let entry = IndexEntry { offset: 0, length, explicit: false, source, time: Some(time), key: 7, index: 0 };
                grouper.assign(&entry);
            }
            grouper.close_all();
            grouper.ready.iter().map(Vec::len).collect::<Vec<_>>()
        };
        assert_eq!(groups(Source::Input, half), [2]);
        assert_eq!(groups(Source::Spill, half + BINARY_ROW_HEADER as u32), [2]);
        assert_eq!(groups(Source::Input, half + 1), [1, 1]);
    }
}
