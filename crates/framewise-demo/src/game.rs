//! The game loop: one frame after another, each stamped, counted and recorded.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use framewise::{
    counter, gauge, mark, scope, CaptureLevel, Label, PassLabel, Session, Workload, WriterMode,
};

use crate::alloc;
use crate::gpu::{self, GpuDevice, GpuWork};
use crate::hold::HitchHold;
use crate::math::{Rng, Vec2};
use crate::motion;
use crate::render::graph::{self, Pass, ALL_PASSES};
use crate::render::materials::Material;
use crate::render::texture::{Texture, BASE_SIZE};
use crate::render::{FrameView, Renderer, SceneUpload};
use crate::sim::{Camera, Flock, Particles, Player};
use crate::world::{place_spawns, FlowFields, NavGrid, GOALS};
use crate::world_object::{self, WorldObject};
use crate::{DemoConfig, DemoError, DemoOutcome, FrameTally, InjectedHitch};

/// The frame budget the session declares: 60 Hz.
const FRAME_BUDGET_NS: u64 = 16_666_667;
/// Spawn-point candidates scored per agent of the spawn wave.
const WAVE_CANDIDATES: usize = 100;
/// Spawn-point candidates per agent while loading (cheap: time-sliced work).
const LOAD_CANDIDATES: usize = 4;
/// Crystals that emerge with the new material.
const CRYSTALS: usize = 24;
/// Particles emitted per frame as dust under agents and the unit.
const DUST_PER_FRAME: usize = 90;
/// Sparks emitted with the spawn wave.
const WAVE_SPARKS: usize = 1500;
/// Odds (1 in N per play frame) that the snap-back bug fires.
const SNAP_ODDS: u32 = 80;
/// The variable step's bounds, seconds.
const MIN_DT_S: f32 = 1.0 / 240.0;
const MAX_DT_S: f32 = 1.0 / 15.0;

/// Handles the recorder needs every frame, interned once.
struct Labels {
    passes: [PassLabel; 6],
    pipelines: [Label; 6],
    pixels_shaded: Label,
}

/// Runs the demo: boots, loads, plays `config.frames` frames, records them when asked, and
/// returns the tallies. With `use_env`, the recorder's `FRAMEWISE_*` variables that are set
/// win over the configuration's fields ([`DemoConfig::with_env`]: `FRAMEWISE_FRAMES` is the
/// run's length, recorded or not), and the session takes the rest (writer, note, build).
pub fn run(config: DemoConfig) -> Result<DemoOutcome, DemoError> {
    let wall = Instant::now();
    let env = if config.use_env {
        framewise::env::EnvConfig::from_env()?
    } else {
        framewise::env::EnvConfig::from_lookup(|_| None)?
    };
    let mut config = config.with_env(&env);
    // The run as the environment made it (read once, above): checked without reading it
    // again, as `validate` would.
    crate::DemoConfig {
        use_env: false,
        ..config.clone()
    }
    .validate()?;

    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(2, usize::from)
    } else {
        config.threads
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("demo-worker-{i}"))
        .start_handler(|_| alloc::count_worker_thread())
        .build()?;

    // `FRAMEWISE_CAPTURE` already in it (`with_env`).
    let capture = config.output.clone();
    // The device comes first: META, written when the session starts, describes it.
    let gpu_device = if config.gpu {
        if capture.is_none() {
            return Err(DemoError::Config {
                reason: "--gpu records GPU pass timings into the capture; it cannot run \
                         without recording (--no-record)"
                    .into(),
            });
        }
        Some(GpuDevice::new()?)
    } else {
        None
    };
    let session = match &capture {
        None => None,
        Some(path) => {
            let mut builder = Session::builder()
                .level(config.level)
                .writer_mode(WriterMode::Lossless)
                .build_id(env.build.clone().unwrap_or_else(|| {
                    format!(
                        "framewise-demo-{}-{}",
                        env!("CARGO_PKG_VERSION"),
                        config.variant
                    )
                }))
                .situation("view", "top")
                .situation("squad", "solo")
                .setting("seed", config.seed.to_string())
                .setting("variant", config.variant.name())
                .setting("shadows", config.shadows.to_string())
                .setting("snap_bug", config.snap_bug.to_string())
                .setting("threads", threads.to_string())
                .setting("agents", config.scale.agents.to_string())
                .scene_scale(format!(
                    "{} agents (+{} in the wave), {} particles max",
                    config.scale.agents, config.scale.wave_agents, config.scale.particles
                ))
                .render_settings(framewise::RenderSettings {
                    internal_resolution: Some((config.scale.width_px, config.scale.height_px)),
                    output_resolution: Some((config.scale.width_px, config.scale.height_px)),
                    upscaler: String::new(),
                })
                .frame_budget(Duration::from_nanos(FRAME_BUDGET_NS));
            if let Some(dt) = config.fixed_dt {
                builder = builder.setting("fixed_dt_s", dt.as_secs_f64().to_string());
            }
            builder = motion::declare(builder, Duration::from_secs_f32(MAX_DT_S));
            builder = world_object::declare(builder);
            builder = match &config.incident_dir {
                Some(dir) => builder.incident_dir(dir.clone()),
                None if config.use_env => builder,
                None => builder.incident_log(false),
            };
            // The harness's variables, each the same whether or not `FRAMEWISE_CAPTURE` is
            // set: the level and frame count (already in `config`), the writer, the note.
            builder = builder.apply_env(&env);
            if let Some(device) = &gpu_device {
                builder = device.declare(builder);
            }
            // Written in place (the capture is readable, and recoverable, while it grows),
            // at the file its symlinks lead to. The recorder refuses a path that is no
            // regular file (a FIFO, a device, a directory) or that is one of the incident
            // log's files, before it opens anything.
            let sink = framewise::Sink::Path(path.clone());
            Some(builder.start(sink)?)
        }
    };
    let mut gpu_work = match (gpu_device, &session) {
        (Some(device), Some(session)) => Some(device.start(session)?),
        _ => None,
    };
    let level = session.as_ref().map(Session::level);
    if let Some(level) = level {
        config.level = level;
    }

    let mut game = Game::new(&config, pool);
    let outcome = game.play(
        &config,
        session.as_ref(),
        gpu_work.as_mut(),
        capture.as_deref(),
    );
    // The GPU work (profiler, device) ends before the session it recorded into.
    let gpu = gpu_work.map(|work| work.report());
    let report = match session {
        Some(session) => Some(session.stop().map_err(Box::new)?),
        None => None,
    };
    let (frames, snaps, usermark_frame, golden) = outcome?;
    Ok(DemoOutcome {
        capture: if report.is_some() { capture } else { None },
        report,
        level,
        injected: config
            .schedule
            .hitches()
            .into_iter()
            .filter(|&(frame, _)| frames.iter().any(|f| f.index == frame))
            .map(|(frame, cause)| InjectedHitch { frame, cause })
            .collect(),
        frames,
        snaps,
        usermark_frame,
        golden,
        fixed_dt: config.fixed_dt.is_some(),
        threads,
        wall_ns: u64::try_from(wall.elapsed().as_nanos()).unwrap_or(u64::MAX),
        gpu,
        config,
    })
}

type Played = (Vec<FrameTally>, Vec<u64>, Option<u64>, Option<PathBuf>);

struct Game {
    nav: NavGrid,
    fields: FlowFields,
    flock: Flock,
    player: Player,
    camera: Camera,
    particles: Particles,
    renderer: Renderer,
    crystals: Vec<Vec2>,
    staging: Option<Texture>,
    logic_rng: Rng,
    spawn_rng: Rng,
    snap_rng: Rng,
    dust_rng: Rng,
    pool: rayon::ThreadPool,
    spawn_points: Vec<Vec2>,
}

impl Game {
    fn new(config: &DemoConfig, pool: rayon::ThreadPool) -> Self {
        let seed = config.seed;
        let player = Player::new();
        Self {
            nav: NavGrid::generate(seed),
            fields: FlowFields::new(),
            flock: Flock::default(),
            camera: Camera { focus: player.pos },
            player,
            particles: Particles::new(config.scale.particles as usize),
            renderer: Renderer::new(
                config.scale.width_px,
                config.scale.height_px,
                config.variant,
            )
            .with_shadows(config.shadows),
            crystals: Vec::new(),
            staging: None,
            logic_rng: Rng::new(seed, 1),
            spawn_rng: Rng::new(seed, 2),
            snap_rng: Rng::new(seed, 3),
            dust_rng: Rng::new(seed, 4),
            pool,
            spawn_points: Vec::new(),
        }
    }

    fn play(
        &mut self,
        config: &DemoConfig,
        session: Option<&Session>,
        mut gpu: Option<&mut GpuWork>,
        capture: Option<&Path>,
    ) -> Result<Played, DemoError> {
        let _count = alloc::count_this_thread();
        let measurable = alloc::is_measurable();
        let schedule = &config.schedule;
        let labels = session.map(|s| Labels {
            passes: ALL_PASSES.map(|p| s.pass_label(p.label())),
            pipelines: ALL_PASSES.map(|p| s.pipeline_label(p.pipeline())),
            pixels_shaded: s.label("pixels_shaded"),
        });
        let topology = session.map(|s| {
            let mut topology = graph::topology(config.scale.width_px, config.scale.height_px);
            if let Some(gpu) = gpu.as_deref() {
                gpu::merge_topology(&mut topology, gpu.topology());
            }
            s.register_topology(&topology)
        });
        // Room for the usual run up front; a huge `--frames` (1e11) grows as it plays
        // rather than asking for terabytes at once (which aborted the process).
        let mut tallies: Vec<FrameTally> =
            Vec::with_capacity(usize::try_from(config.frames).map_or(0, |n| n.min(1 << 16)));
        let mut snaps = Vec::new();
        let mut usermark_frame = None;
        let mut golden = None;
        let mut last_period_s = 1.0f32 / 60.0;
        let mut previous_begin: Option<Instant> = None;
        let mut agents_loaded = 0u32;
        let tracks = motion::Tracks::new();
        let world = WorldObject::new();
        // The time the unit's positions follow: the sum of the steps taken.
        let mut sim_s = 0f64;
        let hitches = schedule.hitches();
        let mut hold = config
            .hold_hitches
            .then(|| HitchHold::new(FRAME_BUDGET_NS, self.pool.current_num_threads()));
        // This frame's injected hitch is held (`--hold-hitches`): in its scope when a long
        // scope is its true cause, else once every scope of the frame has closed.
        let held = |frame: u64, in_scope: bool| {
            hitches.iter().any(|&(at, cause)| {
                at == frame && (cause.expected_kind() == "long-cpu-scope") == in_scope
            })
        };

        for frame in 0..config.frames {
            let begin = Instant::now();
            if let (Some(prev), Some(last)) = (previous_begin, tallies.last_mut()) {
                let period = begin.duration_since(prev);
                last.period_ns = Some(u64::try_from(period.as_nanos()).unwrap_or(u64::MAX));
                last_period_s = period.as_secs_f32();
            }
            previous_begin = Some(begin);
            let allocs_before = alloc::allocations_so_far();
            let phase = if frame < schedule.boot_frames {
                "boot"
            } else if frame < schedule.play_from() {
                "load"
            } else {
                "play"
            };
            let paused = schedule.is_paused(frame);
            let mut recorder_ns = 0u64;
            let recorder_clock = Instant::now();
            if let Some(s) = session {
                match hold.as_mut() {
                    Some(hold) => hold.begin_frame(s, paused),
                    None => s.begin_frame(),
                }
                if frame == 0 || frame == schedule.boot_frames || frame == schedule.play_from() {
                    s.set_phase(phase);
                }
                if frame == 0 || paused != schedule.is_paused(frame.wrapping_sub(1)) {
                    s.set_paused(paused);
                }
                if let Some(t) = topology {
                    s.set_topology(t);
                }
                recorder_ns += elapsed_ns(recorder_clock);
            }
            let dt_s = if paused {
                0.0
            } else {
                config
                    .fixed_dt
                    .map_or(last_period_s.clamp(MIN_DT_S, MAX_DT_S), |d| d.as_secs_f32())
            };
            sim_s += f64::from(dt_s);

            // Input: the unit walks its route; the bug may publish a stale position.
            let snapped;
            {
                let _scope = scope!("input");
                self.player.advance(dt_s);
                let roll = self.snap_rng.below(SNAP_ODDS) == 0;
                snapped = config.snap_bug && phase == "play" && !paused && roll;
                if snapped {
                    snaps.push(frame);
                }
            }
            let published = self.player.published(snapped);

            let mut pipelines_created = 0u64;
            {
                let _scope = scope!("game_logic");
                if frame == 0 {
                    let _scope = scope!("warm_up_pipelines");
                    pipelines_created += self.renderer.warm_up(&[
                        Material::Ground,
                        Material::Agent,
                        Material::Obstacle,
                        Material::Player,
                    ]);
                }
                if frame == 1 {
                    let _scope = scope!("load_base_texture");
                    let mut base = Texture::synthesize(BASE_SIZE, config.seed as u32, false);
                    base.build_mips();
                    self.staging = Some(base);
                }
                if phase == "load" {
                    let _scope = scope!("load_level");
                    let loaded = agents_loaded;
                    self.load_step(config, frame - schedule.boot_frames, &mut agents_loaded);
                    world.agents_spawned(agents_loaded.saturating_sub(loaded) as usize);
                }
                if schedule.spawn_wave_at == Some(frame) {
                    mark!("wave_arrived");
                    let _scope = scope!("spawn_wave");
                    self.spawn_points.clear();
                    place_spawns(
                        &self.nav,
                        self.player.pos,
                        config.scale.wave_agents as usize,
                        WAVE_CANDIDATES,
                        &mut self.spawn_rng,
                        &mut self.spawn_points,
                    );
                    self.flock
                        .spawn(&self.spawn_points, true, &mut self.spawn_rng);
                    world.agents_spawned(self.spawn_points.len());
                    for k in (0..self.spawn_points.len()).step_by(8) {
                        let p = self.spawn_points[k];
                        self.particles.emit(
                            p,
                            WAVE_SPARKS / 150,
                            4.0,
                            0xffa040,
                            &mut self.dust_rng,
                        );
                    }
                }
                if schedule.new_material_at == Some(frame) {
                    mark!("crystals_emerged");
                    for k in 0..CRYSTALS {
                        let angle = k as f32 / CRYSTALS as f32 * std::f32::consts::TAU;
                        let r = 6.0 + self.logic_rng.range(0.0, 8.0);
                        let p = self.player.pos + Vec2::new(angle.cos() * r, angle.sin() * r);
                        self.crystals.push(p);
                    }
                }
                if schedule.pathfind_rebuild_at == Some(frame) {
                    mark!("wall_collapsed");
                    self.nav.collapse_a_wall();
                    let _scope = scope!("pathfind_rebuild");
                    self.fields.begin_rebuild();
                    self.fields.step(&self.nav, u64::MAX);
                    if let (Some(s), Some(hold)) = (session, &hold) {
                        if held(frame, true) {
                            hold.hold(s);
                        }
                    }
                }
            }

            // The player walked into a region whose detail texture streams in: decoded and
            // mip-mapped here, uploaded (converted and copied) in `upload` below. Each stage
            // is its own top-level scope: no single scope stands for the whole stream.
            if schedule.texture_stream_at == Some(frame) {
                mark!("region_entered");
                let mut detail = {
                    let _scope = scope!("stream_synthesize");
                    Texture::synthesize(
                        config.scale.detail_texture_px as usize,
                        config.seed as u32 ^ 0x5eed,
                        true,
                    )
                };
                {
                    let _scope = scope!("stream_mips");
                    detail.build_mips();
                }
                self.staging = Some(detail);
            }

            {
                let _scope = scope!("simulate");
                if dt_s > 0.0 && phase != "boot" {
                    self.flock.build_hash();
                    self.flock.steer(&self.fields, &self.pool);
                    self.flock.integrate(dt_s, &self.nav);
                    for _ in 0..DUST_PER_FRAME.min(self.flock.len()) {
                        let i = self.dust_rng.below(self.flock.len() as u32) as usize;
                        let p = self.flock.pos[i];
                        self.particles.emit(p, 1, 1.2, 0xc8b090, &mut self.dust_rng);
                    }
                    self.particles
                        .emit(self.player.pos, 4, 2.0, 0xffe080, &mut self.dust_rng);
                }
                self.particles.update(dt_s);
            }
            self.camera.follow(published, dt_s);

            let entities = (self.flock.len() + 1 + self.crystals.len()) as i64;
            let hud = {
                let mut hud = vec![
                    format!("FRAME {frame}"),
                    format!("AGENTS {}", self.flock.len()),
                    format!("PARTICLES {}", self.particles.len()),
                ];
                if paused {
                    hud.push("PAUSED".to_owned());
                }
                hud
            };
            let view = FrameView {
                camera: self.camera,
                player: published,
                paused,
                hud,
            };
            let mut bytes_uploaded = 0u64;
            {
                let _scope = scope!("upload");
                bytes_uploaded += self.renderer.upload_scene(&SceneUpload {
                    flock: &self.flock,
                    player: published,
                    obstacles: &self.nav.obstacles,
                    crystals: &self.crystals,
                    particles: &self.particles,
                });
                bytes_uploaded += self
                    .renderer
                    .build_hud(&view, &self.flock, &self.nav.obstacles);
                if let Some(texture) = self.staging.take() {
                    bytes_uploaded += self.renderer.ground.upload_from(&texture);
                }
            }
            let stats = {
                let _scope = scope!("render");
                self.renderer.render(&view, &self.pool)
            };
            pipelines_created += stats.pipelines_created;
            if let (Some(s), Some(gpu)) = (session, gpu.as_deref_mut()) {
                let _scope = scope!("gpu_submit");
                // The last frame waits for every outstanding GPU result before it closes.
                gpu.run_frame(s, frame + 1 == config.frames)?;
            }

            if config.golden_frame == Some(frame) {
                let _scope = scope!("golden_capture");
                golden = Some(self.write_golden(config, capture, frame)?);
            }

            let draw_calls: u64 = stats.passes.iter().map(|p| p.draws).sum();
            let triangles: u64 = stats.passes.iter().map(|p| p.triangles).sum();
            counter!("draw_calls", draw_calls);
            counter!("triangles", triangles);
            counter!("bytes_uploaded", bytes_uploaded);
            counter!("pipelines_created", pipelines_created);
            gauge!("entities", entities);
            gauge!("particles", self.particles.len());
            let mm = |v: f32| (f64::from(v) * 1000.0).round() as i64;
            let unit_mm = [mm(published.x), mm(published.y)];
            let camera_mm = [mm(self.camera.focus.x), mm(self.camera.focus.y)];
            // With a fixed step the positions follow the step, not the frame clock.
            let sim_clock = config.fixed_dt.map(|_| Duration::from_secs_f64(sim_s));
            tracks.record(published, self.camera.focus, sim_clock);
            let inputs = if paused { 0 } else { world_object::MOVE }
                | if config.usermark_at == Some(frame) {
                    world_object::USERMARK
                } else {
                    0
                };
            world.record(inputs, &self.camera);
            if let (Some(s), Some(labels)) = (session, &labels) {
                let recorder_clock = Instant::now();
                if s.level() >= CaptureLevel::Workload {
                    for pass in ALL_PASSES {
                        s.record_workload(
                            labels.passes[pass as usize],
                            workload(pass, &stats.passes[pass as usize], labels),
                        );
                    }
                }
                if config.usermark_at == Some(frame) {
                    s.usermark(&format!("usermark hotkey pressed at frame {frame}"));
                    usermark_frame = Some(frame);
                }
                recorder_ns += elapsed_ns(recorder_clock);
            }
            let allocations = if measurable {
                let n = alloc::allocations_so_far().saturating_sub(allocs_before);
                counter!("allocations", n);
                Some(n)
            } else {
                None
            };
            if let (Some(s), Some(hold)) = (session, &hold) {
                if held(frame, false) {
                    hold.hold(s);
                }
            }
            tallies.push(FrameTally {
                index: frame,
                phase,
                paused,
                entities,
                particles: self.particles.len() as i64,
                draw_calls,
                triangles,
                bytes_uploaded,
                pipelines_created,
                allocations,
                passes: stats.passes,
                unit_mm,
                camera_mm,
                snapped,
                dt_ns: (f64::from(dt_s) * 1e9) as u64,
                work_ns: elapsed_ns(begin),
                period_ns: None,
                recorder_ns,
            });
            if let Some(s) = session {
                let recorder_clock = Instant::now();
                let outcome = s.end_frame();
                if let Some(last) = tallies.last_mut() {
                    last.recorder_ns += elapsed_ns(recorder_clock);
                }
                if outcome == framewise::FrameOutcome::Finished {
                    break;
                }
            }
        }
        Ok((tallies, snaps, usermark_frame, golden))
    }

    /// One load frame: a share of the flock spawned and a slice of the flow fields built.
    fn load_step(&mut self, config: &DemoConfig, load_frame: u64, agents_loaded: &mut u32) {
        let frames = config.schedule.load_frames;
        let target = (u64::from(config.scale.agents) * (load_frame + 1) / frames) as u32;
        let count = target.saturating_sub(*agents_loaded) as usize;
        if load_frame == 0 {
            self.fields.begin_rebuild();
        }
        let budget = (FlowFields::cells_per_field() * GOALS as u64 * 2).div_ceil(frames);
        if load_frame + 1 == frames {
            self.fields.step(&self.nav, u64::MAX);
        } else {
            self.fields.step(&self.nav, budget);
        }
        self.spawn_points.clear();
        place_spawns(
            &self.nav,
            self.player.pos,
            count,
            LOAD_CANDIDATES,
            &mut self.spawn_rng,
            &mut self.spawn_points,
        );
        self.flock
            .spawn(&self.spawn_points, false, &mut self.spawn_rng);
        *agents_loaded += count as u32;
    }

    fn write_golden(
        &self,
        config: &DemoConfig,
        capture: Option<&Path>,
        frame: u64,
    ) -> Result<PathBuf, DemoError> {
        let path = config.golden_path.clone().unwrap_or_else(|| match capture {
            Some(c) => {
                let stem = c
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "capture".into());
                c.with_file_name(format!("{stem}.frame-{frame}.png"))
            }
            None => PathBuf::from(format!("framewise-demo.frame-{frame}.png")),
        });
        let (w, h) = self.renderer.size();
        let png = crate::png::encode_rgb(self.renderer.image(), w as u32, h as u32);
        let written = framewise_output::write_file(&path, |w| {
            w.write_all(&png)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
        });
        written.map_err(|source| DemoError::Golden {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    }
}

fn elapsed_ns(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A pass's workload record from its counts.
fn workload(pass: Pass, stats: &crate::PassStats, labels: &Labels) -> Workload {
    let compute = matches!(pass, Pass::Lighting | Pass::Post);
    Workload {
        dispatches: Some(stats.dispatches),
        workgroups: compute.then_some(stats.dispatches),
        draws: Some(stats.draws),
        instances: Some(stats.instances),
        vertices: Some(stats.vertices),
        primitives: Some(stats.triangles),
        pipeline: Some(labels.pipelines[pass as usize].symbol()),
        extra: vec![(labels.pixels_shaded.symbol(), stats.pixels_shaded)],
        ..Workload::default()
    }
}
