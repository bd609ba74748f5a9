//! Writes a single-file output around the page cache (`O_DIRECT`) where the file system allows
//! it, in large aligned blocks, and falls back to ordinary writes where it does not (tmpfs).
//!
//! Why: an output as large as the export it came from goes through the page cache once and is
//! never read back by memport. On the 2-core VM the benchmarks run on, putting 1 GiB into the
//! page cache cost 1.2–4.8 s of kernel CPU (fresh pages are faulted in by the host), against
//! 0.13 s to hand the same bytes to the disk directly; at 4 GB of input that was a third of the
//! run's CPU. The bytes written are the same either way.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};

use std::path::{Path, PathBuf};

/// Block alignment `O_DIRECT` needs for buffer addresses, file offsets and lengths (4 KiB
/// covers every logical block size in use).
const ALIGN: usize = 4096;
/// Bytes written per system call.
const BLOCK: usize = 4 << 20;

/// Buffered writer over an output file; see the module docs.
pub struct DirectWriter {
    file: File,
    path: PathBuf,
    /// A second handle on the same file opened with `O_DIRECT`; `None` once the file system
    /// refused it.
    direct: Option<File>,
    /// `BLOCK` bytes starting at `start` are the aligned block being filled.
    buffer: Vec<u8>,
    start: usize,
    filled: usize,
    /// Bytes already in the file.
    written: u64,
    /// Whether each block written is read back into the page cache at once
    /// ([`DirectWriter::cache_written_blocks`]).
    cache_written: bool,
}

impl DirectWriter {
    /// Creates the file at `path`, which must not exist (a sink writes into a folder of its
    /// own), readable by all (0644) like every output.
    ///
    /// # Errors
    /// I/O errors creating it; an existing file is `AlreadyExists`.
    pub fn create(path: &Path) -> io::Result<DirectWriter> {
        let file = OpenOptions::new().write(true).read(true).create_new(true).mode(0o644).open(path)?;
        // Whatever the umask says: outputs are ordinary files.
        file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
        let direct = OpenOptions::new().write(true).custom_flags(libc::O_DIRECT).open(path).ok();
        let buffer = vec![0u8; BLOCK + ALIGN];
        // `align_offset` may decline to compute an offset; then the buffer start is used and the
        // first direct write falls back to ordinary writes when the kernel refuses it.
        let start = buffer.as_ptr().align_offset(ALIGN).min(ALIGN);
        Ok(DirectWriter { file, path: path.to_owned(), direct, buffer, start, filled: 0, written: 0, cache_written: false })
    }

    /// Has the kernel read each block back into the page cache once it is written, while the
    /// run goes on (`POSIX_FADV_WILLNEED`, which returns at once), for a caller that reads the
    /// whole file back at the end: those reads then come from memory instead of the disk. The
    /// pages are clean cache, which the kernel drops under memory pressure (a read-back then
    /// goes to the disk), and are not the process's memory. An AIMEM run with entity links
    /// hashes its chunks at the end: on the 1 GB bench this took that hash from the disk's
    /// 0.6–0.9 GB/s to the hash's own speed, for about 0.4 s more kernel CPU spread over the
    /// run (docs/design-decisions.md).
    pub fn cache_written_blocks(&mut self) {
        self.cache_written = true;
    }

    /// Whether written blocks are read back into the page cache.
    pub fn caches_written_blocks(&self) -> bool {
        self.cache_written
    }

    /// Whether blocks go around the page cache (until the file system refuses it).
    pub fn is_direct(&self) -> bool {
        self.direct.is_some()
    }

    /// Where the file is (a reader may open it while bytes are still being written after
    /// [`DirectWriter::buffered`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes written but not yet in the file, and the file offset they start at: every
    /// byte before it is in the file and stays as it is.
    pub fn buffered(&self) -> (u64, &[u8]) {
        (self.written, &self.buffer[self.start..self.start + self.filled])
    }

    /// Writes what is buffered and returns the file, complete.
    ///
    /// # Errors
    /// I/O errors.
    pub fn finish(mut self) -> io::Result<File> {
        // The tail is shorter than a block: an ordinary write, at an aligned offset.
        let tail = &self.buffer[self.start..self.start + self.filled];
        self.file.write_all_at(tail, self.written)?;
        self.written += self.filled as u64;
        self.filled = 0;
        Ok(self.file)
    }

    /// Buffers as much of `bytes` as fits in the block, writing the block out when it is full.
    fn buffer_some(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let count = bytes.len().min(BLOCK - self.filled);
        let at = self.start + self.filled;
        self.buffer[at..at + count].copy_from_slice(&bytes[..count]);
        self.filled += count;
        if self.filled == BLOCK {
            self.write_block()?;
        }
        Ok(count)
    }

    fn write_block(&mut self) -> io::Result<()> {
        let block = &self.buffer[self.start..self.start + self.filled];
        let mut done = 0;
        if let Some(direct) = &self.direct {
            while done < block.len() {
                match direct.write_at(&block[done..], self.written + done as u64) {
                    Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "the output file took no bytes")),
                    Ok(count) => done += count,
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    // The file system does not do direct writes (or not at this alignment):
                    // write the rest, and everything after, through the page cache.
                    Err(error) if error.raw_os_error() == Some(libc::EINVAL) => {
                        self.direct = None;
                        break;
                    }
                    Err(error) => return Err(error),
                }
            }
        }
        if done < block.len() {
            self.file.write_all_at(&block[done..], self.written + done as u64)?;
        } else if self.cache_written {
            // Advice only: a kernel that does not take it leaves the read-back to the disk.
            let length = std::num::NonZeroU64::new(block.len() as u64);
            let _ = rustix::fs::fadvise(&self.file, self.written, length, rustix::fs::Advice::WillNeed);
        }
        self.written += block.len() as u64;
        self.filled = 0;
        Ok(())
    }
}

impl Write for DirectWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer_some(bytes)
    }

    fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let count = self.buffer_some(bytes)?;
            bytes = &bytes[count..];
        }
        Ok(())
    }

    /// Nothing to do: blocks go out when full, and the tail in [`DirectWriter::finish`].
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written_through(pieces: &[&[u8]]) -> Vec<u8> {
        let folder = tempfile::tempdir().unwrap();
        let mut writer = DirectWriter::create(&folder.path().join("out")).unwrap();
        for piece in pieces {
            writer.write_all(piece).unwrap();
        }
        writer.finish().unwrap();
        std::fs::read(folder.path().join("out")).unwrap()
    }

    #[test]
    fn bytes_come_out_as_written_across_blocks() {
        let big: Vec<u8> = (0..BLOCK * 2 + 12_345).map(|index| (index % 251) as u8).collect();
        let pieces: Vec<&[u8]> = vec![b"head", &big[..BLOCK - 3], &big[BLOCK - 3..], b"", b"tail"];
        let mut expected = b"head".to_vec();
        expected.extend_from_slice(&big);
        expected.extend_from_slice(b"tail");
        assert_eq!(written_through(&pieces), expected);
    }

    #[test]
    fn blocks_read_back_into_the_page_cache_come_out_as_written() {
        let folder = tempfile::tempdir().unwrap();
        let mut writer = DirectWriter::create(&folder.path().join("out")).unwrap();
        writer.cache_written_blocks();
        assert!(writer.caches_written_blocks());
        let big: Vec<u8> = (0..BLOCK * 2 + 999).map(|index| (index % 241) as u8).collect();
        writer.write_all(&big).unwrap();
        writer.finish().unwrap();
        assert_eq!(std::fs::read(folder.path().join("out")).unwrap(), big);
    }

    #[test]
    fn small_and_empty_outputs() {
        assert_eq!(written_through(&[]), b"");
        assert_eq!(written_through(&[b"{}\n"]), b"{}\n");
    }

    #[test]
    fn the_file_up_to_the_buffered_bytes_and_those_bytes_are_everything_written() {
        let folder = tempfile::tempdir().unwrap();
        let mut writer = DirectWriter::create(&folder.path().join("out")).unwrap();
        let big: Vec<u8> = (0..BLOCK + 777).map(|index| (index % 253) as u8).collect();
        writer.write_all(&big).unwrap();
        let (at, pending) = writer.buffered();
        let mut seen = std::fs::read(writer.path()).unwrap();
        assert_eq!(seen.len() as u64, at);
        seen.extend_from_slice(pending);
        assert_eq!(seen, big);
    }
}
