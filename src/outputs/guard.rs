//! Holds every file a run writes (outputs, report, rejects file) for the length of the run: an
//! exclusive lock per target, so a second run on the same output stops at once with a clear
//! error instead of interleaving its files with the first run's; the folders the run had to
//! create, removed again if it fails; and, once the lock is held, the leftovers of killed runs
//! of the same target, which no live run can own any more.
//!
//! The lock is `flock(LOCK_EX | LOCK_NB)` (std's `File::try_lock`; the library forbids `unsafe`,
//! so not through `libc`) on a lock file memport keeps for the target ([`Layout`]). The kernel
//! drops the lock when its holder dies, so a lock file left by a killed run blocks nothing; the
//! next run locks it and removes it at its end.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::RunError;
use crate::outputs::created_folders::CreatedFolders;
use crate::sinks::output_file::{MANIFEST_FILE, folder_of, name_tag, remove_stale_partials};

/// Tries at taking a lock whose file a finishing run removed between our open and our lock.
const LOCK_ATTEMPTS: usize = 8;

/// Where memport keeps its own files for a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In the target's folder: a single file, or a folder replaced whole (`ump-md`).
    Beside,
    /// In the target folder itself: a folder output that replaces only its own files inside
    /// (PAM, Parquet), and whose folder may be a mount point that nothing beside it shares a
    /// file system with.
    Inside,
}

/// The paths memport uses for one target.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The target, as given.
    pub target: PathBuf,
    /// Where memport's own files for it go.
    pub placement: Placement,
    /// The folder they go in: the target's folder, or the target folder itself.
    pub home: PathBuf,
    /// The target's name (`.` and `..` resolved), which the staged output takes.
    pub name: OsString,
    /// `.memport-<name>.lock` beside the target, or `.memport.lock` in it.
    pub lock: PathBuf,
    /// `.memport-<name>.staging/` beside the target, or `.memport-staging/` in it: where the
    /// output is built until it is published.
    pub staging: PathBuf,
    /// `.memport-<name>.output.json` beside the target: the manifest of a folder output that
    /// cannot hold its own (an `ump-md` folder holds records only).
    pub manifest_beside: PathBuf,
}

impl Layout {
    /// The paths for `target`.
    ///
    /// # Errors
    /// [`RunError::Write`] for a target without a name (the root folder), or whose `.` or `..`
    /// cannot be resolved.
    pub fn of(target: &Path, placement: Placement) -> Result<Layout, RunError> {
        let (folder, name) = folder_and_name(target).map_err(|error| RunError::write(target.display().to_string(), error))?;
        let hidden = |suffix: &str| {
            let mut file_name = OsString::from(".memport-");
            file_name.push(name_tag(&name));
            file_name.push(suffix);
            file_name
        };
        let beside = |suffix: &str| folder.join(hidden(suffix));
        let manifest_beside = beside(".output.json");
        let (home, lock, staging) = match placement {
            Placement::Beside => (folder.clone(), beside(".lock"), beside(".staging")),
            Placement::Inside => (target.to_owned(), target.join(".memport.lock"), target.join(".memport-staging")),
        };
        Ok(Layout { target: target.to_owned(), placement, home, name, lock, staging, manifest_beside })
    }

    /// Where the sink builds the output: in the staging folder, under the target's name.
    pub fn built(&self) -> PathBuf {
        self.staging.join(&self.name)
    }
}

/// The folder `target` is in and its name, seeing through `.` and `..`.
fn folder_and_name(target: &Path) -> io::Result<(PathBuf, OsString)> {
    if let Some(name) = target.file_name() {
        return Ok((folder_of(target).to_owned(), name.to_owned()));
    }
    let resolved = std::fs::canonicalize(target)?;
    match (resolved.parent(), resolved.file_name()) {
        (Some(parent), Some(name)) => Ok((parent.to_owned(), name.to_owned())),
        _ => Err(io::Error::other("the root folder cannot be an output; name a folder inside it")),
    }
}

/// A lock file this run opened: locked, or on a file system without locks, only opened.
struct HeldLock {
    path: PathBuf,
    /// Closing it lets go of the lock.
    _file: File,
}

/// The locks, created folders and notes of one run; see the module docs.
#[derive(Default)]
pub struct OutputGuard {
    locks: Vec<HeldLock>,
    created: CreatedFolders,
    notes: Vec<String>,
}

/// Why a lock could not be taken.
enum LockError {
    /// Another process holds it.
    Busy,
    Io(io::Error),
}

impl OutputGuard {
    /// Creates the folder `layout` needs (with its missing parents), locks the target and
    /// removes what killed runs of it left: its staging folder and its temporary files.
    ///
    /// # Errors
    /// [`RunError::Busy`] when another run holds the lock; I/O errors creating the folder or
    /// the lock file, or removing leftovers.
    pub fn hold(&mut self, layout: &Layout) -> Result<(), RunError> {
        self.created.create(&layout.home)?;
        let lock_error = |error: io::Error| RunError::write(layout.lock.display().to_string(), error);
        let (file, locked) = match lock(&layout.lock) {
            Ok(taken) => taken,
            Err(LockError::Busy) => {
                return Err(RunError::Busy { target: layout.target.display().to_string(), lock: layout.lock.display().to_string() });
            }
            Err(LockError::Io(error)) => return Err(lock_error(error)),
        };
        self.locks.push(HeldLock { path: layout.lock.clone(), _file: file });
        if !locked {
            // Leftovers are still removed below: a run on such a file system has no way to tell
            // a live run's files from a dead one's, and building over a killed run's staging
            // folder would mix the two.
            self.notes.push(format!(
                "{}: the file system does not support file locks, so a second memport run writing it at the same time is not stopped",
                layout.target.display()
            ));
        }
        remove_leftovers(layout).map_err(|error| RunError::write(layout.target.display().to_string(), error))
    }

    /// Keeps the folders this run created: the outputs in them are published.
    pub fn keep_folders(&mut self) {
        self.created.keep();
    }

    /// What the report should say about the locks (file systems that have none).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

impl Drop for OutputGuard {
    fn drop(&mut self) {
        // Each lock file is removed while still locked, so no run locks a file that is about to
        // leave the folder (and one that opened it just before sees it gone; see `lock`).
        for held in self.locks.drain(..) {
            let _ = std::fs::remove_file(&held.path);
        }
        // `created` drops after this: after a failed run it removes the folders the run
        // created, now that the lock files in them are gone (when nothing else is in them).
    }
}

/// Opens (creating) and locks the file at `path`. Returns the file and whether it is locked:
/// a file system without `flock` (some network file systems) gives an unlocked file.
fn lock(path: &Path) -> Result<(File, bool), LockError> {
    for _ in 0..LOCK_ATTEMPTS {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(LockError::Io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(LockError::Busy),
            Err(TryLockError::Error(error)) if locks_unsupported(&error) => return Ok((file, false)),
            Err(TryLockError::Error(error)) => return Err(LockError::Io(error)),
        }
        // A run that ends removes its lock file while it still holds it. If this run opened
        // that file just before, it now holds a lock on a file no longer in the folder, and a
        // third run could lock a new file at `path`: only the file at `path` counts.
        let held = file.metadata().map_err(LockError::Io)?;
        match std::fs::metadata(path) {
            Ok(current) if current.dev() == held.dev() && current.ino() == held.ino() => return Ok((file, true)),
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(LockError::Io(error)),
        }
    }
    // Lock files coming and going this fast means other runs are starting and ending on it.
    Err(LockError::Busy)
}

/// Whether a lock failed because the file system has no locks.
fn locks_unsupported(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::Unsupported || error.raw_os_error() == Some(libc::ENOLCK)
}

/// Removes what killed runs of the target left. Only called with the target's lock held.
fn remove_leftovers(layout: &Layout) -> io::Result<()> {
    match std::fs::remove_dir_all(&layout.staging) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
        _ => {}
    }
    // Temporary files carry the name of the file they become: the target's own and its
    // manifest's beside it, the manifest's inside a folder output.
    match layout.placement {
        Placement::Beside => {
            remove_stale_partials(&layout.home, &layout.name)?;
            if let Some(manifest) = layout.manifest_beside.file_name() {
                remove_stale_partials(&layout.home, manifest)?;
            }
        }
        Placement::Inside => {
            remove_stale_partials(&layout.home, OsStr::new(MANIFEST_FILE))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::output_file::tests::names_in;

    #[test]
    fn a_second_run_on_the_same_output_is_refused_until_the_first_ends() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("brain.aimem.json");
        let layout = Layout::of(&target, Placement::Beside).unwrap();
        assert_eq!(layout.lock, folder.path().join(".memport-brain.aimem.json.lock"));
        let mut first = OutputGuard::default();
        first.hold(&layout).unwrap();
        // flock locks belong to the open file, so a second open in this process conflicts as a
        // second process would.
        let error = OutputGuard::default().hold(&layout).unwrap_err();
        assert!(matches!(error, RunError::Busy { .. }), "{error}");
        assert_eq!(
            error.to_string(),
            format!("another memport run is writing {} (lock file {}); wait for it to finish", target.display(), layout.lock.display())
        );
        drop(first);
        assert!(!layout.lock.exists(), "the lock file goes at the end of the run");
        let mut third = OutputGuard::default();
        third.hold(&layout).unwrap();
    }

    #[test]
    fn a_lock_file_left_by_a_killed_run_does_not_block_and_goes_at_the_end() {
        let folder = tempfile::tempdir().unwrap();
        let layout = Layout::of(&folder.path().join("run.json"), Placement::Beside).unwrap();
        std::fs::write(&layout.lock, b"").unwrap();
        let mut guard = OutputGuard::default();
        guard.hold(&layout).unwrap();
        guard.keep_folders();
        drop(guard);
        assert!(names_in(folder.path()).is_empty(), "{:?}", names_in(folder.path()));
    }

    #[test]
    fn leftovers_of_killed_runs_of_the_target_go_and_nothing_else_does() {
        let folder = tempfile::tempdir().unwrap();
        let layout = Layout::of(&folder.path().join("out.json"), Placement::Beside).unwrap();
        std::fs::create_dir_all(layout.built()).unwrap();
        std::fs::write(layout.built().join("half"), b"").unwrap();
        for name in [".memport-out.json-AbC123.partial", ".memport-other.json-AbC123.partial", ".memport-Xy12Zq.partial", "out.json"] {
            std::fs::write(folder.path().join(name), b"").unwrap();
        }
        let mut guard = OutputGuard::default();
        guard.hold(&layout).unwrap();
        assert_eq!(
            names_in(folder.path()),
            [".memport-Xy12Zq.partial", ".memport-other.json-AbC123.partial", ".memport-out.json.lock", "out.json"]
        );

        let store = folder.path().join("store");
        let inside = Layout::of(&store, Placement::Inside).unwrap();
        std::fs::create_dir_all(inside.built()).unwrap();
        std::fs::write(store.join(".memport-.memport-output.json-AbC123.partial"), b"").unwrap();
        std::fs::write(store.join("notes.txt"), b"").unwrap();
        guard.hold(&inside).unwrap();
        assert_eq!(names_in(&store), [".memport.lock", "notes.txt"]);
    }

    #[test]
    fn a_failed_run_removes_the_folders_it_created_and_its_lock_files() {
        let folder = tempfile::tempdir().unwrap();
        let mut guard = OutputGuard::default();
        guard.hold(&Layout::of(&folder.path().join("new").join("deeper").join("out.json"), Placement::Beside).unwrap()).unwrap();
        guard.hold(&Layout::of(&folder.path().join("store"), Placement::Inside).unwrap()).unwrap();
        assert!(folder.path().join("new").join("deeper").is_dir() && folder.path().join("store").is_dir());
        drop(guard);
        assert!(names_in(folder.path()).is_empty(), "{:?}", names_in(folder.path()));

        let mut kept = OutputGuard::default();
        kept.hold(&Layout::of(&folder.path().join("store"), Placement::Inside).unwrap()).unwrap();
        kept.keep_folders();
        drop(kept);
        assert_eq!(names_in(folder.path()), ["store"]);
        assert!(names_in(&folder.path().join("store")).is_empty(), "the lock file is gone");
    }

    #[test]
    fn a_target_ending_in_dot_dot_is_locked_beside_the_folder_it_resolves_to() {
        let folder = tempfile::tempdir().unwrap();
        let records = folder.path().join("records");
        std::fs::create_dir_all(records.join("sub")).unwrap();
        let layout = Layout::of(&records.join("sub").join(".."), Placement::Beside).unwrap();
        assert_eq!(layout.name, OsString::from("records"));
        assert_eq!(layout.lock, std::fs::canonicalize(folder.path()).unwrap().join(".memport-records.lock"));
        assert!(Layout::of(Path::new("/"), Placement::Beside).is_err());
    }
}
