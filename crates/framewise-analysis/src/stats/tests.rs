//! Unit tests of the statistics against hand-computed values.

use super::*;
use crate::hitch_rule::DEFAULT_BUDGET_NS;

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
    let b = FrameBlock::of_periods_ns(v.clone(), &v, DEFAULT_BUDGET_NS);
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
    let c = Classification::of_work_ns(&v, DEFAULT_BUDGET_NS, &mut r);
    let counts: Vec<u64> = c.bins.iter().map(|b| b.count).collect();
    assert_eq!(counts, vec![1, 2, 1, 1, 2, 1, 2]);
    assert_eq!(c.jank_ratio, Some(0.5));
    assert_eq!(c.spike_ratio, Some(0.3));
    assert_eq!(c.class, Some(FrameClass::Throttled));
    let spiking: Vec<u64> = (0..100)
        .map(|i| if i < 5 { 20_000_000 } else { 1_000_000 })
        .collect();
    let c = Classification::of_work_ns(&spiking, DEFAULT_BUDGET_NS, &mut r);
    assert_eq!(c.class, Some(FrameClass::Spiking));
}

#[test]
fn a_vsync_locked_60_hz_game_is_steady() {
    // Work 10–14 ms in a 16.67 ms period: the period is the budget, not jank. The old
    // classifier judged periods against a fixed 16 ms and called every frame jank
    // (THROTTLED).
    let work: Vec<u64> = (0..600).map(|i| 10_000_000 + (i % 5) * 1_000_000).collect();
    let periods = vec![16_666_667u64; 600];
    let b = FrameBlock::of_periods_ns(periods, &work, DEFAULT_BUDGET_NS);
    assert_eq!(b.classifier.class, Some(FrameClass::Steady));
    assert_eq!(b.classifier.jank_ratio, Some(0.0));
}

#[test]
fn thresholds_follow_the_budget_and_are_16_and_33_ms_at_60_hz() {
    assert_eq!(jank_threshold_ns(DEFAULT_BUDGET_NS), 16_000_000);
    assert_eq!(spike_threshold_ns(DEFAULT_BUDGET_NS), 33_000_000);
    // 120 Hz: 8.00 ms and 16.50 ms.
    assert_eq!(jank_threshold_ns(8_333_333), 7_999_999);
    assert_eq!(spike_threshold_ns(8_333_333), 16_499_999);
    let mut r = NullReasons::new();
    let c = Classification::of_work_ns(&[8_000_000, 7_000_000], 8_333_333, &mut r);
    assert_eq!(c.jank_ratio, Some(0.5));
    assert_eq!(spike_threshold_ns(u64::MAX), u64::MAX);
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
fn float_counters_that_overflow_a_sum_keep_a_finite_mean() {
    use crate::model::CounterKind;
    // Two samples of 1e308 and eight of 1: the sum is beyond f64, the mean is not.
    let mut values = vec![1e308, 1e308];
    values.extend([1.0; 8]);
    let c = CounterStats::of_floats(CounterKind::Sum, &values);
    assert_eq!(c.sum, None);
    assert_eq!(c.null_reasons["sum"], SUM_OVERFLOWS_F64);
    let avg = c.avg.expect("a mean of finite values is finite");
    assert!((avg - 2e307).abs() <= 2e307 * 1e-15, "{avg}");
    assert_eq!(c.max, Some(Num::Float(1e308)));
    assert_eq!(c.p50, Some(1.0));
    assert_eq!(c.count, 10);
    // A gauge has no sum whatever its values: its reason is the gauge's.
    let g = CounterStats::of_floats(CounterKind::Gauge, &values);
    assert_eq!(g.sum, None);
    assert_eq!(g.null_reasons["sum"], GAUGE_HAS_NO_SUM);
    assert_eq!(g.avg, c.avg);
    // Every value the largest: the mean is that value, not past it.
    let c = CounterStats::of_floats(CounterKind::Sum, &[f64::MAX; 3]);
    assert_eq!(c.avg, Some(f64::MAX));
    let c = CounterStats::of_floats(CounterKind::Sum, &[f64::MIN; 3]);
    assert_eq!(c.avg, Some(f64::MIN));
    // Extremes of opposite signs: the median between them is 0, not NaN or infinite.
    let c = CounterStats::of_floats(CounterKind::Gauge, &[f64::MIN, f64::MAX]);
    assert_eq!(c.p50, Some(0.0));
    assert_eq!(c.sum, None);
    assert_eq!(c.avg, Some(0.0));
    // A sum within range is the plain sum, as before.
    let c = CounterStats::of_floats(CounterKind::Sum, &[0.5, 0.25, f64::NAN, f64::INFINITY]);
    assert_eq!(
        (c.sum, c.avg, c.count),
        (Some(Num::Float(0.75)), Some(0.375), 2)
    );
    assert!(!c.null_reasons.contains_key("sum"));
}

#[test]
fn empty_is_null_with_reasons() {
    let b = FrameBlock::of_periods_ns(Vec::new(), &[], DEFAULT_BUDGET_NS);
    assert_eq!(b.times.count, 0);
    assert_eq!(b.times.avg, None);
    assert_eq!(b.fps, None);
    assert_eq!(b.classifier.class, None);
    assert!(b.null_reasons.contains_key("avg"));
    assert!(b.null_reasons.contains_key("p50"));
}
