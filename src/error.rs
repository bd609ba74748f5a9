//! Typed errors: the ones that stop a run (config, I/O) and the ones that reject one record.

use std::path::PathBuf;

/// A problem with what the user asked for; nothing has been read or written yet.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// An input path does not exist or cannot be opened.
    #[error("input {path}: {reason}")]
    Input {
        /// The path as given.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// An input was read but no supported export was found in it.
    #[error("input {path}: {reason}")]
    NotAnExport {
        /// The path as given.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// An option has a value that cannot be used.
    #[error("option {option}: {reason}")]
    Option {
        /// The option, as spelled on the command line or in the pipeline file.
        option: String,
        /// What is wrong with the value and what would work.
        reason: String,
    },
    /// The options of a run do not fit together; each problem names its options.
    #[error("{}", problems.join("; "))]
    Options {
        /// Each problem, with what would work instead.
        problems: Vec<String>,
    },
    /// A pipeline file could not be parsed or checked.
    #[error("pipeline {path}: {reason}")]
    Pipeline {
        /// The pipeline file.
        path: PathBuf,
        /// Every problem found, one per line.
        reason: String,
    },
}

/// An error that stops a run: bad configuration, or an I/O failure reading inputs or writing outputs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The configuration could not be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Reading an input failed.
    #[error("reading {path}: {source}")]
    Read {
        /// The file or zip entry being read.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Writing an output failed.
    #[error("writing {path}: {source}")]
    Write {
        /// The output being written.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A zip archive could not be opened or an entry could not be read.
    #[error("zip {path}: {reason}")]
    Zip {
        /// The archive.
        path: String,
        /// What the zip reader said.
        reason: String,
    },
    /// Another run holds the lock of an output, report or rejects file of this run.
    #[error("another memport run is writing {target} (lock file {lock}); wait for it to finish")]
    Busy {
        /// The output, as given.
        target: String,
        /// The lock file the other run holds.
        lock: String,
    },
    /// Writing a temporary file failed: most often the temporary folder is full.
    #[error("writing a temporary file for {purpose} in {folder}: {source}; free space there, or set TMPDIR to a folder with room")]
    Temporary {
        /// What the temporary file holds, for example `regrouping`.
        purpose: String,
        /// The folder temporary files go in (`TMPDIR`, else `/tmp`).
        folder: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A sync's state file cannot be used (busy, not a state, newer, or failing to read or
    /// write); the message names the file and what to do.
    #[error("{0}")]
    State(String),
    /// A request to object storage (`s3://`) failed after its retries, or found what memport
    /// will not go on with (objects it did not write at an output's key).
    #[error("object storage {url}: {reason}")]
    ObjectStorage {
        /// The object or prefix.
        url: String,
        /// What went wrong and what to do.
        reason: String,
    },
    /// A worker thread ended without delivering its result (a bug, never bad input).
    #[error("internal: {0}")]
    Internal(String),
}

impl RunError {
    /// Wraps an I/O error that happened while writing `path`.
    pub fn write(path: impl Into<String>, source: std::io::Error) -> Self {
        RunError::Write { path: path.into(), source }
    }

    /// Wraps an I/O error that happened while reading `path`.
    pub fn read(path: impl Into<String>, source: std::io::Error) -> Self {
        RunError::Read { path: path.into(), source }
    }

    /// Wraps an I/O error that happened while writing a temporary file (made by
    /// `tempfile::tempfile()`, in `TMPDIR`) that holds `purpose`. The message names the
    /// temporary folder, never an input or output: a full `/tmp` must not read as a problem
    /// with the user's files.
    pub fn temporary(purpose: impl Into<String>, source: std::io::Error) -> Self {
        RunError::Temporary { purpose: purpose.into(), folder: std::env::temp_dir().display().to_string(), source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_file_error_names_the_temporary_folder_not_an_input() {
        let error = RunError::temporary("regrouping", std::io::Error::from_raw_os_error(libc::ENOSPC));
        let message = error.to_string();
        let folder = std::env::temp_dir().display().to_string();
        assert!(message.starts_with(&format!("writing a temporary file for regrouping in {folder}: ")), "{message}");
        assert!(message.contains("TMPDIR"), "{message}");
    }

    #[test]
    fn a_busy_output_says_who_holds_it_and_what_to_do() {
        let error = RunError::Busy { target: "out/brain.aimem.json".into(), lock: "out/.memport-brain.aimem.json.lock".into() };
        assert_eq!(
            error.to_string(),
            "another memport run is writing out/brain.aimem.json (lock file out/.memport-brain.aimem.json.lock); wait for it to finish"
        );
    }
}
