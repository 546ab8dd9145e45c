use super::*;
use crate::build::{CaptureBuilder, FrameInput, GpuPassInput, LaneInput, MarkInput, SpanInput};
use crate::model::{CounterKind, Numeric, SourceKind};

const MS: u64 = 1_000_000;

/// Five frames, periods 16 ms except frame 3 (40 ms; the last has none): `Render` from two
/// call sites (2 + row ms, twice in row 3), `physics` every other frame, a `shadow` pass,
/// a `draw_calls` counter in rows 0..4 and a `Render spike` mark in rows 1 and 3 (twice).
fn capture() -> Capture {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
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
