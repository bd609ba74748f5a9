//! Records a caller hands to a run through memory instead of a file: a store's export sends
//! its UMP records to the conversion as it reads them, so the two overlap and no temporary
//! file is written and read back (on the benchmark VM, filling the page cache with that file
//! cost more kernel time than the conversion's own work).
//!
//! The caller sends each record with its group key (the conversation it belongs to, which a
//! store reads from its columns and the record's first members) through a [`BlockSender`],
//! gathered in blocks; the run reads them through [`SuppliedRecords`] as it reads the lines of
//! a UMP NDJSON file, with the same checks but one (the records are memport's own JSON and are
//! not each parsed again to check they are: see
//! [`crate::sources::formats::grouped::checked_line`]), at the offsets they would have as lines
//! of such a file. The key saves reading each record's conversation from
//! its bytes, which has to step over its text: in a store's export that was a tenth of the
//! work. The input can be read once.

use std::fmt;
use std::io;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use crate::sources::formats::grouped::{self, RecordSource, SourceProblem};

/// Blocks waiting between the caller and the run: the caller stays this far ahead at most.
const QUEUED_BLOCKS: usize = 4;

/// Record bytes a [`BlockSender`] gathers before it sends them.
pub const BLOCK_BYTES: usize = 1 << 20;

/// A run's input that a caller supplies through memory (see the module docs).
#[derive(Clone)]
pub struct SuppliedInput {
    /// How reports and rejects name it.
    pub name: String,
    records: Arc<Mutex<Option<SuppliedRecords>>>,
}

impl fmt::Debug for SuppliedInput {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_struct("SuppliedInput").field("name", &self.name).finish_non_exhaustive()
    }
}

impl SuppliedInput {
    /// A new input named `name` and the sender that fills it. The input ends at
    /// [`BlockSender::finish`]; [`BlockSender::fail`], or a sender dropped before it finished,
    /// makes the run's read fail there (the run rejects the rest of its input, as for a file
    /// it cannot read on).
    pub fn new(name: &str) -> (SuppliedInput, BlockSender) {
        let (sender, blocks) = sync_channel(QUEUED_BLOCKS);
        let records = SuppliedRecords { blocks, current: Block::default(), next: 0, offset: 0, display: name.to_owned(), key: None };
        let input = SuppliedInput { name: name.to_owned(), records: Arc::new(Mutex::new(Some(records))) };
        (input, BlockSender { sender, block: Block::with_capacity(), ended: false })
    }

    /// The input's records; only the first call gets them.
    ///
    /// # Errors
    /// An I/O error when the input was read already.
    pub fn take_records(&self) -> io::Result<SuppliedRecords> {
        let mut slot = self.records.lock().map_err(|_| io::Error::other("a supplied input's records were poisoned"))?;
        slot.take().ok_or_else(|| io::Error::other(format!("{} can be read only once", self.name)))
    }
}

/// Records and their keys, gathered to be sent together.
#[derive(Default)]
struct Block {
    /// The records' bytes, one after another.
    bytes: Vec<u8>,
    /// Each record's end in `bytes` and its group key.
    records: Vec<(usize, Option<String>)>,
}

impl Block {
    fn with_capacity() -> Block {
        Block { bytes: Vec::with_capacity(BLOCK_BYTES), records: Vec::with_capacity(1024) }
    }
}

/// Fills a [`SuppliedInput`] with records, in blocks.
pub struct BlockSender {
    sender: SyncSender<io::Result<Block>>,
    block: Block,
    /// `finish` or `fail` was called: dropping it ends nothing more.
    ended: bool,
}

impl BlockSender {
    /// Adds `record` with its group key (`None`: it stands alone), sending the block gathered
    /// so far first when the record would not fit in it, and the block once it is full.
    ///
    /// # Errors
    /// When the run has stopped reading (it failed, or ended early): the caller stops.
    pub fn send_record(&mut self, key: Option<String>, record: &[u8]) -> Result<(), ReaderGone> {
        // A record that would not fit goes into the next block: the block is sent as it is
        // rather than grown (growing copied every block once more, a fiftieth of an export).
        if !self.block.bytes.is_empty() && self.block.bytes.len() + record.len() > BLOCK_BYTES {
            self.send_block()?;
        }
        self.block.bytes.extend_from_slice(record);
        self.block.records.push((self.block.bytes.len(), key));
        // Full (a record as long as a block fills one alone): sent now.
        if self.block.bytes.len() >= BLOCK_BYTES {
            self.send_block()?;
        }
        Ok(())
    }

    /// Sends the block gathered so far and starts the next.
    fn send_block(&mut self) -> Result<(), ReaderGone> {
        let full = std::mem::replace(&mut self.block, Block::with_capacity());
        self.sender.send(Ok(full)).map_err(|_| ReaderGone)
    }

    /// Sends what is gathered and ends the input.
    ///
    /// # Errors
    /// When the run has stopped reading.
    pub fn finish(mut self) -> Result<(), ReaderGone> {
        self.ended = true;
        let last = std::mem::take(&mut self.block);
        if last.records.is_empty() { Ok(()) } else { self.sender.send(Ok(last)).map_err(|_| ReaderGone) }
    }

    /// Makes the run's read fail with `error` after the records sent so far, so a run never
    /// reads a cut input as a whole one.
    pub fn fail(mut self, error: io::Error) {
        self.ended = true;
        let gathered = std::mem::take(&mut self.block);
        // A run that stopped reading has failed or ended already.
        if gathered.records.is_empty() || self.sender.send(Ok(gathered)).is_ok() {
            let _ = self.sender.send(Err(error));
        }
    }
}

impl Drop for BlockSender {
    fn drop(&mut self) {
        if !self.ended {
            // Dropped on an early return: the input did not end, it was cut.
            let _ = self.sender.send(Err(io::Error::other("the input was cut off before its end")));
        }
    }
}

/// The run stopped reading a supplied input.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the conversion stopped reading its input")]
pub struct ReaderGone;

/// The run's side of a [`SuppliedInput`]: its records, each with the key it was sent with.
pub struct SuppliedRecords {
    blocks: Receiver<io::Result<Block>>,
    current: Block,
    /// The next record of `current`.
    next: usize,
    /// Where the next record would start were the records the lines of a file (each followed
    /// by a newline): the offsets a UMP NDJSON file of them would give.
    offset: u64,
    display: String,
    /// The key of the record handed out last.
    key: Option<Option<String>>,
}

impl RecordSource for SuppliedRecords {
    fn next_record(&mut self, out: &mut Vec<u8>) -> Result<Option<u64>, SourceProblem> {
        loop {
            while self.next >= self.current.records.len() {
                match self.blocks.recv() {
                    Ok(Ok(block)) => {
                        self.current = block;
                        self.next = 0;
                    }
                    Ok(Err(error)) => {
                        let offset = self.offset;
                        return Err(SourceProblem { offset, message: format!("{}: byte {offset}: {error}", self.display) });
                    }
                    // The sender finished (or was dropped after failing): the end of the input.
                    Err(_) => return Ok(None),
                }
            }
            let start = if self.next == 0 { 0 } else { self.current.records[self.next - 1].0 };
            let (end, key) = &mut self.current.records[self.next];
            self.next += 1;
            let offset = self.offset;
            self.offset += (*end - start) as u64 + 1;
            let record = self.current.bytes.get(start..*end).unwrap_or_default();
            self.key = Some(key.take());
            // The checks a line of a file memport wrote gets (its newline counts to its length).
            let checked = if record.len() >= grouped::MAX_LINE_BYTES {
                Err(format!("a line longer than {} bytes", grouped::MAX_LINE_BYTES))
            } else {
                grouped::checked_line(record, false)
            };
            match checked {
                Ok(Some(text)) => out.extend_from_slice(text),
                Ok(None) => continue,
                Err(problem) => {
                    self.key = Some(None);
                    grouped::record_error(out, &format!("{}: byte {offset}: {problem}", self.display));
                }
            }
            return Ok(Some(offset));
        }
    }

    fn known_key(&mut self) -> Option<Option<String>> {
        self.key.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record read: its offset, bytes and key.
    type Read = (u64, Vec<u8>, Option<String>);

    /// Every record of `records` with its offset and key, or the problem the read ended at.
    fn read_all(mut records: SuppliedRecords) -> (Vec<Read>, Option<SourceProblem>) {
        let mut read = Vec::new();
        loop {
            let mut out = Vec::new();
            match records.next_record(&mut out) {
                Ok(Some(offset)) => {
                    let key = records.known_key().expect("a supplied record's key is known");
                    read.push((offset, out, key));
                }
                Ok(None) => return (read, None),
                Err(problem) => return (read, Some(problem)),
            }
        }
    }

    #[test]
    fn records_sent_in_blocks_are_read_back_whole_in_order_with_their_keys_and_file_offsets() {
        let (input, mut sender) = SuppliedInput::new("test");
        let record = |index: usize| format!("{{\"n\":{index},\"pad\":\"{}\"}}", "x".repeat(index % 300));
        let writer = std::thread::spawn(move || {
            for index in 0..20_000 {
                let key = (index % 3 != 0).then(|| format!("agent\0c{}", index / 7));
                sender.send_record(key, record(index).as_bytes()).unwrap();
            }
            sender.finish().unwrap();
        });
        let (read, problem) = read_all(input.take_records().unwrap());
        writer.join().unwrap();
        assert!(problem.is_none());
        assert_eq!(read.len(), 20_000);
        // The offsets a file of these records, one a line, would give them.
        let mut offset = 0;
        for (index, (at, bytes, key)) in read.iter().enumerate() {
            assert_eq!(*at, offset);
            assert_eq!(bytes, record(index).as_bytes());
            assert_eq!(key.as_deref(), (index % 3 != 0).then(|| format!("agent\0c{}", index / 7)).as_deref());
            offset += bytes.len() as u64 + 1;
        }
        assert!(input.take_records().is_err(), "an input is read once");
    }

    #[test]
    fn a_record_too_deep_to_read_is_a_record_error_standing_alone() {
        let (input, mut sender) = SuppliedInput::new("the store's records");
        let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
        sender.send_record(Some("a\0c".into()), deep.as_bytes()).unwrap();
        sender.send_record(Some("a\0c".into()), b"{}").unwrap();
        sender.finish().unwrap();
        let (read, problem) = read_all(input.take_records().unwrap());
        assert!(problem.is_none());
        assert_eq!(read.len(), 2);
        let error = String::from_utf8(read[0].1.clone()).unwrap();
        assert!(error.starts_with("{\"_record_error\"") && error.contains("the store's records: byte 0: the line nests"), "{error}");
        assert_eq!(read[0].2, None);
        assert_eq!((read[1].0, read[1].2.as_deref()), (400_001, Some("a\0c")));
    }

    #[test]
    fn a_failed_sender_fails_the_read_instead_of_ending_it() {
        let (input, mut sender) = SuppliedInput::new("test");
        sender.send_record(None, b"{}").unwrap();
        let writer = std::thread::spawn(move || sender.fail(io::Error::other("the store could not be read")));
        let (read, problem) = read_all(input.take_records().unwrap());
        writer.join().unwrap();
        assert_eq!(read.len(), 1);
        let problem = problem.expect("the read fails");
        assert!(problem.message.contains("could not be read") && problem.offset == 3, "{problem:?}");
    }

    #[test]
    fn a_sender_dropped_before_it_finished_fails_the_read() {
        let (input, mut sender) = SuppliedInput::new("test");
        sender.send_record(None, b"{}").unwrap();
        let writer = std::thread::spawn(move || drop(sender));
        let (_, problem) = read_all(input.take_records().unwrap());
        writer.join().unwrap();
        assert!(problem.expect("the read fails").message.contains("cut off"));
    }

    #[test]
    fn blocks_are_never_grown_past_their_size() {
        let (input, mut sender) = SuppliedInput::new("test");
        let records = input.take_records().unwrap();
        let writer = std::thread::spawn(move || {
            for index in 0..10_000 {
                sender.send_record(None, "y".repeat(100 + index % 700).as_bytes()).unwrap();
                assert_eq!(sender.block.bytes.capacity(), BLOCK_BYTES);
            }
            sender.finish().unwrap();
        });
        let blocks: Vec<Block> = records.blocks.iter().map(Result::unwrap).collect();
        writer.join().unwrap();
        assert!(blocks.len() > 3);
        assert!(blocks.iter().all(|block| block.bytes.len() <= BLOCK_BYTES));
        assert_eq!(blocks.iter().map(|block| block.records.len()).sum::<usize>(), 10_000);
    }

    #[test]
    fn a_sender_whose_reader_is_gone_is_told_so() {
        let (input, mut sender) = SuppliedInput::new("test");
        drop(input);
        let record = vec![b'x'; BLOCK_BYTES];
        assert!(sender.send_record(None, &record).is_err());
    }
}
