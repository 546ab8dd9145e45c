//! Frame close under the conditions a game meets it in: closed from two threads at once, and
//! closed into a realtime writer that is behind (frames dropped), with usermarks in them.

use std::sync::Barrier;
use std::time::Duration;

use framewise::{scope, Session, Sink, WriterMode};
use framewise_format::model::MarkKind;
use framewise_format::read;
use framewise_incidents::{read_all, Record};

use crate::common::{self, GatedSink};

/// `end_frame` may be called from any thread, and from two at once: the closes are
/// serialised, and each frame ends at an instant taken in that order, so that no frame ends
/// before it begins and no frame begins before the one closed before it. (The end instant
/// was read before the closer's lock was taken: a close that lost the race for the lock
/// handed over an end older than the begin the winner had left it, 20 to 159 frames of
/// 40,000 ending before they began.)
#[test]
fn frames_closed_from_two_threads_at_once_never_end_before_they_begin() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("concurrent_close");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    const THREADS: u64 = 2;
    const PER_THREAD: u64 = 5_000;
    let start = Barrier::new(THREADS as usize);
    std::thread::scope(|threads| {
        for _ in 0..THREADS {
            threads.spawn(|| {
                start.wait();
                for _ in 0..PER_THREAD {
                    {
                        let _work = scope!("work");
                    }
                    session.end_frame();
                }
            });
        }
    });
    let report = session.stop().unwrap();
    assert_eq!(report.frames_closed, THREADS * PER_THREAD);
    assert_eq!(report.frames_written, THREADS * PER_THREAD);

    let capture = common::open(&path);
    let frames = common::frames(&capture);
    assert_eq!(frames.len() as u64, THREADS * PER_THREAD);
    let mut ends_before_begin = Vec::new();
    let mut begins_backwards = Vec::new();
    for (position, frame) in frames.iter().enumerate() {
        assert_eq!(frame.index, position as u64, "frames in index order");
        if frame.cpu_end_ns < frame.cpu_begin_ns {
            ends_before_begin.push((frame.index, frame.cpu_begin_ns, frame.cpu_end_ns));
        }
    }
    for pair in frames.windows(2) {
        if pair[1].cpu_begin_ns < pair[0].cpu_begin_ns {
            begins_backwards.push((pair[1].index, pair[0].cpu_begin_ns, pair[1].cpu_begin_ns));
        }
    }
    assert!(
        ends_before_begin.is_empty(),
        "{} frames end before they begin (index, begin, end), first: {:?}",
        ends_before_begin.len(),
        &ends_before_begin[..ends_before_begin.len().min(5)]
    );
    assert!(
        begins_backwards.is_empty(),
        "{} frames begin before the frame before them (index, previous begin, begin), \
         first: {:?}",
        begins_backwards.len(),
        &begins_backwards[..begins_backwards.len().min(5)]
    );
}

/// A usermark is the player saying "this felt bad": it does not vanish with the frame it
/// was made in when the realtime writer drops that frame. It rides, with its own time and
/// window, in the next frame written, so the capture and the live log hold every one.
#[test]
fn usermarks_made_in_dropped_frames_reach_the_capture_and_the_live_log() {
    let _serial = common::serial();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".framewise");
    let sink = GatedSink::new();
    let session = Session::builder()
        .writer_mode(WriterMode::Realtime)
        .queue_frames(8)
        .incident_dir(&dir)
        .start(Sink::seekable(sink.clone()))
        .unwrap();
    // The sink blocks every write: the writer is stuck on its first frame, the queue of 8
    // fills, and the frames closed after are dropped, each with a usermark in it.
    sink.set_shut(true);
    const MARKED: u64 = 100;
    let mut made = Vec::new();
    for frame in 0..MARKED {
        {
            let _work = scope!("work");
        }
        let window = Duration::from_millis(1 + frame);
        made.push(session.usermark_with_window(&format!("felt bad {frame}"), window));
        session.end_frame();
    }
    let dropped_while_stuck = session.frames_dropped();
    sink.set_shut(false);
    assert!(
        dropped_while_stuck > 0,
        "a stuck writer must make the realtime mode drop frames"
    );
    // Frames closed once the sink flows again are written: the marks carried ride in them.
    for _ in 0..3 {
        while session.frames_written() + session.frames_dropped() < session.frame_index() {
            std::thread::sleep(Duration::from_millis(1));
        }
        session.end_frame();
    }
    let report = session.stop().unwrap();
    assert_eq!(report.frames_dropped, dropped_while_stuck);
    assert_eq!(report.usermarks, made);

    // The capture holds every usermark once, with the time and window it was made with.
    let capture = read::from_bytes(sink.inner.bytes()).unwrap();
    let frames = common::frames(&capture);
    let mut in_capture: Vec<(String, u64, u64, u64)> = frames
        .iter()
        .flat_map(|f| {
            f.marks.iter().filter_map(move |m| match &m.kind {
                MarkKind::User { window_ns, note } => {
                    Some((note.clone(), m.at_ns, *window_ns, f.index))
                }
                MarkKind::Instant => None,
            })
        })
        .collect();
    assert_eq!(
        in_capture.len() as u64,
        MARKED,
        "{} of {MARKED} usermarks in the capture, {dropped_while_stuck} frames dropped",
        in_capture.len()
    );
    in_capture.sort_by_key(|(_, at_ns, _, _)| *at_ns);
    for (mark, (note, at_ns, window_ns, carried_by)) in made.iter().zip(&in_capture) {
        assert_eq!(
            (&mark.note, mark.at_ns, mark.window_ns),
            (note, *at_ns, *window_ns)
        );
        // In the frame it was made in, or, when that one was dropped, in a later one.
        assert!(*carried_by >= mark.frame, "{mark:?} in frame {carried_by}");
    }

    // The live log has a `usermark` record for each, and its session end counts them.
    let read = read_all(&dir.join("perf.jsonl")).unwrap();
    let mut notes: Vec<String> = read
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Usermark(m) => m.note.clone(),
            _ => None,
        })
        .collect();
    notes.sort();
    let mut expected: Vec<String> = made.iter().map(|m| m.note.clone()).collect();
    expected.sort();
    assert_eq!(notes, expected);
    let Some(Record::SessionEnd(end)) = read.records.last() else {
        panic!("session-end is the last record: {:#?}", read.records);
    };
    assert_eq!((end.written.usermark, end.dropped.usermark), (MARKED, 0));
}
