//! Records a caller hands to a run through memory instead of a file: a store's export sends
//! its UMP records to the conversion as it reads them, so the two overlap and no temporary
//! file is written and read back (on the benchmark VM, filling the page cache with that file
//! cost more kernel time than the conversion's own work).
//!
//! The caller sends blocks of UMP NDJSON (whole lines) through a [`BlockSender`]; the run
//! reads them as it reads a UMP NDJSON file, line by line, with the same checks but one: the
//! lines are records memport wrote as JSON, and are not each parsed again to check they are
//! ([`crate::sources::formats::grouped::LineRecords::written_as_json`]). The input can be read
//! once.

use std::fmt;
use std::io::{self, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

/// Blocks waiting between the caller and the run: the caller stays this far ahead at most.
const QUEUED_BLOCKS: usize = 4;

/// Bytes a [`BlockSender`] gathers before it sends them.
pub const BLOCK_BYTES: usize = 1 << 20;

/// A run's input that a caller supplies through memory (see the module docs).
#[derive(Clone)]
pub struct SuppliedInput {
    /// How reports and rejects name it.
    pub name: String,
    reader: Arc<Mutex<Option<BlockReader>>>,
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
        let reader = BlockReader { blocks, current: Vec::new(), position: 0 };
        let input = SuppliedInput { name: name.to_owned(), reader: Arc::new(Mutex::new(Some(reader))) };
        (input, BlockSender { sender, block: Vec::with_capacity(BLOCK_BYTES), ended: false })
    }

    /// The input's bytes; only the first call gets them.
    ///
    /// # Errors
    /// An I/O error when the input was read already.
    pub fn take_reader(&self) -> io::Result<Box<dyn Read + Send>> {
        let mut slot = self.reader.lock().map_err(|_| io::Error::other("a supplied input's reader was poisoned"))?;
        match slot.take() {
            Some(reader) => Ok(Box::new(reader)),
            None => Err(io::Error::other(format!("{} can be read only once", self.name))),
        }
    }
}

/// Fills a [`SuppliedInput`] with lines, in blocks.
pub struct BlockSender {
    sender: SyncSender<io::Result<Vec<u8>>>,
    block: Vec<u8>,
    /// `finish` or `fail` was called: dropping it ends nothing more.
    ended: bool,
}

impl BlockSender {
    /// Adds `line` and a newline, sending the block gathered so far first when they would not
    /// fit in it, and the block once it is full.
    ///
    /// # Errors
    /// When the run has stopped reading (it failed, or ended early): the caller stops.
    pub fn send_line(&mut self, line: &[u8]) -> Result<(), ReaderGone> {
        // A line that would not fit goes into the next block: the block is sent as it is
        // rather than grown (growing copied every block once more, a fiftieth of an export).
        if !self.block.is_empty() && self.block.len() + line.len() + 1 > BLOCK_BYTES {
            self.send_block()?;
        }
        self.block.extend_from_slice(line);
        self.block.push(b'\n');
        // Full (a line as long as a block fills one alone): sent now.
        if self.block.len() >= BLOCK_BYTES {
            self.send_block()?;
        }
        Ok(())
    }

    /// Sends the block gathered so far and starts the next.
    fn send_block(&mut self) -> Result<(), ReaderGone> {
        let full = std::mem::replace(&mut self.block, Vec::with_capacity(BLOCK_BYTES));
        self.sender.send(Ok(full)).map_err(|_| ReaderGone)
    }

    /// Sends what is gathered and ends the input.
    ///
    /// # Errors
    /// When the run has stopped reading.
    pub fn finish(mut self) -> Result<(), ReaderGone> {
        self.ended = true;
        let last = std::mem::take(&mut self.block);
        if last.is_empty() { Ok(()) } else { self.sender.send(Ok(last)).map_err(|_| ReaderGone) }
    }

    /// Makes the run's read fail with `error`, so a run never reads a cut input as a whole one.
    pub fn fail(mut self, error: io::Error) {
        self.ended = true;
        // A run that stopped reading has failed or ended already.
        let _ = self.sender.send(Err(error));
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

/// The run's side of a [`SuppliedInput`].
struct BlockReader {
    blocks: Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    position: usize,
}

impl Read for BlockReader {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        while self.position >= self.current.len() {
            match self.blocks.recv() {
                Ok(block) => {
                    self.current = block?;
                    self.position = 0;
                }
                // The sender finished (or was dropped): the end of the input.
                Err(_) => return Ok(0),
            }
        }
        let count = buffer.len().min(self.current.len() - self.position);
        buffer[..count].copy_from_slice(&self.current[self.position..self.position + count]);
        self.position += count;
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_sent_in_blocks_are_read_back_whole_and_in_order() {
        let (input, mut sender) = SuppliedInput::new("test");
        let writer = std::thread::spawn(move || {
            for index in 0..20_000 {
                sender.send_line(format!("{{\"n\":{index},\"pad\":\"{}\"}}", "x".repeat(index % 300)).as_bytes()).unwrap();
            }
            sender.finish().unwrap();
        });
        let mut text = String::new();
        input.take_reader().unwrap().read_to_string(&mut text).unwrap();
        writer.join().unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 20_000);
        assert!(lines[19_999].starts_with("{\"n\":19999,"));
        assert!(input.take_reader().is_err(), "an input is read once");
    }

    #[test]
    fn a_failed_sender_fails_the_read_instead_of_ending_it() {
        let (input, mut sender) = SuppliedInput::new("test");
        sender.send_line(b"{}").unwrap();
        let writer = std::thread::spawn(move || sender.fail(io::Error::other("the store could not be read")));
        let mut text = String::new();
        let error = input.take_reader().unwrap().read_to_string(&mut text).unwrap_err();
        writer.join().unwrap();
        assert!(error.to_string().contains("could not be read"));
    }

    #[test]
    fn a_sender_dropped_before_it_finished_fails_the_read() {
        let (input, mut sender) = SuppliedInput::new("test");
        sender.send_line(b"{}").unwrap();
        let writer = std::thread::spawn(move || drop(sender));
        let mut text = String::new();
        let error = input.take_reader().unwrap().read_to_string(&mut text).unwrap_err();
        writer.join().unwrap();
        assert!(error.to_string().contains("cut off"));
    }

    #[test]
    fn blocks_end_at_a_line_and_are_never_grown_past_their_size() {
        let (input, mut sender) = SuppliedInput::new("test");
        let reader = input.reader.lock().unwrap().take().unwrap();
        let writer = std::thread::spawn(move || {
            for index in 0..10_000 {
                sender.send_line("y".repeat(100 + index % 700).as_bytes()).unwrap();
                assert_eq!(sender.block.capacity(), BLOCK_BYTES);
            }
            sender.finish().unwrap();
        });
        let blocks: Vec<Vec<u8>> = reader.blocks.iter().map(Result::unwrap).collect();
        writer.join().unwrap();
        assert!(blocks.len() > 3);
        for block in &blocks {
            assert!(block.len() <= BLOCK_BYTES && block.ends_with(b"\n"));
        }
        assert_eq!(blocks.iter().map(|block| block.iter().filter(|&&byte| byte == b'\n').count()).sum::<usize>(), 10_000);
    }

    #[test]
    fn a_sender_whose_reader_is_gone_is_told_so() {
        let (input, mut sender) = SuppliedInput::new("test");
        drop(input);
        let line = vec![b'x'; BLOCK_BYTES];
        assert!(sender.send_line(&line).is_err());
    }
}
