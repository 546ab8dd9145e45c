//! GPU pass timings delivered frames late; frames held until they arrive or
//! `gpu_wait_frames` pass.

use framewise::{GpuPassTiming, Session, WriterMode};
use framewise_format::model::GpuTiming;

use crate::common::{self, name};

#[test]
fn late_gpu_results_land_in_their_own_frame_and_missing_ones_are_marked() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("gpu");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .gpu_queue("graphics", 1.5)
        .start(path.as_path())
        .unwrap();
    let queue = session.gpu_queue("graphics").unwrap();
    assert!(session.gpu_queue("compute").is_none());
    let shadow = session.pass_label("shadow");
    let lighting = session.pass_label("lighting");
    let timings = |base: u64| {
        [
            GpuPassTiming {
                pass: shadow,
                depth: 0,
                begin_ticks: Some(base),
                end_ticks: Some(base + 100),
            },
            GpuPassTiming {
                pass: lighting,
                depth: 0,
                begin_ticks: Some(base + 100),
                end_ticks: Some(base + 400),
            },
        ]
    };

    let ticket0 = session.gpu_submit(queue);
    assert_eq!(ticket0.frame_index(), 0);
    session.end_frame(); // frame 0: pending
    let ticket1 = session.gpu_submit(queue);
    session.end_frame(); // frame 1: pending
                         // Frame 0 is held: nothing can have been written yet, however fast the writer is.
    assert_eq!(session.frames_written(), 0);
    session.gpu_deliver(ticket0, &timings(1_000));
    session.gpu_deliver(ticket1, &timings(5_000));
    session.end_frame(); // frame 2: brings results for frames 0 and 1
    let ticket3 = session.gpu_submit(queue);
    session.end_frame(); // frame 3: its results never come
    for _ in 4..=8 {
        session.end_frame();
    }
    session.gpu_deliver(ticket3, &timings(9_000)); // too late: frame 3 was written at frame 6
    session.end_frame(); // frame 9
    let report = session.stop().unwrap();
    assert_eq!(report.frames_written, 10);
    assert_eq!(report.gpu_results_missing, 1);
    assert_eq!(report.gpu_deliveries_late, 1);
    assert!(
        !report.is_complete(),
        "missing GPU results make a capture incomplete"
    );

    let capture = common::open(&path);
    let meta = capture.meta().unwrap();
    assert_eq!(meta.gpu_clocks.len(), 1);
    assert_eq!(meta.gpu_clocks[0].timestamp_period_ns, 1.5);
    assert_eq!(name(&capture, meta.gpu_clocks[0].queue), "graphics");
    let frames = common::frames(&capture);
    let indices: Vec<u64> = frames.iter().map(|f| f.index).collect();
    assert_eq!(
        indices,
        (0..10).collect::<Vec<_>>(),
        "held frames are written in order"
    );

    for (frame, base) in [(&frames[0], 1_000), (&frames[1], 5_000)] {
        let gpu = &frame.gpu;
        assert!(
            gpu.expected && !gpu.results_missing,
            "frame {}",
            frame.index
        );
        assert_eq!(gpu.queues.len(), 1);
        let anchor = gpu.queues[0].anchor;
        let (submit, readback) = (
            anchor.cpu_submit_ns.unwrap(),
            anchor.cpu_readback_ns.unwrap(),
        );
        assert!(frame.cpu_begin_ns <= submit && submit <= frame.cpu_end_ns);
        assert!(readback > frame.cpu_end_ns, "read back frames later");
        let passes: Vec<(String, Option<GpuTiming>)> = gpu
            .passes
            .iter()
            .map(|p| (name(&capture, p.pass), p.timing))
            .collect();
        assert_eq!(
            passes,
            vec![
                (
                    "shadow".to_owned(),
                    Some(GpuTiming {
                        begin_ticks: base,
                        end_ticks: base + 100
                    })
                ),
                (
                    "lighting".to_owned(),
                    Some(GpuTiming {
                        begin_ticks: base + 100,
                        end_ticks: base + 400
                    })
                ),
            ]
        );
    }
    let frame3 = &frames[3].gpu;
    assert!(frame3.expected && frame3.results_missing);
    assert!(frame3.passes.is_empty());
    assert!(frames[3].gpu.queues[0].anchor.cpu_readback_ns.is_none());
    for frame in [&frames[2], &frames[4], &frames[9]] {
        assert!(
            !frame.gpu.expected,
            "frame {} submitted nothing",
            frame.index
        );
    }
    // The directory carries the GPU duration: (last end - first begin) x period.
    let entries: Vec<_> = capture.frame_entries().collect();
    assert_eq!(entries[0].gpu_ns, Some(600));
    assert_eq!(entries[3].gpu_ns, None);
}

#[test]
fn with_no_wait_a_frame_is_written_at_close_without_its_results() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("gpu0");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .gpu_wait_frames(0)
        .gpu_queue("graphics", 1.0)
        .start(path.as_path())
        .unwrap();
    let queue = session.gpu_queue("graphics").unwrap();
    let ticket = session.gpu_submit(queue);
    session.end_frame();
    session.gpu_deliver(ticket, &[]);
    session.end_frame();
    let report = session.stop().unwrap();
    assert_eq!(
        (report.gpu_results_missing, report.gpu_deliveries_late),
        (1, 1)
    );
}

#[test]
fn spans_of_frames_held_for_gpu_results_stay_in_their_own_frame() {
    // The writer gathers frames 1-3 while frames 0-2 wait for their results: each frame's
    // spans must land in its own frame, whichever lanes the writer gathered them into.
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("gpu_held_spans");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .gpu_queue("graphics", 1.0)
        .start(path.as_path())
        .unwrap();
    let queue = session.gpu_queue("graphics").unwrap();
    let pass = session.pass_label("pass");
    let mut tickets = Vec::new();
    for index in 0..8u64 {
        for _ in 0..=index {
            let _work = framewise::scope!("work");
        }
        if index < 3 {
            tickets.push(session.gpu_submit(queue));
        }
        if index == 3 {
            for (i, ticket) in tickets.drain(..).enumerate() {
                let base = 1_000 * i as u64;
                let timing = GpuPassTiming {
                    pass,
                    depth: 0,
                    begin_ticks: Some(base),
                    end_ticks: Some(base + 10),
                };
                session.gpu_deliver(ticket, &[timing]);
            }
        }
        session.end_frame();
    }
    let report = session.stop().unwrap();
    assert_eq!(report.frames_written, 8);
    assert_eq!(report.gpu_results_missing, 0);

    let capture = common::open(&path);
    let frames = common::frames(&capture);
    let spans: Vec<(u64, usize, u64)> = frames
        .iter()
        .map(|frame| {
            let count = frame.lanes.iter().map(|lane| lane.spans.len()).sum();
            let dropped = frame.lanes.iter().map(|lane| lane.dropped_spans).sum();
            (frame.index, count, dropped)
        })
        .collect();
    let expected: Vec<(u64, usize, u64)> = (0..8).map(|i| (i, i as usize + 1, 0)).collect();
    assert_eq!(spans, expected, "(frame, spans, dropped spans)");
    for frame in &frames[..3] {
        assert!(frame.gpu.expected && !frame.gpu.results_missing);
        assert_eq!(frame.gpu.passes.len(), 1, "frame {}", frame.index);
    }
}
