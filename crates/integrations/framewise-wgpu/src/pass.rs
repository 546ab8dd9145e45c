//! Pass and scope guards: each records one pass (or scope) in the open frame when it begins,
//! writes its timestamps, counts the work issued through it, and closes it when dropped.
//!
//! Counts are exact because every counted command goes through the guard. The `raw()` escape
//! hatch hands out the wgpu pass itself; work issued through it cannot be seen, so using it
//! turns the pass's counts into "unknown" rather than leave them silently short.

use std::ops::{Deref, DerefMut, Range};

use framewise::{Label, PassLabel, Workload};

use crate::pipeline::{
    primitives, ComputePipeline, ComputePipelineInfo, RenderPipeline, RenderPipelineInfo,
};
use crate::profiler::{GpuProfiler, QueryRef, TimestampKind};

/// What a pass used for its work: nothing yet, one thing throughout, or several.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Used<T> {
    #[default]
    Nothing,
    One(T),
    Mixed,
}

impl<T: Copy + PartialEq> Used<T> {
    fn note(&mut self, value: T) {
        *self = match *self {
            Self::Nothing => Self::One(value),
            Self::One(previous) if previous == value => Self::One(previous),
            _ => Self::Mixed,
        };
    }

    fn one(self) -> Option<T> {
        match self {
            Self::One(value) => Some(value),
            _ => None,
        }
    }
}

fn span(range: &Range<u32>) -> u64 {
    u64::from(range.end.saturating_sub(range.start))
}

/// What a scope can be timed on: an encoder, or a pass on a device with
/// `TIMESTAMP_QUERY_INSIDE_PASSES`. wgpu gives the three no common trait.
trait WriteTimestamp {
    fn write_timestamp(&mut self, query_set: &wgpu::QuerySet, query_index: u32);
}

impl WriteTimestamp for wgpu::CommandEncoder {
    fn write_timestamp(&mut self, query_set: &wgpu::QuerySet, query_index: u32) {
        wgpu::CommandEncoder::write_timestamp(self, query_set, query_index);
    }
}

impl WriteTimestamp for wgpu::ComputePass<'_> {
    fn write_timestamp(&mut self, query_set: &wgpu::QuerySet, query_index: u32) {
        wgpu::ComputePass::write_timestamp(self, query_set, query_index);
    }
}

impl WriteTimestamp for wgpu::RenderPass<'_> {
    fn write_timestamp(&mut self, query_set: &wgpu::QuerySet, query_index: u32) {
        wgpu::RenderPass::write_timestamp(self, query_set, query_index);
    }
}

/// Opens a scope in the open frame and, when it is timed, writes its beginning timestamp on
/// `target`. Returns the scope's query pair, for [`end_scope`].
fn begin_scope(
    profiler: &mut GpuProfiler,
    target: &mut impl WriteTimestamp,
    label: PassLabel,
    kind: TimestampKind,
) -> Option<QueryRef> {
    let (query, query_set) = profiler.begin(label, kind)?;
    target.write_timestamp(query_set, query.index);
    Some(query)
}

/// Closes a scope [`begin_scope`] opened, writing its end timestamp when it is timed. A query
/// set that has gone meanwhile cannot be written, so the frame is marked broken instead.
fn end_scope(
    profiler: &mut GpuProfiler,
    target: &mut impl WriteTimestamp,
    query: Option<QueryRef>,
) {
    if let Some(query) = query {
        match profiler.query_set(query) {
            Some(query_set) => target.write_timestamp(query_set, query.index + 1),
            None => profiler.mark_broken(),
        }
    }
    profiler.end(None);
}

/// What the workload records of a bound pipeline whatever the kind of pass: its label and
/// entry point.
trait PipelineLabels: Copy + PartialEq {
    fn labels(&self) -> (Label, Option<Label>);
}

impl PipelineLabels for ComputePipelineInfo {
    fn labels(&self) -> (Label, Option<Label>) {
        (self.label, self.entry_point)
    }
}

impl PipelineLabels for RenderPipelineInfo {
    fn labels(&self) -> (Label, Option<Label>) {
        (self.label, self.entry_point)
    }
}

/// What the compute and render pass guards share: the wgpu pass, the profiler the pass is
/// recorded in, the pipelines its work used, and whether its counts are still exact. Each
/// guard adds the counters of its kind of work.
struct PassState<'a, P, I> {
    pass: P,
    profiler: &'a mut GpuProfiler,
    label: PassLabel,
    /// The bound pipeline: `None` unset, `Some(None)` bound without a description.
    current: Option<Option<I>>,
    used: Used<Option<I>>,
    /// Cleared by `raw()`: work issued past the guard cannot be counted.
    exact: bool,
}

impl<'a, P: WriteTimestamp, I: PipelineLabels> PassState<'a, P, I> {
    /// The state of a pass just begun; the profiler has already recorded it.
    fn new(pass: P, profiler: &'a mut GpuProfiler, label: PassLabel) -> Self {
        Self {
            pass,
            profiler,
            label,
            current: None,
            used: Used::Nothing,
            exact: true,
        }
    }

    /// Opens a scope inside the pass, timed when the device allows it.
    fn begin_scope(&mut self, label: PassLabel) -> Option<QueryRef> {
        begin_scope(self.profiler, &mut self.pass, label, TimestampKind::InPass)
    }

    /// Closes a scope [`Self::begin_scope`] opened.
    fn end_scope(&mut self, query: Option<QueryRef>) {
        end_scope(self.profiler, &mut self.pass, query);
    }

    /// The bound pipeline's description, when one is bound and described.
    fn bound(&self) -> Option<I> {
        self.current.flatten()
    }

    /// Notes that work was issued with the bound pipeline.
    fn note_pipeline(&mut self) {
        self.used.note(self.bound());
    }

    /// The wgpu pass, handed out past the guard: the counts become unknown.
    fn raw(&mut self) -> &mut P {
        self.exact = false;
        &mut self.pass
    }

    /// The pass's workload: `counts` fills in the counters of its kind of work and is given
    /// the one pipeline the work used, if it used only one. All of it is unknown after
    /// `raw()`.
    fn workload(&self, counts: impl FnOnce(&mut Workload, Option<I>)) -> Workload {
        let mut workload = Workload::default();
        if !self.exact {
            return workload;
        }
        let pipeline = self.used.one().flatten();
        if let Some((label, entry_point)) = pipeline.map(|info| info.labels()) {
            workload.pipeline = Some(label.symbol());
            workload.entry_point = entry_point.map(|label| label.symbol());
        }
        counts(&mut workload, pipeline);
        workload
    }

    /// Closes the pass, recording its workload.
    fn end(&mut self, workload: Workload) {
        self.profiler.end(Some((self.label, workload)));
    }
}

/// A scope on a command encoder, made by [`GpuProfiler::scope`]. Timed when the device has
/// `TIMESTAMP_QUERY_INSIDE_ENCODERS`; passes and scopes begun through it nest inside it. Ends
/// when dropped.
pub struct EncoderScope<'a> {
    profiler: &'a mut GpuProfiler,
    encoder: &'a mut wgpu::CommandEncoder,
    query: Option<QueryRef>,
}

impl std::fmt::Debug for EncoderScope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncoderScope")
            .field("timed", &self.query.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> EncoderScope<'a> {
    pub(crate) fn begin(
        profiler: &'a mut GpuProfiler,
        encoder: &'a mut wgpu::CommandEncoder,
        label: PassLabel,
    ) -> Self {
        let query = begin_scope(profiler, encoder, label, TimestampKind::Encoder);
        Self {
            profiler,
            encoder,
            query,
        }
    }

    /// Opens a scope nested in this one.
    pub fn scope(&mut self, label: PassLabel) -> EncoderScope<'_> {
        EncoderScope::begin(self.profiler, self.encoder, label)
    }

    /// Begins a timed compute pass nested in this scope.
    pub fn compute_pass(
        &mut self,
        label: PassLabel,
        desc: &wgpu::ComputePassDescriptor<'_>,
    ) -> TimedComputePass<'_> {
        TimedComputePass::begin(self.profiler, self.encoder, label, desc)
    }

    /// Begins a timed render pass nested in this scope.
    pub fn render_pass(
        &mut self,
        label: PassLabel,
        desc: wgpu::RenderPassDescriptor<'_>,
    ) -> TimedRenderPass<'_> {
        TimedRenderPass::begin(self.profiler, self.encoder, label, desc)
    }

    /// The encoder, for commands that are not passes (copies, clears); they run inside the
    /// scope's interval.
    pub fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.encoder
    }
}

impl Drop for EncoderScope<'_> {
    fn drop(&mut self) {
        end_scope(self.profiler, self.encoder, self.query);
    }
}

/// A compute pass timed with pass timestamp writes, counting its dispatches; made by
/// [`GpuProfiler::compute_pass`]. Ends (and records its workload) when dropped.
pub struct TimedComputePass<'a> {
    state: PassState<'a, wgpu::ComputePass<'a>, ComputePipelineInfo>,
    dispatches: u64,
    indirect_dispatches: u64,
    workgroups: u64,
    invocations: Option<u64>,
}

impl std::fmt::Debug for TimedComputePass<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimedComputePass")
            .field("label", &self.state.label)
            .field("dispatches", &self.dispatches)
            .finish_non_exhaustive()
    }
}

impl<'a> TimedComputePass<'a> {
    pub(crate) fn begin(
        profiler: &'a mut GpuProfiler,
        encoder: &'a mut wgpu::CommandEncoder,
        label: PassLabel,
        desc: &wgpu::ComputePassDescriptor<'_>,
    ) -> Self {
        let pass = {
            let timestamp_writes =
                profiler
                    .begin(label, TimestampKind::Pass)
                    .map(|(query, query_set)| wgpu::ComputePassTimestampWrites {
                        query_set,
                        beginning_of_pass_write_index: Some(query.index),
                        end_of_pass_write_index: Some(query.index + 1),
                    });
            encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: desc.label,
                timestamp_writes,
            })
        };
        Self {
            state: PassState::new(pass, profiler, label),
            dispatches: 0,
            indirect_dispatches: 0,
            workgroups: 0,
            invocations: Some(0),
        }
    }

    /// Opens a scope inside the pass: timed when the device has
    /// `TIMESTAMP_QUERY_INSIDE_PASSES`, else recorded untimed. Work issued through the scope
    /// counts towards this pass.
    pub fn scope(&mut self, label: PassLabel) -> ComputePassScope<'_, 'a> {
        let query = self.state.begin_scope(label);
        ComputePassScope { pass: self, query }
    }

    /// Binds a described pipeline: the workload records its label, entry point and
    /// workgroup size.
    pub fn set_pipeline(&mut self, pipeline: &ComputePipeline) {
        self.state.pass.set_pipeline(&pipeline.raw);
        self.state.current = Some(Some(pipeline.info));
    }

    /// Binds a pipeline the profiler knows nothing about: its label and workgroup size are
    /// recorded as unknown.
    pub fn set_raw_pipeline(&mut self, pipeline: &wgpu::ComputePipeline) {
        self.state.pass.set_pipeline(pipeline);
        self.state.current = Some(None);
    }

    /// `ComputePass::set_bind_group`.
    pub fn set_bind_group<'b, G>(
        &mut self,
        index: u32,
        bind_group: G,
        offsets: &[wgpu::DynamicOffset],
    ) where
        Option<&'b wgpu::BindGroup>: From<G>,
    {
        self.state.pass.set_bind_group(index, bind_group, offsets);
    }

    /// `ComputePass::dispatch_workgroups`, counted.
    pub fn dispatch_workgroups(&mut self, x: u32, y: u32, z: u32) {
        self.state.pass.dispatch_workgroups(x, y, z);
        let workgroups = u64::from(x) * u64::from(y) * u64::from(z);
        self.dispatches += 1;
        self.workgroups = self.workgroups.saturating_add(workgroups);
        let size = self.state.bound().and_then(|info| info.workgroup_size);
        self.invocations = match (self.invocations, size) {
            (Some(total), Some([sx, sy, sz])) => {
                let per_group = u64::from(sx) * u64::from(sy) * u64::from(sz);
                Some(total.saturating_add(workgroups.saturating_mul(per_group)))
            }
            _ => None,
        };
        self.state.note_pipeline();
    }

    /// `ComputePass::dispatch_workgroups_indirect`, counted (its workgroups are unknown on
    /// the CPU, so the pass's invocations become unknown).
    pub fn dispatch_workgroups_indirect(
        &mut self,
        indirect_buffer: &wgpu::Buffer,
        indirect_offset: wgpu::BufferAddress,
    ) {
        self.state
            .pass
            .dispatch_workgroups_indirect(indirect_buffer, indirect_offset);
        self.dispatches += 1;
        self.indirect_dispatches += 1;
        self.invocations = None;
        self.state.note_pipeline();
    }

    /// `ComputePass::push_debug_group`.
    pub fn push_debug_group(&mut self, label: &str) {
        self.state.pass.push_debug_group(label);
    }

    /// `ComputePass::pop_debug_group`.
    pub fn pop_debug_group(&mut self) {
        self.state.pass.pop_debug_group();
    }

    /// `ComputePass::insert_debug_marker`.
    pub fn insert_debug_marker(&mut self, label: &str) {
        self.state.pass.insert_debug_marker(label);
    }

    /// The wgpu pass itself, for what the guard does not wrap. Work issued through it cannot
    /// be counted, so the pass's counts (and pipeline) become unknown from here on.
    pub fn raw(&mut self) -> &mut wgpu::ComputePass<'a> {
        self.state.raw()
    }

    /// The pass's workload: counts are exact, or unknown after `raw()`.
    fn workload(&self) -> Workload {
        self.state.workload(|workload, pipeline| {
            workload.dispatches = Some(self.dispatches);
            workload.indirect_dispatches = Some(self.indirect_dispatches);
            workload.workgroups = Some(self.workgroups);
            workload.invocations = self.invocations;
            workload.workgroup_size = pipeline.and_then(|info| info.workgroup_size);
        })
    }
}

impl Drop for TimedComputePass<'_> {
    fn drop(&mut self) {
        let workload = self.workload();
        self.state.end(workload);
    }
}

/// A render pass timed with pass timestamp writes, counting its draws; made by
/// [`GpuProfiler::render_pass`]. Ends (and records its workload) when dropped.
pub struct TimedRenderPass<'a> {
    state: PassState<'a, wgpu::RenderPass<'a>, RenderPipelineInfo>,
    draws: u64,
    indexed_draws: u64,
    indirect_draws: u64,
    instances: Option<u64>,
    vertices: Option<u64>,
    primitives: Option<u64>,
}

impl std::fmt::Debug for TimedRenderPass<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimedRenderPass")
            .field("label", &self.state.label)
            .field("draws", &self.draws)
            .finish_non_exhaustive()
    }
}

impl<'a> TimedRenderPass<'a> {
    pub(crate) fn begin(
        profiler: &'a mut GpuProfiler,
        encoder: &'a mut wgpu::CommandEncoder,
        label: PassLabel,
        desc: wgpu::RenderPassDescriptor<'_>,
    ) -> Self {
        let pass = {
            let timestamp_writes =
                profiler
                    .begin(label, TimestampKind::Pass)
                    .map(|(query, query_set)| wgpu::RenderPassTimestampWrites {
                        query_set,
                        beginning_of_pass_write_index: Some(query.index),
                        end_of_pass_write_index: Some(query.index + 1),
                    });
            encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                timestamp_writes,
                ..desc
            })
        };
        Self {
            state: PassState::new(pass, profiler, label),
            draws: 0,
            indexed_draws: 0,
            indirect_draws: 0,
            instances: Some(0),
            vertices: Some(0),
            primitives: Some(0),
        }
    }

    /// Opens a scope inside the pass: timed when the device has
    /// `TIMESTAMP_QUERY_INSIDE_PASSES`, else recorded untimed. Work issued through the scope
    /// counts towards this pass.
    pub fn scope(&mut self, label: PassLabel) -> RenderPassScope<'_, 'a> {
        let query = self.state.begin_scope(label);
        RenderPassScope { pass: self, query }
    }

    /// Binds a described pipeline: the workload records its label and entry point, and its
    /// topology lets the pass count primitives.
    pub fn set_pipeline(&mut self, pipeline: &RenderPipeline) {
        self.state.pass.set_pipeline(&pipeline.raw);
        self.state.current = Some(Some(pipeline.info));
    }

    /// Binds a pipeline the profiler knows nothing about: its label is recorded as unknown,
    /// and so are the primitives it draws.
    pub fn set_raw_pipeline(&mut self, pipeline: &wgpu::RenderPipeline) {
        self.state.pass.set_pipeline(pipeline);
        self.state.current = Some(None);
    }

    /// `RenderPass::set_bind_group`.
    pub fn set_bind_group<'b, G>(
        &mut self,
        index: u32,
        bind_group: G,
        offsets: &[wgpu::DynamicOffset],
    ) where
        Option<&'b wgpu::BindGroup>: From<G>,
    {
        self.state.pass.set_bind_group(index, bind_group, offsets);
    }

    /// `RenderPass::set_vertex_buffer`.
    pub fn set_vertex_buffer<'b, B>(&mut self, slot: u32, buffer_slice: B)
    where
        Option<wgpu::BufferSlice<'b>>: From<B>,
    {
        self.state.pass.set_vertex_buffer(slot, buffer_slice);
    }

    /// `RenderPass::set_index_buffer`.
    pub fn set_index_buffer(
        &mut self,
        buffer_slice: wgpu::BufferSlice<'_>,
        index_format: wgpu::IndexFormat,
    ) {
        self.state.pass.set_index_buffer(buffer_slice, index_format);
    }

    /// `RenderPass::set_viewport`.
    pub fn set_viewport(&mut self, x: f32, y: f32, w: f32, h: f32, min_depth: f32, max_depth: f32) {
        self.state
            .pass
            .set_viewport(x, y, w, h, min_depth, max_depth);
    }

    /// `RenderPass::set_scissor_rect`.
    pub fn set_scissor_rect(&mut self, x: u32, y: u32, width: u32, height: u32) {
        self.state.pass.set_scissor_rect(x, y, width, height);
    }

    /// `RenderPass::set_blend_constant`.
    pub fn set_blend_constant(&mut self, color: wgpu::Color) {
        self.state.pass.set_blend_constant(color);
    }

    /// `RenderPass::set_stencil_reference`.
    pub fn set_stencil_reference(&mut self, reference: u32) {
        self.state.pass.set_stencil_reference(reference);
    }

    /// `RenderPass::draw`, counted: one draw, its instances, vertices × instances, and
    /// primitives when the pipeline's topology is known.
    pub fn draw(&mut self, vertices: Range<u32>, instances: Range<u32>) {
        let (count, instance_count) = (span(&vertices), span(&instances));
        self.state.pass.draw(vertices, instances);
        self.count_direct(count, instance_count);
    }

    /// `RenderPass::draw_indexed`, counted as [`draw`](Self::draw) is, with the index count
    /// as the vertex count; also an indexed draw.
    pub fn draw_indexed(&mut self, indices: Range<u32>, base_vertex: i32, instances: Range<u32>) {
        let (count, instance_count) = (span(&indices), span(&instances));
        self.state
            .pass
            .draw_indexed(indices, base_vertex, instances);
        self.indexed_draws += 1;
        self.count_direct(count, instance_count);
    }

    /// `RenderPass::draw_indirect`, counted as one indirect draw; the pass's instances,
    /// vertices and primitives become unknown (the counts live on the GPU).
    pub fn draw_indirect(
        &mut self,
        indirect_buffer: &wgpu::Buffer,
        indirect_offset: wgpu::BufferAddress,
    ) {
        self.state
            .pass
            .draw_indirect(indirect_buffer, indirect_offset);
        self.count_indirect();
    }

    /// `RenderPass::draw_indexed_indirect`, counted as one indexed indirect draw.
    pub fn draw_indexed_indirect(
        &mut self,
        indirect_buffer: &wgpu::Buffer,
        indirect_offset: wgpu::BufferAddress,
    ) {
        self.state
            .pass
            .draw_indexed_indirect(indirect_buffer, indirect_offset);
        self.indexed_draws += 1;
        self.count_indirect();
    }

    /// `RenderPass::push_debug_group`.
    pub fn push_debug_group(&mut self, label: &str) {
        self.state.pass.push_debug_group(label);
    }

    /// `RenderPass::pop_debug_group`.
    pub fn pop_debug_group(&mut self) {
        self.state.pass.pop_debug_group();
    }

    /// `RenderPass::insert_debug_marker`.
    pub fn insert_debug_marker(&mut self, label: &str) {
        self.state.pass.insert_debug_marker(label);
    }

    /// The wgpu pass itself, for what the guard does not wrap (bundles, multi-draw). Work
    /// issued through it cannot be counted, so the pass's counts (and pipeline) become
    /// unknown from here on.
    pub fn raw(&mut self) -> &mut wgpu::RenderPass<'a> {
        self.state.raw()
    }

    fn count_direct(&mut self, count: u64, instance_count: u64) {
        self.draws += 1;
        self.instances = self
            .instances
            .map(|total| total.saturating_add(instance_count));
        self.vertices = self
            .vertices
            .map(|total| total.saturating_add(count.saturating_mul(instance_count)));
        let topology = self.state.bound().and_then(|info| info.topology);
        self.primitives = match (self.primitives, topology) {
            (Some(total), Some(topology)) => Some(
                total.saturating_add(primitives(topology, count).saturating_mul(instance_count)),
            ),
            _ => None,
        };
        self.state.note_pipeline();
    }

    fn count_indirect(&mut self) {
        self.draws += 1;
        self.indirect_draws += 1;
        self.instances = None;
        self.vertices = None;
        self.primitives = None;
        self.state.note_pipeline();
    }

    /// The pass's workload: counts are exact, or unknown after `raw()`.
    fn workload(&self) -> Workload {
        self.state.workload(|workload, _| {
            workload.draws = Some(self.draws);
            workload.indexed_draws = Some(self.indexed_draws);
            workload.indirect_draws = Some(self.indirect_draws);
            workload.instances = self.instances;
            workload.vertices = self.vertices;
            workload.primitives = self.primitives;
        })
    }
}

impl Drop for TimedRenderPass<'_> {
    fn drop(&mut self) {
        let workload = self.workload();
        self.state.end(workload);
    }
}

macro_rules! pass_scope {
    ($(#[$doc:meta])* $scope:ident, $pass:ident) => {
        $(#[$doc])*
        pub struct $scope<'s, 'a> {
            pass: &'s mut $pass<'a>,
            query: Option<QueryRef>,
        }

        impl std::fmt::Debug for $scope<'_, '_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($scope))
                    .field("timed", &self.query.is_some())
                    .finish_non_exhaustive()
            }
        }

        impl<'a> Deref for $scope<'_, 'a> {
            type Target = $pass<'a>;

            fn deref(&self) -> &Self::Target {
                self.pass
            }
        }

        impl DerefMut for $scope<'_, '_> {
            fn deref_mut(&mut self) -> &mut Self::Target {
                self.pass
            }
        }

        impl Drop for $scope<'_, '_> {
            fn drop(&mut self) {
                self.pass.state.end_scope(self.query);
            }
        }
    };
}

pass_scope!(
    /// A scope inside a compute pass, made by [`TimedComputePass::scope`]; derefs to the pass,
    /// so work issued through it is counted as the pass's. Ends when dropped.
    ComputePassScope,
    TimedComputePass
);

pass_scope!(
    /// A scope inside a render pass, made by [`TimedRenderPass::scope`]; derefs to the pass,
    /// so work issued through it is counted as the pass's. Ends when dropped.
    RenderPassScope,
    TimedRenderPass
);
