//! The ledger: `.framewise/bench-history.jsonl`, one line per comparison ever made,
//! appended by `framewise bench` and never edited or deleted by any verb.

use serde::{Deserialize, Serialize};

use super::budget::BudgetState;
use super::compare::{Comparison, SideInfo, VerdictWord};

/// The schema name every ledger line carries.
pub const LEDGER_SCHEMA: &str = "framewise.ledger/1";

/// A budget's state on the after side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerBudget {
    /// The key as declared.
    pub budget: String,
    /// Value, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The limit.
    pub limit: f64,
    /// State.
    pub state: BudgetState,
}

/// One ledger line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerLine {
    /// [`LEDGER_SCHEMA`].
    pub schema: String,
    /// When the comparison was made (UTC, RFC 3339).
    pub at: String,
    /// The bench's name (the after side's).
    pub name: String,
    /// Whether both sides were canonical benches from framewise.toml.
    pub canonical: bool,
    /// What changed, as the caller described it (`--change`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// The git revision of the working directory at comparison time, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_revision: Option<String>,
    /// The after side's config hash.
    pub config_hash: String,
    /// Before: when, build, revision, runs, config hash, regime, headline figures.
    pub before: SideInfo,
    /// After.
    pub after: SideInfo,
    /// The overall verdict.
    pub verdict: VerdictWord,
    /// Its exit code.
    pub exit_code: i32,
    /// Metrics that regressed (a metric measured before and missing after among them).
    pub regressed: Vec<String>,
    /// Metrics that improved.
    pub improved: Vec<String>,
    /// Every declared budget on the after side.
    pub budgets: Vec<LedgerBudget>,
    /// Always true: bench runs are automated.
    pub automated: bool,
}

impl LedgerLine {
    /// The line for a comparison.
    pub fn of(
        c: &Comparison,
        at: String,
        change: Option<String>,
        git_revision: Option<String>,
    ) -> Self {
        // A metric missing after is a regression, and named as one.
        let names = |v: VerdictWord| {
            c.metrics
                .iter()
                .filter(|m| m.verdict == v)
                .map(|m| m.metric.clone())
                .chain(
                    c.missing
                        .iter()
                        .filter(|m| m.verdict == v)
                        .map(|m| m.metric.clone()),
                )
                .collect()
        };
        Self {
            schema: LEDGER_SCHEMA.to_owned(),
            at,
            name: c.after.name.clone(),
            canonical: c.before.canonical && c.after.canonical,
            change,
            git_revision,
            config_hash: c.after.config_hash.clone(),
            before: c.before.clone(),
            after: c.after.clone(),
            verdict: c.overall.verdict,
            exit_code: c.overall.exit_code,
            regressed: names(VerdictWord::Regressed),
            improved: names(VerdictWord::Improved),
            budgets: c
                .overall
                .budgets
                .iter()
                .map(|b| LedgerBudget {
                    budget: b.budget.clone(),
                    value: b.value,
                    limit: b.limit,
                    state: b.state,
                })
                .collect(),
            automated: true,
        }
    }
}
