//! The frame classifier's rule: the one implementation behind `framewise summarize`'s label
//! and the live log's `profile.json`.
//!
//! A frame is jank when its work (CPU begin to end) is at least [`JANK_PERCENT_OF_BUDGET`]
//! percent of the frame budget, a spike at [`SPIKE_PERCENT_OF_BUDGET`] percent. Over a set
//! of frames, the share of jank frames (the jank ratio) gives the label: THROTTLED at
//! [`THROTTLED_RATIO`] or more, SPIKING at [`SPIKING_RATIO`] or more, else STEADY.

/// A frame whose work is at least this share of the frame budget is jank, percent: 16 ms at
/// the default 16.67 ms budget, so a vsync-locked 60 Hz game (period 16.67 ms, work below it)
/// is not jank by its period alone.
pub const JANK_PERCENT_OF_BUDGET: u64 = 96;
/// A frame whose work is at least this share of the frame budget is a spike, percent: 33 ms
/// at the default 16.67 ms budget.
pub const SPIKE_PERCENT_OF_BUDGET: u64 = 198;
/// Jank ratio at which frames are SPIKING.
pub const SPIKING_RATIO: f64 = 0.05;
/// Jank ratio at which frames are THROTTLED.
pub const THROTTLED_RATIO: f64 = 0.25;

/// `percent` of `budget_ns`, rounded down.
fn share_ns(budget_ns: u64, percent: u64) -> u64 {
    u64::try_from(u128::from(budget_ns) * u128::from(percent) / 100).unwrap_or(u64::MAX)
}

/// The jank threshold for a frame budget, ns (16_000_000 at the default 16_666_667).
pub fn jank_threshold_ns(budget_ns: u64) -> u64 {
    share_ns(budget_ns, JANK_PERCENT_OF_BUDGET)
}

/// The spike threshold for a frame budget, ns (33_000_000 at the default 16_666_667).
pub fn spike_threshold_ns(budget_ns: u64) -> u64 {
    share_ns(budget_ns, SPIKE_PERCENT_OF_BUDGET)
}

/// The classifier's label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameClass {
    /// Jank ratio below [`SPIKING_RATIO`].
    Steady,
    /// Jank ratio at least [`SPIKING_RATIO`].
    Spiking,
    /// Jank ratio at least [`THROTTLED_RATIO`].
    Throttled,
}

impl FrameClass {
    /// The label for a jank ratio.
    pub fn of_jank_ratio(jank_ratio: f64) -> Self {
        if jank_ratio >= THROTTLED_RATIO {
            Self::Throttled
        } else if jank_ratio >= SPIKING_RATIO {
            Self::Spiking
        } else {
            Self::Steady
        }
    }

    /// The label as outputs spell it: `STEADY`, `SPIKING`, `THROTTLED`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Steady => "STEADY",
            Self::Spiking => "SPIKING",
            Self::Throttled => "THROTTLED",
        }
    }
}

/// The jank ratio of frames whose work times are `work_ns` (any order) against a frame
/// budget; `None` without frames.
pub fn jank_ratio(work_ns: impl IntoIterator<Item = u64>, budget_ns: u64) -> Option<f64> {
    let jank_ns = jank_threshold_ns(budget_ns);
    let (mut frames, mut jank) = (0u64, 0u64);
    for work in work_ns {
        frames += 1;
        jank += u64::from(work >= jank_ns);
    }
    (frames > 0).then(|| jank as f64 / frames as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_the_jank_ratio() {
        let budget_ns = 16_666_667;
        assert_eq!(jank_threshold_ns(budget_ns), 16_000_000);
        assert_eq!(spike_threshold_ns(budget_ns), 33_000_000);
        let steady = [10_000_000u64; 20];
        assert_eq!(jank_ratio(steady, budget_ns), Some(0.0));
        let mut spiking = [10_000_000u64; 20];
        spiking[0] = 16_000_000;
        assert_eq!(jank_ratio(spiking, budget_ns), Some(0.05));
        assert_eq!(FrameClass::of_jank_ratio(0.049), FrameClass::Steady);
        assert_eq!(FrameClass::of_jank_ratio(0.05), FrameClass::Spiking);
        assert_eq!(FrameClass::of_jank_ratio(0.25).name(), "THROTTLED");
        assert_eq!(jank_ratio([], budget_ns), None);
    }
}
