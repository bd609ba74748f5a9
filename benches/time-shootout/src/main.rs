//! Parses a million RFC 3339 timestamps with memport's parser and with jiff, single-threaded,
//! checks both give the same microseconds, and prints nanoseconds per parse for each.

use std::time::Instant;

fn main() {
    let texts: Vec<String> = (0..1_000_000u64)
        .map(|i| {
            let (month, day, hour, minute, second) = (1 + i % 12, 1 + i % 28, i % 24, i % 60, (i * 7) % 60);
            format!("2024-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{:06}Z", (i * 7919) % 1_000_000)
        })
        .collect();
    for round in 0..3 {
        let started = Instant::now();
        let mut memport_sum = 0i64;
        for text in &texts {
            memport_sum = memport_sum.wrapping_add(memport::timefmt::parse_rfc3339(text).expect("a valid timestamp"));
        }
        let memport_time = started.elapsed();
        let started = Instant::now();
        let mut jiff_sum = 0i64;
        for text in &texts {
            jiff_sum = jiff_sum.wrapping_add(text.parse::<jiff::Timestamp>().expect("a valid timestamp").as_microsecond());
        }
        let jiff_time = started.elapsed();
        assert_eq!(memport_sum, jiff_sum, "both parsers agree");
        let per_parse = |elapsed: std::time::Duration| elapsed.as_nanos() as f64 / texts.len() as f64;
        println!("round {round}: memport {:.1} ns/parse, jiff {:.1} ns/parse", per_parse(memport_time), per_parse(jiff_time));
    }
}
