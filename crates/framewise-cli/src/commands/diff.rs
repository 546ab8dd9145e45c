//! `framewise diff BASE CAND`: every metric path either capture has, side by side.
//!
//! A diff reports; it does not decide (there is no tolerance and no noise floor here —
//! `framewise gate` decides). Exit: 0 diffed; 2 when either capture has no frame with a
//! known period, or lost frames (unless `--allow-damaged`) (inconclusive); 3 when the
//! timing regimes differ (timing rows are shown but are not a change; counters compare
//! anywhere); 4 when a file cannot be read.

use std::path::{Path, PathBuf};

use framewise_analysis::diff::{summarize_pair, Change, DiffRow};
use framewise_analysis::gate::Verdict;
use framewise_analysis::{diff, Diff, Summary};

use crate::commands::{exit, serde_name, side_defects_console, side_defects_markdown, Outcome};
use crate::config::{self, ConfigArgs};
use crate::input::{self, InputArgs, Need};
use crate::list::{self, ListArgs, Noun};
use crate::output::{self, Annotation, OutputArgs, Report};
use crate::table::{self, Align, Table};

/// `framewise diff`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The base capture (before).
    pub base: PathBuf,
    /// The candidate capture (after).
    pub cand: PathBuf,
    /// Exit 0 even when an input lost frames (dropped frames, a truncated or corrupt file,
    /// a writer that never closed it); without it such a diff exits 2 (inconclusive).
    #[arg(long)]
    pub allow_damaged: bool,
    #[command(flatten)]
    pub list: ListArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What one input was, for the `inputs` block of diff and gate (its defects are in the
/// result's own `defects`, tagged with the side).
pub struct InputInfo {
    /// The path as given.
    pub file: String,
    /// Its summary.
    pub summary: Summary,
}

impl InputInfo {
    /// The `(file, summary)` pair the `inputs` block is made of.
    pub fn doc(&self) -> (&str, &Summary) {
        (&self.file, &self.summary)
    }

    /// One console line (the file name [`table::inline`]: a line break in it is shown
    /// escaped).
    pub fn line(&self, role: &str) -> String {
        let s = &self.summary;
        let line = format!(
            "{role} {} · {} · {} frames ({} with a period) · timing {} · budget {:.2} ms · {}",
            self.file,
            serde_name(&s.capture.source),
            s.capture.frames,
            s.frame.times.count,
            serde_name(&s.grade.timing),
            s.budget_ms,
            Noun("defect", "defects").count(s.defects.len())
        );
        table::inline(&line).into_owned()
    }
}

/// Both inputs of a comparison, summarized against one frame budget.
pub struct Pair {
    /// The base.
    pub base: InputInfo,
    /// The candidate.
    pub cand: InputInfo,
    /// Why the candidate is judged against another budget than the one it declares, when it
    /// is (see [`framewise_analysis::diff::summarize_pair`]).
    pub budget_note: Option<String>,
}

/// Loads both inputs and summarizes them against one frame budget: `budget_ns` (the
/// config's `[budgets] frame_ms`) when given, else the base's.
pub fn load_pair(
    base: &Path,
    cand: &Path,
    input_args: &InputArgs,
    budget_ns: Option<u64>,
) -> anyhow::Result<Pair> {
    input::refuse_one_stream(base, cand)?;
    let options = input_args.options(Need::Summary);
    let b = input::load(base, &options)?;
    let c = input::load(cand, &options)?;
    let pair = summarize_pair(&b, &c, budget_ns);
    Ok(Pair {
        base: InputInfo {
            file: input::shown(base),
            summary: pair.base,
        },
        cand: InputInfo {
            file: input::shown(cand),
            summary: pair.cand,
        },
        budget_note: pair.budget_note,
    })
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[&args.base, &args.cand])?;
    let outcome = evaluate(&args)?;
    output::emit(&args.output, &outcome.view)?;
    Ok(outcome.exit_code)
}

/// The verb's result without printing it (`framewise diff` and the MCP server's
/// `compare_captures` both call this): 0 diffed, 2 inconclusive, 3 incomparable timing.
pub fn evaluate(args: &Args) -> anyhow::Result<Outcome<DiffView>> {
    let cfg = config::load(&args.config)?;
    config::require_toml(&cfg, "diff")?;
    let Pair {
        base,
        cand,
        budget_note,
    } = load_pair(&args.base, &args.cand, &args.input, cfg.budget_ns())?;
    let diff = diff(&base.summary, &cand.summary);
    let view = DiffView {
        base,
        cand,
        budget_note,
        diff,
        list: args.list,
        allow_damaged: args.allow_damaged,
    };
    let exit_code = exit(view.verdict());
    Ok(Outcome { view, exit_code })
}

fn change_cell(row: &DiffRow, diff: &Diff) -> String {
    let name = serde_name(&row.change);
    if !diff.timing_comparable && !row.metric.starts_with("counter.") {
        format!("{name} (timing incomparable)")
    } else if !diff.row_comparable(row) {
        format!("{name} (frame times differ in kind)")
    } else {
        name
    }
}

/// A diff with its inputs.
pub struct DiffView {
    /// The base capture.
    pub base: InputInfo,
    /// The candidate capture.
    pub cand: InputInfo,
    /// Why the candidate is judged against another budget than the one it declares.
    pub budget_note: Option<String>,
    /// The analysis crate's diff.
    pub diff: Diff,
    list: ListArgs,
    allow_damaged: bool,
}

const CHANGED: Noun = Noun("more changed metric", "more changed metrics");

/// The statistics a game developer reads first (`frame.p99`, `scope.render.total`,
/// `counter.draw_calls.max`), by the path's last segment.
const HEADLINE: [&str; 8] = [
    "avg",
    "p95",
    "p99",
    "max",
    "total",
    "sum",
    "fps",
    "low_1pct_fps",
];

/// Worse before better, then headline statistics, then the largest relative change (a
/// change from 0, with no percentage, counts as the largest), then path order.
fn by_change(a: &DiffRow, b: &DiffRow) -> std::cmp::Ordering {
    let worse_first = |r: &DiffRow| r.change != Change::Worse;
    let minor = |r: &DiffRow| {
        let stat = r.metric.rsplit_once('.').map_or("", |(_, s)| s);
        !HEADLINE.contains(&stat)
    };
    let size = |r: &DiffRow| r.pct.map_or(f64::INFINITY, f64::abs);
    worse_first(a)
        .cmp(&worse_first(b))
        .then_with(|| minor(a).cmp(&minor(b)))
        .then_with(|| size(b).total_cmp(&size(a)))
        .then_with(|| a.metric.cmp(&b.metric))
}

/// A metric path's block: `scope.render.p95` → `scope.render`.
fn block(metric: &str) -> &str {
    metric.rsplit_once('.').map_or(metric, |(b, _)| b)
}

/// What the console and markdown show of a diff.
struct Rows<'a> {
    /// The table's rows.
    table: Vec<&'a DiffRow>,
    /// Changed rows `--top` left out.
    hidden_changed: usize,
    /// Every changed row (better or worse).
    changed: usize,
    worse: usize,
    unchanged: usize,
    /// Blocks (scopes, passes, counters…) of the rows only one side has, when folded.
    only_base: Vec<String>,
    only_cand: Vec<String>,
    only_base_rows: usize,
    only_cand_rows: usize,
}

impl DiffView {
    fn row(&self, t: &mut Table, row: &DiffRow) {
        t.row(vec![
            row.metric.clone(),
            table::unit(&row.metric).to_owned(),
            table::metric(&row.metric, row.base),
            table::metric(&row.metric, row.cand),
            table::metric_delta(&row.metric, row.delta),
            table::pct(row.pct),
            change_cell(row, &self.diff),
        ]);
    }

    /// What a reader sees. `ranked`: changed rows ranked and cut to `--top`, one-sided rows
    /// folded to a line per side; otherwise every row that is not unchanged, in path order
    /// (every row under `--all`).
    fn rows(&self, ranked: bool) -> Rows<'_> {
        let all = &self.diff.rows;
        let count = |c: Change| all.iter().filter(|r| r.change == c).count();
        let blocks = |c: Change| {
            let mut names: Vec<String> = Vec::new();
            for r in all.iter().filter(|r| r.change == c) {
                let b = block(&r.metric);
                if !names.iter().any(|n| n == b) {
                    names.push(b.to_owned());
                }
            }
            names
        };
        let mut changed: Vec<&DiffRow> = all
            .iter()
            .filter(|r| matches!(r.change, Change::Better | Change::Worse))
            .collect();
        let n_changed = changed.len();
        let mut rows = Rows {
            table: Vec::new(),
            hidden_changed: 0,
            changed: n_changed,
            worse: count(Change::Worse),
            unchanged: count(Change::Same),
            only_base: Vec::new(),
            only_cand: Vec::new(),
            only_base_rows: count(Change::OnlyBase),
            only_cand_rows: count(Change::OnlyCandidate),
        };
        if self.list.all {
            // Every row, in path order, as the JSON has them.
            rows.table = all.iter().collect();
        } else if ranked {
            changed.sort_by(|a, b| by_change(a, b));
            let (shown, hidden) = self.list.cut(n_changed);
            changed.truncate(shown);
            rows.table = changed;
            rows.hidden_changed = hidden;
            rows.only_base = blocks(Change::OnlyBase);
            rows.only_cand = blocks(Change::OnlyCandidate);
        } else {
            rows.table = all.iter().filter(|r| r.change != Change::Same).collect();
        }
        rows
    }

    /// Markdown keeps its full path-ordered table when it fits in `--top` rows, and is
    /// ranked and cut like the console when it does not.
    fn markdown_rows(&self) -> Rows<'_> {
        let rows = self.rows(false);
        if self.list.all || rows.table.len() <= self.list.top {
            rows
        } else {
            self.rows(true)
        }
    }

    fn table(&self, rows: &Rows<'_>) -> Table {
        let mut t = Table::new(&["metric", "unit", "base", "cand", "delta", "pct", "change"])
            .align(1, Align::Left)
            .align(6, Align::Left);
        for row in &rows.table {
            self.row(&mut t, row);
        }
        t
    }

    /// `32 changed (32 worse, 0 better) · 30 unchanged · …`
    fn counts_line(rows: &Rows<'_>) -> String {
        let mut parts = vec![format!(
            "{} changed ({} worse, {} better)",
            rows.changed,
            rows.worse,
            rows.changed - rows.worse
        )];
        parts.push(format!("{} unchanged", rows.unchanged));
        if rows.only_base_rows > 0 {
            parts.push(format!("{} only in base", rows.only_base_rows));
        }
        if rows.only_cand_rows > 0 {
            parts.push(format!("{} only in the candidate", rows.only_cand_rows));
        }
        format!("metrics: {}", parts.join(" · "))
    }

    /// `… 10 more changed metrics, 40 unchanged and 11 one-sided not shown (…)`, or nothing.
    fn left_out(rows: &Rows<'_>, all: bool) -> Option<String> {
        if all {
            return None;
        }
        let mut parts = Vec::new();
        if rows.hidden_changed > 0 {
            parts.push(CHANGED.count(rows.hidden_changed));
        }
        if rows.unchanged > 0 {
            parts.push(format!("{} unchanged", rows.unchanged));
        }
        let one_sided = rows.only_base_rows + rows.only_cand_rows;
        if one_sided > 0 {
            parts.push(format!("{one_sided} one-sided"));
        }
        let parts = match parts.len() {
            0 => return None,
            1 => parts.remove(0),
            n => format!("{} and {}", parts[..n - 1].join(", "), parts[n - 1]),
        };
        Some(format!(
            "… {parts} not shown (--all to list every metric, --format json for machines)"
        ))
    }

    /// The rows only one side has, folded to one line per side (without `--all`).
    fn only_lines(rows: &Rows<'_>) -> Vec<String> {
        let mut out = Vec::new();
        for (side, n, blocks) in [
            ("base", rows.only_base_rows, &rows.only_base),
            ("the candidate", rows.only_cand_rows, &rows.only_cand),
        ] {
            if !blocks.is_empty() {
                let blocks: Vec<String> = blocks.iter().map(|b| format!("{b}.*")).collect();
                out.push(format!(
                    "only in {side}: {n} metrics ({})",
                    list::some_names(&blocks, 4)
                ));
            }
        }
        out
    }

    /// What the exit code says (framewise-analysis's `diff_verdict`), and why in words.
    fn judged(&self) -> (Verdict, Option<String>) {
        framewise_analysis::diff::diff_verdict(
            &self.diff,
            &self.base.summary,
            &self.cand.summary,
            self.allow_damaged,
        )
    }

    /// What the exit code says.
    fn verdict(&self) -> Verdict {
        self.judged().0
    }

    /// Why the diff is inconclusive or incomparable, in words; `None` when it is neither.
    pub fn status(&self) -> Option<String> {
        self.judged().1
    }
}

impl Report for DiffView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(framewise_analysis::diff::diff_json(
            &self.diff,
            (&self.base.file, &self.base.summary),
            (&self.cand.file, &self.cand.summary),
            self.allow_damaged,
        )?)
    }

    fn console(&self, out: &mut String) {
        out.push_str(&format!(
            "{}\n{}\n",
            self.base.line("base"),
            self.cand.line("cand")
        ));
        if let Some(note) = &self.budget_note {
            out.push_str(&format!("note: {note}\n"));
        }
        if let Some(status) = self.status() {
            out.push_str(&format!("{status}\n"));
        }
        let rows = self.rows(true);
        out.push_str(&format!("{}\n\n", Self::counts_line(&rows)));
        if rows.table.is_empty() {
            out.push_str("no metric differs\n");
        } else {
            if !self.list.all {
                let showing = if rows.hidden_changed > 0 {
                    format!(" (showing {} of {})", rows.table.len(), rows.changed)
                } else {
                    String::new()
                };
                out.push_str(&format!(
                    "changed metrics: worse first, headline statistics first, then by size of change{showing}\n"
                ));
            }
            self.table(&rows).console(out, 0);
        }
        for line in Self::only_lines(&rows) {
            out.push_str(&format!("{line}\n"));
        }
        if let Some(line) = Self::left_out(&rows, self.list.all) {
            out.push_str(&format!("{line}\n"));
        }
        out.push_str(&format!(
            "\na diff reports, it does not decide: framewise gate {} {} applies tolerances\n",
            list::shell_word(&self.base.file),
            list::shell_word(&self.cand.file)
        ));
        side_defects_console(&self.diff.defects, out);
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!(
            "### framewise diff: `{}` → `{}`\n\n",
            table::inline(&self.base.file),
            table::inline(&self.cand.file)
        ));
        if let Some(note) = &self.budget_note {
            out.push_str(&format!("_Note: {note}._\n\n"));
        }
        if let Some(status) = self.status() {
            out.push_str(&format!("> {status}\n\n"));
        }
        let rows = self.markdown_rows();
        if rows.table.is_empty() {
            out.push_str("No metric differs.\n");
        } else {
            self.table(&rows).markdown(out);
        }
        let only = Self::only_lines(&rows);
        if !only.is_empty() {
            out.push('\n');
            for line in &only {
                out.push_str(&format!("- {line}\n"));
            }
        }
        if rows.hidden_changed > 0 || !only.is_empty() {
            if let Some(line) = Self::left_out(&rows, self.list.all) {
                out.push_str(&format!("\n_{line}_\n"));
            }
        } else if !self.list.all && rows.unchanged > 0 {
            out.push_str(&format!(
                "\n{} unchanged metrics not shown.\n",
                rows.unchanged
            ));
        }
        side_defects_markdown(&self.diff.defects, out);
    }

    fn annotations(&self) -> Vec<Annotation> {
        self.status()
            .map(|s| Annotation {
                level: "warning",
                title: "framewise diff".into(),
                message: s,
            })
            .into_iter()
            .collect()
    }
}
