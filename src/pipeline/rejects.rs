//! The rejects file: one NDJSON line per record that could not be used, saying where and why.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::RunError;
use crate::sources::RecordReject;

/// What a reject line refers to.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectLevel {
    /// A whole conversation element.
    Conversation,
    /// One message of a conversation that was otherwise read.
    Message,
    /// The input file itself (truncated, not an array); what came before was kept.
    Input,
}

#[derive(Serialize)]
struct RejectLine<'a> {
    level: RejectLevel,
    file: &'a str,
    offset: u64,
    index: u64,
    conversation_id: Option<&'a str>,
    message_id: Option<&'a str>,
    reason: &'a str,
}

/// Writes reject lines when a rejects file was asked for, and counts them either way.
pub struct RejectsWriter {
    path: Option<PathBuf>,
    writer: Option<BufWriter<File>>,
    /// Lines written (or that would have been).
    pub count: u64,
}

impl RejectsWriter {
    /// Opens `path` for writing, or counts only when `None`.
    ///
    /// # Errors
    /// I/O errors creating the file.
    pub fn create(path: Option<&Path>) -> Result<Self, RunError> {
        let writer = match path {
            Some(path) => Some(BufWriter::new(File::create(path).map_err(|error| RunError::write(path.display().to_string(), error))?)),
            None => None,
        };
        Ok(RejectsWriter { path: path.map(Path::to_owned), writer, count: 0 })
    }

    /// Records one reject.
    ///
    /// # Errors
    /// I/O errors writing the line.
    pub fn write(&mut self, level: RejectLevel, reject: &RecordReject) -> Result<(), RunError> {
        self.count += 1;
        let Some(writer) = self.writer.as_mut() else { return Ok(()) };
        let line = RejectLine {
            level,
            file: &reject.file,
            offset: reject.offset,
            index: reject.index,
            conversation_id: reject.conversation_id.as_deref(),
            message_id: reject.message_id.as_deref(),
            reason: &reject.reason,
        };
        let path = self.path.as_ref().map(|path| path.display().to_string()).unwrap_or_default();
        serde_json::to_writer(&mut *writer, &line).map_err(|error| RunError::write(&path, error.into()))?;
        writer.write_all(b"\n").map_err(|error| RunError::write(&path, error))
    }

    /// Flushes the file.
    ///
    /// # Errors
    /// I/O errors.
    pub fn finish(mut self) -> Result<(), RunError> {
        if let Some(writer) = self.writer.as_mut() {
            let path = self.path.as_ref().map(|path| path.display().to_string()).unwrap_or_default();
            writer.flush().map_err(|error| RunError::write(path, error))?;
        }
        Ok(())
    }
}
