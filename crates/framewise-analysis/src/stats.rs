//! Statistics, exactly as docs/CONCEPTS.md ("Statistics", "The frame classifier") defines them.
//!
//! - Percentiles interpolate linearly between the closest ranks at `(n − 1) · p`.
//! - A percentile is null, with a reason, when fewer than one value lies beyond it in its
//!   tail: `n · min(p, 1 − p) < 1` (p99 and p01 need 100 values, p99.9 needs 1000, p50
//!   needs 2).
//! - 1% / 0.1% low fps is the low average: 1000 / the mean of the frame times at or above
//!   the p99 / p99.9 frame time.
//! - The classifier buckets frame times into `<2, 2–4, 4–8, 8–16, 16–33, 33–66, ≥66 ms`;
//!   jank is a frame ≥ 16 ms, a spike one ≥ 33 ms; STEADY / SPIKING (jank ratio ≥ 0.05) /
//!   THROTTLED (jank ratio ≥ 0.25).
//!
//! Values enter as integer nanoseconds and leave as milliseconds.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Nanoseconds per millisecond.
pub const NS_PER_MS: f64 = 1_000_000.0;

/// A percentile, in parts per ten thousand (so p99.9 is exact).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Quantile(pub u32);

/// p1.
pub const P01: Quantile = Quantile(100);
/// p50, the median.
pub const P50: Quantile = Quantile(5_000);
/// p90.
pub const P90: Quantile = Quantile(9_000);
/// p95.
pub const P95: Quantile = Quantile(9_500);
/// p99.
pub const P99: Quantile = Quantile(9_900);
/// p99.9.
pub const P999: Quantile = Quantile(9_990);

impl Quantile {
    /// The fewest values for which this percentile is defined: at least one value must lie
    /// beyond it in its tail.
    pub fn required_count(self) -> u64 {
        let tail = self.0.min(10_000 - self.0.min(10_000)) as u64;
        if tail == 0 {
            return u64::MAX;
        }
        10_000u64.div_ceil(tail)
    }

    /// The metric name (`p01`, `p50`, `p999`).
    pub fn name(self) -> String {
        match self.0 {
            100 => "p01".into(),
            9_990 => "p999".into(),
            q if q % 100 == 0 => format!("p{:02}", q / 100),
            q => format!("p{q}"),
        }
    }
}

/// Why a statistic is null.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NullReason {
    /// No values at all.
    Empty,
    /// Too few values for the percentile.
    TooFew {
        /// Values needed.
        needed: u64,
        /// Values available.
        have: u64,
    },
    /// Something else, stated.
    Other(String),
}

impl std::fmt::Display for NullReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => write!(f, "no values"),
            Self::TooFew { needed, have } => write!(
                f,
                "needs at least {needed} values (one beyond it), have {have}"
            ),
            Self::Other(s) => f.write_str(s),
        }
    }
}

/// The percentile `q` of ascending `sorted` values, interpolated at `(n − 1) · q`.
pub fn percentile<T: Copy + Into<f64>>(sorted: &[T], q: Quantile) -> Result<f64, NullReason> {
    interpolate(
        sorted.len() as u64,
        q,
        |rank| sorted.get(rank).copied().map(Into::into),
        f64::NAN,
    )
}

/// The percentile `q` of `n` values, interpolated at `(n − 1) · q` between the values at
/// the two closest ranks, which `at(rank)` gives (as a sorted slice would).
fn interpolate(
    n: u64,
    q: Quantile,
    at: impl Fn(usize) -> Option<f64>,
    missing: f64,
) -> Result<f64, NullReason> {
    if n == 0 {
        return Err(NullReason::Empty);
    }
    let needed = q.required_count();
    if n < needed {
        return Err(NullReason::TooFew { needed, have: n });
    }
    let num = (n - 1) * u64::from(q.0);
    let lo = (num / 10_000) as usize;
    let frac = (num % 10_000) as f64 / 10_000.0;
    let a = at(lo).unwrap_or(missing);
    let b = at(lo + 1).unwrap_or(a);
    Ok(a + (b - a) * frac)
}

/// The ranks (0-based, ascending, without repeats) whose values the percentiles `qs` of
/// `n` values interpolate between: what [`interpolate`] reads.
fn ranks_for(n: usize, qs: &[Quantile]) -> Vec<usize> {
    let mut ranks = Vec::with_capacity(2 * qs.len());
    for &q in qs {
        if n == 0 || (n as u64) < q.required_count() {
            continue;
        }
        let lo = ((n as u64 - 1) * u64::from(q.0) / 10_000) as usize;
        ranks.push(lo);
        if lo + 1 < n {
            ranks.push(lo + 1);
        }
    }
    ranks.sort_unstable();
    ranks.dedup();
    ranks
}

/// The values at `ranks` (ascending, each below `values.len()`) of `values` in ascending
/// order — what a sorted copy would hold there — found by selection, which reorders
/// `values` but does not sort it: linear time where a sort is `n log n`.
///
/// ```text
/// values [5, 1, 4, 2, 3], ranks [0, 2] → [(0, 1), (2, 3)]
/// ```
fn select_ranks<T: Ord + Copy>(values: &mut [T], ranks: &[usize]) -> Vec<(usize, T)> {
    fn go<T: Ord + Copy>(
        values: &mut [T],
        base: usize,
        ranks: &[usize],
        out: &mut Vec<(usize, T)>,
    ) {
        let mid = ranks.len() / 2;
        let Some(&rank) = ranks.get(mid) else {
            return;
        };
        let Some(at) = rank.checked_sub(base).filter(|&at| at < values.len()) else {
            return;
        };
        // The middle rank first: the ranks below it lie in the left part, the others in
        // the right, so each is found in a shrinking range.
        let (left, value, right) = values.select_nth_unstable(at);
        let value = *value;
        go(left, base, ranks.get(..mid).unwrap_or(&[]), out);
        out.push((rank, value));
        go(right, rank + 1, ranks.get(mid + 1..).unwrap_or(&[]), out);
    }
    let mut out = Vec::with_capacity(ranks.len());
    go(values, 0, ranks, &mut out);
    out
}

/// [`select_ranks`] for values with an order-preserving integer `key` (`a ≤ b` exactly
/// when `key(a) ≤ key(b)`) whose keys lie in `lo..=hi`, taking a shortcut on large inputs: one pass counts the values
/// in 2048 buckets of equal key width, a second keeps only the values in the buckets
/// that hold the wanted ranks, and the selection runs on those alone (their order among
/// themselves is their order in the whole, shifted by the values in lower buckets).
fn select_ranks_by_key<T: Ord + Copy>(
    values: &mut [T],
    ranks: &[usize],
    key: impl Fn(T) -> u64,
    (lo, hi): (u64, u64),
) -> Vec<(usize, T)> {
    const BUCKET_BITS: u32 = 11;
    const SMALL: usize = 1 << 12;
    let n = values.len();
    if ranks.is_empty() || n < SMALL || ranks.iter().any(|&r| r >= n) || lo > hi {
        return select_ranks(values, ranks);
    }
    let shift = (u64::BITS - (hi - lo).leading_zeros()).saturating_sub(BUCKET_BITS);
    let bucket = |v: T| ((key(v) - lo) >> shift) as usize;
    let mut counts = vec![0usize; 1 << BUCKET_BITS];
    for &v in values.iter() {
        if let Some(c) = counts.get_mut(bucket(v)) {
            *c += 1;
        }
    }
    // Each wanted rank's bucket, and how many values lie in lower buckets.
    let mut wanted = vec![false; counts.len()];
    let mut below = Vec::with_capacity(ranks.len());
    let mut start = 0usize;
    let mut b = 0usize;
    for &r in ranks {
        while let Some(&c) = counts.get(b) {
            if start + c > r {
                break;
            }
            start += c;
            b += 1;
        }
        if let Some(w) = wanted.get_mut(b) {
            *w = true;
        }
        below.push((r, b, start));
    }
    let mut kept: Vec<T> = Vec::new();
    for &v in values.iter() {
        if wanted.get(bucket(v)).copied().unwrap_or(false) {
            kept.push(v);
        }
    }
    // A rank's position among the kept values: the values of lower wanted buckets, then
    // its place within its own bucket.
    let mut kept_below = vec![0usize; counts.len()];
    let mut acc = 0usize;
    for (b, (&w, &c)) in wanted.iter().zip(&counts).enumerate() {
        if w {
            kept_below[b] = acc;
            acc += c;
        }
    }
    let local: Vec<usize> = below
        .iter()
        .map(|&(r, b, start)| kept_below[b] + (r - start))
        .collect();
    select_ranks(&mut kept, &local)
        .into_iter()
        .zip(&below)
        .map(|((_, v), &(r, _, _))| (r, v))
        .collect()
}

/// The value at `rank` among the selected ones.
fn selected<T: Copy>(selected: &[(usize, T)], rank: usize) -> Option<T> {
    selected
        .binary_search_by_key(&rank, |&(r, _)| r)
        .ok()
        .and_then(|at| selected.get(at))
        .map(|&(_, v)| v)
}

/// Integer values as f64 for [`percentile`]; `u64` does not implement `Into<f64>`.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct AsF64(pub f64);

impl From<AsF64> for f64 {
    fn from(v: AsF64) -> f64 {
        v.0
    }
}

fn pct_u64(sorted_ns: &[u64], q: Quantile) -> Result<f64, NullReason> {
    // Interpolating directly on u64 avoids converting the whole column.
    interpolate(
        sorted_ns.len() as u64,
        q,
        |rank| sorted_ns.get(rank).map(|&v| v as f64),
        0.0,
    )
}

/// Reasons for null statistics, by metric name.
pub type NullReasons = BTreeMap<String, String>;

fn ms(ns: f64) -> f64 {
    ns / NS_PER_MS
}

fn record<T>(reasons: &mut NullReasons, name: &str, r: Result<T, NullReason>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            reasons.insert(name.to_owned(), e.to_string());
            None
        }
    }
}

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
const TIME_QUANTILES: [Quantile; 6] = [P01, P50, P90, P95, P99, P999];

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

/// The classifier's label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum FrameClass {
    /// Jank ratio below 0.05.
    Steady,
    /// Jank ratio at least 0.05.
    Spiking,
    /// Jank ratio at least 0.25.
    Throttled,
}

/// One classifier bucket.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    /// The bucket as written in docs/CONCEPTS.md (`<2`, `2-4`, …, `>=66`), ms.
    pub range: String,
    /// Frames in it.
    pub count: u64,
}

/// Bucket edges, ns: `<2, 2–4, 4–8, 8–16, 16–33, 33–66, ≥66 ms`.
pub const BIN_EDGES_NS: [u64; 6] = [
    2_000_000, 4_000_000, 8_000_000, 16_000_000, 33_000_000, 66_000_000,
];
/// A frame at or above this is jank, ns.
pub const JANK_NS: u64 = 16_000_000;
/// A frame at or above this is a spike, ns.
pub const SPIKE_NS: u64 = 33_000_000;
/// Jank ratio at which a capture is SPIKING.
pub const SPIKING_RATIO: f64 = 0.05;
/// Jank ratio at which a capture is THROTTLED.
pub const THROTTLED_RATIO: f64 = 0.25;

const BIN_LABELS: [&str; 7] = ["<2", "2-4", "4-8", "8-16", "16-33", "33-66", ">=66"];

/// The classifier's output: a label with its ratios and bucket counts, not a verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    /// Frames ≥ 16 ms over frames.
    pub jank_ratio: Option<f64>,
    /// Frames ≥ 33 ms over frames.
    pub spike_ratio: Option<f64>,
    /// STEADY, SPIKING or THROTTLED.
    pub class: Option<FrameClass>,
    /// Bucket counts.
    pub bins: Vec<Bin>,
}

impl Classification {
    /// Classifies ascending or unordered frame times in ns.
    pub fn of_ns(values_ns: &[u64], reasons: &mut NullReasons) -> Self {
        let mut counts = [0u64; 7];
        let mut jank = 0u64;
        let mut spike = 0u64;
        for &v in values_ns {
            let bucket = BIN_EDGES_NS.partition_point(|&edge| edge <= v);
            counts[bucket] += 1;
            jank += u64::from(v >= JANK_NS);
            spike += u64::from(v >= SPIKE_NS);
        }
        let bins = BIN_LABELS
            .iter()
            .zip(counts)
            .map(|(label, count)| Bin {
                range: (*label).to_owned(),
                count,
            })
            .collect();
        let n = values_ns.len() as f64;
        if values_ns.is_empty() {
            for name in ["jank_ratio", "spike_ratio", "class"] {
                reasons.insert(name.to_owned(), NullReason::Empty.to_string());
            }
            return Self {
                jank_ratio: None,
                spike_ratio: None,
                class: None,
                bins,
            };
        }
        let jank_ratio = jank as f64 / n;
        let class = if jank_ratio >= THROTTLED_RATIO {
            FrameClass::Throttled
        } else if jank_ratio >= SPIKING_RATIO {
            FrameClass::Spiking
        } else {
            FrameClass::Steady
        };
        Self {
            jank_ratio: Some(jank_ratio),
            spike_ratio: Some(spike as f64 / n),
            class: Some(class),
            bins,
        }
    }
}

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

fn low_fps(sorted_ns: &[u64], q: Quantile) -> Result<f64, NullReason> {
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
    /// The frame block over frame periods in ns (any order; sorted here).
    pub fn of_periods_ns(mut periods_ns: Vec<u64>) -> Self {
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
        let classifier = Classification::of_ns(&periods_ns, &mut reasons);
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
    /// The work block over work times in ns (any order).
    pub fn of_work_ns(mut work_ns: Vec<u64>) -> Self {
        work_ns.sort_unstable();
        let mut reasons = NullReasons::new();
        let times = TimeStats::from_sorted_ns(&work_ns, &mut reasons);
        let classifier = Classification::of_ns(&work_ns, &mut reasons);
        Self {
            times,
            classifier,
            null_reasons: reasons,
        }
    }
}

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
    /// Exact sum over frames (null if it does not fit in i64).
    pub sum: Option<Num>,
    /// Mean per frame.
    pub avg: Option<f64>,
    /// Smallest.
    pub min: Option<Num>,
    /// Largest.
    pub max: Option<Num>,
    /// p1.
    pub p01: Option<f64>,
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
        let chosen = select_ranks_by_key(&mut scratch, &ranks_for(n, &[P01, P99]), key, keys);
        let pct = |q| {
            interpolate(
                n as u64,
                q,
                |rank| selected(&chosen, rank).map(|v| v as f64),
                f64::NAN,
            )
        };
        let p01 = record(&mut reasons, "p01", pct(P01));
        let p99 = record(&mut reasons, "p99", pct(P99));
        Self::finish(
            kind,
            sum,
            avg,
            min.map(Num::Int),
            max.map(Num::Int),
            p01,
            p99,
            last,
            values.len() as u64,
            reasons,
        )
    }

    /// Statistics over float values in frame order (non-finite values are skipped).
    pub fn of_floats(kind: crate::model::CounterKind, values: &[f64]) -> Self {
        let mut reasons = NullReasons::new();
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let last = finite.last().copied().map(Num::Float);
        let mut sorted = finite.clone();
        sorted.sort_by(f64::total_cmp);
        let sum: f64 = finite.iter().sum();
        let as_f: Vec<AsF64> = sorted.iter().map(|&v| AsF64(v)).collect();
        let p01 = record(&mut reasons, "p01", percentile(&as_f, P01));
        let p99 = record(&mut reasons, "p99", percentile(&as_f, P99));
        if finite.is_empty() {
            reasons.insert("sum".into(), NullReason::Empty.to_string());
        }
        Self::finish(
            kind,
            (!finite.is_empty()).then_some(Num::Float(sum)),
            (!finite.is_empty()).then(|| sum / finite.len() as f64),
            sorted.first().copied().map(Num::Float),
            sorted.last().copied().map(Num::Float),
            p01,
            p99,
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
        p01: Option<f64>,
        p99: Option<f64>,
        last: Option<Num>,
        count: u64,
        mut reasons: NullReasons,
    ) -> Self {
        if count == 0 {
            for name in ["avg", "min", "max", "last"] {
                reasons.insert(name.into(), NullReason::Empty.to_string());
            }
        }
        Self {
            kind,
            sum,
            avg,
            min,
            max,
            p01,
            p99,
            last,
            count,
            null_reasons: reasons,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_counts() {
        assert_eq!(P99.required_count(), 100);
        assert_eq!(P999.required_count(), 1000);
        assert_eq!(P01.required_count(), 100);
        assert_eq!(P50.required_count(), 2);
        assert_eq!(P95.required_count(), 20);
        assert_eq!(P90.required_count(), 10);
    }

    #[test]
    fn names() {
        assert_eq!(P01.name(), "p01");
        assert_eq!(P50.name(), "p50");
        assert_eq!(P999.name(), "p999");
    }

    #[test]
    fn interpolates_at_n_minus_one_p() {
        let v: Vec<AsF64> = (1..=100).map(|i| AsF64(i as f64)).collect();
        // (100 − 1) × 0.99 = 98.01 → 99 + 0.01 × (100 − 99)
        let p = percentile(&v, P99).expect("100 values");
        assert!((p - 99.01).abs() < 1e-9, "{p}");
        let p = percentile(&v, P50).expect("100 values");
        assert!((p - 50.5).abs() < 1e-9, "{p}");
        assert_eq!(
            percentile(&v[..99], P99),
            Err(NullReason::TooFew {
                needed: 100,
                have: 99
            })
        );
    }

    #[test]
    fn lows_are_low_averages() {
        // 99 frames of 10 ms, one of 100 ms: p99 = 10 + 0.01 × 90 = 10.9 ms; only the
        // 100 ms frame is at or above it, so the 1% low is 10 fps.
        let mut v = vec![10_000_000u64; 99];
        v.push(100_000_000);
        let b = FrameBlock::of_periods_ns(v);
        assert_eq!(b.low_1pct_fps, Some(10.0));
        assert_eq!(b.low_01pct_fps, None);
        assert!(b.null_reasons["low_01pct_fps"].contains("1000"));
        assert_eq!(b.times.count, 100);
        assert_eq!(b.classifier.class, Some(FrameClass::Steady));
    }

    #[test]
    fn classifier_buckets_and_labels() {
        let v: Vec<u64> = [1.0, 2.0, 3.9, 4.0, 8.0, 16.0, 32.9, 33.0, 66.0, 100.0]
            .iter()
            .map(|ms| (ms * 1e6) as u64)
            .collect();
        let mut r = NullReasons::new();
        let c = Classification::of_ns(&v, &mut r);
        let counts: Vec<u64> = c.bins.iter().map(|b| b.count).collect();
        assert_eq!(counts, vec![1, 2, 1, 1, 2, 1, 2]);
        assert_eq!(c.jank_ratio, Some(0.5));
        assert_eq!(c.spike_ratio, Some(0.3));
        assert_eq!(c.class, Some(FrameClass::Throttled));
        let spiking: Vec<u64> = (0..100)
            .map(|i| if i < 5 { 20_000_000 } else { 1_000_000 })
            .collect();
        let c = Classification::of_ns(&spiking, &mut r);
        assert_eq!(c.class, Some(FrameClass::Spiking));
    }

    #[test]
    fn counters_are_exact() {
        let c = CounterStats::of_integers(
            crate::model::CounterKind::Sum,
            &[i64::MAX / 2, i64::MAX / 2, 1],
        );
        assert_eq!(c.sum, Some(Num::Int(i64::MAX)));
        assert_eq!(c.last, Some(Num::Int(1)));
        assert_eq!(c.min, Some(Num::Int(1)));
        let c = CounterStats::of_integers(crate::model::CounterKind::Sum, &[i64::MAX, 1]);
        assert_eq!(c.sum, None);
        assert!(c.null_reasons["sum"].contains("overflows"));
    }

    #[test]
    fn empty_is_null_with_reasons() {
        let b = FrameBlock::of_periods_ns(Vec::new());
        assert_eq!(b.times.count, 0);
        assert_eq!(b.times.avg, None);
        assert_eq!(b.fps, None);
        assert_eq!(b.classifier.class, None);
        assert!(b.null_reasons.contains_key("avg"));
        assert!(b.null_reasons.contains_key("p50"));
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    /// Whether `select` finds, at the valid ranks among `picks`, what a sorted copy of
    /// `values` holds there.
    fn selects_as_sorted<T: Ord + Copy>(
        values: &[T],
        picks: &[usize],
        select: impl Fn(&mut [T], &[usize]) -> Vec<(usize, T)>,
    ) -> bool {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let mut ranks: Vec<usize> = picks
            .iter()
            .copied()
            .filter(|&r| r < values.len())
            .collect();
        ranks.sort_unstable();
        ranks.dedup();
        let want: Vec<(usize, T)> = ranks.iter().map(|&r| (r, sorted[r])).collect();
        select(&mut values.to_vec(), &ranks) == want
    }

    proptest! {
        #[test]
        fn percentiles_are_monotone_and_bounded(mut v in proptest::collection::vec(0u64..1_000_000_000, 1..400)) {
            v.sort_unstable();
            let mut last = f64::MIN;
            for q in [P01, P50, P90, P95, P99, P999] {
                if let Ok(p) = pct_u64(&v, q) {
                    prop_assert!(p >= last);
                    prop_assert!(p >= v[0] as f64 && p <= v[v.len() - 1] as f64);
                    last = p;
                }
            }
        }

        #[test]
        fn selection_finds_what_a_sort_puts_there(
            v in proptest::collection::vec(0u64..1_000, 0..600),
            picks in proptest::collection::vec(0usize..600, 0..12),
        ) {
            prop_assert!(selects_as_sorted(&v, &picks, select_ranks));
        }

        #[test]
        fn unsorted_time_stats_are_the_sorted_ones(
            wide in proptest::collection::vec(0u64..u64::MAX / 4096, 0..2500),
            narrow in proptest::collection::vec(0u64..40, 0..2500),
        ) {
            for v in [wide, narrow] {
                let mut sorted = v.clone();
                sorted.sort_unstable();
                let mut want_reasons = NullReasons::new();
                let want = TimeStats::from_sorted_ns(&sorted, &mut want_reasons);
                let mut got_reasons = NullReasons::new();
                let mut w = v.clone();
                let (got, sum) =
                    TimeStats::from_unsorted_ns(&mut w, &TIME_QUANTILES, &mut got_reasons);
                prop_assert_eq!(sum, v.iter().map(|&x| u128::from(x)).sum::<u128>());
                prop_assert_eq!(got, want);
                prop_assert_eq!(got_reasons, want_reasons);
            }
        }

        #[test]
        fn counter_stats_match_a_sorted_reference(
            v in proptest::collection::vec(-3_000i64..3_000, 0..400),
        ) {
            // The reference: what of_integers computed before it selected instead of
            // sorting.
            let c = CounterStats::of_integers(crate::model::CounterKind::Sum, &v);
            let mut sorted = v.clone();
            sorted.sort_unstable();
            let as_f: Vec<AsF64> = sorted.iter().map(|&x| AsF64(x as f64)).collect();
            prop_assert_eq!(c.min, sorted.first().copied().map(Num::Int));
            prop_assert_eq!(c.max, sorted.last().copied().map(Num::Int));
            prop_assert_eq!(c.p01, percentile(&as_f, P01).ok());
            prop_assert_eq!(c.p99, percentile(&as_f, P99).ok());
        }

        #[test]
        fn bins_partition_every_frame(v in proptest::collection::vec(0u64..200_000_000, 0..300)) {
            let mut r = NullReasons::new();
            let c = Classification::of_ns(&v, &mut r);
            prop_assert_eq!(c.bins.iter().map(|b| b.count).sum::<u64>(), v.len() as u64);
        }
    }

    proptest! {
        // Inputs past the bucketing threshold are large: fewer cases.
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn bucketed_selection_finds_what_a_sort_puts_there(
            v in proptest::collection::vec(
                prop_oneof![0u64..50, 0u64..u64::MAX, Just(u64::MAX), 1_000u64..1_200],
                4096..9000,
            ),
            signed in proptest::collection::vec(any::<i64>(), 4096..5000),
            picks in proptest::collection::vec(0usize..9000, 1..12),
        ) {
            let keys = (v.iter().min().copied(), v.iter().max().copied());
            let keys = (keys.0.unwrap_or(u64::MAX), keys.1.unwrap_or(0));
            let by_key = |w: &mut [u64], ranks: &[usize]| select_ranks_by_key(w, ranks, |x| x, keys);
            prop_assert!(selects_as_sorted(&v, &picks, by_key));
            let key = |x: i64| (x as u64) ^ (1 << 63);
            let keys = (signed.iter().min().map_or(u64::MAX, |&x| key(x)), signed.iter().max().map_or(0, |&x| key(x)));
            let by_key = |w: &mut [i64], ranks: &[usize]| select_ranks_by_key(w, ranks, key, keys);
            prop_assert!(selects_as_sorted(&signed, &picks, by_key));
        }

    }
}
