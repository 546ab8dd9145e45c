//! The MCP tools over `.framewise/` (the game's memory): `get_profile`, `list_issues`,
//! `get_history`, `record_fix` — their inputs and their headline results.

use std::collections::BTreeMap;

use framewise_incidents::fold::WindowSummary;
use framewise_incidents::Profile;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::results::HEADLINE_ROWS;
use crate::commands::fix::FixView;
use crate::commands::history::HistoryView;
use crate::commands::issues::IssuesView;

/// `get_profile`'s input.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirParams {
    /// The `.framewise/` directory [default: $FRAMEWISE_DIR, else the nearest `.framewise/`
    /// from the server's working directory up].
    #[serde(default)]
    pub dir: Option<String>,
}

/// `list_issues`' input.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssuesParams {
    /// The `.framewise/` directory (as `get_profile`).
    #[serde(default)]
    pub dir: Option<String>,
    /// One issue with every occurrence: its footprint id (8 hex digits).
    #[serde(default)]
    pub fp: Option<String>,
    /// Keep the records of bench and CI runs (left out by default).
    #[serde(default)]
    pub include_automated: bool,
    /// Count occurrences at or after this time (ISO 8601, or a date).
    #[serde(default)]
    pub from: Option<String>,
    /// Count occurrences at or before this time.
    #[serde(default)]
    pub to: Option<String>,
}

/// `get_history`'s input.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryParams {
    /// The `.framewise/` directory (as `get_profile`).
    #[serde(default)]
    pub dir: Option<String>,
    /// Equal time buckets from the first evidence to the last (1–1000, default 24).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub buckets: Option<u32>,
    /// Only evidence at or after this time (ISO 8601, or a date).
    #[serde(default)]
    pub from: Option<String>,
    /// Only evidence at or before this time.
    #[serde(default)]
    pub to: Option<String>,
}

/// `record_fix`'s input (`framewise fix`'s flags).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixParams {
    /// What was fixed, in a line.
    pub title: String,
    /// The footprint ids it addresses (`list_issues` shows them).
    #[serde(default)]
    pub footprints: Vec<String>,
    /// The issue it addresses (a tracker reference or a sentence).
    #[serde(default)]
    pub issue: Option<String>,
    /// What was done.
    #[serde(default)]
    pub solution: Option<String>,
    /// The commit that made the change.
    #[serde(default)]
    pub commit: Option<String>,
    /// The files it changed.
    #[serde(default)]
    pub files: Vec<String>,
    /// The window before the change: a build name or `ISO..ISO` (default: the previous
    /// build with evidence).
    #[serde(default)]
    pub before: Option<String>,
    /// The window after (default: the latest build with evidence).
    #[serde(default)]
    pub after: Option<String>,
    /// Measure the fix without appending it.
    #[serde(default)]
    pub dry_run: bool,
    /// The `.framewise/` directory (as `get_profile`).
    #[serde(default)]
    pub dir: Option<String>,
}

/// `get_profile`'s result: the latest session's rolling summary (`profile.json`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ProfileResult {
    /// When it was written (ISO 8601 UTC).
    pub at: String,
    /// The build.
    pub build: Option<String>,
    /// The phase of the last frame.
    pub phase: Option<String>,
    /// The timing regime (`hardware`, `software`, `unknown`).
    pub regime: Option<String>,
    /// A bench or CI run.
    pub automated: bool,
    /// The last frame summarised.
    pub frame_index: u64,
    /// Frames in the trailing window.
    pub window_frames: u64,
    /// Median period over the window, ms.
    pub median_ms: Option<f64>,
    /// p95 period over the window, ms (absent under 20 frames).
    pub p95_ms: Option<f64>,
    /// Frames per second at the median period.
    pub fps: Option<f64>,
    /// The classifier's label over the window.
    pub class: Option<String>,
    /// Budgets checked over the window.
    pub budgets_checked: u32,
    /// The budgets breached.
    pub budgets_breached: Vec<String>,
    /// Whether the last frame was paused.
    pub paused: bool,
    /// Each counter's median per frame over the window.
    pub counters: BTreeMap<String, i64>,
    /// The whole `profile.json`.
    pub report_path: String,
}

impl ProfileResult {
    /// The headline of `profile`, read from `report_path`.
    pub fn new(p: Profile, report_path: String) -> Self {
        Self {
            at: p.common.at,
            build: p.common.build,
            phase: p.common.phase,
            regime: p.common.regime,
            automated: p.common.automated,
            frame_index: p.frame_index,
            window_frames: p.window.frames,
            median_ms: p.frame.median_ms,
            p95_ms: p.frame.p95_ms,
            fps: p.frame.fps,
            class: p.class,
            budgets_checked: p.budgets.checked,
            budgets_breached: p.budgets.breached,
            paused: p.paused,
            counters: p.counters,
            report_path,
        }
    }
}

/// One issue, in brief.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct IssueHeadline {
    /// The footprint id (what `record_fix` and `list_issues`' `fp` take).
    pub id: String,
    /// How it reads (`hitch · long-cpu-scope · physics`).
    pub label: String,
    /// Occurrences counted.
    pub count: u64,
    /// The last occurrence (ISO 8601 UTC).
    pub last: String,
    /// The builds it was seen in.
    pub builds: Vec<String>,
    /// Fixes recorded against it.
    pub fixes: usize,
}

/// `list_issues`' result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct IssuesResult {
    /// The `.framewise/` directory read.
    pub dir: String,
    /// Incidents folded.
    pub incidents: u64,
    /// Automated (bench, CI) incidents left out.
    pub automated_left_out: u64,
    /// Issues in the catalogue.
    pub issue_count: usize,
    /// The first issues, as the catalogue ranks them (at most 5).
    pub top: Vec<IssueHeadline>,
    /// The whole `framewise issues --format json` document.
    pub report_path: String,
}

impl IssuesResult {
    /// The headline of a catalogue whose JSON was written to `report_path`.
    pub fn new(view: &IssuesView, report_path: String) -> Self {
        let c = &view.doc.catalogue;
        Self {
            dir: view.doc.ledger.dir.clone(),
            incidents: c.incidents,
            automated_left_out: c.automated_left_out,
            issue_count: c.issues.len(),
            top: c
                .issues
                .iter()
                .take(HEADLINE_ROWS)
                .map(|i| IssueHeadline {
                    id: i.id.clone(),
                    label: i.label.clone(),
                    count: i.count,
                    last: i.last.clone(),
                    builds: i.builds.clone(),
                    fixes: i.fixes.len(),
                })
                .collect(),
            report_path,
        }
    }
}

/// A window of the ledger, in brief.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WindowHeadline {
    /// The build, when the window is one build's.
    pub build: Option<String>,
    /// From (ISO 8601 UTC).
    pub from: String,
    /// To.
    pub to: String,
    /// Hitches in the window.
    pub hitches: u64,
    /// Hitches per hour of play.
    pub hitches_per_hour: Option<f64>,
    /// p95 period, ms.
    pub p95_ms: Option<f64>,
    /// Median period, ms.
    pub median_ms: Option<f64>,
}

impl WindowHeadline {
    fn of(w: &WindowSummary) -> Self {
        Self {
            build: w.build.clone(),
            from: w.from.clone(),
            to: w.to.clone(),
            hitches: w.hitches,
            hitches_per_hour: w.hitches_per_hour,
            p95_ms: w.p95_ms,
            median_ms: w.median_ms,
        }
    }
}

/// `get_history`'s result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct HistoryResult {
    /// The `.framewise/` directory read.
    pub dir: String,
    /// The first evidence (absent when the ledger holds none).
    pub from: Option<String>,
    /// The last evidence.
    pub to: Option<String>,
    /// Time buckets in the report.
    pub buckets: usize,
    /// The latest builds' windows, newest last (at most 5).
    pub builds: Vec<WindowHeadline>,
    /// Builds with evidence in all.
    pub build_count: usize,
    /// Fixes recorded in the span.
    pub fixes: usize,
    /// Records dated over an hour after now (a clock set wrong), left out of the span, the
    /// buckets and the builds.
    pub future: u64,
    /// The whole `framewise history --format json` document.
    pub report_path: String,
}

impl HistoryResult {
    /// The headline of a history whose JSON was written to `report_path`.
    pub fn new(view: &HistoryView, report_path: String) -> Self {
        let h = &view.0.history;
        let skip = h.builds.len().saturating_sub(HEADLINE_ROWS);
        Self {
            dir: view.0.ledger.dir.clone(),
            from: h.span.as_ref().map(|s| s.from.clone()),
            to: h.span.as_ref().map(|s| s.to.clone()),
            buckets: h.buckets.len(),
            builds: h
                .builds
                .iter()
                .skip(skip)
                .map(|b| WindowHeadline::of(&b.summary))
                .collect(),
            build_count: h.builds.len(),
            fixes: h.fixes.len(),
            future: h.future.as_ref().map_or(0, |f| f.records),
            report_path,
        }
    }
}

/// `record_fix`'s result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct FixResult {
    /// Whether the record was appended (false for a dry run).
    pub appended: bool,
    /// The file it was (or would be) appended to (`fixes.jsonl`).
    pub file: String,
    /// The fix's title.
    pub title: String,
    /// The footprints it addresses.
    pub footprints: Vec<String>,
    /// The window before the change, measured from the ledger.
    pub before: WindowHeadline,
    /// The window after.
    pub after: WindowHeadline,
    /// The whole `framewise fix --format json` document; null when it could not be written
    /// (`report_error` says why).
    pub report_path: Option<String>,
    /// Set only when the report could not be written after the fix was appended: the fix
    /// IS recorded (`appended`), so calling again is refused as a duplicate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_error: Option<String>,
}

impl FixResult {
    /// The headline of a fix whose JSON was written to `report_path` (or, after the append,
    /// could not be: `report_error`).
    pub fn new(view: &FixView, report_path: Option<String>, report_error: Option<String>) -> Self {
        let d = &view.0;
        Self {
            appended: d.appended,
            file: d.file.clone(),
            title: d.fix.title.clone(),
            footprints: d.fix.footprints.clone(),
            before: WindowHeadline::of(&d.fix.before.summary),
            after: WindowHeadline::of(&d.fix.after.summary),
            report_path,
            report_error,
        }
    }
}
