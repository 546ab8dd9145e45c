//! The frame span when `--frame-span` names none and the trace has no frame track of its
//! own: the top-level span whose back-to-back occurrences cover the largest share of their
//! thread's timeline, ties within [`TIE_POINTS`] percentage points won by a span named like
//! a frame, with the note that says so.

use std::collections::HashMap;

use super::parse::{RawSpan, Strings};
use super::TIE_POINTS;

/// The frame span [`pick_frame_span`] chose and why.
pub(super) struct Pick {
    pub(super) thread: u32,
    pub(super) name: u32,
    pub(super) note: String,
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
pub(super) fn pick_frame_span(
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
