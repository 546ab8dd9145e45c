//! `framewise trace`: Chrome Trace Event JSON that Perfetto and chrome://tracing load.
//!
//! - CPU and GPU are separate processes (pid 1 "CPU", pid 2 "GPU (nominal clock)"); each
//!   thread and each GPU queue is its own track, named with `M` events. Those carry
//!   `"ts":0`: the format does not need a time on metadata, but some consumers reject an
//!   event without one, and every event having a `ts` is simpler to check.
//! - One `X` event per span, in microseconds written from integer nanoseconds with three
//!   decimals, so nothing is rounded; a child that would outlast its parent is clipped to
//!   the parent and counted (parents are never shorter than children).
//! - Frames are `X` events on their own "frames" track; marks are `i`; counters are `C`
//!   samples at each frame's begin.
//! - GPU spans are GPU-measured durations placed on the CPU axis at each frame's anchor: a
//!   nominal clock, labelled as such. CPU and GPU clocks are never merged into one.
//! - A capture without a measured clock (a `.litecap` without a timeline) is refused:
//!   durations without a clock cannot make an honest flame chart.

use std::io::Write;

use serde::Serialize;

use super::events::{
    Complete, Counter, CounterArgs, CounterDecl, CounterValue, Escaped, FrameArgs, FrameName, Head,
    Instant, Metadata, Micros, NameArgs, NoArgs, OtherData, SiteArgs, UsermarkArgs,
};
use crate::model::{Capture, SourceKind};

/// Why a trace could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The capture's frame begins are not measured on a clock.
    #[error("this {kind:?} capture's frame begins were not measured (no timeline, or one without a boundary for every frame: frame durations only); a trace needs absolute times")]
    NoTimeline {
        /// The capture's source kind.
        kind: SourceKind,
    },
    /// The capture was loaded without spans.
    #[error(
        "the capture was loaded without spans; load it with with_spans = true to export a trace"
    )]
    NoSpans,
    /// Writing failed.
    #[error("writing the trace failed after {written} bytes were serialized: {source}")]
    Io {
        /// Bytes handed to the writer before the failure (a buffered writer may have passed
        /// on fewer of them).
        written: u64,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Trace export options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// Shift every time so the first frame begins at 0.
    pub normalize: bool,
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Events written.
    pub events: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Spans clipped to their parent.
    pub clipped_spans: u64,
}

struct Out<W: Write> {
    w: W,
    bytes: u64,
    events: u64,
    first: bool,
    /// One event, serialized before it is written whole.
    line: Vec<u8>,
}

impl<W: Write> Out<W> {
    fn raw(&mut self, s: &[u8]) -> Result<(), ExportError> {
        self.w.write_all(s).map_err(|source| ExportError::Io {
            written: self.bytes,
            source,
        })?;
        self.bytes += s.len() as u64;
        Ok(())
    }

    /// `value` as JSON, without a separator.
    fn value<T: Serialize>(&mut self, value: &T) -> Result<(), ExportError> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, value).map_err(|e| self.serializing(e))?;
        let line = std::mem::take(&mut self.line);
        let written = self.raw(&line);
        self.line = line;
        written
    }

    /// `object` (a struct, so a JSON object) with its closing brace left off: the caller
    /// writes more members, then closes it.
    fn open_object<T: Serialize>(&mut self, object: &T) -> Result<(), ExportError> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, object).map_err(|e| self.serializing(e))?;
        if self.line.pop() != Some(b'}') {
            return Err(self.serializing(serde::ser::Error::custom("not an object")));
        }
        let line = std::mem::take(&mut self.line);
        let written = self.raw(&line);
        self.line = line;
        written
    }

    /// One event of `traceEvents`.
    fn event<T: Serialize>(&mut self, event: &T) -> Result<(), ExportError> {
        if self.first {
            self.first = false;
            self.raw(b"\n")?;
        } else {
            self.raw(b",\n")?;
        }
        self.events += 1;
        self.value(event)
    }

    fn serializing(&self, e: serde_json::Error) -> ExportError {
        ExportError::Io {
            written: self.bytes,
            source: e.into(),
        }
    }
}

/// The escaped name at `at`, or `unnamed` (`""`) when the table has none there.
fn named<'n>(names: &'n [Escaped], at: u32, unnamed: &'n Escaped) -> &'n Escaped {
    names.get(at as usize).unwrap_or(unnamed)
}

const CPU_PID: u32 = 1;
const GPU_PID: u32 = 2;
const FRAMES_TID: u32 = 0;

fn process_name(pid: u32, name: &str) -> Metadata<'_> {
    Metadata {
        ph: "M",
        name: "process_name",
        pid,
        tid: 0,
        ts: 0,
        args: NameArgs { name },
    }
}

fn thread_name(pid: u32, tid: u32, name: &str) -> Metadata<'_> {
    Metadata {
        ph: "M",
        name: "thread_name",
        pid,
        tid,
        ts: 0,
        args: NameArgs { name },
    }
}

/// Writes `capture` as a Chrome trace, event by event: nothing but the current event is
/// held in memory. `out` receives one write per event; buffer it when it is a file.
pub fn write_trace<W: Write>(
    capture: &Capture,
    options: TraceOptions,
    out: W,
) -> Result<TraceStats, ExportError> {
    if !capture.meta().clock_measured {
        return Err(ExportError::NoTimeline {
            kind: capture.meta().source,
        });
    }
    let spans = capture.spans().ok_or(ExportError::NoSpans)?;
    let origin = if options.normalize {
        capture.frames().cpu_begin_ns.first().copied().unwrap_or(0)
    } else {
        0
    };
    let t = |ns: u64| Micros(ns.saturating_sub(origin));
    let mut o = Out {
        w: out,
        bytes: 0,
        events: 0,
        first: true,
        line: Vec::with_capacity(256),
    };
    // `{"displayTimeUnit":…,"otherData":{…}`, then `traceEvents` streamed in its place.
    o.open_object(&Head {
        display_time_unit: "ms",
        other_data: OtherData {
            counters: capture
                .counters()
                .iter()
                .map(|c| CounterDecl {
                    name: &c.name,
                    kind: c.kind,
                    numeric: c.numeric,
                })
                .collect(),
            defects: capture.defects(),
            frame_budget_ns: capture.meta().frame_budget_ns,
            generator: "framewise",
            gpu_clock: "nominal: GPU-measured durations placed at each frame's CPU anchor; not the CPU clock",
            grade: capture.grade(),
            source: capture.meta().source,
        },
    })?;
    o.raw(b",\"traceEvents\":[")?;

    // Names.
    o.event(&process_name(CPU_PID, "CPU"))?;
    o.event(&thread_name(CPU_PID, FRAMES_TID, "frames"))?;
    for (tid, name) in (1..).zip(capture.threads()) {
        o.event(&thread_name(CPU_PID, tid, name))?;
    }
    if capture.gpu_timed() {
        o.event(&process_name(GPU_PID, "GPU (nominal clock)"))?;
        for (tid, name) in (1..).zip(capture.queues()) {
            o.event(&thread_name(
                GPU_PID,
                tid,
                &format!("{name} (nominal clock)"),
            ))?;
        }
    }

    let escaped = |names: &mut dyn Iterator<Item = &str>| -> Result<Vec<Escaped>, ExportError> {
        names
            .map(Escaped::new)
            .collect::<Result<_, _>>()
            .map_err(|e| o.serializing(e))
    };
    let scope_names = escaped(&mut capture.scopes().iter().map(|s| s.name.as_str()))?;
    let pass_names = escaped(&mut capture.passes().iter().map(|p| p.name.as_str()))?;
    let mark_names = escaped(&mut capture.mark_names().iter().map(String::as_str))?;
    let counter_names = escaped(&mut capture.counters().iter().map(|c| c.name.as_str()))?;
    let unnamed = Escaped::new("").map_err(|e| o.serializing(e))?;
    let scope_args: Vec<Option<SiteArgs>> = capture
        .scopes()
        .iter()
        .map(|s| s.site().map(|site| SiteArgs { site }))
        .collect();
    let mut clipped = 0u64;
    let mut stack: Vec<(u32, u32, u64, u64)> = Vec::new();

    for (r, f) in capture.frames().rows().enumerate() {
        o.event(&Complete {
            ph: "X",
            name: FrameName(f.index),
            cat: "frame",
            pid: CPU_PID,
            tid: FRAMES_TID,
            ts: t(f.cpu_begin_ns),
            dur: Micros(f.work_ns()),
            args: Some(&FrameArgs {
                index: f.index,
                paused: f.paused,
                period_us: f.period_ns.map(Micros),
            }),
        })?;

        // CPU spans, pre-order per thread: clip children to their parent.
        stack.clear();
        for s in spans.cpu.frame(r) {
            while let Some(&(thread, depth, _, _)) = stack.last() {
                if thread != s.thread || depth >= s.depth {
                    stack.pop();
                } else {
                    break;
                }
            }
            let mut start = s.start_ns;
            let mut end = s.end_ns.max(start);
            if let Some(&(_, _, pstart, pend)) = stack.last() {
                if start < pstart || end > pend {
                    clipped += 1;
                    start = start.clamp(pstart, pend);
                    end = end.clamp(start, pend);
                }
            }
            stack.push((s.thread, s.depth, start, end));
            o.event(&Complete {
                ph: "X",
                name: named(&scope_names, s.scope, &unnamed),
                cat: "cpu",
                pid: CPU_PID,
                tid: s.thread + 1,
                ts: t(start),
                dur: Micros(end - start),
                args: scope_args.get(s.scope as usize).and_then(Option::as_ref),
            })?;
        }

        // GPU spans (nominal), per queue track.
        for g in spans.gpu.frame(r) {
            let queue = capture.passes().get(g.pass as usize).map_or(0, |p| p.queue);
            o.event(&Complete::<_, NoArgs> {
                ph: "X",
                name: named(&pass_names, g.pass, &unnamed),
                cat: "gpu",
                pid: GPU_PID,
                tid: queue + 1,
                ts: t(g.nominal_start_ns),
                dur: Micros(g.nominal_end_ns.saturating_sub(g.nominal_start_ns)),
                args: None,
            })?;
        }

        for e in capture.counter_values().frame(r) {
            o.event(&Counter {
                ph: "C",
                name: named(&counter_names, e.counter, &unnamed),
                pid: CPU_PID,
                tid: 0,
                ts: t(f.cpu_begin_ns),
                args: CounterArgs {
                    value: CounterValue(capture.counter_value(e)),
                },
            })?;
        }
    }

    for m in capture.marks() {
        o.event(&Instant {
            ph: "i",
            s: "t",
            name: named(&mark_names, m.name, &unnamed),
            pid: CPU_PID,
            tid: m.thread.map_or(FRAMES_TID, |t| t + 1),
            ts: t(m.at_ns),
            args: m.user.as_ref().map(|u| UsermarkArgs {
                usermark: true,
                window_us: Micros(u.window_ns),
                note: &u.note,
            }),
        })?;
    }
    o.raw(b"\n]}\n")?;
    o.w.flush().map_err(|source| ExportError::Io {
        written: o.bytes,
        source,
    })?;
    Ok(TraceStats {
        events: o.events,
        bytes: o.bytes,
        clipped_spans: clipped,
    })
}
