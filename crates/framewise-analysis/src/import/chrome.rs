//! Chrome Trace Event JSON: what `tracing-chrome`, Bevy's `trace_chrome` feature,
//! wgpu-profiler and browsers write.
//!
//! Both forms are read: the object form (`{"traceEvents": [...]}`) and the bare array,
//! including an array cut off mid-event (the tail is reported, every whole event before it
//! is kept; the closing `]` is optional in the format itself). `X` and matched `B`/`E`
//! events become scopes; `i`/`I`/`R` become marks; `C` become counters (each frame takes
//! its last sample); `M` name processes and threads.
//!
//! A frame is one occurrence of the frame span: `--frame-span NAME`; else the trace's own
//! frame track when it has one (`X` events of category `frame` whose `args` carry the frame's
//! `index`, as `framewise trace` writes them: those are frames, not scopes, and their
//! `args.paused` is kept); else the most frequent top-level span on the thread with the most
//! top-level spans. A note names the choice. Every span,
//! mark and counter sample on any thread belongs to the frame in which it starts
//! (`[begin, next begin)`). Unclosed `B`, `E` without `B`, events out of order within a
//! thread, spans overlapping their parent and unknown phases are tolerated and reported.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::build::{
    float_raw, CaptureBuilder, FrameInput, LaneInput, LoadOptions, MarkInput, SpanInput,
};
use crate::load::{no_progress, Progress, Reporter, Stage};
use crate::model::{Capture, CounterKind, Defect, DefectKind, Numeric, SourceKind};

/// Why a Chrome trace could not be imported.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChromeError {
    /// Not JSON, or JSON broken before any event.
    #[error("chrome trace: not valid JSON at byte {offset}: {message}")]
    NotJson {
        /// Byte offset of the problem.
        offset: usize,
        /// What the parser said.
        message: String,
    },
    /// JSON, but neither an array of events nor an object with `traceEvents`.
    #[error("chrome trace: expected an array of events or an object with \"traceEvents\", found {found}")]
    NotATrace {
        /// What was found instead.
        found: &'static str,
    },
    /// No `X` or `B`/`E` spans to make frames from.
    #[error("chrome trace: no X or B/E spans among {events} events; nothing to make frames from")]
    NoSpans {
        /// Events read.
        events: usize,
    },
    /// The requested frame span does not occur.
    #[error("chrome trace: frame span `{name}` does not occur among {spans} spans")]
    FrameSpanNotFound {
        /// The name asked for.
        name: String,
        /// Spans in the trace.
        spans: usize,
    },
}

/// Phases that are part of the format but not imported (async, flow, object, sample, memory
/// dump, context, clock sync).
const KNOWN_UNIMPORTED: &[&str] = &[
    "b", "e", "n", "S", "T", "p", "F", "s", "t", "f", "P", "O", "N", "D", "V", "v", "(", ")", "c",
];

fn json_error(e: &serde_json::Error, bytes: &[u8]) -> ChromeError {
    // serde_json reports line/column; turn them into a byte offset for the message.
    let mut line = 1usize;
    let mut offset = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        if line == e.line() {
            offset = i + e.column().saturating_sub(1);
            break;
        }
        if b == b'\n' {
            line += 1;
        }
    }
    ChromeError::NotJson {
        offset,
        message: e.to_string(),
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b) = bytes.get(at) {
        if b.is_ascii_whitespace() {
            at += 1;
        } else {
            break;
        }
    }
    at
}

/// How reading the event array ended.
#[derive(Debug, PartialEq, Eq)]
enum ArrayEnd {
    Closed,
    /// Ended cleanly between events without `]` (allowed by the format).
    Open,
    /// Cut off inside an event at this offset.
    Truncated(usize),
    /// Malformed JSON at this offset; reading stopped.
    Malformed(usize, String),
}

fn stream_array(
    bytes: &[u8],
    mut at: usize,
    out: &mut Vec<Value>,
    reporter: &mut Reporter<'_>,
) -> ArrayEnd {
    loop {
        reporter.update(at as u64);
        at = skip_ws(bytes, at);
        match bytes.get(at) {
            None => return ArrayEnd::Open,
            Some(b']') => return ArrayEnd::Closed,
            Some(b',') => {
                at += 1;
                continue;
            }
            Some(_) => {}
        }
        let rest = bytes.get(at..).unwrap_or(&[]);
        let mut it = serde_json::Deserializer::from_slice(rest).into_iter::<Value>();
        match it.next() {
            Some(Ok(v)) => {
                out.push(v);
                at += it.byte_offset();
            }
            Some(Err(e)) if e.is_eof() => return ArrayEnd::Truncated(at),
            Some(Err(e)) => return ArrayEnd::Malformed(at, e.to_string()),
            None => return ArrayEnd::Open,
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads the events, tolerating a cut-off array. Returns the events and how the array
/// ended.
#[cfg(test)]
fn read_events(bytes: &[u8]) -> Result<(Vec<Value>, ArrayEnd), ChromeError> {
    read_events_reporting(bytes, &mut no_progress)
}

/// [`read_events`], reporting bytes parsed.
fn read_events_reporting(
    bytes: &[u8],
    progress: &mut dyn FnMut(Progress),
) -> Result<(Vec<Value>, ArrayEnd), ChromeError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reporter = Reporter::start(progress, Stage::Parsing, bytes.len() as u64);
    let read = read_events_from(bytes, &mut reporter);
    reporter.finish();
    read
}

fn read_events_from(
    bytes: &[u8],
    reporter: &mut Reporter<'_>,
) -> Result<(Vec<Value>, ArrayEnd), ChromeError> {
    let start = skip_ws(bytes, 0);
    let mut events = Vec::new();
    match bytes.get(start) {
        Some(b'[') => {
            let end = stream_array(bytes, start + 1, &mut events, reporter);
            if let ArrayEnd::Malformed(offset, message) = &end {
                if events.is_empty() {
                    return Err(ChromeError::NotJson {
                        offset: *offset,
                        message: message.clone(),
                    });
                }
            }
            Ok((events, end))
        }
        Some(b'{') => match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(mut map)) => match map.remove("traceEvents") {
                Some(Value::Array(events)) => Ok((events, ArrayEnd::Closed)),
                Some(_) => Err(ChromeError::NotATrace {
                    found: "a \"traceEvents\" that is not an array",
                }),
                None => Err(ChromeError::NotATrace {
                    found: "an object without \"traceEvents\"",
                }),
            },
            Ok(_) => Err(ChromeError::NotATrace { found: "JSON" }),
            Err(e) if e.is_eof() => {
                // A cut-off object: read the traceEvents array as far as it goes.
                let key = find(bytes, b"\"traceEvents\"").ok_or_else(|| json_error(&e, bytes))?;
                let colon = skip_ws(bytes, key + b"\"traceEvents\"".len());
                if bytes.get(colon) != Some(&b':') {
                    return Err(json_error(&e, bytes));
                }
                let open = skip_ws(bytes, colon + 1);
                if bytes.get(open) != Some(&b'[') {
                    return Err(json_error(&e, bytes));
                }
                let end = match stream_array(bytes, open + 1, &mut events, reporter) {
                    ArrayEnd::Open => ArrayEnd::Truncated(bytes.len()),
                    ArrayEnd::Closed => ArrayEnd::Truncated(bytes.len()),
                    other => other,
                };
                Ok((events, end))
            }
            Err(e) => Err(json_error(&e, bytes)),
        },
        Some(_) => Err(ChromeError::NotATrace {
            found: "neither [ nor {",
        }),
        None => Err(ChromeError::NotATrace {
            found: "an empty document",
        }),
    }
}

fn id_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".into(),
    }
}

struct RawSpan {
    thread: usize,
    name: String,
    file: String,
    line: u32,
    start_ns: u64,
    end_ns: u64,
    depth: u32,
}

fn site(args: Option<&Value>) -> (String, u32) {
    let Some(args) = args else {
        return (String::new(), 0);
    };
    let file = [".file", "file", "[file]"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .unwrap_or("")
        .to_owned();
    let line = [".line", "line", "[line]"]
        .iter()
        .find_map(|k| args.get(*k))
        .and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(0);
    (file, line)
}

/// Imports a Chrome trace.
pub fn import(bytes: &[u8], options: &LoadOptions) -> Result<Capture, ChromeError> {
    import_reporting(bytes, options, &mut no_progress)
}

pub(crate) fn import_reporting(
    bytes: &[u8],
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Capture, ChromeError> {
    let (events, end) = read_events_reporting(bytes, progress)?;
    let mut defects: Vec<Defect> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    match end {
        ArrayEnd::Closed => {}
        ArrayEnd::Open => {
            notes.push("the event array is not closed with ] (the format allows this)".into())
        }
        ArrayEnd::Truncated(offset) => defects.push(
            Defect::new(
                DefectKind::TruncatedTail,
                1,
                format!(
                    "the trace is cut off at byte {offset}; {} whole events before it were read",
                    events.len()
                ),
            )
            .at(offset as u64),
        ),
        ArrayEnd::Malformed(offset, message) => defects.push(
            Defect::new(
                DefectKind::CorruptRange,
                1,
                format!(
                    "malformed JSON at byte {offset} ({message}); reading stopped after {} events",
                    events.len()
                ),
            )
            .at(offset as u64),
        ),
    }

    // The clock origin: the earliest timestamp of any timed event.
    let origin_us = events
        .iter()
        .filter(|e| e.get("ph").and_then(Value::as_str) != Some("M"))
        .filter_map(|e| e.get("ts").and_then(Value::as_f64))
        .filter(|t| t.is_finite())
        .fold(f64::INFINITY, f64::min);
    let to_ns = |us: f64| -> Option<u64> {
        let ns = ((us - origin_us) * 1000.0).round();
        (0.0..1.8e19).contains(&ns).then_some(ns as u64)
    };

    let mut thread_keys: HashMap<(String, String), usize> = HashMap::new();
    let mut thread_names: Vec<Option<String>> = Vec::new();
    let mut thread_pids: Vec<String> = Vec::new();
    let mut thread_tids: Vec<String> = Vec::new();
    let mut process_names: HashMap<String, String> = HashMap::new();
    let mut thread_of = |pid: String, tid: String, names: &mut Vec<Option<String>>| -> usize {
        let next = thread_keys.len();
        *thread_keys
            .entry((pid.clone(), tid.clone()))
            .or_insert_with(|| {
                names.push(None);
                thread_pids.push(pid);
                thread_tids.push(tid);
                next
            })
    };

    // Per thread: B/E events to match, in file order.
    let mut begin_ends: Vec<Vec<(u64, bool, usize)>> = Vec::new();
    let mut spans: Vec<RawSpan> = Vec::new();
    // The frame track of a trace framewise exported: (begin, end, paused) per frame.
    let mut frame_track: Vec<(u64, u64, bool)> = Vec::new();
    let mut marks: Vec<(usize, String, u64)> = Vec::new();
    let mut samples: BTreeMap<String, Vec<(u64, f64)>> = BTreeMap::new();
    let mut unimported: BTreeMap<String, u64> = BTreeMap::new();
    let mut unknown: BTreeMap<String, u64> = BTreeMap::new();
    let mut untimed = 0u64;
    let mut no_dur = 0u64;

    for (order, e) in events.iter().enumerate() {
        let Some(ph) = e.get("ph").and_then(Value::as_str) else {
            *unknown.entry("(none)".into()).or_insert(0) += 1;
            continue;
        };
        let pid = id_string(e.get("pid"));
        let tid = id_string(e.get("tid"));
        let name = e.get("name").and_then(Value::as_str).unwrap_or("");
        if ph == "M" {
            let value = e
                .get("args")
                .and_then(|a| a.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            match (name, value) {
                ("thread_name", Some(v)) => {
                    let t = thread_of(pid, tid, &mut thread_names);
                    thread_names[t] = Some(v);
                }
                ("process_name", Some(v)) => {
                    process_names.insert(pid, v);
                }
                _ => {}
            }
            continue;
        }
        if KNOWN_UNIMPORTED.contains(&ph) {
            *unimported.entry(ph.to_owned()).or_insert(0) += 1;
            continue;
        }
        if !matches!(ph, "X" | "B" | "E" | "i" | "I" | "R" | "C") {
            *unknown.entry(ph.to_owned()).or_insert(0) += 1;
            continue;
        }
        let Some(ts_ns) = e.get("ts").and_then(Value::as_f64).and_then(to_ns) else {
            untimed += 1;
            continue;
        };
        let thread = thread_of(pid, tid, &mut thread_names);
        match ph {
            "X" => match e.get("dur").and_then(Value::as_f64) {
                Some(dur) if dur.is_finite() && dur >= 0.0 => {
                    let end_ns = ts_ns.saturating_add((dur * 1000.0).round() as u64);
                    let args = e.get("args");
                    let frame_index = args.and_then(|a| a.get("index")).and_then(Value::as_u64);
                    if e.get("cat").and_then(Value::as_str) == Some("frame")
                        && frame_index.is_some()
                    {
                        let paused = args
                            .and_then(|a| a.get("paused"))
                            .and_then(Value::as_bool)
                            .unwrap_or(false);
                        frame_track.push((ts_ns, end_ns, paused));
                        continue;
                    }
                    let (file, line) = site(args);
                    spans.push(RawSpan {
                        thread,
                        name: name.to_owned(),
                        file,
                        line,
                        start_ns: ts_ns,
                        end_ns,
                        depth: 0,
                    });
                }
                _ => no_dur += 1,
            },
            "B" | "E" => {
                if begin_ends.len() <= thread {
                    begin_ends.resize_with(thread + 1, Vec::new);
                }
                begin_ends[thread].push((ts_ns, ph == "B", order));
            }
            "C" => {
                if let Some(args) = e.get("args").and_then(Value::as_object) {
                    let single = args.len() == 1;
                    for (k, v) in args {
                        if let Some(x) = v
                            .as_f64()
                            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                        {
                            let counter = if single {
                                name.to_owned()
                            } else {
                                format!("{name}.{k}")
                            };
                            samples.entry(counter).or_default().push((ts_ns, x));
                        }
                    }
                }
            }
            _ => marks.push((thread, name.to_owned(), ts_ns)),
        }
    }

    // Match B/E per thread, in timestamp order (stable, so file order breaks ties).
    let mut out_of_order = 0u64;
    let mut unclosed: Vec<String> = Vec::new();
    let mut unmatched_end = 0u64;
    for (thread, list) in begin_ends.iter_mut().enumerate() {
        out_of_order += list.windows(2).filter(|w| w[1].0 < w[0].0).count() as u64;
        list.sort_by_key(|&(ts, _, _)| ts);
        let mut stack: Vec<(u64, usize)> = Vec::new();
        for &(ts, is_begin, order) in list.iter() {
            if is_begin {
                stack.push((ts, order));
            } else if let Some((start, begin_order)) = stack.pop() {
                let e = &events[begin_order];
                let (file, line) = site(e.get("args"));
                spans.push(RawSpan {
                    thread,
                    name: e
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    file,
                    line,
                    start_ns: start,
                    end_ns: ts.max(start),
                    depth: 0,
                });
            } else {
                unmatched_end += 1;
            }
        }
        for (_, order) in stack {
            unclosed.push(
                events[order]
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            );
        }
    }
    if out_of_order > 0 {
        defects.push(Defect::new(
            DefectKind::Importer,
            out_of_order,
            format!("{out_of_order} B/E events were out of timestamp order on their thread; sorted before matching"),
        ));
    }
    if !unclosed.is_empty() {
        let shown: Vec<&str> = unclosed.iter().take(5).map(String::as_str).collect();
        defects.push(Defect::new(
            DefectKind::Importer,
            unclosed.len() as u64,
            format!(
                "{} B events were never closed (e.g. {}); dropped, not closed at a guessed time",
                unclosed.len(),
                shown.join(", ")
            ),
        ));
    }
    if unmatched_end > 0 {
        defects.push(Defect::new(
            DefectKind::Importer,
            unmatched_end,
            format!("{unmatched_end} E events had no open B on their thread; ignored"),
        ));
    }
    if no_dur > 0 {
        defects.push(Defect::new(
            DefectKind::Importer,
            no_dur,
            format!("{no_dur} X events had no valid dur; ignored"),
        ));
    }
    if untimed > 0 {
        defects.push(Defect::new(
            DefectKind::Importer,
            untimed,
            format!("{untimed} events had no numeric ts; ignored"),
        ));
    }
    for (ph, n) in &unknown {
        defects.push(Defect::new(
            DefectKind::Importer,
            *n,
            format!("{n} events with unknown phase `{ph}`; ignored"),
        ));
    }
    if !unimported.is_empty() {
        let list: Vec<String> = unimported
            .iter()
            .map(|(ph, n)| format!("{n} `{ph}`"))
            .collect();
        notes.push(format!(
            "events of phases not imported (async, flow, object, sample, context): {}",
            list.join(", ")
        ));
    }

    if spans.is_empty() && frame_track.is_empty() {
        return Err(ChromeError::NoSpans {
            events: events.len(),
        });
    }

    // Nesting per thread: pre-order by (thread, start, longest first).
    spans.sort_by(|a, b| {
        (a.thread, a.start_ns, std::cmp::Reverse(a.end_ns)).cmp(&(
            b.thread,
            b.start_ns,
            std::cmp::Reverse(b.end_ns),
        ))
    });
    let mut clipped = 0u64;
    let mut stack: Vec<u64> = Vec::new();
    let mut current_thread = usize::MAX;
    for s in spans.iter_mut() {
        if s.thread != current_thread {
            stack.clear();
            current_thread = s.thread;
        }
        while let Some(&end) = stack.last() {
            if s.start_ns >= end {
                stack.pop();
            } else {
                break;
            }
        }
        if let Some(&end) = stack.last() {
            if s.end_ns > end {
                clipped += 1;
                s.end_ns = end;
            }
        }
        s.depth = u32::try_from(stack.len()).unwrap_or(u32::MAX);
        stack.push(s.end_ns);
    }
    if clipped > 0 {
        defects.push(Defect::new(
            DefectKind::Importer,
            clipped,
            format!("{clipped} spans overlapped their parent without nesting; each was clipped to its parent's end"),
        ));
    }

    // The frame span.
    let mut top_level: HashMap<(usize, &str), u64> = HashMap::new();
    for s in spans.iter().filter(|s| s.depth == 0) {
        *top_level.entry((s.thread, s.name.as_str())).or_insert(0) += 1;
    }
    let thread_label = |t: usize, names: &[Option<String>]| -> String {
        let pid = thread_pids.get(t).cloned().unwrap_or_default();
        let tid = thread_tids.get(t).cloned().unwrap_or_default();
        let thread = names
            .get(t)
            .cloned()
            .flatten()
            .unwrap_or_else(|| format!("tid {tid}"));
        match process_names.get(&pid) {
            Some(p) => format!("{p}/{thread}"),
            None => format!("pid {pid}/{thread}"),
        }
    };
    let own_track = options.frame_span.is_none() && !frame_track.is_empty();
    let (frame_thread, frame_name) = match &options.frame_span {
        None if own_track => {
            notes.push(format!(
                "frames from the trace's own frame track (category `frame`, as `framewise trace` writes it: {} frames); pass --frame-span NAME to use a span instead",
                frame_track.len()
            ));
            (usize::MAX, String::new())
        }
        Some(name) => {
            let best = top_level
                .iter()
                .filter(|((_, n), _)| *n == name.as_str())
                .max_by(|a, b| a.1.cmp(b.1).then(b.0 .0.cmp(&a.0 .0)))
                .map(|((t, _), _)| *t)
                .or_else(|| spans.iter().find(|s| &s.name == name).map(|s| s.thread))
                .ok_or_else(|| ChromeError::FrameSpanNotFound {
                    name: name.clone(),
                    spans: spans.len(),
                })?;
            (best, name.clone())
        }
        None => {
            let mut per_thread: BTreeMap<usize, u64> = BTreeMap::new();
            for ((t, _), n) in &top_level {
                *per_thread.entry(*t).or_insert(0) += n;
            }
            let thread = per_thread
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(t, _)| *t)
                .unwrap_or(0);
            let (name, count) = top_level
                .iter()
                .filter(|((t, _), _)| *t == thread)
                .max_by(|a, b| a.1.cmp(b.1).then(b.0 .1.cmp(a.0 .1)))
                .map(|((_, n), c)| ((*n).to_owned(), *c))
                .unwrap_or_default();
            notes.push(format!(
                "frame span auto-picked: `{name}` on thread {} ({count} occurrences); pass --frame-span NAME to choose another",
                thread_label(thread, &thread_names)
            ));
            (thread, name)
        }
    };
    let mut frame_spans: Vec<(u64, u64, bool)> = if own_track {
        frame_track
    } else {
        spans
            .iter()
            .filter(|s| s.thread == frame_thread && s.name == frame_name)
            .map(|s| (s.start_ns, s.end_ns, false))
            .collect()
    };
    frame_spans.sort_unstable();
    frame_spans.dedup_by_key(|f| f.0);
    let begins: Vec<u64> = frame_spans.iter().map(|f| f.0).collect();
    let frame_of =
        |at: u64| -> Option<usize> { begins.partition_point(|&b| b <= at).checked_sub(1) };

    // Build.
    let mut b = CaptureBuilder::from_options(SourceKind::Chrome, options);
    let threads: Vec<u32> = (0..thread_names.len())
        .map(|t| {
            let label = thread_label(t, &thread_names);
            b.thread(&label)
        })
        .collect();
    let frames = frame_spans.len();
    let mut per_frame: Vec<Vec<(u32, SpanInput)>> = (0..frames).map(|_| Vec::new()).collect();
    let mut before_first = 0u64;
    for s in &spans {
        let scope = b.scope(
            if s.name.is_empty() {
                "(unnamed)"
            } else {
                &s.name
            },
            &s.file,
            s.line,
        );
        match frame_of(s.start_ns) {
            Some(f) => per_frame[f].push((
                threads.get(s.thread).copied().unwrap_or(0),
                SpanInput {
                    scope,
                    depth: s.depth,
                    start_ns: s.start_ns,
                    end_ns: s.end_ns,
                },
            )),
            None => before_first += 1,
        }
    }
    let mut marks_per_frame: Vec<Vec<MarkInput>> = (0..frames).map(|_| Vec::new()).collect();
    for (thread, name, at) in &marks {
        let id = b.mark_name(name);
        match frame_of(*at) {
            Some(f) => marks_per_frame[f].push(MarkInput {
                name: id,
                thread: threads.get(*thread).copied(),
                at_ns: *at,
                user: None,
            }),
            None => before_first += 1,
        }
    }
    let mut counters_per_frame: Vec<Vec<(u32, i64)>> = (0..frames).map(|_| Vec::new()).collect();
    for (name, list) in samples.iter_mut() {
        list.sort_by_key(|&(ts, _)| ts);
        let integral = list
            .iter()
            .all(|&(_, v)| v.fract() == 0.0 && v.abs() < 9.0e15);
        let numeric = if integral {
            Numeric::Integer
        } else {
            Numeric::Float
        };
        let id = b.counter(name, CounterKind::Gauge, numeric);
        // Each frame takes its last sample.
        let mut last: Vec<Option<f64>> = vec![None; frames];
        for &(ts, v) in list.iter() {
            match frame_of(ts) {
                Some(f) => last[f] = Some(v),
                None => before_first += 1,
            }
        }
        for (f, v) in last.into_iter().enumerate() {
            if let Some(v) = v {
                let raw = if integral { v as i64 } else { float_raw(v) };
                counters_per_frame[f].push((id, raw));
            }
        }
    }
    if !samples.is_empty() {
        notes.push(
            "Chrome counter events are samples; each frame takes its last sample, as a gauge"
                .into(),
        );
    }
    if before_first > 0 {
        notes.push(format!(
            "{before_first} events before the first frame were not assigned to any frame"
        ));
    }
    for d in defects {
        b.defect(d);
    }
    for n in notes {
        b.note(n);
    }

    let mut f = FrameInput::default();
    let mut reporter = Reporter::start(progress, Stage::Frames, frame_spans.len() as u64);
    for (i, &(begin, end, paused)) in frame_spans.iter().enumerate() {
        reporter.update(i as u64);
        f.clear();
        f.index = i as u64;
        f.paused = paused;
        f.cpu_begin_ns = begin;
        f.cpu_end_ns = end;
        let list = std::mem::take(&mut per_frame[i]);
        let mut lane: Option<LaneInput> = None;
        for (thread, span) in list {
            match lane.as_mut() {
                Some(l) if l.thread == thread => l.spans.push(span),
                _ => {
                    if let Some(done) = lane.take() {
                        f.lanes.push(done);
                    }
                    lane = Some(LaneInput {
                        thread,
                        spans: vec![span],
                        dropped_spans: 0,
                    });
                }
            }
        }
        if let Some(done) = lane {
            f.lanes.push(done);
        }
        f.marks = std::mem::take(&mut marks_per_frame[i]);
        f.counters = std::mem::take(&mut counters_per_frame[i]);
        b.push_frame(&f);
    }
    reporter.finish();
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_off_array_keeps_whole_events() {
        let text = br#"[{"ph":"X","name":"frame","ts":0,"dur":10,"pid":1,"tid":1},
{"ph":"X","name":"frame","ts":16,"dur":10,"pid":1,"tid":1},{"ph":"X","na"#;
        let (events, end) = read_events(text).expect("tolerated");
        assert_eq!(events.len(), 2);
        assert!(matches!(end, ArrayEnd::Truncated(_)));
    }

    #[test]
    fn open_array_is_allowed() {
        let (events, end) = read_events(br#"[{"ph":"i","ts":1},"#).expect("tolerated");
        assert_eq!(events.len(), 1);
        assert_eq!(end, ArrayEnd::Open);
    }

    #[test]
    fn rejects_non_traces() {
        assert!(matches!(
            read_events(b"42"),
            Err(ChromeError::NotATrace { .. })
        ));
        assert!(matches!(
            read_events(b"{\"a\":1}"),
            Err(ChromeError::NotATrace { .. })
        ));
        assert!(matches!(
            read_events(b"[}"),
            Err(ChromeError::NotJson { .. })
        ));
        assert!(matches!(
            read_events(b""),
            Err(ChromeError::NotATrace { .. })
        ));
    }

    #[test]
    fn cut_off_object_form() {
        let text = br#"{"displayTimeUnit":"ms","traceEvents":[{"ph":"X","name":"f","ts":0,"dur":5,"pid":1,"tid":1},{"ph":"#;
        let (events, end) = read_events(text).expect("tolerated");
        assert_eq!(events.len(), 1);
        assert!(matches!(end, ArrayEnd::Truncated(_)));
    }
}
