//! Peak heap bytes allocated by the calling thread while a closure runs: a deterministic
//! memory bound for a test (no timing), unaffected by tests running on other threads.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// (live bytes, peak live bytes) allocated by this thread.
    static LIVE: Cell<(isize, isize)> = const { Cell::new((0, 0)) };
}

fn account(delta: isize) {
    let _ = LIVE.try_with(|c| {
        let (live, peak) = c.get();
        let live = live + delta;
        c.set((live, peak.max(live)));
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        account(layout.size() as isize);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        account(-(layout.size() as isize));
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        account(layout.size() as isize);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        account(new_size as isize - layout.size() as isize);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Runs `f` and returns its result with the most heap bytes this thread held at once
/// while it ran, beyond what it held before.
pub fn peak_bytes_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(|c| {
        let (live, _) = c.get();
        c.set((live, live));
        live
    });
    let out = f();
    let peak = LIVE.with(|c| c.get().1);
    (out, usize::try_from(peak - base).unwrap_or(0))
}
