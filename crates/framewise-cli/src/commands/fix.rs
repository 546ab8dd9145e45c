//! `framewise fix --title … [--footprints ID,…] [--before W] [--after W]`: records a fix in
//! `.framewise/fixes.jsonl` with its before and after measured from the ledger — by
//! default the build that ran before the latest against the latest (the build of the newest
//! evidence), or any build name (its own records only) or `ISO..ISO` range — each window
//! with its summary and p95 series.
//!
//! Exit: 0 once the fix was appended (or, with `--dry-run`, measured); 4 when there is no
//! `.framewise/`, a window has no evidence, the windows are the same or overlap, a footprint
//! is not in the ledger, a file name is empty, the same fix is already recorded, or the file
//! cannot be written. `--dry-run` refuses what the recording would refuse.

use anyhow::bail;
use framewise_incidents::fold::{
    build_fix, catalogue, parse_window_spec, CatalogueOptions, FixRecord, FixRequest, FixWindow,
    LedgerFiles, LedgerInfo, Occurrences,
};
use framewise_incidents::{now_iso, Appender, FIXES_FILE};
use serde::Serialize;

use crate::commands::issues::parse_footprint_id;
use crate::commands::Outcome;
use crate::ledger::{skipped_line, DirArgs};
use crate::output::{self, OutputArgs, Report};
use crate::table::{self, NONE};

/// `framewise fix`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What was fixed, in a line.
    #[arg(long, value_name = "TEXT")]
    pub title: String,
    /// The footprint ids it addresses, comma-separated: the catalogue lists the fix under
    /// each (`framewise issues` shows the ids).
    #[arg(long, value_name = "ID,...", value_delimiter = ',', value_parser = parse_footprint_id)]
    pub footprints: Vec<String>,
    /// The issue it addresses (a tracker reference or a sentence).
    #[arg(long, value_name = "TEXT")]
    pub issue: Option<String>,
    /// What was done.
    #[arg(long, value_name = "TEXT")]
    pub solution: Option<String>,
    /// The commit that made the change.
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
    /// The files it changed, comma-separated.
    #[arg(long, value_name = "PATH,...", value_delimiter = ',')]
    pub files: Vec<String>,
    /// The window before the change: a build name or `ISO..ISO` [default: the build that
    /// ran before the after window].
    #[arg(long, value_name = "BUILD|ISO..ISO")]
    pub before: Option<String>,
    /// The window after the change: a build name or `ISO..ISO` [default: the latest build,
    /// the one with the newest evidence].
    #[arg(long, value_name = "BUILD|ISO..ISO")]
    pub after: Option<String>,
    /// Measure and print the fix without appending it.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub dir: DirArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The JSON of `fix` (docs/cli/dot-framewise.md).
#[derive(Debug, Serialize)]
pub struct FixDoc {
    /// `framewise.fix/1`.
    pub schema: &'static str,
    /// Whether the record was appended (false under `--dry-run`).
    pub appended: bool,
    /// The file it was (or would be) appended to.
    pub file: String,
    /// The record, exactly as appended.
    pub fix: FixRecord,
    /// What was read.
    pub ledger: LedgerInfo,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[])?;
    let outcome = evaluate(&args)?;
    output::emit(&args.output, &outcome.view)?;
    Ok(outcome.exit_code)
}

/// The verb's result without printing it (`framewise fix` and the MCP server's
/// `record_fix` both call this): measures the fix and appends it (unless `dry_run`); exit
/// 0.
pub fn evaluate(args: &Args) -> anyhow::Result<Outcome<FixView>> {
    if args.title.trim().is_empty() {
        bail!("--title is empty: say what was fixed in a line");
    }
    // `--commit "$(git rev-parse HEAD)"` outside a repository gives an empty one: recorded,
    // it would link the fix to nothing.
    if args.commit.as_deref().is_some_and(|c| c.trim().is_empty()) {
        bail!("--commit is empty: give the fix's commit, or leave --commit out");
    }
    // `--files ""` or `--files a,,b`: a name that names no file.
    if args.files.iter().any(|f| f.trim().is_empty()) {
        bail!("--files holds an empty name: give the files the fix changed, comma-separated, or leave --files out");
    }
    let before = args
        .before
        .as_deref()
        .map(|s| parse_window_spec(s, "before"))
        .transpose()?;
    let after = args
        .after
        .as_deref()
        .map(|s| parse_window_spec(s, "after"))
        .transpose()?;
    let dir = args.dir.locate()?;
    let files = LedgerFiles::read(&dir)?;
    let (ledger, info) = files.ledger();
    // A fix linked to an id the ledger never saw would be listed under no issue: a typo.
    let known = catalogue(
        &ledger,
        &[],
        &CatalogueOptions {
            include_automated: true,
            occurrences: Occurrences::None,
            ..CatalogueOptions::default()
        },
    );
    let unknown: Vec<&str> = args
        .footprints
        .iter()
        .filter(|id| !known.issues.iter().any(|i| &&i.id == id))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        bail!(
            "footprint {} not in {}: `framewise issues` lists the ids the ledger has",
            unknown.join(", "),
            info.dir
        );
    }
    // Each footprint once, in the order given (`a,b,a` is `a,b`).
    let mut footprints: Vec<String> = Vec::with_capacity(args.footprints.len());
    for fp in &args.footprints {
        if !footprints.contains(fp) {
            footprints.push(fp.clone());
        }
    }
    let request = FixRequest {
        title: args.title.clone(),
        issue: args.issue.clone(),
        solution: args.solution.clone(),
        commit: args.commit.clone(),
        files: args.files.clone(),
        footprints,
        before,
        after,
    };
    // Evidence dated after now (a clock set wrong) or before 2020 (a clock reset) is no
    // build's: `history` leaves it out of its timeline, and the default after window (the
    // latest build) must not be it.
    let (current, misdated) = ledger.plausibly_dated(Some(crate::ledger::now_ms()));
    if misdated.future > 0 {
        say!(
            "framewise fix: left out {} record(s) dated after now (a clock set wrong?), as `framewise history` does",
            misdated.future
        );
    }
    if misdated.past > 0 {
        say!(
            "framewise fix: left out {} record(s) dated before 2020 (a clock reset?), as `framewise history` does",
            misdated.past
        );
    }
    let fix = build_fix(&current, request, now_iso())?;
    // The ledger is append-only: a fix recorded twice (the same command run again) would be
    // listed twice for good.
    if let Some(earlier) = files.fixes.iter().rev().find(|f| fix.repeats(f)) {
        bail!(
            "fix \"{}\" is already recorded in {} (at {}) with the same footprints and windows: not recorded twice",
            fix.title,
            dir.join(FIXES_FILE).display(),
            earlier.at
        );
    }
    let path = dir.join(FIXES_FILE);
    if !args.dry_run {
        Appender::open(&path)?.append(&fix)?;
    }
    let view = FixView(FixDoc {
        schema: "framewise.fix/1",
        appended: !args.dry_run,
        file: path.display().to_string(),
        fix,
        ledger: info,
    });
    Ok(Outcome { view, exit_code: 0 })
}

/// `fix`'s document, for people and machines.
pub struct FixView(pub FixDoc);

/// Eight steps of a sparkline; a slice without evidence is a space (a gap, never a zero).
fn sparkline(series: &[Option<f64>]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let values: Vec<f64> = series.iter().flatten().copied().collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
    series
        .iter()
        .map(|v| match v {
            None => ' ',
            Some(v) if hi > lo => {
                let step = ((v - lo) / (hi - lo) * 7.0).round() as usize;
                BARS.get(step).copied().unwrap_or('█')
            }
            Some(_) => BARS[3],
        })
        .collect()
}

fn window_line(label: &str, w: &FixWindow) -> String {
    let s = &w.summary;
    let what = s.build.as_deref().map_or_else(
        || "range".to_owned(),
        |b| format!("build {}", table::inline(b)),
    );
    let mut line = format!(
        "{label:<6} {what} · {} → {} · p95 {} · median {} · {}",
        s.from,
        s.to,
        table::ms_unit(s.p95_ms),
        table::ms_unit(s.median_ms),
        crate::list::Noun("hitch", "hitches")
            .count(usize::try_from(s.hitches).unwrap_or(usize::MAX)),
    );
    if let Some(rate) = s.hitches_per_hour {
        line.push_str(&format!(" ({rate}/h)"));
    }
    if let Some(j) = s.jitters {
        line.push_str(&format!(" · {j} jitters"));
    }
    line.push_str(&format!(" · {} heartbeats", s.beats));
    line
}

impl Report for FixView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.0)?)
    }

    fn console(&self, out: &mut String) {
        let d = &self.0;
        let verb = if d.appended {
            "recorded"
        } else {
            "measured (dry run, not recorded)"
        };
        out.push_str(&format!(
            "{verb}: fix \"{}\" in {}\n",
            table::inline(&d.fix.title),
            table::inline(&d.file)
        ));
        if let Some(line) = skipped_line(&d.ledger) {
            out.push_str(&format!("  {line}\n"));
        }
        let fps = if d.fix.footprints.is_empty() {
            NONE.to_owned()
        } else {
            table::inline(&d.fix.footprints.join(", ")).into_owned()
        };
        out.push_str(&format!("  footprints: {fps}\n"));
        for (label, w) in [("before", &d.fix.before), ("after", &d.fix.after)] {
            out.push_str(&format!("  {}\n", window_line(label, w)));
            out.push_str(&format!("         p95 series |{}|\n", sparkline(&w.series)));
        }
        if d.fix.before.summary.p95_ms.is_none() || d.fix.after.summary.p95_ms.is_none() {
            out.push_str(
                "  a window without heartbeats has no p95: nothing measured the frame there\n",
            );
        }
    }

    fn markdown(&self, out: &mut String) {
        let d = &self.0;
        out.push_str(&format!(
            "### framewise fix: {}\n\n",
            table::inline(&d.fix.title)
        ));
        let mut t =
            crate::table::Table::new(&["window", "span", "p95", "median", "hitches", "heartbeats"])
                .align(0, crate::table::Align::Left)
                .align(1, crate::table::Align::Left);
        for (label, w) in [("before", &d.fix.before), ("after", &d.fix.after)] {
            let s = &w.summary;
            t.row(vec![
                s.build
                    .as_deref()
                    .map_or_else(|| label.to_owned(), |b| format!("{label} ({b})")),
                format!("{} → {}", s.from, s.to),
                table::ms(s.p95_ms),
                table::ms(s.median_ms),
                s.hitches.to_string(),
                s.beats.to_string(),
            ]);
        }
        t.markdown(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_keeps_gaps() {
        assert_eq!(sparkline(&[Some(1.0), None, Some(8.0)]), "▁ █");
        assert_eq!(sparkline(&[Some(2.0), Some(2.0)]), "▄▄");
        assert_eq!(sparkline(&[None, None]), "  ");
    }
}
