//! Extraction alone: the user turns of an export (written by `benches/extraction_texts.py`) read
//! by `stages::extract::extract_reply` on one thread, rounds timed, so a change to the
//! extraction code is measured without the rest of a conversion around it. `--dump FILE` writes
//! every candidate found instead, to check that a change leaves what is extracted as it was.
//!
//! ```sh
//! cargo bench --bench extraction -- /tmp/memport-bench/user-turns-256M.ndjson --rounds 9
//! cargo bench --bench extraction -- /tmp/memport-bench/user-turns-256M.ndjson --dump before.txt
//! ```

use std::io::{BufRead, BufWriter, Write};
use std::time::Instant;

use memport::stages::extract::{Extraction, extract_reply};

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
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => rounds = args.next().ok_or("--rounds needs a number")?.parse::<usize>()?.max(1),
            "--dump" => dump = Some(args.next().ok_or("--dump needs a file")?),
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
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        let mut extraction = Extraction::default();
        turns.iter().for_each(|turn| extract(turn, &mut extraction));
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "extraction alone: median {:.1} ms, min {:.1}, max {:.1} over {rounds} rounds; {:.0} MB/s of user text",
        median * 1e3,
        times[0] * 1e3,
        times[times.len() - 1] * 1e3,
        bytes as f64 / 1e6 / median
    );
    Ok(())
}
