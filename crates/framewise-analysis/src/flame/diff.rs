//! Two folds laid over each other by call path: the differential flame graph.

use serde::{Deserialize, Serialize};

use super::{sort_nodes, FlameGraph, FlameNode};

/// One call path in either fold: its per-frame means in each, and their difference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlameDiffNode {
    /// The scope's name.
    pub name: String,
    /// Inclusive time per frame in range A (0 when the path did not run there), ns.
    pub a_ns: f64,
    /// Inclusive time per frame in range B, ns.
    pub b_ns: f64,
    /// `b_ns − a_ns`: positive is slower in B.
    pub delta_ns: f64,
    /// Self time per frame in A, ns.
    pub a_self_ns: f64,
    /// Self time per frame in B, ns.
    pub b_self_ns: f64,
    /// Calls in A (whole range).
    pub a_calls: u64,
    /// Calls in B (whole range).
    pub b_calls: u64,
    /// Callees, largest of A and B first (then by name).
    pub children: Vec<FlameDiffNode>,
}

/// Two folds compared path by path, as per-frame means so that ranges of different
/// lengths compare fairly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlameDiff {
    /// Range A (the base).
    pub a: FlameRange,
    /// Range B (compared with A).
    pub b: FlameRange,
    /// Outermost scopes.
    pub roots: Vec<FlameDiffNode>,
}

/// Where one side of a [`FlameDiff`] was folded from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlameRange {
    /// First row.
    pub from: usize,
    /// One past the last row.
    pub to: usize,
    /// Frames folded.
    pub frames: usize,
    /// The roots' inclusive times added, ns (whole range).
    pub total_ns: u64,
}

fn per_frame(ns: u64, frames: usize) -> f64 {
    if frames == 0 {
        0.0
    } else {
        ns as f64 / frames as f64
    }
}

fn range(g: &FlameGraph) -> FlameRange {
    FlameRange {
        from: g.from,
        to: g.to,
        frames: g.frames,
        total_ns: g.total_ns,
    }
}

fn merge(a: &[FlameNode], b: &[FlameNode], fa: usize, fb: usize) -> Vec<FlameDiffNode> {
    let mut names: Vec<&str> = a.iter().map(|n| n.name.as_str()).collect();
    for n in b {
        if !names.contains(&n.name.as_str()) {
            names.push(&n.name);
        }
    }
    let mut out: Vec<FlameDiffNode> = names
        .into_iter()
        .map(|name| {
            let x = a.iter().find(|n| n.name == name);
            let y = b.iter().find(|n| n.name == name);
            let (a_ns, b_ns) = (
                per_frame(x.map_or(0, |n| n.total_ns), fa),
                per_frame(y.map_or(0, |n| n.total_ns), fb),
            );
            FlameDiffNode {
                name: name.to_owned(),
                a_ns,
                b_ns,
                delta_ns: b_ns - a_ns,
                a_self_ns: per_frame(x.map_or(0, |n| n.self_ns), fa),
                b_self_ns: per_frame(y.map_or(0, |n| n.self_ns), fb),
                a_calls: x.map_or(0, |n| n.calls),
                b_calls: y.map_or(0, |n| n.calls),
                children: merge(
                    x.map_or(&[][..], |n| &n.children),
                    y.map_or(&[][..], |n| &n.children),
                    fa,
                    fb,
                ),
            }
        })
        .collect();
    // Sorted on whole nanoseconds: the larger side's mean, rounded down.
    sort_nodes(&mut out, |n| (n.a_ns.max(n.b_ns) as u64, n.name.as_str()));
    out
}

/// Lays `b` over `a` path by path (a path missing on one side counts 0 there).
pub fn diff(a: &FlameGraph, b: &FlameGraph) -> FlameDiff {
    FlameDiff {
        a: range(a),
        b: range(b),
        roots: merge(&a.roots, &b.roots, a.frames, b.frames),
    }
}
