//! Reads an input on a thread of its own, a few blocks ahead of the one framing it: the copy
//! out of the page cache (or the inflating of a zip entry) then runs beside the framing
//! instead of between its steps. Blocks are handed over whole and handed back for reuse, so
//! nothing is copied twice and at most [`BLOCKS_AHEAD`] + 2 blocks exist at once.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

/// Bytes per block.
pub const BLOCK_BYTES: usize = 1 << 20;
/// Blocks read but not yet taken.
const BLOCKS_AHEAD: usize = 2;

/// A block and how many of its bytes were read (0 at the end of the input).
type Block = io::Result<(Vec<u8>, usize)>;

/// The reading end: blocks in input order.
pub struct ReadAhead {
    blocks: Receiver<Block>,
    used: Sender<Vec<u8>>,
    ended: bool,
}

impl ReadAhead {
    /// Starts reading `reader` on a new thread.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub fn spawn(mut reader: Box<dyn Read + Send>) -> io::Result<Self> {
        let (block_sender, blocks) = mpsc::sync_channel::<Block>(BLOCKS_AHEAD);
        let (used, used_blocks) = mpsc::channel::<Vec<u8>>();
        std::thread::Builder::new().name("memport-read".into()).spawn(move || read_blocks(&mut reader, &block_sender, &used_blocks))?;
        Ok(ReadAhead { blocks, used, ended: false })
    }

    /// Puts the next block in `buffer` (handing the old one back for reuse) and returns how
    /// many of its bytes hold input: 0 at the end.
    ///
    /// # Errors
    /// The reader's error, or the reading thread stopped.
    pub fn next_block(&mut self, buffer: &mut Vec<u8>) -> io::Result<usize> {
        if self.ended {
            return Ok(0);
        }
        let (block, count) = self.blocks.recv().map_err(|_| io::Error::other("the thread reading the input stopped"))??;
        // The reading thread is gone only after the last block, which is never handed back.
        let _ = self.used.send(std::mem::replace(buffer, block));
        self.ended = count == 0;
        Ok(count)
    }
}

/// The reading thread: fills blocks (reused ones first) until the end of the input or an
/// error, or until the reading end is dropped.
fn read_blocks(reader: &mut dyn Read, blocks: &SyncSender<Block>, used_blocks: &Receiver<Vec<u8>>) {
    loop {
        let mut block = used_blocks.try_recv().unwrap_or_default();
        block.resize(BLOCK_BYTES, 0);
        let mut count = 0;
        while count < block.len() {
            match reader.read(&mut block[count..]) {
                Ok(0) => break,
                Ok(read) => count += read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    let _ = blocks.send(Err(error));
                    return;
                }
            }
        }
        if blocks.send(Ok((block, count))).is_err() || count == 0 {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_in_order_and_end_with_an_empty_one() {
        let input: Vec<u8> = (0..BLOCK_BYTES * 3 + 12_345).map(|position| (position % 251) as u8).collect();
        let mut ahead = ReadAhead::spawn(Box::new(io::Cursor::new(input.clone()))).unwrap();
        let mut buffer = Vec::new();
        let mut read = Vec::new();
        loop {
            let count = ahead.next_block(&mut buffer).unwrap();
            if count == 0 {
                break;
            }
            read.extend_from_slice(&buffer[..count]);
        }
        assert_eq!(read, input);
        assert_eq!(ahead.next_block(&mut buffer).unwrap(), 0, "the end stays the end");
    }

    #[test]
    fn a_read_error_reaches_the_reading_end() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk gone"))
            }
        }
        let mut ahead = ReadAhead::spawn(Box::new(Failing)).unwrap();
        let error = ahead.next_block(&mut Vec::new()).unwrap_err();
        assert_eq!(error.to_string(), "disk gone");
    }
}
