//! The background writer: byte budget warning, a writer that falls behind (realtime drops,
//! lossless waits), I/O errors surfaced.

use std::io::{self, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use framewise::{scope, FrameOutcome, Session, SessionError, Sink, Warning, WriterMode};
use framewise_format::read;

use crate::common::{self, GatedSink, SharedCursor};

fn record_scopes(count: usize) {
    for _ in 0..count {
        let _scope = scope!("busy");
    }
}

#[test]
fn the_byte_budget_warns_once_naming_level_and_rate_and_recording_goes_on() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("budget");
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let hook = Arc::clone(&warnings);
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .byte_budget(2048)
        .on_warning(move |w| hook.lock().unwrap().push(w.to_string()))
        .start(path.as_path())
        .unwrap();
    for _ in 0..50 {
        record_scopes(50);
        session.end_frame();
    }
    let report = session.stop().unwrap();
    assert_eq!(
        report.frames_written, 50,
        "the budget never stops the recording"
    );
    assert!(report.bytes_written > 2048);
    let warnings = warnings.lock().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let text = &warnings[0];
    assert!(text.contains("level timing (0)"), "{text}");
    assert!(
        text.contains("MiB/s") && text.contains("bytes/frame"),
        "{text}"
    );
    assert_eq!(report.warnings.len(), 1);
    match &report.warnings[0] {
        Warning::ByteBudgetExceeded {
            budget_bytes,
            bytes_written,
            bytes_per_second,
            bytes_per_frame,
            ..
        } => {
            assert_eq!(*budget_bytes, 2048);
            assert!(*bytes_written > 2048);
            assert!(*bytes_per_second > 0.0 && *bytes_per_frame > 0.0);
        }
        other => panic!("unexpected warning {other:?}"),
    }
}

#[test]
fn realtime_mode_queues_500_frames_behind_a_stuck_writer_by_default_and_drops_none() {
    let _serial = common::serial();
    let sink = GatedSink::new();
    let session = Session::builder()
        .writer_mode(WriterMode::Realtime)
        .start(Sink::seekable(sink.clone()))
        .unwrap();
    // The sink blocks every write: the writer is stuck on its first frame while the game
    // closes 500 more (half a second of a 1,000 frames/s game), which the default queue of
    // 512 frames holds (128 would drop about 370 of them); 20 scopes a frame stay well
    // inside the thread's ring.
    sink.set_shut(true);
    const FRAMES: u64 = 500;
    for _ in 0..FRAMES {
        record_scopes(20);
        session.end_frame();
    }
    let dropped_while_stuck = session.frames_dropped();
    sink.set_shut(false);
    assert_eq!(
        dropped_while_stuck, 0,
        "the default realtime queue dropped frames"
    );
    let report = session.stop().unwrap();
    assert_eq!(report.frames_closed, FRAMES);
    assert_eq!(report.frames_dropped, 0);
    assert_eq!(report.spans_dropped, 0);
    assert_eq!(report.frames_written, FRAMES);
}

#[test]
fn realtime_mode_drops_and_counts_whole_frames_and_never_blocks_the_game() {
    let _serial = common::serial();
    let sink = GatedSink::new();
    let session = Arc::new(
        Session::builder()
            .writer_mode(WriterMode::Realtime)
            .queue_frames(8)
            .start(Sink::seekable(sink.clone()))
            .unwrap(),
    );
    // The sink now blocks every write: the writer thread is stuck on its first frame.
    sink.set_shut(true);
    const FRAMES: u64 = 300;
    let (done_tx, done_rx) = mpsc::channel();
    let game = {
        let session = Arc::clone(&session);
        std::thread::Builder::new()
            .name("game".into())
            .spawn(move || {
                for _ in 0..FRAMES {
                    record_scopes(20);
                    session.end_frame();
                }
                done_tx.send(()).unwrap();
            })
            .unwrap()
    };
    // The game finishes all its frames while the sink cannot accept a single byte: had any
    // frame close waited for the writer, this would time out.
    let finished = done_rx.recv_timeout(Duration::from_secs(60));
    sink.set_shut(false);
    finished.expect("the game thread was blocked by a stuck writer");
    game.join().unwrap();
    let dropped_while_stuck = session.frames_dropped();
    assert!(
        dropped_while_stuck > 0,
        "a stuck writer must make the realtime mode drop frames"
    );
    // A few more frames once the sink flows again carry the drop count into the capture.
    for _ in 0..3 {
        while session.frames_written() + session.frames_dropped() < session.frame_index() {
            std::thread::sleep(Duration::from_millis(1));
        }
        session.end_frame();
    }
    let report = Arc::into_inner(session).unwrap().stop().unwrap();
    assert_eq!(report.frames_closed, FRAMES + 3);
    assert_eq!(report.frames_dropped, dropped_while_stuck);
    assert_eq!(
        report.frames_written + report.frames_dropped,
        report.frames_closed
    );
    assert!(
        !report.is_complete(),
        "dropped frames make a capture incomplete"
    );

    let capture = read::from_bytes(sink.inner.bytes()).unwrap();
    let frames = common::frames(&capture);
    assert_eq!(frames.len() as u64, report.frames_written);
    let counted: u64 = frames.iter().map(|f| f.dropped_frames_before).sum();
    assert_eq!(
        counted, report.frames_dropped,
        "every drop is written into the next frame"
    );
    for pair in frames.windows(2) {
        assert_eq!(
            pair[1].index,
            pair[0].index + 1 + pair[1].dropped_frames_before
        );
    }
    // A dropped frame's spans are dropped with it: they never leak into the next frame
    // written (the writer gathers after the drop, and discards the dropped frames' events).
    for frame in &frames {
        let spans: usize = frame.lanes.iter().map(|lane| lane.spans.len()).sum();
        let own = if frame.index < FRAMES { 20 } else { 0 };
        assert_eq!(spans, own, "frame {} holds only its own spans", frame.index);
    }
}

/// A sink that takes this long per write.
struct SlowSink(SharedCursor, Duration);

impl Write for SlowSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        std::thread::sleep(self.1);
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for SlowSink {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.0.seek(pos)
    }
}

#[test]
fn lossless_mode_waits_for_a_slow_sink_and_loses_nothing() {
    let _serial = common::serial();
    let cursor = SharedCursor::default();
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .queue_frames(8)
        .start(Sink::seekable(SlowSink(
            cursor.clone(),
            Duration::from_millis(1),
        )))
        .unwrap();
    for _ in 0..100 {
        record_scopes(20);
        session.end_frame();
    }
    let report = session.stop().unwrap();
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.frames_written, 100);
    let capture = read::from_bytes(cursor.bytes()).unwrap();
    assert_eq!(common::frames(&capture).len(), 100);
}

/// The writer gathers each frame's events from the threads' rings after the game closed it;
/// a frame that fills more than half its ring must not let the next one overflow the ring
/// while the writer is still behind: in lossless mode the game waits instead.
#[test]
fn lossless_frames_filling_half_the_ring_lose_no_span_behind_a_slow_writer() {
    let _serial = common::serial();
    let cursor = SharedCursor::default();
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .queue_frames(8)
        .start(Sink::seekable(SlowSink(
            cursor.clone(),
            Duration::from_millis(20),
        )))
        .unwrap();
    // 20,000 spans are 40,000 events: 61 % of a thread's 65,536-event ring.
    const SPANS: usize = 20_000;
    const FRAMES: usize = 6;
    for _ in 0..FRAMES {
        record_scopes(SPANS);
        session.end_frame();
    }
    let report = session.stop().unwrap();
    assert_eq!(report.spans_dropped, 0, "{report:?}");
    assert!(report.is_complete(), "{report:?}");
    let capture = read::from_bytes(cursor.bytes()).unwrap();
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), FRAMES);
    for frame in &frames {
        let spans: usize = frame.lanes.iter().map(|lane| lane.spans.len()).sum();
        assert_eq!(spans, SPANS, "frame {}", frame.index);
    }
}

/// A sink that accepts `limit` bytes and then fails every write with `kind`.
struct FailingSink {
    written: Arc<AtomicUsize>,
    limit: usize,
    kind: io::ErrorKind,
}

impl Write for FailingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written.load(Ordering::Relaxed) + buf.len() > self.limit {
            return Err(io::Error::new(self.kind, "simulated failure"));
        }
        self.written.fetch_add(buf.len(), Ordering::Relaxed);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn io_error_is_surfaced(kind: io::ErrorKind) {
    let _serial = common::serial();
    let written = Arc::new(AtomicUsize::new(0));
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(Sink::stream(FailingSink {
            written: Arc::clone(&written),
            limit: 4096,
            kind,
        }))
        .unwrap();
    let mut waited = 0;
    while session.error().is_none() {
        record_scopes(30);
        assert_eq!(
            session.end_frame(),
            FrameOutcome::Recording,
            "the game goes on"
        );
        waited += 1;
        assert!(waited < 100_000, "the failure was never reported");
        if waited % 100 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    // After the failure, frames still close and are counted lost.
    for _ in 0..10 {
        record_scopes(30);
        session.end_frame();
    }
    let error = session.error().unwrap();
    let stopped = session.stop().expect_err("stop reports the error");
    assert_eq!(stopped.error, error);
    match &stopped.error {
        SessionError::Io {
            kind: found,
            bytes_written,
            ..
        } => {
            assert_eq!(*found, kind);
            assert!(*bytes_written <= 4096);
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
    let report = &stopped.report;
    assert!(report.frames_lost_to_error >= 10, "{report:?}");
    assert_eq!(
        report.frames_written + report.frames_lost_to_error,
        report.frames_closed
    );
    assert!(!report.closed && !report.is_complete());
    assert!(written.load(Ordering::Relaxed) <= 4096);
}

#[test]
fn a_full_disk_is_reported_not_panicked() {
    io_error_is_surfaced(io::ErrorKind::StorageFull);
}

#[test]
fn a_closed_pipe_is_reported_not_panicked() {
    io_error_is_surfaced(io::ErrorKind::BrokenPipe);
}

#[test]
fn a_lossless_game_waiting_on_a_failed_writer_is_released() {
    let _serial = common::serial();
    let failing = Arc::new(AtomicBool::new(false));
    struct Switch(Arc<AtomicBool>);
    impl Write for Switch {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.0.load(Ordering::Relaxed) {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "full"));
            }
            std::thread::sleep(Duration::from_millis(2));
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .queue_frames(8)
        .start(Sink::stream(Switch(Arc::clone(&failing))))
        .unwrap();
    for frame in 0..200 {
        if frame == 50 {
            failing.store(true, Ordering::Relaxed);
        }
        record_scopes(5);
        session.end_frame();
    }
    let stopped = session.stop().expect_err("the sink failed");
    assert_eq!(stopped.report.frames_closed, 200);
}

#[test]
fn a_panicking_callback_fails_the_session_instead_of_hanging_the_game() {
    let _serial = common::serial();
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .queue_frames(8)
        .on_frame_written(|written| {
            if written.index == 3 {
                panic!("a host callback bug");
            }
        })
        .start(Sink::stream(io::sink()))
        .unwrap();
    for _ in 0..100 {
        record_scopes(5);
        session.end_frame(); // lossless: would wait forever on a dead writer
    }
    let stopped = session.stop().expect_err("the writer died");
    assert_eq!(stopped.error, SessionError::WriterPanicked);
    // Frame 3 and those before it were written; the callback runs once the sink is flushed,
    // so frames written in the same flush (after frame 3, before the panic) count as
    // written too.
    let written = stopped.report.frames_written;
    assert!((4..100).contains(&written), "{written} frames written");
    assert_eq!(stopped.report.frames_closed, 100);
    assert_eq!(
        stopped.report.frames_lost_to_error,
        100 - written,
        "every other frame is accounted for"
    );
}

#[test]
fn a_frame_is_reported_written_only_once_the_file_holds_it() {
    // The writer flushes once per backlog rather than once per frame; the callback still
    // only hears of a frame whose bytes the OS has (a killed game keeps every frame it was
    // told of). The game closes frames as fast as it can, so the writer works through a
    // backlog.
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("flushed");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hook_seen = Arc::clone(&seen);
    let hook_path = path.clone();
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .on_frame_written(move |written| {
            let on_disk = std::fs::metadata(&hook_path).map_or(0, |m| m.len());
            hook_seen
                .lock()
                .unwrap()
                .push((written.index, written.bytes_written, on_disk));
        })
        .start(path.as_path())
        .unwrap();
    for _ in 0..3000 {
        record_scopes(20);
        session.end_frame();
    }
    let report = session.stop().unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3000);
    assert_eq!(report.frames_written, 3000);
    for (i, &(index, bytes_written, on_disk)) in seen.iter().enumerate() {
        assert_eq!(index, i as u64, "in order, none missed");
        assert!(
            on_disk >= bytes_written,
            "frame {index} reported at {bytes_written} bytes with {on_disk} in the file"
        );
    }
}

/// A FIFO is written as a stream, never sought: the reader at the other end gets every
/// frame and a directory whose record is whole (its CRC computed before it is sent, as a
/// stream's is), and stop reports no error where it failed to seek. Here the program opens it
/// and hands it over as a stream (a FIFO's path whose reader is there streams the same way:
/// `capture_path.rs`).
#[test]
fn a_fifo_is_recorded_as_a_stream_with_a_whole_directory() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let reader_path = path.clone();
    let reader = std::thread::spawn(move || std::fs::read(reader_path).expect("read the fifo"));
    // Opening for writing waits for the reader, as `cat > FIFO` does.
    let fifo = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open the fifo");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(Sink::stream(fifo))
        .unwrap();
    for _ in 0..20 {
        record_scopes(10);
        session.end_frame();
    }
    let report = session.stop().expect("a fifo stops cleanly");
    assert_eq!(report.frames_written, 20);
    let bytes = reader.join().unwrap();
    let capture = read::from_bytes(bytes).expect("the stream opens");
    // Read by a scan, as every stream is (its header is never patched CLOSED): every record
    // intact, the directory's included.
    assert!(capture.defects().is_empty(), "{:?}", capture.defects());
    assert_eq!(common::frames(&capture).len(), 20);
}
