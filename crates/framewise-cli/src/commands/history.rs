//! `framewise history [--buckets N]`: the ledger as a timeline — equal time buckets from the
//! first evidence to the last (frame p95 and median, counters, hitch count, the build that
//! ran), one window per build, and the fixes recorded. A bucket without evidence is a gap:
//! its measurements are absent from the JSON and drawn as `—`, never as 0. Records dated
//! more than an hour after now are left out of the timeline and counted (`future`), as are
//! records dated before 2020 (`past`: a clock reset). A build's window counts that build's
//! records only; the builds are listed in order of last evidence (the latest last).
//!
//! Exit: 0 once the ledger was read (no evidence included); 4 when there is no
//! `.framewise/`, a file cannot be read, or `--from` is after `--to`.

use std::collections::BTreeSet;

use framewise_incidents::fold::{
    history, History, HistoryOptions, LedgerFiles, LedgerInfo, WindowSummary,
};
use serde::Serialize;

use crate::commands::Outcome;
use crate::ledger::{parse_instant, skipped_line, DirArgs};
use crate::list::Noun;
use crate::output::{self, OutputArgs, Report};
use crate::table::{self, Align, Table, NONE};

/// `framewise history`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Equal time buckets from the first evidence to the last.
    #[arg(long, value_name = "N", default_value_t = 24, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub buckets: u32,
    /// Only records and fixes at or after this time (ISO 8601, or a date).
    #[arg(long, value_name = "ISO", value_parser = parse_instant)]
    pub from: Option<i64>,
    /// Only records and fixes at or before this time (ISO 8601, or a date).
    #[arg(long, value_name = "ISO", value_parser = parse_instant)]
    pub to: Option<i64>,
    #[command(flatten)]
    pub dir: DirArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The JSON of `history` (docs/cli/dot-framewise.md).
#[derive(Debug, Serialize)]
pub struct HistoryDoc {
    /// The timeline (schema `framewise.history/1`).
    #[serde(flatten)]
    pub history: History,
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

/// The verb's result without printing it (`framewise history` and the MCP server's
/// `get_history` both call this): exit 0.
pub fn evaluate(args: &Args) -> anyhow::Result<Outcome<HistoryView>> {
    crate::ledger::check_range(args.from, args.to)?;
    let dir = args.dir.locate()?;
    let files = LedgerFiles::read(&dir)?;
    let (ledger, info) = files.ledger();
    let options = HistoryOptions {
        buckets: usize::try_from(args.buckets).unwrap_or(24),
        from_ms: args.from,
        to_ms: args.to,
        now_ms: Some(crate::ledger::now_ms()),
    };
    let doc = HistoryDoc {
        history: history(&ledger, &files.fixes, &options),
        ledger: info,
    };
    Ok(Outcome {
        view: HistoryView(doc),
        exit_code: 0,
    })
}

/// `history`'s document, for people and machines.
pub struct HistoryView(pub HistoryDoc);

/// The counters the buckets carry, in name order.
fn counter_names(windows: &[&WindowSummary]) -> Vec<String> {
    let names: BTreeSet<&String> = windows.iter().flat_map(|w| w.counters.keys()).collect();
    names.into_iter().cloned().collect()
}

fn windows_table(
    first: &str,
    windows: &[&WindowSummary],
    label: impl Fn(&WindowSummary) -> String,
) -> Table {
    let counters = counter_names(windows);
    let mut headers = vec![
        first, "build", "p95", "median", "hitches", "worst", "jitters", "beats",
    ];
    // A counter's name heads its column (`Table::new` escapes it as a cell).
    headers.extend(counters.iter().map(String::as_str));
    let mut t = Table::new(&headers)
        .align(0, Align::Left)
        .align(1, Align::Left);
    for w in windows {
        let mut row = vec![
            label(w),
            w.build.clone().unwrap_or_else(|| NONE.to_owned()),
            table::ms(w.p95_ms),
            table::ms(w.median_ms),
            w.hitches.to_string(),
            table::ms(w.worst_ms),
            w.jitters.map_or_else(|| NONE.to_owned(), |j| j.to_string()),
            w.beats.to_string(),
        ];
        row.extend(
            counters
                .iter()
                .map(|c| table::num(w.counters.get(c).copied())),
        );
        t.row(row);
    }
    t
}

impl HistoryView {
    fn headline(&self) -> String {
        let h = &self.0.history;
        match &h.span {
            None => format!(
                "{}: no evidence (no heartbeat, hitch or jitter record)",
                table::inline(&self.0.ledger.dir)
            ),
            Some(span) => format!(
                "{}: {} → {} · {} · {} · {}",
                table::inline(&self.0.ledger.dir),
                span.from,
                span.to,
                Noun("bucket", "buckets").count(h.buckets.len()),
                Noun("build", "builds").count(h.builds.len()),
                Noun("fix", "fixes").count(h.fixes.len())
            ),
        }
    }

    /// The records left out for being dated after now, as a line; `None` without any.
    fn future_line(&self) -> Option<String> {
        let f = self.0.history.future.as_ref()?;
        Some(format!(
            "left out: {} dated after now (the latest {}): a clock set wrong?",
            Noun("record", "records").count(usize::try_from(f.records).unwrap_or(usize::MAX)),
            f.latest
        ))
    }

    /// The records left out for being dated before 2020, as a line; `None` without any.
    fn past_line(&self) -> Option<String> {
        let p = self.0.history.past.as_ref()?;
        Some(format!(
            "left out: {} dated before 2020 (the earliest {}): a clock reset?",
            Noun("record", "records").count(usize::try_from(p.records).unwrap_or(usize::MAX)),
            p.earliest
        ))
    }

    fn buckets(&self) -> Table {
        let buckets: Vec<&WindowSummary> = self.0.history.buckets.iter().collect();
        windows_table("from", &buckets, |w| w.from.clone())
    }

    fn builds(&self) -> Table {
        let builds: Vec<&WindowSummary> =
            self.0.history.builds.iter().map(|b| &b.summary).collect();
        windows_table("first evidence", &builds, |w| w.from.clone())
    }
}

impl Report for HistoryView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.0)?)
    }

    fn console(&self, out: &mut String) {
        out.push_str(&self.headline());
        out.push('\n');
        if let Some(line) = skipped_line(&self.0.ledger) {
            out.push_str(&format!("  {line}\n"));
        }
        if let Some(line) = self.future_line() {
            out.push_str(&format!("  {line}\n"));
        }
        if let Some(line) = self.past_line() {
            out.push_str(&format!("  {line}\n"));
        }
        let h = &self.0.history;
        if h.span.is_none() {
            return;
        }
        out.push_str("\ntimes in ms · p95 and median: medians of the heartbeats · — : no evidence in the bucket (a gap, not 0)\n");
        self.buckets().console(out, 2);
        out.push_str("\nbuilds\n");
        self.builds().console(out, 2);
        if !h.fixes.is_empty() {
            out.push_str("\nfixes, newest first\n");
            for f in &h.fixes {
                out.push_str(&format!(
                    "  {} {} · p95 {} → {}\n",
                    table::inline(&f.at),
                    table::inline(&f.title),
                    table::ms_unit(f.before.summary.p95_ms),
                    table::ms_unit(f.after.summary.p95_ms)
                ));
            }
        }
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!("### framewise history: {}\n\n", self.headline()));
        if let Some(line) = self.future_line() {
            out.push_str(&format!("{line}\n\n"));
        }
        if let Some(line) = self.past_line() {
            out.push_str(&format!("{line}\n\n"));
        }
        if self.0.history.span.is_none() {
            return;
        }
        self.buckets().markdown(out);
        out.push_str("\n**Builds**\n\n");
        self.builds().markdown(out);
    }
}
