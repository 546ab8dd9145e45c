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
        // v4's timeline lane `render` is no phase: a scope of its own.
        let lanes = usize::from(v >= 4);
        assert_eq!(s.scopes.len(), 3 + lanes, "v{v}: phases are scopes");
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
    // Over an hour: a damaged value, whose begin would push every later frame's to the end.
    lc.frames_ms[62] = 1.7e13;
    let bytes = litecap::encode(&lc);
    let c = litecap::import(&bytes, &LoadOptions::default()).expect("tolerated");
    assert_eq!(c.frames().index.len(), 87);
    let lost = lost_frames(&c);
    assert_eq!(lost.len(), 1, "{:?}", c.defects());
    assert_eq!(lost[0].count, 13);
    inconclusive_against_the_whole(&c);
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

/// The capture's defects that say frames were lost (dropped-frames).
fn lost_frames(c: &framewise_analysis::Capture) -> Vec<&framewise_analysis::model::Defect> {
    c.defects()
        .iter()
        .filter(|d| d.kind == framewise_analysis::DefectKind::DroppedFrames)
        .collect()
}

/// The verdict on a litecap as a comparison's side: inconclusive (exit 2) against the whole
/// sample, whatever the damage.
fn inconclusive_against_the_whole(damaged: &framewise_analysis::Capture) {
    let whole = summarize(
        &litecap::import(
            &litecap::encode(&sample(3, 100, 1)),
            &LoadOptions::default(),
        )
        .expect("valid"),
    );
    let r = framewise_analysis::gate(
        &whole,
        &summarize(damaged),
        &framewise_analysis::GateConfig::default(),
    )
    .expect("the default paths name something");
    assert_eq!(
        r.verdict,
        framewise_analysis::Verdict::Inconclusive,
        "{:?}",
        r.reasons
    );
    assert_eq!(r.exit_code, 2);
}

/// lite-profiler writes exactly the bytes it sized: bytes after the last section are a
/// damaged frame count (the frames past it unread) or two files joined, so a comparison with
/// the file is inconclusive, not a pass over the frames that did read.
#[test]
fn bytes_after_the_last_section_may_hide_frames() {
    let mut joined = litecap::encode(&sample(3, 100, 1));
    joined.extend_from_slice(&litecap::encode(&sample(3, 100, 1)));
    let c = litecap::import(&joined, &LoadOptions::default()).expect("tolerated");
    assert!(
        c.defects()
            .iter()
            .any(|d| d.kind == framewise_analysis::DefectKind::CorruptRange),
        "{:?}",
        c.defects()
    );
    inconclusive_against_the_whole(&c);
}

/// A phase time or counter value that is no measurement (NaN, negative, infinite) leaves its
/// phase or counter describing part of the run: a defect, and comparisons are inconclusive.
/// A phase time of 0 is a time, as lite-profiler counts it.
#[test]
fn values_that_are_no_measurement_are_missing_and_zero_is_a_time() {
    let mut lc = sample(3, 100, 1);
    for v in &mut lc.phases_ms[0][10..20] {
        *v = f32::NAN;
    }
    lc.phases_ms[0][30] = -3.0;
    lc.counters[0][50] = f32::INFINITY;
    let c = litecap::import(&litecap::encode(&lc), &LoadOptions::default()).expect("tolerated");
    let missing = lost_frames(&c);
    assert_eq!(missing.len(), 1, "{:?}", c.defects());
    assert_eq!(missing[0].count, 12, "frames with a value missing");
    inconclusive_against_the_whole(&c);

    let mut zeros = sample(3, 100, 1);
    for v in &mut zeros.phases_ms[0][..75] {
        *v = 0.0;
    }
    let c = litecap::import(&litecap::encode(&zeros), &LoadOptions::default()).expect("valid");
    assert!(c.defects().is_empty(), "{:?}", c.defects());
    let s = summarize(&c);
    let calls = s.metric("scope.phase_0.calls");
    assert_eq!(calls, Some(100.0), "every frame's phase counted, zeros too");
}

/// lite-profiler's timeline-only capture is one stub frame of 0 ms with the frames in its
/// timeline: not a capture of one frame, which a gate would compare as 0 ms against 0 ms.
#[test]
fn a_timeline_only_capture_is_not_one_frame_of_0_ms() {
    let full = sample(4, 50, 0);
    let mut stub = full.clone();
    stub.frames_ms = vec![0.0];
    stub.counters = vec![];
    stub.counter_tags = vec![];
    stub.version = 4;
    let c = litecap::import(&litecap::encode(&stub), &LoadOptions::default()).expect("tolerated");
    let lost = lost_frames(&c);
    assert_eq!(lost.len(), 1, "{:?}", c.defects());
    assert_eq!(lost[0].count, 50);
}

/// A `budgetMs` no game has (0, a day, a string) is ignored with a note, not taken as the
/// hitch rule's and the classes' budget.
#[test]
fn an_absurd_budget_is_ignored() {
    for (budget, kept) in [
        (serde_json::json!(16.7), Some(16_700_000)),
        (serde_json::json!(0), None),
        (serde_json::json!(1e12), None),
        (serde_json::json!("16.7"), None),
    ] {
        let mut lc = sample(3, 20, 1);
        lc.meta = Some(serde_json::json!({ "budgetMs": budget }));
        let c = litecap::import(&litecap::encode(&lc), &LoadOptions::default()).expect("valid");
        assert_eq!(c.meta().frame_budget_ns, kept, "{budget}");
        assert_eq!(
            c.meta()
                .notes
                .iter()
                .any(|n| n.contains("is not a frame budget")),
            kept.is_none(),
            "{budget}: {:?}",
            c.meta().notes
        );
    }
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

/// A `.litecap`'s summary and a capture of periods' summary.
fn lite_and_game() -> (framewise_analysis::Summary, framewise_analysis::Summary) {
    let lite = summarize(
        &litecap::import(
            &litecap::encode(&sample(3, 200, 1)),
            &LoadOptions::default(),
        )
        .expect("valid"),
    );
    let game = summarize(&crate::fixtures::game(&crate::fixtures::GameSpec::default()));
    (lite, game)
}

/// A `.litecap`'s frame time is a work time also taken as its period, so its `frame.*` are not
/// what a capture's periods (begin to next begin) are: a gate between the two is incomparable
/// on them, whatever the numbers, and compares `work.*`, which both measure.
#[test]
fn a_litecaps_frame_metrics_do_not_compare_with_periods() {
    let (lite, game) = lite_and_game();
    for (base, cand) in [(&game, &lite), (&lite, &game)] {
        let r = framewise_analysis::gate(base, cand, &framewise_analysis::GateConfig::default())
            .expect("the default paths name something");
        assert_eq!(
            r.verdict,
            framewise_analysis::Verdict::Incomparable,
            "{:?}",
            r.reasons
        );
        assert!(
            r.reasons
                .iter()
                .any(|w| w.starts_with("frame times differ in kind")),
            "{:?}",
            r.reasons
        );
    }
    // Two litecaps compare their frame.* as usual.
    let r = framewise_analysis::gate(&lite, &lite, &framewise_analysis::GateConfig::default())
        .expect("paths");
    assert_eq!(
        r.verdict,
        framewise_analysis::Verdict::Pass,
        "{:?}",
        r.reasons
    );
    // work.* alone compares across.
    let mut work = framewise_analysis::GateConfig::default();
    work.tolerances.clear();
    work.set("work.p50", 10.0).expect("a tolerance");
    let r = framewise_analysis::gate(&game, &lite, &work).expect("paths");
    assert_ne!(
        r.verdict,
        framewise_analysis::Verdict::Incomparable,
        "{:?}",
        r.reasons
    );
}

/// A v4 timeline with fewer frame boundaries than frames (a recorder attached late, a smaller
/// ring) places none of its spans or marks: that is said, as spans dropped, not left silent.
#[test]
fn a_short_timeline_says_its_spans_were_not_placed() {
    let mut lc = sample(4, 50, 1);
    if let Some(t) = lc.timeline.as_mut() {
        t.frame_starts_ms.truncate(10);
    }
    let c = litecap::import(&litecap::encode(&lc), &LoadOptions::default()).expect("valid");
    let dropped: Vec<_> = c
        .defects()
        .iter()
        .filter(|d| d.kind == framewise_analysis::DefectKind::DroppedSpans)
        .collect();
    assert_eq!(dropped.len(), 1, "{:?}", c.defects());
    assert_eq!(dropped[0].count, 51, "50 spans and 1 mark");
}

/// A timeline boundary that is no time (not finite) leaves its frame beginning where the frame
/// before it ended, on the timeline's clock, said as a defect; a damaged first boundary does
/// not move the origin to 0 (the second frame would begin seconds after the first).
#[test]
fn a_damaged_frame_boundary_is_estimated_on_the_timelines_clock() {
    let mut lc = sample(4, 20, 1);
    if let Some(t) = lc.timeline.as_mut() {
        t.frame_starts_ms[0] = f64::NAN;
        t.frame_starts_ms[7] = f64::NAN;
    }
    let c = litecap::import(&litecap::encode(&lc), &LoadOptions::default()).expect("valid");
    let begins = &c.frames().cpu_begin_ns;
    assert_eq!(begins.len(), 20);
    // Frame 1's boundary is the origin; frame 0 begins at 0 with it, frame 7 after frame 6.
    assert!(begins.windows(2).all(|w| w[0] <= w[1]), "{begins:?}");
    assert!(
        begins[1] < 100_000_000,
        "frame 1 within 100 ms of the origin: {begins:?}"
    );
    let estimated: Vec<_> = c
        .defects()
        .iter()
        .filter(|d| d.message.contains("frame boundaries are not finite"))
        .collect();
    assert_eq!(estimated.len(), 1, "{:?}", c.defects());
    assert_eq!(estimated[0].count, 2);
}

/// `diff` reports where `gate` decides, but a `frame.*` row between a `.litecap`'s work times
/// and another capture's periods is no change either: the diff says the kinds differ, and the
/// ranking (the inspector's comparison) does not judge those rows, where `work.*` it does.
#[test]
fn a_diff_of_a_litecap_and_periods_marks_frame_rows_incomparable() {
    let (lite, game) = lite_and_game();
    for (base, cand) in [(&game, &lite), (&lite, &game)] {
        let d = framewise_analysis::diff(base, cand);
        assert!(!d.frame_times_comparable);
        let frame = d
            .rows
            .iter()
            .find(|r| r.metric == "frame.p99")
            .expect("both have frame.p99");
        assert!(!d.row_comparable(frame));
        let work = d
            .rows
            .iter()
            .find(|r| r.metric == "work.p99")
            .expect("work");
        assert!(d.row_comparable(work));
        let ranked = framewise_analysis::significance::rank(&d, base, cand);
        let row = |m: &str| ranked.iter().find(|r| r.row.metric == m).expect(m);
        assert!(!row("frame.p99").coloured);
        assert_eq!(
            row("frame.p99").row.change,
            framewise_analysis::diff::Change::Same
        );
        assert!(row("frame.p99")
            .not_judged
            .as_deref()
            .is_some_and(|w| w.starts_with("frame times of different kinds")));
        assert!(row("work.p99")
            .not_judged
            .as_deref()
            .is_none_or(|w| !w.starts_with("frame times")));
    }
    assert!(framewise_analysis::diff(&lite, &lite).frame_times_comparable);
    assert!(framewise_analysis::diff(&game, &game).frame_times_comparable);
}

/// A v4 capture with phases takes its scopes' statistics from the phases; a timeline lane
/// that is no phase (`render` here, as lite-profiler's `physics`) adds its spans, one call
/// each, so `summarize` and `gate` see it as the timeline and flame graph do; a lane named as
/// a phase is not counted twice.
#[test]
fn a_timeline_lane_that_is_no_phase_has_scope_statistics() {
    use framewise_analysis::summary::MetricTable;
    let lc = sample(4, 30, 2);
    let t = MetricTable::of(&summarize(
        &litecap::import(&litecap::encode(&lc), &LoadOptions::default()).expect("valid"),
    ));
    assert_eq!(t.get("scope.render.calls"), Some(30.0));
    assert_eq!(t.get("scope.render.p50"), Some(7.0));
    // The phases are as they were: their own totals, one call a frame.
    assert_eq!(t.get("scope.phase_0.calls"), Some(30.0));
    assert_eq!(t.get("scope.phase_0.max"), Some(3.0));

    // A lane named as a phase: the phase's time alone.
    let mut same = sample(4, 30, 2);
    same.timeline.as_mut().expect("v4").spans[0].tag = "phase_0".into();
    let t = MetricTable::of(&summarize(
        &litecap::import(&litecap::encode(&same), &LoadOptions::default()).expect("valid"),
    ));
    assert_eq!(t.get("scope.phase_0.calls"), Some(30.0));
    assert_eq!(t.get("scope.phase_0.max"), Some(3.0));
    assert_eq!(t.get("scope.render.calls"), None);
}
