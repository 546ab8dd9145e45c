//! Judging two summaries: each configured path resolved against both (a `*` to every name
//! either has, a sum counter only for a counter wildcard), its worsening in its bad direction
//! against its tolerance, what a damaged input leaves unjudged, and the verdict with its
//! reasons.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::diff::{
    damage_reason, frame_times_are_work, frame_times_comparable, side_defects, Side, SideDefect,
};
use crate::model::{CounterKind, DefectKind};
use crate::summary::{
    direction, format_metric, json_block, parse_metric_path, Direction, MetricTable, Summary,
};

use super::config::{
    alias_path, block_noun, hint, measured_as, nearest, snake_case, GateConfig, GateConfigError,
};
use super::Verdict;

/// What happened to one gated metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Within tolerance.
    Pass,
    /// Worse than tolerance allows.
    Regressed,
    /// The base had it, the candidate lacks it: a regression.
    MissingInCandidate,
    /// Neither capture has it.
    Absent,
    /// Only the candidate has it; nothing to compare.
    NotInBase,
    /// A timing metric across different timing regimes.
    Incomparable,
    /// A side is missing part of what this metric is made of (dropped spans for a
    /// `scope.*` metric, GPU results that never came for a `pass.*` one): its value
    /// describes part of the run, so it cannot pass (`--allow-damaged` judges it).
    Incomplete,
    /// A side measured what the path names (its frames, scope, pass or counter) but too
    /// few values for this statistic (a p99 of 10 frames): it can be judged neither way.
    TooFewValues,
    /// A total over the frames a capture holds (a count of frames or calls, a scope's
    /// total time, a sum counter's sum) between captures of different frame counts: a
    /// longer run's total is larger with nothing slower, so it can be judged neither way.
    FrameCountsDiffer,
}

/// One gated metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateCheck {
    /// The resolved metric path.
    pub metric: String,
    /// The path as configured, when an alias or a wildcard was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configured: Option<String>,
    /// Base value.
    pub base: Option<f64>,
    /// Candidate value.
    pub cand: Option<f64>,
    /// Allowed fractional worsening.
    pub tolerance: f64,
    /// Fractional worsening observed (positive is worse); null when not computable.
    pub worsening: Option<f64>,
    /// Which way is better.
    pub direction: Direction,
    /// Outcome.
    pub status: CheckStatus,
}

/// `gate --format json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    /// `framewise.gate/1`.
    pub schema: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Its exit code.
    pub exit_code: i32,
    /// Why, in sentences, with numbers at their unit's precision
    /// (`frame.avg: 12.04 ms -> 16.02 ms (+33.0%, tolerance +10.0%)`).
    pub reasons: Vec<String>,
    /// Every gated metric.
    pub checks: Vec<GateCheck>,
    /// What was wrong with either capture, each defect tagged with its side.
    pub defects: Vec<SideDefect>,
}

fn is_timing(path: &str) -> bool {
    !path.starts_with("counter.")
}

/// Whether a metric is a total over the frames a capture holds: `frame.count`,
/// `work.count`, a scope's or pass's `count` (frames it ran in), `total` and `calls`, a
/// counter's `sum` and `count`. Such values compare only between captures of as many
/// frames.
pub(super) fn is_total(path: &str) -> bool {
    let stat = path.rsplit('.').next().unwrap_or("");
    match path.split('.').next() {
        Some("frame" | "work") => stat == "count",
        Some("scope" | "pass") => matches!(stat, "count" | "total" | "calls"),
        Some("counter") => matches!(stat, "sum" | "count"),
        _ => false,
    }
}

/// The frames a summary's statistics are taken over (paused frames are in none).
fn frames_judged(s: &Summary) -> u64 {
    s.capture.frames.saturating_sub(s.capture.frames_paused)
}

/// Whether counter `name` is a sum counter on the side(s) that have it.
fn is_sum_counter(name: &str, base: &Summary, cand: &Summary) -> bool {
    base.counters
        .get(name)
        .or_else(|| cand.counters.get(name))
        .is_some_and(|c| c.kind == CounterKind::Sum)
}

/// Whether counter `name` is a gauge on the side(s) that have it.
fn is_gauge(name: &str, base: &Summary, cand: &Summary) -> bool {
    base.counters
        .get(name)
        .or_else(|| cand.counters.get(name))
        .is_some_and(|c| c.kind == CounterKind::Gauge)
}

/// Resolves a configured path to concrete paths: wildcards expand over both captures'
/// names (a counter wildcard over sum counters only); an exact path present in neither is
/// tried under its lite-profiler alias, and refused when its scope, pass or counter is in
/// neither capture.
fn resolve(
    configured: &str,
    (base, cand): (&Summary, &Summary),
    (bt, ct): (&MetricTable, &MetricTable),
) -> Result<Vec<String>, GateConfigError> {
    let canonical = if configured.starts_with("phase.") {
        alias_path(configured)
    } else {
        configured.to_owned()
    };
    let canonical = respelt(&canonical, (bt, ct));
    // A gauge's sum is in no summary: refused, pointing at its level, rather than left
    // unmeasured.
    for path in [canonical.clone(), alias_path(&canonical)] {
        if let Some(p) = parse_metric_path(&path) {
            if let (Some(name), "counter", "sum") = (p.name, p.block, p.stat) {
                if is_gauge(name, base, cand) {
                    return Err(GateConfigError::GaugeSum {
                        metric: configured.to_owned(),
                        name: name.to_owned(),
                    });
                }
            }
        }
    }
    if let Some(p) = parse_metric_path(&canonical) {
        if p.name == Some("*") {
            let mut names = bt.names(p.block);
            names.extend(ct.names(p.block));
            names.sort();
            names.dedup();
            let all = names.clone();
            if p.block == "counter" {
                names.retain(|n| is_sum_counter(n, base, cand));
            }
            if names.is_empty() {
                // A wildcard that covers nothing gates nothing: a pass it was meant to guard
                // must not slip by as no check at all.
                return Err(GateConfigError::WildcardCoversNothing {
                    metric: configured.to_owned(),
                    why: if all.is_empty() {
                        format!("neither capture has any {}", block_noun(p.block))
                    } else {
                        format!(
                            "a counter wildcard covers sum counters only, and every counter either capture has is a gauge ({}); name a gauge's own path to gate it",
                            first_names(&all, 4)
                        )
                    },
                });
            }
            return Ok(names
                .into_iter()
                .map(|n| format!("{}.{n}.{}", p.block, p.stat))
                .collect());
        }
    }
    let present = |p: &str| (bt.get(p).is_some() || ct.get(p).is_some()).then_some(());
    if let Some((path, ())) = measured_as(&canonical, present) {
        return Ok(vec![path]);
    }
    let aliased = alias_path(&canonical);
    // Absent from both: a null statistic of something that exists (p99 of 50 frames) is
    // absent, a name neither capture has is a mistake.
    match parse_metric_path(&aliased) {
        Some(p) => match p.name {
            Some(name) => {
                let mut names = bt.names(p.block);
                names.extend(ct.names(p.block));
                names.sort();
                names.dedup();
                if names.iter().any(|n| n == name) {
                    return Ok(vec![aliased]);
                }
                let paths: Vec<&str> = bt
                    .values
                    .keys()
                    .chain(ct.values.keys())
                    .map(String::as_str)
                    .collect();
                let near = nearest(&aliased, paths);
                Err(GateConfigError::NotInEitherCapture {
                    metric: configured.to_owned(),
                    block: p.block.to_owned(),
                    name: name.to_owned(),
                    hint: hint(&near, block_noun(p.block), &names, 8),
                })
            }
            None => Ok(vec![aliased]),
        },
        None => Ok(vec![aliased]),
    }
}

/// `path` naming the one scope, pass or counter either capture spells the other way, when
/// neither has the name as written: camelCase and snake_case are one name, both ways
/// (`counter.draw_calls.sum` is a `.litecap`'s `drawCalls`, as `counter.drawCalls.sum` is
/// an `.sgpt`'s `draw_calls`). `path` as it is otherwise (a name either capture has, a
/// wildcard, no name, or more than one name spelt so).
fn respelt(path: &str, (bt, ct): (&MetricTable, &MetricTable)) -> String {
    let Some(p) = parse_metric_path(path) else {
        return path.to_owned();
    };
    let Some(name) = p.name.filter(|&n| n != "*") else {
        return path.to_owned();
    };
    let mut names = bt.names(p.block);
    names.extend(ct.names(p.block));
    names.sort();
    names.dedup();
    if names.iter().any(|n| n == name) {
        return path.to_owned();
    }
    let wanted = snake_case(name);
    let mut same = names.iter().filter(|n| snake_case(n) == wanted);
    match (same.next(), same.next()) {
        (Some(found), None) => format!("{}.{found}.{}", p.block, snake_case(p.stat)),
        _ => path.to_owned(),
    }
}

/// Up to `n` of `names`, comma-separated, with `…` when there are more.
fn first_names(names: &[String], n: usize) -> String {
    let mut text = names
        .iter()
        .take(n)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > n {
        text.push_str(", …");
    }
    text
}

/// A path whose scope, pass or counter none of `tables` has (`counter.draw_call.max`), with the nearest paths they have; `None` when the name exists
/// in one of them (a null statistic of it is merely unmeasured) or the path names no one.
pub fn unknown_name(configured: &str, tables: &[&MetricTable]) -> Option<GateConfigError> {
    let aliased = alias_path(configured);
    let p = parse_metric_path(&aliased)?;
    let name = p.name?;
    let mut names: Vec<String> = tables.iter().flat_map(|t| t.names(p.block)).collect();
    names.sort();
    names.dedup();
    if names.iter().any(|n| n == name) {
        return None;
    }
    let paths: Vec<&str> = tables
        .iter()
        .flat_map(|t| t.values.keys())
        .map(String::as_str)
        .collect();
    let near = nearest(&aliased, paths);
    Some(GateConfigError::NotMeasured {
        metric: configured.to_owned(),
        block: p.block.to_owned(),
        name: name.to_owned(),
        hint: hint(&near, block_noun(p.block), &names, 8),
    })
}

/// Fractional worsening of `cand` against `base` (positive is worse).
pub(super) fn worsening(path: &str, base: f64, cand: f64) -> f64 {
    let d = match direction(path) {
        Direction::LowerIsBetter => cand - base,
        Direction::HigherIsBetter => base - cand,
    };
    if base == 0.0 {
        if d > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    } else {
        d / base.abs()
    }
}

/// A tolerance as a signed percentage in the metric's bad direction (`+10.0%` for a time
/// that may rise 10%, `-5.0%` for fps that may fall 5%), or `exact`.
fn tolerance_words(path: &str, tolerance: f64) -> String {
    if tolerance == 0.0 {
        return "exact".to_owned();
    }
    let sign = match direction(path) {
        Direction::LowerIsBetter => '+',
        Direction::HigherIsBetter => '-',
    };
    format!("{sign}{:.1}%", tolerance * 100.0)
}

/// The reason a check regressed, in one line.
pub(super) fn regression_reason(c: &GateCheck) -> String {
    let tolerance = tolerance_words(&c.metric, c.tolerance);
    match (c.status, c.base, c.cand) {
        (CheckStatus::MissingInCandidate, Some(b), _) => format!(
            "{}: the base has {} and the candidate lacks it",
            c.metric,
            format_metric(&c.metric, b)
        ),
        (_, Some(b), Some(cand)) => {
            let pct = 100.0 * (cand - b) / b.abs();
            let change = if b == 0.0 {
                "from 0".to_owned()
            } else if pct.is_finite() {
                format!("{pct:+.1}%")
            } else {
                // A base so small that the ratio overflows: the values say it.
                "beyond any percentage".to_owned()
            };
            format!(
                "{}: {} -> {} ({change}, tolerance {tolerance})",
                c.metric,
                format_metric(&c.metric, b),
                format_metric(&c.metric, cand)
            )
        }
        _ => format!("{}: {:?}", c.metric, c.status),
    }
}

fn timing_name(grade: &crate::model::Grade) -> String {
    match serde_json::to_value(grade.timing) {
        Ok(serde_json::Value::String(s)) => s,
        _ => format!("{:?}", grade.timing),
    }
}

/// Gates a candidate against a base. Errs when a configured path names a scope, pass or
/// counter neither capture has (a usage error: exit 4), with the nearest valid paths.
pub fn gate(
    base: &Summary,
    cand: &Summary,
    config: &GateConfig,
) -> Result<GateResult, GateConfigError> {
    // Each summary as JSON, once: its metric table, and why a statistic it lacks is null.
    let sides_json = (
        serde_json::to_value(base).unwrap_or_default(),
        serde_json::to_value(cand).unwrap_or_default(),
    );
    let bt = MetricTable::of_json(&sides_json.0);
    let ct = MetricTable::of_json(&sides_json.1);
    let comparable = base.grade.timing_comparable(&cand.grade);
    // `frame.*` of a side whose periods are its work times is not what the other side's is.
    let periods_comparable = frame_times_comparable(base, cand);
    let defects = side_defects(base, cand);
    let damage = damage_reason(&defects);
    let partial = partial_defects(&defects);
    let mut checks = Vec::new();
    let mut too_few = Vec::new();
    let frame_counts = (frames_judged(base), frames_judged(cand));
    let mut resolved = Vec::new();
    for (configured, &tolerance) in &config.tolerances {
        resolved.push((
            configured,
            tolerance,
            resolve(configured, (base, cand), (&bt, &ct))?,
        ));
    }
    // A metric named on its own takes its own tolerance over a wildcard's that covers it
    // (`scope.*.p95=0.1` with `scope.render.p95=0.5`): one check per metric.
    let named: BTreeSet<String> = resolved
        .iter()
        .filter(|(configured, _, _)| !configured.contains('*'))
        .flat_map(|(_, _, metrics)| metrics.iter().cloned())
        .collect();
    for (configured, tolerance, metrics) in resolved {
        let wildcard = configured.contains('*');
        for metric in metrics {
            if wildcard && named.contains(&metric) {
                continue;
            }
            let (b, c) = (bt.get(&metric), ct.get(&metric));
            let (status, worse) = match (b, c) {
                _ if is_timing(&metric) && !comparable && (b.is_some() || c.is_some()) => {
                    (CheckStatus::Incomparable, None)
                }
                _ if metric.starts_with("frame.")
                    && !periods_comparable
                    && (b.is_some() || c.is_some()) =>
                {
                    (CheckStatus::Incomparable, None)
                }
                (Some(b), Some(c)) => {
                    let w = worsening(&metric, b, c);
                    // A tiny epsilon keeps exact gates exact under float noise.
                    let status = if frame_counts.0 != frame_counts.1 && is_total(&metric) {
                        CheckStatus::FrameCountsDiffer
                    } else if !config.allow_damaged && partial.affects(&metric) {
                        CheckStatus::Incomplete
                    } else if w > tolerance + 1e-12 {
                        CheckStatus::Regressed
                    } else {
                        CheckStatus::Pass
                    };
                    (status, w.is_finite().then_some(w))
                }
                (Some(_), None) | (None, Some(_)) => {
                    let (side, json) = match b {
                        Some(_) => ("candidate", &sides_json.1),
                        None => ("base", &sides_json.0),
                    };
                    match too_few_reason(json, &metric) {
                        Some(why) => {
                            // Too few values (a p99 of 50 frames), or none that means
                            // anything (a gauge's sum, where the other side counts a sum).
                            let has = if why.starts_with("needs at least") {
                                "too few values for it"
                            } else {
                                "no value for it"
                            };
                            too_few.push(format!(
                                "{metric}: the {side} has {has} ({why}), so it can be judged neither way"
                            ));
                            (CheckStatus::TooFewValues, None)
                        }
                        // A candidate that lost spans (or GPU results) may lack the
                        // scope (or pass) for that alone: it cannot be judged missing.
                        None if b.is_some()
                            && !config.allow_damaged
                            && partial.affects_side(&metric, Side::Cand) =>
                        {
                            (CheckStatus::Incomplete, None)
                        }
                        None if b.is_some() => (CheckStatus::MissingInCandidate, None),
                        None => (CheckStatus::NotInBase, None),
                    }
                }
                // A wildcard asks about every name it covers: a scope too rare in both
                // runs for the statistic (a level load's p95) has nothing to compare and
                // stays `absent`; a path the caller named must be judged.
                (None, None) if configured.contains('*') => (CheckStatus::Absent, None),
                (None, None) => match too_few_reason(&sides_json.0, &metric)
                    .or_else(|| too_few_reason(&sides_json.1, &metric))
                {
                    Some(why) => {
                        too_few.push(format!(
                            "{metric}: neither capture has enough values for it ({why}), so it can be judged neither way"
                        ));
                        (CheckStatus::TooFewValues, None)
                    }
                    None => (CheckStatus::Absent, None),
                },
            };
            checks.push(GateCheck {
                configured: (configured != &metric).then(|| configured.clone()),
                direction: direction(&metric),
                metric,
                base: b,
                cand: c,
                tolerance,
                worsening: worse,
                status,
            });
        }
    }

    let mut reasons = Vec::new();
    let incomparable: Vec<&GateCheck> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Incomparable)
        .collect();
    let regressed: Vec<&GateCheck> = checks
        .iter()
        .filter(|c| {
            matches!(
                c.status,
                CheckStatus::Regressed | CheckStatus::MissingInCandidate
            )
        })
        .collect();
    let incomplete: Vec<&GateCheck> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Incomplete)
        .collect();
    let totals: Vec<String> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::FrameCountsDiffer)
        .map(|c| c.metric.clone())
        .collect();
    let compared = checks
        .iter()
        .filter(|c| matches!(c.status, CheckStatus::Pass | CheckStatus::Regressed))
        .count();
    let verdict = if let Some(reason) = damage.as_ref().filter(|_| !config.allow_damaged) {
        reasons.push(reason.clone());
        Verdict::Inconclusive
    } else if !incomparable.is_empty() {
        if comparable {
            let kind = |s: &Summary| {
                if frame_times_are_work(s) {
                    "work times (a .litecap's frame time is also its period)"
                } else {
                    "periods (begin to next begin)"
                }
            };
            reasons.push(format!(
                "frame times differ in kind (base: {}, candidate: {}): {} frame metrics cannot be compared; work.* compares work times on both",
                kind(base),
                kind(cand),
                incomparable.len()
            ));
        } else {
            reasons.push(format!(
                "timing regimes differ (base {}, candidate {}): {} timing metrics cannot be compared",
                timing_name(&base.grade),
                timing_name(&cand.grade),
                incomparable.len()
            ));
        }
        Verdict::Incomparable
    } else if base.is_empty() || cand.is_empty() {
        reasons.push(format!(
            "empty capture: base has {} frames with a period, candidate {}",
            base.frame.times.count, cand.frame.times.count
        ));
        Verdict::Inconclusive
    } else if !regressed.is_empty() {
        for c in &regressed {
            reasons.push(regression_reason(c));
        }
        Verdict::Fail
    } else if !incomplete.is_empty() || !too_few.is_empty() || !totals.is_empty() {
        if !incomplete.is_empty() {
            reasons.push(partial.reason(&incomplete));
        }
        reasons.extend(too_few);
        if !totals.is_empty() {
            reasons.push(format!(
                "{}: totals over the frames each capture holds, and the base holds {} frames, the candidate {} (paused frames aside): a longer run's total is larger with nothing slower, so they can be judged neither way (gate a per-frame statistic such as counter.NAME.avg or scope.NAME.p95 instead)",
                first_names(&totals, 5),
                frame_counts.0,
                frame_counts.1
            ));
        }
        Verdict::Inconclusive
    } else if compared == 0 {
        reasons.push("no configured metric is present in both captures".into());
        Verdict::Inconclusive
    } else {
        reasons.push(format!(
            "{compared} {} within tolerance",
            if compared == 1 { "metric" } else { "metrics" }
        ));
        Verdict::Pass
    };
    if config.allow_damaged
        && checks.iter().any(|c| {
            matches!(c.status, CheckStatus::Pass | CheckStatus::Regressed)
                && partial.affects(&c.metric)
        })
    {
        reasons.push(
            "judged scope or pass metrics although an input is missing part of them (--allow-damaged): see the defects"
                .into(),
        );
    }
    if damage.is_some() && config.allow_damaged {
        reasons
            .push("judged although an input lost frames (--allow-damaged): see the defects".into());
    }
    Ok(GateResult {
        schema: "framewise.gate/1".into(),
        verdict,
        exit_code: verdict.exit_code(),
        reasons,
        checks,
        defects,
    })
}

/// Why a side's summary (as JSON) has no value at `metric` although it measured what the
/// path names — its frames, or the scope, pass or counter: too few values for the statistic
/// (the block's `null_reasons` says how few). `None` when the value is there, or the side
/// never measured the subject at all.
fn too_few_reason(summary: &serde_json::Value, metric: &str) -> Option<String> {
    let p = parse_metric_path(metric)?;
    let block = summary.get(json_block(p.block)?)?;
    let subject = match p.name {
        Some(name) => block.get(name)?,
        None => block,
    };
    if subject.get(p.stat).is_some_and(|v| !v.is_null()) || !subject.is_object() {
        return None;
    }
    let why = subject
        .get("null_reasons")
        .and_then(|r| r.get(p.stat))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("not computable from what it measured");
    Some(why.to_owned())
}

/// The defects that leave a side's `scope.*` metrics (dropped spans) or `pass.*` metrics
/// (GPU results that never came) describing part of the run, though no frame was lost.
struct PartialDefects<'a> {
    spans: Vec<&'a SideDefect>,
    gpu: Vec<&'a SideDefect>,
}

fn partial_defects(defects: &[SideDefect]) -> PartialDefects<'_> {
    let of = |kind: DefectKind| defects.iter().filter(|d| d.defect.kind == kind).collect();
    PartialDefects {
        spans: of(DefectKind::DroppedSpans),
        gpu: of(DefectKind::GpuResultsMissing),
    }
}

impl PartialDefects<'_> {
    /// Whether `metric` is made of what a side is missing.
    fn affects(&self, metric: &str) -> bool {
        (metric.starts_with("scope.") && !self.spans.is_empty())
            || (metric.starts_with("pass.") && !self.gpu.is_empty())
    }

    /// Whether `metric` is made of what `side` is missing.
    fn affects_side(&self, metric: &str, side: Side) -> bool {
        let on_side = |defects: &[&SideDefect]| defects.iter().any(|d| d.side == side);
        (metric.starts_with("scope.") && on_side(&self.spans))
            || (metric.starts_with("pass.") && on_side(&self.gpu))
    }

    /// The reason an incomplete check gives: which metrics, which side, which defect.
    fn reason(&self, incomplete: &[&GateCheck]) -> String {
        let sides = |defects: &[&SideDefect]| {
            let mut names: Vec<String> = Vec::new();
            for d in defects {
                let name = match d.side {
                    Side::Base => "base",
                    Side::Cand => "candidate",
                };
                names.push(format!("{name}: {}", d.defect.message));
            }
            names.join("; ")
        };
        let mut parts = Vec::new();
        if incomplete.iter().any(|c| c.metric.starts_with("scope.")) {
            parts.push(format!("spans were dropped ({})", sides(&self.spans)));
        }
        if incomplete.iter().any(|c| c.metric.starts_with("pass.")) {
            parts.push(format!("GPU results are missing ({})", sides(&self.gpu)));
        }
        let first = &incomplete[0].metric;
        let more = match incomplete.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        format!(
            "{first}{more} cannot be judged: {}; --allow-damaged judges what is left",
            parts.join(", ")
        )
    }
}
