//! `framewise summarize FILE`: frame, work, scope, GPU pass and counter statistics.
//!
//! Exit: 0 summarized; 2 when no frame has a known period (an empty capture is
//! inconclusive, never a pass); 4 when the file cannot be read.

use std::collections::BTreeMap;
use std::path::PathBuf;

use framewise_analysis::gate::Verdict;

use framewise_analysis::model::CounterKind;
use framewise_analysis::stats::{
    jank_threshold_ns, spike_threshold_ns, Classification, CounterStats, FrameClass, NullReasons,
    Num, ScopeStats, TimeStats,
};
use framewise_analysis::summary::NamedMap;
use framewise_analysis::{summarize_with, Summary, SummaryOptions};

use crate::commands::{
    defects_console, defects_markdown, defects_pointer, exit, serde_name, Outcome,
};
use crate::config::{self, ConfigArgs};
use crate::input::{self, InputArgs, Need};
use crate::list::{self, ListArgs, Noun};
use crate::output::{self, Annotation, OutputArgs, Report};
use crate::table::{self, Align, Table, NONE};

/// `framewise summarize`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The capture: .sgpt, .litecap or Chrome trace JSON (sniffed from its content).
    pub file: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub list: ListArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
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

/// The verb's result without printing it (`framewise summarize` and the MCP server's
/// `summarize_capture` both call this): 0 summarized, 2 when no frame has a known period.
pub fn evaluate(args: &Args) -> anyhow::Result<Outcome<SummaryView>> {
    let cfg = config::load(&args.config)?;
    config::require_toml(&cfg, "summarize")?;
    let capture = input::load(&args.file, &args.input.options(Need::Summary))?;
    let summary = summarize_with(
        &capture,
        &SummaryOptions::default().with_budget_ns(cfg.budget_ns()),
    );
    let verdict = if summary.is_empty() {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    };
    Ok(Outcome {
        view: SummaryView {
            file: input::shown(&args.file),
            summary,
            list: args.list,
        },
        exit_code: exit(verdict),
    })
}

/// A summary with the file it came from.
pub struct SummaryView {
    /// The path as given.
    pub file: String,
    /// The analysis crate's summary.
    pub summary: Summary,
    /// How much of each long list people see.
    pub list: ListArgs,
}

fn class_name(c: Option<FrameClass>) -> String {
    c.map_or_else(|| NONE.to_owned(), |c| serde_name(&c))
}

fn num_cell(n: Option<Num>) -> String {
    match n {
        None => NONE.to_owned(),
        Some(Num::Int(v)) => v.to_string(),
        Some(Num::Float(v)) => table::num(Some(v)),
    }
}

fn time_table(t: &TimeStats) -> Table {
    let mut table = Table::new(&[
        "frames", "avg", "min", "p01", "p50", "p90", "p95", "p99", "p99.9", "max",
    ])
    .align(0, Align::Right);
    table.row(vec![
        t.count.to_string(),
        table::ms(t.avg),
        table::ms(t.min),
        table::ms(t.p01),
        table::ms(t.p50),
        table::ms(t.p90),
        table::ms(t.p95),
        table::ms(t.p99),
        table::ms(t.p999),
        table::ms(t.max),
    ]);
    table
}

/// `class STEADY · jank 0.0% (work ≥ 16.00 ms) · spikes 0.0% (work ≥ 33.00 ms)`: the
/// thresholds are the budget's (0.96 and 1.98 times it).
fn classifier_line(c: &Classification, budget_ms: f64) -> String {
    // Unit conversion only: the budget was a whole number of ns.
    let budget_ns = (budget_ms * 1_000_000.0).round() as u64;
    let ms = |ns: u64| ns as f64 / 1_000_000.0;
    format!(
        "class {} · jank {} (work ≥ {:.2} ms) · spikes {} (work ≥ {:.2} ms)",
        class_name(c.class),
        table::ratio_pct(c.jank_ratio),
        ms(jank_threshold_ns(budget_ns)),
        table::ratio_pct(c.spike_ratio),
        ms(spike_threshold_ns(budget_ns))
    )
}

fn bins_line(c: &Classification) -> String {
    c.bins
        .iter()
        .map(|b| format!("{} ms: {}", b.range, b.count))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn scope_table(first: &str, rows: &[(&str, &ScopeStats)], with_sites: bool) -> Table {
    let mut headers = vec![
        first, "frames", "total", "self", "avg", "min", "p50", "p95", "p99", "max", "calls",
    ];
    if with_sites {
        headers.push("site");
    }
    let mut t = Table::new(&headers);
    if with_sites {
        t = t.align(headers.len() - 1, Align::Left);
    }
    for &(name, s) in rows {
        let mut row = vec![
            name.to_owned(),
            s.count.to_string(),
            table::ms(Some(s.total)),
            table::ms(Some(s.self_ms)),
            table::ms(s.avg),
            table::ms(s.min),
            table::ms(s.p50),
            table::ms(s.p95),
            table::ms(s.p99),
            table::ms(s.max),
            s.calls.to_string(),
        ];
        if with_sites {
            row.push(if s.sites.is_empty() {
                NONE.to_owned()
            } else {
                s.sites.join(", ")
            });
        }
        t.row(row);
    }
    t
}

/// Sum counters: a total over frames, and the per-frame figures.
fn sum_table(rows: &[(&str, &CounterStats)]) -> Table {
    let mut t = Table::new(&[
        "counter", "frames", "sum", "avg", "min", "p01", "p50", "p99", "max", "last",
    ]);
    for &(name, c) in rows {
        t.row(vec![
            name.to_owned(),
            c.count.to_string(),
            num_cell(c.sum),
            table::num(c.avg),
            num_cell(c.min),
            table::num(c.p01),
            table::num(c.p50),
            table::num(c.p99),
            num_cell(c.max),
            num_cell(c.last),
        ]);
    }
    t
}

/// Gauges: a level each frame, read by its level; no sum (it would mean nothing).
fn gauge_table(rows: &[(&str, &CounterStats)]) -> Table {
    let mut t = Table::new(&[
        "gauge", "frames", "avg", "min", "p01", "p50", "p99", "max", "last",
    ]);
    for &(name, c) in rows {
        t.row(vec![
            name.to_owned(),
            c.count.to_string(),
            table::num(c.avg),
            num_cell(c.min),
            table::num(c.p01),
            table::num(c.p50),
            table::num(c.p99),
            num_cell(c.max),
            num_cell(c.last),
        ]);
    }
    t
}

/// A statistic that is null, with where it lives and why.
struct NullStat<'a> {
    /// The block's path: `frame`, `work`, `scope.render`, `counter.draw_calls`.
    block: String,
    /// The statistic's name in the JSON (`p95`, `p999`, `low_1pct_fps`).
    stat: &'a str,
    /// The analysis crate's reason, in words.
    reason: &'a str,
}

fn null_stats<'a>(block: String, reasons: &'a NullReasons, out: &mut Vec<NullStat<'a>>) {
    for (stat, reason) in reasons {
        out.push(NullStat {
            block: block.clone(),
            stat,
            reason,
        });
    }
}

/// `(needed, have)` when a reason is the analysis crate's "too few values for this
/// percentile" (its `NullReason::TooFew` in words; a unit test pins the wording).
fn too_few(reason: &str) -> Option<(u64, u64)> {
    let rest = reason.strip_prefix("needs at least ")?;
    let (needed, have) = rest.split_once(" values (one beyond it), have ")?;
    Some((needed.parse().ok()?, have.trim().parse().ok()?))
}

/// Statistics as people name them, in the order the tables show them.
const STAT_WORDS: [(&str, &str); 8] = [
    ("p01", "p01"),
    ("p50", "p50"),
    ("p90", "p90"),
    ("p95", "p95"),
    ("p99", "p99"),
    ("p999", "p99.9"),
    ("low_1pct_fps", "1% low"),
    ("low_01pct_fps", "0.1% low"),
];

fn stat_rank(stat: &str) -> (usize, &str) {
    STAT_WORDS
        .iter()
        .position(|(name, _)| *name == stat)
        .map_or((STAT_WORDS.len(), stat), |i| (i, ""))
}

fn stat_words(stat: &str) -> &str {
    STAT_WORDS
        .iter()
        .find(|(name, _)| *name == stat)
        .map_or(stat, |(_, words)| words)
}

/// The null statistics folded into one line per kind of reason, for people: what `—`
/// means here. Each metric's own reason stays in the JSON's `null_reasons`.
fn grouped_reasons(stats: &[NullStat<'_>]) -> Vec<String> {
    let mut needs: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    let mut have: Option<(u64, u64)> = None;
    let mut others: Vec<(&str, Vec<String>)> = Vec::new();
    for st in stats {
        if let Some((needed, n)) = too_few(st.reason) {
            let names = needs.entry(needed).or_default();
            if !names.contains(&st.stat) {
                names.push(st.stat);
            }
            have = Some(have.map_or((n, n), |(lo, hi)| (lo.min(n), hi.max(n))));
        } else {
            let path = format!("{}.{}", st.block, st.stat);
            match others.iter_mut().find(|(r, _)| *r == st.reason) {
                Some((_, paths)) => paths.push(path),
                None => others.push((st.reason, vec![path])),
            }
        }
    }
    let mut lines = Vec::new();
    if let Some((lo, hi)) = have {
        let groups: Vec<String> = needs
            .into_iter()
            .map(|(needed, mut names)| {
                names.sort_by_key(|n| stat_rank(n));
                let verb = if names.len() == 1 { "needs" } else { "need" };
                let names: Vec<&str> = names.into_iter().map(stat_words).collect();
                format!("{} {verb} ≥ {needed}", names.join("/"))
            })
            .collect();
        let have = if lo == hi {
            format!("{lo} frames")
        } else {
            format!("{lo}–{hi} frames")
        };
        lines.push(format!(
            "{NONE} = not enough frames behind it: {} (those rows: {have})",
            groups.join(", ")
        ));
    }
    for (reason, paths) in others {
        lines.push(format!(
            "{NONE} = {reason}: {}",
            list::some_names(&paths, 4)
        ));
    }
    lines
}

/// Sum counters for people: largest sum first (the JSON keeps name order).
fn sums_by_sum(map: &NamedMap<CounterStats>) -> Vec<(&str, &CounterStats)> {
    let mut rows: Vec<(&str, &CounterStats)> = map.iter().filter(|(_, c)| !is_gauge(c)).collect();
    rows.sort_by(|a, b| {
        let key = |c: &CounterStats| c.sum.map(Num::as_f64);
        match (key(a.1), key(b.1)) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
        .then_with(|| a.0.cmp(b.0))
    });
    rows
}

/// Gauges for people, in name order (the JSON's): a level has no total to rank by.
fn gauges_by_name(map: &NamedMap<CounterStats>) -> Vec<(&str, &CounterStats)> {
    map.iter().filter(|(_, c)| is_gauge(c)).collect()
}

fn is_gauge(c: &CounterStats) -> bool {
    c.kind == CounterKind::Gauge
}

/// The rows of one long list that people see, and how many were left out.
struct Shown<'a, T> {
    rows: Vec<(&'a str, &'a T)>,
    total: usize,
    hidden: usize,
}

impl<'a, T> Shown<'a, T> {
    fn new(all: Vec<(&'a str, &'a T)>, list: &ListArgs) -> Self {
        let total = all.len();
        let (shown, hidden) = list.cut(total);
        let mut rows = all;
        rows.truncate(shown);
        Self {
            rows,
            total,
            hidden,
        }
    }

    /// `, top 15 of 120 by total` when cut.
    fn qualifier(&self, by: &str) -> String {
        let words = list::top_words(self.rows.len(), self.total, by);
        if words.is_empty() {
            words
        } else {
            format!(", {words}")
        }
    }

    /// `, the first 15 of 40 by name` when cut.
    fn first_qualifier(&self) -> String {
        if self.rows.len() < self.total {
            format!(", the first {} of {} by name", self.rows.len(), self.total)
        } else {
            String::new()
        }
    }
}

const SCOPES: Noun = Noun("scope", "scopes");
const PASSES: Noun = Noun("pass", "passes");
const COUNTERS: Noun = Noun("counter", "counters");
const GAUGES: Noun = Noun("gauge", "gauges");

impl SummaryView {
    fn header_lines(&self) -> Vec<String> {
        let s = &self.summary;
        let c = &s.capture;
        let mut source = serde_name(&c.source);
        if let Some(v) = c.source_version {
            source.push_str(&format!(" v{v}"));
        }
        let mut facts = vec![format!("source {source}")];
        if let Some(level) = &c.level {
            facts.push(format!("level {level}"));
        }
        if let Some(build) = &c.build {
            facts.push(format!("build {build}"));
        }
        let mut adapter = format!("adapter {}", serde_name(&c.adapter));
        if let Some(name) = &c.adapter_name {
            adapter.push_str(&format!(" ({name})"));
        }
        facts.push(adapter);
        let mut lines = vec![
            facts.join(" · "),
            format!(
                "grade: counters {} · timing {}",
                serde_name(&s.grade.counters),
                serde_name(&s.grade.timing)
            ),
            format!(
                "frames {} ({} paused, {} without a period) · dropped spans {} · budget {}",
                c.frames,
                c.frames_paused,
                c.frames_without_period,
                c.dropped_spans,
                table::ms_unit(Some(s.budget_ms))
            ),
        ];
        if !c.clock_measured {
            lines.push(
                "frame begins are not on a measured clock: each frame's work time is taken as its period"
                    .to_owned(),
            );
        }
        // The level, build and adapter name come from the file: a line break or a terminal
        // escape in them is shown escaped, never printed.
        lines
            .into_iter()
            .map(|l| table::inline(&l).into_owned())
            .collect()
    }

    /// What a frame time is here: a period, or the frame's work time taken as one (a
    /// `.litecap`'s, or any capture whose begins are on no measured clock).
    fn period_words(&self) -> &'static str {
        let s = &self.summary;
        if s.capture.clock_measured && !framewise_analysis::diff::frame_times_are_work(s) {
            "period: this frame's begin to the next frame's begin"
        } else {
            "each frame's work time, taken as its period"
        }
    }

    fn scopes(&self) -> Shown<'_, ScopeStats> {
        Shown::new(self.summary.scopes.iter().collect(), &self.list)
    }

    fn passes(&self) -> Shown<'_, ScopeStats> {
        Shown::new(self.summary.passes.iter().collect(), &self.list)
    }

    fn sums(&self) -> Shown<'_, CounterStats> {
        Shown::new(sums_by_sum(&self.summary.counters), &self.list)
    }

    fn gauges(&self) -> Shown<'_, CounterStats> {
        Shown::new(gauges_by_name(&self.summary.counters), &self.list)
    }

    /// The null statistics of the rows shown (`--top`/`--all`): what the tables' `—`s are.
    fn null_stats(&self) -> Vec<NullStat<'_>> {
        let s = &self.summary;
        let mut out = Vec::new();
        null_stats("frame".into(), &s.frame.null_reasons, &mut out);
        null_stats("work".into(), &s.work.null_reasons, &mut out);
        let mut counters = self.sums().rows;
        counters.extend(self.gauges().rows);
        let (scopes, passes) = (self.scopes().rows, self.passes().rows);
        for (name, st) in scopes {
            null_stats(format!("scope.{name}"), &st.null_reasons, &mut out);
        }
        for (name, st) in passes {
            null_stats(format!("pass.{name}"), &st.null_reasons, &mut out);
        }
        for (name, st) in counters {
            let block = format!("counter.{name}");
            for (stat, reason) in &st.null_reasons {
                // A gauge's sum is null by its kind and no table shows it: no `—` to explain.
                if is_gauge(st) && stat == "sum" {
                    continue;
                }
                out.push(NullStat {
                    block: block.clone(),
                    stat,
                    reason,
                });
            }
        }
        out
    }

    fn fps_line(&self) -> String {
        let f = &self.summary.frame;
        let with_unit = |v: Option<f64>| {
            v.map_or_else(|| NONE.to_owned(), |_| format!("{} fps", table::fps(v)))
        };
        format!(
            "avg {} · 1% low {} · 0.1% low {}",
            with_unit(f.fps),
            with_unit(f.low_1pct_fps),
            with_unit(f.low_01pct_fps)
        )
    }
}

impl Report for SummaryView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.summary)?)
    }

    fn console(&self, out: &mut String) {
        let s = &self.summary;
        out.push_str(&format!("{}\n", table::inline(&self.file)));
        for line in self.header_lines() {
            out.push_str(&format!("  {line}\n"));
        }
        defects_pointer(&s.defects, out);
        out.push_str(&format!("\nframe time, ms ({})\n", self.period_words()));
        time_table(&s.frame.times).console(out, 2);
        out.push_str(&format!("  {}\n", self.fps_line()));
        out.push_str(&format!(
            "  {}\n",
            classifier_line(&s.frame.classifier, s.budget_ms)
        ));
        out.push_str(&format!("  {}\n", bins_line(&s.frame.classifier)));
        out.push_str("\nwork time, ms (this frame's CPU begin to end)\n");
        time_table(&s.work.times).console(out, 2);
        if s.scopes.is_empty() {
            out.push_str("\nscopes: none recorded\n");
        } else {
            let shown = self.scopes();
            out.push_str(&format!(
                "\nscopes, ms (per-frame inclusive totals over the frames each ran in{})\n",
                shown.qualifier("total")
            ));
            scope_table("scope", &shown.rows, true).console(out, 2);
            list::more_console(shown.hidden, SCOPES, 2, out);
        }
        if s.passes.is_empty() {
            out.push_str("\nGPU passes: none timed\n");
        } else {
            let shown = self.passes();
            out.push_str(&format!(
                "\nGPU passes, ms (per-frame totals over the frames each ran in{})\n",
                shown.qualifier("total")
            ));
            scope_table("pass", &shown.rows, false).console(out, 2);
            list::more_console(shown.hidden, PASSES, 2, out);
        }
        if s.counters.is_empty() {
            out.push_str("\ncounters: none recorded\n");
        }
        let sums = self.sums();
        if !sums.rows.is_empty() {
            out.push_str(&format!(
                "\ncounters, sums (exact per-frame counts, totalled over frames{})\n",
                sums.qualifier("sum")
            ));
            sum_table(&sums.rows).console(out, 2);
            list::more_console(sums.hidden, COUNTERS, 2, out);
        }
        let gauges = self.gauges();
        if !gauges.rows.is_empty() {
            out.push_str(&format!(
                "\ngauges (exact levels, one a frame: read by level, never summed{})\n",
                gauges.first_qualifier()
            ));
            gauge_table(&gauges.rows).console(out, 2);
            list::more_console(gauges.hidden, GAUGES, 2, out);
        }
        // Only the reasons of the rows shown: a `—` the screen does not show needs no
        // explaining (the JSON has every one).
        let reasons = grouped_reasons(&self.null_stats());
        if !reasons.is_empty() {
            out.push('\n');
            for r in reasons {
                out.push_str(&format!("{r}\n"));
            }
            out.push_str("  each metric's own reason: --format json (null_reasons)\n");
        }
        defects_console(&s.defects, "defects", out);
        if !s.notes.is_empty() {
            out.push_str("\nnotes\n");
            for n in &s.notes {
                out.push_str(&format!("  {}\n", table::inline(n)));
            }
        }
    }

    fn markdown(&self, out: &mut String) {
        let s = &self.summary;
        out.push_str(&format!(
            "### framewise summary: `{}`\n\n",
            table::inline(&self.file)
        ));
        for line in self.header_lines() {
            out.push_str(&format!("- {line}\n"));
        }
        out.push_str(&format!(
            "\n**Frame time, ms** ({})\n\n",
            self.period_words()
        ));
        time_table(&s.frame.times).markdown(out);
        out.push_str(&format!(
            "\n{} · {}\n\n{}\n",
            self.fps_line(),
            classifier_line(&s.frame.classifier, s.budget_ms),
            bins_line(&s.frame.classifier)
        ));
        out.push_str("\n**Work time, ms** (this frame's CPU begin to end)\n\n");
        time_table(&s.work.times).markdown(out);
        if !s.scopes.is_empty() {
            let shown = self.scopes();
            out.push_str(&format!(
                "\n**Scopes, ms** (per-frame inclusive totals{})\n\n",
                shown.qualifier("total")
            ));
            scope_table("scope", &shown.rows, true).markdown(out);
            list::more_markdown(shown.hidden, SCOPES, out);
        }
        if !s.passes.is_empty() {
            let shown = self.passes();
            let qualifier = shown.qualifier("total");
            out.push_str(&if qualifier.is_empty() {
                "\n**GPU passes, ms**\n\n".to_owned()
            } else {
                format!("\n**GPU passes, ms** ({})\n\n", &qualifier[2..])
            });
            scope_table("pass", &shown.rows, false).markdown(out);
            list::more_markdown(shown.hidden, PASSES, out);
        }
        let sums = self.sums();
        if !sums.rows.is_empty() {
            out.push_str(&format!(
                "\n**Counters, sums** (exact per-frame counts, totalled over frames{})\n\n",
                sums.qualifier("sum")
            ));
            sum_table(&sums.rows).markdown(out);
            list::more_markdown(sums.hidden, COUNTERS, out);
        }
        let gauges = self.gauges();
        if !gauges.rows.is_empty() {
            out.push_str(&format!(
                "\n**Gauges** (exact levels, one a frame: read by level, never summed{})\n\n",
                gauges.first_qualifier()
            ));
            gauge_table(&gauges.rows).markdown(out);
            list::more_markdown(gauges.hidden, GAUGES, out);
        }
        // Only the reasons of the rows shown: the rest are in the JSON.
        let reasons = self.null_stats();
        if !reasons.is_empty() {
            out.push_str(&format!("\n**Not computed ({NONE})**\n\n"));
            for r in reasons {
                out.push_str(&format!("- {}.{}: {}\n", r.block, r.stat, r.reason));
            }
        }
        defects_markdown(&s.defects, "Defects", out);
        if !s.notes.is_empty() {
            out.push_str("\n**Notes**\n\n");
            for n in &s.notes {
                out.push_str(&format!("- {}\n", table::inline(n)));
            }
        }
    }

    fn annotations(&self) -> Vec<Annotation> {
        let mut out = Vec::new();
        if self.summary.is_empty() {
            out.push(Annotation {
                level: "warning",
                title: "framewise summarize".into(),
                message: format!(
                    "{}: no frame with a known period; nothing to summarize (inconclusive)",
                    self.file
                ),
            });
        }
        for d in &self.summary.defects {
            out.push(Annotation {
                level: "warning",
                title: format!("framewise: capture defect ({})", serde_name(&d.kind)),
                message: format!("{}: {}", self.file, d.message),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use framewise_analysis::stats::NullReason;

    #[test]
    fn reads_the_analysis_crates_too_few_reason() {
        let text = NullReason::TooFew {
            needed: 20,
            have: 12,
        }
        .to_string();
        assert_eq!(too_few(&text), Some((20, 12)));
        assert_eq!(too_few(&NullReason::Empty.to_string()), None);
    }

    #[test]
    fn one_line_per_kind_of_reason() {
        let few = |needed, have| NullReason::TooFew { needed, have }.to_string();
        let (r20, r100a, r100b, r1000, empty) = (
            few(20, 12),
            few(100, 12),
            few(100, 11),
            few(1000, 11),
            NullReason::Empty.to_string(),
        );
        let stat = |block: &str, stat, reason| NullStat {
            block: block.to_owned(),
            stat,
            reason,
        };
        let stats = vec![
            stat("frame", "p999", &r1000),
            stat("frame", "p99", &r100b),
            stat("frame", "low_1pct_fps", &r100b),
            stat("scope.a", "p95", &r20),
            stat("scope.a", "p01", &r100a),
            stat("scope.b", "p99", &r100a),
            stat("counter.c", "sum", &empty),
        ];
        assert_eq!(
            grouped_reasons(&stats),
            vec![
                "— = not enough frames behind it: p95 needs ≥ 20, p01/p99/1% low need ≥ 100, p99.9 needs ≥ 1000 (those rows: 11–12 frames)".to_owned(),
                "— = no values: counter.c.sum".to_owned(),
            ]
        );
    }
}
