#![no_main]
//! An export zip: the archive opened as memport opens an input (`Container::open`, by its `PK`
//! magic), its entries listed (which must come sorted by name, for deterministic runs) and read
//! through the inflating thread, then the whole input planned as `memport convert` plans it
//! (`sources::plan_input`: each candidate entry sniffed, the provider or memory format told by
//! content, its planner run) and every stream of the plan converted (`memport_fuzz::Conversion`).
//!
//! An entry may inflate to far more than the archive holds: each is read up to 1 MiB here, and
//! the plan's streams are converted only while their declared sizes stay under 64 MiB, reading at
//! most that much of each.

use std::io::Read;

use libfuzzer_sys::fuzz_target;
use memport::sources::container::Container;
use memport::sources::{plan_input, SourceOptions};
use memport_fuzz::{check_run_error, drain_plan, fresh_dir};

/// Entries read directly.
const MOST_ENTRIES: usize = 16;
/// Bytes read of each entry.
const ENTRY_BYTES: u64 = 1 << 20;
/// Declared bytes of a plan's streams past which they are not converted, and bytes read of each.
const PLAN_BYTES: u64 = 64 << 20;

fuzz_target!(|data: &[u8]| {
    let folder = fresh_dir("zip");
    let path = folder.join("export.zip");
    std::fs::write(&path, data).unwrap_or_else(|error| panic!("harness: cannot write {}: {error}", path.display()));
    if let Ok(container @ Container::Zip(_)) = Container::open(&path) {
        match container.entries() {
            Ok(entries) => {
                assert!(entries.windows(2).all(|pair| pair[0].name <= pair[1].name), "zip: the entries are not sorted by name");
                for entry in entries.iter().take(MOST_ENTRIES) {
                    match entry.open() {
                        Ok(reader) => {
                            let mut bytes = Vec::new();
                            // A damaged entry is an I/O error here, as in a run.
                            let _ = reader.take(ENTRY_BYTES).read_to_end(&mut bytes);
                        }
                        Err(error) => check_run_error(&error, "opening a zip entry"),
                    }
                }
            }
            Err(error) => check_run_error(&error, "listing a zip"),
        }
    }
    match plan_input(&path, &SourceOptions::default()) {
        Ok(plan) => {
            if plan.streams.iter().map(|stream| stream.entry.size).sum::<u64>() <= PLAN_BYTES {
                drain_plan(&plan, PLAN_BYTES);
            }
        }
        Err(error) => check_run_error(&error, "planning the input"),
    }
});
