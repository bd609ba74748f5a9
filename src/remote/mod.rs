//! Object storage: `s3://` inputs and outputs through the `object_store` crate (ranged reads,
//! multipart uploads published at the end, credentials the way the AWS tools find them,
//! retries with backoff), the `file://` spelling of a local path, and a client of AIMEM's HTTP
//! profile ([`brain_http`], for `memport push` and `pull`).
//!
//! This layer knows buckets and objects only; what a run does with them is in
//! [`crate::outputs::upload`] (a conversion's outputs), [`crate::outputs::sync_upload`]
//! (a sync's run folders) and [`crate::sources::container`] (reading an export).

pub mod aws_files;
pub mod brain_http;
pub mod client;
pub mod error;
pub mod objects;
pub mod ranged_reader;
pub mod upload;
pub mod url;

pub use error::RemoteError;
pub use url::{ObjectUrl, is_remote, local_form};

/// The file at `path`, or the object it names (read by range), for the code that only reads.
///
/// # Errors
/// I/O errors opening it; an object-storage error says which URL and what to do.
pub fn open_path(path: &std::path::Path) -> std::io::Result<Box<dyn std::io::Read + Send>> {
    match ObjectUrl::of(path) {
        Some(url) => Ok(Box::new(ranged_reader::RangedReader::open(&url)?)),
        None => Ok(Box::new(std::fs::File::open(path)?)),
    }
}

/// A file or an object, read from any position.
pub trait ReadSeek: std::io::Read + std::io::Seek + Send {}
impl<T: std::io::Read + std::io::Seek + Send> ReadSeek for T {}

/// [`open_path`], for readers that seek: the file buffered, or the object read by range.
///
/// # Errors
/// As [`open_path`].
pub fn open_seekable_path(path: &std::path::Path) -> std::io::Result<Box<dyn ReadSeek>> {
    match ObjectUrl::of(path) {
        Some(url) => Ok(Box::new(ranged_reader::RangedReader::open(&url)?)),
        None => Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(path)?))),
    }
}

/// The whole file at `path`, or the whole object it names (for files read whole anyway).
///
/// # Errors
/// As [`open_path`].
pub fn read_path(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open_path(path)?, &mut bytes)?;
    Ok(bytes)
}
