//! Frame-graph topologies: the summary every load keeps and the full graph the structure
//! view draws.

use serde::{Deserialize, Serialize};

/// A topology's summary (the structure view reads the full topology from the file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologySummary {
    /// The topology's content hash.
    pub id: u64,
    /// Pass nodes.
    pub passes: u32,
    /// Passes the graph culled.
    pub culled_passes: u32,
    /// Resource nodes.
    pub resources: u32,
    /// Edges.
    pub edges: u32,
    /// Frames that ran it.
    pub frames: u64,
}

/// A frame-graph topology in full, its symbols resolved to names: what the inspector's
/// structure view draws. Loaders keep every topology a capture carries (a handful per
/// capture, a few kilobytes), and each frame's topology id as a run ([`Capture::topology_of`](super::Capture::topology_of)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyDetail {
    /// The topology's content hash.
    pub id: u64,
    /// Pass nodes in execution order.
    pub passes: Vec<TopologyPass>,
    /// Resource nodes.
    pub resources: Vec<TopologyResource>,
    /// Edges between them.
    pub edges: Vec<TopologyEdge>,
}

/// What a frame-graph pass does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TopologyPassKind {
    /// Rasterisation.
    Render,
    /// Compute.
    Compute,
    /// Copies and transfers.
    Copy,
    /// Anything else.
    Other,
}

/// A pass node of a [`TopologyDetail`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyPass {
    /// The pass label (`#` and the symbol id when no intact record names it).
    pub label: String,
    /// Render, compute, copy, other.
    pub kind: TopologyPassKind,
    /// The graph culled it (declared but not executed).
    pub culled: bool,
    /// The CPU scope that records it, if declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// What a frame-graph resource is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TopologyResourceKind {
    /// A buffer.
    Buffer,
    /// A texture or render target.
    Texture,
    /// Anything else.
    Other,
}

/// A resource node of a [`TopologyDetail`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyResource {
    /// The resource label.
    pub label: String,
    /// Buffer, texture, other.
    pub kind: TopologyResourceKind,
    /// Its format label (`rgba8unorm`), if declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Declared size in bytes, if declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Lives only within the frame.
    pub transient: bool,
}

/// How a pass uses a resource version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyAccess {
    /// Reads it.
    Read,
    /// Writes it.
    Write,
    /// Reads and writes it.
    ReadWrite,
}

/// An edge of a [`TopologyDetail`]: a pass reads or writes a version of a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TopologyEdge {
    /// Position in [`TopologyDetail::passes`].
    pub pass: u32,
    /// Position in [`TopologyDetail::resources`].
    pub resource: u32,
    /// The resource version read or produced.
    pub version: u32,
    /// Read, write or both.
    pub access: TopologyAccess,
}
