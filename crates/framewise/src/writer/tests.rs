//! The writer thread on a frame the capture format refuses.

use std::io::Write;

use framewise_format::model::{CaptureLevel, CpuSpan, Lane, Meta};

use super::*;
use crate::intern::{intern_scope, intern_thread};
use crate::sink::OpenSink;
use crate::thread::span;

/// A sink the test reads back while the writer owns a clone.
#[derive(Clone, Default)]
struct Bytes(Arc<Mutex<Vec<u8>>>);

impl Write for Bytes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn batch(index: u64, lanes: Vec<Lane>) -> FrameBatch {
    let mut batch = FrameBatch::default();
    batch.frame.index = index;
    batch.frame.cpu_begin_ns = index * 100;
    batch.frame.cpu_end_ns = index * 100 + 100;
    batch.lanes_used = lanes.len();
    batch.frame.lanes = lanes;
    batch
}

#[test]
fn a_frame_the_format_refuses_is_repaired_or_dropped_whole_and_the_session_goes_on() {
    let thread = intern_thread("writer-test");
    let scope = intern_scope("writer-test.scope", file!(), line!());
    let sink = Bytes::default();
    let writer = Writer::new(
        OpenSink::stream(Box::new(sink.clone())),
        &Meta::default(),
        &SymbolTable::default(),
    )
    .expect("writer");
    let shared = Arc::new(Shared::new(WriterMode::Lossless, 1 << 20, 4));
    let config = WriterConfig {
        clock: SessionClock::identity(),
        gpu_wait_frames: 0,
        byte_budget: u64::MAX,
        level: CaptureLevel::Timing,
        frame_budget_ns: None,
        started: Instant::now(),
        on_warning: None,
        on_frame_written: None,
        incidents: None,
    };
    let mut writer_thread = WriterThread::new(writer, SymbolTable::default(), 0, config, shared);
    let lane = |spans: Vec<CpuSpan>| Lane {
        thread,
        dropped_spans: 0,
        spans,
    };
    // Frame 0: a span of no length where a shallower one ends, two levels below it (its
    // ancestors open): written without it, counted dropped.
    writer_thread.write_frame(&mut batch(
        0,
        vec![lane(vec![span(scope, 0, 10, 20), span(scope, 2, 20, 20)])],
    ));
    // Frame 1: a span past its parent's end (no recorder makes it): dropped whole.
    writer_thread.write_frame(&mut batch(
        1,
        vec![lane(vec![
            span(scope, 0, 110, 120),
            span(scope, 1, 115, 130),
        ])],
    ));
    // Frame 2: well formed, written, saying a frame was dropped before it.
    writer_thread.write_frame(&mut batch(
        2,
        vec![lane(vec![
            span(scope, 0, 210, 220),
            span(scope, 1, 212, 218),
        ])],
    ));
    let shared = Arc::clone(&writer_thread.shared);
    writer_thread.finish();
    assert!(!shared.has_failed(), "{:?}", shared.error());
    assert_eq!(shared.frames_written.load(Ordering::Relaxed), 2);
    assert_eq!(shared.frames_dropped.load(Ordering::Relaxed), 1);
    assert_eq!(shared.frames_lost_to_error.load(Ordering::Relaxed), 0);
    assert_eq!(shared.spans_dropped.load(Ordering::Relaxed), 1);

    let bytes = lock(&sink.0).clone();
    let capture = framewise_format::read::from_bytes(bytes).expect("capture");
    assert!(capture.defects().is_empty(), "{:?}", capture.defects());
    let frames: Vec<_> = capture.frames().map(|f| f.expect("frame")).collect();
    let got: Vec<_> = frames
        .iter()
        .map(|f| (f.index, f.dropped_frames_before, f.lanes[0].dropped_spans))
        .collect();
    assert_eq!(got, vec![(0, 0, 1), (2, 1, 0)]);
    assert_eq!(frames[0].lanes[0].spans, vec![span(scope, 0, 10, 20)]);
}
