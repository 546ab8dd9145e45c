//! The MCP tools over benches and budgets: `run_bench` (`framewise bench NAME [--compare
//! last]`), `get_ledger` (`.framewise/bench-history.jsonl`) and `check_budgets` (`framewise
//! check`) — their inputs and headline results.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use framewise_analysis::bench::budget::BudgetCheck;
use framewise_analysis::bench::{LedgerLine, VerdictWord};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::results::HEADLINE_ROWS;
use crate::commands::bench::report::View;
use crate::commands::bench::Outcome as BenchOutcome;
use crate::commands::check::{CheckResult, Source};
use crate::commands::serde_name;

/// `run_bench`'s input.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BenchParams {
    /// A bench declared in framewise.toml as `[bench.NAME]` (an agent never invents one).
    pub name: String,
    /// Compare the new result with the newest earlier one of NAME (`--compare last`, default
    /// true); false only measures.
    #[serde(default)]
    pub compare_last: Option<bool>,
    /// What changed, for the ledger line a comparison appends.
    #[serde(default)]
    pub change: Option<String>,
    /// Judge the comparison on the exact counters only, not the timings (`--counters-only`,
    /// default false): for a machine whose timings move with what else runs on it.
    #[serde(default)]
    pub counters_only: Option<bool>,
    /// The `.framewise` directory (results, ledger) [default: `.framewise`].
    #[serde(default)]
    pub dir: Option<String>,
    /// framewise.toml [default: `./framewise.toml`].
    #[serde(default)]
    pub config: Option<String>,
}

/// One metric's verdict, in brief.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MetricBrief {
    /// The metric path.
    pub metric: String,
    /// Before (the earlier result).
    pub before: f64,
    /// After (this run).
    pub after: f64,
    /// Relative change (after / before − 1), when before is not 0.
    pub change: Option<f64>,
    /// `improved`, `regressed`, `no-detectable-change`, `inconclusive`, `incomparable`.
    pub verdict: String,
    /// The smallest relative change the data could have detected.
    pub smallest_detectable: Option<f64>,
}

/// A metric measured in every run before and missing from a run after, in brief: a
/// regression that no `metrics` row shows (there is no after value to show).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MissingBrief {
    /// The metric path.
    pub metric: String,
    /// Before (the earlier result's mean).
    pub before: f64,
    /// Runs of this result that have a value for it (fewer than its runs).
    pub after_runs: usize,
    /// Always `regressed`.
    pub verdict: String,
}

/// One budget against the after side.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct BudgetBrief {
    /// The budget's name (`frame_ms`, a metric path).
    pub budget: String,
    /// The value measured.
    pub value: Option<f64>,
    /// The limit.
    pub limit: f64,
    /// value / limit.
    pub ratio: Option<f64>,
    /// `inside`, `breached` or `unmeasured`.
    pub state: String,
}

impl BudgetBrief {
    /// A judged budget in brief.
    pub fn of(b: &BudgetCheck) -> Self {
        Self {
            budget: b.budget.clone(),
            value: b.value,
            limit: b.limit,
            ratio: b.ratio,
            state: serde_name(&b.state),
        }
    }
}

/// `check_budgets`' input.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckParams {
    /// Run `[bench.NAME]` and judge its result, instead of reading `.framewise/profile.json`.
    #[serde(default)]
    pub bench: Option<String>,
    /// Judge only exact counter budgets (`counter.*`): for a machine whose timings are not
    /// the hardware's.
    #[serde(default)]
    pub counters_only: bool,
    /// The `.framewise` directory [default: `.framewise`].
    #[serde(default)]
    pub dir: Option<String>,
    /// framewise.toml [default: `./framewise.toml`, else `.framewise/framewise.toml`].
    #[serde(default)]
    pub config: Option<String>,
}

/// `check_budgets`' result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CheckBudgetsResult {
    /// `inside` (every budget measured and inside: the only pass), `breached`, `incomplete`
    /// (none breached but a budget not measured, or a bench whose runs lost frames: not a
    /// pass) or `no-budgets` (nothing judged: not a pass); nothing measured is an error,
    /// exit 4.
    pub verdict: String,
    /// The CLI's exit code: 0 inside, 1 breached, 2 incomplete or no budgets.
    pub exit_code: u8,
    /// What was measured: `profile` or `bench`.
    pub source: String,
    /// The profile or bench result file judged.
    pub source_file: Option<String>,
    /// Every budget judged.
    pub budgets: Vec<BudgetBrief>,
    /// What the reader should know (no budgets; each budget not measured, and why; bench
    /// runs that lost frames).
    pub warnings: Vec<String>,
    /// The whole `framewise check --format json` document.
    pub report_path: String,
}

impl CheckBudgetsResult {
    /// The headline of a check whose JSON was written to `report_path`.
    pub fn new(r: &CheckResult, report_path: String) -> Self {
        let (source, source_file) = match &r.source {
            Source::Profile { file, .. } => ("profile", Some(file.clone())),
            Source::Bench { file, .. } => ("bench", Some(file.clone())),
            Source::None => ("none", None),
        };
        Self {
            verdict: r.verdict.to_owned(),
            exit_code: r.exit_code,
            source: source.to_owned(),
            source_file,
            budgets: r.budgets.iter().map(BudgetBrief::of).collect(),
            warnings: r.warnings.clone(),
            report_path,
        }
    }
}

/// `run_bench`'s result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct BenchResultHeadline {
    /// The bench.
    pub name: String,
    /// `measured` (no comparison asked), `first-result` (nothing earlier to compare with), or
    /// the comparison's overall verdict: `improved`, `regressed`, `no-detectable-change`,
    /// `inconclusive`, `incomparable`.
    pub verdict: String,
    /// The CLI's exit code: 0 measured or improved, 1 regressed, 2 no detectable change,
    /// inconclusive, a first result, or measured with a short run or a run that lost frames,
    /// 3 incomparable.
    pub exit_code: u8,
    /// The result file this run wrote.
    pub result_file: Option<String>,
    /// Why the overall verdict is what it is.
    pub reasons: Vec<String>,
    /// The timing regime of this run (`hardware`, `software`, `unknown`).
    pub regime: Option<String>,
    /// The metrics whose verdict is not `no-detectable-change` (at most 5), else the first 5.
    pub metrics: Vec<MetricBrief>,
    /// Metrics measured in every run before and missing from a run of this result: each a
    /// regression (absent when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<MissingBrief>,
    /// Every declared budget against this run.
    pub budgets: Vec<BudgetBrief>,
    /// The whole `framewise bench --format json` document; null when it could not be
    /// written (`report_error` says why).
    pub report_path: Option<String>,
    /// Set only when the report could not be written after the bench ran: its result (and,
    /// for a comparison, its ledger line) IS recorded, so running it again would record
    /// another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_error: Option<String>,
}

fn word(v: VerdictWord) -> String {
    v.as_str().to_owned()
}

impl BenchResultHeadline {
    /// The headline of a bench invocation whose JSON was written to `report_path`.
    pub fn new(name: &str, view: &View, exit_code: u8, report_path: Option<String>) -> Self {
        let mut out = Self {
            name: name.to_owned(),
            verdict: String::new(),
            exit_code,
            result_file: None,
            reasons: Vec::new(),
            regime: None,
            metrics: Vec::new(),
            missing: Vec::new(),
            budgets: Vec::new(),
            report_path,
            report_error: None,
        };
        match &view.outcome {
            BenchOutcome::Ran { result, file } => {
                out.verdict = "measured".to_owned();
                out.result_file = Some(file.display().to_string());
                out.regime = Some(serde_name(&result.regime));
                // Short runs or lost frames (exit 2): said, since no comparison says it.
                out.reasons = crate::commands::bench::unfit(result)
                    .into_iter()
                    .map(|why| format!("{why}: a comparison with this result is inconclusive"))
                    .collect();
            }
            BenchOutcome::FirstResult { file } => {
                out.verdict = "first-result".to_owned();
                out.result_file = Some(file.display().to_string());
                out.reasons = vec![format!(
                    "no earlier result of {name} to compare with: run it again after the change"
                )];
            }
            BenchOutcome::Compared { comparison, ran } => {
                let c = comparison;
                out.verdict = word(c.overall.verdict);
                out.result_file = ran.as_ref().map(|p| p.display().to_string());
                out.reasons = super::reasons_in_mcp_terms::<BenchParams>(&c.overall.reasons);
                out.regime = Some(serde_name(&c.after.regime));
                let decided: Vec<_> = c
                    .metrics
                    .iter()
                    .filter(|m| m.verdict != VerdictWord::NoDetectableChange)
                    .collect();
                let shown: Vec<_> = if decided.is_empty() {
                    c.metrics.iter().collect()
                } else {
                    decided
                };
                out.metrics = shown
                    .into_iter()
                    .take(HEADLINE_ROWS)
                    .map(|m| MetricBrief {
                        metric: m.metric.clone(),
                        before: m.before,
                        after: m.after,
                        change: m.change,
                        verdict: word(m.verdict),
                        smallest_detectable: m.smallest_detectable,
                    })
                    .collect();
                out.missing = c
                    .missing
                    .iter()
                    .map(|m| MissingBrief {
                        metric: m.metric.clone(),
                        before: m.before,
                        after_runs: m.after_runs,
                        verdict: word(m.verdict),
                    })
                    .collect();
                out.budgets = c.overall.budgets.iter().map(BudgetBrief::of).collect();
            }
        }
        out
    }
}

/// `get_ledger`'s input.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LedgerParams {
    /// The `.framewise` directory [default: `.framewise`].
    #[serde(default)]
    pub dir: Option<String>,
    /// Only this bench's lines.
    #[serde(default)]
    pub name: Option<String>,
    /// How many of the newest lines to return (1–100, default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub last: Option<u32>,
}

/// One ledger line, in brief.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct LedgerBrief {
    /// When the comparison was made.
    pub at: String,
    /// The bench.
    pub name: String,
    /// Declared in framewise.toml.
    pub canonical: bool,
    /// The change described.
    pub change: Option<String>,
    /// The git revision of the after side, if any.
    pub git_revision: Option<String>,
    /// The overall verdict.
    pub verdict: String,
    /// Its exit code.
    pub exit_code: i32,
    /// Metrics that regressed.
    pub regressed: Vec<String>,
    /// Metrics that improved.
    pub improved: Vec<String>,
    /// Budgets breached on the after side.
    pub breached: Vec<String>,
}

/// `get_ledger`'s result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct LedgerResult {
    /// The ledger file.
    pub file: String,
    /// Lines read (of the bench asked for, when `name` is given).
    pub lines: usize,
    /// Lines that were not ledger lines (skipped, counted).
    pub malformed: usize,
    /// The newest lines, oldest first.
    pub newest: Vec<LedgerBrief>,
}

impl LedgerBrief {
    /// A ledger line in brief.
    pub fn of(line: &LedgerLine) -> Self {
        Self {
            at: line.at.clone(),
            name: line.name.clone(),
            canonical: line.canonical,
            change: line.change.clone(),
            git_revision: line.git_revision.clone(),
            verdict: word(line.verdict),
            exit_code: line.exit_code,
            regressed: line.regressed.clone(),
            improved: line.improved.clone(),
            breached: line
                .budgets
                .iter()
                .filter(|b| serde_name(&b.state) == "breached")
                .map(|b| b.budget.clone())
                .collect(),
        }
    }
}

/// The longest ledger line read (a comparison's line is a few KiB); a longer one is counted
/// malformed and never held whole. As long as the longest message the server reads.
const MAX_LEDGER_LINE: usize = super::transport::MAX_LINE;

/// The bench ledger at `file`, as `get_ledger` returns it: the lines of bench `name` (every
/// line without it) counted, the `last` newest of them, oldest first, and the lines that are
/// no ledger line (skipped) counted. A ledger that does not exist holds no line (there is
/// none before a first comparison).
///
/// The ledger must be a regular file (through links), as `framewise bench` requires of the
/// file it appends its comparisons to (framewise-incidents' appender refuses any other) and
/// as the CLI's other readers of `.framewise/` logs do: a FIFO would block the read until a
/// writer came (forever, and the server's exit with it), and a device such as `/dev/zero`
/// never ends. The file is read no further than the length it had when it was opened, one
/// line at a time, keeping only the `last` newest lines: what the read holds grows neither
/// with the ledger nor with a file written while it is read.
pub(super) fn read_ledger(
    file: &Path,
    name: Option<&str>,
    last: usize,
) -> anyhow::Result<LedgerResult> {
    let shown = file.display();
    let cannot = |e: std::io::Error| anyhow::anyhow!("{shown}: cannot read the ledger: {e}");
    let not_a_file = |meta: &std::fs::Metadata| {
        anyhow::anyhow!(
            "{shown}: is a {}, not a regular file: the bench ledger is a regular file (`framewise bench` appends to nothing else), and the server reads files only (a pipe or a device could block it)",
            framewise_analysis::load::file_kind(meta)
        )
    };
    let mut result = LedgerResult {
        file: shown.to_string(),
        lines: 0,
        malformed: 0,
        newest: Vec::new(),
    };
    match std::fs::metadata(file) {
        Ok(meta) if meta.is_file() => {}
        Ok(meta) => return Err(not_a_file(&meta)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(result),
        Err(e) => return Err(cannot(e)),
    }
    let opened = std::fs::File::open(file).map_err(cannot)?;
    // What was opened, should the path have been replaced since it was looked at.
    let meta = opened.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(not_a_file(&meta));
    }
    let mut reader = BufReader::new(opened.take(meta.len()));
    let mut newest = VecDeque::with_capacity(last);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = u64::try_from(MAX_LEDGER_LINE)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let read = (&mut reader)
            .take(limit)
            .read_until(b'\n', &mut line)
            .map_err(cannot)?;
        if read == 0 {
            break;
        }
        if line.len() > MAX_LEDGER_LINE && !line.ends_with(b"\n") {
            reader.skip_until(b'\n').map_err(cannot)?;
            result.malformed += 1;
            continue;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<LedgerLine>(text) {
            Ok(l) if name.is_none_or(|n| l.name == n) => {
                result.lines += 1;
                if newest.len() == last {
                    newest.pop_front();
                }
                if last > 0 {
                    newest.push_back(LedgerBrief::of(&l));
                }
            }
            Ok(_) => {}
            Err(_) => result.malformed += 1,
        }
    }
    result.newest = newest.into();
    Ok(result)
}
