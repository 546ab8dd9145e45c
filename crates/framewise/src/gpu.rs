//! The backend-agnostic GPU pass API.
//!
//! A GPU backend (wgpu, Vulkan…) declares its queues when the session is built, calls
//! [`Session::gpu_submit`](crate::Session::gpu_submit) when a frame's work is submitted, and
//! [`Session::gpu_deliver`](crate::Session::gpu_deliver) whenever the timestamps are read back,
//! frames later as is normal. Timestamps stay in the queue's own clock domain, as raw ticks;
//! the queue's tick-to-ns factor (the API's own declaration) goes into META.

use framewise_format::model::SymId;

/// A GPU queue declared on the session builder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuQueue {
    pub(crate) symbol: SymId,
}

/// An interned pass label; make it once with [`Session::pass_label`](crate::Session::pass_label)
/// and reuse it every frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PassLabel {
    pub(crate) symbol: SymId,
}

impl PassLabel {
    /// The label's symbol id in the capture.
    pub fn symbol(&self) -> SymId {
        self.symbol
    }
}

/// An interned label of another kind (pipeline, entry point, extra workload name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    pub(crate) symbol: SymId,
}

impl Label {
    /// The label's symbol id, for model fields such as [`Workload::pipeline`](crate::Workload).
    pub fn symbol(&self) -> SymId {
        self.symbol
    }
}

/// A frame's submission on one queue, waiting for its timestamps.
///
/// Hand it back through `gpu_deliver` when the readback arrives. A ticket that is never
/// delivered leaves its frame to be written without GPU times after `gpu_wait_frames` frames.
#[derive(Debug, PartialEq, Eq, Hash)]
#[must_use = "deliver the ticket when the GPU timestamps are read back"]
pub struct GpuTicket {
    pub(crate) frame_index: u64,
    pub(crate) queue: SymId,
}

impl GpuTicket {
    /// The frame the submission belongs to.
    pub fn frame_index(&self) -> u64 {
        self.frame_index
    }
}

/// One pass's timestamps as read back, in the queue's clock domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuPassTiming {
    /// The pass label.
    pub pass: PassLabel,
    /// Nesting depth among the queue's passes, 0 for outermost.
    pub depth: u32,
    /// Begin timestamp, raw ticks; `None` when the pass had no timestamps.
    pub begin_ticks: Option<u64>,
    /// End timestamp, raw ticks (kept as reported, even when before the begin).
    pub end_ticks: Option<u64>,
}
