//! Metric paths (`frame.p99`, `scope.render.p95`, `counter.draw_calls.max`): which way is
//! better for each, its unit and precision, splitting a path into block, name and
//! statistic, the statistics a block has, and [`MetricTable`], every path of a summary
//! with its value, read off the summary's JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::{CounterStats, FrameBlock, ScopeStats, WorkBlock};

use super::schema::Summary;

/// Which way is better for a metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Smaller is better (times, counts).
    LowerIsBetter,
    /// Larger is better (fps).
    HigherIsBetter,
}

/// The metrics that are higher-is-better; everything else is lower-is-better.
pub const HIGHER_IS_BETTER: [&str; 3] = ["frame.fps", "frame.low_1pct_fps", "frame.low_01pct_fps"];

/// Which way is better for `path`.
pub fn direction(path: &str) -> Direction {
    if HIGHER_IS_BETTER.contains(&path) {
        Direction::HigherIsBetter
    } else {
        Direction::LowerIsBetter
    }
}

/// The unit of a metric path's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MetricUnit {
    /// Milliseconds (every time).
    Ms,
    /// Frames per second.
    Fps,
    /// A fraction (0.05 = 5%).
    Ratio,
    /// A number of frames (`*.count`).
    Frames,
    /// A number of calls (`scope.*.calls`).
    Calls,
    /// Whatever a counter counts.
    Count,
}

impl MetricUnit {
    /// The unit of the values at `path`.
    pub fn of(path: &str) -> Self {
        let stat = path.rsplit('.').next().unwrap_or("");
        if path.starts_with("counter.") {
            return if stat == "count" {
                Self::Frames
            } else {
                Self::Count
            };
        }
        match stat {
            "fps" | "low_1pct_fps" | "low_01pct_fps" => Self::Fps,
            "jank_ratio" | "spike_ratio" => Self::Ratio,
            "count" => Self::Frames,
            "calls" => Self::Calls,
            _ => Self::Ms,
        }
    }

    /// The unit's name for people: `ms`, `fps`, `ratio`, `frames`, `calls`, `count`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ms => "ms",
            Self::Fps => "fps",
            Self::Ratio => "ratio",
            Self::Frames => "frames",
            Self::Calls => "calls",
            Self::Count => "count",
        }
    }

    /// A value in this unit at a fixed precision, with the unit where it reads naturally:
    /// `12.04 ms` (three decimals below 1 ms, so a short scope keeps its microseconds),
    /// `59.8 fps`, `0.0500` (a ratio), `300 frames`, `12 calls`, `121` (a counter; exact
    /// when integral, else up to three decimals, and from 9e15 on in scientific notation:
    /// `1e308`, not its 309 digits).
    pub fn format(self, value: f64) -> String {
        if !value.is_finite() {
            return value.to_string();
        }
        match self {
            Self::Ms if value.abs() < 1.0 => format!("{value:.3} ms"),
            Self::Ms => format!("{value:.2} ms"),
            Self::Fps => format!("{value:.1} fps"),
            Self::Ratio => format!("{value:.4}"),
            Self::Frames => format!("{} frames", plain_number(value)),
            Self::Calls => format!("{} calls", plain_number(value)),
            Self::Count => plain_number(value),
        }
    }
}

/// Integers exactly, anything else with up to three decimals; a magnitude of 9e15 or more
/// (past which f64 no longer holds every integer) in scientific notation with up to three
/// decimals (`1e308`, `1.798e308`).
fn plain_number(value: f64) -> String {
    if value.abs() >= 9.0e15 {
        let s = format!("{value:.3e}");
        match s.split_once('e') {
            Some((mantissa, exponent)) if mantissa.contains('.') => format!(
                "{}e{exponent}",
                mantissa.trim_end_matches('0').trim_end_matches('.')
            ),
            _ => s,
        }
    } else if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        let s = format!("{value:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// `path`'s value at its unit's precision (see [`MetricUnit::format`]).
pub fn format_metric(path: &str, value: f64) -> String {
    MetricUnit::of(path).format(value)
}

/// A metric path split into its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricPath<'a> {
    /// `frame`, `work`, `scope`, `pass` or `counter`.
    pub block: &'a str,
    /// The scope, pass or counter name (`None` for frame and work).
    pub name: Option<&'a str>,
    /// The statistic (`p99`, `max`, …).
    pub stat: &'a str,
}

/// Splits a metric path. Names may contain dots: the statistic is the last segment.
pub fn parse_metric_path(path: &str) -> Option<MetricPath<'_>> {
    let (block, rest) = path.split_once('.')?;
    match block {
        "frame" | "work" => (!rest.is_empty() && !rest.contains('.')).then_some(MetricPath {
            block,
            name: None,
            stat: rest,
        }),
        "scope" | "pass" | "counter" => {
            let (name, stat) = rest.rsplit_once('.')?;
            (!name.is_empty() && !stat.is_empty()).then_some(MetricPath {
                block,
                name: Some(name),
                stat,
            })
        }
        _ => None,
    }
}

pub(crate) fn json_block(block: &str) -> Option<&'static str> {
    match block {
        "frame" => Some("frame"),
        "work" => Some("work"),
        "scope" => Some("scopes"),
        "pass" => Some("passes"),
        "counter" => Some("counters"),
        _ => None,
    }
}

/// The statistics a block's metric paths may end in (`frame` → `avg`, `p99`, `fps`, …),
/// read off the JSON of a block over one value: every number or null it has (a label such
/// as `class` is a string there), so the list can never disagree with what `summarize`
/// prints. In name order; empty for an unknown block.
pub fn known_stats(block: &str) -> Vec<String> {
    let json = match block {
        "frame" => serde_json::to_value(FrameBlock::of_periods_ns(vec![1], &[1], 1)),
        "work" => serde_json::to_value(WorkBlock::of_work_ns(vec![1], 1)),
        "scope" | "pass" => {
            serde_json::to_value(ScopeStats::of_totals_ns(vec![1], 1, 1, Vec::new()))
        }
        "counter" => serde_json::to_value(CounterStats::of_integers(
            crate::model::CounterKind::Sum,
            &[1],
        )),
        _ => return Vec::new(),
    };
    let Ok(serde_json::Value::Object(map)) = json else {
        return Vec::new();
    };
    let mut stats: Vec<String> = map
        .into_iter()
        .filter(|(_, v)| v.is_null() || v.is_number())
        .map(|(k, _)| k)
        .collect();
    stats.sort();
    stats
}

/// Every metric of a summary, by path, resolved from its JSON.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricTable {
    /// Numeric values by path. Null statistics are absent.
    pub values: BTreeMap<String, f64>,
}

impl MetricTable {
    /// The table of `summary`'s metrics.
    pub fn of(summary: &Summary) -> Self {
        match serde_json::to_value(summary) {
            Ok(json) => Self::of_json(&json),
            Err(_) => Self::default(),
        }
    }

    /// The table of a summary's metrics, from the summary as JSON (for a caller that reads
    /// that JSON too, so the summary is serialized once).
    pub fn of_json(json: &serde_json::Value) -> Self {
        let mut values = BTreeMap::new();
        let leaves = |prefix: &str, obj: &serde_json::Value, out: &mut BTreeMap<String, f64>| {
            if let Some(map) = obj.as_object() {
                for (k, v) in map {
                    if let Some(x) = v.as_f64() {
                        out.insert(format!("{prefix}.{k}"), x);
                    }
                }
            }
        };
        for block in ["frame", "work"] {
            if let Some(obj) = json.get(block) {
                leaves(block, obj, &mut values);
            }
        }
        for (path_block, json_block) in [
            ("scope", "scopes"),
            ("pass", "passes"),
            ("counter", "counters"),
        ] {
            if let Some(map) = json.get(json_block).and_then(|v| v.as_object()) {
                for (name, obj) in map {
                    leaves(&format!("{path_block}.{name}"), obj, &mut values);
                }
            }
        }
        Self { values }
    }

    /// The value at `path`, if present and not null.
    pub fn get(&self, path: &str) -> Option<f64> {
        self.values.get(path).copied()
    }

    /// Names present in a block (`scope`, `pass`, `counter`).
    pub fn names(&self, block: &str) -> Vec<String> {
        let set: std::collections::BTreeSet<String> = self
            .values
            .keys()
            .filter_map(|k| parse_metric_path(k))
            .filter(|p| p.block == block)
            .filter_map(|p| p.name.map(str::to_owned))
            .collect();
        set.into_iter().collect()
    }
}
