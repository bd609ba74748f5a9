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
}
