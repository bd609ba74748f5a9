//! What a path must be before any format is looked for in it: a regular file or a folder (a
//! device, a named pipe or a socket would be read forever, or block until something writes to
//! it), not empty, and UTF-8 rather than UTF-16. `memport validate` checks its files with it,
//! and the export detection (`sources::detect`) its inputs; neither knows any format here.

use std::io::{self, Read};
use std::path::Path;

use crate::error::ConfigError;

/// What to tell someone whose file is UTF-16 (Windows tools and Excel's "Unicode text" write
/// it); memport reads UTF-8 only.
pub const UTF16_ADVICE: &str = "this file is UTF-16; memport reads UTF-8 — convert it with `iconv -f UTF-16 -t UTF-8`";

/// What `validate` says of an empty or whitespace-only file, and its problem code.
pub const EMPTY_FILE: &str = "empty file: not a memory format memport knows";
/// The problem code of [`EMPTY_FILE`].
pub const EMPTY_FILE_CODE: &str = "empty_file";
/// The problem code of [`UTF16_ADVICE`].
pub const UTF16_CODE: &str = "utf16";

/// Bytes of a file's start looked at to tell UTF-16 without a byte-order mark.
pub const UTF16_SAMPLE: usize = 64;

/// Bytes read at a time while looking for the first byte that is not whitespace.
const BLANK_BLOCK: usize = 64 << 10;

/// Refuses an input that is neither a regular file nor a folder: a character device
/// (`/dev/zero`) would be read forever, a named pipe blocks until something writes to it, and
/// neither is an export. Call it before anything opens the path.
///
/// # Errors
/// [`ConfigError::Input`] naming what the path is.
pub fn check_regular_input(path: &Path) -> Result<(), ConfigError> {
    match special_file_kind(path) {
        Some(kind) => Err(ConfigError::Input {
            path: path.to_owned(),
            reason: format!("is {kind}, not a regular file or folder; memport reads exports from files"),
        }),
        None => Ok(()),
    }
}

/// What to tell the user when `prefix` (a file's first bytes) is UTF-16 text, which no export
/// memport reads is in; `None` otherwise.
pub fn utf16_problem(prefix: &[u8]) -> Option<&'static str> {
    utf16_encoding(prefix).map(|_| UTF16_ADVICE)
}

/// What `path` is when it is neither a regular file nor a folder (`"a character device"`,
/// `"a named pipe (FIFO)"`, …); `None` for a file, a folder, or a path that cannot be looked at
/// (opening it then says why).
pub fn special_file_kind(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    // Follows symbolic links: a link to an export is read like the export.
    let file_type = std::fs::metadata(path).ok()?.file_type();
    if file_type.is_file() || file_type.is_dir() {
        return None;
    }
    Some(if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_fifo() {
        "a named pipe (FIFO)"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "a special file"
    })
}

/// Which UTF-16 `head` (the first bytes of a file) is in: by its byte-order mark, or, without
/// one, by a NUL in one byte of most pairs, as text of ASCII characters has in UTF-16. `None`
/// for anything else, UTF-8 (with or without a byte-order mark) included.
pub fn utf16_encoding(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0xFF, 0xFE]) {
        return Some("UTF-16LE");
    }
    if head.starts_with(&[0xFE, 0xFF]) {
        return Some("UTF-16BE");
    }
    let sample = &head[..head.len().min(UTF16_SAMPLE)];
    let pairs = sample.len() / 2;
    // A character or so cannot be told from binary data.
    if pairs < 2 {
        return None;
    }
    let little = sample.chunks_exact(2).filter(|pair| pair[0] != 0 && pair[1] == 0).count();
    let big = sample.chunks_exact(2).filter(|pair| pair[0] == 0 && pair[1] != 0).count();
    // Three pairs in four: the JSON, CSV and HTML exports start with ASCII (a NUL in every
    // pair), and a few accented or non-Latin characters among it have none. Files of only NULs
    // (`/dev/zero`, a sparse file) have NULs in both bytes and are not taken for text.
    if little * 4 >= pairs * 3 {
        Some("UTF-16LE")
    } else if big * 4 >= pairs * 3 {
        Some("UTF-16BE")
    } else {
        None
    }
}

/// Whether the file at `path` holds nothing but whitespace (or nothing, or only a UTF-8
/// byte-order mark). It is read in blocks up to its first other byte, so a large file costs
/// one block.
///
/// # Errors
/// I/O errors opening or reading it.
pub fn is_blank(path: &Path) -> io::Result<bool> {
    let mut file = crate::remote::open_path(path)?;
    let mut block = vec![0u8; BLANK_BLOCK];
    let mut at_start = true;
    loop {
        let read = match file.read(&mut block) {
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if read == 0 {
            return Ok(true);
        }
        let mut bytes = &block[..read];
        if std::mem::take(&mut at_start) {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        if !bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(false);
        }
    }
}

/// The first `limit` bytes of the file at `path` (fewer when it is shorter).
///
/// # Errors
/// I/O errors opening or reading it.
pub fn head(path: &Path, limit: usize) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(limit);
    crate::remote::open_path(path)?.take(limit as u64).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Why the regular file at `path` holds no format memport reads before any format is looked
/// for: it is empty (or whitespace only), or it is UTF-16. A code and a message for people.
///
/// # Errors
/// I/O errors opening or reading it.
pub fn unreadable_text(path: &Path) -> io::Result<Option<(&'static str, &'static str)>> {
    if is_blank(path)? {
        return Ok(Some((EMPTY_FILE_CODE, EMPTY_FILE)));
    }
    if utf16_encoding(&head(path, UTF16_SAMPLE)?).is_some() {
        return Ok(Some((UTF16_CODE, UTF16_ADVICE)));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16le(text: &str) -> Vec<u8> {
        text.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    fn utf16be(text: &str) -> Vec<u8> {
        text.encode_utf16().flat_map(u16::to_be_bytes).collect()
    }

    fn with_mark(mark: [u8; 2], text: Vec<u8>) -> Vec<u8> {
        let mut bytes = mark.to_vec();
        bytes.extend(text);
        bytes
    }

    /// Guards the UTF-16 check: with or without a byte-order mark, in either byte order, and
    /// never for UTF-8, binary zeros or a zip.
    #[test]
    fn utf16_is_told_by_its_mark_or_its_nuls() {
        let csv = "Conversation,Time,Author,Message\r\n";
        assert_eq!(utf16_encoding(&with_mark([0xFF, 0xFE], utf16le(csv))), Some("UTF-16LE"));
        assert_eq!(utf16_encoding(&with_mark([0xFE, 0xFF], utf16be(csv))), Some("UTF-16BE"));
        assert_eq!(utf16_encoding(&utf16le("[{\"title\": \"Straße\"}]")), Some("UTF-16LE"));
        assert_eq!(utf16_encoding(&utf16be("[{\"mapping\": {}}]")), Some("UTF-16BE"));
        assert_eq!(utf16_encoding(b"\xEF\xBB\xBF[{\"mapping\": {}}]"), None);
        assert_eq!(utf16_encoding("Straße, Köln, 東京".as_bytes()), None);
        assert_eq!(utf16_encoding(&[0; 64]), None);
        assert_eq!(utf16_encoding(b"PK\x03\x04\x14\x00\x00\x00\x08\x00"), None);
        assert_eq!(utf16_encoding(b"[\x00"), None);
    }

    /// Guards `validate` on empty files: nothing, whitespace or a lone byte-order mark is no
    /// format, but a file with one character is looked at.
    #[test]
    fn blank_files_are_told_from_files_with_content() {
        let folder = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let path = folder.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let blanks: [&[u8]; 3] = [b"", b"  \r\n\t ", b"\xEF\xBB\xBF\n"];
        for blank in blanks {
            let path = write("blank.json", blank);
            assert!(is_blank(&path).unwrap(), "{blank:?}");
            assert_eq!(unreadable_text(&path).unwrap(), Some((EMPTY_FILE_CODE, EMPTY_FILE)));
        }
        let mut long_blank = vec![b' '; 3 * BLANK_BLOCK];
        long_blank.push(b'[');
        assert!(!is_blank(&write("late.json", &long_blank)).unwrap());
        assert_eq!(unreadable_text(&write("one.json", b"{}")).unwrap(), None);
        let utf16 = with_mark([0xFF, 0xFE], utf16le("[{\"mapping\": {}}]"));
        assert_eq!(unreadable_text(&write("utf16.json", &utf16)).unwrap(), Some((UTF16_CODE, UTF16_ADVICE)));
    }

    /// Guards the check that keeps `convert` and `validate` from reading `/dev/zero` forever or
    /// blocking on a named pipe.
    #[test]
    fn devices_and_pipes_are_special_files_and_files_and_folders_are_not() {
        assert_eq!(special_file_kind(Path::new("/dev/null")), Some("a character device"));
        let folder = tempfile::tempdir().unwrap();
        assert_eq!(special_file_kind(folder.path()), None);
        let file = folder.path().join("conversations.json");
        std::fs::write(&file, b"[]").unwrap();
        assert_eq!(special_file_kind(&file), None);
        assert_eq!(special_file_kind(&folder.path().join("missing.json")), None);
        let fifo = folder.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|status| status.success());
        if made {
            assert_eq!(special_file_kind(&fifo), Some("a named pipe (FIFO)"));
        }
    }

    /// Guards the up-front refusal of inputs that are not files or folders.
    #[test]
    fn devices_are_refused_before_they_are_read() {
        let error = check_regular_input(Path::new("/dev/zero")).err().map(|error| error.to_string()).unwrap_or_default();
        assert_eq!(error, "input /dev/zero: is a character device, not a regular file or folder; memport reads exports from files");
        assert!(check_regular_input(Path::new(".")).is_ok());
        assert!(check_regular_input(Path::new("no such input")).is_ok(), "a missing path is reported where it is opened");
    }
}
