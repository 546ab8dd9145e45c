//! Counter values as ring events of the thread that counts them.
//!
//! A `counter!` add or a `gauge!` set is an event in the calling thread's ring, stamped like
//! a scope's begin: the writer thread folds every count up to a frame's end into that
//! frame's values when it gathers the frame ([`crate::counters::Tally`]), so frame close
//! reads no line a counting thread wrote, and a count lands in the frame whose end follows
//! it, as a span's begin does.
//!
//! A count's `kind` word is `COUNT | WIDE | DECLARE | counter << 5` (the flags as needed),
//! the counter being its slot's index in creation order. A value that fits in an `i32` rides in the event's `id`; a wider
//! one in the `ticks` of the slot after it (written and published with it, never split by
//! the ring's wrap: a pad comes first when the pair would straddle it).

use framewise_format::model::SymId;

use super::{current, Event, ThreadBuffer};
use crate::clock::now_ticks;

/// The low bits of a count's `kind` (marks are 2, begins 0, ends 1).
const COUNT: u32 = 4;
/// Set in a count's `kind` when its value is in the next slot's `ticks`.
const WIDE: u32 = 1 << 3;
/// Set in a count's `kind` when it only declares the counter (no value).
const DECLARE: u32 = 1 << 4;
/// Where the counter's index starts in a count's `kind`.
const INDEX_SHIFT: u32 = 5;
/// An event that carries nothing: skipped by the writer.
pub(super) const KIND_PAD: u32 = 3;

/// A count decoded from its event.
pub(crate) struct Count {
    /// The counter slot's index, in creation order.
    pub(crate) counter: u32,
    /// The value added or set; for a wide count, its low 32 bits until the next slot is read.
    pub(crate) value: i64,
    /// Whether the value is in the next slot's `ticks`.
    pub(crate) wide: bool,
    /// Whether the count only declares the counter (`Counter::declare`): no value.
    pub(crate) declare: bool,
}

/// The count an event of this `kind` and `id` carries, if it is one.
#[inline(always)]
pub(super) fn decode(kind: u32, id: SymId) -> Option<Count> {
    if kind & 3 != 0 || kind & COUNT == 0 {
        return None;
    }
    Some(Count {
        counter: kind >> INDEX_SHIFT,
        // A narrow value was stored as its `i32` bits.
        value: i64::from(id as i32),
        wide: kind & WIDE != 0,
        declare: kind & DECLARE != 0,
    })
}

/// The value of a wide count, from the slot after it.
#[inline(always)]
pub(super) fn wide_value(next: &Event) -> i64 {
    next.ticks as i64
}

impl ThreadBuffer {
    /// Records a count (`kind` from [`count_kind`]), or counts it dropped when the ring
    /// has no room.
    ///
    /// # Safety
    /// Only the owning thread may call this.
    #[inline(always)]
    unsafe fn count(&self, kind: u32, value: i64, ticks: u64) {
        match i32::try_from(value) {
            // SAFETY: the caller is the owning thread.
            Ok(narrow) => unsafe {
                self.push_reserving::<1>(Event {
                    ticks,
                    id: narrow as u32,
                    kind,
                });
            },
            // SAFETY: the caller is the owning thread.
            Err(_) => unsafe { self.count_wide(kind | WIDE, value, ticks) },
        }
    }

    /// A count whose value needs 64 bits: two slots (three when a pad keeps the pair from
    /// straddling the ring's wrap), published together.
    ///
    /// # Safety
    /// Only the owning thread may call this.
    #[cold]
    #[inline(never)]
    unsafe fn count_wide(&self, kind: u32, value: i64, ticks: u64) {
        // SAFETY: the caller is the owning thread, the only one touching `producer`.
        let producer = unsafe { *self.producer.0.get() };
        let pad = u64::from(producer.head & self.mask == self.mask);
        let needed = 2 + pad;
        // SAFETY: owning thread.
        if producer.reserved + needed > producer.limit && !unsafe { self.refresh_room(needed) } {
            self.count_dropped();
            return;
        }
        let mut head = producer.head;
        let events = [
            Event {
                ticks,
                id: 0,
                kind: KIND_PAD,
            },
            Event { ticks, id: 0, kind },
            Event {
                ticks: value as u64,
                id: 0,
                kind: KIND_PAD,
            },
        ];
        for event in events.iter().skip(usize::from(pad == 0)) {
            let index = (head & self.mask) as usize;
            // SAFETY: reserved above (below `tail + capacity`); not published until the head
            // below, so the consumer never sees the count without its value.
            unsafe { *self.slots.get_unchecked(index).get() = *event };
            head += 1;
        }
        self.head
            .0
            .store(head, std::sync::atomic::Ordering::Release);
        // SAFETY: owning thread.
        unsafe {
            let producer = &mut *self.producer.0.get();
            producer.head = head;
            producer.reserved += needed;
        }
    }
}

/// The `kind` word of a count of counter slot `counter` (its index, below 2^27): kept in
/// the slot, so that a count does not compute it.
pub(crate) const fn count_kind(counter: u32) -> u32 {
    COUNT | (counter << INDEX_SHIFT)
}

/// Records a count on the calling thread (`kind` from [`count_kind`]).
#[inline(always)]
pub(crate) fn count(kind: u32, value: i64) {
    if let Some(buffer) = current() {
        let ticks = now_ticks();
        // SAFETY: the calling thread's own buffer.
        unsafe { buffer.count(kind, value, ticks) }
    }
}

/// Declares a counter from now on (with no value) on the calling thread (`kind` from
/// [`count_kind`]).
pub(crate) fn declare(kind: u32) {
    if let Some(buffer) = current() {
        let ticks = now_ticks();
        // SAFETY: the calling thread's own buffer.
        unsafe {
            buffer.push_reserving::<1>(Event {
                ticks,
                id: 0,
                kind: kind | DECLARE,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use framewise_format::model::CounterKind;

    use super::super::ThreadBuffer;
    use crate::clock::SessionClock;
    use crate::counters::{slot_index, Tally};

    /// Counts in a ring of 16 slots, drained every few counts: narrow and wide values,
    /// wide ones across the ring's wrap (a pad first), fold into exact sums, and a count
    /// past the cut-off waits for the next drain.
    #[test]
    fn counts_fold_exactly_across_the_rings_wrap() {
        let sum = slot_index("test.counts.ring_sum", CounterKind::Sum);
        let level = slot_index("test.counts.ring_level", CounterKind::Gauge);
        let (sum_kind, level_kind) = (super::count_kind(sum), super::count_kind(level));
        let buffer = ThreadBuffer::new(0, 16);
        let clock = SessionClock::identity();
        let (mut spans, mut marks) = (Vec::new(), Vec::new());
        let mut tally = Tally::default();
        let mut values = Vec::new();
        let mut ticks = 1;
        for round in 0..40i64 {
            let wide = (1i64 << 35) + round;
            // SAFETY: this test's thread is the buffer's only producer.
            unsafe {
                buffer.count(sum_kind, 3, ticks + 1);
                buffer.count(sum_kind, wide, ticks + 2);
                buffer.count(level_kind, -round, ticks + 3);
                buffer.count(sum_kind, 5, ticks + 10);
            }
            buffer.drain_counting(ticks + 5, &clock, &mut spans, &mut marks, &mut tally);
            tally.take_frame(&mut values);
            let found = |index| {
                values
                    .iter()
                    .find(|value| value.counter == index)
                    .map(|value| value.value)
            };
            let carried = if round == 0 { 0 } else { 5 };
            assert_eq!(
                found(sum_id(sum)),
                Some(carried + 3 + wide),
                "round {round}"
            );
            assert_eq!(found(sum_id(level)), Some(-round), "round {round}");
            ticks += 10;
        }
        assert_eq!(buffer.dropped.load(std::sync::atomic::Ordering::Relaxed), 0);
    }

    fn sum_id(index: u32) -> framewise_format::model::SymId {
        crate::counters::slot_symbol(index)
    }
}
