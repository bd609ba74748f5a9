//! Evidence kept on disk while a history is consolidated: the same fact said a hundred thousand
//! times is one memory with a hundred thousand pieces of evidence, more than memory should hold.
//! Each piece is appended to a temporary file with the offset of the memory's previous piece, so
//! a memory holds only the offset of its last piece, and its evidence is read back, newest
//! first, by following the chain.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

use crate::model::Provider;
use crate::model::extracted::Evidence;

/// Marks the end of a chain: no earlier piece.
pub const NO_PIECE: u64 = u64::MAX;

/// Appends evidence and reads chains back.
pub struct EvidenceSpool {
    writer: BufWriter<File>,
    /// Bytes written so far: the offset of the next piece.
    written: u64,
}

impl EvidenceSpool {
    /// An empty spool in a new temporary file (removed when dropped).
    ///
    /// # Errors
    /// When no temporary file can be made.
    pub fn new() -> io::Result<Self> {
        Ok(EvidenceSpool { writer: BufWriter::with_capacity(1 << 16, tempfile::tempfile()?), written: 0 })
    }

    /// Appends `evidence` after the piece at `previous` and returns its own offset.
    ///
    /// # Errors
    /// When the temporary file cannot be written.
    pub fn append(&mut self, previous: u64, evidence: &Evidence) -> io::Result<u64> {
        let offset = self.written;
        let mut record = Vec::with_capacity(48 + evidence.conversation_id.len() + evidence.message_id.len() + evidence.text.len());
        record.extend_from_slice(&previous.to_le_bytes());
        record.extend_from_slice(&evidence.time.to_le_bytes());
        record.extend_from_slice(&(evidence.span.0 as u64).to_le_bytes());
        record.extend_from_slice(&(evidence.span.1 as u64).to_le_bytes());
        for text in [evidence.provider.as_str(), evidence.conversation_id.as_str(), evidence.message_id.as_str(), evidence.text.as_str()] {
            record.extend_from_slice(&(text.len() as u64).to_le_bytes());
            record.extend_from_slice(text.as_bytes());
        }
        let length = record.len() as u64;
        self.writer.write_all(&length.to_le_bytes())?;
        self.writer.write_all(&record)?;
        self.written += 8 + length;
        Ok(offset)
    }

    /// Makes everything appended readable.
    ///
    /// # Errors
    /// When the temporary file cannot be written.
    pub fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }

    /// The chain that ends at `last`, in the order it was appended. Call [`EvidenceSpool::flush`]
    /// after the last append first.
    ///
    /// # Errors
    /// When the temporary file cannot be read, or holds what this spool did not write.
    pub fn chain(&self, mut last: u64) -> io::Result<Vec<Evidence>> {
        let file = self.writer.get_ref();
        let mut pieces = Vec::new();
        while last != NO_PIECE {
            let mut length = [0u8; 8];
            file.read_exact_at(&mut length, last)?;
            let length = u64::from_le_bytes(length);
            if length > self.written {
                return Err(corrupt());
            }
            let mut record = vec![0u8; length as usize];
            file.read_exact_at(&mut record, last + 8)?;
            let (previous, evidence) = decode(&record).ok_or_else(corrupt)?;
            pieces.push(evidence);
            last = previous;
        }
        pieces.reverse();
        Ok(pieces)
    }
}

fn corrupt() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "the evidence spool was changed while memport was running")
}

/// Reads one record back.
fn decode(record: &[u8]) -> Option<(u64, Evidence)> {
    let mut reader = Reader { bytes: record, at: 0 };
    let previous = reader.u64()?;
    let time = reader.u64()? as i64;
    let span = (reader.u64()? as usize, reader.u64()? as usize);
    let provider = Provider::named(&reader.text()?);
    let conversation_id = reader.text()?;
    let message_id = reader.text()?;
    let text = reader.text()?;
    Some((previous, Evidence { provider, conversation_id, message_id, span, text, time }))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, length: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(length)?;
        let slice = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(slice)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn text(&mut self) -> Option<String> {
        let length = usize::try_from(self.u64()?).ok()?;
        String::from_utf8(self.take(length)?.to_vec()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(message: &str) -> Evidence {
        Evidence {
            provider: Provider::Claude,
            conversation_id: "c1".into(),
            message_id: message.into(),
            span: (3, 17),
            text: format!("I live in Leeds ({message})"),
            time: 1_700_000_000_000_000,
        }
    }

    #[test]
    fn chains_come_back_in_the_order_appended() {
        let mut spool = EvidenceSpool::new().expect("temp file");
        let a1 = spool.append(NO_PIECE, &piece("a1")).expect("append");
        let b1 = spool.append(NO_PIECE, &piece("b1")).expect("append");
        let a2 = spool.append(a1, &piece("a2")).expect("append");
        let a3 = spool.append(a2, &piece("a3")).expect("append");
        spool.flush().expect("flush");
        let chain_a: Vec<String> = spool.chain(a3).expect("chain").into_iter().map(|evidence| evidence.message_id).collect();
        assert_eq!(chain_a, ["a1", "a2", "a3"]);
        assert_eq!(spool.chain(b1).expect("chain"), vec![piece("b1")]);
        assert!(spool.chain(NO_PIECE).expect("empty chain").is_empty());
    }
}
