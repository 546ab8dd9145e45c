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

use std::hint::black_box;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
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

/// Names a Tracy `capture` binary (protocol 82, Tracy 0.14.0, as bundled by
/// `tracy-client-sys` 0.29); when set, Tracy is measured while that capture drains it.
const TRACY_CAPTURE_ENV: &str = "FRAMEWISE_BENCH_TRACY_CAPTURE";

/// How long the capture may take to connect, and to save its trace once told to stop.
const TRACY_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
const TRACY_SAVE_TIMEOUT: Duration = Duration::from_secs(180);

/// The TCP port this process's Tracy client listens on. The client starts when the process
/// loads, before `main`, and binds `TRACY_PORT` if that is set, or else the first free port of
/// 8086..=8105; so the port is found among this process's own listening sockets, which also
/// keeps the capture from draining another process's client.
fn tracy_client_port() -> Option<u16> {
    let tracy_port = std::env::var("TRACY_PORT")
        .ok()
        .and_then(|port| port.parse::<u16>().ok());
    let own_socket_inodes: Vec<u64> = std::fs::read_dir("/proc/self/fd")
        .ok()?
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_str()?;
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect();
    ["/proc/self/net/tcp6", "/proc/self/net/tcp"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|text| {
            text.lines()
                .skip(1)
                .filter_map(|line| {
                    // Fields: sl, local "ADDR:PORT" in hex, remote, state ("0A" is LISTEN),
                    // tx:rx queues, timer, retransmits, uid, timeout, inode.
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    let inode: u64 = fields.get(9)?.parse().ok()?;
                    if fields.get(3) != Some(&"0A") || !own_socket_inodes.contains(&inode) {
                        return None;
                    }
                    u16::from_str_radix(fields.get(1)?.rsplit(':').next()?, 16).ok()
                })
                .collect::<Vec<_>>()
        })
        .find(|port| tracy_port.map_or((8086..=8105).contains(port), |tracy| *port == tracy))
}

/// A Tracy `capture` process connected to this process's Tracy client over loopback,
/// writing what it drains to a temporary file. Dropping it kills the capture if it still runs,
/// so a failed benchmark leaves no capture behind.
struct TracyCapture {
    child: Child,
    /// The capture's stdout, read to its end by a named thread (it prints its totals there).
    stdout: Option<std::thread::JoinHandle<String>>,
    trace_path: PathBuf,
    _trace_dir: tempfile::TempDir,
}

impl TracyCapture {
    /// Starts `binary` against this process's Tracy client and returns once the client reports
    /// it connected; panics, never hangs, if that takes longer than `TRACY_CONNECT_TIMEOUT`.
    fn connect(binary: &Path) -> Self {
        let started = Instant::now();
        let port = loop {
            if let Some(port) = tracy_client_port() {
                break port;
            }
            assert!(
                started.elapsed() < TRACY_CONNECT_TIMEOUT,
                "{TRACY_CAPTURE_ENV}: found no listening Tracy client port in this process"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        let trace_dir = tempfile::tempdir().expect("a temporary directory for the Tracy trace");
        let trace_path = trace_dir.path().join("drained.tracy");
        let mut child = Command::new(binary)
            .arg("-o")
            .arg(&trace_path)
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "{TRACY_CAPTURE_ENV}: cannot start {}: {error}",
                    binary.display()
                )
            });
        let mut pipe = child.stdout.take().expect("the capture's piped stdout");
        let stdout = std::thread::Builder::new()
            .name("tracy-capture-stdout".into())
            .spawn(move || {
                let mut text = String::new();
                let _ = pipe.read_to_string(&mut text);
                text
            })
            .expect("spawn the capture's stdout reader");
        let mut capture = Self {
            child,
            stdout: Some(stdout),
            trace_path,
            _trace_dir: trace_dir,
        };
        while !tracy_client::Client::is_connected() {
            if let Ok(Some(status)) = capture.child.try_wait() {
                panic!(
                    "{TRACY_CAPTURE_ENV}: the Tracy capture exited ({status}) before connecting; \
                     its output:\n{}",
                    capture.output()
                );
            }
            assert!(
                started.elapsed() < TRACY_CONNECT_TIMEOUT,
                "{TRACY_CAPTURE_ENV}: the Tracy capture did not connect to 127.0.0.1:{port} \
                 within {TRACY_CONNECT_TIMEOUT:?}; is it Tracy 0.14.0's (protocol 82)?"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        eprintln!(
            "tracy capture: {} connected to 127.0.0.1:{port} after {} ms",
            binary.display(),
            started.elapsed().as_millis()
        );
        capture
    }

    /// What the capture printed, once it has exited.
    fn output(&mut self) -> String {
        self.stdout
            .take()
            .and_then(|reader| reader.join().ok())
            .unwrap_or_default()
    }

    /// Stops the capture the way Ctrl-C does (it disconnects, then saves its trace), waits for
    /// it, and asserts it received every one of the `zones_made` zones and wrote a trace.
    fn stop_and_check(mut self, zones_made: u64) {
        // Let the client's queue empty into the capture before it disconnects.
        std::thread::sleep(Duration::from_secs(1));
        let pid = self.child.id().to_string();
        // The capture, not this process, now holds every zone: its peak memory, for the record.
        let capture_peak_memory = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|status| {
                let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
                Some(line.trim_start_matches("VmHWM:").trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".to_owned());
        let signalled = Command::new("kill").args(["-INT", &pid]).status();
        assert!(
            matches!(signalled, Ok(status) if status.success()),
            "send SIGINT to the Tracy capture (pid {pid}): {signalled:?}"
        );
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for the Tracy capture") {
                break status;
            }
            assert!(
                started.elapsed() < TRACY_SAVE_TIMEOUT,
                "the Tracy capture did not save and exit within {TRACY_SAVE_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let stdout = self.output();
        let zones_received = stdout
            .lines()
            .find_map(|line| line.strip_prefix("Zones: "))
            .map(|count| {
                count
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect::<String>()
            })
            .and_then(|digits| digits.parse::<u64>().ok());
        let trace_bytes = std::fs::metadata(&self.trace_path).map_or(0, |meta| meta.len());
        eprintln!(
            "tracy capture: {status}; received {zones_received:?} zones of {zones_made} made; \
             peak memory {capture_peak_memory}; trace file {trace_bytes} bytes"
        );
        assert!(
            status.success() && zones_received == Some(zones_made) && trace_bytes > 0,
            "the Tracy capture must receive every zone the benchmark made and save them; \
             its output:\n{stdout}"
        );
    }
}

impl Drop for TracyCapture {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
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
    let capture = std::env::var_os(TRACY_CAPTURE_ENV)
        .filter(|binary| !binary.is_empty())
        .map(|binary| TracyCapture::connect(Path::new(&binary)));
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
