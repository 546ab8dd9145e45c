//! [`Summary`]: the `summarize --format json` output, and the metric paths that address it.
//!
//! A metric path is a JSON path into this output: `frame.p99`, `work.p95`,
//! `scope.render.p95`, `pass.shadow.max`, `counter.draw_calls.max`. The JSON blocks are
//! `frame`, `work`, `scopes`, `passes` and `counters`; paths use the singular `scope.`,
//! `pass.` and `counter.`. Resolution walks the serialized JSON itself, so a path can never
//! disagree with what `summarize` prints.
//!
//! The parts: `schema`'s types are the JSON itself; `metric` names and
//! resolves the paths into it (direction, unit, the statistics a block has); `compute`
//! folds a capture's frames, scopes, passes and counters into a [`Summary`].

mod compute;
mod metric;
mod schema;
#[cfg(test)]
mod tests;

pub use self::compute::{summarize, summarize_with, SummaryOptions};
pub(crate) use self::metric::json_block;
pub use self::metric::{
    direction, format_metric, known_stats, parse_metric_path, Direction, MetricPath, MetricTable,
    MetricUnit, HIGHER_IS_BETTER,
};
pub use self::schema::{CaptureInfo, Methods, NamedMap, Summary, Units, SUMMARY_SCHEMA};
