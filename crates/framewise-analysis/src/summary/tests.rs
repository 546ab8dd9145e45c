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
    // Past the integers f64 holds, scientific: never a 309-digit number in a gate's reason.
    assert_eq!(format_metric("counter.bytes.max", 1e308), "1e308");
    assert_eq!(
        format_metric("counter.bytes.avg", -1.7976e308),
        "-1.798e308"
    );
    assert_eq!(
        format_metric("counter.bytes.max", 8.0e15),
        "8000000000000000"
    );
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

/// A capture of many scopes, names shared between call sites (some without a site), on two
/// threads, nested, some frames paused, drawn from `seed`; summary-only or not.
fn scrambled(seed: u64, summary_only: bool) -> Capture {
    use crate::build::{CaptureBuilder, FrameInput, LaneInput, SpanInput};
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n.max(1)
    };
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    if summary_only {
        b = b.summary_only();
    }
    let threads = [b.thread("main"), b.thread("worker")];
    let mut scopes = Vec::new();
    for i in 0..60u64 {
        let name = format!("s{}", next(25));
        let file = match next(3) {
            0 => String::new(),
            k => format!("src/f{k}.rs"),
        };
        scopes.push(b.scope(&name, &file, u32::try_from(i % 7).unwrap_or(0)));
    }
    let mut f = FrameInput::default();
    for i in 0..40u64 {
        f.clear();
        f.index = i;
        f.paused = next(6) == 0;
        f.cpu_begin_ns = i * 16_000_000;
        f.cpu_end_ns = f.cpu_begin_ns + 8_000_000;
        for &thread in &threads {
            let mut spans = Vec::new();
            let mut at = f.cpu_begin_ns;
            for _ in 0..next(12) {
                let len = 1_000 + next(400_000);
                let scope = scopes[next(scopes.len() as u64) as usize];
                spans.push(SpanInput {
                    scope,
                    depth: 0,
                    start_ns: at,
                    end_ns: at + len,
                });
                if next(2) == 0 {
                    spans.push(SpanInput {
                        scope: scopes[next(scopes.len() as u64) as usize],
                        depth: 1,
                        start_ns: at + 1,
                        end_ns: at + 1 + next(len - 1),
                    });
                }
                at += len + next(1_000);
            }
            f.lanes.push(LaneInput {
                thread,
                spans,
                dropped_spans: 0,
            });
        }
        b.push_frame(&f);
    }
    b.finish()
}

/// The scope block as it was first written: every name's frames and sites found by a search
/// over every scope and every name touched so far (quadratic, but plainly right).
fn naive_scopes(capture: &Capture) -> Vec<(String, crate::stats::ScopeStats)> {
    let mut names: Vec<String> = Vec::new();
    for s in capture.scopes() {
        if !names.contains(&s.name) {
            names.push(s.name.clone());
        }
    }
    let mut out = Vec::new();
    for name in names {
        let ids: Vec<u32> = (0..capture.scopes().len())
            .filter(|&id| capture.scopes()[id].name == name)
            .map(|id| u32::try_from(id).unwrap_or(u32::MAX))
            .collect();
        let (mut totals, mut self_ns, mut calls) = (Vec::new(), 0u64, 0u64);
        for row in 0..capture.frames().len() {
            if capture.frames().paused[row] {
                continue;
            }
            let mut total = None;
            for a in capture.scope_aggs().frame(row) {
                if ids.contains(&a.id) {
                    *total.get_or_insert(0u64) += a.total_ns;
                    self_ns += a.self_ns;
                    calls += u64::from(a.calls);
                }
            }
            totals.extend(total);
        }
        if totals.is_empty() {
            continue;
        }
        let mut sites: Vec<String> = capture
            .scopes()
            .iter()
            .filter(|s| s.name == name)
            .filter_map(|s| s.site())
            .collect();
        sites.sort();
        sites.dedup();
        let stats = crate::stats::ScopeStats::of_totals_ns(totals, self_ns, calls, sites);
        out.push((name, stats));
    }
    out.sort_by(|a, b| b.1.total.total_cmp(&a.1.total).then_with(|| a.0.cmp(&b.0)));
    out
}

#[test]
fn scopes_grouped_by_name_are_what_a_search_over_every_scope_finds() {
    for seed in 1..=12 {
        let full = scrambled(seed, false);
        let want = naive_scopes(&full);
        assert!(want.len() > 5, "seed {seed}: {} names ran", want.len());
        assert!(
            want.iter().any(|(_, s)| s.sites.len() > 1),
            "seed {seed}: a name at several sites"
        );
        assert_eq!(
            summarize(&full).scopes.0,
            want,
            "seed {seed}, per-frame aggregates"
        );
        // A summary-only load groups its columns by name as it loads, and finds each name's
        // sites in the same way.
        let lean = scrambled(seed, true);
        assert!(lean.summary_columns().is_some());
        assert_eq!(summarize(&lean).scopes.0, want, "seed {seed}, summary-only");
    }
}
