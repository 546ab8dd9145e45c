//! framewise-analysis turns a capture into numbers and verdicts.
//!
//! Who uses it: the `framewise` CLI, the inspector (`framewise view`) and the MCP server
//! read every number through this crate, so they can never disagree. The recorder a game
//! links (`framewise`) must never depend on it; the one piece both share, the hitch rule,
//! lives in [`hitch_rule`] with no dependencies beyond `std`. Bytes of the `.sgpt`
//! container are `framewise-format`'s business; this crate reads them through that
//! crate's reader and never parses them itself.
//!
//! The map: [`load::open`] reads any capture (`.sgpt`, `.litecap`, Chrome JSON) into a
//! columnar [`Capture`] through [`CaptureBuilder`], which folds spans into per-frame
//! aggregates as frames stream in ([`LoadOptions::with_summary_only()`] keeps only
//! per-name columns, [`LoadOptions::with_spans()`] keeps every span;
//! [`load::open_with_progress`] reports bytes and frames as it goes). Then [`summarize`]
//! (or [`summarize_with`], to judge against a configured budget) gives the [`Summary`]
//! whose JSON is `summarize --format json` and whose paths (`frame.p99`,
//! `scope.render.p95`) [`diff()`] and [`gate()`] speak; [`find_hitches`] applies
//! [`hitch_rule`] and classifies; [`attribute()`] ranks scopes; [`write_trace`] exports a
//! Chrome trace; [`inspect()`] describes a file's structure; [`view`] reads one frame,
//! one name across frames, or two frames side by side for the inspector; [`flame`] folds
//! any selection of frames into a call tree (a flame graph) and compares two; [`search`]
//! finds scopes, passes, counters and marks by name, worst frames first; [`window`] lays
//! consecutive frames end to end on one time axis; [`significance`] ranks a diff's rows for
//! reading; [`golden`] compares a program's frame with its golden image by SSIM (the
//! correctness gate); [`bench`](mod@bench) measures a workload's runs with noise floors and compares
//! two bench results with verdicts; [`census`](mod@census) reads a capture's scene censuses (or
//! `.framewise/census.json`) with their hints. Every result
//! carries the capture's defects, and every verdict maps to an exit code through
//! [`Verdict::exit_code`].
//!
//! ```
//! use framewise_analysis::{summarize, CaptureBuilder, FrameInput, SourceKind};
//!
//! let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
//! let mut f = FrameInput::default();
//! for i in 0..120u64 {
//!     f.clear();
//!     f.index = i;
//!     f.cpu_begin_ns = i * 16_000_000;
//!     f.cpu_end_ns = f.cpu_begin_ns + 9_000_000;
//!     b.push_frame(&f);
//! }
//! let summary = summarize(&b.finish());
//! assert_eq!(summary.frame.times.count, 119); // the last frame has no period
//! assert_eq!(summary.metric("frame.avg"), Some(16.0));
//! assert_eq!(summary.metric("frame.p999"), None); // needs 1000 frames
//! ```

#![forbid(unsafe_code)]

pub mod attribute;
pub mod bench;
pub mod build;
pub mod census;
pub mod diff;
pub mod export;
pub mod flame;
pub mod gate;
pub mod golden;
pub mod hitch;
pub use framewise_detect::hitch_rule;
pub use framewise_detect::{footprint, footprint_key, motion, situation};
pub mod import;
pub mod inspect;
pub mod jitter;
pub mod load;
pub mod model;
pub mod search;
pub mod significance;
pub mod stats;
pub mod summary;
pub mod view;
pub mod window;

pub use attribute::{
    attribute, AttributeError, AttributeTarget, Attribution, InconclusiveAttribution,
};
pub use build::{
    CaptureBuilder, FrameInput, GpuPassInput, LaneInput, LoadOptions, MarkInput, SpanInput,
};
pub use diff::{diff, Diff, Side, SideDefect};
pub use export::chrome::{write_trace, ExportError, TraceOptions};
pub use gate::{gate, GateConfig, GateResult, Verdict};
pub use hitch::{find_hitches, HitchKind, HitchOptions, HitchReport, HitchesDoc};
pub use inspect::{inspect, Inspection};
pub use jitter::{find_jitter, find_jitter_counted};
pub use load::{
    open, open_with_frame_source, open_with_progress, FrameReadError, FrameSource, LoadError,
    Progress, Stage,
};
pub use model::{Capture, Defect, DefectKind, Grade, SourceKind, TimingGrade, TopologyDetail};
pub use summary::{
    format_metric, summarize, summarize_with, Direction, MetricTable, MetricUnit, Summary,
    SummaryOptions,
};
