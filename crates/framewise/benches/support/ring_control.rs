//! Controls for where a paced scope's time goes (`FRAMEWISE_BENCH_RING_CONTROLS=1`): the
//! floor's two `rdtsc` reads per scope, each followed by a 16-byte event stored into a
//! private ring of the thread's, the way the recorder's hot path stores one (a thread-local
//! pointer, the slot at `head & mask`, the head advanced), with nothing else of the recorder
//! (no session flag, no call-site id, no room check, no consumer). The rings differ only in
//! their memory:
//!
//! - `ring 1 MiB`: 65,536 events, the recorder's size, in 4 KiB pages;
//! - `ring 1 MiB, huge page`: the same, in a 2 MiB-aligned 2 MiB allocation advised
//!   `MADV_HUGEPAGE` (one TLB entry for the ring; the bench prints the process's
//!   `AnonHugePages`);
//! - `ring 16 KiB`: 1,024 events, lines that stay in the core's caches between frames;
//! - `ring 1 MiB, drained`: the first, read after every frame by a thread of its own (the
//!   writer's part: the published head and every new event read on another core, as the
//!   writer drains a recorder ring after each close).
//!
//! Every control publishes its head with a release store into a line of its own, as the
//! recorder does.
//!
//! Each of the 4 threads' slots (the game thread and 3 workers) has its own ring per kind,
//! allocated and written through once before the first round and kept for the whole run, so
//! no round pays a page fault: the rounds see warm pages and cold lines, as a reused
//! recorder ring does.

use std::alloc::Layout;
use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;

/// Which private ring a control scope writes into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Big,
    BigHuge,
    Small,
    BigDrained,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Big, Kind::BigHuge, Kind::Small, Kind::BigDrained];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Big => "control: ring 1 MiB",
            Kind::BigHuge => "control: ring 1 MiB, huge page",
            Kind::Small => "control: ring 16 KiB",
            Kind::BigDrained => "control: ring 1 MiB, drained",
        }
    }

    fn events(self) -> usize {
        match self {
            Kind::Big | Kind::BigHuge | Kind::BigDrained => 1 << 16,
            Kind::Small => 1 << 10,
        }
    }
}

const HUGE_BYTES: usize = 2 << 20;
/// The game thread and the 3 workers.
pub const SLOTS: usize = 4;

#[derive(Clone, Copy)]
#[repr(C)]
struct Event {
    ticks: u64,
    id: u32,
    kind: u32,
}

/// One thread's private ring; only the thread that set it as its current ring writes it.
struct Ring {
    slots: *mut Event,
    mask: usize,
    head: Cell<usize>,
    published: Padded<AtomicUsize>,
    /// The reader's: events below it were read.
    tail: Padded<AtomicUsize>,
}

#[repr(align(64))]
struct Padded<T>(T);

// SAFETY: a ring is written by one thread at a time: the thread of its slot in the running
// round (rounds run one after another, joined in between).
unsafe impl Sync for Ring {}
// SAFETY: as above.
unsafe impl Send for Ring {}

impl Ring {
    fn new(kind: Kind) -> Self {
        let events = kind.events();
        let bytes = events * std::mem::size_of::<Event>();
        let slots = if kind == Kind::BigHuge {
            let layout = Layout::from_size_align(HUGE_BYTES, HUGE_BYTES).expect("layout");
            // SAFETY: the layout's size is not zero.
            let ptr = unsafe { std::alloc::alloc(layout) };
            assert!(!ptr.is_null(), "allocate a huge-page ring");
            // SAFETY: the range is the allocation just made, not yet touched.
            unsafe { libc::madvise(ptr.cast(), HUGE_BYTES, libc::MADV_HUGEPAGE) };
            ptr.cast::<Event>()
        } else {
            let layout = Layout::from_size_align(bytes, 64).expect("layout");
            // SAFETY: the layout's size is not zero.
            let ptr = unsafe { std::alloc::alloc(layout) };
            assert!(!ptr.is_null(), "allocate a ring");
            ptr.cast::<Event>()
        };
        // Written through once: every page faulted in before the first round.
        // SAFETY: `bytes` is within the allocation.
        unsafe { std::ptr::write_bytes(slots.cast::<u8>(), 0, bytes) };
        Self {
            slots,
            mask: events - 1,
            head: Cell::new(0),
            published: Padded(AtomicUsize::new(0)),
            tail: Padded(AtomicUsize::new(0)),
        }
    }
}

/// Every slot's ring of every kind, leaked for the run.
fn rings() -> &'static [[Ring; SLOTS]; 4] {
    static RINGS: OnceLock<[[Ring; SLOTS]; 4]> = OnceLock::new();
    RINGS.get_or_init(|| Kind::ALL.map(|kind| std::array::from_fn(|_| Ring::new(kind))))
}

thread_local! {
    static CURRENT: Cell<*const Ring> = const { Cell::new(std::ptr::null()) };
}

/// Makes slot `slot`'s ring of `kind` the calling thread's (untimed, before its share).
pub fn set(kind: Kind, slot: usize) {
    let ring: *const Ring = &rings()[kind as usize][slot];
    CURRENT.with(|current| current.set(ring));
}

/// Allocates and faults in every ring (before the first round).
pub fn prepare() {
    let _ = rings();
    let _ = reader();
}

/// The thread that drains the `drained` rings, parked between frames.
fn reader() -> &'static Thread {
    static READER: OnceLock<Thread> = OnceLock::new();
    READER.get_or_init(|| {
        std::thread::Builder::new()
            .name("control-reader".into())
            .spawn(|| loop {
                std::thread::park();
                for ring in &rings()[Kind::BigDrained as usize] {
                    let head = ring.published.0.load(Ordering::Acquire);
                    let mut tail = ring.tail.0.load(Ordering::Relaxed);
                    let mut sum = 0u64;
                    while tail < head {
                        // SAFETY: below the published head, masked into the ring; the
                        // writer is a lap away from overwriting it at 100 events a frame.
                        sum = sum.wrapping_add(unsafe { *ring.slots.add(tail & ring.mask) }.ticks);
                        tail += 1;
                    }
                    black_box(sum);
                    ring.tail.0.store(tail, Ordering::Release);
                }
            })
            .expect("spawn the control reader")
            .thread()
            .clone()
    })
}

/// A frame was closed: the reader drains the `drained` rings (called untimed, after the
/// frame, by the game thread).
pub fn frame_closed() {
    reader().unpark();
}

#[inline(always)]
fn rdtsc() -> u64 {
    #[allow(
        unused_unsafe,
        reason = "`_rdtsc` is an unsafe fn on some toolchains only"
    )]
    // SAFETY: `rdtsc` has no preconditions on x86_64.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
}

/// A clock read and a 16-byte event into the calling thread's ring.
#[inline(always)]
fn event(kind: u32) {
    let ring = CURRENT.with(Cell::get);
    let ticks = rdtsc();
    // SAFETY: `set` gave this thread a ring nothing else writes while it runs; the index is
    // masked into the ring.
    unsafe {
        let ring = &*ring;
        let head = ring.head.get();
        *ring.slots.add(head & ring.mask) = Event { ticks, id: 7, kind };
        ring.head.set(head + 1);
        ring.published.0.store(head + 1, Ordering::Release);
    }
}

/// A control scope: an event at its start and one at its end.
pub struct Scope;

impl Scope {
    #[inline(always)]
    pub fn begin() -> Self {
        event(0);
        Self
    }
}

impl Drop for Scope {
    #[inline(always)]
    fn drop(&mut self) {
        event(1);
    }
}
