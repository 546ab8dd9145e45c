//! Property tests: selection and unsorted statistics against a sorted reference.

use super::time::TIME_QUANTILES;
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
    fn float_counter_statistics_are_finite_or_null_with_a_reason(
        v in proptest::collection::vec(
            prop_oneof![
                -1e3f64..1e3,
                -f64::MAX..f64::MAX,
                Just(f64::MAX),
                Just(f64::MIN),
                Just(1e308),
                Just(f64::NAN),
                Just(f64::INFINITY),
            ],
            0..250,
        ),
    ) {
        // What JSON writes as null must be null here, with a reason, so that the console
        // (which prints these values) and the JSON agree.
        for kind in [crate::model::CounterKind::Sum, crate::model::CounterKind::Gauge] {
            let c = CounterStats::of_floats(kind, &v);
            let finite: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
            prop_assert_eq!(c.count, finite.len() as u64);
            let floats = [("avg", c.avg), ("p01", c.p01), ("p50", c.p50), ("p99", c.p99)];
            let nums = [("sum", c.sum), ("min", c.min), ("max", c.max), ("last", c.last)];
            let all = floats.into_iter().chain(nums.map(|(k, n)| (k, n.map(Num::as_f64))));
            for (name, value) in all {
                match value {
                    Some(x) => prop_assert!(x.is_finite(), "{} = {}", name, x),
                    None => prop_assert!(c.null_reasons.contains_key(name), "{} null without a reason", name),
                }
            }
            if let (Some(avg), Some(Num::Float(lo)), Some(Num::Float(hi))) = (c.avg, c.min, c.max) {
                prop_assert!(lo <= avg && avg <= hi, "{} <= {} <= {}", lo, avg, hi);
            }
            let mut sorted = finite.clone();
            sorted.sort_by(f64::total_cmp);
            let mut last = f64::NEG_INFINITY;
            for p in [c.p01, c.p50, c.p99].into_iter().flatten() {
                prop_assert!(p >= last && sorted.first().is_some_and(|&lo| lo <= p));
                prop_assert!(sorted.last().is_some_and(|&hi| p <= hi));
                last = p;
            }
        }
    }

    #[test]
    fn bins_partition_every_frame(v in proptest::collection::vec(0u64..200_000_000, 0..300)) {
        let mut r = NullReasons::new();
        let c = Classification::of_work_ns(&v, crate::hitch_rule::DEFAULT_BUDGET_NS, &mut r);
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
