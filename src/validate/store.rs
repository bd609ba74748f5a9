//! `memport validate` of a memory store (`--to store`): a memport store of a schema this
//! build reads, sound page by page and in its full-text index (a file) or each record the JSON
//! of its row (PostgreSQL), whose every record keeps the UMP 0.1 rules.

use std::path::Path;

use crate::error::RunError;
use crate::store::Store;
use crate::validate::{Problem, Problems, Validation, ump};

/// The first bytes of every SQLite database file.
pub const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

/// Validates the store at `path`: a file, or a PostgreSQL URL.
///
/// # Errors
/// None beyond what the problems say: a file that cannot be opened as a store is a problem.
pub fn validate_file(path: &Path) -> Result<Validation, RunError> {
    let display = crate::store::shown_location(path);
    let name = match crate::store::is_postgres_url(&display) {
        true => display.clone(),
        false => path.file_name().map_or_else(|| display.clone(), |name| name.to_string_lossy().into_owned()),
    };
    let mut validation = Validation { path: display, format: "store", records: 0, problems: Problems::new(), notices: Vec::new() };
    let problem = |code: &'static str, location: String, message: String| Problem { status: 422, code, location, message };
    let store = match Store::open(path, false) {
        Ok(store) => store,
        Err(error) => {
            validation.problems.push(problem("not_a_store", name, error.to_string()));
            return Ok(validation);
        }
    };
    match store.check_integrity() {
        Ok(findings) => validation.problems.extend(findings.into_iter().map(|finding| problem("corrupt", name.clone(), finding))),
        Err(error) => validation.problems.push(problem("corrupt", name.clone(), error.to_string())),
    }
    let mut problems = Problems::new();
    let counted = store.for_each_record(|json| {
        match serde_json::from_str::<serde_json::Value>(json) {
            Ok(record) => {
                let id = record["id"].as_str().unwrap_or_default().to_owned();
                problems.extend(
                    ump::record_problems(&record)
                        .into_iter()
                        .map(|found| Problem { location: format!("{name}#{id}{}", found.location.trim_start_matches("record")), ..found }),
                );
            }
            Err(error) => problems.push(problem("not_json", name.clone(), format!("a stored record is not JSON: {error}"))),
        }
        Ok(())
    });
    match counted {
        Ok(count) => validation.records = count,
        Err(error) => validation.problems.push(problem("corrupt", name.clone(), error.to_string())),
    }
    validation.problems.append(problems);
    if let Ok((_, tombstoned)) = store.counts()
        && tombstoned > 0
    {
        validation.notices.push(format!("{tombstoned} records are tombstoned (forgotten, or their conversation was deleted)"));
    }
    Ok(validation)
}
