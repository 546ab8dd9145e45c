//! Budgets: limits on metric paths declared in framewise.toml's `[budgets]`, each judged in
//! its metric's direction (`frame.fps` must stay above its limit, `frame.p95` below).
//! `frame_ms` is the frame budget the hitch rule uses; as a budget it is judged on
//! `frame.p95` unless `"frame.p95"` has a limit of its own.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::gate::measured_as;
use crate::summary::{direction, Direction};

/// The metric path `frame_ms` is judged on.
pub const FRAME_MS_METRIC: &str = "frame.p95";

/// What `[budgets]` declares.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Budgets {
    /// The frame budget, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_ms: Option<f64>,
    /// Limits by metric path.
    #[serde(default)]
    pub limits: BTreeMap<String, f64>,
}

impl Budgets {
    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.frame_ms.is_none() && self.limits.is_empty()
    }

    /// Every budget as (declared key, metric path, limit), in key order, `frame_ms` first.
    pub fn entries(&self) -> Vec<(String, String, f64)> {
        let mut out = Vec::new();
        if let Some(ms) = self.frame_ms {
            if !self.limits.contains_key(FRAME_MS_METRIC) {
                out.push(("frame_ms".to_owned(), FRAME_MS_METRIC.to_owned(), ms));
            }
        }
        for (path, limit) in &self.limits {
            out.push((path.clone(), path.clone(), *limit));
        }
        out
    }
}

/// Where a measured value stands against its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetState {
    /// Inside the limit (equal counts as inside).
    Inside,
    /// Past the limit in the metric's bad direction.
    Breached,
    /// Nothing measured for the path.
    Unmeasured,
}

/// One budget judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetCheck {
    /// The key as declared (`frame_ms`, `counter.draw_calls.max`).
    pub budget: String,
    /// The metric path judged.
    pub metric: String,
    /// Which way is better.
    pub direction: Direction,
    /// The limit.
    pub limit: f64,
    /// The measured value, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// `value / limit`, when measured, the limit is not 0 and the ratio is finite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// Headroom in the metric's unit: how far the value may move in its bad direction
    /// before the budget breaks (negative: by how much it is breached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headroom: Option<f64>,
    /// The state.
    pub state: BudgetState,
}

/// Judges every budget against `value_of(metric path)`; `counters_only` keeps only
/// `counter.*` paths.
pub fn evaluate_budgets(
    budgets: &Budgets,
    counters_only: bool,
    value_of: impl Fn(&str) -> Option<f64>,
) -> Vec<BudgetCheck> {
    budgets
        .entries()
        .into_iter()
        .filter(|(_, metric, _)| !counters_only || metric.starts_with("counter."))
        .map(|(budget, metric, limit)| {
            // Resolved as `gate` resolves a path: `counter.drawCalls.max` is the
            // `counter.draw_calls.max` measured.
            let (value, dir) = match measured_as(&metric, &value_of) {
                Some((path, v)) => (Some(v), direction(&path)),
                None => (None, direction(&metric)),
            };
            let headroom = value.map(|v| match dir {
                Direction::LowerIsBetter => limit - v,
                Direction::HigherIsBetter => v - limit,
            });
            let state = match headroom {
                None => BudgetState::Unmeasured,
                Some(h) if h < 0.0 => BudgetState::Breached,
                Some(_) => BudgetState::Inside,
            };
            BudgetCheck {
                budget,
                direction: dir,
                limit,
                ratio: value
                    .filter(|_| limit != 0.0)
                    .map(|v| v / limit)
                    .filter(|r| r.is_finite()),
                value,
                headroom,
                state,
                metric,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_judge_in_their_direction() {
        let mut b = Budgets {
            frame_ms: Some(16.67),
            ..Budgets::default()
        };
        b.limits.insert("counter.draw_calls.max".into(), 300.0);
        b.limits.insert("frame.fps".into(), 60.0);
        b.limits.insert("scope.render.p95".into(), 6.0);
        let values: BTreeMap<&str, f64> = [
            ("frame.p95", 17.0),
            ("counter.draw_calls.max", 300.0),
            ("frame.fps", 58.0),
        ]
        .into_iter()
        .collect();
        let checks = evaluate_budgets(&b, false, |p| values.get(p).copied());
        let state = |k: &str| {
            checks
                .iter()
                .find(|c| c.budget == k)
                .map(|c| c.state)
                .expect(k)
        };
        assert_eq!(state("frame_ms"), BudgetState::Breached);
        assert_eq!(state("counter.draw_calls.max"), BudgetState::Inside);
        assert_eq!(state("frame.fps"), BudgetState::Breached);
        assert_eq!(state("scope.render.p95"), BudgetState::Unmeasured);
        let fps = checks
            .iter()
            .find(|c| c.budget == "frame.fps")
            .expect("fps");
        assert_eq!(fps.headroom, Some(-2.0));
        let only = evaluate_budgets(&b, true, |p| values.get(p).copied());
        assert_eq!(only.len(), 1);
        // A limit so near 0 that value / limit overflows: no ratio, not `inf`.
        b.limits.insert("counter.draw_calls.max".into(), 1e-310);
        let tiny = evaluate_budgets(&b, true, |p| values.get(p).copied());
        assert_eq!(
            (tiny[0].ratio, tiny[0].state),
            (None, BudgetState::Breached)
        );
        assert_eq!(only[0].metric, "counter.draw_calls.max");
        // A counter's camelCase spelling is the snake_case path measured, as in `gate`.
        let mut camel = Budgets::default();
        camel.limits.insert("counter.drawCalls.max".into(), 250.0);
        let checks = evaluate_budgets(&camel, false, |p| values.get(p).copied());
        assert_eq!(
            (checks[0].state, checks[0].value),
            (BudgetState::Breached, Some(300.0))
        );
        assert_eq!(checks[0].metric, "counter.drawCalls.max");
    }
}
