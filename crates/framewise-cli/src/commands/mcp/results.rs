//! What the MCP tools take and return: typed structs whose JSON schemas the server
//! advertises (`inputSchema`, `outputSchema`). Each tool's result is a headline — the
//! verdict, its exit code, the few numbers an agent acts on — and the path of the file
//! holding the verb's whole `--format json` document (each verb's page under docs/cli/ has its schema), so a
//! large result never floods the conversation.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::commands::attribute::AttributeView;
use crate::commands::census::CensusView;
use crate::commands::diff::DiffView;
use crate::commands::gate::GateView;
use crate::commands::hitches::HitchesView;
use crate::commands::serde_name;
use crate::commands::summarize::SummaryView;
use framewise_analysis::gate::CheckStatus;

/// How many rows a headline list carries (the report file has every row).
pub const HEADLINE_ROWS: usize = 5;

/// A tool's verdict, as its exit code says it (docs/CLI.md, "Exit codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolVerdict {
    /// Exit 0: pass, improved, inside budgets, no hitch.
    Pass,
    /// Exit 1: fail, regressed, breached, hitches found.
    Fail,
    /// Exit 2: inconclusive, no detectable change.
    Inconclusive,
    /// Exit 3: incomparable.
    Incomparable,
}

impl ToolVerdict {
    /// The verdict an exit code of 0–3 states (4 is an error, never a verdict).
    pub fn of_exit(code: u8) -> Self {
        match code {
            0 => Self::Pass,
            1 => Self::Fail,
            2 => Self::Inconclusive,
            _ => Self::Incomparable,
        }
    }
}

/// A tool call that could not produce a verdict: the CLI's one-line error and its exit
/// code (4), returned with `isError: true`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ToolError {
    /// The one-line message the CLI would print after `framewise: error:`.
    pub error: String,
    /// The exit code the CLI would return: 4 (infrastructure or usage error).
    pub exit_code: u8,
}

/// `summarize_capture`'s input.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureParams {
    /// The capture: .sgpt, .litecap or Chrome trace JSON (a path, relative to the
    /// server's working directory).
    pub capture: String,
    /// framewise.toml to read the frame budget from (`[budgets] frame_ms`).
    #[serde(default)]
    pub config: Option<String>,
}

/// `attribute`'s input.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttributeParams {
    /// The capture: .sgpt, .litecap or Chrome trace JSON.
    pub capture: String,
    /// Rank the scopes behind this frame's excess (a frame index `find_hitches` lists);
    /// without it, behind the p95 frames' excess.
    #[serde(default)]
    pub frame: Option<u64>,
}

/// How `compare_captures` compares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompareMode {
    /// `framewise gate`: fails when a gated metric worsened past its tolerance.
    #[default]
    Gate,
    /// `framewise diff`: every metric side by side; reports, never decides.
    Diff,
}

/// `compare_captures`' input.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareParams {
    /// The base capture (before).
    pub base: String,
    /// The candidate capture (after).
    pub cand: String,
    /// `gate` (default) or `diff`.
    #[serde(default)]
    pub mode: CompareMode,
    /// Gate only: `METRIC=FRACTION` tolerances on top of the defaults and the config, e.g.
    /// `counter.draw_calls.max=0`.
    #[serde(default)]
    pub tolerances: Vec<String>,
    /// Gate only: drop the default tolerances (frame.avg and frame.p99 at 10%).
    #[serde(default)]
    pub no_default_tolerances: bool,
    /// Judge even when an input lost frames (otherwise such a comparison is inconclusive).
    #[serde(default)]
    pub allow_damaged: bool,
    /// framewise.toml (`[budgets]`, `[gate.tolerances]`).
    #[serde(default)]
    pub config: Option<String>,
}

/// The truth grade of a result's timings (counters are always exact).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct GradeHeadline {
    /// Always `exact`.
    pub counters: String,
    /// `hardware`, `software` or `unknown`: never quote a software timing as a hardware one.
    pub timing: String,
}

impl GradeHeadline {
    fn of(grade: &framewise_analysis::Grade) -> Self {
        Self {
            counters: serde_name(&grade.counters),
            timing: serde_name(&grade.timing),
        }
    }
}

/// `summarize_capture`'s result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SummarizeResult {
    /// The capture, as given.
    pub capture: String,
    /// `pass` (summarized) or `inconclusive` (no frame with a known period).
    pub verdict: ToolVerdict,
    /// The CLI's exit code for it.
    pub exit_code: u8,
    /// Frames in the capture.
    pub frames: u64,
    /// Frames with a known period (what the frame statistics cover).
    pub frames_with_period: u64,
    /// Frame period p50, ms (null when too few frames; the report says why).
    pub frame_p50_ms: Option<f64>,
    /// Frame period p95, ms.
    pub frame_p95_ms: Option<f64>,
    /// Frame period p99, ms.
    pub frame_p99_ms: Option<f64>,
    /// Frame work p95, ms.
    pub work_p95_ms: Option<f64>,
    /// The frame budget judged against, ms.
    pub budget_ms: f64,
    /// The classifier's label over work times (`STEADY`, `SPIKING`, `THROTTLED`).
    pub class: Option<String>,
    /// The truth grade.
    pub grade: GradeHeadline,
    /// The scopes with the largest total time, largest first (at most 5).
    pub top_scopes: Vec<String>,
    /// Capture defects (damage, dropped frames); the report lists them.
    pub defects: usize,
    /// The whole `framewise summarize --format json` document.
    pub report_path: String,
}

impl SummarizeResult {
    /// The headline of a summary whose report was written to `report_path`.
    pub fn new(view: &SummaryView, exit_code: u8, report_path: String) -> Self {
        let s = &view.summary;
        Self {
            capture: view.file.clone(),
            verdict: ToolVerdict::of_exit(exit_code),
            exit_code,
            frames: s.capture.frames,
            frames_with_period: s.frame.times.count,
            frame_p50_ms: s.frame.times.p50,
            frame_p95_ms: s.frame.times.p95,
            frame_p99_ms: s.frame.times.p99,
            work_p95_ms: s.work.times.p95,
            budget_ms: s.budget_ms,
            class: s.work.classifier.class.map(|c| serde_name(&c)),
            grade: GradeHeadline::of(&s.grade),
            top_scopes: s
                .scopes
                .iter()
                .take(HEADLINE_ROWS)
                .map(|(name, _)| name.to_owned())
                .collect(),
            defects: s.defects.len(),
            report_path,
        }
    }
}

/// One hitch, in brief.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct HitchHeadline {
    /// The frame index (what `attribute`'s `frame` takes).
    pub frame: u64,
    /// Its period, ms.
    pub period_ms: f64,
    /// How far past the rolling median, ms.
    pub excess_ms: f64,
    /// The best-ranked classification (`pipeline-compile`, `long-cpu-scope`, …).
    pub best_guess: Option<String>,
    /// Its confidence: `low`, `medium` or `high`.
    pub confidence: Option<String>,
    /// The numbers the guess rests on.
    pub evidence: Option<String>,
}

/// `find_hitches`' result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct HitchesResult {
    /// The capture, as given.
    pub capture: String,
    /// `pass` (no hitch), `fail` (hitches) or `inconclusive` (no frame judged).
    pub verdict: ToolVerdict,
    /// The CLI's exit code for it.
    pub exit_code: u8,
    /// Frames the rule judged.
    pub frames_judged: u64,
    /// Hitches found.
    pub hitch_count: usize,
    /// The worst hitches by excess (at most 5).
    pub worst: Vec<HitchHeadline>,
    /// The truth grade.
    pub grade: GradeHeadline,
    /// The whole `framewise hitches --format json` document.
    pub report_path: String,
}

impl HitchesResult {
    /// The headline of a hitch report whose JSON was written to `report_path`.
    pub fn new(view: &HitchesView, exit_code: u8, report_path: String) -> Self {
        let r = &view.report;
        let mut worst: Vec<_> = r.hitches.iter().collect();
        worst.sort_by(|a, b| b.excess_ms.total_cmp(&a.excess_ms));
        Self {
            capture: view.file.clone(),
            verdict: ToolVerdict::of_exit(exit_code),
            exit_code,
            frames_judged: r.frames_judged,
            hitch_count: r.hitches.len(),
            worst: worst
                .into_iter()
                .take(HEADLINE_ROWS)
                .map(|h| {
                    let best = h.classification.first();
                    HitchHeadline {
                        frame: h.frame,
                        period_ms: h.duration_ms,
                        excess_ms: h.excess_ms,
                        best_guess: best.map(|g| g.guess.name().to_owned()),
                        confidence: best.map(|g| g.confidence.name().to_owned()),
                        evidence: best.map(|g| g.evidence.clone()),
                    }
                })
                .collect(),
            grade: GradeHeadline::of(&r.grade),
            report_path,
        }
    }
}

/// One ranked scope.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ContributionHeadline {
    /// The scope's name.
    pub scope: String,
    /// Its call site (`file:line`), when recorded.
    pub site: Option<String>,
    /// Its contribution to the excess, ms.
    pub contribution_ms: f64,
    /// Its share of the excess (0–1; shares need not sum to 1: a ranking, not an accounting).
    pub share_of_excess: f64,
}

/// `attribute`'s result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct AttributeResult {
    /// The capture, as given.
    pub capture: String,
    /// `pass` (ranked) or `inconclusive`.
    pub verdict: ToolVerdict,
    /// The CLI's exit code for it.
    pub exit_code: u8,
    /// `frame` or `p95-excess`.
    pub target: String,
    /// The frame ranked, when one was asked for.
    pub frame: Option<u64>,
    /// The excess being attributed, ms (absent when inconclusive).
    pub excess_ms: Option<f64>,
    /// Why the attribution is inconclusive, when it is.
    pub reason: Option<String>,
    /// The top-ranked scopes (at most 5).
    pub top: Vec<ContributionHeadline>,
    /// The whole `framewise attribute --format json` document.
    pub report_path: String,
}

impl AttributeResult {
    /// The headline of an attribution whose JSON was written to `report_path`.
    pub fn new(view: &AttributeView, exit_code: u8, report_path: String) -> Self {
        let (target, frame, excess_ms, reason, ranking) = match &view.result {
            Ok(a) => (&a.target, a.frame, Some(a.excess_ms), None, &a.ranking),
            Err(i) => (&i.target, i.frame, None, Some(i.reason.clone()), &i.ranking),
        };
        Self {
            capture: view.file.clone(),
            verdict: ToolVerdict::of_exit(exit_code),
            exit_code,
            target: target.clone(),
            frame,
            excess_ms,
            reason,
            top: ranking
                .iter()
                .take(HEADLINE_ROWS)
                .map(|c| ContributionHeadline {
                    scope: c.scope.clone(),
                    site: c.site.clone(),
                    contribution_ms: c.contribution_ms,
                    share_of_excess: c.share_of_excess,
                })
                .collect(),
            report_path,
        }
    }
}

/// One metric of a comparison.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MetricHeadline {
    /// The metric path (`frame.p99`, `counter.draw_calls.max`).
    pub metric: String,
    /// The base's value.
    pub base: Option<f64>,
    /// The candidate's value.
    pub cand: Option<f64>,
    /// Gate: the tolerance (a fraction); diff: absent.
    pub tolerance: Option<f64>,
    /// Gate: `regressed`, `missing-in-candidate`, …; diff: `worse`.
    pub status: String,
}

/// `compare_captures`' result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CompareResult {
    /// `gate` or `diff`.
    pub mode: CompareMode,
    /// The base capture, as given.
    pub base: String,
    /// The candidate capture, as given.
    pub cand: String,
    /// Gate: `pass`, `fail`, `inconclusive`, `incomparable`; diff: `pass` (diffed),
    /// `inconclusive` or `incomparable` (timing regimes differ).
    pub verdict: ToolVerdict,
    /// The CLI's exit code for it.
    pub exit_code: u8,
    /// Why the verdict is what it is, in words (the gate's reasons; a diff's status).
    pub reasons: Vec<String>,
    /// Gate: the checks that did not pass; diff: the metrics that got worse (at most 5,
    /// worst first for a diff).
    pub failing: Vec<MetricHeadline>,
    /// How many checks failed (gate) or metrics got worse (diff) in all.
    pub failing_count: usize,
    /// Whether the two captures' timings compare (same regime); counters always do.
    pub timing_comparable: bool,
    /// The whole `framewise gate|diff --format json` document.
    pub report_path: String,
}

impl CompareResult {
    /// The headline of a gate whose JSON was written to `report_path`.
    pub fn of_gate(view: &GateView, exit_code: u8, report_path: String) -> Self {
        let failing: Vec<_> = view
            .result
            .checks
            .iter()
            .filter(|c| c.status != CheckStatus::Pass)
            .collect();
        Self {
            mode: CompareMode::Gate,
            base: view.base.file.clone(),
            cand: view.cand.file.clone(),
            verdict: ToolVerdict::of_exit(exit_code),
            exit_code,
            reasons: super::reasons_in_mcp_terms::<CompareParams>(&view.result.reasons),
            failing_count: failing.len(),
            failing: failing
                .into_iter()
                .take(HEADLINE_ROWS)
                .map(|c| MetricHeadline {
                    metric: c.metric.clone(),
                    base: c.base,
                    cand: c.cand,
                    tolerance: Some(c.tolerance),
                    status: serde_name(&c.status),
                })
                .collect(),
            timing_comparable: view
                .base
                .summary
                .grade
                .timing_comparable(&view.cand.summary.grade),
            report_path,
        }
    }

    /// The headline of a diff whose JSON was written to `report_path`.
    pub fn of_diff(view: &DiffView, exit_code: u8, report_path: String) -> Self {
        use framewise_analysis::diff::Change;
        let mut worse: Vec<_> = view
            .diff
            .rows
            .iter()
            .filter(|r| r.change == Change::Worse && view.diff.row_comparable(r))
            .collect();
        worse.sort_by(|a, b| {
            let size =
                |r: &framewise_analysis::diff::DiffRow| r.pct.map_or(f64::INFINITY, f64::abs);
            size(b).total_cmp(&size(a))
        });
        Self {
            mode: CompareMode::Diff,
            base: view.base.file.clone(),
            cand: view.cand.file.clone(),
            verdict: ToolVerdict::of_exit(exit_code),
            exit_code,
            reasons: super::reasons_in_mcp_terms::<CompareParams>(&view.status()),
            failing_count: worse.len(),
            failing: worse
                .into_iter()
                .take(HEADLINE_ROWS)
                .map(|r| MetricHeadline {
                    metric: r.metric.clone(),
                    base: r.base,
                    cand: r.cand,
                    tolerance: None,
                    status: serde_name(&r.change),
                })
                .collect(),
            timing_comparable: view.diff.timing_comparable,
            report_path,
        }
    }
}

/// `census`'s input.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CensusParams {
    /// A capture (.sgpt) or a census document (census.json); without it, census.json in the
    /// `.framewise/` directory.
    #[serde(default)]
    pub input: Option<String>,
    /// The `.framewise/` directory (default: $FRAMEWISE_DIR, else the nearest one up).
    #[serde(default)]
    pub dir: Option<String>,
}

/// One hint, in brief.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct HintBrief {
    /// The hint's kind (`instancing-candidate`, …).
    pub kind: String,
    /// What it is about.
    pub subject: String,
    /// What to change.
    pub fix: String,
    /// The spawning site, or `unknown`.
    pub site: String,
}

/// `census`'s result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CensusResult {
    /// pass (a census read) or inconclusive (none in the input).
    pub verdict: ToolVerdict,
    /// The exit code `framewise census` returns.
    pub exit_code: u8,
    /// The input read.
    pub input: String,
    /// Censuses in the input.
    pub censuses: usize,
    /// The latest census's entities, `null` without one.
    pub entities: Option<u64>,
    /// Its triangles.
    pub triangles: Option<u64>,
    /// Its distinct meshes.
    pub unique_meshes: Option<u64>,
    /// Its distinct materials.
    pub unique_materials: Option<u64>,
    /// Every hint (a closed vocabulary; the report has their evidence).
    pub hints: Vec<HintBrief>,
    /// Defects the input carries.
    pub defects: usize,
    /// The whole `framewise census --format json` document.
    pub report_path: String,
}

impl CensusResult {
    /// The headline of a census view.
    pub fn new(view: &CensusView, exit_code: u8, report_path: String) -> Self {
        let totals = view.census.as_ref().map(|c| &c.totals);
        Self {
            verdict: ToolVerdict::of_exit(exit_code),
            exit_code,
            input: view.input.clone(),
            censuses: view.censuses,
            entities: totals.map(|t| t.entities),
            triangles: totals.map(|t| t.triangles),
            unique_meshes: totals.map(|t| t.unique_meshes),
            unique_materials: totals.map(|t| t.unique_materials),
            hints: view
                .hints
                .iter()
                .map(|h| HintBrief {
                    kind: h.kind.name().to_owned(),
                    subject: h.subject.clone(),
                    fix: h.fix.clone(),
                    site: h.site.clone(),
                })
                .collect(),
            defects: view.defects.len(),
            report_path,
        }
    }
}
