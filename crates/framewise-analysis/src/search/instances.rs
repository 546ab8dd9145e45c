//! A scope's or pass's longest single runs (spans) over the capture, without reading every
//! frame: frames are read in descending order of the name's largest per-frame inclusive
//! total, which bounds any one run in that frame, and the search stops once the runs kept
//! are all longer than the next frame's bound.

use serde::{Deserialize, Serialize};

use super::MatchKind;
use crate::load::{FrameReadError, FrameSource};
use crate::model::{Agg, Capture, PerFrame};
use crate::view::ids_named;

/// One run of a scope (a CPU span) or of a GPU pass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    /// Its frame's row.
    pub row: usize,
    /// Its frame's index as the source numbered it.
    pub index: u64,
    /// The CPU thread it ran on; `None` for a GPU pass.
    pub thread: Option<String>,
    /// Nesting depth on its thread (a pass: among its queue's passes).
    pub depth: u32,
    /// Start, ns from its frame's CPU begin (a pass: its nominal start).
    pub start_ns: i64,
    /// Duration, ns.
    pub dur_ns: u64,
}

/// The longest runs of one name, and how many it has in all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instances {
    /// Its runs in the capture (its calls, summed over frames).
    pub total: u64,
    /// The longest runs, longest first (then by row, then by start); at most the limit.
    pub longest: Vec<Instance>,
    /// Frames whose spans were read to find them.
    pub frames_read: usize,
    /// Whether `longest` is certain to be the longest runs of the whole capture; `false`
    /// when the frame budget ran out first (they are then the longest runs in the frames
    /// with the largest totals), or when its spans were not recorded.
    pub complete: bool,
    /// `false` when a frame read ran it (by that frame's totals) but holds none of its
    /// spans: its totals were recorded without its spans (a `.litecap`'s phases), so its
    /// single runs are not known; the search stops there, `complete` is false, `reason`
    /// says why, and `longest` holds only the runs of the frames read before it.
    #[serde(default = "recorded")]
    pub spans_recorded: bool,
    /// Why the runs are not known, when `spans_recorded` is false; else `None`.
    #[serde(default)]
    pub reason: Option<String>,
}

fn recorded() -> bool {
    true
}

fn as_i64(d: i128) -> i64 {
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// `kind` `name`'s `limit` longest runs (a scope's call sites merged), reading at most
/// `max_frames` frames' spans from `source`; `Ok(None)` for a name the capture has no scope
/// or pass of (a counter or a mark has no runs).
pub fn longest_instances(
    capture: &Capture,
    source: &FrameSource,
    kind: MatchKind,
    name: &str,
    limit: usize,
    max_frames: usize,
) -> Result<Option<Instances>, FrameReadError> {
    let (ids, aggs): (Vec<u32>, &PerFrame<Agg>) = match kind {
        MatchKind::Scope => (
            ids_named(capture.scopes().iter().map(|s| s.name.as_str()), name),
            capture.scope_aggs(),
        ),
        MatchKind::Pass => (
            ids_named(capture.passes().iter().map(|p| p.name.as_str()), name),
            capture.pass_aggs(),
        ),
        MatchKind::Counter | MatchKind::Mark => return Ok(None),
    };
    if ids.is_empty() {
        return Ok(None);
    }
    // Per frame where it ran: the bound on any one run (the largest total of one of its
    // ids: a run lies inside its id's inclusive total), and its calls.
    let mut total = 0u64;
    let mut frames: Vec<(u64, usize, u64)> = Vec::new();
    for row in 0..capture.frame_count() {
        let (mut bound, mut calls) = (0u64, 0u64);
        for a in aggs.frame(row).iter().filter(|a| ids.contains(&a.id)) {
            bound = bound.max(a.total_ns);
            calls += u64::from(a.calls);
        }
        if calls > 0 {
            total += calls;
            frames.push((bound, row, calls));
        }
    }
    frames.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let order = |a: &Instance, b: &Instance| {
        b.dur_ns
            .cmp(&a.dur_ns)
            .then(a.row.cmp(&b.row))
            .then(a.start_ns.cmp(&b.start_ns))
    };
    let mut longest: Vec<Instance> = Vec::new();
    let mut frames_read = 0;
    let mut complete = true;
    let mut reason = None;
    for &(bound, row, calls) in &frames {
        if limit == 0 || (longest.len() == limit && longest[limit - 1].dur_ns > bound) {
            break;
        }
        if frames_read == max_frames {
            complete = false;
            break;
        }
        frames_read += 1;
        let spans = source.frame_spans(capture, row)?;
        let Some(frame) = capture.frames().row(row) else {
            continue;
        };
        let run = |thread: Option<String>, depth: u32, start_ns: u64, end_ns: u64| Instance {
            row,
            index: frame.index,
            thread,
            depth,
            start_ns: as_i64(i128::from(start_ns) - i128::from(frame.cpu_begin_ns)),
            dur_ns: end_ns.saturating_sub(start_ns),
        };
        let runs: Vec<Instance> = match kind {
            MatchKind::Scope => spans
                .cpu
                .iter()
                .filter(|s| ids.contains(&s.scope))
                .map(|s| {
                    let thread = capture.threads().get(s.thread as usize).cloned();
                    run(thread, s.depth, s.start_ns, s.end_ns)
                })
                .collect(),
            _ => spans
                .gpu
                .iter()
                .filter(|g| ids.contains(&g.pass))
                .map(|g| run(None, g.depth, g.nominal_start_ns, g.nominal_end_ns))
                .collect(),
        };
        if runs.is_empty() {
            // The frame's totals say it ran here; its spans say nothing: they were not
            // recorded, and no list of runs would be the longest.
            complete = false;
            reason = Some(format!(
                "{name} ran {calls} time{} in row {row} (frame {}) by that frame's totals, but none of its spans were recorded there (the capture holds its per-frame totals only): its single runs are not known",
                if calls == 1 { "" } else { "s" },
                frame.index
            ));
            break;
        }
        longest.extend(runs);
        longest.sort_by(order);
        longest.truncate(limit);
    }
    Ok(Some(Instances {
        total,
        longest,
        frames_read,
        complete,
        spans_recorded: reason.is_none(),
        reason,
    }))
}
