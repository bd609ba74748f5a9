//! The few bucket operations memport needs besides reading and uploading: whether an object
//! is there, what lies under a prefix, reading a small object, deleting objects.

use futures_util::stream::{self, StreamExt, TryStreamExt};
use object_store::path::Path as KeyPath;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::remote::client::{store_for, wait};
use crate::remote::error::RemoteError;
use crate::remote::url::ObjectUrl;

/// Deletions sent at once.
const DELETES_IN_FLIGHT: usize = 16;

/// An object found by a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Where it is.
    pub url: ObjectUrl,
    /// Its size in bytes.
    pub size: u64,
}

/// The object's size, or `None` when there is no object at `url`.
///
/// # Errors
/// [`RemoteError`] for anything but a missing object (a missing bucket included).
pub fn size_of(url: &ObjectUrl) -> Result<Option<u64>, RemoteError> {
    let store = store_for(url)?;
    match wait(store.head(&KeyPath::from(url.key.as_str()))) {
        Ok(meta) => Ok(Some(meta.size)),
        Err(object_store::Error::NotFound { .. }) if bucket_exists(url)? => Ok(None),
        Err(error) => Err(RemoteError::from_store(url, &error)),
    }
}

/// Whether `url`'s bucket exists: a missing key and a missing bucket both answer 404 to HEAD.
fn bucket_exists(url: &ObjectUrl) -> Result<bool, RemoteError> {
    let store = store_for(url)?;
    let root = ObjectUrl { bucket: url.bucket.clone(), key: String::new() };
    match wait(store.list_with_delimiter(Some(&KeyPath::from("")))) {
        Ok(_) => Ok(true),
        Err(error) => Err(RemoteError::from_store(&root, &error)),
    }
}

/// Every object under the prefix `url` (the key itself excluded), sorted by key.
///
/// # Errors
/// [`RemoteError`] when the listing fails (a missing bucket included).
pub fn list(url: &ObjectUrl) -> Result<Vec<Listed>, RemoteError> {
    let store = store_for(url)?;
    let prefix = KeyPath::from(url.key.as_str());
    let mut found: Vec<Listed> =
        wait(store.list(Some(&prefix)).map_err(|error| RemoteError::from_store(url, &error)).try_collect::<Vec<_>>())?
            .into_iter()
            .map(|meta| Listed { url: ObjectUrl { bucket: url.bucket.clone(), key: meta.location.to_string() }, size: meta.size })
            .collect();
    found.sort_by(|left, right| left.url.key.cmp(&right.url.key));
    Ok(found)
}

/// The names of the "folders" directly under the prefix `url` (`runs/` → the run ids).
///
/// # Errors
/// [`RemoteError`] when the listing fails.
pub fn child_prefixes(url: &ObjectUrl) -> Result<Vec<String>, RemoteError> {
    let store = store_for(url)?;
    let listing =
        wait(store.list_with_delimiter(Some(&KeyPath::from(url.key.as_str())))).map_err(|error| RemoteError::from_store(url, &error))?;
    let mut names: Vec<String> =
        listing.common_prefixes.iter().filter_map(|prefix| prefix.parts().next_back().map(|part| part.as_ref().to_owned())).collect();
    names.sort();
    Ok(names)
}

/// The whole object at `url` when it is there and at most `limit` bytes.
///
/// # Errors
/// [`RemoteError`] when it cannot be read, or is larger than `limit`.
pub fn read_small(url: &ObjectUrl, limit: u64) -> Result<Option<Vec<u8>>, RemoteError> {
    let Some(size) = size_of(url)? else { return Ok(None) };
    if size > limit {
        return Err(RemoteError::refused(url, format!("is {size} bytes, more than the {limit} memport reads of a record it keeps")));
    }
    let store = store_for(url)?;
    let bytes = wait(async { store.get(&KeyPath::from(url.key.as_str())).await?.bytes().await })
        .map_err(|error| RemoteError::from_store(url, &error))?;
    Ok(Some(bytes.to_vec()))
}

/// Deletes every object in `urls` (all in one bucket or several); a missing one is no error.
///
/// # Errors
/// [`RemoteError`] for the first deletion that fails after its retries.
pub fn delete(urls: &[ObjectUrl]) -> Result<(), RemoteError> {
    let stores = urls.iter().map(|url| store_for(url).map(|store| (store, url.clone()))).collect::<Result<Vec<_>, _>>()?;
    wait(async {
        stream::iter(stores.into_iter().map(|(store, url)| async move {
            match store.delete(&KeyPath::from(url.key.as_str())).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(error) => Err(RemoteError::from_store(&url, &error)),
            }
        }))
        .buffer_unordered(DELETES_IN_FLIGHT)
        .try_collect::<Vec<()>>()
        .await
    })?;
    Ok(())
}
