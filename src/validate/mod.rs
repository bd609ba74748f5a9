//! `memport validate`: checks files against their format's consumer rules and lists every
//! problem with its class and location.

pub mod aime;
pub mod aimem;
pub mod input_file;
pub mod mif;
pub mod pam;
pub mod rules;
pub mod store;
pub mod ump;

use std::path::Path;

use serde::Serialize;

use crate::error::{ConfigError, RunError};
use crate::spec::detect::{Detected, MemoryFormat, detect_for_validation};

/// The format of a file that holds none memport knows, whatever its content might be (an
/// empty or UTF-16 file).
pub const UNKNOWN_FORMAT: &str = "unknown";

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

/// Validates one file or PAM store folder, detecting its format by content
/// ([`crate::spec::detect::detect_for_validation`]): a folder is a PAM store (or, without
/// `memory-store.json`, a folder of `.ump.md` records); a file is PAM when it names a PAM
/// schema, AIME when its `format` is `aime`, MIF when it has a `mif_version`, UMP when it has a
/// `ump` version, and AIMEM otherwise (also when its own members come first).
///
/// An empty (or whitespace-only) file and a UTF-16 file are invalid before any format is
/// looked for: a file of no records would otherwise pass as a valid UMP stream. The one empty
/// file that is valid is one named `*.ndjson`: memport's UMP NDJSON output of a run with
/// nothing to write, a stream of no records.
///
/// # Errors
/// [`ConfigError::Input`] for a path that is neither a regular file nor a folder (a device, a
/// named pipe, a socket: read, it would never end or block); I/O errors reading it. A file that
/// is not JSON at all is a 422 problem, not an error.
pub fn validate_path(path: &Path) -> Result<Validation, RunError> {
    let display = path.display().to_string();
    if let Some(kind) = input_file::special_file_kind(path) {
        let reason = format!("is {kind}, not a regular file or folder; memport validates files and folders");
        return Err(ConfigError::Input { path: path.to_owned(), reason }.into());
    }
    if !path.is_dir() && crate::spec::detect::file_head(path).starts_with(store::SQLITE_HEADER) {
        return store::validate_file(path);
    }
    if !path.is_dir()
        && let Some((code, message)) = input_file::unreadable_text(path).map_err(|error| RunError::read(&display, error))?
        // An empty NDJSON stream has no content to tell it by: only its name says it is one.
        && !(code == input_file::EMPTY_FILE_CODE && path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("ndjson")))
    {
        let name = path.file_name().map_or_else(|| display.clone(), |name| name.to_string_lossy().into_owned());
        let problem = Problem { status: 422, code, location: name, message: message.to_owned() };
        return Ok(Validation { path: display, format: UNKNOWN_FORMAT, records: 0, problems: vec![problem], notices: Vec::new() });
    }
    let detected = detect_for_validation(path).map_err(|error| RunError::read(display, error))?;
    match detected {
        Detected::UmpRecordFolder => ump::validate_folder(path),
        Detected::PamStoreFolder => pam::validate_folder(path),
        Detected::File(MemoryFormat::Pam) => pam::validate_file(path),
        Detected::File(MemoryFormat::Aime) => aime::validate_file(path),
        Detected::File(MemoryFormat::Mif) => mif::validate_file(path),
        Detected::File(MemoryFormat::Ump) => ump::validate_file(path),
        Detected::File(MemoryFormat::Aimem) => aimem::validate_file(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards `validate` on files that hold no format: an empty file used to pass as a valid
    /// UMP stream of 0 records, and a UTF-16 one got a generic message.
    #[test]
    fn empty_and_utf16_files_are_invalid_with_a_message_that_says_why() {
        let folder = tempfile::tempdir().unwrap();
        for (name, bytes) in [("empty.json", &b""[..]), ("blank.ump.json", &b" \n\n"[..]), ("memory", &b"\xEF\xBB\xBF"[..])] {
            let path = folder.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let result = validate_path(&path).unwrap();
            assert!(!result.is_valid());
            assert_eq!(result.format, UNKNOWN_FORMAT);
            assert_eq!(result.problems[0].message, "empty file: not a memory format memport knows");
            assert_eq!(result.problems[0].location, name);
        }
        let path = folder.path().join("memory.ump.json");
        let utf16: Vec<u8> = "[{\"ump\": \"0.1\"}]".encode_utf16().flat_map(u16::to_le_bytes).collect();
        std::fs::write(&path, utf16).unwrap();
        let result = validate_path(&path).unwrap();
        assert_eq!((result.format, result.problems[0].code), (UNKNOWN_FORMAT, "utf16"));
        assert!(result.problems[0].message.contains("iconv -f UTF-16 -t UTF-8"));
        // memport's own UMP NDJSON output of a run with nothing to write stays valid.
        let path = folder.path().join("memory.ump.ndjson");
        std::fs::write(&path, b"").unwrap();
        let result = validate_path(&path).unwrap();
        assert!(result.is_valid(), "{:?}", result.problems);
        assert_eq!((result.format, result.records), ("ump", 0));
    }

    /// Guards `validate` on devices: `/dev/zero` was read forever.
    #[test]
    fn a_device_is_refused_before_it_is_read() {
        let error = validate_path(Path::new("/dev/zero")).err().map(|error| error.to_string()).unwrap_or_default();
        assert!(error.contains("a character device, not a regular file or folder"), "{error}");
    }
}
