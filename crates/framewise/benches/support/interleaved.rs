//! `FRAMEWISE_BENCH_MODE=interleaved`: the paced loop's scopes, peers taking turns frame by
//! frame rather than round by round, so that a loaded machine's swings fall on every peer
//! alike. One lossless framewise session runs throughout and every frame is closed (so the
//! writer wakes between closes as in a game); frame `k` records with peer `k mod n`. Each
//! thread times its share of the frame's scopes (the game thread's without its close); the
//! figure of a frame is the four shares over its 201 scopes, and a peer's figure is the
//! median and mean of its frames, with its ratio to the floor's.
//!
//! Peers: the floor, framewise, and with `FRAMEWISE_BENCH_RING_CONTROLS=1` the private-ring
//! controls of `ring_control`. `FRAMEWISE_BENCH_FRAMES` frames in all (default 12,000),
//! `FRAMEWISE_BENCH_FRAME_US` the period (default 1,000 µs).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use framewise::WriterMode;

use super::{
    env_u64, game_frame_scopes, loadavg, median, pace, ring_control, start_session, worker_frame,
    Peer, Workers, SCOPES_PER_FRAME, WORKERS,
};

/// Runs the interleaved loop and prints every peer's figures.
pub fn run() {
    let frames = env_u64("FRAMEWISE_BENCH_FRAMES", 12_000);
    let period = Duration::from_micros(env_u64("FRAMEWISE_BENCH_FRAME_US", 1_000));
    let mut peers = vec![Peer::Floor, Peer::Framewise];
    if env_u64("FRAMEWISE_BENCH_RING_CONTROLS", 0) == 1 {
        ring_control::prepare();
        peers.extend(ring_control::Kind::ALL.map(Peer::Ring));
    }
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
        // The first lap is a warm-up.
        if frame >= peers.len() as u64 * 10 {
            per_peer[index].push(total as f64 / SCOPES_PER_FRAME as f64);
        }
        pace(started, frame, period);
    }
    workers.join();
    let huge_kib = anon_huge_pages_kib();
    let report = session.stop().expect("stop");
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.spans_dropped, 0, "the loop must not measure drops");
    println!(
        "\n{frames} frames, one every {} µs, peers taking turns frame by frame; ns per scope, close excluded:",
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
