//! `memport validate`: checks files against their format's consumer rules and lists every
//! problem with its class and location.

pub mod aime;
pub mod aimem;
pub mod mif;
pub mod pam;
pub mod rules;
pub mod ump;

use std::path::Path;

use serde::Serialize;

use crate::error::RunError;
use crate::spec::detect::{Detected, MemoryFormat, detect_for_validation};

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
/// # Errors
/// I/O errors reading it. A file that is not JSON at all is a 422 problem, not an error.
pub fn validate_path(path: &Path) -> Result<Validation, RunError> {
    let detected = detect_for_validation(path).map_err(|error| RunError::read(path.display().to_string(), error))?;
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
