//! A thread's ring over time: the room promised to the ends of leaked guards comes back, in
//! the session that leaked them and in the next, the spans a thread leaves open when it exits
//! are counted lost, and the spans a full ring drops are counted in the capture even when the
//! realtime writer drops the frames before theirs.

use std::sync::Arc;
use std::time::Duration;

use framewise::{scope, Session, Sink, WriterMode};
use framewise_format::model::Frame;
use framewise_format::read;

use crate::common::{self, name, GatedSink};

/// Runs `body` on a thread of its own, named `name`, and waits for it: the leaks a test makes
/// stay on that thread's ring.
fn on_thread(name: &str, body: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(body)
        .unwrap()
        .join()
        .unwrap();
}

/// Each frame's lane of the thread named `thread`, as (span names and depths, dropped spans);
/// an empty lane for a frame that has none.
fn lanes_of(
    capture: &read::Capture,
    frames: &[Frame],
    thread: &str,
) -> Vec<(Vec<(String, u32)>, u64)> {
    frames
        .iter()
        .map(|frame| {
            frame
                .lanes
                .iter()
                .find(|lane| name(capture, lane.thread) == thread)
                .map(|lane| {
                    let shape = lane
                        .spans
                        .iter()
                        .map(|s| (name(capture, s.scope), s.depth))
                        .collect();
                    (shape, lane.dropped_spans)
                })
                .unwrap_or_default()
        })
        .collect()
}

/// A parent that leaks 1,000 guards inside it every frame: each frame loses those 1,000 (lost
/// when the parent ends, and counted), and keeps the parent and its 10 ordinary children,
/// frame after frame, long after the promises to the leaked guards' ends would have filled
/// the ring (65,536 events: about 64 frames of 1,000).
#[test]
fn guards_leaked_every_frame_lose_only_themselves_frame_after_frame() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("leaked_every_frame");
    const FRAMES: u64 = 150;
    const LEAKED: u64 = 1_000;
    const ORDINARY: usize = 10;
    let session = Arc::new(
        Session::builder()
            .writer_mode(WriterMode::Lossless)
            .start(path.as_path())
            .unwrap(),
    );
    let game = Arc::clone(&session);
    on_thread("leaky-game", move || {
        for _ in 0..FRAMES {
            {
                let _parent = scope!("leaky.parent");
                for _ in 0..LEAKED {
                    std::mem::forget(scope!("leaky.leaked"));
                }
                for _ in 0..ORDINARY {
                    let _ordinary = scope!("leaky.ordinary");
                }
            }
            game.end_frame();
        }
    });
    let report = Arc::into_inner(session).unwrap().stop().unwrap();
    assert_eq!(report.frames_written, FRAMES, "{report:?}");
    assert_eq!(report.spans_dropped, FRAMES * LEAKED, "{report:?}");

    let capture = common::open(&path);
    assert!(capture.defects().is_empty(), "{:?}", capture.defects());
    let frames = common::frames(&capture);
    assert_eq!(frames.len() as u64, FRAMES);
    let mut want = vec![("leaky.parent".to_owned(), 0)];
    want.extend(std::iter::repeat_n(
        ("leaky.ordinary".to_owned(), 1),
        ORDINARY,
    ));
    for (i, (shape, dropped)) in lanes_of(&capture, &frames, "leaky-game").iter().enumerate() {
        assert_eq!(
            (shape, *dropped),
            (&want, LEAKED),
            "frame {i}: the parent and its children kept, the leaked guards counted"
        );
    }
}

/// 30,000 guards leaked in one session promised the ends of 30,000 spans that never end: the
/// next session on the same thread still has the whole ring, and begins at depth 0.
#[test]
fn guards_leaked_in_one_session_leave_the_next_the_whole_ring() {
    let _serial = common::serial();
    let (_dir, first) = common::temp_capture("leaked_first");
    let (_dir2, second) = common::temp_capture("leaked_second");
    const LEAKED: usize = 30_000;
    const SPANS: usize = 20_000;
    let second_path = second.clone();
    on_thread("leaky-sessions", move || {
        let session = Session::builder()
            .writer_mode(WriterMode::Lossless)
            .start(first.as_path())
            .unwrap();
        for _ in 0..LEAKED {
            std::mem::forget(scope!("sessions.leaked"));
        }
        // One more, at the top of the stack, in the next frame.
        session.end_frame();
        std::mem::forget(scope!("sessions.leaked.top"));
        session.end_frame();
        session.stop().unwrap();

        let session = Session::builder()
            .writer_mode(WriterMode::Lossless)
            .start(second_path.as_path())
            .unwrap();
        for _ in 0..SPANS {
            let _span = scope!("sessions.after");
        }
        session.end_frame();
        let report = session.stop().unwrap();
        assert_eq!(report.spans_dropped, 0, "{report:?}");
    });
    let capture = common::open(&second);
    let frames = common::frames(&capture);
    let lanes = lanes_of(&capture, &frames, "leaky-sessions");
    let [(shape, dropped)] = &lanes[..] else {
        panic!("one frame: {lanes:?}");
    };
    assert_eq!(*dropped, 0, "nothing dropped in the second session");
    assert_eq!(shape.len(), SPANS, "every span of the second session kept");
    assert!(
        shape
            .iter()
            .all(|(n, depth)| n == "sessions.after" && *depth == 0),
        "the second session begins at depth 0"
    );
}

/// A thread that exits inside scopes (their guards leaked) can never end them: they are lost,
/// counted in the frame whose gathering reads the thread's last event, whether the thread
/// exited before that frame closed or only after the writer had read its last event.
#[test]
fn spans_left_open_by_a_thread_that_exits_are_counted_dropped() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("exits_open");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    // Exits before the frame closes.
    on_thread("exits-open-early", || {
        {
            let _kept = scope!("exit.kept");
        }
        std::mem::forget(scope!("exit.leaked"));
    });
    session.end_frame();
    // Exits once the writer has read its last event: two spans left open.
    let (exit, on_exit) = std::sync::mpsc::channel::<()>();
    let (recorded, on_recorded) = std::sync::mpsc::channel::<()>();
    let late = std::thread::Builder::new()
        .name("exits-open-late".into())
        .spawn(move || {
            {
                let _kept = scope!("exit.kept");
            }
            std::mem::forget(scope!("exit.leaked"));
            std::mem::forget(scope!("exit.leaked.inner"));
            recorded.send(()).unwrap();
            on_exit.recv().unwrap();
        })
        .unwrap();
    on_recorded.recv().unwrap();
    session.end_frame();
    while session.frames_written() < 2 {
        std::thread::sleep(Duration::from_millis(1));
    }
    exit.send(()).unwrap();
    late.join().unwrap();
    session.end_frame();
    let report = session.stop().unwrap();
    assert_eq!(report.frames_written, 3, "{report:?}");
    assert_eq!(report.spans_dropped, 3, "{report:?}");

    let capture = common::open(&path);
    let frames = common::frames(&capture);
    let kept = || vec![("exit.kept".to_owned(), 0)];
    assert_eq!(
        lanes_of(&capture, &frames, "exits-open-early"),
        vec![(kept(), 1), (vec![], 0), (vec![], 0)],
        "the early thread's span lost in the frame it exited in"
    );
    assert_eq!(
        lanes_of(&capture, &frames, "exits-open-late"),
        vec![(vec![], 0), (kept(), 0), (vec![], 2)],
        "the late thread's spans lost in the frame that found it exited"
    );
}

/// Realtime: the writer is stuck and frames are dropped; the first frame sent after them
/// overflows the thread's ring. Its drops are counted in it, in the capture and the report,
/// though the writer reads them while it discards the dropped frames' events: every span made
/// in a frame written is in the capture or counted dropped.
#[test]
fn spans_a_full_ring_drops_right_after_dropped_frames_are_counted() {
    let _serial = common::serial();
    let sink = GatedSink::new();
    let session = Session::builder()
        .writer_mode(WriterMode::Realtime)
        .queue_frames(8)
        .start(Sink::seekable(sink.clone()))
        .unwrap();
    // Spans made, by frame index.
    let mut made: Vec<u64> = Vec::new();
    let mut frame = |spans: u64| {
        for _ in 0..spans {
            let _span = scope!("realtime.span");
        }
        made.push(spans);
        session.end_frame();
    };
    let catch_up = || {
        while session.frames_written() + session.frames_dropped() < session.frame_index() {
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    // The sink blocks every write: the writer is stuck on its first frame, and the frames
    // beyond its queue are dropped.
    sink.set_shut(true);
    let mut closed = 0;
    while session.frames_dropped() < 3 {
        assert!(closed < 1_000, "no frame dropped behind a stuck writer");
        frame(1);
        closed += 1;
    }
    sink.set_shut(false);
    catch_up();
    // Far more spans than the ring holds, in the first frame sent after the drops.
    frame(50_000);
    catch_up();
    for _ in 0..3 {
        frame(2);
        catch_up();
    }
    let report = session.stop().unwrap();
    assert!(report.frames_dropped >= 3, "{report:?}");

    let capture = read::from_bytes(sink.inner.bytes()).unwrap();
    let frames = common::frames(&capture);
    assert_eq!(frames.len() as u64, report.frames_written);
    let mut lost_in_written = 0;
    let mut counted = 0;
    for frame in &frames {
        let kept: u64 = frame.lanes.iter().map(|l| l.spans.len() as u64).sum();
        let dropped: u64 = frame.lanes.iter().map(|l| l.dropped_spans).sum();
        let made = made[frame.index as usize];
        assert_eq!(
            made - kept,
            dropped,
            "frame {}: {made} spans made, {kept} kept, {dropped} counted dropped",
            frame.index
        );
        lost_in_written += made - kept;
        counted += dropped;
    }
    let overflowing = frames
        .iter()
        .find(|f| made[f.index as usize] == 50_000)
        .expect("the overflowing frame is written");
    assert!(
        overflowing.dropped_frames_before > 0,
        "it follows the drops"
    );
    assert!(
        lost_in_written > 10_000,
        "the ring overflowed: {lost_in_written}"
    );
    assert_eq!(
        counted, lost_in_written,
        "the capture counts every span lost"
    );
    assert_eq!(report.spans_dropped, lost_in_written, "{report:?}");
    assert!(!report.is_complete());
}
