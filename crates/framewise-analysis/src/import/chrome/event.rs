//! One trace event as the importer reads it: a small typed record (`ph`, `name`, `cat`,
//! `ts`, `dur`, `pid`, `tid`, `args`), each field read whatever its JSON type and never an
//! error (a `ts` that is a string is an untimed event, not a broken trace), and the keys of
//! the object form around the event array.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// A field's value as the importer reads it: whatever its JSON type, never an error (a
/// `ts` that is a string is an untimed event, not a broken trace).
#[derive(Debug, Default, PartialEq)]
pub(super) enum Scalar {
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
    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn as_f64(&self) -> Option<f64> {
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
    pub(super) fn id(&self) -> String {
        match self {
            Self::Str(s) => s.clone(),
            Self::U64(v) => v.to_string(),
            Self::I64(v) => v.to_string(),
            Self::F64(v) => format!("{v:?}"),
            _ => "0".into(),
        }
    }
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
pub(super) struct Args {
    /// Members, counted as a JSON object keeps them (a repeated key counts once).
    pub(super) members: usize,
    /// `M`: the process or thread name.
    pub(super) name: Option<String>,
    /// A frame track's frame index.
    pub(super) index: Option<u64>,
    /// A frame track's paused flag.
    pub(super) paused: Option<bool>,
    /// The source file under `.file`, `file`, `[file]` (tracing-chrome and others), in
    /// that order of preference.
    file: [Option<String>; 3],
    /// The line under `.line`, `line`, `[line]`: present (even when not a number) or not.
    line: [Option<Scalar>; 3],
    /// `site`: `file:line`, as `framewise trace` writes a span's call site (read when no
    /// member above names the file).
    site: Option<String>,
    /// Every member that is a number or a string holding one: a `C` event's samples.
    pub(super) numbers: Vec<(String, f64)>,
}

impl Args {
    pub(super) fn site(&self) -> (&str, u32) {
        let file = self.file.iter().flatten().next().map_or("", String::as_str);
        if file.is_empty() {
            let written = self.site.as_deref().and_then(|s| s.rsplit_once(':'));
            if let Some((file, line)) = written.filter(|(file, _)| !file.is_empty()) {
                if let Ok(line) = line.parse::<u32>() {
                    return (file, line);
                }
            }
        }
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
                "site" => args.site = value.as_str().map(str::to_owned),
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
pub(super) struct Event {
    pub(super) ph: Scalar,
    pub(super) name: Scalar,
    pub(super) cat: Scalar,
    pub(super) pid: Scalar,
    pub(super) tid: Scalar,
    pub(super) ts: Scalar,
    pub(super) dur: Scalar,
    pub(super) args: Option<Args>,
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
pub(super) enum TopKey {
    TraceEvents,
    OtherData,
    #[serde(other)]
    Other,
}
