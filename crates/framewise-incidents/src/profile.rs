//! `profile.json`: the rolling summary of the latest session, rewritten every 2 s (written
//! to a temporary file beside it and renamed over it, so a reader never sees half of one).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::record::{Common, DropCounts, WrittenCounts};

/// The schema name `profile.json` carries.
pub const PROFILE_SCHEMA: &str = "framewise.profile/1";

/// `profile.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// [`PROFILE_SCHEMA`].
    pub schema: String,
    /// When, which build, which phase, the situation, the regime, `automated`.
    #[serde(flatten)]
    pub common: Common,
    /// The last frame summarised.
    pub frame_index: u64,
    /// The trailing window summarised: the frames that ended in the last 10 s, at most the
    /// 4,096 newest (the frames the deriver remembers).
    pub window: crate::record::Window,
    /// Frame rate and times over the window's non-paused frames.
    pub frame: FrameSummary,
    /// Each counter's median per frame over the window.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, i64>,
    /// Each counter's per-frame values over the window's non-paused frames that recorded it
    /// (the newest included): the statistics `framewise check` judges
    /// `counter.NAME.{count,min,max,avg,last}` budgets on.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counter_stats: BTreeMap<String, CounterStats>,
    /// Each CPU scope's per-frame inclusive totals (all threads) over the window's non-paused
    /// frames in which it ran (the newest included): what
    /// `scope.NAME.{count,avg,min,p50,p95,max}` budgets are judged on.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: BTreeMap<String, ScopeStats>,
    /// The frame classifier's label over the window (`STEADY`, `SPIKING`, `THROTTLED`), when
    /// there were frames to classify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Budgets checked over the window and the ones breached.
    pub budgets: Budgets,
    /// Whether the last frame was paused.
    pub paused: bool,
    /// Records written to `perf.jsonl` so far this session, by type.
    pub written: WrittenCounts,
    /// Records the rate limits dropped so far this session, by type.
    pub dropped: DropCounts,
}

/// Frame times over a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameSummary {
    /// Median period, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ms: Option<f64>,
    /// 95th percentile period, ms (absent under 20 frames).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<f64>,
    /// Frames per second at the median period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
}

/// A counter's per-frame values over a window, as `summarize` states a counter's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterStats {
    /// Frames that recorded it.
    pub count: u64,
    /// The smallest value.
    pub min: i64,
    /// The largest value.
    pub max: i64,
    /// The mean value, to 0.001.
    pub avg: f64,
    /// The newest frame's value.
    pub last: i64,
}

/// A scope's per-frame inclusive totals over a window, ms (to the microsecond), as
/// `summarize` states a scope's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScopeStats {
    /// Frames in which it ran.
    pub count: u64,
    /// Mean per-frame total.
    pub avg_ms: f64,
    /// Smallest per-frame total.
    pub min_ms: f64,
    /// Median per-frame total (absent under 2 frames).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<f64>,
    /// 95th percentile of the per-frame totals (absent under 20 frames).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<f64>,
    /// Largest per-frame total.
    pub max_ms: f64,
}

/// Budgets checked and breached.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Budgets {
    /// How many budgets were checked.
    pub checked: u32,
    /// The names of those breached (`frame_ms`: the window's p95 period over the frame
    /// budget).
    pub breached: Vec<String>,
}

/// Writes `profile` to `path` atomically: a temporary file in the same directory, then
/// renamed over `path`, so a reader sees the previous summary or this one, never a mix.
pub fn write_profile(path: &Path, profile: &Profile) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(profile).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "profile.json".into());
    // The process id keeps two sessions writing into one directory off each other's
    // temporary file; the rename decides which summary is the latest.
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&bytes)?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Reads `profile.json`.
pub fn read_profile(path: &Path) -> Result<Profile, crate::Error> {
    crate::regular_or_missing(path)?;
    let text = std::fs::read_to_string(path).map_err(|source| crate::Error::Io {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| crate::Error::Json {
        path: path.to_owned(),
        source,
    })
}
