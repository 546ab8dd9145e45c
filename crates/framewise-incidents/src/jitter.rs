//! A jitter record from the motion monitor's event (`framewise-detect`): the one mapping
//! from an event to its `perf.jsonl` line, for the live log and for a capture read back.

use framewise_detect::hitch_classify::Confidence as DetectConfidence;
use framewise_detect::motion::JitterEvent;

use crate::record::{Common, Confidence, Guess, JitterRecord, Reach};

impl From<DetectConfidence> for Confidence {
    fn from(confidence: DetectConfidence) -> Self {
        match confidence {
            DetectConfidence::Low => Self::Low,
            DetectConfidence::Medium => Self::Medium,
            DetectConfidence::High => Self::High,
        }
    }
}

/// The record of `event` with the session's common fields `base` (its `at` included): the
/// phase and situation (`ctx`) are the jump frame's as the event states them, the ones its
/// footprint was keyed on.
pub fn jitter_record(event: &JitterEvent, base: &Common) -> JitterRecord {
    JitterRecord {
        common: Common {
            phase: event.phase.clone(),
            ctx: event.situation.clone().filter(|s| !s.is_empty()),
            ..base.clone()
        },
        track: event.track.clone(),
        kind: event.kind.name().to_owned(),
        frame: event.frame,
        jump: event.jump,
        units: event.units,
        unit: (event.unit != "u").then(|| event.unit.clone()),
        travel_units: event.travel_units,
        speed: event.speed,
        dt_ms: event.dt_ms,
        median_dt_ms: event.median_dt_ms,
        from: event.from,
        to: event.to,
        frames: event.frames,
        duration_ms: event.duration_ms,
        amplitude: event.amplitude,
        coincident: event.coincident.clone(),
        reach: event.reach.as_ref().map(|r| Reach {
            name: r.name.clone(),
            before: r.before,
            after: r.after,
        }),
        classification: event
            .classification
            .iter()
            .map(|g| Guess {
                guess: g.guess.name().to_owned(),
                confidence: g.confidence.into(),
                evidence: g.evidence.clone(),
                scope: None,
                site: None,
            })
            .collect(),
        dropped_since_last: event.dropped_since_last,
        footprint: event.footprint().into(),
    }
}
