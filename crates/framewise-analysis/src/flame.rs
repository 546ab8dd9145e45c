//! Call trees over any selection of frames: the fold behind a flame graph (Tracy's and
//! Perfetto's flame graphs, puffin's merged view) and its two-range difference.
//!
//! [`fold`] reads each selected frame's CPU spans (from the capture's span table or its file,
//! through a [`FrameSource`]) and merges every call path: a node is one scope *name* reached
//! by one path of names from a root (call sites with the same name are one node, as
//! [`crate::summarize`] groups them). Per node it keeps the calls, the inclusive time (the
//! sum of its instances' durations) and the self time (each instance's duration less its
//! children's, never below zero). Threads are merged, or one thread is folded alone.
//!
//! A scope that runs inside itself gets a node per level of the path; the totals per *name*
//! that [`crate::summarize`] reports count only the outermost instance, which is what
//! [`FlameGraph::name_totals`] gives back, so that the two can be checked against each other
//! (they agree whenever a name has one call site; [`crate::summarize`] judges "inside itself"
//! per call site, so a name nested under another site of the same name is counted twice
//! there, once here).
//! [`diff`] lays two folds over each other by path, comparing per-frame means (two ranges
//! of different lengths are compared fairly).
//!
//! ```
//! use framewise_analysis::flame::{fold, FlameOptions};
//! use framewise_analysis::{CaptureBuilder, FrameInput, FrameSource, LaneInput, SourceKind, SpanInput};
//!
//! let mut b = CaptureBuilder::new(SourceKind::Synthetic, true);
//! let main = b.thread("main");
//! let (update, physics) = (b.scope("update", "", 0), b.scope("physics", "", 0));
//! let mut f = FrameInput::default();
//! for i in 0..3u64 {
//!     f.clear();
//!     f.index = i;
//!     f.cpu_begin_ns = i * 16_000_000;
//!     f.cpu_end_ns = f.cpu_begin_ns + 9_000_000;
//!     let at = f.cpu_begin_ns;
//!     f.lanes.push(LaneInput {
//!         thread: main,
//!         spans: vec![
//!             SpanInput { scope: update, depth: 0, start_ns: at, end_ns: at + 8_000_000 },
//!             SpanInput { scope: physics, depth: 1, start_ns: at, end_ns: at + 3_000_000 },
//!         ],
//!         dropped_spans: 0,
//!     });
//!     b.push_frame(&f);
//! }
//! let capture = b.finish();
//! let graph = fold(&capture, &FrameSource::kept(), &FlameOptions::rows(0..3)).unwrap();
//! let update = &graph.roots[0];
//! assert_eq!((update.name.as_str(), update.calls, update.total_ns, update.self_ns), ("update", 3, 24_000_000, 15_000_000));
//! assert_eq!(update.children[0].total_ns, 9_000_000);
//! ```

use std::collections::HashMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::load::{FrameReadError, FrameSource};
use crate::model::{Capture, FrameSpans};

/// What to fold: a range of rows, all threads merged or one thread alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlameOptions {
    /// Capture rows, end exclusive.
    pub rows: Range<usize>,
    /// One thread's name; `None` merges every thread.
    pub thread: Option<String>,
}

impl FlameOptions {
    /// Rows `rows`, every thread merged.
    pub fn rows(rows: Range<usize>) -> Self {
        Self { rows, thread: None }
    }

    /// Only the thread named `name`.
    pub fn with_thread(mut self, name: impl Into<String>) -> Self {
        self.thread = Some(name.into());
        self
    }
}

/// One call path's node: a scope name under its parent's path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlameNode {
    /// The scope's name.
    pub name: String,
    /// Instances on this path.
    pub calls: u64,
    /// Inclusive time: the instances' durations added, ns.
    pub total_ns: u64,
    /// Self time: each instance's duration less its children's (never below 0), added, ns.
    pub self_ns: u64,
    /// Callees, largest total first (then by name).
    pub children: Vec<FlameNode>,
}

/// A fold of the CPU spans of a selection of frames.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlameGraph {
    /// The first row folded.
    pub from: usize,
    /// One past the last row folded.
    pub to: usize,
    /// The thread folded alone, or `None`: every thread merged.
    pub thread: Option<String>,
    /// The threads whose spans were folded, in capture order.
    pub threads: Vec<String>,
    /// Frames folded (`to − from`).
    pub frames: usize,
    /// The roots' inclusive times added: CPU time in outermost scopes, ns.
    pub total_ns: u64,
    /// Outermost scopes, largest total first (then by name).
    pub roots: Vec<FlameNode>,
}

/// Why a fold could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FlameError {
    /// The rows are not a range of the capture.
    #[error("rows {from}..{to} are not a range of this capture's {frames} frames (0 ≤ from ≤ to ≤ {frames})")]
    BadRange {
        /// First row asked for.
        from: usize,
        /// End asked for.
        to: usize,
        /// Frames in the capture.
        frames: usize,
    },
    /// No thread has that name.
    #[error("the capture has no thread named {0:?}")]
    NoSuchThread(String),
    /// A frame's spans could not be read.
    #[error(transparent)]
    Read(#[from] FrameReadError),
}

/// Folds the CPU spans of `options.rows` (every thread merged, or one) into a call tree.
/// Spans come from `source` (the capture's span table, or its file).
pub fn fold(
    capture: &Capture,
    source: &FrameSource,
    options: &FlameOptions,
) -> Result<FlameGraph, FlameError> {
    let frames = capture.frame_count();
    let Range { start, end } = options.rows;
    if start > end || end > frames {
        return Err(FlameError::BadRange {
            from: start,
            to: end,
            frames,
        });
    }
    let only = match &options.thread {
        Some(name) => Some(
            capture
                .threads()
                .iter()
                .position(|t| t == name)
                .ok_or_else(|| FlameError::NoSuchThread(name.clone()))? as u32,
        ),
        None => None,
    };
    let mut folder = Folder::new(capture, only);
    for row in start..end {
        folder.add(&source.frame_spans(capture, row)?);
    }
    Ok(folder.finish(options))
}

/// Node in the arena: children are found by (parent, name) in `Folder::child`.
struct Arena {
    name: u32,
    calls: u64,
    total_ns: u64,
    self_ns: u64,
    children: Vec<usize>,
}

/// An open instance on a thread's stack.
struct Open {
    depth: u32,
    node: usize,
    duration_ns: u64,
    children_ns: u64,
}

struct Folder<'a> {
    capture: &'a Capture,
    only: Option<u32>,
    /// Scope id → name id (scopes with one name share it).
    name_of_scope: Vec<u32>,
    names: Vec<&'a str>,
    /// Node 0 is the root (no name).
    nodes: Vec<Arena>,
    child: HashMap<(usize, u32), usize>,
    seen_threads: Vec<bool>,
    stacks: HashMap<u32, Vec<Open>>,
}

impl<'a> Folder<'a> {
    fn new(capture: &'a Capture, only: Option<u32>) -> Self {
        let mut names: Vec<&str> = Vec::new();
        let mut by_name: HashMap<&str, u32> = HashMap::new();
        let name_of_scope = capture
            .scopes()
            .iter()
            .map(|s| {
                *by_name.entry(s.name.as_str()).or_insert_with(|| {
                    names.push(s.name.as_str());
                    (names.len() - 1) as u32
                })
            })
            .collect();
        Self {
            capture,
            only,
            name_of_scope,
            names,
            nodes: vec![Arena {
                name: u32::MAX,
                calls: 0,
                total_ns: 0,
                self_ns: 0,
                children: Vec::new(),
            }],
            child: HashMap::new(),
            seen_threads: vec![false; capture.threads().len()],
            stacks: HashMap::new(),
        }
    }

    fn node(&mut self, parent: usize, name: u32) -> usize {
        if let Some(&n) = self.child.get(&(parent, name)) {
            return n;
        }
        let n = self.nodes.len();
        self.nodes.push(Arena {
            name,
            calls: 0,
            total_ns: 0,
            self_ns: 0,
            children: Vec::new(),
        });
        self.nodes[parent].children.push(n);
        self.child.insert((parent, name), n);
        n
    }

    fn close(nodes: &mut [Arena], open: &Open) {
        let n = &mut nodes[open.node];
        n.self_ns = n
            .self_ns
            .saturating_add(open.duration_ns.saturating_sub(open.children_ns));
    }

    /// Adds one frame: spans are in pre-order per thread; a thread's stack is closed when the
    /// frame ends (a frame's spans never continue into the next).
    fn add(&mut self, spans: &FrameSpans) {
        for s in &spans.cpu {
            if self.only.is_some_and(|t| t != s.thread) {
                continue;
            }
            if let Some(seen) = self.seen_threads.get_mut(s.thread as usize) {
                *seen = true;
            }
            let name = self
                .name_of_scope
                .get(s.scope as usize)
                .copied()
                .unwrap_or(u32::MAX - 1);
            let duration_ns = s.end_ns.saturating_sub(s.start_ns);
            let mut stack = self.stacks.remove(&s.thread).unwrap_or_default();
            while stack.last().is_some_and(|top| top.depth >= s.depth) {
                if let Some(top) = stack.pop() {
                    Self::close(&mut self.nodes, &top);
                }
            }
            let parent = match stack.last_mut() {
                Some(top) => {
                    top.children_ns = top.children_ns.saturating_add(duration_ns);
                    top.node
                }
                None => 0,
            };
            let node = self.node(parent, name);
            let n = &mut self.nodes[node];
            n.calls = n.calls.saturating_add(1);
            n.total_ns = n.total_ns.saturating_add(duration_ns);
            stack.push(Open {
                depth: s.depth,
                node,
                duration_ns,
                children_ns: 0,
            });
            self.stacks.insert(s.thread, stack);
        }
        for stack in self.stacks.values_mut() {
            while let Some(open) = stack.pop() {
                Self::close(&mut self.nodes, &open);
            }
        }
    }

    fn build(&self, at: usize) -> FlameNode {
        let n = &self.nodes[at];
        FlameNode {
            name: self.name_text(n.name).to_owned(),
            calls: n.calls,
            total_ns: n.total_ns,
            self_ns: n.self_ns,
            children: self.children(at),
        }
    }

    fn name_text(&self, name: u32) -> &str {
        self.names.get(name as usize).copied().unwrap_or("?")
    }

    fn children(&self, at: usize) -> Vec<FlameNode> {
        let mut out: Vec<FlameNode> = self.nodes[at]
            .children
            .iter()
            .map(|&c| self.build(c))
            .collect();
        sort_nodes(&mut out, |n| (n.total_ns, n.name.as_str()));
        out
    }

    fn finish(self, options: &FlameOptions) -> FlameGraph {
        let roots = self.children(0);
        FlameGraph {
            from: options.rows.start,
            to: options.rows.end,
            thread: options.thread.clone(),
            threads: self
                .capture
                .threads()
                .iter()
                .zip(&self.seen_threads)
                .filter(|(_, seen)| **seen)
                .map(|(t, _)| t.clone())
                .collect(),
            frames: options.rows.len(),
            total_ns: roots
                .iter()
                .fold(0u64, |sum, r| sum.saturating_add(r.total_ns)),
            roots,
        }
    }
}

/// Largest first, then by name.
fn sort_nodes<T>(nodes: &mut [T], key: impl Fn(&T) -> (u64, &str)) {
    nodes.sort_by(|a, b| {
        let (ta, na) = key(a);
        let (tb, nb) = key(b);
        tb.cmp(&ta).then_with(|| na.cmp(nb))
    });
}

/// One name's totals over a fold, counted as [`crate::summarize`] counts a scope: calls on
/// every path, inclusive time of the outermost instances only (a scope inside itself is
/// not counted twice), self time on every path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameTotals {
    /// The scope's name.
    pub name: String,
    /// Instances.
    pub calls: u64,
    /// Inclusive time of outermost instances, ns.
    pub total_ns: u64,
    /// Self time, ns.
    pub self_ns: u64,
}

impl FlameGraph {
    /// Totals per scope name over the whole fold (largest total first): what the flame
    /// graph's nodes add up to, name by name.
    pub fn name_totals(&self) -> Vec<NameTotals> {
        fn walk<'n>(
            node: &'n FlameNode,
            open: &mut Vec<&'n str>,
            out: &mut HashMap<&'n str, NameTotals>,
        ) {
            let outer = !open.contains(&node.name.as_str());
            let t = out.entry(&node.name).or_insert_with(|| NameTotals {
                name: node.name.clone(),
                calls: 0,
                total_ns: 0,
                self_ns: 0,
            });
            t.calls = t.calls.saturating_add(node.calls);
            t.self_ns = t.self_ns.saturating_add(node.self_ns);
            if outer {
                t.total_ns = t.total_ns.saturating_add(node.total_ns);
            }
            open.push(&node.name);
            for c in &node.children {
                walk(c, open, out);
            }
            open.pop();
        }
        let mut out = HashMap::new();
        for r in &self.roots {
            walk(r, &mut Vec::new(), &mut out);
        }
        let mut v: Vec<NameTotals> = out.into_values().collect();
        sort_nodes(&mut v, |t| (t.total_ns, t.name.as_str()));
        v
    }
}

mod diff;
pub use diff::{diff, FlameDiff, FlameDiffNode};

#[cfg(test)]
mod tests;
