//! Per-thread cells for sum counters: a count costs its thread a load and a store.
//!
//! Every thread that adds to a sum gets a block of [`CELLS`] running totals, one per sum
//! counter (by the counter's `cell` index), that only it writes. Frame close reads each
//! block's totals and takes the difference from what it read at the previous close (`seen`,
//! which only close writes), so a count lands in exactly one frame, as with one shared
//! atomic, without every counting thread's `fetch_add` taking the same cache line from the
//! others.
//!
//! A block is taken from a static array when first needed and never given back (the blocks
//! lie one after another, so that close reads few pages for them): when its thread exits it is released
//! with its totals as they stand (close still reads them), and the next thread that counts
//! claims it and goes on adding to the same totals, so `seen` stays right across owners. The
//! blocks are as many as the threads that ever counted at once, up to [`BLOCKS`] (a thread
//! past those counts into the shared slots). Close finds them in a table it reads without a
//! lock: a block is entered only once it is complete, and never removed.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Sum counters with a cell in every block (by creation order); a sum named after these is
/// added to its shared slot with a `fetch_add`, still exactly.
pub(crate) const CELLS: usize = 64;

/// Blocks at most: threads counting at once past these count into the shared slots.
const BLOCKS: usize = 64;

/// One thread's running totals.
#[repr(C, align(64))]
pub(crate) struct Cells {
    /// Running totals, written only by the owning thread (wrapping, as the shared slot's).
    counts: [AtomicI64; CELLS],
    /// A thread owns the block (in a line of its own, past the totals).
    claimed: AtomicBool,
}

// The totals fill whole lines of their own.
const _: () = assert!(std::mem::offset_of!(Cells, claimed) % 64 == 0);

/// The blocks, where frame close finds them without a lock or a pointer chase: how many, and
/// each one's address, from the start of a line (close reads that line, and the totals' lines
/// it points to all at once, where a linked list would have it wait for one after another).
#[repr(C, align(64))]
struct Table {
    /// Blocks allocated: `blocks[..allocated]` are set (each before the count that covers it,
    /// with release ordering).
    allocated: AtomicUsize,
    blocks: [AtomicPtr<Cells>; BLOCKS],
}

static TABLE: Table = Table {
    allocated: AtomicUsize::new(0),
    blocks: [const { AtomicPtr::new(std::ptr::null_mut()) }; BLOCKS],
};

/// The totals as frame close (or session start) last read them, by cell and then by block,
/// written only there: one cell's values for eight blocks share a line, which stays in the
/// closing core's cache (32 KiB, of which close touches the lines of the sums it reads).
#[repr(C, align(64))]
struct Seen([[AtomicI64; BLOCKS]; CELLS]);

static SEEN: Seen = Seen([const { [const { AtomicI64::new(0) }; BLOCKS] }; CELLS]);

/// The blocks themselves, one after another (eight share a 4 KiB page): taken in order as
/// threads first count, the pages of those never taken are never touched.
static STORE: [Cells; BLOCKS] = [const {
    Cells {
        counts: [const { AtomicI64::new(0) }; CELLS],
        claimed: AtomicBool::new(false),
    }
}; BLOCKS];

/// Allocations are made one at a time.
static ALLOCATING: Mutex<()> = Mutex::new(());

/// Every block allocated, in allocation order, with its index, without a lock.
fn each_block() -> impl Iterator<Item = (usize, &'static Cells)> {
    let allocated = TABLE.allocated.load(Ordering::Acquire).min(BLOCKS);
    TABLE.blocks[..allocated]
        .iter()
        .enumerate()
        .filter_map(|(index, block)| {
            // SAFETY: a non-null pointer was stored from a `&'static Cells` of `STORE`.
            unsafe { block.load(Ordering::Acquire).as_ref() }.map(|cells| (index, cells))
        })
}

/// Releases the thread's block when the thread exits.
struct Owner(&'static Cells);

impl Drop for Owner {
    fn drop(&mut self) {
        // Later thread-local destructors count into the shared slots instead.
        let _ = CURRENT.try_with(|current| current.set(std::ptr::null()));
        // Release: the next owner's first load sees this thread's last store.
        self.0.claimed.store(false, Ordering::Release);
    }
}

thread_local! {
    /// The thread's block; null until the thread first counts (or after it exited).
    static CURRENT: Cell<*const Cells> = const { Cell::new(std::ptr::null()) };
    static OWNER: RefCell<Option<Owner>> = const { RefCell::new(None) };
    /// The table was full when the thread first counted: it counts into the shared slots
    /// from then on, without scanning the table again at every count.
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

/// Adds `delta` to the calling thread's total for the sum with cell `cell` (below [`CELLS`]);
/// false, with nothing added, when the thread has no block (it is being torn down, or the
/// table was full when it first counted).
#[inline(always)]
pub(crate) fn add(cell: usize, delta: i64) -> bool {
    let ptr = CURRENT.with(Cell::get);
    let cells = if ptr.is_null() {
        match claim() {
            Some(cells) => cells,
            None => return false,
        }
    } else {
        // SAFETY: the pointer comes from a `&'static Cells` of `STORE`.
        unsafe { &*ptr }
    };
    let Some(count) = cells.counts.get(cell) else {
        return false;
    };
    // Only this thread writes the total: a load and a store, no read-modify-write.
    count.store(
        count.load(Ordering::Relaxed).wrapping_add(delta),
        Ordering::Relaxed,
    );
    true
}

/// Claims a released block for the calling thread, or allocates one. `None` while the
/// thread's thread-locals are being destroyed, or when [`BLOCKS`] threads hold one.
#[cold]
#[inline(never)]
fn claim() -> Option<&'static Cells> {
    if REFUSED.with(Cell::get) {
        return None;
    }
    let cells = OWNER
        .try_with(|owner| {
            let mut owner = owner.try_borrow_mut().ok()?;
            let cells = each_block()
                .map(|(_, cells)| cells)
                .find(|cells| {
                    cells
                        .claimed
                        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                })
                .or_else(allocate);
            let Some(cells) = cells else {
                REFUSED.with(|refused| refused.set(true));
                return None;
            };
            *owner = Some(Owner(cells));
            Some(cells)
        })
        .ok()
        .flatten()?;
    CURRENT.with(|current| current.set(cells));
    Some(cells)
}

/// A new block, claimed, added to the table; `None` when the table is full.
fn allocate() -> Option<&'static Cells> {
    let _one_at_a_time = ALLOCATING.lock().unwrap_or_else(PoisonError::into_inner);
    let index = TABLE.allocated.load(Ordering::Relaxed);
    let slot = TABLE.blocks.get(index)?;
    let cells: &'static Cells = STORE.get(index)?;
    // Not in the table yet: no other thread can claim it before the store below publishes it.
    cells.claimed.store(true, Ordering::Relaxed);
    slot.store(std::ptr::from_ref(cells).cast_mut(), Ordering::Release);
    TABLE.allocated.store(index + 1, Ordering::Release);
    Some(cells)
}

/// What every thread added to the sum with cell `cell` since the last call (frame close, one
/// at a time). Reads one line of each block's totals, and gives `line` each line's address.
pub(crate) fn take(cell: usize, mut line: impl FnMut(*const u8)) -> i64 {
    let Some(seen) = SEEN.0.get(cell) else {
        return 0;
    };
    let mut sum = 0i64;
    for (index, cells) in each_block() {
        let (Some(count), Some(seen)) = (cells.counts.get(cell), seen.get(index)) else {
            continue;
        };
        line(std::ptr::from_ref(count).cast());
        let count = count.load(Ordering::Relaxed);
        let before = seen.load(Ordering::Relaxed);
        if count != before {
            seen.store(count, Ordering::Relaxed);
            sum = sum.wrapping_add(count.wrapping_sub(before));
        }
    }
    sum
}

/// Forgets every total counted so far (session start, while no frame closes).
pub(crate) fn reset() {
    for (index, cells) in each_block() {
        for (count, seen) in cells.counts.iter().zip(&SEEN.0) {
            if let Some(seen) = seen.get(index) {
                seen.store(count.load(Ordering::Relaxed), Ordering::Relaxed);
            }
        }
    }
}

/// Asks for the lines close reads first, without waiting for them: the table's first and the
/// first sum's values as last read.
#[inline(always)]
pub(crate) fn prefetch() {
    crate::thread::prefetch_line(std::ptr::from_ref(&TABLE).cast(), false);
    crate::thread::prefetch_line(std::ptr::from_ref(&SEEN).cast(), true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_exited_threads_are_taken_once_and_blocks_are_reused() {
        // Cell 63 is past what this crate's other tests name (they run in this process).
        let cell = CELLS - 1;
        take(cell, |_| {});
        for round in 0..4 {
            std::thread::spawn(move || {
                for _ in 0..10 {
                    assert!(add(cell, round + 1));
                }
            })
            .join()
            .unwrap_or_else(|_| panic!("counting thread panicked"));
            assert_eq!(take(cell, |_| {}), 10 * (round + 1));
            assert_eq!(take(cell, |_| {}), 0, "taken twice");
        }
        assert!(!add(CELLS, 1), "a cell past the block is refused");
    }

    #[test]
    fn threads_past_the_table_are_refused_and_nothing_is_lost() {
        use std::sync::{Arc, Barrier};
        let cell = CELLS - 2;
        take(cell, |_| {});
        let threads = BLOCKS + 16;
        let shared = Arc::new(AtomicI64::new(0));
        let all_counted = Arc::new(Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (shared, all_counted) = (Arc::clone(&shared), Arc::clone(&all_counted));
                std::thread::spawn(move || {
                    // What `CounterSlot::add` does with a refused count.
                    if !add(cell, 1) {
                        shared.fetch_add(1, Ordering::Relaxed);
                    }
                    // Every thread holds its block until all have counted.
                    all_counted.wait();
                })
            })
            .collect();
        for handle in handles {
            handle
                .join()
                .unwrap_or_else(|_| panic!("counting thread panicked"));
        }
        let refused = shared.load(Ordering::Relaxed);
        assert!(refused >= 16, "{refused} threads refused");
        assert_eq!(take(cell, |_| {}) + refused, threads as i64);
    }
}
