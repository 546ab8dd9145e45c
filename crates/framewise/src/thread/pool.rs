//! Rings of exited threads, kept for the threads that start recording after them.
//!
//! A new thread's ring is 1 MiB (half a 2 MiB chunk, see `memory`), allocated when the thread
//! first records, and a new ring costs more on its first pass: about 20 ns more per scope for
//! a new thread's first 32,768 scopes on the VM of docs/PERFORMANCE.md (2.5 µs a 4 KiB page).
//! A game that starts threads again and again (scoped threads every frame, a pool rebuilt per
//! level) would pay that, and an allocation, for every thread. Once the
//! writer has drained an exited thread's ring, the ring goes to a small pool instead, and
//! the next thread that records takes it, emptied, with its pages already in place.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use framewise_format::model::SymId;

use super::{Producer, ThreadBuffer, RING_EVENTS};

/// Buffers of exited threads, drained, kept for the next threads that start recording (at
/// most [`POOLED_MAX`]): a game that starts threads again and again (scoped threads every
/// frame, a pool rebuilt per level) then neither allocates a ring nor faults its pages in
/// again for every new thread.
static POOL: Mutex<Vec<Arc<ThreadBuffer>>> = Mutex::new(Vec::new());

/// How many rings of exited threads are kept for reuse (1 MiB each).
const POOLED_MAX: usize = 8;

fn pool() -> MutexGuard<'static, Vec<Arc<ThreadBuffer>>> {
    POOL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// For `Vec::retain` over the registry: false once `buffer`'s thread has exited and its
/// events are drained, and then the buffer goes to the pool (if it has room) rather than
/// being freed.
pub(crate) fn keep_or_pool(buffer: &Arc<ThreadBuffer>) -> bool {
    if !buffer.is_finished() {
        return true;
    }
    let mut pool = pool();
    if pool.len() < POOLED_MAX {
        pool.push(Arc::clone(buffer));
    }
    false
}

/// A buffer for a thread named `thread`: a pooled one nobody else holds (its thread's
/// `Owner` may still be letting go of it), else a new one.
pub(super) fn fresh_buffer(thread: SymId) -> Arc<ThreadBuffer> {
    let mut pool = pool();
    if let Some(at) = pool
        .iter_mut()
        .position(|buffer| Arc::get_mut(buffer).is_some())
    {
        let mut buffer = pool.swap_remove(at);
        drop(pool);
        if let Some(unique) = Arc::get_mut(&mut buffer) {
            unique.reuse(thread);
            return buffer;
        }
    } else {
        drop(pool);
    }
    Arc::new(ThreadBuffer::new(thread, RING_EVENTS))
}

impl ThreadBuffer {
    /// Makes a drained buffer of an exited thread new again for the thread `thread`: empty,
    /// nothing dropped, nothing carried. The slots keep their old contents (never read: only
    /// slots below a published head are) and, above all, their memory, whose pages are
    /// already faulted in.
    pub(super) fn reuse(&mut self, thread: SymId) {
        let capacity = self.mask + 1;
        self.thread = thread;
        *self.producer.get_mut() = Producer {
            limit: capacity / 2,
            reserved: 0,
        };
        *self.head.get_mut() = 0;
        *self.tail.0.get_mut() = 0;
        *self.dropped.get_mut() = 0;
        *self.retired.get_mut() = false;
        *self.finished.get_mut() = false;
        *self.untracked.get_mut() = 0;
        let consumer = self
            .consumer
            .0
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        consumer.carried.clear();
        consumer.open.clear();
        consumer.dropped_seen = 0;
        consumer.untracked = 0;
        consumer.last_ticks = 0;
    }
}
