//! The rejects file: one NDJSON line per record that could not be used, saying where and why.
//! Written to a temporary file beside it and renamed into place only when the run succeeded,
//! so a failed run leaves an earlier rejects file as it was, never a truncated one.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tempfile::TempPath;

use crate::error::RunError;
use crate::sinks::output_file;
use crate::sources::RecordReject;

/// Longest reason written, in bytes. A parser's message can quote the whole value it choked
/// on: a 16 MB string element made a 16 MB rejects line.
pub const MAX_REASON_BYTES: usize = 2048;

/// `reason`, cut at a character boundary to at most [`MAX_REASON_BYTES`] (and `…` added).
fn shortened(reason: &str) -> std::borrow::Cow<'_, str> {
    if reason.len() <= MAX_REASON_BYTES {
        return reason.into();
    }
    let mut end = MAX_REASON_BYTES;
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &reason[..end], reason.len()).into()
}

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
    reason: std::borrow::Cow<'a, str>,
}

/// Writes reject lines when a rejects file was asked for, and counts them either way.
pub struct RejectsWriter {
    path: Option<PathBuf>,
    writer: Option<BufWriter<File>>,
    /// The temporary file, when [`RejectsWriter::finish`] renames it into place itself; removed
    /// if the writer is dropped unfinished.
    temporary: Option<TempPath>,
    /// Lines written (or that would have been).
    pub count: u64,
}

impl RejectsWriter {
    /// Starts the rejects file `path` (under a temporary name, renamed onto `path` by
    /// [`RejectsWriter::finish`]), or counts only when `None`.
    ///
    /// # Errors
    /// I/O errors creating the temporary file.
    pub fn create(path: Option<&Path>) -> Result<Self, RunError> {
        let Some(path) = path else {
            return Ok(RejectsWriter { path: None, writer: None, temporary: None, count: 0 });
        };
        let (mut writer, temporary) = RejectsWriter::create_staged(path)?;
        writer.temporary = Some(temporary);
        Ok(writer)
    }

    /// Starts the rejects file `path` under a temporary name beside it and returns that name
    /// too: the caller renames it onto `path` ([`TempPath::persist`]) when it chooses (a run
    /// does after its outputs are published), or drops it to remove the file.
    ///
    /// # Errors
    /// I/O errors creating the temporary file.
    pub fn create_staged(path: &Path) -> Result<(RejectsWriter, TempPath), RunError> {
        let write_error = |error: std::io::Error| RunError::write(path.display().to_string(), error);
        let temporary = output_file::create_partial(path).map_err(write_error)?;
        // Temporary files are private (0600); the rejects file is an ordinary one.
        temporary.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(write_error)?;
        let (file, temporary) = temporary.into_parts();
        let writer = RejectsWriter { path: Some(path.to_owned()), writer: Some(BufWriter::new(file)), temporary: None, count: 0 };
        Ok((writer, temporary))
    }

    /// Records one reject (its reason cut to [`MAX_REASON_BYTES`]).
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
            reason: shortened(&reject.reason),
        };
        let path = self.path.as_ref().map(|path| path.display().to_string()).unwrap_or_default();
        serde_json::to_writer(&mut *writer, &line).map_err(|error| RunError::write(&path, error.into()))?;
        writer.write_all(b"\n").map_err(|error| RunError::write(&path, error))
    }

    /// Flushes the file, and renames it into place unless it was started with
    /// [`RejectsWriter::create_staged`].
    ///
    /// # Errors
    /// I/O errors.
    pub fn finish(mut self) -> Result<(), RunError> {
        let Some(path) = self.path.take() else { return Ok(()) };
        let write_error = |error: std::io::Error| RunError::write(path.display().to_string(), error);
        if let Some(writer) = self.writer.take() {
            // `into_inner` flushes what is buffered, so a write error (a full disk) surfaces
            // here, before the file can be renamed into place.
            writer.into_inner().map_err(|error| write_error(error.into_error()))?;
        }
        if let Some(temporary) = self.temporary.take() {
            temporary.persist(&path).map_err(|error| write_error(error.error))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::output_file::tests::names_in;

    fn reject() -> RecordReject {
        RecordReject {
            file: "conversations.json".into(),
            offset: 7,
            index: 1,
            conversation_id: None,
            message_id: None,
            reason: "bad".into(),
        }
    }

    #[test]
    fn the_rejects_file_appears_whole_at_finish_and_an_old_one_stays_until_then() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("rejects.ndjson");
        std::fs::write(&path, b"an earlier run's\n").unwrap();
        let mut writer = RejectsWriter::create(Some(&path)).unwrap();
        writer.write(RejectLevel::Conversation, &reject()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"an earlier run's\n", "not truncated while the run goes on");
        writer.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\"level\":\"conversation\"") && text.ends_with('\n') && text.lines().count() == 1, "{text}");
        assert_eq!(names_in(folder.path()), ["rejects.ndjson"]);
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o644);
    }

    #[test]
    fn an_unfinished_rejects_file_leaves_nothing() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("rejects.ndjson");
        let mut writer = RejectsWriter::create(Some(&path)).unwrap();
        writer.write(RejectLevel::Message, &reject()).unwrap();
        drop(writer);
        assert!(names_in(folder.path()).is_empty());
        let (mut writer, temporary) = RejectsWriter::create_staged(&path).unwrap();
        writer.write(RejectLevel::Input, &reject()).unwrap();
        writer.finish().unwrap();
        assert!(!path.exists(), "a staged rejects file waits for its caller");
        temporary.persist(&path).unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("\"level\":\"input\""));
    }

    /// Guards the rejects file's size: a parser message quoting a 16 MB value made one line
    /// of 16 MB.
    #[test]
    fn a_long_reason_is_cut_at_a_character_boundary() {
        let reason = "é".repeat(MAX_REASON_BYTES);
        let short = shortened(&reason);
        assert!(short.len() < MAX_REASON_BYTES + 40, "{}", short.len());
        assert!(short.ends_with(&format!("… ({} bytes in all)", reason.len())));
        assert_eq!(shortened("short"), "short");
    }
}
