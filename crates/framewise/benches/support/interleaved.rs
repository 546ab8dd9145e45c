//! `FRAMEWISE_BENCH_MODE=interleaved`: the paced loop's scopes, peers taking turns frame by
//! frame rather than round by round, so that a loaded machine's swings fall on every peer
//! alike. One lossless framewise session runs throughout and every frame is closed (so the
//! writer wakes between closes as in a game); frame `k` records with peer `k mod n`. Each
//! thread times its share of the frame's scopes (the game thread's without its close); the
//! figure of a frame is the four shares over its 201 scopes, and a peer's figure is the
//! median and mean of its frames, with its ratio to the floor's, and the percentiles of its
//! frames (a paced peer's mean is its median plus a tail of slow frames).
//!
//! The first [`WARM_FRAMES_PER_PEER`] frames of each peer are not counted: the workers are
//! new threads with new rings, and a ring's first lap faults its pages in (on the VM of
//! docs/PERFORMANCE.md, with rings in 4 KiB pages: 253 faults per worker in its first 650
//! framewise frames, each share with one taking 8.1-8.7 µs against 1.5-1.6 µs; rings in huge
//! pages take far fewer), which a game's threads pay once, not every frame; the round-by-round
//! modes reuse rings from the pool and do not see it.
//!
//! Peers: the floor, framewise, and with `FRAMEWISE_BENCH_RING_CONTROLS=1` the private-ring
//! controls of `ring_control`. `FRAMEWISE_BENCH_FRAMES` frames in all (default 12,000),
//! `FRAMEWISE_BENCH_FRAME_US` the period (default 1,000 µs); `FRAMEWISE_BENCH_DUMP=PATH` writes
//! every counted frame's shares there, one line a frame: the frame, the peer's index, the game
//! thread's share and each worker's, ns.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use framewise::WriterMode;

use super::{
    env_u64, game_frame_scopes, loadavg, median, pace, ring_control, start_session, worker_frame,
    Peer, Workers, SCOPES_PER_FRAME, WORKERS,
};

/// Frames of each peer not counted at the start: a full lap of a worker's ring (65,536
/// events, 98 a framewise frame: 669 frames) and then some.
const WARM_FRAMES_PER_PEER: u64 = 700;

/// Runs the interleaved loop and prints every peer's figures.
pub fn run() {
    let frames = env_u64("FRAMEWISE_BENCH_FRAMES", 12_000);
    let period = Duration::from_micros(env_u64("FRAMEWISE_BENCH_FRAME_US", 1_000));
    let mut peers = vec![Peer::Floor, Peer::Framewise];
    if env_u64("FRAMEWISE_BENCH_RING_CONTROLS", 0) == 1 {
        ring_control::prepare();
        peers.extend(ring_control::Kind::ALL.map(Peer::Ring));
    }
    let warm_frames = WARM_FRAMES_PER_PEER * peers.len() as u64;
    assert!(
        frames > warm_frames,
        "FRAMEWISE_BENCH_FRAMES must be above the {warm_frames} frames of warm-up ({WARM_FRAMES_PER_PEER} a peer)"
    );
    let mut dump = std::env::var_os("FRAMEWISE_BENCH_DUMP")
        .map(|path| std::io::BufWriter::new(std::fs::File::create(path).unwrap()));
    let dir = tempfile::tempdir().unwrap();
    println!("load before: {}", loadavg());
    let session = start_session(dir.path(), 0, WriterMode::Lossless);
    // The peer of the frame in flight, and each worker's share of it, ns.
    let turn = Arc::new(AtomicUsize::new(0));
    let shares: Arc<[AtomicU64; WORKERS]> = Arc::new(Default::default());
    let workers = {
        let (peers, turn, shares) = (peers.clone(), Arc::clone(&turn), Arc::clone(&shares));
        Workers::spawn(WORKERS, "game-worker", move |w| {
            let (turn, shares, peers) = (Arc::clone(&turn), Arc::clone(&shares), peers.clone());
            move || {
                let peer = peers[turn.load(Ordering::Acquire)];
                if let Peer::Ring(kind) = peer {
                    ring_control::set(kind, w + 1);
                }
                warm(peer);
                let share = worker_frame(peer);
                shares[w].store(share.as_nanos() as u64, Ordering::Release);
                share
            }
        })
    };
    let mut per_peer: Vec<Vec<f64>> = vec![Vec::new(); peers.len()];
    let started = Instant::now();
    for frame in 0..frames {
        let index = (frame % peers.len() as u64) as usize;
        let peer = peers[index];
        turn.store(index, Ordering::Release);
        if let Peer::Ring(kind) = peer {
            ring_control::set(kind, 0);
        }
        workers.begin_frame();
        warm(peer);
        let at = Instant::now();
        game_frame_scopes(peer);
        let game = at.elapsed();
        session.end_frame();
        workers.end_frame();
        if peer == Peer::Ring(ring_control::Kind::BigDrained) {
            ring_control::frame_closed();
        }
        let total = game.as_nanos() as u64
            + shares
                .iter()
                .map(|share| share.load(Ordering::Acquire))
                .sum::<u64>();
        if frame >= warm_frames {
            per_peer[index].push(total as f64 / SCOPES_PER_FRAME as f64);
            if let Some(dump) = dump.as_mut() {
                use std::io::Write;
                write!(dump, "{frame} {index} {}", game.as_nanos()).unwrap();
                for share in shares.iter() {
                    write!(dump, " {}", share.load(Ordering::Acquire)).unwrap();
                }
                writeln!(dump).unwrap();
            }
        }
        pace(started, frame, period);
    }
    workers.join();
    let huge_kib = anon_huge_pages_kib();
    let report = session.stop().expect("stop");
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.spans_dropped, 0, "the loop must not measure drops");
    println!(
        "\n{frames} frames, one every {} µs, peers taking turns frame by frame, the first {warm_frames} not counted; ns per scope, close excluded:",
        period.as_micros()
    );
    let floor_median = median(&mut per_peer[0].clone());
    let floor_mean = per_peer[0].iter().sum::<f64>() / per_peer[0].len() as f64;
    println!(
        "  {:<38} {:>7} {:>7} {:>9} {:>9}",
        "peer", "median", "mean", "÷ floor", "mean ÷"
    );
    for (peer, values) in peers.iter().zip(per_peer.iter_mut()) {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let mid = median(values);
        println!(
            "  {:<38} {mid:>7.1} {mean:>7.1} {:>9.3} {:>9.3}",
            peer.name(false),
            mid / floor_median,
            mean / floor_mean
        );
    }
    println!("  percentiles of a peer's frames, ns a scope:");
    println!(
        "  {:<38} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "peer", "p10", "p50", "p90", "p99", "max"
    );
    for (peer, values) in peers.iter().zip(per_peer.iter_mut()) {
        values.sort_by(f64::total_cmp);
        let at = |p: f64| values[((values.len() - 1) as f64 * p).round() as usize];
        println!(
            "  {:<38} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>7.1}",
            peer.name(false),
            at(0.1),
            at(0.5),
            at(0.9),
            at(0.99),
            at(1.0)
        );
    }
    println!("  the process's memory in transparent huge pages (AnonHugePages) before stop: {huge_kib} KiB");
    println!("load after: {}", loadavg());
}

/// With `FRAMEWISE_BENCH_WARM=1`, one scope of `peer`'s just before a thread's timed share,
/// untimed: what the first scope of a frame fetches again after the wait (the thread's
/// buffer, the recorder's statics, the code) is then fetched outside the timed region.
///
/// With `FRAMEWISE_BENCH_WARM=2`, one system of the frame's own code (`systems(peer, 1, 1)`:
/// 3 scopes and a count, the same call sites) instead: the code and the call sites' ids too.
fn warm(peer: Peer) {
    static WARM: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    match *WARM.get_or_init(|| env_u64("FRAMEWISE_BENCH_WARM", 0)) {
        1 => {}
        2 => return super::systems(peer, 1, 1),
        _ => return,
    }
    match peer {
        Peer::Framewise => {
            let _warm = framewise::scope!("warm");
        }
        Peer::Ring(_) => {
            let _warm = ring_control::Scope::begin();
        }
        _ => {}
    }
}

/// `AnonHugePages` of `/proc/self/smaps_rollup`, KiB (0 where it cannot be read).
pub fn anon_huge_pages_kib() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|rollup| {
            let line = rollup.lines().find(|l| l.starts_with("AnonHugePages:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}
