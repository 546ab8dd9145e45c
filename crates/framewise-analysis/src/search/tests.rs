use super::*;
use crate::build::{CaptureBuilder, FrameInput, GpuPassInput, LaneInput, MarkInput, SpanInput};
use crate::load::FrameSource;
use crate::model::{CounterKind, Numeric, SourceKind};

const MS: u64 = 1_000_000;

/// Five frames, periods 16 ms except frame 3 (40 ms; the last has none): `Render` from two
/// call sites (2 + row ms, twice in row 3), `physics` every other frame, a `shadow` pass,
/// a `draw_calls` counter in rows 0..4 and a `Render spike` mark in rows 1 and 3 (twice).
fn capture() -> Capture {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, true);
    let main = b.thread("main");
    let render_a = b.scope("Render", "src/a.rs", 1);
    let render_b = b.scope("Render", "src/b.rs", 2);
    let physics = b.scope("physics", "src/p.rs", 3);
    let gfx = b.queue("graphics");
    let shadow = b.pass("shadow", gfx);
    let draws = b.counter("draw_calls", CounterKind::Sum, Numeric::Integer);
    let spike = b.mark_name("Render spike");
    let mut f = FrameInput::default();
    let mut begin = 1_000 * MS;
    for row in 0..5u64 {
        f.clear();
        f.index = 100 + row;
        f.cpu_begin_ns = begin;
        f.cpu_end_ns = begin + 12 * MS;
        let mut spans = vec![SpanInput {
            scope: render_a,
            depth: 0,
            start_ns: begin,
            end_ns: begin + (2 + row) * MS,
        }];
        if row == 3 {
            spans.push(SpanInput {
                scope: render_b,
                depth: 0,
                start_ns: begin + 6 * MS,
                end_ns: begin + 10 * MS,
            });
        }
        if row % 2 == 0 {
            spans.push(SpanInput {
                scope: physics,
                depth: 0,
                start_ns: begin + 10 * MS,
                end_ns: begin + 11 * MS,
            });
        }
        f.lanes.push(LaneInput {
            thread: main,
            spans,
            dropped_spans: 0,
        });
        f.gpu.push(GpuPassInput {
            pass: shadow,
            depth: 0,
            nominal_ns: Some((begin, begin + (5 - row) * MS)),
        });
        if row < 4 {
            f.counters.push((draws, 10 * row as i64));
        }
        let marks = match row {
            1 => 1,
            3 => 2,
            _ => 0,
        };
        for k in 0..marks {
            f.marks.push(MarkInput {
                name: spike,
                thread: Some(main),
                at_ns: begin + (3 + k) * MS,
                user: None,
            });
        }
        b.push_frame(&f);
        begin += if row == 3 { 40 * MS } else { 16 * MS };
    }
    b.finish()
}

fn rows(m: &Match) -> Vec<usize> {
    m.occurrences.iter().map(|o| o.row).collect()
}

#[test]
fn a_scope_is_found_in_any_case_its_sites_merged_worst_frame_first() {
    let c = capture();
    let found = search(&c, "render", 10);
    let kinds: Vec<(MatchKind, &str)> = found.iter().map(|m| (m.kind, m.name.as_str())).collect();
    // The name that is the text first, then the longer one.
    assert_eq!(
        kinds,
        [
            (MatchKind::Scope, "Render"),
            (MatchKind::Mark, "Render spike")
        ]
    );
    let render = &found[0];
    assert_eq!(render.frames, 5);
    // Row 3: 5 ms + 4 ms from the second site, two calls.
    assert_eq!(rows(render), [3, 4, 2, 1, 0]);
    assert_eq!(render.occurrences[0].value, Some(Num::Int(9 * MS as i64)));
    assert_eq!(
        (render.occurrences[0].calls, render.occurrences[0].index),
        (2, 103)
    );
}

#[test]
fn passes_and_counters_rank_by_their_values_and_skip_frames_without_one() {
    let c = capture();
    let shadow = &search(&c, "SHAD", 10)[0];
    assert_eq!(
        (shadow.kind, rows(shadow)),
        (MatchKind::Pass, vec![0, 1, 2, 3, 4])
    );
    let draws = &search(&c, "draw", 2)[0];
    assert_eq!((draws.kind, draws.frames), (MatchKind::Counter, 4));
    assert_eq!(rows(draws), [3, 2], "the limit keeps the worst");
    assert_eq!(draws.occurrences[0].value, Some(Num::Int(30)));
    let physics = &search(&c, "phys", 10)[0];
    assert_eq!(rows(physics), [0, 2, 4], "equal values keep row order");
}

#[test]
fn marks_rank_by_their_frames_period_and_count_per_frame() {
    let c = capture();
    let spike = search(&c, "spike", 10);
    assert_eq!(spike.len(), 1);
    let m = &spike[0];
    assert_eq!(
        (m.kind, m.frames, rows(m)),
        (MatchKind::Mark, 2, vec![3, 1])
    );
    let o = &m.occurrences[0];
    assert_eq!(
        (o.value, o.calls, o.at_ns),
        (Some(Num::Int(40 * MS as i64)), 2, Some(3 * MS as i64))
    );
}

#[test]
fn blank_or_unknown_text_finds_nothing() {
    let c = capture();
    assert!(search(&c, "  ", 10).is_empty());
    assert!(search(&c, "audio", 10).is_empty());
}

/// Every run of `ids` in every frame, longest first, as `longest_instances` orders them.
fn every_run(c: &Capture, ids: &[u32]) -> Vec<(u64, usize, i64, u32, Option<String>)> {
    let spans = c.spans().unwrap();
    let mut all = Vec::new();
    for row in 0..c.frame_count() {
        let begin = c.frames().cpu_begin_ns[row];
        for s in spans
            .frame_spans(row)
            .cpu
            .iter()
            .filter(|s| ids.contains(&s.scope))
        {
            all.push((
                s.end_ns - s.start_ns,
                row,
                s.start_ns as i64 - begin as i64,
                s.depth,
                Some(c.threads()[s.thread as usize].clone()),
            ));
        }
    }
    all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    all
}

/// 200 frames on two threads: `tick` once a frame (its length varies), `entity` 1 to 12
/// times a frame, some nested in another `entity` (recursion), with lengths drawn from a
/// fixed sequence.
fn busy_capture() -> Capture {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, true);
    let threads = [b.thread("main"), b.thread("worker")];
    let tick = b.scope("tick", "src/t.rs", 1);
    let entity = [
        b.scope("entity", "src/e.rs", 1),
        b.scope("entity", "src/e.rs", 9),
    ];
    let mut f = FrameInput::default();
    let mut seed = 12_345u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    for row in 0..200u64 {
        f.clear();
        f.index = row;
        f.cpu_begin_ns = row * 20 * MS;
        f.cpu_end_ns = f.cpu_begin_ns + 15 * MS;
        for (t, &thread) in threads.iter().enumerate() {
            let mut at = f.cpu_begin_ns + 1_000;
            let mut spans = Vec::new();
            if t == 0 {
                let len = 1_000 + next(3 * MS);
                spans.push(SpanInput {
                    scope: tick,
                    depth: 0,
                    start_ns: at,
                    end_ns: at + len,
                });
                at += len + 10;
            }
            for _ in 0..1 + next(12) {
                let len = 2_000 + next(400_000);
                let id = entity[next(2) as usize];
                spans.push(SpanInput {
                    scope: id,
                    depth: 0,
                    start_ns: at,
                    end_ns: at + len,
                });
                if next(3) == 0 {
                    let inner = len / (2 + next(3));
                    spans.push(SpanInput {
                        scope: entity[0],
                        depth: 1,
                        start_ns: at + 100,
                        end_ns: at + 100 + inner,
                    });
                }
                at += len + 50;
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

#[test]
fn the_longest_runs_are_the_longest_of_every_span_reading_few_frames() {
    let c = busy_capture();
    let source = FrameSource::kept();
    for (name, ids) in [("tick", vec![0u32]), ("entity", vec![1, 2])] {
        let all = every_run(&c, &ids);
        for limit in [1, 5, 10, 40] {
            let found = longest_instances(&c, &source, MatchKind::Scope, name, limit, usize::MAX)
                .unwrap()
                .unwrap();
            assert!(found.complete);
            assert_eq!(found.total, all.len() as u64, "{name}");
            let got: Vec<_> = found
                .longest
                .iter()
                .map(|i| (i.dur_ns, i.row, i.start_ns, i.depth, i.thread.clone()))
                .collect();
            assert_eq!(got, all[..limit], "{name}, limit {limit}");
            assert!(found.longest.iter().all(|i| i.index == i.row as u64));
            if name == "tick" {
                // One run a frame: its total is the run, so the bound stops at once.
                assert_eq!(found.frames_read, limit, "{name}, limit {limit}");
            }
            assert!(
                found.frames_read < c.frame_count(),
                "{name}, limit {limit}: {}",
                found.frames_read
            );
        }
    }
}

#[test]
fn a_frame_budget_that_runs_out_says_so() {
    let c = busy_capture();
    let found = longest_instances(&c, &FrameSource::kept(), MatchKind::Scope, "entity", 40, 3)
        .unwrap()
        .unwrap();
    assert_eq!((found.frames_read, found.complete), (3, false));
    assert!(!found.longest.is_empty());
}

#[test]
fn pass_runs_are_nominal_and_counters_and_marks_have_none() {
    let c = capture();
    let source = FrameSource::kept();
    let shadow = longest_instances(&c, &source, MatchKind::Pass, "shadow", 2, 100)
        .unwrap()
        .unwrap();
    assert_eq!(shadow.total, 5);
    let got: Vec<_> = shadow
        .longest
        .iter()
        .map(|i| (i.row, i.index, i.thread.clone(), i.start_ns, i.dur_ns))
        .collect();
    assert_eq!(got, [(0, 100, None, 0, 5 * MS), (1, 101, None, 0, 4 * MS)]);
    assert!(
        longest_instances(&c, &source, MatchKind::Counter, "draw_calls", 2, 100)
            .unwrap()
            .is_none()
    );
    assert!(
        longest_instances(&c, &source, MatchKind::Mark, "Render spike", 2, 100)
            .unwrap()
            .is_none()
    );
    assert!(
        longest_instances(&c, &source, MatchKind::Scope, "audio", 2, 100)
            .unwrap()
            .is_none()
    );
}

/// Three frames whose `render` totals were recorded without spans (as a `.litecap`'s
/// phases are), and an `update` with its spans.
fn totals_only() -> Capture {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, true);
    let main = b.thread("main");
    let render = b.scope("render", "", 0);
    let update = b.scope("update", "", 0);
    let mut f = FrameInput::default();
    for row in 0..3u64 {
        f.clear();
        f.index = row;
        f.cpu_begin_ns = row * 16 * MS;
        f.cpu_end_ns = f.cpu_begin_ns + 10 * MS;
        f.direct_scopes.push((render, (4 + row) * MS));
        b.push_frame(&f);
    }
    // A frame with spans folds them (its direct totals are not read then).
    f.clear();
    f.index = 3;
    f.cpu_begin_ns = 48 * MS;
    f.cpu_end_ns = f.cpu_begin_ns + 10 * MS;
    f.lanes.push(LaneInput {
        thread: main,
        spans: vec![SpanInput {
            scope: update,
            depth: 0,
            start_ns: f.cpu_begin_ns,
            end_ns: f.cpu_begin_ns + 2 * MS,
        }],
        dropped_spans: 0,
    });
    b.push_frame(&f);
    b.finish()
}

#[test]
fn runs_whose_spans_were_not_recorded_are_said_unknown_not_listed_as_complete() {
    let c = totals_only();
    let render = longest_instances(
        &c,
        &FrameSource::kept(),
        MatchKind::Scope,
        "render",
        10,
        100,
    )
    .expect("read")
    .expect("a scope");
    assert_eq!(render.total, 3);
    assert!(!render.spans_recorded);
    assert!(!render.complete, "no list of runs is complete here");
    assert!(render.longest.is_empty());
    // It stopped at the first frame that ran it with no span: the largest (row 2).
    assert_eq!(render.frames_read, 1);
    let reason = render.reason.expect("a reason");
    assert!(
        reason.contains("render") && reason.contains("row 2"),
        "{reason}"
    );
    // A scope with its spans says nothing of the kind.
    let update = longest_instances(
        &c,
        &FrameSource::kept(),
        MatchKind::Scope,
        "update",
        10,
        100,
    )
    .expect("read")
    .expect("a scope");
    assert!(update.spans_recorded && update.complete && update.reason.is_none());
    assert_eq!(update.longest.len(), 1);
    // The model names the scopes whose totals have no spans, in the rows asked for.
    assert_eq!(c.scopes_without_spans(0..4), Some(vec![0]));
    assert_eq!(c.scopes_without_spans(3..4), Some(vec![]));
    assert_eq!(capture().scopes_without_spans(0..5), Some(vec![]));
    // Without a span table it cannot tell.
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    let s = b.scope("render", "", 0);
    let mut f = FrameInput::default();
    f.direct_scopes.push((s, MS));
    b.push_frame(&f);
    assert_eq!(b.finish().scopes_without_spans(0..1), None);
    // Documents written before the field read as recorded.
    let old: Instances =
        serde_json::from_str(r#"{"total":1,"longest":[],"frames_read":0,"complete":true}"#)
            .expect("an old document");
    assert!(old.spans_recorded && old.reason.is_none());
}
