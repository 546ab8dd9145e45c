//! The all-in cost a game pays: a game loop whose timed region includes frame close.
//!
//! ```text
//! cargo bench -p framewise --bench game_loop                # interleaved rounds, all peers
//! FRAMEWISE_BENCH_MODE=close cargo bench -p framewise --bench game_loop      # end_frame p99
//! FRAMEWISE_BENCH_MODE=realtime cargo bench -p framewise --bench game_loop   # drops at 1 kHz
//! FRAMEWISE_BENCH_MODE=throughput cargo bench -p framewise --bench game_loop # writer spans/s
//! FRAMEWISE_BENCH_MODE=rss cargo bench -p framewise --bench game_loop        # RSS curve
//! FRAMEWISE_BENCH_MODE=interleaved cargo bench -p framewise --bench game_loop # peers frame by frame, paced
//! FRAMEWISE_BENCH_TRACY_CAPTURE=/path/to/tracy-capture cargo bench -p framewise --bench game_loop
//! ```
//!
//! A frame is 201 scopes on 4 threads: the game thread's `frame` scope wraps 10 systems of 5
//! nested scopes (51 scopes), and each of 3 workers runs a `job` scope wrapping 7 systems of
//! 7 nested scopes (50 each); framewise also counts one `counter!` per system and one `mark!`
//! per frame (its peers are not charged for those). Every thread times its own recording
//! section; the game thread's section includes frame close (`end_frame`; puffin's
//! `GlobalProfiler::new_frame` with a real sink, `GlobalFrameView`, attached; Tracy's
//! `frame_mark`). Barriers between the sections are not timed. The all-in cost per scope is
//! the sum of the four threads' sections over the scopes made. `floor` runs the same loop with
//! every scope replaced by two `rdtsc` reads. Beside it, framewise "close excluded" is the
//! same figure less the time of its `end_frame` calls: what its scopes cost.
//!
//! The framewise session is lossless and writes a real file (in a temporary directory).
//! Tracy runs with no viewer (it keeps every zone in memory), unless
//! `FRAMEWISE_BENCH_TRACY_CAPTURE` names a Tracy 0.14.0 `capture` binary: then a real capture
//! drains the client for the whole run (`support/tracy_capture.rs`, shared with the `recorder`
//! bench), the Tracy row is labelled "drained", and at the end the run asserts the capture
//! received every zone the Tracy rounds made.
//!
//! Environment: `FRAMEWISE_BENCH_FRAMES` frames per round (default 2,000),
//! `FRAMEWISE_BENCH_ROUNDS` rounds (default 7), `FRAMEWISE_BENCH_SECONDS` for `realtime`
//! (default 10), `FRAMEWISE_BENCH_FRAME_US` to pace the peers' loop to one frame every that
//! many microseconds (untimed waits between frames, as a game's; default: frames as fast as
//! they go, where a lossless framewise session makes `end_frame` wait whenever the writer
//! falls behind), `FRAMEWISE_BENCH_WORKERS` the worker threads of `realtime` with the close
//! detail on (default 3; 0 leaves the game thread recording alone), and
//! `FRAMEWISE_BENCH_PIN` there: 1 pins the game thread to CPU 0 and the writer to CPU 1, 2
//! gives the writer nice 19, and `FRAMEWISE_BENCH_QUEUE_FRAMES` the sessions' `queue_frames`
//! (default: the recorder's). Every figure is printed
//! with the load average read before and after it. Where a paced scope's time goes:
//! `FRAMEWISE_BENCH_RING_CONTROLS=1` adds the private-ring controls (`support/ring_control.rs`)
//! as peers, `FRAMEWISE_BENCH_NO_COUNTERS=1` leaves framewise's `counter!` out of the loop, and
//! the `interleaved` mode (`support/interleaved.rs`) takes `FRAMEWISE_BENCH_WARM`.
//! `FRAMEWISE_BENCH_SUMS=N` (N ≥ 2) counts into N sum names in turn, on each thread, where the
//! loop otherwise counts into one (`draw_calls`), to show what every sum read costs frame close;
//! the names are made before the loop with 64 KiB of the heap left between each, as a game
//! names its counters among its own allocations.
//! `FRAMEWISE_BENCH_FAULTS=1` prints the process's minor page faults in each peer's round
//! (framewise's rounds reuse the rings of the round before from the pool: a handful).

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark fails loudly"
)]

#[path = "support/close_detail.rs"]
mod close_detail;
#[path = "support/interleaved.rs"]
mod interleaved;
#[path = "support/ring_control.rs"]
mod ring_control;
#[path = "support/tracy_capture.rs"]
mod tracy_capture;
#[path = "support/workers.rs"]
mod workers;
#[path = "support/writer_watch.rs"]
mod writer_watch;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use framewise::{counter, mark, scope, Session, WriterMode};
use workers::Workers;

/// Scopes per frame: 51 on the game thread, 50 on each of the 3 workers.
const SCOPES_PER_FRAME: u64 = 201;
const WORKERS: usize = 3;
/// Whether framewise's loop counts (`FRAMEWISE_BENCH_NO_COUNTERS=1` leaves them out, to
/// tell the scopes' cost from the counters').
static COUNTERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// The sum names of `FRAMEWISE_BENCH_SUMS` (unset: the loop counts into `draw_calls`).
static SUMS: std::sync::OnceLock<Vec<framewise::Counter>> = std::sync::OnceLock::new();

thread_local! {
    /// The thread's next name among `SUMS`.
    static NEXT_SUM: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Names `count` sums (when at least 2), each after 64 KiB of the heap left allocated.
fn name_sums(count: usize) {
    if count < 2 {
        return;
    }
    let mut spacers = Vec::new();
    let sums = (0..count)
        .map(|i| {
            spacers.push(Vec::<u8>::with_capacity(64 << 10));
            framewise::Counter::sum(&format!("sum_{i}"))
        })
        .collect();
    // The spacers stay allocated for the whole run.
    std::mem::forget(spacers);
    let _ = SUMS.set(sums);
}

/// One count, as each system makes: into `draw_calls`, or the thread's next sum name.
#[inline(always)]
fn count_once() {
    match SUMS.get() {
        Some(sums) => {
            let next = NEXT_SUM.with(|next| {
                let at = next.get();
                next.set(at + 1);
                at
            });
            sums[next % sums.len()].add(1);
        }
        None => counter!("draw_calls", 1),
    }
}

/// Which profiler the loop records with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Peer {
    Floor,
    Framewise,
    Puffin,
    Tracy,
    /// The floor plus a 16-byte event per clock read into a private ring (`ring_control`).
    Ring(ring_control::Kind),
}

impl Peer {
    /// The row's label; Tracy's says whether a capture drained it.
    fn name(self, tracy_drained: bool) -> &'static str {
        match self {
            Peer::Floor => "floor (2 rdtsc per scope)",
            Peer::Framewise => "framewise (lossless, file)",
            Peer::Puffin => "puffin 0.19 + GlobalFrameView",
            Peer::Tracy if tracy_drained => "tracy-client 0.19, drained by capture",
            Peer::Tracy => "tracy-client 0.19, no viewer",
            Peer::Ring(kind) => kind.name(),
        }
    }
}

#[inline(always)]
fn two_rdtsc() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `rdtsc` has no preconditions on x86_64.
    #[allow(
        unused_unsafe,
        reason = "`_rdtsc` is an unsafe fn on some toolchains only"
    )]
    unsafe {
        black_box(core::arch::x86_64::_rdtsc());
        black_box(core::arch::x86_64::_rdtsc());
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        black_box(Instant::now());
        black_box(Instant::now());
    }
}

/// One scope's worth of recording with `peer`, around `body`.
macro_rules! scoped {
    ($peer:expr, $name:literal, $body:block) => {{
        match $peer {
            Peer::Floor => {
                two_rdtsc();
                $body
            }
            Peer::Framewise => {
                let _s = scope!($name);
                $body
            }
            Peer::Puffin => {
                puffin::profile_scope!($name);
                $body
            }
            Peer::Tracy => {
                let _s = tracy_client::span!($name);
                $body
            }
            Peer::Ring(_) => {
                let _s = ring_control::Scope::begin();
                $body
            }
        }
    }};
}

/// `systems` systems of 1 + `pairs` × 2 nested scopes, counting once per system.
#[inline(never)]
fn systems(peer: Peer, systems: usize, pairs: usize) {
    for _ in 0..systems {
        scoped!(peer, "system", {
            for _ in 0..pairs {
                scoped!(peer, "system.query", {
                    scoped!(peer, "system.query.iter", {
                        black_box(0);
                    });
                });
            }
            if peer == Peer::Framewise && COUNTERS.load(std::sync::atomic::Ordering::Relaxed) {
                count_once();
            }
        });
    }
}

/// The game thread's 51 scopes (and framewise's mark), without frame close.
fn game_frame_scopes(peer: Peer) {
    scoped!(peer, "frame", {
        systems(peer, 10, 2);
    });
    if peer == Peer::Framewise {
        mark!("tick");
    }
}

/// The game thread's frame: 51 scopes, and the peer's frame close.
fn game_frame(peer: Peer, session: Option<&Session>) -> (Duration, Duration) {
    let started = Instant::now();
    game_frame_scopes(peer);
    let closing = Instant::now();
    match peer {
        Peer::Floor | Peer::Ring(_) => {}
        Peer::Framewise => {
            if let Some(session) = session {
                session.end_frame();
            }
        }
        Peer::Puffin => puffin::GlobalProfiler::lock().new_frame(),
        Peer::Tracy => tracy_client::frame_mark(),
    }
    let ended = Instant::now();
    (ended - started, ended - closing)
}

/// A worker's share of a frame: 50 scopes.
fn worker_frame(peer: Peer) -> Duration {
    let started = Instant::now();
    scoped!(peer, "job", {
        systems(peer, 7, 3);
    });
    started.elapsed()
}

/// What one run of the loop measured.
struct LoopResult {
    ns_per_scope: f64,
    close_ns: Vec<u64>,
}

/// The 3 worker threads, each running and timing its share of every frame.
fn spawn_workers(peer: Peer) -> Workers {
    Workers::spawn(WORKERS, "game-worker", move |w| {
        move || {
            if let Peer::Ring(kind) = peer {
                ring_control::set(kind, w + 1);
            }
            worker_frame(peer)
        }
    })
}

/// Waits, untimed, until frame `frame` (from 0) of a loop started at `started` has had its
/// `period`: the loop then runs at 1 / `period` frames per second, as a game does.
fn pace(started: Instant, frame: u64, period: Duration) {
    let deadline = started + Duration::from_nanos(period.as_nanos() as u64 * (frame + 1));
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// Runs `frames` frames of the 4-thread loop with `peer`, one every `period` if given (else
/// as fast as they go).
fn run_loop(
    peer: Peer,
    frames: u64,
    session: Option<&Session>,
    period: Option<Duration>,
) -> LoopResult {
    let workers = spawn_workers(peer);
    if let Peer::Ring(kind) = peer {
        ring_control::set(kind, 0);
    }
    let mut total = Duration::ZERO;
    let mut close_ns = Vec::with_capacity(frames as usize);
    let started = Instant::now();
    for frame in 0..frames {
        workers.begin_frame();
        let (game, close) = game_frame(peer, session);
        total += game;
        close_ns.push(close.as_nanos() as u64);
        workers.end_frame();
        if peer == Peer::Ring(ring_control::Kind::BigDrained) {
            ring_control::frame_closed();
        }
        if let Some(period) = period {
            pace(started, frame, period);
        }
    }
    total += workers.join();
    LoopResult {
        ns_per_scope: total.as_nanos() as f64 / (frames * SCOPES_PER_FRAME) as f64,
        close_ns,
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The process's minor page faults so far.
fn process_minor_faults() -> i64 {
    // SAFETY: `getrusage` writes only into the struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage.ru_minflt
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn start_session(dir: &Path, round: u64, mode: WriterMode) -> Session {
    let mut builder = Session::builder().writer_mode(mode);
    if let Ok(frames) = std::env::var("FRAMEWISE_BENCH_QUEUE_FRAMES") {
        builder = builder.queue_frames(frames.parse().expect("FRAMEWISE_BENCH_QUEUE_FRAMES"));
    }
    builder
        .start(dir.join(format!("round-{round}.sgpt")))
        .expect("start a session")
}

/// Interleaved rounds of every peer, frames paced to `period` if given; medians and per-round
/// ratios.
fn compare(frames: u64, rounds: u64, period: Option<Duration>) {
    let dir = tempfile::tempdir().unwrap();
    puffin::set_scopes_on(true);
    let _frame_view = puffin::GlobalFrameView::default();
    let _tracy = tracy_client::Client::start();
    let capture = tracy_capture::from_env();
    let tracy_drained = capture.is_some();
    let tracy_short = if tracy_drained {
        "tracy drained"
    } else {
        "tracy no viewer"
    };
    let mut tracy_zones_made = 0_u64;
    let print_faults = env_u64("FRAMEWISE_BENCH_FAULTS", 0) == 1;
    let mut peers = vec![Peer::Floor, Peer::Framewise, Peer::Puffin, Peer::Tracy];
    if env_u64("FRAMEWISE_BENCH_RING_CONTROLS", 0) == 1 {
        ring_control::prepare();
        peers.extend(ring_control::Kind::ALL.map(Peer::Ring));
    }
    let mut per_peer: Vec<Vec<f64>> = vec![Vec::new(); peers.len()];
    let mut ratios: Vec<[f64; 3]> = Vec::new();
    let mut closes: Vec<u64> = Vec::new();
    // framewise's all-in figure less its frame close, per round: what its scopes cost.
    let mut scopes_alone: Vec<f64> = Vec::new();
    let mut scopes_alone_ratios: Vec<f64> = Vec::new();
    let mut control_ratios: Vec<Vec<f64>> = vec![Vec::new(); peers.len() - 4];
    println!("load before: {}", loadavg());
    // One warm-up round, not counted.
    for round in 0..=rounds {
        let mut this_round = vec![0.0; peers.len()];
        for (i, &peer) in peers.iter().enumerate() {
            let session = (peer == Peer::Framewise)
                .then(|| start_session(dir.path(), round, WriterMode::Lossless));
            let faults_before = print_faults.then(process_minor_faults);
            let result = run_loop(peer, frames, session.as_ref(), period);
            if let Some(before) = faults_before {
                let faults = process_minor_faults() - before;
                println!("  {}: {faults} minor page faults", peer.name(false));
            }
            if peer == Peer::Tracy {
                tracy_zones_made += frames * SCOPES_PER_FRAME;
            }
            if let Some(session) = session {
                let report = session.stop().expect("stop");
                assert!(report.is_complete(), "{report:?}");
                assert_eq!(report.spans_dropped, 0, "the loop must not measure drops");
                if round > 0 {
                    closes.extend(&result.close_ns);
                    let close_total_ns: u64 = result.close_ns.iter().sum();
                    scopes_alone.push(
                        result.ns_per_scope
                            - close_total_ns as f64 / (frames * SCOPES_PER_FRAME) as f64,
                    );
                }
            }
            this_round[i] = result.ns_per_scope;
        }
        if round == 0 {
            continue;
        }
        println!(
            "round {round}: floor {:.1}, framewise {:.1}, puffin {:.1}, {tracy_short} {:.1} ns/scope (load {})",
            this_round[0],
            this_round[1],
            this_round[2],
            this_round[3],
            loadavg()
        );
        for (i, value) in this_round.iter().enumerate() {
            per_peer[i].push(*value);
            if i >= 4 {
                println!("  {}: {value:.1} ns/scope", peers[i].name(false));
                control_ratios[i - 4].push(value / this_round[0]);
            }
        }
        if let Some(alone) = scopes_alone.last() {
            scopes_alone_ratios.push(alone / this_round[0]);
        }
        ratios.push([
            this_round[1] / this_round[0],
            this_round[1] / this_round[2],
            this_round[1] / this_round[3],
        ]);
    }
    let pacing = period.map_or("as fast as they go".to_owned(), |period| {
        format!("one every {} µs", period.as_micros())
    });
    println!(
        "\n{frames} frames × {SCOPES_PER_FRAME} scopes on 4 threads per round ({pacing}), {rounds} rounds; medians, all-in ns per scope:"
    );
    for (i, peer) in peers.iter().enumerate() {
        println!(
            "  {:<38} {:>7.1}",
            peer.name(tracy_drained),
            median(&mut per_peer[i])
        );
    }
    let column = |c: usize| median(&mut ratios.iter().map(|r| r[c]).collect::<Vec<_>>());
    println!("  {:<38} {:>7.2}", "framewise ÷ floor", column(0));
    println!("  {:<38} {:>7.2}", "framewise ÷ puffin", column(1));
    println!(
        "  {:<38} {:>7.2}",
        format!("framewise ÷ {tracy_short}"),
        column(2)
    );
    println!(
        "  {:<38} {:>7.1}",
        "framewise, close excluded",
        median(&mut scopes_alone)
    );
    println!(
        "  {:<38} {:>7.2}",
        "framewise, close excluded ÷ floor",
        median(&mut scopes_alone_ratios)
    );
    for (i, ratios) in control_ratios.iter_mut().enumerate() {
        println!(
            "  {:<38} {:>7.2}",
            format!("{} ÷ floor", peers[i + 4].name(false)),
            median(ratios)
        );
    }
    if !control_ratios.is_empty() {
        println!(
            "  the process's memory in transparent huge pages (AnonHugePages): {} KiB",
            interleaved::anon_huge_pages_kib()
        );
    }
    closes.sort_unstable();
    print_close("framewise end_frame in the loop", &closes);
    println!("load after: {}", loadavg());
    if let Some(capture) = capture {
        capture.stop_and_check(tracy_zones_made);
    }
}

fn print_close(what: &str, sorted: &[u64]) {
    let mean = sorted.iter().sum::<u64>() as f64 / sorted.len().max(1) as f64;
    println!(
        "  {what}: {} frames, mean {:.2} µs, p50 {:.2} µs, p99 {:.2} µs, p99.9 {:.2} µs, max {:.2} µs",
        sorted.len(),
        mean / 1000.0,
        percentile(sorted, 0.5) as f64 / 1000.0,
        percentile(sorted, 0.99) as f64 / 1000.0,
        percentile(sorted, 0.999) as f64 / 1000.0,
        sorted.last().copied().unwrap_or(0) as f64 / 1000.0,
    );
}

/// `end_frame` alone, 10,000 frames of the loop, lossless to a file.
fn close_only(frames: u64) {
    let dir = tempfile::tempdir().unwrap();
    println!("load before: {}", loadavg());
    let session = start_session(dir.path(), 0, WriterMode::Lossless);
    let mut result = run_loop(Peer::Framewise, frames, Some(&session), None);
    let report = session.stop().expect("stop");
    assert!(report.is_complete(), "{report:?}");
    result.close_ns.sort_unstable();
    print_close("end_frame, 201-scope frame on 4 threads", &result.close_ns);
    println!("  all-in {:.1} ns per scope", result.ns_per_scope);
    println!("load after: {}", loadavg());
}

/// A 1,000 frames/s game (the loop paced to 1 ms per frame) in realtime mode: frames dropped.
fn realtime(seconds: u64) {
    let dir = tempfile::tempdir().unwrap();
    println!("load before: {}", loadavg());
    let session = start_session(dir.path(), 0, WriterMode::Realtime);
    let frames = seconds * 1000;
    let started = Instant::now();
    let mut close_ns = Vec::with_capacity(frames as usize);
    let detail_level = env_u64("FRAMEWISE_BENCH_CLOSE_DETAIL", 0);
    let mut detail = (detail_level > 0).then(|| close_detail::Detail::new(detail_level, frames));
    let workers = if detail.is_some() {
        match env_u64("FRAMEWISE_BENCH_PIN", 0) {
            1 => println!(
                "game thread on CPU 0, writer on CPU 1: {}",
                close_detail::pin_game_and_writer_apart()
            ),
            2 => println!("writer at nice 19: {}", close_detail::nice_writer()),
            _ => {}
        }
        let count = env_u64("FRAMEWISE_BENCH_WORKERS", WORKERS as u64);
        Workers::spawn(count as usize, "game-worker", |_| {
            || {
                close_detail::WORKERS_BUSY.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let share = worker_frame(Peer::Framewise);
                close_detail::WORKERS_BUSY.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                share
            }
        })
    } else {
        spawn_workers(Peer::Framewise)
    };
    let mut watch = writer_watch::WriterWatch::find();
    for frame in 0..frames {
        workers.begin_frame();
        match detail.as_mut() {
            None => {
                let (_, close) = game_frame(Peer::Framewise, Some(&session));
                close_ns.push(close.as_nanos() as u64);
            }
            Some(detail) => {
                game_frame_scopes(Peer::Framewise);
                close_ns.push(detail.close(|| {
                    session.end_frame();
                }));
            }
        }
        workers.end_frame();
        watch.sample();
        pace(started, frame, Duration::from_millis(1));
    }
    workers.join();
    let elapsed = started.elapsed();
    let report = session.stop().expect("stop");
    close_ns.sort_unstable();
    println!(
        "realtime, {} frames of {SCOPES_PER_FRAME} scopes in {:.2} s ({:.0} frames/s): {} written, {} dropped, {} spans dropped",
        report.frames_closed,
        elapsed.as_secs_f64(),
        report.frames_closed as f64 / elapsed.as_secs_f64(),
        report.frames_written,
        report.frames_dropped,
        report.spans_dropped
    );
    print_close("end_frame", &close_ns);
    watch.print();
    println!(
        "  queue_frames {}; peak RSS {} KiB",
        std::env::var("FRAMEWISE_BENCH_QUEUE_FRAMES").unwrap_or_else(|_| "default".into()),
        rss_kib("VmHWM:")
    );
    if let Some(detail) = &detail {
        detail.print();
    }
    println!("load after: {}", loadavg());
}

/// Lossless, the game thread closing 200-span frames as fast as it can: the pipeline's
/// throughput, spans per second, start to `stop()` returned (bounded by the game thread when
/// the writer keeps up), and the writer's own, over its busy time.
fn throughput(frames: u64) {
    let dir = tempfile::tempdir().unwrap();
    println!("load before: {}", loadavg());
    let session = start_session(dir.path(), 0, WriterMode::Lossless);
    // The writer names itself as it starts: found once it has (its schedstat read here and
    // at the end only, outside the loop).
    let mut watch = writer_watch::WriterWatch::find();
    let looking = Instant::now();
    while watch.totals().is_none() && looking.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(1));
        watch = writer_watch::WriterWatch::find();
    }
    let started = Instant::now();
    let mut game = Duration::ZERO;
    for _ in 0..frames {
        let t = Instant::now();
        for _ in 0..4 {
            systems(Peer::Framewise, 10, 2);
        }
        session.end_frame();
        game += t.elapsed();
    }
    let writer_busy_s = session.writer_busy_ns() as f64 / 1e9;
    watch.sample();
    let user_and_kernel_s = watch.user_and_kernel_s();
    let write_calls = write_calls();
    let report = session.stop().expect("stop");
    let elapsed = started.elapsed();
    assert!(report.is_complete(), "{report:?}");
    let spans = frames * 200;
    println!(
        "writer thread: busy {writer_busy_s:.3} s of it: {:.1} M spans/s of writer time ({:.2} µs per frame)",
        spans as f64 / writer_busy_s.max(1e-9) / 1e6,
        writer_busy_s * 1e6 / frames as f64,
    );
    // The busy time is wall clock, from a message's arrival to the writer's next wait: it
    // counts the time the writer waited for a CPU in the middle of a frame. Its run time
    // (schedstat: on a CPU, parking and waking included) is the cost on one core.
    match watch.totals() {
        Some((ran_ns, waited_ns)) => println!(
            "writer thread: on a CPU {:.3} s (parking and waking included): {:.1} M spans/s of its CPU time ({:.2} µs per frame); waited for a CPU {:.3} s",
            ran_ns as f64 / 1e9,
            spans as f64 / (ran_ns as f64 / 1e9).max(1e-9) / 1e6,
            ran_ns as f64 / 1e3 / frames as f64,
            waited_ns as f64 / 1e9,
        ),
        None => println!("writer thread: its schedstat not found (no CPU time)"),
    }
    // The kernel's share: the writes of the flushes (one a frame when the writer keeps up),
    // parking and waking. Over the whole session, start and stop included.
    if let Some((user_s, kernel_s)) = user_and_kernel_s {
        println!(
            "writer thread: {user_s:.2} s in user space, {kernel_s:.2} s in the kernel (10 ms steps); \
             the process made {write_calls} write calls ({:.1} frames a write)",
            frames as f64 / write_calls.max(1) as f64
        );
    }
    println!(
        "throughput: {frames} frames of 200 spans written losslessly in {:.3} s: {:.1} M spans/s \
         ({:.2} µs per frame); the game thread was busy {:.3} s of it; {} bytes",
        elapsed.as_secs_f64(),
        spans as f64 / elapsed.as_secs_f64() / 1e6,
        elapsed.as_secs_f64() * 1e6 / frames as f64,
        game.as_secs_f64(),
        report.bytes_written
    );
    println!("load after: {}", loadavg());
}

/// The process's write calls so far (`syscw` of `/proc/self/io`).
fn write_calls() -> u64 {
    proc_self_field("io", "syscw:")
}

fn rss_kib(field: &str) -> u64 {
    proc_self_field("status", field)
}

/// The number after `field` on its line of `/proc/self/FILE` (a `kB` unit dropped), or 0.
fn proc_self_field(file: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/self/{file}"))
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|line| line.starts_with(field))?;
            line.trim_start_matches(field)
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// RSS at 10 k, 100 k and 1 M frames of a small frame (10 spans), lossless to a file, and
/// the peak through stop.
fn rss() {
    let dir = tempfile::tempdir().unwrap();
    let session = start_session(dir.path(), 0, WriterMode::Lossless);
    let base = rss_kib("VmRSS:");
    println!("RSS at start: {base} KiB");
    let mut frame = 0u64;
    for checkpoint in [10_000u64, 100_000, 1_000_000] {
        while frame < checkpoint {
            systems(Peer::Framewise, 2, 2);
            session.end_frame();
            frame += 1;
        }
        let now = rss_kib("VmRSS:");
        println!(
            "RSS at {checkpoint:>9} frames: {now} KiB ({:+.1} B per frame since start)",
            (now as f64 - base as f64) * 1024.0 / checkpoint as f64
        );
    }
    let report = session.stop().expect("stop");
    assert!(report.is_complete(), "{report:?}");
    println!(
        "after stop: RSS {} KiB, peak {} KiB; capture {} bytes",
        rss_kib("VmRSS:"),
        rss_kib("VmHWM:"),
        report.bytes_written
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run briefly.
    let benching = std::env::args().any(|a| a == "--bench");
    if env_u64("FRAMEWISE_BENCH_NO_COUNTERS", 0) == 1 {
        COUNTERS.store(false, std::sync::atomic::Ordering::Relaxed);
    }
    name_sums(env_u64("FRAMEWISE_BENCH_SUMS", 1) as usize);
    let frames = env_u64("FRAMEWISE_BENCH_FRAMES", if benching { 2_000 } else { 20 });
    let rounds = env_u64("FRAMEWISE_BENCH_ROUNDS", if benching { 7 } else { 1 });
    match std::env::var("FRAMEWISE_BENCH_MODE").as_deref() {
        Ok("close") => close_only(env_u64("FRAMEWISE_BENCH_FRAMES", 10_000)),
        Ok("realtime") => realtime(env_u64("FRAMEWISE_BENCH_SECONDS", 10)),
        Ok("throughput") => throughput(env_u64("FRAMEWISE_BENCH_FRAMES", 50_000)),
        Ok("rss") => rss(),
        Ok("interleaved") => interleaved::run(),
        _ => compare(
            frames,
            rounds,
            std::env::var("FRAMEWISE_BENCH_FRAME_US")
                .ok()
                .and_then(|us| us.parse().ok())
                .map(Duration::from_micros),
        ),
    }
}
