use super::*;
use crate::model::{Capture, SourceKind};

/// Ten frames 16 ms apart; `work` runs 1 ms in frames 0–4 and 3 ms in frames 5–9.
fn ten_frames(summary_only: bool) -> Capture {
    use crate::build::{CaptureBuilder, FrameInput, LaneInput, SpanInput};
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    if summary_only {
        b = b.summary_only();
    }
    let work = b.scope("work", "w.rs", 1);
    let thread = b.thread("main");
    let mut f = FrameInput::default();
    for i in 0..10u64 {
        f.clear();
        f.index = i;
        f.cpu_begin_ns = i * 16_000_000;
        f.cpu_end_ns = f.cpu_begin_ns + 5_000_000;
        let len = if i < 5 { 1_000_000 } else { 3_000_000 };
        f.lanes.push(LaneInput {
            thread,
            spans: vec![SpanInput {
                scope: work,
                depth: 0,
                start_ns: f.cpu_begin_ns,
                end_ns: f.cpu_begin_ns + len,
            }],
            dropped_spans: 0,
        });
        b.push_frame(&f);
    }
    b.finish()
}

#[test]
fn a_row_range_summarizes_only_its_frames() {
    let c = ten_frames(false);
    let all = summarize(&c);
    assert_eq!(all.scopes.get("work").map(|s| s.calls), Some(10));
    let late = summarize_with(&c, &SummaryOptions::new().with_rows(5..10));
    assert_eq!(late.capture.frames, 5);
    // Row 9 is the last frame: no period.
    assert_eq!(late.frame.times.count, 4);
    assert_eq!(late.capture.frames_without_period, 1);
    let w = late.scopes.get("work").expect("work ran");
    assert_eq!((w.calls, w.min, w.max), (5, Some(3.0), Some(3.0)));
    let early = summarize_with(&c, &SummaryOptions::new().with_rows(0..5));
    assert_eq!(early.frame.times.count, 5, "row 4 keeps its period");
    assert_eq!(early.scopes.get("work").and_then(|s| s.max), Some(1.0));
    // The whole range is the whole summary; a range past the end is cut.
    assert_eq!(
        summarize_with(&c, &SummaryOptions::new().with_rows(0..10)),
        all
    );
    assert_eq!(
        summarize_with(&c, &SummaryOptions::new().with_rows(8..99))
            .capture
            .frames,
        2
    );
    assert_eq!(
        summarize_with(&c, &SummaryOptions::new().with_rows(50..60))
            .capture
            .frames,
        0
    );
}

#[test]
fn a_partial_range_of_a_summary_only_load_says_what_it_left_out() {
    let c = ten_frames(true);
    assert_eq!(summarize(&c), summarize(&ten_frames(false)));
    let part = summarize_with(&c, &SummaryOptions::new().with_rows(2..4));
    assert!(part.scopes.is_empty());
    assert!(
        part.notes.iter().any(|n| n.contains("summary-only")),
        "{:?}",
        part.notes
    );
    assert_eq!(part.frame.times.count, 2);
}

#[test]
fn paths_split_on_first_and_last_dot() {
    assert_eq!(
        parse_metric_path("scope.render.shadow.p95"),
        Some(MetricPath {
            block: "scope",
            name: Some("render.shadow"),
            stat: "p95"
        })
    );
    assert_eq!(
        parse_metric_path("frame.p99"),
        Some(MetricPath {
            block: "frame",
            name: None,
            stat: "p99"
        })
    );
    assert_eq!(parse_metric_path("frame"), None);
    assert_eq!(parse_metric_path("scope.p95"), None);
    assert_eq!(parse_metric_path("nope.x.y"), None);
}

#[test]
fn known_statistics_are_the_blocks_numbers() {
    let frame = known_stats("frame");
    for stat in [
        "avg",
        "p99",
        "p999",
        "fps",
        "low_1pct_fps",
        "jank_ratio",
        "count",
    ] {
        assert!(frame.iter().any(|s| s == stat), "{stat} in {frame:?}");
    }
    assert!(!frame
        .iter()
        .any(|s| s == "p98" || s == "class" || s == "bins"));
    assert!(known_stats("counter").iter().any(|s| s == "last"));
    assert!(!known_stats("counter").iter().any(|s| s == "kind"));
    assert!(known_stats("scope").iter().any(|s| s == "self"));
    assert!(known_stats("nope").is_empty());
}

#[test]
fn direction_table() {
    assert_eq!(direction("frame.fps"), Direction::HigherIsBetter);
    assert_eq!(direction("frame.low_1pct_fps"), Direction::HigherIsBetter);
    assert_eq!(direction("frame.low_01pct_fps"), Direction::HigherIsBetter);
    assert_eq!(direction("frame.p99"), Direction::LowerIsBetter);
    assert_eq!(
        direction("counter.draw_calls.max"),
        Direction::LowerIsBetter
    );
}

#[test]
fn units_and_precision() {
    assert_eq!(format_metric("frame.avg", 12.042976588628763), "12.04 ms");
    assert_eq!(format_metric("scope.tiny.p95", 0.0123), "0.012 ms");
    assert_eq!(format_metric("frame.fps", 59.83), "59.8 fps");
    assert_eq!(format_metric("frame.jank_ratio", 0.05), "0.0500");
    assert_eq!(format_metric("frame.count", 299.0), "299 frames");
    assert_eq!(format_metric("scope.render.calls", 12.0), "12 calls");
    assert_eq!(format_metric("counter.draw_calls.max", 121.0), "121");
    assert_eq!(format_metric("counter.draw_calls.avg", 120.5), "120.5");
    assert_eq!(
        format_metric("counter.draw_calls.count", 300.0),
        "300 frames"
    );
    assert_eq!(MetricUnit::of("scope.a.b.calls").name(), "calls");
}

#[test]
fn named_map_keeps_order_through_json() {
    let m = NamedMap(vec![("b".to_owned(), 1), ("a".to_owned(), 2)]);
    let s = serde_json::to_string(&m).expect("serializes");
    assert_eq!(s, r#"{"b":1,"a":2}"#);
    let back: NamedMap<i32> = serde_json::from_str(&s).expect("parses");
    assert_eq!(back, m);
}

/// Ten frames with a sum counter (`draws`: 10 a frame) and a gauge (`entities`: a level
/// rising 100, 200, …, 1000), summary-only or not.
fn counted_frames(summary_only: bool) -> Capture {
    use crate::build::{CaptureBuilder, FrameInput};
    use crate::model::{CounterKind, Numeric};
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    if summary_only {
        b = b.summary_only();
    }
    let draws = b.counter("draws", CounterKind::Sum, Numeric::Integer);
    let entities = b.counter("entities", CounterKind::Gauge, Numeric::Integer);
    let mut f = FrameInput::default();
    for i in 0..10u64 {
        f.clear();
        f.index = i;
        f.cpu_begin_ns = i * 16_000_000;
        f.cpu_end_ns = f.cpu_begin_ns + 1_000_000;
        f.counters = vec![(draws, 10), (entities, 100 * (i as i64 + 1))];
        b.push_frame(&f);
    }
    b.finish()
}

#[test]
fn a_gauge_is_read_by_its_level_and_never_summed() {
    use crate::stats::{Num, GAUGE_HAS_NO_SUM};
    for summary_only in [false, true] {
        let s = summarize(&counted_frames(summary_only));
        // A sum counter keeps its total and its per-frame figures.
        let draws = s.counters.get("draws").expect("draws");
        assert_eq!(draws.sum, Some(Num::Int(100)));
        assert_eq!((draws.avg, draws.p50), (Some(10.0), Some(10.0)));
        // A gauge's sum over frames (5500 here) means nothing: null, with its reason; its
        // level is what it reports.
        let entities = s.counters.get("entities").expect("entities");
        assert_eq!(entities.sum, None, "summary_only {summary_only}");
        assert_eq!(
            entities.null_reasons.get("sum").map(String::as_str),
            Some(GAUGE_HAS_NO_SUM)
        );
        assert_eq!(entities.avg, Some(550.0));
        assert_eq!(entities.p50, Some(550.0));
        assert_eq!(entities.max, Some(Num::Int(1000)));
        assert_eq!(entities.last, Some(Num::Int(1000)));
        // So no metric path, hence no `diff` row and no `gate` check, reads a gauge's sum.
        assert_eq!(s.metric("counter.entities.sum"), None);
        assert_eq!(s.metric("counter.draws.sum"), Some(100.0));
        assert_eq!(s.metric("counter.entities.p50"), Some(550.0));
        let d = crate::diff(&s, &s);
        assert!(d.rows.iter().all(|r| r.metric != "counter.entities.sum"));
        assert!(d.rows.iter().any(|r| r.metric == "counter.draws.sum"));
    }
    assert!(known_stats("counter").iter().any(|st| st == "p50"));
}
