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

use crate::model::{Capture, SourceKind};

/// Why a trace could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The capture's frame begins are not measured on a clock.
    #[error("this {kind:?} capture has no timeline (frame durations only); a trace needs absolute times")]
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
    #[error("writing the trace failed after {written} bytes: {source}")]
    Io {
        /// Bytes written before the failure.
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

    fn event(&mut self, body: &str) -> Result<(), ExportError> {
        if self.first {
            self.first = false;
            self.raw(b"\n")?;
        } else {
            self.raw(b",\n")?;
        }
        self.events += 1;
        self.raw(body.as_bytes())
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// Microseconds with three decimals from integer ns: exact.
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

const CPU_PID: u32 = 1;
const GPU_PID: u32 = 2;
const FRAMES_TID: u32 = 0;

/// Writes `capture` as a Chrome trace.
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
    let t = |ns: u64| us(ns.saturating_sub(origin));
    let mut o = Out {
        w: out,
        bytes: 0,
        events: 0,
        first: true,
    };
    o.raw(b"{\"displayTimeUnit\":\"ms\",\"otherData\":")?;
    let other = serde_json::json!({
        "generator": "framewise",
        "source": capture.meta().source,
        "gpu_clock": "nominal: GPU-measured durations placed at each frame's CPU anchor; not the CPU clock",
        "grade": capture.grade(),
    });
    o.raw(other.to_string().as_bytes())?;
    o.raw(b",\"traceEvents\":[")?;

    // Names.
    o.event(&format!(
        r#"{{"ph":"M","name":"process_name","pid":{CPU_PID},"tid":0,"ts":0,"args":{{"name":"CPU"}}}}"#
    ))?;
    o.event(&format!(
        r#"{{"ph":"M","name":"thread_name","pid":{CPU_PID},"tid":{FRAMES_TID},"ts":0,"args":{{"name":"frames"}}}}"#
    ))?;
    for (i, name) in capture.threads().iter().enumerate() {
        o.event(&format!(
            r#"{{"ph":"M","name":"thread_name","pid":{CPU_PID},"tid":{},"ts":0,"args":{{"name":{}}}}}"#,
            i + 1,
            json_str(name)
        ))?;
    }
    if capture.gpu_timed() {
        o.event(&format!(
            r#"{{"ph":"M","name":"process_name","pid":{GPU_PID},"tid":0,"ts":0,"args":{{"name":"GPU (nominal clock)"}}}}"#
        ))?;
        for (i, name) in capture.queues().iter().enumerate() {
            o.event(&format!(
                r#"{{"ph":"M","name":"thread_name","pid":{GPU_PID},"tid":{},"ts":0,"args":{{"name":{}}}}}"#,
                i + 1,
                json_str(&format!("{name} (nominal clock)"))
            ))?;
        }
    }

    let scope_names: Vec<String> = capture.scopes().iter().map(|s| json_str(&s.name)).collect();
    let scope_args: Vec<String> = capture
        .scopes()
        .iter()
        .map(|s| {
            s.site()
                .map(|site| format!(r#","args":{{"site":{}}}"#, json_str(&site)))
                .unwrap_or_default()
        })
        .collect();
    let pass_names: Vec<String> = capture.passes().iter().map(|p| json_str(&p.name)).collect();
    let mark_names: Vec<String> = capture.mark_names().iter().map(|m| json_str(m)).collect();
    let counter_names: Vec<String> = capture
        .counters()
        .iter()
        .map(|c| json_str(&c.name))
        .collect();
    let mut clipped = 0u64;
    let mut stack: Vec<(u32, u32, u64, u64)> = Vec::new();
    let mut line = String::with_capacity(256);
    use std::fmt::Write as _;

    for (r, f) in capture.frames().rows().enumerate() {
        line.clear();
        let _ = write!(
            line,
            r#"{{"ph":"X","name":"frame {}","cat":"frame","pid":{CPU_PID},"tid":{FRAMES_TID},"ts":{},"dur":{},"args":{{"index":{},"paused":{}"#,
            f.index,
            t(f.cpu_begin_ns),
            us(f.work_ns()),
            f.index,
            f.paused
        );
        if let Some(p) = f.period_ns {
            let _ = write!(line, r#","period_us":{}"#, us(p));
        }
        line.push_str("}}");
        o.event(&line)?;

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
            line.clear();
            let _ = write!(
                line,
                r#"{{"ph":"X","name":{},"cat":"cpu","pid":{CPU_PID},"tid":{},"ts":{},"dur":{}{}}}"#,
                scope_names
                    .get(s.scope as usize)
                    .map_or("\"\"", String::as_str),
                s.thread + 1,
                t(start),
                us(end - start),
                scope_args.get(s.scope as usize).map_or("", String::as_str)
            );
            o.event(&line)?;
        }

        // GPU spans (nominal), per queue track.
        for g in spans.gpu.frame(r) {
            let queue = capture.passes().get(g.pass as usize).map_or(0, |p| p.queue);
            line.clear();
            let _ = write!(
                line,
                r#"{{"ph":"X","name":{},"cat":"gpu","pid":{GPU_PID},"tid":{},"ts":{},"dur":{}}}"#,
                pass_names
                    .get(g.pass as usize)
                    .map_or("\"\"", String::as_str),
                queue + 1,
                t(g.nominal_start_ns),
                us(g.nominal_end_ns.saturating_sub(g.nominal_start_ns))
            );
            o.event(&line)?;
        }

        for e in capture.counter_values().frame(r) {
            line.clear();
            let value = capture.counter_value(e);
            let _ = write!(
                line,
                r#"{{"ph":"C","name":{},"pid":{CPU_PID},"tid":0,"ts":{},"args":{{"value":{}}}}}"#,
                counter_names
                    .get(e.counter as usize)
                    .map_or("\"\"", String::as_str),
                t(f.cpu_begin_ns),
                if value.is_finite() { value } else { 0.0 }
            );
            o.event(&line)?;
        }
    }

    for m in capture.marks() {
        line.clear();
        let _ = write!(
            line,
            r#"{{"ph":"i","s":"t","name":{},"pid":{CPU_PID},"tid":{},"ts":{}"#,
            mark_names
                .get(m.name as usize)
                .map_or("\"\"", String::as_str),
            m.thread.map_or(FRAMES_TID, |t| t + 1),
            t(m.at_ns)
        );
        if let Some(u) = &m.user {
            let _ = write!(
                line,
                r#","args":{{"usermark":true,"window_us":{},"note":{}}}"#,
                us(u.window_ns),
                json_str(&u.note)
            );
        }
        line.push('}');
        o.event(&line)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_are_exact() {
        assert_eq!(us(0), "0.000");
        assert_eq!(us(1), "0.001");
        assert_eq!(us(1_234_567), "1234.567");
    }
}
