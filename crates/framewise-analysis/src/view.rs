//! Per-frame readings for the inspector (`framewise view`): one frame's totals by name,
//! one name's value in every frame (a series), and two frames side by side.
//!
//! Names group the way [`crate::summarize`] groups them: call sites of a scope with the
//! same name are one row, their per-frame inclusive totals added, so that a frame's row,
//! a series and the statistics over a range always read the same number. A value that was
//! not recorded in a frame is `None`, never 0.

use serde::{Deserialize, Serialize};

use crate::model::{Agg, Capture, CounterKind, Numeric, PerFrame};
use crate::stats::Num;

/// One scope's or GPU pass's total within one frame, its call sites merged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameTotal {
    /// The scope or pass name.
    pub name: String,
    /// Times it ran in the frame.
    pub calls: u64,
    /// Inclusive total, ns.
    pub total_ns: u64,
    /// Self time, ns (for a GPU pass, equal to its total minus nested passes).
    pub self_ns: u64,
}

/// One counter's value in one frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CounterReading {
    /// The counter's name.
    pub name: String,
    /// Sum or gauge.
    pub kind: CounterKind,
    /// The value as recorded: an exact integer, or a float for an imported counter.
    pub value: Num,
}

/// What one frame recorded, by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameTotals {
    /// Scopes, largest total first (then by name).
    pub scopes: Vec<NameTotal>,
    /// GPU passes (timed ones), largest total first (then by name).
    pub passes: Vec<NameTotal>,
    /// Counters recorded in the frame, by name.
    pub counters: Vec<CounterReading>,
}

fn totals_by_name<'a>(aggs: &[Agg], name_of: impl Fn(u32) -> Option<&'a str>) -> Vec<NameTotal> {
    let mut out: Vec<NameTotal> = Vec::new();
    for a in aggs {
        let Some(name) = name_of(a.id) else { continue };
        match out.iter_mut().find(|t| t.name == name) {
            Some(t) => {
                t.calls = t.calls.saturating_add(u64::from(a.calls));
                t.total_ns = t.total_ns.saturating_add(a.total_ns);
                t.self_ns = t.self_ns.saturating_add(a.self_ns);
            }
            None => out.push(NameTotal {
                name: name.to_owned(),
                calls: u64::from(a.calls),
                total_ns: a.total_ns,
                self_ns: a.self_ns,
            }),
        }
    }
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

pub(crate) fn counter_num(capture: &Capture, counter: u32, raw: i64) -> Num {
    match capture.counters().get(counter as usize).map(|c| c.numeric) {
        Some(Numeric::Float) => Num::Float(f64::from_bits(raw as u64)),
        _ => Num::Int(raw),
    }
}

/// Frame `row`'s scopes, passes and counters by name (empty when the row does not exist,
/// or the capture was loaded summary-only and kept no per-frame aggregates).
pub fn frame_totals(capture: &Capture, row: usize) -> FrameTotals {
    let scopes = totals_by_name(capture.scope_aggs().frame(row), |id| {
        capture.scopes().get(id as usize).map(|s| s.name.as_str())
    });
    let passes = totals_by_name(capture.pass_aggs().frame(row), |id| {
        capture.passes().get(id as usize).map(|p| p.name.as_str())
    });
    let mut counters: Vec<CounterReading> = capture
        .counter_values()
        .frame(row)
        .iter()
        .filter_map(|e| {
            let info = capture.counters().get(e.counter as usize)?;
            Some(CounterReading {
                name: info.name.clone(),
                kind: info.kind,
                value: counter_num(capture, e.counter, e.raw),
            })
        })
        .collect();
    counters.sort_by(|a, b| a.name.cmp(&b.name));
    FrameTotals {
        scopes,
        passes,
        counters,
    }
}

/// What a series follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesKind {
    /// A CPU scope's inclusive total per frame, ns.
    Scope,
    /// A GPU pass's total per frame, ns.
    Pass,
    /// A counter's value per frame.
    Counter,
}

impl SeriesKind {
    /// The kind for its name (`scope`, `pass`, `counter`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "scope" => Some(Self::Scope),
            "pass" => Some(Self::Pass),
            "counter" => Some(Self::Counter),
            _ => None,
        }
    }

    /// The unit of its values: `ns` for scopes and passes, `count` for counters.
    pub fn unit(self) -> &'static str {
        match self {
            Self::Scope | Self::Pass => "ns",
            Self::Counter => "count",
        }
    }
}

fn name_series(aggs: &PerFrame<Agg>, frames: usize, ids: &[u32]) -> Vec<Option<Num>> {
    (0..frames)
        .map(|row| {
            let mut total: Option<u64> = None;
            for a in aggs.frame(row) {
                if ids.contains(&a.id) {
                    total = Some(total.unwrap_or(0).saturating_add(a.total_ns));
                }
            }
            total.map(|t| Num::Int(i64::try_from(t).unwrap_or(i64::MAX)))
        })
        .collect()
}

pub(crate) fn ids_named<'a>(names: impl Iterator<Item = &'a str>, name: &str) -> Vec<u32> {
    names
        .enumerate()
        .filter(|(_, n)| *n == name)
        .filter_map(|(id, _)| u32::try_from(id).ok())
        .collect()
}

/// The named scope's, pass's or counter's value in every frame of the capture (one entry
/// per row, `None` where it did not run or was not recorded), or `None` when the capture
/// has no such name. Paused frames keep their values: the series shows what ran.
pub fn series(capture: &Capture, kind: SeriesKind, name: &str) -> Option<Vec<Option<Num>>> {
    let frames = capture.frame_count();
    match kind {
        SeriesKind::Scope => {
            let ids = ids_named(capture.scopes().iter().map(|s| s.name.as_str()), name);
            (!ids.is_empty()).then(|| name_series(capture.scope_aggs(), frames, &ids))
        }
        SeriesKind::Pass => {
            let ids = ids_named(capture.passes().iter().map(|p| p.name.as_str()), name);
            (!ids.is_empty()).then(|| name_series(capture.pass_aggs(), frames, &ids))
        }
        SeriesKind::Counter => {
            let id = capture.counter_id(name)?;
            Some(
                (0..frames)
                    .map(|row| {
                        capture
                            .counter_in_frame(row, id)
                            .map(|e| counter_num(capture, id, e.raw))
                    })
                    .collect(),
            )
        }
    }
}

/// What a comparison row compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompareKind {
    /// The frame's period, ns.
    Frame,
    /// The frame's CPU work, ns.
    Work,
    /// The frame's GPU time, ns.
    Gpu,
    /// A scope's inclusive total, ns.
    Scope,
    /// A GPU pass's total, ns.
    Pass,
    /// A counter's value.
    Counter,
}

/// One row of a frame comparison. Every row is lower-is-better (times and counts).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    /// What it compares.
    pub kind: CompareKind,
    /// The scope, pass or counter name; `frame`, `work` or `gpu` for the frame's own rows.
    pub name: String,
    /// The value in frame A, if recorded.
    pub a: Option<Num>,
    /// The value in frame B, if recorded.
    pub b: Option<Num>,
    /// `b − a`; `None` when either is.
    pub delta: Option<Num>,
}

fn delta(a: Option<Num>, b: Option<Num>) -> Option<Num> {
    match (a?, b?) {
        (Num::Int(x), Num::Int(y)) => y.checked_sub(x).map(Num::Int),
        (x, y) => Some(Num::Float(y.as_f64() - x.as_f64())),
    }
}

fn ns(v: Option<u64>) -> Option<Num> {
    v.map(|v| Num::Int(i64::try_from(v).unwrap_or(i64::MAX)))
}

/// Frames `a` and `b` side by side: period, work, GPU time, then every scope, pass and
/// counter either frame recorded (scopes and passes by frame A's order, then B's names,
/// counters by name). `None` when either row does not exist.
pub fn compare_frames(capture: &Capture, a: usize, b: usize) -> Option<Vec<CompareRow>> {
    let fa = capture.frames().row(a)?;
    let fb = capture.frames().row(b)?;
    let row = |kind, name: &str, x: Option<Num>, y: Option<Num>| CompareRow {
        kind,
        name: name.to_owned(),
        a: x,
        b: y,
        delta: delta(x, y),
    };
    let mut out = vec![
        row(
            CompareKind::Frame,
            "frame",
            ns(fa.period_ns),
            ns(fb.period_ns),
        ),
        row(
            CompareKind::Work,
            "work",
            ns(Some(fa.work_ns())),
            ns(Some(fb.work_ns())),
        ),
        row(CompareKind::Gpu, "gpu", ns(fa.gpu_ns), ns(fb.gpu_ns)),
    ];
    let ta = frame_totals(capture, a);
    let tb = frame_totals(capture, b);
    for (kind, xs, ys) in [
        (CompareKind::Scope, &ta.scopes, &tb.scopes),
        (CompareKind::Pass, &ta.passes, &tb.passes),
    ] {
        let mut names: Vec<&str> = xs.iter().map(|t| t.name.as_str()).collect();
        for t in ys {
            if !names.contains(&t.name.as_str()) {
                names.push(&t.name);
            }
        }
        for name in names {
            let get =
                |ts: &Vec<NameTotal>| ns(ts.iter().find(|t| t.name == name).map(|t| t.total_ns));
            out.push(row(kind, name, get(xs), get(ys)));
        }
    }
    let mut names: Vec<&str> = ta
        .counters
        .iter()
        .chain(&tb.counters)
        .map(|c| c.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let get = |cs: &Vec<CounterReading>| cs.iter().find(|c| c.name == name).map(|c| c.value);
        out.push(row(
            CompareKind::Counter,
            name,
            get(&ta.counters),
            get(&tb.counters),
        ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{CaptureBuilder, FrameInput, LaneInput, SpanInput};
    use crate::model::SourceKind;

    /// Three frames: `work` runs from two call sites in frame 0, once in frame 2, never in
    /// frame 1; `draws` is recorded in frames 0 and 2.
    fn capture() -> Capture {
        let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
        let site_a = b.scope("work", "a.rs", 1);
        let site_b = b.scope("work", "b.rs", 2);
        let other = b.scope("other", "c.rs", 3);
        let thread = b.thread("main");
        let draws = b.counter("draws", CounterKind::Sum, Numeric::Integer);
        let mut f = FrameInput::default();
        for i in 0..3u64 {
            f.clear();
            f.index = i;
            f.cpu_begin_ns = i * 10_000;
            f.cpu_end_ns = f.cpu_begin_ns + 5_000;
            let at = f.cpu_begin_ns;
            let span = |scope, start: u64, len: u64| SpanInput {
                scope,
                depth: 0,
                start_ns: at + start,
                end_ns: at + start + len,
            };
            let spans = match i {
                0 => vec![span(site_a, 0, 1_000), span(site_b, 1_000, 500)],
                1 => vec![span(other, 0, 2_000)],
                _ => vec![span(site_a, 0, 3_000)],
            };
            f.lanes.push(LaneInput {
                thread,
                spans,
                dropped_spans: 0,
            });
            if i != 1 {
                f.counters.push((draws, 10 * (i as i64 + 1)));
            }
            b.push_frame(&f);
        }
        b.finish()
    }

    #[test]
    fn a_frame_groups_call_sites_by_name() {
        let c = capture();
        let t = frame_totals(&c, 0);
        assert_eq!(t.scopes.len(), 1);
        assert_eq!(t.scopes[0].name, "work");
        assert_eq!((t.scopes[0].calls, t.scopes[0].total_ns), (2, 1_500));
        assert_eq!(t.counters[0].value, Num::Int(10));
        assert_eq!(frame_totals(&c, 9), FrameTotals::default());
    }

    #[test]
    fn a_series_is_absent_where_the_name_did_not_run() {
        let c = capture();
        assert_eq!(
            series(&c, SeriesKind::Scope, "work"),
            Some(vec![Some(Num::Int(1_500)), None, Some(Num::Int(3_000))])
        );
        assert_eq!(
            series(&c, SeriesKind::Counter, "draws"),
            Some(vec![Some(Num::Int(10)), None, Some(Num::Int(30))])
        );
        assert_eq!(series(&c, SeriesKind::Scope, "nope"), None);
        assert_eq!(series(&c, SeriesKind::Pass, "work"), None);
    }

    #[test]
    fn a_comparison_has_no_delta_where_either_side_is_missing() {
        let c = capture();
        let rows = compare_frames(&c, 0, 1).expect("both rows exist");
        let find = |name: &str| rows.iter().find(|r| r.name == name).expect(name);
        assert_eq!(find("frame").delta, Some(Num::Int(0)));
        assert_eq!(find("work").a, Some(Num::Int(5_000)));
        assert_eq!(find("gpu").a, None);
        assert_eq!(find("work").delta, Some(Num::Int(0)));
        let other = rows
            .iter()
            .find(|r| r.kind == CompareKind::Scope && r.name == "other");
        assert_eq!(other.map(|r| (r.a, r.delta)), Some((None, None)));
        let draws = find("draws");
        assert_eq!(
            (draws.a, draws.b, draws.delta),
            (Some(Num::Int(10)), None, None)
        );
        assert!(compare_frames(&c, 0, 3).is_none());
    }
}
