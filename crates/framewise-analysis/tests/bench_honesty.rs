//! Statistical honesty of bench verdicts, shown on real runs of the demo resampled with a
//! fixed seed (deterministic: no timing is taken here).
//!
//! Two fixtures hold the measured frames (after 120 warm-up frames) of ten real runs of
//! `framewise demo --quiet`, 600 frames each, recorded by `framewise bench` on the project's
//! two-core machine: `data/demo-runs.json` while other builds ran (debug build, load 15-20),
//! `data/demo-runs-quiet.json` on the quiet machine (release build, load about 2).
//! `regenerate_the_demo_runs_fixture` rewrites one from a bench's captures (see
//! docs/performance/verdicts.md for the command).
//!
//! A synthetic run is one real run's frames, block-bootstrapped (blocks of 20 frames, so
//! stalls that span frames stay together). Two noise models:
//! - **machine**: each synthetic run starts from a real run drawn at random, so the
//!   run-to-run drift of the machine (other processes, other builds) is in the data;
//! - **steady**: every synthetic run starts from the same real run, as on a quiet machine.
//!
//! A/A: both sides from the same model, unchanged. Power: the after side's frames are 10%
//! (or 50%) longer (an injected delay).

use framewise_analysis::bench::{
    compare, measure_run, measured_periods_ns, pool_periods, BenchResult, BenchSettings, Budgets,
    Fingerprint, VerdictWord,
};
use framewise_analysis::{CaptureBuilder, FrameInput, SourceKind};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Fixture {
    source: String,
    warmup: u64,
    runs: Vec<Vec<u32>>,
}

/// The runs a trial resamples.
#[derive(Clone, Copy)]
enum Machine {
    /// Other builds running beside the demo (debug build).
    Loaded,
    /// Nothing else running (release build).
    Quiet,
}

fn fixture(machine: Machine) -> Fixture {
    let text = match machine {
        Machine::Loaded => include_str!("data/demo-runs.json"),
        Machine::Quiet => include_str!("data/demo-runs-quiet.json"),
    };
    serde_json::from_str(text).expect("fixture")
}

/// splitmix64: a seeded generator, so every trial is the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const BLOCK: usize = 20;
const FRAMES: usize = 600;
const RUNS: usize = 5;

fn synthetic(rng: &mut Rng, source: &[u32], scale: f64) -> Vec<u64> {
    let mut out = Vec::with_capacity(FRAMES);
    while out.len() < FRAMES {
        let start = rng.below(source.len().saturating_sub(BLOCK).max(1));
        for &us in source.iter().skip(start).take(BLOCK) {
            if out.len() < FRAMES {
                out.push((f64::from(us) * 1000.0 * scale) as u64);
            }
        }
    }
    out
}

fn settings() -> BenchSettings {
    BenchSettings {
        command: vec!["framewise".into(), "demo".into(), "--quiet".into()],
        // A synthetic run records FRAMES + 1 frames (the last has no period): the bench's
        // `frames`, or its runs would be long (another workload) and every comparison
        // inconclusive.
        frames: FRAMES as u64 + 1,
        warmup: 0,
        runs: RUNS as u32,
        seed: None,
        fixed_dt: None,
        resolution: None,
    }
}

/// A bench result from synthetic runs' periods, measured exactly as real captures are.
fn result(runs: &[Vec<u64>]) -> BenchResult {
    let mut measured = Vec::new();
    let mut grades = Vec::new();
    let mut pooled = Vec::new();
    for (k, periods) in runs.iter().enumerate() {
        let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
        let mut f = FrameInput::default();
        let mut t = 0u64;
        for (i, &p) in periods.iter().chain(std::iter::once(&1)).enumerate() {
            f.clear();
            f.index = i as u64;
            f.cpu_begin_ns = t;
            f.cpu_end_ns = t + p;
            b.push_frame(&f);
            t += p;
        }
        let capture = b.finish();
        measured.push(measure_run(&capture, k as u32 + 1, "synthetic", 0, None));
        grades.push(capture.grade());
        pooled.extend(measured_periods_ns(&capture, 0));
    }
    let fingerprint = Fingerprint {
        cpu_model: None,
        os: "linux".into(),
        gpu_adapter: None,
        build_profile: "debug".into(),
        settings: settings(),
        build: None,
    };
    let mut r = BenchResult::new(
        "demo",
        true,
        "2026-12-01T00:00:00.000Z".into(),
        settings(),
        fingerprint,
        measured,
        &grades,
    );
    pool_periods(&mut r, pooled);
    r
}

#[derive(Clone, Copy, PartialEq)]
enum Model {
    Machine,
    Steady,
}

fn side(rng: &mut Rng, fx: &Fixture, model: Model, steady_run: usize, scale: f64) -> BenchResult {
    let runs: Vec<Vec<u64>> = (0..RUNS)
        .map(|_| {
            let source = match model {
                Model::Machine => rng.below(fx.runs.len()),
                Model::Steady => steady_run,
            };
            synthetic(rng, &fx.runs[source], scale)
        })
        .collect();
    result(&runs)
}

/// The share of `trials` comparisons whose verdict is `want`.
fn rate(
    machine: Machine,
    seed: u64,
    trials: usize,
    model: Model,
    scale: f64,
    want: VerdictWord,
) -> f64 {
    let fx = fixture(machine);
    let mut rng = Rng(seed);
    let mut hits = 0;
    for _ in 0..trials {
        let steady_run = rng.below(fx.runs.len());
        let before = side(&mut rng, &fx, model, steady_run, 1.0);
        let after = side(&mut rng, &fx, model, steady_run, scale);
        let c = compare(&before, &after, &Budgets::default());
        if c.overall.verdict == want {
            hits += 1;
        }
    }
    hits as f64 / trials as f64
}

const TRIALS: usize = 200;

#[test]
fn a_a_comparisons_find_no_detectable_change_in_95_percent_of_trials() {
    for (machine, mname) in [(Machine::Loaded, "loaded"), (Machine::Quiet, "quiet")] {
        for (model, name) in [(Model::Machine, "machine"), (Model::Steady, "steady")] {
            let r = rate(
                machine,
                1,
                TRIALS,
                model,
                1.0,
                VerdictWord::NoDetectableChange,
            );
            eprintln!(
                "{mname} machine, A/A no-detectable-change, {name} noise: {:.1}%",
                r * 100.0
            );
            assert!(r >= 0.95, "{mname}/{name}: {r}");
        }
    }
}

#[test]
fn a_ten_percent_slowdown_is_never_called_an_improvement_and_its_power_is_stated() {
    // On the loaded machine the power target (95% at 5 runs) is NOT met: the demo's frames
    // switch between contention regimes within a run, so per-run medians scatter far more
    // than 10%. docs/performance/verdicts.md records the measured power; on that fixture this test
    // pins the figures' direction (deterministic, seeded) and that a slowdown is never
    // reported as an improvement. On the quiet machine, runs resampled from one real run
    // (steady) meet the target, and that is asserted.
    for (machine, mname) in [(Machine::Loaded, "loaded"), (Machine::Quiet, "quiet")] {
        for (model, seed, name) in [(Model::Steady, 2, "steady"), (Model::Machine, 4, "machine")] {
            let regressed = rate(machine, seed, TRIALS, model, 1.10, VerdictWord::Regressed);
            let improved = rate(machine, seed, TRIALS, model, 1.10, VerdictWord::Improved);
            eprintln!(
                "{mname} machine, 10% slowdown regressed, {name} noise: {:.1}%",
                regressed * 100.0
            );
            assert_eq!(improved, 0.0, "{mname}/{name}");
            // More often called than on A/A (where a regression is a false positive).
            let false_alarm = rate(machine, seed, TRIALS, model, 1.0, VerdictWord::Regressed);
            assert!(
                regressed > false_alarm,
                "{mname}/{name}: {regressed} vs {false_alarm}"
            );
            // The target itself, where the machine is quiet and runs are alike (the machine
            // model there carries one real run that was 16% slower throughout).
            if let (Machine::Quiet, Model::Steady) = (machine, model) {
                assert!(regressed >= 0.95, "quiet/{name}: power {regressed}");
            }
        }
        // A 50% slowdown is found every time on a steady machine.
        let r = rate(
            machine,
            5,
            TRIALS / 4,
            Model::Steady,
            1.5,
            VerdictWord::Regressed,
        );
        eprintln!(
            "{mname} machine, 50% slowdown regressed, steady noise: {:.1}%",
            r * 100.0
        );
        assert!(r >= 0.95, "{mname}: {r}");
    }
}

/// Rewrites a fixture from a bench's captures (an absolute directory: the test runs in the
/// crate's own directory):
/// `FRAMEWISE_BENCH_RUNS=$PWD/.framewise/bench/NAME-<stamp> FRAMEWISE_BENCH_FIXTURE=demo-runs-quiet.json
/// FRAMEWISE_BENCH_SOURCE="how the runs were taken" cargo test -p framewise-analysis
/// --test tests -- --ignored regenerate`. Refuses a directory with no `run-1.sgpt` rather
/// than write a fixture of no run.
#[test]
#[ignore = "rewrites the fixture from real captures"]
fn regenerate_the_demo_runs_fixture() {
    let dir = std::path::PathBuf::from(std::env::var("FRAMEWISE_BENCH_RUNS").expect("dir"));
    let mut runs = Vec::new();
    for k in 1.. {
        let path = dir.join(format!("run-{k}.sgpt"));
        if !path.is_file() {
            break;
        }
        let capture = framewise_analysis::open(&path, &framewise_analysis::LoadOptions::default())
            .expect("capture");
        runs.push(
            measured_periods_ns(&capture, 120)
                .into_iter()
                .map(|ns| u32::try_from(ns / 1000).unwrap_or(u32::MAX))
                .collect(),
        );
    }
    assert!(
        runs.len() >= 3,
        "{}: {} run-K.sgpt capture(s) found, a fixture needs 3 or more (is the directory absolute?)",
        dir.display(),
        runs.len()
    );
    let fx = Fixture {
        source: std::env::var("FRAMEWISE_BENCH_SOURCE").expect("FRAMEWISE_BENCH_SOURCE"),
        warmup: 120,
        runs,
    };
    let name = std::env::var("FRAMEWISE_BENCH_FIXTURE").expect("FRAMEWISE_BENCH_FIXTURE");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::write(path, serde_json::to_string(&fx).expect("json")).expect("write");
}
