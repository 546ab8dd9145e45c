//! The gate's configuration: a tolerance per metric path (the defaults, `--tolerance`,
//! `framewise.toml`'s `[gate.tolerances]`, a lite-profiler JSON config), each path checked
//! when it is set (a statistic its block lacks is refused with the nearest valid paths), the
//! lite-profiler spellings (`phase.`, camelCase) read as framewise's, and the errors.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::summary::{direction, known_stats, parse_metric_path, Direction};

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
    /// A tolerance written as a percentage (`5%`), where a fraction is expected.
    #[error("tolerance for `{metric}` is a fraction, not a percentage: {value} is {fraction}")]
    PercentTolerance {
        /// The metric.
        metric: String,
        /// What was given (`5%`).
        value: String,
        /// The fraction it means (`0.05`).
        fraction: String,
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
    /// Two entries of one list that name the same metric (the same path, or one spelt as
    /// the other's lite-profiler alias: `frame.P99`, `frame.p99`).
    #[error("`{second}` names the metric `{first}` already names: which tolerance was meant? give it once")]
    SameMetricTwice {
        /// The entry given first.
        first: String,
        /// The entry that names it again.
        second: String,
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
    /// A gauge's sum (`counter.entities.sum`): a level summed over frames means nothing, so
    /// no summary has one.
    #[error("`{metric}`: `{name}` is a gauge, a level sampled each frame, and has no sum; gate its level: counter.{name}.avg, .p50, .max or .last")]
    GaugeSum {
        /// The path as given.
        metric: String,
        /// The gauge.
        name: String,
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
    /// A wildcard that covers no metric of either capture (`pass.*.p95` on CPU-only captures).
    #[error("`{metric}` covers nothing: {why}")]
    WildcardCoversNothing {
        /// The path as given.
        metric: String,
        /// Why nothing: no name of its block, or only gauges for a counter wildcard.
        why: String,
    },
}

/// Edit distance (insertions, deletions, substitutions) between two strings, by chars.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
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
pub(super) fn hint(suggestions: &[String], label: &str, known: &[String], cap: usize) -> String {
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
pub(super) fn block_noun(block: &str) -> &'static str {
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
        // One tolerance a metric, however it is spelt: a later setting replaces what an
        // alias of it set (`--tolerance frame.P99=0.5` replaces the default `frame.p99`,
        // where both used to be judged and the stricter one decided).
        let canonical = alias_path(metric);
        self.tolerances
            .retain(|k, _| k == metric || alias_path(k) != canonical);
        self.tolerances.insert(metric.to_owned(), tolerance);
        Ok(())
    }

    /// Adds one entry of a list (a config file's tolerances): as [`GateConfig::set`], but an
    /// entry naming a metric an earlier entry of the list named is refused, not a
    /// replacement: a reviewer cannot tell which of the two was meant.
    pub fn add(&mut self, metric: &str, tolerance: f64) -> Result<(), GateConfigError> {
        let canonical = alias_path(metric);
        if let Some(first) = self.tolerances.keys().find(|k| alias_path(k) == canonical) {
            return Err(GateConfigError::SameMetricTwice {
                first: first.clone(),
                second: metric.to_owned(),
            });
        }
        self.set(metric, tolerance)
    }

    /// Applies a `--tolerance metric=0.10` argument.
    pub fn apply_arg(&mut self, arg: &str) -> Result<(), GateConfigError> {
        let (metric, value) = arg
            .split_once('=')
            .ok_or_else(|| GateConfigError::BadArgument {
                arg: arg.to_owned(),
            })?;
        // The path first: `fram.p95=5%` is a typo in the path before it is a bad value.
        check_metric(metric.trim())?;
        let tolerance: f64 = value.trim().parse().map_err(|_| {
            let percent = value.trim().strip_suffix('%').map(str::trim_end);
            match percent.and_then(|p| p.parse::<f64>().ok()) {
                Some(p) if p.is_finite() && p >= 0.0 => GateConfigError::PercentTolerance {
                    metric: metric.trim().to_owned(),
                    value: value.trim().to_owned(),
                    fraction: number_as_written(p / 100.0),
                },
                _ => GateConfigError::BadTolerance {
                    metric: metric.to_owned(),
                    value: value.to_owned(),
                },
            }
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
                tolerances: Tolerances,
            }
            serde_json::from_str::<Wrapped>(text)
                .map_err(json_error)?
                .tolerances
                .0
        } else {
            match serde_json::from_str::<Tolerances>(text) {
                Ok(map) => map.0,
                Err(e) if e.is_data() && value.is_object() => return Err(json_error(e)),
                Err(_) => {
                    return Err(GateConfigError::Json {
                        line: 1,
                        column: 1,
                        message: "expected an object of metric paths to tolerances".into(),
                    })
                }
            }
        };
        let mut cfg = Self::empty();
        for (metric, v) in &map {
            // A section where a metric path goes (`{"tolerence": {…}}`): a misspelt
            // `tolerances`, not a tolerance with a bad value.
            if !wrapped && v.is_object() && check_metric(metric).is_err() {
                let hint = if nearest(metric, ["tolerances"]).is_empty() {
                    String::new()
                } else {
                    " (did you mean `tolerances`?)".to_owned()
                };
                return Err(GateConfigError::Json {
                    line: key_line(text, metric),
                    column: 1,
                    message: format!(
                        "unknown key `{metric}`{hint}: a gate config is {{\"tolerances\": {{METRIC: FRACTION, …}}}} or an object of metric paths to fractions"
                    ),
                });
            }
            let set = match v.as_f64() {
                Some(tolerance) => cfg.add(metric, tolerance),
                None => Err(GateConfigError::BadTolerance {
                    metric: metric.clone(),
                    value: v.to_string(),
                }),
            };
            set.map_err(|e| {
                // The keys come sorted, not in the file's order: the entry named again is
                // the one written later.
                let e = match e {
                    GateConfigError::SameMetricTwice { first, second }
                        if key_line(text, &first) > key_line(text, &second) =>
                    {
                        GateConfigError::SameMetricTwice {
                            first: second,
                            second: first,
                        }
                    }
                    e => e,
                };
                let line = match &e {
                    GateConfigError::SameMetricTwice { second, .. } => key_line(text, second),
                    _ => key_line(text, metric),
                };
                GateConfigError::AtLine {
                    line,
                    error: Box::new(e),
                }
            })?;
        }
        Ok(cfg)
    }
}

/// A JSON object of tolerances whose keys are each given once: JSON leaves a repeated key
/// to the reader (serde_json keeps the last), so `{"frame.avg": 0.1, "frame.avg": 0.5}`
/// would gate at 0.5 while a reviewer reads 0.1. It is refused, with its line.
struct Tolerances(BTreeMap<String, serde_json::Value>);

impl<'de> Deserialize<'de> for Tolerances {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Tolerances;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of metric paths to tolerances")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Tolerances, A::Error> {
                let mut map = BTreeMap::new();
                while let Some(key) = access.next_key::<String>()? {
                    let value: serde_json::Value = access.next_value()?;
                    if map.contains_key(&key) {
                        return Err(serde::de::Error::custom(format!(
                            "`{key}` is given twice: which tolerance was meant? give it once"
                        )));
                    }
                    map.insert(key, value);
                }
                Ok(Tolerances(map))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The 1-based line on which `"key"` first appears in a JSON text (1 when it does not).
fn key_line(text: &str, key: &str) -> usize {
    let quoted = format!("\"{key}\"");
    text.find(&quoted)
        .and_then(|at| text.get(..at))
        .map_or(1, |before| before.matches('\n').count() + 1)
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

/// A path as the measurements spell it, with what `get` finds there: `path` as written,
/// else under its lite-profiler alias ([`alias_path`]: `counter.drawCalls.max` →
/// `counter.draw_calls.max`). The one resolution of an exact path that `gate` and budgets
/// share; `None` when neither spelling is measured.
pub fn measured_as<T>(path: &str, get: impl Fn(&str) -> Option<T>) -> Option<(String, T)> {
    if let Some(found) = get(path) {
        return Some((path.to_owned(), found));
    }
    let aliased = alias_path(path);
    get(&aliased).map(|found| (aliased, found))
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
