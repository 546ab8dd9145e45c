//! Building: rows → frames → capture. The clock origin applied, `B`/`E` events matched into
//! spans, the frames chosen (the span `--frame-span` names, else the trace's own frame track,
//! else the span [`pick_frame_span`] picks), every span, mark and counter sample assigned to
//! the frame it starts in, and the tolerated oddities (unclosed `B`, `E` without `B`, `B`/`E`
//! events out of order, spans overlapping their parent, unknown phases) reported as defects
//! and notes.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use crate::build::{
    float_raw, CaptureBuilder, FrameInput, LaneInput, LoadOptions, MarkInput, SpanInput,
};
use crate::load::{Progress, Reporter, Stage};
use crate::model::{Capture, CounterKind, Defect, DefectKind, Numeric, ScopeId, SourceKind};

use super::frame_span::pick_frame_span;
use super::parse::{ArrayEnd, Parsed, RawSpan, ReadBeginEnd};
use super::ChromeError;

pub(super) fn build(
    mut parsed: Parsed,
    end: ArrayEnd,
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Capture, ChromeError> {
    let mut defects: Vec<Defect> = std::mem::take(&mut parsed.carried);
    // Frames the exported capture had lost already (dropped, or lost to its damage): the
    // gaps they leave in the frame track are said by those defects, not counted again.
    let lost_before_export = defects.iter().any(|d| crate::diff::loses_frames(d.kind));
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

    if let Some(offset) = parsed.trailing_at {
        // Not the trace's: but what it is (another trace appended, an older file's tail) is
        // unknown, and events in it would be lost, so it counts as damage.
        defects.push(
            Defect::new(
                DefectKind::CorruptRange,
                1,
                format!(
                    "the file goes on after the trace ends: the bytes from byte {offset} are not part of it and were not read (another trace appended, or an older file's tail?)"
                ),
            )
            .at(offset),
        );
    }

    // The clock origin: the earliest timestamp of any timed event.
    let origin_us = parsed.origin_us;
    let to_ns = |us: f64| -> Option<u64> {
        let ns = ((us - origin_us) * 1000.0).round();
        (0.0..1.8e19).contains(&ns).then_some(ns as u64)
    };
    let mut untimed = parsed.untimed;
    // `X` and `B` events that could not be placed in time, by name: a frame span among them
    // is a frame lost.
    let mut unplaced: HashMap<u32, u64> = std::mem::take(&mut parsed.untimed_spans);

    // X spans onto the clock, in place (the same size, so the allocation is reused).
    let read = parsed.spans.len();
    let mut spans: Vec<RawSpan> = std::mem::take(&mut parsed.spans)
        .into_iter()
        .filter_map(|r| {
            let Some(start_ns) = to_ns(r.ts_us) else {
                *unplaced.entry(r.name).or_insert(0) += 1;
                return None;
            };
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
    let frame_track: Vec<(u64, u64, bool, Option<u64>)> = parsed
        .frame_track
        .iter()
        .filter_map(|&(ts, dur, paused, index)| {
            let begin = to_ns(ts)?;
            Some((
                begin,
                begin.saturating_add((dur * 1000.0).round() as u64),
                paused,
                Some(index),
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
    // Samples whose value is no finite number (`"inf"`, `"-inf"`, `"NaN"`: strings `args`
    // may hold, which read as numbers), and the counters they were of.
    let mut non_finite = 0u64;
    let mut non_finite_counters: Vec<String> = Vec::new();
    for (name, mut list) in std::mem::take(&mut parsed.samples) {
        let read = list.len();
        list.retain(|&(_, v)| v.is_finite());
        if list.len() < read {
            non_finite += (read - list.len()) as u64;
            non_finite_counters.push(name.clone());
        }
        let timed: Vec<(u64, f64)> = list
            .iter()
            .filter_map(|&(ts, v)| Some((to_ns(ts)?, v)))
            .collect();
        untimed += (list.len() - timed.len()) as u64;
        if !timed.is_empty() {
            samples.insert(name, timed);
        }
    }
    if non_finite > 0 {
        let mut names: Vec<String> = non_finite_counters
            .iter()
            .take(3)
            .map(|n| format!("`{n}`"))
            .collect();
        if non_finite_counters.len() > 3 {
            names.push(format!("{} more", non_finite_counters.len() - 3));
        }
        defects.push(Defect::new(
            DefectKind::Importer,
            non_finite,
            format!(
                "{non_finite} counter samples were not finite numbers (inf or NaN) in {}: no measurement, so they were ignored (each frame takes its last finite sample)",
                names.join(", ")
            ),
        ));
    }

    // Match B/E per thread, in timestamp order (stable, so file order breaks ties).
    let mut out_of_order = 0u64;
    // (thread, begin, name) of each `B` never closed.
    let mut unclosed: Vec<(u32, u64, u32)> = Vec::new();
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
                None => {
                    untimed += 1;
                    if e.begin {
                        *unplaced.entry(e.name).or_insert(0) += 1;
                    }
                }
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
        unclosed.extend(stack.iter().map(|(ts, b)| (thread, *ts, b.name)));
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
            .map(|&(_, _, n)| parsed.strings.get(n))
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
        // A span without a length is a span lost: the scope statistics of the frames it was
        // in are low, as when a recorder drops spans, so a gate on them is incomplete.
        defects.push(Defect::new(
            DefectKind::DroppedSpans,
            parsed.no_dur,
            format!(
                "{} X events had no valid dur; ignored, so their spans are lost",
                parsed.no_dur
            ),
        ));
    }
    if untimed > 0 {
        defects.push(Defect::new(
            DefectKind::Importer,
            untimed,
            format!("{untimed} events had no numeric ts, or one too far from the others to place; ignored"),
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

    // Each thread's label, `PROCESS/THREAD`; the capture keeps threads apart by label, so
    // threads a label would merge (two tids of one process with one name, or two processes
    // of one name) are told apart by their tid, then by their pid too.
    let labels = thread_labels(&parsed);
    let thread_label = |t: u32| -> String { labels.get(t as usize).cloned().unwrap_or_default() };

    // The frame span.
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
    // A frame-track frame keeps its index (so a period across a gap is unknown, as in the
    // capture); a frame span is numbered by its place.
    let mut frame_spans: Vec<(u64, u64, bool, Option<u64>)> = match frame_span {
        None => frame_track,
        Some((thread, name)) => spans
            .iter()
            .filter(|s| s.thread == thread && s.name == name)
            .map(|s| (s.start_ns, s.end_ns, false, None))
            .collect(),
    };
    frame_spans.sort_unstable();
    frame_spans.dedup_by_key(|f| f.0);
    // The span that marks frames is the frame, not one of its scopes (a scope as long as the
    // frame would account for all of every hitch's excess, and hide what ran inside it, as
    // a frame track's frames are no scopes either): it leaves the spans, and what ran inside
    // it moves up a level.
    if let Some((thread, name)) = frame_span {
        let mut open: Vec<u64> = Vec::new();
        spans.retain_mut(|s| {
            if s.thread != thread {
                return true;
            }
            while open.last().is_some_and(|&end| s.start_ns >= end) {
                open.pop();
            }
            if s.name == name {
                open.push(s.end_ns);
                return false;
            }
            s.depth = s
                .depth
                .saturating_sub(u32::try_from(open.len()).unwrap_or(u32::MAX));
            true
        });
    }
    if !lost_before_export {
        if let Some(d) = frame_track_gaps(&frame_spans) {
            defects.push(d);
        }
    }
    if let Some((thread, name)) = frame_span {
        if let Some(d) = frame_spans_lost(
            &frame_spans,
            (thread, name),
            &unplaced,
            &parsed.no_dur_spans,
            &unclosed,
        ) {
            defects.push(Defect {
                message: format!(
                    "{} (`{}` on {})",
                    d.message,
                    parsed.strings.get(name),
                    thread_label(thread)
                ),
                ..d
            });
        }
    }
    let begins: Vec<u64> = frame_spans.iter().map(|f| f.0).collect();
    let frame_of =
        |at: u64| -> Option<usize> { begins.partition_point(|&b| b <= at).checked_sub(1) };

    // Build.
    let mut b = CaptureBuilder::from_options(SourceKind::Chrome, options);
    if let Some(adapter) = parsed.declared_adapter {
        b.meta_mut().adapter = adapter;
    }
    match &parsed.declared_budget {
        Some(Ok(ns)) => b.meta_mut().frame_budget_ns = Some(*ns),
        // A budget of 0 (or not a number) would make every frame jank, or none: the default
        // is kept, and the note says so.
        Some(Err(written)) => notes.push(format!(
            "otherData.frame_budget_ns {written} is not a frame budget (a whole number of nanoseconds above 0); ignored"
        )),
        None => {}
    }
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
    let mut undeclared = 0usize;
    for (name, list) in samples.iter_mut() {
        list.sort_by_key(|&(ts, _)| ts);
        let integral = list
            .iter()
            .all(|&(_, v)| v.fract() == 0.0 && v.abs() < 9.0e15);
        // A framewise trace declares each counter's kind and representation; a declared
        // integer counter whose samples are not whole numbers is read as floats.
        let declared = parsed.declared_counters.get(name.as_str()).copied();
        let kind = declared.map_or(CounterKind::Gauge, |(kind, _)| kind);
        if declared.is_none() {
            undeclared += 1;
        }
        let integral = integral && declared.is_none_or(|(_, n)| n == Numeric::Integer);
        let numeric = if integral {
            Numeric::Integer
        } else {
            Numeric::Float
        };
        let id = b.counter(name, kind, numeric);
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
    if undeclared > 0 {
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
    for (i, &(begin, end, paused, index)) in frame_spans.iter().enumerate() {
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
        f.index = index.unwrap_or(i as u64);
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

/// Frame spans the import lost, as a `dropped-frames` defect: events of the frame span's
/// name that could not be placed in time (any thread), `X` events of it on its thread without
/// a valid `dur`, and `B` events of it on its thread never closed that began before the last
/// frame (one never closed after the last frame began is the frame in flight when the trace
/// ended, not one lost between two others). Each lost frame span merges its frame into the
/// one before: a period twice as long that never happened.
fn frame_spans_lost(
    frames: &[(u64, u64, bool, Option<u64>)],
    (thread, name): (u32, u32),
    unplaced: &HashMap<u32, u64>,
    no_dur: &HashMap<(u32, u32), u64>,
    unclosed: &[(u32, u64, u32)],
) -> Option<Defect> {
    let last_begin = frames.last().map_or(0, |f| f.0);
    let unplaced = unplaced.get(&name).copied().unwrap_or(0);
    let no_dur = no_dur.get(&(thread, name)).copied().unwrap_or(0);
    let never_closed = unclosed
        .iter()
        .filter(|&&(t, begin, n)| t == thread && n == name && begin < last_begin)
        .count() as u64;
    let lost = unplaced.saturating_add(no_dur).saturating_add(never_closed);
    (lost > 0).then(|| {
        let mut why = Vec::new();
        if never_closed > 0 {
            why.push(format!("{never_closed} never closed"));
        }
        if no_dur > 0 {
            why.push(format!("{no_dur} without a valid dur"));
        }
        if unplaced > 0 {
            why.push(format!("{unplaced} without a usable ts"));
        }
        Defect::new(
            DefectKind::DroppedFrames,
            lost,
            format!(
                "{lost} frame span(s) lost on import ({}): the frames around them are merged, their periods unknown",
                why.join(", ")
            ),
        )
    })
}

/// The frames a frame track skips: indices missing between two frames in time order, as a
/// `dropped-frames` defect (a trace that lost frames is damaged, as its capture would be),
/// or `None` when the indices run on without a gap.
/// Every thread's label, by thread: `PROCESS/THREAD` (`pid P/THREAD` for a process with no
/// name, `tid T` for a thread with none). A label two threads would share gets the thread's
/// tid, `PROCESS/THREAD (tid T)`, and one still shared (two processes of one name, each
/// with that tid) its pid as well, `PROCESS/THREAD (pid P, tid T)`: the capture keeps
/// threads apart by label, and two threads merged would lay their spans over each other.
fn thread_labels(parsed: &Parsed) -> Vec<String> {
    let threads = parsed.thread_names.len();
    let pid = |t: usize| parsed.thread_pids.get(t).cloned().unwrap_or_default();
    let tid = |t: usize| parsed.thread_tids.get(t).cloned().unwrap_or_default();
    let plain: Vec<String> = (0..threads)
        .map(|t| {
            let thread = parsed
                .thread_names
                .get(t)
                .cloned()
                .flatten()
                .unwrap_or_else(|| format!("tid {}", tid(t)));
            match parsed.process_names.get(&pid(t)) {
                Some(p) => format!("{p}/{thread}"),
                None => format!("pid {}/{thread}", pid(t)),
            }
        })
        .collect();
    let shared = |labels: &[String]| -> Vec<bool> {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for l in labels {
            *count.entry(l.as_str()).or_insert(0) += 1;
        }
        labels
            .iter()
            .map(|l| count.get(l.as_str()).is_some_and(|&n| n > 1))
            .collect()
    };
    let with_tid: Vec<String> = plain
        .iter()
        .zip(shared(&plain))
        .enumerate()
        .map(|(t, (l, s))| {
            if s {
                format!("{l} (tid {})", tid(t))
            } else {
                l.clone()
            }
        })
        .collect();
    let still = shared(&with_tid);
    plain
        .iter()
        .zip(with_tid)
        .zip(still)
        .enumerate()
        .map(|(t, ((l, once), s))| {
            if s {
                format!("{l} (pid {}, tid {})", pid(t), tid(t))
            } else {
                once
            }
        })
        .collect()
}

fn frame_track_gaps(frames: &[(u64, u64, bool, Option<u64>)]) -> Option<Defect> {
    let mut missing = 0u64;
    let mut first: Option<u64> = None;
    for pair in frames.windows(2) {
        if let [(_, _, _, Some(a)), (_, _, _, Some(b))] = pair {
            if *b > a.saturating_add(1) {
                missing = missing.saturating_add(b - a - 1);
                first.get_or_insert(*a);
            }
        }
    }
    let after = first?;
    Some(Defect::new(
        DefectKind::DroppedFrames,
        missing,
        format!(
            "the trace's frame track skips {missing} frame indices (the first after frame {after}): those frames are not in it; the periods around them are unknown"
        ),
    ))
}
