#![no_main]
//! A folder of UMP `.ump.md` records as input: each file a JSON front matter between `---` lines
//! and the record's text after it. One fuzz input holds the files, split at
//! `memport_fuzz::FILE_SEPARATOR` and written as `000.ump.md`, `001.ump.md`, … The folder is
//! planned (`formats::ump::plan_markdown_folder`), its files read in name order and grouped by
//! conversation (`RecordLayout::UmpMarkdown`; a file that cannot be read becomes a record error of
//! its own), each group decoded by `UmpDecoder` under both branch policies, then extraction,
//! secret masking, the stages and the counts (`memport_fuzz::Conversion`); the grouped record
//! array memport builds must always frame. `validate::ump` must report problems, never fail on
//! the folder's own files.

use libfuzzer_sys::fuzz_target;
use memport::sources::formats::ump::plan_markdown_folder;
use memport::validate::ump::validate_folder;
use memport_fuzz::{check_run_error, check_validation, drain_plan, fresh_dir, split_files};

fuzz_target!(|data: &[u8]| {
    let folder = fresh_dir("ump-records");
    for (position, file) in split_files(data, 32).into_iter().enumerate() {
        let path = folder.join(format!("{position:03}.ump.md"));
        std::fs::write(&path, file).unwrap_or_else(|error| panic!("harness: cannot write {}: {error}", path.display()));
    }
    match plan_markdown_folder(&folder) {
        Ok(plan) => drain_plan(&plan, u64::MAX),
        Err(error) => check_run_error(&error, "planning a folder of UMP records"),
    }
    check_validation(validate_folder(&folder), &folder);
});
