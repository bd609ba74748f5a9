//! The binary's allocator: mimalloc for the many small short-lived blocks of a run, with the
//! memory it frees kept mapped, and the system allocator for large blocks, which glibc reuses
//! across sizes and gives back when they are huge (docs/design-decisions.md#memory).

/// Smallest block the system allocator gets. glibc serves the large blocks of a run (batch
/// buffers, Parquet pages, a record's buffers) from free space of any size and maps a huge one
/// on its own, growing it in place (`mremap`) and unmapping it when it is freed.
const LARGE_BLOCK: usize = 64 << 10;

/// mimalloc for every block below [`LARGE_BLOCK`], the system allocator for the others.
/// mimalloc keeps the memory it frees mapped (see `keep_freed_memory_mapped`), which is right
/// for the small blocks a run frees and reallocates all the time, but it keeps it by size
/// class: large buffers that grow by doubling or are shrunk to fit (a huge record's, the
/// Parquet writer's compressed pages) left freed blocks of sizes nothing asked for again. A
/// 200 MB message converted to Parquet peaked at 1.05 GiB, the 1 GB export to Parquet at
/// 345–362 MiB; 0.63 GiB and 266–290 MiB so.
pub struct Allocator;

// SAFETY: each block is freed and resized by the allocator that made it: the layout Rust passes
// to `dealloc` and `realloc` is the one the block was allocated with, so its size says which
// allocator that was; a block that crosses `LARGE_BLOCK` in `realloc` is moved between them.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { if layout.size() >= LARGE_BLOCK { std::alloc::System.alloc(layout) } else { mimalloc::MiMalloc.alloc(layout) } }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe {
            if layout.size() >= LARGE_BLOCK { std::alloc::System.alloc_zeroed(layout) } else { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `block` was allocated with `layout`, so by the allocator its size picks.
        unsafe {
            if layout.size() >= LARGE_BLOCK { std::alloc::System.dealloc(block, layout) } else { mimalloc::MiMalloc.dealloc(block, layout) }
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let (was_large, is_large) = (layout.size() >= LARGE_BLOCK, new_size >= LARGE_BLOCK);
        // SAFETY: the caller's contract, passed on to the allocator that made `block`; a block
        // that changes allocator is copied into a new one of `new_size` bytes with the same
        // alignment (valid: the caller guarantees `new_size` fits that alignment) and freed.
        unsafe {
            match (was_large, is_large) {
                (true, true) => std::alloc::System.realloc(block, layout, new_size),
                (false, false) => mimalloc::MiMalloc.realloc(block, layout, new_size),
                _ => {
                    let new_layout = std::alloc::Layout::from_size_align_unchecked(new_size, layout.align());
                    let moved = self.alloc(new_layout);
                    if !moved.is_null() {
                        std::ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                    moved
                }
            }
        }
    }
}

/// `mi_option_purge_delay` in mimalloc's C `mi_option_e` (the Rust bindings name only some
/// options); the test below checks that mimalloc reads it back as set.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Tells mimalloc to keep memory it has freed mapped instead of returning it to the system
/// ("purging") a second later. A run frees and reallocates its batches all the time at the same
/// peak; purged pages came straight back as page faults, and each purge is a `madvise` whose
/// TLB flush interrupts the other cores. On the 4 GB Gemini export that was 12 of 15.7 s of
/// kernel time; peak RSS rose from 232 to 253 MiB (docs/design-decisions.md).
#[allow(unsafe_code)]
pub fn keep_freed_memory_mapped() {
    // SAFETY: `mi_option_set` stores an integer in mimalloc's option table, which it reads
    // atomically; -1 is a documented value of this option ("no purging at all"), and it is set
    // before any worker thread starts.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

/// Tells glibc to serve every thread's large blocks from one arena instead of one arena per
/// thread (up to eight per core). Each arena keeps the space its freed blocks leave for its own
/// thread, so the large blocks the decode workers, the collector and each sink's thread free
/// and ask for again could not reuse each other's: the 1 GB export to Parquet peaked at
/// 266–287 MiB so, 262 MiB with one arena (233–242 MiB with Parquet's 16 MiB row groups as
/// well), at the same speed. Only memport's blocks of [`LARGE_BLOCK`] and more get there, a
/// few per batch, and the C libraries' own (zstd, SQLite), so the one lock is seldom waited on.
/// Returns whether glibc took the setting (always false off glibc, which has no such arenas).
#[allow(unsafe_code)]
pub fn one_system_arena() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` sets a glibc malloc parameter; `M_ARENA_MAX` with 1 is a
        // documented setting. `main` makes it before any other thread starts; the test that
        // calls it holds the allocator tests' lock (other tests' threads only allocate, and
        // glibc reads the limit only when a thread first needs an arena).
        unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

#[cfg(test)]
mod tests {
    use std::sync::{Mutex, OnceLock};

    /// The tests here set mimalloc's options and measure the process's memory: one at a time.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    /// The purge delay mimalloc started with, read before either test sets it.
    #[allow(unsafe_code)]
    fn initial_purge_delay() -> std::ffi::c_long {
        static INITIAL: OnceLock<std::ffi::c_long> = OnceLock::new();
        // SAFETY: `mi_option_get` reads an integer from mimalloc's option table.
        *INITIAL.get_or_init(|| unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) })
    }

    /// Guards `MI_OPTION_PURGE_DELAY`: option 15 must be the purge delay, whose default in the
    /// mimalloc built here is 1000 ms (no option next to it has that default).
    #[test]
    #[allow(unsafe_code)]
    fn the_option_set_is_mimallocs_purge_delay() {
        let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(initial_purge_delay(), 1000);
        }
        super::keep_freed_memory_mapped();
        // SAFETY: `mi_option_get` reads an integer from mimalloc's option table.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) }, -1);
    }

    /// Guards `one_system_arena`: glibc accepts the setting.
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_takes_one_arena_for_every_thread() {
        let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        assert!(super::one_system_arena());
    }

    /// This process's resident memory in KiB (`VmRSS` of /proc/self/status).
    fn resident_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap_or_default();
        line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).unwrap_or(0)
    }

    /// Guards `Allocator`: a huge buffer grown by doubling (as a huge record's buffers are) and
    /// freed leaves the process, although mimalloc keeps the smaller blocks it frees mapped.
    #[test]
    fn a_huge_buffer_grown_and_freed_is_returned_to_the_system() {
        let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        initial_purge_delay();
        // As a run does.
        super::keep_freed_memory_mapped();
        let before = resident_kib();
        let mut buffer: Vec<u8> = Vec::new();
        for _ in 0..(256 << 20) / 4096 {
            buffer.extend_from_slice(&[7; 4096]);
        }
        assert_eq!(buffer.len(), 256 << 20);
        let grown = resident_kib();
        drop(buffer);
        let after = resident_kib();
        assert!(grown >= before + (200 << 10), "the buffer was resident: {before} KiB before, {grown} KiB grown");
        // The blocks below the large size (up to 32 KiB, 64 KiB in all) may stay with mimalloc.
        assert!(after < before + (48 << 10), "{} KiB of 256 MiB stayed resident", after.saturating_sub(before));
    }
}
