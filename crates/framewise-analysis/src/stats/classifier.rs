//! The frame classifier: jank and spike ratios, a label, and the frame-time buckets.
use serde::{Deserialize, Serialize};

use super::{NullReason, NullReasons};

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

pub use framewise_detect::frame_class::{
    jank_threshold_ns, spike_threshold_ns, JANK_PERCENT_OF_BUDGET, SPIKE_PERCENT_OF_BUDGET,
    SPIKING_RATIO, THROTTLED_RATIO,
};

const BIN_LABELS: [&str; 7] = ["<2", "2-4", "4-8", "8-16", "16-33", "33-66", ">=66"];

/// The classifier's output: a label with its ratios and bucket counts, not a verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    /// Frames whose work is ≥ 0.96 × the budget, over frames.
    pub jank_ratio: Option<f64>,
    /// Frames whose work is ≥ 1.98 × the budget, over frames.
    pub spike_ratio: Option<f64>,
    /// STEADY, SPIKING or THROTTLED.
    pub class: Option<FrameClass>,
    /// Bucket counts.
    pub bins: Vec<Bin>,
}

impl Classification {
    /// Classifies frames by their work times in ns (any order) against a frame budget:
    /// jank at ≥ [`jank_threshold_ns`], a spike at ≥ [`spike_threshold_ns`].
    pub fn of_work_ns(work_ns: &[u64], budget_ns: u64, reasons: &mut NullReasons) -> Self {
        let values_ns = work_ns;
        let (jank_ns, spike_ns) = (jank_threshold_ns(budget_ns), spike_threshold_ns(budget_ns));
        let mut counts = [0u64; 7];
        let mut jank = 0u64;
        let mut spike = 0u64;
        for &v in values_ns {
            let bucket = BIN_EDGES_NS.partition_point(|&edge| edge <= v);
            counts[bucket] += 1;
            jank += u64::from(v >= jank_ns);
            spike += u64::from(v >= spike_ns);
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
        // The label's rule lives in framewise-detect, where the live log reaches it too.
        let class = match framewise_detect::frame_class::FrameClass::of_jank_ratio(jank_ratio) {
            framewise_detect::frame_class::FrameClass::Throttled => FrameClass::Throttled,
            framewise_detect::frame_class::FrameClass::Spiking => FrameClass::Spiking,
            framewise_detect::frame_class::FrameClass::Steady => FrameClass::Steady,
        };
        Self {
            jank_ratio: Some(jank_ratio),
            spike_ratio: Some(spike as f64 / n),
            class: Some(class),
            bins,
        }
    }
}
