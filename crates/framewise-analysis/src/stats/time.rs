//! [`TimeStats`]: count, mean, extremes and percentiles of a set of times.
use serde::{Deserialize, Serialize};

use super::percentile::*;
use super::{ms, record, NullReasons};

/// Count, mean, extremes and percentiles of a set of times, in ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeStats {
    /// Values.
    pub count: u64,
    /// Mean, ms.
    pub avg: Option<f64>,
    /// Minimum, ms.
    pub min: Option<f64>,
    /// Maximum, ms.
    pub max: Option<f64>,
    /// p1, ms.
    pub p01: Option<f64>,
    /// p50, ms.
    pub p50: Option<f64>,
    /// p90, ms.
    pub p90: Option<f64>,
    /// p95, ms.
    pub p95: Option<f64>,
    /// p99, ms.
    pub p99: Option<f64>,
    /// p99.9, ms.
    pub p999: Option<f64>,
}

/// Mean of integer ns values, exact to f64 rounding.
pub fn mean_ns(values_ns: &[u64]) -> Option<f64> {
    if values_ns.is_empty() {
        return None;
    }
    let sum: u128 = values_ns.iter().map(|&v| u128::from(v)).sum();
    Some(sum as f64 / values_ns.len() as f64)
}

/// The quantiles of a [`TimeStats`].
pub(crate) const TIME_QUANTILES: [Quantile; 6] = [P01, P50, P90, P95, P99, P999];

impl TimeStats {
    /// Statistics over ascending `sorted_ns`.
    pub fn from_sorted_ns(sorted_ns: &[u64], reasons: &mut NullReasons) -> Self {
        Self::build(
            sorted_ns.len() as u64,
            mean_ns(sorted_ns),
            sorted_ns.first().copied(),
            sorted_ns.last().copied(),
            &TIME_QUANTILES,
            |q| pct_u64(sorted_ns, q),
            reasons,
        )
    }

    /// The same statistics as [`Self::from_sorted_ns`] over `values_ns` in any order,
    /// without sorting them (they are reordered): the percentiles in `quantiles` are
    /// taken by selection, the others are left `None` with no reason.
    /// The same statistics as [`Self::from_sorted_ns`] over `values_ns` in any order,
    /// without sorting them (they are reordered), and the exact sum of the values: the
    /// percentiles in `quantiles` are taken by selection, the others are left `None` with
    /// no reason.
    pub(crate) fn from_unsorted_ns(
        values_ns: &mut [u64],
        quantiles: &[Quantile],
        reasons: &mut NullReasons,
    ) -> (Self, u128) {
        let mut sum = 0u128;
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for &v in values_ns.iter() {
            sum += u128::from(v);
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let n = values_ns.len();
        let (min, max) = if n > 0 {
            (Some(lo), Some(hi))
        } else {
            (None, None)
        };
        let mean = (n > 0).then(|| sum as f64 / n as f64);
        let chosen = select_ranks_by_key(values_ns, &ranks_for(n, quantiles), |v| v, (lo, hi));
        let stats = Self::build(
            n as u64,
            mean,
            min,
            max,
            quantiles,
            |q| {
                interpolate(
                    n as u64,
                    q,
                    |rank| selected(&chosen, rank).map(|v| v as f64),
                    0.0,
                )
            },
            reasons,
        );
        (stats, sum)
    }

    fn build(
        count: u64,
        mean_ns: Option<f64>,
        min_ns: Option<u64>,
        max_ns: Option<u64>,
        quantiles: &[Quantile],
        pct: impl Fn(Quantile) -> Result<f64, NullReason>,
        reasons: &mut NullReasons,
    ) -> Self {
        let avg = record(reasons, "avg", mean_ns.map(ms).ok_or(NullReason::Empty));
        let min = record(
            reasons,
            "min",
            min_ns.map(|v| ms(v as f64)).ok_or(NullReason::Empty),
        );
        let max = record(
            reasons,
            "max",
            max_ns.map(|v| ms(v as f64)).ok_or(NullReason::Empty),
        );
        let mut p = |q: Quantile| {
            if quantiles.contains(&q) {
                record(reasons, &q.name(), pct(q).map(ms))
            } else {
                None
            }
        };
        Self {
            count,
            avg,
            min,
            max,
            p01: p(P01),
            p50: p(P50),
            p90: p(P90),
            p95: p(P95),
            p99: p(P99),
            p999: p(P999),
        }
    }
}
