//! Pairing a thread's begin and end events into spans, on the writer thread.
//!
//! The hot loop ([`run`]) keeps its whole state in locals that never have their address
//! taken, so that it stays in registers: the vectors it fills are padded with filler up to
//! their capacity and seen as slices (a begin writes the next span by index, with no
//! capacity check that could call out to grow a vector in line), and it returns for
//! whatever is rare (an end below the top of the stack, a vector full), which its caller
//! handles on the vectors before running it again.

use framewise_format::model::{CpuSpan, SymId};

use super::{Event, KIND_BEGIN, KIND_END};
use crate::clock::SessionClock;

/// A span begun in an earlier drain and still open: it has no slot in the lane being filled.
#[derive(Clone, Copy, Debug)]
pub(super) struct Carried {
    pub(super) id: SymId,
    pub(super) start_ns: u64,
    pub(super) depth: u32,
}

/// What fills the padding of the span vector: never read as a span.
pub(super) const FILLER: CpuSpan = CpuSpan {
    scope: 0,
    depth: 0,
    start_ns: 0,
    end_ns: 0,
};

/// Why [`run`] stopped.
pub(super) enum Stop {
    /// Every event given to it was paired.
    Done,
    /// The next event is past the cut-off: it stays in the ring.
    Cutoff,
    /// A begin found no room in `out`: grow it, then run again from the begin.
    Full,
    /// An end that does not close the top of the stack ([`end_below_top`]): it was
    /// consumed; the caller pairs it the long way, then runs again.
    EndBelowTop {
        /// The end's scope.
        id: SymId,
        /// The end's time.
        at_ns: u64,
    },
    /// A mark (consumed): the caller records it, then runs again.
    Mark {
        /// The mark's name.
        id: SymId,
        /// The mark's time.
        at_ns: u64,
    },
}

/// No slot: below the first span begun in this drain there is no open span in the lane.
pub(super) const NO_SLOT: usize = usize::MAX;

/// The pairing's state between events.
///
/// The stack of spans begun in this drain and still open lives in the spans themselves:
/// while a span is open, its `end_ns` holds the slot of the open span below it ([`NO_SLOT`]
/// for the first), and `top` is the innermost one's. [`open_slots`] reads the stack out.
pub(super) struct Cursor {
    /// `out[..spans]` are the lane's spans so far.
    pub(super) spans: usize,
    /// The slot of the innermost span begun in this drain and still open, or [`NO_SLOT`].
    pub(super) top: usize,
    /// Spans open, carried ones included: the next span's depth. (The ring reserves room
    /// for every open span's end, so there are far fewer than `u32::MAX`.)
    pub(super) depth: u32,
    /// The latest tick seen, at least the session's base tick.
    pub(super) last_ticks: u64,
    /// Events of the part being paired consumed.
    pub(super) taken: usize,
}

/// Pairs `events[cursor.taken..]` up to `cutoff_ticks` into `out` (padded: its slots past
/// `cursor.spans` are filler).
///
/// The loop works on copies of the cursor's fields and on a slice, and calls nothing (no
/// vector that could grow in line), so that its state stays in registers; whatever is rare
/// returns, a mark included.
///
/// `FINE` is [`SessionClock::tick_at_most_ns`]: then ticks convert to ns with no check for
/// saturation, which cannot happen (the loop is compiled once for each case).
#[inline(always)]
pub(super) fn run<const FINE: bool>(
    events: &[std::cell::UnsafeCell<Event>],
    cursor: &mut Cursor,
    cutoff_ticks: u64,
    clock: &SessionClock,
    out: &mut [CpuSpan],
) -> Stop {
    let Cursor {
        mut spans,
        mut top,
        mut depth,
        mut last_ticks,
        taken,
    } = *cursor;
    let part = events.get(taken..).unwrap_or(&[]);
    // Events consumed from `part` (an index, not an iterator: one induction variable).
    let mut read = 0usize;
    let stop = 'events: {
        while let Some(cell) = part.get(read) {
            read += 1;
            // SAFETY: the caller passes only slots the producer published (acquire) and
            // that are not rewritten until the tail passes them.
            let event = unsafe { *cell.get() };
            if event.ticks > cutoff_ticks {
                break 'events Stop::Cutoff;
            }
            last_ticks = event.ticks.max(last_ticks);
            let at_ns = if FINE {
                clock.ns_from_base_fine(last_ticks)
            } else {
                clock.ns_from_base(last_ticks)
            };
            if event.kind == KIND_BEGIN {
                let Some(span) = out.get_mut(spans) else {
                    break 'events Stop::Full;
                };
                *span = CpuSpan {
                    scope: event.id,
                    depth,
                    start_ns: at_ns,
                    end_ns: top as u64,
                };
                top = spans;
                spans += 1;
                depth += 1;
            } else if event.kind == KIND_END {
                // Ends match the innermost open span with their id: nearly always the top
                // of this drain's stack, filled in place; anything else goes the long way.
                match out.get_mut(top) {
                    Some(span) if span.scope == event.id => {
                        top = usize::try_from(span.end_ns).unwrap_or(NO_SLOT);
                        span.end_ns = at_ns;
                        depth -= 1;
                    }
                    _ => {
                        break 'events Stop::EndBelowTop {
                            id: event.id,
                            at_ns,
                        }
                    }
                }
            } else {
                break 'events Stop::Mark {
                    id: event.id,
                    at_ns,
                };
            }
        }
        Stop::Done
    };
    // A begin with no room and the event past the cut-off are not consumed.
    let unconsumed = usize::from(matches!(stop, Stop::Full | Stop::Cutoff));
    *cursor = Cursor {
        spans,
        top,
        depth,
        last_ticks,
        taken: taken + read - unconsumed,
    };
    stop
}

/// [`run`] built for BMI2, whose `mulx` converts ticks to ns: the same spans, marks and
/// stops.
///
/// # Safety
///
/// The CPU has BMI2 (`is_x86_feature_detected!("bmi2")`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
pub(super) unsafe fn run_bmi2<const FINE: bool>(
    events: &[std::cell::UnsafeCell<Event>],
    cursor: &mut Cursor,
    cutoff_ticks: u64,
    clock: &SessionClock,
    out: &mut [CpuSpan],
) -> Stop {
    run::<FINE>(events, cursor, cutoff_ticks, clock, out)
}

/// The slots of the spans begun in this drain and still open, outermost first, into `open`
/// (read from the links in `out[..]`, see [`Cursor`]).
pub(super) fn open_slots(out: &[CpuSpan], top: usize, open: &mut Vec<usize>) {
    open.clear();
    let mut slot = top;
    // Links go to lower slots only: the walk ends.
    while let Some(span) = out.get(slot) {
        open.push(slot);
        slot = usize::try_from(span.end_ns).unwrap_or(NO_SLOT);
    }
    open.reverse();
}

/// Pads `v` with `fill` up to its capacity, returning its true length.
pub(super) fn pad<T: Copy>(v: &mut Vec<T>, fill: T) -> usize {
    let len = v.len();
    v.resize(v.capacity(), fill);
    len
}

/// Gives `v`, padded past `len`, room for at least one more element, padded again.
#[cold]
#[inline(never)]
pub(super) fn grow<T: Copy>(v: &mut Vec<T>, len: usize, fill: T) {
    v.truncate(len);
    v.reserve(len.max(16));
    pad(v, fill);
}

/// An end that does not close the top of this drain's stack: it closes the innermost open
/// span with its id, further down or carried; the spans above that one were never ended (a
/// leaked guard, or guards dropped out of order) and are lost: they leave the lane, and the
/// spans they enclosed that had closed stay in it, each lifted by the number of its lost
/// ancestors (so that it lies exactly one level below its innermost ancestor kept). An end
/// with no begin belongs to a span the pairing gave up on (lost, or begun before the session),
/// and is ignored. Returns the spans lost, or `None` for an end ignored.
#[cold]
#[inline(never)]
pub(super) fn end_below_top(
    id: SymId,
    at_ns: u64,
    lane_start: usize,
    carried: &mut Vec<Carried>,
    open: &mut Vec<usize>,
    out: &mut Vec<CpuSpan>,
) -> Option<u64> {
    if let Some(position) = open
        .iter()
        .rposition(|&slot| out.get(slot).is_some_and(|span| span.scope == id))
    {
        let lost = (open.len() - position - 1) as u64;
        lose(&open[position + 1..], out);
        open.truncate(position + 1);
        if let Some(span) = open.pop().and_then(|slot| out.get_mut(slot)) {
            span.end_ns = at_ns;
        }
        return Some(lost);
    }
    let position = carried.iter().rposition(|c| c.id == id)?;
    let lost_carried = carried.len() - position - 1;
    // Every span of the lane begun in this drain while the carried ones were open: each
    // is inside every lost carried span.
    let lifted = u32::try_from(lost_carried).unwrap_or(u32::MAX);
    if lifted > 0 {
        for span in out.iter_mut().skip(lane_start) {
            span.depth = span.depth.saturating_sub(lifted);
        }
    }
    let lost = (lost_carried + open.len()) as u64;
    lose(open, out);
    open.clear();
    carried.truncate(position + 1);
    if let Some(span) = carried.pop() {
        out.insert(
            lane_start,
            CpuSpan {
                scope: span.id,
                depth: span.depth,
                start_ns: span.start_ns,
                end_ns: at_ns,
            },
        );
    }
    Some(lost)
}

/// Removes the placeholders of lost spans at `slots` (ascending, the highest open in the
/// lane), lifting every span after one of them by the number of them below it:
/// a span after an open slot began while that span was open, so it is that span's
/// descendant. One pass, moving the spans kept down over the removed slots.
fn lose(slots: &[usize], out: &mut Vec<CpuSpan>) {
    let Some(&first) = slots.first() else {
        return;
    };
    let mut lost = slots.iter().copied().peekable();
    let mut below = 0u32;
    let mut kept = first;
    for read in first..out.len() {
        if lost.next_if_eq(&read).is_some() {
            below += 1;
            continue;
        }
        if let Some(mut span) = out.get(read).copied() {
            span.depth = span.depth.saturating_sub(below);
            if let Some(slot) = out.get_mut(kept) {
                *slot = span;
            }
            kept += 1;
        }
    }
    out.truncate(kept);
}

/// Removes the placeholders at `slots` (ascending, the highest in the lane): from the top
/// down, so that each removal leaves the slots below it in place.
fn unplace(slots: &[usize], out: &mut Vec<CpuSpan>) {
    for &slot in slots.iter().rev() {
        if slot < out.len() {
            out.remove(slot);
        }
    }
}

/// Carries the spans still open in this drain to the next one: they leave the lane.
pub(super) fn carry_open(
    carried: &mut Vec<Carried>,
    open: &mut Vec<usize>,
    out: &mut Vec<CpuSpan>,
) {
    for &slot in open.iter() {
        if let Some(span) = out.get(slot) {
            carried.push(Carried {
                id: span.scope,
                start_ns: span.start_ns,
                depth: span.depth,
            });
        }
    }
    unplace(open, out);
    open.clear();
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// A stop as plain data, to compare.
    fn stop_fields(stop: &Stop) -> (u8, SymId, u64) {
        match *stop {
            Stop::Done => (0, 0, 0),
            Stop::Cutoff => (1, 0, 0),
            Stop::Full => (2, 0, 0),
            Stop::EndBelowTop { id, at_ns } => (3, id, at_ns),
            Stop::Mark { id, at_ns } => (4, id, at_ns),
        }
    }

    fn cursor_fields(c: &Cursor) -> (usize, usize, u32, u64, usize) {
        (c.spans, c.top, c.depth, c.last_ticks, c.taken)
    }

    /// `run` and `run_bmi2` leave the same spans, cursor and stops, run by run, on random
    /// streams of begins, ends (matching the top or not) and marks, with both clocks (the
    /// drain tests take only one of the two on a given CPU).
    #[test]
    fn the_bmi2_build_pairs_as_the_portable_one() {
        if !std::arch::is_x86_feature_detected!("bmi2") {
            return;
        }
        let clocks = [
            SessionClock::with_rate(1_000, 1_431_655_765),
            SessionClock::with_rate(1_000, (3 << 32) + 12_345),
        ];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (mut stops, mut spans) = (0usize, 0usize);
        for seed in 0..200 {
            let clock = &clocks[seed % 2];
            let mut ticks = 900;
            let events: Vec<std::cell::UnsafeCell<Event>> = (0..next(300))
                .map(|_| {
                    ticks += next(50);
                    let kind = match next(10) {
                        0 => super::super::KIND_MARK,
                        1..=5 => KIND_BEGIN,
                        _ => KIND_END,
                    };
                    let id = next(3) as SymId;
                    std::cell::UnsafeCell::new(Event { ticks, id, kind })
                })
                .collect();
            let cutoff = ticks.saturating_sub(next(400));
            let fine = clock.tick_at_most_ns();
            let capacity = next(64) as usize;
            let start = || Cursor {
                spans: 0,
                top: NO_SLOT,
                depth: 0,
                last_ticks: clock.base_ticks(),
                taken: 0,
            };
            let (mut a, mut b) = (start(), start());
            let (mut out_a, mut out_b) = (vec![FILLER; capacity], vec![FILLER; capacity]);
            loop {
                let (stop_a, stop_b) = if fine {
                    (run::<true>(&events, &mut a, cutoff, clock, &mut out_a), {
                        // SAFETY: the CPU has BMI2 (checked above).
                        unsafe { run_bmi2::<true>(&events, &mut b, cutoff, clock, &mut out_b) }
                    })
                } else {
                    (run::<false>(&events, &mut a, cutoff, clock, &mut out_a), {
                        // SAFETY: the CPU has BMI2 (checked above).
                        unsafe { run_bmi2::<false>(&events, &mut b, cutoff, clock, &mut out_b) }
                    })
                };
                assert_eq!(stop_fields(&stop_a), stop_fields(&stop_b), "seed {seed}");
                assert_eq!(cursor_fields(&a), cursor_fields(&b), "seed {seed}");
                assert_eq!(out_a, out_b, "seed {seed}");
                stops += 1;
                // After a mark or an end below the top the loop runs on from where it
                // stopped (the drain would pair that end the long way first).
                match stop_a {
                    Stop::Done | Stop::Cutoff | Stop::Full => break,
                    Stop::EndBelowTop { .. } | Stop::Mark { .. } => {}
                }
            }
            spans += a.spans;
        }
        // What the streams exercised, so that the test cannot pass on empty runs.
        assert!(stops > 200 && spans > 1_000, "{stops} stops, {spans} spans");
    }
}
