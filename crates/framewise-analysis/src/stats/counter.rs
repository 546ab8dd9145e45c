//! [`CounterStats`]: a counter's exact statistics over the frames that recorded it. A sum
//! counter (a per-frame count: draw calls, bytes uploaded) has a total over frames; a gauge
//! (a level sampled each frame: entities alive, memory in use) has none, since adding up a
//! level frame after frame means nothing: its `sum` is null, and it is read by its level
//! (`avg`, `p50`, `max`, `last`).
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::percentile::*;
use super::{record, NullReason, NullReasons};

/// A counter value as JSON shows it: an exact integer, or a float for an imported
/// fractional counter.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Num {
    /// Exact.
    Int(i64),
    /// Fractional.
    Float(f64),
}

impl Num {
    /// As f64.
    pub fn as_f64(self) -> f64 {
        match self {
            Self::Int(v) => v as f64,
            Self::Float(v) => v,
        }
    }
}

/// A counter's statistics over the frames in which it was recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CounterStats {
    /// `sum` or `gauge`.
    pub kind: crate::model::CounterKind,
    /// Sum over frames, exact for integer values: null for a gauge ([`GAUGE_HAS_NO_SUM`]),
    /// when it does not fit in i64, and when float values add up beyond the range of f64
    /// ([`SUM_OVERFLOWS_F64`]).
    pub sum: Option<Num>,
    /// Mean per frame (a gauge: its mean level).
    pub avg: Option<f64>,
    /// Smallest.
    pub min: Option<Num>,
    /// Largest.
    pub max: Option<Num>,
    /// p1.
    pub p01: Option<f64>,
    /// p50, the median.
    pub p50: Option<f64>,
    /// p99.
    pub p99: Option<f64>,
    /// The value in the last frame that recorded it.
    pub last: Option<Num>,
    /// Frames that recorded it.
    pub count: u64,
    /// Why each null statistic is null.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub null_reasons: NullReasons,
}

/// Why a gauge's `sum` is null, in `null_reasons`.
pub const GAUGE_HAS_NO_SUM: &str =
    "a gauge is a level sampled each frame: its sum over frames means nothing";

/// Why a float counter's `sum` is null when its values add up beyond the range of f64, in
/// `null_reasons`.
pub const SUM_OVERFLOWS_F64: &str = "the sum overflows f64 (its magnitude is over 1.797e308)";

/// The mean of finite `values` (whose smallest is `min`, largest `max`) whose plain sum
/// overflows f64: each value scaled down by a power of two at least twice their count
/// (exact, but for values so small that they vanish beside the large ones), so that the
/// scaled sum cannot overflow, then divided by the count and scaled back. Rounding can only
/// carry it past the largest value when the mean is about that value, so it is kept within
/// `min..=max`, where every mean lies.
fn mean_beyond_f64(values: &[f64], min: f64, max: f64) -> f64 {
    let n = values.len().max(1);
    let shift = n.next_power_of_two().trailing_zeros() + 1;
    let scale = 2f64.powi(-i32::try_from(shift).unwrap_or(i32::MAX));
    let scaled: f64 = values.iter().map(|v| v * scale).sum();
    (scaled / n as f64 / scale).max(min).min(max)
}

impl CounterStats {
    /// Statistics over integer values in frame order.
    pub fn of_integers(kind: crate::model::CounterKind, values: &[i64]) -> Self {
        let mut reasons = NullReasons::new();
        let last = values.last().copied().map(Num::Int);
        let sum128: i128 = values.iter().map(|&v| i128::from(v)).sum();
        let sum = if values.is_empty() {
            reasons.insert("sum".into(), NullReason::Empty.to_string());
            None
        } else {
            match i64::try_from(sum128) {
                Ok(v) => Some(Num::Int(v)),
                Err(_) => {
                    reasons.insert("sum".into(), format!("the sum {sum128} overflows i64"));
                    None
                }
            }
        };
        let avg = (!values.is_empty()).then(|| sum128 as f64 / values.len() as f64);
        // Percentiles by selection on a copy (the values a sorted copy would hold there;
        // i64 → f64 keeps the order).
        let n = values.len();
        let mut scratch = values.to_vec();
        // i64 → u64 with the sign bit flipped keeps the order.
        let key = |v: i64| (v as u64) ^ (1 << 63);
        let min = values.iter().copied().min();
        let max = values.iter().copied().max();
        let keys = (min.map_or(u64::MAX, key), max.map_or(0, key));
        let chosen = select_ranks_by_key(&mut scratch, &ranks_for(n, &[P01, P50, P99]), key, keys);
        let pct = |q| {
            interpolate(
                n as u64,
                q,
                |rank| selected(&chosen, rank).map(|v| v as f64),
                f64::NAN,
            )
        };
        let p01 = record(&mut reasons, "p01", pct(P01));
        let p50 = record(&mut reasons, "p50", pct(P50));
        let p99 = record(&mut reasons, "p99", pct(P99));
        Self::finish(
            kind,
            sum,
            avg,
            min.map(Num::Int),
            max.map(Num::Int),
            [p01, p50, p99],
            last,
            values.len() as u64,
            reasons,
        )
    }

    /// Statistics over float values in frame order (non-finite values are skipped). Every
    /// statistic is finite or null: a sum beyond the range of f64 is null, with the reason
    /// in `null_reasons`, and the mean is then taken without the overflowing sum.
    pub fn of_floats(kind: crate::model::CounterKind, values: &[f64]) -> Self {
        let mut reasons = NullReasons::new();
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let last = finite.last().copied().map(Num::Float);
        let mut sorted = finite.clone();
        sorted.sort_by(f64::total_cmp);
        let sum: f64 = finite.iter().sum();
        let as_f: Vec<AsF64> = sorted.iter().map(|&v| AsF64(v)).collect();
        let p01 = record(&mut reasons, "p01", percentile(&as_f, P01));
        let p50 = record(&mut reasons, "p50", percentile(&as_f, P50));
        let p99 = record(&mut reasons, "p99", percentile(&as_f, P99));
        let (sum, avg) = match (sorted.first(), sorted.last()) {
            (Some(&min), Some(&max)) if !sum.is_finite() => {
                reasons.insert("sum".into(), SUM_OVERFLOWS_F64.to_owned());
                (None, Some(mean_beyond_f64(&finite, min, max)))
            }
            (Some(_), Some(_)) => (Some(Num::Float(sum)), Some(sum / finite.len() as f64)),
            _ => {
                reasons.insert("sum".into(), NullReason::Empty.to_string());
                (None, None)
            }
        };
        Self::finish(
            kind,
            sum,
            avg,
            sorted.first().copied().map(Num::Float),
            sorted.last().copied().map(Num::Float),
            [p01, p50, p99],
            last,
            finite.len() as u64,
            reasons,
        )
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "a private constructor for one struct"
    )]
    fn finish(
        kind: crate::model::CounterKind,
        sum: Option<Num>,
        avg: Option<f64>,
        min: Option<Num>,
        max: Option<Num>,
        [p01, p50, p99]: [Option<f64>; 3],
        last: Option<Num>,
        count: u64,
        mut reasons: NullReasons,
    ) -> Self {
        if count == 0 {
            for name in ["avg", "min", "max", "last"] {
                reasons.insert(name.into(), NullReason::Empty.to_string());
            }
        }
        // A gauge's level summed over frames is no figure of anything: it is left out,
        // whatever the values were (an empty gauge says so too).
        let sum = match kind {
            crate::model::CounterKind::Sum => sum,
            crate::model::CounterKind::Gauge => {
                reasons.insert("sum".into(), GAUGE_HAS_NO_SUM.to_owned());
                None
            }
        };
        Self {
            kind,
            sum,
            avg,
            min,
            max,
            p01,
            p50,
            p99,
            last,
            count,
            null_reasons: reasons,
        }
    }
}
