//! Pairing events into spans, drops and cut-offs, on private rings.

use super::*;

fn drain_all(buffer: &ThreadBuffer, clock: &SessionClock) -> (Vec<CpuSpan>, Vec<Mark>, u64) {
    let mut spans = Vec::new();
    let mut marks = Vec::new();
    let dropped = buffer.drain(u64::MAX, clock, &mut spans, &mut marks);
    (spans, marks, dropped)
}

#[test]
fn pairs_nest_with_true_depth_across_drains() {
    let clock = SessionClock::identity();
    let buffer = ThreadBuffer::new(7, 64);
    // SAFETY: this test thread is the only producer.
    unsafe {
        buffer.begin(1, 10);
        buffer.begin(2, 20);
        buffer.end(2, 30);
    }
    let (spans, _, dropped) = drain_all(&buffer, &clock);
    assert_eq!(dropped, 0);
    assert_eq!(spans.len(), 1);
    assert_eq!((spans[0].scope, spans[0].depth), (2, 1));
    // SAFETY: as above.
    unsafe { buffer.end(1, 40) };
    let (spans, _, _) = drain_all(&buffer, &clock);
    assert_eq!(spans.len(), 1);
    assert_eq!((spans[0].scope, spans[0].depth), (1, 0));
}

#[test]
fn full_ring_drops_whole_spans_and_counts_them() {
    let clock = SessionClock::identity();
    let buffer = ThreadBuffer::new(7, 16);
    let mut recorded = 0;
    for i in 0..20u64 {
        // SAFETY: this test thread is the only producer.
        unsafe {
            if buffer.begin(1, i * 10) {
                recorded += 1;
                buffer.end(1, i * 10 + 5);
            }
        }
    }
    let (spans, _, dropped) = drain_all(&buffer, &clock);
    assert_eq!(recorded, 8);
    assert_eq!(spans.len(), 8);
    assert_eq!(dropped, 12);
}

#[test]
fn begin_leaves_room_for_every_open_end() {
    let clock = SessionClock::identity();
    let buffer = ThreadBuffer::new(7, 16);
    let mut opened = Vec::new();
    for i in 0..16u32 {
        // SAFETY: this test thread is the only producer.
        if unsafe { buffer.begin(i, u64::from(i)) } {
            opened.push(i);
        }
    }
    // 16 slots hold 8 begins and their 8 ends.
    assert_eq!(opened.len(), 8);
    for &id in opened.iter().rev() {
        // SAFETY: as above.
        unsafe { buffer.end(id, 100) };
    }
    let (spans, _, dropped) = drain_all(&buffer, &clock);
    assert_eq!(spans.len(), 8);
    assert_eq!(dropped, 8);
    let depths: Vec<u32> = spans.iter().map(|s| s.depth).collect();
    assert_eq!(depths, vec![0, 1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn drain_stops_at_cutoff() {
    let clock = SessionClock::identity();
    let buffer = ThreadBuffer::new(7, 64);
    // SAFETY: this test thread is the only producer.
    unsafe {
        buffer.begin(1, 10);
        buffer.end(1, 20);
        buffer.begin(1, 30);
        buffer.end(1, 40);
    }
    let mut spans = Vec::new();
    let mut marks = Vec::new();
    buffer.drain(25, &clock, &mut spans, &mut marks);
    assert_eq!(spans.len(), 1);
    buffer.drain(45, &clock, &mut spans, &mut marks);
    assert_eq!(spans.len(), 2);
}

#[test]
fn carried_spans_are_inserted_before_later_spans_in_pre_order() {
    let clock = SessionClock::identity();
    let base = 1_000_000;
    let buffer = ThreadBuffer::new(7, 64);
    let t = |n: u64| base + n * 1000;
    // SAFETY: this test thread is the only producer.
    unsafe {
        buffer.begin(1, t(1)); // P, depth 0, open across the frame boundary
        buffer.begin(2, t(2)); // Q, depth 1, also open
        buffer.begin(3, t(3)); // A, depth 2, closes in frame 0
        buffer.end(3, t(4));
        buffer.begin(4, t(5)); // B, depth 2, open at the boundary
    }
    let mut spans = Vec::new();
    let mut marks = Vec::new();
    buffer.drain(t(6), &clock, &mut spans, &mut marks);
    let ids: Vec<_> = spans.iter().map(|s| (s.scope, s.depth)).collect();
    assert_eq!(ids, vec![(3, 2)], "only A closed in frame 0");
    // SAFETY: as above.
    unsafe {
        buffer.end(4, t(7)); // B closes in frame 1
        buffer.end(2, t(8)); // Q closes
        buffer.begin(5, t(9)); // C, depth 1, begins and closes in frame 1
        buffer.mark(9, t(10));
        buffer.end(5, t(11));
        buffer.end(1, t(12)); // P closes
    }
    spans.clear();
    buffer.drain(t(13), &clock, &mut spans, &mut marks);
    let ids: Vec<_> = spans.iter().map(|s| (s.scope, s.depth)).collect();
    assert_eq!(ids, vec![(1, 0), (2, 1), (4, 2), (5, 1)]);
    assert_eq!(marks.len(), 1);
    for pair in spans.windows(2) {
        assert!(
            pair[0].start_ns <= pair[1].start_ns,
            "pre-order by start: {pair:?}"
        );
    }
}

#[test]
fn equal_timestamps_keep_begin_order() {
    let clock = SessionClock::identity();
    let buffer = ThreadBuffer::new(7, 64);
    let at = 5_000;
    // SAFETY: this test thread is the only producer.
    unsafe {
        buffer.begin(1, at);
        buffer.begin(2, at);
        buffer.end(2, at);
        buffer.end(1, at);
        buffer.begin(3, at);
        buffer.end(3, at);
    }
    let mut spans = Vec::new();
    let mut marks = Vec::new();
    buffer.drain(at + 1, &clock, &mut spans, &mut marks);
    let ids: Vec<_> = spans.iter().map(|s| (s.scope, s.depth)).collect();
    assert_eq!(ids, vec![(1, 0), (2, 1), (3, 0)]);
}

#[test]
fn an_end_below_the_top_loses_the_spans_left_open_above_it() {
    let clock = SessionClock::identity();
    let buffer = ThreadBuffer::new(7, 64);
    // SAFETY: this test thread is the only producer.
    unsafe {
        buffer.begin(1, 10); // X
        buffer.begin(2, 20); // Y, never ended (a leaked guard)
        buffer.begin(3, 30); // Z, ended
        buffer.end(3, 40);
        buffer.end(1, 50); // ends X: Y is lost
        buffer.end(9, 60); // an end with no begin: ignored
    }
    let (spans, _, dropped) = drain_all(&buffer, &clock);
    let got: Vec<_> = spans
        .iter()
        .map(|s| (s.scope, s.depth, s.start_ns, s.end_ns))
        .collect();
    // Z stays, inside X, one level below it.
    assert_eq!(got, vec![(1, 0, 10, 50), (3, 1, 30, 40)]);
    assert_eq!(dropped, 1);
}

#[test]
fn a_carried_span_ended_under_open_spans_loses_them_and_leads_the_lane() {
    let clock = SessionClock::identity();
    let buffer = ThreadBuffer::new(7, 64);
    // SAFETY: this test thread is the only producer.
    unsafe {
        buffer.begin(1, 10); // P, carried into the second drain
        buffer.begin(2, 20); // Q, carried too, never ended
    }
    let (spans, _, _) = drain_all(&buffer, &clock);
    assert!(spans.is_empty());
    // SAFETY: as above.
    unsafe {
        buffer.begin(3, 30); // A, ended
        buffer.end(3, 40);
        buffer.begin(4, 50); // B, never ended
        buffer.end(1, 60); // ends P: Q (carried) and B (this drain) are lost
    }
    let (spans, _, dropped) = drain_all(&buffer, &clock);
    let got: Vec<_> = spans
        .iter()
        .map(|s| (s.scope, s.depth, s.start_ns, s.end_ns))
        .collect();
    // A stays, inside P, one level below it (Q, its parent, is lost).
    assert_eq!(got, vec![(1, 0, 10, 60), (3, 1, 30, 40)]);
    assert_eq!(dropped, 2);
    // Nothing is left open: a later span starts at depth 0.
    // SAFETY: as above.
    unsafe {
        buffer.begin(5, 70);
        buffer.end(5, 80);
    }
    let (spans, _, _) = drain_all(&buffer, &clock);
    assert_eq!((spans[0].scope, spans[0].depth), (5, 0));
}

/// The pairing written the plain way, one event at a time, sharing no code with `drain`:
/// one stack of the open spans (carried or not), each knowing its ancestors; an end closes
/// the innermost open span with its id and loses the ones above it; a drain lists the spans
/// closed in it by begin order (pre-order: ticks never run back within the lane), each at
/// the depth of its ancestors not lost. The reference for `drain`.
#[derive(Default)]
struct ReferencePairing {
    events: std::collections::VecDeque<Event>,
    /// Open spans, outermost first: (begin number, scope, start, ancestors' begin numbers).
    stack: Vec<(u64, SymId, u64, Vec<u64>)>,
    /// Begin numbers of the spans lost.
    lost: std::collections::HashSet<u64>,
    begun: u64,
    last_ticks: u64,
}

impl ReferencePairing {
    fn drain(&mut self, cutoff_ticks: u64, clock: &SessionClock) -> (Vec<CpuSpan>, Vec<Mark>, u64) {
        let (mut closed, mut marks, mut lost) = (Vec::new(), Vec::new(), 0);
        while let Some(event) = self.events.front().copied() {
            if event.ticks > cutoff_ticks {
                break;
            }
            self.events.pop_front();
            self.last_ticks = event.ticks.max(self.last_ticks);
            let at_ns = clock.ns(self.last_ticks);
            match event.kind {
                KIND_BEGIN => {
                    let ancestors = self.stack.iter().map(|open| open.0).collect();
                    self.stack.push((self.begun, event.id, at_ns, ancestors));
                    self.begun += 1;
                }
                KIND_END => {
                    let Some(position) = self.stack.iter().rposition(|open| open.1 == event.id)
                    else {
                        continue;
                    };
                    for open in self.stack.drain(position + 1..) {
                        self.lost.insert(open.0);
                        lost += 1;
                    }
                    if let Some(span) = self.stack.pop() {
                        closed.push((span, at_ns));
                    }
                }
                _ => marks.push(Mark {
                    name: event.id,
                    thread: 7,
                    at_ns,
                    kind: MarkKind::Instant,
                }),
            }
        }
        closed.sort_by_key(|((begun, ..), _)| *begun);
        let out = closed
            .into_iter()
            .map(|((_, scope, start_ns, ancestors), end_ns)| CpuSpan {
                scope,
                depth: ancestors.iter().filter(|a| !self.lost.contains(a)).count() as u32,
                start_ns,
                end_ns,
            })
            .collect();
        (out, marks, lost)
    }
}

/// A small deterministic generator (xorshift64*), so that a failure reproduces.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) % n
    }
}

#[test]
fn drain_pairs_exactly_as_the_reference_on_random_event_streams() {
    // A tick of a third of a ns (a 3 GHz TSC), and one of 3 ns (ticks convert with the
    // check for saturation).
    let clocks = [
        SessionClock::with_rate(1_000, 1_431_655_765),
        SessionClock::with_rate(1_000, (3 << 32) + 12_345),
    ];
    // What the streams exercised, so that the test cannot pass on empty drains.
    let (mut total_spans, mut total_lost, mut total_marks) = (0, 0, 0);
    for (seed, clock) in (1..=120u64).zip(clocks.iter().cycle()) {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let buffer = ThreadBuffer::new(7, 256);
        let mut reference = ReferencePairing::default();
        let mut stack: Vec<SymId> = Vec::new();
        let mut dropped_seen = 0;
        // Ticks start before the session's base and mostly rise, now and then a little back.
        let mut ticks = 900u64;
        // The lane every other drain writes over, as the writer's warm lanes are: it holds
        // the spans of the drain before (more or fewer than the next one pairs).
        let mut lane = Vec::new();
        for drain in 0..40 {
            for _ in 0..rng.below(90) {
                ticks =
                    (ticks + rng.below(40)).saturating_sub(if rng.below(8) == 0 { 30 } else { 0 });
                let id = rng.below(5) as SymId;
                let event = match rng.below(12) {
                    0 => Event {
                        ticks,
                        id,
                        kind: KIND_MARK,
                    },
                    // An end with no begin, or one that skips spans left open (a leaked guard).
                    1 => Event {
                        ticks,
                        id,
                        kind: KIND_END,
                    },
                    2..=6 => Event {
                        ticks,
                        id,
                        kind: KIND_BEGIN,
                    },
                    _ => match stack.pop() {
                        Some(open) => Event {
                            ticks,
                            id: open,
                            kind: KIND_END,
                        },
                        None => continue,
                    },
                };
                // SAFETY: this test thread is the only producer.
                let recorded = unsafe {
                    match event.kind {
                        KIND_BEGIN => buffer.begin(event.id, event.ticks),
                        KIND_END => {
                            buffer.end(event.id, event.ticks);
                            true
                        }
                        _ => {
                            let before = buffer.dropped.load(Ordering::Relaxed);
                            buffer.mark(event.id, event.ticks);
                            buffer.dropped.load(Ordering::Relaxed) == before
                        }
                    }
                };
                if recorded {
                    if event.kind == KIND_BEGIN {
                        stack.push(event.id);
                    }
                    reference.events.push_back(event);
                }
            }
            let cutoff = ticks.saturating_sub(rng.below(60));
            let (mut spans, mut marks) = (Vec::new(), Vec::new());
            let lost = if drain % 2 == 0 {
                buffer.drain(cutoff, clock, &mut spans, &mut marks)
            } else {
                let lost = buffer.drain_over(cutoff, clock, &mut lane, 0, &mut marks);
                spans.clone_from(&lane);
                lost
            };
            if drain % 2 == 0 {
                lane.clone_from(&spans);
            }
            let (want_spans, want_marks, want_lost) = reference.drain(cutoff, clock);
            assert_eq!(spans, want_spans, "seed {seed}");
            assert_eq!(marks, want_marks, "seed {seed}");
            // Beside the spans lost, the drain counts the spans the full ring dropped.
            let dropped = buffer.dropped.load(Ordering::Relaxed);
            assert_eq!(lost, want_lost + dropped - dropped_seen, "seed {seed}");
            dropped_seen = dropped;
            total_spans += spans.len();
            total_lost += want_lost;
            total_marks += marks.len();
        }
    }
    assert!(total_spans > 10_000 && total_lost > 100 && total_marks > 1_000);
}

/// One random event on a private ring, as the random streams above make them: marks, ends
/// with no begin or skipping spans left open (leaked guards), begins, and the ends of open
/// spans; ticks mostly rising, now and then a little back. Recorded unless the ring is full.
fn random_event(rng: &mut Rng, buffer: &ThreadBuffer, stack: &mut Vec<SymId>, ticks: &mut u64) {
    *ticks = (*ticks + rng.below(40)).saturating_sub(if rng.below(8) == 0 { 30 } else { 0 });
    let id = rng.below(5) as SymId;
    // SAFETY: the calling test thread is the ring's only producer.
    unsafe {
        match rng.below(12) {
            0 => buffer.mark(id, *ticks),
            1 => buffer.end(id, *ticks),
            2..=6 => {
                if buffer.begin(id, *ticks) {
                    stack.push(id);
                }
            }
            _ => {
                if let Some(open) = stack.pop() {
                    buffer.end(open, *ticks);
                }
            }
        }
    }
}

#[test]
fn frames_of_random_streams_encode_to_the_bytes_of_the_checked_lane_algorithm() {
    use framewise_format::payload::{encode_frame, encode_frame_checked};
    let clock = SessionClock::with_rate(1_000, 1_431_655_765);
    let (mut frames_written, mut frames_repaired, mut spans_unnestable, mut spans) = (0, 0, 0, 0);
    for seed in 1..=40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        // Two threads, so a frame has two lanes; small rings, so that they fill.
        let buffers = [ThreadBuffer::new(7, 256), ThreadBuffer::new(8, 128)];
        let mut stacks = [Vec::new(), Vec::new()];
        let mut ticks = [900u64, 950];
        let mut frame = Frame::default();
        for index in 0..40 {
            for (i, buffer) in buffers.iter().enumerate() {
                for _ in 0..rng.below(90) {
                    random_event(&mut rng, buffer, &mut stacks[i], &mut ticks[i]);
                }
            }
            // A frame closes at a cut-off some events may lie beyond.
            let cutoff = ticks[0].min(ticks[1]).saturating_sub(rng.below(60));
            frame.index = index;
            frame.cpu_begin_ns = frame.cpu_end_ns;
            frame.cpu_end_ns = clock.ns(cutoff).max(frame.cpu_begin_ns);
            frame.marks.clear();
            frame.lanes.clear();
            for buffer in &buffers {
                let mut lane = framewise_format::model::Lane {
                    thread: buffer.thread,
                    ..Default::default()
                };
                lane.dropped_spans =
                    buffer.drain(cutoff, &clock, &mut lane.spans, &mut frame.marks);
                spans += lane.spans.len();
                frame.lanes.push(lane);
            }
            let (mut fast, mut checked) = (Vec::new(), Vec::new());
            let fast_result = encode_frame(&mut fast, &frame, std::iter::empty());
            let checked_result = encode_frame_checked(&mut checked, &frame, std::iter::empty());
            assert_eq!(
                fast_result.as_ref().map_err(|e| e.to_string()),
                checked_result.as_ref().map_err(|e| e.to_string()),
                "seed {seed}, frame {index}"
            );
            if let Err(error) = &fast_result {
                // Only the format's one ambiguity: a span with no length that begins where
                // a span before it ends, deeper than it by more than one (its ancestors
                // open at the frame's end), reads as nested in that span. The writer drops
                // such spans, counted, and writes the frame.
                let framewise_format::EncodeError::BadNesting {
                    thread, index: at, ..
                } = error
                else {
                    panic!("seed {seed}, frame {index}: {error}");
                };
                let lane = frame.lanes.iter().find(|l| l.thread == *thread);
                let spans = &lane.expect("the refused lane").spans;
                let span = &spans[*at];
                assert!(
                    span.start_ns == span.end_ns
                        && spans[..*at].iter().any(|before| {
                            before.end_ns == span.start_ns && before.depth + 1 < span.depth
                        }),
                    "seed {seed}, frame {index}: {error}: {spans:?}"
                );
                let lane_dropped: u64 = frame.lanes.iter().map(|l| l.dropped_spans).sum();
                let dropped = drop_unnestable_spans(&mut frame.lanes);
                assert!(dropped > 0, "seed {seed}, frame {index}");
                let now: u64 = frame.lanes.iter().map(|l| l.dropped_spans).sum();
                assert_eq!(now, lane_dropped + dropped);
                frames_repaired += 1;
                spans_unnestable += dropped;
            }
            let (mut fast, mut checked) = (Vec::new(), Vec::new());
            let fast_result = encode_frame(&mut fast, &frame, std::iter::empty());
            let checked_result = encode_frame_checked(&mut checked, &frame, std::iter::empty());
            // Every frame encodes, the same either way.
            assert!(
                fast_result.is_ok(),
                "seed {seed}, frame {index}: {fast_result:?}"
            );
            assert!(checked_result.is_ok(), "seed {seed}, frame {index}");
            assert_eq!(fast, checked, "seed {seed}, frame {index}: {frame:?}");
            frames_written += 1;
        }
    }
    // A span lost to a leaked guard or a guard dropped out of order leaves its descendants
    // inside the span kept around them, one level below it: no frame is refused for it, and
    // only a few for the ambiguity above (each repaired by dropping a few spans).
    assert!(
        frames_written == 1_600 && frames_repaired < 10 && spans > 20_000,
        "{frames_written} frames written, {frames_repaired} repaired \
         ({spans_unnestable} spans dropped), {spans} spans"
    );
}

#[test]
fn a_reused_buffer_starts_empty_for_its_new_thread() {
    let clock = SessionClock::identity();
    let mut buffer = ThreadBuffer::new(7, 16);
    // The old thread: a span still open when it exits, spans dropped on a full ring, and a
    // drain that carries the open span.
    // SAFETY: this test thread is the only producer.
    unsafe {
        assert!(buffer.begin(1, 10));
        for i in 0..20u64 {
            if buffer.begin(2, 20 + i) {
                buffer.end(2, 21 + i);
            }
        }
    }
    let (_, _, dropped) = drain_all(&buffer, &clock);
    assert!(dropped > 0);
    // SAFETY: as above (the old thread's last events, never drained).
    unsafe { assert!(buffer.begin(3, 100)) };
    buffer.retired.store(true, Ordering::Release);

    buffer.reuse(9);
    assert_eq!(buffer.thread, 9);
    assert!(!buffer.retired.load(Ordering::Acquire));
    let (spans, marks, dropped) = drain_all(&buffer, &clock);
    assert!(
        spans.is_empty() && marks.is_empty(),
        "nothing of the old thread"
    );
    assert_eq!(dropped, 0, "the old thread's drops are not the new one's");
    // The whole ring is the new thread's: 8 spans fit (room for an end is kept per begin).
    let mut recorded = 0;
    for i in 0..8u64 {
        // SAFETY: this test thread is the only producer of the reused buffer.
        unsafe {
            if buffer.begin(4, 200 + i * 10) {
                recorded += 1;
                buffer.end(4, 205 + i * 10);
            }
        }
    }
    assert_eq!(recorded, 8);
    let (spans, _, dropped) = drain_all(&buffer, &clock);
    assert_eq!(dropped, 0);
    assert_eq!(spans.len(), 8);
    assert!(
        spans.iter().all(|s| s.scope == 4 && s.depth == 0),
        "no span carried from the old thread: {spans:?}"
    );
}

/// The pairing counts the ends it no longer waits for: those of lost spans, and of spans open
/// when the session started (skipped events included); an end of one of them, when it comes
/// after all, takes it off.
#[test]
fn the_ends_the_pairing_no_longer_waits_for_are_counted_untracked() {
    let clock = SessionClock::identity();
    let buffer = ThreadBuffer::new(7, 64);
    let untracked = || buffer.untracked.load(Ordering::Relaxed);
    // SAFETY: this test thread is the only producer.
    unsafe {
        buffer.begin(1, 10);
        buffer.begin(2, 20);
        buffer.end(1, 30);
    }
    let (spans, _, lost) = drain_all(&buffer, &clock);
    assert_eq!((spans.len(), lost, untracked()), (1, 1, 1), "`2` lost");
    // SAFETY: as above.
    unsafe { buffer.end(2, 40) };
    let (spans, _, lost) = drain_all(&buffer, &clock);
    assert_eq!(
        (spans.len(), lost, untracked()),
        (0, 0, 0),
        "its end came late"
    );

    // A span carried across a drain, and two begun after it (one of them ended), all skipped
    // by a session's start.
    // SAFETY: as above.
    unsafe { buffer.begin(3, 50) };
    drain_all(&buffer, &clock);
    // SAFETY: as above.
    unsafe {
        buffer.begin(4, 60);
        buffer.begin(5, 70);
        buffer.end(5, 80);
    }
    buffer.discard();
    assert_eq!(untracked(), 2, "`3` and `4` were open at the start");
    // SAFETY: as above.
    unsafe {
        buffer.end(4, 90);
        buffer.end(3, 100);
    }
    let (spans, _, lost) = drain_all(&buffer, &clock);
    assert_eq!((spans.len(), lost, untracked()), (0, 0, 0));
}

/// On a thread's own ring: 30,000 spans lost (their guards still alive) leave promises of
/// 30,000 ends. Spans that fit only beside those promises (17,768 of them by the promises)
/// use their room, and the thread's ends check for room meanwhile: the lost spans' late ends
/// find the ring full and are not written, overwriting nothing. Once the ring is drained,
/// ends are written with no check again.
#[test]
fn room_promised_to_lost_spans_is_used_and_ends_check_for_room_meanwhile() {
    std::thread::spawn(|| {
        const LOST: u32 = 30_000;
        let clock = SessionClock::identity();
        let (parent, lost_id, span) = (1, 2, 3);
        let own = || current().unwrap();
        let checked = || CURRENT.with(Cell::get).is_null();
        assert!(begin(parent));
        for _ in 0..LOST {
            assert!(begin(lost_id));
        }
        end(parent);
        let (spans, _, lost) = drain_all(own(), &clock);
        assert_eq!((spans.len(), lost), (1, u64::from(LOST)));
        assert_eq!(own().untracked.load(Ordering::Relaxed), u64::from(LOST));

        let capacity = RING_EVENTS as u64;
        let mut recorded = 0u64;
        while begin(span) {
            end(span);
            recorded += 1;
        }
        assert!(checked(), "the ends check for room");
        assert_eq!(recorded, capacity / 2, "the whole ring: {recorded} spans");
        // The lost spans' guards end now: the ring is full.
        for _ in 0..LOST {
            end(lost_id);
        }
        let buffer = owned_buffer().unwrap();
        let (spans, _, dropped) = drain_all(buffer, &clock);
        assert_eq!(dropped, 1, "the begin that found the ring full");
        assert_eq!(spans.len() as u64, recorded, "nothing overwritten");
        assert!(spans.iter().all(|s| s.scope == span && s.depth == 0));

        // The next begin finds every end the thread may write fits: unchecked again.
        assert!(begin(span));
        assert!(!checked());
        end(span);
        let (spans, _, dropped) = drain_all(own(), &clock);
        assert_eq!((spans.len(), dropped), (1, 0));
    })
    .join()
    .unwrap();
}

/// A producer's fast path stops where its ring would be more than half taken: the slow path
/// runs there and raises the flag a lossless frame close reads, raises it again an eighth of
/// the ring further on when a close cleared it while the ring stays over half, and, once the
/// writer drained the ring, stops again at half of what is left. (Other tests' rings may raise
/// the flag meanwhile, never clear it: only raised flags are asserted.)
#[test]
fn a_ring_passing_half_raises_the_flag_a_lossless_close_reads() {
    let clock = SessionClock::identity();
    let buffer = ThreadBuffer::new(7, 64);
    // SAFETY: this test thread is the ring's only producer.
    let limit = || unsafe { (*buffer.producer.get()).limit };
    let span = |at: u64| {
        // SAFETY: as above.
        unsafe {
            assert!(buffer.begin(1, at));
            buffer.end(1, at + 1);
        }
    };
    assert_eq!(limit(), 32, "a new ring stops at half");
    for at in 0..16 {
        span(at);
    }
    assert_eq!(limit(), 32, "16 spans take half: the fast path all along");
    span(16);
    assert!(take_ring_over_half(), "raised as the ring passed half");
    assert_eq!(limit(), 34 + 8, "an eighth further on");
    for at in 17..21 {
        span(at);
    }
    assert_eq!(limit(), 42, "the fast path up to there");
    span(21);
    assert!(take_ring_over_half(), "raised again while over half");
    assert_eq!(limit(), 44 + 8);
    let (spans, _, dropped) = drain_all(&buffer, &clock);
    assert_eq!((spans.len(), dropped), (22, 0));
    for at in 22..26 {
        span(at);
    }
    span(26);
    assert_eq!(limit(), 44 + 32, "half of the ring past the writer's tail");

    // A span lost to the pairing (its end never comes) leaves its promised slot untracked:
    // the half is counted without it.
    // SAFETY: as above.
    unsafe {
        assert!(buffer.begin(2, 100));
        assert!(buffer.begin(3, 101));
        buffer.end(2, 102);
    }
    drain_all(&buffer, &clock);
    assert_eq!(buffer.untracked.load(Ordering::Relaxed), 1);
    let tail = buffer.tail.0.load(Ordering::Relaxed);
    // The fast path up to the limit set before, then the slow path sets the next one.
    let before = limit();
    let mut spans = 0;
    while limit() == before && spans < 64 {
        span(200);
        spans += 1;
    }
    assert_eq!(limit(), tail + 32 + 1, "after {spans} spans");
}
