//! Per-frame counters: sums and gauges.
//!
//! A counter is one process-wide slot per name, leaked once when first named. Adding to a sum
//! adds to the calling thread's own running total for it (`cells`: a load and a store in a
//! line no other thread writes); frame close reads every thread's totals and takes what they
//! grew by since the close before, so counts from any thread are exact and every count lands
//! in exactly one frame. (The first [`cells::CELLS`] sums named have a cell per thread; later
//! ones, and counts made while a thread is being torn down, go to the slot's shared value
//! with one relaxed `fetch_add`, which close swaps back to zero.) A gauge is a level: frame close
//! reads it. A counter appears in frames from the first time it is touched in a session on
//! (a sum that was not touched in a later frame reads 0, which is exact); before that it is
//! absent, because nothing was measured.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, OnceLock, PoisonError};

use framewise_format::model::{CounterKind, CounterValue, SymId};

use crate::intern::{intern_named, NamedKind};
use crate::ENABLED;

mod cells;

/// A slot's `cell` when it has none (a gauge, or a sum past the first [`cells::CELLS`]).
const NO_CELL: usize = usize::MAX;

/// The shared state of one counter.
#[doc(hidden)]
#[derive(Debug)]
pub struct CounterSlot {
    /// A gauge's level; a sum's counts that no thread's cell took (see the module's doc).
    value: AtomicI64,
    touched: AtomicBool,
    id: SymId,
    kind: CounterKind,
    /// The sum's index in every thread's cells, or [`NO_CELL`].
    cell: usize,
    /// The slot named after this one: the slots form a list in creation order, which frame
    /// close walks without taking the registry's lock.
    next: OnceLock<&'static CounterSlot>,
}

impl CounterSlot {
    #[inline(always)]
    fn mark_touched(&self) {
        // A load first: the flag is set once per session, and a store on every add would keep
        // the cache line bouncing between counting threads.
        if !self.touched.load(Ordering::Relaxed) {
            self.touched.store(true, Ordering::Relaxed);
        }
    }

    #[inline(always)]
    fn add(&self, delta: i64) {
        if self.cell == NO_CELL || !cells::add(self.cell, delta) {
            self.value.fetch_add(delta, Ordering::Relaxed);
        }
        self.mark_touched();
    }

    #[inline(always)]
    fn set(&self, level: i64) {
        self.value.store(level, Ordering::Relaxed);
        self.mark_touched();
    }

    /// Writes a value the way the slot's own kind reads it: a sum adds, a gauge sets. The
    /// kind a name was first used with wins over the macro or handle that writes to it, so a
    /// `counter!` on a gauge's name never adds into a level that frame close does not reset.
    #[inline(always)]
    fn record(&self, value: i64) {
        match self.kind {
            CounterKind::Sum => self.add(value),
            CounterKind::Gauge => self.set(value),
        }
    }
}

/// Every counter slot ever named, in creation order (taken to name a counter).
static SLOTS: LazyLock<Mutex<Vec<&'static CounterSlot>>> = LazyLock::new(Mutex::default);

/// The first slot named: the head of the list the slots' `next` links, set once.
static FIRST: OnceLock<&'static CounterSlot> = OnceLock::new();

/// Every slot, in creation order, without the registry's lock: a slot is linked (with
/// release ordering, by `OnceLock`) only once it is complete, and never unlinked.
fn each_slot() -> impl Iterator<Item = &'static CounterSlot> {
    std::iter::successors(FIRST.get().copied(), |slot| slot.next.get().copied())
}

fn slots() -> MutexGuard<'static, Vec<&'static CounterSlot>> {
    SLOTS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The slot for a counter name, created on first use. A name keeps the kind it was first
/// given: a counter is a sum or a gauge for the life of the process.
fn slot_for(name: &str, kind: CounterKind) -> &'static CounterSlot {
    let id = intern_named(NamedKind::Counter, name, kind);
    let mut slots = slots();
    if let Some(slot) = slots.iter().find(|s| s.id == id) {
        return slot;
    }
    let sums = slots.iter().filter(|s| s.kind == CounterKind::Sum).count();
    let cell = if kind == CounterKind::Sum && sums < cells::CELLS {
        sums
    } else {
        NO_CELL
    };
    let slot: &'static CounterSlot = Box::leak(Box::new(CounterSlot {
        value: AtomicI64::new(0),
        touched: AtomicBool::new(false),
        id,
        kind,
        cell,
        next: OnceLock::new(),
    }));
    // Linked while the registry's lock is held, so links are made one at a time, in order.
    match slots.last() {
        Some(last) => {
            let _ = last.next.set(slot);
        }
        None => {
            let _ = FIRST.set(slot);
        }
    }
    slots.push(slot);
    slot
}

/// Forgets every value and touch: called at session start, while no session records.
pub(crate) fn reset_all() {
    for slot in slots().iter() {
        slot.value.store(0, Ordering::Relaxed);
        slot.touched.store(false, Ordering::Relaxed);
    }
    cells::reset();
}

/// Appends this frame's value of every counter touched in the session, resetting sums, and
/// gives `line` the lines the next call will read and could find only by walking (at most
/// [`LINES_ASKED_FOR`], each with its index below that): the first [`SLOTS_ASKED_FOR`] slots',
/// then each thread's line of its totals of the first sum read. Takes no lock: the slots are
/// walked through their links, the threads' totals found in their table, which is gone
/// through once, block by block, for every sum read (not once for each sum).
pub(crate) fn collect(out: &mut Vec<CounterValue>, mut line: impl FnMut(usize, *const u8)) {
    // The sums with cells read, and each one's entry in `out`: what the threads' totals grew
    // by is added once the walk is over, block by block, not sum by sum.
    // Written for the cells in `cells_read` before they are read; the others never are (no
    // need to zero 256 bytes every close).
    let mut entry_of_cell = [MaybeUninit::<u32>::uninit(); cells::CELLS];
    let mut cells_read = 0u64;
    for (walked, slot) in each_slot().enumerate() {
        if walked < SLOTS_ASKED_FOR {
            line(walked, std::ptr::from_ref(slot).cast());
        }
        if !slot.touched.load(Ordering::Relaxed) {
            continue;
        }
        let value = match slot.kind {
            CounterKind::Sum => {
                if let (Some(entry), Ok(index)) =
                    (entry_of_cell.get_mut(slot.cell), u32::try_from(out.len()))
                {
                    entry.write(index);
                    cells_read |= 1 << slot.cell;
                }
                // Swapped only when something is there: a load leaves the line shared with
                // the threads that read the slot to count.
                match slot.value.load(Ordering::Relaxed) {
                    0 => 0,
                    _ => slot.value.swap(0, Ordering::Relaxed),
                }
            }
            CounterKind::Gauge => slot.value.load(Ordering::Relaxed),
        };
        out.push(CounterValue {
            counter: slot.id,
            value,
        });
    }
    let mut asked = SLOTS_ASKED_FOR;
    cells::take_all(
        cells_read,
        |cell, grown| {
            // SAFETY: `take_all` gives only cells of `cells_read`, whose entry the walk wrote.
            let index = unsafe { entry_of_cell[cell % cells::CELLS].assume_init() } as usize;
            if let Some(entry) = out.get_mut(index) {
                entry.value = entry.value.wrapping_add(grown);
            }
        },
        |totals| {
            if asked < LINES_ASKED_FOR {
                line(asked, totals);
                asked += 1;
            }
        },
    );
}

/// How many slots' lines [`collect`] writes down for frame close to ask for at its next call.
const SLOTS_ASKED_FOR: usize = 4;

/// How many lines in all [`collect`] writes down: the slots' and then threads' cells.
pub(crate) const LINES_ASKED_FOR: usize = SLOTS_ASKED_FOR + 4;

/// The line of the slots' list head, which [`collect`] reads first.
#[inline(always)]
pub(crate) fn head_line() -> *const u8 {
    std::ptr::from_ref(&FIRST).cast()
}

/// Asks for the line of the slots' list head and the first lines of the threads' cells,
/// without waiting for them.
#[inline(always)]
pub(crate) fn prefetch_head() {
    crate::thread::prefetch(&FIRST, 1);
    cells::prefetch();
}

/// A static call site of `counter!` or `gauge!`.
///
/// 16 bytes and 16-aligned, its name and kind behind a reference (read only when the site
/// first finds its slot), as a `scope!` site is: the call sites a frame runs through share
/// cache lines four to a line.
#[doc(hidden)]
#[derive(Debug)]
#[repr(C, align(16))]
pub struct CounterSite {
    slot: AtomicPtr<CounterSlot>,
    name: &'static CounterName,
}

/// A `counter!` or `gauge!` call site's name and kind.
#[doc(hidden)]
#[derive(Debug)]
pub struct CounterName {
    name: &'static str,
    kind: CounterKind,
}

impl CounterName {
    /// A sum counter's name.
    pub const fn sum(name: &'static str) -> Self {
        Self {
            name,
            kind: CounterKind::Sum,
        }
    }

    /// A gauge's name.
    pub const fn gauge(name: &'static str) -> Self {
        Self {
            name,
            kind: CounterKind::Gauge,
        }
    }
}

impl CounterSite {
    /// The call site of the counter or gauge `name`.
    pub const fn new(name: &'static CounterName) -> Self {
        Self {
            slot: AtomicPtr::new(std::ptr::null_mut()),
            name,
        }
    }

    #[inline(always)]
    fn slot(&'static self) -> &'static CounterSlot {
        let ptr = self.slot.load(Ordering::Acquire);
        if ptr.is_null() {
            return self.slot_slow();
        }
        // SAFETY: a non-null pointer was stored from a leaked `&'static CounterSlot`.
        unsafe { &*ptr }
    }

    #[cold]
    #[inline(never)]
    fn slot_slow(&'static self) -> &'static CounterSlot {
        let slot = slot_for(self.name.name, self.name.kind);
        self.slot
            .store(std::ptr::from_ref(slot).cast_mut(), Ordering::Release);
        slot
    }

    /// Adds to a sum counter, or sets a gauge, when a session is recording. The name's
    /// first use decides which: a `counter!` on a gauge's name sets the gauge.
    #[inline(always)]
    pub fn record(&'static self, value: i64) {
        if ENABLED.load(Ordering::Relaxed) {
            self.slot().record(value);
        }
    }
}

/// A handle to a sum counter, for hot loops: no call-site lookup per add.
///
/// ```
/// let draws = framewise::Counter::sum("draw_calls");
/// for _ in 0..3 {
///     draws.add(1); // nothing is recorded while no session runs
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Counter {
    slot: &'static CounterSlot,
}

impl Counter {
    /// The sum counter with this name (created on first use; a name that was first used as a
    /// gauge stays a gauge).
    pub fn sum(name: &str) -> Self {
        Self {
            slot: slot_for(name, CounterKind::Sum),
        }
    }

    /// Adds `delta` to this frame's sum, when a session is recording (sets the level when
    /// the name was first used as a gauge).
    #[inline(always)]
    pub fn add(&self, delta: i64) {
        if !cfg!(feature = "disabled") && ENABLED.load(Ordering::Relaxed) {
            self.slot.record(delta);
        }
    }

    /// Makes the counter appear in every frame from now on, with 0 where nothing is counted,
    /// so that "nothing happened" is recorded from the start of the session rather than from
    /// the first count.
    pub fn declare(&self) {
        if !cfg!(feature = "disabled") && ENABLED.load(Ordering::Relaxed) {
            self.slot.mark_touched();
        }
    }
}

/// A handle to a gauge: a level such as `entities` or `gpu_memory_bytes`.
#[derive(Clone, Copy, Debug)]
pub struct Gauge {
    slot: &'static CounterSlot,
}

impl Gauge {
    /// The gauge with this name (created on first use; a name that was first used as a sum
    /// stays a sum).
    pub fn new(name: &str) -> Self {
        Self {
            slot: slot_for(name, CounterKind::Gauge),
        }
    }

    /// The gauge's symbol id.
    pub(crate) fn symbol(&self) -> framewise_format::model::SymId {
        self.slot.id
    }

    /// Sets the level, when a session is recording. A frame carries the last level set.
    /// (Adds, when the name was first used as a sum.)
    #[inline(always)]
    pub fn set(&self, level: i64) {
        if !cfg!(feature = "disabled") && ENABLED.load(Ordering::Relaxed) {
            self.slot.record(level);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sums named past the threads' cells add to their shared slot, exactly, from any
    /// thread (the unit tests' other sums may then have no cells either: the recorder's
    /// integration tests, a process of their own, name fewer than [`cells::CELLS`]).
    #[test]
    fn sums_past_the_cells_add_to_their_shared_slot() {
        let slots: Vec<_> = (0..cells::CELLS + 8)
            .map(|i| slot_for(&format!("unit.past_the_cells.{i}"), CounterKind::Sum))
            .collect();
        let past: Vec<_> = slots.iter().rev().take(8).copied().collect();
        assert!(past.iter().all(|slot| slot.cell == NO_CELL));
        let counting = past.clone();
        std::thread::spawn(move || {
            for (i, slot) in counting.iter().enumerate() {
                slot.record(i as i64 + 1);
                slot.record(10);
            }
        })
        .join()
        .unwrap_or_else(|_| panic!("counting thread panicked"));
        for (i, slot) in past.iter().enumerate() {
            assert_eq!(slot.value.load(Ordering::Relaxed), i as i64 + 11);
        }
    }
}
