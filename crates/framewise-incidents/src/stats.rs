//! Window statistics the records carry: the median through `framewise-detect`'s one median,
//! p95 interpolated at `(n − 1) × 0.95` between the two closest ranks (as
//! `framewise summarize` computes it), and absent with fewer than 20 frames (one frame must
//! lie beyond it).

use framewise_detect::median::median;

use crate::record::Window;

/// The fewest values a p95 needs.
pub const P95_MIN_FRAMES: usize = 20;

/// Milliseconds from nanoseconds, to the microsecond: records carry no more precision than
/// that, so every duration reads back from JSON as written.
pub fn ms_from_ns(ns: u64) -> f64 {
    (ns.saturating_add(500) / 1000) as f64 / 1000.0
}

/// Seconds from nanoseconds, to the millisecond.
pub fn s_from_ns(ns: u64) -> f64 {
    (ns.saturating_add(500_000) / 1_000_000) as f64 / 1000.0
}

/// Median and p95 of frame periods (ns, any order; sorted in place), in ms.
pub fn median_p95_ms(periods_ns: &mut [u64]) -> (Option<f64>, Option<f64>) {
    let median_ms = median(periods_ns).map(ms_from_ns);
    // `median` sorted the periods.
    let sorted = &*periods_ns;
    let p95_ms = (sorted.len() >= P95_MIN_FRAMES).then(|| {
        let rank = (sorted.len() - 1) as f64 * 0.95;
        let lo = rank.floor() as usize;
        let a = sorted.get(lo).copied().unwrap_or(0) as f64;
        let b = sorted.get(lo + 1).copied().map_or(a, |v| v as f64);
        let p95_ns = a + (b - a) * (rank - lo as f64);
        ms_from_ns(p95_ns.round() as u64)
    });
    (median_ms, p95_ms)
}

/// A [`Window`] over `frames` frames whose non-paused periods are `periods_ns`.
pub fn window(frames: u64, seconds: Option<f64>, periods_ns: &mut [u64]) -> Window {
    let (median_ms, p95_ms) = median_p95_ms(periods_ns);
    Window {
        ms: None,
        frames,
        seconds,
        median_ms,
        p95_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p95_is_interpolated_and_absent_below_twenty() {
        let mut few: Vec<u64> = (1..=19).map(|i| i * 1_000_000).collect();
        assert_eq!(median_p95_ms(&mut few), (Some(10.0), None));
        let mut many: Vec<u64> = (1..=21).rev().map(|i| i * 1_000_000).collect();
        let (median_ms, p95_ms) = median_p95_ms(&mut many);
        assert_eq!(median_ms, Some(11.0));
        // rank (21 − 1) × 0.95 = 19 → the 20th value, 20 ms.
        assert_eq!(p95_ms, Some(20.0));
        assert_eq!(median_p95_ms(&mut []), (None, None));
    }
}
