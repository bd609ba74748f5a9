//! Every pipeline file in pipelines/ loads, checks and runs.

use crate::util::root;

#[test]
fn shipped_pipelines_load_and_run() {
    let mut found = 0;
    for entry in std::fs::read_dir(root().join("pipelines")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "toml") {
            found += 1;
            let job = memport::pipeline::config::load_job(&path, crate::util::EXPORTED_AT)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            let out = tempfile::tempdir().unwrap();
            match job {
                memport::pipeline::config::Job::Convert(mut options) => {
                    for (_, output) in &mut options.outputs {
                        *output = out.path().join(output.file_name().unwrap());
                    }
                    options.report = None;
                    options.rejects = None;
                    let report = memport::run(&options).unwrap();
                    assert!(report.counts.balances());
                }
                memport::pipeline::config::Job::Sync { options, formats, .. } => {
                    let sync = memport::sync::SyncOptions {
                        convert: options,
                        formats,
                        state: out.path().join("state.db"),
                        output_root: out.path().join("sync"),
                        store: None,
                    };
                    let first = memport::sync::sync(&sync).unwrap();
                    assert!(first.full && first.run.counts.balances(), "{}: the first sync is full", path.display());
                    let again = memport::sync::sync(&sync).unwrap();
                    assert_eq!(again.run.counts.messages_written, 0, "{}: the same export again writes nothing", path.display());
                }
            }
        }
    }
    assert!(found >= 1);
}

#[test]
fn pipeline_problems_are_all_reported_at_once() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("bad.toml");
    std::fs::write(&path, "version = 2\ninputs = []\nbranches = \"some\"\n[[outputs]]\nformat = \"docx\"\npath = \"x\"\n").unwrap();
    let error = memport::pipeline::config::load(&path, 0).unwrap_err().to_string();
    for needle in ["version", "inputs", "outputs[0].format", "branches"] {
        assert!(error.contains(needle), "{needle} in {error}");
    }
}
