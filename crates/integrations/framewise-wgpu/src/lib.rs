//! # framewise-wgpu — GPU pass timing for wgpu programs
//!
//! Who should use this crate: a game or tool that renders with [wgpu] and records with the
//! `framewise` recorder, and wants each GPU pass's time, its workload (dispatches, draws,
//! instances, workgroup sizes, pipelines) and the nesting of passes in the capture. Programs
//! on another graphics API feed the recorder's backend-agnostic GPU API
//! ([`framewise::Session::gpu_submit`] / [`framewise::Session::gpu_deliver`]) themselves;
//! readers of captures use `framewise-analysis`. This crate must not depend on the analysis,
//! the CLI or the inspector, and must never block the game thread on the GPU (except in
//! [`GpuProfiler::flush`], meant for shutdown).
//!
//! How a frame is recorded:
//!
//! 1. Before the session starts, [`GpuSetup::declare`] puts the queue (with the tick period
//!    wgpu declares, `Queue::get_timestamp_period`), the adapter (hardware or software: the
//!    timing regime) and the available timestamp features into the session's META.
//! 2. Passes are begun through the [`GpuProfiler`]: each is timed with wgpu's pass
//!    timestamp writes (`TIMESTAMP_QUERY`); scopes on an encoder or inside a pass nest and
//!    are timed when `TIMESTAMP_QUERY_INSIDE_ENCODERS` / `_INSIDE_PASSES` exist. The guards
//!    count the work issued through them.
//! 3. [`GpuProfiler::resolve`], [`GpuProfiler::submit`] (which notes the frame's CPU submit
//!    anchor) and [`GpuProfiler::end_frame`] (which records the workload, starts the
//!    asynchronous readback and delivers earlier frames whose results have arrived). The
//!    session holds each frame until its results come (`gpu_wait_frames`), and the readback
//!    time becomes the frame's second anchor.
//!
//! Timestamps stay raw ticks in the GPU's own clock, never converted or "corrected". Without
//! timestamp support, passes and workload are recorded all the same, with time absent (never
//! zero), and META says why.
//!
//! ```no_run
//! use framewise::{CaptureLevel, Session};
//! use framewise_wgpu::example::{ExampleConfig, ExampleWorkload};
//! use framewise_wgpu::{GpuProfiler, GpuSetup, HeadlessGpu};
//!
//! // A device with every timestamp feature the adapter has
//! // (`adapter.features() & framewise_wgpu::TIMER_FEATURES`).
//! let gpu = HeadlessGpu::new()?;
//! let setup = GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue);
//! let session = setup
//!     .declare(Session::builder().level(CaptureLevel::Workload))
//!     .start("frames.sgpt")?;
//! let mut profiler = GpuProfiler::new(&session, &setup)?;
//! let work = ExampleWorkload::new(&session, &gpu.device, ExampleConfig::default());
//! // Labels are interned once, then reused every frame.
//! let (frame_label, cull_label) = (session.pass_label("frame"), session.pass_label("cull"));
//!
//! for frame in 0..100 {
//!     let _frame = session.frame();
//!     let mut encoder = gpu.device.create_command_encoder(&Default::default());
//!     {
//!         let mut scope = profiler.scope(&mut encoder, frame_label);
//!         let _cull = scope.compute_pass(cull_label, &Default::default());
//!         // _cull.set_pipeline(..) and _cull.dispatch_workgroups(..) are counted.
//!     }
//!     work.encode(&mut profiler, &mut encoder);
//!     profiler.resolve(&mut encoder);
//!     profiler.submit(&session, [encoder.finish()]);
//!     profiler.end_frame(&session);
//!     if frame == 99 {
//!         // Shutdown: bring in the last frames' results before the last frame closes.
//!         profiler.flush(&session, std::time::Duration::from_secs(5))?;
//!     }
//! }
//! session.stop()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Adapter discovery
//!
//! [`probe`] opens a headless device as [`HeadlessGpu::new`] does and reports, as a
//! [`GpuProbe`], the adapter, its timing regime and which timestamp kinds it writes; then
//! drops it. `framewise doctor` prints it.
//!
//! ## Workload counts
//!
//! Per compute pass: `dispatches` (all), `indirect_dispatches`, `workgroups` (Σ x·y·z over
//! direct dispatches), `workgroup_size` (one described pipeline throughout, literal in its
//! WGSL), `invocations` (workgroups × size when every dispatch is direct with a known size).
//! Per render pass: `draws` (all), `indexed_draws`, `indirect_draws`, `instances` and
//! `vertices` (vertex or index count × instances; unknown once an indirect draw is issued),
//! `primitives` (when the pipeline's topology is described). `pipeline` and `entry_point`
//! when one described pipeline did all the pass's work. Anything the profiler did not see is
//! unknown (`None`), never zero.
//!
//! ## Limits
//!
//! GPU times are per pass or scope, not per draw. wgpu exposes no CPU/GPU clock calibration,
//! so the GPU track is anchored per frame (submit and readback) and never re-anchored in
//! between. Every encoder holding timed passes must be submitted before
//! [`GpuProfiler::resolve`]'s encoder, or the frame's timestamps are stale.

#![forbid(unsafe_code)]

mod error;
pub mod example;
mod headless;
mod pass;
mod pipeline;
mod probe;
mod profiler;
mod setup;

pub use error::{FlushError, HeadlessError, ProfilerError, WgslError};
pub use headless::{adapter_required, adapter_required_by, HeadlessGpu, REQUIRE_GPU_ENV};
pub use pass::{
    ComputePassScope, EncoderScope, RenderPassScope, TimedComputePass, TimedRenderPass,
};
pub use pipeline::{
    workgroup_size_from_wgsl, ComputePipeline, ComputePipelineInfo, RenderPipeline,
    RenderPipelineInfo,
};
pub use probe::{probe, regime_name, GpuProbe};
pub use profiler::{GpuProfiler, ProfilerSettings, ProfilerStats};
pub use setup::{
    adapter_info, adapter_type, GpuSetup, Support, DEFAULT_QUEUE_NAME, TIMER_FEATURES,
};

// Wgpu is part of this crate's API; re-exported so hosts use the same version.
pub use wgpu;
