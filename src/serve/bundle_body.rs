//! An exported bundle as an HTTP body: the file read around the page cache, and handed out in
//! blocks that go round (each block, once the connection has written it, is filled again).
//!
//! Why: the export's conversion writes the bundle around the page cache, so an ordinary read
//! fills the cache with pages nobody reads again, and a fresh buffer a block touches new
//! memory too. On the benchmark VM each new page costs a fault in the host: read so, the
//! stream of the 1 GB store's bundle ran at 220–1,140 MB/s from run to run (80% of its samples
//! in the kernel's copy at the low end); read around the cache into blocks that go round, it
//! runs at about the disk's speed ([Performance](../../docs/performance.md)).

use std::io;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use bytes::Bytes;

use crate::sinks::direct_reader::DirectReader;

/// Bytes a block.
const BLOCK: usize = 2 << 20;
/// Threads reading blocks in turn, each its own read in flight: two reads in flight got
/// 25–35% more out of the benchmark VM's disk than one (the same as for the AIMEM sink's
/// read-back in `sinks/aimem`).
const READERS: usize = 2;
/// Blocks each reading thread has going round: one being read, one queued for the connection
/// and one it is writing.
const BLOCKS_PER_READER: usize = 3;
/// Blocks queued between the reading threads and the connection.
const QUEUED: usize = 2;
/// How long a reading thread waits for the connection to take or give back a block before it
/// stops, ending the body short of its length (a client reading less than a block in this
/// time, under 18 KB/s, is cut off; the server's request timeout does not reach a body).
const STALLED: Duration = Duration::from_secs(120);

/// A block on its way to the client; dropped once written, it goes back to its reader.
struct RoundBlock {
    bytes: Vec<u8>,
    back: mpsc::Sender<Vec<u8>>,
}

impl AsRef<[u8]> for RoundBlock {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for RoundBlock {
    fn drop(&mut self) {
        // A reader that has ended needs it no more.
        let _ = self.back.send(std::mem::take(&mut self.bytes));
    }
}

/// The bytes of the file at `path`, read by [`READERS`] threads in turn a few blocks ahead of
/// the consumer. `keep` (the temporary folder the file is in) is dropped as soon as the file
/// is open: the open file stays readable, and a process killed mid-stream leaves nothing
/// behind.
pub fn bundle_body<K: Send + 'static>(path: PathBuf, keep: K) -> impl futures_util::Stream<Item = io::Result<Bytes>> + Send + 'static {
    let (sender, receiver) = tokio::sync::mpsc::channel::<io::Result<Bytes>>(QUEUED);
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        // Every handle (the direct ones are opened by path) before the folder goes.
        let opened: io::Result<Vec<DirectReader>> =
            (0..READERS).map(|_| std::fs::File::open(&path).and_then(|file| DirectReader::new(&file, Some(&path), BLOCK))).collect();
        drop(keep);
        let readers = match opened {
            Ok(readers) => readers,
            Err(error) => {
                let _ = sender.blocking_send(Err(error));
                return;
            }
        };
        // Block `index` comes from reader `index % READERS`; a reader that has nothing more to
        // read hangs up, and a block shorter than the others is the last one.
        let lanes: Vec<Lane> = readers.into_iter().enumerate().map(|(first, reader)| Lane::start(reader, first)).collect();
        for index in 0.. {
            let lane = &lanes[index % READERS];
            let Ok(read) = lane.full.recv() else { break };
            match read {
                Ok(block) => {
                    let last = block.len() < BLOCK;
                    let bytes = Bytes::from_owner(RoundBlock { bytes: block, back: lane.back.clone() });
                    // A consumer that takes nothing for STALLED is gone: stop, freeing the threads.
                    let sent = runtime.block_on(tokio::time::timeout(STALLED, sender.send(Ok(bytes))));
                    if last || !matches!(sent, Ok(Ok(()))) {
                        break;
                    }
                }
                Err(error) => {
                    let _ = sender.blocking_send(Err(error));
                    break;
                }
            }
        }
        // Dropping the lanes ends their threads: a send to this side fails, and a block the
        // connection gives back finds no reader waiting.
    });
    futures_util::stream::unfold(receiver, |mut receiver| async move { receiver.recv().await.map(|item| (item, receiver)) })
}

/// One reading thread's side: the blocks it read, and where blocks go back to it.
struct Lane {
    full: mpsc::Receiver<io::Result<Vec<u8>>>,
    back: mpsc::Sender<Vec<u8>>,
}

impl Lane {
    /// A thread reading blocks `first`, `first + READERS`, … with `reader` into the blocks
    /// that come back to it, until the end of the file, an error, or the consumer is gone.
    fn start(mut reader: DirectReader, first: usize) -> Lane {
        let (full_sender, full) = mpsc::sync_channel::<io::Result<Vec<u8>>>(1);
        let (back, returned) = mpsc::channel::<Vec<u8>>();
        for _ in 0..BLOCKS_PER_READER {
            // The receiver is alive: it moves into the thread below.
            let _ = back.send(Vec::with_capacity(BLOCK));
        }
        std::thread::spawn(move || {
            let mut offset = (first * BLOCK) as u64;
            while let Ok(mut block) = returned.recv_timeout(STALLED) {
                block.resize(BLOCK, 0);
                match reader.read_at(&mut block, offset) {
                    // The end of the file.
                    Ok(0) => break,
                    Ok(read) => {
                        block.truncate(read);
                        if full_sender.send(Ok(block)).is_err() {
                            break;
                        }
                    }
                    Err(error) => {
                        let _ = full_sender.send(Err(error));
                        break;
                    }
                }
                offset += (READERS * BLOCK) as u64;
            }
        });
        Lane { full, back }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_body_is_the_whole_file_in_order_and_the_folder_goes_once_it_is_open() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("bundle.aimem.ndjson");
        // Blocks going round many times, and a last one shorter than a block and than a page.
        let content: Vec<u8> = (0..(BLOCK * 9 + 1234)).map(|index| (index % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let kept = folder.path().to_owned();
        let mut body = Box::pin(bundle_body(path, folder));
        let mut received = Vec::new();
        while let Some(block) = body.next().await {
            received.extend_from_slice(&block.unwrap());
        }
        assert_eq!(received.len(), content.len());
        assert!(received == content, "the bytes differ");
        assert!(!kept.exists(), "the temporary folder is removed once the file is open");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_missing_file_is_an_error_in_the_body() {
        let folder = tempfile::tempdir().unwrap();
        let mut body = Box::pin(bundle_body(folder.path().join("missing"), ()));
        assert!(body.next().await.unwrap().is_err());
        assert!(body.next().await.is_none());
    }
}
