use proptest::prelude::*;

use super::*;
use crate::build::{CaptureBuilder, FrameInput, LaneInput, SpanInput};
use crate::model::SourceKind;
use crate::view::frame_totals;

const MS: u64 = 1_000_000;

fn span(scope: u32, depth: u32, start_ns: u64, end_ns: u64) -> SpanInput {
    SpanInput {
        scope,
        depth,
        start_ns,
        end_ns,
    }
}

/// Frames whose lanes are `(thread, spans)` with offsets from the frame's begin.
fn capture(
    threads: &[&str],
    scopes: &[(&str, u32)],
    frames: &[Vec<(u32, Vec<SpanInput>)>],
) -> Capture {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, true);
    for t in threads {
        b.thread(t);
    }
    for (name, line) in scopes {
        b.scope(name, "src/game.rs", *line);
    }
    let mut f = FrameInput::default();
    for (i, lanes) in frames.iter().enumerate() {
        f.clear();
        f.index = i as u64;
        f.cpu_begin_ns = 1_000 * MS + i as u64 * 16 * MS;
        f.cpu_end_ns = f.cpu_begin_ns + 10 * MS;
        let at = f.cpu_begin_ns;
        for (thread, spans) in lanes {
            f.lanes.push(LaneInput {
                thread: *thread,
                spans: spans
                    .iter()
                    .map(|s| span(s.scope, s.depth, at + s.start_ns, at + s.end_ns))
                    .collect(),
                dropped_spans: 0,
            });
        }
        b.push_frame(&f);
    }
    b.finish()
}

/// main: update(8) { physics(3), render(4) { physics(1) } }; worker: jobs(5) { physics(2) }.
fn game(frames: usize) -> Capture {
    let frame = vec![
        (
            0,
            vec![
                span(0, 0, 0, 8 * MS),
                span(1, 1, 0, 3 * MS),
                span(2, 1, 3 * MS, 7 * MS),
                span(1, 2, 4 * MS, 5 * MS),
            ],
        ),
        (1, vec![span(3, 0, 0, 5 * MS), span(1, 1, MS, 3 * MS)]),
    ];
    capture(
        &["main", "worker"],
        &[("update", 1), ("physics", 2), ("render", 3), ("jobs", 4)],
        &vec![frame; frames],
    )
}

fn child<'a>(node: &'a FlameNode, name: &str) -> &'a FlameNode {
    node.children
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("{} has no child {name}", node.name))
}

#[test]
fn merged_fold_keeps_paths_apart_and_sums_frames() {
    let c = game(4);
    let g = fold(&c, &FrameSource::kept(), &FlameOptions::rows(0..4)).unwrap();
    assert_eq!((g.frames, g.threads.len()), (4, 2));
    let names: Vec<&str> = g.roots.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["update", "jobs"]);
    let update = &g.roots[0];
    assert_eq!(
        (update.calls, update.total_ns, update.self_ns),
        (4, 32 * MS, 4 * MS)
    );
    let render = child(update, "render");
    assert_eq!((render.total_ns, render.self_ns), (16 * MS, 12 * MS));
    assert_eq!(child(render, "physics").total_ns, 4 * MS);
    assert_eq!(child(update, "physics").total_ns, 12 * MS);
    assert_eq!(child(&g.roots[1], "physics").total_ns, 8 * MS);
    assert_eq!(g.total_ns, 52 * MS);
}

#[test]
fn one_thread_alone_and_a_sub_range() {
    let c = game(6);
    let g = fold(
        &c,
        &FrameSource::kept(),
        &FlameOptions::rows(2..5).with_thread("worker"),
    )
    .unwrap();
    assert_eq!(g.threads, ["worker"]);
    assert_eq!(g.roots.len(), 1);
    assert_eq!((g.roots[0].name.as_str(), g.roots[0].calls), ("jobs", 3));
    assert_eq!(g.total_ns, 15 * MS);
    let empty = fold(&c, &FrameSource::kept(), &FlameOptions::rows(3..3)).unwrap();
    assert_eq!((empty.frames, empty.total_ns, empty.roots.len()), (0, 0, 0));
}

#[test]
fn bad_ranges_and_unknown_threads_are_errors() {
    let c = game(3);
    let bad = fold(&c, &FrameSource::kept(), &FlameOptions::rows(2..4)).unwrap_err();
    assert!(
        matches!(bad, FlameError::BadRange { frames: 3, .. }),
        "{bad}"
    );
    let nobody = fold(
        &c,
        &FrameSource::kept(),
        &FlameOptions::rows(0..3).with_thread("audio"),
    )
    .unwrap_err();
    assert_eq!(
        nobody.to_string(),
        "the capture has no thread named \"audio\""
    );
}

#[test]
fn sites_of_one_name_are_one_node_and_recursion_nests() {
    // Two call sites named "tick"; tick inside tick.
    let frame = vec![(
        0,
        vec![
            span(0, 0, 0, 9 * MS),
            span(1, 1, MS, 6 * MS),
            span(0, 2, 2 * MS, 3 * MS),
        ],
    )];
    let c = capture(&["main"], &[("tick", 1), ("tick", 2)], &[frame]);
    let g = fold(&c, &FrameSource::kept(), &FlameOptions::rows(0..1)).unwrap();
    assert_eq!(g.roots.len(), 1);
    let outer = &g.roots[0];
    let mid = child(outer, "tick");
    assert_eq!(
        (outer.total_ns, mid.total_ns, child(mid, "tick").total_ns),
        (9 * MS, 5 * MS, MS)
    );
    let totals = g.name_totals();
    assert_eq!(
        (totals[0].calls, totals[0].total_ns, totals[0].self_ns),
        (3, 9 * MS, 9 * MS)
    );
}

#[test]
fn a_diff_compares_per_frame_means_by_path() {
    let c = game(10);
    let a = fold(&c, &FrameSource::kept(), &FlameOptions::rows(0..2)).unwrap();
    let b = fold(
        &c,
        &FrameSource::kept(),
        &FlameOptions::rows(2..10).with_thread("main"),
    )
    .unwrap();
    let d = diff(&a, &b);
    assert_eq!((d.a.frames, d.b.frames), (2, 8));
    let update = d.roots.iter().find(|n| n.name == "update").unwrap();
    assert_eq!((update.a_ns, update.b_ns, update.delta_ns), (8e6, 8e6, 0.0));
    assert_eq!((update.a_calls, update.b_calls), (2, 8));
    let jobs = d.roots.iter().find(|n| n.name == "jobs").unwrap();
    assert_eq!((jobs.a_ns, jobs.b_ns, jobs.delta_ns), (5e6, 0.0, -5e6));
    assert_eq!(jobs.children[0].a_self_ns, 2e6);
}

/// Pre-order lanes from (scope, depth step) pairs: each span is at most one level deeper
/// than the one before it.
fn lane(steps: &[(u32, u32, u64)]) -> Vec<SpanInput> {
    let mut depth = 0u32;
    let mut out = Vec::new();
    let mut at = 0;
    for (i, &(scope, step, dur)) in steps.iter().enumerate() {
        depth = if i == 0 { 0 } else { step.min(depth + 1) };
        out.push(span(scope, depth, at, at + dur));
        at += 1_000;
    }
    out
}

proptest! {
    /// Name by name, the fold adds up to what the capture's own per-frame aggregates (the
    /// numbers `summarize` reads) say: calls, inclusive time of outermost instances, self.
    /// (One name per scope here: the aggregates count recursion per call site, see
    /// `sites_of_one_name_are_one_node_and_recursion_nests`.)
    #[test]
    fn the_fold_agrees_with_the_per_frame_totals(
        frames in proptest::collection::vec(
            (proptest::collection::vec((0u32..4, 0u32..4, 0u64..5_000_000), 0..24),
             proptest::collection::vec((0u32..4, 0u32..4, 0u64..5_000_000), 0..12)),
            1..5,
        )
    ) {
        let frames: Vec<Vec<(u32, Vec<SpanInput>)>> = frames
            .iter()
            .map(|(main, worker)| vec![(0, lane(main)), (1, lane(worker))])
            .collect();
        let c = capture(&["main", "worker"], &[("a", 1), ("b", 2), ("c", 3), ("d", 4)], &frames);
        let g = fold(&c, &FrameSource::kept(), &FlameOptions::rows(0..frames.len())).unwrap();
        let mut expected: HashMap<String, (u64, u64, u64)> = HashMap::new();
        for row in 0..frames.len() {
            for t in frame_totals(&c, row).scopes {
                let e = expected.entry(t.name).or_default();
                *e = (e.0 + t.calls, e.1 + t.total_ns, e.2 + t.self_ns);
            }
        }
        let got: HashMap<String, (u64, u64, u64)> = g
            .name_totals()
            .into_iter()
            .map(|t| (t.name, (t.calls, t.total_ns, t.self_ns)))
            .collect();
        prop_assert_eq!(got, expected);
    }
}
