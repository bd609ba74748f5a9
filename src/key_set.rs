//! A set of 128-bit keys (halves of digests) whose memory stays bounded: once the
//! in-memory table holds [`IN_MEMORY_KEYS`] keys it is sorted and spilled to a temporary file as a
//! run. Each run keeps only a Bloom filter (16 bits per key) and a sparse index (one key per 4 KiB
//! block) in memory; a lookup reads one block from a run only when its filter says "maybe".
//!
//! Dedup must answer "seen before?" exactly, in input order, for millions of messages; an
//! in-memory hash set of every key grows by ~35 bytes per distinct message (with resizes), which
//! broke the flat-memory budget at 4 GB of input. This keeps the growth to ~2 bytes per key.

use std::collections::HashSet;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

/// Keys held in the in-memory table before it is spilled: 7/8 of 2^19, the most a table of 2^19
/// buckets holds before it doubles (hashbrown's load limit), so the table stops at 8.5 MiB
/// instead of growing to 17 MiB for the last few keys.
pub const IN_MEMORY_KEYS: usize = (1 << 19) / 8 * 7;
/// Keys per block of a spilled run (16 bytes each: 4 KiB blocks).
const KEYS_PER_BLOCK: usize = 256;
/// Bloom filter bits per key and probes per lookup. The filter is blocked: all probes of a key
/// fall in one 64-byte block, so a lookup costs one cache miss per run instead of one per probe.
/// Every run's filter is asked for every new key, so false positives add up with the runs: at
/// 10 bits a key (about 1% each) the 12 runs of a 4 GB Gemini export sent one new key in nine
/// to disk; at 16 bits (about 0.1%) one in eighty.
const BLOOM_BITS_PER_KEY: usize = 16;
const BLOOM_PROBES: u32 = 7;

/// One cache line of a blocked Bloom filter.
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
struct BloomBlock([u64; 8]);

impl BloomBlock {
    /// The bit of each probe: 9 bits of the key's high half per probe.
    fn probes(key: u128) -> impl Iterator<Item = usize> {
        let bits = (key >> 64) as u64;
        (0..BLOOM_PROBES).map(move |probe| ((bits >> (probe * 9)) & 511) as usize)
    }

    fn set(&mut self, key: u128) {
        for bit in BloomBlock::probes(key) {
            self.0[bit / 64] |= 1 << (bit % 64);
        }
    }

    fn may_contain(&self, key: u128) -> bool {
        BloomBlock::probes(key).all(|bit| self.0[bit / 64] & (1 << (bit % 64)) != 0)
    }
}

/// Hashes a key that is already uniformly distributed by taking its low 64 bits.
#[derive(Default)]
pub struct PrehashedKey(u64);

impl Hasher for PrehashedKey {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes.iter().take(8) {
            self.0 = (self.0 << 8) | u64::from(byte);
        }
    }
    fn write_u128(&mut self, value: u128) {
        self.0 = value as u64;
    }
}

/// One sorted run on disk.
struct Run {
    file: File,
    /// First key of every block.
    block_firsts: Vec<u128>,
    len: usize,
    bloom: Vec<BloomBlock>,
}

impl Run {
    /// The filter block of `key`, chosen by its low half (the probes use the high half).
    fn bloom_block(key: u128, blocks: usize) -> usize {
        ((key as u64) % blocks as u64) as usize
    }

    fn create(mut keys: Vec<u128>) -> io::Result<Run> {
        keys.sort_unstable();
        let blocks = (keys.len() * BLOOM_BITS_PER_KEY).div_ceil(512).max(1);
        let mut bloom = vec![BloomBlock::default(); blocks];
        let mut block_firsts = Vec::with_capacity(keys.len().div_ceil(KEYS_PER_BLOCK));
        let mut writer = BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
        for (position, key) in keys.iter().enumerate() {
            if position % KEYS_PER_BLOCK == 0 {
                block_firsts.push(*key);
            }
            bloom[Run::bloom_block(*key, blocks)].set(*key);
            writer.write_all(&key.to_le_bytes())?;
        }
        let file = writer.into_inner().map_err(io::IntoInnerError::into_error)?;
        Ok(Run { file, block_firsts, len: keys.len(), bloom })
    }

    fn contains(&self, key: u128, block: &mut Vec<u8>) -> io::Result<bool> {
        if !self.bloom[Run::bloom_block(key, self.bloom.len())].may_contain(key) {
            return Ok(false);
        }
        // The block whose first key is the last one <= key.
        let block_index = match self.block_firsts.binary_search(&key) {
            Ok(_) => return Ok(true),
            Err(0) => return Ok(false),
            Err(insert_at) => insert_at - 1,
        };
        let start = block_index * KEYS_PER_BLOCK;
        let count = KEYS_PER_BLOCK.min(self.len - start);
        block.resize(count * 16, 0);
        self.file.read_exact_at(block, (start * 16) as u64)?;
        let found = block
            .chunks_exact(16)
            .map(|bytes| {
                let mut array = [0u8; 16];
                array.copy_from_slice(bytes);
                u128::from_le_bytes(array)
            })
            .any(|stored| stored == key);
        Ok(found)
    }
}

/// The bounded-memory key set.
pub struct KeySet {
    recent: HashSet<u128, BuildHasherDefault<PrehashedKey>>,
    runs: Vec<Run>,
    /// Keys a run was found to hold, up to [`FOUND_KEYS`]: what is found again is mostly what
    /// repeats often (a short prompt asked in many conversations), and each lookup in a run
    /// reads a block from disk.
    found_in_runs: HashSet<u128, BuildHasherDefault<PrehashedKey>>,
    block: Vec<u8>,
    capacity: usize,
}

/// Most keys [`KeySet`] remembers having found in a run (about 2 MiB).
const FOUND_KEYS: usize = 1 << 16;

impl Default for KeySet {
    fn default() -> Self {
        KeySet::with_memory_capacity(IN_MEMORY_KEYS)
    }
}

impl KeySet {
    /// A set that spills every `capacity` keys.
    pub fn with_memory_capacity(capacity: usize) -> Self {
        KeySet {
            recent: HashSet::default(),
            runs: Vec::new(),
            found_in_runs: HashSet::default(),
            block: Vec::with_capacity(KEYS_PER_BLOCK * 16),
            capacity: capacity.max(1),
        }
    }

    /// Adds `key`; returns false when it was already present.
    ///
    /// # Errors
    /// I/O errors spilling to or reading from temporary files.
    pub fn insert(&mut self, key: u128) -> io::Result<bool> {
        if self.recent.len() >= self.capacity {
            if self.contains(key)? {
                return Ok(false);
            }
            let keys: Vec<u128> = self.recent.drain().collect();
            self.runs.push(Run::create(keys)?);
            self.recent.insert(key);
            return Ok(true);
        }
        if self.found_in_runs.contains(&key) {
            return Ok(false);
        }
        // Inserting first looks the table up once for a new key (most keys are new), where
        // asking first and inserting after looked it up twice: a cache miss each in a large
        // table.
        if !self.recent.insert(key) {
            return Ok(false);
        }
        if self.runs_contain(key)? {
            self.recent.remove(&key);
            return Ok(false);
        }
        Ok(true)
    }
}

impl KeySet {
    /// Whether `key` was added.
    ///
    /// # Errors
    /// I/O errors reading a spilled run.
    pub fn contains(&mut self, key: u128) -> io::Result<bool> {
        Ok(self.recent.contains(&key) || self.found_in_runs.contains(&key) || self.runs_contain(key)?)
    }

    /// Whether a spilled run holds `key`, reading the runs (callers ask `found_in_runs` first);
    /// a key found is remembered.
    fn runs_contain(&mut self, key: u128) -> io::Result<bool> {
        for run in &self.runs {
            if run.contains(key, &mut self.block)? {
                if self.found_in_runs.len() < FOUND_KEYS {
                    self.found_in_runs.insert(key);
                }
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The first 128 bits of a digest, as a key.
pub fn key_of(digest: &[u8; 32]) -> u128 {
    let mut prefix = [0u8; 16];
    prefix.copy_from_slice(&digest[..16]);
    u128::from_be_bytes(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::sha256;

    #[test]
    fn exact_across_spills() {
        let mut set = KeySet::with_memory_capacity(1000);
        let keys: Vec<u128> = (0..10_000u32).map(|number| key_of(&sha256(&number.to_le_bytes()))).collect();
        for key in &keys {
            assert!(set.insert(*key).unwrap());
        }
        assert!(set.runs.len() >= 9);
        let (runs, recent) = (set.runs.len(), set.recent.len());
        for key in &keys {
            assert!(!set.insert(*key).unwrap(), "every key is found again, in memory or in a run");
        }
        assert_eq!((set.runs.len(), set.recent.len()), (runs, recent), "keys found again are not added again");
        // A key found in a run is remembered: asking again reads nothing more.
        let reads_before = set.found_in_runs.len();
        assert!(!set.insert(keys[0]).unwrap());
        assert_eq!(set.found_in_runs.len(), reads_before);
        assert!(set.found_in_runs.contains(&keys[0]));
        for number in 10_000..20_000u32 {
            assert!(set.insert(key_of(&sha256(&number.to_le_bytes()))).unwrap());
        }
    }
}
