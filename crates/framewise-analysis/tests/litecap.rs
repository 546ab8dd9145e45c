use framewise_analysis::import::litecap::{
    self, DecodeError, InstantLane, Litecap, SpanLane, Timeline,
};
use framewise_analysis::{summarize, LoadOptions};
use proptest::prelude::*;

pub fn sample(version: u8, frames: usize, phases: usize) -> Litecap {
    let frames_ms: Vec<f32> = (0..frames).map(|i| 16.0 + (i % 5) as f32 * 0.25).collect();
    Litecap {
        version,
        frames_ms: frames_ms.clone(),
        phase_tags: (0..phases)
            .map(|p| {
                if version >= 2 {
                    format!("phase_{p}")
                } else {
                    format!("phase{p}")
                }
            })
            .collect(),
        phases_ms: (0..phases)
            .map(|p| {
                (0..frames)
                    .map(|i| 1.0 + p as f32 + (i % 3) as f32)
                    .collect()
            })
            .collect(),
        meta: (version >= 2)
            .then(|| serde_json::json!({"label": "bench", "engine": "js", "budgetMs": 16.0})),
        meta_invalid: false,
        counter_tags: if version >= 3 {
            vec!["drawCalls".into(), "heapMb".into()]
        } else {
            vec![]
        },
        counters: if version >= 3 {
            vec![
                vec![100.0; frames],
                (0..frames).map(|i| 10.5 + i as f32).collect(),
            ]
        } else {
            vec![]
        },
        timeline: (version >= 4).then(|| {
            let starts: Vec<f64> = frames_ms
                .iter()
                .scan(5000.0f64, |t, &d| {
                    let s = *t;
                    *t += f64::from(d) + 1.0;
                    Some(s)
                })
                .collect();
            Timeline {
                spans: vec![SpanLane {
                    tag: "render".into(),
                    t0_ms: starts.iter().map(|s| s + 2.0).collect(),
                    t1_ms: starts.iter().map(|s| s + 9.0).collect(),
                }],
                instants: vec![InstantLane {
                    tag: "gc".into(),
                    times_ms: vec![starts[frames / 2] + 3.0],
                }],
                frame_starts_ms: starts,
            }
        }),
        trailing_bytes: 0,
    }
}

#[test]
fn every_version_imports() {
    for v in 1..=4u8 {
        let bytes = litecap::encode(&sample(v, 120, 3));
        let c = litecap::import(&bytes, &LoadOptions::default()).expect("valid");
        let s = summarize(&c);
        assert_eq!(s.capture.source_version, Some(u32::from(v)));
        assert_eq!(
            s.frame.times.count, 120,
            "v{v}: litecap periods are the frame times, all known"
        );
        assert_eq!(s.scopes.len(), 3, "v{v}: phases are scopes");
        assert!(
            s.notes.iter().any(|n| n.contains("work times")),
            "v{v}: says work is taken as the period"
        );
        if v >= 3 {
            assert_eq!(s.metric("counter.drawCalls.sum"), Some(12000.0));
            let v = serde_json::to_value(&s).expect("json");
            assert!(v["counters"]["drawCalls"]["sum"].is_i64());
            assert!(
                v["counters"]["heapMb"]["sum"].is_f64(),
                "fractional counters stay floats"
            );
        }
        assert_eq!(c.meta().clock_measured, v == 4);
    }
}

#[test]
fn v4_timeline_becomes_spans_and_marks() {
    let bytes = litecap::encode(&sample(4, 50, 2));
    let c = litecap::import(&bytes, &LoadOptions::default().with_spans(true)).expect("valid");
    let spans = c.spans().expect("kept");
    assert_eq!(spans.cpu.all().len(), 50);
    assert_eq!(
        spans.cpu.frame(0)[0].end_ns - spans.cpu.frame(0)[0].start_ns,
        7_000_000
    );
    assert_eq!(c.marks().len(), 1);
    assert_eq!(c.marks()[0].frame_row, 25);
}

/// A frame time that is negative or not finite cannot be read, so that frame is lost: the
/// defect is `dropped-frames`, which makes `gate` and `diff` inconclusive on the capture, as on
/// any capture that lost frames; with an `importer` defect the gate passed on the frames left
/// (50 frames of 500 ms read as NaN left a run of 12 ms frames).
#[test]
fn an_unreadable_frame_time_loses_the_frame() {
    let mut lc = sample(3, 100, 1);
    for ms in &mut lc.frames_ms[40..50] {
        *ms = f32::NAN;
    }
    lc.frames_ms[60] = -1.0;
    lc.frames_ms[61] = f32::INFINITY;
    let bytes = litecap::encode(&lc);
    let c = litecap::import(&bytes, &LoadOptions::default()).expect("tolerated");
    assert_eq!(c.frames().index.len(), 88);
    let lost: Vec<_> = c
        .defects()
        .iter()
        .filter(|d| d.kind == framewise_analysis::DefectKind::DroppedFrames)
        .collect();
    assert_eq!(lost.len(), 1, "{:?}", c.defects());
    assert_eq!(lost[0].count, 12);
    let whole = summarize(
        &litecap::import(
            &litecap::encode(&sample(3, 100, 1)),
            &LoadOptions::default(),
        )
        .expect("valid"),
    );
    let cut = summarize(&c);
    let r = framewise_analysis::gate(&whole, &cut, &framewise_analysis::GateConfig::default())
        .expect("the default paths name something");
    assert_eq!(
        r.verdict,
        framewise_analysis::Verdict::Inconclusive,
        "{:?}",
        r.reasons
    );
    assert_eq!(r.exit_code, 2);
}

#[test]
fn trailing_bytes_and_bad_meta_are_defects() {
    let mut lc = sample(2, 10, 1);
    lc.meta = None;
    let mut bytes = litecap::encode(&lc);
    // Replace the meta length (last 4 bytes, 0) with a 3-byte non-JSON blob, then add junk.
    let n = bytes.len();
    bytes[n - 4..].copy_from_slice(&3u32.to_le_bytes());
    bytes.extend_from_slice(b"{{{");
    bytes.extend_from_slice(b"junk");
    let c = litecap::import(&bytes, &LoadOptions::default()).expect("tolerated");
    let messages: Vec<&str> = c.defects().iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.contains("not valid JSON")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("4 bytes after")),
        "{messages:?}"
    );
}

#[test]
fn limits_are_enforced_before_allocating() {
    let mut bytes = b"LCAP\x04".to_vec();
    bytes.extend_from_slice(&((1u32 << 20) + 1).to_le_bytes());
    bytes.push(0);
    assert_eq!(
        litecap::decode(&bytes),
        Err(DecodeError::Limit {
            what: "frame count",
            value: (1 << 20) + 1,
            limit: 1 << 20
        })
    );
    // A v4 trailer claiming 2^20 boundaries in a few bytes: truncated, not allocated.
    let mut lc = sample(4, 2, 0);
    lc.timeline = Some(Timeline::default());
    let mut bytes = litecap::encode(&lc);
    let at = bytes.len() - 6; // frame boundary count: u32, then two u8 lane counts
    bytes[at..at + 4].copy_from_slice(&(1u32 << 20).to_le_bytes());
    assert!(matches!(
        litecap::decode(&bytes),
        Err(DecodeError::Truncated {
            what: "frame boundaries",
            ..
        })
    ));
}

#[test]
fn every_cut_of_a_v4_file_is_an_error_not_a_panic() {
    let bytes = litecap::encode(&sample(4, 16, 2));
    for cut in 0..bytes.len() {
        assert!(
            litecap::decode(&bytes[..cut]).is_err(),
            "cut at {cut} of {}",
            bytes.len()
        );
    }
    assert!(litecap::decode(&bytes).is_ok());
}

proptest! {
    #[test]
    fn round_trip(version in 1u8..=4, frames in 1usize..40, phases in 0usize..5) {
        let lc = sample(version, frames, phases);
        let bytes = litecap::encode(&lc);
        prop_assert_eq!(litecap::decode(&bytes), Ok(lc));
    }

    #[test]
    fn corruption_never_panics(version in 1u8..=4, flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut bytes = litecap::encode(&sample(version, 12, 2));
        let n = bytes.len();
        for (at, byte) in flips {
            // Keep the magic so the trailers get exercised.
            let at = 4 + at % (n - 4);
            bytes[at] = byte;
        }
        if let Ok(lc) = litecap::decode(&bytes) {
            let _ = litecap::build(&lc, &LoadOptions::default().with_spans(true));
        }
    }

    #[test]
    fn garbage_never_panics(mut bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if bytes.len() >= 4 { bytes[..4].copy_from_slice(b"LCAP"); }
        let _ = litecap::import(&bytes, &LoadOptions::default());
    }
}
