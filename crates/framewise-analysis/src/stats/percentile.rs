//! Percentiles: the quantiles, the null rule, and selection without a full sort.

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
pub(crate) fn interpolate(
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
    let step = b - a;
    if step.is_finite() {
        Ok(a + step * frac)
    } else {
        // Two values of opposite signs so large that their difference overflows f64: the
        // same point, as a weighted mean of the two (which cannot overflow).
        Ok(a * (1.0 - frac) + b * frac)
    }
}

/// The ranks (0-based, ascending, without repeats) whose values the percentiles `qs` of
/// `n` values interpolate between: what [`interpolate`] reads.
pub(crate) fn ranks_for(n: usize, qs: &[Quantile]) -> Vec<usize> {
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
pub(crate) fn select_ranks<T: Ord + Copy>(values: &mut [T], ranks: &[usize]) -> Vec<(usize, T)> {
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
pub(crate) fn select_ranks_by_key<T: Ord + Copy>(
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
pub(crate) fn selected<T: Copy>(selected: &[(usize, T)], rank: usize) -> Option<T> {
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

pub(crate) fn pct_u64(sorted_ns: &[u64], q: Quantile) -> Result<f64, NullReason> {
    // Interpolating directly on u64 avoids converting the whole column.
    interpolate(
        sorted_ns.len() as u64,
        q,
        |rank| sorted_ns.get(rank).map(|&v| v as f64),
        0.0,
    )
}
