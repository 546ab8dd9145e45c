use framewise_analysis::model::TimingGrade;
use framewise_analysis::stats::FrameClass;
use framewise_analysis::{summarize, CaptureBuilder, FrameInput, MetricTable, SourceKind};

use crate::fixtures::{game, redacted, GameSpec, MS, PAUSED};

#[test]
fn frame_block_over_periods_excludes_paused_and_last() {
    let spec = GameSpec {
        hitches: false,
        ..GameSpec::default()
    };
    let s = summarize(&game(&spec));
    let paused = PAUSED.end - PAUSED.start;
    // Every non-paused frame but the last has a period.
    assert_eq!(s.frame.times.count, spec.frames - paused - 1);
    assert_eq!(s.capture.frames_paused, paused);
    assert_eq!(s.capture.frames_without_period, 1);
    // Periods are 14.0..14.6 ms: the 250 ms paused frames must not show.
    let max = s.frame.times.max.expect("frames");
    assert!((14.0..14.7).contains(&max), "max {max}");
    assert_eq!(s.frame.classifier.class, Some(FrameClass::Steady));
    assert_eq!(s.frame.classifier.jank_ratio, Some(0.0));
    // The classifier judges work (10 ms), every non-paused frame's, the last one's too.
    assert_eq!(
        s.frame.classifier.bins[3].count, s.work.times.count,
        "all in 8-16 ms"
    );
    // Work is update (3+2 nested) + render 5 = 10 ms exactly.
    assert_eq!(s.work.times.avg, Some(10.0));
    assert!(s.frame.p999_present());
}

trait P999 {
    fn p999_present(&self) -> bool;
}
impl P999 for framewise_analysis::stats::FrameBlock {
    fn p999_present(&self) -> bool {
        self.times.p999.is_some() && self.low_01pct_fps.is_some()
    }
}

#[test]
fn percentiles_null_with_reasons_below_their_counts() {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    let mut f = FrameInput::default();
    for i in 0..51u64 {
        f.clear();
        f.index = i;
        f.cpu_begin_ns = i * 10 * MS;
        f.cpu_end_ns = f.cpu_begin_ns + MS;
        b.push_frame(&f);
    }
    let s = summarize(&b.finish());
    assert_eq!(s.frame.times.count, 50);
    assert_eq!(s.frame.times.p50, Some(10.0));
    assert_eq!(s.frame.times.p95, Some(10.0));
    assert_eq!(s.frame.times.p99, None);
    assert_eq!(s.frame.times.p01, None);
    assert_eq!(s.frame.low_1pct_fps, None);
    assert_eq!(
        s.frame.null_reasons.get("p99").map(String::as_str),
        Some("needs at least 100 values (one beyond it), have 50")
    );
    assert!(s.frame.null_reasons["p999"].contains("1000"));
    assert_eq!(s.frame.fps, Some(100.0));
    // And the metric path says absent, not 0.
    assert_eq!(s.metric("frame.p99"), None);
    assert_eq!(s.metric("frame.p95"), Some(10.0));
}

#[test]
fn empty_capture_summarizes_to_nulls() {
    let s = summarize(&CaptureBuilder::new(SourceKind::Synthetic, false).finish());
    assert!(s.is_empty());
    assert_eq!(s.frame.times.avg, None);
    assert!(s.scopes.is_empty());
    let v = serde_json::to_value(&s).expect("serializes");
    assert_eq!(v["frame"]["avg"], serde_json::Value::Null);
    assert!(v["frame"]["null_reasons"]["avg"].is_string());
}

#[test]
fn scopes_are_per_frame_inclusive_totals() {
    let s = summarize(&game(&GameSpec {
        hitches: false,
        ..GameSpec::default()
    }));
    let update = s.scopes.get("update").expect("update ran");
    // update includes its child physics: 3 + 2 ms in every non-paused frame.
    assert_eq!(update.count, 1490);
    assert_eq!(update.avg, Some(5.0));
    assert_eq!(update.p95, Some(5.0));
    assert_eq!(update.self_ms, 1490.0 * 3.0);
    assert_eq!(update.calls, 1490);
    assert_eq!(update.sites, vec!["src/game.rs:10".to_owned()]);
    let physics = s.scopes.get("physics").expect("physics ran");
    assert_eq!(physics.avg, Some(2.0));
    // Largest total first.
    let order: Vec<&str> = s.scopes.iter().map(|(n, _)| n).collect();
    assert_eq!(
        order,
        vec!["render", "update", "jobs", "physics"],
        "ties by name"
    );
    // GPU passes, and the frame's GPU time feeds nothing in `frame`.
    assert_eq!(s.passes.get("main").and_then(|p| p.max), Some(5.0));
    assert_eq!(s.metric("pass.shadow.max"), Some(2.0));
}

#[test]
fn counters_are_exact_integers() {
    let s = summarize(&game(&GameSpec::default()));
    let d = s.counters.get("draw_calls").expect("recorded");
    assert_eq!(d.count, 1490);
    assert_eq!(s.metric("counter.draw_calls.sum"), Some(120.0 * 1490.0));
    assert_eq!(s.metric("counter.pipelines_created.max"), Some(3.0));
    let v = serde_json::to_value(&s).expect("serializes");
    assert!(
        v["counters"]["draw_calls"]["sum"].is_i64(),
        "sum stays an integer in JSON"
    );
    assert_eq!(v["counters"]["entities"]["kind"], "gauge");
}

#[test]
fn every_metric_path_resolves_to_the_json() {
    let s = summarize(&game(&GameSpec::default()));
    let table = MetricTable::of(&s);
    assert!(table.values.len() > 50);
    for path in [
        "frame.p99",
        "work.p95",
        "scope.render.p95",
        "pass.shadow.max",
        "counter.draw_calls.max",
        "frame.low_1pct_fps",
        "frame.jank_ratio",
    ] {
        assert!(table.get(path).is_some(), "{path} missing");
        assert_eq!(table.get(path), s.metric(path), "{path}");
    }
    // work has no fps: a work time is not a frame rate.
    assert_eq!(s.metric("work.fps"), None);
    assert_eq!(s.metric("scope.nope.p95"), None);
}

#[test]
fn grade_follows_the_adapter() {
    use framewise_analysis::model::AdapterKind;
    for (adapter, grade) in [
        (AdapterKind::Hardware, TimingGrade::Hardware),
        (AdapterKind::Software, TimingGrade::Software),
        (AdapterKind::Unknown, TimingGrade::Unknown),
    ] {
        let s = summarize(&game(&GameSpec {
            adapter,
            frames: 30,
            ..GameSpec::default()
        }));
        assert_eq!(s.grade.timing, grade);
    }
    // CPU-only with no adapter declared: hardware.
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    b.push_frame(&FrameInput::default());
    assert_eq!(summarize(&b.finish()).grade.timing, TimingGrade::Hardware);
}

#[test]
fn summary_json_round_trips() {
    let s = summarize(&game(&GameSpec {
        frames: 200,
        ..GameSpec::default()
    }));
    let text = serde_json::to_string(&s).expect("serializes");
    let back: framewise_analysis::Summary = serde_json::from_str(&text).expect("parses");
    let (a, b) = (back.metrics().values, s.metrics().values);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        // serde_json's default float parsing may differ in the last bit.
        assert!(
            (v - b[k]).abs() <= 1e-12 * v.abs().max(1.0),
            "{k}: {v} vs {}",
            b[k]
        );
    }
}

#[test]
fn summary_snapshot() {
    let s = summarize(&game(&GameSpec::default()));
    insta::assert_json_snapshot!("summary", redacted(&s));
}

#[test]
fn summary_only_load_gives_the_same_summary() {
    let full = summarize(&game(&GameSpec::default()));
    let lean_capture = game(&GameSpec {
        summary_only: true,
        ..GameSpec::default()
    });
    assert!(
        lean_capture.scope_aggs().all().is_empty(),
        "no per-frame aggregates kept"
    );
    assert!(lean_capture.summary_columns().is_some());
    let lean = summarize(&lean_capture);
    assert_eq!(MetricTable::of(&lean), MetricTable::of(&full));
    assert_eq!(
        lean.scopes.get("physics").map(|p| p.sites.clone()),
        full.scopes.get("physics").map(|p| p.sites.clone())
    );
}

#[test]
fn a_range_counts_the_spans_dropped_in_its_own_frames() {
    use framewise_analysis::model::DefectKind;
    use framewise_analysis::{load, summarize_with, LoadOptions, SummaryOptions};
    // sample-v2: 12 spans dropped, all in row 5.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../framewise-format/tests/data/sample-v2.sgpt");
    let c = load::open(&path, &LoadOptions::new()).expect("the sample loads");
    assert_eq!(c.dropped_spans(), 12);
    assert_eq!(c.dropped_spans_in(5), 12);
    let dropped = |s: &framewise_analysis::Summary| {
        s.defects
            .iter()
            .filter(|d| d.kind == DefectKind::DroppedSpans)
            .map(|d| (d.count, d.message.clone()))
            .collect::<Vec<_>>()
    };
    let whole = summarize(&c);
    assert_eq!(whole.capture.dropped_spans, 12);
    assert_eq!(dropped(&whole).len(), 1);

    // Rows 0..5 hold none of them: no dropped span, no such defect.
    let before = summarize_with(&c, &SummaryOptions::new().with_rows(0..5));
    assert_eq!(before.capture.frames, 5);
    assert_eq!(before.capture.dropped_spans, 0);
    assert_eq!(dropped(&before), []);
    // Rows 5..7 hold all of them, said for those rows.
    let with = summarize_with(&c, &SummaryOptions::new().with_rows(5..7));
    assert_eq!(with.capture.dropped_spans, 12);
    let said = dropped(&with);
    assert_eq!(said.len(), 1);
    assert_eq!(said[0].0, 12);
    assert!(said[0].1.contains("rows 5..7"), "{}", said[0].1);
    // The whole range is the whole summary.
    assert_eq!(
        summarize_with(&c, &SummaryOptions::new().with_rows(0..c.frame_count())),
        whole
    );
    assert_eq!(c.dropped_spans_in_rows(0..5), (0, 0));
    assert_eq!(c.dropped_spans_in_rows(4..99), (12, 1));
}
