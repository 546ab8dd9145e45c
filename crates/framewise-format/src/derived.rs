//! The frame quantities a capture derives from its frame records — a frame's period and
//! its GPU duration — each computed by exactly one function here.
//!
//! The writer fills the directory with them (`DIRE`, FORMAT.md §11), the reader's scan
//! recomputes periods with them (§13.3), and `framewise-analysis` builds its frame table
//! with them, so a frame's period or GPU time never depends on which path read it. Change
//! a rule here and in FORMAT.md §11 together; never write a second copy.

use crate::model::{Frame, FrameEntry, SymId};

/// What the period rule reads of a frame record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FrameClock {
    /// The frame's index.
    pub index: u64,
    /// Its begin, ns on the session CPU clock.
    pub cpu_begin_ns: u64,
    /// Whole frames the writer dropped immediately before it.
    pub dropped_frames_before: u64,
}

impl FrameClock {
    /// The clock fields of a frame record.
    pub fn of(frame: &Frame) -> Self {
        Self {
            index: frame.index,
            cpu_begin_ns: frame.cpu_begin_ns,
            dropped_frames_before: frame.dropped_frames_before,
        }
    }
}

/// A frame's period, ns: from its begin to the next frame record's begin.
///
/// `None` — the period was not measured — when there is no next record, when the next
/// record's index is not this one's plus 1 or it says frames were dropped before it (the
/// frames in between are gone), or when the next record begins *before* this one (the
/// clock went backwards: the difference measures nothing, so it is neither 0 nor a
/// wrapped value). Equal begins give a period of 0.
pub fn period_ns(frame: FrameClock, next: Option<FrameClock>) -> Option<u64> {
    let next = next?;
    if Some(next.index) != frame.index.checked_add(1) || next.dropped_frames_before > 0 {
        return None;
    }
    next.cpu_begin_ns.checked_sub(frame.cpu_begin_ns)
}

/// Sets every entry's `period_ns` by [`period_ns`] from the entry after it, for entries
/// listed in record order. `dropped_before[i]` is entry `i`'s `dropped_frames_before`
/// (0 where missing).
pub fn fill_periods(entries: &mut [FrameEntry], dropped_before: &[u64]) {
    let clock = |entries: &[FrameEntry], i: usize| {
        entries.get(i).map(|e| FrameClock {
            index: e.index,
            cpu_begin_ns: e.cpu_begin_ns,
            dropped_frames_before: dropped_before.get(i).copied().unwrap_or(0),
        })
    };
    for i in 0..entries.len() {
        let (Some(this), next) = (clock(entries, i), clock(entries, i + 1)) else {
            continue;
        };
        if let Some(e) = entries.get_mut(i) {
            e.period_ns = period_ns(this, next);
        }
    }
}

/// A GPU queue's declared `timestamp_period_ns` as a usable ns-per-tick factor: `None`
/// unless it is finite and positive (a period of 0, negative or NaN declares nothing).
pub fn declared_period(timestamp_period_ns: f64) -> Option<f64> {
    (timestamp_period_ns.is_finite() && timestamp_period_ns > 0.0).then_some(timestamp_period_ns)
}

/// `ticks × period_ns`, rounded to the nearest ns (see [`round_ns`]).
pub fn ticks_to_ns(ticks: u64, period_ns: f64) -> u64 {
    round_ns(ticks as f64 * period_ns)
}

/// `x` rounded to the nearest integer, halves away from zero, as `u64` (negative and NaN
/// give 0, too large gives `u64::MAX`): `x.round() as u64`, faster.
pub fn round_ns(x: f64) -> u64 {
    const EXACT: f64 = 4_503_599_627_370_496.0; // 2^52
    if (0.0..EXACT).contains(&x) {
        // Through i64: in this range one conversion instruction each way.
        let whole = x as i64;
        (whole + i64::from(x - whole as f64 >= 0.5)) as u64
    } else {
        x.round() as u64
    }
}

/// A GPU pass's place on the CPU clock, or why it has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassTime {
    /// No timing was recorded (or the pass names no queue of the frame).
    Untimed,
    /// Timed, but its queue declares no usable period: its ns are unknown.
    NoPeriod,
    /// Timed with `end_ticks < begin_ticks`: a driver fault, left untimed.
    Reversed,
    /// Start and end, ns on the CPU clock: the queue's anchor plus the ticks since the
    /// queue's earliest timed begin in the frame, each converted by [`ticks_to_ns`].
    Timed {
        /// Start, ns.
        start_ns: u64,
        /// End, ns (≥ start).
        end_ns: u64,
    },
}

/// Per GPU queue, the span from the earliest start to the latest end of its timed passes;
/// the frame's GPU duration is the longest queue's span.
#[derive(Clone, Debug, Default)]
pub struct QueueSpans<Q> {
    spans: Vec<(Q, u64, u64)>,
}

impl<Q: PartialEq> QueueSpans<Q> {
    /// Empty.
    pub fn new() -> Self {
        Self { spans: Vec::new() }
    }

    /// Forgets every span, keeping the allocation.
    pub fn clear(&mut self) {
        self.spans.clear();
    }

    /// Adds one timed pass of `queue` (`end_ns` below `start_ns` counts as `start_ns`).
    pub fn add(&mut self, queue: Q, start_ns: u64, end_ns: u64) {
        let end_ns = end_ns.max(start_ns);
        match self.spans.iter_mut().find(|(q, _, _)| *q == queue) {
            Some((_, lo, hi)) => {
                *lo = (*lo).min(start_ns);
                *hi = (*hi).max(end_ns);
            }
            None => self.spans.push((queue, start_ns, end_ns)),
        }
    }

    /// The frame's GPU duration, ns: the longest queue's span; `None` with no timed pass.
    pub fn longest_ns(&self) -> Option<u64> {
        self.spans.iter().map(|&(_, lo, hi)| hi - lo).max()
    }
}

/// Converts a frame's GPU pass timings from ticks to ns, reusing its buffers from frame to
/// frame.
#[derive(Clone, Debug, Default)]
pub struct GpuTimes {
    base_ticks: Vec<Option<u64>>,
    periods: Vec<Option<f64>>,
    times: Vec<PassTime>,
    spans: QueueSpans<SymId>,
}

impl GpuTimes {
    /// Ready to convert.
    pub fn new() -> Self {
        Self::default()
    }

    /// One [`PassTime`] per pass of `frame.gpu.passes`, in the same order. `period_of`
    /// gives a queue's ns per tick (see [`declared_period`]).
    pub fn convert(
        &mut self,
        frame: &Frame,
        period_of: impl Fn(SymId) -> Option<f64>,
    ) -> &[PassTime] {
        let queues = &frame.gpu.queues;
        self.periods.clear();
        self.periods.extend(
            queues
                .iter()
                .map(|q| period_of(q.queue).and_then(declared_period)),
        );
        self.base_ticks.clear();
        self.base_ticks.resize(queues.len(), None);
        let usable = |at: usize, begin: u64, end: u64, periods: &[Option<f64>]| {
            end >= begin && periods.get(at).copied().flatten().is_some()
        };
        for p in &frame.gpu.passes {
            let at = p.queue_index as usize;
            if let Some(t) = p.timing {
                if usable(at, t.begin_ticks, t.end_ticks, &self.periods) {
                    if let Some(base) = self.base_ticks.get_mut(at) {
                        *base = Some(base.map_or(t.begin_ticks, |b| b.min(t.begin_ticks)));
                    }
                }
            }
        }
        self.times.clear();
        for p in &frame.gpu.passes {
            let at = p.queue_index as usize;
            let time = match (p.timing, queues.get(at)) {
                (Some(t), Some(q)) => match self.periods.get(at).copied().flatten() {
                    None => PassTime::NoPeriod,
                    Some(_) if t.end_ticks < t.begin_ticks => PassTime::Reversed,
                    Some(period) => {
                        let base = self
                            .base_ticks
                            .get(at)
                            .copied()
                            .flatten()
                            .unwrap_or(t.begin_ticks);
                        let anchor = q.anchor.cpu_submit_ns.unwrap_or(frame.cpu_end_ns);
                        PassTime::Timed {
                            start_ns: anchor
                                .saturating_add(ticks_to_ns(t.begin_ticks - base, period)),
                            end_ns: anchor.saturating_add(ticks_to_ns(t.end_ticks - base, period)),
                        }
                    }
                },
                _ => PassTime::Untimed,
            };
            self.times.push(time);
        }
        &self.times
    }

    /// The frame's GPU duration, ns: for each queue, its earliest timed start to its latest
    /// timed end (passes as [`Self::convert`] places them); the longest queue wins. `None`
    /// when no pass has a usable timing.
    pub fn frame_gpu_ns(
        &mut self,
        frame: &Frame,
        period_of: impl Fn(SymId) -> Option<f64>,
    ) -> Option<u64> {
        self.convert(frame, period_of);
        self.spans.clear();
        for (p, time) in frame.gpu.passes.iter().zip(&self.times) {
            if let (PassTime::Timed { start_ns, end_ns }, Some(q)) =
                (*time, frame.gpu.queues.get(p.queue_index as usize))
            {
                self.spans.add(q.queue, start_ns, end_ns);
            }
        }
        self.spans.longest_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GpuAnchor, GpuPass, GpuQueueFrame, GpuTiming};

    fn clock(index: u64, cpu_begin_ns: u64, dropped_frames_before: u64) -> FrameClock {
        FrameClock {
            index,
            cpu_begin_ns,
            dropped_frames_before,
        }
    }

    #[test]
    fn a_period_runs_to_the_next_records_begin() {
        assert_eq!(
            period_ns(clock(4, 100, 0), Some(clock(5, 116, 0))),
            Some(16)
        );
        assert_eq!(period_ns(clock(4, 100, 0), Some(clock(5, 100, 0))), Some(0));
        assert_eq!(period_ns(clock(4, 100, 0), None), None, "the last frame");
    }

    #[test]
    fn a_frame_whose_next_begins_earlier_has_no_period() {
        assert_eq!(period_ns(clock(4, 100, 0), Some(clock(5, 99, 0))), None);
        assert_eq!(period_ns(clock(4, u64::MAX, 0), Some(clock(5, 0, 0))), None);
    }

    #[test]
    fn a_period_across_missing_or_dropped_frames_is_unknown() {
        assert_eq!(period_ns(clock(4, 100, 0), Some(clock(6, 132, 0))), None);
        assert_eq!(period_ns(clock(4, 100, 0), Some(clock(5, 132, 1))), None);
        assert_eq!(period_ns(clock(4, 100, 0), Some(clock(3, 132, 0))), None);
        assert_eq!(
            period_ns(clock(u64::MAX, 100, 0), Some(clock(0, 132, 0))),
            None
        );
    }

    #[test]
    fn fill_periods_applies_the_rule_entry_by_entry() {
        let mut entries: Vec<FrameEntry> =
            [(0u64, 0u64), (1, 10), (2, 5), (3, 15), (5, 40), (6, 50)]
                .iter()
                .map(|&(index, cpu_begin_ns)| FrameEntry {
                    index,
                    cpu_begin_ns,
                    period_ns: Some(999),
                    ..FrameEntry::default()
                })
                .collect();
        fill_periods(&mut entries, &[0, 0, 0, 0, 1, 2]);
        let periods: Vec<_> = entries.iter().map(|e| e.period_ns).collect();
        assert_eq!(periods, [Some(10), None, Some(10), None, None, None]);
    }

    fn frame(passes: &[(u32, u64, u64)]) -> Frame {
        let mut f = Frame {
            cpu_begin_ns: 1_000,
            cpu_end_ns: 2_000,
            ..Frame::default()
        };
        f.gpu.queues = vec![
            GpuQueueFrame {
                queue: 10,
                anchor: GpuAnchor {
                    cpu_submit_ns: Some(1_500),
                    cpu_readback_ns: None,
                },
            },
            GpuQueueFrame {
                queue: 11,
                anchor: GpuAnchor::default(),
            },
        ];
        f.gpu.passes = passes
            .iter()
            .map(|&(queue_index, begin_ticks, end_ticks)| GpuPass {
                pass: 20,
                queue_index,
                depth: 0,
                timing: Some(GpuTiming {
                    begin_ticks,
                    end_ticks,
                }),
            })
            .collect();
        f
    }

    #[test]
    fn gpu_duration_is_the_span_converted_once_not_a_sum_of_rounded_passes() {
        // Period 1.5: passes of 1 tick each round to 2 ns, but the 2-tick span is 3 ns.
        let f = frame(&[(0, 100, 101), (0, 101, 102)]);
        let mut g = GpuTimes::new();
        assert_eq!(g.frame_gpu_ns(&f, |_| Some(1.5)), Some(3));
        assert_eq!(
            g.convert(&f, |_| Some(1.5)),
            [
                PassTime::Timed {
                    start_ns: 1_500,
                    end_ns: 1_502
                },
                PassTime::Timed {
                    start_ns: 1_502,
                    end_ns: 1_503
                },
            ]
        );
    }

    #[test]
    fn gpu_duration_ignores_reversed_passes_and_undeclared_periods() {
        let mut g = GpuTimes::new();
        // A reversed pass neither widens the span nor moves the queue's base.
        let f = frame(&[(0, 50, 10), (0, 100, 110)]);
        assert_eq!(g.frame_gpu_ns(&f, |_| Some(1.0)), Some(10));
        assert_eq!(g.convert(&f, |_| Some(1.0))[0], PassTime::Reversed);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(g.frame_gpu_ns(&f, |_| Some(bad)), None, "{bad}");
            assert_eq!(g.convert(&f, |_| Some(bad))[1], PassTime::NoPeriod);
        }
        assert_eq!(g.frame_gpu_ns(&f, |_| None), None);
    }

    #[test]
    fn gpu_duration_is_the_longest_queue() {
        let f = frame(&[(0, 0, 10), (1, 1_000, 1_040), (0, 20, 30), (2, 0, 99_999)]);
        let mut g = GpuTimes::new();
        assert_eq!(g.frame_gpu_ns(&f, |_| Some(1.0)), Some(40));
        assert_eq!(
            g.convert(&f, |_| Some(1.0))[3],
            PassTime::Untimed,
            "no queue 2"
        );
        // Queue 11 has no submit anchor: its passes sit at the frame's CPU end.
        assert_eq!(
            g.convert(&f, |_| Some(1.0))[1],
            PassTime::Timed {
                start_ns: 2_000,
                end_ns: 2_040
            }
        );
    }

    #[test]
    fn rounding_is_rounds() {
        let edges = [
            0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            1e15 + 0.5,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9.1e18,
            1.9e19,
            -0.5,
            -3.0,
            f64::NAN,
            f64::INFINITY,
        ];
        // splitmix64: a mantissa and an exponent per draw.
        let mut state = 99u64;
        let mut draw = move || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let random = (0..100_000).map(|_| {
            let exp = (draw() % 70) as i32 - 10;
            (draw() >> 11) as f64 / (1u64 << 53) as f64 * 2f64.powi(exp)
        });
        for x in edges.into_iter().chain(random) {
            assert_eq!(round_ns(x), x.round() as u64, "{x}");
        }
    }
}
