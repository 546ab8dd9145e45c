//! One window of the ledger summarised: what a fix's before and after carry, what every
//! history bucket and every build's window is. A time range summarises every record in it
//! ([`summarize_window`]); a build's window only that build's records ([`summarize_build`]),
//! so another build that ran in the same span (builds A, B, A) never counts towards it.
//!
//! Rates are per hour of play, and play is what the log says was played: the sum of the
//! window's heartbeats' `window.seconds` (each heartbeat covers the non-paused play since the
//! one before it). The wall-clock length of a window is no measure of play: it counts the
//! nights between sessions. A window whose heartbeats say no play time, or under a minute of
//! it, has no rate, and `rate_unknown` says why.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{median_f64, round_to, Ledger, Stamped};
use crate::record::Record;
use crate::time::iso_from_unix_ms;

/// A window `[from, to]` of the ledger summarised: the medians of its heartbeats (frame
/// median and p95, each counter), its hitches (count, worst frame, most frequent verdict),
/// its jitters, the regime that measured it. A field the window has no evidence for is
/// absent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowSummary {
    /// The window's start, ISO 8601 UTC.
    pub from: String,
    /// The window's end (inclusive), ISO 8601 UTC.
    pub to: String,
    /// The build the window measures (only its records count), or in a history bucket the
    /// last build with evidence in the bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// Heartbeats in the window.
    pub beats: u64,
    /// Hitch records in the window.
    pub hitches: u64,
    /// Hitches the rate limits dropped, as the window's hitch records say (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitches_dropped: Option<u64>,
    /// Seconds of play the window's heartbeats summarise (the sum of their `window.seconds`);
    /// absent when no heartbeat in the window said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub play_s: Option<f64>,
    /// Hitch records per hour of play (`play_s`, at least a minute of it); absent when the
    /// window has no evidence, when `rate_unknown` says why, and in history buckets, which
    /// are slices rather than rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitches_per_hour: Option<f64>,
    /// Why the window, which has evidence, has no rates: its heartbeats say no play time,
    /// or under a minute of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_unknown: Option<String>,
    /// Median of the heartbeats' frame p95, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<f64>,
    /// Median of the heartbeats' frame median, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ms: Option<f64>,
    /// Each counter's median over the heartbeats that carried it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, f64>,
    /// Jitter records in the window (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitters: Option<u64>,
    /// Jitter records per hour of play (absent: none, no rate known, and in history
    /// buckets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitters_per_hour: Option<f64>,
    /// The longest hitch frame, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_ms: Option<f64>,
    /// The best guess of that hitch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_guess: Option<String>,
    /// The best guess most hitches of the window had (the first seen on a tie).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_guess: Option<String>,
    /// The timing regime the window's last heartbeat declared (`unknown` is not one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regime: Option<String>,
}

/// The least play a rate is taken over, seconds: a minute, so three hitches in ten seconds of
/// play do not read as a thousand an hour.
const MIN_RATE_PLAY_S: f64 = 60.0;

/// Summarises the records of `ledger` in `[from_ms, to_ms]` (both inclusive), whatever their
/// build.
pub fn summarize_window(ledger: &Ledger<'_>, from_ms: i64, to_ms: i64) -> WindowSummary {
    summarize(ledger.between(from_ms, to_ms).iter(), from_ms, to_ms)
}

/// Summarises the records of build `build` in `[from_ms, to_ms]` (both inclusive): the
/// records of other builds (and of none) in the span are left out. `build` names the build.
pub fn summarize_build(
    ledger: &Ledger<'_>,
    build: &str,
    from_ms: i64,
    to_ms: i64,
) -> WindowSummary {
    let records = ledger
        .between(from_ms, to_ms)
        .iter()
        .filter(|s| s.record.common().build.as_deref() == Some(build));
    WindowSummary {
        build: Some(build.to_owned()),
        ..summarize(records, from_ms, to_ms)
    }
}

/// Summarises `records` as the window `[from_ms, to_ms]`.
fn summarize<'r, 'a: 'r>(
    records: impl Iterator<Item = &'r Stamped<'a>>,
    from_ms: i64,
    to_ms: i64,
) -> WindowSummary {
    let mut p95s = Vec::new();
    let mut medians = Vec::new();
    let mut counters: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut guesses: Vec<(&str, u64)> = Vec::new();
    let mut summary = WindowSummary {
        from: iso_from_unix_ms(from_ms),
        to: iso_from_unix_ms(to_ms),
        ..WindowSummary::default()
    };
    let (mut jitters, mut dropped) = (0u64, 0u64);
    let mut play_s: Option<f64> = None;
    for s in records {
        match s.record {
            Record::Heartbeat(beat) => {
                summary.beats += 1;
                if let Some(seconds) = beat.window.seconds {
                    *play_s.get_or_insert(0.0) += seconds;
                }
                p95s.extend(beat.window.p95_ms);
                medians.extend(beat.window.median_ms);
                for (name, value) in &beat.counters {
                    counters
                        .entry(name.clone())
                        .or_default()
                        .push(*value as f64);
                }
                if let Some(regime) = beat.common.regime.as_deref().filter(|r| *r != "unknown") {
                    summary.regime = Some(regime.to_owned());
                }
            }
            Record::Hitch(hitch) => {
                summary.hitches += 1;
                dropped += hitch.dropped_since_last.unwrap_or(0);
                let guess = hitch.classification.first().map(|g| g.guess.as_str());
                if let Some(g) = guess {
                    match guesses.iter_mut().find(|(name, _)| *name == g) {
                        Some((_, n)) => *n += 1,
                        None => guesses.push((g, 1)),
                    }
                }
                if summary.worst_ms.is_none_or(|w| hitch.frame_ms > w) {
                    summary.worst_ms = Some(round_to(hitch.frame_ms, 1));
                    summary.worst_guess = guess.map(str::to_owned);
                }
            }
            Record::Jitter(_) => jitters += 1,
            Record::Usermark(_) | Record::SessionEnd(_) => {}
        }
    }
    summary.play_s = play_s.map(|s| round_to(s, 3));
    // A rate over a window nothing ran in (no heartbeat, hitch or jitter: no evidence the game
    // ran at all) is not 0 an hour: it is not measured. Nor is one over play the log does not
    // state: the window's wall-clock length would count the idle time between sessions.
    let ran = summary.beats > 0 || summary.hitches > 0 || jitters > 0;
    let hours = match play_s {
        _ if !ran => None,
        None if summary.beats == 0 => {
            summary.rate_unknown = Some(
                "no heartbeat in the window: the log does not say how long the game was played"
                    .to_owned(),
            );
            None
        }
        None => {
            summary.rate_unknown = Some(
                "the window's heartbeats do not say how long the game was played (no window.seconds)"
                    .to_owned(),
            );
            None
        }
        Some(s) if s < MIN_RATE_PLAY_S => {
            summary.rate_unknown = Some(format!(
                "{} s of play in the window: under a minute, too little for a rate",
                round_to(s, 1)
            ));
            None
        }
        Some(s) => Some(s / 3600.0),
    };
    if let Some(hours) = hours {
        summary.hitches_per_hour = Some(round_to(summary.hitches as f64 / hours, 1));
    }
    summary.hitches_dropped = (dropped > 0).then_some(dropped);
    if jitters > 0 {
        summary.jitters = Some(jitters);
        summary.jitters_per_hour = hours.map(|hours| round_to(jitters as f64 / hours, 1));
    }
    summary.p95_ms = median_f64(&mut p95s);
    summary.median_ms = median_f64(&mut medians);
    summary.counters = counters
        .into_iter()
        .filter_map(|(name, mut values)| median_f64(&mut values).map(|m| (name, m)))
        .collect();
    // The most frequent; `max_by_key` would keep the last of a tie, the reference the first.
    let mut top: Option<(&str, u64)> = None;
    for &(g, n) in &guesses {
        if top.is_none_or(|(_, best)| n > best) {
            top = Some((g, n));
        }
    }
    summary.top_guess = top.map(|(g, _)| g.to_owned());
    summary
}
