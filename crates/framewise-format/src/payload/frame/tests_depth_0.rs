//! The lane encoder's copy of its by-depth loop for lanes whose top level is depth 0
//! (`write_begin_at_depth_0`), against the reference encoder: the same bytes for any such
//! lane, long or short, with codes that fit one write or not.

use proptest::prelude::*;

use super::tests::{coded_by_depth, encode_new, encode_old};
use crate::model::{CpuSpan, Lane};

/// A lane coded by depth from `steps`: each step is (how many open spans end before the
/// next span begins, as a share of those open; whether the span opens a child level; its
/// gap; its length share; its scope). Gaps and lengths span small codes to escapes.
fn lane_from(top_depth: u32, steps: &[(u8, bool, u64, u32)]) -> Lane {
    let mut spans: Vec<CpuSpan> = Vec::new();
    // Indices of the open spans, innermost last.
    let mut open: Vec<usize> = Vec::new();
    let mut t = 1_000u64;
    for &(ends, child, gap, scope) in steps {
        let closing = usize::from(ends) % (open.len() + 1);
        for _ in 0..closing {
            if let Some(i) = open.pop() {
                t += gap & 0xff;
                spans[i].end_ns = t;
            }
        }
        if !child {
            // A sibling of the innermost open span, or a new top-level span.
            if let Some(i) = open.pop() {
                t += gap & 0xff;
                spans[i].end_ns = t;
            }
        }
        t += gap;
        let depth = top_depth + open.len() as u32;
        spans.push(CpuSpan {
            scope,
            depth,
            start_ns: t,
            end_ns: t,
        });
        open.push(spans.len() - 1);
    }
    while let Some(i) = open.pop() {
        t += 3;
        spans[i].end_ns = t;
    }
    Lane {
        thread: 7,
        dropped_spans: 0,
        spans,
    }
}

fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 0u64..64,
        4 => 0u64..100_000,
        1 => 0u64..(1 << 50),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn lanes_at_depth_0_coded_by_depth_encode_to_the_reference_bytes(
        steps in prop::collection::vec((any::<u8>(), any::<bool>(), gap(), 0u32..40), 0..300),
        top_depth in prop_oneof![4 => Just(0u32), 1 => 1u32..4],
        begin in 0u64..1_000,
    ) {
        let lane = lane_from(top_depth, &steps);
        prop_assert!(coded_by_depth(&lane));
        prop_assert_eq!(encode_new(&lane, begin), encode_old(&lane, begin));
    }
}
