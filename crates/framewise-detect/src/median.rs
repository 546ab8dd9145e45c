//! The median: the one implementation behind the hitch rule's rolling median and the
//! analysis's capture-wide baselines.
//!
//! With an odd count the median is the middle value; with an even count it is the mean of
//! the two middle values, rounded down (towards negative infinity). With no values there
//! is no median (`None`).

/// A value two of which can be averaged exactly as the median needs.
pub trait Midpoint: Copy + Ord {
    /// `⌊(lo + hi) / 2⌋` for `lo ≤ hi`, without overflow.
    fn midpoint_down(lo: Self, hi: Self) -> Self;
}

impl Midpoint for u64 {
    fn midpoint_down(lo: Self, hi: Self) -> Self {
        lo + (hi - lo) / 2
    }
}

impl Midpoint for i64 {
    fn midpoint_down(lo: Self, hi: Self) -> Self {
        // Through i128: `hi - lo` overflows i64 for values of opposite sign far apart.
        let mid = (i128::from(lo) + i128::from(hi)).div_euclid(2);
        // Between lo and hi, so always in range.
        i64::try_from(mid).unwrap_or(lo)
    }
}

/// The median of `n` values given in ascending order by `at` (`at(i)` for `i < n`).
pub fn median_by<T: Midpoint>(n: usize, at: impl Fn(usize) -> T) -> Option<T> {
    if n == 0 {
        return None;
    }
    let hi = at(n / 2);
    if n % 2 == 1 {
        Some(hi)
    } else {
        Some(T::midpoint_down(at(n / 2 - 1), hi))
    }
}

/// The median of an ascending slice.
pub fn median_of_sorted<T: Midpoint>(sorted: &[T]) -> Option<T> {
    median_by(sorted.len(), |i| sorted[i])
}

/// The median of `values` in any order (sorts them in place).
pub fn median<T: Midpoint>(values: &mut [T]) -> Option<T> {
    values.sort_unstable();
    median_of_sorted(values)
}

/// The median of `values` (any order; sorted in place) plus `zeros` implicit zeros: a
/// per-frame quantity over frames where it was absent. 0 when there are no values at all.
pub fn median_with_zeros(values: &mut [u64], zeros: usize) -> u64 {
    values.sort_unstable();
    let at = |i: usize| -> u64 {
        if i < zeros {
            0
        } else {
            values.get(i - zeros).copied().unwrap_or(0)
        }
    };
    median_by(values.len() + zeros, at).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_counts() {
        assert_eq!(median(&mut [3u64, 1, 2]), Some(2));
        assert_eq!(median(&mut [10u64, 20]), Some(15));
        assert_eq!(median(&mut [10u64, 21]), Some(15), "rounded down");
        assert_eq!(median::<u64>(&mut []), None);
    }

    #[test]
    fn even_i64_median_rounds_down() {
        assert_eq!(median(&mut [-3i64, 0]), Some(-2));
        assert_eq!(median(&mut [2i64, 5]), Some(3));
    }

    #[test]
    fn i64_median_of_extremes_does_not_overflow() {
        assert_eq!(median(&mut [i64::MIN, i64::MAX]), Some(-1));
        assert_eq!(median(&mut [i64::MAX, i64::MAX]), Some(i64::MAX));
        assert_eq!(median(&mut [i64::MIN, i64::MIN]), Some(i64::MIN));
    }

    #[test]
    fn median_counts_absent_values_as_zero() {
        assert_eq!(median_with_zeros(&mut [5, 7], 3), 0);
        assert_eq!(median_with_zeros(&mut [5, 7, 9], 1), 6);
        assert_eq!(median_with_zeros(&mut [], 0), 0);
    }
}
