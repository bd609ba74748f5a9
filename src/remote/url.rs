//! Object-storage locations as the user writes them: `s3://bucket/key` (`s3a://` too), and
//! `file:///path`, which is only another spelling of a local path.
//!
//! memport keeps every input and output as a `Path`; an `s3://` location rides in one as its
//! text, so the code that only passes paths along needs no change, and the few places that
//! open or list a path ask [`ObjectUrl::of`] first.

use std::fmt;
use std::path::{Path, PathBuf};

/// An object (or a prefix of objects) in a bucket.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectUrl {
    /// The bucket's name.
    pub bucket: String,
    /// The key, without a leading or trailing `/`; empty for the bucket's root.
    pub key: String,
}

impl ObjectUrl {
    /// The object `path` names, when it is an `s3://` (or `s3a://`) URL.
    pub fn of(path: &Path) -> Option<ObjectUrl> {
        ObjectUrl::parse(path.to_str()?)
    }

    /// Parses `s3://bucket/key`; `None` for anything else (a local path).
    pub fn parse(text: &str) -> Option<ObjectUrl> {
        let rest = text.strip_prefix("s3://").or_else(|| text.strip_prefix("s3a://"))?;
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return None;
        }
        Some(ObjectUrl { bucket: bucket.to_owned(), key: key.trim_matches('/').to_owned() })
    }

    /// The object `name` below this one (`name` is `/`-separated).
    pub fn join(&self, name: &str) -> ObjectUrl {
        let name = name.trim_matches('/');
        let key = match (self.key.is_empty(), name.is_empty()) {
            (_, true) => self.key.clone(),
            (true, false) => name.to_owned(),
            (false, false) => format!("{}/{name}", self.key),
        };
        ObjectUrl { bucket: self.bucket.clone(), key }
    }

    /// The last part of the key (the "file name").
    pub fn name(&self) -> &str {
        self.key.rsplit('/').next().unwrap_or(&self.key)
    }

    /// The URL as a path, for the code that carries paths.
    pub fn to_path(&self) -> PathBuf {
        PathBuf::from(self.to_string())
    }
}

impl fmt::Display for ObjectUrl {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "s3://{}/{}", self.bucket, self.key)
    }
}

/// Whether `path` names object storage rather than the local filesystem.
pub fn is_remote(path: &Path) -> bool {
    ObjectUrl::of(path).is_some()
}

/// `path` with a `file://` URL turned into the local path it names; anything else unchanged.
pub fn local_form(path: &Path) -> PathBuf {
    match path.to_str().and_then(|text| text.strip_prefix("file://")) {
        // `file:///abs` is `/abs`; `file://host/…` names another machine, which is not ours.
        Some(rest) if rest.starts_with('/') => PathBuf::from(rest),
        Some(rest) if rest.starts_with("localhost/") => PathBuf::from(&rest["localhost".len()..]),
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_urls_split_into_bucket_and_key_and_local_paths_are_not_urls() {
        let url = ObjectUrl::parse("s3://exports/u123/chatgpt.zip").unwrap();
        assert_eq!((url.bucket.as_str(), url.key.as_str(), url.name()), ("exports", "u123/chatgpt.zip", "chatgpt.zip"));
        assert_eq!(ObjectUrl::parse("s3://memory/u123/").unwrap().key, "u123");
        assert_eq!(ObjectUrl::parse("s3://memory").unwrap().join("pam").to_string(), "s3://memory/pam");
        assert_eq!(ObjectUrl::parse("s3a://b/k").unwrap().to_string(), "s3://b/k");
        assert!(ObjectUrl::parse("s3:///key").is_none());
        assert!(!is_remote(Path::new("exports/s3/chatgpt.zip")));
        assert!(is_remote(Path::new("s3://b/k")));
    }

    #[test]
    fn file_urls_are_local_paths() {
        assert_eq!(local_form(Path::new("file:///tmp/x.zip")), PathBuf::from("/tmp/x.zip"));
        assert_eq!(local_form(Path::new("file://localhost/tmp/x.zip")), PathBuf::from("/tmp/x.zip"));
        assert_eq!(local_form(Path::new("x.zip")), PathBuf::from("x.zip"));
    }
}
