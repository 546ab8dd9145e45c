//! [`ScopeStats`]: a scope's or a GPU pass's statistics over its per-frame totals.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{ms, NullReasons, TimeStats, P01, P50, P95, P99};

/// A scope's or a pass's statistics over its per-frame inclusive totals, in the frames in
/// which it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScopeStats {
    /// Frames in which it ran.
    pub count: u64,
    /// Sum of its per-frame inclusive totals, ms.
    pub total: f64,
    /// Sum of its self time, ms.
    #[serde(rename = "self")]
    pub self_ms: f64,
    /// Mean per-frame total, ms.
    pub avg: Option<f64>,
    /// Smallest per-frame total, ms.
    pub min: Option<f64>,
    /// p1 of per-frame totals, ms.
    pub p01: Option<f64>,
    /// Median per-frame total, ms.
    pub p50: Option<f64>,
    /// p95 of per-frame totals, ms.
    pub p95: Option<f64>,
    /// p99 of per-frame totals, ms.
    pub p99: Option<f64>,
    /// Largest per-frame total, ms.
    pub max: Option<f64>,
    /// Times it ran, over all those frames.
    pub calls: u64,
    /// Call sites (`file:line`), for scopes that carry them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sites: Vec<String>,
    /// Why each null statistic is null.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub null_reasons: NullReasons,
}

impl ScopeStats {
    /// Statistics from per-frame totals (ns, any order), summed self time and calls.
    pub fn of_totals_ns(
        mut totals_ns: Vec<u64>,
        self_ns: u64,
        calls: u64,
        sites: Vec<String>,
    ) -> Self {
        let mut reasons = NullReasons::new();
        // The scope block has no p90/p999.
        let (t, total) =
            TimeStats::from_unsorted_ns(&mut totals_ns, &[P01, P50, P95, P99], &mut reasons);
        Self {
            count: t.count,
            total: ms(total as f64),
            self_ms: ms(self_ns as f64),
            avg: t.avg,
            min: t.min,
            p01: t.p01,
            p50: t.p50,
            p95: t.p95,
            p99: t.p99,
            max: t.max,
            calls,
            sites,
            null_reasons: reasons,
        }
    }
}
