//! The one place that tells which of memport's own formats a path holds, by content: a PAM
//! store folder, a folder of `.ump.md` records, or a file whose members name PAM, AIME, MIF,
//! UMP or AIMEM. Readers plan inputs with it and `validate` picks its checks with it.
//!
//! Provider exports (ChatGPT, Claude, …) are told apart by `sources::detect`, which frames the
//! first element to look at it; this module needs no framing.

use std::io::Read;
use std::path::Path;

use super::{aime, aimem, mif, pam, ump};

/// How much of a file is looked at for its members (enough to hold any format's markers).
pub const HEAD_BYTES: u64 = 1 << 20;

/// The memory formats a file can hold, told apart by content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryFormat {
    /// A PAM memory-store, conversation or embeddings file.
    Pam,
    /// An AIME document.
    Aime,
    /// A MIF document.
    Mif,
    /// UMP records.
    Ump,
    /// An AIMEM bundle or stream.
    Aimem,
}

/// What a path holds in memport's own formats, as `validate` checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    /// A folder that is (or is meant to be) a PAM store.
    PamStoreFolder,
    /// A folder of `.ump.md` records.
    UmpRecordFolder,
    /// A file of this format.
    File(MemoryFormat),
}

/// The first MiB of the file at `path` (empty when it cannot be read): enough to tell the
/// formats apart by their members.
pub fn file_head(path: &Path) -> Vec<u8> {
    let mut head = Vec::new();
    if let Ok(file) = crate::remote::open_path(path) {
        let _ = file.take(HEAD_BYTES).read_to_end(&mut head);
    }
    head
}

/// What `validate` should check `path` as: a folder is a PAM store unless it holds `.ump.md`
/// records and no store file; a file is read in blocks until a member names its format, and is
/// taken for AIMEM when none does.
///
/// # Errors
/// I/O errors reading the file.
pub fn detect_for_validation(path: &Path) -> std::io::Result<Detected> {
    if path.is_dir() {
        let is_pam = path.join(pam::STORE_FILE).exists();
        return Ok(if !is_pam && ump::is_record_folder(path) { Detected::UmpRecordFolder } else { Detected::PamStoreFolder });
    }
    sniff_blocks(path).map(Detected::File)
}

/// Which memory format the file at `path` holds, when its members name one (AIMEM only when
/// its own members are there: a file that names none is not taken for one).
pub fn memory_format_kind(path: &Path) -> Option<MemoryFormat> {
    match sniff_blocks(path).ok()? {
        MemoryFormat::Aimem => aimem::looks_like_aimem(&file_head(path)).then_some(MemoryFormat::Aimem),
        other => Some(other),
    }
}

/// Whether a file's first MiB names PAM, AIME, MIF or UMP by their own members (AIMEM's
/// markers are plain member names that exports can hold too, so it is not among them).
pub fn names_a_memory_format(head: &[u8]) -> bool {
    pam::looks_like_pam(head) || aime::looks_like_aime(head) || mif::looks_like_mif(head) || ump::looks_like_ump(head)
}

/// Whether a file's first bytes are a memport store's (`--to store`): an SQLite database whose
/// first pages hold the store's format mark (`crate::store::schema::STORE_FORMAT`).
pub fn is_memport_store(head: &[u8]) -> bool {
    head.starts_with(b"SQLite format 3\0") && memchr::memmem::find(head, b"memport-store").is_some()
}

/// Which memory format `path` holds, for people (`a MIF document`), when it is one memport
/// writes: a PAM store folder or a file whose members name PAM, AIME, MIF, UMP or AIMEM.
pub fn memory_format_of(path: &Path) -> Option<&'static str> {
    if path.is_dir() {
        if path.join(pam::STORE_FILE).is_file() {
            return Some("a PAM store");
        }
        return ump::is_record_folder(path).then_some("a folder of UMP records");
    }
    let head = file_head(path);
    if is_memport_store(&head) {
        Some("a memport store")
    } else if pam::looks_like_pam(&head) {
        Some("a PAM file")
    } else if aime::looks_like_aime(&head) {
        Some("an AIME document")
    } else if mif::looks_like_mif(&head) {
        Some("a MIF document")
    } else if ump::looks_like_ump(&head) {
        Some("a UMP file")
    } else if aimem::looks_like_aimem(&head) {
        Some("an AIMEM file")
    } else {
        None
    }
}

/// Reads the file in blocks until a member that names its format appears. Members may come in
/// any order (a serializer that sorts keys puts `memories` before `mif_version`), so this reads
/// on past the start when it must; AIMEM's own members stop it early.
fn sniff_blocks(path: &Path) -> std::io::Result<MemoryFormat> {
    const BLOCK: usize = 1 << 20;
    // Long enough to hold any marker cut at a block boundary.
    const OVERLAP: usize = 64;
    let mut file = crate::remote::open_path(path)?;
    let mut window: Vec<u8> = Vec::with_capacity(BLOCK + OVERLAP);
    loop {
        let kept = window.len().min(OVERLAP);
        window.drain(..window.len() - kept);
        let read = (&mut file).take(BLOCK as u64).read_to_end(&mut window)?;
        // An empty array or an empty file names no format; UMP's is the only binding where
        // either is a valid set of records (a JSON array, NDJSON).
        let content = || window.iter().filter(|byte| !byte.is_ascii_whitespace());
        if read == window.len() && (content().eq(b"[]".iter()) || content().next().is_none()) {
            return Ok(MemoryFormat::Ump);
        }
        if pam::looks_like_pam(&window) {
            return Ok(MemoryFormat::Pam);
        }
        if aime::looks_like_aime(&window) {
            return Ok(MemoryFormat::Aime);
        }
        if mif::looks_like_mif(&window) {
            return Ok(MemoryFormat::Mif);
        }
        if ump::looks_like_ump(&window) {
            return Ok(MemoryFormat::Ump);
        }
        if read == 0 || aimem::looks_like_aimem(&window) {
            return Ok(MemoryFormat::Aimem);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(file.path(), bytes).expect("written");
        file
    }

    #[test]
    fn a_marker_past_the_first_block_is_found() {
        let mut bytes = br#"{"memories":[{"text":""#.to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 3 << 20));
        bytes.extend_from_slice(br#""}],"mif_version":"2.0"}"#);
        let file = file_with(&bytes);
        assert_eq!(memory_format_kind(file.path()), Some(MemoryFormat::Mif));
        assert_eq!(memory_format_of(file.path()), None, "people are told only what the head names");
    }

    #[test]
    fn an_empty_file_or_array_is_ump_and_a_nameless_object_is_nothing() {
        assert_eq!(memory_format_kind(file_with(b" [ ] ").path()), Some(MemoryFormat::Ump));
        assert_eq!(memory_format_kind(file_with(b"").path()), Some(MemoryFormat::Ump));
        assert_eq!(memory_format_kind(file_with(br#"{"a":1}"#).path()), None);
        assert_eq!(detect_for_validation(file_with(br#"{"a":1}"#).path()).ok(), Some(Detected::File(MemoryFormat::Aimem)));
    }
}
