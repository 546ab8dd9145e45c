//! # framewise-demo — a real game workload, instrumented with framewise
//!
//! Who should use this crate: the `framewise demo` verb (crates/framewise-cli), the
//! `framewise-demo` binary, and tests or benchmarks that need a genuine game frame to record
//! — a newcomer's first look at framewise doing its whole job. It runs a small but real game
//! loop (a multi-threaded flocking simulation over a spatial hash, a particle system, and a
//! CPU software renderer drawing a six-pass frame graph into an offscreen framebuffer),
//! records it with the `framewise` recorder, and returns its own exact tallies so a test can
//! check the capture against the truth. It must not analyse or print a capture: reading one
//! is `framewise-format`'s and `framewise-analysis`'s business, presenting it the CLI's.
//!
//! The game's hitches come from its own logic, one cause each, at frames its
//! [`Schedule`] fixes: a spawn wave (`spawn-burst`), the first use of a material whose
//! shading tables are then built (`pipeline-compile`), a texture streamed in
//! (`resource-upload`), and a synchronous flow-field rebuild after a wall collapses
//! (`long-cpu-scope`, scope `pathfind_rebuild`).
//!
//! What it records every frame: CPU scopes on the game thread and the named worker threads
//! (`demo-worker-N`); the counters `entities` and `particles` (gauges), `draw_calls`,
//! `triangles`, `bytes_uploaded`, `pipelines_created` (sums) and `allocations` (a sum, only
//! when the binary installed [`CountingAlloc`]); the motion tracks of the player unit and the
//! camera following it, through the recorder's motion-track API (gauges in millimetres such
//! as `motion.unit.x_mm` and `motion.camera.z_mm`, the tracks declared in META, and with a
//! fixed step its clock `motion.clock_us`: see [`motion`]); the phase (`boot`, `load`, `play`), pause,
//! the frame graph's topology (level ≥ 1) and per-pass workloads (level ≥ 2).
//!
//! With [`DemoConfig::gpu`] (`--gpu`, cargo feature `gpu`) it also runs a real wgpu workload
//! each frame — a compute pass updating particles and a render pass drawing them into an
//! offscreen texture, timed by `framewise-wgpu` — so the capture has a GPU track, and the
//! GPU passes join the frame graph (see [`gpu`]).
//!
//! ```no_run
//! use framewise_demo::{run, DemoConfig};
//!
//! let outcome = run(DemoConfig::with_frames(300))?;
//! println!("wrote {:?}", outcome.capture);
//! for hitch in &outcome.injected {
//!     println!("frame {}: {} (expect {})", hitch.frame, hitch.cause.name(), hitch.cause.expected_kind());
//! }
//! # Ok::<(), framewise_demo::DemoError>(())
//! ```

// The counting allocator needs `unsafe`; every block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

mod alloc;
mod config;
mod game;
pub mod gpu;
pub mod hold;
pub mod math;
pub mod motion;
pub mod png;
pub mod render;
pub mod sim;
pub mod world;
pub mod world_object;

use std::path::PathBuf;

pub use alloc::{is_measurable as allocations_measurable, CountingAlloc};
pub use config::{
    max_threads, DemoConfig, Scale, Schedule, Variant, DEFAULT_FRAMES, THREADS_PER_CORE,
};
pub use framewise::CaptureLevel;
pub use game::run;
pub use gpu::GpuReport;
pub use render::graph::PASSES;
pub use render::PassStats;

/// Names of the counters the demo records every frame (`allocations` only when measurable).
pub const COUNTERS: [&str; 7] = [
    "entities",
    "particles",
    "draw_calls",
    "triangles",
    "bytes_uploaded",
    "pipelines_created",
    "allocations",
];

/// Names of the motion-track gauges on the ground plane (x, z), millimetres; their `y_mm`
/// gauges read 0 (see [`motion`]).
pub const MOTION_GAUGES: [&str; 4] = [
    "motion.unit.x_mm",
    "motion.unit.z_mm",
    "motion.camera.x_mm",
    "motion.camera.z_mm",
];

/// Scopes every play frame records (besides the per-pass scopes named like [`PASSES`]).
pub const FRAME_SCOPES: [&str; 14] = [
    "input",
    "game_logic",
    "simulate",
    "spatial_hash",
    "steering",
    "steer_chunk",
    "integrate",
    "particle_update",
    "upload",
    "render",
    "shadow_band",
    "geometry_band",
    "lighting_band",
    "post_band",
];

/// Scopes that appear only in the frame of their event.
pub const EVENT_SCOPES: [(&str, HitchCause); 5] = [
    ("spawn_wave", HitchCause::SpawnWave),
    ("build_shading_table", HitchCause::NewMaterial),
    ("stream_synthesize", HitchCause::TextureStream),
    ("stream_mips", HitchCause::TextureStream),
    ("pathfind_rebuild", HitchCause::PathfindRebuild),
];

/// A hitch cause the game injects through its own logic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HitchCause {
    /// Hundreds of agents spawn at once (placement searches line of sight for each).
    SpawnWave,
    /// Crystals emerge: their material is drawn for the first time and its shading table
    /// is built mid-frame.
    NewMaterial,
    /// The region's detail texture is synthesised, mip-mapped and uploaded (megabytes).
    TextureStream,
    /// A wall collapses and every flow field is rebuilt synchronously.
    PathfindRebuild,
}

impl HitchCause {
    /// The cause's name in the demo.
    pub fn name(self) -> &'static str {
        match self {
            Self::SpawnWave => "spawn wave",
            Self::NewMaterial => "new material",
            Self::TextureStream => "texture stream",
            Self::PathfindRebuild => "pathfinding rebuild",
        }
    }

    /// The classification the hitch vocabulary (docs/CONCEPTS.md, "Hitches") should give it.
    pub fn expected_kind(self) -> &'static str {
        match self {
            Self::SpawnWave => "spawn-burst",
            Self::NewMaterial => "pipeline-compile",
            Self::TextureStream => "resource-upload",
            Self::PathfindRebuild => "long-cpu-scope",
        }
    }

    /// The scope that carries most of it, where one does.
    pub fn scope(self) -> Option<&'static str> {
        match self {
            Self::SpawnWave => Some("spawn_wave"),
            Self::NewMaterial => Some("build_shading_table"),
            Self::TextureStream => None,
            Self::PathfindRebuild => Some("pathfind_rebuild"),
        }
    }
}

/// A hitch the game injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InjectedHitch {
    /// The frame.
    pub frame: u64,
    /// What the game did.
    pub cause: HitchCause,
}

/// What the demo counted in one frame: the truth the capture must match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameTally {
    /// Frame index (the recorder's, from 0).
    pub index: u64,
    /// `boot`, `load` or `play`.
    pub phase: &'static str,
    /// Shown paused.
    pub paused: bool,
    /// `entities` gauge: agents, the player unit and crystals.
    pub entities: i64,
    /// `particles` gauge.
    pub particles: i64,
    /// `draw_calls`: the sum over passes.
    pub draw_calls: u64,
    /// `triangles`: the sum over passes.
    pub triangles: u64,
    /// `bytes_uploaded`.
    pub bytes_uploaded: u64,
    /// `pipelines_created`.
    pub pipelines_created: u64,
    /// `allocations` on the demo's threads, when [`CountingAlloc`] is installed.
    pub allocations: Option<u64>,
    /// Per pass, in [`PASSES`] order.
    pub passes: [PassStats; 6],
    /// The unit's published position, mm (x, z).
    pub unit_mm: [i64; 2],
    /// The camera focus, mm (x, z).
    pub camera_mm: [i64; 2],
    /// The snap-back bug fired in this frame.
    pub snapped: bool,
    /// Simulation step used, ns (0 while paused).
    pub dt_ns: u64,
    /// Frame work on the demo's own clock, ns (begin to just before the frame closes).
    pub work_ns: u64,
    /// Frame period on the demo's own clock, ns (this begin to the next); `None` for the
    /// last frame.
    pub period_ns: Option<u64>,
    /// Time the game thread spent inside the session's own calls this frame (begin and end
    /// of frame, context, workloads, usermark), ns on the demo's clock; 0 when not recording.
    /// Scope and counter hooks are not included (too short to time one by one).
    pub recorder_ns: u64,
}

/// What a demo run did.
#[derive(Clone, Debug)]
pub struct DemoOutcome {
    /// The capture written, if the run recorded.
    pub capture: Option<PathBuf>,
    /// The recorder's report, if the run recorded.
    pub report: Option<framewise::Report>,
    /// The configuration after the environment harness was applied.
    pub config: DemoConfig,
    /// The capture level recorded at.
    pub level: Option<CaptureLevel>,
    /// One tally per frame run.
    pub frames: Vec<FrameTally>,
    /// The hitches injected, in frame order.
    pub injected: Vec<InjectedHitch>,
    /// Frames in which the snap-back bug fired.
    pub snaps: Vec<u64>,
    /// The frame in which the usermark was pressed.
    pub usermark_frame: Option<u64>,
    /// The golden PNG written, if any.
    pub golden: Option<PathBuf>,
    /// The simulation step was pinned (config or `FRAMEWISE_FIXED_DT`).
    pub fixed_dt: bool,
    /// Worker threads used.
    pub threads: usize,
    /// Wall time of the whole run, ns.
    pub wall_ns: u64,
    /// The GPU a `--gpu` run timed its workload on; `None` without `--gpu`.
    pub gpu: Option<GpuReport>,
}

impl DemoOutcome {
    /// Play frames that were not paused and not an injected hitch: the steady state.
    pub fn steady_frames(&self) -> impl Iterator<Item = &FrameTally> + '_ {
        self.frames.iter().filter(move |f| {
            f.phase == "play" && !f.paused && !self.injected.iter().any(|h| h.frame == f.index)
        })
    }

    /// Mean frame period over the steady frames, ms, on the demo's own clock (the overhead
    /// benchmark's measure).
    pub fn steady_mean_period_ms(&self) -> Option<f64> {
        let periods: Vec<u64> = self.steady_frames().filter_map(|f| f.period_ns).collect();
        (!periods.is_empty())
            .then(|| periods.iter().sum::<u64>() as f64 / periods.len() as f64 / 1e6)
    }
}

/// Why a demo run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DemoError {
    /// The configuration does not describe a run the demo can do.
    #[error("invalid demo configuration: {reason}")]
    Config {
        /// What is wrong.
        reason: String,
    },
    /// The recording could not start (file, environment variable, another session).
    #[error("cannot start recording: {0}")]
    Start(#[from] framewise::StartError),
    /// The recording failed while the game ran; the report says what was kept.
    #[error("the recording failed: {0}")]
    Stop(#[from] Box<framewise::StopError>),
    /// The worker threads could not be started.
    #[error("cannot start the demo's worker threads: {0}")]
    Pool(#[from] rayon::ThreadPoolBuildError),
    /// `--gpu` was asked for, but this build has no GPU workload: the `gpu` feature was off.
    #[error(
        "--gpu: this build has no GPU workload (it was compiled without the `gpu` feature); \
         rebuild with it: `cargo run --release -p framewise-cli --features gpu -- demo --gpu`"
    )]
    GpuNotBuilt,
    /// `--gpu` was asked for, but no GPU device could be made (no adapter, no driver).
    #[error("--gpu: no GPU to time, so no GPU track can be recorded: {reason}")]
    NoGpu {
        /// Why, as wgpu said it.
        reason: String,
    },
    /// The GPU workload failed while the game ran.
    #[error("the GPU workload failed: {reason}")]
    Gpu {
        /// What went wrong.
        reason: String,
    },
    /// The capture's path cannot be written (a directory, an unreadable symlink).
    #[error("cannot record: {source}")]
    Output {
        /// The capture path.
        path: PathBuf,
        /// What the OS said (it names the path).
        #[source]
        source: std::io::Error,
    },
    /// The golden frame could not be written.
    #[error("cannot write the golden frame: {source}")]
    Golden {
        /// The PNG path.
        path: PathBuf,
        /// What the OS said (it names the path).
        #[source]
        source: std::io::Error,
    },
}
