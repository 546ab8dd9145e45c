//! The timeline: the ledger in equal time buckets (frame p95 and median, counters, hitch
//! count, the build that ran), one measured window per build (that build's records only),
//! and the fixes recorded in the span. A bucket with no evidence keeps its place with its
//! measurements absent: a reader draws a gap there, never a zero.
//!
//! Given now, records dated more than [`FUTURE_TOLERANCE_MS`] after it (a clock set wrong, a
//! hand-edited line) are left out of the timeline and counted ([`History::future`]): one
//! line dated 2090 would otherwise stretch the span to 2090 and put every real record in the
//! first bucket. Records dated before [`EARLIEST_MS`] (a clock reset to 1970) are left out
//! and counted the same way ([`History::past`]).

use serde::{Deserialize, Serialize};

use super::fix::FixRecord;
use super::window::{summarize_build, summarize_window, WindowSummary};
use super::{is_evidence, unix_ms_from_iso, Ledger, EARLIEST_MS};
use crate::time::iso_from_unix_ms;

/// The history document's schema id.
pub const HISTORY_SCHEMA: &str = "framewise.history/1";

/// How far after now a record may be dated and still be drawn, ms: an hour, room for a
/// game's clock a little ahead of the reader's.
pub const FUTURE_TOLERANCE_MS: i64 = 3_600_000;

/// How to fold the timeline.
#[derive(Clone, Debug)]
pub struct HistoryOptions {
    /// Equal time slices from the first to the last piece of evidence (at least 1).
    pub buckets: usize,
    /// Only records (and fixes) at or after this instant, ms since the epoch.
    pub from_ms: Option<i64>,
    /// Only records (and fixes) at or before this instant.
    pub to_ms: Option<i64>,
    /// Now, ms since the epoch: records after it by more than [`FUTURE_TOLERANCE_MS`] are
    /// left out and counted. `None`: no record is left out for its date being ahead (those
    /// dated before [`EARLIEST_MS`] still are).
    pub now_ms: Option<i64>,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        Self {
            buckets: 48,
            from_ms: None,
            to_ms: None,
            now_ms: None,
        }
    }
}

/// The first and last evidence of the span.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// The first evidence, ISO 8601 UTC.
    pub from: String,
    /// The last evidence.
    pub to: String,
}

/// The records left out for being dated after now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Future {
    /// How many (in the `--from`/`--to` range).
    pub records: u64,
    /// The latest of their times, ISO 8601 UTC.
    pub latest: String,
}

/// The records left out for being dated before [`EARLIEST_MS`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Past {
    /// How many (in the `--from`/`--to` range).
    pub records: u64,
    /// The earliest of their times, ISO 8601 UTC.
    pub earliest: String,
}

/// One build's window: from its first evidence to its last, summarising that build's records
/// only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BuildWindow {
    /// The window's summary; `build` is the build's name.
    #[serde(flatten)]
    pub summary: WindowSummary,
}

/// The timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// [`HISTORY_SCHEMA`].
    pub schema: String,
    /// The span the buckets cover; absent when the ledger holds no evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// Equal slices of the span, oldest first; empty when there is no evidence.
    pub buckets: Vec<WindowSummary>,
    /// One window per build with evidence, in order of last evidence: the last is the latest
    /// build, the one whose record is the newest.
    pub builds: Vec<BuildWindow>,
    /// Fixes recorded in the span's range, newest first.
    pub fixes: Vec<FixRecord>,
    /// Records dated after now (beyond [`FUTURE_TOLERANCE_MS`]), left out of the span, the
    /// buckets and the builds; absent when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub future: Option<Future>,
    /// Records dated before [`EARLIEST_MS`] (a clock reset), left out of the span, the
    /// buckets and the builds; absent when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past: Option<Past>,
}

/// Each build with evidence and its window `[first, last]` in ms, in order of last evidence:
/// the last is the build of the newest evidence (of two at the same instant, the later in the
/// file), the one before it the build that ran before that build's latest stretch.
pub(crate) fn build_windows<'a>(ledger: &Ledger<'a>) -> Vec<(&'a str, i64, i64)> {
    // (build, first ms, last ms, index of the last evidence in ledger order)
    let mut windows: Vec<(&'a str, i64, i64, usize)> = Vec::new();
    for (at, s) in ledger.all().iter().enumerate() {
        if !is_evidence(s.record) {
            continue;
        }
        let Some(build) = s.record.common().build.as_deref() else {
            continue;
        };
        // The ledger is in time order: this record is the build's latest so far.
        match windows.iter_mut().find(|(b, _, _, _)| *b == build) {
            Some((_, _, to, last)) => {
                *to = s.ms;
                *last = at;
            }
            None => windows.push((build, s.ms, s.ms, at)),
        }
    }
    windows.sort_by_key(|&(_, _, _, last)| last);
    windows
        .into_iter()
        .map(|(build, from, to, _)| (build, from, to))
        .collect()
}

/// Folds `ledger` (and the `fixes`) into a timeline.
pub fn history(ledger: &Ledger<'_>, fixes: &[FixRecord], options: &HistoryOptions) -> History {
    let lo = options.from_ms.unwrap_or(i64::MIN);
    let hi = options.to_ms.unwrap_or(i64::MAX);
    let ahead = options
        .now_ms
        .map_or(i64::MAX, |now| now.saturating_add(FUTURE_TOLERANCE_MS));
    let future = ledger.between(lo.max(ahead.saturating_add(1)).max(EARLIEST_MS), hi);
    let future = future.last().map(|last| Future {
        records: future.len() as u64,
        latest: iso_from_unix_ms(last.ms),
    });
    let past = ledger.between(lo, hi.min(EARLIEST_MS - 1));
    let past = past.first().map(|first| Past {
        records: past.len() as u64,
        earliest: iso_from_unix_ms(first.ms),
    });
    let scoped = Ledger::new(
        ledger
            .between(lo.max(EARLIEST_MS), hi.min(ahead))
            .iter()
            .map(|s| s.record),
    );
    let mut fixes: Vec<(i64, &FixRecord)> = fixes
        .iter()
        .filter_map(|f| {
            let ms = unix_ms_from_iso(&f.at);
            // A fix without a readable time is not dropped: it cannot be placed, only listed.
            let inside = ms.is_none_or(|ms| (lo..=hi).contains(&ms));
            inside.then_some((ms.unwrap_or(i64::MIN), f))
        })
        .collect();
    fixes.sort_by_key(|(ms, _)| std::cmp::Reverse(*ms));
    let fixes: Vec<FixRecord> = fixes.into_iter().map(|(_, f)| f.clone()).collect();

    let evidence: Vec<i64> = scoped
        .all()
        .iter()
        .filter(|s| is_evidence(s.record))
        .map(|s| s.ms)
        .collect();
    let (Some(&from_ms), Some(&to_ms)) = (evidence.first(), evidence.last()) else {
        return History {
            schema: HISTORY_SCHEMA.to_owned(),
            span: None,
            buckets: Vec::new(),
            builds: Vec::new(),
            fixes,
            future,
            past,
        };
    };
    let n = options.buckets.max(1);
    let width = ((to_ms - from_ms).max(1) as f64) / n as f64;
    let mut buckets = Vec::with_capacity(n);
    for i in 0..n {
        let b0 = from_ms + (i as f64 * width) as i64;
        let b1 = if i + 1 == n {
            to_ms
        } else {
            from_ms + ((i + 1) as f64 * width) as i64 - 1
        };
        let mut bucket = summarize_window(&scoped, b0, b1);
        // A bucket is a slice of the timeline, not a rate.
        bucket.hitches_per_hour = None;
        bucket.jitters_per_hour = None;
        bucket.rate_unknown = None;
        bucket.build = scoped
            .between(b0, b1)
            .iter()
            .rev()
            .filter(|s| is_evidence(s.record))
            .find_map(|s| s.record.common().build.clone());
        buckets.push(bucket);
    }
    let builds = build_windows(&scoped)
        .into_iter()
        .map(|(build, from, to)| BuildWindow {
            summary: summarize_build(&scoped, build, from, to),
        })
        .collect();
    History {
        schema: HISTORY_SCHEMA.to_owned(),
        span: Some(Span {
            from: iso_from_unix_ms(from_ms),
            to: iso_from_unix_ms(to_ms),
        }),
        buckets,
        builds,
        fixes,
        future,
        past,
    }
}
