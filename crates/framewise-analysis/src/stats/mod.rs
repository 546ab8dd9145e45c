//! Statistics, exactly as docs/CONCEPTS.md ("Statistics", "The frame classifier") defines them.
//!
//! - Percentiles interpolate linearly between the closest ranks at `(n − 1) · p`.
//! - A percentile is null, with a reason, when fewer than one value lies beyond it in its
//!   tail: `n · min(p, 1 − p) < 1` (p99 and p01 need 100 values, p99.9 needs 1000, p50
//!   needs 2).
//! - 1% / 0.1% low fps is the low average: 1000 / the mean of the frame times at or above
//!   the p99 / p99.9 frame time.
//! - The classifier judges each frame's work time (CPU begin to end, lite-profiler's frame
//!   time) against the frame budget: jank at ≥ 0.96 × budget, a spike at ≥ 1.98 × budget
//!   (16 and 33 ms at the default 16.67 ms); it buckets work times into
//!   `<2, 2–4, 4–8, 8–16, 16–33, 33–66, ≥66 ms`; STEADY / SPIKING (jank ratio ≥ 0.05) /
//!   THROTTLED (jank ratio ≥ 0.25). The hitch rule, not the classifier, judges periods.
//!
//! Values enter as integer nanoseconds and leave as milliseconds.

use std::collections::BTreeMap;

mod blocks;
mod classifier;
mod counter;
mod percentile;
mod scope;
mod time;

pub use blocks::{FrameBlock, WorkBlock};
pub use classifier::*;
pub use counter::{CounterStats, Num, GAUGE_HAS_NO_SUM, SUM_OVERFLOWS_F64};
pub use percentile::*;
pub use scope::ScopeStats;
pub use time::{mean_ns, TimeStats};

/// Nanoseconds per millisecond.
pub const NS_PER_MS: f64 = 1_000_000.0;

/// Reasons for null statistics, by metric name.
pub type NullReasons = BTreeMap<String, String>;

pub(crate) fn ms(ns: f64) -> f64 {
    ns / NS_PER_MS
}

pub(crate) fn record<T>(
    reasons: &mut NullReasons,
    name: &str,
    r: Result<T, NullReason>,
) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            reasons.insert(name.to_owned(), e.to_string());
            None
        }
    }
}

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
