//! Jitter after the fact: the motion monitor of framewise-detect replayed over the motion
//! tracks a capture recorded (the counters and META settings docs/CONCEPTS.md names under
//! "Motion tracks and jitter").
//!
//! Each frame feeds every declared track's position once, at the host's motion clock
//! (`motion.clock_us`) or, without one, the frame's start; paused frames and frames the host
//! declared held are held; a track's declared cuts are applied before its sample — the
//! mapping of `framewise_detect::motion::MotionFeed`, which the recorder's live log runs too,
//! so the records are the ones the live monitor wrote for the same frames.

use std::collections::HashMap;

use framewise_detect::motion::names;
use framewise_detect::motion::{
    FrameMotion, JitterEvent, MotionError, MotionFeed, MotionOptions, TrackSpec,
};

use crate::model::{Capture, CounterId};

/// The tracks and options a capture's META declares ([`names::setup_from_settings`]).
pub fn jitter_setup(capture: &Capture) -> Result<(Vec<TrackSpec>, MotionOptions), MotionError> {
    names::setup_from_settings(&capture.meta().settings)
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
    let situation = capture.meta().canonical_situation();
    let Ok(mut feed) = MotionFeed::new(tracks, options, &situation) else {
        return (Vec::new(), 0);
    };
    // The capture's motion counters by name: the only ones the feed asks for.
    let ids: HashMap<&str, CounterId> = capture
        .counters()
        .iter()
        .enumerate()
        .filter(|(_, c)| names::is_motion_counter(&c.name))
        .filter_map(|(i, c)| Some((c.name.as_str(), u32::try_from(i).ok()?)))
        .collect();
    let mut events = Vec::new();
    for (row, frame) in capture.frames().rows().enumerate() {
        let motion = FrameMotion {
            index: frame.index,
            begin_ns: frame.cpu_begin_ns,
            paused: frame.paused,
            phase: frame
                .phase
                .and_then(|p| capture.phases().get(p as usize))
                .map(String::as_str),
        };
        let value = |name: &str| {
            let id = *ids.get(name)?;
            capture
                .counter_in_frame(row, id)
                .map(|e| capture.counter_value(e))
        };
        feed.frame(&motion, value, &mut events);
    }
    feed.finish(&mut events);
    let dropped = feed.dropped();
    (events, dropped)
}
