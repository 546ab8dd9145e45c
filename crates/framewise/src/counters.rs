//! Per-frame counters: sums and gauges.
//!
//! A counter is one process-wide slot per name, made once when first named. The slots lie 64
//! to a chunk (the first chunk static, later ones leaked as they are needed): each slot's head
//! (its name, where a value goes, whether it was touched in the session) eight to a cache
//! line, apart from the values that gauges and shared sums write. Frame close reads the heads
//! of the slots named, lines it finds by address (not a line a slot, found by following
//! links), and the values of those touched. Adding to a sum adds to the calling thread's own
//! running total for it (`cells`: a load and a store in a line no other thread writes); frame
//! close reads every thread's totals and takes what they grew by since the close before, so
//! counts from any thread are exact and every count lands in exactly one frame. (The first
//! [`cells::CELLS`] sums named have a cell per thread; later ones, and counts made while a
//! thread is being torn down, go to the slot's shared value with one relaxed `fetch_add`,
//! which close swaps back to zero.) A gauge is a level: frame close reads it. A counter
//! appears in frames from the first time it is touched in a session on (a sum that was not
//! touched in a later frame reads 0, which is exact); before that it is absent, because
//! nothing was measured.

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU8, AtomicUsize};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

use framewise_format::model::{CounterKind, CounterValue, SymId};

use crate::intern::{intern_named, NamedKind};
use crate::ENABLED;

mod cells;

/// Slots a chunk holds.
const CHUNK_SLOTS: usize = 64;

/// A slot's route (see [`Head`]) when it is a sum without a cell (past the first
/// [`cells::CELLS`]): counts go to its shared value.
const SHARED_SUM: u8 = u8::MAX - 1;

/// A slot's route when it is a gauge.
const GAUGE: u8 = u8::MAX;

// Every cell index is a route below the others.
const _: () = assert!(cells::CELLS <= SHARED_SUM as usize);

/// 64 counter slots: what counting and frame close read of each (its head) and what gauges
/// and shared sums write (its value), apart.
#[repr(C, align(64))]
struct Chunk {
    /// Each slot's [`Head`], eight to a line (first: a slot is the address of its head).
    heads: [Head; CHUNK_SLOTS],
    /// A gauge's level; a sum's counts that no thread's cell took (see the module's doc), at
    /// [`VALUE_AFTER_HEAD`] bytes from its head.
    values: [AtomicI64; CHUNK_SLOTS],
    /// Slots named in this chunk: `heads[..named]` (each counted, with release ordering, once
    /// its head is written).
    named: AtomicUsize,
    /// The chunk made after this one, once this one is full (set once, complete).
    next: AtomicPtr<Chunk>,
}

/// From a slot's head to its value: the same for every slot, as heads and values are the same
/// size.
const VALUE_AFTER_HEAD: usize = std::mem::offset_of!(Chunk, values);
const _: () = assert!(std::mem::offset_of!(Chunk, heads) == 0);
const _: () = assert!(size_of::<Head>() == size_of::<AtomicI64>());

impl Chunk {
    const fn new() -> Self {
        Self {
            heads: [const { Head::new() }; CHUNK_SLOTS],
            values: [const { AtomicI64::new(0) }; CHUNK_SLOTS],
            named: AtomicUsize::new(0),
            next: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The chunk made after this one, if any.
    #[inline(always)]
    fn next(&self) -> Option<&'static Chunk> {
        let next = self.next.load(Ordering::Acquire);
        // SAFETY: `next` is null or was stored from a leaked, complete `Box<Chunk>`.
        unsafe { next.as_ref() }
    }

    /// The heads of the slots named here, and their values.
    #[inline(always)]
    fn named(&self) -> impl Iterator<Item = (&Head, &AtomicI64)> {
        let named = self.named.load(Ordering::Acquire).min(CHUNK_SLOTS);
        self.heads[..named].iter().zip(&self.values)
    }
}

/// The first [`CHUNK_SLOTS`] slots named; the head of the chunks' list.
static FIRST: Chunk = Chunk::new();

/// A slot's head: the name's symbol, where a value goes (its route: below [`cells::CELLS`] a
/// sum's cell in every thread's block, else [`SHARED_SUM`] or [`GAUGE`]: one byte, one test on
/// a count's path), and whether the slot was touched in the session. The symbol and route are
/// written once, before the slot is handed out; `touched` once a session, by the first write.
#[repr(C, align(8))]
struct Head {
    id: AtomicU32,
    route: AtomicU8,
    touched: AtomicBool,
}

impl Head {
    const fn new() -> Self {
        Self {
            id: AtomicU32::new(0),
            route: AtomicU8::new(0),
            touched: AtomicBool::new(false),
        }
    }

    #[inline(always)]
    fn id(&self) -> SymId {
        self.id.load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn route(&self) -> u8 {
        self.route.load(Ordering::Relaxed)
    }
}

/// One counter's slot: the address of its head in its chunk.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct CounterSlot(NonNull<Head>);

impl std::fmt::Debug for CounterSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let head = self.head();
        let kind = match head.route() {
            GAUGE => CounterKind::Gauge,
            _ => CounterKind::Sum,
        };
        f.debug_struct("CounterSlot")
            .field("symbol", &head.id())
            .field("kind", &kind)
            .finish()
    }
}

// SAFETY: a slot points into a `'static` chunk of atomics, shared by every thread.
unsafe impl Send for CounterSlot {}
// SAFETY: as above.
unsafe impl Sync for CounterSlot {}

impl CounterSlot {
    /// Slot `index` (below [`CHUNK_SLOTS`]) of `chunk`.
    fn new(chunk: &'static Chunk, index: usize) -> Self {
        let heads = NonNull::from(chunk).cast::<Head>();
        // SAFETY: the index is within the chunk's heads. The pointer keeps the chunk's
        // provenance: `value` reaches past the heads with it.
        Self(unsafe { heads.add(index % CHUNK_SLOTS) })
    }

    #[inline(always)]
    fn head(self) -> &'static Head {
        // SAFETY: the slot is a head of a `'static` chunk (`new`).
        unsafe { self.0.as_ref() }
    }

    #[inline(always)]
    fn value(self) -> &'static AtomicI64 {
        // SAFETY: the slot's value lies `VALUE_AFTER_HEAD` bytes past its head, in the same
        // `'static` chunk, reached with the chunk's provenance (`new`).
        unsafe {
            self.0
                .byte_add(VALUE_AFTER_HEAD)
                .cast::<AtomicI64>()
                .as_ref()
        }
    }

    #[inline(always)]
    fn mark_touched(self) {
        // A load first: the flag is set once per session, and a store on every add would keep
        // the cache line bouncing between counting threads.
        let touched = &self.head().touched;
        if !touched.load(Ordering::Relaxed) {
            touched.store(true, Ordering::Relaxed);
        }
    }

    /// Writes a value the way the slot's own kind reads it: a sum adds, a gauge sets. The
    /// kind a name was first used with wins over the macro or handle that writes to it, so a
    /// `counter!` on a gauge's name never adds into a level that frame close does not reset.
    #[inline(always)]
    fn record(self, value: i64) {
        let route = self.head().route();
        let cell = usize::from(route);
        if cell >= cells::CELLS || !cells::add(cell, value) {
            self.record_shared(route, value);
        }
        self.mark_touched();
    }

    /// A gauge's level, or counts no thread's cell takes, into the slot's shared value.
    #[inline(always)]
    fn record_shared(self, route: u8, value: i64) {
        match route {
            GAUGE => self.value().store(value, Ordering::Relaxed),
            _ => {
                self.value().fetch_add(value, Ordering::Relaxed);
            }
        }
    }
}

/// The slots named so far (taken to name a counter).
struct Registry {
    /// Every slot, by its name's symbol.
    slots: HashMap<SymId, CounterSlot>,
    /// The chunk the next slot goes to (at `slots.len() % CHUNK_SLOTS`).
    last: &'static Chunk,
    /// Sums named so far: the next one's cell, while below [`cells::CELLS`].
    sums: usize,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| {
    Mutex::new(Registry {
        slots: HashMap::new(),
        last: &FIRST,
        sums: 0,
    })
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The slot for a counter name, created on first use. A name keeps the kind it was first
/// given: a counter is a sum or a gauge for the life of the process.
fn slot_for(name: &str, kind: CounterKind) -> CounterSlot {
    let id = intern_named(NamedKind::Counter, name, kind);
    let mut registry = registry();
    if let Some(slot) = registry.slots.get(&id) {
        return *slot;
    }
    let index = registry.slots.len() % CHUNK_SLOTS;
    if index == 0 && !registry.slots.is_empty() {
        let chunk: &'static Chunk = Box::leak(Box::new(Chunk::new()));
        // Linked complete, with release ordering: close walks the links without the lock.
        registry
            .last
            .next
            .store(std::ptr::from_ref(chunk).cast_mut(), Ordering::Release);
        registry.last = chunk;
    }
    let route = match kind {
        CounterKind::Sum if registry.sums < cells::CELLS => registry.sums as u8,
        CounterKind::Sum => SHARED_SUM,
        CounterKind::Gauge => GAUGE,
    };
    if kind == CounterKind::Sum {
        registry.sums += 1;
    }
    let chunk = registry.last;
    let slot = CounterSlot::new(chunk, index);
    let head = slot.head();
    head.id.store(id, Ordering::Relaxed);
    head.route.store(route, Ordering::Relaxed);
    // Counted once written: close reads the heads of those counted.
    chunk.named.store(index + 1, Ordering::Release);
    registry.slots.insert(id, slot);
    slot
}

/// Every chunk, in creation order, without the registry's lock.
fn each_chunk() -> impl Iterator<Item = &'static Chunk> {
    std::iter::successors(Some(&FIRST), |chunk| chunk.next())
}

/// Forgets every value and touch: called at session start, while no session records.
pub(crate) fn reset_all() {
    let _named = registry();
    for (head, value) in each_chunk().flat_map(Chunk::named) {
        value.store(0, Ordering::Relaxed);
        head.touched.store(false, Ordering::Relaxed);
    }
    cells::reset();
}

/// Appends this frame's value of every counter touched in the session, resetting sums, and
/// gives `line` the lines the next call will read and could find only by walking (at most
/// [`LINES_ASKED_FOR`], each with its index below that): each thread's line of its totals of
/// the first sum read. Takes no lock: the slots are found in their chunks, the threads'
/// totals in their table, which is gone through once, block by block, for every sum read (not
/// once for each sum).
pub(crate) fn collect(out: &mut Vec<CounterValue>, mut line: impl FnMut(usize, *const u8)) {
    // The sums with cells read, and each one's entry in `out`: what the threads' totals grew
    // by is added once the walk is over, block by block, not sum by sum.
    // Written for the cells in `cells_read` before they are read; the others never are (no
    // need to zero 256 bytes every close).
    let mut entry_of_cell = [MaybeUninit::<u32>::uninit(); cells::CELLS];
    let mut cells_read = 0u64;
    for (head, slot_value) in each_chunk().flat_map(Chunk::named) {
        if !head.touched.load(Ordering::Relaxed) {
            continue;
        }
        let value = match head.route() {
            GAUGE => slot_value.load(Ordering::Relaxed),
            route => {
                if let (Some(entry), Ok(at)) = (
                    entry_of_cell.get_mut(usize::from(route)),
                    u32::try_from(out.len()),
                ) {
                    entry.write(at);
                    cells_read |= 1 << route;
                }
                // Swapped only when something is there: a load leaves the line shared with
                // the threads that read it to count.
                match slot_value.load(Ordering::Relaxed) {
                    0 => 0,
                    _ => slot_value.swap(0, Ordering::Relaxed),
                }
            }
        };
        out.push(CounterValue {
            counter: head.id(),
            value,
        });
    }
    let mut asked = 0;
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

/// How many lines [`collect`] writes down for frame close to ask for at its next call: the
/// threads' lines of their totals.
pub(crate) const LINES_ASKED_FOR: usize = 4;

/// A line [`collect`] reads first, and one always mapped: the first chunk's count of slots
/// named.
#[inline(always)]
pub(crate) fn head_line() -> *const u8 {
    std::ptr::from_ref(&FIRST.named).cast()
}

/// Asks for the lines close reads first, without waiting for them: the first chunk's count
/// of slots named, its first lines of heads and of values, and the first lines of the
/// threads' cells.
#[inline(always)]
pub(crate) fn prefetch_head() {
    crate::thread::prefetch_line(head_line(), false);
    crate::thread::prefetch_line(std::ptr::from_ref(&FIRST.heads).cast(), false);
    crate::thread::prefetch_line(std::ptr::from_ref(&FIRST.values).cast(), false);
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
    /// The slot's head; null until the site first records.
    slot: AtomicPtr<Head>,
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
    fn slot(&'static self) -> CounterSlot {
        match NonNull::new(self.slot.load(Ordering::Acquire)) {
            Some(head) => CounterSlot(head),
            None => self.slot_slow(),
        }
    }

    #[cold]
    #[inline(never)]
    fn slot_slow(&'static self) -> CounterSlot {
        let slot = slot_for(self.name.name, self.name.kind);
        self.slot.store(slot.0.as_ptr(), Ordering::Release);
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
    slot: CounterSlot,
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
    slot: CounterSlot,
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
        self.slot.head().id()
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
        assert!(past.iter().all(|slot| slot.head().route() == SHARED_SUM));
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
            assert_eq!(slot.value().load(Ordering::Relaxed), i as i64 + 11);
        }
    }

    /// Slots past the first chunk are found again from a call site, each with its own value,
    /// and frame close reads every touched one, in the order they were named.
    #[test]
    fn slots_past_the_first_chunk_are_found_by_sites_and_by_close() {
        let names: Vec<&'static CounterName> = (0..2 * CHUNK_SLOTS + 5)
            .map(|i| {
                let name: &'static str = format!("unit.chunks.{i}").leak();
                &*Box::leak(Box::new(CounterName::gauge(name)))
            })
            .collect();
        let slots: Vec<_> = names
            .iter()
            .map(|name| slot_for(name.name, CounterKind::Gauge))
            .collect();
        assert!(each_chunk().count() >= 3);
        for (i, (slot, name)) in slots.iter().zip(&names).enumerate() {
            let site: &'static CounterSite = Box::leak(Box::new(CounterSite::new(name)));
            let found = site.slot();
            assert_eq!(found.0, slot.0);
            assert_eq!(found.head().route(), GAUGE);
            assert!(format!("{found:?}").contains("Gauge"), "{found:?}");
            slot.record(3 * i as i64 + 1);
            assert_eq!(found.value().load(Ordering::Relaxed), 3 * i as i64 + 1);
        }
        let mut out = Vec::new();
        collect(&mut out, |_, _| {});
        let read: Vec<_> = slots
            .iter()
            .map(|slot| {
                let id = slot.head().id();
                out.iter()
                    .position(|value| value.counter == id)
                    .map(|at| (at, out[at].value))
            })
            .collect();
        for (i, read) in read.iter().enumerate() {
            assert_eq!(read.map(|(_, value)| value), Some(3 * i as i64 + 1));
        }
        assert!(read.windows(2).all(|pair| pair[0] < pair[1]), "named order");
    }
}
