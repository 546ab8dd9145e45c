//! Bench results: a program run R times, each run's warm-up frames discarded, measured per
//! run and pooled, with a noise floor per metric — and the comparison of two such results
//! ([`compare()`]) with one verdict per metric and one overall.
//!
//! This module holds the numbers only. Running the program (the environment harness, the
//! child processes, the files under `.framewise/bench/`) is the CLI's business; the CLI
//! hands each run's capture to [`measure_run`] and the runs to [`BenchResult::new`].
//!
//! The statistics, in [`stats`]: a metric's **noise floor** is `1.4826 · MAD / median` of
//! its per-run values (a robust relative spread). Two results compare metric by metric with
//! Welch's t-test on per-run values (each run contributes one value, its median or p95 over
//! its own frames, so frames within a run — which are correlated — never count as
//! independent evidence). A metric is `improved` or `regressed` only when the change
//! exceeds the 2% minimum practical effect, the pooled noise floor, and the t-test's
//! critical difference at a family-wise α of 5% (Bonferroni over the timing metrics);
//! otherwise it is `no-detectable-change`, stated with the smallest change the data could
//! have detected. Counters compare exactly.

pub mod budget;
pub mod compare;
pub mod ledger;
pub mod stats;
pub mod usable;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diff::loses_frames;
use crate::model::{Capture, Defect, Grade, Numeric, TimingGrade};
use crate::summary::{summarize_with, SummaryOptions};

pub use budget::{evaluate_budgets, BudgetCheck, BudgetState, Budgets};
pub use compare::{
    compare, compare_counters_only, Comparison, MetricVerdict, MissingMetric, Overall, VerdictWord,
};
pub use ledger::{LedgerLine, LEDGER_SCHEMA};

/// The schema name of a bench result file.
pub const BENCH_SCHEMA: &str = "framewise.bench/1";

/// The fewest runs a side of a comparison may have.
pub const MIN_RUNS: usize = 3;

/// The timing metrics every bench compares, by metric path. `hitches.per_min` is reported
/// in every result but not judged: a uniform slowdown stretches the minutes its hitches are
/// counted over, so its rate would fall and read as an improvement.
pub const TIMING_METRICS: [&str; 4] = ["frame.p50", "frame.p95", "frame.p99", "work.p50"];

/// How a bench was asked to run: what `[bench.NAME]` in framewise.toml says, or the
/// ad-hoc command line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchSettings {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Measured frames per run (after the warm-up).
    pub frames: u64,
    /// Frames run and discarded before the measured ones.
    pub warmup: u64,
    /// Runs.
    pub runs: u32,
    /// The seed handed to the program (`FRAMEWISE_SEED`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The pinned simulation step, seconds (`FRAMEWISE_FIXED_DT`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_dt: Option<f64>,
    /// The resolution handed to the program (`FRAMEWISE_RESOLUTION`, `WIDTHxHEIGHT`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<String>,
}

/// Where and how the bench ran. Every field but `build` enters the `config_hash`: two
/// results compare only when they ran the same workload on the same machine the same way;
/// the build is what a comparison is about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// CPU model, when the OS says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// OS (and kernel release, when known).
    pub os: String,
    /// The GPU adapter the program declared, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_adapter: Option<String>,
    /// Build profile of the `framewise` binary that ran the harness (`debug`/`release`;
    /// for a bench of `framewise demo`, the program's own).
    pub build_profile: String,
    /// The command and the settings it ran with (`runs` is not hashed).
    #[serde(flatten)]
    pub settings: BenchSettings,
    /// The build id the program declared (not hashed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

impl Fingerprint {
    /// The config hash: FNV-1a 64 over the hashed fields' JSON, 16 hex digits. `runs` and
    /// `build` are left out (a side may run more times; the build is what changes).
    pub fn config_hash(&self) -> String {
        let mut hashed = self.clone();
        hashed.settings.runs = 0;
        hashed.build = None;
        let text = serde_json::to_string(&hashed).unwrap_or_default();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

/// Frame figures over measured frames (periods), ms.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameFigures {
    /// Median period.
    pub median_ms: Option<f64>,
    /// p95 period.
    pub p95_ms: Option<f64>,
    /// p99 period (null below 100 frames).
    pub p99_ms: Option<f64>,
}

/// One run of a bench.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchRun {
    /// 1-based run number.
    pub run: u32,
    /// The run's capture file.
    pub capture: String,
    /// Frames measured (after the warm-up, not paused, with a known period).
    pub frames_measured: u64,
    /// Frames the capture holds after the warm-up, measured or not (the last frame has no
    /// period, so a whole run measures one frame fewer than it recorded). Fewer than the
    /// bench's `frames` makes the run short. Absent from a result written before framewise
    /// recorded it; such a run counts as having recorded `frames_measured + 1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames_recorded: Option<u64>,
    /// The run recorded fewer frames after the warm-up than the bench's `frames` (the
    /// program stopped early, or its file lost frames): any makes a comparison inconclusive.
    #[serde(default)]
    pub short: bool,
    /// The run recorded more frames after the warm-up than the bench's `frames` (the
    /// program ran past `FRAMEWISE_FRAMES`): another workload, and, as a short run, any
    /// makes a comparison inconclusive.
    #[serde(default)]
    pub long: bool,
    /// Frames discarded as warm-up.
    pub frames_discarded: u64,
    /// Frames the recorder dropped or the file lost: any makes a comparison inconclusive.
    pub frames_lost: u64,
    /// Seconds of measured frames (the sum of their periods).
    pub measured_s: f64,
    /// Frame figures.
    pub frame: FrameFigures,
    /// Hitches among the measured frames.
    pub hitches: u64,
    /// Hitches per minute of measured frames.
    pub hitches_per_min: f64,
    /// Sum counters' exact totals over the measured frames.
    pub counters: BTreeMap<String, i64>,
    /// Every metric of the run's summary over its measured frames, by metric path, plus
    /// `hitches.per_min`.
    pub metrics: BTreeMap<String, f64>,
    /// What was wrong with the capture.
    pub defects: Vec<Defect>,
}

/// Every run's frames together.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pooled {
    /// Measured frames over every run.
    pub frames: u64,
    /// Frame figures over every measured frame of every run.
    pub frame: FrameFigures,
    /// Hitches over every run.
    pub hitches: u64,
    /// Hitches per minute over every run's measured time.
    pub hitches_per_min: f64,
    /// Sum counters' exact totals over every run.
    pub counters: BTreeMap<String, i64>,
}

/// `.framewise/bench/NAME-<timestamp>.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// [`BENCH_SCHEMA`].
    pub schema: String,
    /// The bench's name.
    pub name: String,
    /// Whether the workload is one framewise.toml declares (`false`: an ad-hoc command line).
    pub canonical: bool,
    /// When it ran (UTC, RFC 3339).
    pub at: String,
    /// The git revision of the working directory, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_revision: Option<String>,
    /// How it was asked to run.
    pub settings: BenchSettings,
    /// Where and how it ran.
    pub fingerprint: Fingerprint,
    /// [`Fingerprint::config_hash`].
    pub config_hash: String,
    /// The timing regime (hardware / software / unknown).
    pub regime: TimingGrade,
    /// Truth grade.
    pub grade: Grade,
    /// Every run.
    pub runs: Vec<BenchRun>,
    /// Every run's frames together.
    pub pooled: Pooled,
    /// Noise floor per metric (`1.4826 · MAD / median` of per-run values); null when it
    /// cannot be taken (fewer than 2 runs, a median of 0).
    pub noise_floor: BTreeMap<String, Option<f64>>,
    /// Runs that lost frames: a comparison with this result is inconclusive.
    pub runs_with_lost_frames: u32,
    /// Short runs (fewer frames recorded after the warm-up than `settings.frames`): a
    /// comparison with this result is inconclusive.
    #[serde(default)]
    pub short_runs: u32,
    /// Long runs (more frames recorded after the warm-up than `settings.frames`): a
    /// comparison with this result is inconclusive.
    #[serde(default)]
    pub long_runs: u32,
}

impl BenchRun {
    /// Frames the run recorded after the warm-up: `frames_recorded`, or for a result written
    /// before framewise recorded it, `frames_measured + 1` (the last frame has no period).
    pub fn recorded(&self) -> u64 {
        self.frames_recorded
            .unwrap_or_else(|| self.frames_measured.saturating_add(1))
    }

    /// Whether the run is short against a bench of `frames` frames per run after the warm-up:
    /// it says so, or it recorded fewer.
    pub fn is_short(&self, frames: u64) -> bool {
        self.short || self.recorded() < frames
    }

    /// Whether the run is long against a bench of `frames` frames per run after the warm-up:
    /// it says so, or it recorded more.
    pub fn is_long(&self, frames: u64) -> bool {
        self.long || self.recorded() > frames
    }
}

/// Measures one run: the capture's frames after the first `warmup` are summarized (against
/// `budget_ns`, or the capture's own budget), its hitches counted, its sum counters totalled.
pub fn measure_run(
    capture: &Capture,
    run: u32,
    file: &str,
    warmup: u64,
    budget_ns: Option<u64>,
) -> BenchRun {
    let frames = capture.frames();
    let start = usize::try_from(warmup)
        .unwrap_or(usize::MAX)
        .min(frames.len());
    let options = SummaryOptions::new()
        .with_budget_ns(budget_ns)
        .with_rows(start..frames.len());
    let summary = summarize_with(capture, &options);
    let mut periods: Vec<u64> = (start..frames.len())
        .filter_map(|r| frames.row(r))
        .filter(|r| !r.paused)
        .filter_map(|r| r.period_ns)
        .collect();
    periods.sort_unstable();
    let measured_ns: u64 = periods.iter().sum();
    let budget = budget_ns.unwrap_or_else(|| capture.frame_budget_ns());
    let hitches = crate::hitch::judge_frames(capture, budget)
        .iter()
        .skip(start)
        .flatten()
        .filter(|j| j.hitch)
        .count() as u64;
    let measured_s = measured_ns as f64 / 1e9;
    let hitches_per_min = per_min(hitches, measured_s);
    let mut counters = BTreeMap::new();
    for (id, info) in capture.counters().iter().enumerate() {
        if info.kind != crate::model::CounterKind::Sum || info.numeric != Numeric::Integer {
            continue;
        }
        let total: i64 = (start..frames.len())
            .filter(|&r| !frames.paused.get(r).copied().unwrap_or(false))
            .flat_map(|r| capture.counter_values().frame(r))
            .filter(|e| e.counter as usize == id)
            .fold(0i64, |acc, e| acc.saturating_add(e.raw));
        *counters.entry(info.name.clone()).or_insert(0) += total;
    }
    let mut metrics = summary.metrics().values;
    metrics.insert("hitches.per_min".to_owned(), hitches_per_min);
    let frames_lost = capture
        .defects()
        .iter()
        .filter(|d| loses_frames(d.kind))
        .map(|d| d.count.max(1))
        .sum();
    BenchRun {
        run,
        capture: file.to_owned(),
        frames_measured: periods.len() as u64,
        frames_recorded: Some((frames.len() - start) as u64),
        // Set against the bench's `frames` by [`BenchResult::new`].
        short: false,
        long: false,
        frames_discarded: start as u64,
        frames_lost,
        measured_s,
        frame: figures(&periods),
        hitches,
        hitches_per_min,
        counters,
        metrics,
        defects: capture.defects().to_vec(),
    }
}

fn per_min(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 * 60.0 / seconds
    } else {
        0.0
    }
}

/// Median, p95 and p99 of sorted periods (ns), in ms, by the summary's percentile rule.
fn figures(sorted_ns: &[u64]) -> FrameFigures {
    use crate::stats::{percentile, Quantile};
    let sorted: Vec<f64> = sorted_ns.iter().map(|&v| v as f64).collect();
    let ms = |q: u32| {
        percentile(&sorted, Quantile(q))
            .ok()
            .map(|v| v / crate::stats::NS_PER_MS)
    };
    FrameFigures {
        median_ms: ms(5000),
        p95_ms: ms(9500),
        p99_ms: ms(9900),
    }
}

impl BenchResult {
    /// Assembles a result from its runs: pooled figures, noise floors, the regime (the
    /// worst of the runs': any software run makes the result software, else any unknown
    /// one unknown).
    pub fn new(
        name: &str,
        canonical: bool,
        at: String,
        settings: BenchSettings,
        fingerprint: Fingerprint,
        mut runs: Vec<BenchRun>,
        grades: &[Grade],
    ) -> Self {
        for r in &mut runs {
            r.short = r.is_short(settings.frames);
            r.long = r.is_long(settings.frames);
        }
        let regime = if grades.iter().any(|g| g.timing == TimingGrade::Software) {
            TimingGrade::Software
        } else if grades.iter().any(|g| g.timing == TimingGrade::Unknown) {
            TimingGrade::Unknown
        } else {
            TimingGrade::Hardware
        };
        let grade = Grade {
            counters: crate::model::CountersGrade::Exact,
            timing: regime,
        };
        let pooled = pool(&runs);
        let mut paths: Vec<String> = runs
            .iter()
            .flat_map(|r| r.metrics.keys().cloned())
            .collect();
        paths.sort();
        paths.dedup();
        let noise_floor = paths
            .into_iter()
            .map(|p| {
                let values = per_run(&runs, &p);
                let floor = if values.len() == runs.len() {
                    stats::noise_floor(&values)
                } else {
                    None
                };
                (p, floor)
            })
            .collect();
        Self {
            schema: BENCH_SCHEMA.to_owned(),
            name: name.to_owned(),
            canonical,
            at,
            git_revision: None,
            config_hash: fingerprint.config_hash(),
            settings,
            fingerprint,
            regime,
            grade,
            runs_with_lost_frames: runs.iter().filter(|r| r.frames_lost > 0).count() as u32,
            short_runs: runs.iter().filter(|r| r.short).count() as u32,
            long_runs: runs.iter().filter(|r| r.long).count() as u32,
            runs,
            pooled,
            noise_floor,
        }
    }

    /// Per-run values of a metric path (runs that lack it are left out).
    pub fn per_run(&self, path: &str) -> Vec<f64> {
        per_run(&self.runs, path)
    }

    /// A metric's value for budgets and headlines: the median of its per-run values.
    pub fn value(&self, path: &str) -> Option<f64> {
        stats::median(&self.per_run(path))
    }
}

fn per_run(runs: &[BenchRun], path: &str) -> Vec<f64> {
    runs.iter()
        .filter_map(|r| r.metrics.get(path).copied())
        .collect()
}

/// Pools runs. Periods are not kept per frame in a result, so the pooled percentiles come
/// from the runs' captures through [`pool_periods`] when the CLI has them; from results
/// alone, [`pool`] gives the frame count, hitches and counters, and leaves the figures to
/// the caller.
fn pool(runs: &[BenchRun]) -> Pooled {
    let frames = runs.iter().map(|r| r.frames_measured).sum();
    let hitches = runs.iter().map(|r| r.hitches).sum();
    let seconds: f64 = runs.iter().map(|r| r.measured_s).sum();
    let mut counters: BTreeMap<String, i64> = BTreeMap::new();
    for r in runs {
        for (k, v) in &r.counters {
            let e = counters.entry(k.clone()).or_insert(0);
            *e = e.saturating_add(*v);
        }
    }
    Pooled {
        frames,
        frame: FrameFigures::default(),
        hitches,
        hitches_per_min: per_min(hitches, seconds),
        counters,
    }
}

/// The measured periods (ns) of a capture after `warmup` frames: what [`pool_periods`]
/// pools across runs.
pub fn measured_periods_ns(capture: &Capture, warmup: u64) -> Vec<u64> {
    let frames = capture.frames();
    let start = usize::try_from(warmup)
        .unwrap_or(usize::MAX)
        .min(frames.len());
    (start..frames.len())
        .filter_map(|r| frames.row(r))
        .filter(|r| !r.paused)
        .filter_map(|r| r.period_ns)
        .collect()
}

/// Sets the pooled frame figures from every run's measured periods together.
pub fn pool_periods(result: &mut BenchResult, mut periods_ns: Vec<u64>) {
    periods_ns.sort_unstable();
    result.pooled.frame = figures(&periods_ns);
}

#[cfg(test)]
mod tests;
