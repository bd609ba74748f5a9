//! Object-storage failures said for people: which URL, what went wrong, and what to do.

use crate::error::RunError;
use crate::remote::aws_files::endpoint_description;
use crate::remote::url::ObjectUrl;

/// A request to object storage that failed (after its retries).
#[derive(Debug, thiserror::Error)]
#[error("{url}: {reason}")]
pub struct RemoteError {
    /// The object or prefix the request was for.
    pub url: String,
    /// What went wrong and what to do about it.
    pub reason: String,
}

impl RemoteError {
    /// Explains `error`, met while working on `url`.
    pub fn from_store(url: &ObjectUrl, error: &object_store::Error) -> RemoteError {
        let detail = error.to_string();
        let reason = match error {
            object_store::Error::NotFound { .. } if detail.contains("NoSuchBucket") => {
                format!("the bucket {} does not exist at {}; check the URL, or create the bucket", url.bucket, endpoint_description())
            }
            object_store::Error::NotFound { .. } => "no such object; check the URL".to_owned(),
            object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } => format!(
                "access denied by {}; check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE and ~/.aws/credentials) and that they may use bucket {} ({detail})",
                endpoint_description(),
                url.bucket
            ),
            _ if detail.contains("NoSuchBucket") => {
                format!("the bucket {} does not exist at {}; check the URL, or create the bucket", url.bucket, endpoint_description())
            }
            _ if detail.contains("AccessDenied") || detail.contains("InvalidAccessKeyId") || detail.contains("SignatureDoesNotMatch") => {
                format!(
                    "access denied by {}; check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE and ~/.aws/credentials) ({detail})",
                    endpoint_description()
                )
            }
            _ if detail.contains("error sending request") || detail.contains("connect") => {
                format!("cannot reach {} (retried with backoff); check AWS_ENDPOINT_URL and the network ({detail})", endpoint_description())
            }
            _ => detail,
        };
        RemoteError { url: url.to_string(), reason }
    }

    /// A client that cannot be configured.
    pub fn configuration(url: &ObjectUrl, error: &object_store::Error) -> RemoteError {
        RemoteError { url: url.to_string(), reason: format!("cannot set up the S3 client: {error}; check AWS_ENDPOINT_URL and AWS_REGION") }
    }

    /// Something the request found that memport will not go on with.
    pub fn refused(url: impl ToString, reason: impl Into<String>) -> RemoteError {
        RemoteError { url: url.to_string(), reason: reason.into() }
    }
}

impl From<RemoteError> for RunError {
    fn from(error: RemoteError) -> RunError {
        RunError::ObjectStorage { url: error.url, reason: error.reason }
    }
}

impl From<RemoteError> for std::io::Error {
    fn from(error: RemoteError) -> std::io::Error {
        std::io::Error::other(error)
    }
}
