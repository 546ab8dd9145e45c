//! CPU scopes on several threads: lanes, nesting, pre-order, call sites, frame boundaries.

use std::sync::{Arc, Barrier};

use framewise::{scope, Session, WriterMode};
use framewise_format::model::Lane;

use crate::common::{self, name, site};

fn check_pre_order(lane: &Lane) {
    // Pre-order: sorted by start; a span at depth d > 0 that follows a span sits inside the
    // nearest earlier span of depth d - 1, when that span is in the lane.
    for pair in lane.spans.windows(2) {
        assert!(
            pair[0].start_ns <= pair[1].start_ns,
            "not sorted by start: {pair:?}"
        );
    }
    for (i, span) in lane.spans.iter().enumerate() {
        assert!(span.end_ns >= span.start_ns);
        if let Some(parent) = lane.spans[..i]
            .iter()
            .rev()
            .find(|p| p.depth + 1 == span.depth)
        {
            assert!(
                parent.start_ns <= span.start_ns && span.end_ns <= parent.end_ns,
                "{span:?} not inside {parent:?}"
            );
        }
    }
}

#[test]
fn scopes_nest_on_every_thread_in_pre_order() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("nesting");
    const FRAMES: usize = 10;
    const WORKERS: usize = 3;
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    let start = Arc::new(Barrier::new(WORKERS + 1));
    let done = Arc::new(Barrier::new(WORKERS + 1));
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (start, done) = (Arc::clone(&start), Arc::clone(&done));
            std::thread::Builder::new()
                .name(format!("worker-{w}"))
                .spawn(move || {
                    for _ in 0..FRAMES {
                        start.wait();
                        {
                            let _outer = scope!("job");
                            {
                                let _a = scope!("job.a");
                            }
                            {
                                let _b = scope!("job.b");
                                let _leaf = scope!("job.b.leaf");
                            }
                        }
                        done.wait();
                    }
                })
                .unwrap()
        })
        .collect();
    for _ in 0..FRAMES {
        start.wait();
        {
            let _main = scope!("main.update");
            let _inner = scope!("main.inner");
        }
        done.wait();
        session.end_frame();
    }
    for worker in workers {
        worker.join().unwrap();
    }
    let report = session.stop().unwrap();
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.frames_written, FRAMES as u64);

    let capture = common::open(&path);
    assert!(
        capture.opened_by_directory(),
        "a stopped session's capture is closed"
    );
    assert!(capture.defects().is_empty(), "{:?}", capture.defects());
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), FRAMES);
    for (i, frame) in frames.iter().enumerate() {
        assert_eq!(frame.index, i as u64);
        assert!(frame.cpu_end_ns >= frame.cpu_begin_ns);
        assert_eq!(
            frame.lanes.len(),
            WORKERS + 1,
            "frame {i}: one lane per thread"
        );
        let mut worker_names: Vec<String> = Vec::new();
        for lane in &frame.lanes {
            check_pre_order(lane);
            assert_eq!(lane.dropped_spans, 0);
            let thread = name(&capture, lane.thread);
            let shape: Vec<(String, u32)> = lane
                .spans
                .iter()
                .map(|s| (name(&capture, s.scope), s.depth))
                .collect();
            if thread.starts_with("worker-") {
                worker_names.push(thread);
                assert_eq!(
                    shape,
                    vec![
                        ("job".to_owned(), 0),
                        ("job.a".to_owned(), 1),
                        ("job.b".to_owned(), 1),
                        ("job.b.leaf".to_owned(), 2)
                    ]
                );
            } else {
                assert_eq!(
                    shape,
                    vec![("main.update".to_owned(), 0), ("main.inner".to_owned(), 1)]
                );
            }
            for span in &lane.spans {
                assert!(
                    span.end_ns <= frame.cpu_end_ns,
                    "a span closed in a frame ends before the frame does"
                );
            }
        }
        worker_names.sort();
        assert_eq!(worker_names, vec!["worker-0", "worker-1", "worker-2"]);
    }
    // Every scope carries its call site.
    let first = &frames[0].lanes[0].spans[0];
    let (file, line) = site(&capture, first.scope);
    assert!(file.ends_with("nesting.rs"), "{file}");
    assert!(line > 0);
}

#[test]
fn a_span_open_across_frames_goes_into_the_frame_where_it_closes() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("across");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    {
        let _long = scope!("loading");
        {
            let _child = scope!("loading.chunk");
        }
        session.end_frame(); // frame 0: only the child closed
        {
            let _child = scope!("loading.chunk");
        }
        session.end_frame(); // frame 1: another child
    }
    session.end_frame(); // frame 2: the long span closes
    session.stop().unwrap();

    let capture = common::open(&path);
    let frames = common::frames(&capture);
    let shapes: Vec<Vec<(String, u32)>> = frames
        .iter()
        .map(|f| {
            f.lanes
                .iter()
                .flat_map(|l| l.spans.iter().map(|s| (name(&capture, s.scope), s.depth)))
                .collect()
        })
        .collect();
    assert_eq!(
        shapes,
        vec![
            vec![("loading.chunk".to_owned(), 1)],
            vec![("loading.chunk".to_owned(), 1)],
            vec![("loading".to_owned(), 0)],
        ]
    );
    let long = frames[2].lanes[0].spans[0];
    assert!(
        long.start_ns < frames[0].cpu_end_ns,
        "it started in frame 0"
    );
}

#[test]
fn dynamic_scope_names_are_interned_with_the_callers_site() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("dynamic");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    for name in ["enemy_ai", "pathfinding", "enemy_ai"] {
        let _scope = framewise::scope_dynamic(name);
    }
    session.end_frame();
    session.stop().unwrap();
    let capture = common::open(&path);
    let frames = common::frames(&capture);
    let spans = &frames[0].lanes[0].spans;
    let names: Vec<String> = spans.iter().map(|s| name(&capture, s.scope)).collect();
    assert_eq!(names, vec!["enemy_ai", "pathfinding", "enemy_ai"]);
    assert_eq!(
        spans[0].scope, spans[2].scope,
        "one name at one site is one symbol"
    );
    let (file, line) = site(&capture, spans[0].scope);
    assert!(file.ends_with("nesting.rs") && line > 0, "{file}:{line}");
}

#[test]
fn a_thread_that_overfills_its_buffer_drops_whole_spans_and_counts_them() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("overfill");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    // Far more spans in one frame than a thread's ring holds (65,536 events).
    const SPANS: u64 = 50_000;
    {
        let _outer = scope!("outer");
        for _ in 1..SPANS {
            let _inner = scope!("inner");
        }
    }
    session.end_frame();
    {
        let _after = scope!("after");
    }
    session.end_frame();
    let report = session.stop().unwrap();
    let capture = common::open(&path);
    let frames = common::frames(&capture);
    let lane = &frames[0].lanes[0];
    assert!(lane.dropped_spans > 0);
    assert_eq!(
        lane.spans.len() as u64 + lane.dropped_spans,
        SPANS,
        "every span kept or counted"
    );
    assert_eq!(
        lane.spans[0].depth, 0,
        "the outer span was kept: its end had room reserved"
    );
    assert_eq!(name(&capture, lane.spans[0].scope), "outer");
    assert_eq!(report.spans_dropped, lane.dropped_spans);
    assert!(!report.is_complete());
    // The next frame records normally again.
    assert_eq!(frames[1].lanes[0].spans.len(), 1);
    assert_eq!(frames[1].lanes[0].dropped_spans, 0);
}

#[test]
fn guards_dropped_out_of_order_lose_only_the_span_left_open() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("out_of_order");
    const FRAMES: u64 = 4;
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    for _ in 0..FRAMES {
        // `a` is dropped while `b`, opened inside it, is still open: `b` is lost, and `c`,
        // closed inside `b`, stays inside `a`.
        let a = scope!("ooo.a");
        let b = scope!("ooo.b");
        {
            let _c = scope!("ooo.c");
        }
        drop(a);
        drop(b);
        session.end_frame();
    }
    let report = session.stop().unwrap();
    assert_eq!(report.frames_written, FRAMES, "{report:?}");
    assert_eq!(report.frames_lost_to_error, 0, "{report:?}");
    assert_eq!(
        report.spans_dropped, FRAMES,
        "one span lost a frame: {report:?}"
    );

    let capture = common::open(&path);
    assert!(capture.defects().is_empty(), "{:?}", capture.defects());
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), FRAMES as usize);
    for frame in &frames {
        let [lane] = &frame.lanes[..] else {
            panic!("one lane: {frame:?}");
        };
        check_pre_order(lane);
        assert_eq!(lane.dropped_spans, 1, "`b` is counted lost");
        let shape: Vec<(String, u32)> = lane
            .spans
            .iter()
            .map(|s| (name(&capture, s.scope), s.depth))
            .collect();
        assert_eq!(
            shape,
            vec![("ooo.a".to_owned(), 0), ("ooo.c".to_owned(), 1)]
        );
    }
}

/// Under the monotonic clock every end takes the slow path of its out-of-line part (whose fast
/// path reads the TSC only): the spans are the same as under the TSC.
#[test]
fn scopes_nest_under_the_monotonic_clock() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("nesting-monotonic");
    const FRAMES: usize = 3;
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .clock(framewise::ClockChoice::Monotonic)
        .start(path.as_path())
        .unwrap();
    for _ in 0..FRAMES {
        std::thread::Builder::new()
            .name("monotonic-worker".to_owned())
            .spawn(|| {
                let _outer = scope!("mono.outer");
                {
                    let _a = scope!("mono.a");
                }
                let _b = scope!("mono.b");
            })
            .unwrap()
            .join()
            .unwrap();
        session.end_frame();
    }
    let report = session.stop().unwrap();
    assert!(report.is_complete(), "{report:?}");
    let capture = common::open(&path);
    assert!(capture.defects().is_empty(), "{:?}", capture.defects());
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), FRAMES);
    for frame in &frames {
        assert_eq!(frame.lanes.len(), 1, "one worker thread a frame");
        let lane = &frame.lanes[0];
        check_pre_order(lane);
        let shape: Vec<(String, u32)> = lane
            .spans
            .iter()
            .map(|s| (name(&capture, s.scope), s.depth))
            .collect();
        assert_eq!(
            shape,
            vec![
                ("mono.outer".to_owned(), 0),
                ("mono.a".to_owned(), 1),
                ("mono.b".to_owned(), 1)
            ]
        );
    }
}
