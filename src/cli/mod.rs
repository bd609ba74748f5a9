//! The command line: its arguments ([`args`]), how many workers a run gets ([`threads`]), and
//! what each command prints ([`run_text`], [`inspect_text`], [`validate_text`]). `main.rs`
//! parses, calls the library, prints what these render and maps outcomes to exit codes.

pub mod args;
pub mod inspect_text;
pub mod run_text;
pub mod threads;
pub mod validate_text;
