//! `framewise diff`: per metric path, base, candidate, delta and percent change.

use serde::{Deserialize, Serialize};

use crate::model::{Defect, DefectKind, Grade, SourceKind};
use crate::summary::{direction, Direction, MetricTable, Summary};

/// Which input of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The base (before).
    Base,
    /// The candidate (after).
    Cand,
}

/// A defect of one input of a comparison: the defect's own fields and the side it is on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideDefect {
    /// Which input.
    pub side: Side,
    /// The defect.
    #[serde(flatten)]
    pub defect: Defect,
}

/// Both inputs' defects, the base's first.
pub fn side_defects(base: &Summary, cand: &Summary) -> Vec<SideDefect> {
    let tag = |side: Side, defects: &[Defect]| {
        defects
            .iter()
            .map(move |d| SideDefect {
                side,
                defect: d.clone(),
            })
            .collect::<Vec<_>>()
    };
    let mut out = tag(Side::Base, &base.defects);
    out.extend(tag(Side::Cand, &cand.defects));
    out
}

/// Whether a defect of this kind means frames the capture held were lost: whole frames
/// dropped, a file that ends inside a record, bytes skipped as corrupt, or a writer that
/// never closed the file (whatever it had not flushed is gone). Statistics over what is
/// left describe a different run, so a comparison that involves such a capture cannot
/// decide anything on its own (`--allow-damaged` overrides).
pub fn loses_frames(kind: DefectKind) -> bool {
    matches!(
        kind,
        DefectKind::DroppedFrames
            | DefectKind::TruncatedTail
            | DefectKind::CorruptRange
            | DefectKind::Unclosed
    )
}

/// The defects of either side that lost frames (see [`loses_frames`]).
pub fn frame_losing_defects(defects: &[SideDefect]) -> Vec<&SideDefect> {
    defects
        .iter()
        .filter(|d| loses_frames(d.defect.kind))
        .collect()
}

/// Why a comparison is inconclusive because an input lost frames, in one line naming the
/// defects (`the candidate lost frames (truncated-tail: …); --allow-damaged compares what is
/// left`), or `None` when neither side lost any.
pub fn damage_reason(defects: &[SideDefect]) -> Option<String> {
    let lost = frame_losing_defects(defects);
    if lost.is_empty() {
        return None;
    }
    let side_name = |side: Side| match side {
        Side::Base => "the base",
        Side::Cand => "the candidate",
    };
    let mut sides: Vec<&str> = Vec::new();
    for d in &lost {
        let name = side_name(d.side);
        if !sides.contains(&name) {
            sides.push(name);
        }
    }
    let named: Vec<String> = lost
        .iter()
        .map(|d| {
            let side = match d.side {
                Side::Base => "base",
                Side::Cand => "candidate",
            };
            let kind = match serde_json::to_value(d.defect.kind) {
                Ok(serde_json::Value::String(s)) => s,
                _ => format!("{:?}", d.defect.kind),
            };
            // `truncated tail: …` already says its kind.
            if d.defect.message.starts_with(&kind.replace('-', " ")) {
                format!("{side} {}", d.defect.message)
            } else {
                format!("{side} {kind}: {}", d.defect.message)
            }
        })
        .collect();
    let (whose, runs) = if sides.len() > 1 {
        ("their", "runs")
    } else {
        ("its", "a run")
    };
    Some(format!(
        "{} lost frames, so {whose} statistics describe part of {runs} ({}); --allow-damaged compares what is left",
        sides.join(" and "),
        named.join("; ")
    ))
}

/// How a metric moved, given its direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Moved the good way.
    Better,
    /// Moved the bad way.
    Worse,
    /// Equal.
    Same,
    /// Only the base has it.
    OnlyBase,
    /// Only the candidate has it.
    OnlyCandidate,
}

/// One row of a diff.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffRow {
    /// Metric path.
    pub metric: String,
    /// Base value.
    pub base: Option<f64>,
    /// Candidate value.
    pub cand: Option<f64>,
    /// `cand − base`.
    pub delta: Option<f64>,
    /// `100 × delta / |base|`; null when the base is 0 or absent, or the ratio overflows.
    pub pct: Option<f64>,
    /// Which way is better.
    pub direction: Direction,
    /// How it moved.
    pub change: Change,
}

/// `diff --format json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    /// `framewise.diff/1`.
    pub schema: String,
    /// Base grade.
    pub base_grade: Grade,
    /// Candidate grade.
    pub cand_grade: Grade,
    /// Whether timings compare (same timing regime). When false, timing rows are shown but
    /// must not be read as a change; counters compare anywhere.
    pub timing_comparable: bool,
    /// Whether the sides' frame times are of one kind. False between a `.litecap` (whose
    /// frame time is a work time, also taken as the period) and a capture of periods: the
    /// `frame.*` rows are shown but must not be read as a change; `work.*` compares work
    /// times on both.
    pub frame_times_comparable: bool,
    /// Every metric either side has, in path order.
    pub rows: Vec<DiffRow>,
    /// What was wrong with either capture, each defect tagged with its side.
    pub defects: Vec<SideDefect>,
}

/// Compares one value pair.
pub fn compare(metric: &str, base: Option<f64>, cand: Option<f64>) -> DiffRow {
    let dir = direction(metric);
    let (delta, pct, change) = match (base, cand) {
        (Some(b), Some(c)) => {
            let d = c - b;
            let pct = (b != 0.0)
                .then(|| 100.0 * d / b.abs())
                .filter(|p| p.is_finite());
            let change = if d == 0.0 {
                Change::Same
            } else if (d < 0.0) == (dir == Direction::LowerIsBetter) {
                Change::Better
            } else {
                Change::Worse
            };
            (Some(d), pct, change)
        }
        (Some(_), None) => (None, None, Change::OnlyBase),
        (None, Some(_)) => (None, None, Change::OnlyCandidate),
        (None, None) => (None, None, Change::Same),
    };
    DiffRow {
        metric: metric.to_owned(),
        base,
        cand,
        delta,
        pct,
        direction: dir,
        change,
    }
}

/// Whether a summary's `frame.*` statistics are over work times rather than periods (begin to
/// next begin): a `.litecap`'s, whose frame time is a work time also taken as the period.
pub fn frame_times_are_work(s: &Summary) -> bool {
    s.capture.source == SourceKind::Litecap
}

/// Whether the two sides' `frame.*` statistics are of one kind (see [`frame_times_are_work`]).
pub fn frame_times_comparable(base: &Summary, cand: &Summary) -> bool {
    frame_times_are_work(base) == frame_times_are_work(cand)
}

/// What a row of a comparison is: a timing under timing regimes that differ, or a `frame.*`
/// statistic of frame times that differ in kind, is shown but is no change.
pub fn row_comparable(metric: &str, timing_comparable: bool, frame_times_comparable: bool) -> bool {
    let timing = !metric.starts_with("counter.");
    let frame = metric.starts_with("frame.");
    (timing_comparable || !timing) && (frame_times_comparable || !frame)
}

impl Diff {
    /// Whether `row`'s change may be read as one (see [`row_comparable`]).
    pub fn row_comparable(&self, row: &DiffRow) -> bool {
        row_comparable(
            &row.metric,
            self.timing_comparable,
            self.frame_times_comparable,
        )
    }
}

/// Diffs two summaries over the union of their metric paths.
pub fn diff(base: &Summary, cand: &Summary) -> Diff {
    let b = MetricTable::of(base);
    let c = MetricTable::of(cand);
    let mut paths: Vec<&String> = b.values.keys().chain(c.values.keys()).collect();
    paths.sort();
    paths.dedup();
    let rows = paths
        .into_iter()
        .map(|p| compare(p, b.get(p), c.get(p)))
        .collect();
    Diff {
        schema: "framewise.diff/1".into(),
        base_grade: base.grade,
        cand_grade: cand.grade,
        timing_comparable: base.grade.timing_comparable(&cand.grade),
        frame_times_comparable: frame_times_comparable(base, cand),
        rows,
        defects: side_defects(base, cand),
    }
}

/// What a diff's exit code says, with why in words when it is not a plain `pass` (diffed):
/// `inconclusive` when an input lost frames (unless `allow_damaged`) or has no frame with a
/// known period; `incomparable` when timings of different regimes, or frame times of
/// different kinds, are compared; `pass` otherwise. A diff reports; this is what its exit
/// code is made of, never a judgement of the changes.
pub fn diff_verdict(
    diff: &Diff,
    base: &Summary,
    cand: &Summary,
    allow_damaged: bool,
) -> (crate::gate::Verdict, Option<String>) {
    use crate::gate::Verdict;
    let serde_name = |v: &crate::model::TimingGrade| match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => format!("{v:?}"),
    };
    if let Some(damage) = damage_reason(&diff.defects).filter(|_| !allow_damaged) {
        (
            Verdict::Inconclusive,
            Some(format!("inconclusive: {damage}")),
        )
    } else if base.is_empty() || cand.is_empty() {
        (
            Verdict::Inconclusive,
            Some("inconclusive: a capture has no frame with a known period".to_owned()),
        )
    } else if !diff.timing_comparable {
        (
            Verdict::Incomparable,
            Some(format!(
                "incomparable timing: base timing is {}, candidate timing is {}; only counters compare",
                serde_name(&diff.base_grade.timing),
                serde_name(&diff.cand_grade.timing)
            )),
        )
    } else if !diff.frame_times_comparable {
        let kind = |s: &Summary| {
            if frame_times_are_work(s) {
                "work times (a .litecap's frame time is also its period)"
            } else {
                "periods (begin to next begin)"
            }
        };
        (
            Verdict::Incomparable,
            Some(format!(
                "incomparable frame times: base's are {}, the candidate's are {}; frame.* rows are not a change, work.* compares work times on both",
                kind(base),
                kind(cand)
            )),
        )
    } else {
        (Verdict::Pass, None)
    }
}

/// One input of a comparison as `diff` and `gate` JSON show it (`inputs.base`,
/// `inputs.cand`): `file` is the path as the user gave it. Its defects are in the
/// result's own `defects`, tagged by side.
#[derive(Debug, Clone, Serialize)]
pub struct InputDoc<'a> {
    /// The path as the user gave it.
    pub file: &'a str,
    /// What the file was (`sgpt`, `litecap`, `chrome-trace`, ...).
    pub source: &'a SourceKind,
    /// Frames the capture holds.
    pub frames: u64,
    /// Frames with a measured period (the last frame of a capture has none).
    pub frames_with_period: u64,
    /// What the capture's timing and counters can be trusted for.
    pub grade: &'a Grade,
    /// Notes on how the capture was read.
    pub notes: &'a [String],
}

impl<'a> InputDoc<'a> {
    /// The document of `summary`, read from `file`.
    pub fn new(file: &'a str, summary: &'a Summary) -> Self {
        Self {
            file,
            source: &summary.capture.source,
            frames: summary.capture.frames,
            frames_with_period: summary.frame.times.count,
            grade: &summary.grade,
            notes: &summary.notes,
        }
    }
}

/// Both inputs of a comparison: the `inputs` block of `diff` and `gate` JSON.
#[derive(Debug, Clone, Serialize)]
pub struct InputsDoc<'a> {
    /// The baseline.
    pub base: InputDoc<'a>,
    /// The candidate.
    pub cand: InputDoc<'a>,
}

impl<'a> InputsDoc<'a> {
    /// The block for `base` and `cand`, each `(file, summary)`.
    pub fn new(base: (&'a str, &'a Summary), cand: (&'a str, &'a Summary)) -> Self {
        Self {
            base: InputDoc::new(base.0, base.1),
            cand: InputDoc::new(cand.0, cand.1),
        }
    }
}

/// `framewise diff BASE CAND --format json`: the diff's own members, `inputs`, and what its
/// exit code says.
#[derive(Debug, Clone, Serialize)]
pub struct DiffDoc<'a> {
    /// The diff.
    #[serde(flatten)]
    pub diff: &'a Diff,
    /// What was compared.
    pub inputs: InputsDoc<'a>,
    /// `pass` (diffed), `inconclusive` or `incomparable` ([`diff_verdict`]).
    pub verdict: crate::gate::Verdict,
    /// The exit code that verdict gives.
    pub exit_code: i32,
    /// Why it is inconclusive or incomparable, in words; null when diffed.
    pub status: Option<String>,
}

/// `framewise diff BASE CAND --format json`: the diff with both inputs and its verdict
/// ([`diff_verdict`], `allow_damaged` as given), so that every surface (the CLI, the
/// inspector's `/api/diff`) prints the same document. Members are in name order, as every
/// JSON document of the CLI.
pub fn diff_json(
    diff: &Diff,
    base: (&str, &Summary),
    cand: (&str, &Summary),
    allow_damaged: bool,
) -> Result<serde_json::Value, serde_json::Error> {
    let (verdict, status) = diff_verdict(diff, base.1, cand.1, allow_damaged);
    serde_json::to_value(DiffDoc {
        diff,
        inputs: InputsDoc::new(base, cand),
        verdict,
        exit_code: verdict.exit_code(),
        status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_aware_changes() {
        let r = compare("frame.p99", Some(10.0), Some(12.0));
        assert_eq!(r.change, Change::Worse);
        assert_eq!(r.delta, Some(2.0));
        assert_eq!(r.pct, Some(20.0));
        let r = compare("frame.fps", Some(60.0), Some(50.0));
        assert_eq!(r.change, Change::Worse);
        let r = compare("frame.fps", Some(50.0), Some(60.0));
        assert_eq!(r.change, Change::Better);
        let r = compare("counter.draw_calls.max", Some(0.0), Some(3.0));
        assert_eq!((r.change, r.pct), (Change::Worse, None));
        assert_eq!(compare("x.y", Some(1.0), None).change, Change::OnlyBase);
        // A base so near 0 that the percentage overflows has none, not `inf%`.
        let r = compare("frame.p50", Some(f64::MIN_POSITIVE / 1e10), Some(20.0));
        assert_eq!((r.change, r.pct), (Change::Worse, None));
    }

    #[test]
    fn only_defects_that_lose_frames_make_a_comparison_inconclusive() {
        let tagged = |side, kind| SideDefect {
            side,
            defect: Defect::new(kind, 1, "it happened"),
        };
        assert_eq!(
            damage_reason(&[
                tagged(Side::Base, DefectKind::DroppedSpans),
                tagged(Side::Cand, DefectKind::DirectoryUnusable),
            ]),
            None
        );
        let reason = damage_reason(&[
            tagged(Side::Base, DefectKind::DroppedSpans),
            tagged(Side::Cand, DefectKind::TruncatedTail),
        ])
        .expect("a truncated candidate lost frames");
        assert!(
            reason.starts_with("the candidate lost frames")
                && reason.contains("candidate truncated-tail: it happened")
                && !reason.contains("dropped-spans"),
            "{reason}"
        );
        for kind in [
            DefectKind::DroppedFrames,
            DefectKind::CorruptRange,
            DefectKind::Unclosed,
        ] {
            assert!(loses_frames(kind), "{kind:?}");
        }
    }
}
