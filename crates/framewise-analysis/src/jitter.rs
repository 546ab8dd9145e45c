//! Jitter after the fact: the motion monitor of framewise-detect replayed over the motion
//! tracks a capture recorded (the counters and META settings docs/CONCEPTS.md names under
//! "Motion tracks and jitter").
//!
//! Each frame feeds every declared track's position once, at the host's motion clock
//! (`motion.clock_us`) or, without one, the frame's start; paused frames and frames the host
//! declared held are held; a track's declared cuts are applied before its sample. The
//! records are the ones the live monitor would have written for the same frames.

use framewise_detect::motion::names::{self, TrackNames, CLOCK_GAUGE};
use framewise_detect::motion::{
    JitterEvent, MotionError, MotionMonitor, MotionOptions, Sample, TrackSpec,
};

use crate::model::{Capture, CounterId};

/// The tracks and options a capture's META declares ([`names::setup_from_settings`]).
pub fn jitter_setup(capture: &Capture) -> Result<(Vec<TrackSpec>, MotionOptions), MotionError> {
    names::setup_from_settings(&capture.meta().settings)
}

/// One track's counters in the capture.
struct TrackCounters {
    position: [Option<CounterId>; 3],
    reach: Option<CounterId>,
    held: Option<CounterId>,
    cuts: Option<CounterId>,
}

fn counter(capture: &Capture, name: &str) -> Option<CounterId> {
    capture
        .counters()
        .iter()
        .position(|c| c.name == name)
        .and_then(|p| u32::try_from(p).ok())
}

fn value_at(capture: &Capture, row: usize, id: Option<CounterId>) -> Option<f64> {
    id.and_then(|id| capture.counter_in_frame(row, id))
        .map(|e| capture.counter_value(e))
}

/// Replays the motion monitor over a capture with the tracks it declares (see
/// [`jitter_setup`]); every jitter record, in the order the monitor minted them. A capture
/// without declared tracks, or whose declarations do not parse, has none.
pub fn find_jitter(capture: &Capture) -> Vec<JitterEvent> {
    match jitter_setup(capture) {
        Ok((tracks, options)) => replay(capture, tracks, options),
        Err(_) => Vec::new(),
    }
}

/// [`find_jitter`], with the number of bursts the monitor's rate limits dropped (what a
/// `session-end` record counts as `dropped.jitter`).
pub fn find_jitter_counted(capture: &Capture) -> (Vec<JitterEvent>, u64) {
    match jitter_setup(capture) {
        Ok((tracks, options)) => replay_counted(capture, tracks, options),
        Err(_) => (Vec::new(), 0),
    }
}

/// Replays a monitor of `tracks` with `options` over the capture's frames (an invalid
/// declaration gives no records; [`jitter_setup`] says why).
pub fn replay(
    capture: &Capture,
    tracks: Vec<TrackSpec>,
    options: MotionOptions,
) -> Vec<JitterEvent> {
    replay_counted(capture, tracks, options).0
}

/// [`replay`], with the number of bursts the rate limits dropped.
pub fn replay_counted(
    capture: &Capture,
    tracks: Vec<TrackSpec>,
    options: MotionOptions,
) -> (Vec<JitterEvent>, u64) {
    let counters: Vec<TrackCounters> = tracks
        .iter()
        .map(|t| {
            let n = TrackNames::of(&t.name);
            TrackCounters {
                position: n.position.map(|name| counter(capture, &name)),
                reach: counter(capture, &n.reach),
                held: counter(capture, &n.held),
                cuts: counter(capture, &n.cuts),
            }
        })
        .collect();
    let names: Vec<String> = tracks.iter().map(|t| t.name.clone()).collect();
    let Ok(mut monitor) = MotionMonitor::new(tracks, options) else {
        return (Vec::new(), 0);
    };
    let clock = counter(capture, CLOCK_GAUGE);
    let situation = capture.meta().canonical_situation();
    let situation = (!situation.is_empty()).then_some(situation.as_str());
    let mut events = Vec::new();
    for (row, frame) in capture.frames().rows().enumerate() {
        let t_ms = match value_at(capture, row, clock) {
            Some(us) => us / 1000.0,
            None => frame.cpu_begin_ns as f64 / 1e6,
        };
        let phase = frame
            .phase
            .and_then(|p| capture.phases().get(p as usize))
            .map(String::as_str);
        for (i, (name, c)) in names.iter().zip(&counters).enumerate() {
            if value_at(capture, row, c.cuts).is_some_and(|n| n > 0.0) {
                monitor.cut(Some(name));
            }
            let axes = c.position.map(|id| value_at(capture, row, id));
            if axes.iter().all(Option::is_none) {
                continue;
            }
            let held = frame.paused || value_at(capture, row, c.held).is_some_and(|n| n > 0.0);
            let sample = Sample {
                position: axes.map(|v| v.unwrap_or(0.0) / names::MILLI),
                t_ms,
                frame: frame.index,
                held,
                reach: value_at(capture, row, c.reach).map(|v| v / names::MILLI),
                phase,
                situation,
            };
            monitor.sample_index(i, &sample);
        }
        events.extend(monitor.drain(false));
    }
    events.extend(monitor.drain(true));
    (events, monitor.stats().dropped)
}
