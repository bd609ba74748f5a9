//! Which paths a run may write, checked when the run's options are (`Options::validate`), before
//! anything is opened for writing: no output, report or rejects file may be an input, lie
//! inside an input folder or hold an input; no two of them may be one file; and none may lie
//! inside a folder output that would replace it. Paths are compared as the file system
//! resolves them: symlinks followed (also in the part of a path that does not exist yet), hard
//! links told by device and inode.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use crate::sinks::output_file::MANIFEST_FILE;
use crate::sinks::{OutputFormat, Shape};

/// A path as the file system resolves it.
struct Place<'a> {
    /// As given (shown in messages).
    given: &'a Path,
    /// Absolute, with the symlinks of its existing part resolved and the rest appended.
    resolved: PathBuf,
    /// Device and inode, when it exists.
    identity: Option<(u64, u64)>,
    is_folder: bool,
}

impl Place<'_> {
    fn of(path: &Path) -> Place<'_> {
        let metadata = std::fs::metadata(path).ok();
        Place {
            given: path,
            resolved: resolve(path),
            identity: metadata.as_ref().map(|metadata| (metadata.dev(), metadata.ino())),
            is_folder: metadata.is_some_and(|metadata| metadata.is_dir()),
        }
    }

    /// The same file or folder: one resolved path, or one inode (a hard link).
    fn is(&self, other: &Place) -> bool {
        self.resolved == other.resolved || (self.identity.is_some() && self.identity == other.identity)
    }

    /// Strictly inside `other`.
    fn is_inside(&self, other: &Place) -> bool {
        self.resolved != other.resolved && self.resolved.starts_with(&other.resolved)
    }
}

/// `path` made absolute, its longest existing part canonicalized (symlinks resolved), the rest
/// appended as written (a missing folder cannot be a symlink, so `..` there is lexical).
fn resolve(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let components: Vec<Component> = absolute.components().collect();
    for existing in (1..=components.len()).rev() {
        let prefix: PathBuf = components[..existing].iter().collect();
        let Ok(mut resolved) = std::fs::canonicalize(&prefix) else { continue };
        for component in &components[existing..] {
            match component {
                Component::ParentDir => {
                    resolved.pop();
                }
                Component::Normal(name) => resolved.push(name),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
        return resolved;
    }
    absolute
}

/// A path the run writes, and how messages name it.
struct Target<'a> {
    place: Place<'a>,
    /// As the user named it: `-o`, `the pam output`, `--report`, `--rejects`.
    label: String,
    /// What gets another path: `output`, `pam output`, `report`, `rejects file`.
    noun: String,
    /// The output's format; `None` for the report and the rejects file.
    format: Option<OutputFormat>,
}

impl Target<'_> {
    /// Whether `inner`, inside this output, is left alone by it: a folder output that replaces
    /// only its own files (PAM, Parquet) leaves any other file at its top level alone, as long
    /// as the name is not one it writes itself. `ump-md` replaces its whole folder.
    fn leaves_alone(&self, inner: &Place) -> bool {
        let own_names = match self.format.map(|format| format.descriptor().shape) {
            Some(Shape::OwnFolder { own_names, .. }) => own_names(),
            _ => return false,
        };
        let Some(name) = inner.resolved.file_name().map(|name| name.to_string_lossy()) else { return false };
        inner.resolved.parent() == Some(self.place.resolved.as_path())
            && !name.starts_with(".memport")
            && name != MANIFEST_FILE
            && !own_names.iter().any(|own| *own == name)
    }
}

/// Every problem with where the run would write, one sentence each, saying what to do.
pub fn problems(inputs: &[PathBuf], outputs: &[(OutputFormat, PathBuf)], report: Option<&Path>, rejects: Option<&Path>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut targets = Vec::with_capacity(outputs.len() + 2);
    for (format, path) in outputs {
        let (label, noun) = if outputs.len() == 1 {
            ("-o".to_owned(), "output".to_owned())
        } else {
            (format!("the {} output", format.name()), format!("{} output", format.name()))
        };
        targets.push(Target { place: Place::of(path), label, noun, format: Some(*format) });
    }
    for (path, label, noun) in [(report, "--report", "report"), (rejects, "--rejects", "rejects file")] {
        if let Some(path) = path {
            targets.push(Target { place: Place::of(path), label: label.to_owned(), noun: noun.to_owned(), format: None });
        }
    }
    // A target that cannot be written at all is said once and left out of the comparisons.
    targets.retain(|target| {
        if target.place.given.as_os_str().is_empty() {
            problems.push(format!("{} is empty; give the {} a path", target.label, target.noun));
            return false;
        }
        if target.format.is_none() && target.place.is_folder {
            problems.push(format!(
                "{} names the folder {}; give the {} a file path",
                target.label,
                target.place.given.display(),
                target.noun
            ));
            return false;
        }
        true
    });
    let input_places: Vec<Place<'_>> = inputs.iter().map(|input| Place::of(input)).collect();
    for target in &targets {
        let before = problems.len();
        for input in &input_places {
            if let Some(problem) = against_input(target, input) {
                problems.push(problem);
            }
        }
        // What is there already matters only for a target that names no input (said once).
        if problems.len() == before
            && let Some(problem) = against_what_is_there(target)
        {
            problems.push(problem);
        }
    }
    for (position, target) in targets.iter().enumerate() {
        for earlier in &targets[..position] {
            if let Some(problem) = against_target(target, earlier) {
                problems.push(problem);
            }
        }
    }
    problems
}

/// What is wrong with replacing what is at `target` already, if anything: memport replaces only
/// what it could have written itself. A folder output is checked by its manifest when it is
/// published ([`crate::outputs::publish::check_target`]); a file output, a report or a
/// rejects file must be a regular file of its kind, or empty.
fn against_what_is_there(target: &Target) -> Option<String> {
    let (label, noun, given) = (&target.label, &target.noun, target.place.given.display());
    let metadata = std::fs::symlink_metadata(target.place.given).ok()?;
    let file_type = metadata.file_type();
    if file_type.is_symlink() {
        return Some(format!(
            "{label} {given} is a symbolic link, and memport refuses to replace a link with a file; give the {noun} the path the link points to, or another path"
        ));
    }
    let folder_output = target.format.is_some_and(OutputFormat::is_folder);
    if folder_output {
        return (!file_type.is_dir()).then(|| format!("{label} {given} is a file, and the {noun} is a folder; name a folder with -o"));
    }
    if !file_type.is_file() {
        let what = if file_type.is_dir() { "a folder" } else { "not a regular file" };
        return Some(format!("{label} {given} is {what}; give the {noun} the path of a file"));
    }
    if metadata.len() == 0 || written_by_memport(target) {
        return None;
    }
    let article = if noun.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    Some(format!(
        "{label} {given} exists and is not {article} {noun} memport wrote; memport replaces only files it wrote: give the {noun} another path, or move the file away"
    ))
}

/// Whether the regular file at `target` is one memport could have written as that target: a
/// memory format file for an output, a run report, a rejects file.
fn written_by_memport(target: &Target) -> bool {
    let path = target.place.given;
    if target.format.is_some() {
        return crate::spec::detect::memory_format_of(path).is_some();
    }
    let head = crate::spec::detect::file_head(path);
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head).trim_ascii_start();
    if target.noun == "report" {
        text.starts_with(b"{") && memchr::memmem::find(text, b"\"memport_version\"").is_some()
    } else {
        text.starts_with(b"{\"level\":")
    }
}

/// What is wrong with writing `target` when `input` is read, if anything.
fn against_input(target: &Target, input: &Place) -> Option<String> {
    let (label, noun, given) = (&target.label, &target.noun, target.place.given.display());
    let shown = input.given.display();
    if target.place.is(input) {
        let what = if input.is_folder { "the input folder" } else { "the input" };
        return Some(format!("{label} names {what} {shown}; give the {noun} another path"));
    }
    if input.is_folder && target.place.is_inside(input) {
        return Some(format!("{label} {given} is inside the input folder {shown}; give the {noun} a path outside it"));
    }
    if input.is_inside(&target.place) {
        return Some(format!(
            "the input {shown} is inside {label} {given}, which memport would replace; give the {noun} a path that holds no input"
        ));
    }
    None
}

/// What is wrong with writing both `target` and `earlier`, if anything.
fn against_target(target: &Target, earlier: &Target) -> Option<String> {
    if target.place.is(&earlier.place) {
        return Some(format!(
            "{} names the same file as {} ({}); give the {} another path",
            target.label,
            earlier.label,
            earlier.place.given.display(),
            target.noun
        ));
    }
    let (outer, inner) = if target.place.is_inside(&earlier.place) {
        (earlier, target)
    } else if earlier.place.is_inside(&target.place) {
        (target, earlier)
    } else {
        return None;
    };
    if outer.leaves_alone(&inner.place) {
        return None;
    }
    Some(format!(
        "{} {} is inside {} {}, which memport replaces; give the {} a path outside it",
        inner.label,
        inner.place.given.display(),
        outer.label,
        outer.place.given.display(),
        inner.noun
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::pam::STORE_FILE;

    fn outputs(format: OutputFormat, path: &Path) -> Vec<(OutputFormat, PathBuf)> {
        vec![(format, path.to_owned())]
    }

    #[test]
    fn a_report_naming_the_input_is_refused_with_what_to_do() {
        let folder = tempfile::tempdir().unwrap();
        let input = folder.path().join("chatgpt.json");
        std::fs::write(&input, b"[]").unwrap();
        let found = problems(
            std::slice::from_ref(&input),
            &outputs(OutputFormat::Aimem, &folder.path().join("out.aimem.json")),
            Some(&input),
            None,
        );
        assert_eq!(found, [format!("--report names the input {}; give the report another path", input.display())]);
    }

    #[test]
    fn an_output_reaching_the_input_through_a_symlink_a_hard_link_or_dot_dot_is_the_input() {
        let folder = tempfile::tempdir().unwrap();
        let input = folder.path().join("chatgpt.json");
        std::fs::write(&input, b"[]").unwrap();
        let symlink = folder.path().join("link.json");
        std::os::unix::fs::symlink(&input, &symlink).unwrap();
        let hard_link = folder.path().join("hard.json");
        std::fs::hard_link(&input, &hard_link).unwrap();
        std::fs::create_dir(folder.path().join("sub")).unwrap();
        let dotted = folder.path().join("sub").join("..").join("chatgpt.json");
        for output in [&symlink, &hard_link, &dotted] {
            let found = problems(std::slice::from_ref(&input), &outputs(OutputFormat::Mif, output), None, None);
            assert_eq!(found.len(), 1, "{output:?}: {found:?}");
            assert!(found[0].starts_with("-o names the input ") && found[0].ends_with("give the output another path"), "{found:?}");
        }
    }

    #[test]
    fn an_output_in_an_input_folder_or_naming_it_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let export = folder.path().join("export");
        std::fs::create_dir(&export).unwrap();
        let inputs = [export.clone()];
        let inside = problems(&inputs, &outputs(OutputFormat::AimemNdjson, &export.join("new").join("x.ndjson")), None, None);
        assert_eq!(inside.len(), 1, "{inside:?}");
        assert!(inside[0].contains("is inside the input folder") && inside[0].ends_with("give the output a path outside it"), "{inside:?}");
        let itself = problems(&inputs, &outputs(OutputFormat::Pam, &export), None, None);
        assert_eq!(itself, [format!("-o names the input folder {}; give the output another path", export.display())]);
        let rejects = export.join("rejects.ndjson");
        let found = problems(&inputs, &outputs(OutputFormat::Mif, &folder.path().join("m.json")), None, Some(&rejects));
        assert!(found.len() == 1 && found[0].starts_with("--rejects "), "{found:?}");
    }

    #[test]
    fn an_input_inside_a_folder_output_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let records = folder.path().join("records");
        std::fs::create_dir(&records).unwrap();
        let input = records.join("a.ump.md");
        std::fs::write(&input, b"---\n{}\n---\n").unwrap();
        let found = problems(std::slice::from_ref(&input), &outputs(OutputFormat::UmpMd, &records), None, None);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("is inside -o") && found[0].contains("which memport would replace"), "{found:?}");
    }

    #[test]
    fn outputs_report_and_rejects_may_not_name_one_file() {
        let folder = tempfile::tempdir().unwrap();
        let input = folder.path().join("in.json");
        let (first, second) = (folder.path().join("a.json"), folder.path().join("b.json"));
        let two = vec![(OutputFormat::Aimem, first.clone()), (OutputFormat::Mif, first.clone())];
        let found = problems(std::slice::from_ref(&input), &two, None, None);
        assert_eq!(
            found,
            [format!("the mif output names the same file as the aimem output ({}); give the mif output another path", first.display())]
        );
        let found = problems(std::slice::from_ref(&input), &outputs(OutputFormat::Aimem, &first), Some(&first), None);
        assert_eq!(found, [format!("--report names the same file as -o ({}); give the report another path", first.display())]);
        let found = problems(std::slice::from_ref(&input), &outputs(OutputFormat::Aimem, &first), Some(&second), Some(&second));
        assert_eq!(
            found,
            [format!("--rejects names the same file as --report ({}); give the rejects file another path", second.display())]
        );
    }

    #[test]
    fn a_report_may_sit_in_a_dataset_folder_but_not_in_a_folder_memport_replaces_whole() {
        let folder = tempfile::tempdir().unwrap();
        let input = folder.path().join("in.json");
        let dataset = folder.path().join("corpus");
        assert!(
            problems(std::slice::from_ref(&input), &outputs(OutputFormat::Parquet, &dataset), Some(&dataset.join("run.json")), None)
                .is_empty()
        );
        let clash =
            problems(std::slice::from_ref(&input), &outputs(OutputFormat::Parquet, &dataset), Some(&dataset.join("messages")), None);
        assert_eq!(clash.len(), 1, "{clash:?}");
        let store = problems(std::slice::from_ref(&input), &outputs(OutputFormat::Pam, &dataset), Some(&dataset.join(STORE_FILE)), None);
        assert_eq!(store.len(), 1, "{store:?}");
        let records = folder.path().join("records");
        let found = problems(std::slice::from_ref(&input), &outputs(OutputFormat::UmpMd, &records), Some(&records.join("run.json")), None);
        assert_eq!(
            found,
            [format!(
                "--report {} is inside -o {}, which memport replaces; give the report a path outside it",
                records.join("run.json").display(),
                records.display()
            )]
        );
    }

    #[test]
    fn a_report_naming_a_folder_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let found = problems(
            &[folder.path().join("in.json")],
            &outputs(OutputFormat::Aimem, &folder.path().join("a.json")),
            Some(folder.path()),
            None,
        );
        assert_eq!(found, [format!("--report names the folder {}; give the report a file path", folder.path().display())]);
    }

    #[test]
    fn separate_paths_pass() {
        let folder = tempfile::tempdir().unwrap();
        let export = folder.path().join("export");
        std::fs::create_dir(&export).unwrap();
        let out = folder.path().join("out");
        let several = vec![(OutputFormat::Aimem, out.join("memory.aimem.json")), (OutputFormat::Pam, out.join("pam"))];
        assert!(problems(&[export], &several, Some(&out.join("run.json")), Some(&out.join("rejects.ndjson"))).is_empty());
    }
}
