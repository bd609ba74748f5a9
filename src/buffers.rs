//! A small pool of byte buffers passed between threads (framed batches from the reader to the
//! workers and back; encoded batches from the workers to a sink and back).

use std::sync::{Arc, Mutex, PoisonError};

/// Batch buffers kept for reuse.
const POOLED_BUFFERS: usize = 8;
/// Larger buffers (grown by a huge element) are dropped rather than kept.
const LARGEST_POOLED: usize = 4 << 20;

/// Batch buffers handed back by the workers for the reader to reuse, so the allocator (and the
/// kernel zeroing fresh pages) stays out of the hot path.
#[derive(Clone, Default)]
pub struct BufferPool(Arc<Mutex<Vec<Vec<u8>>>>);

impl BufferPool {
    /// An empty buffer, reused when one is available.
    pub fn take(&self) -> Vec<u8> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).pop().unwrap_or_default()
    }

    /// Returns a buffer for reuse (dropped when the pool is full).
    pub fn give(&self, mut buffer: Vec<u8>) {
        if buffer.capacity() > LARGEST_POOLED {
            return;
        }
        buffer.clear();
        let mut pool = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if pool.len() < POOLED_BUFFERS {
            pool.push(buffer);
        }
    }
}
