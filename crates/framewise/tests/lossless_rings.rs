//! Lossless mode behind a slow writer, whichever thread records and whichever closes: a
//! thread whose frame takes more than half its ring makes the next close wait for the
//! writer, so that the next frame cannot overflow the ring, though the closing thread's own
//! ring is empty.

use std::io::{self, Seek, SeekFrom, Write};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use framewise::{scope, Session, Sink, WriterMode};
use framewise_format::read;

use crate::common::{self, name, SharedCursor};

/// 20,000 spans are 40,000 events: 61 % of a thread's 65,536-event ring, so that two frames
/// of them overflow a ring the writer has not drained in between.
const SPANS: u64 = 20_000;
const FRAMES: usize = 10;

/// A sink whose every write takes 5 ms: the writer falls behind a game that records
/// [`SPANS`] spans a frame.
struct SleepingSink(SharedCursor);

impl Write for SleepingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        std::thread::sleep(Duration::from_millis(5));
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for SleepingSink {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.0.seek(pos)
    }
}

fn lossless_behind_a_slow_writer(cursor: &SharedCursor) -> Session {
    Session::builder()
        .writer_mode(WriterMode::Lossless)
        .incident_log(false)
        .start(Sink::seekable(SleepingSink(cursor.clone())))
        .unwrap()
}

/// Records [`SPANS`] spans on the calling thread; returns how many were recorded.
fn record_frame() -> u64 {
    let mut recorded = 0;
    for _ in 0..SPANS {
        let span = scope!("lossless.span");
        recorded += u64::from(span.is_recording());
    }
    recorded
}

/// Every span recorded was kept: none dropped in the report, and every frame's lane of the
/// thread named `thread` holds the frame's [`SPANS`] spans.
fn assert_every_span_kept(cursor: &SharedCursor, report: &framewise::Report, thread: &str) {
    assert_eq!(report.spans_dropped, 0, "{report:?}");
    assert!(report.is_complete(), "{report:?}");
    let capture = read::from_bytes(cursor.bytes()).unwrap();
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), FRAMES);
    for frame in &frames {
        let (kept, dropped) = frame
            .lanes
            .iter()
            .filter(|lane| name(&capture, lane.thread) == thread)
            .fold((0, 0), |(kept, dropped), lane| {
                (kept + lane.spans.len() as u64, dropped + lane.dropped_spans)
            });
        assert_eq!((kept, dropped), (SPANS, 0), "frame {}", frame.index);
    }
}

/// The thread that records is not the one that closes the frames: another thread closes each
/// frame once the recording thread has recorded it.
#[test]
fn lossless_frames_closed_by_another_thread_lose_no_span_behind_a_slow_writer() {
    let _serial = common::serial();
    let cursor = SharedCursor::default();
    let session = Arc::new(lossless_behind_a_slow_writer(&cursor));
    let (close, to_close) = mpsc::channel::<()>();
    let (closed, on_closed) = mpsc::channel::<()>();
    let closing = Arc::clone(&session);
    let closer = std::thread::Builder::new()
        .name("lossless-closer".into())
        .spawn(move || {
            for () in to_close {
                closing.end_frame();
                closed.send(()).unwrap();
            }
        })
        .unwrap();
    let report = std::thread::Builder::new()
        .name("lossless-recorder".into())
        .spawn(move || {
            for _ in 0..FRAMES {
                assert_eq!(record_frame(), SPANS);
                close.send(()).unwrap();
                on_closed.recv().unwrap();
            }
            drop(close);
            closer.join().unwrap();
            Arc::into_inner(session).unwrap().stop().unwrap()
        })
        .unwrap()
        .join()
        .unwrap();
    assert_every_span_kept(&cursor, &report, "lossless-recorder");
}

/// A worker records each frame's spans; the thread that closes the frames records nothing.
#[test]
fn lossless_frames_recorded_by_a_worker_lose_no_span_behind_a_slow_writer() {
    let _serial = common::serial();
    let cursor = SharedCursor::default();
    let session = lossless_behind_a_slow_writer(&cursor);
    let (work, to_work) = mpsc::channel::<()>();
    let (done, on_done) = mpsc::channel::<u64>();
    let worker = std::thread::Builder::new()
        .name("lossless-worker".into())
        .spawn(move || {
            for () in to_work {
                done.send(record_frame()).unwrap();
            }
        })
        .unwrap();
    for _ in 0..FRAMES {
        work.send(()).unwrap();
        assert_eq!(on_done.recv().unwrap(), SPANS);
        session.end_frame();
    }
    drop(work);
    worker.join().unwrap();
    let report = session.stop().unwrap();
    assert_every_span_kept(&cursor, &report, "lossless-worker");
}
