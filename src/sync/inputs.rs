//! What a sync records of its inputs: a BLAKE3 checksum of each (over every file of a
//! folder, by relative path), and whether the input is a whole export, the only kind whose
//! missing conversations may be retracted.

use std::io;
use std::path::Path;

use crate::sources::InputPlan;

/// The checksum of the input at `path`: of the file, or of a folder's files in path order.
///
/// # Errors
/// I/O errors reading it.
pub fn checksum(path: &Path) -> io::Result<String> {
    if let Some(url) = crate::remote::ObjectUrl::of(path) {
        return remote_checksum(&url);
    }
    let mut hasher = blake3::Hasher::new();
    if path.is_dir() {
        let mut files = Vec::new();
        collect_files(path, path, &mut files)?;
        files.sort();
        for relative in files {
            let mut file_hasher = blake3::Hasher::new();
            file_hasher.update_reader(std::fs::File::open(path.join(&relative))?)?;
            hasher.update(relative.as_bytes());
            hasher.update(&[0]);
            hasher.update(file_hasher.finalize().as_bytes());
        }
    } else {
        hasher.update_reader(std::fs::File::open(path)?)?;
    }
    Ok(format!("blake3:{}", hasher.finalize().to_hex()))
}

/// [`checksum`] of an object (read by range), or of the objects under a prefix as of a folder.
fn remote_checksum(url: &crate::remote::ObjectUrl) -> io::Result<String> {
    use crate::remote::objects;
    use crate::remote::ranged_reader::RangedReader;
    let mut hasher = blake3::Hasher::new();
    if objects::size_of(url)?.is_some() {
        hasher.update_reader(RangedReader::open(url)?)?;
    } else {
        for listed in objects::list(url)? {
            let mut file_hasher = blake3::Hasher::new();
            file_hasher.update_reader(RangedReader::open(&listed.url)?)?;
            hasher.update(listed.url.key[url.key.len()..].trim_start_matches('/').as_bytes());
            hasher.update(&[0]);
            hasher.update(file_hasher.finalize().as_bytes());
        }
    }
    Ok(format!("blake3:{}", hasher.finalize().to_hex()))
}

fn collect_files(root: &Path, folder: &Path, files: &mut Vec<String>) -> io::Result<()> {
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect_files(root, &entry.path(), files)?;
        } else if kind.is_file() {
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap_or(&path);
            files.push(relative.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

/// Why the conversations missing from `plan` must not be retracted, or `None` when it is a
/// whole export. Only a zip or a folder is taken for one: a lone conversations file may be one
/// shard, or one file of several, and memport's own formats are not exports at all.
pub fn why_partial(plan: &InputPlan) -> Option<String> {
    if let Some(format) = plan.format {
        return Some(format!("{}: a {format} file, not a provider's export", plan.path));
    }
    let path = Path::new(&plan.path);
    let is_zip = path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("zip"));
    // A prefix on object storage is a folder; an object named there is one file.
    let is_folder = path.is_dir() || (crate::remote::is_remote(path) && plan.layout.starts_with("folder"));
    if !is_folder && !is_zip {
        return Some(format!("{}: a lone file, which may be one part of an export; give the export's zip or folder", plan.path));
    }
    if plan.warnings.0.keys().any(|kind| kind.starts_with("manifest")) {
        return Some(format!("{}: its manifest lists files that are not there", plan.path));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{SourceOptions, plan_input};

    fn example() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/chatgpt-small")
    }

    #[test]
    fn a_folder_is_a_whole_export_and_its_lone_file_is_not() {
        let folder = plan_input(&example(), &SourceOptions::default()).unwrap();
        assert_eq!(why_partial(&folder), None);
        let lone = plan_input(&example().join("conversations.json"), &SourceOptions::default()).unwrap();
        let why = why_partial(&lone).unwrap();
        assert!(why.contains("a lone file"), "{why}");
    }

    #[test]
    fn a_folder_checksum_covers_names_and_contents() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::create_dir(folder.path().join("sub")).unwrap();
        std::fs::write(folder.path().join("a.json"), "[1]").unwrap();
        std::fs::write(folder.path().join("sub/b.json"), "[2]").unwrap();
        let first = checksum(folder.path()).unwrap();
        assert!(first.starts_with("blake3:"), "{first}");
        assert_eq!(checksum(folder.path()).unwrap(), first);
        std::fs::write(folder.path().join("sub/b.json"), "[3]").unwrap();
        let changed = checksum(folder.path()).unwrap();
        assert_ne!(changed, first);
        std::fs::rename(folder.path().join("sub/b.json"), folder.path().join("sub/c.json")).unwrap();
        assert_ne!(checksum(folder.path()).unwrap(), changed);
    }
}
