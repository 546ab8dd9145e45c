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
    assert_eq!(got, vec![(1, 0, 10, 50), (3, 2, 30, 40)]);
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
    assert_eq!(got, vec![(1, 0, 10, 60), (3, 2, 30, 40)]);
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
