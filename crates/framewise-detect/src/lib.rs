//! # framewise-detect — each detector, implemented once
//!
//! Who should use this crate: the recorder (`framewise`), which runs the hitch rule on its
//! writer thread when the session stops, over every recorded period, to write the
//! directory's hitch flags (nothing is judged while the game plays), and the analysis
//! (`framewise-analysis`), which runs the same detectors after the fact — so a hitch the
//! capture flags and a hitch `framewise hitches` reports are decided by the same code.
//! Everyone else should use `framewise-analysis`, which re-exports what it needs.
//!
//! This crate depends on nothing but `std`, holds no I/O and no capture model: a detector
//! is fed numbers one frame at a time and answers. [`median`] is the one median: the hitch
//! rule's rolling median and the analysis's capture-wide baselines are both taken with it.
//! [`hitch_classify`] ranks a hitch's likely causes from a std-only per-frame evidence
//! input, which the analysis fills from a capture and the recorder's writer side can fill
//! from a frame it has just built.
//! [`motion`] is the jitter detector: tracked points that left their own trajectory.
//! [`footprint`], [`footprint_key`] and [`situation`] give every incident record its
//! footprint — the identity of its cause — by the one rule, so the live incident log and
//! the after-the-fact analysis key the same incident the same way. [`frame_class`] is the
//! frame classifier's rule (jank and spike thresholds, the STEADY/SPIKING/THROTTLED label),
//! read by `framewise summarize` and by the live log's `profile.json`.
//!
//! ```
//! use framewise_detect::hitch_rule::{HitchRule, DEFAULT_BUDGET_NS};
//!
//! let mut rule = HitchRule::new(DEFAULT_BUDGET_NS);
//! for _ in 0..100 {
//!     let steady = rule.observe(16_000_000, false).expect("not paused");
//!     assert!(!steady.hitch);
//! }
//! let spike = rule.observe(40_000_000, false).expect("not paused");
//! assert!(spike.hitch, "40 ms exceeds max(2 × 16 ms, 1.5 × 16.67 ms)");
//! assert_eq!(rule.observe(90_000_000, true), None, "paused frames are never judged");
//! ```

#![forbid(unsafe_code)]

pub mod footprint;
pub mod footprint_key;
pub mod frame_class;
pub mod hitch_classify;
pub mod hitch_rule;
pub mod median;
pub mod motion;
pub mod situation;
