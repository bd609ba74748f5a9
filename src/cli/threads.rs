//! How many decode workers a run gets: `--threads` (or a pipeline file's `threads`) as asked,
//! lowered to what the machine can use.

use crate::pipeline::default_threads;

/// Most decode workers `--threads` gets per core. The workers are CPU-bound (parse, normalize,
/// hash, encode), so more than a few per core only take turns; and each one lets the reader
/// queue three more batches of about 1 MiB, so a count far past the cores costs memory for
/// nothing (`--threads 10000` asked for 30,000 batches in flight). Four per core leaves room
/// for a worker waiting on a spilled dedup run without another idling.
pub const THREADS_PER_CORE: usize = 4;
/// Most decode workers on any machine (about 770 batches in flight, under 1 GiB), unless it
/// has more cores than that: then one per core, as without `--threads`.
pub const MAX_THREADS: usize = 256;

/// The most workers worth running on `cores` cores (see [`THREADS_PER_CORE`]).
pub fn max_threads(cores: usize) -> usize {
    cores.saturating_mul(THREADS_PER_CORE).min(MAX_THREADS).max(cores)
}

/// `requested` workers, lowered to [`max_threads`] of this machine; when lowered, with a note
/// for the user naming `option`.
pub fn capped_threads(requested: usize, option: &str) -> (usize, Option<String>) {
    let cores = default_threads();
    let most = max_threads(cores);
    if requested > most {
        let note = format!(
            "{option} {requested} is more workers than this machine can use; using {most} ({THREADS_PER_CORE} per core on {cores} cores, at most {MAX_THREADS})"
        );
        return (most, Some(note));
    }
    (requested, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards the cap: at least one worker per core, at most four per core and 256.
    #[test]
    fn the_cap_is_at_least_one_per_core_and_at_most_four_per_core_and_256() {
        assert_eq!(max_threads(1), 4);
        assert_eq!(max_threads(2), 8);
        assert_eq!(max_threads(64), MAX_THREADS);
        assert_eq!(max_threads(1024), 1024);
        assert_eq!(capped_threads(1, "--threads"), (1, None));
        let (most, note) = capped_threads(usize::MAX, "--threads");
        assert_eq!(most, max_threads(default_threads()));
        assert!(note.is_some_and(|note| note.starts_with("--threads ")));
    }
}
