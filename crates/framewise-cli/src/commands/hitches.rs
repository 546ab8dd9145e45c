//! `framewise hitches FILE`: every hitch (the rule in docs/CONCEPTS.md) with ranked classifications,
//! each with a confidence and the evidence it rests on.
//!
//! With `--append`, the capture's incident records also go to `.framewise/perf.jsonl`, once
//! ([`super::hitches_append`]).
//!
//! Exit: 0 no hitch; 1 at least one hitch (the rule was breached); 2 when no hitch was found
//! in a capture that lost frames (one of them could have been a hitch), or when no frame could
//! be judged (no frame with a known period); 4 when the file cannot be read, or `--append`
//! finds no `.framewise/` or cannot write to it.

use std::path::PathBuf;

use framewise_analysis::hitch::Hitch;
use framewise_analysis::{find_hitches, summarize, HitchOptions, HitchReport};

use crate::commands::hitches_append::{self, AppendSummary};
use crate::commands::{
    defects_console, defects_markdown, defects_pointer, exit, serde_name, Outcome,
};
use crate::config::{self, ConfigArgs};
use crate::input::{self, InputArgs, Need};
use crate::list::{self, ListArgs, Noun};
use crate::output::{self, Annotation, Format, OutputArgs, Report};
use crate::table::{self, inline, Align, Table, NONE};

/// `framewise hitches`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The capture: .sgpt, .litecap or Chrome trace JSON.
    pub file: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub list: ListArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Also derive the capture's incident records (hitch, usermark, heartbeat, jitter,
    /// session-end) as the live log writes them, and append to `.framewise/perf.jsonl` those
    /// not there yet (an .sgpt capture; appending it twice adds nothing).
    #[arg(long)]
    pub append: bool,
    /// The `.framewise/` directory `--append` writes to [default: the nearest from the
    /// capture's directory up, else $FRAMEWISE_DIR, else the nearest from the working
    /// directory up].
    #[arg(long, value_name = "DIR", requires = "append")]
    pub dir: Option<PathBuf>,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[&args.file])?;
    // With no hitch, people ask "then what was my slowest frame?": the summary's longest
    // period and work answer it (console only; the JSON is the report alone).
    let console = args.output.stdout_format()? == Format::Console;
    let outcome = evaluate(&args, console)?;
    output::emit(&args.output, &outcome.view)?;
    if let Some(append) = &outcome.view.append {
        say_raw!("{}", append.lines());
    }
    Ok(outcome.exit_code)
}

/// The verb's result without printing it (`framewise hitches` and the MCP server's
/// `find_hitches` both call this): 0 no hitch, 1 a hitch, 2 no frame judged or no hitch
/// in a capture that lost frames. `longest`:
/// also find the longest period and work when there is no hitch (the console says them).
pub fn evaluate(args: &Args, longest: bool) -> anyhow::Result<Outcome<HitchesView>> {
    let cfg = config::load(&args.config)?;
    config::require_toml(&cfg, "hitches")?;
    // Where to append is settled before the capture is read: a missing directory fails fast.
    let append_to = args
        .append
        .then(|| hitches_append::locate(args.dir.as_deref(), &args.file))
        .transpose()?;
    let capture = input::load(&args.file, &args.input.options(Need::Frames))?;
    let options = HitchOptions {
        budget_ns: cfg.budget_ns(),
        ..HitchOptions::default()
    };
    let report = find_hitches(&capture, &options);
    let verdict = report.verdict();
    let append = match append_to {
        Some((dir, chosen_by)) => Some(hitches_append::append(&args.file, dir, chosen_by)?),
        None => None,
    };
    let longest = (longest && report.hitches.is_empty() && report.frames_judged > 0).then(|| {
        let s = summarize(&capture);
        (s.frame.times.max, s.work.times.max)
    });
    Ok(Outcome {
        view: HitchesView {
            file: input::shown(&args.file),
            report,
            list: args.list,
            longest,
            append,
        },
        exit_code: exit(verdict),
    })
}

/// A hitch report with the file it came from.
pub struct HitchesView {
    /// The path as given.
    pub file: String,
    /// The analysis crate's report.
    pub report: HitchReport,
    list: ListArgs,
    /// The longest period and work, ms, when there is no hitch (console only).
    longest: Option<(Option<f64>, Option<f64>)>,
    /// What `--append` did.
    pub append: Option<AppendSummary>,
}

/// `hitches --format json`: the verdict, its exit code and the analysis report
/// (framewise-analysis's `HitchesDoc`), and `append` under `--append`.
#[derive(serde::Serialize)]
struct HitchesJson<'a> {
    #[serde(flatten)]
    doc: framewise_analysis::HitchesDoc<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    append: Option<&'a AppendSummary>,
}

const HITCHES: Noun = Noun("hitch", "hitches");

/// How many hitches' evidence the console shows without `--all` (the worst by excess).
const EVIDENCE: usize = 3;

fn best(h: &Hitch) -> String {
    h.classification.first().map_or_else(
        || NONE.to_owned(),
        |g| format!("{} ({})", g.guess.name(), g.confidence.name()),
    )
}

impl HitchesView {
    fn table(&self, hitches: &[Hitch]) -> Table {
        let mut t = Table::new(&[
            "frame",
            "phase",
            "period",
            "work",
            "gpu",
            "threshold",
            "median",
            "excess",
            "best guess",
        ])
        .align(0, Align::Right)
        .align(1, Align::Left)
        .align(8, Align::Left);
        for h in hitches {
            t.row(vec![
                h.frame.to_string(),
                h.phase.clone().unwrap_or_else(|| NONE.to_owned()),
                table::ms(Some(h.duration_ms)),
                table::ms(Some(h.work_ms)),
                table::ms(h.gpu_ms),
                table::ms(Some(h.threshold_ms)),
                table::ms(h.median_ms),
                table::ms(Some(h.excess_ms)),
                best(h),
            ]);
        }
        t
    }

    fn rule_line(&self) -> String {
        format!(
            "rule: {} · budget {} · {} frames judged",
            inline(&self.report.rule.rule),
            table::ms_unit(Some(self.report.rule.budget_ms)),
            self.report.frames_judged
        )
    }

    fn guesses(h: &Hitch, bullet: &str, out: &mut String) {
        for (i, g) in h.classification.iter().enumerate() {
            let mut what = g.guess.name().to_owned();
            if let Some(scope) = &g.scope {
                what.push_str(&format!(" `{}`", inline(scope)));
            }
            if let Some(site) = &g.site {
                what.push_str(&format!(" at {}", inline(site)));
            }
            out.push_str(&format!(
                "{bullet}{}. {what} ({}): {}\n",
                i + 1,
                g.confidence.name().to_owned(),
                inline(&g.evidence)
            ));
        }
    }

    /// `2 hitches`, `no hitches`.
    fn count_words(&self) -> String {
        match self.report.hitches.len() {
            0 if self.report.lost_frames_hide_a_hitch() => {
                "inconclusive: no hitches in the frames read, but the capture lost frames (see its defects)".to_owned()
            }
            0 => "no hitches".to_owned(),
            n => HITCHES.count(n),
        }
    }

    /// Why "no hitches", with the slowest frame's numbers.
    fn no_hitch_lines(&self) -> String {
        let Some((Some(period), work)) = self.longest else {
            return "no frame's period passed the rule's threshold\n".to_owned();
        };
        let mut lines = format!(
            "the longest period, {}, did not pass the rule's threshold\n",
            table::ms_unit(Some(period))
        );
        if let Some(work) = work.filter(|w| *w > period) {
            lines.push_str(&format!(
                "the longest work time, {}, is not judged: the rule judges periods (begin to the next frame's begin), what a player feels\n",
                table::ms_unit(Some(work))
            ));
        }
        lines
    }

    fn count_line(&self) -> String {
        match self.report.hitches.len() {
            _ if self.report.frames_judged == 0 => {
                "inconclusive: no frame with a known period to judge".to_owned()
            }
            0 if self.report.lost_frames_hide_a_hitch() => {
                "inconclusive: no hitches in the frames read, but the capture lost frames"
                    .to_owned()
            }
            0 => "no hitches".to_owned(),
            1 => "1 hitch".to_owned(),
            n => format!("{n} hitches"),
        }
    }
}

impl Report for HitchesView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(HitchesJson {
            doc: framewise_analysis::HitchesDoc::new(&self.report),
            append: self.append.as_ref(),
        })?)
    }

    fn console(&self, out: &mut String) {
        let r = &self.report;
        if r.frames_judged == 0 {
            out.push_str(&format!(
                "{}: inconclusive: no frame with a known period to judge\n",
                inline(&self.file)
            ));
        } else {
            out.push_str(&format!(
                "{}: {} in {} frames judged\n",
                inline(&self.file),
                self.count_words(),
                r.frames_judged
            ));
        }
        out.push_str(&format!(
            "  rule: {} · budget {}\n",
            inline(&r.rule.rule),
            table::ms_unit(Some(r.rule.budget_ms))
        ));
        out.push_str(&format!(
            "  grade: counters {} · timing {}\n",
            serde_name(&r.grade.counters),
            serde_name(&r.grade.timing),
        ));
        defects_pointer(&r.defects, out);
        if r.frames_judged == 0 {
            // Said in the first line.
        } else if r.hitches.is_empty() {
            out.push('\n');
            out.push_str(&self.no_hitch_lines());
        } else {
            let (shown, hidden) = self.list.take(&r.hitches);
            out.push_str(
                "\ntimes in ms · period: begin to the next frame's begin · excess: period − rolling median\n",
            );
            self.table(shown).console(out, 0);
            list::more_console(hidden, HITCHES, 0, out);
            // Evidence reads long: the worst few hitches, unless every one is asked for.
            let mut worst: Vec<&Hitch> = r.hitches.iter().collect();
            worst.sort_by(|a, b| {
                b.excess_ms
                    .total_cmp(&a.excess_ms)
                    .then(a.frame.cmp(&b.frame))
            });
            let (with_evidence, _) = if self.list.all {
                (worst.len(), 0)
            } else {
                ListArgs {
                    top: EVIDENCE.min(self.list.top),
                    all: false,
                }
                .cut(worst.len())
            };
            if with_evidence < worst.len() {
                out.push_str(&format!(
                    "\nevidence for the worst {with_evidence} of {} by excess (--all for every one)\n",
                    HITCHES.count(worst.len())
                ));
                worst.truncate(with_evidence);
            } else {
                worst.sort_by_key(|h| h.frame);
            }
            for h in &worst {
                out.push_str(&format!(
                    "\nframe {} (excess {}): guesses, best first\n",
                    h.frame,
                    table::ms_unit(Some(h.excess_ms))
                ));
                Self::guesses(h, "  ", out);
            }
            if let Some(worst) = r.hitches.iter().max_by(|a, b| {
                a.excess_ms
                    .total_cmp(&b.excess_ms)
                    .then(b.frame.cmp(&a.frame))
            }) {
                out.push_str(&format!(
                    "\nnext: framewise attribute {} --frame {}   (the scopes behind the worst hitch)\n",
                    inline(&list::shell_word(&self.file)),
                    worst.frame,
                ));
            }
        }
        defects_console(&r.defects, "defects", out);
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!(
            "### framewise hitches: `{}` — {}\n\n{}\n\n",
            inline(&self.file),
            self.count_line(),
            self.rule_line()
        ));
        if !self.report.hitches.is_empty() {
            let (shown, hidden) = self.list.take(&self.report.hitches);
            self.table(shown).markdown(out);
            list::more_markdown(hidden, HITCHES, out);
            for h in shown {
                out.push_str(&format!("\n**Frame {}**\n\n", h.frame));
                Self::guesses(h, "", out);
            }
        }
        defects_markdown(&self.report.defects, "Defects", out);
    }

    fn annotations(&self) -> Vec<Annotation> {
        self.report
            .hitches
            .iter()
            .map(|h| Annotation {
                level: "warning",
                title: format!("framewise hitch: frame {}", h.frame),
                message: format!(
                    "{}: frame {} took {} (threshold {}): {}",
                    self.file,
                    h.frame,
                    table::ms_unit(Some(h.duration_ms)),
                    table::ms_unit(Some(h.threshold_ms)),
                    h.classification
                        .first()
                        .map_or_else(|| NONE.to_owned(), |g| g.evidence.clone())
                ),
            })
            .collect()
    }
}
