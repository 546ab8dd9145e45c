//! The Chrome Trace Event documents `framewise trace` writes, one type per kind of event:
//! these types are the schema (docs/cli/trace.md). Fields serialize in the
//! order they are declared; optional members are left out when absent.
//!
//! Times are [`Micros`]: microseconds written from integer nanoseconds with three decimals,
//! exact at any magnitude (an `f64` would round a timestamp past about 2^43 µs).

use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// The top-level members written before `traceEvents` (which is streamed after them).
#[derive(Serialize)]
pub(super) struct Head<'a, G, S> {
    /// Always `"ms"`.
    #[serde(rename = "displayTimeUnit")]
    pub display_time_unit: &'static str,
    /// Where the trace came from.
    #[serde(rename = "otherData")]
    pub other_data: OtherData<'a, G, S>,
}

/// `otherData`: the capture's counters (their kinds; left out when it has none), its defects
/// (left out when it has none), the frame budget it declares (left out when it declares
/// none), the generator, the capture's source kind and grade, and what the GPU clock is.
/// Members in name order.
#[derive(Serialize)]
pub(super) struct OtherData<'a, G, S> {
    /// Each counter's name, kind and representation, in the capture's order: a `C` event
    /// carries a value, not whether the counter is a per-frame sum, so framewise's Chrome
    /// importer reads the kinds back from here.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub counters: Vec<CounterDecl<'a>>,
    /// What the capture lost, so that a trace of a damaged capture, read back, still says
    /// so (framewise's Chrome importer restores them as the trace's own defects).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub defects: &'a [crate::model::Defect],
    /// The frame budget the capture declares, ns: a trace carries no budget of its own, so
    /// framewise's Chrome importer reads it back from here (without it a trace of a 30 Hz
    /// capture would be judged against 60 Hz, its jank ratios changed by the export alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_budget_ns: Option<u64>,
    /// Always `"framewise"`.
    pub generator: &'static str,
    /// What the GPU tracks' times mean.
    pub gpu_clock: &'a str,
    /// The capture's truth grade.
    pub grade: G,
    /// The capture's source kind.
    pub source: S,
}

/// One entry of `otherData.counters`.
#[derive(Serialize)]
pub(super) struct CounterDecl<'a> {
    /// The counter's name, as its `C` events give it.
    pub name: &'a str,
    /// `"sum"` (summed within a frame) or `"gauge"` (a level at frame close).
    pub kind: crate::model::CounterKind,
    /// `"integer"` or `"float"`.
    pub numeric: crate::model::Numeric,
}

/// `ph: "M"`: names a process (`process_name`) or a thread (`thread_name`). `ts` is always
/// 0: the format needs no time on metadata, but some consumers reject an event without one.
#[derive(Serialize)]
pub(super) struct Metadata<'a> {
    /// Always `"M"`.
    pub ph: &'static str,
    /// `"process_name"` or `"thread_name"`.
    pub name: &'static str,
    /// The process.
    pub pid: u32,
    /// The thread (0 for a process name).
    pub tid: u32,
    /// Always 0.
    pub ts: u8,
    /// The name given.
    pub args: NameArgs<'a>,
}

/// `args` of a [`Metadata`] event.
#[derive(Serialize)]
pub(super) struct NameArgs<'a> {
    /// The process's or thread's name.
    pub name: &'a str,
}

/// `ph: "X"`: a complete event (a frame, a CPU span, a GPU pass).
#[derive(Serialize)]
pub(super) struct Complete<'a, N, A> {
    /// Always `"X"`.
    pub ph: &'static str,
    /// The frame's, scope's or pass's name.
    pub name: N,
    /// `"frame"`, `"cpu"` or `"gpu"`.
    pub cat: &'static str,
    /// The process.
    pub pid: u32,
    /// The track.
    pub tid: u32,
    /// Begin.
    pub ts: Micros,
    /// Duration.
    pub dur: Micros,
    /// Frame details, or a CPU span's call site; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<&'a A>,
}

/// `args` of a frame's [`Complete`] event.
#[derive(Serialize)]
pub(super) struct FrameArgs {
    /// The capture's frame index.
    pub index: u64,
    /// The game declared the frame paused.
    pub paused: bool,
    /// Begin to the next frame's begin; absent when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_us: Option<Micros>,
}

/// `args` of a CPU span's [`Complete`] event when its scope has a call site.
#[derive(Serialize)]
pub(super) struct SiteArgs {
    /// `file:line`.
    pub site: String,
}

/// Serializes nothing: the `args` type of events that never carry any.
#[derive(Serialize)]
pub(super) enum NoArgs {}

/// `ph: "C"`: a counter's value, sampled at its frame's begin.
#[derive(Serialize)]
pub(super) struct Counter<'a> {
    /// Always `"C"`.
    pub ph: &'static str,
    /// The counter's name.
    pub name: &'a Escaped,
    /// Always the CPU process.
    pub pid: u32,
    /// Always 0.
    pub tid: u32,
    /// The frame's begin.
    pub ts: Micros,
    /// The value.
    pub args: CounterArgs,
}

/// `args` of a [`Counter`] event.
#[derive(Serialize)]
pub(super) struct CounterArgs {
    /// The frame's value.
    pub value: CounterValue,
}

/// `ph: "i"`: a mark, thread-scoped (`s: "t"`).
#[derive(Serialize)]
pub(super) struct Instant<'a> {
    /// Always `"i"`.
    pub ph: &'static str,
    /// Always `"t"`.
    pub s: &'static str,
    /// The mark's name.
    pub name: &'a Escaped,
    /// Always the CPU process.
    pub pid: u32,
    /// The mark's thread's track, or the frames track.
    pub tid: u32,
    /// When.
    pub ts: Micros,
    /// A usermark's window and note; absent for other marks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<UsermarkArgs<'a>>,
}

/// `args` of a usermark's [`Instant`] event.
#[derive(Serialize)]
pub(super) struct UsermarkArgs<'a> {
    /// Always true.
    pub usermark: bool,
    /// The window the user marked, before the mark.
    pub window_us: Micros,
    /// The user's note.
    pub note: &'a str,
}

/// A time or duration in integer nanoseconds, written as microseconds with exactly three
/// decimals (`1234567` ns → `1234.567`): nothing is rounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Micros(pub u64);

impl Micros {
    /// The text written, at the end of `buf` (at most 24 bytes: 20 digits, a point and 3
    /// decimals), digit by digit: this runs twice per event.
    fn text(self, buf: &mut [u8; 32]) -> &str {
        let digit = |n: u64| b'0' + (n % 10) as u8;
        let mut at = buf.len();
        let mut put = |byte: u8| {
            at -= 1;
            buf[at] = byte;
        };
        let frac = self.0 % 1000;
        put(digit(frac));
        put(digit(frac / 10));
        put(digit(frac / 100));
        put(b'.');
        let mut int = self.0 / 1000;
        loop {
            put(digit(int));
            int /= 10;
            if int == 0 {
                break;
            }
        }
        std::str::from_utf8(&buf[at..]).unwrap_or("0")
    }
}

impl Serialize for Micros {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; 32];
        let raw: &RawValue = serde_json::from_str(self.text(&mut buf)).map_err(S::Error::custom)?;
        raw.serialize(serializer)
    }
}

/// A counter's value: an integral value as an integer (`120`, as the counter counted it),
/// any other finite value as a number, a non-finite one as 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct CounterValue(pub f64);

impl Serialize for CounterValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: every integer below is exact
        let v = self.0;
        if !v.is_finite() {
            serializer.serialize_u8(0)
        } else if v.fract() == 0.0 && v.abs() < EXACT {
            serializer.serialize_i64(v as i64)
        } else {
            serializer.serialize_f64(v)
        }
    }
}

/// A string escaped once as JSON and written as is wherever it is named (a scope's name
/// is written once per span).
pub(super) struct Escaped(Box<RawValue>);

impl Escaped {
    /// `text` as a JSON string.
    pub(super) fn new(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(text).map(Self)
    }
}

impl Serialize for Escaped {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// A frame's name, `frame INDEX`, written without building the string first.
pub(super) struct FrameName(pub u64);

impl Serialize for FrameName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("frame {}", self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json<T: Serialize>(v: &T) -> String {
        serde_json::to_string(v).unwrap_or_default()
    }

    #[test]
    fn microseconds_are_exact_at_any_magnitude() {
        assert_eq!(json(&Micros(0)), "0.000");
        assert_eq!(json(&Micros(1)), "0.001");
        assert_eq!(json(&Micros(1_234_567)), "1234.567");
        assert_eq!(json(&Micros(u64::MAX)), "18446744073709551.615");
    }

    #[test]
    fn counter_values_keep_integers_integral() {
        assert_eq!(json(&CounterValue(120.0)), "120");
        assert_eq!(json(&CounterValue(-3.0)), "-3");
        assert_eq!(json(&CounterValue(0.25)), "0.25");
        assert_eq!(json(&CounterValue(f64::NAN)), "0");
        assert_eq!(json(&CounterValue(f64::INFINITY)), "0");
    }

    #[test]
    fn escaped_names_are_json_strings() {
        let name = Escaped::new("a\"b\\c\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(json(&name), r#""a\"b\\c\n""#);
        assert_eq!(json(&FrameName(7)), r#""frame 7""#);
    }
}
