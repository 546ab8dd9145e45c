//! Folds over the ledger: what `perf.jsonl` and `fixes.jsonl` say once their lines are
//! added up — the issues catalogue ([`catalogue`]), the timeline ([`history`]), a window's
//! summary ([`summarize_window`]) and a fix's measured before/after ([`build_fix`]).
//!
//! One implementation for every reader: `framewise issues`, `report`, `history` and `fix`
//! print these structures, the inspector's Issues panel serves the catalogue's JSON as it
//! is, and the MCP server hands out the same documents. Every fold is pure: records in,
//! a typed summary out, no clock (the caller passes `now`) and no I/O besides
//! [`read_fixes`].
//!
//! Absence is kept: a window with no heartbeat has no `p95_ms` (a gap, never `0`), a
//! counter no heartbeat carried is not listed, an issue whose occurrences measured nothing
//! has no `worst`, a window whose heartbeats do not say how long the game was played has no
//! hitch rate. A record whose `at` does not parse is left out of every fold; the timeline and
//! fix windows also set aside, and count, records dated before [`EARLIEST_MS`] or (given now)
//! more than [`FUTURE_TOLERANCE_MS`] after now ([`Ledger::plausibly_dated`]).

mod at;
mod files;
mod fix;
mod history;
mod issues;
mod window;

pub use at::unix_ms_from_iso;
pub use files::{IssuesDoc, LedgerFiles, LedgerInfo};
pub use fix::{
    build_fix, latest_builds, parse_window_spec, read_fixes, FixError, FixRecord, FixRequest,
    FixType, FixWindow, FixesRead, WindowSpec, FIX_SERIES_SLICES,
};
pub use history::{
    history, BuildWindow, Future, History, HistoryOptions, Past, Span, FUTURE_TOLERANCE_MS,
    HISTORY_SCHEMA,
};
pub use issues::{
    catalogue, Catalogue, CatalogueOptions, FixRef, Issue, Occurrence, Occurrences, Worst,
    CATALOGUE_SCHEMA,
};
pub use window::{summarize_build, summarize_window, WindowSummary};

use crate::record::Record;

/// The earliest instant a record can be dated and be believed, ms since the Unix epoch:
/// 2020-01-01T00:00:00Z, before framewise's log format existed. An earlier `at` is a clock
/// that was reset (a device booted at 1970-01-01), so the timeline and fix windows set such a
/// record aside and count it, as they do one dated after now: drawn, one line dated 1970
/// would put every real record in the last bucket.
pub const EARLIEST_MS: i64 = 1_577_836_800_000;

/// How many records [`Ledger::plausibly_dated`] set aside.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Misdated {
    /// Dated more than [`FUTURE_TOLERANCE_MS`] after now.
    pub future: u64,
    /// Dated before [`EARLIEST_MS`].
    pub past: u64,
}

/// The records of a ledger with their times, oldest first: the input of every fold.
///
/// Records whose `at` does not parse are left out (and counted in [`Ledger::unstamped`]);
/// records with the same time keep their file order.
#[derive(Clone, Debug, Default)]
pub struct Ledger<'a> {
    stamped: Vec<Stamped<'a>>,
    unstamped: u64,
}

/// A record and its time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamped<'a> {
    /// `at`, ms since the Unix epoch.
    pub ms: i64,
    /// The record.
    pub record: &'a Record,
}

impl<'a> Ledger<'a> {
    /// The ledger of `records` (any order).
    pub fn new(records: impl IntoIterator<Item = &'a Record>) -> Self {
        let mut unstamped = 0;
        let mut stamped: Vec<Stamped<'a>> = records
            .into_iter()
            .filter_map(|record| {
                let ms = unix_ms_from_iso(&record.common().at);
                if ms.is_none() {
                    unstamped += 1;
                }
                ms.map(|ms| Stamped { ms, record })
            })
            .collect();
        stamped.sort_by_key(|s| s.ms);
        Self { stamped, unstamped }
    }

    /// Records left out because their `at` does not parse.
    pub fn unstamped(&self) -> u64 {
        self.unstamped
    }

    /// Records in the ledger (with a readable time).
    pub fn len(&self) -> usize {
        self.stamped.len()
    }

    /// Whether the ledger holds no record with a readable time.
    pub fn is_empty(&self) -> bool {
        self.stamped.is_empty()
    }

    /// The records in `[from_ms, to_ms]`, oldest first.
    pub(crate) fn between(&self, from_ms: i64, to_ms: i64) -> &[Stamped<'a>] {
        let lo = self.stamped.partition_point(|s| s.ms < from_ms);
        let hi = self.stamped.partition_point(|s| s.ms <= to_ms);
        self.stamped.get(lo..hi.max(lo)).unwrap_or_default()
    }

    /// The ledger without the records dated before [`EARLIEST_MS`] (a clock reset) or, given
    /// `now_ms`, more than [`FUTURE_TOLERANCE_MS`] after it (a clock set wrong, a hand-edited
    /// line) — `history` leaves them out of its timeline by the same rule — and how many it
    /// set aside.
    pub fn plausibly_dated(&self, now_ms: Option<i64>) -> (Ledger<'a>, Misdated) {
        let ahead = now_ms.map_or(i64::MAX, |now| now.saturating_add(FUTURE_TOLERANCE_MS));
        let kept = self.between(EARLIEST_MS, ahead);
        let past = self.stamped.partition_point(|s| s.ms < EARLIEST_MS);
        let misdated = Misdated {
            past: past as u64,
            future: (self.stamped.len() - kept.len() - past) as u64,
        };
        (
            Ledger {
                stamped: kept.to_vec(),
                unstamped: self.unstamped,
            },
            misdated,
        )
    }

    /// Every record, oldest first.
    pub(crate) fn all(&self) -> &[Stamped<'a>] {
        &self.stamped
    }
}

/// Whether a record is evidence of how the game ran: a heartbeat, a hitch or a jitter.
/// Usermarks and session ends name a time without measuring the stretch around it.
pub(crate) fn is_evidence(record: &Record) -> bool {
    matches!(
        record,
        Record::Heartbeat(_) | Record::Hitch(_) | Record::Jitter(_)
    )
}

/// The median of `values` (any order; sorted in place), the two middle values averaged,
/// rounded to 3 decimals; `None` for no values.
pub(crate) fn median_f64(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let hi = *values.get(n / 2)?;
    let m = if n % 2 == 1 {
        hi
    } else {
        (values.get(n / 2 - 1).copied().unwrap_or(hi) + hi) / 2.0
    };
    Some(round_to(m, 3))
}

/// `value` rounded to `decimals` places; a value too large to scale (it has no such places
/// anyway) as it is.
pub(crate) fn round_to(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    let scaled = value * scale;
    if scaled.is_finite() {
        scaled.round() / scale
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median_f64(&mut []), None);
        assert_eq!(median_f64(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median_f64(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median_f64(&mut [16.6, 16.7]), Some(16.65));
    }

    #[test]
    fn rounding_a_huge_value_keeps_it() {
        assert_eq!(round_to(1e306, 3), 1e306);
        assert_eq!(round_to(-1e306, 3), -1e306);
        assert_eq!(round_to(1.23456, 3), 1.235);
    }
}
