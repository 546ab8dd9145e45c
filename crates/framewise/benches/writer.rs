//! The writer's throughput: how fast the writer thread turns the threads' events into
//! written frames, in spans per second.
//!
//! ```text
//! cargo bench -p framewise --bench writer
//! ```
//!
//! A real session (lossless, writing a file in a temporary directory) records frames of 200
//! spans over 4 threads, 50 each: the game thread's under its `frame` scope, each of 3
//! workers' under a `job` scope (systems of up to 4 nested levels, 12 call sites, durations from
//! tens of ns to a few µs, one counter per system). What is timed is the writer thread's
//! busy time over the frames of an iteration ([`Session::writer_busy_ns`]: pairing begins
//! with ends into spans, building the frame, encoding it and writing it to the file, idle
//! waits excluded), so the figure is the writer's own, whatever the game threads cost and
//! however the machine schedules them. Criterion's throughput is spans per second of
//! writer time (≥ 40 M spans/s is a 200-span frame in ≤ 5 µs).

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]
#![expect(clippy::expect_used, reason = "a benchmark fails loudly")]

#[path = "support/workers.rs"]
mod workers;

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use framewise::{counter, scope, Session, WriterMode};
use workers::Workers;

/// Spans per frame over the 4 threads.
const SPANS_PER_FRAME: u64 = 200;
const WORKERS: usize = 3;

/// A little work whose length varies from span to span (tens of ns to a few µs).
#[inline(never)]
fn work(seed: &mut u64) {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let rounds = 4 << ((*seed >> 60) % 8);
    let mut x = *seed;
    for _ in 0..rounds {
        x = black_box(x.rotate_left(7) ^ 0x9e37_79b9);
    }
    black_box(x);
}

/// One system: 1 + 4 × (query ⊃ iter) = 9 spans, or 5 spans when `short`.
fn system(kind: u64, short: bool, seed: &mut u64) {
    let pairs = if short { 2 } else { 4 };
    macro_rules! named {
        ($name:literal) => {{
            let _system = scope!($name);
            system_body(pairs, seed)
        }};
    }
    match kind % 6 {
        0 => named!("physics"),
        1 => named!("animation"),
        2 => named!("ai"),
        3 => named!("audio"),
        4 => named!("culling"),
        _ => named!("particles"),
    }
}

/// A system's children: `pairs` × (query ⊃ iter), and a counter.
fn system_body(pairs: u32, seed: &mut u64) {
    for _ in 0..pairs {
        work(seed);
        let _query = scope!("query");
        work(seed);
        {
            let _iter = scope!("query.iter");
            work(seed);
        }
    }
    counter!("systems_run", 1);
}

/// A worker's share, 50 spans: `job` around 4 full systems, 2 short ones and 3 leaves
/// (1 + 4 × 9 + 2 × 5 + 3).
fn worker_share(seed: &mut u64) {
    let _job = scope!("job");
    for kind in 0..4 {
        system(kind + (*seed % 3), false, seed);
    }
    for kind in 0..2 {
        system(kind, true, seed);
    }
    for _ in 0..3 {
        let _leaf = scope!("job.flush");
        work(seed);
    }
}

/// The game thread's share, 50 spans: `frame` around 4 full systems, 2 short ones and 3
/// leaves.
fn game_share(seed: &mut u64) {
    let _frame = scope!("frame");
    for kind in 0..4 {
        system(kind + 1, false, seed);
    }
    for kind in 0..2 {
        system(kind + 3, true, seed);
    }
    for _ in 0..3 {
        let _leaf = scope!("frame.present");
        work(seed);
    }
}

/// One frame: the workers' shares and the game thread's, then frame close.
fn frame(workers: &Workers, session: &Session, seed: &mut u64) {
    workers.begin_frame();
    game_share(seed);
    workers.end_frame();
    session.end_frame();
}

/// Waits until the writer has written `frames` frames in all.
fn wait_written(session: &Session, frames: u64) {
    while session.frames_written() < frames {
        std::thread::sleep(Duration::from_micros(50));
    }
}

fn writer_benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(dir.path().join("writer.sgpt"))
        .expect("start a session");
    let workers = Workers::spawn(WORKERS, "bench-worker", |w| {
        let mut seed = w as u64 + 1;
        move || {
            worker_share(&mut seed);
            Duration::ZERO
        }
    });
    let mut seed = 7u64;
    let mut closed = 0u64;
    // Warm-up: every call site interned and defined, every buffer at its steady size.
    for _ in 0..300 {
        frame(&workers, &session, &mut seed);
        closed += 1;
    }
    wait_written(&session, closed);

    let mut group = c.benchmark_group("writer");
    group.throughput(Throughput::Elements(SPANS_PER_FRAME));
    group.bench_function("frame_of_200_spans_on_4_threads", |b| {
        b.iter_custom(|iters| {
            let busy_before = session.writer_busy_ns();
            for _ in 0..iters {
                frame(&workers, &session, &mut seed);
                closed += 1;
            }
            wait_written(&session, closed);
            Duration::from_nanos(session.writer_busy_ns() - busy_before)
        });
    });
    group.finish();

    workers.join();
    let report = session.stop().expect("stop the session");
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.spans_dropped, 0, "the bench must not measure drops");
    assert_eq!(report.frames_written, closed);
    let capture = framewise_format::read::open(dir.path().join("writer.sgpt")).expect("open");
    let frame = capture.read_frame(closed as usize / 2).expect("a frame");
    let spans: usize = frame.lanes.iter().map(|lane| lane.spans.len()).sum();
    assert_eq!(
        spans as u64, SPANS_PER_FRAME,
        "the frames are the shape described"
    );
}

criterion_group!(benches, writer_benches);
criterion_main!(benches);
