//! Helpers the unit tests share: a fixed-seed generator for the property tests that compare
//! a fast path with its reference on generated text.

/// Pseudo-random numbers from a fixed seed (a 64-bit linear congruential generator, top 31
/// bits), so every run generates the same cases.
pub fn fixed_seed_numbers(seed: u64) -> impl FnMut() -> usize {
    let mut state = seed;
    move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    }
}
