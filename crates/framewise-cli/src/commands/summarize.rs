//! `framewise summarize FILE`: frame, work, scope, GPU pass and counter statistics.
//!
//! Exit: 0 summarized; 2 when no frame has a known period (an empty capture is
//! inconclusive, never a pass); 4 when the file cannot be read.

use std::path::PathBuf;

use framewise_analysis::gate::Verdict;
use framewise_analysis::stats::{
    Classification, CounterStats, FrameClass, Num, ScopeStats, TimeStats,
};
use framewise_analysis::summary::NamedMap;
use framewise_analysis::{summarize_with, Summary, SummaryOptions};

use crate::commands::{defects_console, defects_markdown, exit, serde_name};
use crate::config::{self, ConfigArgs};
use crate::input::{self, InputArgs, Need};
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
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[&args.file])?;
    let cfg = config::load(&args.config)?;
    config::require_toml(&cfg, "summarize")?;
    let capture = input::load(&args.file, &args.input.options(Need::Summary))?;
    let summary = summarize_with(
        &capture,
        &SummaryOptions::default().with_budget_ns(cfg.budget_ns()),
    );
    let view = SummaryView {
        file: input::shown(&args.file),
        summary,
    };
    output::emit(&args.output, &view)?;
    Ok(exit(if view.summary.is_empty() {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    }))
}

/// A summary with the file it came from.
pub struct SummaryView {
    /// The path as given.
    pub file: String,
    /// The analysis crate's summary.
    pub summary: Summary,
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

fn classifier_line(c: &Classification) -> String {
    format!(
        "class {} · jank {} (frames ≥ 16 ms) · spikes {} (frames ≥ 33 ms)",
        class_name(c.class),
        table::ratio_pct(c.jank_ratio),
        table::ratio_pct(c.spike_ratio)
    )
}

fn bins_line(c: &Classification) -> String {
    c.bins
        .iter()
        .map(|b| format!("{} ms: {}", b.range, b.count))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn scope_table(first: &str, map: &NamedMap<ScopeStats>, with_sites: bool) -> Table {
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
    for (name, s) in map.iter() {
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

fn counter_table(map: &NamedMap<CounterStats>) -> Table {
    let mut t = Table::new(&[
        "counter", "kind", "frames", "sum", "avg", "min", "max", "p01", "p99", "last",
    ])
    .align(1, Align::Left);
    for (name, c) in map.iter() {
        t.row(vec![
            name.to_owned(),
            serde_name(&c.kind),
            c.count.to_string(),
            num_cell(c.sum),
            table::num(c.avg),
            num_cell(c.min),
            num_cell(c.max),
            table::num(c.p01),
            table::num(c.p99),
            num_cell(c.last),
        ]);
    }
    t
}

fn null_reasons<'a>(
    prefix: &str,
    reasons: impl Iterator<Item = (&'a String, &'a String)>,
    out: &mut Vec<String>,
) {
    for (k, v) in reasons {
        out.push(format!("{prefix}.{k}: {v}"));
    }
}

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
        lines
    }

    fn reasons(&self) -> Vec<String> {
        let s = &self.summary;
        let mut out = Vec::new();
        null_reasons("frame", s.frame.null_reasons.iter(), &mut out);
        null_reasons("work", s.work.null_reasons.iter(), &mut out);
        for (name, st) in s.scopes.iter() {
            null_reasons(&format!("scope.{name}"), st.null_reasons.iter(), &mut out);
        }
        for (name, st) in s.passes.iter() {
            null_reasons(&format!("pass.{name}"), st.null_reasons.iter(), &mut out);
        }
        for (name, st) in s.counters.iter() {
            null_reasons(&format!("counter.{name}"), st.null_reasons.iter(), &mut out);
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
        out.push_str(&format!("{}\n", self.file));
        for line in self.header_lines() {
            out.push_str(&format!("  {line}\n"));
        }
        out.push_str("\nframe time, ms (period: this frame's begin to the next frame's begin)\n");
        time_table(&s.frame.times).console(out, 2);
        out.push_str(&format!("  {}\n", self.fps_line()));
        out.push_str(&format!("  {}\n", classifier_line(&s.frame.classifier)));
        out.push_str(&format!("  {}\n", bins_line(&s.frame.classifier)));
        out.push_str("\nwork time, ms (this frame's CPU begin to end)\n");
        time_table(&s.work.times).console(out, 2);
        if s.scopes.is_empty() {
            out.push_str("\nscopes: none recorded\n");
        } else {
            out.push_str("\nscopes, ms (per-frame inclusive totals over the frames each ran in)\n");
            scope_table("scope", &s.scopes, true).console(out, 2);
        }
        if s.passes.is_empty() {
            out.push_str("\nGPU passes: none timed\n");
        } else {
            out.push_str("\nGPU passes, ms (per-frame totals over the frames each ran in)\n");
            scope_table("pass", &s.passes, false).console(out, 2);
        }
        if s.counters.is_empty() {
            out.push_str("\ncounters: none recorded\n");
        } else {
            out.push_str("\ncounters (exact per-frame values)\n");
            counter_table(&s.counters).console(out, 2);
        }
        let reasons = self.reasons();
        if !reasons.is_empty() {
            out.push_str(&format!("\nnot computed ({NONE})\n"));
            for r in reasons {
                out.push_str(&format!("  {r}\n"));
            }
        }
        defects_console(&s.defects, "defects", out);
        if !s.notes.is_empty() {
            out.push_str("\nnotes\n");
            for n in &s.notes {
                out.push_str(&format!("  {n}\n"));
            }
        }
    }

    fn markdown(&self, out: &mut String) {
        let s = &self.summary;
        out.push_str(&format!("### framewise summary: `{}`\n\n", self.file));
        for line in self.header_lines() {
            out.push_str(&format!("- {line}\n"));
        }
        out.push_str(
            "\n**Frame time, ms** (period: this frame's begin to the next frame's begin)\n\n",
        );
        time_table(&s.frame.times).markdown(out);
        out.push_str(&format!(
            "\n{} · {}\n\n{}\n",
            self.fps_line(),
            classifier_line(&s.frame.classifier),
            bins_line(&s.frame.classifier)
        ));
        out.push_str("\n**Work time, ms** (this frame's CPU begin to end)\n\n");
        time_table(&s.work.times).markdown(out);
        if !s.scopes.is_empty() {
            out.push_str("\n**Scopes, ms** (per-frame inclusive totals)\n\n");
            scope_table("scope", &s.scopes, true).markdown(out);
        }
        if !s.passes.is_empty() {
            out.push_str("\n**GPU passes, ms**\n\n");
            scope_table("pass", &s.passes, false).markdown(out);
        }
        if !s.counters.is_empty() {
            out.push_str("\n**Counters** (exact)\n\n");
            counter_table(&s.counters).markdown(out);
        }
        let reasons = self.reasons();
        if !reasons.is_empty() {
            out.push_str(&format!("\n**Not computed ({NONE})**\n\n"));
            for r in reasons {
                out.push_str(&format!("- {r}\n"));
            }
        }
        defects_markdown(&s.defects, "Defects", out);
        if !s.notes.is_empty() {
            out.push_str("\n**Notes**\n\n");
            for n in &s.notes {
                out.push_str(&format!("- {n}\n"));
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
