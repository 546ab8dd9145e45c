//! Chrome Trace Event JSON: what `tracing-chrome`, Bevy's `trace_chrome` feature,
//! wgpu-profiler and browsers write.
//!
//! Both forms are read: the object form (`{"traceEvents": [...]}`) and the bare array,
//! including an array cut off mid-event (the tail is reported, every whole event before it
//! is kept; the closing `]` is optional in the format itself). `X` and matched `B`/`E`
//! events become scopes; `i`/`I`/`R` become marks; `C` become counters (each frame takes
//! its last sample); `M` name processes and threads.
//!
//! The text is streamed: each event is read into a small typed record and folded into
//! compact per-span rows (a few dozen bytes each) as it comes, so neither the text nor a
//! JSON tree of it is ever held ([`import_reader`] reads a file without loading it).
//!
//! A frame is one occurrence of the frame span: `--frame-span NAME`; else the trace's own
//! frame track when it has one (`X` events of category `frame` whose `args` carry the frame's
//! `index`, as `framewise trace` writes them: those are frames, not scopes, and their
//! `args.paused` is kept); else the top-level span that tiles its thread's timeline: the
//! one whose back-to-back occurrences cover the largest share of the time from its thread's
//! first top-level span to its last (a frame loop covers most of its thread; an audio or
//! worker tick that runs several times a frame leaves gaps between its runs). Shares within
//! [`TIE_POINTS`] percentage points are a tie, won by a span named like a frame, then by
//! the larger share. A note names the choice and the runner-up. Every span, mark and
//! counter sample on any thread belongs to the frame in which it starts
//! (`[begin, next begin)`). Unclosed `B`, `E` without `B`, events out of order within a
//! thread, spans overlapping their parent and unknown phases are tolerated and reported.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::fmt;
use std::io::Read;
use std::rc::Rc;

use serde::de::{
    self, DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::Deserialize;

use crate::build::{
    float_raw, CaptureBuilder, FrameInput, LaneInput, LoadOptions, MarkInput, SpanInput,
};
use crate::load::{no_progress, Progress, Reporter, Stage};
use crate::model::{Capture, CounterKind, Defect, DefectKind, Numeric, ScopeId, SourceKind};

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
    /// Reading the text failed (an I/O error, not a problem with the trace).
    #[error("chrome trace: reading failed at byte {offset}: {message}")]
    Read {
        /// Bytes read before the failure.
        offset: u64,
        /// What the reader said.
        message: String,
    },
}

/// Two auto-pick candidates whose shares of their threads' timelines differ by less than
/// this many percentage points are a tie (won by a span named like a frame).
pub const TIE_POINTS: f64 = 5.0;

/// Phases that are part of the format but not imported (async, flow, object, sample, memory
/// dump, context, clock sync).
const KNOWN_UNIMPORTED: &[&str] = &[
    "b", "e", "n", "S", "T", "p", "F", "s", "t", "f", "P", "O", "N", "D", "V", "v", "(", ")", "c",
];

// ---------------------------------------------------------------------------------------
// Reading: bytes → typed events → compact rows.

/// Where the reader stands, shared with the visitors (serde_json owns the reader while
/// they run).
#[derive(Default)]
struct Position {
    /// Bytes handed to the parser.
    consumed: Cell<u64>,
    /// One past the last byte handed out that is neither whitespace nor `,`.
    significant_end: Cell<u64>,
}

/// The text's bytes as serde_json asks for them (one at a time), from a buffer refilled
/// in pieces; counts them and reports progress on each refill.
struct Source<'p, R> {
    inner: R,
    buf: Vec<u8>,
    at: usize,
    len: usize,
    position: Rc<Position>,
    reporter: Reporter<'p>,
}

impl<R: Read> Source<'_, R> {
    fn refill(&mut self) -> std::io::Result<()> {
        self.at = 0;
        self.len = loop {
            match self.inner.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        self.reporter.update(self.position.consumed.get());
        Ok(())
    }

    /// Skips whitespace and returns the next byte without consuming it (`None` at the end).
    fn peek_significant(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            if self.at == self.len {
                self.refill()?;
                if self.len == 0 {
                    return Ok(None);
                }
            }
            match self.buf.get(self.at) {
                Some(b) if b.is_ascii_whitespace() => {
                    self.at += 1;
                    self.position.consumed.set(self.position.consumed.get() + 1);
                }
                Some(&b) => return Ok(Some(b)),
                None => return Ok(None),
            }
        }
    }
}

impl<R: Read> Read for Source<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.len {
            self.refill()?;
        }
        let available = self.buf.get(self.at..self.len).unwrap_or(&[]);
        let n = available.len().min(out.len());
        let (Some(from), Some(to)) = (available.get(..n), out.get_mut(..n)) else {
            return Ok(0);
        };
        to.copy_from_slice(from);
        let start = self.position.consumed.get();
        if let Some(last) = from
            .iter()
            .rposition(|b| !(b.is_ascii_whitespace() || *b == b','))
        {
            self.position.significant_end.set(start + last as u64 + 1);
        }
        self.position.consumed.set(start + n as u64);
        self.at += n;
        Ok(n)
    }
}

/// A field's value as the importer reads it: whatever its JSON type, never an error (a
/// `ts` that is a string is an untimed event, not a broken trace).
#[derive(Debug, Default, PartialEq)]
enum Scalar {
    /// Absent, null, an object or an array (skipped without being built).
    #[default]
    Other,
    Str(String),
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
}

impl Scalar {
    fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match *self {
            Self::U64(v) => Some(v as f64),
            Self::I64(v) => Some(v as f64),
            Self::F64(v) => Some(v),
            _ => None,
        }
    }

    /// A number, or a string holding one (counter values, line numbers).
    fn as_f64_lenient(&self) -> Option<f64> {
        self.as_f64()
            .or_else(|| self.as_str().and_then(|s| s.parse().ok()))
    }

    /// A `pid`/`tid`: a string as is, a number as JSON writes it.
    fn id(&self) -> String {
        match self {
            Self::Str(s) => s.clone(),
            Self::U64(v) => v.to_string(),
            Self::I64(v) => v.to_string(),
            Self::F64(v) => format!("{v:?}"),
            _ => "0".into(),
        }
    }
}

/// The `visit_*` methods for the JSON kinds a visitor does not read: each gives `$body`
/// (with `$this` bound to the visitor) instead of a type error, so an odd value is skipped,
/// never fatal.
macro_rules! other_kinds {
    ($this:ident => $body:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            let $this = self;
            Ok($body)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            let $this = self;
            Ok($body)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            let $this = self;
            Ok($body)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            let $this = self;
            Ok($body)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            let $this = self;
            Ok($body)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            let $this = self;
            Ok($body)
        }
    };
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::I64(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::U64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::F64(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::Str(v))
    }
    fn visit_unit<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }
    fn visit_none<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other)
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

/// An event's `args`, reduced to what the importer reads.
#[derive(Debug, Default)]
struct Args {
    /// Members, counted as a JSON object keeps them (a repeated key counts once).
    members: usize,
    /// `M`: the process or thread name.
    name: Option<String>,
    /// A frame track's frame index.
    index: Option<u64>,
    /// A frame track's paused flag.
    paused: Option<bool>,
    /// The source file under `.file`, `file`, `[file]` (tracing-chrome and others), in
    /// that order of preference.
    file: [Option<String>; 3],
    /// The line under `.line`, `line`, `[line]`: present (even when not a number) or not.
    line: [Option<Scalar>; 3],
    /// Every member that is a number or a string holding one: a `C` event's samples.
    numbers: Vec<(String, f64)>,
}

impl Args {
    fn site(&self) -> (&str, u32) {
        let file = self.file.iter().flatten().next().map_or("", String::as_str);
        let line = self
            .line
            .iter()
            .flatten()
            .next()
            .and_then(|v| match v {
                Scalar::U64(n) => Some(*n),
                Scalar::Str(s) => s.parse().ok(),
                _ => None,
            })
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0);
        (file, line)
    }
}

struct ArgsVisitor;

impl<'de> Visitor<'de> for ArgsVisitor {
    type Value = Option<Args>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Args>, A::Error> {
        let mut args = Args::default();
        let mut seen: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value: Scalar = map.next_value()?;
            match key.as_str() {
                "name" => args.name = value.as_str().map(str::to_owned),
                "index" => {
                    args.index = match value {
                        Scalar::U64(v) => Some(v),
                        _ => None,
                    }
                }
                "paused" => {
                    args.paused = match value {
                        Scalar::Bool(v) => Some(v),
                        _ => None,
                    }
                }
                _ => {}
            }
            if let Some(at) = [".file", "file", "[file]"].iter().position(|k| *k == key) {
                if let (Some(slot), Some(s)) = (args.file.get_mut(at), value.as_str()) {
                    *slot = Some(s.to_owned());
                }
            }
            if let Some(at) = [".line", "line", "[line]"].iter().position(|k| *k == key) {
                if let Some(slot) = args.line.get_mut(at) {
                    *slot = Some(match &value {
                        Scalar::U64(v) => Scalar::U64(*v),
                        Scalar::Str(s) => Scalar::Str(s.clone()),
                        _ => Scalar::Other,
                    });
                }
            }
            let number = value.as_f64_lenient();
            // A repeated key: the last value stands, as in a JSON object.
            args.numbers.retain(|(k, _)| *k != key);
            if !seen.contains(&key) {
                seen.push(key.clone());
            }
            if let Some(x) = number {
                args.numbers.push((key, x));
            }
        }
        args.members = seen.len();
        Ok(Some(args))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Args>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    other_kinds!(_visitor => None);
}

struct ArgsSeed;

impl<'de> DeserializeSeed<'de> for ArgsSeed {
    type Value = Option<Args>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<Args>, D::Error> {
        d.deserialize_any(ArgsVisitor)
    }
}

/// One event: the fields the importer reads, each whatever its JSON type; the rest is
/// skipped unread. Not an object: an event without a phase.
#[derive(Debug, Default)]
struct Event {
    ph: Scalar,
    name: Scalar,
    cat: Scalar,
    pid: Scalar,
    tid: Scalar,
    ts: Scalar,
    dur: Scalar,
    args: Option<Args>,
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace event")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut e = Event::default();
        while let Some(key) = map.next_key::<EventKey>()? {
            match key {
                EventKey::Ph => e.ph = map.next_value()?,
                EventKey::Name => e.name = map.next_value()?,
                EventKey::Cat => e.cat = map.next_value()?,
                EventKey::Pid => e.pid = map.next_value()?,
                EventKey::Tid => e.tid = map.next_value()?,
                EventKey::Ts => e.ts = map.next_value()?,
                EventKey::Dur => e.dur = map.next_value()?,
                EventKey::Args => e.args = map.next_value_seed(ArgsSeed)?,
                EventKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(e)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Event, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Event::default())
    }
    other_kinds!(_visitor => Event::default());
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EventVisitor)
    }
}

/// The members of an event the importer reads, recognised without allocating a key.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum EventKey {
    Ph,
    Name,
    Cat,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    #[serde(other)]
    Other,
}

/// Top-level members of the object form, recognised without allocating a key.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum TopKey {
    TraceEvents,
    OtherData,
    #[serde(other)]
    Other,
}

/// The defects a trace framewise exported carries in `otherData.defects` (what its capture
/// lost), as this import's own: a trace of a damaged capture stays damaged when read back.
/// Anything else in `otherData`, or another generator's, is left alone.
fn carried_defects(other_data: &serde_json::Value) -> Vec<Defect> {
    if other_data
        .get("generator")
        .and_then(serde_json::Value::as_str)
        != Some("framewise")
    {
        return Vec::new();
    }
    let Some(list) = other_data
        .get("defects")
        .and_then(serde_json::Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .map(|d| {
            let kind = d
                .get("kind")
                .and_then(|k| serde_json::from_value::<DefectKind>(k.clone()).ok())
                .unwrap_or(DefectKind::Other);
            let message = d
                .get("message")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("a defect of unknown kind");
            let count = d
                .get("count")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(1);
            let mut defect = Defect::new(
                kind,
                count,
                format!("in the capture this trace was exported from: {message}"),
            );
            defect.frame = d.get("frame").and_then(serde_json::Value::as_u64);
            defect
        })
        .collect()
}

/// Strings interned to `u32` ids: span, mark and file names repeat on every event.
#[derive(Default)]
struct Strings {
    ids: HashMap<String, u32>,
    all: Vec<String>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = u32::try_from(self.all.len()).unwrap_or(u32::MAX);
        self.all.push(s.to_owned());
        self.ids.insert(s.to_owned(), id);
        id
    }

    fn get(&self, id: u32) -> &str {
        self.all.get(id as usize).map_or("", String::as_str)
    }

    fn find(&self, s: &str) -> Option<u32> {
        self.ids.get(s).copied()
    }
}

/// An `X` event as read: times in the trace's µs, before the clock origin is known.
#[derive(Clone, Copy)]
struct ReadSpan {
    thread: u32,
    name: u32,
    site: u32,
    ts_us: f64,
    dur_us: f64,
}

/// A `B` or `E` event as read.
#[derive(Clone, Copy)]
struct ReadBeginEnd {
    ts_us: f64,
    begin: bool,
    name: u32,
    site: u32,
}

/// A span on the capture's clock. 32 bytes: what the importer holds per span.
#[derive(Clone, Copy)]
struct RawSpan {
    thread: u32,
    name: u32,
    site: u32,
    depth: u32,
    start_ns: u64,
    end_ns: u64,
}

/// How far the event array was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArrayState {
    NotStarted,
    /// `traceEvents` is there but is not an array.
    NotAnArray,
    Reading,
    Closed,
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

/// Everything read from the events, compact, before the clock origin is applied.
struct Parsed {
    position: Rc<Position>,
    array: ArrayState,
    /// Where the last whole element of the array ended.
    element_end: u64,
    /// Elements of the event array read, whatever they were.
    elements: u64,
    strings: Strings,
    sites: HashMap<(u32, u32), u32>,
    site_list: Vec<(u32, u32)>,
    thread_keys: HashMap<(String, String), usize>,
    thread_names: Vec<Option<String>>,
    thread_pids: Vec<String>,
    thread_tids: Vec<String>,
    process_names: HashMap<String, String>,
    /// The earliest `ts` of any event but metadata, µs.
    origin_us: f64,
    spans: Vec<ReadSpan>,
    /// Per thread, `B`/`E` events in file order.
    begin_ends: Vec<Vec<ReadBeginEnd>>,
    /// The frame track of a trace framewise exported: (ts, dur, paused) per frame, µs.
    frame_track: Vec<(f64, f64, bool)>,
    marks: Vec<(u32, u32, f64)>,
    samples: BTreeMap<String, Vec<(f64, f64)>>,
    unimported: BTreeMap<String, u64>,
    unknown: BTreeMap<String, u64>,
    untimed: u64,
    no_dur: u64,
    /// The defects a framewise trace carries from its capture (`otherData.defects`).
    carried: Vec<Defect>,
}

impl Parsed {
    fn new(position: Rc<Position>) -> Self {
        Self {
            position,
            array: ArrayState::NotStarted,
            element_end: 0,
            elements: 0,
            strings: Strings::default(),
            sites: HashMap::new(),
            site_list: Vec::new(),
            thread_keys: HashMap::new(),
            thread_names: Vec::new(),
            thread_pids: Vec::new(),
            thread_tids: Vec::new(),
            process_names: HashMap::new(),
            origin_us: f64::INFINITY,
            spans: Vec::new(),
            begin_ends: Vec::new(),
            frame_track: Vec::new(),
            marks: Vec::new(),
            samples: BTreeMap::new(),
            unimported: BTreeMap::new(),
            unknown: BTreeMap::new(),
            untimed: 0,
            no_dur: 0,
            carried: Vec::new(),
        }
    }

    fn thread_of(&mut self, pid: String, tid: String) -> u32 {
        let next = self.thread_keys.len();
        let names = &mut self.thread_names;
        let pids = &mut self.thread_pids;
        let tids = &mut self.thread_tids;
        let at = *self
            .thread_keys
            .entry((pid.clone(), tid.clone()))
            .or_insert_with(|| {
                names.push(None);
                pids.push(pid);
                tids.push(tid);
                next
            });
        u32::try_from(at).unwrap_or(u32::MAX)
    }

    fn site(&mut self, args: Option<&Args>) -> u32 {
        let (file, line) = args.map_or(("", 0), Args::site);
        let file = self.strings.id(file);
        let next = u32::try_from(self.site_list.len()).unwrap_or(u32::MAX);
        let list = &mut self.site_list;
        *self.sites.entry((file, line)).or_insert_with(|| {
            list.push((file, line));
            next
        })
    }

    /// Folds one event into the rows.
    fn take(&mut self, e: Event) {
        self.elements += 1;
        let ph = e.ph.as_str();
        if ph != Some("M") {
            if let Some(ts) = e.ts.as_f64().filter(|t| t.is_finite()) {
                self.origin_us = self.origin_us.min(ts);
            }
        }
        let Some(ph) = ph else {
            *self.unknown.entry("(none)".into()).or_insert(0) += 1;
            return;
        };
        let name = e.name.as_str().unwrap_or("");
        if ph == "M" {
            let value = e.args.as_ref().and_then(|a| a.name.clone());
            match (name, value) {
                ("thread_name", Some(v)) => {
                    let t = self.thread_of(e.pid.id(), e.tid.id());
                    if let Some(slot) = self.thread_names.get_mut(t as usize) {
                        *slot = Some(v);
                    }
                }
                ("process_name", Some(v)) => {
                    self.process_names.insert(e.pid.id(), v);
                }
                _ => {}
            }
            return;
        }
        if KNOWN_UNIMPORTED.contains(&ph) {
            *self.unimported.entry(ph.to_owned()).or_insert(0) += 1;
            return;
        }
        if !matches!(ph, "X" | "B" | "E" | "i" | "I" | "R" | "C") {
            *self.unknown.entry(ph.to_owned()).or_insert(0) += 1;
            return;
        }
        let Some(ts_us) = e.ts.as_f64() else {
            self.untimed += 1;
            return;
        };
        let thread = self.thread_of(e.pid.id(), e.tid.id());
        let args = e.args.as_ref();
        match ph {
            "X" => match e.dur.as_f64() {
                Some(dur_us) if dur_us.is_finite() && dur_us >= 0.0 => {
                    if e.cat.as_str() == Some("frame") {
                        if let Some(a) = args.filter(|a| a.index.is_some()) {
                            self.frame_track
                                .push((ts_us, dur_us, a.paused.unwrap_or(false)));
                            return;
                        }
                    }
                    let name = self.strings.id(name);
                    let site = self.site(args);
                    self.spans.push(ReadSpan {
                        thread,
                        name,
                        site,
                        ts_us,
                        dur_us,
                    });
                }
                _ => self.no_dur += 1,
            },
            "B" | "E" => {
                let begin = ph == "B";
                let (name, site) = if begin {
                    (self.strings.id(name), self.site(args))
                } else {
                    (0, 0)
                };
                let t = thread as usize;
                if self.begin_ends.len() <= t {
                    self.begin_ends.resize_with(t + 1, Vec::new);
                }
                if let Some(list) = self.begin_ends.get_mut(t) {
                    list.push(ReadBeginEnd {
                        ts_us,
                        begin,
                        name,
                        site,
                    });
                }
            }
            "C" => {
                if let Some(args) = args {
                    let single = args.members == 1;
                    for (k, x) in &args.numbers {
                        let counter = if single {
                            name.to_owned()
                        } else {
                            format!("{name}.{k}")
                        };
                        self.samples.entry(counter).or_default().push((ts_us, *x));
                    }
                }
            }
            _ => {
                let name = self.strings.id(name);
                self.marks.push((thread, name, ts_us));
            }
        }
    }
}

/// The event array: each element is folded into [`Parsed`] as soon as it is read.
struct EventsSeed<'s>(&'s mut Parsed);

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let p = self.0;
        p.array = ArrayState::Reading;
        p.element_end = p.position.consumed.get();
        while let Some(event) = seq.next_element::<Event>()? {
            p.take(event);
            p.element_end = p.position.consumed.get();
        }
        p.array = ArrayState::Closed;
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        self.0.array = ArrayState::NotAnArray;
        Ok(())
    }
    other_kinds!(this => this.0.array = ArrayState::NotAnArray);
}

/// The object form: `traceEvents` is streamed, every other member skipped unread.
struct ObjectSeed<'s>(&'s mut Parsed);

impl<'de> Visitor<'de> for ObjectSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with \"traceEvents\"")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<TopKey>()? {
            match key {
                TopKey::TraceEvents => map.next_value_seed(EventsSeed(&mut *self.0))?,
                TopKey::OtherData => {
                    let other_data = map.next_value::<serde_json::Value>()?;
                    self.0.carried = carried_defects(&other_data);
                }
                TopKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// Reads the events from `reader` (`total_bytes`: its length, for progress), tolerating a
/// cut-off array. Returns the rows and how the array ended.
fn read_events<R: Read>(
    reader: R,
    total_bytes: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Parsed, ArrayEnd), ChromeError> {
    let position = Rc::new(Position::default());
    let mut source = Source {
        inner: reader,
        buf: vec![0u8; 1 << 16],
        at: 0,
        len: 0,
        position: Rc::clone(&position),
        reporter: Reporter::start(progress, Stage::Parsing, total_bytes),
    };
    let io = |e: std::io::Error, position: &Position| ChromeError::Read {
        offset: position.consumed.get(),
        message: e.to_string(),
    };
    source.refill().map_err(|e| io(e, &position))?;
    if source.buf.get(..source.len.min(3)) == Some(b"\xEF\xBB\xBF".as_slice()) {
        source.at = 3;
    }
    let first = source.peek_significant().map_err(|e| io(e, &position))?;
    let mut parsed = Parsed::new(Rc::clone(&position));
    let object = match first {
        Some(b'[') => false,
        Some(b'{') => true,
        Some(_) => {
            return Err(ChromeError::NotATrace {
                found: "neither [ nor {",
            })
        }
        None => {
            return Err(ChromeError::NotATrace {
                found: "an empty document",
            })
        }
    };
    let result = {
        let mut de = serde_json::Deserializer::from_reader(&mut source);
        if object {
            de.deserialize_map(ObjectSeed(&mut parsed))
        } else {
            EventsSeed(&mut parsed).deserialize(&mut de)
        }
    };
    source.reporter.finish();
    let offset = usize::try_from(position.consumed.get()).unwrap_or(usize::MAX);
    let element_end = usize::try_from(parsed.element_end).unwrap_or(usize::MAX);
    let end = match (result, parsed.array) {
        (Ok(()), ArrayState::NotAnArray) => {
            return Err(ChromeError::NotATrace {
                found: "a \"traceEvents\" that is not an array",
            })
        }
        (Ok(()), ArrayState::NotStarted) => {
            return Err(ChromeError::NotATrace {
                found: "an object without \"traceEvents\"",
            })
        }
        (Ok(()), _) => ArrayEnd::Closed,
        (Err(e), _) if e.is_io() => {
            return Err(ChromeError::Read {
                offset: position.consumed.get(),
                message: e.to_string(),
            })
        }
        (Err(e), ArrayState::NotStarted | ArrayState::NotAnArray) => {
            return Err(ChromeError::NotJson {
                offset,
                message: e.to_string(),
            })
        }
        (Err(e), ArrayState::Reading) if e.is_eof() => {
            if position.significant_end.get() <= parsed.element_end {
                // Nothing but separators after the last whole event.
                if object {
                    ArrayEnd::Truncated(offset)
                } else {
                    ArrayEnd::Open
                }
            } else {
                ArrayEnd::Truncated(element_end)
            }
        }
        (Err(e), ArrayState::Reading) if parsed.elements == 0 => {
            return Err(ChromeError::NotJson {
                offset,
                message: e.to_string(),
            })
        }
        (Err(e), ArrayState::Reading) => ArrayEnd::Malformed(offset, e.to_string()),
        // The array was read whole; the object around it is cut off or broken.
        (Err(e), ArrayState::Closed) if e.is_eof() => ArrayEnd::Truncated(offset),
        (Err(e), ArrayState::Closed) => ArrayEnd::Malformed(offset, e.to_string()),
    };
    Ok((parsed, end))
}

// ---------------------------------------------------------------------------------------
// Building: rows → frames → capture.

/// Imports a Chrome trace held in memory.
pub fn import(bytes: &[u8], options: &LoadOptions) -> Result<Capture, ChromeError> {
    import_reporting(bytes, options, &mut no_progress)
}

/// Imports a Chrome trace from a reader (a file, a decompressor), streaming it: the text
/// is never held whole.
pub fn import_reader(reader: impl Read, options: &LoadOptions) -> Result<Capture, ChromeError> {
    import_reader_reporting(reader, 0, options, &mut no_progress)
}

pub(crate) fn import_reporting(
    bytes: &[u8],
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Capture, ChromeError> {
    import_reader_reporting(bytes, bytes.len() as u64, options, progress)
}

/// [`import_reader`], reporting bytes parsed out of `total_bytes`, then frames built.
pub(crate) fn import_reader_reporting(
    reader: impl Read,
    total_bytes: u64,
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Capture, ChromeError> {
    let (parsed, end) = read_events(reader, total_bytes, progress)?;
    build(parsed, end, options, progress)
}

/// The frame span [`pick_frame_span`] chose and why.
struct Pick {
    thread: u32,
    name: u32,
    note: String,
}

/// A top-level span's occurrences on one thread.
struct Candidate {
    thread: u32,
    name: u32,
    count: u64,
    /// Share of its thread's timeline (first top-level begin to last top-level end) they
    /// cover, 0 to 1.
    share: f64,
}

fn named_like_a_frame(name: &str) -> bool {
    name.to_ascii_lowercase().contains("frame")
}

/// The span that tiles its thread's timeline (see the module docs), and a note saying so.
/// `spans` are in pre-order per thread, nested.
fn pick_frame_span(
    spans: &[RawSpan],
    strings: &Strings,
    label: &dyn Fn(u32) -> String,
) -> Option<Pick> {
    let mut by_name: HashMap<(u32, u32), (u64, u64)> = HashMap::new();
    let mut extent: HashMap<u32, (u64, u64)> = HashMap::new();
    for s in spans.iter().filter(|s| s.depth == 0) {
        let c = by_name.entry((s.thread, s.name)).or_insert((0, 0));
        c.0 += 1;
        c.1 = c.1.saturating_add(s.end_ns - s.start_ns);
        let e = extent.entry(s.thread).or_insert((s.start_ns, s.end_ns));
        e.0 = e.0.min(s.start_ns);
        e.1 = e.1.max(s.end_ns);
    }
    let mut candidates: Vec<Candidate> = by_name
        .into_iter()
        .map(|((thread, name), (count, covered_ns))| {
            let (first, last) = extent.get(&thread).copied().unwrap_or((0, 0));
            let timeline_ns = last.saturating_sub(first);
            let share = if timeline_ns == 0 {
                0.0
            } else {
                covered_ns as f64 / timeline_ns as f64
            };
            Candidate {
                thread,
                name,
                count,
                share,
            }
        })
        .collect();
    // A span seen once tiles nothing (a whole-run `main`); it frames only a trace that
    // has nothing else.
    if candidates.iter().any(|c| c.count > 1) {
        candidates.retain(|c| c.count > 1);
    }
    // Deterministic order first: larger share, more occurrences, lower thread, name.
    candidates.sort_by(|a, b| {
        b.share
            .total_cmp(&a.share)
            .then(b.count.cmp(&a.count))
            .then(a.thread.cmp(&b.thread))
            .then(strings.get(a.name).cmp(strings.get(b.name)))
    });
    let best_share = candidates.first()?.share;
    let tied = |c: &Candidate| (best_share - c.share) * 100.0 < TIE_POINTS;
    let frame_like = |c: &Candidate| named_like_a_frame(strings.get(c.name));
    let at = candidates
        .iter()
        .position(|c| tied(c) && frame_like(c))
        .unwrap_or(0);
    let pick = candidates.get(at)?;
    let runner_up = candidates
        .iter()
        .enumerate()
        .find(|(i, _)| *i != at)
        .map(|(_, c)| c);
    let percent = |c: &Candidate| format!("{:.0}%", c.share * 100.0);
    let mut note = format!(
        "frame span auto-picked: `{}` on thread {}, whose {} occurrences cover {} of that thread's timeline back to back",
        strings.get(pick.name),
        label(pick.thread),
        pick.count,
        percent(pick),
    );
    match runner_up {
        Some(r) if tied(r) && frame_like(pick) && !frame_like(r) => note.push_str(&format!(
            "; `{}` on thread {} covers {} of its own, a tie (within {TIE_POINTS} points) won by the span named like a frame",
            strings.get(r.name),
            label(r.thread),
            percent(r)
        )),
        Some(r) => note.push_str(&format!(
            ", the most of any top-level span (next: `{}` on thread {}, {})",
            strings.get(r.name),
            label(r.thread),
            percent(r),
        )),
        None => {}
    }
    note.push_str("; pass --frame-span NAME to choose another");
    Some(Pick {
        thread: pick.thread,
        name: pick.name,
        note,
    })
}

fn build(
    mut parsed: Parsed,
    end: ArrayEnd,
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Capture, ChromeError> {
    let mut defects: Vec<Defect> = std::mem::take(&mut parsed.carried);
    let mut notes: Vec<String> = Vec::new();
    let events = parsed.elements;
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
                    "the trace is cut off at byte {offset}; {events} whole events before it were read"
                ),
            )
            .at(offset as u64),
        ),
        ArrayEnd::Malformed(offset, message) => defects.push(
            Defect::new(
                DefectKind::CorruptRange,
                1,
                format!(
                    "malformed JSON at byte {offset} ({message}); reading stopped after {events} events"
                ),
            )
            .at(offset as u64),
        ),
    }

    // The clock origin: the earliest timestamp of any timed event.
    let origin_us = parsed.origin_us;
    let to_ns = |us: f64| -> Option<u64> {
        let ns = ((us - origin_us) * 1000.0).round();
        (0.0..1.8e19).contains(&ns).then_some(ns as u64)
    };
    let mut untimed = parsed.untimed;

    // X spans onto the clock, in place (the same size, so the allocation is reused).
    let read = parsed.spans.len();
    let mut spans: Vec<RawSpan> = std::mem::take(&mut parsed.spans)
        .into_iter()
        .filter_map(|r| {
            let start_ns = to_ns(r.ts_us)?;
            Some(RawSpan {
                thread: r.thread,
                name: r.name,
                site: r.site,
                depth: 0,
                start_ns,
                end_ns: start_ns.saturating_add((r.dur_us * 1000.0).round() as u64),
            })
        })
        .collect();
    untimed += (read - spans.len()) as u64;
    let frame_track: Vec<(u64, u64, bool)> = parsed
        .frame_track
        .iter()
        .filter_map(|&(ts, dur, paused)| {
            let begin = to_ns(ts)?;
            Some((
                begin,
                begin.saturating_add((dur * 1000.0).round() as u64),
                paused,
            ))
        })
        .collect();
    untimed += (parsed.frame_track.len() - frame_track.len()) as u64;
    let marks: Vec<(u32, u32, u64)> = parsed
        .marks
        .iter()
        .filter_map(|&(thread, name, ts)| Some((thread, name, to_ns(ts)?)))
        .collect();
    untimed += (parsed.marks.len() - marks.len()) as u64;
    let mut samples: BTreeMap<String, Vec<(u64, f64)>> = BTreeMap::new();
    for (name, list) in std::mem::take(&mut parsed.samples) {
        let timed: Vec<(u64, f64)> = list
            .iter()
            .filter_map(|&(ts, v)| Some((to_ns(ts)?, v)))
            .collect();
        untimed += (list.len() - timed.len()) as u64;
        if !timed.is_empty() {
            samples.insert(name, timed);
        }
    }

    // Match B/E per thread, in timestamp order (stable, so file order breaks ties).
    let mut out_of_order = 0u64;
    let mut unclosed: Vec<u32> = Vec::new();
    let mut unmatched_end = 0u64;
    let be_count: usize = parsed.begin_ends.iter().map(Vec::len).sum();
    // Room for the B/E spans, and no more: growing by doubling would hold up to twice
    // the rows.
    spans.shrink_to_fit();
    spans.reserve_exact(be_count / 2);
    for (thread, list) in std::mem::take(&mut parsed.begin_ends)
        .into_iter()
        .enumerate()
    {
        let thread = u32::try_from(thread).unwrap_or(u32::MAX);
        let mut timed: Vec<(u64, ReadBeginEnd)> = Vec::with_capacity(list.len());
        for e in list {
            match to_ns(e.ts_us) {
                Some(ts) => timed.push((ts, e)),
                None => untimed += 1,
            }
        }
        out_of_order += timed.windows(2).filter(|w| w[1].0 < w[0].0).count() as u64;
        timed.sort_by_key(|&(ts, _)| ts);
        let mut stack: Vec<(u64, ReadBeginEnd)> = Vec::new();
        for (ts, e) in timed {
            if e.begin {
                stack.push((ts, e));
            } else if let Some((start_ns, b)) = stack.pop() {
                spans.push(RawSpan {
                    thread,
                    name: b.name,
                    site: b.site,
                    depth: 0,
                    start_ns,
                    end_ns: ts.max(start_ns),
                });
            } else {
                unmatched_end += 1;
            }
        }
        unclosed.extend(stack.iter().map(|(_, b)| b.name));
    }
    if out_of_order > 0 {
        defects.push(Defect::new(
            DefectKind::Importer,
            out_of_order,
            format!("{out_of_order} B/E events were out of timestamp order on their thread; sorted before matching"),
        ));
    }
    if !unclosed.is_empty() {
        let shown: Vec<&str> = unclosed
            .iter()
            .take(5)
            .map(|&n| parsed.strings.get(n))
            .collect();
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
    if parsed.no_dur > 0 {
        defects.push(Defect::new(
            DefectKind::Importer,
            parsed.no_dur,
            format!("{} X events had no valid dur; ignored", parsed.no_dur),
        ));
    }
    if untimed > 0 {
        defects.push(Defect::new(
            DefectKind::Importer,
            untimed,
            format!("{untimed} events had no numeric ts; ignored"),
        ));
    }
    for (ph, n) in &parsed.unknown {
        defects.push(Defect::new(
            DefectKind::Importer,
            *n,
            format!("{n} events with unknown phase `{ph}`; ignored"),
        ));
    }
    if !parsed.unimported.is_empty() {
        let list: Vec<String> = parsed
            .unimported
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
            events: usize::try_from(events).unwrap_or(usize::MAX),
        });
    }

    // Nesting per thread: pre-order by (thread, start, longest first); spans of the same
    // extent by name and site, so the order never depends on the sort (which works in
    // place: no second copy of the spans).
    spans.sort_unstable_by_key(|s| (s.thread, s.start_ns, Reverse(s.end_ns), s.name, s.site));
    let mut clipped = 0u64;
    let mut stack: Vec<u64> = Vec::new();
    let mut current_thread = u32::MAX;
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
    let thread_label = |t: u32| -> String {
        let t = t as usize;
        let pid = parsed.thread_pids.get(t).cloned().unwrap_or_default();
        let tid = parsed.thread_tids.get(t).cloned().unwrap_or_default();
        let thread = parsed
            .thread_names
            .get(t)
            .cloned()
            .flatten()
            .unwrap_or_else(|| format!("tid {tid}"));
        match parsed.process_names.get(&pid) {
            Some(p) => format!("{p}/{thread}"),
            None => format!("pid {pid}/{thread}"),
        }
    };
    let own_track = options.frame_span.is_none() && !frame_track.is_empty();
    let frame_span: Option<(u32, u32)> = match &options.frame_span {
        None if own_track => {
            notes.push(format!(
                "frames from the trace's own frame track (category `frame`, as `framewise trace` writes it: {} frames); pass --frame-span NAME to use a span instead",
                frame_track.len()
            ));
            None
        }
        Some(name) => {
            let not_found = || ChromeError::FrameSpanNotFound {
                name: name.clone(),
                spans: spans.len(),
            };
            let id = parsed.strings.find(name).ok_or_else(not_found)?;
            let mut top_level: BTreeMap<u32, u64> = BTreeMap::new();
            for s in spans.iter().filter(|s| s.depth == 0 && s.name == id) {
                *top_level.entry(s.thread).or_insert(0) += 1;
            }
            let thread = top_level
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(t, _)| *t)
                .or_else(|| spans.iter().find(|s| s.name == id).map(|s| s.thread))
                .ok_or_else(not_found)?;
            Some((thread, id))
        }
        None => {
            let pick = pick_frame_span(&spans, &parsed.strings, &thread_label).ok_or(
                ChromeError::NoSpans {
                    events: usize::try_from(events).unwrap_or(usize::MAX),
                },
            )?;
            notes.push(pick.note);
            Some((pick.thread, pick.name))
        }
    };
    let mut frame_spans: Vec<(u64, u64, bool)> = match frame_span {
        None => frame_track,
        Some((thread, name)) => spans
            .iter()
            .filter(|s| s.thread == thread && s.name == name)
            .map(|s| (s.start_ns, s.end_ns, false))
            .collect(),
    };
    frame_spans.sort_unstable();
    frame_spans.dedup_by_key(|f| f.0);
    let begins: Vec<u64> = frame_spans.iter().map(|f| f.0).collect();
    let frame_of =
        |at: u64| -> Option<usize> { begins.partition_point(|&b| b <= at).checked_sub(1) };

    // Build.
    let mut b = CaptureBuilder::from_options(SourceKind::Chrome, options);
    let threads: Vec<u32> = (0..parsed.thread_names.len())
        .map(|t| b.thread(&thread_label(u32::try_from(t).unwrap_or(u32::MAX))))
        .collect();
    // Scopes in the order their spans come (pre-order per thread), each (name, site) once.
    let mut scopes: HashMap<(u32, u32), ScopeId> = HashMap::new();
    for s in &spans {
        if let std::collections::hash_map::Entry::Vacant(slot) = scopes.entry((s.name, s.site)) {
            let name = parsed.strings.get(s.name);
            let (file, line) = parsed
                .site_list
                .get(s.site as usize)
                .copied()
                .unwrap_or((0, 0));
            slot.insert(b.scope(
                if name.is_empty() { "(unnamed)" } else { name },
                parsed.strings.get(file),
                line,
            ));
        }
    }
    let frames = frame_spans.len();
    let mut before_first = 0u64;
    let mut marks_per_frame: Vec<Vec<MarkInput>> = (0..frames).map(|_| Vec::new()).collect();
    for &(thread, name, at) in &marks {
        let id = b.mark_name(parsed.strings.get(name));
        match frame_of(at).and_then(|f| marks_per_frame.get_mut(f)) {
            Some(list) => list.push(MarkInput {
                name: id,
                thread: threads.get(thread as usize).copied(),
                at_ns: at,
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
            match frame_of(ts).and_then(|f| last.get_mut(f)) {
                Some(slot) => *slot = Some(v),
                None => before_first += 1,
            }
        }
        for (f, v) in last.into_iter().enumerate() {
            if let (Some(v), Some(list)) = (v, counters_per_frame.get_mut(f)) {
                let raw = if integral { v as i64 } else { float_raw(v) };
                list.push((id, raw));
            }
        }
    }
    if !samples.is_empty() {
        notes.push(
            "Chrome counter events are samples; each frame takes its last sample, as a gauge"
                .into(),
        );
    }

    // Each thread's spans are one sorted run: a cursor per thread walks it frame by frame,
    // so no per-frame copy of the spans is made.
    let first_begin = begins.first().copied().unwrap_or(u64::MAX);
    let mut cursors: Vec<(usize, usize)> = Vec::new();
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut from = 0;
    while from < spans.len() {
        let thread = spans.get(from).map_or(0, |s| s.thread);
        let to = from
            + spans
                .get(from..)
                .map_or(0, |rest| rest.partition_point(|s| s.thread == thread));
        let mut next = from;
        while spans
            .get(next)
            .is_some_and(|s| next < to && s.start_ns < first_begin)
        {
            next += 1;
        }
        before_first += (next - from) as u64;
        if let Some(s) = spans.get(next).filter(|_| next < to) {
            heap.push(Reverse((s.start_ns, cursors.len())));
        }
        cursors.push((next, to));
        from = to;
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
    let mut runs: Vec<(u32, usize, usize)> = Vec::new();
    let mut reporter = Reporter::start(progress, Stage::Frames, frames as u64);
    for (i, &(begin, end, paused)) in frame_spans.iter().enumerate() {
        reporter.update(i as u64);
        let next_begin = begins.get(i + 1).copied().unwrap_or(u64::MAX);
        runs.clear();
        while let Some(&Reverse((start_ns, c))) = heap.peek() {
            if start_ns >= next_begin {
                break;
            }
            heap.pop();
            let Some(&(run_from, to)) = cursors.get(c) else {
                continue;
            };
            let mut next = run_from;
            while spans
                .get(next)
                .is_some_and(|s| next < to && s.start_ns < next_begin)
            {
                next += 1;
            }
            let thread = spans.get(run_from).map_or(0, |s| s.thread);
            runs.push((thread, run_from, next));
            if let Some(cursor) = cursors.get_mut(c) {
                cursor.0 = next;
            }
            if let Some(s) = spans.get(next).filter(|_| next < to) {
                heap.push(Reverse((s.start_ns, c)));
            }
        }
        runs.sort_unstable_by_key(|r| r.0);
        f.clear();
        f.index = i as u64;
        f.paused = paused;
        f.cpu_begin_ns = begin;
        f.cpu_end_ns = end;
        for &(thread, run_from, run_to) in &runs {
            let list = spans.get(run_from..run_to).unwrap_or(&[]);
            f.lanes.push(LaneInput {
                thread: threads.get(thread as usize).copied().unwrap_or(0),
                spans: list
                    .iter()
                    .map(|s| SpanInput {
                        scope: scopes.get(&(s.name, s.site)).copied().unwrap_or(0),
                        depth: s.depth,
                        start_ns: s.start_ns,
                        end_ns: s.end_ns,
                    })
                    .collect(),
                dropped_spans: 0,
            });
        }
        f.marks = marks_per_frame
            .get_mut(i)
            .map(std::mem::take)
            .unwrap_or_default();
        f.counters = counters_per_frame
            .get_mut(i)
            .map(std::mem::take)
            .unwrap_or_default();
        b.push_frame(&f);
    }
    reporter.finish();
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &[u8]) -> Result<(u64, ArrayEnd), ChromeError> {
        read_events(text, text.len() as u64, &mut no_progress).map(|(p, end)| (p.elements, end))
    }

    #[test]
    fn cut_off_array_keeps_whole_events() {
        let text = br#"[{"ph":"X","name":"frame","ts":0,"dur":10,"pid":1,"tid":1},
{"ph":"X","name":"frame","ts":16,"dur":10,"pid":1,"tid":1},{"ph":"X","na"#;
        let (events, end) = read(text).expect("tolerated");
        assert_eq!(events, 2);
        assert!(matches!(end, ArrayEnd::Truncated(_)));
    }

    #[test]
    fn open_array_is_allowed() {
        let (events, end) = read(br#"[{"ph":"i","ts":1},"#).expect("tolerated");
        assert_eq!(events, 1);
        assert_eq!(end, ArrayEnd::Open);
    }

    #[test]
    fn rejects_non_traces() {
        assert!(matches!(read(b"42"), Err(ChromeError::NotATrace { .. })));
        assert!(matches!(
            read(b"{\"a\":1}"),
            Err(ChromeError::NotATrace { .. })
        ));
        assert!(matches!(
            read(b"{\"traceEvents\":{}}"),
            Err(ChromeError::NotATrace { .. })
        ));
        assert!(matches!(read(b"[}"), Err(ChromeError::NotJson { .. })));
        assert!(matches!(read(b""), Err(ChromeError::NotATrace { .. })));
    }

    #[test]
    fn cut_off_object_form() {
        let text = br#"{"displayTimeUnit":"ms","traceEvents":[{"ph":"X","name":"f","ts":0,"dur":5,"pid":1,"tid":1},{"ph":"#;
        let (events, end) = read(text).expect("tolerated");
        assert_eq!(events, 1);
        assert!(matches!(end, ArrayEnd::Truncated(_)));
    }

    #[test]
    fn fields_of_any_type_are_read_not_rejected() {
        let text = br#"[{"ph":"X","name":7,"ts":"soon","dur":1,"pid":[1],"tid":{"a":[{}]},"args":3},
{"ph":"X","name":"f","ts":0,"dur":5,"pid":1.5,"tid":-2,"args":{"line":"12","file":"a.rs","x":{"y":[1,2]}}},
"not an event", 12, null]"#;
        let (parsed, end) = read_events(&text[..], 0, &mut no_progress).expect("tolerated");
        assert_eq!(end, ArrayEnd::Closed);
        assert_eq!(parsed.elements, 5);
        assert_eq!(parsed.untimed, 1);
        assert_eq!(parsed.unknown.get("(none)"), Some(&3));
        assert_eq!(parsed.thread_pids, ["1.5"]);
        assert_eq!(parsed.thread_tids, ["-2"]);
        assert_eq!(parsed.site_list.len(), 1);
        let (file, line) = parsed.site_list[0];
        assert_eq!((parsed.strings.get(file), line), ("a.rs", 12));
    }

    #[test]
    fn a_span_row_is_32_bytes() {
        // What the importer holds per span, whatever the text: the bound on its memory.
        assert_eq!(std::mem::size_of::<ReadSpan>(), 32);
        assert_eq!(std::mem::size_of::<RawSpan>(), 32);
    }
}
