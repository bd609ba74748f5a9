//! What `validate` prints for people: a line per file, valid or invalid, and every problem
//! with its status, code and place.

use std::fmt::Write;

use crate::validate::{UNKNOWN_FORMAT, Validation};

/// The results as text.
pub fn validations_text(results: &[Validation]) -> String {
    let mut text = String::new();
    for result in results {
        if result.is_valid() {
            let _ = writeln!(text, "{}: valid {} ({} records)", result.path, result.format, result.records);
        } else if result.format == UNKNOWN_FORMAT {
            // No format to name: the one problem says what the file is instead.
            for problem in &result.problems {
                let _ = writeln!(text, "{}: invalid: {}", result.path, problem.message);
            }
        } else {
            let count = result.problem_count();
            let _ = writeln!(text, "{}: invalid {} ({}; {count} problems)", result.path, result.format, result.status());
            for problem in &result.problems {
                let _ = writeln!(text, "  {} {} at {}: {}", problem.status, problem.code, problem.location, problem.message);
            }
            let listed = result.problems.iter().filter(|problem| problem.code != crate::validate::UNLISTED_CODE).count() as u64;
            let unlisted = count.saturating_sub(listed);
            if unlisted > 0 {
                let _ = writeln!(text, "  … and {unlisted} more, counted but not listed (the first {listed} are)");
            }
        }
        for notice in &result.notices {
            let _ = writeln!(text, "  notice: {notice}");
        }
    }
    text
}
