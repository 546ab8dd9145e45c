//! One window of the ledger summarised: what a fix's before and after carry, what every
//! history bucket and every build's window is.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{median_f64, round_to, Ledger};
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
    /// The build that ran in the window: a build's own window, or the last build with
    /// evidence in a history bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// Heartbeats in the window.
    pub beats: u64,
    /// Hitch records in the window.
    pub hitches: u64,
    /// Hitches the rate limits dropped, as the window's hitch records say (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitches_dropped: Option<u64>,
    /// Hitch records per hour of the window (at least a minute long); absent in history
    /// buckets, which are slices rather than rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitches_per_hour: Option<f64>,
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
    /// Jitter records per hour (absent: none, and in history buckets).
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

/// The shortest window a rate is taken over: a minute, so three hitches in one second do
/// not read as ten thousand an hour.
const MIN_RATE_HOURS: f64 = 1.0 / 60.0;

/// Summarises the records of `ledger` in `[from_ms, to_ms]` (both inclusive).
pub fn summarize_window(ledger: &Ledger<'_>, from_ms: i64, to_ms: i64) -> WindowSummary {
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
    for s in ledger.between(from_ms, to_ms) {
        match s.record {
            Record::Heartbeat(beat) => {
                summary.beats += 1;
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
    // In i128: the widest window (`i64::MIN..=i64::MAX`, everything) overflows an i64.
    let span_ms = i128::from(to_ms) - i128::from(from_ms);
    let hours = ((span_ms as f64) / 3_600_000.0).max(MIN_RATE_HOURS);
    // A rate over a window nothing ran in (no heartbeat, hitch or jitter: no evidence the game
    // ran at all) is not 0 an hour: it is not measured.
    if summary.beats > 0 || summary.hitches > 0 || jitters > 0 {
        summary.hitches_per_hour = Some(round_to(summary.hitches as f64 / hours, 1));
    }
    summary.hitches_dropped = (dropped > 0).then_some(dropped);
    if jitters > 0 {
        summary.jitters = Some(jitters);
        summary.jitters_per_hour = Some(round_to(jitters as f64 / hours, 1));
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
