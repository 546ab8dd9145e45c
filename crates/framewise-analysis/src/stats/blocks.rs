//! The `frame` and `work` blocks of a summary.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::percentile::pct_u64;
use super::{
    mean_ns, ms, record, Classification, NullReason, NullReasons, Quantile, TimeStats, P99, P999,
};

/// The `frame` block: statistics over periods, with fps and lows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameBlock {
    /// Count, mean, extremes, percentiles, ms.
    #[serde(flatten)]
    pub times: TimeStats,
    /// 1000 / avg.
    pub fps: Option<f64>,
    /// 1000 / mean of the frame times at or above p99.
    pub low_1pct_fps: Option<f64>,
    /// 1000 / mean of the frame times at or above p99.9.
    pub low_01pct_fps: Option<f64>,
    /// Classifier output.
    #[serde(flatten)]
    pub classifier: Classification,
    /// Why each null statistic is null.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub null_reasons: NullReasons,
}

pub(crate) fn low_fps(sorted_ns: &[u64], q: Quantile) -> Result<f64, NullReason> {
    let threshold = pct_u64(sorted_ns, q)?;
    let from = sorted_ns.partition_point(|&v| (v as f64) < threshold);
    let tail = sorted_ns.get(from..).unwrap_or(&[]);
    let mean = mean_ns(tail).ok_or(NullReason::Empty)?;
    if mean <= 0.0 {
        return Err(NullReason::Other("the tail's mean frame time is 0".into()));
    }
    Ok(1000.0 / ms(mean))
}

impl FrameBlock {
    /// The frame block over frame periods in ns (any order; sorted here), with the
    /// classifier judged on the same frames' work times against `budget_ns` (lite-profiler's
    /// frame time is work: begin to end).
    pub fn of_periods_ns(mut periods_ns: Vec<u64>, work_ns: &[u64], budget_ns: u64) -> Self {
        periods_ns.sort_unstable();
        let mut reasons = NullReasons::new();
        let times = TimeStats::from_sorted_ns(&periods_ns, &mut reasons);
        let fps = match times.avg {
            Some(avg) if avg > 0.0 => Some(1000.0 / avg),
            Some(_) => {
                reasons.insert("fps".into(), "the mean frame time is 0".into());
                None
            }
            None => {
                reasons.insert("fps".into(), NullReason::Empty.to_string());
                None
            }
        };
        let low_1pct_fps = record(&mut reasons, "low_1pct_fps", low_fps(&periods_ns, P99));
        let low_01pct_fps = record(&mut reasons, "low_01pct_fps", low_fps(&periods_ns, P999));
        let classifier = Classification::of_work_ns(work_ns, budget_ns, &mut reasons);
        Self {
            times,
            fps,
            low_1pct_fps,
            low_01pct_fps,
            classifier,
            null_reasons: reasons,
        }
    }
}

/// The `work` block: the same statistics over work times (no fps: a work time is not a
/// frame rate).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkBlock {
    /// Count, mean, extremes, percentiles, ms.
    #[serde(flatten)]
    pub times: TimeStats,
    /// Classifier output over work times.
    #[serde(flatten)]
    pub classifier: Classification,
    /// Why each null statistic is null.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub null_reasons: NullReasons,
}

impl WorkBlock {
    /// The work block over work times in ns (any order), classified against `budget_ns`.
    pub fn of_work_ns(mut work_ns: Vec<u64>, budget_ns: u64) -> Self {
        work_ns.sort_unstable();
        let mut reasons = NullReasons::new();
        let times = TimeStats::from_sorted_ns(&work_ns, &mut reasons);
        let classifier = Classification::of_work_ns(&work_ns, budget_ns, &mut reasons);
        Self {
            times,
            classifier,
            null_reasons: reasons,
        }
    }
}
