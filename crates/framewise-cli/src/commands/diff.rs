//! `framewise diff BASE CAND`: every metric path either capture has, side by side.
//!
//! A diff reports; it does not decide (there is no tolerance and no noise floor here —
//! `framewise gate` decides). Exit: 0 diffed; 2 when either capture has no frame with a
//! known period (inconclusive); 3 when the timing regimes differ (timing rows are shown
//! but are not a change; counters compare anywhere); 4 when a file cannot be read.

use std::path::{Path, PathBuf};

use framewise_analysis::diff::{Change, DiffRow};
use framewise_analysis::gate::Verdict;
use framewise_analysis::{diff, summarize, Diff, Side, Summary};
use serde_json::json;

use crate::commands::{defects_console, defects_markdown, exit, serde_name, side_defects};
use crate::config::{self, ConfigArgs};
use crate::input::{self, InputArgs, Need};
use crate::output::{self, Annotation, OutputArgs, Report};
use crate::table::{self, Align, Table};

/// `framewise diff`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The base capture (before).
    pub base: PathBuf,
    /// The candidate capture (after).
    pub cand: PathBuf,
    /// Console and markdown: list unchanged metrics too (JSON always has every row).
    #[arg(long)]
    pub all: bool,
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
    /// The `inputs.base` / `inputs.cand` JSON.
    pub fn json(&self) -> serde_json::Value {
        let c = &self.summary.capture;
        json!({
            "file": self.file,
            "source": c.source,
            "frames": c.frames,
            "frames_with_period": self.summary.frame.times.count,
            "grade": self.summary.grade,
            "notes": self.summary.notes,
        })
    }

    /// One console line.
    pub fn line(&self, role: &str) -> String {
        let s = &self.summary;
        format!(
            "{role} {} · {} · {} frames ({} with a period) · timing {} · {} defects",
            self.file,
            serde_name(&s.capture.source),
            s.capture.frames,
            s.frame.times.count,
            serde_name(&s.grade.timing),
            s.defects.len()
        )
    }
}

/// Loads and summarizes both inputs.
pub fn load_pair(
    base: &Path,
    cand: &Path,
    input_args: &InputArgs,
) -> anyhow::Result<(InputInfo, InputInfo)> {
    let options = input_args.options(Need::Summary);
    let b = input::load(base, &options)?;
    let c = input::load(cand, &options)?;
    Ok((
        InputInfo {
            file: input::shown(base),
            summary: summarize(&b),
        },
        InputInfo {
            file: input::shown(cand),
            summary: summarize(&c),
        },
    ))
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[&args.base, &args.cand])?;
    let cfg = config::load(&args.config)?;
    config::require_toml(&cfg, "diff")?;
    let (base, cand) = load_pair(&args.base, &args.cand, &args.input)?;
    let diff = diff(&base.summary, &cand.summary);
    let verdict = if base.summary.is_empty() || cand.summary.is_empty() {
        Verdict::Inconclusive
    } else if !diff.timing_comparable {
        Verdict::Incomparable
    } else {
        Verdict::Pass
    };
    let view = DiffView {
        base,
        cand,
        diff,
        all: args.all,
    };
    output::emit(&args.output, &view)?;
    Ok(exit(verdict))
}

fn change_cell(row: &DiffRow, timing_comparable: bool) -> String {
    let name = serde_name(&row.change);
    if !timing_comparable && !row.metric.starts_with("counter.") {
        format!("{name} (timing incomparable)")
    } else {
        name
    }
}

struct DiffView {
    base: InputInfo,
    cand: InputInfo,
    diff: Diff,
    all: bool,
}

impl DiffView {
    fn table(&self) -> (Table, usize) {
        let mut t = Table::new(&["metric", "unit", "base", "cand", "delta", "pct", "change"])
            .align(1, Align::Left)
            .align(6, Align::Left);
        let mut hidden = 0;
        for row in &self.diff.rows {
            if !self.all && row.change == Change::Same {
                hidden += 1;
                continue;
            }
            t.row(vec![
                row.metric.clone(),
                table::unit(&row.metric).to_owned(),
                table::metric(&row.metric, row.base),
                table::metric(&row.metric, row.cand),
                table::metric_delta(&row.metric, row.delta),
                table::pct(row.pct),
                change_cell(row, self.diff.timing_comparable),
            ]);
        }
        (t, hidden)
    }

    fn status(&self) -> Option<String> {
        if self.base.summary.is_empty() || self.cand.summary.is_empty() {
            Some("inconclusive: a capture has no frame with a known period".to_owned())
        } else if !self.diff.timing_comparable {
            Some(format!(
                "incomparable timing: base timing is {}, candidate timing is {}; only counters compare",
                serde_name(&self.diff.base_grade.timing),
                serde_name(&self.diff.cand_grade.timing)
            ))
        } else {
            None
        }
    }
}

impl Report for DiffView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        let mut v = serde_json::to_value(&self.diff)?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert(
                "inputs".into(),
                json!({"base": self.base.json(), "cand": self.cand.json()}),
            );
        }
        Ok(v)
    }

    fn console(&self, out: &mut String) {
        out.push_str(&format!(
            "{}\n{}\n",
            self.base.line("base"),
            self.cand.line("cand")
        ));
        if let Some(status) = self.status() {
            out.push_str(&format!("{status}\n"));
        }
        out.push('\n');
        let (t, hidden) = self.table();
        if t.is_empty() {
            out.push_str("no metric differs\n");
        } else {
            t.console(out, 0);
        }
        if hidden > 0 {
            out.push_str(&format!(
                "({hidden} unchanged metrics not shown; --all lists them)\n"
            ));
        }
        out.push_str("a diff reports, it does not decide: `framewise gate` applies tolerances\n");
        let defects = &self.diff.defects;
        defects_console(&side_defects(defects, Side::Base), "base defects", out);
        defects_console(&side_defects(defects, Side::Cand), "candidate defects", out);
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!(
            "### framewise diff: `{}` → `{}`\n\n",
            self.base.file, self.cand.file
        ));
        if let Some(status) = self.status() {
            out.push_str(&format!("> {status}\n\n"));
        }
        let (t, hidden) = self.table();
        if t.is_empty() {
            out.push_str("No metric differs.\n");
        } else {
            t.markdown(out);
        }
        if hidden > 0 {
            out.push_str(&format!("\n{hidden} unchanged metrics not shown.\n"));
        }
        let defects = &self.diff.defects;
        defects_markdown(&side_defects(defects, Side::Base), "Base defects", out);
        defects_markdown(&side_defects(defects, Side::Cand), "Candidate defects", out);
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
