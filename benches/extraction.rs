//! Extraction alone: the user turns of an export (written by `benches/extraction_texts.py`) read
//! by `stages::extract::extract_reply` on one thread, rounds timed, so a change to the
//! extraction code is measured without the rest of a conversion around it. `--dump FILE` writes
//! every candidate found instead, to check that a change leaves what is extracted as it was.
//!
//! ```sh
//! cargo bench --bench extraction -- /tmp/memport-bench/user-turns-256M.ndjson --rounds 9
//! cargo bench --bench extraction -- /tmp/memport-bench/user-turns-256M.ndjson --dump before.txt
//! cargo bench --bench extraction -- /tmp/memport-bench/user-turns-256M.ndjson --parts
//! ```
//!
//! `--parts` times the steps of extraction cumulatively (the gate alone; then the sentences of
//! the messages it lets through; then their languages; then the whole), so the cost of each step
//! is the difference between two lines.

use std::io::{BufRead, BufWriter, Write};
use std::time::Instant;

use memport::stages::extract::{Extraction, extract_reply, gate, language, sentences};

/// The allocator memport runs with, so allocation costs what it costs in a conversion.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One user turn and the assistant's turn before it.
#[derive(serde::Deserialize)]
struct Turn {
    user: String,
    assistant: Option<String>,
    /// Seconds since the epoch (0 when the export has none).
    time: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).filter(|arg| arg != "--bench");
    let mut input = None;
    let mut rounds = 5usize;
    let mut dump = None;
    let mut parts = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => rounds = args.next().ok_or("--rounds needs a number")?.parse::<usize>()?.max(1),
            "--dump" => dump = Some(args.next().ok_or("--dump needs a file")?),
            "--parts" => parts = true,
            _ => input = Some(arg),
        }
    }
    let Some(input) = input else {
        eprintln!("usage: cargo bench --bench extraction -- TURNS.ndjson [--rounds N] [--dump FILE]");
        eprintln!("(TURNS.ndjson from benches/extraction_texts.py)");
        return Ok(());
    };
    let mut turns = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(&input)?).lines() {
        turns.push(serde_json::from_str::<Turn>(&line?)?);
    }
    let bytes: usize = turns.iter().map(|turn| turn.user.len()).sum();
    let extract = |turn: &Turn, extraction: &mut Extraction| {
        let time = (turn.time * 1e6) as i64;
        extract_reply(&turn.user, turn.assistant.as_deref(), "m", time, extraction);
    };
    if let Some(dump) = dump {
        let mut out = BufWriter::new(std::fs::File::create(dump)?);
        for (index, turn) in turns.iter().enumerate() {
            let mut extraction = Extraction::default();
            extract(turn, &mut extraction);
            for candidate in &extraction.candidates {
                writeln!(out, "{index} {candidate:?}")?;
            }
            if extraction.dropped_secret > 0 {
                writeln!(out, "{index} dropped as secret: {}", extraction.dropped_secret)?;
            }
        }
        return Ok(());
    }
    // The first round also builds the lazily made tables and automata: not timed.
    let mut warm_up = Extraction::default();
    turns.iter().for_each(|turn| extract(turn, &mut warm_up));
    println!("{} user turns, {:.1} MB of text, {} candidates", turns.len(), bytes as f64 / 1e6, warm_up.candidates.len());
    if parts {
        let through = turns.iter().filter(|turn| gate::may_disclose(&turn.user)).count();
        let (mut sentence_count, mut tries, mut readable) = (0usize, 0usize, 0usize);
        for turn in turns.iter().filter(|turn| gate::may_disclose(&turn.user)) {
            let own = own_sentences(&turn.user);
            readable += own.iter().map(|sentence| sentence.len()).sum::<usize>();
            sentence_count += own.len();
            tries += language::likely_by_sentence(&own).iter().map(|languages| languages.len()).sum::<usize>();
        }
        println!(
            "{through} turns through the gate: {sentence_count} sentences of their own ({:.1} MB), {tries} readings in a language",
            readable as f64 / 1e6
        );
        let gate_only = |turn: &Turn| usize::from(gate::may_disclose(&turn.user));
        let with_sentences = |turn: &Turn| if gate::may_disclose(&turn.user) { sentences::own_sentences(&turn.user).len() } else { 0 };
        let with_languages = |turn: &Turn| {
            if !gate::may_disclose(&turn.user) {
                return 0;
            }
            language::likely_by_sentence(&own_sentences(&turn.user)).len()
        };
        time_rounds("the gate", rounds, bytes, || turns.iter().map(gate_only).sum());
        time_rounds("+ sentences", rounds, bytes, || turns.iter().map(with_sentences).sum());
        time_rounds("+ languages", rounds, bytes, || turns.iter().map(with_languages).sum());
    }
    time_rounds("extraction alone", rounds, bytes, || {
        let mut extraction = Extraction::default();
        turns.iter().for_each(|turn| extract(turn, &mut extraction));
        extraction.candidates.len()
    });
    Ok(())
}

/// The user's own sentences of `message`, as extraction picks them before telling their languages.
fn own_sentences(message: &str) -> Vec<&str> {
    sentences::own_sentences(message).iter().map(|sentence| sentence.text(message)).collect()
}

/// Times `rounds` runs of `work` (whose result is kept, so it is not optimized away) and prints
/// the median, fastest and slowest.
fn time_rounds(what: &str, rounds: usize, bytes: usize, mut work: impl FnMut() -> usize) {
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        std::hint::black_box(work());
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{what}: median {:.1} ms, min {:.1}, max {:.1} over {rounds} rounds; {:.0} MB/s of user text",
        median * 1e3,
        times[0] * 1e3,
        times[times.len() - 1] * 1e3,
        bytes as f64 / 1e6 / median
    );
}
