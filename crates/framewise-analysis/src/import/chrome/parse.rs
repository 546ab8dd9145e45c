//! Reading: bytes → typed events → compact rows. The event array (bare, or under
//! `traceEvents`) is streamed through serde_json into [`Parsed`]: strings interned, spans
//! and `B`/`E` events per thread in µs before the clock origin is known, marks, counter
//! samples, metadata names, the frame track of a trace framewise exported, the defects,
//! counter kinds and frame budget it carries, and how the array ended (closed, left open, cut
//! off, malformed).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Read;
use std::rc::Rc;

use serde::de::{
    self, DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};

use crate::load::{Progress, Reporter, Stage};
use crate::model::{AdapterKind, CounterKind, Defect, DefectKind, Numeric};

use super::event::{Args, Event, TopKey};
use super::source::{Position, Source};
use super::ChromeError;

/// Phases that are part of the format but not imported (async, flow, object, sample, memory
/// dump, context, clock sync).
const KNOWN_UNIMPORTED: &[&str] = &[
    "b", "e", "n", "S", "T", "p", "F", "s", "t", "f", "P", "O", "N", "D", "V", "v", "(", ")", "c",
];

/// Whether `otherData` is that of a trace framewise exported.
fn by_framewise(other_data: &serde_json::Value) -> bool {
    other_data
        .get("generator")
        .and_then(serde_json::Value::as_str)
        == Some("framewise")
}

/// The counters' kinds a trace framewise exported declares in `otherData.counters` (a `C`
/// event carries a value, not whether its counter is a per-frame sum), by name. An entry
/// that does not read as a name, a kind and a representation is left out (its counter is
/// then read as any other trace's: a gauge); so is a name declared twice, which cannot be
/// told apart. Another generator's `otherData` declares nothing.
fn declared_counters(other_data: &serde_json::Value) -> BTreeMap<String, (CounterKind, Numeric)> {
    let mut declared = BTreeMap::new();
    let mut twice = Vec::new();
    if !by_framewise(other_data) {
        return declared;
    }
    let Some(list) = other_data
        .get("counters")
        .and_then(serde_json::Value::as_array)
    else {
        return declared;
    };
    for entry in list {
        let name = entry.get("name").and_then(serde_json::Value::as_str);
        let kind = entry
            .get("kind")
            .and_then(|k| serde_json::from_value::<CounterKind>(k.clone()).ok());
        let numeric = entry
            .get("numeric")
            .and_then(|n| serde_json::from_value::<Numeric>(n.clone()).ok());
        if let (Some(name), Some(kind), Some(numeric)) = (name, kind, numeric) {
            if declared.insert(name.to_owned(), (kind, numeric)).is_some() {
                twice.push(name.to_owned());
            }
        }
    }
    for name in twice {
        declared.remove(&name);
    }
    declared
}

/// The adapter a trace framewise exported implies by its capture's timing grade
/// (`otherData.grade.timing`): `software` and `hardware` say the adapter, so a trace of a
/// software-rendered capture keeps its grade when read back (with no GPU work timed its
/// trace would otherwise read as `hardware`, and compare with hardware timings). `unknown`, a
/// value this reader does not know, or another generator's trace declares nothing.
fn declared_adapter(other_data: &serde_json::Value) -> Option<AdapterKind> {
    if !by_framewise(other_data) {
        return None;
    }
    match other_data.pointer("/grade/timing")?.as_str()? {
        "software" => Some(AdapterKind::Software),
        "hardware" => Some(AdapterKind::Hardware),
        _ => None,
    }
}

/// The frame budget a trace framewise exported declares in `otherData.frame_budget_ns` (its
/// capture's): `None` when it declares none (or is another generator's, whose `otherData`
/// is not trusted), `Some(Err(value as written))` when the value is no budget (not a whole
/// number of nanoseconds above 0), which is then ignored with a note.
fn declared_budget(other_data: &serde_json::Value) -> Option<Result<u64, String>> {
    if !by_framewise(other_data) {
        return None;
    }
    let v = other_data.get("frame_budget_ns")?;
    Some(v.as_u64().filter(|&ns| ns > 0).ok_or_else(|| {
        // As written, cut to a note's length (a hostile trace may put megabytes there).
        let written = v.to_string();
        if written.chars().count() > 40 {
            format!("{}…", written.chars().take(40).collect::<String>())
        } else {
            written
        }
    }))
}

/// The defects a trace framewise exported carries in `otherData.defects` (what its capture
/// lost), as this import's own: a trace of a damaged capture stays damaged when read back.
/// Anything else in `otherData`, or another generator's, is left alone.
fn carried_defects(other_data: &serde_json::Value) -> Vec<Defect> {
    if !by_framewise(other_data) {
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
pub(super) struct Strings {
    ids: HashMap<String, u32>,
    all: Vec<String>,
}

impl Strings {
    pub(super) fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = u32::try_from(self.all.len()).unwrap_or(u32::MAX);
        self.all.push(s.to_owned());
        self.ids.insert(s.to_owned(), id);
        id
    }

    pub(super) fn get(&self, id: u32) -> &str {
        self.all.get(id as usize).map_or("", String::as_str)
    }

    pub(super) fn find(&self, s: &str) -> Option<u32> {
        self.ids.get(s).copied()
    }
}

/// An `X` event as read: times in the trace's µs, before the clock origin is known.
#[derive(Clone, Copy)]
pub(super) struct ReadSpan {
    pub(super) thread: u32,
    pub(super) name: u32,
    pub(super) site: u32,
    pub(super) ts_us: f64,
    pub(super) dur_us: f64,
}

/// A `B` or `E` event as read.
#[derive(Clone, Copy)]
pub(super) struct ReadBeginEnd {
    pub(super) ts_us: f64,
    pub(super) begin: bool,
    pub(super) name: u32,
    pub(super) site: u32,
}

/// A span on the capture's clock. 32 bytes: what the importer holds per span.
#[derive(Clone, Copy)]
pub(super) struct RawSpan {
    pub(super) thread: u32,
    pub(super) name: u32,
    pub(super) site: u32,
    pub(super) depth: u32,
    pub(super) start_ns: u64,
    pub(super) end_ns: u64,
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
pub(super) enum ArrayEnd {
    Closed,
    /// Ended cleanly between events without `]` (allowed by the format).
    Open,
    /// Cut off inside an event at this offset.
    Truncated(usize),
    /// Malformed JSON at this offset; reading stopped.
    Malformed(usize, String),
}

/// Everything read from the events, compact, before the clock origin is applied.
pub(super) struct Parsed {
    position: Rc<Position>,
    array: ArrayState,
    /// Where the last whole element of the array ended.
    element_end: u64,
    /// Elements of the event array read, whatever they were.
    pub(super) elements: u64,
    pub(super) strings: Strings,
    sites: HashMap<(u32, u32), u32>,
    pub(super) site_list: Vec<(u32, u32)>,
    thread_keys: HashMap<(String, String), usize>,
    pub(super) thread_names: Vec<Option<String>>,
    pub(super) thread_pids: Vec<String>,
    pub(super) thread_tids: Vec<String>,
    pub(super) process_names: HashMap<String, String>,
    /// The earliest `ts` of any event but metadata, µs.
    pub(super) origin_us: f64,
    pub(super) spans: Vec<ReadSpan>,
    /// Per thread, `B`/`E` events in file order.
    pub(super) begin_ends: Vec<Vec<ReadBeginEnd>>,
    /// The frame track of a trace framewise exported: (ts, dur, paused, index) per frame,
    /// µs.
    pub(super) frame_track: Vec<(f64, f64, bool, u64)>,
    pub(super) marks: Vec<(u32, u32, f64)>,
    pub(super) samples: BTreeMap<String, Vec<(f64, f64)>>,
    pub(super) unimported: BTreeMap<String, u64>,
    pub(super) unknown: BTreeMap<String, u64>,
    pub(super) untimed: u64,
    pub(super) no_dur: u64,
    /// `X` events without a valid `dur` (not of the frame track), by (thread, name): a frame
    /// span among them is a frame lost.
    pub(super) no_dur_spans: HashMap<(u32, u32), u64>,
    /// `X` and `B` events without a numeric `ts`, by name: a frame span among them is a
    /// frame lost.
    pub(super) untimed_spans: HashMap<u32, u64>,
    /// Where something other than whitespace follows the document (its offset): not read.
    pub(super) trailing_at: Option<u64>,
    /// The defects a framewise trace carries from its capture (`otherData.defects`).
    pub(super) carried: Vec<Defect>,
    /// The counters' kinds a framewise trace declares (`otherData.counters`), by name.
    pub(super) declared_counters: BTreeMap<String, (CounterKind, Numeric)>,
    /// The adapter a framewise trace's timing grade says (`otherData.grade.timing`).
    pub(super) declared_adapter: Option<AdapterKind>,
    /// The frame budget a framewise trace declares (`otherData.frame_budget_ns`), or the
    /// value as written when it is no budget.
    pub(super) declared_budget: Option<Result<u64, String>>,
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
            no_dur_spans: HashMap::new(),
            untimed_spans: HashMap::new(),
            trailing_at: None,
            carried: Vec::new(),
            declared_counters: BTreeMap::new(),
            declared_adapter: None,
            declared_budget: None,
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

    pub(super) fn site(&mut self, args: Option<&Args>) -> u32 {
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
            if matches!(ph, "X" | "B") {
                *self.untimed_spans.entry(self.strings.id(name)).or_insert(0) += 1;
            }
            return;
        };
        let thread = self.thread_of(e.pid.id(), e.tid.id());
        let args = e.args.as_ref();
        match ph {
            "X" => match e.dur.as_f64() {
                Some(dur_us) if dur_us.is_finite() && dur_us >= 0.0 => {
                    if e.cat.as_str() == Some("frame") {
                        if let Some((a, index)) = args.and_then(|a| Some((a, a.index?))) {
                            self.frame_track.push((
                                ts_us,
                                dur_us,
                                a.paused.unwrap_or(false),
                                index,
                            ));
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
                _ => {
                    self.no_dur += 1;
                    let key = (thread, self.strings.id(name));
                    *self.no_dur_spans.entry(key).or_insert(0) += 1;
                }
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
                    self.0.declared_counters = declared_counters(&other_data);
                    self.0.declared_adapter = declared_adapter(&other_data);
                    self.0.declared_budget = declared_budget(&other_data);
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
pub(super) fn read_events<R: Read>(
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
        let read = if object {
            de.deserialize_map(ObjectSeed(&mut parsed))
        } else {
            EventsSeed(&mut parsed).deserialize(&mut de)
        };
        // Whatever follows the document but whitespace (a second trace appended, an older
        // and longer file's tail written over) was not read: said, never ignored silently.
        match read {
            Ok(()) => match de.end() {
                Ok(()) => Ok(()),
                Err(e) if e.is_io() => Err(e),
                Err(_) => {
                    parsed.trailing_at = Some(position.consumed.get().saturating_sub(1));
                    Ok(())
                }
            },
            Err(e) => Err(e),
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
