//! The hitch rule: the one implementation.
//!
//! A hitch is a non-paused frame whose period exceeds
//! `max(2 × rolling median, 1.5 × frame budget)`, where the rolling median is taken over
//! the periods of the last [`WINDOW_FRAMES`] non-paused frames *before* the frame being
//! judged (a hitch does not raise its own bar). With no history yet the median is taken as
//! zero, so the first frames are judged against `1.5 × budget` alone.
//!
//! This module depends on nothing but `std` and holds no state beyond the window: the
//! recorder runs it to flag hitches in a capture's directory, and `framewise hitches` runs it
//! after the fact, so the two always agree. Do not write a second implementation of the rule
//! anywhere; change it here.

/// How many non-paused periods the rolling median covers.
pub const WINDOW_FRAMES: usize = 600;

/// The default frame budget when neither `framewise.toml` nor META declares one: 60 Hz.
pub const DEFAULT_BUDGET_NS: u64 = 16_666_667;

/// What the rule decided about one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Judgement {
    /// The frame's period, ns.
    pub period_ns: u64,
    /// The rolling median the threshold was built from, ns (0 when there was no history).
    pub median_ns: u64,
    /// `max(2 × median, 1.5 × budget)`, ns.
    pub threshold_ns: u64,
    /// Whether the period exceeded the threshold.
    pub hitch: bool,
}

/// The rolling-median hitch rule, fed one frame at a time in frame order.
#[derive(Clone, Debug)]
pub struct HitchRule {
    budget_ns: u64,
    /// Periods in arrival order (a ring of at most `WINDOW_FRAMES`).
    window: std::collections::VecDeque<u64>,
    /// The same periods, sorted, for the median.
    sorted: Vec<u64>,
}

impl HitchRule {
    /// A rule with this frame budget (ns); see [`DEFAULT_BUDGET_NS`].
    pub fn new(budget_ns: u64) -> Self {
        Self {
            budget_ns,
            window: std::collections::VecDeque::with_capacity(WINDOW_FRAMES),
            sorted: Vec::with_capacity(WINDOW_FRAMES),
        }
    }

    /// The frame budget, ns.
    pub fn budget_ns(&self) -> u64 {
        self.budget_ns
    }

    /// The median of the current window, ns (0 when empty). With an even count it is the
    /// mean of the two middle periods, rounded down.
    pub fn median_ns(&self) -> u64 {
        crate::median::median_of_sorted(&self.sorted).unwrap_or(0)
    }

    /// The threshold a frame judged now would have to exceed, ns.
    pub fn threshold_ns(&self) -> u64 {
        let from_median = self.median_ns().saturating_mul(2);
        // 1.5 × budget, rounded down, in integer arithmetic.
        let from_budget = self.budget_ns.saturating_add(self.budget_ns / 2);
        from_median.max(from_budget)
    }

    /// Judges one frame and, when it is not paused, adds its period to the window.
    /// Paused frames are never hitches and never enter the median; `None` is returned for
    /// them.
    pub fn observe(&mut self, period_ns: u64, paused: bool) -> Option<Judgement> {
        if paused {
            return None;
        }
        let median_ns = self.median_ns();
        let threshold_ns = self.threshold_ns();
        let judgement = Judgement {
            period_ns,
            median_ns,
            threshold_ns,
            hitch: period_ns > threshold_ns,
        };
        self.push(period_ns);
        Some(judgement)
    }

    fn push(&mut self, period_ns: u64) {
        let at = self.sorted.partition_point(|&p| p < period_ns);
        if self.window.len() == WINDOW_FRAMES {
            if let Some(oldest) = self.window.pop_front() {
                if let Ok(out) = self.sorted.binary_search(&oldest) {
                    self.window.push_back(period_ns);
                    self.replace(out, at, period_ns);
                    return;
                }
            }
        }
        self.window.push_back(period_ns);
        self.sorted.insert(at, period_ns);
    }

    /// `sorted` with the period at `out` taken out and `period_ns` put in where
    /// `partition_point` placed it (`at`, counted before the removal), sorted as a `remove`
    /// then an `insert` would leave it, but moving only the periods between the two places
    /// (a full window moved about all 600 of its periods a frame in two `memmove`s).
    fn replace(&mut self, out: usize, at: usize, period_ns: u64) {
        if at <= out {
            // Everything in `at..out` is ≥ `period_ns`: it moves up one.
            self.sorted.copy_within(at..out, at + 1);
            self.sorted[at] = period_ns;
        } else {
            // Everything in `out + 1..at` is < `period_ns`: it moves down one.
            self.sorted.copy_within(out + 1..at, out);
            self.sorted[at - 1] = period_ns;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn first_frames_use_the_budget() {
        let mut rule = HitchRule::new(DEFAULT_BUDGET_NS);
        let j = rule.observe(24 * MS, false).expect("not paused");
        assert_eq!(j.median_ns, 0);
        assert_eq!(j.threshold_ns, 25_000_000);
        assert!(!j.hitch);
        let mut fresh = HitchRule::new(DEFAULT_BUDGET_NS);
        let j = fresh.observe(26 * MS, false).expect("not paused");
        assert!(j.hitch, "26 ms > 1.5 × 16.67 ms with no history");
        // Once 24 ms is the median, the bar is 48 ms.
        assert!(!rule.observe(26 * MS, false).expect("judged").hitch);
    }

    #[test]
    fn median_raises_the_bar() {
        let mut rule = HitchRule::new(DEFAULT_BUDGET_NS);
        for _ in 0..10 {
            rule.observe(30 * MS, false);
        }
        assert_eq!(rule.median_ns(), 30 * MS);
        assert_eq!(rule.threshold_ns(), 60 * MS);
        assert!(!rule.observe(59 * MS, false).expect("judged").hitch);
        assert!(rule.observe(61 * MS, false).expect("judged").hitch);
    }

    #[test]
    fn paused_frames_are_ignored() {
        let mut rule = HitchRule::new(DEFAULT_BUDGET_NS);
        assert_eq!(rule.observe(500 * MS, true), None);
        assert_eq!(rule.median_ns(), 0);
    }

    #[test]
    fn window_forgets_old_frames() {
        let mut rule = HitchRule::new(DEFAULT_BUDGET_NS);
        for _ in 0..WINDOW_FRAMES {
            rule.observe(100 * MS, false);
        }
        for _ in 0..WINDOW_FRAMES {
            rule.observe(10 * MS, false);
        }
        assert_eq!(rule.median_ns(), 10 * MS);
        assert_eq!(rule.window.len(), WINDOW_FRAMES);
        assert_eq!(rule.sorted.len(), WINDOW_FRAMES);
    }

    /// The window and its sorted copy after each period, against a sort of the last
    /// `WINDOW_FRAMES` periods, over a long run of periods from a few values (ties, equal
    /// oldest and newest) and from a wide range.
    #[test]
    fn sorted_window_is_the_sorted_last_periods() {
        let mut rule = HitchRule::new(DEFAULT_BUDGET_NS);
        let mut all = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..3 * WINDOW_FRAMES + 17 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let period_ns = if (i / 200) % 2 == 0 {
                x % 7
            } else {
                x % 1_000_000
            };
            rule.observe(period_ns, false);
            all.push(period_ns);
            let mut expected = all[all.len().saturating_sub(WINDOW_FRAMES)..].to_vec();
            expected.sort_unstable();
            assert_eq!(rule.sorted, expected, "after period {i}");
        }
    }

    #[test]
    fn even_median_is_the_mean_of_the_middle_two() {
        let mut rule = HitchRule::new(DEFAULT_BUDGET_NS);
        rule.observe(10, false);
        rule.observe(20, false);
        assert_eq!(rule.median_ns(), 15);
    }
}
