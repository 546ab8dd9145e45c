use super::*;
use crate::build::{CaptureBuilder, FrameInput, LaneInput, SpanInput};
use crate::model::{CounterKind, Numeric, SourceKind};
use crate::{diff, summarize};

const MS: u64 = 1_000_000;

/// `frames` frames of 16 ms (± a little), `render` 4 ms a frame, `physics` `physics_ms`
/// (± a little), a `draw_calls` counter of 100 a frame; `fog` only when `fog`.
fn run(frames: u64, physics_ms: u64, fog: bool) -> Summary {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    let main = b.thread("main");
    let render = b.scope("render", "", 0);
    let physics = b.scope("physics", "", 0);
    let fog_scope = b.scope("fog", "", 0);
    let draws = b.counter("draw_calls", CounterKind::Sum, Numeric::Integer);
    let mut f = FrameInput::default();
    let mut begin = 0;
    for i in 0..frames {
        f.clear();
        f.index = i;
        f.cpu_begin_ns = begin;
        let jitter = (i % 7) * MS / 10;
        let p = physics_ms * MS + jitter;
        f.cpu_end_ns = begin + 4 * MS + p;
        let mut spans = vec![
            SpanInput {
                scope: render,
                depth: 0,
                start_ns: begin,
                end_ns: begin + 4 * MS,
            },
            SpanInput {
                scope: physics,
                depth: 0,
                start_ns: begin + 4 * MS,
                end_ns: begin + 4 * MS + p,
            },
        ];
        if fog {
            spans.push(SpanInput {
                scope: fog_scope,
                depth: 0,
                start_ns: begin,
                end_ns: begin + MS,
            });
        }
        f.lanes.push(LaneInput {
            thread: main,
            spans,
            dropped_spans: 0,
        });
        f.counters.push((draws, 100));
        b.push_frame(&f);
        begin += 16 * MS + jitter;
    }
    summarize(&b.finish())
}

fn row<'a>(rows: &'a [RankedRow], metric: &str) -> &'a RankedRow {
    rows.iter()
        .find(|r| r.row.metric == metric)
        .unwrap_or_else(|| panic!("no {metric}"))
}

#[test]
fn totals_of_runs_of_different_lengths_are_judged_per_frame() {
    let (base, cand) = (run(100, 3, true), run(150, 3, true));
    let rows = rank(&diff(&base, &cand), &base, &cand);
    for metric in [
        "scope.render.count",
        "scope.render.calls",
        "scope.render.total",
        "counter.draw_calls.sum",
        "counter.draw_calls.count",
        "frame.count",
    ] {
        let r = row(&rows, metric);
        assert!(
            r.row.delta.is_some_and(|d| d > 0.0),
            "{metric} grew with the run"
        );
        assert_eq!(
            (r.row.change, r.coloured),
            (Change::Same, false),
            "{metric}"
        );
        assert!(
            r.not_judged
                .as_deref()
                .is_some_and(|w| w.contains("100 and 150")),
            "{metric}: {:?}",
            r.not_judged
        );
        assert!(
            r.per_frame_pct
                .is_some_and(|p| p.abs() < RUN_LENGTH_TOLERANCE_PCT),
            "{metric}"
        );
    }
    // Not a total: judged as usual (equal per-frame values stay unchanged).
    assert_eq!(row(&rows, "scope.render.p50").row.change, Change::Same);
}

/// A side that judged no frame (an empty capture) has no per-frame value: losing every frame
/// is not an improvement of its totals, it is not judged at all.
#[test]
fn totals_against_a_side_with_no_frame_are_not_judged() {
    for (base, cand, side) in [
        (run(100, 3, true), run(0, 3, true), "the candidate"),
        (run(0, 3, true), run(100, 3, true), "the base"),
    ] {
        let rows = rank(&diff(&base, &cand), &base, &cand);
        let mut totals = 0;
        for r in rows
            .iter()
            .filter(|r| scales_with_run_length(&r.row.metric))
        {
            if r.row.delta.is_none_or(|d| d == 0.0) {
                continue;
            }
            totals += 1;
            assert_eq!(
                (r.row.change, r.coloured, r.significance),
                (Change::Same, false, None),
                "{}",
                r.row.metric
            );
            assert!(
                r.not_judged
                    .as_deref()
                    .is_some_and(|w| w.contains(&format!("{side} judged no frame"))),
                "{}: {:?}",
                r.row.metric,
                r.not_judged
            );
        }
        assert!(totals > 0, "frame.count at least differs");
    }
}

#[test]
fn a_total_that_grew_per_frame_too_is_judged_on_its_value_per_frame() {
    let (base, cand) = (run(100, 3, true), run(150, 6, true));
    let rows = rank(&diff(&base, &cand), &base, &cand);
    let total = row(&rows, "scope.physics.total");
    assert_eq!(
        (total.row.change, total.coloured, total.basis),
        (Change::Worse, true, Basis::PerFrame)
    );
    assert!(
        total.per_frame_pct.is_some_and(|p| p > 50.0),
        "{:?}",
        total.per_frame_pct
    );
}

#[test]
fn judged_changes_come_first_by_significance_then_the_rest() {
    let (base, cand) = (run(200, 3, true), run(200, 6, false));
    let rows = rank(&diff(&base, &cand), &base, &cand);
    let p50 = row(&rows, "scope.physics.p50");
    assert_eq!((p50.basis, p50.coloured), (Basis::Spread, true));
    assert!(p50.spread.is_some_and(|s| s > 0.0) && p50.significance.is_some_and(|s| s > 1.0));
    let groups: Vec<u8> = rows.iter().map(group).collect();
    assert!(groups.windows(2).all(|w| w[0] <= w[1]), "{groups:?}");
    let judged: Vec<f64> = rows
        .iter()
        .filter(|r| group(r) == 0)
        .map(|r| r.significance.unwrap_or(0.0))
        .collect();
    assert!(judged.windows(2).all(|w| w[0] >= w[1]), "{judged:?}");
    assert_eq!(row(&rows, "scope.fog.p50").row.change, Change::OnlyBase);
    assert_eq!(group(row(&rows, "scope.fog.p50")), 2);
    assert_eq!(group(row(&rows, "scope.render.p50")), 3);
    assert_eq!(rows[0].row.change, Change::Worse);
}

#[test]
fn run_length_totals_are_named() {
    for path in [
        "frame.count",
        "scope.a.calls",
        "scope.a.self",
        "pass.b.total",
        "counter.c.sum",
    ] {
        assert!(scales_with_run_length(path), "{path}");
    }
    for path in ["frame.avg", "scope.a.p95", "counter.c.max", "frame.fps"] {
        assert!(!scales_with_run_length(path), "{path}");
    }
}
