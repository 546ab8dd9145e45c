//! `framewise gate`: a regression gate over metric paths, and the verdict contract.
//!
//! Rules (docs/CONCEPTS.md, "Exit codes" and "Gate defaults"):
//! - Default tolerances (lite-profiler's): `frame.avg` and `frame.p99` may worsen by 10%.
//!   Nothing else gates unless named: counters vary between two runs of the same workload
//!   (particles alive, a camera's position), so a counter gates only when a tolerance names
//!   it, and then exactly as given (0 is exact).
//! - `*` stands for a name (`counter.*.max`, `scope.*.p95`). A counter wildcard covers sum
//!   counters only: a gauge holds a level (a position, a pool's size), and its extremes are
//!   not a regression signal; a gauge gates when its own path is named.
//! - Every path must name something: an unknown statistic (`frame.p98`) is refused when the
//!   tolerance is set, and an exact path that neither capture has (`counter.draw_call.max`)
//!   when the gate runs, each with the nearest valid paths ([`GateConfigError`]).
//! - Direction-aware: `frame.fps`, `frame.low_1pct_fps`, `frame.low_01pct_fps` regress when
//!   they fall; everything else when it rises.
//! - A metric the base had and the candidate lacks is a regression.
//! - An input that lost frames (see [`crate::diff::loses_frames`]), an empty capture, or no
//!   configured metric present in both, is inconclusive; [`GateConfig::allow_damaged`]
//!   judges a damaged input anyway.
//! - Timing metrics across different timing regimes are incomparable; counters compare
//!   anywhere.
//! - lite-profiler gate configs are accepted: `{"tolerances": {...}}`, `phase.` for
//!   `scope.`, camelCase for snake_case; any other top-level key is refused.

mod config;
mod judge;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use self::config::{
    alias_path, check_metric, measured_as, nearest, number_as_written, snake_case, GateConfig,
    GateConfigError, DEFAULT_TOLERANCES, MAX_TOLERANCE,
};
pub use self::judge::{gate, unknown_name, CheckStatus, GateCheck, GateResult};

/// A verdict, with the exit code every verb maps it to (the codes are API).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Pass, improved, inside budgets: exit 0.
    Pass,
    /// Fail, regressed, breached: exit 1.
    Fail,
    /// Inconclusive, no detectable change: exit 2.
    Inconclusive,
    /// Incomparable (different timing regimes, config hashes): exit 3.
    Incomparable,
    /// Infrastructure or usage error: exit 4.
    Error,
}

impl Verdict {
    /// The process exit code.
    pub fn exit_code(self) -> i32 {
        match self {
            Self::Pass => 0,
            Self::Fail => 1,
            Self::Inconclusive => 2,
            Self::Incomparable => 3,
            Self::Error => 4,
        }
    }
}
