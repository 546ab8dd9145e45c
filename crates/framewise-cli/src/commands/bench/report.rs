//! How `framewise bench` prints what it did.

use framewise_analysis::bench::budget::BudgetCheck;
use framewise_analysis::bench::compare::{percent_text, regime_name, MetricKind};
use framewise_analysis::bench::{BenchResult, Comparison, VerdictWord};
use serde::Serialize;

use super::Outcome;
use crate::commands::serde_name;
use crate::output::{Annotation, Report};
use crate::table::{self, Align, Table, NONE};

/// What a bench invocation produced, for people and machines.
pub struct View {
    /// Ran, compared, or ran with nothing to compare.
    pub outcome: Outcome,
}

/// `bench NAME --format json`: the result as written, and where.
#[derive(Serialize)]
struct RanJson<'a> {
    file: String,
    #[serde(flatten)]
    result: &'a BenchResult,
}

/// `bench --compare --format json`: the comparison, and the result this call wrote.
#[derive(Serialize)]
struct ComparedJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    result_file: Option<String>,
    #[serde(flatten)]
    comparison: &'a Comparison,
}

/// `bench NAME --compare last` on a first result.
#[derive(Serialize)]
struct FirstJson {
    file: String,
    verdict: VerdictWord,
    exit_code: i32,
    reason: String,
}

const FIRST_REASON: &str =
    "no earlier result of this bench to compare with; run it again after the change";

/// A metric's value for people (`hitches.per_min` is a rate, not milliseconds).
fn value(path: &str, v: Option<f64>) -> String {
    if path == "hitches.per_min" {
        return v.map_or_else(|| NONE.to_owned(), |v| format!("{v:.2}/min"));
    }
    table::metric(path, v)
}

/// A relative change as a percentage: never `+0.0%` on a change
/// ([`framewise_analysis::bench::compare::percent_text`]).
fn pct(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or_else(|| NONE.to_owned(), percent_text)
}

fn unsigned_pct(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or_else(|| NONE.to_owned(), |x| format!("{:.1}%", x * 100.0))
}

/// Every budget with its value, limit and ratio — `check`'s table — and, for a comparison,
/// the headroom left (`with_headroom`).
pub(crate) fn budgets_table(checks: &[BudgetCheck], with_headroom: bool) -> Table {
    let mut headers = vec!["budget", "metric", "value", "limit", "ratio"];
    if with_headroom {
        headers.push("headroom");
    }
    headers.push("state");
    let state_column = headers.len() - 1;
    let mut t = Table::new(&headers)
        .align(1, Align::Left)
        .align(state_column, Align::Left);
    for c in checks {
        let mut row = vec![
            c.budget.clone(),
            c.metric.clone(),
            value(&c.metric, c.value),
            value(&c.metric, Some(c.limit)),
            c.ratio
                .map_or_else(|| NONE.to_owned(), |r| format!("{r:.3}")),
        ];
        if with_headroom {
            row.push(c.headroom.map_or_else(
                || NONE.to_owned(),
                |h| table::metric_delta(&c.metric, Some(h)),
            ));
        }
        row.push(serde_name(&c.state));
        t.row(row);
    }
    t
}

fn result_lines(r: &BenchResult, file: &str, out: &mut String) {
    out.push_str(&format!(
        "bench {}{}: {} runs × {} frames (+{} warm-up) → {file}\n",
        r.name,
        if r.canonical { "" } else { " (ad hoc)" },
        r.runs.len(),
        r.settings.frames,
        r.settings.warmup,
    ));
    out.push_str(&format!(
        "  command: {}\n  regime: {} · grade: counters exact · timing {} · config {}\n",
        r.settings.command.join(" "),
        regime_name(r.regime),
        regime_name(r.grade.timing),
        r.config_hash
    ));
    for why in super::unfit(r) {
        out.push_str(&format!(
            "  {why}: comparisons with this result are inconclusive (exit 2)\n"
        ));
    }
    out.push('\n');
}

fn runs_table(r: &BenchResult) -> Table {
    let mut t = Table::new(&[
        "run",
        "frames",
        "recorded",
        "median",
        "p95",
        "p99",
        "hitches/min",
        "lost",
    ]);
    for run in &r.runs {
        t.row(vec![
            run.run.to_string(),
            run.frames_measured.to_string(),
            if run.is_short(r.settings.frames) {
                format!("{} short", run.recorded())
            } else if run.is_long(r.settings.frames) {
                format!("{} long", run.recorded())
            } else {
                run.recorded().to_string()
            },
            table::ms(run.frame.median_ms),
            table::ms(run.frame.p95_ms),
            table::ms(run.frame.p99_ms),
            format!("{:.2}", run.hitches_per_min),
            run.frames_lost.to_string(),
        ]);
    }
    t.row(vec![
        "pooled".into(),
        r.pooled.frames.to_string(),
        NONE.into(),
        table::ms(r.pooled.frame.median_ms),
        table::ms(r.pooled.frame.p95_ms),
        table::ms(r.pooled.frame.p99_ms),
        format!("{:.2}", r.pooled.hitches_per_min),
        NONE.into(),
    ]);
    let floor = |p: &str| unsigned_pct(r.noise_floor.get(p).copied().flatten());
    t.row(vec![
        "noise floor".into(),
        NONE.into(),
        NONE.into(),
        floor("frame.p50"),
        floor("frame.p95"),
        floor("frame.p99"),
        floor("hitches.per_min"),
        NONE.into(),
    ]);
    t
}

fn counters_line(r: &BenchResult) -> String {
    if r.pooled.counters.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = r
        .pooled
        .counters
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    format!(
        "counters (exact totals over every run's measured frames): {}\n",
        parts.join(" · ")
    )
}

fn metrics_table(c: &Comparison) -> Table {
    let mut t = Table::new(&[
        "metric",
        "before",
        "after",
        "change",
        "noise",
        "detectable",
        "p",
        "verdict",
    ])
    .align(7, Align::Left);
    for m in &c.metrics {
        let p = m
            .p_value
            .map_or_else(|| NONE.to_owned(), |p| format!("{p:.4}"));
        let detectable = match m.kind {
            MetricKind::Timing => unsigned_pct(m.smallest_detectable),
            MetricKind::Counter => "exact".to_owned(),
        };
        t.row(vec![
            m.metric.clone(),
            value(&m.metric, Some(m.before)),
            value(&m.metric, Some(m.after)),
            pct(m.change),
            unsigned_pct(m.noise_floor),
            detectable,
            p,
            m.verdict.as_str().to_owned(),
        ]);
    }
    for m in &c.missing {
        t.row(vec![
            m.metric.clone(),
            value(&m.metric, Some(m.before)),
            "missing".to_owned(),
            NONE.to_owned(),
            NONE.to_owned(),
            NONE.to_owned(),
            NONE.to_owned(),
            m.verdict.as_str().to_owned(),
        ]);
    }
    t
}

fn headline(c: &Comparison) -> String {
    format!(
        "{} (exit {})",
        c.overall.verdict.as_str().to_uppercase(),
        c.overall.exit_code
    )
}

fn side_line(label: &str, s: &framewise_analysis::bench::compare::SideInfo) -> String {
    format!(
        "{label}: {} at {} · {} runs{}{} · config {}",
        s.name,
        s.at,
        s.runs,
        s.build
            .as_deref()
            .map(|b| format!(" · build {b}"))
            .unwrap_or_default(),
        s.git_revision
            .as_deref()
            .map(|g| format!(" · git {g}"))
            .unwrap_or_default(),
        s.config_hash
    )
}

impl Report for View {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(match &self.outcome {
            Outcome::Ran { result, file } => serde_json::to_value(RanJson {
                file: file.display().to_string(),
                result,
            })?,
            Outcome::Compared { comparison, ran } => serde_json::to_value(ComparedJson {
                result_file: ran.as_ref().map(|p| p.display().to_string()),
                comparison,
            })?,
            Outcome::FirstResult { file } => serde_json::to_value(FirstJson {
                file: file.display().to_string(),
                verdict: VerdictWord::Inconclusive,
                exit_code: 2,
                reason: FIRST_REASON.to_owned(),
            })?,
        })
    }

    fn console(&self, out: &mut String) {
        match &self.outcome {
            Outcome::Ran { result, file } => {
                result_lines(result, &file.display().to_string(), out);
                out.push_str("frame time, ms (period), measured frames only\n");
                runs_table(result).console(out, 2);
                let counters = counters_line(result);
                if !counters.is_empty() {
                    out.push('\n');
                    out.push_str(&counters);
                }
            }
            Outcome::FirstResult { file } => {
                out.push_str(&format!(
                    "wrote {}\nINCONCLUSIVE (exit 2): {FIRST_REASON}\n",
                    file.display()
                ));
            }
            Outcome::Compared { comparison: c, ran } => {
                if let Some(file) = ran {
                    out.push_str(&format!("wrote {}\n", file.display()));
                }
                out.push_str(&format!(
                    "{}\n{}\n\n{}\n",
                    side_line("before", &c.before),
                    side_line("after ", &c.after),
                    headline(c)
                ));
                for r in &c.overall.reasons {
                    out.push_str(&format!("  {r}\n"));
                }
                if !c.metrics.is_empty() || !c.missing.is_empty() {
                    out.push('\n');
                    metrics_table(c).console(out, 0);
                }
                if !c.overall.budgets.is_empty() {
                    out.push_str("\nbudgets (the after side; decided by `framewise check`)\n");
                    budgets_table(&c.overall.budgets, true).console(out, 2);
                }
                out.push_str(&format!("\nmethod: {}\n", c.method));
            }
        }
    }

    fn markdown(&self, out: &mut String) {
        match &self.outcome {
            Outcome::Ran { result, file } => {
                out.push_str(&format!("### framewise bench {}\n\n", result.name));
                let mut text = String::new();
                result_lines(result, &file.display().to_string(), &mut text);
                for l in text.lines().filter(|l| !l.is_empty()) {
                    out.push_str(&format!("- {}\n", l.trim()));
                }
                out.push('\n');
                runs_table(result).markdown(out);
            }
            Outcome::FirstResult { file } => out.push_str(&format!(
                "### framewise bench: INCONCLUSIVE (exit 2)\n\n{FIRST_REASON} (wrote `{}`)\n",
                file.display()
            )),
            Outcome::Compared { comparison: c, .. } => {
                out.push_str(&format!("### framewise bench: {}\n\n", headline(c)));
                for r in &c.overall.reasons {
                    out.push_str(&format!("- {r}\n"));
                }
                out.push('\n');
                metrics_table(c).markdown(out);
                if !c.overall.budgets.is_empty() {
                    out.push_str("\n**Budgets** (the after side)\n\n");
                    budgets_table(&c.overall.budgets, true).markdown(out);
                }
            }
        }
    }

    fn annotations(&self) -> Vec<Annotation> {
        if let Outcome::Ran { result, .. } = &self.outcome {
            let why = super::unfit(result);
            if why.is_empty() {
                return Vec::new();
            }
            return vec![Annotation {
                level: "warning",
                title: format!("framewise bench {}: inconclusive", result.name),
                message: format!(
                    "{}: comparisons with this result are inconclusive",
                    why.join("; ")
                ),
            }];
        }
        let Outcome::Compared { comparison: c, .. } = &self.outcome else {
            return Vec::new();
        };
        let level = match c.overall.verdict {
            VerdictWord::Regressed | VerdictWord::Incomparable => "error",
            VerdictWord::Improved => "notice",
            _ => "warning",
        };
        vec![Annotation {
            level,
            title: format!("framewise bench: {}", c.overall.verdict.as_str()),
            message: c.overall.reasons.join("; "),
        }]
    }
}
