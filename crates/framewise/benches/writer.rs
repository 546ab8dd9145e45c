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

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use framewise::{counter, scope, Session, WriterMode};

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

/// One system: 1 + 4 × (query ⊃ iter) = 9 spans, up to depth `base + 2`, or 5 spans when
/// `short`.
fn system(kind: u64, short: bool, seed: &mut u64) {
    let pairs = if short { 2 } else { 4 };
    macro_rules! body {
        () => {{
            for _ in 0..pairs {
                work(seed);
                let _q = scope!("query");
                work(seed);
                {
                    let _i = scope!("query.iter");
                    work(seed);
                }
            }
            counter!("systems_run", 1);
        }};
    }
    match kind % 6 {
        0 => {
            let _s = scope!("physics");
            body!()
        }
        1 => {
            let _s = scope!("animation");
            body!()
        }
        2 => {
            let _s = scope!("ai");
            body!()
        }
        3 => {
            let _s = scope!("audio");
            body!()
        }
        4 => {
            let _s = scope!("culling");
            body!()
        }
        _ => {
            let _s = scope!("particles");
            body!()
        }
    }
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

/// Worker threads that record their share of each frame between two barriers.
struct Workers {
    start: Arc<Barrier>,
    done: Arc<Barrier>,
    stop: Arc<AtomicBool>,
    handles: Vec<std::thread::JoinHandle<()>>,
}

impl Workers {
    fn spawn() -> Self {
        let start = Arc::new(Barrier::new(WORKERS + 1));
        let done = Arc::new(Barrier::new(WORKERS + 1));
        let stop = Arc::new(AtomicBool::new(false));
        let handles = (0..WORKERS)
            .map(|w| {
                let (start, done, stop) =
                    (Arc::clone(&start), Arc::clone(&done), Arc::clone(&stop));
                std::thread::Builder::new()
                    .name(format!("bench-worker-{w}"))
                    .spawn(move || {
                        let mut seed = w as u64 + 1;
                        loop {
                            start.wait();
                            if stop.load(Ordering::Relaxed) {
                                return;
                            }
                            worker_share(&mut seed);
                            done.wait();
                        }
                    })
                    .expect("spawn a worker")
            })
            .collect();
        Self {
            start,
            done,
            stop,
            handles,
        }
    }

    fn frame(&self, session: &Session, seed: &mut u64) {
        self.start.wait();
        game_share(seed);
        self.done.wait();
        session.end_frame();
    }

    fn join(self) {
        self.stop.store(true, Ordering::Relaxed);
        self.start.wait();
        for handle in self.handles {
            handle.join().expect("a worker ends");
        }
    }
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
    let workers = Workers::spawn();
    let mut seed = 7u64;
    let mut closed = 0u64;
    // Warm-up: every call site interned and defined, every buffer at its steady size.
    for _ in 0..300 {
        workers.frame(&session, &mut seed);
        closed += 1;
    }
    wait_written(&session, closed);

    let mut group = c.benchmark_group("writer");
    group.throughput(Throughput::Elements(SPANS_PER_FRAME));
    group.bench_function("frame_of_200_spans_on_4_threads", |b| {
        b.iter_custom(|iters| {
            let busy_before = session.writer_busy_ns();
            for _ in 0..iters {
                workers.frame(&session, &mut seed);
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
