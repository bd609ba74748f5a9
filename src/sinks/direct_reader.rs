//! Reads a file back around the page cache (`O_DIRECT`) where the file system allows it, and
//! with ordinary reads where it does not (tmpfs) or once the kernel refuses an aligned read.
//!
//! Why: the AIMEM writers read their chunk records back once when a run extracts (the entity
//! links come first in the checksum's canonical order, see [`crate::sinks::aimem`]), and an
//! ordinary read puts every page of it into the page cache, which on the 2-core VM the
//! benchmarks run on costs kernel CPU per page faulted in by the host (the same cost
//! [`crate::sinks::direct_writer`] avoids on the way out). The bytes read are the same either way.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Block alignment `O_DIRECT` needs for buffer addresses, file offsets and lengths.
const ALIGN: u64 = 4096;

/// A file read at offsets, around the page cache when it can be.
pub struct DirectReader {
    /// `Some` while direct reads work.
    direct: Option<File>,
    /// The ordinary handle, for the fallback.
    file: File,
    /// An aligned buffer: `buffer[start..start + capacity]`.
    buffer: Vec<u8>,
    start: usize,
    capacity: usize,
}

impl DirectReader {
    /// Reads `file` in blocks of about `block` bytes, around the page cache when its `path` is
    /// given (an unnamed temporary file has none, and is read the ordinary way).
    ///
    /// # Errors
    /// I/O errors cloning the ordinary handle.
    pub fn new(file: &File, path: Option<&Path>, block: usize) -> io::Result<DirectReader> {
        let direct = path.and_then(|path| OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(path).ok());
        let capacity = block.div_ceil(ALIGN as usize) * ALIGN as usize + ALIGN as usize;
        let buffer = vec![0u8; capacity + ALIGN as usize];
        // `align_offset` may decline to compute an offset; then the first direct read fails
        // with EINVAL and the ordinary reads take over.
        let start = buffer.as_ptr().align_offset(ALIGN as usize).min(ALIGN as usize);
        Ok(DirectReader { direct, file: file.try_clone()?, buffer, start, capacity })
    }

    /// Reads up to `into.len()` bytes at `offset` (fewer only at the end of the file).
    ///
    /// # Errors
    /// I/O errors.
    pub fn read_at(&mut self, into: &mut [u8], offset: u64) -> io::Result<usize> {
        if let Some(direct) = &self.direct {
            let aligned = offset - offset % ALIGN;
            let skip = (offset - aligned) as usize;
            // Whole aligned blocks covering the wanted bytes, within the buffer.
            let wanted = (skip + into.len()).div_ceil(ALIGN as usize) * ALIGN as usize;
            let length = wanted.min(self.capacity);
            match read_aligned(direct, &mut self.buffer[self.start..self.start + length], aligned) {
                Ok(read) => {
                    let available = read.saturating_sub(skip).min(into.len());
                    into[..available].copy_from_slice(&self.buffer[self.start + skip..self.start + skip + available]);
                    return Ok(available);
                }
                Err(error) if error.raw_os_error() == Some(libc::EINVAL) => self.direct = None,
                Err(error) => return Err(error),
            }
        }
        read_full(&self.file, into, offset)
    }
}

/// [`read_full`] for a direct handle: a read that returns a part of a block has reached the
/// end of the file, and the next offset would not be aligned, so it stops there.
fn read_aligned(file: &File, into: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut total = 0;
    while total < into.len() {
        match file.read_at(&mut into[total..], offset + total as u64) {
            Ok(0) => break,
            Ok(read) => {
                total += read;
                if !(read as u64).is_multiple_of(ALIGN) {
                    break;
                }
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(total)
}

/// Reads until `into` is full or the file ends.
fn read_full(file: &File, into: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut total = 0;
    while total < into.len() {
        match file.read_at(&mut into[total..], offset + total as u64) {
            Ok(0) => break,
            Ok(read) => total += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// Guards the alignment arithmetic: any offset and length read back the file's bytes, on a
    /// file system that takes O_DIRECT (the temporary folder) as on one that does not.
    #[test]
    fn reads_at_any_offset_return_the_files_bytes() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let bytes: Vec<u8> = (0..300_000u32).map(|index| (index.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        file.write_all(&bytes).unwrap();
        file.as_file().sync_all().unwrap();
        let mut reader = DirectReader::new(file.as_file(), Some(file.path()), 65_536).unwrap();
        for (offset, length) in [(0usize, 10usize), (1, 4096), (4095, 70_000), (123_457, 65_536), (299_990, 100), (300_000, 5)] {
            let mut into = vec![0u8; length];
            let mut done = 0;
            while done < length {
                let read = reader.read_at(&mut into[done..], (offset + done) as u64).unwrap();
                if read == 0 {
                    break;
                }
                done += read;
            }
            let end = (offset + length).min(bytes.len());
            assert_eq!(&into[..done], &bytes[offset.min(end)..end], "offset {offset}, length {length}");
        }
    }
}
