//! What a demo run is asked to do: [`DemoConfig`], its [`Variant`], its [`Schedule`] of phases
//! and hitches, and its [`Scale`].

use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

use framewise::CaptureLevel;

use crate::DemoError;

/// Which build of the game runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// The game as shipped: instances of one mesh and material are drawn in batches.
    #[default]
    Normal,
    /// A regression to catch: batching disabled, every instance is its own draw call (and
    /// pays the per-draw state setup).
    Slow,
}

impl Variant {
    /// `normal` or `slow`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::Slow => "slow",
        }
    }

    /// Parses `normal` or `slow`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "normal" => Some(Self::Normal),
            "slow" => Some(Self::Slow),
            _ => None,
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How big the world and the image are. The defaults are the real demo; tests shrink it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Agents in the flock once the level is loaded.
    pub agents: u32,
    /// Agents the spawn wave adds in one frame (at least 1000 makes it a high-confidence
    /// spawn burst for the classifier; "hundreds at once" is the point).
    pub wave_agents: u32,
    /// Particle pool capacity.
    pub particles: u32,
    /// Framebuffer width, pixels.
    pub width_px: u32,
    /// Framebuffer height, pixels.
    pub height_px: u32,
    /// Side of the streamed region texture, texels (a power of two; 4096 is 64 MiB at mip 0,
    /// 85 MiB with its mips).
    pub detail_texture_px: u32,
}

impl Default for Scale {
    fn default() -> Self {
        Self {
            agents: 3000,
            wave_agents: 1200,
            particles: 16_384,
            width_px: 640,
            height_px: 360,
            detail_texture_px: 4096,
        }
    }
}

/// When each phase, pause and hitch happens, in frame indices (frames count from 0).
///
/// Every hitch comes from the game's own logic at its frame: the spawn wave arrives, a new
/// material is first drawn, the player walks into a region whose texture streams in, a wall
/// collapses and every flow field is rebuilt at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Frames in the `boot` phase (from frame 0).
    pub boot_frames: u64,
    /// Frames in the `load` phase (after boot); the level and the flock are built over them,
    /// time-sliced. `play` follows.
    pub load_frames: u64,
    /// The spawn wave (`spawn-burst`).
    pub spawn_wave_at: Option<u64>,
    /// First use of the crystal material, whose shading tables are built then
    /// (`pipeline-compile`).
    pub new_material_at: Option<u64>,
    /// The region texture streams in (`resource-upload`).
    pub texture_stream_at: Option<u64>,
    /// The synchronous rebuild of every flow field (`long-cpu-scope`).
    pub pathfind_rebuild_at: Option<u64>,
    /// Frames shown paused (the pause menu): recorded, but the simulation stands still.
    pub pause: Option<Range<u64>>,
}

impl Schedule {
    /// The schedule for a run of `frames` frames with the default flock: see
    /// [`Schedule::for_run`].
    pub fn for_frames(frames: u64) -> Self {
        Self::for_run(frames, Scale::default().agents)
    }

    /// The schedule for a run of `frames` frames that loads `agents` agents: 5 boot frames;
    /// a load phase long enough to spawn fewer than 100 agents a frame (40 frames, or
    /// `frames / 8` in a short run, whichever is less, unless the flock needs more); then
    /// the four hitches at 20 %, 35 %, 50 % and 65 % of play, and a pause from 80 % of play
    /// for a twentieth of it. For 1200 frames and 3000 agents: spawn wave at 276, material
    /// at 449, texture at 622, pathfinding at 795, paused 969..1026.
    ///
    /// A run whose play phase is shorter than [`Schedule::MIN_PLAY_FRAMES`] (or that ends
    /// during boot or load) has no hitches and no pause: they would not be far enough apart
    /// to tell one from another. [`Schedule::min_frames_for_hitches`] says how many frames
    /// they need.
    pub fn for_run(frames: u64, agents: u32) -> Self {
        let boot_frames = 5;
        let load_frames = Self::load_frames(frames, agents);
        let play_from = boot_frames + load_frames;
        let play = frames.saturating_sub(play_from);
        if play < Self::MIN_PLAY_FRAMES {
            return Self {
                boot_frames,
                load_frames,
                spawn_wave_at: None,
                new_material_at: None,
                texture_stream_at: None,
                pathfind_rebuild_at: None,
                pause: None,
            };
        }
        let at = |per_mille: u64| play_from + play * per_mille / 1000;
        let pause_start = at(800);
        Self {
            boot_frames,
            load_frames,
            spawn_wave_at: Some(at(200)),
            new_material_at: Some(at(350)),
            texture_stream_at: Some(at(500)),
            pathfind_rebuild_at: Some(at(650)),
            pause: Some(pause_start..pause_start + (play / 20).max(1)),
        }
    }

    /// Play frames the hitches and the pause need: 15 % of play between two hitches must be
    /// at least 3 frames.
    pub const MIN_PLAY_FRAMES: u64 = 20;

    /// The load phase: long enough to spawn fewer than 100 agents a frame (so loading never
    /// looks like a spawn burst), else `frames / 8` between 1 and 40.
    fn load_frames(frames: u64, agents: u32) -> u64 {
        (frames / 8)
            .clamp(1, 40)
            .max(u64::from(agents).div_ceil(90))
    }

    /// The shortest run of [`Schedule::for_run`] with `agents` agents that has the hitches
    /// and the pause (59 frames with the default flock).
    pub fn min_frames_for_hitches(agents: u32) -> u64 {
        (1..)
            .find(|&frames| frames >= 5 + Self::load_frames(frames, agents) + Self::MIN_PLAY_FRAMES)
            .unwrap_or(u64::MAX)
    }

    /// No hitches and no pause: boot, load and play only.
    pub fn quiet(frames: u64) -> Self {
        Self {
            spawn_wave_at: None,
            new_material_at: None,
            texture_stream_at: None,
            pathfind_rebuild_at: None,
            pause: None,
            ..Self::for_frames(frames)
        }
    }

    /// The first `play` frame.
    pub fn play_from(&self) -> u64 {
        self.boot_frames + self.load_frames
    }

    /// The injected hitches, `(frame, cause)`, in frame order.
    pub fn hitches(&self) -> Vec<(u64, crate::HitchCause)> {
        use crate::HitchCause::*;
        let mut out: Vec<(u64, crate::HitchCause)> = [
            (self.spawn_wave_at, SpawnWave),
            (self.new_material_at, NewMaterial),
            (self.texture_stream_at, TextureStream),
            (self.pathfind_rebuild_at, PathfindRebuild),
        ]
        .into_iter()
        .filter_map(|(frame, cause)| frame.map(|f| (f, cause)))
        .collect();
        out.sort_by_key(|&(frame, _)| frame);
        out
    }

    /// Whether `frame` is shown paused.
    pub fn is_paused(&self, frame: u64) -> bool {
        self.pause.as_ref().is_some_and(|p| p.contains(&frame))
    }
}

/// The smallest framebuffer the demo renders, `(width, height)` in pixels.
pub const FRAMEBUFFER_MIN: (u32, u32) = (64, 36);
/// The largest framebuffer the demo renders, `(width, height)` in pixels.
pub const FRAMEBUFFER_MAX: (u32, u32) = (4096, 4096);

/// Whether the demo renders a `width`x`height` framebuffer.
fn framebuffer_fits(width: u32, height: u32) -> bool {
    (FRAMEBUFFER_MIN.0..=FRAMEBUFFER_MAX.0).contains(&width)
        && (FRAMEBUFFER_MIN.1..=FRAMEBUFFER_MAX.1).contains(&height)
}

/// `64x36..4096x4096`.
fn framebuffer_range() -> String {
    format!(
        "{}x{}..{}x{}",
        FRAMEBUFFER_MIN.0, FRAMEBUFFER_MIN.1, FRAMEBUFFER_MAX.0, FRAMEBUFFER_MAX.1
    )
}

/// Everything a demo run needs. [`DemoConfig::default`] is the README's demo.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoConfig {
    /// Seeds every decision the game makes.
    pub seed: u64,
    /// Frames to run.
    pub frames: u64,
    /// Worker threads for the job system (0: one per available core).
    pub threads: usize,
    /// Capture level (default `workload`: topology and per-pass counts); `FRAMEWISE_LEVEL`
    /// wins over it.
    pub level: CaptureLevel,
    /// Normal or slow build.
    pub variant: Variant,
    /// Draw the shadow pass (default true). Off, the sun casts no shadow: the shadow pass
    /// records no draws and the picture is lit everywhere — a cheaper frame that is a
    /// different picture.
    pub shadows: bool,
    /// Switches on the snap-back bug: the player unit occasionally snaps back a few metres
    /// for one frame.
    pub snap_bug: bool,
    /// Press the usermark "hotkey" at this frame.
    pub usermark_at: Option<u64>,
    /// Where the capture goes; `None` runs the game without recording (the overhead
    /// baseline). `FRAMEWISE_CAPTURE`, when set, wins over a path here (and is refused with
    /// `None`: see [`DemoConfig::with_env`]).
    pub output: Option<PathBuf>,
    /// Also run a real wgpu workload each frame and time it (a GPU track in the capture).
    /// Needs the `gpu` cargo feature, a GPU adapter (a software one such as lavapipe will
    /// do) and a recording: without any of them the run is refused with the reason, never
    /// silently run CPU-only.
    pub gpu: bool,
    /// Pins the simulation step; `None` steps by the measured frame time (clamped) as a real
    /// game would. `FRAMEWISE_FIXED_DT` wins over it.
    pub fixed_dt: Option<Duration>,
    /// Write this frame's image as PNG. `FRAMEWISE_GOLDEN_FRAME` wins over it.
    pub golden_frame: Option<u64>,
    /// Where the golden PNG goes; `None`: beside the capture as `<stem>.frame-<K>.png`, or
    /// `framewise-demo.frame-<K>.png` in the working directory when not recording.
    pub golden_path: Option<PathBuf>,
    /// When the phases, pause and hitches happen.
    pub schedule: Schedule,
    /// World and image size.
    pub scale: Scale,
    /// Read the `FRAMEWISE_*` environment harness (default true; tests turn it off so the
    /// environment of the test runner cannot change what they check).
    pub use_env: bool,
    /// Where the recording's live incident log goes (`perf.jsonl`, `profile.json`). `None`:
    /// where the recorder finds one (`FRAMEWISE_DIR`, or `.framewise/` in the working
    /// directory) when `use_env` is set, else nowhere.
    pub incident_dir: Option<PathBuf>,
    /// Hold each injected hitch's frame, on the recorder's clock, until it is a hitch by the
    /// hitch rule's numbers however loaded the machine is (see [`crate::hold`]): the hitches
    /// are then found on every run. Off by default: the hitches are the real work alone.
    pub hold_hitches: bool,
}

/// Worker threads allowed per available core: more only adds scheduling noise to the
/// capture (and 100,000 threads would exhaust the machine).
pub const THREADS_PER_CORE: usize = 8;

/// The most worker threads a run may ask for on this machine: [`THREADS_PER_CORE`] per
/// available core.
pub fn max_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from) * THREADS_PER_CORE
}

/// The default frame count: about 20–30 s of work in a release build on two cores.
pub const DEFAULT_FRAMES: u64 = 1200;

impl Default for DemoConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            frames: DEFAULT_FRAMES,
            threads: 0,
            level: CaptureLevel::Workload,
            variant: Variant::Normal,
            shadows: true,
            snap_bug: false,
            usermark_at: None,
            output: Some(PathBuf::from("framewise-demo.sgpt")),
            gpu: false,
            fixed_dt: None,
            golden_frame: None,
            golden_path: None,
            schedule: Schedule::for_frames(DEFAULT_FRAMES),
            scale: Scale::default(),
            use_env: true,
            incident_dir: None,
            hold_hitches: false,
        }
    }
}

impl DemoConfig {
    /// The default configuration for a run of `frames` frames (schedule scaled to fit; at
    /// least about 100 frames with the default flock).
    pub fn with_frames(frames: u64) -> Self {
        Self {
            frames,
            schedule: Schedule::for_frames(frames),
            ..Self::default()
        }
    }

    /// This configuration with the recorder's `FRAMEWISE_*` settings applied, as [`crate::run`]
    /// plays it, whether or not `FRAMEWISE_CAPTURE` is set: **a variable that is set wins over
    /// the field it names** — the capture path (`FRAMEWISE_CAPTURE`, unless the run records
    /// nothing: `output` is `None`, which [`DemoConfig::validate`] refuses with the variable
    /// set), the run's length (`FRAMEWISE_FRAMES`, its schedule rescaled to it), the level,
    /// the fixed step, the golden frame, the seed and the resolution. A harness (a bench, a
    /// golden check) sets them to measure the run it names, whatever the command's flags say.
    /// `FRAMEWISE_WRITER`, `FRAMEWISE_NOTE` and `FRAMEWISE_BUILD` have no field here: the
    /// session takes them (`SessionBuilder::apply_env`).
    pub fn with_env(mut self, env: &framewise::env::EnvConfig) -> Self {
        if let (Some(capture), Some(_)) = (&env.capture, &self.output) {
            self.output = Some(capture.clone());
        }
        if let Some(level) = env.level {
            self.level = level;
        }
        if let Some(dt) = env.fixed_dt {
            self.fixed_dt = Some(dt);
        }
        if let Some(frame) = env.golden_frame {
            self.golden_frame = Some(frame);
        }
        if let Some(seed) = env.seed {
            self.seed = seed;
        }
        if let Some((width_px, height_px)) = env.resolution {
            self.scale.width_px = width_px;
            self.scale.height_px = height_px;
        }
        if let Some(frames) = env.frames {
            if frames != self.frames {
                // A quiet run (no hitches, no pause) stays quiet at its new length.
                let quiet = self.schedule.hitches().is_empty() && self.schedule.pause.is_none();
                let mut schedule = Schedule::for_run(frames, self.scale.agents);
                if quiet {
                    schedule.spawn_wave_at = None;
                    schedule.new_material_at = None;
                    schedule.texture_stream_at = None;
                    schedule.pathfind_rebuild_at = None;
                    schedule.pause = None;
                }
                self.schedule = schedule;
                self.frames = frames;
            }
        }
        self
    }

    /// Checks that the schedule fits the run, the scale is usable and, when `use_env` is set,
    /// that the recorder's `FRAMEWISE_*` variables read and that the run they make (see
    /// [`DemoConfig::with_env`]) is one [`crate::run`] plays: everything `run` would refuse
    /// a configuration for, so a caller can refuse it before scaffolding anything. A
    /// `FRAMEWISE_RESOLUTION` the demo cannot render is refused naming the variable.
    pub fn validate(&self) -> Result<(), DemoError> {
        let bad = |reason: String| Err(DemoError::Config { reason });
        if self.gpu && !cfg!(feature = "gpu") {
            return Err(DemoError::GpuNotBuilt);
        }
        if self.frames == 0 {
            return bad("frames must be at least 1".into());
        }
        let s = &self.schedule;
        if s.load_frames == 0 {
            return bad("the load phase needs at least one frame".into());
        }
        let per_load_frame = u64::from(self.scale.agents).div_ceil(s.load_frames);
        if per_load_frame >= 100 {
            return bad(format!(
                "loading {} agents over {} frames spawns {per_load_frame} a frame, which would \
                 look like a spawn burst; give the load phase more frames or fewer agents",
                self.scale.agents, s.load_frames
            ));
        }
        let scale = &self.scale;
        if !framebuffer_fits(scale.width_px, scale.height_px) {
            return bad(format!(
                "framebuffer {}x{} is outside {}",
                scale.width_px,
                scale.height_px,
                framebuffer_range()
            ));
        }
        if !scale.detail_texture_px.is_power_of_two()
            || !(64..=8192).contains(&scale.detail_texture_px)
        {
            return bad(format!(
                "detail texture side {} is not a power of two in 64..=8192",
                scale.detail_texture_px
            ));
        }
        let hitches = s.hitches();
        for (i, &(frame, cause)) in hitches.iter().enumerate() {
            if frame < s.play_from() || frame >= self.frames {
                return bad(format!(
                    "{} at frame {frame} is outside play (frames {}..{})",
                    cause.name(),
                    s.play_from(),
                    self.frames
                ));
            }
            if s.is_paused(frame) {
                return bad(format!(
                    "{} at frame {frame} falls in the pause",
                    cause.name()
                ));
            }
            if let Some(&(next, _)) = hitches.get(i + 1) {
                if next < frame + 3 {
                    return bad(format!(
                        "hitches at frames {frame} and {next} are too close to tell apart"
                    ));
                }
            }
        }
        if let Some(frame) = self.usermark_at {
            if frame >= self.frames {
                return bad(format!(
                    "usermark at frame {frame} is past the last frame ({})",
                    self.frames - 1
                ));
            }
        }
        // (With the environment to read, the run it makes is checked below.)
        if !self.use_env && self.golden_path.is_some() && self.golden_frame.is_none() {
            return bad(
                "a golden path is given but no golden frame (--golden-frame or \
                 FRAMEWISE_GOLDEN_FRAME): no image would be written there"
                    .into(),
            );
        }
        if let Some(frame) = self.golden_frame {
            if frame >= self.frames {
                return bad(format!(
                    "golden frame {frame} is past the last frame ({})",
                    self.frames - 1
                ));
            }
        }
        let most = max_threads();
        if self.threads > most {
            return bad(format!(
                "{} worker threads is more than this machine can run usefully: at most {most} \
                 ({THREADS_PER_CORE} per core; 0 takes one per core)",
                self.threads
            ));
        }
        if self.use_env {
            // The recorder's environment, read again when the run starts: a bad variable is
            // refused with the arguments, before anything is scaffolded or run.
            let env = framewise::env::EnvConfig::from_env()?;
            if let (Some(capture), None) = (&env.capture, &self.output) {
                return bad(format!(
                    "FRAMEWISE_CAPTURE={} asks for a recording, but this run records nothing \
                     (--no-record): unset the variable or record",
                    capture.display()
                ));
            }
            if let Some((width, height)) = env.resolution {
                if !framebuffer_fits(width, height) {
                    return bad(format!(
                        "FRAMEWISE_RESOLUTION={width}x{height} is outside the demo's framebuffer sizes, {}",
                        framebuffer_range()
                    ));
                }
            }
            // The run as the environment makes it, checked as the run will check it.
            let mut run = self.clone().with_env(&env);
            run.use_env = false;
            run.validate()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_schedule_fits_and_matches_the_documented_frames() {
        let config = DemoConfig::default();
        config.validate().expect("the default config is valid");
        let s = &config.schedule;
        assert_eq!(s.play_from(), 45);
        assert_eq!(s.spawn_wave_at, Some(276));
        assert_eq!(s.new_material_at, Some(449));
        assert_eq!(s.texture_stream_at, Some(622));
        assert_eq!(s.pathfind_rebuild_at, Some(795));
        assert_eq!(s.pause, Some(969..1026));
        // A short harness run with the full flock still fits.
        DemoConfig::with_frames(150)
            .validate()
            .expect("150 frames fit");
    }

    #[test]
    fn demo_frames_1_to_57_have_a_valid_schedule() {
        // The schedule used to put the hitches outside a run this short (exit 4).
        for frames in 1..=200 {
            let config = DemoConfig::with_frames(frames);
            config
                .validate()
                .unwrap_or_else(|e| panic!("--frames {frames}: {e}"));
            let hitches = config.schedule.hitches();
            if frames < Schedule::min_frames_for_hitches(Scale::default().agents) {
                assert!(hitches.is_empty() && config.schedule.pause.is_none());
            } else {
                assert_eq!(hitches.len(), 4, "--frames {frames}");
            }
        }
        assert_eq!(
            Schedule::min_frames_for_hitches(Scale::default().agents),
            59
        );
    }

    #[test]
    fn absurd_thread_counts_and_a_golden_frame_past_the_end_are_refused() {
        let threads = DemoConfig {
            threads: 100_000,
            ..DemoConfig::default()
        };
        let refused = threads.validate().expect_err("100,000 threads");
        assert!(refused.to_string().contains("at most"), "{refused}");
        let most = DemoConfig {
            threads: max_threads(),
            ..DemoConfig::default()
        };
        most.validate().expect("the cap itself is allowed");
        let golden = DemoConfig {
            golden_frame: Some(DEFAULT_FRAMES),
            ..DemoConfig::default()
        };
        let refused = golden.validate().expect_err("past the last frame");
        assert!(
            refused.to_string().contains("past the last frame"),
            "{refused}"
        );
        let last = DemoConfig {
            golden_frame: Some(DEFAULT_FRAMES - 1),
            ..DemoConfig::default()
        };
        last.validate().expect("the last frame is allowed");
    }

    #[test]
    fn short_runs_scale_and_bad_configs_are_refused() {
        let small = DemoConfig {
            scale: Scale {
                agents: 600,
                ..Scale::default()
            },
            schedule: Schedule::for_run(240, 600),
            ..DemoConfig::with_frames(240)
        };
        small.validate().expect("a short run is valid");
        let gpu = DemoConfig {
            gpu: true,
            ..DemoConfig::default()
        };
        if cfg!(feature = "gpu") {
            gpu.validate()
                .expect("--gpu is valid in a build with the gpu feature");
        } else {
            let refused = gpu.validate().expect_err("--gpu needs the gpu feature");
            assert!(matches!(refused, DemoError::GpuNotBuilt));
            assert!(refused.to_string().contains("--features gpu"), "{refused}");
        }
        let mut clash = DemoConfig::default();
        clash.schedule.new_material_at = Some(277);
        assert!(clash.validate().is_err());
        let mut late = DemoConfig::default();
        late.schedule.spawn_wave_at = Some(5000);
        assert!(late.validate().is_err());
        assert!(Variant::parse("slow") == Some(Variant::Slow) && Variant::parse("x").is_none());
    }

    /// `FRAMEWISE_FRAMES` and `FRAMEWISE_LEVEL` were applied only under `FRAMEWISE_CAPTURE`,
    /// and a step or golden frame set here won over its variable.
    #[test]
    fn every_variable_wins_over_its_field_with_or_without_a_capture() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            framewise::env::EnvConfig::from_lookup(|name| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            })
            .expect("the variables read")
        };
        let env = vars(&[
            ("FRAMEWISE_FRAMES", "150"),
            ("FRAMEWISE_LEVEL", "timing"),
            ("FRAMEWISE_FIXED_DT", "0.02"),
            ("FRAMEWISE_GOLDEN_FRAME", "7"),
            ("FRAMEWISE_SEED", "9"),
            ("FRAMEWISE_RESOLUTION", "320x180"),
        ]);
        let config = DemoConfig {
            fixed_dt: Some(Duration::from_millis(10)),
            golden_frame: Some(3),
            ..DemoConfig::with_frames(300)
        }
        .with_env(&env);
        assert_eq!(config.frames, 150);
        assert_eq!(config.schedule, Schedule::for_frames(150));
        assert_eq!(config.level, CaptureLevel::Timing);
        assert_eq!(config.fixed_dt, Some(Duration::from_millis(20)));
        assert_eq!(config.golden_frame, Some(7));
        assert_eq!(config.seed, 9);
        assert_eq!((config.scale.width_px, config.scale.height_px), (320, 180));
        assert_eq!(config.output, Some(PathBuf::from("framewise-demo.sgpt")));
        // A quiet run stays quiet at its new length.
        let quiet = DemoConfig {
            schedule: Schedule::quiet(300),
            ..DemoConfig::with_frames(300)
        }
        .with_env(&env);
        assert!(quiet.schedule.hitches().is_empty() && quiet.schedule.pause.is_none());
        // The capture path replaces the run's, but never makes a run without one record.
        let env = vars(&[("FRAMEWISE_CAPTURE", "e.sgpt")]);
        let recorded = DemoConfig::default().with_env(&env);
        assert_eq!(recorded.output, Some(PathBuf::from("e.sgpt")));
        let unrecorded = DemoConfig {
            output: None,
            ..DemoConfig::default()
        }
        .with_env(&env);
        assert_eq!(unrecorded.output, None);
        // Applying them twice changes nothing more.
        assert_eq!(recorded.clone().with_env(&env), recorded);
    }
}
