//! The reference validators of PAM and MIF, as their users run them: `pam validate` (PyPI's
//! `portable-ai-memory`) and `mif validate` (PyPI's `mif-tools`), installed by `scripts/test`
//! beside the Parquet readers, over what memport writes from every real sample, every bundled
//! example and a generated export.

use std::path::{Path, PathBuf};
use std::process::Command;

use memport::sinks::OutputFormat;

use crate::util::{REAL_SAMPLES, options, root, shared};

/// A command of the test environment's Python (`MEMPORT_TEST_PYTHON`, set by `scripts/test`).
fn tool(name: &str) -> PathBuf {
    let python = std::env::var("MEMPORT_TEST_PYTHON").unwrap_or_default();
    let path = Path::new(&python).parent().map(|bin| bin.join(name)).unwrap_or_default();
    assert!(
        path.is_file(),
        "`{name}` is not beside MEMPORT_TEST_PYTHON ({python:?}); run the tests with scripts/test, which installs it (tests/requirements.txt) into .venv"
    );
    path
}

/// The bundled examples, in name order.
fn examples() -> Vec<PathBuf> {
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("examples")).unwrap().map(|entry| entry.unwrap().path()).collect();
    examples.sort();
    examples
}

/// The small export the bench generator makes, written under `scratch`.
fn generated(scratch: &Path) -> PathBuf {
    let generated = scratch.join("generated");
    let made = Command::new("python3")
        .arg(root().join("benches/gen_chatgpt.py"))
        .args(["--small", "--quiet", "--out"])
        .arg(&generated)
        .status()
        .unwrap();
    assert!(made.success(), "benches/gen_chatgpt.py --small failed");
    generated
}

/// Runs `validator` with `arguments` and fails with its output unless it accepts the file.
fn accepted(validator: &Path, arguments: &[&Path], input: &Path) {
    let output = Command::new(validator).args(arguments).output().unwrap();
    assert!(
        output.status.success(),
        "{} rejects what memport wrote from {}:\n{}{}",
        validator.display(),
        input.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Converts each of `inputs` to PAM and MIF and has both reference validators check the result.
fn validators_accept_what_is_written_from(inputs: &[PathBuf]) {
    let (pam, mif) = (tool("pam"), tool("mif"));
    let scratch = tempfile::tempdir().unwrap();
    for (index, input) in inputs.iter().enumerate() {
        let out = scratch.path().join(format!("out-{index}"));
        let report = memport::run(&options(std::slice::from_ref(input), &out, &[OutputFormat::Pam, OutputFormat::Mif]))
            .unwrap_or_else(|error| panic!("{} converts: {error}", input.display()));
        assert!(report.counts.balances(), "{}: {:?}", input.display(), report.counts);
        let pam_store = out.join(OutputFormat::Pam.default_file_name());
        accepted(&pam, &[Path::new("validate"), &pam_store], input);
        let mif_file = out.join(OutputFormat::Mif.default_file_name());
        accepted(&mif, &[Path::new("validate"), &mif_file], input);
    }
}

#[test]
fn pam_and_mif_written_from_every_real_sample_pass_the_reference_validators() {
    let samples: Vec<PathBuf> = REAL_SAMPLES.iter().map(|sample| shared(sample)).collect();
    validators_accept_what_is_written_from(&samples);
}

#[test]
fn pam_and_mif_written_from_every_bundled_example_pass_the_reference_validators() {
    validators_accept_what_is_written_from(&examples());
}

#[test]
fn pam_and_mif_written_from_a_generated_export_pass_the_reference_validators() {
    let scratch = tempfile::tempdir().unwrap();
    validators_accept_what_is_written_from(&[generated(scratch.path())]);
}
