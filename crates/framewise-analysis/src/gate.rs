//! `framewise gate`: a regression gate over metric paths, and the verdict contract.
//!
//! Rules (docs/CONCEPTS.md, "Exit codes" and "Gate defaults"):
//! - Default tolerances (lite-profiler's): `frame.avg` and `frame.p99` may worsen by 10%.
//!   Nothing else gates unless named: counters vary between two runs of the same workload
//!   (particles alive, a camera's position), so a counter gates only when a tolerance names
//!   it, and then exactly as given (0 is exact).
//! - `*` stands for a name (`counter.*.max`, `scope.*.p95`). A counter wildcard covers sum
//!   counters only: a gauge holds a level (a position, a pool's size), and its extremes are
//!   not a regression signal; a gauge gates when its own path is named.
//! - Every path must name something: an unknown statistic (`frame.p98`) is refused when the
//!   tolerance is set, and an exact path that neither capture has (`counter.draw_call.max`)
//!   when the gate runs, each with the nearest valid paths ([`GateConfigError`]).
//! - Direction-aware: `frame.fps`, `frame.low_1pct_fps`, `frame.low_01pct_fps` regress when
//!   they fall; everything else when it rises.
//! - A metric the base had and the candidate lacks is a regression.
//! - An input that lost frames (see [`crate::diff::loses_frames`]), an empty capture, or no
//!   configured metric present in both, is inconclusive; [`GateConfig::allow_damaged`]
//!   judges a damaged input anyway.
//! - Timing metrics across different timing regimes are incomparable; counters compare
//!   anywhere.
//! - lite-profiler gate configs are accepted: `{"tolerances": {...}}`, `phase.` for
//!   `scope.`, camelCase for snake_case; any other top-level key is refused.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diff::{damage_reason, side_defects, Side, SideDefect};
use crate::model::{CounterKind, DefectKind};
use crate::summary::{
    direction, format_metric, json_block, known_stats, parse_metric_path, Direction, MetricTable,
    Summary,
};

/// A verdict, with the exit code every verb maps it to (the codes are API).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Pass, improved, inside budgets: exit 0.
    Pass,
    /// Fail, regressed, breached: exit 1.
    Fail,
    /// Inconclusive, no detectable change: exit 2.
    Inconclusive,
    /// Incomparable (different timing regimes, config hashes): exit 3.
    Incomparable,
    /// Infrastructure or usage error: exit 4.
    Error,
}

impl Verdict {
    /// The process exit code.
    pub fn exit_code(self) -> i32 {
        match self {
            Self::Pass => 0,
            Self::Fail => 1,
            Self::Inconclusive => 2,
            Self::Incomparable => 3,
            Self::Error => 4,
        }
    }
}

/// A gate configuration error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GateConfigError {
    /// The config is not JSON of the expected shape.
    #[error("gate config is not valid JSON at line {line}, column {column}: {message}")]
    Json {
        /// Line.
        line: usize,
        /// Column.
        column: usize,
        /// What serde_json said.
        message: String,
    },
    /// A tolerance is negative, not finite, or not a number.
    #[error("tolerance for `{metric}` must be a finite number >= 0, got {value}")]
    BadTolerance {
        /// The metric.
        metric: String,
        /// What was given.
        value: String,
    },
    /// A tolerance so large that the check could never fail: above [`MAX_TOLERANCE`], or 1
    /// or more on a higher-is-better metric (fps cannot fall by more than all of it).
    #[error("tolerance for `{metric}` must be {bound}, got {value}: {why}")]
    ToleranceTooLarge {
        /// The metric.
        metric: String,
        /// What was given.
        value: String,
        /// The bound in words (`at most 10`, `below 1`).
        bound: &'static str,
        /// Why the bound is there.
        why: &'static str,
    },
    /// A `--tolerance` argument is not `metric=fraction`.
    #[error("expected METRIC=FRACTION (e.g. frame.p99=0.10), got `{arg}`")]
    BadArgument {
        /// The argument.
        arg: String,
    },
    /// A metric path that cannot name anything.
    #[error("`{metric}` is not a metric path (frame.<m>, work.<m>, scope.<name>.<m>, pass.<name>.<m>, counter.<name>.<m>)")]
    BadMetric {
        /// The path.
        metric: String,
    },
    /// A path whose statistic its block does not have (`frame.p98`).
    #[error("`{metric}`: `{stat}` is not a statistic of {block}.*; {hint}")]
    UnknownStatistic {
        /// The path as given.
        metric: String,
        /// Its block (`frame`, `scope`, …).
        block: String,
        /// The statistic it names.
        stat: String,
        /// The nearest valid paths, or the block's statistics.
        hint: String,
    },
    /// An error about the entry on a line of a config file.
    #[error("line {line}: {error}")]
    AtLine {
        /// 1-based line.
        line: usize,
        /// What is wrong there.
        error: Box<GateConfigError>,
    },
    /// A budget's path whose scope, pass or counter nothing measured has.
    #[error("`{metric}` names nothing measured: no {block} named `{name}`; {hint}")]
    NotMeasured {
        /// The path as given.
        metric: String,
        /// Its block.
        block: String,
        /// The scope, pass or counter name nothing measured has.
        name: String,
        /// The nearest paths measured, or the names measured.
        hint: String,
    },
    /// A gated path that neither capture has (`counter.draw_call.max`).
    #[error("`{metric}` is in neither capture: no {block} named `{name}`; {hint}")]
    NotInEitherCapture {
        /// The path as given.
        metric: String,
        /// Its block.
        block: String,
        /// The scope, pass or counter name neither capture has.
        name: String,
        /// The nearest paths either capture has, or the names it has.
        hint: String,
    },
}

/// Edit distance (insertions, deletions, substitutions) between two strings, by chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substituted = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// Up to three `candidates` nearest to `target`, nearest first, among those close enough to
/// be a likely typo (within a third of the target's length, at least 2 edits): clap's "did
/// you mean".
pub fn nearest<'a>(target: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let limit = (target.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| (edit_distance(target, c), c))
        .filter(|&(d, _)| d <= limit)
        .collect();
    scored.sort();
    scored.dedup();
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_owned())
        .collect()
}

/// `did you mean a, b?` when something is near, else `label: x, y, z` (at most `cap`).
fn hint(suggestions: &[String], label: &str, known: &[String], cap: usize) -> String {
    if !suggestions.is_empty() {
        return format!("did you mean {}?", suggestions.join(", "));
    }
    if known.is_empty() {
        return format!("{label}: none");
    }
    let mut shown: Vec<&str> = known.iter().take(cap).map(String::as_str).collect();
    if known.len() > shown.len() {
        shown.push("…");
    }
    format!("{label}: {}", shown.join(", "))
}

/// What a block's named things are called in a sentence.
fn block_noun(block: &str) -> &'static str {
    match block {
        "scope" => "scopes",
        "pass" => "passes",
        _ => "counters",
    }
}

/// Tolerances by metric path (`*` may stand for a name: `counter.*.max`). A tolerance is
/// the fractional worsening allowed: 0.10 lets a metric get 10% worse; 0 is exact.
#[derive(Clone, Debug, PartialEq)]
pub struct GateConfig {
    /// Metric path → tolerance.
    pub tolerances: BTreeMap<String, f64>,
    /// Judge even when an input lost frames (`--allow-damaged`); otherwise such a gate is
    /// inconclusive.
    pub allow_damaged: bool,
}

/// The largest tolerance a lower-is-better metric takes: 10 lets it get 11 times worse. A
/// larger one is a check that cannot fail in practice (a verdict that cannot fail is no
/// verdict), so it is refused; drop the metric from the gate instead.
pub const MAX_TOLERANCE: f64 = 10.0;

/// A number for an error message: `1e308`, not its 309 digits (and `0.1`, `-1`, `NaN` as
/// Rust writes them).
pub fn number_as_written(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-6..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// The default tolerances: lite-profiler's gate, `frame.avg` and `frame.p99` at +10%.
pub const DEFAULT_TOLERANCES: [(&str, f64); 2] = [("frame.avg", 0.10), ("frame.p99", 0.10)];

impl Default for GateConfig {
    fn default() -> Self {
        Self {
            tolerances: DEFAULT_TOLERANCES
                .iter()
                .map(|&(m, t)| (m.to_owned(), t))
                .collect(),
            allow_damaged: false,
        }
    }
}

/// Refuses a path that cannot name anything: not a metric path at all, or a statistic its
/// block does not have (budgets are checked by the same rule).
pub fn check_metric(path: &str) -> Result<(), GateConfigError> {
    let aliased = alias_path(path);
    let p = parse_metric_path(&aliased).ok_or_else(|| GateConfigError::BadMetric {
        metric: path.to_owned(),
    })?;
    let stats = known_stats(p.block);
    if stats.iter().any(|s| s == p.stat) {
        return Ok(());
    }
    let paths: Vec<String> = stats
        .iter()
        .map(|s| match p.name {
            Some(n) => format!("{}.{n}.{s}", p.block),
            None => format!("{}.{s}", p.block),
        })
        .collect();
    let near = nearest(&aliased, paths.iter().map(String::as_str));
    Err(GateConfigError::UnknownStatistic {
        metric: path.to_owned(),
        block: p.block.to_owned(),
        stat: p.stat.to_owned(),
        hint: hint(&near, "its statistics", &stats, usize::MAX),
    })
}

impl GateConfig {
    /// No tolerances at all.
    pub fn empty() -> Self {
        Self {
            tolerances: BTreeMap::new(),
            allow_damaged: false,
        }
    }

    /// Sets one tolerance.
    pub fn set(&mut self, metric: &str, tolerance: f64) -> Result<(), GateConfigError> {
        check_metric(metric)?;
        if !tolerance.is_finite() || tolerance < 0.0 {
            return Err(GateConfigError::BadTolerance {
                metric: metric.to_owned(),
                value: number_as_written(tolerance),
            });
        }
        let too_large = |bound, why| GateConfigError::ToleranceTooLarge {
            metric: metric.to_owned(),
            value: number_as_written(tolerance),
            bound,
            why,
        };
        match direction(&alias_path(metric)) {
            Direction::HigherIsBetter if tolerance >= 1.0 => {
                return Err(too_large(
                    "below 1",
                    "a higher-is-better metric cannot fall by more than all of it, so that check could never fail",
                ));
            }
            _ if tolerance > MAX_TOLERANCE => {
                return Err(too_large(
                    "at most 10 (11 times worse)",
                    "a larger one is a check that could never fail in practice; leave the metric out of the gate instead",
                ));
            }
            _ => {}
        }
        self.tolerances.insert(metric.to_owned(), tolerance);
        Ok(())
    }

    /// Applies a `--tolerance metric=0.10` argument.
    pub fn apply_arg(&mut self, arg: &str) -> Result<(), GateConfigError> {
        let (metric, value) = arg
            .split_once('=')
            .ok_or_else(|| GateConfigError::BadArgument {
                arg: arg.to_owned(),
            })?;
        let tolerance: f64 = value
            .trim()
            .parse()
            .map_err(|_| GateConfigError::BadTolerance {
                metric: metric.to_owned(),
                value: value.to_owned(),
            })?;
        self.set(metric.trim(), tolerance)
    }

    /// Parses a JSON gate config: `{"tolerances": {"frame.avg": 0.1, …}}` (lite-profiler's
    /// shape) or a bare `{"frame.avg": 0.1, …}`. Beside `tolerances`, any key is refused
    /// (a misspelt section must not leave the defaults running), with its line.
    pub fn from_json(text: &str) -> Result<Self, GateConfigError> {
        let json_error = |e: serde_json::Error| GateConfigError::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        };
        let value: serde_json::Value = serde_json::from_str(text).map_err(json_error)?;
        let wrapped = value.get("tolerances").is_some();
        let map: BTreeMap<String, serde_json::Value> = if wrapped {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Wrapped {
                tolerances: BTreeMap<String, serde_json::Value>,
            }
            serde_json::from_str::<Wrapped>(text)
                .map_err(json_error)?
                .tolerances
        } else {
            serde_json::from_str(text).map_err(|_| GateConfigError::Json {
                line: 1,
                column: 1,
                message: "expected an object of metric paths to tolerances".into(),
            })?
        };
        let mut cfg = Self::empty();
        for (metric, v) in &map {
            let set = match v.as_f64() {
                Some(tolerance) => cfg.set(metric, tolerance),
                None => Err(GateConfigError::BadTolerance {
                    metric: metric.clone(),
                    value: v.to_string(),
                }),
            };
            set.map_err(|e| GateConfigError::AtLine {
                line: key_line(text, metric),
                error: Box::new(e),
            })?;
        }
        Ok(cfg)
    }
}

/// The 1-based line on which `"key"` first appears in a JSON text (1 when it does not).
fn key_line(text: &str, key: &str) -> usize {
    let quoted = format!("\"{key}\"");
    text.find(&quoted)
        .and_then(|at| text.get(..at))
        .map_or(1, |before| before.matches('\n').count() + 1)
}

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

/// `camelCase` → `snake_case`.
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for ch in name.chars() {
        if ch.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
            prev_lower = false;
        } else {
            prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
            out.push(ch);
        }
    }
    out
}

/// The lite-profiler spelling of a path in framewise's: `phase.` → `scope.`, camelCase →
/// snake_case in every segment.
pub fn alias_path(path: &str) -> String {
    let path = match path.strip_prefix("phase.") {
        Some(rest) => format!("scope.{rest}"),
        None => path.to_owned(),
    };
    match parse_metric_path(&path) {
        Some(p) => match p.name {
            Some(name) => format!("{}.{}.{}", p.block, snake_case(name), snake_case(p.stat)),
            None => format!("{}.{}", p.block, snake_case(p.stat)),
        },
        None => path,
    }
}

fn is_timing(path: &str) -> bool {
    !path.starts_with("counter.")
}

/// Whether counter `name` is a sum counter on the side(s) that have it.
fn is_sum_counter(name: &str, base: &Summary, cand: &Summary) -> bool {
    base.counters
        .get(name)
        .or_else(|| cand.counters.get(name))
        .is_some_and(|c| c.kind == CounterKind::Sum)
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
    if let Some(p) = parse_metric_path(&canonical) {
        if p.name == Some("*") {
            let mut names = bt.names(p.block);
            names.extend(ct.names(p.block));
            names.sort();
            names.dedup();
            if p.block == "counter" {
                names.retain(|n| is_sum_counter(n, base, cand));
            }
            return Ok(names
                .into_iter()
                .map(|n| format!("{}.{n}.{}", p.block, p.stat))
                .collect());
        }
    }
    let present = |p: &str| bt.get(p).is_some() || ct.get(p).is_some();
    if present(&canonical) {
        return Ok(vec![canonical]);
    }
    let aliased = alias_path(&canonical);
    if present(&aliased) {
        return Ok(vec![aliased]);
    }
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
fn worsening(path: &str, base: f64, cand: f64) -> f64 {
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
fn regression_reason(c: &GateCheck) -> String {
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
    let defects = side_defects(base, cand);
    let damage = damage_reason(&defects);
    let partial = partial_defects(&defects);
    let mut checks = Vec::new();
    let mut too_few = Vec::new();
    for (configured, &tolerance) in &config.tolerances {
        for metric in resolve(configured, (base, cand), (&bt, &ct))? {
            let (b, c) = (bt.get(&metric), ct.get(&metric));
            let (status, worse) = match (b, c) {
                _ if is_timing(&metric) && !comparable && (b.is_some() || c.is_some()) => {
                    (CheckStatus::Incomparable, None)
                }
                (Some(b), Some(c)) => {
                    let w = worsening(&metric, b, c);
                    // A tiny epsilon keeps exact gates exact under float noise.
                    let status = if !config.allow_damaged && partial.affects(&metric) {
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
                            too_few.push(format!(
                                "{metric}: the {side} has too few values for it ({why}), so it can be judged neither way"
                            ));
                            (CheckStatus::TooFewValues, None)
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
    let compared = checks
        .iter()
        .filter(|c| matches!(c.status, CheckStatus::Pass | CheckStatus::Regressed))
        .count();
    let verdict = if let Some(reason) = damage.as_ref().filter(|_| !config.allow_damaged) {
        reasons.push(reason.clone());
        Verdict::Inconclusive
    } else if !incomparable.is_empty() {
        reasons.push(format!(
            "timing regimes differ (base {}, candidate {}): {} timing metrics cannot be compared",
            timing_name(&base.grade),
            timing_name(&cand.grade),
            incomparable.len()
        ));
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
    } else if !incomplete.is_empty() || !too_few.is_empty() {
        if !incomplete.is_empty() {
            reasons.push(partial.reason(&incomplete));
        }
        reasons.extend(too_few);
        Verdict::Inconclusive
    } else if compared == 0 {
        reasons.push("no configured metric is present in both captures".into());
        Verdict::Inconclusive
    } else {
        reasons.push(format!("{compared} metrics within tolerance"));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_the_contract() {
        assert_eq!(Verdict::Pass.exit_code(), 0);
        assert_eq!(Verdict::Fail.exit_code(), 1);
        assert_eq!(Verdict::Inconclusive.exit_code(), 2);
        assert_eq!(Verdict::Incomparable.exit_code(), 3);
        assert_eq!(Verdict::Error.exit_code(), 4);
    }

    #[test]
    fn aliases() {
        assert_eq!(alias_path("phase.render.p99"), "scope.render.p99");
        assert_eq!(
            alias_path("counter.drawCalls.max"),
            "counter.draw_calls.max"
        );
        assert_eq!(alias_path("frame.jankRatio"), "frame.jank_ratio");
        assert_eq!(snake_case("HTTPServer"), "httpserver");
        assert_eq!(snake_case("lowFps1pct"), "low_fps1pct");
    }

    #[test]
    fn lite_profiler_config_parses() {
        let cfg = GateConfig::from_json(
            r#"{"tolerances": {"frame.avg": 0.1, "phase.render.p99": 0.15, "counter.drawCalls.max": 0}}"#,
        )
        .expect("valid");
        assert_eq!(cfg.tolerances.len(), 3);
        assert_eq!(cfg.tolerances.get("phase.render.p99"), Some(&0.15));
        assert!(GateConfig::from_json(r#"{"tolerances": {"frame.avg": -1}}"#).is_err());
        assert!(GateConfig::from_json(r#"{"tolerances": {"bogus": 1}}"#).is_err());
        assert!(GateConfig::from_json("{").is_err());
    }

    #[test]
    fn an_unknown_key_in_a_json_gate_config_is_refused_with_its_line() {
        // A misspelt section must not leave the defaults running unannounced.
        let err = GateConfig::from_json(
            "{\n  \"tolerances\": {\"frame.avg\": 0.1},\n  \"tolerences\": {}\n}",
        )
        .expect_err("unknown key");
        let text = err.to_string();
        assert!(
            text.contains("line 3") && text.contains("unknown field `tolerences`"),
            "{text}"
        );
        // A bad path inside names its line too.
        let err =
            GateConfig::from_json("{\"tolerances\": {\n\"frame.avg\": 0.1,\n\"frame.p98\": 0.1}}")
                .expect_err("no p98");
        assert!(err.to_string().starts_with("line 3: `frame.p98`"), "{err}");
    }

    #[test]
    fn nearest_paths_are_a_few_edits_away() {
        assert_eq!(edit_distance("draw_call", "draw_calls"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        let paths = [
            "counter.draw_calls.max",
            "counter.draw_calls.avg",
            "frame.p99",
        ];
        assert_eq!(
            nearest("counter.draw_call.max", paths),
            vec![
                "counter.draw_calls.max".to_owned(),
                "counter.draw_calls.avg".to_owned()
            ]
        );
        assert!(nearest("scope.no_such_scope.p95", paths).is_empty());
    }

    #[test]
    fn tolerance_arguments() {
        let mut cfg = GateConfig::empty();
        cfg.apply_arg("frame.p95=0.2").expect("valid");
        assert_eq!(cfg.tolerances.get("frame.p95"), Some(&0.2));
        assert!(cfg.apply_arg("frame.p95").is_err());
        assert!(cfg.apply_arg("frame.p95=abc").is_err());
    }

    #[test]
    fn reasons_use_fixed_precision() {
        let check = |metric: &str, base: Option<f64>, cand: Option<f64>, status, tolerance| {
            regression_reason(&GateCheck {
                metric: metric.to_owned(),
                configured: None,
                base,
                cand,
                tolerance,
                worsening: None,
                direction: direction(metric),
                status,
            })
        };
        assert_eq!(
            check(
                "frame.avg",
                Some(12.042976588628763),
                Some(16.016220735785954),
                CheckStatus::Regressed,
                0.1
            ),
            "frame.avg: 12.04 ms -> 16.02 ms (+33.0%, tolerance +10.0%)"
        );
        assert_eq!(
            check(
                "frame.fps",
                Some(83.04),
                Some(62.44),
                CheckStatus::Regressed,
                0.05
            ),
            "frame.fps: 83.0 fps -> 62.4 fps (-24.8%, tolerance -5.0%)"
        );
        assert_eq!(
            check(
                "counter.draw_calls.max",
                Some(0.0),
                Some(3.0),
                CheckStatus::Regressed,
                0.0
            ),
            "counter.draw_calls.max: 0 -> 3 (from 0, tolerance exact)"
        );
        assert_eq!(
            check(
                "scope.render.p95",
                Some(0.25),
                None,
                CheckStatus::MissingInCandidate,
                0.1
            ),
            "scope.render.p95: the base has 0.250 ms and the candidate lacks it"
        );
    }

    #[test]
    fn worsening_is_direction_aware() {
        assert!((worsening("frame.p99", 10.0, 11.0) - 0.1).abs() < 1e-12);
        assert!((worsening("frame.fps", 60.0, 54.0) - 0.1).abs() < 1e-12);
        assert!(worsening("frame.fps", 60.0, 66.0) < 0.0);
        assert_eq!(worsening("counter.x.max", 0.0, 1.0), f64::INFINITY);
        assert_eq!(worsening("counter.x.max", 0.0, 0.0), 0.0);
    }
}
