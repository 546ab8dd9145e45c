//! `framewise attribute FILE [--frame N]`: scopes, with their call sites, ranked by
//! contribution to one frame's excess over the rolling median, or (without `--frame`) to
//! the p95 frames' mean excess over the median period. A ranking, not an accounting.
//!
//! Exit: 0 ranked; 2 inconclusive (too few frames for a p95, or the frame has no usable
//! period); 4 when the file cannot be read or the frame does not exist (or was lost to
//! damage: the error names its record).

use std::path::PathBuf;

use anyhow::bail;
use framewise_analysis::gate::Verdict;
use framewise_analysis::model::Defect;
use framewise_analysis::{attribute, AttributeTarget, Attribution, InconclusiveAttribution};

use crate::commands::{defects_console, defects_markdown, defects_pointer, exit, Outcome};
use crate::input::{self, InputArgs, Need};
use crate::list::{self, ListArgs, Noun};
use crate::output::{self, OutputArgs, Report};
use crate::table::{self, inline, Align, Table, NONE};

/// `framewise attribute`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The capture: .sgpt, .litecap or Chrome trace JSON.
    pub file: PathBuf,
    /// Attribute this frame's excess (by the frame index the capture records; `framewise
    /// hitches` lists them). Without it: the p95 excess.
    #[arg(long, value_name = "N")]
    pub frame: Option<u64>,
    #[command(flatten)]
    pub list: ListArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[&args.file])?;
    let outcome = evaluate(&args)?;
    output::emit(&args.output, &outcome.view)?;
    Ok(outcome.exit_code)
}

/// The verb's result without printing it (`framewise attribute` and the MCP server's
/// `attribute` both call this): 0 ranked, 2 inconclusive.
pub fn evaluate(args: &Args) -> anyhow::Result<Outcome<AttributeView>> {
    let capture = input::load(&args.file, &args.input.options(Need::Frames))?;
    let target = match args.frame {
        Some(n) => AttributeTarget::Frame(n),
        None => AttributeTarget::P95Excess,
    };
    let file = input::shown(&args.file);
    let (result, verdict) = match attribute(&capture, target) {
        Ok(a) => (Ok(a), Verdict::Pass),
        Err(e) if e.is_inconclusive() => (
            Err(InconclusiveAttribution::new(&capture, target, &e)),
            Verdict::Inconclusive,
        ),
        Err(e) => bail!("{file}: {e}"),
    };
    Ok(Outcome {
        view: AttributeView {
            file,
            target,
            result,
            list: args.list,
        },
        exit_code: exit(verdict),
    })
}

/// An attribution with the file it came from.
pub struct AttributeView {
    /// The path as given.
    pub file: String,
    target: AttributeTarget,
    /// The attribution, or why it is inconclusive.
    pub result: Result<Attribution, InconclusiveAttribution>,
    list: ListArgs,
}

const SCOPES: Noun = Noun("scope", "scopes");

impl AttributeView {
    fn defects(&self) -> &[Defect] {
        match &self.result {
            Ok(a) => &a.defects,
            Err(i) => &i.defects,
        }
    }
}

impl AttributeView {
    fn target_words(&self) -> String {
        match self.target {
            AttributeTarget::Frame(n) => format!("frame {n}"),
            AttributeTarget::P95Excess => "the p95 excess".to_owned(),
        }
    }

    fn table(&self, a: &Attribution) -> (Table, usize) {
        let mut t = Table::new(&[
            "rank",
            "scope",
            "site",
            "value",
            "median",
            "contribution",
            "share of excess",
        ])
        .align(0, Align::Right)
        .align(1, Align::Left)
        .align(2, Align::Left);
        let (shown, hidden) = self.list.take(&a.ranking);
        for (i, c) in shown.iter().enumerate() {
            t.row(vec![
                (i + 1).to_string(),
                c.scope.clone(),
                c.site.clone().unwrap_or_else(|| NONE.to_owned()),
                table::ms(Some(c.value_ms)),
                table::ms(Some(c.baseline_ms)),
                table::ms(Some(c.contribution_ms)),
                table::ratio_pct(Some(c.share_of_excess)),
            ]);
        }
        (t, hidden)
    }

    fn summary_line(a: &Attribution) -> String {
        let what = match a.frame {
            Some(f) => format!("frame {f}"),
            None => format!("mean of the {} frames at or above p95", a.frames),
        };
        format!(
            "{what}: period {} against a baseline of {}: excess {}",
            table::ms_unit(Some(a.period_ms)),
            table::ms_unit(Some(a.baseline_ms)),
            table::ms_unit(Some(a.excess_ms))
        )
    }
}

impl Report for AttributeView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(match &self.result {
            Ok(a) => serde_json::to_value(a)?,
            Err(i) => serde_json::to_value(i)?,
        })
    }

    fn console(&self, out: &mut String) {
        out.push_str(&format!("{}\n", inline(&self.file)));
        let file = inline(&list::shell_word(&self.file)).into_owned();
        let next = format!(
            "next: framewise hitches {file} lists single slow frames; framewise attribute {file} --frame N ranks one\n"
        );
        match &self.result {
            Err(i) => {
                out.push_str(&format!(
                    "  inconclusive: cannot attribute {}: {}\n",
                    self.target_words(),
                    inline(&i.reason)
                ));
                defects_pointer(self.defects(), out);
                if self.target == AttributeTarget::P95Excess {
                    out.push_str(&format!("\n{next}"));
                }
            }
            Ok(a) => {
                out.push_str(&format!("  {}\n", Self::summary_line(a)));
                defects_pointer(self.defects(), out);
                out.push('\n');
                if a.excess_ms <= 0.0 {
                    out.push_str(&format!(
                        "nothing to attribute: {} no slower than the baseline (--format json still has the ranking)\n",
                        if a.frame.is_some() { "this frame is" } else { "these frames are" }
                    ));
                } else if a.ranking.is_empty() {
                    out.push_str("no scope spent more than its median\n");
                } else {
                    out.push_str("times in ms · median: the scope's median per frame · contribution: value − median\n");
                    let (t, hidden) = self.table(a);
                    t.console(out, 0);
                    list::more_console(hidden, SCOPES, 0, out);
                    out.push_str(&format!("\n{}\n", inline(&a.note)));
                }
                if self.target == AttributeTarget::P95Excess {
                    out.push_str(&format!("\n{next}"));
                }
            }
        }
        defects_console(self.defects(), "defects", out);
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!(
            "### framewise attribute: `{}`, {}\n\n",
            inline(&self.file),
            self.target_words()
        ));
        match &self.result {
            Err(i) => out.push_str(&format!("Inconclusive: {}\n", inline(&i.reason))),
            Ok(a) => {
                out.push_str(&format!("{}\n\n", Self::summary_line(a)));
                if a.excess_ms <= 0.0 {
                    out.push_str(&format!(
                        "Nothing to attribute: {} no slower than the baseline (`--format json` still has the ranking).\n",
                        if a.frame.is_some() { "this frame is" } else { "these frames are" }
                    ));
                } else if a.ranking.is_empty() {
                    out.push_str("No scope spent more than its median.\n");
                } else {
                    let (t, hidden) = self.table(a);
                    t.markdown(out);
                    list::more_markdown(hidden, SCOPES, out);
                }
                out.push_str(&format!("\n_{}_\n", inline(&a.note)));
            }
        }
        defects_markdown(self.defects(), "Defects", out);
    }
}
