//! `profile.json`'s per-counter and per-scope statistics over its window: the figures
//! `framewise check` judges counter and scope budgets on, with `summarize`'s meanings (a
//! counter over the frames that recorded it; a scope over its per-frame inclusive totals in
//! the frames in which it ran).

use std::collections::BTreeMap;

use framewise_format::model::{SymId, SymbolTable};

use super::frames::FrameSummary;
use crate::profile::{CounterStats, ScopeStats};
use crate::stats::{median_p95_ms, ms_from_ns};

/// Per counter name, its statistics over `frames` (newest first).
pub(super) fn counter_stats(
    frames: &[&FrameSummary],
    symbols: &SymbolTable,
) -> BTreeMap<String, CounterStats> {
    let mut by_id: BTreeMap<SymId, CounterStats> = BTreeMap::new();
    let mut sums: BTreeMap<SymId, i128> = BTreeMap::new();
    // Oldest first, so `last` ends on the newest frame's value.
    for frame in frames.iter().rev() {
        for &(id, value) in &frame.counters {
            let entry = by_id.entry(id).or_insert(CounterStats {
                count: 0,
                min: value,
                max: value,
                avg: 0.0,
                last: value,
            });
            entry.count += 1;
            entry.min = entry.min.min(value);
            entry.max = entry.max.max(value);
            entry.last = value;
            *sums.entry(id).or_insert(0) += i128::from(value);
        }
    }
    by_id
        .into_iter()
        .filter_map(|(id, mut stats)| {
            let sum = sums.get(&id).copied().unwrap_or(0);
            stats.avg = (sum as f64 / stats.count.max(1) as f64 * 1000.0).round() / 1000.0;
            Some((symbols.name(id)?.to_owned(), stats))
        })
        .collect()
}

/// Per scope name, its per-frame totals' statistics over `frames`. Scopes of one name are
/// one scope (as in `summarize`): their totals in a frame add up.
pub(super) fn scope_stats(
    frames: &[&FrameSummary],
    symbols: &SymbolTable,
) -> BTreeMap<String, ScopeStats> {
    let mut totals: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut in_frame: BTreeMap<&str, u64> = BTreeMap::new();
    for frame in frames {
        in_frame.clear();
        for scope in &frame.scopes {
            if let Some(name) = symbols.name(scope.scope) {
                *in_frame.entry(name).or_insert(0) += scope.total_ns;
            }
        }
        for (&name, &total_ns) in &in_frame {
            totals.entry(name).or_default().push(total_ns);
        }
    }
    totals
        .into_iter()
        .map(|(name, mut values_ns)| {
            let count = values_ns.len() as u64;
            let sum_ns: u128 = values_ns.iter().map(|&v| u128::from(v)).sum();
            let avg_ns = (sum_ns / u128::from(count.max(1))) as u64;
            let (p50_ms, p95_ms) = median_p95_ms(&mut values_ns);
            // `median_p95_ms` sorted the totals.
            let min_ms = ms_from_ns(values_ns.first().copied().unwrap_or(0));
            let max_ms = ms_from_ns(values_ns.last().copied().unwrap_or(0));
            let stats = ScopeStats {
                count,
                avg_ms: ms_from_ns(avg_ns),
                min_ms,
                // The null rule: a median needs two values.
                p50_ms: p50_ms.filter(|_| count >= 2),
                p95_ms,
                max_ms,
            };
            (name.to_owned(), stats)
        })
        .collect()
}
