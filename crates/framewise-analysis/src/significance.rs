//! A diff read for a person: the rows ranked by how much their change matters, with the rows
//! whose change is only an artefact of two runs of different lengths told apart.
//!
//! [`rank`] takes a [`Diff`] and the two summaries it came from. A row's **significance** is
//! its |Δ| against the metric's own spread where the summaries know one — a time statistic of
//! the frame, work, scope or pass block against that block's p95 − p50 (pooled over the two
//! sides), a counter statistic against its p99 − p01 — else its |%| / 100 (so one spread
//! ranks like a 100% change). Rows are ordered: judged changes by significance (a change
//! with no measure, such as one from 0 without a spread, last among them), then changes
//! that are not judged (timings of incomparable regimes, run-length artefacts), then rows
//! one side lacks, then unchanged rows.
//!
//! **Run length.** Totals over a run (`*.count`, `*.calls`, `scope.*.total`, `scope.*.self`,
//! `counter.*.sum`, and the same for passes) grow with the number of frames. When the two
//! runs judged different numbers of frames, such a row is judged per frame instead: its
//! `per_frame_pct` is the change of its value per frame judged; within ±1% the row is a
//! run-length artefact (`change` is `same`, never coloured), else its change is the per-frame
//! one. [`HEADLINE`] names the metrics a comparison opens with.

use serde::{Deserialize, Serialize};

use crate::diff::{Change, Diff, DiffRow};
use crate::summary::{Direction, MetricTable, MetricUnit, Summary};

/// The metrics a comparison leads with (those both captures have).
pub const HEADLINE: [&str; 7] = [
    "frame.avg",
    "frame.p50",
    "frame.p99",
    "frame.low_1pct_fps",
    "frame.jank_ratio",
    "work.avg",
    "frame.count",
];

/// Per-frame changes this small (in %) of a run-length total are the run length's doing.
pub const RUN_LENGTH_TOLERANCE_PCT: f64 = 1.0;

/// What a row's significance was measured against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// |Δ| / spread.
    Spread,
    /// |%| / 100.
    Percent,
    /// |%| / 100 of the value per frame judged (a run-length total of runs of different
    /// lengths).
    PerFrame,
    /// Not ranked (unchanged, one-sided, a change from 0, or not judged).
    None,
}

/// One row of a diff, ranked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankedRow {
    /// The diff's row (its `change` as judged here: see [`rank`]).
    #[serde(flatten)]
    pub row: DiffRow,
    /// The metric's unit: `ms`, `fps`, `ratio`, `frames`, `calls`, `count`.
    pub unit: String,
    /// How much the change matters (see the module's documentation); `None` when not ranked.
    pub significance: Option<f64>,
    /// What it was measured against.
    pub basis: Basis,
    /// The spread used, in the metric's unit, when the basis is the spread.
    pub spread: Option<f64>,
    /// For a run-length total of runs of different lengths: the change of its value per
    /// frame judged, %.
    pub per_frame_pct: Option<f64>,
    /// Why the row's change is not coloured though its values differ: a run-length
    /// artefact, or timings of different regimes.
    pub not_judged: Option<String>,
    /// Whether the row's change is a judged one (better or worse): the one to colour.
    pub coloured: bool,
}

/// Whether a path is a total over the run (it grows with the number of frames).
pub fn scales_with_run_length(path: &str) -> bool {
    let stat = path.rsplit('.').next().unwrap_or("");
    let block = path.split('.').next().unwrap_or("");
    match block {
        "frame" | "work" => stat == "count",
        "scope" | "pass" => matches!(stat, "count" | "calls" | "total" | "self"),
        "counter" => matches!(stat, "count" | "sum"),
        _ => false,
    }
}

fn is_timing(path: &str) -> bool {
    matches!(
        path.split('.').next(),
        Some("frame" | "work" | "scope" | "pass")
    ) && MetricUnit::of(path) == MetricUnit::Ms
}

/// The block a path's statistic belongs to: `frame`, `work`, `scope.NAME`, `counter.NAME`.
fn block_of(path: &str) -> Option<&str> {
    path.rfind('.').map(|i| &path[..i])
}

/// The spread of `path`'s block in one table, where one is known and positive.
fn spread_in(table: &MetricTable, path: &str) -> Option<f64> {
    let block = block_of(path)?;
    let (hi, lo) = if path.starts_with("counter.") {
        if !matches!(
            path.rsplit('.').next(),
            Some("avg" | "min" | "max" | "p01" | "p99" | "last")
        ) {
            return None;
        }
        ("p99", "p01")
    } else if MetricUnit::of(path) == MetricUnit::Ms && !scales_with_run_length(path) {
        ("p95", "p50")
    } else {
        return None;
    };
    let s = table.get(&format!("{block}.{hi}"))? - table.get(&format!("{block}.{lo}"))?;
    (s.is_finite() && s > 0.0).then_some(s)
}

/// Frames a summary judged (paused frames excluded).
fn judged(summary: &Summary) -> u64 {
    summary
        .capture
        .frames
        .saturating_sub(summary.capture.frames_paused)
}

/// Ranks `diff`'s rows (made from `base` and `cand`), most significant first.
pub fn rank(diff: &Diff, base: &Summary, cand: &Summary) -> Vec<RankedRow> {
    let (bt, ct) = (MetricTable::of(base), MetricTable::of(cand));
    let (lb, lc) = (judged(base), judged(cand));
    let mut rows: Vec<RankedRow> = diff
        .rows
        .iter()
        .map(|r| judge(r, (&bt, &ct), (lb, lc), diff))
        .collect();
    rows.sort_by(|a, b| {
        group(a)
            .cmp(&group(b))
            .then_with(|| {
                let s = |r: &RankedRow| r.significance.unwrap_or(0.0);
                s(b).total_cmp(&s(a))
            })
            .then_with(|| a.row.metric.cmp(&b.row.metric))
    });
    rows
}

/// Changed and judged, changed but not judged, one-sided, unchanged.
fn group(r: &RankedRow) -> u8 {
    match r.row.change {
        Change::Better | Change::Worse if r.coloured => 0,
        Change::OnlyBase | Change::OnlyCandidate => 2,
        _ if r.row.delta.is_some_and(|d| d != 0.0) => 1,
        _ => 3,
    }
}

fn judge(
    r: &DiffRow,
    (bt, ct): (&MetricTable, &MetricTable),
    (lb, lc): (u64, u64),
    diff: &Diff,
) -> RankedRow {
    let mut row = r.clone();
    let mut out = RankedRow {
        unit: MetricUnit::of(&r.metric).name().to_owned(),
        significance: None,
        basis: Basis::None,
        spread: None,
        per_frame_pct: None,
        not_judged: None,
        coloured: false,
        row: r.clone(),
    };
    let (Some(b), Some(c), Some(d)) = (r.base, r.cand, r.delta) else {
        return out;
    };
    if is_timing(&r.metric) && !diff.timing_comparable {
        out.not_judged = Some("timings of different timing regimes do not compare".into());
        out.row.change = Change::Same;
        return out;
    }
    if !diff.row_comparable(r) {
        out.not_judged = Some(
            "frame times of different kinds (a .litecap's are work times, the other's periods) do not compare; work.* does"
                .into(),
        );
        out.row.change = Change::Same;
        return out;
    }
    if scales_with_run_length(&r.metric) && lb != lc && (lb == 0 || lc == 0) {
        // A side with no frame judged has no per-frame value: its total of 0 is no change.
        let side = if lb == 0 { "the base" } else { "the candidate" };
        out.row.change = Change::Same;
        out.not_judged = Some(format!(
            "a total over the run, and {side} judged no frame: there is nothing per frame to compare"
        ));
        return out;
    }
    if scales_with_run_length(&r.metric) && lb != lc {
        let (rb, rc) = (b / lb as f64, c / lc as f64);
        let pct = (rb != 0.0).then(|| 100.0 * (rc - rb) / rb.abs());
        out.per_frame_pct = pct;
        match pct {
            Some(p) if p.abs() >= RUN_LENGTH_TOLERANCE_PCT => {
                let better = (p < 0.0) == (r.direction == Direction::LowerIsBetter);
                row.change = if better {
                    Change::Better
                } else {
                    Change::Worse
                };
                out.significance = Some(p.abs() / 100.0);
                out.basis = Basis::PerFrame;
                out.coloured = true;
            }
            _ => {
                row.change = Change::Same;
                out.not_judged = Some(format!(
                    "a total over the run: the runs judged {lb} and {lc} frames, and per frame it is within {RUN_LENGTH_TOLERANCE_PCT}%"
                ));
            }
        }
        out.row = row;
        return out;
    }
    if d == 0.0 {
        return out;
    }
    let spread = match (spread_in(bt, &r.metric), spread_in(ct, &r.metric)) {
        (Some(x), Some(y)) => Some(((x * x + y * y) / 2.0).sqrt()),
        (x, y) => x.or(y),
    };
    if let Some(s) = spread {
        out.significance = Some(d.abs() / s);
        out.basis = Basis::Spread;
        out.spread = Some(s);
    } else if let Some(p) = r.pct {
        out.significance = Some(p.abs() / 100.0);
        out.basis = Basis::Percent;
    }
    out.coloured = matches!(r.change, Change::Better | Change::Worse);
    out
}

#[cfg(test)]
mod tests;
