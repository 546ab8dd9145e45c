//! Feeding the monitor from recorded frames: the one mapping from a frame's motion counters
//! (the names of [`super::names`]) to the monitor's samples, for the recorder's writer
//! thread (live `jitter` records) and for a capture read back (`framewise hitches --append`,
//! the analysis), so both give the same records for the same frames.
//!
//! Per frame: every track's declared cuts are applied before its sample; a track whose three
//! position gauges are all absent from the frame is not sampled; the sample's time is the
//! host's motion clock (`motion.clock_us`) or, without one, the frame's start; a paused
//! frame, or one the host declared held for the track, is held.

use super::names::{self, TrackNames, CLOCK_GAUGE};
use super::{JitterEvent, MotionError, MotionMonitor, MotionOptions, Sample, TrackSpec};

/// What the feed needs of a frame besides its counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameMotion<'a> {
    /// The frame's index.
    pub index: u64,
    /// Its start, ns on the session clock (the time of its samples without a motion clock).
    pub begin_ns: u64,
    /// The host declared it paused.
    pub paused: bool,
    /// The phase, stamped on the events it starts.
    pub phase: Option<&'a str>,
}

/// A motion monitor and the counter names of its tracks.
#[derive(Debug)]
pub struct MotionFeed {
    monitor: MotionMonitor,
    tracks: Vec<(String, TrackNames)>,
    situation: Option<String>,
}

impl MotionFeed {
    /// A feed of `tracks`, stamping `situation` (canonical; empty for none) on its events.
    pub fn new(
        tracks: Vec<TrackSpec>,
        options: MotionOptions,
        situation: &str,
    ) -> Result<Self, MotionError> {
        let names = tracks
            .iter()
            .map(|t| (t.name.clone(), TrackNames::of(&t.name)))
            .collect();
        Ok(Self {
            monitor: MotionMonitor::new(tracks, options)?,
            tracks: names,
            situation: (!situation.is_empty()).then(|| situation.to_owned()),
        })
    }

    /// The feed of the tracks a session's META settings declare
    /// ([`names::setup_from_settings`]); `Ok(None)` when they declare none.
    pub fn from_settings(
        settings: &[(String, String)],
        situation: &str,
    ) -> Result<Option<Self>, MotionError> {
        let (tracks, options) = names::setup_from_settings(settings)?;
        if tracks.is_empty() {
            return Ok(None);
        }
        Self::new(tracks, options, situation).map(Some)
    }

    /// Feeds one frame; `value` gives a counter's value in the frame by name (`None` when the
    /// frame does not carry it). The records the monitor decided go onto `out`, in the
    /// order it minted them.
    pub fn frame(
        &mut self,
        frame: &FrameMotion<'_>,
        value: impl Fn(&str) -> Option<f64>,
        out: &mut Vec<JitterEvent>,
    ) {
        let t_ms = match value(CLOCK_GAUGE) {
            Some(us) => us / 1000.0,
            None => frame.begin_ns as f64 / 1e6,
        };
        for (i, (name, n)) in self.tracks.iter().enumerate() {
            if value(&n.cuts).is_some_and(|c| c > 0.0) {
                self.monitor.cut(Some(name));
            }
            let axes = [0, 1, 2].map(|a| value(&n.position[a]));
            if axes.iter().all(Option::is_none) {
                continue;
            }
            let held = frame.paused || value(&n.held).is_some_and(|h| h > 0.0);
            let sample = Sample {
                position: axes.map(|v| v.unwrap_or(0.0) / names::MILLI),
                t_ms,
                frame: frame.index,
                held,
                reach: value(&n.reach).map(|v| v / names::MILLI),
                phase: frame.phase,
                situation: self.situation.as_deref(),
            };
            self.monitor.sample_index(i, &sample);
        }
        out.extend(self.monitor.drain(false));
    }

    /// The session ended: open bursts and rate-limit windows close, their records go onto
    /// `out`.
    pub fn finish(&mut self, out: &mut Vec<JitterEvent>) {
        out.extend(self.monitor.drain(true));
    }

    /// Bursts the rate limits dropped so far (`dropped.jitter` of a `session-end` record).
    pub fn dropped(&self) -> u64 {
        self.monitor.stats().dropped
    }

    /// The monitor, for its counts ([`MotionMonitor::stats`]).
    pub fn monitor(&self) -> &MotionMonitor {
        &self.monitor
    }
}
