//! Chrome Trace Event JSON: what `tracing-chrome`, Bevy's `trace_chrome` feature,
//! wgpu-profiler and browsers write.
//!
//! Both forms are read: the object form (`{"traceEvents": [...]}`) and the bare array,
//! including an array cut off mid-event (the tail is reported, every whole event before it
//! is kept; the closing `]` is optional in the format itself). `X` and matched `B`/`E`
//! events become scopes; `i`/`I`/`R` become marks; `C` become counters (each frame takes
//! its last sample; gauges, unless a trace framewise exported declares their kinds in
//! `otherData.counters`); `M` name processes and threads. A trace framewise exported also
//! gives back its capture's frame budget (`otherData.frame_budget_ns`).
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

/// The `visit_*` methods for the JSON kinds a visitor does not read: each gives `$body`
/// (with `$this` bound to the visitor) instead of a type error, so an odd value is skipped,
/// never fatal. Defined here, before the modules, because a `macro_rules!` is seen only
/// after its definition and the visitors of both `event` and `parse` use it.
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

mod build;
mod event;
mod frame_span;
mod parse;
mod source;
#[cfg(test)]
mod tests;

use std::io::Read;

use crate::build::LoadOptions;
use crate::load::{no_progress, Progress};
use crate::model::Capture;

use self::build::build;
use self::parse::read_events;

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
