//! The `bisect` tool's input and result.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::results::ToolVerdict;
use crate::commands::bisect::BisectView;

/// `bisect`'s input.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BisectParams {
    /// A bisection report (bisect.json); without it, bisect.json in the `.framewise/`
    /// directory.
    #[serde(default)]
    pub input: Option<String>,
    /// The `.framewise/` directory (default: $FRAMEWISE_DIR, else the nearest one up).
    #[serde(default)]
    pub dir: Option<String>,
}

/// One ranked candidate, in brief.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct BisectBrief {
    /// 1 = costs the most.
    pub rank: u32,
    /// The candidate's name.
    pub name: String,
    /// Its spawning site, or `unknown`.
    pub site: String,
    /// Triangles saved by hiding it (negative: saved), `null` when not measured.
    pub delta_triangles: Option<f64>,
    /// Draw calls saved, `null` when not measured.
    pub delta_draw_calls: Option<f64>,
    /// Render ms saved, `null` when not measured.
    pub delta_render_ms: Option<f64>,
    /// The render-ms Δ is within the measured spread.
    pub render_ms_noisy: Option<bool>,
    /// Its snapshot matched after it was shown again.
    pub restored: bool,
}

/// `bisect`'s result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct BisectResult {
    /// pass (every candidate restored), fail (the world did not come back as it was),
    /// inconclusive (no candidate measured).
    pub verdict: ToolVerdict,
    /// The exit code `framewise bisect` returns.
    pub exit_code: u8,
    /// The input read.
    pub input: String,
    /// The engine that ran it.
    pub engine: String,
    /// Always false: costs measured one at a time do not add up to the baseline.
    pub sums_to_baseline: bool,
    /// The five costliest candidates, ranked (the report has them all).
    pub top: Vec<BisectBrief>,
    /// The whole `framewise bisect --format json` document.
    pub report_path: String,
}

/// How many candidates the headline lists.
const TOP: usize = 5;

impl BisectResult {
    /// The headline of a bisection view.
    pub fn new(view: &BisectView, exit_code: u8, report_path: String) -> Self {
        let b = &view.bisect;
        Self {
            verdict: ToolVerdict::of_exit(exit_code),
            exit_code,
            input: view.input.clone(),
            engine: b.engine.clone(),
            sums_to_baseline: b.sums_to_baseline,
            top: b
                .results
                .iter()
                .take(TOP)
                .map(|r| BisectBrief {
                    rank: r.rank,
                    name: r.name.clone(),
                    site: r.site.clone(),
                    delta_triangles: r.delta_triangles.map(|d| d.delta),
                    delta_draw_calls: r.delta_draw_calls.map(|d| d.delta),
                    delta_render_ms: r.delta_render_ms.map(|d| d.delta),
                    render_ms_noisy: r.delta_render_ms.map(|d| d.noisy),
                    restored: r.restored,
                })
                .collect(),
            report_path,
        }
    }
}
