//! `framewise gate BASE CAND`: the regression gate.
//!
//! Tolerances, in order: the defaults (lite-profiler's: `frame.avg` and `frame.p99` may
//! worsen 10%; counters gate only when named), replaced by the tolerances a `--config`
//! lists (unless it says `[gate] defaults = true`), then each `--tolerance METRIC=FRACTION`
//! on top. `--no-default-tolerances` drops the defaults. Exit: the verdict's code (0 pass,
//! 1 fail, 2 inconclusive — also when an input lost frames, unless `--allow-damaged` —,
//! 3 incomparable); 4 for an unreadable file, a bad tolerance, or a path that names nothing
//! (an unknown statistic, or a scope/pass/counter neither capture has), with the nearest
//! valid paths.

use std::path::PathBuf;

use anyhow::{bail, Context};
use framewise_analysis::diff::InputsDoc;
use framewise_analysis::gate::{CheckStatus, GateCheck};
use framewise_analysis::{gate, GateConfig, GateResult, Verdict};
use serde::Serialize;

use crate::commands::diff::{load_pair, InputInfo, Pair};
use crate::commands::{exit, serde_name, side_defects_console, side_defects_markdown, Outcome};
use crate::config::{self, ConfigArgs};
use crate::input::InputArgs;
use crate::list::{ListArgs, Noun};
use crate::output::{self, Annotation, OutputArgs, Report};
use crate::table::{self, Align, Table, NONE};

/// `framewise gate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The base capture (before).
    pub base: PathBuf,
    /// The candidate capture (after).
    pub cand: PathBuf,
    /// Allowed fractional worsening for a metric path, e.g. `frame.p99=0.10` (10% worse
    /// allowed) or `counter.draw_calls.max=0` (exact). `*` may stand for a name
    /// (`scope.*.p95=0.2`; `counter.*.max` covers sum counters, not gauges). From 0 to 10,
    /// and below 1 for an fps metric: a larger one could never fail and is refused.
    /// Repeatable; adds to or overrides the defaults and the config.
    #[arg(long = "tolerance", value_name = "METRIC=FRACTION")]
    pub tolerances: Vec<String>,
    /// Gate only what --config and --tolerance list (drop the defaults, frame.avg and
    /// frame.p99 at 10%).
    #[arg(long)]
    pub no_default_tolerances: bool,
    /// Judge even when an input lost frames (dropped frames, a truncated or corrupt file,
    /// a writer that never closed it); without it such a gate is inconclusive (exit 2).
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

/// The tolerances this invocation gates on.
fn gate_config(args: &Args, cfg: &config::Config) -> anyhow::Result<GateConfig> {
    let keep_defaults = !args.no_default_tolerances && cfg.gate_keeps_defaults;
    let mut g = if keep_defaults {
        GateConfig::default()
    } else {
        GateConfig::empty()
    };
    g.allow_damaged = args.allow_damaged;
    if let Some(listed) = &cfg.gate {
        // Each replaces a default of the same metric, however either is spelt.
        for (metric, tolerance) in &listed.tolerances {
            g.set(metric, *tolerance)?;
        }
    }
    let mut given: Vec<(&str, String)> = Vec::with_capacity(args.tolerances.len());
    for arg in &args.tolerances {
        // A metric given twice is ambiguous (which tolerance was meant?): refused, as a
        // JSON config naming a metric twice is, never settled by the order of the flags;
        // so is a metric given once as written and once by its alias (`frame.P99`).
        let metric = arg.split_once('=').map_or(arg.as_str(), |(m, _)| m.trim());
        let canonical = framewise_analysis::gate::alias_path(metric);
        if let Some((first, _)) = given.iter().find(|(_, c)| *c == canonical) {
            if *first == metric {
                bail!(
                    "--tolerance {metric} is given twice: which tolerance was meant? give it once"
                );
            }
            bail!("--tolerance {metric} names the metric --tolerance {first} already names: which tolerance was meant? give it once");
        }
        given.push((metric, canonical));
        g.apply_arg(arg)
            .with_context(|| format!("--tolerance {arg}"))?;
    }
    if g.tolerances.is_empty() {
        bail!("nothing to gate: no tolerances (defaults dropped and none configured); add --tolerance METRIC=FRACTION");
    }
    Ok(g)
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[&args.base, &args.cand])?;
    let outcome = evaluate(&args)?;
    output::emit(&args.output, &outcome.view)?;
    Ok(outcome.exit_code)
}

/// The verb's result without printing it (`framewise gate` and the MCP server's
/// `compare_captures` both call this): the verdict's exit code.
pub fn evaluate(args: &Args) -> anyhow::Result<Outcome<GateView>> {
    let cfg = config::load(&args.config)?;
    let g = gate_config(args, &cfg)?;
    let Pair {
        base,
        cand,
        budget_note,
    } = load_pair(&args.base, &args.cand, &args.input, cfg.budget_ns())?;
    let result = gate(&base.summary, &cand.summary, &g)?;
    let exit_code = exit(result.verdict);
    Ok(Outcome {
        view: GateView {
            base,
            cand,
            budget_note,
            result,
            list: args.list,
        },
        exit_code,
    })
}

/// `framewise gate --format json`: the result's own members and `inputs`, in name order as
/// every JSON document of the CLI.
#[derive(Serialize)]
struct GateDoc<'a> {
    #[serde(flatten)]
    result: &'a GateResult,
    inputs: InputsDoc<'a>,
}

/// A gate's result with its inputs.
pub struct GateView {
    /// The base capture.
    pub base: InputInfo,
    /// The candidate capture.
    pub cand: InputInfo,
    /// Why the candidate is judged against another budget than the one it declares.
    pub budget_note: Option<String>,
    /// The analysis crate's result.
    pub result: GateResult,
    list: ListArgs,
}

/// Checks for people: what decides the verdict first, in the verdict's precedence (path
/// order within a status).
fn severity(s: CheckStatus) -> u8 {
    match s {
        CheckStatus::Incomparable => 0,
        CheckStatus::Regressed => 1,
        CheckStatus::MissingInCandidate => 2,
        CheckStatus::Incomplete => 3,
        CheckStatus::TooFewValues => 4,
        CheckStatus::FrameCountsDiffer => 5,
        CheckStatus::NotInBase => 6,
        CheckStatus::Absent => 7,
        CheckStatus::Pass => 8,
    }
}

/// The verdict as a word for people.
pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::Inconclusive => "INCONCLUSIVE",
        Verdict::Incomparable => "INCOMPARABLE",
        Verdict::Error => "ERROR",
    }
}

fn worsening_cell(c: &GateCheck) -> String {
    match (c.worsening, c.status) {
        (Some(w), _) => format!("{:+.1}%", w * 100.0),
        (None, CheckStatus::Regressed) => "from 0".to_owned(),
        _ => NONE.to_owned(),
    }
}

fn tolerance_cell(t: f64) -> String {
    if t == 0.0 {
        "exact".to_owned()
    } else {
        format!("{:.1}%", t * 100.0)
    }
}

impl GateView {
    /// The checks people see, most decisive first, and a word on those left out.
    /// `in_order`: keep the result's order when every check fits (markdown's table stays
    /// as it was unless it must be cut).
    fn shown(&self, in_order: bool) -> (Vec<&GateCheck>, Option<String>) {
        let mut checks: Vec<&GateCheck> = self.result.checks.iter().collect();
        if self.list.all || (in_order && checks.len() <= self.list.top) {
            return (checks, None);
        }
        checks.sort_by_key(|c| severity(c.status));
        let (shown, hidden) = self.list.cut(checks.len());
        let mut left: Vec<(CheckStatus, usize)> = Vec::new();
        for c in &checks[shown..] {
            match left.iter_mut().find(|(s, _)| *s == c.status) {
                Some((_, n)) => *n += 1,
                None => left.push((c.status, 1)),
            }
        }
        checks.truncate(shown);
        let note = (hidden > 0).then(|| {
            let by: Vec<String> = left
                .iter()
                .map(|(s, n)| format!("{n} {}", serde_name(s)))
                .collect();
            format!(
                "… {} more {} ({}) not shown (--all to list every one, --format json for machines)",
                hidden,
                Noun("check", "checks").of(hidden),
                by.join(", ")
            )
        });
        (checks, note)
    }

    /// The reasons people read, and how many were left out.
    fn reasons(&self) -> (&[String], usize) {
        self.list.take(&self.result.reasons)
    }

    fn table(checks: &[&GateCheck]) -> Table {
        let mut t = Table::new(&[
            "metric",
            "unit",
            "base",
            "cand",
            "worse by",
            "tolerance",
            "status",
        ])
        .align(1, Align::Left)
        .align(6, Align::Left);
        for c in checks {
            let mut metric = c.metric.clone();
            if let Some(configured) = &c.configured {
                metric.push_str(&format!(" (from {configured})"));
            }
            t.row(vec![
                metric,
                table::unit(&c.metric).to_owned(),
                table::metric(&c.metric, c.base),
                table::metric(&c.metric, c.cand),
                worsening_cell(c),
                tolerance_cell(c.tolerance),
                serde_name(&c.status),
            ]);
        }
        t
    }

    fn headline(&self) -> String {
        format!(
            "{} (exit {})",
            verdict_word(self.result.verdict),
            self.result.exit_code
        )
    }
}

impl Report for GateView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(GateDoc {
            result: &self.result,
            inputs: InputsDoc::new(self.base.doc(), self.cand.doc()),
        })?)
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
        out.push_str(&format!("\n{}\n", self.headline()));
        let (reasons, more) = self.reasons();
        for r in reasons {
            out.push_str(&format!("  {}\n", table::inline(r)));
        }
        if more > 0 {
            out.push_str(&format!(
                "  … and {more} more (every check is in the table)\n"
            ));
        }
        out.push('\n');
        let (checks, note) = self.shown(false);
        Self::table(&checks).console(out, 0);
        if let Some(note) = note {
            out.push_str(&format!("{note}\n"));
        }
        side_defects_console(&self.result.defects, out);
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!(
            "### framewise gate: {}\n\n`{}` → `{}`\n\n",
            self.headline(),
            table::inline(&self.base.file),
            table::inline(&self.cand.file)
        ));
        if let Some(note) = &self.budget_note {
            out.push_str(&format!("_Note: {note}._\n\n"));
        }
        let (reasons, more) = self.reasons();
        for r in reasons {
            out.push_str(&format!("- {}\n", table::inline(r)));
        }
        if more > 0 {
            out.push_str(&format!("- … and {more} more\n"));
        }
        out.push('\n');
        let (checks, note) = self.shown(true);
        Self::table(&checks).markdown(out);
        if let Some(note) = note {
            out.push_str(&format!("\n_{note}_\n"));
        }
        side_defects_markdown(&self.result.defects, out);
    }

    fn annotations(&self) -> Vec<Annotation> {
        let mut out = Vec::new();
        match self.result.verdict {
            Verdict::Fail => {
                for c in &self.result.checks {
                    let message = match c.status {
                        CheckStatus::Regressed => format!(
                            "{} regressed: {} -> {} {} ({} worse, tolerance {})",
                            c.metric,
                            table::metric(&c.metric, c.base),
                            table::metric(&c.metric, c.cand),
                            table::unit(&c.metric),
                            worsening_cell(c),
                            tolerance_cell(c.tolerance)
                        ),
                        CheckStatus::MissingInCandidate => format!(
                            "{}: the base has {} and the candidate lacks it",
                            c.metric,
                            table::metric(&c.metric, c.base)
                        ),
                        _ => continue,
                    };
                    out.push(Annotation {
                        level: "error",
                        title: format!("framewise gate: {}", c.metric),
                        message,
                    });
                }
            }
            Verdict::Pass => {}
            other => out.push(Annotation {
                level: "warning",
                title: format!("framewise gate: {}", verdict_word(other)),
                message: self.result.reasons.join("; "),
            }),
        }
        out
    }
}
