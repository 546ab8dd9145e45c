//! `framewise diff`: per metric path, base, candidate, delta and percent change.

use serde::{Deserialize, Serialize};

use crate::model::{Capture, Defect, DefectKind, Grade, SourceKind};
use crate::summary::{direction, summarize_with, Direction, MetricTable, Summary, SummaryOptions};

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

/// Two captures of a comparison summarized against one frame budget ([`summarize_pair`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SummarizedPair {
    /// The base's summary.
    pub base: Summary,
    /// The candidate's summary.
    pub cand: Summary,
    /// When no budget was configured and the candidate declares another budget than the
    /// base's: which budget both were judged against, and what each declares (the
    /// candidate's `notes` end with the same sentence).
    pub budget_note: Option<String>,
}

/// A frame budget in ms as written in a note: at most six decimals, without trailing zeros
/// (`16.67`, `16.666667`, `33`), so that two budgets that differ never read alike.
fn budget_text(ns: u64) -> String {
    let text = format!("{:.6}", ns as f64 / 1_000_000.0);
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// What a capture declares as its frame budget, for a note.
fn declared_budget(capture: &Capture) -> String {
    match capture.meta().frame_budget_ns {
        Some(ns) => format!("{} ms", budget_text(ns)),
        None => format!(
            "none ({} ms, 60 Hz, assumed)",
            budget_text(crate::hitch_rule::DEFAULT_BUDGET_NS)
        ),
    }
}

/// Summarizes both captures of a comparison against one frame budget, so that the metrics
/// judged against the budget (`frame.jank_ratio`, `frame.spike_ratio`, `work.jank_ratio`,
/// `work.spike_ratio`) compare the frames, never the budgets: `configured_ns`
/// (`framewise.toml`'s `[budgets] frame_ms`) when given, else the base's (the budget it
/// declares, else 60 Hz). Each summary's `budget_ms` says the one used. When nothing is
/// configured and the candidate declares another budget than the base's, the pair's
/// `budget_note` says so, naming both.
///
/// ```
/// use framewise_analysis::diff::summarize_pair;
/// use framewise_analysis::{CaptureBuilder, SourceKind};
///
/// let base = CaptureBuilder::new(SourceKind::Synthetic, false).finish();
/// let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
/// b.meta_mut().frame_budget_ns = Some(33_333_333);
/// let cand = b.finish();
/// let pair = summarize_pair(&base, &cand, None);
/// assert_eq!(pair.cand.budget_ms, pair.base.budget_ms);
/// assert!(pair.budget_note.is_some_and(|n| n.contains("33.333333 ms")));
/// let pair = summarize_pair(&base, &cand, Some(8_000_000));
/// assert_eq!((pair.base.budget_ms, pair.cand.budget_ms), (8.0, 8.0));
/// assert_eq!(pair.budget_note, None);
/// ```
pub fn summarize_pair(
    base: &Capture,
    cand: &Capture,
    configured_ns: Option<u64>,
) -> SummarizedPair {
    let budget_ns = configured_ns.unwrap_or_else(|| base.frame_budget_ns());
    let base_summary = summarize_with(
        base,
        &SummaryOptions::default().with_budget_ns(Some(budget_ns)),
    );
    let (cand_summary, budget_note) = summarize_candidate(base, cand, configured_ns);
    SummarizedPair {
        base: base_summary,
        cand: cand_summary,
        budget_note,
    }
}

/// The candidate's half of [`summarize_pair`], for a caller that has the base's summary
/// already (the inspector's, summarized against its own budget): the candidate summarized
/// against `configured_ns`, else the base's budget, with the note when it declares another
/// (also at the end of the summary's `notes`).
pub fn summarize_candidate(
    base: &Capture,
    cand: &Capture,
    configured_ns: Option<u64>,
) -> (Summary, Option<String>) {
    let budget_ns = configured_ns.unwrap_or_else(|| base.frame_budget_ns());
    let mut summary = summarize_with(
        cand,
        &SummaryOptions::default().with_budget_ns(Some(budget_ns)),
    );
    let note = (configured_ns.is_none() && cand.frame_budget_ns() != budget_ns).then(|| {
        format!(
            "the captures declare different frame budgets (the base {}, the candidate {}): both are judged against the base's {} ms, so jank and spike ratios compare the frames, not the budgets",
            declared_budget(base),
            declared_budget(cand),
            budget_text(budget_ns)
        )
    });
    if let Some(note) = &note {
        summary.notes.push(note.clone());
    }
    (summary, note)
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
    /// The frame budget its jank and spike ratios were judged against, ms: one for both
    /// inputs ([`summarize_pair`]).
    pub budget_ms: f64,
    /// Notes on how the capture was read, and on the frame budget when the inputs declare
    /// different ones.
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
            budget_ms: summary.budget_ms,
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

    /// Frames of 20 ms work, declaring `budget_ns`.
    fn frames_of_20_ms(budget_ns: Option<u64>) -> Capture {
        let mut b = crate::CaptureBuilder::new(SourceKind::Synthetic, false);
        b.meta_mut().frame_budget_ns = budget_ns;
        let mut f = crate::FrameInput::default();
        for i in 0..50u64 {
            f.clear();
            f.index = i;
            f.cpu_begin_ns = i * 21_000_000;
            f.cpu_end_ns = f.cpu_begin_ns + 20_000_000;
            b.push_frame(&f);
        }
        b.finish()
    }

    /// The same frames under two declared budgets are no change: both sides are judged
    /// against one budget (the configured one, else the base's), and a note names both.
    #[test]
    fn a_pair_is_judged_against_one_budget() {
        let at_60 = frames_of_20_ms(Some(16_670_000));
        let at_30 = frames_of_20_ms(Some(33_330_000));
        let undeclared = frames_of_20_ms(None);
        for (base, cand, jank) in [
            (&at_60, &at_30, 1.0),
            (&at_30, &at_60, 0.0),
            (&undeclared, &at_30, 1.0),
        ] {
            let pair = summarize_pair(base, cand, None);
            assert_eq!(pair.base.budget_ms, pair.cand.budget_ms);
            assert_eq!(pair.cand.work.classifier.jank_ratio, Some(jank));
            let d = diff(&pair.base, &pair.cand);
            assert!(d.rows.iter().all(|r| r.change == Change::Same), "{d:?}");
            let note = pair.budget_note.expect("the budgets differ");
            assert_eq!(pair.cand.notes.last(), Some(&note));
            assert!(note.contains("33.33 ms"), "{note}");
            assert!(
                note.contains("16.67 ms") || note.contains("none (16.666667 ms"),
                "{note}"
            );
        }
        let pair = summarize_pair(&at_60, &undeclared, None);
        assert!(pair.budget_note.is_some_and(|n| n.contains("16.67 ms")
            && n.contains("the candidate none (16.666667 ms, 60 Hz, assumed)")));
        // Configured: both against it, whatever either declares, without a note.
        let pair = summarize_pair(&at_60, &at_30, Some(25_000_000));
        assert_eq!((pair.base.budget_ms, pair.cand.budget_ms), (25.0, 25.0));
        assert_eq!(pair.base.work.classifier.jank_ratio, Some(0.0));
        assert_eq!(pair.budget_note, None);
        // The same budget declared: no note.
        assert_eq!(summarize_pair(&at_30, &at_30, None).budget_note, None);
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
