//! `memport validate`: checks files against their format's consumer rules and lists every
//! problem with its class and location.

pub mod aime;
pub mod aimem;
pub mod mif;
pub mod pam;
pub mod rules;
pub mod ump;

use std::io::Read;
use std::path::Path;

use serde::Serialize;

use crate::error::RunError;

/// One problem found in a file.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Problem {
    /// HTTP-style class: 409 checksum mismatch, 422 malformed.
    pub status: u16,
    /// Short machine-readable code (`hash_mismatch`, `invalid_urn`, …).
    pub code: &'static str,
    /// Where: a JSON pointer, with the NDJSON line number when there is one.
    pub location: String,
    /// What is wrong, for people.
    pub message: String,
}

/// The result of validating one file.
#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    /// The file.
    pub path: String,
    /// Detected format.
    pub format: &'static str,
    /// Records checked.
    pub records: u64,
    /// Problems in the order a consumer checks them; the first decides the class.
    pub problems: Vec<Problem>,
    /// Things a consumer may accept but should know (legacy format value, …).
    pub notices: Vec<String>,
}

impl Validation {
    /// Whether the file passed.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }

    /// The class a consumer answers with: 200, or the first problem's status.
    pub fn status(&self) -> u16 {
        self.problems.first().map_or(200, |problem| problem.status)
    }
}

/// Validates one file or PAM store folder, detecting its format by content: a folder is a PAM
/// store (or, without `memory-store.json`, a folder of `.ump.md` records); a file is PAM when it
/// names a PAM schema, AIME when its `format` is `aime`, MIF when it has a `mif_version`, UMP
/// when it has a `ump` version, and AIMEM otherwise (also when its own members come first).
///
/// # Errors
/// I/O errors reading it. A file that is not JSON at all is a 422 problem, not an error.
pub fn validate_path(path: &Path) -> Result<Validation, RunError> {
    if path.is_dir() {
        let is_pam = path.join(crate::sinks::pam::STORE_FILE).exists();
        return if !is_pam && ump::is_record_folder(path) { ump::validate_folder(path) } else { pam::validate_folder(path) };
    }
    match sniff(path).map_err(|error| RunError::read(path.display().to_string(), error))? {
        Sniffed::Pam => pam::validate_file(path),
        Sniffed::Aime => aime::validate_file(path),
        Sniffed::Mif => mif::validate_file(path),
        Sniffed::Ump => ump::validate_file(path),
        Sniffed::Aimem => aimem::validate_file(path),
    }
}

/// Which memory format `path` holds, for people (`a MIF document`), when it is one memport
/// writes: a PAM store folder or a file whose members name PAM, AIME, MIF, UMP or AIMEM.
pub fn memory_format_of(path: &Path) -> Option<&'static str> {
    if path.is_dir() {
        if path.join(crate::sinks::pam::STORE_FILE).is_file() {
            return Some("a PAM store");
        }
        return ump::is_record_folder(path).then_some("a folder of UMP records");
    }
    let mut head = Vec::new();
    std::fs::File::open(path).ok()?.take(1 << 20).read_to_end(&mut head).ok()?;
    if pam::looks_like_pam(&head) {
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

use MemoryFormat as Sniffed;

/// Which memory format the file at `path` holds, when its members name one (AIMEM only when
/// its own members are there: a file that names none is not taken for one).
pub fn memory_format_kind(path: &Path) -> Option<MemoryFormat> {
    match sniff(path).ok()? {
        MemoryFormat::Aimem => {
            let mut head = Vec::new();
            std::fs::File::open(path).ok()?.take(1 << 20).read_to_end(&mut head).ok()?;
            aimem::looks_like_aimem(&head).then_some(MemoryFormat::Aimem)
        }
        other => Some(other),
    }
}

/// Reads the file in blocks until a member that names its format appears. Members may come in
/// any order (a serializer that sorts keys puts `memories` before `mif_version`), so this reads
/// on past the start when it must; AIMEM's own members stop it early.
fn sniff(path: &Path) -> std::io::Result<Sniffed> {
    const BLOCK: usize = 1 << 20;
    // Long enough to hold any marker cut at a block boundary.
    const OVERLAP: usize = 64;
    let mut file = std::fs::File::open(path)?;
    let mut window: Vec<u8> = Vec::with_capacity(BLOCK + OVERLAP);
    loop {
        let kept = window.len().min(OVERLAP);
        window.drain(..window.len() - kept);
        let read = (&mut file).take(BLOCK as u64).read_to_end(&mut window)?;
        // An empty array or an empty file names no format; UMP's is the only binding where
        // either is a valid set of records (a JSON array, NDJSON).
        let content = || window.iter().filter(|byte| !byte.is_ascii_whitespace());
        if read == window.len() && (content().eq(b"[]".iter()) || content().next().is_none()) {
            return Ok(Sniffed::Ump);
        }
        if pam::looks_like_pam(&window) {
            return Ok(Sniffed::Pam);
        }
        if aime::looks_like_aime(&window) {
            return Ok(Sniffed::Aime);
        }
        if mif::looks_like_mif(&window) {
            return Ok(Sniffed::Mif);
        }
        if ump::looks_like_ump(&window) {
            return Ok(Sniffed::Ump);
        }
        if read == 0 || aimem::looks_like_aimem(&window) {
            return Ok(Sniffed::Aimem);
        }
    }
}
