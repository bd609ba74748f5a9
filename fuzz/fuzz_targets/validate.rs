#![no_main]
//! `memport validate` on a file: the format told by content (`spec::detect`, reading on past the
//! first MiB when it must) and checked by that format's validator (`validate::validate_path`:
//! PAM store, conversation or embeddings file, AIME, MIF, UMP, AIMEM bundle or stream). Besides
//! never panicking, validation keeps its documented promise: a readable file gives problems, never
//! an error ("a file that is not JSON at all is a 422 problem, not an error"), and every problem
//! is a 409 or a 422 with a code.

use libfuzzer_sys::fuzz_target;
use memport::validate::validate_path;
use memport_fuzz::{check_validation, input_file};

fuzz_target!(|data: &[u8]| {
    let path = input_file("input.json", data);
    check_validation(validate_path(&path), &path);
});
