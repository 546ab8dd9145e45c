//! The types of `summarize --format json`: the [`Summary`] with its capture facts, units
//! and named methods, and [`NamedMap`], the JSON object that keeps its entries in order
//! (scopes by total). A metric path resolves against this JSON ([`Summary::metric`]).

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::{AdapterKind, Defect, Grade, SourceKind};
use crate::stats::{CounterStats, FrameBlock, ScopeStats, WorkBlock};

use super::metric::{json_block, parse_metric_path, MetricTable};

/// The schema name every summary carries.
pub const SUMMARY_SCHEMA: &str = "framewise.summary/2";

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
    pub(super) fn standard(budget_ns: u64) -> Self {
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
