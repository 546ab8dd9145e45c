//! `framewise bisect [FILE]`: a measured bisection a game ran (its engine integration drives
//! `framewise_census::bisect` inside the game and writes `.framewise/bisect.json`), ranked:
//! what each candidate saved when hidden, against the measured spread.
//!
//! Exit: 0 printed, every candidate restored; 1 the world did not come back as it was (the
//! report's or a candidate's `restored` is false, or a candidate lists
//! `restore_differences`: its snapshot differed after it was shown, whatever its flag says);
//! 2 nothing was measured (no candidate); 4 unreadable input, not a bisection report.

use std::path::{Path, PathBuf};

use framewise_census::{parse_bisect, BisectReport, Delta, Stat, BISECT_FILE};
use serde::Serialize;
use serde_json::Value;

use crate::commands::{input_or_dir_file, Outcome};
use crate::input;
use crate::ledger::DirArgs;
use crate::list::{self, ListArgs, Noun};
use crate::output::{self, Annotation, OutputArgs, Report};
use crate::table::{inline, Align, Table, NONE};

/// The largest report read (a report of every entity of a huge scene is far below this).
const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

/// `framewise bisect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A bisection report (bisect.json) [default: bisect.json in the .framewise/ directory].
    pub input: Option<PathBuf>,
    #[command(flatten)]
    pub dir: DirArgs,
    #[command(flatten)]
    pub list: ListArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The document `framewise bisect --format json` prints (docs/cli/bisect.md,
/// `framewise.bisect-report/1`).
#[derive(Clone, Debug, Serialize)]
pub struct BisectView {
    schema: &'static str,
    /// The input, as given.
    pub input: String,
    /// The report, whole (`framewise.bisect/1`), its results ranked.
    pub bisect: BisectReport,
    #[serde(skip)]
    list: ListArgs,
}

/// The input `args` name, or the default `bisect.json`.
fn input_path(args: &Args) -> anyhow::Result<PathBuf> {
    input_or_dir_file(
        args.input.as_deref(),
        &args.dir,
        BISECT_FILE,
        "no bisection yet (a game writes it when its engine integration runs one: framewise-bevy's FRAMEWISE_BISECT_AT)",
    )
}

/// Reads a bisection report: a regular, non-empty file holding `framewise.bisect/1`.
fn read_report(path: &Path) -> anyhow::Result<BisectReport> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    if meta.is_dir() {
        anyhow::bail!("{shown}: a directory, not a bisection report");
    }
    if !meta.is_file() {
        anyhow::bail!("{shown}: not a regular file (a FIFO or device holds no bisection report)");
    }
    if meta.len() == 0 {
        anyhow::bail!("{shown}: empty file");
    }
    if meta.len() > MAX_REPORT_BYTES {
        anyhow::bail!(
            "{shown}: {} bytes, more than a bisection report holds ({MAX_REPORT_BYTES})",
            meta.len()
        );
    }
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| anyhow::anyhow!("{shown}: not a bisection report: not UTF-8"))?;
    parse_bisect(text).map_err(|e| anyhow::anyhow!("{shown}: {e}"))
}

/// Reads the input and builds the view: what the CLI prints and the MCP tool returns.
pub fn evaluate(args: &Args) -> anyhow::Result<Outcome<BisectView>> {
    let path = input_path(args)?;
    let mut report = read_report(&path)?;
    report.results.sort_by_key(|r| r.rank);
    let exit_code = if !world_restored(&report) {
        // The world not coming back is a finding whatever was measured.
        1
    } else if !report.results.iter().any(measured) {
        2
    } else {
        0
    };
    Ok(Outcome {
        view: BisectView {
            schema: "framewise.bisect-report/1",
            input: input::shown(&path),
            bisect: report,
            list: args.list,
        },
        exit_code,
    })
}

/// Whether the world came back after a candidate: its flag says so **and** it lists no
/// difference (a report whose flag says `true` beside a difference is not restored: the
/// difference is the evidence, the flag a claim).
fn restored(r: &framewise_census::bisect::CandidateResult) -> bool {
    r.restored && r.restore_differences.is_empty()
}

/// Whether the whole world came back: the report says so and every candidate was restored.
fn world_restored(report: &BisectReport) -> bool {
    report.restored && report.results.iter().all(restored)
}

/// The costliest candidate measured: the first by rank with a delta (one the engine failed on
/// is no cost, whatever its rank); `None` when none was measured.
fn costliest(
    results: &[framewise_census::bisect::CandidateResult],
) -> Option<&framewise_census::bisect::CandidateResult> {
    results
        .iter()
        .filter(|r| measured(r))
        .min_by_key(|r| r.rank)
}

/// What the `restored` column says of a candidate not restored.
fn not_restored_text(r: &framewise_census::bisect::CandidateResult) -> String {
    if r.restore_differences.is_empty() {
        "NO (the engine said so; it listed no difference)".to_owned()
    } else {
        format!("NO: {}", r.restore_differences.join("; "))
    }
}

/// Whether a candidate was measured: a delta of it is known on both sides (one whose engine
/// failed, on hide, a frame or show, has none).
fn measured(r: &framewise_census::bisect::CandidateResult) -> bool {
    r.delta_draw_calls.is_some() || r.delta_triangles.is_some() || r.delta_render_ms.is_some()
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let inputs: Vec<&Path> = args.input.iter().map(PathBuf::as_path).collect();
    args.output.check_inputs(&inputs)?;
    let outcome = evaluate(&args)?;
    output::emit(&args.output, &outcome.view)?;
    Ok(outcome.exit_code)
}

/// A number with its unit: whole numbers as integers, milliseconds to 0.01.
fn number(value: f64, ms: bool) -> String {
    if ms {
        format!("{value:.2}")
    } else {
        format!("{value:.0}")
    }
}

fn stat_text(stat: Option<Stat>, ms: bool) -> String {
    stat.map_or_else(
        || format!("{NONE} (not measured)"),
        |s| {
            if s.min == s.max {
                number(s.median, ms)
            } else {
                format!(
                    "{} ({}–{})",
                    number(s.median, ms),
                    number(s.min, ms),
                    number(s.max, ms)
                )
            }
        },
    )
}

fn delta_text(delta: Option<Delta>, ms: bool) -> String {
    match delta {
        None => NONE.to_owned(),
        Some(d) => {
            let sign = if d.delta > 0.0 { "+" } else { "" };
            let noisy = if d.noisy { " (noisy)" } else { "" };
            format!("{sign}{}{noisy}", number(d.delta, ms))
        }
    }
}

const CANDIDATES: Noun = Noun("candidate", "candidates");

impl BisectView {
    fn headline(&self) -> String {
        let b = &self.bisect;
        format!(
            "bisection of {} (engine {}; {} {} per measure after {} warm-up; {} {})",
            inline(&self.input),
            inline(&b.engine),
            b.frames,
            Noun("frame", "frames").of(b.frames as usize),
            b.warmup_frames,
            b.results.len(),
            CANDIDATES.of(b.results.len()),
        )
    }

    fn summary_lines(&self) -> Vec<String> {
        let b = &self.bisect;
        let spread =
            |s: Option<f64>, ms: bool| s.map_or_else(|| NONE.to_owned(), |v| number(v, ms));
        let mut lines = vec![
            format!(
                "baseline: triangles {} · draw calls {} · render ms {}",
                stat_text(b.baseline.triangles, false),
                stat_text(b.baseline.draw_calls, false),
                stat_text(b.baseline.render_ms, true)
            ),
            format!(
                "spread (measured over both baselines): triangles {} · draw calls {} · render ms {}; a Δ within it, or whose frames overlap a baseline's, is noisy",
                spread(b.spread.triangles, false),
                spread(b.spread.draw_calls, false),
                spread(b.spread.render_ms, true)
            ),
            "costs were measured one at a time: they do not sum to the baseline".to_owned(),
        ];
        if let Some(source) = &b.render_ms_source {
            lines.insert(1, format!("render ms measured as: {}", inline(source)));
        }
        if !b.results.is_empty() && !b.results.iter().any(measured) {
            lines.insert(
                0,
                format!(
                    "inconclusive: the engine failed on every candidate ({}): none was measured",
                    b.results.len()
                ),
            );
        }
        let unrestored: Vec<&str> = b
            .results
            .iter()
            .filter(|r| !restored(r))
            .map(|r| r.name.as_str())
            .collect();
        // Names from the report: a line break or an escape in one is shown escaped.
        let unrestored: Vec<String> = unrestored.iter().map(|n| inline(n).into_owned()).collect();
        if unrestored.is_empty() && b.restored {
            lines.push("world restored: every candidate's snapshot matched".to_owned());
        } else if unrestored.is_empty() {
            lines.push(
                "world NOT restored: the report says so, and names no candidate after which it differed"
                    .to_owned(),
            );
        } else {
            lines.push(format!(
                "world NOT restored after: {}",
                list::some_names(&unrestored, 5)
            ));
        }
        lines
    }

    fn table(&self) -> (Table, usize) {
        let (shown, hidden) = self.list.take(&self.bisect.results);
        let mut t = Table::new(&[
            "rank",
            "candidate",
            "census tris",
            "Δ triangles",
            "Δ draw calls",
            "Δ render ms",
            "restored",
            "site",
        ])
        .align(1, Align::Left)
        .align(6, Align::Left)
        .align(7, Align::Left);
        for r in shown {
            t.row(vec![
                r.rank.to_string(),
                r.name.clone(),
                r.census_triangles.to_string(),
                delta_text(r.delta_triangles, false),
                delta_text(r.delta_draw_calls, false),
                delta_text(r.delta_render_ms, true),
                match (&r.error, restored(r)) {
                    (Some(e), true) => format!("error: {e}"),
                    (Some(e), false) => format!("error: {e}; {}", not_restored_text(r)),
                    (None, true) => "yes".to_owned(),
                    (None, false) => not_restored_text(r),
                },
                r.site.clone(),
            ]);
        }
        (t, hidden)
    }
}

impl Report for BisectView {
    fn json(&self) -> anyhow::Result<Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn console(&self, out: &mut String) {
        out.push_str(&self.headline());
        out.push('\n');
        for line in self.summary_lines() {
            out.push_str(&format!("  {line}\n"));
        }
        let (table, hidden) = self.table();
        if table.is_empty() {
            out.push_str("\n  no candidate was measured\n");
            return;
        }
        out.push_str("\n  ranked, the costliest first (negative Δ: hiding it saved that much):\n");
        table.console(out, 4);
        list::more_console(hidden, CANDIDATES, 4, out);
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!("**{}**\n\n", self.headline()));
        for line in self.summary_lines() {
            out.push_str(&format!("- {line}\n"));
        }
        let (table, hidden) = self.table();
        if table.is_empty() {
            out.push_str("\nNo candidate was measured.\n");
            return;
        }
        out.push_str("\n### Ranked, the costliest first\n\n");
        table.markdown(out);
        list::more_markdown(hidden, CANDIDATES, out);
    }

    fn annotations(&self) -> Vec<Annotation> {
        let mut out: Vec<Annotation> = self
            .bisect
            .results
            .iter()
            .filter(|r| !restored(r))
            .map(|r| Annotation {
                level: "error",
                title: format!("bisect: {} not restored", r.name),
                message: if r.restore_differences.is_empty() {
                    "the engine said the world did not come back; it listed no difference"
                        .to_owned()
                } else {
                    r.restore_differences.join("; ")
                },
            })
            .collect();
        if !self.bisect.restored && self.bisect.results.iter().all(restored) {
            out.push(Annotation {
                level: "error",
                title: "bisect: world not restored".to_owned(),
                message: "the report says so, and names no candidate after which it differed"
                    .to_owned(),
            });
        }
        if let Some(top) = costliest(&self.bisect.results) {
            out.push(Annotation {
                level: "notice",
                title: format!("bisect: {} costs the most", top.name),
                message: format!(
                    "hiding it: Δ triangles {}, Δ draw calls {}, Δ render ms {} (site: {})",
                    delta_text(top.delta_triangles, false),
                    delta_text(top.delta_draw_calls, false),
                    delta_text(top.delta_render_ms, true),
                    top.site
                ),
            });
        }
        out
    }
}
