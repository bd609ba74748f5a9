//! A malformed-input corpus run against the `memport` binary: broken, hostile and odd inputs of
//! every provider and memory format, and wrong invocations. Every case is a row of one table
//! (builder, arguments, expected exit code, what memport must say); one test per part of the
//! corpus (a provider, the memory formats, the invocations, pipeline files) runs its cases and
//! lists every one that fails with what happened. For every case memport must not
//! crash or hang, must leave every file it was given as it was, must leave nothing behind after
//! a failed run, and a report it writes must balance.

mod build;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use self::build::*;

/// How long a case may run before it counts as a hang (the binary may be a debug build).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Endless and blocking inputs must be refused quickly, without reading them.
const QUICK: u64 = 10;
/// Inputs of many megabytes.
const LARGE: u64 = 60;
/// Address space a run may take (KiB): a run that reads an endless stream into memory, or
/// starts 100,000 threads, fails here instead of taking the machine down.
const MEMORY_LIMIT_KIB: u64 = 4 << 20;
/// Longest acceptable line of a rejects file: a reason names the problem, it does not repeat a
/// record of many megabytes.
const MAX_REJECT_LINE: usize = 64 << 10;
/// Set this to a part of case names to run only those cases.
const FILTER_VARIABLE: &str = "MEMPORT_MALFORMED";

/// Exit codes (docs/user-guide.md#exit-codes).
const OK: &[i32] = &[0];
/// The run finished and wrote its outputs; some records were rejected (or `validate`: invalid).
const REJECTS: &[i32] = &[1];
/// Refused or failed; nothing is left in place.
const FAILS: &[i32] = &[2];

/// What memport must say about a case: in its stderr or stdout, its rejects file, or the
/// warnings and notes of its report (compared in lower case).
#[derive(Debug, Clone, Copy)]
enum Says {
    /// A control case or a no-crash case: nothing in particular.
    Anything,
    /// At least one of these.
    AnyOf(&'static [&'static str]),
    /// Every one of these (problems reported at once).
    AllOf(&'static [&'static str]),
}

// The message classes. Words that every summary line holds ("duplicate", "empty", "rejected",
// "written") are not used alone.
const NESTED: Says = Says::AnyOf(&["nested", "nests", "depth", "levels deep", "recursion"]);
const NESTED_OR_CHECKSUM: Says = Says::AnyOf(&["nested", "nests", "depth", "levels deep", "recursion", "checksum"]);
const NESTED_OR_NO_EXPORT: Says = Says::AnyOf(&["nested", "nests", "depth", "levels deep", "recursion", "export found"]);
const TRUNCATED: Says = Says::AnyOf(&["truncated", "ended early", "input_ended_early", "ends inside", "unexpected end", "eof"]);
const TRUNCATED_OR_CHECKSUM: Says = Says::AnyOf(&["truncated", "ended early", "ends inside", "unexpected end", "eof", "checksum"]);
const TRUNCATED_OR_NO_EXPORT: Says = Says::AnyOf(&["truncated", "ended early", "ends inside", "export found"]);
const NOT_UTF8: Says = Says::AnyOf(&["utf-8", "utf8"]);
const UTF16: Says = Says::AnyOf(&["utf-16"]);
const EMPTY: Says = Says::AnyOf(&["is empty", "empty file", "file is empty"]);
const LONE_SURROGATE: Says = Says::AnyOf(&["lone_surrogate", "surrogate"]);
const CLASH: Says =
    Says::AnyOf(&["refus", "same file", "names the input", "inside the input", "is an input", "is also", "would overwrite", "own input"]);
const EXISTS: Says = Says::AnyOf(&["refus", "exists", "not written by memport", "did not write"]);
const NOT_REGULAR: Says = Says::AnyOf(&["not a regular file", "regular file", "device", "fifo", "named pipe", "endless"]);
const NOT_REGULAR_OR_EMPTY: Says =
    Says::AnyOf(&["not a regular file", "regular file", "device", "fifo", "named pipe", "is empty", "empty file"]);
const NOT_REGULAR_OR_EXISTS: Says = Says::AnyOf(&["not a regular file", "regular file", "device", "fifo", "named pipe", "refus", "exists"]);
const NOT_REGULAR_OR_NO_EXPORT: Says = Says::AnyOf(&["not a regular file", "regular file", "device", "fifo", "named pipe", "export found"]);
const NOT_REGULAR_OR_OUTSIDE: Says = Says::AnyOf(&["not a regular file", "regular file", "device", "fifo", "named pipe", "outside"]);
const NO_EXPORT: Says = Says::AnyOf(&["export found", "not an export"]);
const NO_EXPORT_OR_EMPTY: Says = Says::AnyOf(&["export found", "not an export", "is empty", "empty archive", "no entries"]);
const ZIP_BROKEN: Says = Says::AnyOf(&["invalid zip", "not a zip", "archive", "eocd", "central directory"]);
const ZIP_CORRUPT: Says = Says::AnyOf(&["crc", "corrupt", "invalid", "checksum", "deflate"]);
const DUPLICATE_ENTRY: Says = Says::AnyOf(&["duplicate entr", "duplicate name", "twice", "same name", "two entries"]);
const TRAILING: Says = Says::AnyOf(&["trailing", "more data follows", "after the array", "after the end", "appended"]);
const BAD_DATE: Says = Says::AnyOf(&["2026-02-30", "impossible date", "invalid date", "no such date", "not a date"]);
const YEAR_RANGE: Says = Says::AnyOf(&["9999", "10000", "out of range", "year"]);
const QUOTE: Says = Says::AnyOf(&["quote"]);
const QUOTE_OR_TRUNCATED: Says = Says::AnyOf(&["quote", "truncated", "ended early"]);
const NOT_ARRAY: Says = Says::AnyOf(&["not an array", "is an object", "expected an array", "must be an array", "where an array should be"]);
const NOT_ARRAY_OR_NO_EXPORT: Says =
    Says::AnyOf(&["not an array", "is an object", "expected an array", "where an array should be", "export found"]);
const NOT_OBJECT: Says = Says::AnyOf(&["not an object", "not a json object", "invalid type", "expected an object"]);

/// Convert to an AIMEM stream in a folder that does not exist yet, with the report and the
/// rejects file beside it. `{in}` is what the builder returned, `{dir}` the case's folder.
const CONVERT: &[&str] = &[
    "convert",
    "{in}",
    "--to",
    "aimem-ndjson",
    "-o",
    "{dir}/out/memory.aimem.ndjson",
    "--report",
    "{dir}/report.json",
    "--rejects",
    "{dir}/rejects.ndjson",
    "--extract",
    "off",
    "-q",
];
/// As [`CONVERT`], to a PAM store: the path that keeps every provider field.
const CONVERT_TO_PAM: &[&str] = &[
    "convert",
    "{in}",
    "--to",
    "pam",
    "-o",
    "{dir}/out/store",
    "--report",
    "{dir}/report.json",
    "--rejects",
    "{dir}/rejects.ndjson",
    "--extract",
    "off",
    "-q",
];
/// As [`CONVERT`], to a Parquet dataset.
const CONVERT_TO_PARQUET: &[&str] = &[
    "convert",
    "{in}",
    "--to",
    "parquet",
    "-o",
    "{dir}/out/corpus",
    "--report",
    "{dir}/report.json",
    "--rejects",
    "{dir}/rejects.ndjson",
    "--extract",
    "off",
    "-q",
];
const VALIDATE: &[&str] = &["validate", "{in}"];
const INSPECT: &[&str] = &["inspect", "{in}"];
const RUN: &[&str] = &["run", "{in}"];

/// One row of the corpus.
struct Case {
    name: String,
    /// The exit codes a correct memport may give (more than one where either is right).
    exit: &'static [i32],
    says: Says,
    args: Vec<String>,
    /// Writes the input into the case's folder and returns the path `{in}` stands for.
    build: Box<dyn Fn(&Path) -> PathBuf>,
    /// Messages the report must count as written (the rest of the input goes on).
    written: u64,
    timeout: Duration,
    env: Vec<(&'static str, &'static str)>,
}

fn case(name: impl Into<String>, exit: &'static [i32], says: Says, args: &[&str], build: impl Fn(&Path) -> PathBuf + 'static) -> Case {
    Case {
        name: name.into(),
        exit,
        says,
        args: args.iter().map(|arg| (*arg).to_owned()).collect(),
        build: Box::new(build),
        written: 0,
        timeout: DEFAULT_TIMEOUT,
        env: Vec::new(),
    }
}

impl Case {
    /// The report must count at least `messages` as written.
    fn writes(mut self, messages: u64) -> Case {
        self.written = messages;
        self
    }

    fn within(mut self, seconds: u64) -> Case {
        self.timeout = Duration::from_secs(seconds);
        self
    }

    /// More arguments after the row's.
    fn plus(mut self, extra: &[&str]) -> Case {
        self.args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        self
    }

    fn env(mut self, key: &'static str, value: &'static str) -> Case {
        self.env.push((key, value));
        self
    }
}

// Where a hole goes in the second ChatGPT conversation.
fn hole_in_metadata(conversation: &mut Value) {
    conversation["mapping"]["u"]["message"]["metadata"] = json!({"deep": HOLE});
}

fn hole_in_parts(conversation: &mut Value) {
    conversation["mapping"]["u"]["message"]["content"]["parts"] = json!(["text", HOLE]);
}

fn hole_as_node(conversation: &mut Value) {
    conversation["mapping"]["deep"] = json!(HOLE);
}

fn hole_as_content(conversation: &mut Value) {
    conversation["mapping"]["u"]["message"]["content"] = json!(HOLE);
}

/// The two-conversation export whose second conversation asks `question` (raw JSON may be
/// substituted into it afterwards).
fn chatgpt_second_asking(question: &str) -> String {
    format!("[{},{}]", chatgpt_first(), to_json(&chatgpt_conversation("c2", question)))
}

/// ChatGPT as one file, a zip, a folder and shards.
fn chatgpt_cases() -> Vec<Case> {
    vec![
        case("chatgpt_valid_control", OK, Says::Anything, CONVERT, |d| chatgpt_file(d, chatgpt_two())).writes(4),
        case("chatgpt_utf8_bom", OK, Says::Anything, CONVERT, |d| chatgpt_file(d, format!("\u{feff}{}", chatgpt_two()))).writes(4),
        case("chatgpt_empty_file", &[1, 2], EMPTY, CONVERT, |d| chatgpt_file(d, "")),
        case("chatgpt_whitespace_only", &[1, 2], EMPTY, CONVERT, |d| chatgpt_file(d, " \n\t\r\n".repeat(100))),
        case("chatgpt_utf16le_bom", FAILS, UTF16, CONVERT, |d| chatgpt_file(d, utf16le(&chatgpt_two(), true))),
        case("chatgpt_utf16be_bom", FAILS, UTF16, CONVERT, |d| chatgpt_file(d, utf16be(&chatgpt_two()))),
        case("chatgpt_utf16le_without_bom", FAILS, UTF16, CONVERT, |d| chatgpt_file(d, utf16le(&chatgpt_two(), false))),
        case("chatgpt_utf32le_bom", FAILS, Says::AnyOf(&["utf-32", "utf-16", "not utf-8"]), CONVERT, |d| {
            chatgpt_file(d, utf32le(&chatgpt_two()))
        }),
        case("chatgpt_nul_bytes_only", FAILS, NO_EXPORT, CONVERT, |d| chatgpt_file(d, vec![0u8; 4096])),
        case("chatgpt_raw_nul_in_string", REJECTS, Says::AnyOf(&["control character", "\\u0000", "nul byte"]), CONVERT, |d| {
            chatgpt_file(d, chatgpt_second_asking("nul RAWNUL here").replace("RAWNUL", "\0"))
        })
        .writes(2),
        case("chatgpt_escaped_nul_in_string", OK, Says::Anything, CONVERT, |d| chatgpt_file(d, chatgpt_second_asking("nul \u{0} here")))
            .writes(4),
        case("chatgpt_bad_utf8_in_string", REJECTS, NOT_UTF8, CONVERT, |d| {
            chatgpt_file(d, replace_bytes(chatgpt_second_asking("BADBYTES").as_bytes(), b"BADBYTES", b"bad \xff\xfe \xc3( bytes"))
        })
        .writes(2),
        case("chatgpt_bad_utf8_between_elements", REJECTS, NOT_UTF8, CONVERT, |d| {
            chatgpt_file(
                d,
                [b"[".as_slice(), chatgpt_first().as_bytes(), b",\xff\xfe".as_slice(), chatgpt_second().as_bytes(), b"]".as_slice()]
                    .concat(),
            )
        })
        .writes(2),
        case("chatgpt_overlong_utf8", REJECTS, NOT_UTF8, CONVERT, |d| {
            chatgpt_file(d, replace_bytes(chatgpt_second_asking("OVERLONG").as_bytes(), b"OVERLONG", b"\xc0\xaf\xe0\x80\xaf"))
        })
        .writes(2),
        case("chatgpt_utf8_encoded_surrogate", REJECTS, NOT_UTF8, CONVERT, |d| {
            chatgpt_file(d, replace_bytes(chatgpt_second_asking("SURROGATE").as_bytes(), b"SURROGATE", b"\xed\xa0\x80"))
        })
        .writes(2),
        case("chatgpt_lone_high_surrogate", OK, LONE_SURROGATE, CONVERT, |d| {
            chatgpt_file(d, chatgpt_second_asking("LONE").replace("LONE", "\\ud800 alone"))
        })
        .writes(4),
        case("chatgpt_lone_low_surrogate", OK, LONE_SURROGATE, CONVERT, |d| {
            chatgpt_file(d, chatgpt_second_asking("LONE").replace("LONE", "alone \\udfff"))
        })
        .writes(4),
        case("chatgpt_reversed_surrogate_pair", OK, LONE_SURROGATE, CONVERT, |d| {
            chatgpt_file(d, chatgpt_second_asking("LONE").replace("LONE", "\\udc00\\ud800"))
        })
        .writes(4),
        case("chatgpt_lone_surrogate_in_title", OK, LONE_SURROGATE, CONVERT, |d| {
            let text = chatgpt_second_mutated(|c| c["title"] = json!("TITLE"));
            chatgpt_file(d, text.replace("\"TITLE\"", "\"t \\ud83d\""))
        })
        .writes(4),
        case("chatgpt_lone_surrogate_in_id", &[0, 1], LONE_SURROGATE, CONVERT, |d| {
            chatgpt_file(d, chatgpt_two().replace("\"id\":\"c2\"", "\"id\":\"c2\\udc00\""))
        })
        .writes(2),
        // 100,000 levels of nesting inside one conversation: that conversation is rejected
        // naming the depth, and the first one is still written.
        case("chatgpt_deep_array_in_metadata", REJECTS, NESTED, CONVERT, |d| {
            chatgpt_file(d, splice(&chatgpt_second_mutated(hole_in_metadata), &deep_array()))
        })
        .writes(2),
        case("chatgpt_deep_object_in_metadata", REJECTS, NESTED, CONVERT, |d| {
            chatgpt_file(d, splice(&chatgpt_second_mutated(hole_in_metadata), &deep_object()))
        })
        .writes(2),
        case("chatgpt_deep_array_in_parts", REJECTS, NESTED, CONVERT, |d| {
            chatgpt_file(d, splice(&chatgpt_second_mutated(hole_in_parts), &deep_array()))
        })
        .writes(2),
        case("chatgpt_deep_object_in_parts", REJECTS, NESTED, CONVERT, |d| {
            chatgpt_file(d, splice(&chatgpt_second_mutated(hole_in_parts), &deep_object()))
        })
        .writes(2),
        case("chatgpt_deep_array_as_mapping_node", REJECTS, NESTED, CONVERT, |d| {
            chatgpt_file(d, splice(&chatgpt_second_mutated(hole_as_node), &deep_array()))
        })
        .writes(2),
        case("chatgpt_deep_object_as_content", REJECTS, NESTED, CONVERT, |d| {
            chatgpt_file(d, splice(&chatgpt_second_mutated(hole_as_content), &deep_object()))
        })
        .writes(2),
        case("chatgpt_deep_array_top_level_element", REJECTS, NESTED, CONVERT, |d| {
            chatgpt_file(d, format!("[{},{}]", chatgpt_first(), deep_array()))
        })
        .writes(2),
        case("chatgpt_deep_object_top_level_element", REJECTS, NESTED, CONVERT, |d| {
            chatgpt_file(d, format!("[{},{}]", chatgpt_first(), deep_object()))
        })
        .writes(2),
        case("chatgpt_deep_array_unclosed_at_the_end", REJECTS, TRUNCATED, CONVERT, |d| {
            chatgpt_file(d, format!("[{},{}", chatgpt_first(), "[".repeat(DEPTH)))
        })
        .writes(2),
        // Detection reads the first element: either refusal or a reject is right.
        case("chatgpt_deep_array_first_element", &[1, 2], NESTED_OR_NO_EXPORT, CONVERT, |d| {
            chatgpt_file(d, format!("[{},{}]", deep_array(), chatgpt_first()))
        }),
        case("chatgpt_deep_nesting_to_pam", REJECTS, NESTED, CONVERT_TO_PAM, |d| {
            chatgpt_file(d, splice(&chatgpt_second_mutated(hole_in_metadata), &deep_array()))
        })
        .writes(2),
        case("chatgpt_deep_nesting_to_parquet", REJECTS, NESTED, CONVERT_TO_PARQUET, |d| {
            chatgpt_file(d, splice(&chatgpt_second_mutated(hole_in_parts), &deep_object()))
        })
        .writes(2),
        case("chatgpt_huge_string_element", REJECTS, NOT_OBJECT, CONVERT, |d| {
            chatgpt_file(d, format!("[{},{}]", chatgpt_first(), huge_string(16 << 20)))
        })
        .writes(2)
        .within(LARGE),
        case("chatgpt_huge_message_text", OK, Says::Anything, CONVERT, |d| {
            chatgpt_file(d, to_json(&json!([chatgpt_conversation("c1", &"y".repeat(12 << 20))])))
        })
        .writes(2)
        .within(LARGE),
        case("chatgpt_number_and_literal_elements", REJECTS, NOT_OBJECT, CONVERT, |d| {
            chatgpt_file(d, format!("[{},1e999999,null,true]", chatgpt_first()))
        })
        .writes(2),
        case("chatgpt_times_out_of_range", &[0, 1], Says::AnyOf(&["message_time_inferred", "out of range", "year"]), CONVERT, |d| {
            chatgpt_file(
                d,
                chatgpt_second_mutated(|c| {
                    c["mapping"]["u"]["message"]["create_time"] = json!(1e300);
                    c["mapping"]["a"]["message"]["create_time"] = json!(-1e300);
                }),
            )
        })
        .writes(2),
        // `cat a.json b.json`: the second array is not silently dropped.
        case("chatgpt_two_arrays_concatenated", REJECTS, TRAILING, CONVERT, |d| {
            chatgpt_file(d, format!("[{}]\n[{}]", chatgpt_first(), chatgpt_second()))
        })
        .writes(2),
        case("chatgpt_garbage_after_the_array", REJECTS, TRAILING, CONVERT, |d| {
            chatgpt_file(d, format!("{}\nthis is not JSON", chatgpt_two()))
        })
        .writes(4),
        case("chatgpt_object_instead_of_array", &[1, 2], NOT_ARRAY_OR_NO_EXPORT, CONVERT, |d| chatgpt_file(d, chatgpt_first())),
        // Truncation at many points: before the first element is known, the file is not an
        // export (or is reported truncated); after, what came before is written.
        case("chatgpt_cut_after_open_bracket", &[1, 2], TRUNCATED_OR_NO_EXPORT, CONVERT, |d| chatgpt_cut(d, |_, _| 1)),
        case("chatgpt_cut_in_first_key", &[1, 2], TRUNCATED_OR_NO_EXPORT, CONVERT, |d| {
            chatgpt_cut(d, |first, _| 1 + first.find("\"id\"").unwrap() + 2)
        }),
        case("chatgpt_cut_before_mapping", &[1, 2], TRUNCATED_OR_NO_EXPORT, CONVERT, |d| {
            chatgpt_cut(d, |first, _| 1 + first.find("\"mapping\"").unwrap())
        }),
        case("chatgpt_cut_in_first_mapping", REJECTS, TRUNCATED, CONVERT, |d| {
            chatgpt_cut(d, |first, _| 1 + first.find("\"mapping\"").unwrap() + 30)
        }),
        case("chatgpt_cut_after_first_element", REJECTS, TRUNCATED, CONVERT, |d| chatgpt_cut(d, |first, _| 1 + first.len())).writes(2),
        case("chatgpt_cut_after_comma", REJECTS, TRUNCATED, CONVERT, |d| chatgpt_cut(d, |first, _| second_start(first))).writes(2),
        case("chatgpt_cut_after_second_brace", REJECTS, TRUNCATED, CONVERT, |d| chatgpt_cut(d, |first, _| second_start(first) + 1))
            .writes(2),
        case("chatgpt_cut_in_second_key", REJECTS, TRUNCATED, CONVERT, |d| chatgpt_cut(d, |first, _| second_start(first) + 4)).writes(2),
        case("chatgpt_cut_in_second_string", REJECTS, TRUNCATED, CONVERT, |d| {
            chatgpt_cut(d, |first, second| second_start(first) + second.find("second question").unwrap() + 6)
        })
        .writes(2),
        case("chatgpt_cut_in_second_number", REJECTS, TRUNCATED, CONVERT, |d| {
            chatgpt_cut(d, |first, second| second_start(first) + second.find("1700000002").unwrap() + 4)
        })
        .writes(2),
        case("chatgpt_cut_after_second_colon", REJECTS, TRUNCATED, CONVERT, |d| {
            chatgpt_cut(d, |first, second| second_start(first) + second.find("\"current_node\":").unwrap() + 15)
        })
        .writes(2),
        case("chatgpt_cut_in_second_literal", REJECTS, TRUNCATED, CONVERT, |d| {
            chatgpt_cut(d, |first, second| second_start(first) + second.find("null").unwrap() + 2)
        })
        .writes(2),
        case("chatgpt_cut_before_final_bracket", REJECTS, TRUNCATED, CONVERT, |d| {
            chatgpt_cut(d, |first, second| second_start(first) + second.len())
        })
        .writes(4),
        case("chatgpt_cut_in_unicode_escape", REJECTS, TRUNCATED, CONVERT, |d| {
            let text = chatgpt_second_asking("ESCAPE").replace("ESCAPE", "esc\\u00e9ape");
            let cut = text.find("\\u00e9").unwrap() + 4;
            chatgpt_file(d, &text[..cut])
        })
        .writes(2),
        // Zips.
        case("chatgpt_zip_control", OK, Says::Anything, CONVERT, |d| zip(d, &[("conversations.json", chatgpt_two().as_bytes())], true))
            .writes(4),
        case("chatgpt_zip_stored_control", OK, Says::Anything, CONVERT, |d| {
            zip(d, &[("conversations.json", chatgpt_two().as_bytes())], false)
        })
        .writes(4),
        // Two entries of the same name: a reject or a warning, never a silent read of one.
        case("chatgpt_zip_duplicate_entry_names", &[0, 1, 2], DUPLICATE_ENTRY, CONVERT, zip_with_duplicate_names),
        case("chatgpt_zip_bomb_of_spaces", FAILS, NO_EXPORT, CONVERT, |d| zip_bomb(d, "", "")).within(LARGE),
        // 200 MB of white space inside a valid array is valid JSON: streamed through, or
        // refused as a bomb, within the time limit either way.
        case("chatgpt_zip_bomb_inside_the_array", &[0, 2], Says::Anything, CONVERT, |d| {
            zip_bomb(d, &format!("[{},", chatgpt_first()), &format!("{}]", chatgpt_second()))
        })
        .writes(4)
        .within(LARGE),
        case("chatgpt_zip_cut_in_half", FAILS, ZIP_BROKEN, CONVERT, |d| {
            let path = zip(d, &[("conversations.json", chatgpt_two().as_bytes())], true);
            truncate(&path, 0.5);
            path
        }),
        case("chatgpt_zip_corrupt_data", &[1, 2], ZIP_CORRUPT, CONVERT, |d| {
            let path = zip(d, &[("conversations.json", chatgpt_two().as_bytes())], true);
            let mut bytes = read(&path);
            bytes[60] ^= 0xFF;
            bytes[70] ^= 0xFF;
            put(d, "in/export.zip", bytes)
        }),
        case("chatgpt_zip_without_entries", FAILS, NO_EXPORT_OR_EMPTY, CONVERT, |d| zip(d, &[], true)),
        case("chatgpt_zip_inside_a_zip", FAILS, NO_EXPORT, CONVERT, |d| {
            let inner = zip_bytes(&[("conversations.json", chatgpt_two().as_bytes())], true);
            zip(d, &[("inner.zip", inner.as_slice())], true)
        }),
        case("chatgpt_zip_utf16_entry", FAILS, UTF16, CONVERT, |d| {
            zip(d, &[("conversations.json", utf16le(&chatgpt_two(), true).as_slice())], true)
        }),
        case("chatgpt_zip_truncated_entry", REJECTS, TRUNCATED, CONVERT, |d| {
            let cut = second_start(&chatgpt_first()) + 10;
            zip(d, &[("conversations.json", &chatgpt_two().as_bytes()[..cut])], true)
        })
        .writes(2),
        case("chatgpt_zip_deep_nesting", REJECTS, NESTED, CONVERT, |d| {
            zip(d, &[("conversations.json", splice(&chatgpt_second_mutated(hole_in_metadata), &deep_array()).as_bytes())], true)
        })
        .writes(2),
        case("chatgpt_zip_magic_without_a_zip", FAILS, ZIP_BROKEN, CONVERT, |d| {
            put(d, "in/export.zip", [b"PK\x03\x04".as_slice(), b"\0garbage".repeat(100).as_slice()].concat())
        }),
        // Folders.
        case("chatgpt_folder_control", OK, Says::Anything, CONVERT, |d| {
            folder(d, &[("conversations.json", chatgpt_two().as_bytes()), ("user.json", b"{}".as_slice())])
        })
        .writes(4),
        case("chatgpt_folder_empty", FAILS, NO_EXPORT, CONVERT, |d| folder(d, &[])),
        // A FIFO beside the export must not block the walk; skipping it is fine.
        case("chatgpt_folder_with_a_fifo", &[0, 1, 2], Says::Anything, CONVERT, |d| {
            let path = folder(d, &[("conversations.json", chatgpt_two().as_bytes())]);
            fifo(&path.join("zz-notes.json"));
            path
        })
        .within(QUICK),
        case("chatgpt_folder_fifo_as_conversations", FAILS, NOT_REGULAR_OR_NO_EXPORT, CONVERT, |d| {
            fifo(&d.join("in/conversations.json"));
            d.join("in")
        })
        .within(QUICK),
        case("chatgpt_folder_symlink_to_dev_zero", FAILS, NOT_REGULAR_OR_NO_EXPORT, CONVERT, |d| {
            symlink("/dev/zero", &d.join("in/conversations.json"));
            d.join("in")
        })
        .within(QUICK),
        case("chatgpt_folder_of_two_providers", FAILS, Says::AnyOf(&["several providers", "more than one provider"]), CONVERT, |d| {
            folder(d, &[("conversations.json", chatgpt_two().as_bytes()), ("grok/prod-grok-backend.json", grok_two().as_bytes())])
        }),
        case("chatgpt_folder_conversations_is_a_folder", FAILS, NO_EXPORT, CONVERT, |d| {
            std::fs::create_dir_all(d.join("in/conversations.json")).unwrap();
            d.join("in")
        }),
        // 2026 shards.
        case("chatgpt_shards_control", OK, Says::Anything, CONVERT, |d| chatgpt_shards(d, shard_one().as_bytes(), shard_two().as_bytes()))
            .writes(4),
        case("chatgpt_shard_truncated", REJECTS, TRUNCATED, CONVERT, |d| {
            let first = shard_one();
            chatgpt_shards(d, &first.as_bytes()[..first.len() - 20], shard_two().as_bytes())
        })
        .writes(2),
        case("chatgpt_shard_utf16", &[1, 2], UTF16, CONVERT, |d| chatgpt_shards(d, shard_one().as_bytes(), &utf16le(&shard_two(), true))),
        case("chatgpt_shard_empty", &[1, 2], EMPTY, CONVERT, |d| chatgpt_shards(d, shard_one().as_bytes(), b"")),
        case("chatgpt_shard_deep_element", REJECTS, NESTED, CONVERT, |d| {
            chatgpt_shards(d, shard_one().as_bytes(), format!("[{},{}]", chatgpt_second(), deep_array()).as_bytes())
        })
        .writes(4),
        case("chatgpt_shard_of_two_arrays", REJECTS, TRAILING, CONVERT, |d| {
            let second = format!("{}[{}]", shard_two(), to_json(&chatgpt_conversation("c3", "third question")));
            chatgpt_shards(d, shard_one().as_bytes(), second.as_bytes())
        })
        .writes(4),
        case("chatgpt_shard_missing_from_manifest", &[0, 1], Says::AnyOf(&["manifest_shard_missing"]), CONVERT, |d| {
            let path = chatgpt_shards(d, shard_one().as_bytes(), shard_two().as_bytes());
            std::fs::remove_file(path.join("conversations-001.json")).unwrap();
            path
        })
        .writes(2),
        case("chatgpt_manifest_broken", OK, Says::AnyOf(&["manifest_unreadable"]), CONVERT, |d| {
            let path = chatgpt_shards(d, shard_one().as_bytes(), shard_two().as_bytes());
            put(d, "in/export_manifest.json", "{\"export_files\": [{\"path\"");
            path
        })
        .writes(4),
    ]
}

fn claude_cases() -> Vec<Case> {
    vec![
        case("claude_valid_control", OK, Says::Anything, CONVERT, |d| claude_file(d, claude_two())).writes(4),
        case("claude_deep_array_in_a_content_block", REJECTS, NESTED, CONVERT, |d| {
            let text = claude_second_mutated(|c| c["chat_messages"][0]["content"] = json!([{"type": "text", "text": "x"}, HOLE]));
            claude_file(d, splice(&text, &deep_array()))
        })
        .writes(2),
        case("claude_deep_object_in_a_content_block", REJECTS, NESTED, CONVERT, |d| {
            let text = claude_second_mutated(|c| c["chat_messages"][0]["content"] = json!([{"type": "text", "text": "x"}, HOLE]));
            claude_file(d, splice(&text, &deep_object()))
        })
        .writes(2),
        case("claude_deep_object_in_tool_input", REJECTS, NESTED, CONVERT, |d| {
            let text = claude_second_mutated(|c| {
                c["chat_messages"][1]["content"] = json!([{"type": "tool_use", "name": "search", "input": HOLE}])
            });
            claude_file(d, splice(&text, &deep_object()))
        })
        .writes(2),
        case("claude_deep_array_top_level_element", REJECTS, NESTED, CONVERT, |d| {
            claude_file(d, format!("[{},{}]", to_json(&claude_conversation("k1", "first question")), deep_array()))
        })
        .writes(2),
        case("claude_truncated", REJECTS, TRUNCATED, CONVERT, |d| {
            let text = claude_two();
            let cut = text.find("k2-q").unwrap() + 10;
            claude_file(d, &text[..cut])
        })
        .writes(2),
        case("claude_utf16", FAILS, UTF16, CONVERT, |d| claude_file(d, utf16le(&claude_two(), true))),
        case("claude_chat_messages_is_an_object", REJECTS, Says::AnyOf(&["chat_messages"]), CONVERT, |d| {
            claude_file(d, claude_second_mutated(|c| c["chat_messages"] = json!({"a": 1})))
        })
        .writes(2),
        case("claude_huge_message_text", OK, Says::Anything, CONVERT, |d| {
            claude_file(d, to_json(&json!([claude_conversation("k1", &"z".repeat(12 << 20))])))
        })
        .writes(2)
        .within(LARGE),
        case("claude_bad_utf8_in_text", REJECTS, NOT_UTF8, CONVERT, |d| {
            claude_file(d, replace_bytes(claude_two().as_bytes(), b"second question", b"second \xff\xfe question"))
        })
        .writes(2),
        case("claude_two_arrays_concatenated", REJECTS, TRAILING, CONVERT, |d| {
            let first = to_json(&json!([claude_conversation("k1", "first question")]));
            let second = to_json(&json!([claude_conversation("k2", "second question")]));
            claude_file(d, first + &second)
        })
        .writes(2),
        case("claude_impossible_date", REJECTS, BAD_DATE, CONVERT, |d| {
            claude_file(d, claude_second_mutated(|c| c["chat_messages"][1]["created_at"] = json!("2026-02-30T17:33:19Z")))
        })
        .writes(2),
        case(
            "claude_broken_memories_beside_conversations",
            &[0, 1],
            Says::AnyOf(&["memories.json", "truncated", "unreadable"]),
            CONVERT,
            |d| {
                folder(
                    d,
                    &[("conversations.json", claude_two().as_bytes()), ("memories.json", b"[{\"conversations_memory\": \"abc".as_slice())],
                )
            },
        )
        .writes(4),
        case(
            "claude_manifest_without_its_zips",
            FAILS,
            Says::AnyOf(&["manifest_file_missing", "not beside", "none of them"]),
            CONVERT,
            |d| claude_manifest(d, false),
        ),
        case("claude_manifest_with_one_zip_missing", &[0, 1], Says::AnyOf(&["manifest_file_missing", "not beside"]), CONVERT, |d| {
            claude_manifest(d, true)
        })
        .writes(4),
    ]
}

fn grok_cases() -> Vec<Case> {
    vec![
        case("grok_valid_control", OK, Says::Anything, CONVERT, |d| grok_file(d, grok_two())).writes(4),
        case("grok_folder_control", OK, Says::Anything, CONVERT, |d| {
            put(d, "in/ttl/30d/export_data/u1/prod-grok-backend.json", grok_two());
            d.join("in")
        })
        .writes(4),
        // A clear problem, not "0 conversations" and exit 0.
        case("grok_conversations_is_an_object", &[1, 2], NOT_ARRAY, CONVERT, |d| {
            grok_file(d, to_json(&json!({"conversations": {"g1": grok_conversation("g1", "first question")}, "projects": []})))
        }),
        case("grok_conversations_is_null", &[1, 2], NOT_ARRAY_OR_NO_EXPORT, CONVERT, |d| {
            grok_file(d, to_json(&json!({"conversations": null, "projects": []})))
        }),
        case("grok_conversations_is_a_string", &[1, 2], NOT_ARRAY_OR_NO_EXPORT, CONVERT, |d| {
            grok_file(d, to_json(&json!({"conversations": "[]", "projects": []})))
        }),
        case("grok_top_level_array", FAILS, NO_EXPORT, CONVERT, |d| {
            grok_file(d, format!("[{}]", grok_backend(json!([grok_conversation("g1", "first question")]))))
        }),
        case("grok_responses_is_an_object", REJECTS, Says::AnyOf(&["responses"]), CONVERT, |d| {
            grok_file(d, grok_second_mutated(|c| c["responses"] = json!({"r": 1})))
        })
        .writes(2),
        case("grok_deep_array_in_a_response", REJECTS, NESTED, CONVERT, |d| {
            grok_file(d, splice(&grok_second_mutated(|c| c["responses"][0]["response"]["metadata"] = json!(HOLE)), &deep_array()))
        })
        .writes(2),
        case("grok_deep_object_in_a_response", REJECTS, NESTED, CONVERT, |d| {
            grok_file(d, splice(&grok_second_mutated(|c| c["responses"][0]["response"]["metadata"] = json!(HOLE)), &deep_object()))
        })
        .writes(2),
        case("grok_deep_array_as_a_conversation", REJECTS, NESTED, CONVERT, |d| {
            grok_file(d, splice(&grok_backend(json!([grok_conversation("g1", "first question"), HOLE])), &deep_array()))
        })
        .writes(2),
        case("grok_truncated", REJECTS, TRUNCATED, CONVERT, |d| {
            let text = grok_two();
            let cut = text.find("g2-q").unwrap() + 10;
            grok_file(d, &text[..cut])
        })
        .writes(2),
        case("grok_utf16", FAILS, UTF16, CONVERT, |d| grok_file(d, utf16le(&grok_two(), true))),
        // Times past 9999-12-31: rejected, never wrapped to year 0000.
        case("grok_time_beyond_year_9999", REJECTS, YEAR_RANGE, CONVERT, |d| {
            grok_file(
                d,
                grok_second_mutated(|c| c["responses"][1]["response"]["create_time"]["$date"]["$numberLong"] = json!("253402300800000")),
            )
        })
        .writes(2),
        case("grok_time_i64_max", REJECTS, YEAR_RANGE, CONVERT, |d| {
            grok_file(
                d,
                grok_second_mutated(|c| {
                    c["responses"][1]["response"]["create_time"]["$date"]["$numberLong"] = json!("9223372036854775807")
                }),
            )
        })
        .writes(2),
        case("grok_time_9999_with_negative_offset", REJECTS, YEAR_RANGE, CONVERT, |d| {
            grok_file(d, grok_second_mutated(|c| c["responses"][1]["response"]["create_time"] = json!("9999-12-31T23:30:00-05:00")))
        })
        .writes(2),
    ]
}

fn copilot_cases() -> Vec<Case> {
    vec![
        case("copilot_valid_control", OK, Says::Anything, CONVERT, |d| copilot_file(d, copilot_with(&[]))).writes(4),
        // `--timezone -05:00` as two arguments: a negative offset is a value, not an option.
        case("copilot_timezone_as_separate_argument", OK, Says::Anything, CONVERT, |d| copilot_file(d, copilot_with(&[])))
            .plus(&["--timezone", "-05:00"])
            .writes(4),
        case("copilot_timezone_with_equals_sign", OK, Says::Anything, CONVERT, |d| copilot_file(d, copilot_with(&[])))
            .plus(&["--timezone=-05:00"])
            .writes(4),
        case("copilot_timezone_name_refused", FAILS, Says::AnyOf(&["europe/berlin"]), CONVERT, |d| copilot_file(d, copilot_with(&[])))
            .plus(&["--timezone", "Europe/Berlin"]),
        case("copilot_timezone_out_of_range", FAILS, Says::AnyOf(&["+25:00"]), CONVERT, |d| copilot_file(d, copilot_with(&[])))
            .plus(&["--timezone", "+25:00"]),
        // Impossible dates are rejected, not rolled over to the next month.
        case("copilot_impossible_date_february_30", REJECTS, BAD_DATE, CONVERT, |d| {
            copilot_file(d, copilot_with(&[["Odd", "2026-02-30T10:00:00", "Human", "hello?"]]))
        })
        .writes(4),
        // Unreadable rather than impossible: rejected, or the documented `time_unreadable`
        // fallback (docs/providers/copilot.md), but never silently.
        case(
            "copilot_impossible_month_13",
            &[0, 1],
            Says::AnyOf(&["2026-13-01", "month", "invalid date", "time_unreadable"]),
            CONVERT,
            |d| copilot_file(d, copilot_with(&[["Odd", "2026-13-01T10:00:00", "Human", "hello?"]])),
        )
        .writes(4),
        case("copilot_impossible_time_25_61", &[0, 1], Says::AnyOf(&["25:61", "hour", "invalid time", "time_unreadable"]), CONVERT, |d| {
            copilot_file(d, copilot_with(&[["Odd", "2026-03-01T25:61:00", "Human", "hello?"]]))
        })
        .writes(4),
        case("copilot_us_date_february_30", REJECTS, Says::AnyOf(&["2/30/2026", "invalid date", "impossible date"]), CONVERT, |d| {
            copilot_file(
                d,
                "\u{feff}CreatedAt,MessageContent,Author,ChatName\r\n2/30/2026 3:04:05 +01:00,hello?,user,Odd\r\n\
                 1/2/2026 3:04:05 +01:00,fine,user,Ok\r\n",
            )
        })
        .writes(1),
        // Near year 9999 a negative offset moves the time past the end of the range.
        case("copilot_year_9999_in_a_negative_zone", REJECTS, YEAR_RANGE, CONVERT, |d| {
            copilot_file(d, copilot_with(&[["Late", "9999-12-31T23:30:00", "Human", "late?"]]))
        })
        .plus(&["--timezone=-05:00"])
        .writes(4),
        case("copilot_year_9999_negative_offset_in_the_cell", REJECTS, YEAR_RANGE, CONVERT, |d| {
            copilot_file(d, copilot_with(&[["Late", "9999-12-31T23:30:00-05:00", "Human", "late?"]]))
        })
        .writes(4),
        case("copilot_year_1_positive_offset_in_the_cell", REJECTS, Says::AnyOf(&["0001", "0000", "out of range", "year"]), CONVERT, |d| {
            copilot_file(d, copilot_with(&[["Early", "0001-01-01T00:30:00+05:00", "Human", "early?"]]))
        })
        .writes(4),
        case("copilot_unclosed_quote", &[0, 1], QUOTE, CONVERT, |d| {
            let text = copilot_with(&[])
                + "Open,2026-04-02T10:00:00,Human,\"this quote never closes\r\nPlants,2026-04-02T09:00:00,AI,a row the quote swallows\r\n";
            copilot_file(d, text)
        })
        .writes(4),
        case("copilot_cut_inside_a_quoted_cell", &[0, 1], QUOTE_OR_TRUNCATED, CONVERT, |d| {
            copilot_file(d, copilot_with(&[]) + "Later,2026-04-01T10:00:00,AI,\"an answer cut off in the mid")
        })
        .writes(4),
        // Line numbers are the file's (1-based, the header is line 1): a quoted cell over two
        // lines puts the short row on line 5.
        case("copilot_short_row_names_its_line", REJECTS, Says::AnyOf(&["line 5"]), CONVERT, |d| {
            copilot_file(
                d,
                "\u{feff}Conversation,Time,Author,Message\r\nPlants,2026-06-01T10:29:09,AI,\"a cell\r\nover two lines\"\r\n\
                 Plants,2026-06-01T10:29:09,Human,why?\r\nshort,row\r\n",
            )
        })
        .writes(2),
        case("copilot_bad_utf8_in_a_cell", OK, Says::AnyOf(&["csv_not_utf8"]), CONVERT, |d| {
            copilot_file(d, replace_bytes(copilot_with(&[]).as_bytes(), b"Water less", b"Water \xff\xfe less"))
        })
        .writes(4),
        case("copilot_utf16le_bom", FAILS, UTF16, CONVERT, |d| {
            copilot_file(d, utf16le(copilot_with(&[]).trim_start_matches('\u{feff}'), true))
        }),
        case("copilot_utf16be_bom", FAILS, UTF16, CONVERT, |d| copilot_file(d, utf16be(copilot_with(&[]).trim_start_matches('\u{feff}')))),
        case("copilot_header_only", OK, Says::Anything, CONVERT, |d| copilot_file(d, COPILOT_HEADER)),
        case("copilot_nul_byte_in_a_cell", OK, Says::Anything, CONVERT, |d| {
            copilot_file(d, copilot_with(&[]).replace("Water less", "Water\0less"))
        })
        .writes(4),
        case("copilot_huge_cell", OK, Says::Anything, CONVERT, |d| {
            copilot_file(d, copilot_with(&[["Big", "2026-06-02T10:00:00", "Human", "b".repeat(12 << 20).as_str()]]))
        })
        .writes(5)
        .within(LARGE),
    ]
}

fn gemini_cases() -> Vec<Case> {
    vec![
        case("gemini_json_valid_control", OK, Says::Anything, CONVERT, |d| gemini_takeout(d, "MyActivity.json", gemini_two())).writes(4),
        case("gemini_json_truncated", REJECTS, TRUNCATED, CONVERT, |d| {
            let text = gemini_two();
            let cut = text.find("Prompted first").unwrap() + 10;
            gemini_takeout(d, "MyActivity.json", &text[..cut])
        })
        .writes(2),
        case("gemini_json_utf16", FAILS, UTF16, CONVERT, |d| gemini_takeout(d, "MyActivity.json", utf16le(&gemini_two(), true))),
        case("gemini_json_deep_array_in_a_record", REJECTS, NESTED, CONVERT, |d| {
            let mut older = gemini_older();
            older["details"] = json!(HOLE);
            gemini_takeout(d, "MyActivity.json", splice(&to_json(&json!([gemini_newer(), older])), &deep_array()))
        })
        .writes(2),
        case("gemini_json_deep_object_in_a_record", REJECTS, NESTED, CONVERT, |d| {
            let mut older = gemini_older();
            older["details"] = json!(HOLE);
            gemini_takeout(d, "MyActivity.json", splice(&to_json(&json!([gemini_newer(), older])), &deep_object()))
        })
        .writes(2),
        // 100,000 nested lists in an answer: no quadratic indentation, no crash.
        case("gemini_json_deeply_nested_html_lists", &[0, 1], Says::Anything, CONVERT, |d| {
            let lists = gemini_record("Prompted lists", "2026-02-04T10:02:11.063Z", &"<ul><li>x".repeat(DEPTH));
            gemini_takeout(d, "MyActivity.json", to_json(&json!([gemini_newer(), lists])))
        })
        .within(LARGE),
        case("gemini_json_two_arrays_concatenated", REJECTS, TRAILING, CONVERT, |d| {
            gemini_takeout(d, "MyActivity.json", format!("[{}][{}]", to_json(&gemini_newer()), to_json(&gemini_older())))
        })
        .writes(2),
        case("gemini_json_huge_string_record", REJECTS, NOT_OBJECT, CONVERT, |d| {
            gemini_takeout(d, "MyActivity.json", format!("[{},{}]", to_json(&gemini_newer()), huge_string(16 << 20)))
        })
        .writes(2)
        .within(LARGE),
        case("gemini_html_valid_control", OK, Says::Anything, CONVERT, |d| gemini_takeout(d, "MyActivity.html", gemini_html_two()))
            .writes(4),
        // A page cut inside an answer: that record is not written as complete.
        case("gemini_html_cut_mid_answer", REJECTS, TRUNCATED, CONVERT, |d| {
            let html = gemini_html_two();
            let cut = html.find("The first answer").unwrap() + 9;
            gemini_takeout(d, "MyActivity.html", &html[..cut])
        })
        .writes(2),
        case("gemini_html_cut_mid_tag", REJECTS, TRUNCATED, CONVERT, |d| {
            let html = gemini_html_two();
            let cut = html.rfind("<div class=\"outer-cell").unwrap() + 14;
            gemini_takeout(d, "MyActivity.html", &html[..cut])
        })
        .writes(2),
        case("gemini_html_cut_mid_date", REJECTS, TRUNCATED, CONVERT, |d| {
            let html = gemini_html_two();
            let cut = html.find("Jul 26, 2026, 8:07").unwrap() + 8;
            gemini_takeout(d, "MyActivity.html", &html[..cut])
        })
        .writes(2),
        case("gemini_html_utf16", FAILS, UTF16, CONVERT, |d| gemini_takeout(d, "MyActivity.html", utf16le(&gemini_html_two(), true))),
        case(
            "gemini_html_impossible_date",
            REJECTS,
            Says::AnyOf(&["feb 30", "invalid date", "impossible date", "readable date"]),
            CONVERT,
            |d| {
                let html = gemini_html_two().replace("Jul 26, 2026, 9:07:57 AM CEST", "Feb 30, 2026, 9:07:57 AM CET");
                gemini_takeout(d, "MyActivity.html", html)
            },
        )
        .writes(2),
        case("gemini_html_deeply_nested_divs", &[0, 1], Says::Anything, CONVERT, |d| {
            let answer = "<div>".repeat(DEPTH) + "x" + &"</div>".repeat(DEPTH);
            let html = format!("{GEMINI_HTML_HEAD}{}{GEMINI_HTML_TAIL}", gemini_cell("deep", "Jul 26, 2026, 8:07:57 AM CEST", &answer));
            gemini_takeout(d, "MyActivity.html", html)
        })
        .within(LARGE),
        case("gemini_html_bad_utf8_in_an_answer", &[0, 1], NOT_UTF8, CONVERT, |d| {
            gemini_takeout(d, "MyActivity.html", replace_bytes(gemini_html_two().as_bytes(), b"The second answer", b"The \xff\xfe answer"))
        })
        .writes(4),
    ]
}

/// Every memory format as input: a control for `convert` and `validate`, and for the
/// single-file formats truncation, UTF-16 and deep nesting.
fn memory_format_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for format in ["aimem", "aimem-ndjson", "pam", "mif", "ump", "ump-ndjson", "ump-md", "aime"] {
        cases.push(case(format!("{format}_input_control"), OK, Says::Anything, CONVERT, move |d| memory_input(d, format)).writes(4));
        cases.push(case(format!("{format}_validate_control"), OK, Says::Anything, VALIDATE, move |d| memory_input(d, format)));
    }
    // Where deep nesting goes in the last record (the second conversation's).
    let anchors = [
        ("aimem", "\"tags\":[", ""),
        ("aimem-ndjson", "\"tags\":[", ""),
        ("mif", "\"metadata\":{", "\"deep\":"),
        ("ump", "\"structured\":{", "\"deep\":"),
        ("ump-ndjson", "\"structured\":{", "\"deep\":"),
        // The last `"metadata":{` of an AIME document is its own, which memport does not read:
        // the nesting goes into the last message instead.
        ("aime", "\"relationships\":[", ""),
    ];
    for (format, anchor, key) in anchors {
        // AIMEM is checked whole before it is read, and refused whole (docs/formats/aimem.md).
        let checked_whole = format.starts_with("aimem");
        let nest = move |path: &Path| insert_after_last(path, anchor, &format!("{key}{},", deep_array()));
        let truncated = if checked_whole {
            case(format!("{format}_input_truncated"), FAILS, TRUNCATED_OR_CHECKSUM, CONVERT, move |d| {
                memory_input_mutated(d, format, |path| truncate(path, 0.7))
            })
        } else {
            case(format!("{format}_input_truncated"), REJECTS, TRUNCATED, CONVERT, move |d| {
                memory_input_mutated(d, format, |path| truncate(path, 0.7))
            })
            .writes(2)
        };
        cases.push(truncated);
        cases
            .push(case(format!("{format}_input_utf16"), FAILS, UTF16, CONVERT, move |d| memory_input_mutated(d, format, rewrite_as_utf16)));
        let nested = if checked_whole {
            case(format!("{format}_input_deep_nesting"), &[1, 2], NESTED_OR_CHECKSUM, CONVERT, move |d| {
                memory_input_mutated(d, format, nest)
            })
        } else {
            case(format!("{format}_input_deep_nesting"), REJECTS, NESTED, CONVERT, move |d| memory_input_mutated(d, format, nest)).writes(2)
        };
        cases.push(nested);
        cases.push(case(format!("{format}_validate_truncated"), REJECTS, TRUNCATED_OR_CHECKSUM, VALIDATE, move |d| {
            memory_input_mutated(d, format, |path| truncate(path, 0.7))
        }));
        cases.push(case(format!("{format}_validate_deep_nesting"), &[1, 2], NESTED, VALIDATE, move |d| {
            memory_input_mutated(d, format, nest)
        }));
    }
    cases.extend([
        case("ump_input_two_arrays_concatenated", REJECTS, TRAILING, CONVERT, |d| {
            memory_input_mutated(d, "ump", |path| {
                let bytes = read(path);
                std::fs::write(path, [bytes.as_slice(), bytes.as_slice()].concat()).unwrap();
            })
        })
        .writes(2),
        case("mif_memories_is_an_object", &[1, 2], NOT_ARRAY, CONVERT, |d| {
            memory_input_mutated(d, "mif", |path| {
                let text = String::from_utf8(read(path)).unwrap();
                let text = text.replacen("\"memories\":[", "\"memories\":{\"x\":[", 1).replacen(
                    "\n],\n\"export_meta\"",
                    "\n]},\n\"export_meta\"",
                    1,
                );
                std::fs::write(path, text).unwrap();
            })
        }),
        case("aimem_bundle_two_objects_concatenated", FAILS, TRAILING, CONVERT, |d| {
            memory_input_mutated(d, "aimem", |path| {
                let bytes = read(path);
                std::fs::write(path, [bytes.as_slice(), bytes.as_slice()].concat()).unwrap();
            })
        }),
        // A PAM store: each conversation file is read on its own.
        case("pam_conversation_file_truncated", REJECTS, TRUNCATED, CONVERT, |d| {
            memory_input_mutated(d, "pam", |store| truncate(&pam_second_conversation(store), 0.6))
        })
        .writes(2),
        case("pam_conversation_file_missing", REJECTS, Says::AnyOf(&["missing", "no such file", "not found"]), CONVERT, |d| {
            memory_input_mutated(d, "pam", |store| std::fs::remove_file(pam_second_conversation(store)).unwrap())
        })
        .writes(2),
        case("pam_conversation_file_utf16", REJECTS, UTF16, CONVERT, |d| {
            memory_input_mutated(d, "pam", |store| rewrite_as_utf16(&pam_second_conversation(store)))
        })
        .writes(2),
        case("pam_conversation_file_deep_nesting", REJECTS, NESTED, CONVERT, |d| {
            memory_input_mutated(d, "pam", |store| {
                insert_after_last(&pam_second_conversation(store), "\"raw_metadata\":{", &format!("\"deep\":{},", deep_array()))
            })
        })
        .writes(2),
        case("pam_memory_store_truncated", &[1, 2], TRUNCATED, CONVERT, |d| {
            memory_input_mutated(d, "pam", |store| truncate(&store.join("memory-store.json"), 0.5))
        }),
        case("pam_memory_store_empty", &[1, 2], EMPTY, CONVERT, |d| {
            memory_input_mutated(d, "pam", |store| std::fs::write(store.join("memory-store.json"), "").unwrap())
        }),
        case("pam_storage_ref_outside_the_store", &[1, 2], Says::AnyOf(&["outside"]), CONVERT, |d| {
            memory_input_mutated(d, "pam", |store| {
                std::fs::copy(pam_second_conversation(store), store.with_file_name("outside.json")).unwrap();
                pam_point_second_at(store, "../outside.json");
            })
        })
        .writes(2),
        case("pam_storage_ref_to_dev_zero", &[1, 2], NOT_REGULAR_OR_OUTSIDE, CONVERT, |d| {
            memory_input_mutated(d, "pam", |store| pam_point_second_at(store, "/dev/zero"))
        })
        .writes(2)
        .within(QUICK),
        case("pam_validate_storage_ref_to_dev_zero", &[1, 2], NOT_REGULAR_OR_OUTSIDE, VALIDATE, |d| {
            memory_input_mutated(d, "pam", |store| pam_point_second_at(store, "/dev/zero"))
        })
        .within(QUICK),
        // A folder of `.ump.md` records: each file is read on its own.
        case("ump_md_file_without_front_matter", REJECTS, Says::AnyOf(&["front matter", "---"]), CONVERT, |d| {
            memory_input_mutated(d, "ump-md", |folder| std::fs::write(last_ump_md(folder), "just some text\n").unwrap())
        })
        .writes(2),
        case(
            "ump_md_front_matter_truncated",
            REJECTS,
            Says::AnyOf(&["truncated", "ended early", "unexpected end", "eof", "front matter"]),
            CONVERT,
            |d| memory_input_mutated(d, "ump-md", |folder| truncate(&last_ump_md(folder), 0.5)),
        )
        .writes(2),
        case("ump_md_file_utf16", REJECTS, UTF16, CONVERT, |d| {
            memory_input_mutated(d, "ump-md", |folder| rewrite_as_utf16(&last_ump_md(folder)))
        })
        .writes(2),
        case("ump_md_deep_front_matter", REJECTS, NESTED, CONVERT, |d| {
            memory_input_mutated(d, "ump-md", |folder| {
                insert_after_last(&last_ump_md(folder), "\"structured\": {", &format!("\"deep\":{},", deep_array()))
            })
        })
        .writes(2),
        // A FIFO among the records must not block; skipping or refusing it is fine.
        case("ump_md_fifo_in_the_folder", &[0, 1, 2], Says::Anything, CONVERT, |d| {
            memory_input_mutated(d, "ump-md", |folder| {
                fifo(&folder.join("zzzz.ump.md"));
            })
        })
        .within(QUICK),
        case("ump_md_validate_fifo_in_the_folder", &[0, 1, 2], Says::Anything, VALIDATE, |d| {
            memory_input_mutated(d, "ump-md", |folder| {
                fifo(&folder.join("zzzz.ump.md"));
            })
        })
        .within(QUICK),
    ]);
    cases
}

/// `validate` and `inspect` on odd inputs.
fn validate_and_inspect_cases() -> Vec<Case> {
    vec![
        // "valid ump (0 records)" is wrong: an empty file is no document at all.
        case("validate_empty_file", &[1, 2], EMPTY, VALIDATE, |d| put(d, "in/memory.ump.json", "")),
        case("validate_white_space_only", &[1, 2], EMPTY, VALIDATE, |d| put(d, "in/memory.ump.json", "\n\n  \n")),
        case("validate_utf16_file", &[1, 2], UTF16, VALIDATE, |d| memory_input_mutated(d, "mif", rewrite_as_utf16)),
        case("validate_dev_zero", FAILS, NOT_REGULAR, VALIDATE, |_| PathBuf::from("/dev/zero")).within(QUICK),
        case("validate_fifo", FAILS, NOT_REGULAR, VALIDATE, |d| fifo(&d.join("in/memory.ump.ndjson"))).within(QUICK),
        case("validate_missing_file", FAILS, Says::AnyOf(&["nope.json"]), VALIDATE, |d| d.join("in/nope.json")),
        case("inspect_dev_zero", FAILS, NOT_REGULAR, INSPECT, |_| PathBuf::from("/dev/zero")).within(QUICK),
        case("inspect_fifo", FAILS, NOT_REGULAR, INSPECT, |d| fifo(&d.join("in/conversations.json"))).within(QUICK),
        case("inspect_counts_a_deep_conversation_unreadable", OK, Says::AnyOf(&["1 unreadable"]), INSPECT, |d| {
            chatgpt_file(d, splice(&chatgpt_second_mutated(hole_in_metadata), &deep_array()))
        }),
    ]
}

/// The export most invocation cases read.
fn two_conversations(dir: &Path) -> PathBuf {
    chatgpt_file(dir, chatgpt_two())
}

/// The export and a file of the user's own beside it, at `name`.
fn export_and_own_file(dir: &Path, name: &str) -> PathBuf {
    put(dir, name, "my own notes, not memport's\n");
    two_conversations(dir)
}

/// Wrong invocations: bad options, outputs that name inputs or each other, files memport did
/// not write, non-regular inputs and outputs.
fn invocation_cases() -> Vec<Case> {
    vec![
        // Endless and blocking inputs are refused quickly, without reading them.
        case("convert_dev_zero", FAILS, NOT_REGULAR, CONVERT, |_| PathBuf::from("/dev/zero")).within(QUICK),
        case("convert_dev_null", FAILS, NOT_REGULAR_OR_EMPTY, CONVERT, |_| PathBuf::from("/dev/null")).within(QUICK),
        case("convert_fifo", FAILS, NOT_REGULAR, CONVERT, |d| fifo(&d.join("in/conversations.json"))).within(QUICK),
        case("convert_symlink_to_dev_zero", FAILS, NOT_REGULAR, CONVERT, |d| symlink("/dev/zero", &d.join("in/conversations.json")))
            .within(QUICK),
        case("convert_missing_input", FAILS, Says::AnyOf(&["nope.zip"]), CONVERT, |d| d.join("in/nope.zip")),
        // Bad options.
        case("convert_without_to", FAILS, Says::AnyOf(&["--to"]), &["convert", "{in}", "-o", "{dir}/out.json"], two_conversations),
        case(
            "convert_unknown_format",
            FAILS,
            Says::AnyOf(&["docx"]),
            &["convert", "{in}", "--to", "docx", "-o", "{dir}/out.json"],
            two_conversations,
        ),
        case(
            "convert_empty_format",
            FAILS,
            Says::AnyOf(&["format"]),
            &["convert", "{in}", "--to", "", "-o", "{dir}/out.json"],
            two_conversations,
        ),
        case(
            "convert_same_format_twice",
            FAILS,
            Says::AnyOf(&["two formats", "twice", "same path", "same file"]),
            &["convert", "{in}", "--to", "aimem,aimem", "-o", "{dir}/out"],
            two_conversations,
        ),
        case("convert_unknown_option", FAILS, Says::AnyOf(&["--frobnicate"]), CONVERT, two_conversations).plus(&["--frobnicate"]),
        case("convert_threads_zero", FAILS, Says::AnyOf(&["threads"]), CONVERT, two_conversations).plus(&["--threads", "0"]),
        case("convert_threads_negative", FAILS, Says::AnyOf(&["threads", "-1"]), CONVERT, two_conversations).plus(&["--threads", "-1"]),
        case("convert_threads_not_a_number", FAILS, Says::AnyOf(&["many"]), CONVERT, two_conversations).plus(&["--threads", "many"]),
        // Capped with a message, not thousands of threads.
        case("convert_threads_ten_thousand", OK, Says::AnyOf(&["thread"]), CONVERT, two_conversations)
            .plus(&["--threads", "10000"])
            .writes(4),
        case("convert_threads_hundred_thousand", OK, Says::AnyOf(&["thread"]), CONVERT, two_conversations)
            .plus(&["--threads", "100000"])
            .writes(4),
        // A conversation over --max-record-size is rejected alone; the one before it is written.
        case("convert_conversation_over_max_record_size", REJECTS, Says::AnyOf(&["larger than the limit"]), CONVERT, |d| {
            chatgpt_file(d, chatgpt_second_asking(&"long question ".repeat(10_000)))
        })
        .plus(&["--max-record-size", "64K"])
        .writes(2),
        case("convert_max_record_size_not_a_size", FAILS, Says::AnyOf(&["max-record-size"]), CONVERT, two_conversations)
            .plus(&["--max-record-size", "lots"]),
        case("convert_max_record_size_out_of_range", FAILS, Says::AnyOf(&["max-record-size"]), CONVERT, two_conversations)
            .plus(&["--max-record-size", "100"]),
        case("convert_gap_minutes_zero", FAILS, Says::AnyOf(&["gap-minutes"]), CONVERT, two_conversations).plus(&["--gap-minutes", "0"]),
        case("convert_gap_minutes_beyond_a_year", FAILS, Says::AnyOf(&["gap-minutes"]), CONVERT, two_conversations)
            .plus(&["--gap-minutes", "525601"]),
        case(
            "convert_min_confidence_nan",
            FAILS,
            Says::AnyOf(&["min-confidence"]),
            &["convert", "{in}", "--to", "aimem-ndjson", "-o", "{dir}/out/memory.aimem.ndjson", "--min-confidence", "NaN", "-q"],
            two_conversations,
        ),
        case(
            "convert_min_confidence_above_one",
            FAILS,
            Says::AnyOf(&["min-confidence"]),
            &["convert", "{in}", "--to", "aimem-ndjson", "-o", "{dir}/out/memory.aimem.ndjson", "--min-confidence", "1.5", "-q"],
            two_conversations,
        ),
        case("convert_bad_producer", FAILS, Says::AnyOf(&["producer"]), CONVERT, two_conversations)
            .plus(&["--producer", "Not A Namespace"]),
        case("convert_blank_owner", FAILS, Says::AnyOf(&["owner-id"]), CONVERT, two_conversations).plus(&["--owner-id", " "]),
        case(
            "convert_sign_key_missing",
            FAILS,
            Says::AnyOf(&["no-key.pem"]),
            &["convert", "{in}", "--to", "pam", "-o", "{dir}/store", "--sign-key", "{dir}/no-key.pem", "-q"],
            two_conversations,
        ),
        case("convert_sign_key_without_a_signed_format", FAILS, Says::AnyOf(&["--sign-key"]), CONVERT, |d| {
            put(d, "key.hex", "11".repeat(32));
            two_conversations(d)
        })
        .plus(&["--sign-key", "{dir}/key.hex"]),
        case("convert_bad_branches", FAILS, Says::AnyOf(&["branch"]), CONVERT, two_conversations).plus(&["--branches", "some"]),
        case("convert_exported_at_not_a_time", FAILS, Says::AnyOf(&["--exported-at"]), CONVERT, two_conversations)
            .plus(&["--exported-at", "yesterday"]),
        case("convert_exported_at_year_10000", FAILS, Says::AnyOf(&["--exported-at"]), CONVERT, two_conversations)
            .plus(&["--exported-at", "10000-01-01T00:00:00Z"]),
        // Valid-looking, but 10000-01-01T04:30:00Z in UTC: refused, not wrapped to year 0000.
        case("convert_exported_at_9999_with_negative_offset", FAILS, Says::AnyOf(&["--exported-at"]), CONVERT, two_conversations)
            .plus(&["--exported-at", "9999-12-31T23:30:00-05:00"]),
        case("convert_exported_at_february_30", FAILS, Says::AnyOf(&["--exported-at"]), CONVERT, two_conversations)
            .plus(&["--exported-at", "2026-02-30T00:00:00Z"]),
        case("convert_source_date_epoch_out_of_range", FAILS, Says::AnyOf(&["source_date_epoch"]), CONVERT, two_conversations)
            .env("SOURCE_DATE_EPOCH", "99999999999999"),
        // Outputs naming inputs or each other: refused before anything is opened for writing.
        case(
            "convert_output_is_the_input",
            FAILS,
            CLASH,
            &["convert", "{in}", "--to", "aimem-ndjson", "-o", "{in}", "-q"],
            two_conversations,
        ),
        case(
            "convert_output_is_the_input_spelled_otherwise",
            FAILS,
            CLASH,
            &["convert", "{in}", "--to", "aimem-ndjson", "-o", "{dir}/in/../in/./conversations.json", "-q"],
            two_conversations,
        ),
        case(
            "convert_output_is_the_second_input",
            FAILS,
            CLASH,
            &["convert", "{in}", "{dir}/in/more.json", "--to", "aimem", "-o", "{dir}/in/more.json", "-q"],
            |d| {
                put(d, "in/more.json", format!("[{}]", to_json(&chatgpt_conversation("c3", "third question"))));
                two_conversations(d)
            },
        ),
        case(
            "convert_report_is_the_input",
            FAILS,
            CLASH,
            &["convert", "{in}", "--to", "aimem-ndjson", "-o", "{dir}/out/m.ndjson", "--report", "{in}", "-q"],
            two_conversations,
        ),
        case(
            "convert_rejects_is_the_input",
            FAILS,
            CLASH,
            &["convert", "{in}", "--to", "aimem-ndjson", "-o", "{dir}/out/m.ndjson", "--rejects", "{in}", "-q"],
            two_conversations,
        ),
        case(
            "convert_report_is_the_output",
            FAILS,
            CLASH,
            &["convert", "{in}", "--to", "aimem-ndjson", "-o", "{dir}/out/m.ndjson", "--report", "{dir}/out/m.ndjson", "-q"],
            two_conversations,
        ),
        case(
            "convert_rejects_is_the_output",
            FAILS,
            CLASH,
            &["convert", "{in}", "--to", "aimem-ndjson", "-o", "{dir}/out/m.ndjson", "--rejects", "{dir}/out/m.ndjson", "-q"],
            two_conversations,
        ),
        case(
            "convert_report_is_the_rejects",
            FAILS,
            CLASH,
            &[
                "convert",
                "{in}",
                "--to",
                "aimem-ndjson",
                "-o",
                "{dir}/out/m.ndjson",
                "--report",
                "{dir}/r.json",
                "--rejects",
                "{dir}/r.json",
                "-q",
            ],
            two_conversations,
        ),
        case(
            "convert_report_is_an_output_in_the_folder",
            FAILS,
            CLASH,
            &["convert", "{in}", "--to", "aimem,mif", "-o", "{dir}/out", "--report", "{dir}/out/memory.mif.json", "-q"],
            two_conversations,
        ),
        case(
            "convert_output_folder_is_the_input_folder",
            FAILS,
            CLASH,
            &["convert", "{in}", "--to", "aimem,mif", "-o", "{in}", "-q"],
            |d| folder(d, &[("conversations.json", chatgpt_two().as_bytes())]),
        ),
        case("convert_pam_output_is_the_input_folder", FAILS, CLASH, &["convert", "{in}", "--to", "pam", "-o", "{in}", "-q"], |d| {
            folder(d, &[("conversations.json", chatgpt_two().as_bytes())])
        }),
        case("convert_pam_store_onto_itself", FAILS, CLASH, &["convert", "{in}", "--to", "pam", "-o", "{in}", "-q"], |d| {
            memory_input(d, "pam")
        }),
        case("convert_ump_md_folder_onto_itself", FAILS, CLASH, &["convert", "{in}", "--to", "ump-md", "-o", "{in}", "-q"], |d| {
            memory_input(d, "ump-md")
        }),
        // Existing files memport did not write are not replaced.
        case(
            "convert_output_is_the_users_file",
            FAILS,
            EXISTS,
            &["convert", "{in}", "--to", "aimem", "-o", "{dir}/notes.txt", "-q"],
            |d| export_and_own_file(d, "notes.txt"),
        ),
        case(
            "convert_report_is_the_users_file",
            FAILS,
            EXISTS,
            &["convert", "{in}", "--to", "aimem", "-o", "{dir}/out.json", "--report", "{dir}/notes.txt", "-q"],
            |d| export_and_own_file(d, "notes.txt"),
        ),
        case(
            "convert_rejects_is_the_users_file",
            FAILS,
            EXISTS,
            &["convert", "{in}", "--to", "aimem", "-o", "{dir}/out.json", "--rejects", "{dir}/notes.txt", "-q"],
            |d| export_and_own_file(d, "notes.txt"),
        ),
        // Not `-o /dev/null` itself: as root, renaming a finished output over it would
        // replace the device. A link to it, and a FIFO, in the case's folder are safe.
        case(
            "convert_output_is_a_fifo",
            FAILS,
            NOT_REGULAR_OR_EXISTS,
            &["convert", "{in}", "--to", "aimem", "-o", "{dir}/out.json", "-q"],
            |d| {
                fifo(&d.join("out.json"));
                two_conversations(d)
            },
        )
        .within(QUICK),
        case(
            "convert_output_is_a_link_to_dev_null",
            FAILS,
            NOT_REGULAR_OR_EXISTS,
            &["convert", "{in}", "--to", "aimem", "-o", "{dir}/out.json", "-q"],
            |d| {
                symlink("/dev/null", &d.join("out.json"));
                two_conversations(d)
            },
        )
        .within(QUICK),
        case(
            "convert_report_is_a_folder",
            FAILS,
            Says::AnyOf(&["folder", "directory"]),
            &["convert", "{in}", "--to", "aimem", "-o", "{dir}/out/m.json", "--report", "{dir}/in", "-q"],
            two_conversations,
        ),
        // The user's own file in the dataset folder is not deleted (refusing is fine too).
        case(
            "convert_parquet_keeps_the_users_part_file",
            &[0, 2],
            Says::Anything,
            &["convert", "{in}", "--to", "parquet", "-o", "{dir}/corpus", "-q"],
            |d| {
                put(d, "corpus/messages/part-00001.parquet", "PAR1 the user's own data PAR1");
                two_conversations(d)
            },
        ),
        case(
            "convert_pam_folder_with_the_users_conversations",
            FAILS,
            Says::AnyOf(&["refus", "exists", "memory-store.json"]),
            &["convert", "{in}", "--to", "pam", "-o", "{dir}/store", "-q"],
            |d| {
                put(d, "store/conversations/mine.json", "my own file");
                two_conversations(d)
            },
        ),
        case(
            "convert_ump_md_folder_with_the_users_file",
            FAILS,
            Says::AnyOf(&["refus", "exists", ".ump.md"]),
            &["convert", "{in}", "--to", "ump-md", "-o", "{dir}/records", "-q"],
            |d| {
                put(d, "records/notes.md", "my own file");
                two_conversations(d)
            },
        ),
        // A failed run leaves no folder it created.
        case(
            "convert_failed_run_leaves_no_new_folder",
            FAILS,
            NO_EXPORT,
            &["convert", "{in}", "--to", "aimem", "-o", "{dir}/new/memory.aimem.json", "-q"],
            |d| put(d, "in/notes.json", "{\"hello\": 1}"),
        ),
        case(
            "convert_failed_multi_format_run_leaves_no_folder",
            FAILS,
            NO_EXPORT,
            &["convert", "{in}", "--to", "aimem,mif", "-o", "{dir}/new", "-q"],
            |d| put(d, "in/notes.json", "{\"hello\": 1}"),
        ),
    ]
}

/// A minimal valid pipeline file reading `in/conversations.json`, with `extra` lines.
fn pipeline_text(extra: &str, output: &str) -> String {
    format!("version = 1\ninputs = [\"in/conversations.json\"]\n{extra}[[outputs]]\nformat = \"aimem\"\npath = \"{output}\"\n")
}

fn pipeline_cases() -> Vec<Case> {
    vec![
        case("pipeline_valid_control", OK, Says::Anything, RUN, |d| pipeline(d, pipeline_text("", "out/m.json"))),
        // Every problem at once, whatever kind it is.
        case("pipeline_all_problems_at_once", FAILS, Says::AllOf(&["version", "branches", "dedup", "docx"]), RUN, |d| {
            pipeline(
                d,
                "version = 2\ninputs = [\"in/conversations.json\"]\nbranches = \"some\"\ndedup = \"maybe\"\n\
                 [[outputs]]\nformat = \"docx\"\npath = \"out/m.json\"\n",
            )
        }),
        case("pipeline_unknown_key_and_bad_format", FAILS, Says::AllOf(&["colour", "docx"]), RUN, |d| {
            pipeline(d, pipeline_text("colour = \"blue\"\n", "out/m.json").replace("\"aimem\"", "\"docx\""))
        }),
        case("pipeline_type_error_and_bad_format", FAILS, Says::AllOf(&["threads", "docx"]), RUN, |d| {
            pipeline(d, pipeline_text("threads = \"many\"\n", "out/m.json").replace("\"aimem\"", "\"docx\""))
        }),
        case("pipeline_output_is_its_input", FAILS, CLASH, RUN, |d| pipeline(d, pipeline_text("", "in/conversations.json"))),
        case("pipeline_report_is_its_input", FAILS, CLASH, RUN, |d| {
            pipeline(d, pipeline_text("report = \"in/conversations.json\"\n", "out/m.json"))
        }),
        case("pipeline_output_is_the_pipeline_file", FAILS, CLASH, RUN, |d| pipeline(d, pipeline_text("", "pipe.toml"))),
        case("pipeline_empty_file", FAILS, Says::AnyOf(&["is empty", "empty file", "version"]), RUN, |d| pipeline(d, "")),
        case("pipeline_utf16", FAILS, UTF16, RUN, |d| pipeline(d, utf16le(&pipeline_text("", "out/m.json"), true))),
        case("pipeline_dev_zero", FAILS, NOT_REGULAR, RUN, |_| PathBuf::from("/dev/zero")).within(QUICK),
        case("pipeline_fifo", FAILS, NOT_REGULAR, RUN, |d| fifo(&d.join("pipe.toml"))).within(QUICK),
        case("pipeline_deep_nesting", FAILS, NESTED, RUN, |d| pipeline(d, format!("version = 1\nx = {}\n", deep_array()))),
    ]
}

/// The whole corpus.
fn cases() -> Vec<Case> {
    let mut cases = chatgpt_cases();
    cases.extend(claude_cases());
    cases.extend(grok_cases());
    cases.extend(copilot_cases());
    cases.extend(gemini_cases());
    cases.extend(memory_format_cases());
    cases.extend(validate_and_inspect_cases());
    cases.extend(invocation_cases());
    cases.extend(pipeline_cases());
    cases
}

/// What one run of memport did.
struct Outcome {
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    stdout: String,
    stderr: String,
}

/// Runs memport with `args` in `cwd`, killing it after `timeout`. The run goes through `sh` to
/// cap its address space; `exec` makes memport the child itself, so the exit status and a kill
/// are its own. Output goes to files, so a chatty run cannot block on a full pipe.
fn run_memport(args: &[String], env: &[(&'static str, &'static str)], cwd: &Path, timeout: Duration) -> Outcome {
    let logs = tempfile::tempdir().expect("temp dir");
    let (stdout_path, stderr_path) = (logs.path().join("stdout"), logs.path().join("stderr"));
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_memport"))
        .args(args)
        .current_dir(cwd)
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).expect("log file"))
        .stderr(File::create(&stderr_path).expect("log file"));
    for (key, value) in env {
        command.env(key, value);
    }
    let started = Instant::now();
    let mut child = command.spawn().expect("sh starts");
    let (status, timed_out) = loop {
        if let Some(status) = child.try_wait().expect("child status") {
            break (Some(status), false);
        }
        if started.elapsed() > timeout {
            // A failed kill means it has just exited; wait reaps it either way.
            let _ = child.kill();
            break (child.wait().ok(), true);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
    Outcome {
        code: status.and_then(|status| status.code()),
        signal: status.and_then(|status| status.signal()),
        timed_out,
        stdout: text(stdout_path.as_path()),
        stderr: text(stderr_path.as_path()),
    }
}

/// How [`describe`] names a folder.
const FOLDER: &str = "folder";

/// What is at `path`, files by content (with `hash`), without following a link or opening
/// anything but a regular file.
fn describe(path: &Path, hash: bool) -> Option<String> {
    let kind = std::fs::symlink_metadata(path).ok()?.file_type();
    Some(if kind.is_dir() {
        FOLDER.to_owned()
    } else if kind.is_file() && hash {
        format!("file {}", blake3::hash(&std::fs::read(path).unwrap_or_default()).to_hex())
    } else if kind.is_file() {
        "file".to_owned()
    } else if kind.is_symlink() {
        format!("link to {}", std::fs::read_link(path).unwrap_or_default().display())
    } else if kind.is_fifo() {
        "fifo".to_owned()
    } else {
        "special file".to_owned()
    })
}

/// Every entry under `root`, by path relative to it.
fn snapshot(root: &Path, hash: bool) -> BTreeMap<PathBuf, String> {
    let mut nodes = BTreeMap::new();
    let mut folders = vec![root.to_owned()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(node) = describe(&path, hash) else { continue };
            if node == FOLDER {
                folders.push(path.clone());
            }
            nodes.insert(path.strip_prefix(root).unwrap_or(&path).to_owned(), node);
        }
    }
    nodes
}

/// A file a finished run should not leave: a partial output, a staging folder or a lock
/// (memport's own `.memport-*.output.json` manifests are meant to stay).
fn is_temporary(path: &Path) -> bool {
    path.components().any(|component| {
        let name = component.as_os_str().to_string_lossy();
        name.ends_with(".partial") || (name.starts_with(".memport") && (name.ends_with(".lock") || name.contains("staging")))
    })
}

/// The line of stderr that says most: an error or note, else the first line.
fn gist(stderr: &str) -> String {
    let line = stderr.lines().find(|line| line.contains("error") || line.contains("note:")).or_else(|| stderr.lines().next()).unwrap_or("");
    line.chars().take(200).collect()
}

/// The unbalanced counts of a run report (docs/user-guide.md#counts), as
/// `memport::pipeline::report::Counts::balances` checks them.
fn report_imbalances(report: &Value) -> Vec<String> {
    let count = |value: &Value| value.as_u64().unwrap_or(0);
    let counts = &report["counts"];
    if !counts.is_object() {
        return vec!["the report has no counts".to_owned()];
    }
    let mut problems = Vec::new();
    let skipped: u64 = counts["messages_skipped"].as_object().map_or(0, |skips| skips.values().map(count).sum());
    let messages =
        count(&counts["messages_written"]) + count(&counts["messages_duplicate"]) + skipped + count(&counts["messages_rejected"]);
    if count(&counts["messages_read"]) != messages {
        problems.push(format!("the report's message counts do not balance: {counts}"));
    }
    let memories = ["memories_written", "memories_duplicate", "memories_not_exportable", "memories_erased", "memories_retracted"]
        .iter()
        .map(|name| count(&counts[*name]))
        .sum::<u64>();
    if count(&counts["memories_read"]) != memories {
        problems.push(format!("the report's memory counts do not balance: {counts}"));
    }
    let extracted = &report["memories_extracted"];
    if extracted.is_object() {
        let parts = [
            "written",
            "superseded_kept",
            "merged",
            "dropped_secret",
            "dropped_low_confidence",
            "dropped_personal",
            "dropped_unwritten_message",
            "already_in_input",
        ];
        if count(&extracted["candidates"]) != parts.iter().map(|part| count(&extracted[*part])).sum::<u64>() {
            problems.push(format!("the report's extraction counts do not balance: {extracted}"));
        }
    }
    problems
}

/// Runs one case and lists what went wrong.
fn check(case: &Case) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let Ok(input) = std::panic::catch_unwind(AssertUnwindSafe(|| (case.build)(dir.path()))) else {
        return vec!["building the input panicked".to_owned()];
    };
    let before = snapshot(dir.path(), true);
    let (input, folder) = (input.to_string_lossy().into_owned(), dir.path().to_string_lossy().into_owned());
    let args: Vec<String> = case.args.iter().map(|arg| arg.replace("{in}", &input).replace("{dir}", &folder)).collect();
    let outcome = run_memport(&args, &case.env, dir.path(), case.timeout);
    let mut problems = Vec::new();

    // No crash, no hang, the documented exit code.
    if outcome.timed_out {
        problems.push(format!("still running after {}s: a hang (killed)", case.timeout.as_secs()));
    } else if let Some(signal) = outcome.signal {
        problems.push(format!("killed by signal {signal} ({})", gist(&outcome.stderr)));
    } else if matches!(outcome.code, Some(101 | 134)) {
        problems.push(format!("crashed with exit code {:?}", outcome.code));
    }
    if outcome.stderr.contains("panicked") || outcome.stderr.contains("overflowed") {
        problems.push(format!("stderr reports a crash: {}", gist(&outcome.stderr)));
    }
    if let Some(code) = outcome.code.filter(|code| !case.exit.contains(code)) {
        problems.push(format!("exit code {code}, expected {:?} ({})", case.exit, gist(&outcome.stderr)));
    }

    // What it said: stderr, stdout, the rejects file, the report's warnings and notes.
    let mut said = format!("{}\n{}\n", outcome.stderr, outcome.stdout);
    let rejects =
        (!before.contains_key(Path::new("rejects.ndjson"))).then(|| std::fs::read(dir.path().join("rejects.ndjson")).ok()).flatten();
    if let Some(rejects) = rejects {
        let rejects = String::from_utf8_lossy(&rejects);
        if let Some(line) = rejects.lines().find(|line| line.len() > MAX_REJECT_LINE) {
            problems.push(format!("a rejects line is {} bytes long", line.len()));
        }
        said.push_str(&rejects);
    }
    let report = (!before.contains_key(Path::new("report.json"))).then(|| std::fs::read(dir.path().join("report.json")).ok()).flatten();
    match report.map(|bytes| serde_json::from_slice::<Value>(&bytes)) {
        Some(Ok(report)) => {
            problems.extend(report_imbalances(&report));
            for warning in report["warnings"].as_object().into_iter().flat_map(|warnings| warnings.keys()) {
                said.push_str(warning);
                said.push('\n');
            }
            for note in report["notes"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                said.push_str(note);
                said.push('\n');
            }
            let written = report["counts"]["messages_written"].as_u64().unwrap_or(0);
            if written < case.written {
                problems.push(format!("{written} messages written, expected at least {}", case.written));
            }
        }
        Some(Err(error)) => problems.push(format!("the report is not JSON: {error}")),
        None => {
            if matches!(outcome.code, Some(0 | 1)) && case.args.iter().any(|arg| arg == "{dir}/report.json") {
                problems.push("the run finished without writing its report".to_owned());
            }
        }
    }
    let said = said.to_lowercase();
    match case.says {
        Says::Anything => {}
        Says::AnyOf(needles) => {
            if !needles.iter().any(|needle| said.contains(*needle)) {
                problems.push(format!("says none of {needles:?}"));
            }
        }
        Says::AllOf(needles) => {
            let missing: Vec<&str> = needles.iter().copied().filter(|needle| !said.contains(*needle)).collect();
            if !missing.is_empty() {
                problems.push(format!("does not say {missing:?}"));
            }
        }
    }

    // Every file given is as it was; a failed run leaves nothing, a finished one no temporaries.
    for (path, node) in &before {
        let now = describe(&dir.path().join(path), true);
        if now.as_ref() != Some(node) {
            problems.push(format!("{} was changed or removed ({node} -> {})", path.display(), now.as_deref().unwrap_or("nothing")));
        }
    }
    let after = snapshot(dir.path(), false);
    let new: Vec<&PathBuf> = after.keys().filter(|path| !before.contains_key(*path)).collect();
    if outcome.code == Some(2) && !new.is_empty() {
        problems.push(format!("the failed run left {new:?}"));
    } else if new.iter().any(|path| is_temporary(path)) {
        problems.push(format!("temporary files left behind: {new:?}"));
    }
    problems
}

/// Runs `cases` (those whose name holds MEMPORT_MALFORMED, when it is set) and lists every one
/// that failed with what happened.
fn run_cases(group: &str, cases: &[Case]) {
    let filter = std::env::var(FILTER_VARIABLE).unwrap_or_default();
    let selected: Vec<&Case> = cases.iter().filter(|case| case.name.contains(filter.as_str())).collect();
    let failures: Vec<String> = selected
        .iter()
        .filter_map(|case| {
            let problems = check(case);
            (!problems.is_empty()).then(|| format!("{}: {}", case.name, problems.join("; ")))
        })
        .collect();
    assert!(failures.is_empty(), "{} of {} {group} cases failed:\n{}", failures.len(), selected.len(), failures.join("\n"));
}

/// Guards the corpus itself: every case has its own name, so a failure names one case.
#[test]
fn the_corpus_names_each_case_once() {
    let cases = cases();
    assert!(cases.len() >= 110, "the corpus has {} cases", cases.len());
    let mut names = BTreeSet::new();
    for case in &cases {
        assert!(names.insert(case.name.as_str()), "two cases are named {}", case.name);
    }
}

// One test per part of the corpus, so the parts run side by side (set MEMPORT_MALFORMED to a
// part of a case name to run only those cases).

#[test]
fn broken_chatgpt_exports_are_refused_or_rejected_without_crash_hang_or_damage() {
    run_cases("ChatGPT", &chatgpt_cases());
}

#[test]
fn broken_claude_exports_are_refused_or_rejected_without_crash_hang_or_damage() {
    run_cases("Claude", &claude_cases());
}

#[test]
fn broken_grok_exports_are_refused_or_rejected_without_crash_hang_or_damage() {
    run_cases("Grok", &grok_cases());
}

#[test]
fn broken_copilot_exports_are_refused_or_rejected_without_crash_hang_or_damage() {
    run_cases("Copilot", &copilot_cases());
}

#[test]
fn broken_gemini_exports_are_refused_or_rejected_without_crash_hang_or_damage() {
    run_cases("Gemini", &gemini_cases());
}

#[test]
fn broken_memory_format_files_are_refused_or_rejected_without_crash_hang_or_damage() {
    run_cases("memory-format", &memory_format_cases());
}

#[test]
fn broken_validate_and_inspect_inputs_are_refused_without_crash_or_hang() {
    run_cases("validate and inspect", &validate_and_inspect_cases());
}

#[test]
fn wrong_convert_invocations_are_refused_without_damage() {
    run_cases("invocation", &invocation_cases());
}

#[test]
fn broken_pipeline_files_are_refused_with_every_problem() {
    run_cases("pipeline-file", &pipeline_cases());
}
