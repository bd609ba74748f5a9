//! `memport validate`: checks files against their format's consumer rules and lists every
//! problem with its class and location.

pub mod aime;
pub mod aimem;
pub mod pam;

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
/// store, a file naming a PAM schema near its start is PAM, one whose `format` is `aime` is
/// AIME, anything else is checked as AIMEM.
///
/// # Errors
/// I/O errors reading it. A file that is not JSON at all is a 422 problem, not an error.
pub fn validate_path(path: &Path) -> Result<Validation, RunError> {
    if path.is_dir() {
        return pam::validate_folder(path);
    }
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    let file = std::fs::File::open(path).map_err(|error| RunError::read(path.display().to_string(), error))?;
    file.take(SNIFF_BYTES as u64).read_to_end(&mut head).map_err(|error| RunError::read(path.display().to_string(), error))?;
    if pam::looks_like_pam(&head) {
        pam::validate_file(path)
    } else if aime::looks_like_aime(&head) {
        aime::validate_file(path)
    } else {
        aimem::validate_file(path)
    }
}

/// How much of a file is read to tell its format.
const SNIFF_BYTES: usize = 64 << 10;
