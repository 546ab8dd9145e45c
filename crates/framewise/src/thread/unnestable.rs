//! The one lane the pairing can produce that the capture format refuses, made writable.
//!
//! A span whose ancestors are still open when its frame closes appears without them, at its
//! true depth (docs/FORMAT.md §8.2). The format's lane algorithm finds a span's parent by
//! time: a span with no length that begins at the very nanosecond an earlier span of the
//! lane ends lies inside that span as far as the format can tell. When its true depth is
//! more than one level below that span's (its ancestors all began in that same nanosecond
//! and are still open), no writer can code it, and the format refuses the lane. Such spans
//! (and, being no longer than them, their descendants) are dropped and counted, on the cold
//! path only: after the format refused a frame.

use framewise_format::model::{CpuSpan, Lane};

/// Drops, from every lane, the spans that the format's lane algorithm would nest in a span
/// that is not their parent, adding them to the lane's `dropped_spans`. Returns the spans
/// dropped.
pub(crate) fn drop_unnestable_spans(lanes: &mut [Lane]) -> u64 {
    let mut dropped = 0;
    let mut open: Vec<CpuSpan> = Vec::new();
    for lane in lanes {
        open.clear();
        let before = lane.spans.len();
        lane.spans.retain(|s| {
            // The spans the algorithm ends before `s` begins: those not around it in time,
            // and those not above it.
            let kept = open
                .iter()
                .rposition(|top| {
                    top.depth < s.depth && top.start_ns <= s.start_ns && s.end_ns <= top.end_ns
                })
                .map_or(0, |parent| parent + 1);
            let nestable = kept
                .checked_sub(1)
                .and_then(|parent| open.get(parent))
                .is_none_or(|parent| parent.depth + 1 == s.depth);
            if nestable {
                open.truncate(kept);
                open.push(*s);
            }
            nestable
        });
        let removed = (before - lane.spans.len()) as u64;
        lane.dropped_spans += removed;
        dropped += removed;
    }
    dropped
}

/// A span, for tests.
#[cfg(test)]
pub(crate) fn span(scope: u32, depth: u32, start_ns: u64, end_ns: u64) -> CpuSpan {
    CpuSpan {
        scope,
        depth,
        start_ns,
        end_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use framewise_format::model::Frame;
    use framewise_format::payload::encode_frame;

    #[test]
    fn spans_with_no_length_where_a_shallower_span_ends_are_dropped_and_counted() {
        // r ends at 10; in that nanosecond three spans begin and stay open (depths 0 to 2),
        // and s (depth 3) and its child t begin and end: the format reads them as inside r.
        let mut frame = Frame::default();
        frame.lanes.push(Lane {
            thread: 1,
            dropped_spans: 2,
            spans: vec![
                span(1, 0, 0, 10),
                span(2, 1, 2, 4),
                span(3, 3, 10, 10),
                span(4, 4, 10, 10),
            ],
        });
        let mut bytes = Vec::new();
        assert!(encode_frame(&mut bytes, &frame, std::iter::empty()).is_err());
        assert_eq!(drop_unnestable_spans(&mut frame.lanes), 2);
        let lane = &frame.lanes[0];
        assert_eq!(lane.spans, vec![span(1, 0, 0, 10), span(2, 1, 2, 4)]);
        assert_eq!(lane.dropped_spans, 4);
        encode_frame(&mut bytes, &frame, std::iter::empty()).expect("written");
        // A lane the format accepts loses nothing: spans of no length at their parent's end,
        // a span deeper than the one before it that it does not lie in.
        let kept = vec![
            span(1, 0, 0, 10),
            span(2, 1, 10, 10),
            span(3, 0, 10, 12),
            span(4, 1, 12, 12),
            span(5, 3, 13, 14),
        ];
        frame.lanes[0].spans = kept.clone();
        assert_eq!(drop_unnestable_spans(&mut frame.lanes), 0);
        assert_eq!(frame.lanes[0].spans, kept);
    }
}
