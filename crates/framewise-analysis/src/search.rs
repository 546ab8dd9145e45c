//! Finding things by name: every scope, GPU pass, counter and mark whose name holds the
//! text, each with the frames it occurs in, worst first — the inspector's search box.
//!
//! An occurrence is a frame: a scope's or pass's inclusive total in that frame (its call
//! sites merged, as [`crate::view::series`] reads it) and its calls; a counter's value; a
//! mark's time in its frame, ranked by that frame's period (the frame it flagged, worst
//! first). Matching is case-insensitive on the name; names that *are* the text come before
//! names that merely hold it, then shorter names, then by name.
//!
//! A scope's or pass's single runs (spans: frame, thread, start, duration), longest first,
//! are [`longest_instances`]: it reads frames' spans from a [`crate::FrameSource`], only
//! as many as it needs.
//!
//! ```
//! use framewise_analysis::search::{search, MatchKind};
//! use framewise_analysis::{CaptureBuilder, FrameInput, LaneInput, SourceKind, SpanInput};
//!
//! let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
//! let main = b.thread("main");
//! let render = b.scope("render", "", 0);
//! let mut f = FrameInput::default();
//! for (i, ms) in [3u64, 9, 5].into_iter().enumerate() {
//!     f.clear();
//!     f.index = i as u64;
//!     f.cpu_begin_ns = i as u64 * 16_000_000;
//!     f.cpu_end_ns = f.cpu_begin_ns + 10_000_000;
//!     let at = f.cpu_begin_ns;
//!     f.lanes.push(LaneInput {
//!         thread: main,
//!         spans: vec![SpanInput { scope: render, depth: 0, start_ns: at, end_ns: at + ms * 1_000_000 }],
//!         dropped_spans: 0,
//!     });
//!     b.push_frame(&f);
//! }
//! let found = search(&b.finish(), "REND", 10);
//! assert_eq!((found[0].kind, found[0].name.as_str(), found[0].frames), (MatchKind::Scope, "render", 3));
//! let rows: Vec<usize> = found[0].occurrences.iter().map(|o| o.row).collect();
//! assert_eq!(rows, [1, 2, 0]); // 9 ms, 5 ms, 3 ms
//! ```

use serde::{Deserialize, Serialize};

use crate::model::{Agg, Capture, PerFrame};
use crate::stats::Num;
use crate::view::{ids_named, series, SeriesKind};

mod instances;

pub use instances::{longest_instances, Instance, Instances};

/// What a match names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    /// A CPU scope (its call sites merged).
    Scope,
    /// A GPU pass.
    Pass,
    /// A counter.
    Counter,
    /// An instant mark.
    Mark,
}

/// One frame a match occurs in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Occurrence {
    /// The frame's row.
    pub row: usize,
    /// The frame's index as the source numbered it.
    pub index: u64,
    /// A scope's or pass's inclusive total in the frame (ns), a counter's value, or, for a
    /// mark, the frame's period (ns; `None` when unknown).
    pub value: Option<Num>,
    /// Times a scope or pass ran in the frame, or marks of that name in it.
    pub calls: u64,
    /// A mark's time from its frame's begin, ns (the first, when the frame has several).
    pub at_ns: Option<i64>,
}

/// A name that holds the text, and where it occurs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Match {
    /// What it is.
    pub kind: MatchKind,
    /// Its name.
    pub name: String,
    /// Frames it occurs in.
    pub frames: usize,
    /// The worst `limit` of them: largest value first (then by row); for a counter, values
    /// as recorded; a frame without a value last.
    pub occurrences: Vec<Occurrence>,
}

fn as_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn calls_in(aggs: &PerFrame<Agg>, row: usize, ids: &[u32]) -> u64 {
    aggs.frame(row)
        .iter()
        .filter(|a| ids.contains(&a.id))
        .map(|a| u64::from(a.calls))
        .sum()
}

/// The distinct names among `names` that hold `needle` (already lower case).
fn matching<'a>(names: impl Iterator<Item = &'a str>, needle: &str) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if n.to_lowercase().contains(needle) && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

fn ranked(mut occurrences: Vec<Occurrence>, limit: usize) -> (usize, Vec<Occurrence>) {
    let frames = occurrences.len();
    occurrences.sort_by(|a, b| {
        let key = |o: &Occurrence| o.value.map(Num::as_f64);
        match (key(a), key(b)) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
        .then(a.row.cmp(&b.row))
    });
    occurrences.truncate(limit);
    (frames, occurrences)
}

fn occurrence(capture: &Capture, row: usize, value: Option<Num>, calls: u64) -> Occurrence {
    Occurrence {
        row,
        index: capture.frames().index.get(row).copied().unwrap_or(0),
        value,
        calls,
        at_ns: None,
    }
}

/// A scope's, pass's or counter's frames, from its series.
fn by_series(capture: &Capture, kind: MatchKind, name: &str, limit: usize) -> Option<Match> {
    let (series_kind, aggs, ids): (SeriesKind, Option<&PerFrame<Agg>>, Vec<u32>) = match kind {
        MatchKind::Scope => (
            SeriesKind::Scope,
            Some(capture.scope_aggs()),
            ids_named(capture.scopes().iter().map(|s| s.name.as_str()), name),
        ),
        MatchKind::Pass => (
            SeriesKind::Pass,
            Some(capture.pass_aggs()),
            ids_named(capture.passes().iter().map(|p| p.name.as_str()), name),
        ),
        MatchKind::Counter => (SeriesKind::Counter, None, Vec::new()),
        MatchKind::Mark => return None,
    };
    let values = series(capture, series_kind, name)?;
    let found = values
        .into_iter()
        .enumerate()
        .filter_map(|(row, v)| {
            let calls = aggs.map_or(1, |a| calls_in(a, row, &ids));
            v.map(|v| occurrence(capture, row, Some(v), calls))
        })
        .collect();
    let (frames, occurrences) = ranked(found, limit);
    Some(Match {
        kind,
        name: name.to_owned(),
        frames,
        occurrences,
    })
}

fn marks(capture: &Capture, id: u32, name: &str, limit: usize) -> Match {
    let mut by_row: Vec<Occurrence> = Vec::new();
    for m in capture.marks().iter().filter(|m| m.name == id) {
        let row = m.frame_row as usize;
        if let Some(o) = by_row.iter_mut().find(|o| o.row == row) {
            o.calls += 1;
            continue;
        }
        let f = capture.frames().row(row);
        let mut o = occurrence(
            capture,
            row,
            f.and_then(|f| f.period_ns).map(|p| Num::Int(as_i64(p))),
            1,
        );
        o.at_ns = f.map(|f| {
            let d = i128::from(m.at_ns) - i128::from(f.cpu_begin_ns);
            i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
        });
        by_row.push(o);
    }
    let (frames, occurrences) = ranked(by_row, limit);
    Match {
        kind: MatchKind::Mark,
        name: name.to_owned(),
        frames,
        occurrences,
    }
}

/// Every scope, pass, counter and mark whose name holds `text` (case-insensitive), each
/// with its `limit` worst frames. An empty (or all-blank) text matches nothing.
pub fn search(capture: &Capture, text: &str, limit: usize) -> Vec<Match> {
    let needle = text.trim().to_lowercase();
    if needle.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Match> = Vec::new();
    for (kind, names) in [
        (
            MatchKind::Scope,
            matching(capture.scopes().iter().map(|s| s.name.as_str()), &needle),
        ),
        (
            MatchKind::Pass,
            matching(capture.passes().iter().map(|p| p.name.as_str()), &needle),
        ),
        (
            MatchKind::Counter,
            matching(capture.counters().iter().map(|c| c.name.as_str()), &needle),
        ),
    ] {
        out.extend(
            names
                .into_iter()
                .filter_map(|name| by_series(capture, kind, name, limit)),
        );
    }
    for (id, name) in capture.mark_names().iter().enumerate() {
        if name.to_lowercase().contains(&needle) {
            if let Ok(id) = u32::try_from(id) {
                out.push(marks(capture, id, name, limit));
            }
        }
    }
    out.sort_by(|a, b| {
        let exact = |m: &Match| m.name.to_lowercase() != needle;
        exact(a)
            .cmp(&exact(b))
            .then(a.name.len().cmp(&b.name.len()))
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

#[cfg(test)]
mod tests;
