//! The decoded, in-memory form of every record payload.
//!
//! These types are what a writer encodes and what a reader hands back. Names are
//! referenced through [`SymId`]s; a [`SymbolTable`] maps them to [`Symbol`]s. Every time
//! field names its unit and clock domain: `*_ns` fields are nanoseconds on the session's
//! CPU clock (counted from the session's start), `*_ticks` fields are raw GPU timestamps
//! in that queue's own clock domain.

use std::collections::HashMap;

/// A symbol id: a small integer assigned by the writer, unique within one capture.
pub type SymId = u32;

/// What a symbol names; decides which extra fields it carries.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SymbolKind {
    /// A CPU scope, with the call site that opened it.
    Scope {
        /// Source file of the call site (as `file!()` spells it), empty when unknown.
        file: String,
        /// Line of the call site, 0 when unknown.
        line: u32,
    },
    /// A thread (a CPU lane).
    Thread,
    /// A GPU or frame-graph pass label.
    Pass,
    /// A pipeline label.
    Pipeline,
    /// A counter and whether it sums within a frame or holds a level.
    Counter(CounterKind),
    /// A frame-graph resource label.
    Resource,
    /// A phase of the program (`boot`, `load`, `play`, …).
    Phase,
    /// An instant mark's name.
    Mark,
    /// A GPU queue.
    Queue,
    /// Any other label (texture formats, usages, shader entry points, extra workload names).
    Label,
    /// A kind this reader does not know; carried so a round trip keeps it.
    Unknown {
        /// The kind byte as found in the file.
        kind: u8,
        /// The kind-specific bytes, uninterpreted.
        extra: Vec<u8>,
    },
}

/// Whether a counter accumulates within a frame or holds a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterKind {
    /// Summed within a frame (`draw_calls`, `bytes_uploaded`): a frame's value is the exact
    /// sum of everything counted in it.
    Sum,
    /// A level (`entities`, `gpu_memory_bytes`): a frame's value is the level at frame close.
    Gauge,
}

/// One named thing a record refers to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Symbol {
    /// The id records use to refer to it.
    pub id: SymId,
    /// What it names.
    pub kind: SymbolKind,
    /// The name itself, UTF-8.
    pub name: String,
}

/// Symbols by id, gathered from every record that carried definitions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolTable {
    by_id: HashMap<SymId, Symbol>,
}

impl SymbolTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a symbol. Returns the previous definition when it differed.
    pub fn insert(&mut self, symbol: Symbol) -> Option<Symbol> {
        match self.by_id.insert(symbol.id, symbol) {
            Some(previous) if Some(&previous) != self.by_id.get(&previous.id) => Some(previous),
            _ => None,
        }
    }

    /// The symbol with this id, if any record defined it.
    pub fn get(&self, id: SymId) -> Option<&Symbol> {
        self.by_id.get(&id)
    }

    /// The symbol's name, if defined.
    pub fn name(&self, id: SymId) -> Option<&str> {
        self.by_id.get(&id).map(|s| s.name.as_str())
    }

    /// Whether a definition for this id is known.
    pub fn contains(&self, id: SymId) -> bool {
        self.by_id.contains_key(&id)
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Every symbol, in ascending id order.
    pub fn iter_sorted(&self) -> Vec<&Symbol> {
        let mut all: Vec<&Symbol> = self.by_id.values().collect();
        all.sort_by_key(|s| s.id);
        all
    }
}

/// Capture levels; each adds to the one below (recorded in META).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum CaptureLevel {
    /// Frames, CPU spans, GPU pass times, counters, marks.
    Timing = 0,
    /// Adds topology, scopes, cull state, resource descriptors.
    Structure = 1,
    /// Adds per-pass dispatch/draw counts, pipelines, workgroup sizes.
    Workload = 2,
    /// Adds per-pass bindings and attachments (heavy).
    Verbose = 3,
}

impl CaptureLevel {
    /// The level for a byte, if it is one of the four defined levels.
    pub fn from_u8(value: u8) -> Option<Self> {
        match value {
            0 => Some(Self::Timing),
            1 => Some(Self::Structure),
            2 => Some(Self::Workload),
            3 => Some(Self::Verbose),
            _ => None,
        }
    }

    /// The level's name as the CLI and docs spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Timing => "timing",
            Self::Structure => "structure",
            Self::Workload => "workload",
            Self::Verbose => "verbose",
        }
    }
}

/// What kind of GPU adapter did the work being timed (decides the truth grade).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AdapterType {
    /// Not declared.
    #[default]
    Unknown = 0,
    /// A hardware GPU (discrete or integrated).
    Hardware = 1,
    /// A software rasteriser (lavapipe, llvmpipe, SwiftShader, WARP).
    Software = 2,
}

/// The CPU clock the recorder used.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CpuClock {
    /// Where timestamps come from, e.g. `CLOCK_MONOTONIC` or `rdtsc`.
    pub source: String,
    /// The clock's declared resolution in nanoseconds (`0.0` when unknown).
    pub resolution_ns: f64,
}

/// A GPU queue's clock as the graphics API declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuQueueClock {
    /// The queue's symbol.
    pub queue: SymId,
    /// Nanoseconds per timestamp tick, as the API reports it (never a measured quantum).
    pub timestamp_period_ns: f64,
}

/// The GPU adapter the session ran on, as the host declares it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct AdapterInfo {
    /// Vendor name or id.
    pub vendor: String,
    /// Device name.
    pub device: String,
    /// Driver name and version.
    pub driver: String,
    /// Hardware, software or unknown.
    pub adapter_type: AdapterType,
    /// Graphics API backend (`vulkan`, `metal`, …).
    pub backend: String,
}

/// Render settings the host declares.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RenderSettings {
    /// Internal (render) resolution in pixels, width × height.
    pub internal_resolution: Option<(u32, u32)>,
    /// Output (display) resolution in pixels, width × height.
    pub output_resolution: Option<(u32, u32)>,
    /// Upscaler name, empty when none.
    pub upscaler: String,
}

/// The `META` record: who recorded what, how, on what.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Meta {
    /// 128-bit session id.
    pub session_id: [u8; 16],
    /// Wall-clock time at session start, nanoseconds since the Unix epoch (UTC).
    pub wall_clock_start_unix_ns: u64,
    /// Capture level.
    pub capture_level: u8,
    /// Build id of the recorded program (`FRAMEWISE_BUILD` or set in code), empty if none.
    pub build_id: String,
    /// The CPU clock.
    pub cpu_clock: CpuClock,
    /// One entry per GPU queue that reports timestamps.
    pub gpu_clocks: Vec<GpuQueueClock>,
    /// Host description: OS, architecture, CPU model and similar, as key–value pairs.
    pub host: Vec<(String, String)>,
    /// The GPU adapter, if any.
    pub adapter: Option<AdapterInfo>,
    /// Features and limits that matter, as key–value pairs.
    pub features: Vec<(String, String)>,
    /// Render settings the host declares.
    pub render: Option<RenderSettings>,
    /// Scene scale the host declares (world units per metre, or a free description).
    pub scene_scale: String,
    /// The recorder's own measured cost per scope, nanoseconds (`None` when not measured).
    pub recorder_overhead_ns_per_scope: Option<f64>,
    /// Frame budget in nanoseconds the host declared (`None`: readers use their default).
    pub frame_budget_ns: Option<u64>,
    /// Situation facets (`view=top`, `squad=solo`).
    pub situation: Vec<(String, String)>,
    /// Free-form user note.
    pub note: String,
    /// Free-form key–value settings.
    pub settings: Vec<(String, String)>,
    /// Name and version of the program that wrote the file.
    pub writer: String,
}

/// One CPU span: a scope that opened and closed on one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CpuSpan {
    /// The scope's symbol.
    pub scope: SymId,
    /// Nesting depth on its thread, 0 for outermost.
    pub depth: u32,
    /// Start, ns on the session CPU clock.
    pub start_ns: u64,
    /// End, ns on the session CPU clock; `end_ns >= start_ns`.
    pub end_ns: u64,
}

impl CpuSpan {
    /// Inclusive duration in nanoseconds.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// One thread's spans within a frame, in pre-order (by start, parents before children).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Lane {
    /// The thread's symbol.
    pub thread: SymId,
    /// Spans that closed in this frame. A span whose ancestors had not closed when the
    /// frame closed appears without them, at its true depth.
    pub spans: Vec<CpuSpan>,
    /// Spans the recorder had to drop on this thread in this frame (buffer full).
    pub dropped_spans: u64,
}

/// A GPU queue's CPU anchor for one frame: where the GPU clock sits on the CPU clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct GpuAnchor {
    /// CPU time when the frame's GPU work was submitted, ns.
    pub cpu_submit_ns: Option<u64>,
    /// CPU time when the frame's GPU results were read back, ns.
    pub cpu_readback_ns: Option<u64>,
}

/// Per-queue state of a frame's GPU work.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GpuQueueFrame {
    /// The queue's symbol.
    pub queue: SymId,
    /// The CPU anchor.
    pub anchor: GpuAnchor,
}

/// GPU timing for one pass, in the queue's own clock domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuTiming {
    /// Begin timestamp, raw ticks.
    pub begin_ticks: u64,
    /// End timestamp, raw ticks (a driver may report end < begin; kept as reported).
    pub end_ticks: u64,
}

/// One GPU pass in a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuPass {
    /// The pass label's symbol.
    pub pass: SymId,
    /// Index into [`GpuFrame::queues`].
    pub queue_index: u32,
    /// Nesting depth among this queue's passes, 0 for outermost.
    pub depth: u32,
    /// The timing, absent when the adapter has no timestamps or results never came.
    pub timing: Option<GpuTiming>,
}

/// The GPU part of a frame.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GpuFrame {
    /// GPU results were expected for this frame.
    pub expected: bool,
    /// They were expected but never came (written after `gpu_wait_frames`).
    pub results_missing: bool,
    /// Queues with work in this frame and their CPU anchors.
    pub queues: Vec<GpuQueueFrame>,
    /// Passes, in submission order.
    pub passes: Vec<GpuPass>,
}

/// Workload counts for one pass. `None` means unknown, which is not zero.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Workload {
    /// Compute dispatches.
    pub dispatches: Option<u64>,
    /// Indirect compute dispatches.
    pub indirect_dispatches: Option<u64>,
    /// Workgroups dispatched in total (sum of x·y·z over direct dispatches).
    pub workgroups: Option<u64>,
    /// Draw calls (all kinds).
    pub draws: Option<u64>,
    /// Indexed draw calls, a subset of `draws`.
    pub indexed_draws: Option<u64>,
    /// Indirect draw calls, a subset of `draws`.
    pub indirect_draws: Option<u64>,
    /// Instances drawn.
    pub instances: Option<u64>,
    /// Vertices submitted.
    pub vertices: Option<u64>,
    /// Primitives (triangles) submitted.
    pub primitives: Option<u64>,
    /// Workgroup size `[x, y, z]` when it is a literal in the shader.
    pub workgroup_size: Option<[u32; 3]>,
    /// Total invocations, when derivable.
    pub invocations: Option<u64>,
    /// Pipeline label symbol.
    pub pipeline: Option<SymId>,
    /// Shader entry point symbol.
    pub entry_point: Option<SymId>,
    /// Other named counts (`pixels_shaded`, …): (label symbol, value).
    pub extra: Vec<(SymId, u64)>,
}

/// A pass's workload in one frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassWorkload {
    /// The pass label's symbol (matches topology passes and GPU passes by label).
    pub pass: SymId,
    /// The counts.
    pub workload: Workload,
}

/// How a pass touches a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Reads it.
    Read = 0,
    /// Writes it.
    Write = 1,
    /// Reads and writes it.
    ReadWrite = 2,
}

impl Access {
    /// The access for a byte, if defined.
    pub fn from_u8(value: u8) -> Option<Self> {
        match value {
            0 => Some(Self::Read),
            1 => Some(Self::Write),
            2 => Some(Self::ReadWrite),
            _ => None,
        }
    }
}

/// A per-pass binding or attachment (level 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The pass label's symbol.
    pub pass: SymId,
    /// The resource's symbol.
    pub resource: SymId,
    /// `false`: a shader binding; `true`: a render attachment.
    pub attachment: bool,
    /// Binding slot or attachment index.
    pub slot: u32,
    /// How the pass touches it.
    pub access: Access,
}

/// A counter's value in one frame: exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CounterValue {
    /// The counter's symbol (its kind is on the symbol).
    pub counter: SymId,
    /// The value: a sum counter's exact per-frame sum, or a gauge's level at frame close.
    pub value: i64,
}

/// What kind of instant an instant mark is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// A plain instant mark.
    Instant,
    /// A usermark: the player said "it felt wrong here" about the trailing window.
    User {
        /// Length of the trailing window the mark flags, ns.
        window_ns: u64,
        /// The note given with it.
        note: String,
    },
}

/// An instant mark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// The mark's symbol.
    pub name: SymId,
    /// The thread it was made on.
    pub thread: SymId,
    /// When, ns on the session CPU clock.
    pub at_ns: u64,
    /// Instant or usermark.
    pub kind: MarkKind,
}

/// The `FRAM` record: one frame, complete when written.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Frame {
    /// Frame index, counted by the recorder from 0.
    pub index: u64,
    /// The phase symbol, if the host set one.
    pub phase: Option<SymId>,
    /// The host declared the frame paused.
    pub paused: bool,
    /// The topology this frame ran, by content hash.
    pub topology: Option<u64>,
    /// Frame begin, ns on the session CPU clock.
    pub cpu_begin_ns: u64,
    /// Frame end, ns on the session CPU clock.
    pub cpu_end_ns: u64,
    /// Whole frames the writer dropped immediately before this one (realtime mode).
    pub dropped_frames_before: u64,
    /// CPU lanes, one per thread that closed a span.
    pub lanes: Vec<Lane>,
    /// GPU work.
    pub gpu: GpuFrame,
    /// Per-pass workload (level 2).
    pub workloads: Vec<PassWorkload>,
    /// Per-pass bindings and attachments (level 3).
    pub bindings: Vec<Binding>,
    /// Counter values.
    pub counters: Vec<CounterValue>,
    /// Instant marks and usermarks.
    pub marks: Vec<Mark>,
}

impl Frame {
    /// CPU work: begin to end, ns.
    pub fn work_ns(&self) -> u64 {
        self.cpu_end_ns.saturating_sub(self.cpu_begin_ns)
    }

    /// Appends every symbol id this frame refers to, ascending, without repeats.
    pub fn referenced_symbols(&self, out: &mut Vec<SymId>) {
        let start = out.len();
        self.for_each_symbol(|id| out.push(id));
        sort_dedup_from(out, start);
    }

    /// Calls `push` with every symbol id this frame refers to, in the frame's order, repeats
    /// included (a span's scope once per span): for callers that deduplicate their own way.
    pub fn for_each_symbol(&self, push: impl FnMut(SymId)) {
        self.for_each_symbol_from(0, push);
    }

    /// [`Frame::for_each_symbol`] with only the ids at or above `from`. A lane's spans, the
    /// bulk of a frame's ids, are walked only when one of their scopes is: a first pass ORs
    /// together whether each scope is, with no branch a span (LLVM compares several at once;
    /// a maximum cost more, SSE2 having no unsigned `max`), and passes over a lane whose
    /// scopes are all below `from` (a writer's spans, once their symbols are written).
    #[inline(always)]
    pub(crate) fn for_each_symbol_from(&self, from: SymId, mut push: impl FnMut(SymId)) {
        let mut push = |id| {
            if id >= from {
                push(id);
            }
        };
        if let Some(p) = self.phase {
            push(p);
        }
        for lane in &self.lanes {
            push(lane.thread);
            if from == 0
                || lane
                    .spans
                    .iter()
                    .fold(false, |any, s| any | (s.scope >= from))
            {
                for span in &lane.spans {
                    push(span.scope);
                }
            }
        }
        for q in &self.gpu.queues {
            push(q.queue);
        }
        for p in &self.gpu.passes {
            push(p.pass);
        }
        for w in &self.workloads {
            push(w.pass);
            if let Some(p) = w.workload.pipeline {
                push(p);
            }
            if let Some(e) = w.workload.entry_point {
                push(e);
            }
            for (label, _) in &w.workload.extra {
                push(*label);
            }
        }
        for b in &self.bindings {
            push(b.pass);
            push(b.resource);
        }
        for c in &self.counters {
            push(c.counter);
        }
        for m in &self.marks {
            push(m.name);
            push(m.thread);
        }
    }
}

/// What a frame-graph pass does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PassKind {
    /// Rasterisation.
    Render = 0,
    /// Compute.
    Compute = 1,
    /// Copies and transfers.
    Copy = 2,
    /// Anything else.
    Other = 3,
}

impl PassKind {
    /// The kind for a byte; unknown values read as `Other`.
    pub fn from_u8(value: u8) -> Self {
        match value {
            0 => Self::Render,
            1 => Self::Compute,
            2 => Self::Copy,
            _ => Self::Other,
        }
    }
}

/// A pass node of a frame-graph topology.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopoPass {
    /// Label symbol.
    pub label: SymId,
    /// Render, compute, copy, other.
    pub kind: PassKind,
    /// The graph culled it (declared but not executed).
    pub culled: bool,
    /// The CPU scope that records it, if any.
    pub scope: Option<SymId>,
}

/// What a resource node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// A buffer.
    Buffer = 0,
    /// A texture or render target.
    Texture = 1,
    /// Anything else.
    Other = 2,
}

impl ResourceKind {
    /// The kind for a byte; unknown values read as `Other`.
    pub fn from_u8(value: u8) -> Self {
        match value {
            0 => Self::Buffer,
            1 => Self::Texture,
            _ => Self::Other,
        }
    }
}

/// A resource node of a frame-graph topology.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopoResource {
    /// Label symbol.
    pub label: SymId,
    /// Buffer, texture, other.
    pub kind: ResourceKind,
    /// Format label symbol (`rgba8unorm`), if any.
    pub format: Option<SymId>,
    /// Usage label symbol (`render_attachment|texture_binding`), if any.
    pub usage: Option<SymId>,
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

/// An edge: a pass reads or writes a version of a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TopoEdge {
    /// Index into [`Topology::passes`].
    pub pass: u32,
    /// Index into [`Topology::resources`].
    pub resource: u32,
    /// Read, write or both.
    pub access: Access,
    /// The resource version read or produced.
    pub version: u32,
}

/// The `TOPO` record: one frame-graph topology, identified by its content hash.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Topology {
    /// The content hash (see [`crate::topology_id`]); frames refer to it.
    pub id: u64,
    /// Pass nodes in execution order.
    pub passes: Vec<TopoPass>,
    /// Resource nodes.
    pub resources: Vec<TopoResource>,
    /// Edges.
    pub edges: Vec<TopoEdge>,
}

impl Topology {
    /// Appends every symbol id this topology refers to, ascending, without repeats.
    pub fn referenced_symbols(&self, out: &mut Vec<SymId>) {
        let start = out.len();
        let mut push = |id: SymId| out.push(id);
        for p in &self.passes {
            push(p.label);
            if let Some(s) = p.scope {
                push(s);
            }
        }
        for r in &self.resources {
            push(r.label);
            if let Some(f) = r.format {
                push(f);
            }
            if let Some(u) = r.usage {
                push(u);
            }
        }
        sort_dedup_from(out, start);
    }
}

/// One sample of a sampled counter track.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sample {
    /// When, ns on the session CPU clock.
    pub at_ns: u64,
    /// The value.
    pub value: i64,
}

/// The `CNTR` record: a run of samples of one counter, value over time.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CounterTrack {
    /// The counter's symbol.
    pub counter: SymId,
    /// Samples in time order.
    pub samples: Vec<Sample>,
}

/// One frame's entry in the directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FrameEntry {
    /// Frame index.
    pub index: u64,
    /// Byte offset of the frame's record (its `SREC` marker) from the file start.
    pub offset: u64,
    /// Length of the whole record, framing included.
    pub length: u64,
    /// Frame begin, ns on the session CPU clock.
    pub cpu_begin_ns: u64,
    /// CPU work (begin to end), ns.
    pub work_ns: u64,
    /// Period (this begin to the next frame's begin), ns; `None` when not measured: the
    /// last frame, a gap or drop before the next, or a clock that went backwards (see
    /// [`crate::derived::period_ns`]).
    pub period_ns: Option<u64>,
    /// GPU duration if known, ns: the longest queue's first begin to last end over its
    /// timed passes (see [`crate::derived::GpuTimes::frame_gpu_ns`]).
    pub gpu_ns: Option<u64>,
    /// The writer's hitch rule flagged it.
    pub hitch: bool,
    /// The host declared it paused.
    pub paused: bool,
}

/// Location of a record other than a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordEntry {
    /// The record type FourCC.
    pub record_type: u32,
    /// Byte offset of the record's `SREC` marker.
    pub offset: u64,
    /// Length of the whole record, framing included.
    pub length: u64,
}

/// The `DIRE` record, written at stop.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Directory {
    /// Every frame record, in write order.
    pub frames: Vec<FrameEntry>,
    /// Every other record (META, TOPO, CNTR, SYMS), in write order.
    pub records: Vec<RecordEntry>,
}

/// Sorts and dedups `out[start..]` in place.
fn sort_dedup_from(out: &mut Vec<SymId>, start: usize) {
    let mut tail = out.split_off(start);
    tail.sort_unstable();
    tail.dedup();
    out.extend_from_slice(&tail);
}
