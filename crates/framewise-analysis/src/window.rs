//! A window of consecutive frames on one time axis: the continuous timeline's data.
//!
//! [`window`] reads the CPU spans, nominal GPU spans, marks and counter values of rows
//! `from..to` and places them all on one axis: nanoseconds from the capture's first frame's
//! begin (its `origin_ns`), so that frames lie end to end as they ran. Each CPU span carries
//! its self time (its duration less its direct children's on the same thread, never below
//! 0), the row of the frame it belongs to, and its scope's id in [`Window::scopes`] (names
//! are sent once, not per span). GPU spans keep their nominal placement (the GPU-measured
//! duration at the frame's CPU anchor): the two clocks are never merged.

use serde::{Deserialize, Serialize};

use crate::load::{FrameReadError, FrameSource};
use crate::model::{Capture, CounterKind, SpanRow};
use crate::stats::Num;

/// A scope's name and call site, as [`Window::scopes`] lists them (by scope id).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeName {
    /// The scope's name.
    pub name: String,
    /// `file:line`, when known.
    pub site: Option<String>,
}

/// One frame of the window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowFrame {
    /// Its row.
    pub row: usize,
    /// Its index as the source numbered it.
    pub index: u64,
    /// CPU begin, ns from the origin.
    pub begin_ns: i64,
    /// CPU end, ns from the origin.
    pub end_ns: i64,
    /// Period (to the next frame's begin), ns; `None` when unknown.
    pub period_ns: Option<u64>,
    /// The host declared it paused.
    pub paused: bool,
    /// Spans the recorder dropped in it.
    pub dropped_spans: u64,
}

/// One CPU span.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowSpan {
    /// The row of its frame.
    pub row: usize,
    /// Its scope: an index into [`Window::scopes`].
    pub scope: u32,
    /// Nesting depth on its thread.
    pub depth: u32,
    /// Start, ns from the origin.
    pub start_ns: i64,
    /// Duration, ns.
    pub dur_ns: u64,
    /// Duration less its direct children's, ns (never below 0).
    pub self_ns: u64,
}

/// One thread's spans over the window, in time order per frame (pre-order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowLane {
    /// The thread's name.
    pub thread: String,
    /// Its spans.
    pub spans: Vec<WindowSpan>,
}

/// One timed GPU pass instance, placed nominally.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowGpuSpan {
    /// The row of its frame.
    pub row: usize,
    /// The pass's name.
    pub pass: String,
    /// Nesting depth among its queue's passes.
    pub depth: u32,
    /// Nominal start, ns from the origin.
    pub start_ns: i64,
    /// Duration as measured, ns.
    pub dur_ns: u64,
}

/// One instant mark.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowMark {
    /// The row of its frame.
    pub row: usize,
    /// The mark's name.
    pub name: String,
    /// The thread it was made on, if known.
    pub thread: Option<String>,
    /// When, ns from the origin.
    pub at_ns: i64,
    /// A usermark's note.
    pub note: Option<String>,
}

/// A counter's value in one frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CounterSample {
    /// The frame's row.
    pub row: usize,
    /// The value as recorded.
    pub value: Num,
}

/// A counter's values over the window (frames where it was not recorded are absent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowCounter {
    /// The counter's name.
    pub name: String,
    /// Sum or gauge.
    pub kind: CounterKind,
    /// Its values, by row.
    pub values: Vec<CounterSample>,
}

/// Rows `from..to` on one time axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// The first row.
    pub from: usize,
    /// One past the last row.
    pub to: usize,
    /// The axis' zero: the capture's first frame's CPU begin, ns on the capture's clock.
    pub origin_ns: u64,
    /// Every scope of the capture, by id.
    pub scopes: Vec<ScopeName>,
    /// The frames.
    pub frames: Vec<WindowFrame>,
    /// CPU lanes, by thread id (threads without a span in the window are left out).
    pub lanes: Vec<WindowLane>,
    /// Timed GPU pass instances, nominal.
    pub gpu: Vec<WindowGpuSpan>,
    /// Instant marks.
    pub marks: Vec<WindowMark>,
    /// Counters recorded in the window, in the capture's order.
    pub counters: Vec<WindowCounter>,
}

/// `at − origin` in ns, signed.
fn offset(at_ns: u64, origin_ns: u64) -> i64 {
    let d = i128::from(at_ns) - i128::from(origin_ns);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// Self time of each span of a frame (pre-order per thread): its duration less its direct
/// children's, never below 0.
pub fn self_times(spans: &[SpanRow]) -> Vec<u64> {
    let mut out: Vec<u64> = spans
        .iter()
        .map(|s| s.end_ns.saturating_sub(s.start_ns))
        .collect();
    // Per thread, the open spans: (depth, position).
    let mut stacks: Vec<(u32, Vec<(u32, usize)>)> = Vec::new();
    for (at, s) in spans.iter().enumerate() {
        let stack = match stacks.iter_mut().position(|(t, _)| *t == s.thread) {
            Some(i) => &mut stacks[i].1,
            None => {
                stacks.push((s.thread, Vec::new()));
                let last = stacks.len() - 1;
                &mut stacks[last].1
            }
        };
        while stack.last().is_some_and(|&(d, _)| d >= s.depth) {
            stack.pop();
        }
        if let Some(&(_, parent)) = stack.last() {
            let dur = s.end_ns.saturating_sub(s.start_ns);
            out[parent] = out[parent].saturating_sub(dur);
        }
        stack.push((s.depth, at));
    }
    out
}

/// Rows `from..to` of `capture` on one axis, spans from `source`. `Err` when a frame's spans
/// cannot be read; rows past the end are cut to the capture's frames.
pub fn window(
    capture: &Capture,
    source: &FrameSource,
    rows: std::ops::Range<usize>,
) -> Result<Window, FrameReadError> {
    let n = capture.frame_count();
    let (from, to) = (rows.start.min(n), rows.end.min(n));
    let to = to.max(from);
    let origin_ns = capture.frames().cpu_begin_ns.first().copied().unwrap_or(0);
    let threads = capture.threads();
    let mut lanes: Vec<WindowLane> = threads
        .iter()
        .map(|t| WindowLane {
            thread: t.clone(),
            spans: Vec::new(),
        })
        .collect();
    let mut frames = Vec::with_capacity(to - from);
    let mut gpu = Vec::new();
    for row in from..to {
        let Some(f) = capture.frames().row(row) else {
            continue;
        };
        frames.push(WindowFrame {
            row,
            index: f.index,
            begin_ns: offset(f.cpu_begin_ns, origin_ns),
            end_ns: offset(f.cpu_end_ns, origin_ns),
            period_ns: f.period_ns,
            paused: f.paused,
            dropped_spans: capture.dropped_spans_in(row),
        });
        let spans = source.frame_spans(capture, row)?;
        for (s, self_ns) in spans.cpu.iter().zip(self_times(&spans.cpu)) {
            if let Some(lane) = lanes.get_mut(s.thread as usize) {
                lane.spans.push(WindowSpan {
                    row,
                    scope: s.scope,
                    depth: s.depth,
                    start_ns: offset(s.start_ns, origin_ns),
                    dur_ns: s.end_ns.saturating_sub(s.start_ns),
                    self_ns,
                });
            }
        }
        for g in &spans.gpu {
            gpu.push(WindowGpuSpan {
                row,
                pass: capture
                    .passes()
                    .get(g.pass as usize)
                    .map_or_else(|| "?".to_owned(), |p| p.name.clone()),
                depth: g.depth,
                start_ns: offset(g.nominal_start_ns, origin_ns),
                dur_ns: g.nominal_end_ns.saturating_sub(g.nominal_start_ns),
            });
        }
    }
    lanes.retain(|l| !l.spans.is_empty());
    let marks = capture
        .marks()
        .iter()
        .filter(|m| (from..to).contains(&(m.frame_row as usize)))
        .map(|m| WindowMark {
            row: m.frame_row as usize,
            name: capture
                .mark_names()
                .get(m.name as usize)
                .cloned()
                .unwrap_or_else(|| "?".to_owned()),
            thread: m.thread.and_then(|t| threads.get(t as usize).cloned()),
            at_ns: offset(m.at_ns, origin_ns),
            note: m.user.as_ref().map(|u| u.note.clone()),
        })
        .collect();
    let counters = capture
        .counters()
        .iter()
        .enumerate()
        .filter_map(|(id, info)| {
            let id = u32::try_from(id).ok()?;
            let values: Vec<CounterSample> = (from..to)
                .filter_map(|row| {
                    capture.counter_in_frame(row, id).map(|e| CounterSample {
                        row,
                        value: crate::view::counter_num(capture, id, e.raw),
                    })
                })
                .collect();
            (!values.is_empty()).then(|| WindowCounter {
                name: info.name.clone(),
                kind: info.kind,
                values,
            })
        })
        .collect();
    Ok(Window {
        from,
        to,
        origin_ns,
        scopes: capture
            .scopes()
            .iter()
            .map(|s| ScopeName {
                name: s.name.clone(),
                site: s.site(),
            })
            .collect(),
        frames,
        lanes,
        gpu,
        marks,
        counters,
    })
}

#[cfg(test)]
mod tests;
