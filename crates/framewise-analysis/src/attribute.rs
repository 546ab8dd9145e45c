//! Attribution: scopes ranked, with their call sites, by contribution to one frame's excess
//! or to the p95 excess over the median. A ranking, not an accounting: scopes nest and
//! threads overlap, so contributions do not add up to the excess, and the output says so
//! (`sums_to_total: false`).

use serde::{Deserialize, Serialize};

use framewise_detect::median::median_with_zeros;

use crate::hitch::{judge_frames, Baselines};
use crate::model::{Capture, Defect};
use crate::stats::{percentile, AsF64, NS_PER_MS, P95};

/// What to attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttributeTarget {
    /// One frame, by index: its period's excess over the rolling median.
    Frame(u64),
    /// The frames at or above the p95 period: their mean excess over the median period.
    P95Excess,
}

/// Why attribution could not run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttributeError {
    /// The capture has no frame with this index (a usage error, not an inconclusive
    /// result: see [`AttributeError::is_inconclusive`]).
    #[error("no frame with index {index} in the capture ({frames} frames)")]
    NoSuchFrame {
        /// The index asked for.
        index: u64,
        /// Frames in the capture.
        frames: u64,
    },
    /// The file listed a frame with this index but its record does not read: it was lost
    /// to damage, and the capture's defects name it.
    #[error("frame {index} was lost to damage, so it cannot be ranked: {defect}")]
    FrameLost {
        /// The index asked for.
        index: u64,
        /// The defect that names it.
        defect: String,
    },
    /// The frame has no period (the last frame, or the next one was lost) or is paused.
    #[error("frame {index} has no usable period (paused, last, or followed by a gap)")]
    NoPeriod {
        /// The frame index.
        index: u64,
    },
    /// Too few frames with a period for a p95.
    #[error("p95 needs at least {needed} non-paused frames with a period, the capture has {have}")]
    TooFewFrames {
        /// Frames needed.
        needed: u64,
        /// Frames available.
        have: u64,
    },
}

impl AttributeError {
    /// Whether the target exists but the evidence cannot support a ranking (no usable
    /// period, too few frames): an inconclusive result, reported with
    /// [`InconclusiveAttribution`], rather than an error in how attribution was asked for.
    pub fn is_inconclusive(&self) -> bool {
        matches!(self, Self::NoPeriod { .. } | Self::TooFewFrames { .. })
    }
}

/// The schema name of an attribution, ranked or inconclusive.
pub const ATTRIBUTION_SCHEMA: &str = "framewise.attribution/1";

/// One scope's contribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Contribution {
    /// Scope name.
    pub scope: String,
    /// Call site `file:line`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// Its time in the target (the frame, or the mean over the p95 frames), ms.
    pub value_ms: f64,
    /// Its median per-frame total over the capture (0 where it did not run), ms.
    pub baseline_ms: f64,
    /// `value_ms − baseline_ms`.
    pub contribution_ms: f64,
    /// `contribution_ms / excess_ms`.
    pub share_of_excess: f64,
}

/// `attribute --format json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    /// `framewise.attribution/1`.
    pub schema: String,
    /// `frame` or `p95-excess`.
    pub target: String,
    /// The frame, for a frame target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<u64>,
    /// Always false here; an [`InconclusiveAttribution`] says true.
    pub inconclusive: bool,
    /// Frames averaged, for a p95 target (1 for a frame target).
    pub frames: u64,
    /// The target's period (the frame's, or the mean over the p95 frames), ms.
    pub period_ms: f64,
    /// What the excess is measured against (rolling median, or the median period), ms.
    pub baseline_ms: f64,
    /// `period_ms − baseline_ms`.
    pub excess_ms: f64,
    /// Scopes with a positive contribution, largest first.
    pub ranking: Vec<Contribution>,
    /// Always false: contributions overlap (nesting, threads) and do not add up.
    pub sums_to_total: bool,
    /// The same in words.
    pub note: String,
    /// What was wrong with the capture (lost frames shift medians and percentiles).
    pub defects: Vec<Defect>,
}

/// `attribute --format json` when the target exists but cannot be attributed (exit 2):
/// the same schema, `inconclusive: true`, the reason, and an empty ranking.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InconclusiveAttribution {
    /// `framewise.attribution/1`.
    pub schema: String,
    /// `frame` or `p95-excess`.
    pub target: String,
    /// The frame, for a frame target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<u64>,
    /// Always true.
    pub inconclusive: bool,
    /// Why, in a sentence with the numbers.
    pub reason: String,
    /// Always empty.
    pub ranking: Vec<Contribution>,
    /// Always false.
    pub sums_to_total: bool,
    /// What was wrong with the capture.
    pub defects: Vec<Defect>,
}

impl InconclusiveAttribution {
    /// The inconclusive result for `target` in `capture`, for the reason `error` gives.
    pub fn new(capture: &Capture, target: AttributeTarget, error: &AttributeError) -> Self {
        Self {
            schema: ATTRIBUTION_SCHEMA.into(),
            target: target_name(target).into(),
            frame: target_frame(target),
            inconclusive: true,
            reason: error.to_string(),
            ranking: Vec::new(),
            sums_to_total: false,
            defects: capture.defects().to_vec(),
        }
    }
}

fn target_name(target: AttributeTarget) -> &'static str {
    match target {
        AttributeTarget::Frame(_) => "frame",
        AttributeTarget::P95Excess => "p95-excess",
    }
}

fn target_frame(target: AttributeTarget) -> Option<u64> {
    match target {
        AttributeTarget::Frame(index) => Some(index),
        AttributeTarget::P95Excess => None,
    }
}

fn ms(ns: f64) -> f64 {
    ns / NS_PER_MS
}

/// Ranks scopes by contribution to `target`.
pub fn attribute(
    capture: &Capture,
    target: AttributeTarget,
) -> Result<Attribution, AttributeError> {
    let base = Baselines::of(capture);
    let scopes = capture.scopes().len();
    // Per scope: its value in the target (ns, f64 for the p95 mean).
    let mut value_ns = vec![0f64; scopes];
    let (frame, frames, period_ns, baseline_ns) = match target {
        AttributeTarget::Frame(index) => {
            let row = capture.row_of_index(index).ok_or_else(|| {
                match capture.defects().iter().find(|d| d.frame == Some(index)) {
                    Some(d) => AttributeError::FrameLost {
                        index,
                        defect: d.message.clone(),
                    },
                    None => AttributeError::NoSuchFrame {
                        index,
                        frames: capture.frame_count() as u64,
                    },
                }
            })?;
            let judgements = judge_frames(capture, capture.frame_budget_ns());
            let j = judgements
                .get(row)
                .copied()
                .flatten()
                .ok_or(AttributeError::NoPeriod { index })?;
            for a in capture.scope_aggs().frame(row) {
                if let Some(v) = value_ns.get_mut(a.id as usize) {
                    *v += a.total_ns as f64;
                }
            }
            let baseline = if j.median_ns > 0 {
                j.median_ns
            } else {
                base.period_median_ns
            };
            (Some(index), 1u64, j.period_ns as f64, baseline as f64)
        }
        AttributeTarget::P95Excess => {
            let mut periods: Vec<u64> = capture
                .frames()
                .rows()
                .filter(|r| !r.paused)
                .filter_map(|r| r.period_ns)
                .collect();
            periods.sort_unstable();
            let sorted: Vec<AsF64> = periods.iter().map(|&p| AsF64(p as f64)).collect();
            let p95 = percentile(&sorted, P95).map_err(|_| AttributeError::TooFewFrames {
                needed: P95.required_count(),
                have: periods.len() as u64,
            })?;
            let mut chosen = 0u64;
            let mut period_sum = 0f64;
            for (row, r) in capture.frames().rows().enumerate() {
                let Some(p) = r.period_ns else { continue };
                if r.paused || (p as f64) < p95 {
                    continue;
                }
                chosen += 1;
                period_sum += p as f64;
                for a in capture.scope_aggs().frame(row) {
                    if let Some(v) = value_ns.get_mut(a.id as usize) {
                        *v += a.total_ns as f64;
                    }
                }
            }
            let n = chosen.max(1) as f64;
            for v in &mut value_ns {
                *v /= n;
            }
            let median = median_with_zeros(&mut periods, 0) as f64;
            (None, chosen, period_sum / n, median)
        }
    };
    let excess_ns = (period_ns - baseline_ns).max(0.0);
    let mut ranking: Vec<Contribution> = capture
        .scopes()
        .iter()
        .enumerate()
        .filter_map(|(id, info)| {
            let value = value_ns.get(id).copied().unwrap_or(0.0);
            let median = base.scope_median_ns.get(id).copied().unwrap_or(0) as f64;
            let contribution = value - median;
            (contribution > 0.0).then(|| Contribution {
                scope: info.name.clone(),
                site: info.site(),
                value_ms: ms(value),
                baseline_ms: ms(median),
                contribution_ms: ms(contribution),
                share_of_excess: if excess_ns > 0.0 {
                    contribution / excess_ns
                } else {
                    0.0
                },
            })
        })
        .collect();
    ranking.sort_by(|a, b| {
        b.contribution_ms
            .total_cmp(&a.contribution_ms)
            .then_with(|| a.scope.cmp(&b.scope))
    });
    Ok(Attribution {
        schema: ATTRIBUTION_SCHEMA.into(),
        target: target_name(target).into(),
        frame,
        inconclusive: false,
        frames,
        period_ms: ms(period_ns),
        baseline_ms: ms(baseline_ns),
        excess_ms: ms(excess_ns),
        ranking,
        sums_to_total: false,
        note: "a ranking, not an accounting: scopes nest and threads overlap, so contributions do not add up to the excess".into(),
        defects: capture.defects().to_vec(),
    })
}
