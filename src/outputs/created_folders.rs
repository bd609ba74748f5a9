//! Folders a sink created for its output, removed again (when still empty) if the run does not
//! finish, so a failed run leaves no trace; once the output is published they are its own.

use std::path::{Path, PathBuf};

use crate::error::RunError;

/// The folders a sink created, outermost first.
#[derive(Debug, Default)]
pub struct CreatedFolders {
    folders: Vec<PathBuf>,
}

impl CreatedFolders {
    /// Creates `folder` and its missing parents, remembering the ones it created.
    ///
    /// # Errors
    /// I/O errors creating them.
    pub fn create(&mut self, folder: &Path) -> Result<(), RunError> {
        let missing: Vec<PathBuf> = folder.ancestors().take_while(|ancestor| !ancestor.exists()).map(Path::to_owned).collect();
        std::fs::create_dir_all(folder).map_err(|error| RunError::write(folder.display().to_string(), error))?;
        self.folders.extend(missing.into_iter().rev());
        Ok(())
    }

    /// Keeps every folder created so far: the output they hold is published.
    pub fn keep(&mut self) {
        self.folders.clear();
    }
}

impl Drop for CreatedFolders {
    fn drop(&mut self) {
        // Innermost first; `remove_dir` leaves a folder that still holds anything.
        for folder in self.folders.iter().rev() {
            let _ = std::fs::remove_dir(folder);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unkept_folders_go_when_empty_and_folders_that_were_there_stay() {
        let root = tempfile::tempdir().expect("temp dir");
        let existing = root.path().join("existing");
        std::fs::create_dir(&existing).expect("created");
        {
            let mut created = CreatedFolders::default();
            created.create(&existing.join("a").join("b")).expect("created");
            created.create(&existing.join("c")).expect("created");
            std::fs::write(existing.join("c").join("kept.txt"), b"").expect("written");
        }
        assert!(existing.is_dir() && !existing.join("a").exists(), "the created empty folders are gone");
        assert!(existing.join("c").join("kept.txt").exists(), "a folder with a file in it stays");
        {
            let mut created = CreatedFolders::default();
            created.create(&existing.join("d")).expect("created");
            created.keep();
        }
        assert!(existing.join("d").is_dir(), "kept folders stay");
    }
}
