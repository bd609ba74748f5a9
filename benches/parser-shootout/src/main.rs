//! Decodes every conversation of a ChatGPT export into memport's serde model with three parsers,
//! single-threaded, and prints MB/s for each (framing time excluded: elements are framed first).

use std::time::Instant;

use memport::sources::chatgpt::raw::RawConversation;
use memport::sources::json_array::ArrayFramer;

fn main() {
    let path = std::env::args().nth(1).expect("usage: parser-shootout conversations.json");
    let file = std::fs::File::open(&path).expect("readable input");
    let mut framer = ArrayFramer::new(std::io::BufReader::new(file));
    let mut elements = Vec::new();
    while let Some(element) = framer.next_element().expect("a JSON array") {
        elements.push(element.bytes);
    }
    let total: usize = elements.iter().map(Vec::len).sum();
    println!("{} conversations, {:.1} MB", elements.len(), total as f64 / 1e6);
    for round in 0..2 {
        let started = Instant::now();
        let mut messages = 0usize;
        for element in &elements {
            let conversation: RawConversation = serde_json::from_slice(element).expect("serde_json parses");
            messages += conversation.mapping.map_or(0, |mapping| mapping.0.len());
        }
        report(round, "serde_json", total, started, messages);

        let started = Instant::now();
        let mut messages = 0usize;
        let mut scratch = Vec::new();
        for element in &elements {
            // simd-json parses in place, so each element is copied first (as the engine would).
            scratch.clear();
            scratch.extend_from_slice(element);
            let conversation: RawConversation = simd_json::serde::from_slice(&mut scratch).expect("simd-json parses");
            messages += conversation.mapping.map_or(0, |mapping| mapping.0.len());
        }
        report(round, "simd-json", total, started, messages);

        let started = Instant::now();
        let mut messages = 0usize;
        for element in &elements {
            let conversation: RawConversation = sonic_rs::from_slice(element).expect("sonic-rs parses");
            messages += conversation.mapping.map_or(0, |mapping| mapping.0.len());
        }
        report(round, "sonic-rs", total, started, messages);
    }
}

fn report(round: usize, name: &str, bytes: usize, started: Instant, nodes: usize) {
    let seconds = started.elapsed().as_secs_f64();
    if round == 1 {
        println!("{name:>10}: {:7.1} MB/s  ({nodes} nodes, {seconds:.2} s)", bytes as f64 / 1e6 / seconds);
    }
}
