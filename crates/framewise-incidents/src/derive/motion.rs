//! `jitter` records: the session's motion tracks (declared in META, recorded as `motion.*`
//! counters) fed frame by frame to `framewise-detect`'s motion monitor through its
//! [`MotionFeed`], the mapping a capture read back by the analysis goes through too.

use std::collections::VecDeque;

use framewise_detect::motion::names::is_motion_counter;
use framewise_detect::motion::{FrameMotion, JitterEvent, MotionFeed};
use framewise_format::model::{Frame, SymId, SymbolTable};

/// Frame starts kept to date a record (`at` is its jump frame's start): a record leaves the
/// monitor at most a burst's age and a rate-limit window after its frame, seconds at most.
const BEGINS_KEPT_NS: u64 = 60_000_000_000;
/// …and never more than this many frames.
const BEGINS_KEPT_MAX: usize = 1 << 16;

/// The motion monitor of one session and what dating its records needs.
#[derive(Debug)]
pub(super) struct Jitter {
    feed: MotionFeed,
    /// (frame index, frame start ns), oldest first.
    begins: VecDeque<(u64, u64)>,
    /// The frame's motion counters (reused buffer).
    values: Vec<(SymId, i64)>,
    /// Records written.
    pub(super) written: u64,
}

impl Jitter {
    /// The monitor of the tracks `settings` declare; `None` when they declare none, or their
    /// declarations do not parse (as the analysis reads them: no jitter records).
    pub(super) fn new(settings: &[(String, String)], situation: &str) -> Option<Self> {
        let feed = MotionFeed::from_settings(settings, situation).ok()??;
        Some(Self {
            feed,
            begins: VecDeque::new(),
            values: Vec::new(),
            written: 0,
        })
    }

    /// Feeds `frame`; the events the monitor decided go onto `out`.
    pub(super) fn observe(
        &mut self,
        frame: &Frame,
        symbols: &SymbolTable,
        out: &mut Vec<JitterEvent>,
    ) {
        self.begins.push_back((frame.index, frame.cpu_begin_ns));
        let oldest_ns = frame.cpu_begin_ns.saturating_sub(BEGINS_KEPT_NS);
        while self.begins.len() > BEGINS_KEPT_MAX
            || self.begins.front().is_some_and(|&(_, b)| b < oldest_ns)
        {
            self.begins.pop_front();
        }
        self.values.clear();
        self.values.extend(
            frame
                .counters
                .iter()
                .filter(|c| symbols.name(c.counter).is_some_and(is_motion_counter))
                .map(|c| (c.counter, c.value)),
        );
        let motion = FrameMotion {
            index: frame.index,
            begin_ns: frame.cpu_begin_ns,
            paused: frame.paused,
            phase: frame.phase.and_then(|p| symbols.name(p)),
        };
        let values = &self.values;
        let value = |name: &str| {
            values
                .iter()
                .find(|&&(id, _)| symbols.name(id) == Some(name))
                .map(|&(_, v)| v as f64)
        };
        self.feed.frame(&motion, value, out);
    }

    /// The session ended: the records still open go onto `out`.
    pub(super) fn finish(&mut self, out: &mut Vec<JitterEvent>) {
        self.feed.finish(out);
    }

    /// The start of frame `index`, ns, when it is remembered.
    pub(super) fn begin_ns(&self, index: u64) -> Option<u64> {
        let at = self.begins.binary_search_by_key(&index, |&(i, _)| i).ok()?;
        self.begins.get(at).map(|&(_, b)| b)
    }

    /// Bursts the monitor's rate limits dropped.
    pub(super) fn dropped(&self) -> u64 {
        self.feed.dropped()
    }
}
