//! Puts a finished folder output in place of the old one in one step: `renameat2` with
//! `RENAME_EXCHANGE` swaps the two folders atomically, so a reader, or a run killed at any
//! moment, finds the whole old output or the whole new one, never a mixture (the fault script
//! found PAM stores and Parquet datasets half replaced after `kill -9` while files were moved
//! one by one). It applies when the old folder holds nothing but memport's files; where it
//! cannot (files of the user's are in the folder, the folder is a mount point, the file system
//! cannot exchange), the caller replaces file by file, as its manifest allows.

use std::io;
use std::path::{Path, PathBuf};

use rustix::fs::{CWD, RenameFlags, renameat_with};

/// Swaps the finished output `built` (a folder anywhere on `target`'s file system, usually
/// inside `target`) with the folder `target`, then removes the old one. Returns false, with
/// nothing changed, when the swap cannot be done here.
///
/// # Errors
/// I/O errors other than those that only mean "not here": those of the moves themselves.
pub fn swap_in(built: &Path, target: &Path) -> io::Result<bool> {
    let aside = aside_of(target);
    // Left by a run killed around an earlier swap: the old output or an unpublished new one.
    if aside.exists() {
        std::fs::remove_dir_all(&aside)?;
    }
    match std::fs::rename(built, &aside) {
        Ok(()) => {}
        // `target` is a mount point: its content cannot leave it by a rename.
        Err(error) if error.raw_os_error() == Some(libc::EXDEV) => return Ok(false),
        Err(error) => return Err(error),
    }
    if renameat_with(CWD, &aside, CWD, target, RenameFlags::EXCHANGE).is_err() {
        // The file system cannot exchange (or `target` went away): put the build back.
        std::fs::rename(&aside, built)?;
        return Ok(false);
    }
    // The old output, now beside the new one; a failure to remove it leaves it to the next
    // swap of this target, which removes it first.
    let _ = std::fs::remove_dir_all(&aside);
    Ok(true)
}

/// Where the new output waits beside `target`, and the old one goes after the swap.
fn aside_of(target: &Path) -> PathBuf {
    let name = target.file_name().map_or_else(|| "output".into(), |name| name.to_string_lossy().into_owned());
    target.with_file_name(format!(".memport-{name}.swap"))
}

/// Whether every entry of `folder` but memport's own (`.memport…`) satisfies `is_memports`,
/// given its path relative to `folder`; folders are walked, files are asked about.
///
/// # Errors
/// I/O errors reading the folder.
pub fn holds_only(folder: &Path, is_memports: &dyn Fn(&str) -> bool) -> io::Result<bool> {
    let mut pending = vec![(folder.to_owned(), String::new())];
    while let Some((current, relative)) = pending.pop() {
        for entry in std::fs::read_dir(&current)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if relative.is_empty() && name.starts_with(".memport") {
                continue;
            }
            let path = if relative.is_empty() { name } else { format!("{relative}/{name}") };
            let file_type = entry.file_type()?;
            if file_type.is_dir() {
                pending.push((entry.path(), path));
            } else if !file_type.is_file() || !is_memports(&path) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_new_folder_takes_the_place_of_the_old_one_whole() {
        let parent = tempfile::tempdir().unwrap();
        let target = parent.path().join("store");
        std::fs::create_dir_all(target.join("conversations")).unwrap();
        std::fs::write(target.join("conversations/old.json"), b"old").unwrap();
        let built = target.join(".memport-staging/store");
        std::fs::create_dir_all(built.join("conversations")).unwrap();
        std::fs::write(built.join("conversations/new.json"), b"new").unwrap();
        assert!(swap_in(&built, &target).unwrap());
        assert_eq!(std::fs::read(target.join("conversations/new.json")).unwrap(), b"new");
        assert!(!target.join("conversations/old.json").exists());
        assert!(!aside_of(&target).exists(), "the old folder is removed");
        let names: Vec<_> = std::fs::read_dir(parent.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect();
        assert_eq!(names, ["store"]);
    }

    #[test]
    fn only_memports_files_are_told_from_the_users() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(folder.path().join("messages")).unwrap();
        std::fs::create_dir_all(folder.path().join(".memport-staging/x")).unwrap();
        std::fs::write(folder.path().join("messages/part-00000.parquet"), b"p").unwrap();
        std::fs::write(folder.path().join(".memport-output.json"), b"{}").unwrap();
        let listed = |path: &str| path == "messages/part-00000.parquet";
        assert!(holds_only(folder.path(), &listed).unwrap());
        std::fs::write(folder.path().join("messages/notes.txt"), b"mine").unwrap();
        assert!(!holds_only(folder.path(), &listed).unwrap());
    }
}
