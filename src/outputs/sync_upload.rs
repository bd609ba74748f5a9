//! A sync whose `-o` is on object storage: the run folder and the Parquet partitions are built
//! in a local temporary folder as usual, then uploaded under the same keys and published
//! before the state commits, the `runs` table's row last (as on disk, a reader that keeps only
//! runs listed in `runs` sees a run whole or not at all). The next sync deletes the objects of
//! runs the state never committed, as it removes their folders on disk.

use crate::remote::objects;
use crate::remote::upload::{StagedUpload, tree_files, upload_progress};
use crate::remote::{ObjectUrl, RemoteError};

/// Uploads everything under `local_root` to `root`, publishing the `runs` table last.
///
/// # Errors
/// [`RemoteError`] when an upload fails; nothing new is visible then.
pub fn publish_run_tree(
    local_root: &std::path::Path,
    root: &ObjectUrl,
    runs_table_prefix: &str,
    progress: bool,
) -> Result<(), RemoteError> {
    let files = tree_files(local_root, root)
        .map_err(|error| RemoteError::refused(root, format!("listing the run's files in {}: {error}", local_root.display())))?;
    let runs_table = root.join(runs_table_prefix);
    let in_runs_table = |url: &ObjectUrl| url.key.starts_with(&format!("{}/", runs_table.key));
    let bar = upload_progress(progress, &files);
    let (last, first): (Vec<_>, Vec<_>) = files.into_iter().partition(|(_, url)| in_runs_table(url));
    let first = StagedUpload::stage(first, &bar)?;
    let last = StagedUpload::stage(last, &bar)?;
    bar.finish_and_clear();
    first.publish()?;
    last.publish()?;
    Ok(())
}

/// Deletes the objects of runs not in `committed`: `runs/<id>/` and every
/// `parquet/<table>/run=<id>/`, the `runs` table's first. Returns what was removed.
///
/// # Errors
/// [`RemoteError`] when a listing or a deletion fails.
pub fn remove_uncommitted(
    root: &ObjectUrl,
    runs_folder: &str,
    parquet_folder: &str,
    runs_table: &str,
    committed: &[&str],
) -> Result<Vec<String>, RemoteError> {
    let mut removed = Vec::new();
    let parquet = root.join(parquet_folder);
    let mut tables = objects::child_prefixes(&parquet)?;
    tables.sort_by_key(|name| name != runs_table);
    for table in tables {
        let table_url = parquet.join(&table);
        for partition in objects::child_prefixes(&table_url)? {
            let Some(run_id) = partition.strip_prefix("run=") else { continue };
            if !committed.contains(&run_id) {
                let gone = table_url.join(&partition);
                delete_under(&gone)?;
                removed.push(format!("{parquet_folder}/{table}/{partition}"));
            }
        }
    }
    let runs = root.join(runs_folder);
    for run_id in objects::child_prefixes(&runs)? {
        if !committed.contains(&run_id.as_str()) {
            delete_under(&runs.join(&run_id))?;
            removed.push(format!("{runs_folder}/{run_id}"));
        }
    }
    Ok(removed)
}

fn delete_under(prefix: &ObjectUrl) -> Result<(), RemoteError> {
    let found: Vec<ObjectUrl> = objects::list(prefix)?.into_iter().map(|listed| listed.url).collect();
    objects::delete(&found)
}
