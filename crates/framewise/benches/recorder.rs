//! The recorder's overhead, side by side with its peers in one run.
//!
//! ```text
//! cargo bench -p framewise --bench recorder
//! ```
//!
//! * `scope/*`: one scope's begin + end, per scope. Every profiler that buffers is drained
//!   between batches of 1,000 scopes (framewise: `end_frame`; puffin: `new_frame`) outside
//!   the timed region, so each is measured in its steady state rather than with a full
//!   buffer. Tracy runs with no viewer attached, so it keeps every zone in memory (its
//!   `ondemand` feature would record nothing); its group runs briefly to bound that memory.
//! * `scope/tracy_client_drained` replaces `scope/tracy_client_no_viewer` when
//!   `FRAMEWISE_BENCH_TRACY_CAPTURE` names a Tracy 0.14.0 `capture` binary: the bench starts
//!   it against this process's Tracy client on 127.0.0.1, times Tracy while it drains the
//!   client, then stops it with SIGINT and asserts it received and saved every zone.
//! * `scope_off/framewise`: `scope!` with no session running.
//! * `frame_close/*`: `end_frame` on the game thread for a frame of 200 spans over 4 threads,
//!   and the writer thread's encode of such a frame, for the record.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

#[path = "support/tracy_capture.rs"]
mod tracy_capture;

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use framewise::{scope, Session, Sink, WriterMode};

/// Scopes per timed batch; the recorder is drained between batches, untimed.
const BATCH: u64 = 1000;

/// Times `iters` scopes made by `scope_once`, in batches, calling `drain` untimed between
/// batches.
fn timed_in_batches(iters: u64, mut scope_once: impl FnMut(), mut drain: impl FnMut()) -> Duration {
    let mut total = Duration::ZERO;
    let mut remaining = iters;
    while remaining > 0 {
        let batch = remaining.min(BATCH);
        let started = Instant::now();
        for _ in 0..batch {
            scope_once();
        }
        total += started.elapsed();
        remaining -= batch;
        drain();
    }
    total
}

/// A `tracing` subscriber that enables everything and does nothing: the cost of a span's
/// machinery with no work behind it.
struct NoopSubscriber;

impl tracing::Subscriber for NoopSubscriber {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

fn scope_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("scope");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));

    {
        let session = Session::builder()
            .writer_mode(WriterMode::Lossless)
            .start(Sink::stream(std::io::sink()))
            .expect("start a session");
        group.bench_function("framewise", |b| {
            b.iter_custom(|iters| {
                timed_in_batches(
                    iters,
                    || {
                        let _scope = scope!("bench");
                    },
                    || {
                        session.end_frame();
                    },
                )
            })
        });
        let report = session.stop().expect("stop the session");
        assert_eq!(
            report.spans_dropped, 0,
            "the benchmark must not measure the drop path"
        );
    }

    puffin::set_scopes_on(true);
    group.bench_function("puffin", |b| {
        b.iter_custom(|iters| {
            timed_in_batches(
                iters,
                || {
                    puffin::profile_scope!("bench");
                },
                || puffin::GlobalProfiler::lock().new_frame(),
            )
        })
    });
    puffin::set_scopes_on(false);

    tracing::dispatcher::with_default(&tracing::Dispatch::new(NoopSubscriber), || {
        group.bench_function("tracing_noop_subscriber", |b| {
            b.iter_custom(|iters| {
                timed_in_batches(
                    iters,
                    || {
                        let _span = tracing::info_span!("bench").entered();
                    },
                    || {},
                )
            })
        });
    });

    group.bench_function("two_instant_now", |b| {
        b.iter_custom(|iters| {
            timed_in_batches(
                iters,
                || {
                    black_box(Instant::now());
                    black_box(Instant::now());
                },
                || {},
            )
        })
    });
    // The floor under any timestamped scope on this machine: two reads of the TSC.
    #[cfg(target_arch = "x86_64")]
    group.bench_function("two_rdtsc", |b| {
        b.iter_custom(|iters| {
            timed_in_batches(
                iters,
                || {
                    // SAFETY: `rdtsc` has no preconditions on x86_64.
                    #[allow(
                        unused_unsafe,
                        reason = "`_rdtsc` is an unsafe fn on some toolchains only"
                    )]
                    unsafe {
                        black_box(core::arch::x86_64::_rdtsc());
                        black_box(core::arch::x86_64::_rdtsc());
                    }
                },
                || {},
            )
        })
    });
    group.finish();

    // Tracy with no viewer keeps ~64 bytes per zone forever: a short run bounds the memory.
    // With a capture draining it, the capture keeps them instead; the group stays the same.
    let mut tracy = c.benchmark_group("scope");
    tracy.warm_up_time(Duration::from_millis(500));
    tracy.measurement_time(Duration::from_secs(1));
    tracy.sample_size(20);
    let _client = tracy_client::Client::start();
    let capture = tracy_capture::from_env();
    let tracy_name = if capture.is_some() {
        "tracy_client_drained"
    } else {
        "tracy_client_no_viewer"
    };
    let mut tracy_zones_made = 0_u64;
    tracy.bench_function(tracy_name, |b| {
        b.iter_custom(|iters| {
            tracy_zones_made += iters;
            timed_in_batches(
                iters,
                || {
                    let _span = tracy_client::span!("bench");
                },
                || {},
            )
        })
    });
    tracy.finish();
    if let Some(capture) = capture {
        capture.stop_and_check(tracy_zones_made);
    }

    let mut off = c.benchmark_group("scope_off");
    off.warm_up_time(Duration::from_secs(1));
    off.measurement_time(Duration::from_secs(3));
    assert!(!framewise::is_recording());
    off.bench_function("framewise", |b| {
        b.iter(|| {
            let _scope = scope!("bench");
        })
    });
    off.finish();
}

/// 50 spans on the calling thread: 10 systems, each with 4 nested children.
fn record_50_spans() {
    for _ in 0..10 {
        let _system = scope!("system");
        for _ in 0..2 {
            let _a = scope!("system.query");
            let _b = scope!("system.query.iter");
        }
    }
}

fn frame_close_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame_close");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));

    // Realtime mode: the game thread never waits for the writer, so this measures frame
    // close itself (frames the writer could not keep up with are dropped and reported).
    let session = Session::builder()
        .writer_mode(WriterMode::Realtime)
        .start(Sink::stream(std::io::sink()))
        .expect("start a session");
    const WORKERS: usize = 3;
    let start = Arc::new(Barrier::new(WORKERS + 1));
    let done = Arc::new(Barrier::new(WORKERS + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (start, done, stop) = (Arc::clone(&start), Arc::clone(&done), Arc::clone(&stop));
            std::thread::Builder::new()
                .name(format!("bench-worker-{w}"))
                .spawn(move || loop {
                    start.wait();
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    record_50_spans();
                    done.wait();
                })
                .expect("spawn a worker")
        })
        .collect();
    group.bench_function("200_spans_4_threads", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                start.wait();
                record_50_spans();
                done.wait();
                let started = Instant::now();
                session.end_frame();
                total += started.elapsed();
            }
            total
        })
    });
    stop.store(true, Ordering::Relaxed);
    start.wait();
    for worker in workers {
        let _ = worker.join();
    }
    let report = session.stop().expect("stop the session");
    eprintln!(
        "frame_close: {} frames closed, {} written, {} dropped by the realtime writer, {} spans dropped",
        report.frames_closed, report.frames_written, report.frames_dropped, report.spans_dropped
    );

    group.bench_function("encode_200_spans_writer_thread", |b| {
        use framewise_format::model::{CpuSpan, Frame, Lane, Symbol, SymbolKind, SymbolTable};
        let mut symbols = SymbolTable::new();
        for id in 0..8 {
            symbols.insert(Symbol {
                id,
                kind: if id < 4 {
                    SymbolKind::Thread
                } else {
                    SymbolKind::Scope {
                        file: "bench.rs".into(),
                        line: id,
                    }
                },
                name: format!("symbol{id}"),
            });
        }
        let lane = |thread: u32| {
            let mut spans = Vec::new();
            let mut at_ns = 1_000 * u64::from(thread);
            for _ in 0..10 {
                let system_start = at_ns;
                let mut children = Vec::new();
                for _ in 0..2 {
                    children.push(CpuSpan {
                        scope: 5,
                        depth: 1,
                        start_ns: at_ns + 10,
                        end_ns: at_ns + 400,
                    });
                    children.push(CpuSpan {
                        scope: 6,
                        depth: 2,
                        start_ns: at_ns + 20,
                        end_ns: at_ns + 390,
                    });
                    at_ns += 400;
                }
                spans.push(CpuSpan {
                    scope: 4,
                    depth: 0,
                    start_ns: system_start,
                    end_ns: at_ns + 50,
                });
                spans.extend(children);
                at_ns += 100;
            }
            Lane {
                thread,
                spans,
                dropped_spans: 0,
            }
        };
        let frame = Frame {
            index: 0,
            cpu_begin_ns: 0,
            cpu_end_ns: 16_000_000,
            lanes: (0..4).map(lane).collect(),
            ..Frame::default()
        };
        let mut writer =
            framewise_format::Writer::new(std::io::sink(), &Default::default(), &symbols)
                .expect("a writer over a sink");
        b.iter(|| {
            writer
                .write_frame(black_box(&frame), &symbols)
                .expect("encode")
        });
    });
    group.finish();
}

criterion_group!(benches, scope_benches, frame_close_benches);
criterion_main!(benches);
