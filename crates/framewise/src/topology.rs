//! Frame-graph topology descriptions (capture level 1 and up).
//!
//! The host describes its frame graph with names; the session interns them, hashes the
//! result by content and writes one `TOPO` record per distinct graph. A frame then costs one
//! id: [`Session::set_topology`](crate::Session::set_topology).

use framewise_format::model::{Access, PassKind, ResourceKind};

/// A frame graph, described by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyDesc {
    /// Passes in execution order.
    pub passes: Vec<PassDesc>,
    /// Resource nodes.
    pub resources: Vec<ResourceDesc>,
    /// Edges: a pass reads or writes a version of a resource.
    pub edges: Vec<EdgeDesc>,
}

/// A pass node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassDesc {
    /// The pass label (the same label GPU timings and workloads use).
    pub label: String,
    /// Render, compute, copy or other.
    pub kind: PassKind,
    /// The graph culled it.
    pub culled: bool,
    /// The CPU scope that records it, by name, if any.
    pub scope: Option<String>,
}

impl PassDesc {
    /// A pass that runs, with no scope.
    pub fn new(label: impl Into<String>, kind: PassKind) -> Self {
        Self {
            label: label.into(),
            kind,
            culled: false,
            scope: None,
        }
    }
}

/// A resource node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceDesc {
    /// The resource label.
    pub label: String,
    /// Buffer, texture, other.
    pub kind: ResourceKind,
    /// Format (`rgba8unorm`), if any.
    pub format: Option<String>,
    /// Usage (`render_attachment|texture_binding`), if any.
    pub usage: Option<String>,
    /// Declared size in bytes, if declared.
    pub declared_bytes: Option<u64>,
    /// Lives only within the frame.
    pub transient: bool,
    /// Comes from outside the graph.
    pub imported: bool,
    /// Index of the first pass that uses it.
    pub first_use: Option<u32>,
    /// Index of the last pass that uses it.
    pub last_use: Option<u32>,
}

impl ResourceDesc {
    /// A resource with only a label and a kind declared.
    pub fn new(label: impl Into<String>, kind: ResourceKind) -> Self {
        Self {
            label: label.into(),
            kind,
            format: None,
            usage: None,
            declared_bytes: None,
            transient: false,
            imported: false,
            first_use: None,
            last_use: None,
        }
    }
}

/// An edge, by indices into [`TopologyDesc::passes`] and [`TopologyDesc::resources`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeDesc {
    /// The pass.
    pub pass: u32,
    /// The resource.
    pub resource: u32,
    /// Read, write or both.
    pub access: Access,
    /// The resource version read or produced.
    pub version: u32,
}

/// A registered topology: its content hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TopologyId(pub u64);
