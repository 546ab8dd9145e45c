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
/// ring) places none of its spans or marks: that is said, as spans dropped and marks lost,
/// not left silent.
#[test]
fn a_short_timeline_says_its_spans_were_not_placed() {
    let mut lc = sample(4, 50, 1);
    if let Some(t) = lc.timeline.as_mut() {
        t.frame_starts_ms.truncate(10);
    }
    let c = litecap::import(&litecap::encode(&lc), &LoadOptions::default()).expect("valid");
    let dropped = defects_of(&c, framewise_analysis::DefectKind::DroppedSpans);
    assert_eq!(dropped.len(), 1, "{:?}", c.defects());
    assert_eq!(dropped[0].count, 50, "50 spans");
    assert!(
        dropped[0]
            .message
            .contains("10 frame boundaries for 50 frames"),
        "{}",
        dropped[0].message
    );
    assert_eq!(c.dropped_spans(), 50);
    let marks = defects_of(&c, framewise_analysis::DefectKind::Importer);
    assert_eq!(marks.len(), 1, "{:?}", c.defects());
    assert_eq!(marks[0].count, 1, "1 mark");
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
    // Frame 0 runs back to back up to frame 1's boundary; frame 7 begins after frame 6.
    assert!(begins.windows(2).all(|w| w[0] < w[1]), "{begins:?}");
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

/// The defects of `kind`.
fn defects_of(
    c: &framewise_analysis::Capture,
    kind: framewise_analysis::DefectKind,
) -> Vec<&framewise_analysis::model::Defect> {
    c.defects().iter().filter(|d| d.kind == kind).collect()
}

/// A gate of `cand` against `base` on `tolerances` alone.
fn gate_on(
    base: &Litecap,
    cand: &Litecap,
    tolerances: &[(&str, f64)],
) -> framewise_analysis::GateResult {
    let summary = |lc: &Litecap| {
        summarize(&litecap::import(&litecap::encode(lc), &LoadOptions::default()).expect("reads"))
    };
    let mut cfg = framewise_analysis::GateConfig::empty();
    for &(metric, tolerance) in tolerances {
        cfg.set(metric, tolerance).expect("a tolerance");
    }
    framewise_analysis::gate(&summary(base), &summary(cand), &cfg).expect("paths name something")
}

/// A timeline span lost on import (ending before it began, not finite, before the first
/// frame) is a dropped span, as the model's `dropped-spans` says: counted in the capture's
/// dropped spans, and a gate on the scope it belonged to is incomplete, never a pass on the
/// spans left (it passed an exact gate on `total` and `calls`).
#[test]
fn a_span_lost_on_import_is_a_dropped_span() {
    let clean = sample(4, 100, 0);
    let mut lost = clean.clone();
    let t = lost.timeline.as_mut().expect("v4");
    let first = t.frame_starts_ms[0];
    let lane = &mut t.spans[0];
    std::mem::swap(&mut lane.t0_ms[5], &mut lane.t1_ms[5]);
    lane.t0_ms[20] = f64::NAN;
    lane.t1_ms[30] = f64::INFINITY;
    lane.t0_ms[40] = first - 50.0;
    let c = litecap::import(&litecap::encode(&lost), &LoadOptions::default()).expect("tolerated");
    let dropped = defects_of(&c, framewise_analysis::DefectKind::DroppedSpans);
    assert_eq!(dropped.len(), 1, "{:?}", c.defects());
    assert_eq!(dropped[0].count, 4);
    assert!(
        dropped[0]
            .message
            .contains("3 not finite or ending before they began")
            && dropped[0]
                .message
                .contains("1 before the first usable frame boundary"),
        "{}",
        dropped[0].message
    );
    assert_eq!(c.dropped_spans(), 4);
    assert_eq!(summarize(&c).capture.dropped_spans, 4);
    let r = gate_on(
        &clean,
        &lost,
        &[("scope.render.total", 0.0), ("scope.render.calls", 0.0)],
    );
    assert_eq!(
        r.verdict,
        framewise_analysis::Verdict::Inconclusive,
        "{:?}",
        r.reasons
    );
    assert!(
        r.checks
            .iter()
            .all(|c| c.status == framewise_analysis::gate::CheckStatus::Incomplete),
        "{:?}",
        r.checks
    );
}

/// A frame boundary that is no time leaves the frame before it without an end and its own
/// frame without a begin: what lies between the usable boundaries around it is lost (dropped
/// spans), never given to the frame before it (which took every later span and mark: a 708 ms
/// scope in a 13.5 ms frame, and a gate passed a candidate whose every span was 30% longer).
/// A boundary that steps back in time is no time either.
#[test]
fn a_boundary_that_is_no_time_merges_no_frames() {
    let clean = sample(4, 100, 0);
    let mut slower = clean.clone();
    for lane in &mut slower.timeline.as_mut().expect("v4").spans {
        for (a, z) in lane.t0_ms.iter().zip(lane.t1_ms.iter_mut()) {
            *z = a + (*z - a) * 1.3;
        }
    }
    let starts = clean.timeline.as_ref().expect("v4").frame_starts_ms.clone();
    // What is damaged (boundary, value), and how many spans are lost.
    type Case = (&'static str, Vec<(usize, f64)>, usize);
    let cases: Vec<Case> = vec![
        ("NaN", vec![(10, f64::NAN)], 2),
        ("infinite", vec![(10, f64::INFINITY)], 2),
        // Out of order with the two around it, which are in order: that one is damaged.
        ("before the first", vec![(10, -1.0)], 2),
        ("far later", vec![(10, 1e300)], 2),
        // Back in time by less than a frame: it is too early or the one before it too late,
        // no telling which, so neither is used; so with two swapped.
        ("back in time", vec![(30, starts[29] - 5.0)], 3),
        ("swapped", vec![(31, starts[32]), (32, starts[31])], 3),
        // Back past the one before the last: that one is damaged.
        ("back past two", vec![(30, starts[28] - 5.0)], 2),
    ];
    for (what, changes, lost) in cases {
        let mut damaged = clean.clone();
        for (at, value) in changes {
            damaged.timeline.as_mut().expect("v4").frame_starts_ms[at] = value;
        }
        let c = litecap::import(
            &litecap::encode(&damaged),
            &LoadOptions::default().with_spans(true),
        )
        .expect("tolerated");
        let spans = c.spans().expect("kept");
        for row in 0..c.frame_count() {
            assert!(
                spans.cpu.frame(row).len() <= 1,
                "{what}: frame {row} holds {} spans",
                spans.cpu.frame(row).len()
            );
        }
        assert_eq!(spans.cpu.all().len(), 100 - lost, "{what}");
        assert_eq!(c.dropped_spans(), lost as u64, "{what}");
        let t = framewise_analysis::summary::MetricTable::of(&summarize(&c));
        assert_eq!(t.get("scope.render.max"), Some(7.0), "{what}");
        // Against a candidate whose every span is 30% longer, or one as long: no pass on
        // what is left.
        for cand in [&slower, &clean] {
            let r = gate_on(&damaged, cand, &[("scope.*.avg", 0.1)]);
            assert_eq!(
                r.verdict,
                framewise_analysis::Verdict::Inconclusive,
                "{what}: {:?}",
                r.reasons
            );
        }
    }
    // The undamaged base fails the slower candidate.
    let r = gate_on(&clean, &slower, &[("scope.*.avg", 0.1)]);
    assert_eq!(
        r.verdict,
        framewise_analysis::Verdict::Fail,
        "{:?}",
        r.reasons
    );
}

/// A first frame boundary that is no time: frame 0 runs up to frame 1's boundary (it began
/// with frame 1, both at 0), and its span and mark, which no boundary places, are lost and
/// said (frame 0's spans went as an importer defect, its mark silently).
#[test]
fn a_first_boundary_that_is_no_time_keeps_frames_apart_and_says_what_it_lost() {
    let mut lc = sample(4, 20, 0);
    let t = lc.timeline.as_mut().expect("v4");
    let first = t.frame_starts_ms[0];
    t.instants[0].times_ms.insert(0, first + 3.0);
    t.frame_starts_ms[0] = f64::NAN;
    let c = litecap::import(
        &litecap::encode(&lc),
        &LoadOptions::default().with_spans(true),
    )
    .expect("tolerated");
    let begins = &c.frames().cpu_begin_ns;
    assert!(begins.windows(2).all(|w| w[0] < w[1]), "{begins:?}");
    assert_eq!(
        begins[1] - begins[0],
        16_000_000,
        "frame 0 runs back to back up to frame 1"
    );
    assert!(
        defects_of(&c, framewise_analysis::DefectKind::FrameOrder).is_empty(),
        "{:?}",
        c.defects()
    );
    assert_eq!(c.dropped_spans(), 1, "{:?}", c.defects());
    assert_eq!(c.spans().expect("kept").cpu.all().len(), 19);
    assert_eq!(c.marks().len(), 1, "the one mark a frame holds");
    let marks: Vec<_> = c
        .defects()
        .iter()
        .filter(|d| d.message.contains("timeline marks were lost on import"))
        .collect();
    assert_eq!(marks.len(), 1, "{:?}", c.defects());
    assert_eq!(marks[0].count, 1);
}

/// A timeline mark before the first frame, or not finite, is placed in no frame: a defect
/// says so (they were dropped silently).
#[test]
fn marks_lost_on_import_are_said() {
    let mut lc = sample(4, 20, 0);
    let t = lc.timeline.as_mut().expect("v4");
    let starts = t.frame_starts_ms.clone();
    t.instants[0].times_ms = vec![starts[0] - 10.0, f64::NAN, starts[3] + 1.0];
    let c = litecap::import(&litecap::encode(&lc), &LoadOptions::default()).expect("tolerated");
    assert_eq!(c.marks().len(), 1);
    assert_eq!(c.marks()[0].frame_row, 3);
    let lost = defects_of(&c, framewise_analysis::DefectKind::Importer);
    assert_eq!(lost.len(), 1, "{:?}", c.defects());
    assert_eq!(lost[0].count, 2);
    assert!(
        lost[0]
            .message
            .starts_with("2 timeline marks were lost on import")
            && lost[0].message.contains("1 not finite")
            && lost[0]
                .message
                .contains("1 before the first usable frame boundary"),
        "{}",
        lost[0].message
    );
}

/// A counter counts what a frame did (lite-profiler's: draw calls, floats uploaded): a
/// value below 0 is no measurement, a defect that loses its frame's value, so an exact gate
/// on the counter is inconclusive (it passed, the -5000 summed in).
#[test]
fn a_negative_counter_value_is_no_measurement() {
    let ok = sample(3, 100, 1);
    let mut neg = ok.clone();
    neg.counters[0][7] = -5000.0;
    let c = litecap::import(&litecap::encode(&neg), &LoadOptions::default()).expect("tolerated");
    let lost = lost_frames(&c);
    assert_eq!(lost.len(), 1, "{:?}", c.defects());
    assert_eq!(lost[0].count, 1);
    let r = gate_on(
        &ok,
        &neg,
        &[
            ("counter.drawCalls.sum", 0.0),
            ("counter.drawCalls.min", 0.0),
        ],
    );
    assert_eq!(
        r.verdict,
        framewise_analysis::Verdict::Inconclusive,
        "{:?}",
        r.reasons
    );
    // -0 is 0.
    let mut zero = ok.clone();
    zero.counters[0][7] = -0.0;
    let c = litecap::import(&litecap::encode(&zero), &LoadOptions::default()).expect("valid");
    assert!(c.defects().is_empty(), "{:?}", c.defects());
}

/// The header and the lengths in a `.litecap` size it whole, so a reader knows where it
/// ends without reading on; a cut says how many bytes sizing it needs.
#[test]
fn a_litecap_is_sized_by_its_header() {
    use litecap::SizedLen;
    for v in 1..=4u8 {
        let bytes = litecap::encode(&sample(v, 16, 2));
        let len = bytes.len() as u64;
        assert_eq!(litecap::sized_len(&bytes), SizedLen::Whole(len), "v{v}");
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0; 100]);
        assert_eq!(litecap::sized_len(&longer), SizedLen::Whole(len), "v{v}");
        for cut in 0..bytes.len() {
            match litecap::sized_len(&bytes[..cut]) {
                SizedLen::Needs(n) => assert!(
                    n > cut as u64 && n <= len,
                    "v{v} cut at {cut}: needs {n} of {len}"
                ),
                SizedLen::Whole(n) => assert_eq!(n, len, "v{v} cut at {cut}"),
                other => panic!("v{v} cut at {cut}: {other:?}"),
            }
        }
    }
    assert_eq!(litecap::sized_len(b"LCAP\x09"), SizedLen::Refused);
    let mut too_many = b"LCAP\x04".to_vec();
    too_many.extend_from_slice(&((1u32 << 20) + 1).to_le_bytes());
    assert_eq!(litecap::sized_len(&too_many), SizedLen::Refused);
    // `LCAP`, v2, then zeros: no frame, no phase, no meta.
    assert_eq!(
        litecap::sized_len(&[b"LCAP\x02", &[0u8; 64][..]].concat()),
        SizedLen::Whole(14)
    );
}

/// camelCase and snake_case are one name both ways: `counter.draw_calls.sum` gates a
/// `.litecap`'s `drawCalls` (it was refused as in neither capture), as
/// `counter.drawCalls.sum` gates an `.sgpt`'s `draw_calls`.
#[test]
fn a_snake_case_path_names_a_camel_case_counter() {
    let lc = sample(3, 100, 1);
    let mut more = lc.clone();
    more.counters[0][3] += 1.0;
    for path in ["counter.draw_calls.sum", "counter.drawCalls.sum"] {
        let r = gate_on(&lc, &lc, &[(path, 0.0)]);
        assert_eq!(r.verdict, framewise_analysis::Verdict::Pass, "{path}");
        assert_eq!(r.checks.len(), 1);
        assert_eq!(r.checks[0].metric, "counter.drawCalls.sum");
        let r = gate_on(&lc, &more, &[(path, 0.0)]);
        assert_eq!(r.verdict, framewise_analysis::Verdict::Fail, "{path}");
    }
    let r = gate_on(&lc, &lc, &[("counter.draw_calls.sum", 0.0)]);
    assert_eq!(
        r.checks[0].configured.as_deref(),
        Some("counter.draw_calls.sum")
    );
}
