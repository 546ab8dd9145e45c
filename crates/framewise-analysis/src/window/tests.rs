use super::*;
use crate::build::{CaptureBuilder, FrameInput, GpuPassInput, LaneInput, MarkInput, SpanInput};
use crate::model::{Numeric, SourceKind};

const MS: u64 = 1_000_000;
const ORIGIN: u64 = 5_000 * MS;

/// Four frames 16 ms apart: main `update`(8) { `physics`(3), `render`(4) { `physics`(5: longer
/// than its parent's room) } }, worker `jobs`(2); a pass; a counter in rows 1 and 3; a mark
/// in row 2.
fn capture() -> Capture {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, true);
    let main = b.thread("main");
    let worker = b.thread("worker");
    let idle = b.thread("idle");
    let update = b.scope("update", "src/game.rs", 10);
    let physics = b.scope("physics", "", 0);
    let render = b.scope("render", "src/render.rs", 3);
    let jobs = b.scope("jobs", "src/jobs.rs", 1);
    let gfx = b.queue("graphics");
    let shadow = b.pass("shadow", gfx);
    let draws = b.counter("draw_calls", CounterKind::Sum, Numeric::Integer);
    let mark = b.mark_name("spawn");
    let _ = idle;
    let mut f = FrameInput::default();
    for row in 0..4u64 {
        f.clear();
        f.index = 10 + row;
        let at = ORIGIN + row * 16 * MS;
        f.cpu_begin_ns = at;
        f.cpu_end_ns = at + 9 * MS;
        let s = |scope, depth, from: u64, to: u64| SpanInput {
            scope,
            depth,
            start_ns: at + from * MS,
            end_ns: at + to * MS,
        };
        f.lanes.push(LaneInput {
            thread: main,
            spans: vec![
                s(update, 0, 0, 8),
                s(physics, 1, 0, 3),
                s(render, 1, 3, 7),
                s(physics, 2, 3, 8),
            ],
            dropped_spans: 0,
        });
        f.lanes.push(LaneInput {
            thread: worker,
            spans: vec![s(jobs, 0, 1, 3)],
            dropped_spans: u64::from(row == 2),
        });
        f.gpu.push(GpuPassInput {
            pass: shadow,
            depth: 0,
            nominal_ns: Some((at, at + 2 * MS)),
        });
        if row % 2 == 1 {
            f.counters.push((draws, 100 + row as i64));
        }
        if row == 2 {
            f.marks.push(MarkInput {
                name: mark,
                thread: Some(worker),
                at_ns: at + 4 * MS,
                user: None,
            });
        }
        b.push_frame(&f);
    }
    b.finish()
}

#[test]
fn frames_lie_end_to_end_from_the_first_frames_begin() {
    let c = capture();
    let w = window(&c, &FrameSource::kept(), 1..3).unwrap();
    assert_eq!((w.from, w.to, w.origin_ns), (1, 3, ORIGIN));
    let begins: Vec<(usize, u64, i64, i64)> = w
        .frames
        .iter()
        .map(|f| (f.row, f.index, f.begin_ns, f.end_ns))
        .collect();
    assert_eq!(
        begins,
        [
            (1, 11, 16 * MS as i64, 25 * MS as i64),
            (2, 12, 32 * MS as i64, 41 * MS as i64)
        ]
    );
    assert_eq!(w.frames[0].period_ns, Some(16 * MS));
    assert_eq!(w.frames[1].dropped_spans, 1);
    // Lanes with spans only, in thread order; spans in order, each with its frame's row.
    let threads: Vec<&str> = w.lanes.iter().map(|l| l.thread.as_str()).collect();
    assert_eq!(threads, ["main", "worker"]);
    let main: Vec<(usize, &str, i64)> = w.lanes[0]
        .spans
        .iter()
        .map(|s| (s.row, w.scopes[s.scope as usize].name.as_str(), s.start_ns))
        .collect();
    assert_eq!(main.len(), 8);
    assert_eq!(main[4], (2, "update", 32 * MS as i64));
    assert_eq!(w.scopes[0].site.as_deref(), Some("src/game.rs:10"));
    assert_eq!(w.scopes[1].site, None);
    assert_eq!(w.gpu.len(), 2);
    assert_eq!(
        (w.gpu[1].row, w.gpu[1].pass.as_str(), w.gpu[1].start_ns),
        (2, "shadow", 32 * MS as i64)
    );
}

#[test]
fn each_span_carries_its_self_time() {
    let c = capture();
    let w = window(&c, &FrameSource::kept(), 0..1).unwrap();
    let selfs: Vec<u64> = w.lanes[0].spans.iter().map(|s| s.self_ns).collect();
    // update 8 − (3 + 4); physics 3; render 4 − 5 → 0 (never below); physics 5.
    assert_eq!(selfs, [MS, 3 * MS, 0, 5 * MS]);
    assert_eq!(w.lanes[1].spans[0].self_ns, 2 * MS);
}

#[test]
fn marks_and_counters_of_the_window_only() {
    let c = capture();
    let w = window(&c, &FrameSource::kept(), 2..4).unwrap();
    assert_eq!(w.marks.len(), 1);
    let m = &w.marks[0];
    assert_eq!(
        (m.row, m.name.as_str(), m.thread.as_deref(), m.at_ns),
        (2, "spawn", Some("worker"), 36 * MS as i64)
    );
    assert_eq!(w.counters.len(), 1);
    assert_eq!(
        w.counters[0].values,
        [CounterSample {
            row: 3,
            value: Num::Int(103)
        }]
    );
    let none = window(&c, &FrameSource::kept(), 0..1).unwrap();
    assert!(none.marks.is_empty() && none.counters.is_empty());
}

#[test]
fn rows_past_the_end_are_cut() {
    let c = capture();
    let w = window(&c, &FrameSource::kept(), 3..99).unwrap();
    assert_eq!((w.from, w.to, w.frames.len()), (3, 4, 1));
    let empty = window(&c, &FrameSource::kept(), 50..60).unwrap();
    assert_eq!((empty.from, empty.to, empty.frames.len()), (4, 4, 0));
}
