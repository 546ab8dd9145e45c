//! Instant marks and usermarks with their trailing windows.

use std::time::Duration;

use framewise::{mark, Session, WriterMode};
use framewise_format::model::MarkKind;

use crate::common::{self, name};

#[test]
fn marks_land_in_their_frame_on_their_thread() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("marks");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    session.end_frame();
    mark!("gc");
    std::thread::Builder::new()
        .name("loader".into())
        .spawn(|| {
            mark!("asset_loaded");
            framewise::mark_dynamic("dynamic_mark");
        })
        .unwrap()
        .join()
        .unwrap();
    session.end_frame();
    session.end_frame();
    session.stop().unwrap();

    let capture = common::open(&path);
    let frames = common::frames(&capture);
    assert!(frames[0].marks.is_empty());
    assert!(frames[2].marks.is_empty());
    let mut marks: Vec<(String, String)> = frames[1]
        .marks
        .iter()
        .map(|m| (name(&capture, m.name), name(&capture, m.thread)))
        .collect();
    marks.sort();
    assert_eq!(marks.len(), 3);
    assert_eq!(marks[0].0, "asset_loaded");
    assert_eq!(marks[0].1, "loader");
    assert_eq!(marks[1], ("dynamic_mark".to_owned(), "loader".to_owned()));
    assert_eq!(marks[2].0, "gc");
    for m in &frames[1].marks {
        assert_eq!(m.kind, MarkKind::Instant);
        assert!(frames[1].cpu_begin_ns <= m.at_ns && m.at_ns <= frames[1].cpu_end_ns);
    }
}

#[test]
fn usermarks_flag_their_trailing_window() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("usermarks");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    let mut short = None;
    let mut default = None;
    // The short window reaches back to a time read in frame 5, so that it starts before
    // frame 20 (its frames sleep at least 30 ms in between) however long frame 20's own
    // sleep takes: a fixed window of a few frames' sleeps ended inside frame 20 whenever a
    // loaded machine woke the thread late.
    let mut reach_ns = 0;
    for frame in 0..30 {
        if frame == 5 {
            reach_ns = session.now_ns();
        }
        std::thread::sleep(Duration::from_millis(2));
        if frame == 20 {
            let window = Duration::from_nanos(session.now_ns() - reach_ns);
            short = Some(session.usermark_with_window("stutter when turning", window));
        }
        if frame == 25 {
            default = Some(session.usermark("felt wrong"));
        }
        session.end_frame();
    }
    let report = session.stop().unwrap();
    let (short, default) = (short.unwrap(), default.unwrap());
    assert_eq!(report.usermarks, vec![short.clone(), default.clone()]);

    assert_eq!(
        default.window_ns, 5_000_000_000,
        "the default window is 5 s"
    );
    assert_eq!(default.window_start_ns, 0, "clamped to the session's start");
    assert_eq!(default.first_frame, 0);
    assert_eq!(default.frame, 25);

    let capture = common::open(&path);
    let frames = common::frames(&capture);
    // The short window starts inside `first_frame`, as the capture's own times show.
    assert_eq!(short.frame, 20);
    assert!(short.window_ns >= 30_000_000, "{short:?}");
    assert_eq!(short.window_start_ns, short.at_ns - short.window_ns);
    assert!(
        short.window_start_ns >= reach_ns,
        "{short:?} reaches {reach_ns}"
    );
    let first = &frames[short.first_frame as usize];
    let next = &frames[short.first_frame as usize + 1];
    assert!(
        first.cpu_begin_ns <= short.window_start_ns && short.window_start_ns < next.cpu_begin_ns,
        "window start {} not in frame {} [{}, {})",
        short.window_start_ns,
        short.first_frame,
        first.cpu_begin_ns,
        next.cpu_begin_ns
    );
    assert!((5..20).contains(&short.first_frame), "{short:?}");

    // Both are in the capture, in the frames they were made in, with window and note.
    let user_marks: Vec<(u64, u64, String)> = frames
        .iter()
        .flat_map(|f| {
            f.marks.iter().filter_map(move |m| match &m.kind {
                MarkKind::User { window_ns, note } => Some((f.index, *window_ns, note.clone())),
                MarkKind::Instant => None,
            })
        })
        .collect();
    assert_eq!(
        user_marks,
        vec![
            (20, short.window_ns, "stutter when turning".to_owned()),
            (25, 5_000_000_000, "felt wrong".to_owned())
        ]
    );
}
