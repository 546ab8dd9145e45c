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
//! lie one after another, so that close reads few pages for them): when its thread exits it
//! is released with its totals as they stand (close still reads them), and the next thread
//! that counts claims it and goes on adding to the same totals, so `seen` stays right across
//! owners. The blocks taken are as many as the threads that ever counted at once, up to
//! [`BLOCKS`] (a thread past those counts into the shared slots). Close reads them without a
//! lock: a block is counted as taken only once claimed, and never given back.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
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

/// The blocks, one after another in a static array, where frame close finds them without a
/// lock or a pointer chase: it reads how many were taken, and the totals' lines of those, all
/// at once. Page-aligned, so that the count and the first seven blocks fill one 4 KiB page.
/// Blocks are taken in order as threads first count, never given back; the pages of those
/// never taken are never touched.
#[repr(C, align(4096))]
struct Table {
    /// Blocks taken: `blocks[..taken]` (each counted, with release ordering, once complete).
    taken: AtomicUsize,
    blocks: [Cells; BLOCKS],
}

// The count's line and seven blocks are one page.
const _: () = assert!(std::mem::offset_of!(Table, blocks) + 7 * size_of::<Cells>() == 4096);

static TABLE: Table = Table {
    taken: AtomicUsize::new(0),
    blocks: [const {
        Cells {
            counts: [const { AtomicI64::new(0) }; CELLS],
            claimed: AtomicBool::new(false),
        }
    }; BLOCKS],
};

/// The totals as frame close (or session start) last read them, by block and then by cell,
/// as the blocks hold them, written only there: close goes through each block's totals and
/// these side by side, eight cells a line (32 KiB, of which close touches the lines of the
/// blocks taken and the sums it reads).
#[repr(C, align(64))]
struct Seen([[AtomicI64; CELLS]; BLOCKS]);

static SEEN: Seen = Seen([const { [const { AtomicI64::new(0) }; CELLS] }; BLOCKS]);

/// New blocks are taken one at a time.
static TAKING: Mutex<()> = Mutex::new(());

/// Every block taken, in order, without a lock.
fn blocks_taken() -> &'static [Cells] {
    let taken = TABLE.taken.load(Ordering::Acquire).min(BLOCKS);
    &TABLE.blocks[..taken]
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
        // SAFETY: the pointer comes from a `&'static Cells` of `TABLE`.
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

/// Claims a released block for the calling thread, or takes a new one. `None` while the
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
            let cells = blocks_taken()
                .iter()
                .find(|cells| {
                    cells
                        .claimed
                        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                })
                .or_else(take_new);
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
fn take_new() -> Option<&'static Cells> {
    let _one_at_a_time = TAKING.lock().unwrap_or_else(PoisonError::into_inner);
    let index = TABLE.taken.load(Ordering::Relaxed);
    let cells: &'static Cells = TABLE.blocks.get(index)?;
    // Not counted as taken yet: no other thread can claim it before the store below.
    cells.claimed.store(true, Ordering::Relaxed);
    TABLE.taken.store(index + 1, Ordering::Release);
    Some(cells)
}

/// Gives `grown` each cell whose bit is set in `cells` (and no other) with what one thread
/// added to that sum since the last call (frame close, one at a time), when it added
/// anything. Goes through the blocks one by one, each block's totals beside its values as last
/// read; gives `line` the line of each block's totals of the lowest cell asked for.
pub(crate) fn take_all(
    cells: u64,
    mut grown: impl FnMut(usize, i64),
    mut line: impl FnMut(*const u8),
) {
    if cells == 0 {
        return;
    }
    let first = cells.trailing_zeros() as usize % CELLS;
    for (block, seen) in blocks_taken().iter().zip(&SEEN.0) {
        line(std::ptr::from_ref(&block.counts[first]).cast());
        let mut left = cells;
        while left != 0 {
            // Below 64, as `CELLS`: the `%` spares the bounds checks.
            let cell = left.trailing_zeros() as usize % CELLS;
            left &= left - 1;
            let count = block.counts[cell].load(Ordering::Relaxed);
            let before = seen[cell].load(Ordering::Relaxed);
            if count != before {
                seen[cell].store(count, Ordering::Relaxed);
                grown(cell, count.wrapping_sub(before));
            }
        }
    }
}

/// What every thread added to the sum with cell `cell` since the last take: [`take_all`] for
/// one cell.
#[cfg(test)]
fn take(cell: usize, line: impl FnMut(*const u8)) -> i64 {
    let mut sum = 0i64;
    take_all(1 << cell, |_, grown| sum = sum.wrapping_add(grown), line);
    sum
}

/// Forgets every total counted so far (session start, while no frame closes).
pub(crate) fn reset() {
    for (cells, seen) in blocks_taken().iter().zip(&SEEN.0) {
        for (count, seen) in cells.counts.iter().zip(seen) {
            seen.store(count.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }
}

/// Asks for the lines close reads first, without waiting for them: the count of blocks taken
/// and the first block's values as last read.
#[inline(always)]
pub(crate) fn prefetch() {
    crate::thread::prefetch_line(std::ptr::from_ref(&TABLE).cast(), false);
    crate::thread::prefetch_line(std::ptr::from_ref(&SEEN).cast(), true);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Taken by the tests that claim blocks: one of them fills the table on purpose, and a
    /// thread of the other, claiming a block meanwhile, would be refused.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
        ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[test]
    fn counts_from_exited_threads_are_taken_once_and_blocks_are_reused() {
        let _one_at_a_time = one_at_a_time();
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
        let _one_at_a_time = one_at_a_time();
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
