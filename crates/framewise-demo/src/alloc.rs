//! Counting heap allocations, for the demo's `allocations` counter.
//!
//! What it measures: how many heap allocations (and reallocations) the demo's game code made
//! in each frame — on the game thread while [`run`](crate::run) runs and on the demo's worker
//! threads, never on the recorder's writer thread or any other thread of the process. The
//! demo records the count as the `allocations` counter of every frame, so a capture shows
//! what each frame allocated beside its time, and the demo's tests check the counter's total
//! against the tally the game returns.
//!
//! Why it lives here: the count is only meaningful against the demo's own threads (the game
//! marks them: `count_this_thread`, `count_worker_thread`), and nothing else reads it. The
//! recorder's zero-allocation tests and the analysis crate's peak-memory test each install
//! their own allocator, because they measure other things (every allocation on a game
//! thread; live bytes at peak). A library cannot choose a program's global allocator, so a
//! binary that runs the demo installs this one:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: framewise_demo::CountingAlloc = framewise_demo::CountingAlloc::new();
//! ```
//!
//! The `framewise` binary does so for `framewise demo`; its other verbs run on threads that
//! are never counted, and pay one atomic load and one thread-local read per allocation.
//! Without the allocator installed the counter is not recorded at all: a value that was not
//! measured is absent, never 0.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Allocations counted so far, on counted threads.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// Set by the first allocation through [`CountingAlloc`]: the counter is measurable.
static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Whether this thread's allocations count (a `const` thread-local with no destructor,
    /// so reading it from inside the allocator never allocates).
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

/// A global allocator that forwards to the system allocator and counts allocations made on
/// the demo's threads. Install it in a binary with `#[global_allocator]`.
#[derive(Debug, Default)]
pub struct CountingAlloc {
    _private: (),
}

impl CountingAlloc {
    /// The allocator (a `const fn`, for a `static`).
    pub const fn new() -> Self {
        Self { _private: () }
    }
}

#[inline]
fn count() {
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
    if COUNTED.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; counting
// touches only atomics and a const thread-local, neither of which allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` through this type.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` through this type.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Whether [`CountingAlloc`] is the global allocator of this process (it has seen an
/// allocation).
pub fn is_measurable() -> bool {
    // Make sure at least one allocation went through whatever allocator is installed.
    drop(std::hint::black_box(Box::new(0u8)));
    INSTALLED.load(Ordering::Relaxed)
}

/// Allocations (and reallocations) counted so far on counted threads.
pub(crate) fn allocations_so_far() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Counts this thread's allocations from now until the guard drops.
pub(crate) fn count_this_thread() -> CountGuard {
    let was = COUNTED.with(|c| c.replace(true));
    CountGuard { was }
}

/// Restores the thread's previous counting state when dropped.
pub(crate) struct CountGuard {
    was: bool,
}

impl Drop for CountGuard {
    fn drop(&mut self) {
        let was = self.was;
        COUNTED.with(|c| c.set(was));
    }
}

/// Marks a worker thread as counted for its whole life (rayon's start handler).
pub(crate) fn count_worker_thread() {
    COUNTED.with(|c| c.set(true));
}
