//! `framewise hitches FILE`: every hitch (DESIGN.md's rule) with ranked classifications,
//! each with a confidence and the evidence it rests on.
//!
//! Exit: 0 no hitch; 1 at least one hitch (the rule was breached); 2 when no frame could
//! be judged (no frame with a known period); 4 when the file cannot be read.

use std::path::PathBuf;

use framewise_analysis::gate::Verdict;
use framewise_analysis::hitch::Hitch;
use framewise_analysis::{find_hitches, HitchOptions, HitchReport};

use crate::commands::{defects_console, defects_markdown, exit, serde_name};
use crate::config::{self, ConfigArgs};
use crate::input::{self, InputArgs, Need};
use crate::output::{self, Annotation, OutputArgs, Report};
use crate::table::{self, Align, Table, NONE};

/// `framewise hitches`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The capture: .sgpt, .litecap or Chrome trace JSON.
    pub file: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[&args.file])?;
    let cfg = config::load(&args.config)?;
    config::require_toml(&cfg, "hitches")?;
    let capture = input::load(&args.file, &args.input.options(Need::Frames))?;
    let options = HitchOptions {
        budget_ns: cfg.budget_ns(),
        ..HitchOptions::default()
    };
    let report = find_hitches(&capture, &options);
    let verdict = if report.frames_judged == 0 {
        Verdict::Inconclusive
    } else if report.hitches.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let view = HitchesView {
        file: input::shown(&args.file),
        report,
    };
    output::emit(&args.output, &view)?;
    Ok(exit(verdict))
}

struct HitchesView {
    file: String,
    report: HitchReport,
}

fn best(h: &Hitch) -> String {
    h.classification.first().map_or_else(
        || NONE.to_owned(),
        |g| format!("{} ({})", g.guess.name(), serde_name(&g.confidence)),
    )
}

impl HitchesView {
    fn table(&self) -> Table {
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
        for h in &self.report.hitches {
            t.row(vec![
                h.frame.to_string(),
                h.phase.clone().unwrap_or_else(|| NONE.to_owned()),
                table::ms(Some(h.duration_ms)),
                table::ms(Some(h.work_ms)),
                table::ms(h.gpu_ms),
                table::ms(Some(h.threshold_ms)),
                table::ms(Some(h.median_ms)),
                table::ms(Some(h.excess_ms)),
                best(h),
            ]);
        }
        t
    }

    fn rule_line(&self) -> String {
        format!(
            "rule: {} · budget {} · {} frames judged",
            self.report.rule.rule,
            table::ms_unit(Some(self.report.rule.budget_ms)),
            self.report.frames_judged
        )
    }

    fn guesses(h: &Hitch, bullet: &str, out: &mut String) {
        for (i, g) in h.classification.iter().enumerate() {
            let mut what = g.guess.name().to_owned();
            if let Some(scope) = &g.scope {
                what.push_str(&format!(" `{scope}`"));
            }
            if let Some(site) = &g.site {
                what.push_str(&format!(" at {site}"));
            }
            out.push_str(&format!(
                "{bullet}{}. {what} ({}): {}\n",
                i + 1,
                serde_name(&g.confidence),
                g.evidence
            ));
        }
    }

    fn count_line(&self) -> String {
        match self.report.hitches.len() {
            _ if self.report.frames_judged == 0 => {
                "inconclusive: no frame with a known period to judge".to_owned()
            }
            0 => "no hitches".to_owned(),
            1 => "1 hitch".to_owned(),
            n => format!("{n} hitches"),
        }
    }
}

impl Report for HitchesView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.report)?)
    }

    fn console(&self, out: &mut String) {
        out.push_str(&format!("{}\n  {}\n", self.file, self.rule_line()));
        out.push_str(&format!(
            "  grade: counters {} · timing {}\n\n{}\n",
            serde_name(&self.report.grade.counters),
            serde_name(&self.report.grade.timing),
            self.count_line()
        ));
        if !self.report.hitches.is_empty() {
            out.push_str("times in ms\n");
            self.table().console(out, 0);
            for h in &self.report.hitches {
                out.push_str(&format!("\nframe {}\n", h.frame));
                Self::guesses(h, "  ", out);
            }
        }
        defects_console(&self.report.defects, "defects", out);
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!(
            "### framewise hitches: `{}` — {}\n\n{}\n\n",
            self.file,
            self.count_line(),
            self.rule_line()
        ));
        if !self.report.hitches.is_empty() {
            self.table().markdown(out);
            for h in &self.report.hitches {
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
