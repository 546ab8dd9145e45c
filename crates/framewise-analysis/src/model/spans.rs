//! Individual spans, kept when a load asks for them.

use super::*;

/// One CPU span, kept when spans were asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanRow {
    /// The thread.
    pub thread: ThreadId,
    /// The scope.
    pub scope: ScopeId,
    /// Nesting depth on its thread.
    pub depth: u32,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

/// One timed GPU pass instance, kept when spans were asked for. Its times are *nominal*:
/// the GPU duration as measured, placed on the CPU axis at the frame's anchor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuSpanRow {
    /// The pass.
    pub pass: PassId,
    /// Nesting depth among its queue's passes.
    pub depth: u32,
    /// Nominal start on the CPU axis, ns.
    pub nominal_start_ns: u64,
    /// Nominal end on the CPU axis, ns.
    pub nominal_end_ns: u64,
}

/// Individual spans, per frame, in pre-order per thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpanTable {
    /// CPU spans.
    pub cpu: PerFrame<SpanRow>,
    /// Timed GPU pass instances.
    pub gpu: PerFrame<GpuSpanRow>,
}

impl SpanTable {
    /// Frame `row`'s spans (none for a row past the end).
    pub fn frame_spans(&self, row: usize) -> FrameSpans {
        FrameSpans {
            cpu: self.cpu.frame(row).to_vec(),
            gpu: self.gpu.frame(row).to_vec(),
        }
    }
}

/// One frame's spans, as a load with spans keeps them: CPU spans in pre-order per
/// thread (threads in the order the source gave them), timed GPU pass instances in
/// submission order. From [`SpanTable::frame_spans`], or read from the file on demand
/// by [`crate::load::FrameSource`]; the two are the same rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameSpans {
    /// CPU spans.
    pub cpu: Vec<SpanRow>,
    /// Timed GPU pass instances, placed nominally on the CPU axis.
    pub gpu: Vec<GpuSpanRow>,
}
