//! Load on a running `memport serve --listen` (a benchmark, not a test): `--clients` clients, each
//! on its own keep-alive connection, send `POST /ump/recall` of one to three words drawn from a
//! fixed list (seeded) for `--seconds`, and the latencies are reported (p50, p99, max) with the
//! throughput. Without `--rate` every client sends its next request as soon as the answer is in
//! (closed loop: the server's capacity); with `--rate N` the clients together send N requests
//! a second on a fixed schedule, and a latency counts from when its request was due, so a
//! server that falls behind is charged for the wait (no coordinated omission). Each client
//! first sends one request, not counted, to open its connection, as an MCP host keeps one.
//! `benches/serve_load.py` builds the store, starts the server and runs this; by hand:
//!
//! ```text
//! cargo bench --bench recall_load -- --url http://127.0.0.1:9420 --token-file t --clients 200 --seconds 20 [--rate 1000]
//! ```
//!
//! It is written in Rust so the load costs the two cores it shares with the server little.

use std::time::{Duration, Instant};

/// The words queries are drawn from: things people say about themselves, common and rare.
const WORDS: [&str; 34] = [
    "work", "job", "live", "home", "moved", "daughter", "son", "wife", "husband", "allergic", "vegan", "running", "marathon", "python",
    "rust", "database", "travel", "berlin", "teacher", "nurse", "project", "deadline", "cat", "dog", "music", "guitar", "coffee", "tea",
    "birthday", "doctor", "school", "garden", "recipe", "budget",
];

struct Options {
    url: String,
    token: String,
    clients: usize,
    seconds: f64,
    rate: Option<f64>,
}

fn options() -> Result<Options, String> {
    let mut arguments = std::env::args().skip(1).filter(|argument| argument != "--bench");
    let mut url = None;
    let mut token = None;
    let (mut clients, mut seconds, mut rate) = (200, 20.0, None);
    while let Some(name) = arguments.next() {
        let mut value = || arguments.next().ok_or_else(|| format!("{name} needs a value"));
        match name.as_str() {
            "--url" => url = Some(value()?),
            "--token-file" => {
                let path = value()?;
                token = Some(std::fs::read_to_string(&path).map_err(|error| format!("{path}: {error}"))?.trim().to_owned());
            }
            "--clients" => clients = value()?.parse().map_err(|_| "--clients: a number")?,
            "--seconds" => seconds = value()?.parse().map_err(|_| "--seconds: a number")?,
            "--rate" => rate = Some(value()?.parse().map_err(|_| "--rate: requests a second")?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Options {
        url: url.ok_or("--url is needed")?,
        token: token.ok_or("--token-file is needed")?,
        clients: clients.max(1),
        seconds,
        rate,
    })
}

/// A small seeded generator (xorshift64*): the same queries every run.
struct Draw(u64);

impl Draw {
    fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % below
    }

    fn query(&mut self) -> String {
        let count = 1 + self.next(3);
        let mut words: Vec<&str> = Vec::with_capacity(count);
        while words.len() < count {
            let word = WORDS[self.next(WORDS.len())];
            if !words.contains(&word) {
                words.push(word);
            }
        }
        words.join(" ")
    }
}

/// What one client saw.
#[derive(Default)]
struct Seen {
    latencies: Vec<Duration>,
    errors: u64,
}

async fn client(options: &Options, number: usize, start: Instant, stop_at: Instant) -> Seen {
    // A request that takes longer than 30 s counts as failed instead of holding the run.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("an HTTP client with default settings");
    let url = format!("{}/ump/recall", options.url.trim_end_matches('/'));
    let mut draw = Draw(0x9E37_79B9_7F4A_7C15 ^ (number as u64 + 1).wrapping_mul(0x1000_0000_01B3));
    let interval = options.rate.map(|rate| Duration::from_secs_f64(options.clients as f64 / rate.max(1e-9)));
    // Spread the clients' schedules over one interval so they do not all send at once.
    let mut due = start + interval.map_or(Duration::ZERO, |interval| interval.mul_f64(number as f64 / options.clients as f64));
    let mut seen = Seen::default();
    // One request first, not counted, opens the client's connection (as an MCP host keeps
    // one): the load measures recalls, not 200 TCP handshakes at once.
    if !recall(&http, &url, options, &mut draw).await {
        seen.errors += 1;
    }
    tokio::time::sleep_until(start.into()).await;
    loop {
        let sent_at = match interval {
            Some(interval) => {
                tokio::time::sleep_until(due.into()).await;
                due += interval;
                due - interval
            }
            None => Instant::now(),
        };
        // A request due before the stop is sent even when it is late: the late ones are the
        // slow tail the figures must keep.
        if sent_at >= stop_at {
            return seen;
        }
        if recall(&http, &url, options, &mut draw).await {
            seen.latencies.push(sent_at.elapsed());
        } else {
            seen.errors += 1;
        }
    }
}

/// Sends one recall and reads the whole answer; whether it succeeded.
async fn recall(http: &reqwest::Client, url: &str, options: &Options, draw: &mut Draw) -> bool {
    let body = format!("{{\"query\":\"{}\",\"limit\":10}}", draw.query());
    let answer = http.post(url).bearer_auth(&options.token).header("content-type", "application/json").body(body).send().await;
    match answer {
        Ok(response) => response.status().is_success() && response.bytes().await.is_ok(),
        Err(_) => false,
    }
}

fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("recall_load: {message}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("a tokio runtime");
    // The clients open their connections in the first two seconds; the load starts after.
    let start = Instant::now() + Duration::from_secs(2);
    let stop_at = start + Duration::from_secs_f64(options.seconds);
    let seen: Vec<Seen> = runtime.block_on(async {
        let options = std::sync::Arc::new(options);
        let tasks: Vec<_> = (0..options.clients)
            .map(|number| {
                let options = std::sync::Arc::clone(&options);
                tokio::spawn(async move { client(&options, number, start, stop_at).await })
            })
            .collect();
        let mut seen = Vec::with_capacity(tasks.len());
        for task in tasks {
            seen.push(task.await.unwrap_or_default());
        }
        seen
    });
    let wall = start.elapsed().as_secs_f64();
    let errors: u64 = seen.iter().map(|seen| seen.errors).sum();
    let mut latencies: Vec<Duration> = seen.into_iter().flat_map(|seen| seen.latencies).collect();
    latencies.sort();
    let quantile = |q: f64| {
        latencies
            .get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "recalls {} in {wall:.1} s = {:.0}/s, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms, errors {errors}",
        latencies.len(),
        latencies.len() as f64 / wall,
        quantile(0.5),
        quantile(0.99),
        latencies.last().map_or(f64::NAN, |d| d.as_secs_f64() * 1e3),
    );
}
