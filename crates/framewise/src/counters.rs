//! Per-frame counters: sums and gauges.
//!
//! A counter is one process-wide slot per name, leaked once when first named, and read-only
//! after. Adding to a sum or setting a gauge is an event in the counting thread's own ring,
//! stamped like a scope's begin (`thread::count`): no line another thread writes is touched,
//! and frame close reads none of it. The writer thread folds every count up to a frame's end
//! into that frame's values when it gathers the frame ([`Tally`]), so each count lands in
//! exactly one frame, the one whose end follows it. A gauge is a level: the last one set
//! before the frame's end. A counter appears in frames from the first time it is touched in
//! a session on (a sum that was not touched in a later frame reads 0, which is exact);
//! before that it is absent, because nothing was measured.

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

use framewise_format::model::{CounterKind, CounterValue, SymId};

use crate::intern::{intern_named, NamedKind};
use crate::thread::{self, Count};
use crate::ENABLED;

/// The shared state of one counter.
#[doc(hidden)]
#[derive(Debug)]
pub struct CounterSlot {
    /// The `kind` word of its counts' ring events: names the slot's place in creation
    /// order, which the writer's [`Tally`] is indexed by.
    count_kind: u32,
    id: SymId,
    kind: CounterKind,
}

impl CounterSlot {
    /// Records a value on the calling thread; the writer reads it the way the slot's own
    /// kind does: a sum adds, a gauge sets. The kind a name was first used with wins over the
    /// macro or handle that writes to it, so a `counter!` on a gauge's name never adds into
    /// a level that is not reset between frames.
    #[inline(always)]
    fn record(&self, value: i64) {
        thread::count(self.count_kind, value);
    }
}

/// Every counter slot ever named, in creation order (taken to name a counter, and by the
/// writer when a count names a slot it has not seen yet).
static SLOTS: LazyLock<Mutex<Vec<&'static CounterSlot>>> = LazyLock::new(Mutex::default);

/// How many counters were ever named: frame close's estimate of a frame's counter values
/// (a line written only when a counter is named).
static NAMED: AtomicU32 = AtomicU32::new(0);

/// How many counters were ever named (an upper bound on a frame's counter values).
#[inline(always)]
pub(crate) fn named() -> usize {
    NAMED.load(Ordering::Relaxed) as usize
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
    // Far below 2^27 (a count's index bits): one slot per counter name.
    let index = u32::try_from(slots.len()).unwrap_or(u32::MAX);
    let slot: &'static CounterSlot = Box::leak(Box::new(CounterSlot {
        count_kind: thread::count_kind(index),
        id,
        kind,
    }));
    slots.push(slot);
    NAMED.store(
        u32::try_from(slots.len()).unwrap_or(u32::MAX),
        Ordering::Relaxed,
    );
    slot
}

/// The index of the slot for a counter name (unit tests).
#[cfg(test)]
pub(crate) fn slot_index(name: &str, kind: CounterKind) -> u32 {
    let id = slot_for(name, kind).id;
    let index = slots().iter().position(|slot| slot.id == id);
    index.map_or(u32::MAX, |index| index as u32)
}

/// The symbol of the slot at `index` (unit tests).
#[cfg(test)]
pub(crate) fn slot_symbol(index: u32) -> SymId {
    slots()
        .get(index as usize)
        .map_or(SymId::MAX, |slot| slot.id)
}

/// A counter's value in the frame being gathered, on the writer thread.
#[derive(Clone, Copy, Default)]
struct Cell {
    /// Touched in this session: the counter appears in every frame from then on.
    touched: bool,
    /// A sum's total in the frame, or a gauge's level.
    value: i64,
    /// When a gauge's level was set (the latest set wins, across threads).
    set_at_ns: u64,
}

/// The writer's fold of the counts drained from the threads' rings: one cell per counter
/// slot, by index. A session's writer starts with an empty one.
#[derive(Default)]
pub(crate) struct Tally {
    cells: Vec<Cell>,
    /// Each slot's symbol and kind, by index, as far as the writer has seen slots.
    slots: Vec<(SymId, CounterKind)>,
}

impl Tally {
    /// Folds one count in.
    pub(crate) fn add(&mut self, count: &Count, at_ns: u64) {
        let index = count.counter as usize;
        if index >= self.slots.len() {
            self.learn();
        }
        let Some(&(_, kind)) = self.slots.get(index) else {
            return;
        };
        if self.cells.len() <= index {
            self.cells.resize(index + 1, Cell::default());
        }
        let Some(cell) = self.cells.get_mut(index) else {
            return;
        };
        cell.touched = true;
        if count.declare {
            return;
        }
        match kind {
            CounterKind::Sum => cell.value = cell.value.wrapping_add(count.value),
            CounterKind::Gauge => {
                if at_ns >= cell.set_at_ns {
                    cell.value = count.value;
                    cell.set_at_ns = at_ns;
                }
            }
        }
    }

    /// Reads every slot named so far (the registry's lock, on the writer thread).
    #[cold]
    #[inline(never)]
    fn learn(&mut self) {
        self.slots.clear();
        self.slots
            .extend(slots().iter().map(|slot| (slot.id, slot.kind)));
    }

    /// Forgets the sums folded since the last frame (the counts of frames dropped), keeping
    /// what was touched and the gauges' levels.
    pub(crate) fn discard_sums(&mut self) {
        for (cell, &(_, kind)) in self.cells.iter_mut().zip(&self.slots) {
            if kind == CounterKind::Sum {
                cell.value = 0;
            }
        }
    }

    /// The frame's value of every counter touched in the session, in creation order, into
    /// `out`; sums go back to zero.
    pub(crate) fn take_frame(&mut self, out: &mut Vec<CounterValue>) {
        out.clear();
        for (cell, &(id, kind)) in self.cells.iter_mut().zip(&self.slots) {
            if !cell.touched {
                continue;
            }
            out.push(CounterValue {
                counter: id,
                value: cell.value,
            });
            if kind == CounterKind::Sum {
                cell.value = 0;
            }
        }
    }
}

/// A static call site of `counter!` or `gauge!`.
#[doc(hidden)]
#[derive(Debug)]
pub struct CounterSite {
    name: &'static str,
    kind: CounterKind,
    slot: AtomicPtr<CounterSlot>,
}

impl CounterSite {
    /// A sum counter's call site.
    pub const fn sum(name: &'static str) -> Self {
        Self {
            name,
            kind: CounterKind::Sum,
            slot: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// A gauge's call site.
    pub const fn gauge(name: &'static str) -> Self {
        Self {
            name,
            kind: CounterKind::Gauge,
            slot: AtomicPtr::new(std::ptr::null_mut()),
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
        let slot = slot_for(self.name, self.kind);
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
            thread::declare(self.slot.count_kind);
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
