//! The ring of frame slots between frame close and the writer thread.
//!
//! Each slot holds one batch and a stamp that says whose turn it is: `ready(k)` when the slot
//! holds an empty batch for frame `k` (sent frames are numbered from 0), `full(k)` once frame
//! close has put frame `k` there (taking the empty batch in exchange). Frame `k` goes into
//! slot `k % len`. Frame close keeps its own position and the writer its own: neither reads
//! an index the other writes, so closing a frame touches one line of the ring, the slot's
//! (its own cache line), which the writer last wrote when it refilled that slot, `len` frames
//! earlier. The writer takes frame `k` when its slot says `full(k)`, and puts an empty batch
//! back, stamped `ready(k + len)`, once it has one (a batch held for GPU results comes back
//! later): a slot the writer has not refilled yet is a full queue to frame close.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

use super::FrameBatch;

/// The stamp of a slot holding an empty batch for frame `frame`.
const fn ready(frame: u64) -> u64 {
    frame.wrapping_mul(2)
}

/// The stamp of a slot holding frame `frame`.
const fn full(frame: u64) -> u64 {
    frame.wrapping_mul(2).wrapping_add(1)
}

/// One slot: a cache line of its own.
#[repr(C, align(64))]
struct Slot {
    stamp: AtomicU64,
    batch: UnsafeCell<Option<Box<FrameBatch>>>,
}

// SAFETY: a slot's batch is touched only by the side the stamp gives the turn to: frame close
// (one closer at a time, behind the session's closer lock) while it reads `ready(k)`, the
// writer thread (the only consumer) while it reads `full(k)`. Each side hands the turn over
// with a release store of the stamp after its last access, and takes it with an acquire load
// before its first.
unsafe impl Sync for Slot {}

/// A position in the ring: the next frame's number and its slot (kept by each side).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Position {
    pub(crate) frame: u64,
    slot: usize,
}

impl Position {
    fn advance(&mut self, len: usize) {
        self.frame += 1;
        self.slot += 1;
        if self.slot == len {
            self.slot = 0;
        }
    }
}

/// The ring: `len` slots, each made holding an empty batch.
pub(crate) struct FrameRing {
    slots: Box<[Slot]>,
}

impl FrameRing {
    pub(crate) fn new(len: usize) -> Self {
        let slots = FrameBatch::boxed_with_typical_capacity(len.max(1))
            .into_iter()
            .zip(0..)
            .map(|(batch, frame)| Slot {
                stamp: AtomicU64::new(ready(frame)),
                batch: UnsafeCell::new(Some(batch)),
            })
            .collect();
        Self { slots }
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    /// The slot of the frame at `at`, found without a bounds check: a position starts at
    /// slot 0 and wraps at the ring's length ([`Position::advance`]), and every position is
    /// used with the one ring it advances along (frame close's and the writer's, made with
    /// it), so its slot is always below the length.
    #[inline(always)]
    fn slot(&self, at: &Position) -> &Slot {
        debug_assert!(at.slot < self.slots.len());
        // SAFETY: `at.slot < self.slots.len()`, as above.
        unsafe { self.slots.get_unchecked(at.slot) }
    }

    /// Whether the slot of the frame at `at` holds an empty batch for it (frame close).
    #[inline]
    pub(crate) fn has_room(&self, at: &Position) -> bool {
        self.slot(at).stamp.load(Ordering::Acquire) == ready(at.frame)
    }

    /// Puts `batch` into the slot of the frame at `at`, which [`Self::has_room`] said holds
    /// an empty batch, and returns that batch (frame close).
    #[inline]
    pub(crate) fn put(&self, at: &mut Position, batch: Box<FrameBatch>) -> Box<FrameBatch> {
        let slot = self.slot(at);
        debug_assert_eq!(slot.stamp.load(Ordering::Relaxed), ready(at.frame));
        // SAFETY: the stamp reads `ready(frame)`: frame close has the turn (see `Slot`).
        let spare = unsafe { (*slot.batch.get()).replace(batch) };
        slot.stamp.store(full(at.frame), Ordering::Release);
        at.advance(self.len());
        // The writer refills every slot it takes before it stamps it ready.
        spare.unwrap_or_else(no_spare)
    }

    /// The slot's line the frame at `at` will use (frame close writes it).
    #[inline]
    pub(crate) fn slot_line(&self, at: &Position) -> *const u8 {
        std::ptr::from_ref(self.slot(at)).cast()
    }

    /// Whether the frame at `at` waits in its slot (writer thread).
    pub(crate) fn has_frame(&self, at: &Position) -> bool {
        self.slot(at).stamp.load(Ordering::Acquire) == full(at.frame)
    }

    /// Takes the frame at `at` if frame close has put it there (writer thread).
    pub(crate) fn take(&self, at: &mut Position) -> Option<Box<FrameBatch>> {
        if !self.has_frame(at) {
            return None;
        }
        let slot = self.slot(at);
        // SAFETY: the stamp reads `full(frame)`: the writer has the turn, and keeps it until
        // it refills the slot.
        let batch = unsafe { (*slot.batch.get()).take() };
        at.advance(self.len());
        batch
    }

    /// Puts an empty batch into the slot of the frame at `at`, taken before, for the frame
    /// `len` later (writer thread).
    pub(crate) fn refill(&self, at: &mut Position, spare: Box<FrameBatch>) {
        let slot = self.slot(at);
        debug_assert_eq!(slot.stamp.load(Ordering::Relaxed), full(at.frame));
        // SAFETY: the stamp still reads `full(frame)`, taken: the writer has the turn.
        unsafe { *slot.batch.get() = Some(spare) };
        slot.stamp
            .store(ready(at.frame + self.len() as u64), Ordering::Release);
        at.advance(self.len());
    }
}

/// A fresh batch where a slot held none (never, in fact: the writer refills every slot it
/// takes before it stamps it ready). Out of line: building a default `FrameBatch` in line
/// put hundreds of bytes of code in the middle of what frame close runs every frame.
#[cold]
#[inline(never)]
fn no_spare() -> Box<FrameBatch> {
    Box::default()
}
