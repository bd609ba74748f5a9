//! The files of a run's outputs: the output file a sink writes plainly ([`create_output`]); the
//! run's own files (report, rejects, manifests), each written under a hidden temporary name
//! beside its path and renamed onto it only when complete; and the [`Manifest`] a folder output
//! (`pam`, `parquet`, `ump-md`) keeps of what memport wrote in it, so a later run replaces that
//! and nothing else.
//!
//! Temporary files are named `.memport-<target name>-<6 random characters>.partial`: a later
//! run holding the target's lock (`crate::outputs::guard`) tells a killed run's
//! leftovers of that target from anything else by the name alone ([`is_partial_of`]).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use tempfile::NamedTempFile;

/// Random characters in a temporary file's name (tempfile draws them from `[A-Za-z0-9]`).
const RANDOM_CHARACTERS: usize = 6;

/// Longest target name memport's hidden names carry whole. The longest decoration
/// (`.memport-` and `-XXXXXX.partial`) adds 24 bytes, and a file name holds 255.
const LONGEST_NAME_TAG: usize = 200;

/// The manifest's file name, in the root of a folder output. Hidden, so dataset readers that
/// list the folder (pyarrow, Spark) pass over it.
pub const MANIFEST_FILE: &str = ".memport-output.json";

/// The folder a target file goes in (`.` for a bare file name).
pub fn folder_of(target: &Path) -> &Path {
    target.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// A target's name as memport's hidden files for it carry it (lock, staging folder, temporary
/// files): the name itself, or for a very long one its start and a hash of the whole, so two
/// long names that start alike still get different hidden names.
pub fn name_tag(name: &OsStr) -> OsString {
    let bytes = name.as_bytes();
    if bytes.len() <= LONGEST_NAME_TAG {
        return name.to_owned();
    }
    let mut hash = String::with_capacity(16);
    crate::hash::push_hex(&mut hash, &blake3::hash(bytes).as_bytes()[..8]);
    let mut tag = bytes[..LONGEST_NAME_TAG - 17].to_vec();
    tag.push(b'~');
    tag.extend_from_slice(hash.as_bytes());
    OsString::from_vec(tag)
}

/// The start of every temporary file name for a target named `name`.
fn partial_prefix(name: &OsStr) -> OsString {
    let mut prefix = OsString::from(".memport-");
    prefix.push(name_tag(name));
    prefix.push("-");
    prefix
}

/// Creates `target`'s folder and the output file itself, for a sink that writes plainly to the
/// path it is given (a run gives it one in a staging folder, and publishes it).
///
/// # Errors
/// I/O errors creating either; a file already at `target` is `AlreadyExists`.
pub fn create_output(target: &Path) -> io::Result<crate::sinks::direct_writer::DirectWriter> {
    std::fs::create_dir_all(folder_of(target))?;
    crate::sinks::direct_writer::DirectWriter::create(target)
}

/// Creates the target's folder and a temporary `.memport-<name>-XXXXXX.partial` file in it.
///
/// # Errors
/// I/O errors creating either.
pub fn create_partial(target: &Path) -> io::Result<NamedTempFile> {
    let folder = folder_of(target);
    std::fs::create_dir_all(folder)?;
    // A path without a final name (`..`) has none to carry; the run's checks refuse such
    // outputs, so this only keeps the function total.
    let name = target.file_name().unwrap_or(OsStr::new("output"));
    let prefix = partial_prefix(name);
    tempfile::Builder::new().prefix(&prefix).suffix(".partial").rand_bytes(RANDOM_CHARACTERS).tempfile_in(folder)
}

/// Whether `file_name` is a temporary file [`create_partial`] made for a target named `name`.
/// Exact: the partial of `a-b` (`.memport-a-b-XXXXXX.partial`) is not one of `a`, because the
/// random part is exactly six alphanumerics.
pub fn is_partial_of(file_name: &OsStr, name: &OsStr) -> bool {
    let prefix = partial_prefix(name);
    let Some(rest) = file_name.as_bytes().strip_prefix(prefix.as_bytes()) else { return false };
    let Some(random) = rest.strip_suffix(b".partial") else { return false };
    random.len() == RANDOM_CHARACTERS && random.iter().all(u8::is_ascii_alphanumeric)
}

/// Removes the temporary files that killed runs left in `folder` for the target named `name`,
/// and returns how many. Only a run that holds that target's lock may call this: a live run
/// writing the target holds the lock, so what is found is no live run's.
///
/// # Errors
/// I/O errors listing the folder or removing a file.
pub fn remove_stale_partials(folder: &Path, name: &OsStr) -> io::Result<u64> {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(error),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        if !is_partial_of(&entry.file_name(), name) || !entry.file_type()?.is_file() {
            continue;
        }
        match std::fs::remove_file(entry.path()) {
            Ok(()) => removed += 1,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
    }
    Ok(removed)
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

/// Writes `bytes` to `path` through a temporary file renamed onto it: a reader sees the old
/// file or the new one, never part of one.
///
/// # Errors
/// I/O errors.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut temporary = create_partial(path)?;
    temporary.write_all(bytes)?;
    persist(temporary, path)?;
    Ok(())
}

/// What memport wrote in a folder output, kept in the folder as [`MANIFEST_FILE`] (beside it
/// for an `ump-md` folder, which holds records only) and written atomically. A later run
/// replaces or removes only what the manifest lists and refuses a folder whose content
/// memport's own names would clash with: memport never overwrites or deletes a file it did
/// not write. Its bytes depend only on the output, so it is as
/// deterministic as the output itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `memport`: says what the file is to whoever finds it.
    pub written_by: String,
    /// The output's format, as `--to` names it.
    pub format: String,
    /// Files memport wrote, by path relative to the folder, `/`-separated.
    #[serde(default)]
    pub files: BTreeSet<String>,
    /// Folders memport filled as a whole, by path relative to the folder (`.` for the folder
    /// itself, not counting the manifest), each with the listings memport left there: one, or
    /// two while a run replaces the old content with the new, so a run killed halfway leaves
    /// nothing memport wrote unaccounted for.
    #[serde(default)]
    pub folders: BTreeMap<String, Vec<FolderListing>>,
}

/// A folder's entries as a [`Manifest`] keeps them: their number and a digest of their names
/// that does not depend on their order, so a folder of a million files is checked in one pass
/// over its entries against a few bytes of manifest, without holding the names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderListing {
    /// Entries in the folder.
    pub entries: u64,
    /// `blake3-sum:` and the wrapping sum of the first 128 bits of each name's BLAKE3 hash, in
    /// hex. Not a defence against someone forging a folder, which nothing here needs: it tells
    /// whether files were added, removed or renamed since memport wrote the folder.
    pub names: String,
}

impl FolderListing {
    /// Lists `folder`, leaving out the names `skip` picks. A missing folder lists as empty.
    ///
    /// # Errors
    /// I/O errors listing it.
    pub fn of(folder: &Path, skip: impl Fn(&OsStr) -> bool) -> io::Result<FolderListing> {
        let mut entries = 0u64;
        let mut sum = 0u128;
        let listing = match std::fs::read_dir(folder) {
            Ok(listing) => Some(listing),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(error),
        };
        for entry in listing.into_iter().flatten() {
            let name = entry?.file_name();
            if skip(&name) {
                continue;
            }
            entries += 1;
            let mut low = [0u8; 16];
            low.copy_from_slice(&blake3::hash(name.as_bytes()).as_bytes()[..16]);
            // A sum is the same in any order, and `read_dir` gives the file system's order.
            sum = sum.wrapping_add(u128::from_le_bytes(low));
        }
        let mut names = String::from("blake3-sum:");
        crate::hash::push_hex(&mut names, &sum.to_be_bytes());
        Ok(FolderListing { entries, names })
    }
}

impl Manifest {
    /// An empty manifest of `format`.
    pub fn new(format: &str) -> Manifest {
        Manifest { written_by: "memport".to_owned(), format: format.to_owned(), files: BTreeSet::new(), folders: BTreeMap::new() }
    }

    /// Whether `listing` is one that memport left in the folder at `relative`.
    pub fn lists_folder(&self, relative: &str, listing: &FolderListing) -> bool {
        self.folders.get(relative).is_some_and(|listings| listings.contains(listing))
    }

    /// Everything this manifest or `other` lists: what a folder may hold while a run moves
    /// `other`'s content in and this one's out.
    pub fn merged_with(&self, other: &Manifest) -> Manifest {
        let mut merged = self.clone();
        merged.files.extend(other.files.iter().cloned());
        for (folder, listings) in &other.folders {
            let known = merged.folders.entry(folder.clone()).or_default();
            for listing in listings {
                if !known.contains(listing) {
                    known.push(listing.clone());
                }
            }
        }
        merged
    }

    /// Reads the manifest of `folder` (its [`MANIFEST_FILE`]); `None` when it has none (or does
    /// not exist).
    ///
    /// # Errors
    /// I/O errors, and `InvalidData` for a file of that name that is not memport's manifest.
    pub fn read(folder: &Path) -> io::Result<Option<Manifest>> {
        Manifest::read_file(&folder.join(MANIFEST_FILE))
    }

    /// Reads the manifest at `path`, for an output that keeps it beside itself; `None` when
    /// there is none.
    ///
    /// # Errors
    /// I/O errors, and `InvalidData` for a file that is not memport's manifest.
    pub fn read_file(path: &Path) -> io::Result<Option<Manifest>> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) if matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => return Ok(None),
            Err(error) => return Err(error),
        };
        let unreadable = |why: String| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is not a manifest memport can read ({why}), so memport cannot tell which files here it wrote; remove the folder, or name another one with -o",
                    path.display()
                ),
            )
        };
        let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|error| unreadable(error.to_string()))?;
        if manifest.written_by != "memport" {
            return Err(unreadable(format!("it says it was written by `{}`", manifest.written_by)));
        }
        Ok(Some(manifest))
    }

    /// Writes the manifest into `folder`, atomically.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write(&self, folder: &Path) -> io::Result<()> {
        self.write_file(&folder.join(MANIFEST_FILE))
    }

    /// Writes the manifest to `path`, atomically.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write_file(&self, path: &Path) -> io::Result<()> {
        let mut bytes = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        bytes.push(b'\n');
        write_atomically(path, &bytes)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The names in `folder`, sorted: what a test expects a run to have left there.
    pub(crate) fn names_in(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(folder).unwrap().flatten().map(|entry| entry.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_partial_is_named_after_its_target_and_matches_no_other_target() {
        let folder = tempfile::tempdir().unwrap();
        let partial = create_partial(&folder.path().join("a-b")).unwrap();
        let name = partial.path().file_name().unwrap().to_owned();
        assert!(name.to_string_lossy().starts_with(".memport-a-b-") && name.to_string_lossy().ends_with(".partial"), "{name:?}");
        assert!(is_partial_of(&name, OsStr::new("a-b")));
        assert!(!is_partial_of(&name, OsStr::new("a")), "the partial of a-b is not one of a");
        assert!(!is_partial_of(OsStr::new(".memport-AbC123.partial"), OsStr::new("a")), "an unattributable name matches nothing");
        assert!(!is_partial_of(OsStr::new(".memport-a-AbC12!.partial"), OsStr::new("a")));
    }

    #[test]
    fn a_very_long_target_name_gets_a_short_distinct_tag() {
        let long_a = OsString::from("a".repeat(250) + "1");
        let long_b = OsString::from("a".repeat(250) + "2");
        let (tag_a, tag_b) = (name_tag(&long_a), name_tag(&long_b));
        assert_eq!(tag_a.len(), LONGEST_NAME_TAG);
        assert_ne!(tag_a, tag_b);
        assert_eq!(name_tag(OsStr::new("run.json")), OsString::from("run.json"));
        let folder = tempfile::tempdir().unwrap();
        let partial = create_partial(&folder.path().join(&long_a)).unwrap();
        assert!(is_partial_of(partial.path().file_name().unwrap(), &long_a));
    }

    #[test]
    fn stale_partials_of_one_target_go_and_everything_else_stays() {
        let folder = tempfile::tempdir().unwrap();
        for name in [".memport-run.json-AbC123.partial", ".memport-run.json-XyZ789.partial", ".memport-other.json-AbC123.partial"] {
            std::fs::write(folder.path().join(name), b"left by a killed run").unwrap();
        }
        // An older memport's unattributable name, and the user's own files.
        std::fs::write(folder.path().join(".memport-Qw3rTy.partial"), b"").unwrap();
        std::fs::write(folder.path().join("run.json"), b"{}").unwrap();
        assert_eq!(remove_stale_partials(folder.path(), OsStr::new("run.json")).unwrap(), 2);
        assert_eq!(names_in(folder.path()), [".memport-Qw3rTy.partial", ".memport-other.json-AbC123.partial", "run.json"]);
        assert_eq!(remove_stale_partials(&folder.path().join("missing"), OsStr::new("run.json")).unwrap(), 0);
    }

    #[test]
    fn write_atomically_leaves_the_whole_new_file_and_no_temporary_one() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("report.json");
        std::fs::write(&path, b"old").unwrap();
        write_atomically(&path, b"new contents").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new contents");
        assert_eq!(names_in(folder.path()), ["report.json"]);
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o644);
    }

    #[test]
    fn a_folder_listing_ignores_order_and_sees_an_added_or_renamed_file() {
        let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for name in ["a.json", "b.json", "c.json"] {
            std::fs::write(first.path().join(name), b"").unwrap();
        }
        for name in ["c.json", "a.json", "b.json"] {
            std::fs::write(second.path().join(name), b"").unwrap();
        }
        let listing = FolderListing::of(first.path(), |_| false).unwrap();
        assert_eq!(listing.entries, 3);
        assert_eq!(listing, FolderListing::of(second.path(), |_| false).unwrap());
        std::fs::write(second.path().join("mine.json"), b"").unwrap();
        assert_ne!(listing, FolderListing::of(second.path(), |_| false).unwrap(), "an added file shows");
        assert_eq!(listing, FolderListing::of(second.path(), |name| name == OsStr::new("mine.json")).unwrap(), "unless skipped");
        std::fs::rename(first.path().join("c.json"), first.path().join("d.json")).unwrap();
        assert_ne!(listing, FolderListing::of(first.path(), |_| false).unwrap(), "a renamed file shows");
        assert_eq!(FolderListing::of(&first.path().join("missing"), |_| false).unwrap().entries, 0);
    }

    #[test]
    fn a_manifest_round_trips_merges_and_refuses_a_file_that_is_not_one() {
        let folder = tempfile::tempdir().unwrap();
        assert_eq!(Manifest::read(folder.path()).unwrap(), None);
        let mut old = Manifest::new("parquet");
        old.files.insert("messages/part-00000.parquet".into());
        old.files.insert("messages/part-00001.parquet".into());
        let mut new = Manifest::new("parquet");
        new.files.insert("messages/part-00000.parquet".into());
        let listing = FolderListing { entries: 1, names: "blake3-sum:00".into() };
        new.folders.insert(".".into(), vec![listing.clone()]);
        let merged = old.merged_with(&new);
        assert_eq!(merged.files.len(), 2);
        assert!(merged.lists_folder(".", &listing) && !old.lists_folder(".", &listing));
        merged.write(folder.path()).unwrap();
        assert_eq!(Manifest::read(folder.path()).unwrap(), Some(merged));
        assert_eq!(names_in(folder.path()), [MANIFEST_FILE]);
        std::fs::write(folder.path().join(MANIFEST_FILE), br#"{"something": "else"}"#).unwrap();
        let error = Manifest::read(folder.path()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("name another one with -o"), "{error}");
    }
}
