//! The recorder's overhead on the demo: the demo's own steady frame period with a session
//! recording (level `workload`, every scope, counter and workload) against the same run
//! with no session, in one process, alternating off/on rounds so drift on a shared machine
//! falls on both sides. Also reports the game thread's time inside the session's own calls,
//! a direct figure free of that noise.
//!
//! `cargo bench -p framewise-demo --bench overhead` (`FRAMEWISE_DEMO_BENCH_ROUNDS`, default
//! 3; `FRAMEWISE_DEMO_BENCH_FRAMES`, default 400).

use std::time::Duration;

use framewise_demo::{CountingAlloc, DemoConfig, DemoOutcome, Schedule};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config(frames: u64, output: Option<std::path::PathBuf>) -> DemoConfig {
    DemoConfig {
        frames,
        schedule: Schedule::quiet(frames),
        fixed_dt: Some(Duration::from_secs_f64(1.0 / 60.0)),
        use_env: false,
        output,
        ..DemoConfig::default()
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn steady_ms(outcome: &DemoOutcome) -> f64 {
    outcome.steady_mean_period_ms().unwrap_or(f64::NAN)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `cargo bench` passes `--bench`; a `cargo test --benches` run passes nothing and should
    // stay quick.
    let benching = std::env::args().any(|a| a == "--bench");
    let rounds = env_u64("FRAMEWISE_DEMO_BENCH_ROUNDS", if benching { 3 } else { 1 });
    let frames = env_u64(
        "FRAMEWISE_DEMO_BENCH_FRAMES",
        if benching { 400 } else { 100 },
    );
    let dir = tempfile::tempdir()?;
    let (mut off, mut on, mut recorder_share, mut spans_per_frame) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate which side goes first, so a slow stretch of the machine is shared.
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for record in order {
            let path = dir.path().join(format!("round-{round}.sgpt"));
            let outcome = framewise_demo::run(config(frames, record.then(|| path.clone())))?;
            let ms = steady_ms(&outcome);
            if record {
                let steady: Vec<_> = outcome.steady_frames().collect();
                let recorder_ns: u64 = steady.iter().map(|f| f.recorder_ns).sum();
                let period_ns: u64 = steady.iter().filter_map(|f| f.period_ns).sum();
                recorder_share.push(recorder_ns as f64 / period_ns as f64 * 100.0);
                let capture = framewise_format::read::open(&path)?;
                let mut spans = 0usize;
                for frame in capture.frames() {
                    spans += frame?.lanes.iter().map(|l| l.spans.len()).sum::<usize>();
                }
                spans_per_frame.push(spans as f64 / capture.frame_count().max(1) as f64);
                let report = outcome.report.as_ref().ok_or("no report")?;
                if !report.is_complete() {
                    return Err(format!("incomplete capture: {report:?}").into());
                }
                on.push(ms);
            } else {
                off.push(ms);
            }
            println!(
                "round {round}: session {:<3} steady frame period {ms:.3} ms",
                if record { "on" } else { "off" }
            );
        }
    }
    let spread = |v: &[f64]| {
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
        hi - lo
    };
    let (off_spread, on_spread) = (spread(&off), spread(&on));
    let (off_ms, on_ms) = (median(&mut off), median(&mut on));
    let overhead = (on_ms - off_ms) / off_ms * 100.0;
    let noise = off_spread.max(on_spread) / off_ms * 100.0;
    println!();
    println!(
        "frames per run: {frames} ({} steady play frames measured), rounds: {rounds}",
        frames.saturating_sub(Schedule::quiet(frames).play_from())
    );
    println!("session off: median steady period {off_ms:.3} ms (spread {off_spread:.3} ms)");
    println!("session on:  median steady period {on_ms:.3} ms (spread {on_spread:.3} ms)");
    println!(
        "difference: {overhead:+.2} % (noise floor: same-side spread {noise:.2} % of the period)"
    );
    println!(
        "game thread inside session calls: {:.3} % of the period; {:.0} spans per frame",
        median(&mut recorder_share),
        median(&mut spans_per_frame)
    );
    if overhead.abs() <= noise {
        println!("verdict: no detectable change (the difference is within the noise floor)");
    }
    Ok(())
}
