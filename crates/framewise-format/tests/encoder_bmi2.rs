//! `encode_frame_bmi2`, the frame encoder compiled for BMI1, BMI2 and LZCNT, against
//! `encode_frame`: the same bytes and the same errors for any frame. Its source is the
//! portable encoder's (one body, inlined into both); what these tests guard is the code the
//! compiler makes of it with the other instructions. On a CPU without the three features
//! they have nothing to compare and say so.

#![cfg(target_arch = "x86_64")]

use framewise_format::model::{CpuSpan, Frame, Lane};
use framewise_format::payload;
use proptest::prelude::*;

use crate::support;

fn cpu_has_bmi2() -> bool {
    let has = std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt");
    if !has {
        eprintln!("this CPU lacks BMI1, BMI2 or LZCNT: encode_frame_bmi2 is not compared");
    }
    has
}

/// The payload of `frame` (after a few bytes already there, as in a writer's buffer) or
/// its error, through both encoders.
fn both(frame: &Frame) -> (Result<Vec<u8>, String>, Result<Vec<u8>, String>) {
    let mut portable = vec![0xa5; 3];
    let portable = payload::encode_frame(&mut portable, frame, std::iter::empty())
        .map(|()| portable)
        .map_err(|e| format!("{e:?}"));
    let mut bmi2 = vec![0xa5; 3];
    // SAFETY: only called after `cpu_has_bmi2()`: the CPU has the features it is built for.
    let bmi2 = unsafe { payload::encode_frame_bmi2(&mut bmi2, frame, std::iter::empty()) }
        .map(|()| bmi2)
        .map_err(|e| format!("{e:?}"));
    (portable, bmi2)
}

#[test]
fn realistic_frames_encode_to_the_same_bytes() {
    if !cpu_has_bmi2() {
        return;
    }
    let mut rng = support::Rng::new(9);
    let mut bytes = 0;
    for i in 0..200 {
        let frame = support::frame(&mut rng, i, 1_000_000 + i * 16_700_000);
        let (portable, bmi2) = both(&frame);
        assert!(portable.is_ok(), "frame {i}: {portable:?}");
        bytes += portable.as_ref().map_or(0, Vec::len);
        assert_eq!(portable, bmi2, "frame {i}");
    }
    assert!(bytes > 200_000, "{bytes} bytes");
}

/// A lane from `steps`: each step is (how many open spans end before the next span begins,
/// as a share of those open; whether it opens a child level; its gap; its scope), then an
/// optional disturbance of one span (`damage`: which span, which field), so that lanes
/// coded by depth, lanes coded through every check and refused lanes all occur.
fn lane_from(
    top_depth: u32,
    steps: &[(u8, bool, u64, u32)],
    damage: Option<(usize, u8, u64)>,
) -> Lane {
    let mut spans: Vec<CpuSpan> = Vec::new();
    // The open spans' indices, innermost last.
    let mut open: Vec<usize> = Vec::new();
    let close = |spans: &mut Vec<CpuSpan>, open: &mut Vec<usize>, t: u64| {
        if let Some(span) = open.pop().and_then(|i| spans.get_mut(i)) {
            span.end_ns = t;
        }
    };
    let mut t = 1_000u64;
    for &(ends, child, gap, scope) in steps {
        for _ in 0..usize::from(ends) % (open.len() + 1) + usize::from(!child) {
            t += gap & 0x3ff;
            close(&mut spans, &mut open, t);
        }
        t += gap;
        let depth = top_depth.saturating_add(open.len() as u32);
        open.push(spans.len());
        spans.push(CpuSpan {
            scope,
            depth,
            start_ns: t,
            end_ns: t,
        });
    }
    while !open.is_empty() {
        t += 1 + t % 7;
        close(&mut spans, &mut open, t);
    }
    if let (Some((at, field, by)), false) = (damage, spans.is_empty()) {
        let count = spans.len();
        let s = &mut spans[at % count];
        match field % 4 {
            0 => s.start_ns = s.start_ns.wrapping_sub(by),
            1 => s.end_ns = s.end_ns.wrapping_sub(by),
            2 => s.depth = s.depth.wrapping_add(1 + (by % 3) as u32),
            _ => s.depth = s.depth.wrapping_sub(1),
        }
    }
    Lane {
        thread: 3,
        dropped_spans: 0,
        spans,
    }
}

/// Gaps of a uniformly random bit length up to 50: as many of a few ns as of days, so that
/// codes too long for one write and escapes occur beside the usual ones.
fn gap() -> impl Strategy<Value = u64> {
    (any::<u64>(), 0u32..=50).prop_map(|(x, bits)| x.checked_shr(64 - bits).unwrap_or(0))
}

fn lane() -> impl Strategy<Value = Lane> {
    (
        prop_oneof![4 => Just(0u32), 2 => 1u32..4, 1 => Just(u32::MAX - 1)],
        prop::collection::vec((any::<u8>(), any::<bool>(), gap(), any::<u32>()), 0..200),
        prop::option::weighted(0.3, (any::<usize>(), any::<u8>(), 0u64..2_000)),
    )
        .prop_map(|(top_depth, steps, damage)| lane_from(top_depth, &steps, damage))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn random_frames_encode_to_the_same_bytes_and_errors(
        lanes in prop::collection::vec(lane(), 0..4),
        begin in 0u64..2_000,
    ) {
        if !cpu_has_bmi2() {
            return Ok(());
        }
        let frame = Frame {
            cpu_begin_ns: begin,
            cpu_end_ns: begin + 1_000_000,
            lanes,
            ..Frame::default()
        };
        let (portable, bmi2) = both(&frame);
        prop_assert_eq!(portable, bmi2);
    }
}
