//! Summarizing a capture: [`SummaryOptions`] (budget, row range), per-name totals over the
//! non-paused frames from per-frame aggregates or from a summary-only load's columns, and
//! [`summarize_with`], which folds them with the frame and work blocks into a [`Summary`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

use crate::model::{Capture, Defect, DefectKind, Numeric};
use crate::stats::{CounterStats, FrameBlock, ScopeStats, WorkBlock};

use super::schema::{CaptureInfo, Methods, NamedMap, Summary, Units, SUMMARY_SCHEMA};

fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / crate::stats::NS_PER_MS
}

/// Groups ids by name and collects per-frame totals per name over non-paused frames.
fn named_stats(
    capture: &Capture,
    rows: &Range<usize>,
    aggs: &crate::model::PerFrame<crate::model::Agg>,
    names: &[String],
    sites: &[Option<String>],
) -> NamedMap<ScopeStats> {
    let mut group_of: Vec<usize> = Vec::with_capacity(names.len());
    let mut group_names: Vec<String> = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for name in names {
        let g = *index.entry(name.as_str()).or_insert_with(|| {
            group_names.push(name.clone());
            group_names.len() - 1
        });
        group_of.push(g);
    }
    let groups = group_names.len();
    let mut totals: Vec<Vec<u64>> = vec![Vec::new(); groups];
    let mut self_ns = vec![0u64; groups];
    let mut calls = vec![0u64; groups];
    let mut site_sets: Vec<BTreeSet<String>> = vec![Default::default(); groups];
    for (id, site) in sites.iter().enumerate() {
        if let (Some(site), Some(&g)) = (site, group_of.get(id)) {
            site_sets[g].insert(site.clone());
        }
    }
    let mut frame_acc = vec![0u64; groups];
    // The groups a frame touched, in the order it touched them, and a flag per group so
    // that each is listed once without searching the list (a frame may touch thousands).
    let mut touched: Vec<usize> = Vec::new();
    let mut is_touched = vec![false; groups];
    for row in rows.clone() {
        if capture.frames.paused.get(row).copied().unwrap_or(false) {
            continue;
        }
        for a in aggs.frame(row) {
            let Some(&g) = group_of.get(a.id as usize) else {
                continue;
            };
            if let Some(flag) = is_touched.get_mut(g).filter(|f| !**f) {
                *flag = true;
                touched.push(g);
            }
            frame_acc[g] = frame_acc[g].saturating_add(a.total_ns);
            self_ns[g] = self_ns[g].saturating_add(a.self_ns);
            calls[g] = calls[g].saturating_add(u64::from(a.calls));
        }
        for &g in &touched {
            totals[g].push(frame_acc[g]);
            frame_acc[g] = 0;
            is_touched[g] = false;
        }
        touched.clear();
    }
    let mut out: Vec<(String, ScopeStats)> = group_names
        .into_iter()
        .zip(totals)
        .enumerate()
        .filter(|(_, (_, t))| !t.is_empty())
        .map(|(g, (name, t))| {
            let sites = std::mem::take(&mut site_sets[g]).into_iter().collect();
            (
                name,
                ScopeStats::of_totals_ns(t, self_ns[g], calls[g], sites),
            )
        })
        .collect();
    out.sort_by(|a, b| b.1.total.total_cmp(&a.1.total).then_with(|| a.0.cmp(&b.0)));
    NamedMap(out)
}

type Blocks = (
    NamedMap<ScopeStats>,
    NamedMap<ScopeStats>,
    Vec<Vec<i64>>,
    Vec<Vec<f64>>,
);

/// Scope, pass and counter inputs from per-frame aggregates.
fn aggregate_stats(capture: &Capture, rows: &Range<usize>) -> Blocks {
    let f = capture.frames();
    let scope_names: Vec<String> = capture.scopes().iter().map(|s| s.name.clone()).collect();
    let scope_sites: Vec<Option<String>> = capture.scopes().iter().map(|s| s.site()).collect();
    let scopes = named_stats(
        capture,
        rows,
        capture.scope_aggs(),
        &scope_names,
        &scope_sites,
    );
    let pass_names: Vec<String> = capture.passes().iter().map(|p| p.name.clone()).collect();
    let passes = named_stats(
        capture,
        rows,
        capture.pass_aggs(),
        &pass_names,
        &vec![None; pass_names.len()],
    );
    let mut counter_ints: Vec<Vec<i64>> = vec![Vec::new(); capture.counters().len()];
    let mut counter_floats: Vec<Vec<f64>> = vec![Vec::new(); capture.counters().len()];
    for row in rows.clone() {
        if f.paused.get(row).copied().unwrap_or(false) {
            continue;
        }
        for e in capture.counter_values().frame(row) {
            let id = e.counter as usize;
            match capture.counters().get(id).map(|c| c.numeric) {
                Some(Numeric::Integer) => counter_ints[id].push(e.raw),
                Some(Numeric::Float) => counter_floats[id].push(f64::from_bits(e.raw as u64)),
                None => {}
            }
        }
    }
    (scopes, passes, counter_ints, counter_floats)
}

/// Each scope name's call sites (`file:line`), sorted and without repeats, gathered in one
/// pass over the scopes; a name without a known site is absent.
fn sites_by_name(capture: &Capture) -> HashMap<&str, BTreeSet<String>> {
    let mut sites: HashMap<&str, BTreeSet<String>> = HashMap::new();
    for s in capture.scopes() {
        if let Some(site) = s.site() {
            sites.entry(s.name.as_str()).or_default().insert(site);
        }
    }
    sites
}

/// Scope, pass and counter inputs from a summary-only load's columns.
fn columns_stats(capture: &Capture, cols: &crate::model::SummaryColumns) -> Blocks {
    let scope_sites = sites_by_name(capture);
    let named = |columns: &[crate::model::NameColumn], with_sites: bool| {
        // Sized first: a trace of 300,000 names would otherwise hold up to twice its rows
        // while the vector doubles.
        let ran = columns.iter().filter(|c| !c.totals_ns.is_empty()).count();
        let mut out: Vec<(String, ScopeStats)> = Vec::with_capacity(ran);
        out.extend(columns.iter().filter(|c| !c.totals_ns.is_empty()).map(|c| {
            let sites: Vec<String> = if with_sites {
                scope_sites
                    .get(c.name.as_str())
                    .map(|set| set.iter().cloned().collect())
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            (
                c.name.clone(),
                ScopeStats::of_totals_ns(c.totals_ns.to_vec(), c.self_ns, c.calls, sites),
            )
        }));
        out.sort_by(|a, b| b.1.total.total_cmp(&a.1.total).then_with(|| a.0.cmp(&b.0)));
        NamedMap(out)
    };
    let n = capture.counters().len();
    let mut counter_ints: Vec<Vec<i64>> = vec![Vec::new(); n];
    let mut counter_floats: Vec<Vec<f64>> = vec![Vec::new(); n];
    for (id, raw) in cols.counters.iter().enumerate().take(n) {
        match capture.counters().get(id).map(|c| c.numeric) {
            Some(Numeric::Integer) => counter_ints[id] = raw.to_vec(),
            Some(Numeric::Float) => {
                counter_floats[id] = raw.iter().map(|r| f64::from_bits(r as u64)).collect()
            }
            None => {}
        }
    }
    (
        named(&cols.scopes, true),
        named(&cols.passes, false),
        counter_ints,
        counter_floats,
    )
}

/// How to summarize. Build one from the default and the `with_*` methods; the type is
/// `#[non_exhaustive]` so that an option added later is not a breaking change.
///
/// ```
/// use framewise_analysis::{summarize_with, CaptureBuilder, SourceKind, SummaryOptions};
///
/// let capture = CaptureBuilder::new(SourceKind::Synthetic, false).finish();
/// let options = SummaryOptions::default().with_budget_ns(Some(8_333_333));
/// assert_eq!(summarize_with(&capture, &options).budget_ms, 8.333333);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SummaryOptions {
    /// The frame budget judged against, ns (`framewise.toml`'s `[budgets] frame_ms`);
    /// `None`: the capture's declared budget, else 60 Hz. The statistics do not depend on
    /// it; `budget_ms` reports it.
    pub budget_ns: Option<u64>,
    /// Rows of the frame table to summarize (`from..to`, 0-based positions); `None`: every
    /// frame. A range past the end is cut at the last frame. Each frame's period is still
    /// its own begin to the next frame's begin, so the last row of a range keeps its
    /// period. A summary-only load ([`crate::LoadOptions::with_summary_only`]) has no
    /// per-frame aggregates to restrict: a partial range then leaves the scope, pass and
    /// counter blocks empty and says so in `notes`. `capture.dropped_spans` and the
    /// dropped-spans defect count the range's frames only; the other defects are the
    /// whole capture's (they are not placed by row).
    pub rows: Option<Range<usize>>,
}

impl SummaryOptions {
    /// The defaults: the capture's own budget.
    pub fn new() -> Self {
        Self::default()
    }

    /// Judges against this budget, ns (`None`: the capture's).
    pub fn with_budget_ns(mut self, budget_ns: Option<u64>) -> Self {
        self.budget_ns = budget_ns;
        self
    }

    /// Summarizes only rows `rows` of the frame table (the inspector's selected range).
    ///
    /// ```
    /// use framewise_analysis::{summarize_with, CaptureBuilder, FrameInput, SourceKind, SummaryOptions};
    ///
    /// let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    /// let mut f = FrameInput::default();
    /// for i in 0..10u64 {
    ///     f.clear();
    ///     f.index = i;
    ///     f.cpu_begin_ns = i * 16_000_000;
    ///     f.cpu_end_ns = f.cpu_begin_ns + 1_000_000;
    ///     b.push_frame(&f);
    /// }
    /// let s = summarize_with(&b.finish(), &SummaryOptions::new().with_rows(2..5));
    /// assert_eq!(s.capture.frames, 3);
    /// assert_eq!(s.frame.times.count, 3); // row 4's period reaches row 5's begin
    /// ```
    pub fn with_rows(mut self, rows: Range<usize>) -> Self {
        self.rows = Some(rows);
        self
    }
}

/// Summarizes a capture with the default [`SummaryOptions`].
pub fn summarize(capture: &Capture) -> Summary {
    summarize_with(capture, &SummaryOptions::default())
}

/// Summarizes a capture.
pub fn summarize_with(capture: &Capture, options: &SummaryOptions) -> Summary {
    let f = capture.frames();
    let all = 0..f.len();
    let rows = match &options.rows {
        Some(r) => r.start.min(f.len())..r.end.min(f.len()).max(r.start.min(f.len())),
        None => all.clone(),
    };
    let mut periods = Vec::with_capacity(rows.len());
    let mut work = Vec::with_capacity(rows.len());
    let mut paused = 0u64;
    let mut without_period = 0u64;
    for row in rows.clone().filter_map(|r| f.row(r)) {
        if row.paused {
            paused += 1;
            continue;
        }
        work.push(row.work_ns());
        match row.period_ns {
            Some(p) => periods.push(p),
            None => without_period += 1,
        }
    }

    let mut notes = capture.meta().notes.clone();
    let (scopes, passes, counter_ints, counter_floats) = match capture.summary_columns() {
        Some(cols) if rows == all => columns_stats(capture, cols),
        Some(_) => {
            notes.push(format!(
                "rows {}..{} of a summary-only load: its per-name columns cannot be cut to a range, so scopes, passes and counters are left out",
                rows.start, rows.end
            ));
            let n = capture.counters().len();
            (
                NamedMap::default(),
                NamedMap::default(),
                vec![Vec::new(); n],
                vec![Vec::new(); n],
            )
        }
        None => aggregate_stats(capture, &rows),
    };
    let mut counters: Vec<(String, CounterStats)> = capture
        .counters()
        .iter()
        .enumerate()
        .filter_map(|(id, info)| {
            let stats = match info.numeric {
                Numeric::Integer => CounterStats::of_integers(info.kind, &counter_ints[id]),
                Numeric::Float => CounterStats::of_floats(info.kind, &counter_floats[id]),
            };
            (stats.count > 0).then(|| (info.name.clone(), stats))
        })
        .collect();
    counters.sort_by(|a, b| a.0.cmp(&b.0));

    let (dropped_spans, defects) = if rows == all {
        (capture.dropped_spans(), capture.defects().to_vec())
    } else {
        ranged_defects(capture, &rows)
    };
    let meta = capture.meta();
    let budget_ns = options
        .budget_ns
        .unwrap_or_else(|| capture.frame_budget_ns());
    Summary {
        schema: SUMMARY_SCHEMA.into(),
        units: Units {
            time: "ms".into(),
            counters: "count".into(),
        },
        capture: CaptureInfo {
            source: meta.source,
            source_version: meta.source_version,
            level: meta.level.clone(),
            build: meta.build.clone(),
            adapter: meta.adapter,
            adapter_name: meta.adapter_name.clone(),
            frames: rows.len() as u64,
            frames_paused: paused,
            frames_without_period: without_period,
            dropped_spans,
            clock_measured: meta.clock_measured,
        },
        grade: capture.grade(),
        methods: Methods::standard(budget_ns),
        budget_ms: ns_to_ms(budget_ns),
        frame: FrameBlock::of_periods_ns(periods, &work, budget_ns),
        work: WorkBlock::of_work_ns(work, budget_ns),
        scopes,
        passes,
        counters: NamedMap(counters),
        defects,
        notes,
    }
}

/// The spans the recorder dropped in `rows`, and the capture's defects with its
/// dropped-spans defect (the builder's, which counts every frame's) counting `rows` only:
/// left out when the range dropped none. The other defects are the capture's (they are
/// not placed by row).
fn ranged_defects(capture: &Capture, rows: &Range<usize>) -> (u64, Vec<Defect>) {
    let (spans, frames) = capture.dropped_spans_in_rows(rows.clone());
    let whole = capture.dropped_spans();
    let mut replaced = false;
    let mut defects = Vec::with_capacity(capture.defects().len());
    for d in capture.defects() {
        if !replaced && whole > 0 && d.kind == DefectKind::DroppedSpans && d.count == whole {
            replaced = true;
            if spans > 0 {
                defects.push(Defect::new(
                    DefectKind::DroppedSpans,
                    spans,
                    format!(
                        "the recorder dropped {spans} spans in {frames} frames of rows {}..{} (buffer full); scope totals in those frames are low",
                        rows.start, rows.end
                    ),
                ));
            }
        } else {
            defects.push(d.clone());
        }
    }
    (spans, defects)
}
