//! Single-file outputs: written under a temporary name beside the target and renamed into place
//! only when the run succeeds, so a killed run never leaves a file that looks complete.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use tempfile::NamedTempFile;

/// The folder a target file goes in (`.` for a bare file name).
pub fn folder_of(target: &Path) -> &Path {
    target.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Creates the target's folder and a temporary `.memport-*.partial` file in it.
///
/// # Errors
/// I/O errors creating either.
pub fn create_partial(target: &Path) -> io::Result<NamedTempFile> {
    let folder = folder_of(target);
    std::fs::create_dir_all(folder)?;
    tempfile::Builder::new().prefix(".memport-").suffix(".partial").tempfile_in(folder)
}

/// Renames the finished temporary file onto the target and returns its size. Temporary files
/// are private (0600); the output is an ordinary file (0644). No fsync: the rename already
/// keeps a killed run from leaving a complete-looking file, and forcing the bytes to disk cost
/// about 15% of a run while protecting only against power loss.
///
/// # Errors
/// I/O errors.
pub fn persist(temporary: NamedTempFile, target: &Path) -> io::Result<u64> {
    let bytes = temporary.as_file().metadata()?.len();
    temporary.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
    temporary.persist(target).map_err(|error| error.error)?;
    Ok(bytes)
}
