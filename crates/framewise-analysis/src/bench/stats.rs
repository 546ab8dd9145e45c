//! The statistics behind bench verdicts: medians, the noise floor, and Welch's t-test on
//! per-run values (the Student t distribution comes from `statrs`).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The consistency constant that makes the MAD estimate a normal distribution's standard
/// deviation.
pub const MAD_SCALE: f64 = 1.4826;

/// The median of `values` (the mean of the two middle values for an even count); `None`
/// when empty or when a value is not finite.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    })
}

/// The median absolute deviation from the median.
pub fn mad(values: &[f64]) -> Option<f64> {
    let m = median(values)?;
    let deviations: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    median(&deviations)
}

/// The noise floor of a metric across runs: `1.4826 · MAD / median`, a robust relative
/// spread (0.03 = runs typically differ by 3%). `None` with fewer than 2 runs or a median
/// of 0 (a relative spread of a zero has no meaning).
pub fn noise_floor(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = median(values)?;
    if m == 0.0 {
        return None;
    }
    Some(MAD_SCALE * mad(values)? / m.abs())
}

/// The arithmetic mean.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The sample variance (n − 1 in the denominator); `None` below 2 values.
pub fn variance(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values)?;
    Some(values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (values.len() - 1) as f64)
}

/// Welch's unequal-variance t-test of `after` against `before`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    /// `mean(after) − mean(before)`.
    pub difference: f64,
    /// The standard error of the difference.
    pub standard_error: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value (0 when both sides are constant and differ, 1 when they are
    /// constant and equal).
    pub p_value: f64,
    /// The two-sided critical t at the test's `alpha`: a difference is significant when
    /// `|difference| > t_critical · standard_error`.
    pub t_critical: f64,
}

/// Welch's t-test at significance `alpha` (two-sided); `None` with fewer than 2 values on a
/// side.
pub fn welch(before: &[f64], after: &[f64], alpha: f64) -> Option<Welch> {
    let (n1, n2) = (before.len() as f64, after.len() as f64);
    let (m1, m2) = (mean(before)?, mean(after)?);
    let (v1, v2) = (variance(before)?, variance(after)?);
    let (s1, s2) = (v1 / n1, v2 / n2);
    let se2 = s1 + s2;
    let difference = m2 - m1;
    if se2 <= 0.0 || !se2.is_finite() {
        // Both sides constant: the difference is exact.
        return Some(Welch {
            difference,
            standard_error: 0.0,
            df: n1 + n2 - 2.0,
            p_value: if difference == 0.0 { 1.0 } else { 0.0 },
            t_critical: 0.0,
        });
    }
    // Welch–Satterthwaite, with each side's share of the squared standard error in place of
    // the share itself: `se2² / (s1²/(n1-1) + s2²/(n2-1))` overflows to inf/inf for values
    // near 1e80, where the shares never do.
    let (r1, r2) = (s1 / se2, s2 / se2);
    let denominator = r1 * r1 / (n1 - 1.0) + r2 * r2 / (n2 - 1.0);
    let df = if denominator > 0.0 {
        1.0 / denominator
    } else {
        n1 + n2 - 2.0
    };
    let t_dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let standard_error = se2.sqrt();
    let t = difference / standard_error;
    let p_value = (2.0 * (1.0 - t_dist.cdf(t.abs()))).clamp(0.0, 1.0);
    let t_critical = t_dist.inverse_cdf(1.0 - alpha / 2.0);
    Some(Welch {
        difference,
        standard_error,
        df,
        p_value,
        t_critical,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_mad_and_noise_floor() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), Some(1.0));
        let nf = noise_floor(&[10.0, 10.0, 11.0, 9.0, 10.0]).expect("floor");
        assert!((nf - 0.0).abs() < 1e-12, "{nf}");
        let nf = noise_floor(&[9.0, 10.0, 11.0]).expect("floor");
        assert!((nf - 0.14826).abs() < 1e-9, "{nf}");
        assert_eq!(noise_floor(&[1.0]), None);
        assert_eq!(noise_floor(&[0.0, 0.0]), None);
    }

    #[test]
    fn welch_matches_a_textbook_case() {
        // Two samples with a known Welch result (computed by hand: t = -2.8284, df = 8).
        let a = [10.0, 11.0, 12.0, 13.0, 14.0];
        let b = [12.0, 13.0, 14.0, 15.0, 16.0];
        let w = welch(&a, &b, 0.05).expect("test");
        assert!((w.difference - 2.0).abs() < 1e-12);
        assert!((w.df - 8.0).abs() < 1e-9, "{}", w.df);
        assert!((w.standard_error - 1.0).abs() < 1e-12);
        // t = 2 with 8 df: two-sided p = 0.0805.
        assert!((w.p_value - 0.0805).abs() < 5e-4, "{}", w.p_value);
        assert!((w.t_critical - 2.306).abs() < 1e-3, "{}", w.t_critical);
    }

    #[test]
    fn constant_sides_are_exact() {
        let w = welch(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0], 0.05).expect("test");
        assert_eq!(w.p_value, 1.0);
        let w = welch(&[1.0, 1.0, 1.0], &[2.0, 2.0, 2.0], 0.05).expect("test");
        assert_eq!(w.p_value, 0.0);
        assert!(welch(&[1.0], &[2.0, 3.0], 0.05).is_none());
    }

    /// Values near 1e90 (inside what a result may hold) squared the squared standard error
    /// past f64: df was inf/inf, the test failed and the metric was dropped from a
    /// comparison. Scaled, the test is the same as on small values.
    #[test]
    fn huge_values_give_the_test_of_their_scaled_copies() {
        let a = [10.0, 11.0, 12.0, 13.0, 14.0];
        let b = [12.0, 13.0, 14.0, 15.0, 16.0];
        let scale = |v: &[f64]| v.iter().map(|x| x * 1e90).collect::<Vec<_>>();
        let small = welch(&a, &b, 0.05).expect("test");
        let huge = welch(&scale(&a), &scale(&b), 0.05).expect("test on huge values");
        assert!((huge.df - small.df).abs() < 1e-9, "{}", huge.df);
        assert!((huge.p_value - small.p_value).abs() < 1e-12);
    }
}
