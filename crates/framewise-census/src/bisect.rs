//! Measured bisection: what each candidate costs, by hiding it and rendering.
//!
//! The engine implements [`BisectEngine`] (list candidates, hide, show, render one frame and
//! report what it cost, snapshot the world); [`bisect`] is the protocol, the same for every
//! engine:
//!
//! 1. snapshot the world; render `warmup_frames` frames (discarded);
//! 2. render `frames` frames: the baseline;
//! 3. for each candidate (the engine's, most triangles first, the first `top`): hide it,
//!    render `frames` frames, show it, snapshot and compare with step 1's snapshot
//!    (differences are reported, never hidden);
//! 4. render `frames` frames again: the closing baseline.
//!
//! Each metric's **spread** is measured, not assumed: the larger of the two baselines'
//! ranges (max − min over their frames) and the distance between their medians (drift over
//! the run). A candidate's Δ (its frames' median minus the opening baseline's median;
//! negative: hiding it saved that much) is `noisy` when its magnitude does not exceed the
//! spread, or when the candidate's frames overlap either baseline's frames (a saving counts
//! only when every frame with the candidate hidden is below every frame of both baselines; a
//! cost, above): a run that drifts (a renderer still warming, a machine shared with others)
//! moves the frames measured near one baseline away from the other, and a median alone past
//! the spread would call that drift a saving. Costs measured one at a time do not add up to the baseline (hiding two things
//! can save more or less than the two savings), and the report says so as data:
//! `sums_to_baseline: false`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::hints::SITE_UNKNOWN;
use crate::model::Census;

/// The bisection report's schema tag.
pub const BISECT_SCHEMA: &str = "framewise.bisect/1";
/// The file an engine writes its latest bisection to, inside `.framewise/`.
pub const BISECT_FILE: &str = "bisect.json";
/// Default frames per measurement (`K`).
pub const DEFAULT_FRAMES: u32 = 8;
/// Default frames rendered and discarded before the baseline.
pub const DEFAULT_WARMUP_FRAMES: u32 = 2;
/// Default number of candidates (the most triangles first).
pub const DEFAULT_TOP: usize = 20;

/// An engine's error, as text (engines differ; the report only names it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineError(pub String);

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EngineError {}

/// Something bisection can hide: a census entry, usually.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// The engine's handle, passed back to `hide` and `show`.
    pub id: String,
    /// A readable name.
    pub name: String,
    /// Where it was spawned, when known.
    pub site: Option<String>,
    /// Triangles it submits (the census's count): the default ranking of candidates.
    pub triangles: u64,
}

impl Candidate {
    /// Every entry of a census as a candidate, most triangles first.
    pub fn from_census(census: &Census) -> Vec<Candidate> {
        census
            .entries_by_triangles()
            .into_iter()
            .map(|e| Candidate {
                id: e.id.clone(),
                name: e.name.clone(),
                site: e.site.clone(),
                triangles: e.triangles,
            })
            .collect()
    }
}

/// What one rendered frame cost, as the engine measured it; `None` where it cannot say
/// (never 0 for unmeasured).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameCost {
    /// Draw calls submitted.
    pub draw_calls: Option<u64>,
    /// Triangles submitted.
    pub triangles: Option<u64>,
    /// Render time in milliseconds (the GPU's, where the engine times it, else the render
    /// work's CPU time: the engine documents which).
    pub render_ms: Option<f64>,
}

/// The world's state as the engine sees it, keyed by what it describes (an entity's
/// visibility, a component's value): two equal snapshots mean nothing bisection touched
/// was left changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorldSnapshot(pub BTreeMap<String, String>);

impl WorldSnapshot {
    /// Every key whose value differs, appeared or vanished: `key: before → after`
    /// (`(absent)` for a missing side).
    pub fn differences(&self, after: &WorldSnapshot) -> Vec<String> {
        let absent = "(absent)";
        let mut out = Vec::new();
        for (key, before) in &self.0 {
            match after.0.get(key) {
                Some(now) if now == before => {}
                Some(now) => out.push(format!("{key}: {before} → {now}")),
                None => out.push(format!("{key}: {before} → {absent}")),
            }
        }
        for (key, now) in &after.0 {
            if !self.0.contains_key(key) {
                out.push(format!("{key}: {absent} → {now}"));
            }
        }
        out
    }
}

/// What an engine offers bisection. The game should be paused (no simulation between
/// frames) while [`bisect`] runs, so the frames differ only by what was hidden.
pub trait BisectEngine {
    /// The engine's name and version, for the report.
    fn name(&self) -> String;
    /// What may be hidden (need not be sorted: the driver ranks by triangles).
    fn candidates(&mut self) -> Result<Vec<Candidate>, EngineError>;
    /// Hides a candidate: it no longer draws (nor casts shadows).
    fn hide(&mut self, id: &str) -> Result<(), EngineError>;
    /// Shows a candidate hidden by `hide`, restoring exactly what was there before.
    fn show(&mut self, id: &str) -> Result<(), EngineError>;
    /// Renders one frame and reports what it cost.
    fn render_frame(&mut self) -> Result<FrameCost, EngineError>;
    /// The world's state, to verify that every candidate was restored.
    fn snapshot(&mut self) -> Result<WorldSnapshot, EngineError>;
    /// What [`FrameCost::render_ms`] measures on this engine, in a sentence (the GPU's time
    /// or the render work's CPU time, and how it is read); `None` (the default) when the
    /// engine does not measure render time.
    fn render_ms_source(&self) -> Option<String> {
        None
    }
}

/// How [`bisect`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BisectOptions {
    /// Frames per measurement (`K`, at least 1).
    pub frames: u32,
    /// Frames rendered and discarded before the baseline.
    pub warmup_frames: u32,
    /// How many candidates to measure, most triangles first.
    pub top: usize,
}

impl Default for BisectOptions {
    fn default() -> Self {
        Self {
            frames: DEFAULT_FRAMES,
            warmup_frames: DEFAULT_WARMUP_FRAMES,
            top: DEFAULT_TOP,
        }
    }
}

/// Why a bisection could not run at all (a failure on one candidate is reported in its
/// result instead).
#[derive(Debug, PartialEq, Eq)]
pub enum BisectError {
    /// `frames` was 0.
    NoFrames,
    /// The engine failed outside any one candidate (listing, snapshot, a baseline frame).
    Engine {
        /// The step that failed.
        step: &'static str,
        /// The engine's error.
        error: EngineError,
    },
}

impl std::fmt::Display for BisectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BisectError::NoFrames => f.write_str("bisection needs at least 1 frame per measure"),
            BisectError::Engine { step, error } => write!(f, "{step}: {error}"),
        }
    }
}

impl std::error::Error for BisectError {}

/// One metric over a measurement's frames.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// The median (the mean of the middle two for an even count).
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
}

impl Stat {
    fn of(values: &mut [f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        };
        Some(Stat {
            median,
            min: values[0],
            max: values[n - 1],
        })
    }
}

/// A measurement: `K` frames. A metric is `null` unless the engine reported it on every
/// frame of the measurement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// Draw calls.
    pub draw_calls: Option<Stat>,
    /// Triangles.
    pub triangles: Option<Stat>,
    /// Render time, ms.
    pub render_ms: Option<Stat>,
}

/// Each metric's measured spread (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Draw calls.
    pub draw_calls: Option<f64>,
    /// Triangles.
    pub triangles: Option<f64>,
    /// Render time, ms.
    pub render_ms: Option<f64>,
}

/// A candidate's effect on one metric.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// Hidden median − baseline median (negative: hiding it saved this much).
    pub delta: f64,
    /// The metric's measured spread.
    pub spread: f64,
    /// Indistinguishable from the noise: `|delta| ≤ spread`, or the hidden frames' range
    /// overlaps either baseline's range (module doc).
    pub noisy: bool,
}

/// One candidate measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CandidateResult {
    /// 1 = costs the most.
    pub rank: u32,
    /// The engine's handle.
    pub id: String,
    /// A readable name.
    pub name: String,
    /// Spawning site, or `unknown`.
    pub site: String,
    /// Triangles the engine listed for it.
    pub census_triangles: u64,
    /// The frames with it hidden.
    pub hidden: Measure,
    /// Δ draw calls, `null` when not measured on both sides.
    pub delta_draw_calls: Option<Delta>,
    /// Δ triangles.
    pub delta_triangles: Option<Delta>,
    /// Δ render ms.
    pub delta_render_ms: Option<Delta>,
    /// The world's snapshot after `show` equals the one taken before the run.
    pub restored: bool,
    /// What differed when not restored (`key: before → after`).
    pub restore_differences: Vec<String>,
    /// The engine's error on this candidate (hide, a frame, show), if any: its deltas are
    /// then `null`.
    pub error: Option<String>,
}

/// The bisection's result (`framewise.bisect/1`, docs/cli/census.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BisectReport {
    /// Always [`BISECT_SCHEMA`].
    pub schema: String,
    /// The engine.
    pub engine: String,
    /// Frames per measurement.
    pub frames: u32,
    /// Frames discarded before the baseline.
    pub warmup_frames: u32,
    /// The opening baseline.
    pub baseline: Measure,
    /// The closing baseline (after every candidate was restored).
    pub baseline_after: Measure,
    /// Each metric's measured spread.
    pub spread: Spread,
    /// What `render_ms` measures, as the engine says ([`BisectEngine::render_ms_source`]);
    /// `null` when the engine does not measure render time (reports written before this
    /// field read as `null`).
    #[serde(default)]
    pub render_ms_source: Option<String>,
    /// Candidates, ranked: first those whose render-time saving exceeds the spread, by
    /// saving; then the rest by triangles saved, then draw calls saved.
    pub results: Vec<CandidateResult>,
    /// Always `false`: one-at-a-time costs do not add up to the baseline.
    pub sums_to_baseline: bool,
    /// Every candidate was restored.
    pub restored: bool,
}

fn engine_step(step: &'static str) -> impl Fn(EngineError) -> BisectError {
    move |error| BisectError::Engine { step, error }
}

/// Renders `frames` frames and measures them.
fn measure<E: BisectEngine + ?Sized>(engine: &mut E, frames: u32) -> Result<Measure, EngineError> {
    let mut draws = Vec::new();
    let mut tris = Vec::new();
    let mut ms = Vec::new();
    let mut complete = [true; 3];
    for _ in 0..frames {
        let cost = engine.render_frame()?;
        push_or_mark(
            &mut draws,
            cost.draw_calls.map(|v| v as f64),
            &mut complete[0],
        );
        push_or_mark(
            &mut tris,
            cost.triangles.map(|v| v as f64),
            &mut complete[1],
        );
        push_or_mark(
            &mut ms,
            cost.render_ms.filter(|v| v.is_finite()),
            &mut complete[2],
        );
    }
    let stat = |values: &mut Vec<f64>, complete: bool| complete.then(|| Stat::of(values)).flatten();
    Ok(Measure {
        draw_calls: stat(&mut draws, complete[0]),
        triangles: stat(&mut tris, complete[1]),
        render_ms: stat(&mut ms, complete[2]),
    })
}

fn push_or_mark(values: &mut Vec<f64>, value: Option<f64>, complete: &mut bool) {
    match value {
        Some(v) => values.push(v),
        None => *complete = false,
    }
}

fn spread_of(a: Option<Stat>, b: Option<Stat>) -> Option<f64> {
    let (a, b) = (a?, b?);
    Some(
        (a.max - a.min)
            .max(b.max - b.min)
            .max((a.median - b.median).abs()),
    )
}

fn delta_of(
    base: Option<Stat>,
    base_after: Option<Stat>,
    hidden: Option<Stat>,
    spread: Option<f64>,
) -> Option<Delta> {
    let (base, hidden, spread) = (base?, hidden?, spread?);
    let delta = hidden.median - base.median;
    // Clear of both baselines: every hidden frame beyond every baseline frame, on the side
    // the median moved to. A closing baseline not measured leaves only the opening one.
    let baselines = [Some(base), base_after];
    let clear = if delta < 0.0 {
        baselines.iter().flatten().all(|b| hidden.max < b.min)
    } else {
        baselines.iter().flatten().all(|b| hidden.min > b.max)
    };
    Some(Delta {
        delta,
        spread,
        noisy: delta.abs() <= spread || !clear,
    })
}

/// Runs the protocol (module doc) on `engine`.
pub fn bisect<E: BisectEngine + ?Sized>(
    engine: &mut E,
    options: &BisectOptions,
) -> Result<BisectReport, BisectError> {
    if options.frames == 0 {
        return Err(BisectError::NoFrames);
    }
    let mut candidates = engine
        .candidates()
        .map_err(engine_step("listing candidates"))?;
    candidates.sort_by_key(|c| std::cmp::Reverse(c.triangles));
    candidates.truncate(options.top);
    let before = engine.snapshot().map_err(engine_step("snapshot"))?;
    measure(engine, options.warmup_frames).map_err(engine_step("warm-up frame"))?;
    let baseline = measure(engine, options.frames).map_err(engine_step("baseline frame"))?;

    let mut measured = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        let outcome = engine
            .hide(&candidate.id)
            .and_then(|()| measure(engine, options.frames));
        // Shown again whatever happened: a half-hidden world must not outlive the run.
        let shown = engine.show(&candidate.id);
        let error = match (&outcome, &shown) {
            (Err(e), _) => Some(format!("measuring with it hidden: {e}")),
            (Ok(_), Err(e)) => Some(format!("showing it again: {e}")),
            _ => None,
        };
        let after = engine.snapshot().map_err(engine_step("snapshot"))?;
        let restore_differences = before.differences(&after);
        measured.push((candidate, outcome.ok(), error, restore_differences));
    }
    let baseline_after =
        measure(engine, options.frames).map_err(engine_step("closing baseline frame"))?;
    let spread = Spread {
        draw_calls: spread_of(baseline.draw_calls, baseline_after.draw_calls),
        triangles: spread_of(baseline.triangles, baseline_after.triangles),
        render_ms: spread_of(baseline.render_ms, baseline_after.render_ms),
    };

    let mut results: Vec<CandidateResult> = measured
        .into_iter()
        .map(|(candidate, hidden, error, restore_differences)| {
            let hidden_measure = hidden.unwrap_or_default();
            let ok = hidden.is_some();
            CandidateResult {
                rank: 0,
                site: candidate.site.unwrap_or_else(|| SITE_UNKNOWN.to_owned()),
                id: candidate.id,
                name: candidate.name,
                census_triangles: candidate.triangles,
                delta_draw_calls: ok
                    .then(|| {
                        delta_of(
                            baseline.draw_calls,
                            baseline_after.draw_calls,
                            hidden_measure.draw_calls,
                            spread.draw_calls,
                        )
                    })
                    .flatten(),
                delta_triangles: ok
                    .then(|| {
                        delta_of(
                            baseline.triangles,
                            baseline_after.triangles,
                            hidden_measure.triangles,
                            spread.triangles,
                        )
                    })
                    .flatten(),
                delta_render_ms: ok
                    .then(|| {
                        delta_of(
                            baseline.render_ms,
                            baseline_after.render_ms,
                            hidden_measure.render_ms,
                            spread.render_ms,
                        )
                    })
                    .flatten(),
                hidden: hidden_measure,
                restored: restore_differences.is_empty(),
                restore_differences,
                error,
            }
        })
        .collect();
    rank(&mut results);
    let restored = results.iter().all(|r| r.restored);
    Ok(BisectReport {
        schema: BISECT_SCHEMA.to_owned(),
        engine: engine.name(),
        frames: options.frames,
        warmup_frames: options.warmup_frames,
        baseline,
        baseline_after,
        spread,
        render_ms_source: engine.render_ms_source(),
        results,
        sums_to_baseline: false,
        restored,
    })
}

/// Ranks in place (see [`BisectReport::results`]); a metric not measured ranks as no saving.
fn rank(results: &mut [CandidateResult]) {
    let saving = |d: Option<Delta>| d.map_or(0.0, |d| -d.delta);
    let clear_ms = |r: &CandidateResult| match r.delta_render_ms {
        Some(d) if !d.noisy && d.delta < 0.0 => Some(-d.delta),
        _ => None,
    };
    results.sort_by(|a, b| match (clear_ms(a), clear_ms(b)) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => saving(b.delta_triangles)
            .total_cmp(&saving(a.delta_triangles))
            .then(saving(b.delta_draw_calls).total_cmp(&saving(a.delta_draw_calls))),
    });
    for (i, r) in results.iter_mut().enumerate() {
        r.rank = u32::try_from(i + 1).unwrap_or(u32::MAX);
    }
}

/// Why a bisection document does not read.
#[derive(Debug)]
pub enum BisectReadError {
    /// Not JSON, or not the shape `framewise.bisect/1` promises (serde's message: one line,
    /// with the line and column).
    Json(serde_json::Error),
    /// JSON, but not an object (what it is instead: "an array", "a number"…).
    NotObject(&'static str),
    /// A JSON object whose `schema` is not [`BISECT_SCHEMA`] (`None`: no `schema` field).
    Schema(Option<String>),
}

impl std::fmt::Display for BisectReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BisectReadError::Json(e) => write!(f, "not a bisection report: {e}"),
            BisectReadError::NotObject(what) => write!(
                f,
                "not a bisection report: {what}, where a JSON object with a \"schema\" field belongs"
            ),
            BisectReadError::Schema(Some(s)) => {
                write!(f, "schema {s:?} is not {BISECT_SCHEMA:?}")
            }
            BisectReadError::Schema(None) => {
                write!(f, "no \"schema\" field: expected {BISECT_SCHEMA:?}")
            }
        }
    }
}

impl std::error::Error for BisectReadError {}

/// Reads a bisection report (`bisect.json`).
pub fn parse_bisect(text: &str) -> Result<BisectReport, BisectReadError> {
    let schema = crate::file::schema_tag(text).map_err(|e| match e {
        crate::file::TagError::Json(e) => BisectReadError::Json(e),
        crate::file::TagError::NotObject(what) => BisectReadError::NotObject(what),
    })?;
    match schema.as_deref() {
        Some(BISECT_SCHEMA) => serde_json::from_str(text).map_err(BisectReadError::Json),
        other => Err(BisectReadError::Schema(other.map(str::to_owned))),
    }
}

/// Writes a bisection report to `path` (atomically, as the census file is written).
pub fn write_bisect_file(path: &std::path::Path, report: &BisectReport) -> std::io::Result<()> {
    crate::file::write_json_atomically(path, report)
}
