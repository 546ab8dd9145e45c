//! Comparing two bench results: one verdict per metric, one overall, and the exit code by
//! the contract's precedence (3 incomparable, then 1 any regressed, then 0 any improved,
//! else 2).

use serde::{Deserialize, Serialize};

use super::budget::{evaluate_budgets, BudgetCheck, BudgetState, Budgets};
use super::stats::{mean, median, welch};
use super::usable;
use super::{BenchResult, MIN_RUNS, TIMING_METRICS};
use crate::gate::measured_as;
use crate::model::{Grade, TimingGrade};
use crate::summary::{direction, Direction};

/// The schema name of a comparison.
pub const COMPARE_SCHEMA: &str = "framewise.bench-compare/1";

/// The minimum practical effect: a change smaller than 2% is never called.
pub const MIN_EFFECT: f64 = 0.02;

/// The family-wise significance level over the timing metrics (Bonferroni-divided among
/// them).
pub const FAMILY_ALPHA: f64 = 0.05;

/// A verdict word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictWord {
    /// Better beyond the minimum effect, the noise floor and the test.
    Improved,
    /// Worse beyond the minimum effect, the noise floor and the test.
    Regressed,
    /// Within what the data can tell apart.
    NoDetectableChange,
    /// A run lost frames or was short or long, nothing could be compared, or (a metric) a total
    /// over runs that measured different frame counts.
    Inconclusive,
    /// Different configuration, regime, or too few runs.
    Incomparable,
}

impl VerdictWord {
    /// The word as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Improved => "improved",
            Self::Regressed => "regressed",
            Self::NoDetectableChange => "no-detectable-change",
            Self::Inconclusive => "inconclusive",
            Self::Incomparable => "incomparable",
        }
    }
}

/// How a metric is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// Welch's t-test on per-run values, past the minimum effect and the noise floor.
    Timing,
    /// Exact integers.
    Counter,
}

/// One metric's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricVerdict {
    /// Metric path.
    pub metric: String,
    /// How it was compared.
    pub kind: MetricKind,
    /// Which way is better.
    pub direction: Direction,
    /// Mean of the before side's per-run values.
    pub before: f64,
    /// Mean of the after side's per-run values.
    pub after: f64,
    /// `(after − before) / before`; null when before is 0 or the ratio overflows.
    pub change: Option<f64>,
    /// Welch's two-sided p-value (timing metrics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// The significance level this metric was tested at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Pooled noise floor: the root mean square of the two sides' noise floors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor: Option<f64>,
    /// The smallest relative change these runs could have called: the largest of the
    /// minimum effect, the pooled noise floor and the test's critical difference (absent
    /// when the critical difference's ratio to before overflows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smallest_detectable: Option<f64>,
    /// The verdict.
    pub verdict: VerdictWord,
    /// Why, when the numbers alone do not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One side of a comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideInfo {
    /// Bench name.
    pub name: String,
    /// When it ran.
    pub at: String,
    /// Declared build id, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// Git revision, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_revision: Option<String>,
    /// Runs.
    pub runs: usize,
    /// Config hash.
    pub config_hash: String,
    /// Timing regime.
    pub regime: TimingGrade,
    /// Canonical (from framewise.toml) or ad hoc.
    pub canonical: bool,
    /// Pooled frame median, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_median_ms: Option<f64>,
    /// Pooled frame p95, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_p95_ms: Option<f64>,
}

impl SideInfo {
    fn of(r: &BenchResult) -> Self {
        Self {
            name: r.name.clone(),
            at: r.at.clone(),
            build: r.fingerprint.build.clone(),
            git_revision: r.git_revision.clone(),
            runs: r.runs.len(),
            config_hash: r.config_hash.clone(),
            regime: r.regime,
            canonical: r.canonical,
            frame_median_ms: r.pooled.frame.median_ms,
            frame_p95_ms: r.pooled.frame.p95_ms,
        }
    }
}

/// The overall verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overall {
    /// The verdict.
    pub verdict: VerdictWord,
    /// The exit code it maps to.
    pub exit_code: i32,
    /// Why, in sentences.
    pub reasons: Vec<String>,
    /// Every declared budget against the after side (median of its per-run values):
    /// distances are reported here, decided by `framewise check`.
    pub budgets: Vec<BudgetCheck>,
}

/// A metric measured in every run of the before side and missing from a run of the after
/// side: a regression (as `gate` calls a metric missing in its candidate), never dropped.
/// What was measured before and no longer is cannot be judged better, nor unchanged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MissingMetric {
    /// Metric path, as measured (a budget's alias spelling resolved).
    pub metric: String,
    /// How it would have been compared.
    pub kind: MetricKind,
    /// Which way is better.
    pub direction: Direction,
    /// Mean of the before side's per-run values.
    pub before: f64,
    /// Runs of the after side that have a value for it (fewer than its runs).
    pub after_runs: usize,
    /// Always `regressed`.
    pub verdict: VerdictWord,
    /// Why, in words.
    pub note: String,
}

/// `bench --compare --format json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// [`COMPARE_SCHEMA`].
    pub schema: String,
    /// The earlier result.
    pub before: SideInfo,
    /// The later result.
    pub after: SideInfo,
    /// Truth grade (the after side's).
    pub grade: Grade,
    /// The rule, in words.
    pub method: String,
    /// One verdict per metric.
    pub metrics: Vec<MetricVerdict>,
    /// Metrics measured in every run before and missing from a run after: each a regression.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<MissingMetric>,
    /// The overall verdict.
    pub overall: Overall,
}

impl Comparison {
    /// Metrics with a verdict (a missing metric counts as regressed).
    pub fn count(&self, verdict: VerdictWord) -> usize {
        self.metrics.iter().filter(|m| m.verdict == verdict).count()
            + self.missing.iter().filter(|m| m.verdict == verdict).count()
    }
}

/// A relative change as a signed percentage, with one decimal unless that would read
/// `+0.0%` on a change: then with as many as its first significant digit needs
/// (`+0.004%`), so a reason never says a metric moved by 0.0%.
pub fn percent_text(change: f64) -> String {
    let p = change * 100.0;
    if !p.is_finite() {
        return format!("{p:+}%");
    }
    for decimals in 1..=12 {
        let text = format!("{p:+.decimals$}");
        if p == 0.0 || text.parse::<f64>().is_ok_and(|shown| shown != 0.0) {
            return format!("{text}%");
        }
    }
    format!("{p:+.1e}%")
}

/// The method, stated in every comparison.
pub const METHOD: &str = "timing metrics: Welch's t-test on per-run values (each run one value), two-sided, family-wise alpha 0.05 split evenly (Bonferroni) over the timing metrics; a change is called only when it exceeds 2%, the pooled noise floor (RMS of both sides' 1.4826*MAD/median) and the test's critical difference. Counters: exact; a counter that varies between runs is called only when the runs do not overlap and the medians differ by more than 2%";

/// The relative change from `before` to `after`; `None` from 0, or when it is not a finite
/// number (a `before` so small that the ratio overflows).
fn relative(before: f64, after: f64) -> Option<f64> {
    (before != 0.0)
        .then(|| (after - before) / before.abs())
        .filter(|c| c.is_finite())
}

/// Better or worse by direction: `+1` worse, `-1` better, `0` equal.
fn worse_sign(path: &str, before: f64, after: f64) -> i32 {
    let d = match direction(path) {
        Direction::LowerIsBetter => after - before,
        Direction::HigherIsBetter => before - after,
    };
    if d > 0.0 {
        1
    } else if d < 0.0 {
        -1
    } else {
        0
    }
}

fn called(path: &str, before: f64, after: f64) -> VerdictWord {
    match worse_sign(path, before, after) {
        1 => VerdictWord::Regressed,
        -1 => VerdictWord::Improved,
        _ => VerdictWord::NoDetectableChange,
    }
}

fn timing_verdict(
    path: &str,
    before_runs: &[f64],
    after_runs: &[f64],
    floors: (Option<f64>, Option<f64>),
    alpha: f64,
) -> Option<MetricVerdict> {
    let before = mean(before_runs)?;
    let after = mean(after_runs)?;
    let Some(w) = welch(before_runs, after_runs, alpha) else {
        // Measured on both sides, but the test could not be taken (values so large that its
        // arithmetic overflows): judged neither way, never dropped (a dropped metric let
        // the rest read `improved`).
        return Some(MetricVerdict {
            metric: path.to_owned(),
            kind: MetricKind::Timing,
            direction: direction(path),
            before,
            after,
            change: relative(before, after),
            p_value: None,
            alpha: Some(alpha),
            noise_floor: None,
            smallest_detectable: None,
            verdict: VerdictWord::Inconclusive,
            note: Some(
                "Welch's test could not be taken on these values (its arithmetic overflows)"
                    .to_owned(),
            ),
        });
    };
    let floor = {
        let (a, b) = (floors.0.unwrap_or(0.0), floors.1.unwrap_or(0.0));
        ((a * a + b * b) / 2.0).sqrt()
    };
    let change = relative(before, after);
    let critical = if before != 0.0 {
        w.t_critical * w.standard_error / before.abs()
    } else {
        0.0
    };
    // Not finite only for a `before` so small that the ratio overflows: nothing to state.
    let critical = critical.is_finite().then_some(critical);
    let smallest = critical.map(|critical| MIN_EFFECT.max(floor).max(critical));
    let significant = w.p_value < alpha;
    let big_enough = match change {
        Some(c) => c.abs() > MIN_EFFECT && c.abs() > floor,
        None => after != before,
    };
    let verdict = if significant && big_enough {
        called(path, before, after)
    } else {
        VerdictWord::NoDetectableChange
    };
    Some(MetricVerdict {
        metric: path.to_owned(),
        kind: MetricKind::Timing,
        direction: direction(path),
        before,
        after,
        change,
        p_value: Some(w.p_value),
        alpha: Some(alpha),
        noise_floor: Some(floor),
        smallest_detectable: smallest,
        verdict,
        note: None,
    })
}

fn counter_verdict(path: &str, before_runs: &[f64], after_runs: &[f64]) -> Option<MetricVerdict> {
    let constant = |v: &[f64]| v.windows(2).all(|w| w[0] == w[1]);
    let (bmed, amed) = (median(before_runs)?, median(after_runs)?);
    let (verdict, note) = if constant(before_runs) && constant(after_runs) {
        (called(path, bmed, amed), None)
    } else {
        let (bmin, bmax) = min_max(before_runs);
        let (amin, amax) = min_max(after_runs);
        let apart = amin > bmax || amax < bmin;
        let big = relative(bmed, amed).is_none_or(|c| c.abs() > MIN_EFFECT);
        let v = if apart && big {
            called(path, bmed, amed)
        } else {
            VerdictWord::NoDetectableChange
        };
        (
            v,
            Some(format!(
                "varies between runs (before {bmin}..{bmax}, after {amin}..{amax})"
            )),
        )
    };
    Some(MetricVerdict {
        metric: path.to_owned(),
        kind: MetricKind::Counter,
        direction: direction(path),
        before: mean(before_runs)?,
        after: mean(after_runs)?,
        change: relative(mean(before_runs)?, mean(after_runs)?),
        p_value: None,
        alpha: None,
        noise_floor: None,
        smallest_detectable: None,
        verdict,
        note,
    })
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// Whether a metric path is a total over a run's measured frames (`counter.NAME.sum`): such
/// values compare only between runs that measured as many frames.
fn is_total(path: &str) -> bool {
    path.starts_with("counter.") && path.ends_with(".sum")
}

/// Whether every run of `r` has a value for `path`.
fn in_every_run(r: &BenchResult, path: &str) -> bool {
    r.per_run(path).len() == r.runs.len()
}

/// The paths to compare: the timing headline, the sum counters' totals
/// (`counter.NAME.sum`), and every budget's path as measured (resolved as `gate` and the
/// budgets resolve it: `phase.X` is `scope.X`, `counter.drawCalls.max` is
/// `counter.draw_calls.max`), each once. Split into those present in every run on both sides
/// (compared) and those present in every run before but missing from a run after (each a
/// regression); a path missing before is not compared.
fn compared_paths(
    before: &BenchResult,
    after: &BenchResult,
    budgets: &Budgets,
) -> (Vec<String>, Vec<String>) {
    let mut paths: Vec<String> = TIMING_METRICS.iter().map(|s| (*s).to_owned()).collect();
    for r in before.runs.iter().chain(&after.runs) {
        for name in r.counters.keys() {
            paths.push(format!("counter.{name}.sum"));
        }
    }
    let measured = |p: &str| {
        before
            .runs
            .iter()
            .chain(&after.runs)
            .any(|r| r.metrics.contains_key(p))
            .then_some(())
    };
    for (_, metric, _) in budgets.entries() {
        let path = measured_as(&metric, measured).map_or(metric, |(path, ())| path);
        paths.push(path);
    }
    let mut seen = std::collections::BTreeSet::new();
    paths.retain(|p| seen.insert(p.clone()));
    let missing = paths
        .iter()
        .filter(|p| in_every_run(before, p) && !in_every_run(after, p))
        .cloned()
        .collect();
    paths.retain(|p| in_every_run(before, p) && in_every_run(after, p));
    (paths, missing)
}

/// The missing metric `path` ([`MissingMetric`]).
fn missing_metric(path: &str, before: &BenchResult, after: &BenchResult) -> MissingMetric {
    let after_runs = after.per_run(path).len();
    MissingMetric {
        metric: path.to_owned(),
        kind: if path.starts_with("counter.") {
            MetricKind::Counter
        } else {
            MetricKind::Timing
        },
        direction: direction(path),
        before: mean(&before.per_run(path)).unwrap_or(0.0),
        after_runs,
        verdict: VerdictWord::Regressed,
        note: format!(
            "measured in all {} run(s) before, missing from {} of {} run(s) after",
            before.runs.len(),
            after.runs.len() - after_runs,
            after.runs.len()
        ),
    }
}

/// The method when only the exact counters are judged ([`compare_counters_only`]).
pub const COUNTERS_ONLY_METHOD: &str = "counters only: timing metrics are not compared. Counters: exact; a counter that varies between runs is called only when the runs do not overlap and the medians differ by more than 2%";

/// Compares `after` against `before`, stating `budgets` against `after`.
pub fn compare(before: &BenchResult, after: &BenchResult, budgets: &Budgets) -> Comparison {
    compare_judging(before, after, budgets, false)
}

/// Compares as [`compare`] does, but judges only the exact counters (`counter.*` paths):
/// on a machine whose timings move with what else runs (a shared CI runner, a software
/// GPU), a verdict that must not depend on the machine's load is decided by counts alone.
/// With no counter measured on both sides, the comparison is inconclusive.
pub fn compare_counters_only(
    before: &BenchResult,
    after: &BenchResult,
    budgets: &Budgets,
) -> Comparison {
    compare_judging(before, after, budgets, true)
}

fn compare_judging(
    before: &BenchResult,
    after: &BenchResult,
    budgets: &Budgets,
    counters_only: bool,
) -> Comparison {
    let mut reasons = Vec::new();
    if before.config_hash != after.config_hash {
        reasons.push(format!(
            "config hashes differ ({} vs {}): the workload, settings or machine changed",
            before.config_hash, after.config_hash
        ));
    }
    if before.regime != after.regime {
        reasons.push(format!(
            "timing regimes differ ({} vs {})",
            regime_name(before.regime),
            regime_name(after.regime)
        ));
    }
    for (side, r) in [("before", before), ("after", after)] {
        if r.runs.len() < MIN_RUNS {
            reasons.push(format!(
                "the {side} side has {} runs; a comparison needs at least {MIN_RUNS}",
                r.runs.len()
            ));
        }
    }
    let budget_checks = evaluate_budgets(budgets, false, |p| after.value(p));
    let mut metrics = Vec::new();
    let mut missing = Vec::new();
    let verdict = if !reasons.is_empty() {
        VerdictWord::Incomparable
    } else {
        let (mut paths, mut gone) = compared_paths(before, after, budgets);
        if counters_only {
            paths.retain(|p| p.starts_with("counter."));
            gone.retain(|p| p.starts_with("counter."));
        }
        missing = gone
            .iter()
            .map(|p| missing_metric(p, before, after))
            .collect();
        let timing = paths.iter().filter(|p| !p.starts_with("counter.")).count();
        let alpha = FAMILY_ALPHA / timing.max(1) as f64;
        for p in &paths {
            let (b, a) = (before.per_run(p), after.per_run(p));
            let v = if p.starts_with("counter.") {
                counter_verdict(p, &b, &a)
            } else {
                let floors = (
                    before.noise_floor.get(p).copied().flatten(),
                    after.noise_floor.get(p).copied().flatten(),
                );
                timing_verdict(p, &b, &a, floors, alpha)
            };
            metrics.extend(v);
        }
        // Totals over different frame counts are not the same workload's: a sum is called
        // only when every run on both sides measured as many frames.
        let counts = |r: &BenchResult| -> Vec<u64> {
            r.runs.iter().map(|run| run.frames_measured).collect()
        };
        let (before_counts, after_counts) = (counts(before), counts(after));
        let same_count = before_counts
            .iter()
            .chain(&after_counts)
            .all(|&n| Some(n) == before_counts.first().copied());
        if !same_count {
            let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
            let note = format!(
                "a total over each run's measured frames, and the runs measured different frame counts (before {}; after {}): not comparable",
                list(&before_counts),
                list(&after_counts)
            );
            for m in metrics.iter_mut().filter(|m| is_total(&m.metric)) {
                m.verdict = VerdictWord::Inconclusive;
                m.note = Some(note.clone());
            }
        }
        let lost = usable::lost_runs(before).saturating_add(usable::lost_runs(after));
        let short: Vec<String> = [("before", before), ("after", after)]
            .into_iter()
            .flat_map(|(side, r)| usable::length_reasons(Some(side), r))
            .collect();
        if lost > 0 || !short.is_empty() {
            if lost > 0 {
                reasons.push(format!(
                    "{lost} run(s) lost frames (dropped by the recorder or lost from the file): the comparison is inconclusive"
                ));
            }
            for why in short {
                reasons.push(format!("{why}: the comparison is inconclusive"));
            }
            VerdictWord::Inconclusive
        } else if !missing.is_empty() || metrics.iter().any(|m| m.verdict == VerdictWord::Regressed)
        {
            VerdictWord::Regressed
        } else if metrics.is_empty() {
            reasons.push("no metric was measured in every run of both sides".to_owned());
            VerdictWord::Inconclusive
        } else if metrics
            .iter()
            .any(|m| m.verdict == VerdictWord::Inconclusive)
        {
            reasons.push(
                "a metric could not be judged (see its note): the comparison is inconclusive"
                    .to_owned(),
            );
            VerdictWord::Inconclusive
        } else if metrics.iter().any(|m| m.verdict == VerdictWord::Improved) {
            VerdictWord::Improved
        } else {
            VerdictWord::NoDetectableChange
        }
    };
    for m in &metrics {
        if matches!(m.verdict, VerdictWord::Regressed | VerdictWord::Improved) {
            reasons.push(format!(
                "{} {}{}",
                m.metric,
                m.verdict.as_str(),
                m.change
                    .map(|c| format!(" by {}", percent_text(c)))
                    .unwrap_or_default()
            ));
        }
    }
    for m in &missing {
        reasons.push(format!(
            "{} regressed: {} (what was measured before and no longer is cannot be judged better)",
            m.metric, m.note
        ));
    }
    if verdict == VerdictWord::NoDetectableChange {
        reasons.push("no metric changed beyond what these runs can detect".to_owned());
    }
    if counters_only && verdict != VerdictWord::Incomparable {
        reasons.push(
            "counters only: the exact counters decided; timings were not compared".to_owned(),
        );
    }
    if after.regime == TimingGrade::Software {
        reasons.push(
            "timings are from the software regime (a software GPU adapter): not a hardware measurement".to_owned(),
        );
    }
    for c in &budget_checks {
        if c.state == BudgetState::Breached {
            reasons.push(format!("budget {} breached", c.budget));
        }
    }
    Comparison {
        schema: COMPARE_SCHEMA.to_owned(),
        before: SideInfo::of(before),
        after: SideInfo::of(after),
        grade: after.grade,
        method: if counters_only {
            COUNTERS_ONLY_METHOD
        } else {
            METHOD
        }
        .to_owned(),
        metrics,
        missing,
        overall: Overall {
            exit_code: exit_code(verdict),
            verdict,
            reasons,
            budgets: budget_checks,
        },
    }
}

/// The exit code of an overall verdict.
pub fn exit_code(verdict: VerdictWord) -> i32 {
    match verdict {
        VerdictWord::Incomparable => 3,
        VerdictWord::Regressed => 1,
        VerdictWord::Improved => 0,
        VerdictWord::NoDetectableChange | VerdictWord::Inconclusive => 2,
    }
}

/// A regime's name.
pub fn regime_name(r: TimingGrade) -> &'static str {
    match r {
        TimingGrade::Hardware => "hardware",
        TimingGrade::Software => "software",
        TimingGrade::Unknown => "unknown",
    }
}
