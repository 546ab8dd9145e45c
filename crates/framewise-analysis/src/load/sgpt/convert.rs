//! Decoded frames turned into builder input, one at a time, reusing every allocation.

use std::collections::HashMap;

use framewise_format::derived::{GpuTimes, PassTime};
use framewise_format::model::{Frame, MarkKind, SymId};

use crate::build::{
    CaptureBuilder, Folder, FrameInput, GpuPassInput, LaneInput, MarkInput, SpanInput,
};
use crate::model::UserMark;

use super::names::Names;

/// Counters of the GPU conversion, reported once at the end.
#[derive(Default)]
pub(super) struct GpuTally {
    pub(super) no_period: u64,
    pub(super) reversed: u64,
}

/// Turns decoded frames into builder input, reusing every allocation across frames.
pub(super) struct Converter {
    /// The frame handed to the builder: everything but the CPU instances, which are
    /// folded into `scopes` as they are read (and copied into `input.lanes` only when
    /// spans are kept).
    pub(super) input: FrameInput,
    pub(super) scopes: Folder,
    pub(super) keep_spans: bool,
    /// Fold CPU instances as they are read (else only copy them into `input.lanes`, for
    /// the builder to fold: the general path, kept to check this one against).
    pub(super) fold: bool,
    /// Span vectors of earlier frames' lanes, for reuse.
    pub(super) spare: Vec<Vec<SpanInput>>,
    /// Places the frame's GPU passes on the CPU clock by the directory's rule.
    pub(super) gpu_times: GpuTimes,
}

impl Converter {
    pub(super) fn new(keep_spans: bool, fold: FoldPath) -> Self {
        let fold = fold == FoldPath::AsDecoded;
        Self {
            input: FrameInput::default(),
            scopes: Folder::default(),
            keep_spans: keep_spans || !fold,
            fold,
            spare: Vec::new(),
            gpu_times: GpuTimes::new(),
        }
    }

    pub(super) fn convert(
        &mut self,
        frame: &Frame,
        b: &mut CaptureBuilder,
        names: &mut Names<'_>,
        periods: &HashMap<SymId, f64>,
        tally: &mut GpuTally,
    ) {
        let f = &mut self.input;
        self.spare.extend(f.lanes.drain(..).map(|l| l.spans));
        f.clear();
        f.index = frame.index;
        f.phase = frame.phase.map(|p| names.phase(b, p));
        f.paused = frame.paused;
        f.topology = frame.topology;
        f.cpu_begin_ns = frame.cpu_begin_ns;
        f.cpu_end_ns = frame.cpu_end_ns;
        f.dropped_frames_before = frame.dropped_frames_before;
        for lane in &frame.lanes {
            let thread = names.thread(b, lane.thread);
            // Fold as the builder would (lane by lane, in pre-order), straight from the
            // decoded spans: no SpanInput is made for them.
            if self.fold {
                self.scopes.fold_lane(lane.spans.iter().map(|s| {
                    (
                        names.scope(b, s.scope),
                        s.depth,
                        s.end_ns.saturating_sub(s.start_ns),
                    )
                }));
            }
            let mut spans = self.spare.pop().unwrap_or_default();
            spans.clear();
            if self.keep_spans {
                spans.extend(lane.spans.iter().map(|s| SpanInput {
                    scope: names.scope(b, s.scope),
                    depth: s.depth,
                    start_ns: s.start_ns,
                    end_ns: s.end_ns,
                }));
            }
            f.lanes.push(LaneInput {
                thread,
                spans,
                dropped_spans: lane.dropped_spans,
            });
        }

        // GPU: per queue, the first timed pass's begin is placed at the queue's anchor.
        let times = self.gpu_times.convert(frame, |q| periods.get(&q).copied());
        for (p, &time) in frame.gpu.passes.iter().zip(times) {
            let Some(q) = frame.gpu.queues.get(p.queue_index as usize) else {
                continue;
            };
            let pass = names.pass(b, p.pass, q.queue);
            let nominal_ns = match time {
                PassTime::Timed { start_ns, end_ns } => Some((start_ns, end_ns)),
                PassTime::Reversed => {
                    tally.reversed += 1;
                    None
                }
                PassTime::NoPeriod => {
                    tally.no_period += 1;
                    None
                }
                PassTime::Untimed => None,
            };
            f.gpu.push(GpuPassInput {
                pass,
                depth: p.depth,
                nominal_ns,
            });
        }
        f.gpu_results_missing = frame.gpu.results_missing;

        for c in &frame.counters {
            let id = names.counter(b, c.counter);
            f.counters.push((id, c.value));
        }
        for m in &frame.marks {
            let name = names.mark(b, m.name);
            let thread = Some(names.thread(b, m.thread));
            f.marks.push(MarkInput {
                name,
                thread,
                at_ns: m.at_ns,
                user: match &m.kind {
                    MarkKind::User { window_ns, note } => Some(UserMark {
                        window_ns: *window_ns,
                        note: note.clone(),
                    }),
                    MarkKind::Instant => None,
                },
            });
        }
    }
}

/// How CPU instances reach the builder's aggregates.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum FoldPath {
    /// Folded as each frame is decoded, straight from the decoded spans (what loads do).
    AsDecoded,
    /// Copied into the frame's lanes and folded by [`CaptureBuilder::push_frame`], as
    /// every other loader's are, and (in tests) by the stack fold alone: the reference
    /// the first is tested against.
    #[cfg_attr(not(test), expect(dead_code, reason = "the reference path, for tests"))]
    ByBuilder,
    /// Nothing folded: only the spans are copied into the frame's lanes (a frame re-read
    /// for its spans, whose aggregates the load already has).
    SpansOnly,
}
