//! `memport validate`: checks files against their format's consumer rules and lists every
//! problem with its class and location.

pub mod aime;
pub mod aimem;
pub mod input_file;
pub mod mif;
pub mod object_stream;
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

/// Problems kept in full; past this many a file's problems are only counted, so a file with a
/// problem in each of millions of records is checked in bounded memory (`memport validate`, and
/// a server checking an upload). The first ones say what is wrong.
pub const KEPT_PROBLEMS: usize = 1000;

/// The code of the entry that stands for problems only counted, when every problem listed was
/// taken out ([`Problems::remove_code`]); it is not itself counted.
pub const UNLISTED_CODE: &str = "unlisted_problems";

/// The problems of one validation: the first [`KEPT_PROBLEMS`] in full, and how many in all.
/// Reads as the slice of those kept; serializes as that list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problems {
    kept: Vec<Problem>,
    /// How many of each code, kept or not (a few dozen codes at most); their sum is the total.
    by_code: std::collections::BTreeMap<&'static str, u64>,
}

impl Problems {
    /// No problems.
    pub fn new() -> Self {
        Problems::default()
    }

    /// Adds a problem: kept while fewer than [`KEPT_PROBLEMS`] are, counted always.
    pub fn push(&mut self, problem: Problem) {
        *self.by_code.entry(problem.code).or_insert(0) += 1;
        if self.kept.len() < KEPT_PROBLEMS {
            self.kept.push(problem);
        }
    }

    /// Adds every problem of `other`, counted as it counted them.
    pub fn append(&mut self, other: Problems) {
        let room = KEPT_PROBLEMS.saturating_sub(self.kept.len());
        self.kept.extend(other.kept.into_iter().take(room));
        for (code, count) in other.by_code {
            *self.by_code.entry(code).or_insert(0) += count;
        }
    }

    /// How many problems were found, kept or not.
    pub fn total(&self) -> u64 {
        self.by_code.values().sum()
    }

    /// Sorts the problems kept, stably (for a list that never passes the cap: an envelope's).
    pub fn sort_by_key<K: Ord>(&mut self, key: impl FnMut(&Problem) -> K) {
        self.kept.sort_by_key(key);
    }

    /// Whether none was found.
    pub fn is_empty(&self) -> bool {
        self.by_code.is_empty()
    }

    /// Takes out every problem of `code`, kept or not; returns how many there were.
    pub fn remove_code(&mut self, code: &str) -> u64 {
        let removed = self.by_code.remove(code).unwrap_or(0);
        self.kept.retain(|problem| problem.code != code);
        let left = self.total();
        if self.kept.is_empty() && left > 0 {
            // Every problem kept was of that code: the others were only counted.
            self.kept.push(Problem {
                status: 422,
                code: UNLISTED_CODE,
                location: String::new(),
                message: format!("{left} problems past the first {KEPT_PROBLEMS} were counted, not listed"),
            });
        }
        removed
    }
}

impl std::ops::Deref for Problems {
    type Target = [Problem];

    fn deref(&self) -> &[Problem] {
        &self.kept
    }
}

impl Serialize for Problems {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.kept.serialize(serializer)
    }
}

impl FromIterator<Problem> for Problems {
    fn from_iter<I: IntoIterator<Item = Problem>>(problems: I) -> Self {
        let mut all = Problems::new();
        for problem in problems {
            all.push(problem);
        }
        all
    }
}

impl Extend<Problem> for Problems {
    fn extend<I: IntoIterator<Item = Problem>>(&mut self, problems: I) {
        for problem in problems {
            self.push(problem);
        }
    }
}

impl From<Vec<Problem>> for Problems {
    fn from(problems: Vec<Problem>) -> Self {
        problems.into_iter().collect()
    }
}

impl IntoIterator for Problems {
    type Item = Problem;
    type IntoIter = std::vec::IntoIter<Problem>;

    fn into_iter(self) -> Self::IntoIter {
        self.kept.into_iter()
    }
}

impl<'a> IntoIterator for &'a Problems {
    type Item = &'a Problem;
    type IntoIter = std::slice::Iter<'a, Problem>;

    fn into_iter(self) -> Self::IntoIter {
        self.kept.iter()
    }
}

/// The result of validating one file. As JSON it also says `problem_count`: all the problems,
/// listed or only counted.
#[derive(Debug, Clone)]
pub struct Validation {
    /// The file.
    pub path: String,
    /// Detected format.
    pub format: &'static str,
    /// Records checked.
    pub records: u64,
    /// Problems in the order a consumer checks them; the first decides the class.
    pub problems: Problems,
    /// Things a consumer may accept but should know (legacy format value, …).
    pub notices: Vec<String>,
}

impl Serialize for Validation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut fields = serializer.serialize_struct("Validation", 6)?;
        fields.serialize_field("path", &self.path)?;
        fields.serialize_field("format", self.format)?;
        fields.serialize_field("records", &self.records)?;
        fields.serialize_field("problems", &self.problems)?;
        fields.serialize_field("problem_count", &self.problem_count())?;
        fields.serialize_field("notices", &self.notices)?;
        fields.end()
    }
}

impl Validation {
    /// Whether the file passed.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }

    /// How many problems the file has, listed or only counted.
    pub fn problem_count(&self) -> u64 {
        self.problems.total()
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
    let in_database = crate::store::is_postgres_url(&display);
    if in_database || (!path.is_dir() && crate::spec::detect::file_head(path).starts_with(store::SQLITE_HEADER)) {
        return store::validate_file(path);
    }
    if !path.is_dir()
        && let Some((code, message)) = input_file::unreadable_text(path).map_err(|error| RunError::read(&display, error))?
        // An empty NDJSON stream has no content to tell it by: only its name says it is one.
        && !(code == input_file::EMPTY_FILE_CODE && path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("ndjson")))
    {
        let name = path.file_name().map_or_else(|| display.clone(), |name| name.to_string_lossy().into_owned());
        let problem = Problem { status: 422, code, location: name, message: message.to_owned() };
        return Ok(Validation {
            path: display,
            format: UNKNOWN_FORMAT,
            records: 0,
            problems: Problems::from(vec![problem]),
            notices: Vec::new(),
        });
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

    #[test]
    fn problems_past_the_cap_are_counted_not_kept_and_a_code_taken_out_is_taken_out_whole() {
        let problem = |code: &'static str| Problem { status: 422, code, location: "x".into(), message: "m".into() };
        let mut problems = Problems::new();
        for _ in 0..KEPT_PROBLEMS + 500 {
            problems.push(problem("urn_producer_mismatch"));
        }
        problems.push(problem("empty_content"));
        assert_eq!((problems.len(), problems.total()), (KEPT_PROBLEMS, KEPT_PROBLEMS as u64 + 501));
        assert_eq!(problems.remove_code("urn_producer_mismatch"), KEPT_PROBLEMS as u64 + 500);
        assert_eq!(problems.total(), 1, "the one other problem is still counted");
        assert!(!problems.is_empty());
        assert_eq!(problems[0].code, UNLISTED_CODE, "and said, though only counted: {problems:?}");
        let mut only_foreign = Problems::new();
        only_foreign.push(problem("urn_producer_mismatch"));
        only_foreign.remove_code("urn_producer_mismatch");
        assert!(only_foreign.is_empty() && only_foreign.iter().next().is_none());
    }

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
