//! [`Summary`]: the `summarize --format json` output, and the metric paths that address it.
//!
//! A metric path is a JSON path into this output: `frame.p99`, `work.p95`,
//! `scope.render.p95`, `pass.shadow.max`, `counter.draw_calls.max`. The JSON blocks are
//! `frame`, `work`, `scopes`, `passes` and `counters`; paths use the singular `scope.`,
//! `pass.` and `counter.`. Resolution walks the serialized JSON itself, so a path can never
//! disagree with what `summarize` prints.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::{AdapterKind, Capture, Defect, Grade, Numeric, SourceKind};
use crate::stats::{CounterStats, FrameBlock, ScopeStats, WorkBlock};

/// The schema name every summary carries.
pub const SUMMARY_SCHEMA: &str = "framewise.summary/1";

/// A JSON object whose entries keep their order (scopes sorted by total, for instance).
#[derive(Clone, Debug, PartialEq)]
pub struct NamedMap<T>(pub Vec<(String, T)>);

impl<T> Default for NamedMap<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> NamedMap<T> {
    /// The entry with this name.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T: Serialize> Serialize for NamedMap<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NamedMap<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = NamedMap<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = access.next_entry::<String, T>()? {
                    out.push((k, v));
                }
                Ok(NamedMap(out))
            }
        }
        deserializer.deserialize_map(V(std::marker::PhantomData))
    }
}

/// Units of the numbers in a summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Units {
    /// Every time is in milliseconds.
    pub time: String,
    /// Counters are plain counts (or whatever the counter counts, e.g. bytes).
    pub counters: String,
}

/// What was summarized.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaptureInfo {
    /// File kind.
    pub source: SourceKind,
    /// The source's format version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_version: Option<u32>,
    /// Capture level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// Build id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// Adapter type.
    pub adapter: AdapterKind,
    /// Adapter name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_name: Option<String>,
    /// Frames in the capture.
    pub frames: u64,
    /// Frames the host declared paused (excluded from every statistic).
    pub frames_paused: u64,
    /// Non-paused frames whose period is unknown (the last frame, frames before a gap).
    pub frames_without_period: u64,
    /// Spans the recorder dropped.
    pub dropped_spans: u64,
    /// Whether frame begins were measured on a clock.
    pub clock_measured: bool,
}

/// The methods behind the numbers, named in the output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Methods {
    /// What a frame time is.
    pub frame_time: String,
    /// How percentiles are taken.
    pub percentile: String,
    /// How the low fps figures are taken.
    pub low_fps: String,
    /// What scope and pass statistics are over.
    pub scopes: String,
    /// What happens to paused frames.
    pub paused: String,
    /// What the frame classifier judges, against which thresholds.
    pub classifier: String,
}

impl Methods {
    fn standard(budget_ns: u64) -> Self {
        let ms = |ns: u64| ns as f64 / crate::stats::NS_PER_MS;
        Self {
            frame_time: "frame.* is over periods (this frame's CPU begin to the next frame's begin); work.* is over work (CPU begin to end)".into(),
            percentile: "linear interpolation between the closest ranks at (n-1)*p; null when fewer than one value lies beyond it (p99 needs 100, p99.9 needs 1000)".into(),
            low_fps: "low average: 1000 / mean of the frame times at or above the p99 (1% low) or p99.9 (0.1% low) frame time".into(),
            scopes: "over per-frame inclusive totals, in the frames in which the scope or pass ran; self and calls alongside".into(),
            paused: "paused frames are excluded from every statistic".into(),
            classifier: format!(
                "jank_ratio, spike_ratio, class and bins (in frame and work alike) are over work times, as lite-profiler judges a frame: jank = work >= 0.96 x the {:.2} ms budget ({:.2} ms), spike = work >= 1.98 x it ({:.2} ms); the hitch rule judges periods",
                ms(budget_ns),
                ms(crate::stats::jank_threshold_ns(budget_ns)),
                ms(crate::stats::spike_threshold_ns(budget_ns))
            ),
        }
    }
}

/// The summary of one capture: `summarize --format json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// [`SUMMARY_SCHEMA`].
    pub schema: String,
    /// Units.
    pub units: Units,
    /// What was summarized.
    pub capture: CaptureInfo,
    /// Truth grade.
    pub grade: Grade,
    /// Methods, named.
    pub methods: Methods,
    /// The frame budget judged against, ms.
    pub budget_ms: f64,
    /// Statistics over periods.
    pub frame: FrameBlock,
    /// Statistics over work times.
    pub work: WorkBlock,
    /// CPU scopes by name, largest total first.
    pub scopes: NamedMap<ScopeStats>,
    /// GPU passes by label, largest total first.
    pub passes: NamedMap<ScopeStats>,
    /// Counters by name, in name order.
    pub counters: NamedMap<CounterStats>,
    /// What was wrong with the capture.
    pub defects: Vec<Defect>,
    /// What importers decided on the reader's behalf.
    pub notes: Vec<String>,
}

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
    /// when integral, else up to three decimals).
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

/// Integers exactly, anything else with up to three decimals.
fn plain_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
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

impl Summary {
    /// Resolves one metric path against this summary's JSON; `None` when absent or null.
    pub fn metric(&self, path: &str) -> Option<f64> {
        let p = parse_metric_path(path)?;
        let json = serde_json::to_value(self).ok()?;
        let block = json.get(json_block(p.block)?)?;
        let obj = match p.name {
            Some(name) => block.get(name)?,
            None => block,
        };
        obj.get(p.stat)?.as_f64()
    }

    /// Every metric, by path.
    pub fn metrics(&self) -> MetricTable {
        MetricTable::of(self)
    }

    /// Whether the summary covers no frames with a known period.
    pub fn is_empty(&self) -> bool {
        self.frame.times.count == 0
    }
}

fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / crate::stats::NS_PER_MS
}

/// Groups ids by name and collects per-frame totals per name over non-paused frames.
fn named_stats(
    capture: &Capture,
    rows: &Range<usize>,
    aggs: &crate::model::PerFrame<crate::model::Agg>,
    names: &[String],
    sites: &[Option<String>],
) -> NamedMap<ScopeStats> {
    let mut group_of: Vec<usize> = Vec::with_capacity(names.len());
    let mut group_names: Vec<String> = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for name in names {
        let g = *index.entry(name.as_str()).or_insert_with(|| {
            group_names.push(name.clone());
            group_names.len() - 1
        });
        group_of.push(g);
    }
    let groups = group_names.len();
    let mut totals: Vec<Vec<u64>> = vec![Vec::new(); groups];
    let mut self_ns = vec![0u64; groups];
    let mut calls = vec![0u64; groups];
    let mut site_sets: Vec<std::collections::BTreeSet<String>> = vec![Default::default(); groups];
    for (id, site) in sites.iter().enumerate() {
        if let (Some(site), Some(&g)) = (site, group_of.get(id)) {
            site_sets[g].insert(site.clone());
        }
    }
    let mut frame_acc = vec![0u64; groups];
    let mut touched: Vec<usize> = Vec::new();
    for row in rows.clone() {
        if capture.frames.paused.get(row).copied().unwrap_or(false) {
            continue;
        }
        for a in aggs.frame(row) {
            let Some(&g) = group_of.get(a.id as usize) else {
                continue;
            };
            if !touched.contains(&g) {
                touched.push(g);
            }
            frame_acc[g] = frame_acc[g].saturating_add(a.total_ns);
            self_ns[g] = self_ns[g].saturating_add(a.self_ns);
            calls[g] = calls[g].saturating_add(u64::from(a.calls));
        }
        for &g in &touched {
            totals[g].push(frame_acc[g]);
            frame_acc[g] = 0;
        }
        touched.clear();
    }
    let mut out: Vec<(String, ScopeStats)> = group_names
        .into_iter()
        .zip(totals)
        .enumerate()
        .filter(|(_, (_, t))| !t.is_empty())
        .map(|(g, (name, t))| {
            let sites = std::mem::take(&mut site_sets[g]).into_iter().collect();
            (
                name,
                ScopeStats::of_totals_ns(t, self_ns[g], calls[g], sites),
            )
        })
        .collect();
    out.sort_by(|a, b| b.1.total.total_cmp(&a.1.total).then_with(|| a.0.cmp(&b.0)));
    NamedMap(out)
}

type Blocks = (
    NamedMap<ScopeStats>,
    NamedMap<ScopeStats>,
    Vec<Vec<i64>>,
    Vec<Vec<f64>>,
);

/// Scope, pass and counter inputs from per-frame aggregates.
fn aggregate_stats(capture: &Capture, rows: &Range<usize>) -> Blocks {
    let f = capture.frames();
    let scope_names: Vec<String> = capture.scopes().iter().map(|s| s.name.clone()).collect();
    let scope_sites: Vec<Option<String>> = capture.scopes().iter().map(|s| s.site()).collect();
    let scopes = named_stats(
        capture,
        rows,
        capture.scope_aggs(),
        &scope_names,
        &scope_sites,
    );
    let pass_names: Vec<String> = capture.passes().iter().map(|p| p.name.clone()).collect();
    let passes = named_stats(
        capture,
        rows,
        capture.pass_aggs(),
        &pass_names,
        &vec![None; pass_names.len()],
    );
    let mut counter_ints: Vec<Vec<i64>> = vec![Vec::new(); capture.counters().len()];
    let mut counter_floats: Vec<Vec<f64>> = vec![Vec::new(); capture.counters().len()];
    for row in rows.clone() {
        if f.paused.get(row).copied().unwrap_or(false) {
            continue;
        }
        for e in capture.counter_values().frame(row) {
            let id = e.counter as usize;
            match capture.counters().get(id).map(|c| c.numeric) {
                Some(Numeric::Integer) => counter_ints[id].push(e.raw),
                Some(Numeric::Float) => counter_floats[id].push(f64::from_bits(e.raw as u64)),
                None => {}
            }
        }
    }
    (scopes, passes, counter_ints, counter_floats)
}

/// Scope, pass and counter inputs from a summary-only load's columns.
fn columns_stats(capture: &Capture, cols: &crate::model::SummaryColumns) -> Blocks {
    let named = |columns: &[crate::model::NameColumn], with_sites: bool| {
        let mut out: Vec<(String, ScopeStats)> = columns
            .iter()
            .filter(|c| !c.totals_ns.is_empty())
            .map(|c| {
                let sites: Vec<String> = if with_sites {
                    let set: std::collections::BTreeSet<String> = capture
                        .scopes()
                        .iter()
                        .filter(|s| s.name == c.name)
                        .filter_map(|s| s.site())
                        .collect();
                    set.into_iter().collect()
                } else {
                    Vec::new()
                };
                (
                    c.name.clone(),
                    ScopeStats::of_totals_ns(c.totals_ns.to_vec(), c.self_ns, c.calls, sites),
                )
            })
            .collect();
        out.sort_by(|a, b| b.1.total.total_cmp(&a.1.total).then_with(|| a.0.cmp(&b.0)));
        NamedMap(out)
    };
    let n = capture.counters().len();
    let mut counter_ints: Vec<Vec<i64>> = vec![Vec::new(); n];
    let mut counter_floats: Vec<Vec<f64>> = vec![Vec::new(); n];
    for (id, raw) in cols.counters.iter().enumerate().take(n) {
        match capture.counters().get(id).map(|c| c.numeric) {
            Some(Numeric::Integer) => counter_ints[id] = raw.to_vec(),
            Some(Numeric::Float) => {
                counter_floats[id] = raw.iter().map(|r| f64::from_bits(r as u64)).collect()
            }
            None => {}
        }
    }
    (
        named(&cols.scopes, true),
        named(&cols.passes, false),
        counter_ints,
        counter_floats,
    )
}

/// How to summarize. Build one from the default and the `with_*` methods; the type is
/// `#[non_exhaustive]` so that an option added later is not a breaking change.
///
/// ```
/// use framewise_analysis::{summarize_with, CaptureBuilder, SourceKind, SummaryOptions};
///
/// let capture = CaptureBuilder::new(SourceKind::Synthetic, false).finish();
/// let options = SummaryOptions::default().with_budget_ns(Some(8_333_333));
/// assert_eq!(summarize_with(&capture, &options).budget_ms, 8.333333);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SummaryOptions {
    /// The frame budget judged against, ns (`framewise.toml`'s `[budgets] frame_ms`);
    /// `None`: the capture's declared budget, else 60 Hz. The statistics do not depend on
    /// it; `budget_ms` reports it.
    pub budget_ns: Option<u64>,
    /// Rows of the frame table to summarize (`from..to`, 0-based positions); `None`: every
    /// frame. A range past the end is cut at the last frame. Each frame's period is still
    /// its own begin to the next frame's begin, so the last row of a range keeps its
    /// period. A summary-only load ([`crate::LoadOptions::with_summary_only`]) has no
    /// per-frame aggregates to restrict: a partial range then leaves the scope, pass and
    /// counter blocks empty and says so in `notes`.
    pub rows: Option<Range<usize>>,
}

impl SummaryOptions {
    /// The defaults: the capture's own budget.
    pub fn new() -> Self {
        Self::default()
    }

    /// Judges against this budget, ns (`None`: the capture's).
    pub fn with_budget_ns(mut self, budget_ns: Option<u64>) -> Self {
        self.budget_ns = budget_ns;
        self
    }

    /// Summarizes only rows `rows` of the frame table (the inspector's selected range).
    ///
    /// ```
    /// use framewise_analysis::{summarize_with, CaptureBuilder, FrameInput, SourceKind, SummaryOptions};
    ///
    /// let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    /// let mut f = FrameInput::default();
    /// for i in 0..10u64 {
    ///     f.clear();
    ///     f.index = i;
    ///     f.cpu_begin_ns = i * 16_000_000;
    ///     f.cpu_end_ns = f.cpu_begin_ns + 1_000_000;
    ///     b.push_frame(&f);
    /// }
    /// let s = summarize_with(&b.finish(), &SummaryOptions::new().with_rows(2..5));
    /// assert_eq!(s.capture.frames, 3);
    /// assert_eq!(s.frame.times.count, 3); // row 4's period reaches row 5's begin
    /// ```
    pub fn with_rows(mut self, rows: Range<usize>) -> Self {
        self.rows = Some(rows);
        self
    }
}

/// Summarizes a capture with the default [`SummaryOptions`].
pub fn summarize(capture: &Capture) -> Summary {
    summarize_with(capture, &SummaryOptions::default())
}

/// Summarizes a capture.
pub fn summarize_with(capture: &Capture, options: &SummaryOptions) -> Summary {
    let f = capture.frames();
    let all = 0..f.len();
    let rows = match &options.rows {
        Some(r) => r.start.min(f.len())..r.end.min(f.len()).max(r.start.min(f.len())),
        None => all.clone(),
    };
    let mut periods = Vec::with_capacity(rows.len());
    let mut work = Vec::with_capacity(rows.len());
    let mut paused = 0u64;
    let mut without_period = 0u64;
    for row in rows.clone().filter_map(|r| f.row(r)) {
        if row.paused {
            paused += 1;
            continue;
        }
        work.push(row.work_ns());
        match row.period_ns {
            Some(p) => periods.push(p),
            None => without_period += 1,
        }
    }

    let mut notes = capture.meta().notes.clone();
    let (scopes, passes, counter_ints, counter_floats) = match capture.summary_columns() {
        Some(cols) if rows == all => columns_stats(capture, cols),
        Some(_) => {
            notes.push(format!(
                "rows {}..{} of a summary-only load: its per-name columns cannot be cut to a range, so scopes, passes and counters are left out",
                rows.start, rows.end
            ));
            let n = capture.counters().len();
            (
                NamedMap::default(),
                NamedMap::default(),
                vec![Vec::new(); n],
                vec![Vec::new(); n],
            )
        }
        None => aggregate_stats(capture, &rows),
    };
    let mut counters: Vec<(String, CounterStats)> = capture
        .counters()
        .iter()
        .enumerate()
        .filter_map(|(id, info)| {
            let stats = match info.numeric {
                Numeric::Integer => CounterStats::of_integers(info.kind, &counter_ints[id]),
                Numeric::Float => CounterStats::of_floats(info.kind, &counter_floats[id]),
            };
            (stats.count > 0).then(|| (info.name.clone(), stats))
        })
        .collect();
    counters.sort_by(|a, b| a.0.cmp(&b.0));

    let meta = capture.meta();
    let budget_ns = options
        .budget_ns
        .unwrap_or_else(|| capture.frame_budget_ns());
    Summary {
        schema: SUMMARY_SCHEMA.into(),
        units: Units {
            time: "ms".into(),
            counters: "count".into(),
        },
        capture: CaptureInfo {
            source: meta.source,
            source_version: meta.source_version,
            level: meta.level.clone(),
            build: meta.build.clone(),
            adapter: meta.adapter,
            adapter_name: meta.adapter_name.clone(),
            frames: rows.len() as u64,
            frames_paused: paused,
            frames_without_period: without_period,
            dropped_spans: capture.dropped_spans(),
            clock_measured: meta.clock_measured,
        },
        grade: capture.grade(),
        methods: Methods::standard(budget_ns),
        budget_ms: ns_to_ms(budget_ns),
        frame: FrameBlock::of_periods_ns(periods, &work, budget_ns),
        work: WorkBlock::of_work_ns(work, budget_ns),
        scopes,
        passes,
        counters: NamedMap(counters),
        defects: capture.defects().to_vec(),
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten frames 16 ms apart; `work` runs 1 ms in frames 0–4 and 3 ms in frames 5–9.
    fn ten_frames(summary_only: bool) -> Capture {
        use crate::build::{CaptureBuilder, FrameInput, LaneInput, SpanInput};
        let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
        if summary_only {
            b = b.summary_only();
        }
        let work = b.scope("work", "w.rs", 1);
        let thread = b.thread("main");
        let mut f = FrameInput::default();
        for i in 0..10u64 {
            f.clear();
            f.index = i;
            f.cpu_begin_ns = i * 16_000_000;
            f.cpu_end_ns = f.cpu_begin_ns + 5_000_000;
            let len = if i < 5 { 1_000_000 } else { 3_000_000 };
            f.lanes.push(LaneInput {
                thread,
                spans: vec![SpanInput {
                    scope: work,
                    depth: 0,
                    start_ns: f.cpu_begin_ns,
                    end_ns: f.cpu_begin_ns + len,
                }],
                dropped_spans: 0,
            });
            b.push_frame(&f);
        }
        b.finish()
    }

    #[test]
    fn a_row_range_summarizes_only_its_frames() {
        let c = ten_frames(false);
        let all = summarize(&c);
        assert_eq!(all.scopes.get("work").map(|s| s.calls), Some(10));
        let late = summarize_with(&c, &SummaryOptions::new().with_rows(5..10));
        assert_eq!(late.capture.frames, 5);
        // Row 9 is the last frame: no period.
        assert_eq!(late.frame.times.count, 4);
        assert_eq!(late.capture.frames_without_period, 1);
        let w = late.scopes.get("work").expect("work ran");
        assert_eq!((w.calls, w.min, w.max), (5, Some(3.0), Some(3.0)));
        let early = summarize_with(&c, &SummaryOptions::new().with_rows(0..5));
        assert_eq!(early.frame.times.count, 5, "row 4 keeps its period");
        assert_eq!(early.scopes.get("work").and_then(|s| s.max), Some(1.0));
        // The whole range is the whole summary; a range past the end is cut.
        assert_eq!(
            summarize_with(&c, &SummaryOptions::new().with_rows(0..10)),
            all
        );
        assert_eq!(
            summarize_with(&c, &SummaryOptions::new().with_rows(8..99))
                .capture
                .frames,
            2
        );
        assert_eq!(
            summarize_with(&c, &SummaryOptions::new().with_rows(50..60))
                .capture
                .frames,
            0
        );
    }

    #[test]
    fn a_partial_range_of_a_summary_only_load_says_what_it_left_out() {
        let c = ten_frames(true);
        assert_eq!(summarize(&c), summarize(&ten_frames(false)));
        let part = summarize_with(&c, &SummaryOptions::new().with_rows(2..4));
        assert!(part.scopes.is_empty());
        assert!(
            part.notes.iter().any(|n| n.contains("summary-only")),
            "{:?}",
            part.notes
        );
        assert_eq!(part.frame.times.count, 2);
    }

    #[test]
    fn paths_split_on_first_and_last_dot() {
        assert_eq!(
            parse_metric_path("scope.render.shadow.p95"),
            Some(MetricPath {
                block: "scope",
                name: Some("render.shadow"),
                stat: "p95"
            })
        );
        assert_eq!(
            parse_metric_path("frame.p99"),
            Some(MetricPath {
                block: "frame",
                name: None,
                stat: "p99"
            })
        );
        assert_eq!(parse_metric_path("frame"), None);
        assert_eq!(parse_metric_path("scope.p95"), None);
        assert_eq!(parse_metric_path("nope.x.y"), None);
    }

    #[test]
    fn known_statistics_are_the_blocks_numbers() {
        let frame = known_stats("frame");
        for stat in [
            "avg",
            "p99",
            "p999",
            "fps",
            "low_1pct_fps",
            "jank_ratio",
            "count",
        ] {
            assert!(frame.iter().any(|s| s == stat), "{stat} in {frame:?}");
        }
        assert!(!frame
            .iter()
            .any(|s| s == "p98" || s == "class" || s == "bins"));
        assert!(known_stats("counter").iter().any(|s| s == "last"));
        assert!(!known_stats("counter").iter().any(|s| s == "kind"));
        assert!(known_stats("scope").iter().any(|s| s == "self"));
        assert!(known_stats("nope").is_empty());
    }

    #[test]
    fn direction_table() {
        assert_eq!(direction("frame.fps"), Direction::HigherIsBetter);
        assert_eq!(direction("frame.low_1pct_fps"), Direction::HigherIsBetter);
        assert_eq!(direction("frame.low_01pct_fps"), Direction::HigherIsBetter);
        assert_eq!(direction("frame.p99"), Direction::LowerIsBetter);
        assert_eq!(
            direction("counter.draw_calls.max"),
            Direction::LowerIsBetter
        );
    }

    #[test]
    fn units_and_precision() {
        assert_eq!(format_metric("frame.avg", 12.042976588628763), "12.04 ms");
        assert_eq!(format_metric("scope.tiny.p95", 0.0123), "0.012 ms");
        assert_eq!(format_metric("frame.fps", 59.83), "59.8 fps");
        assert_eq!(format_metric("frame.jank_ratio", 0.05), "0.0500");
        assert_eq!(format_metric("frame.count", 299.0), "299 frames");
        assert_eq!(format_metric("scope.render.calls", 12.0), "12 calls");
        assert_eq!(format_metric("counter.draw_calls.max", 121.0), "121");
        assert_eq!(format_metric("counter.draw_calls.avg", 120.5), "120.5");
        assert_eq!(
            format_metric("counter.draw_calls.count", 300.0),
            "300 frames"
        );
        assert_eq!(MetricUnit::of("scope.a.b.calls").name(), "calls");
    }

    #[test]
    fn named_map_keeps_order_through_json() {
        let m = NamedMap(vec![("b".to_owned(), 1), ("a".to_owned(), 2)]);
        let s = serde_json::to_string(&m).expect("serializes");
        assert_eq!(s, r#"{"b":1,"a":2}"#);
        let back: NamedMap<i32> = serde_json::from_str(&s).expect("parses");
        assert_eq!(back, m);
    }
}
