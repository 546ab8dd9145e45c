//! Hitches: the rule from [`crate::hitch_rule`] applied to a capture, and each hitch's
//! classification in the closed vocabulary of docs/CONCEPTS.md, ranked, with confidence and evidence.
//!
//! Triggers (thresholds in [`ClassifyThresholds`]):
//! - `pipeline-compile`: `pipelines_created` > 0 in the frame.
//! - `resource-upload`: `bytes_uploaded` far above its median (≥ `upload_factor` × the
//!   median and at least `upload_min_bytes` above it), no pipelines created.
//! - `spawn-burst`: the `entities` gauge rose by at least `spawn_min_rise` in the frame.
//! - `long-cpu-scope`: one scope's inclusive time, above its median, accounts for most of the
//!   frame's excess over the rolling median; names the scope and its call site.
//! - `gpu-bound`: the GPU frame time dominates the period while CPU work is shorter.
//! - `wait-outside-frame`: the period is at least twice the work and the time between frames
//!   accounts for most of the excess.
//! - `unknown-by-elimination`: nothing above explains it.
//!
//! A scope's median is taken over every non-paused frame, counting 0 for frames in which it
//! did not run: a scope that did not run spent no time in that frame.

use serde::{Deserialize, Serialize};

use framewise_detect::median::{median, median_with_zeros};

use crate::hitch_rule::{HitchRule, Judgement, WINDOW_FRAMES};
use crate::model::{Capture, CounterId, Defect, Grade, ScopeId};
use crate::stats::NS_PER_MS;

/// The closed hitch vocabulary. It grows only by changing docs/CONCEPTS.md with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HitchKind {
    /// Pipelines (shaders) were created in the frame.
    PipelineCompile,
    /// Far more bytes than usual were uploaded.
    ResourceUpload,
    /// Many entities appeared at once.
    SpawnBurst,
    /// One CPU scope took most of the excess.
    LongCpuScope,
    /// The GPU frame time dominated.
    GpuBound,
    /// The time went between frames.
    WaitOutsideFrame,
    /// Nothing measured explains it.
    UnknownByElimination,
}

impl HitchKind {
    /// The name as docs/CONCEPTS.md spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::PipelineCompile => "pipeline-compile",
            Self::ResourceUpload => "resource-upload",
            Self::SpawnBurst => "spawn-burst",
            Self::LongCpuScope => "long-cpu-scope",
            Self::GpuBound => "gpu-bound",
            Self::WaitOutsideFrame => "wait-outside-frame",
            Self::UnknownByElimination => "unknown-by-elimination",
        }
    }

    /// Parses a name, accepting sloptimize's names as aliases (`shader-compile`,
    /// `texture-upload`, `long-render`, `long-script`, `gc-or-upload-by-elimination`).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "pipeline-compile" | "shader-compile" => Self::PipelineCompile,
            "resource-upload" | "texture-upload" => Self::ResourceUpload,
            "spawn-burst" => Self::SpawnBurst,
            "long-cpu-scope" | "long-render" | "long-script" => Self::LongCpuScope,
            "gpu-bound" => Self::GpuBound,
            "wait-outside-frame" => Self::WaitOutsideFrame,
            "unknown-by-elimination" | "gc-or-upload-by-elimination" => Self::UnknownByElimination,
            _ => return None,
        })
    }
}

/// How sure a guess is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// Weak.
    Low,
    /// Plausible.
    Medium,
    /// Strong.
    High,
}

/// One ranked guess.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Guess {
    /// The classification.
    pub guess: HitchKind,
    /// How sure.
    pub confidence: Confidence,
    /// The numbers it rests on, in a sentence.
    pub evidence: String,
    /// The scope, for `long-cpu-scope`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The scope's call site, for `long-cpu-scope`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

/// Thresholds for the classification triggers.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassifyThresholds {
    /// `bytes_uploaded` must be at least this multiple of its median.
    pub upload_factor: f64,
    /// …and at least this many bytes above it.
    pub upload_min_bytes: i64,
    /// The `entities` gauge must rise by at least this much in the frame.
    pub spawn_min_rise: i64,
    /// Fraction of the excess for medium confidence.
    pub explains_medium: f64,
    /// Fraction of the excess for high confidence.
    pub explains_high: f64,
    /// Fraction of the excess below which a scope is not named at all.
    pub explains_low: f64,
}

impl Default for ClassifyThresholds {
    fn default() -> Self {
        Self {
            upload_factor: 4.0,
            upload_min_bytes: 256 * 1024,
            spawn_min_rise: 100,
            explains_medium: 0.5,
            explains_high: 0.75,
            explains_low: 0.25,
        }
    }
}

/// Options for [`find_hitches`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HitchOptions {
    /// Frame budget in ns (`framewise.toml`'s `[budgets] frame_ms`); `None`: the capture's
    /// declared budget, else 60 Hz.
    pub budget_ns: Option<u64>,
    /// Classification thresholds.
    pub thresholds: ClassifyThresholds,
}

/// The rule as applied, stated in the output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleInfo {
    /// The rule in words.
    pub rule: String,
    /// Frame budget, ms.
    pub budget_ms: f64,
    /// Frames in the rolling median.
    pub window_frames: u64,
}

/// One hitch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hitch {
    /// Frame index.
    pub frame: u64,
    /// Phase, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Period, ms.
    pub duration_ms: f64,
    /// CPU work, ms.
    pub work_ms: f64,
    /// GPU frame time, ms, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_ms: Option<f64>,
    /// The threshold the period exceeded, ms.
    pub threshold_ms: f64,
    /// The rolling median behind the threshold, ms.
    pub median_ms: f64,
    /// Period minus the baseline (rolling median, or the capture median when there was no
    /// history), ms.
    pub excess_ms: f64,
    /// Ranked guesses, best first.
    pub classification: Vec<Guess>,
}

/// `hitches --format json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HitchReport {
    /// `framewise.hitches/1`.
    pub schema: String,
    /// The rule as applied.
    pub rule: RuleInfo,
    /// Non-paused frames with a known period that the rule judged.
    pub frames_judged: u64,
    /// Truth grade.
    pub grade: Grade,
    /// Every hitch, in frame order.
    pub hitches: Vec<Hitch>,
    /// What was wrong with the capture judged (lost frames can hide hitches).
    pub defects: Vec<Defect>,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS
}

fn fmt_ms(ns: u64) -> String {
    format!("{:.2} ms", ms(ns))
}

/// Applies the hitch rule to every frame: `None` for paused frames and frames whose
/// period is unknown.
pub fn judge_frames(capture: &Capture, budget_ns: u64) -> Vec<Option<Judgement>> {
    let mut rule = HitchRule::new(budget_ns);
    capture
        .frames()
        .rows()
        .map(|row| row.period_ns.and_then(|p| rule.observe(p, row.paused)))
        .collect()
}

/// Capture-wide medians the classification compares a frame against.
pub(crate) struct Baselines {
    /// Per scope id: median per-frame total over non-paused frames (0 where absent).
    pub scope_median_ns: Vec<u64>,
    /// Median of period − work over non-paused frames with a period.
    pub gap_median_ns: u64,
    /// Median GPU frame time over frames that have one.
    pub gpu_median_ns: Option<u64>,
    /// Median period.
    pub period_median_ns: u64,
}

impl Baselines {
    pub(crate) fn of(capture: &Capture) -> Self {
        let f = capture.frames();
        let mut per_scope: Vec<Vec<u64>> = vec![Vec::new(); capture.scopes().len()];
        let mut frames = 0usize;
        let mut gaps = Vec::new();
        let mut gpus = Vec::new();
        let mut periods = Vec::new();
        for (r, row) in f.rows().enumerate() {
            if row.paused {
                continue;
            }
            frames += 1;
            for a in capture.scope_aggs().frame(r) {
                if let Some(v) = per_scope.get_mut(a.id as usize) {
                    v.push(a.total_ns);
                }
            }
            if let Some(p) = row.period_ns {
                gaps.push(p.saturating_sub(row.work_ns()));
                periods.push(p);
            }
            if let Some(g) = row.gpu_ns {
                gpus.push(g);
            }
        }
        let scope_median_ns = per_scope
            .iter_mut()
            .map(|v| {
                let zeros = frames.saturating_sub(v.len());
                median_with_zeros(v, zeros)
            })
            .collect();
        Self {
            scope_median_ns,
            gap_median_ns: median_with_zeros(&mut gaps, 0),
            gpu_median_ns: (!gpus.is_empty()).then(|| median_with_zeros(&mut gpus, 0)),
            period_median_ns: median_with_zeros(&mut periods, 0),
        }
    }
}

fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, ch) in name.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

/// The counter whose snake_case name is `canonical`.
fn find_counter(capture: &Capture, canonical: &str) -> Option<CounterId> {
    capture
        .counters()
        .iter()
        .position(|c| snake(&c.name) == canonical)
        .and_then(|p| u32::try_from(p).ok())
}

struct CounterBaselines {
    pipelines: Option<CounterId>,
    uploads: Option<(CounterId, i64)>,
    entities: Option<CounterId>,
}

impl CounterBaselines {
    fn of(capture: &Capture) -> Self {
        let uploads = find_counter(capture, "bytes_uploaded").map(|id| {
            let mut values: Vec<i64> = (0..capture.frame_count())
                .filter(|&r| !capture.frames().paused.get(r).copied().unwrap_or(false))
                .filter_map(|r| capture.counter_in_frame(r, id))
                .map(|e| capture.counter_value(e) as i64)
                .collect();
            (id, median(&mut values).unwrap_or(0))
        });
        Self {
            pipelines: find_counter(capture, "pipelines_created"),
            uploads,
            entities: find_counter(capture, "entities"),
        }
    }
}

fn counter_at(capture: &Capture, row: usize, id: CounterId) -> Option<i64> {
    capture
        .counter_in_frame(row, id)
        .map(|e| capture.counter_value(e) as i64)
}

fn tier(fraction: f64, t: &ClassifyThresholds) -> Option<Confidence> {
    if fraction >= t.explains_high {
        Some(Confidence::High)
    } else if fraction >= t.explains_medium {
        Some(Confidence::Medium)
    } else if fraction >= t.explains_low {
        Some(Confidence::Low)
    } else {
        None
    }
}

fn pct(fraction: f64) -> String {
    format!("{:.0}%", fraction * 100.0)
}

/// Classifies the frame at `row` whose excess over its baseline is `excess_ns`.
fn classify(
    capture: &Capture,
    row: usize,
    excess_ns: u64,
    base: &Baselines,
    counters: &CounterBaselines,
    t: &ClassifyThresholds,
) -> Vec<Guess> {
    let Some(frame) = capture.frames().row(row) else {
        return Vec::new();
    };
    let period_ns = frame.period_ns.unwrap_or(0);
    let work_ns = frame.work_ns();
    let excess = excess_ns.max(1) as f64;
    let mut guesses = Vec::new();
    let mut checked: Vec<String> = Vec::new();
    let guess = |kind, confidence, evidence: String| Guess {
        guess: kind,
        confidence,
        evidence,
        scope: None,
        site: None,
    };

    // pipeline-compile
    let pipelines = counters
        .pipelines
        .and_then(|id| counter_at(capture, row, id));
    match pipelines {
        Some(n) if n > 0 => guesses.push(guess(
            HitchKind::PipelineCompile,
            Confidence::High,
            format!(
                "pipelines_created = {n} in frame {} (period {}, {} over the median)",
                frame.index,
                fmt_ms(period_ns),
                fmt_ms(excess_ns)
            ),
        )),
        Some(n) => checked.push(format!("pipelines_created = {n}")),
        None => checked.push("pipelines_created not recorded".into()),
    }

    // resource-upload
    if let Some((id, median)) = counters.uploads {
        match counter_at(capture, row, id) {
            Some(bytes) => {
                let far = (bytes as f64) >= t.upload_factor * (median.max(0) as f64)
                    && bytes.saturating_sub(median) >= t.upload_min_bytes;
                if far && pipelines.unwrap_or(0) == 0 {
                    let ratio = if median > 0 {
                        format!("{:.1}× its median {median}", bytes as f64 / median as f64)
                    } else {
                        format!("its median is {median}")
                    };
                    let confidence = if pipelines.is_some() {
                        Confidence::Medium
                    } else {
                        Confidence::Low
                    };
                    let pipes = match pipelines {
                        Some(_) => "no pipelines created".to_owned(),
                        None => "pipelines_created not recorded".to_owned(),
                    };
                    guesses.push(guess(
                        HitchKind::ResourceUpload,
                        confidence,
                        format!(
                            "bytes_uploaded = {bytes} in frame {}, {ratio}; {pipes}",
                            frame.index
                        ),
                    ));
                } else {
                    checked.push(format!("bytes_uploaded = {bytes} (median {median})"));
                }
            }
            None => checked.push("bytes_uploaded not recorded in this frame".into()),
        }
    } else {
        checked.push("bytes_uploaded not recorded".into());
    }

    // spawn-burst
    if let Some(id) = counters.entities {
        let now = counter_at(capture, row, id);
        let before = row.checked_sub(1).and_then(|r| counter_at(capture, r, id));
        match (before, now) {
            (Some(b), Some(n)) if n.saturating_sub(b) >= t.spawn_min_rise => {
                let rise = n.saturating_sub(b);
                let confidence = if rise >= t.spawn_min_rise.saturating_mul(10) {
                    Confidence::High
                } else {
                    Confidence::Medium
                };
                guesses.push(guess(
                    HitchKind::SpawnBurst,
                    confidence,
                    format!(
                        "entities rose by {rise} ({b} → {n}) in frame {}; threshold {}",
                        frame.index, t.spawn_min_rise
                    ),
                ));
            }
            (Some(b), Some(n)) => checked.push(format!("entities {b} → {n}")),
            _ => checked.push("entities change unknown".into()),
        }
    } else {
        checked.push("entities not recorded".into());
    }

    // long-cpu-scope: the most specific scope at the best tier reached.
    // (scope, total, delta over median, self time); ascending delta, and among equal
    // deltas the one with more self time first (a child that carries all of its parent's
    // excess is the more specific name).
    let mut deltas: Vec<(ScopeId, u64, u64, u64)> = capture
        .scope_aggs()
        .frame(row)
        .iter()
        .filter_map(|a| {
            let median = base
                .scope_median_ns
                .get(a.id as usize)
                .copied()
                .unwrap_or(0);
            let delta = a.total_ns.checked_sub(median)?;
            Some((a.id, a.total_ns, delta, a.self_ns))
        })
        .collect();
    deltas.sort_by_key(|&(id, _, delta, self_ns)| (delta, std::cmp::Reverse(self_ns), id));
    let pick = [t.explains_high, t.explains_medium]
        .iter()
        .find_map(|&bar| {
            deltas
                .iter()
                .find(|&&(_, _, d, _)| d as f64 >= bar * excess)
                .copied()
        })
        .or_else(|| {
            deltas
                .last()
                .filter(|&&(_, _, d, _)| d as f64 >= t.explains_low * excess)
                .copied()
        });
    match pick {
        Some((id, total, delta, _)) => {
            let fraction = delta as f64 / excess;
            if let (Some(conf), Some(info)) = (tier(fraction, t), capture.scopes().get(id as usize))
            {
                let median = base.scope_median_ns.get(id as usize).copied().unwrap_or(0);
                let site = info.site();
                let at = site
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                let mut g = guess(
                    HitchKind::LongCpuScope,
                    conf,
                    format!(
                        "scope `{}`{at} took {} in frame {} against a median of {}: +{}, {} of the {} excess",
                        info.name,
                        fmt_ms(total),
                        frame.index,
                        fmt_ms(median),
                        fmt_ms(delta),
                        pct(fraction),
                        fmt_ms(excess_ns)
                    ),
                );
                g.scope = Some(info.name.clone());
                g.site = site;
                guesses.push(g);
            }
        }
        None => match deltas
            .last()
            .and_then(|&(id, _, d, _)| Some((capture.scopes().get(id as usize)?, d)))
        {
            Some((info, d)) => checked.push(format!(
                "largest scope change +{} (`{}`), {} of the excess",
                fmt_ms(d),
                info.name,
                pct(d as f64 / excess)
            )),
            None => checked.push("no scope ran above its median".into()),
        },
    }

    // gpu-bound
    match frame.gpu_ns {
        Some(gpu) => {
            let gpu_delta = gpu.saturating_sub(base.gpu_median_ns.unwrap_or(0));
            let fraction = gpu_delta as f64 / excess;
            let dominates = gpu as f64 >= 0.5 * period_ns as f64 && gpu > work_ns;
            if dominates && fraction >= t.explains_low {
                let strong = gpu as f64 >= 0.8 * period_ns as f64
                    && (work_ns as f64) <= 0.5 * period_ns as f64;
                let confidence = match (strong, fraction >= t.explains_medium) {
                    (true, true) => Confidence::High,
                    (_, true) | (true, false) => Confidence::Medium,
                    _ => Confidence::Low,
                };
                guesses.push(guess(
                    HitchKind::GpuBound,
                    confidence,
                    format!(
                        "GPU frame time {} of the {} period while CPU work was {}; GPU median {}, +{} is {} of the excess",
                        fmt_ms(gpu),
                        fmt_ms(period_ns),
                        fmt_ms(work_ns),
                        fmt_ms(base.gpu_median_ns.unwrap_or(0)),
                        fmt_ms(gpu_delta),
                        pct(fraction)
                    ),
                ));
            } else {
                checked.push(format!(
                    "GPU {} against work {}",
                    fmt_ms(gpu),
                    fmt_ms(work_ns)
                ));
            }
        }
        None => checked.push("GPU time unknown".into()),
    }

    // wait-outside-frame
    let gap = period_ns.saturating_sub(work_ns);
    let gap_delta = gap.saturating_sub(base.gap_median_ns);
    let fraction = gap_delta as f64 / excess;
    if period_ns >= work_ns.saturating_mul(2) && fraction >= t.explains_medium {
        let confidence = if fraction >= t.explains_high {
            Confidence::High
        } else {
            Confidence::Medium
        };
        guesses.push(guess(
            HitchKind::WaitOutsideFrame,
            confidence,
            format!(
                "period {} but work only {}: {} between frames against a median of {}, +{} is {} of the excess",
                fmt_ms(period_ns),
                fmt_ms(work_ns),
                fmt_ms(gap),
                fmt_ms(base.gap_median_ns),
                fmt_ms(gap_delta),
                pct(fraction)
            ),
        ));
    } else {
        checked.push(format!(
            "{} between frames (median {})",
            fmt_ms(gap),
            fmt_ms(base.gap_median_ns)
        ));
    }

    if guesses.is_empty() {
        guesses.push(guess(
            HitchKind::UnknownByElimination,
            Confidence::Low,
            format!(
                "no counter or scope explains the {} excess of frame {} (period {}, work {}): {}",
                fmt_ms(excess_ns),
                frame.index,
                fmt_ms(period_ns),
                fmt_ms(work_ns),
                checked.join("; ")
            ),
        ));
    }
    // Best first: by confidence, then in the vocabulary's order (what happened before
    // where the time went).
    guesses.sort_by(|a, b| b.confidence.cmp(&a.confidence).then(a.guess.cmp(&b.guess)));
    guesses
}

/// Finds and classifies every hitch in a capture.
pub fn find_hitches(capture: &Capture, options: &HitchOptions) -> HitchReport {
    let budget_ns = options
        .budget_ns
        .unwrap_or_else(|| capture.frame_budget_ns());
    let judgements = judge_frames(capture, budget_ns);
    let base = Baselines::of(capture);
    let counters = CounterBaselines::of(capture);
    let mut hitches = Vec::new();
    let mut judged = 0u64;
    for (row, j) in judgements.iter().enumerate() {
        let Some(j) = j else { continue };
        judged += 1;
        if !j.hitch {
            continue;
        }
        let Some(frame) = capture.frames().row(row) else {
            continue;
        };
        let baseline = if j.median_ns > 0 {
            j.median_ns
        } else {
            base.period_median_ns
        };
        let excess_ns = j.period_ns.saturating_sub(baseline);
        hitches.push(Hitch {
            frame: frame.index,
            phase: frame
                .phase
                .and_then(|p| capture.phases().get(p as usize).cloned()),
            duration_ms: ms(j.period_ns),
            work_ms: ms(frame.work_ns()),
            gpu_ms: frame.gpu_ns.map(ms),
            threshold_ms: ms(j.threshold_ns),
            median_ms: ms(j.median_ns),
            excess_ms: ms(excess_ns),
            classification: classify(
                capture,
                row,
                excess_ns,
                &base,
                &counters,
                &options.thresholds,
            ),
        });
    }
    HitchReport {
        schema: "framewise.hitches/1".into(),
        rule: RuleInfo {
            rule: "a non-paused frame whose period exceeds max(2 x rolling median, 1.5 x frame budget); the median is over the previous 600 non-paused periods".into(),
            budget_ms: ms(budget_ns),
            window_frames: WINDOW_FRAMES as u64,
        },
        frames_judged: judged,
        grade: capture.grade(),
        hitches,
        defects: capture.defects().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases() {
        assert_eq!(
            HitchKind::parse("shader-compile"),
            Some(HitchKind::PipelineCompile)
        );
        assert_eq!(
            HitchKind::parse("texture-upload"),
            Some(HitchKind::ResourceUpload)
        );
        assert_eq!(
            HitchKind::parse("long-render"),
            Some(HitchKind::LongCpuScope)
        );
        assert_eq!(
            HitchKind::parse("long-script"),
            Some(HitchKind::LongCpuScope)
        );
        assert_eq!(
            HitchKind::parse("gc-or-upload-by-elimination"),
            Some(HitchKind::UnknownByElimination)
        );
        assert_eq!(HitchKind::parse("gc"), None);
        for k in [
            HitchKind::PipelineCompile,
            HitchKind::ResourceUpload,
            HitchKind::SpawnBurst,
            HitchKind::LongCpuScope,
            HitchKind::GpuBound,
            HitchKind::WaitOutsideFrame,
            HitchKind::UnknownByElimination,
        ] {
            assert_eq!(HitchKind::parse(k.name()), Some(k));
            assert_eq!(
                serde_json::to_value(k)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned)),
                Some(k.name().to_owned())
            );
        }
    }

    #[test]
    fn upload_baseline_of_extreme_counter_values_does_not_overflow() {
        use crate::build::{CaptureBuilder, FrameInput};
        use crate::model::{CounterKind, Numeric, SourceKind};
        let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
        let id = b.counter("bytes_uploaded", CounterKind::Sum, Numeric::Integer);
        let mut f = FrameInput::default();
        for (index, raw) in [(0u64, i64::MIN), (1, i64::MAX)] {
            f.clear();
            f.index = index;
            f.cpu_begin_ns = index * 10;
            f.cpu_end_ns = index * 10 + 5;
            f.counters.push((id, raw));
            b.push_frame(&f);
        }
        let capture = b.finish();
        let baselines = CounterBaselines::of(&capture);
        assert_eq!(baselines.uploads, Some((id, -1)));
    }

    #[test]
    fn snake_case() {
        assert_eq!(snake("pipelinesCreated"), "pipelines_created");
        assert_eq!(snake("bytes_uploaded"), "bytes_uploaded");
    }
}
