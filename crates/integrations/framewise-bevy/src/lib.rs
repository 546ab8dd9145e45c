//! # framewise-bevy — framewise for Bevy games
//!
//! Who should use this crate: a [Bevy](https://bevy.org) game (Bevy 0.19) that wants every
//! frame recorded into a `.sgpt` capture that `framewise summarize`, `hitches` and `view`
//! read. Adding [`FramewisePlugin`] is the whole adoption:
//!
//! ```no_run
//! use bevy::prelude::*;
//! use framewise_bevy::FramewisePlugin;
//!
//! App::new()
//!     .add_plugins(FramewisePlugin::default()) // first, so every plugin's systems are seen
//!     .add_plugins(MinimalPlugins)
//!     .run();
//! ```
//!
//! What it records:
//!
//! - **A session**, when the plugin's settings ([`FramewisePlugin::capture`]) or the
//!   environment (`FRAMEWISE_CAPTURE` and the other `FRAMEWISE_*` variables of
//!   [`framewise::env`]) ask for one; the environment wins where both say something, so a
//!   harness can redirect a game that names its own path. Neither asking: nothing records,
//!   and the plugin installs nothing for recording. The session starts at the first
//!   `App::update` and stops cleanly in the update that sends [`AppExit`](bevy::app::AppExit) (the report is then the
//!   [`FramewiseReport`] resource), when `frame_limit` is reached, or when the app is dropped
//!   (a panic unwinding through `App::run` included: the recorder closes the capture as it
//!   drops).
//! - **The harness's fixed step**: under `FRAMEWISE_FIXED_DT`, Bevy's real clock
//!   (`Time<Real>`) advances by exactly that step per update
//!   (`TimeUpdateStrategy::ManualDuration`), so runs compare.
//! - **One frame per `App::update`**: the frame closes at the start of the next update's
//!   main schedule, so an update's sub-apps (extract and render) fall in its own frame (under
//!   pipelined rendering, the render world's work lands in the frame open as it runs: see
//!   below) — except in the update that sends `AppExit`: the session stops at the end of
//!   that update's main schedule, before its sub-apps run, so its extraction and rendering
//!   are not recorded.
//! - **Every system run as a scope** named by the system (`my_game::movement`; the commands
//!   it queued, applied later, as `my_game::movement commands`), on the lane of the thread
//!   that ran it: the multi-threaded executor's systems on the compute task pool's threads,
//!   exclusive systems on the main thread, inside the `schedule Update` (and every other
//!   schedule's) scope. These come from Bevy's own `trace` spans: when it records, the plugin
//!   makes the recorder's `tracing` subscriber ([`framewise::tracing::FramewiseSubscriber`],
//!   told how Bevy names its spans) the process's global one. Bevy makes a system's span when
//!   the system is added, so only systems added after the plugin are seen: add it first.
//!   Added first, the plugin is built before Bevy's `LogPlugin` (in `DefaultPlugins`), which
//!   then cannot set its own subscriber: the app shows no logs, and the plugin says so on
//!   stderr. To keep the logs, turn the plugin's subscriber off and give `LogPlugin` the
//!   recorder's layer, [`tracing_layer`] (the same system and schedule scopes, Bevy's spans
//!   being at `INFO`, at the registry's extra cost per span; `LogPlugin`'s filter applies to
//!   spans too, so what it leaves out — its default leaves out wgpu's and naga's own spans —
//!   is not recorded):
//!   `FramewisePlugin::default().install_subscriber(false)` and
//!   `LogPlugin { custom_layer: |_| Some(Box::new(framewise_bevy::tracing_layer())), .. }`
//!   (the example scene's `example::headless_app`, feature `render`, does so).
//!   Bevy gives a system no call site, so its scope has none.
//! - **Counters** per frame, read at the end of the main schedule: `entities` (entities
//!   spawned in the world, Bevy's own included) and `archetypes` (the `render` feature adds
//!   the render counters below). What this build of Bevy cannot measure is absent from the
//!   capture, never 0.
//!
//! [`FramewiseSession`] gives systems the session (phases, usermarks).
//!
//! With the `render` feature, the scene side (it needs Bevy's asset, mesh, image and PBR
//! crates):
//!
//! - **A census** of the scene on demand, never per frame ([`take_census`], whose
//!   documentation says what it counts and how): [`FramewiseAppExt::framewise_census`] from
//!   code that owns the `App`, or a [`FramewiseCensusRequest`] message from a system. It is
//!   recorded into the capture (a `CENS` record) and `.framewise/census.json`, which
//!   `framewise census` reads with its hints.
//! - **A measured bisection** (Bevy's `BisectEngine`, [`BevyBisect`]): the game paused, each
//!   of the heaviest census entries is hidden in turn over a few updates and restored, and
//!   the ranked report goes to `.framewise/bisect.json`, which `framewise bisect` prints.
//!   Each frame reports the render time its render work measured (the GPU's, from Bevy's
//!   render diagnostics, when the plugin records on a device with timestamp queries in
//!   encoders and inside passes — `TIMESTAMP_QUERY`, `TIMESTAMP_QUERY_INSIDE_ENCODERS` and
//!   `TIMESTAMP_QUERY_INSIDE_PASSES`, all three; else the render world's CPU time) and the
//!   census's triangles of what its views saw; draw calls are not counted ([`BevyBisect`]
//!   says how).
//!   A running game, whatever drives its loop, runs one at the end of update N when
//!   `FRAMEWISE_BISECT_AT=N` ([`BISECT_AT_ENV`]) or the plugin's
//!   [`FramewisePlugin::bisect_at_update`] asks, or when a system sends
//!   [`FramewiseBisectRequest`]; code that owns the `App` calls
//!   [`FramewiseAppExt::framewise_bisect`].
//!
//! The plugin installs the scene side whether or not it records (a census needs no capture).
//!
//! The same feature records the render side, installed once every plugin is built, when the
//! plugin records (the `render` module says how each is read):
//!
//! - **The adapter and its queue** in the capture's META: the adapter as Bevy's renderer
//!   opened it (hardware or software — lavapipe is software, the timing regime every verdict
//!   carries) and the queue `bevy render` with the tick period wgpu declares for it.
//! - **GPU passes** from Bevy's render diagnostics (the spans Bevy's render nodes open:
//!   `main_opaque_pass_3d`, `early_mesh_preprocessing`…, timed by timestamp queries where the
//!   device has them), each delivered into the frame that submitted it. The plugin runs
//!   Bevy's diagnostics recorder itself: an app that adds Bevy's `RenderDiagnosticsPlugin` keeps
//!   it, and no GPU passes are recorded (the plugin says so on stderr). Bevy reports each
//!   span's elapsed GPU time, not its timestamps, so a frame's passes are laid end to end
//!   (META's `gpu.pass_times` says so); a time that is no duration (negative, from a wrapped
//!   timestamp, or not a number) gives an untimed pass, never one of 0 ticks.
//! - **The render graph** as the capture's topology (from capture level `Structure` up): the
//!   schedules the render world's views run (`Core3d` for a 3D camera), their systems as
//!   passes and their ordering as edges.
//! - **Render counters** per frame: `meshes`, `materials` (standard materials), `images`
//!   (each asset collection's size) and `visible entities: <camera>` for each camera: 0
//!   while it is inactive (it draws nothing), and 0 from the frame it is despawned on (a
//!   gauge keeps its last level in later frames; 0 is what the camera draws).
//!   Bevy 0.19 counts no draw calls and no triangles drawn: neither is recorded.
//! - **Pipelined rendering as it is**: the render world's systems are scopes on the render
//!   thread's lane, and its submissions and topology go into the frame open when it makes
//!   them (the next main-world frame, under pipelined rendering), never folded into one clock.
//!
//! The `example` module is a small 3D scene rendered headless into an image, with a planted
//! cost (the example `headless_scene` records it).

#![forbid(unsafe_code)]

/// `eprintln!` that never panics: a game whose stderr cannot be written (`2>/dev/full`, a
/// closed pipe) loses the plugin's line, not its frame.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

#[cfg(feature = "render")]
mod bisect;
#[cfg(feature = "render")]
mod census;
#[cfg(feature = "render")]
mod driver;
#[cfg(feature = "render")]
pub mod example;
mod frame;
#[cfg(feature = "render")]
pub mod render;
#[cfg(feature = "render")]
mod scene;
mod spans;
#[cfg(feature = "render")]
mod timing;

use std::path::PathBuf;
use std::sync::Arc;

use bevy::app::{App, Main, Plugin};
use bevy::ecs::resource::Resource;
use bevy::ecs::schedule::IntoScheduleConfigs;
use framewise::env::EnvConfig;
use framewise::{CaptureLevel, Report, Session, SessionBuilder, StopError, WriterMode};

#[cfg(feature = "render")]
pub use bisect::{bisect_file, BevyBisect};
#[cfg(feature = "render")]
pub use census::{take_census, MeshStats, OTHER_MATERIAL};
#[cfg(feature = "render")]
pub use driver::{FramewiseBisectReport, FramewiseBisectRequest};
#[cfg(feature = "render")]
pub use scene::{
    record_census, CensusHistory, FramewiseAppExt, FramewiseCensusRequest, BISECT_AT_ENV,
};
pub use spans::tracing_layer;

/// The plugin: records the app into a capture when its settings or the environment ask for
/// one (see the crate documentation).
#[derive(Clone, Debug, Default)]
pub struct FramewisePlugin {
    capture: Option<PathBuf>,
    level: Option<CaptureLevel>,
    writer_mode: Option<WriterMode>,
    frame_limit: Option<u64>,
    build_id: Option<String>,
    install_subscriber: Option<bool>,
    #[cfg(feature = "render")]
    bisect_at: Option<(u64, framewise_census::BisectOptions)>,
}

impl FramewisePlugin {
    /// Records into `path` (`FRAMEWISE_CAPTURE` overrides it).
    pub fn capture(mut self, path: impl Into<PathBuf>) -> Self {
        self.capture = Some(path.into());
        self
    }

    /// The capture level (`FRAMEWISE_LEVEL` overrides it; the recorder's default otherwise).
    pub fn level(mut self, level: CaptureLevel) -> Self {
        self.level = Some(level);
        self
    }

    /// The writer's mode (`FRAMEWISE_WRITER` overrides it; lossless by default).
    pub fn writer_mode(mut self, mode: WriterMode) -> Self {
        self.writer_mode = Some(mode);
        self
    }

    /// Stops recording after this many frames (`FRAMEWISE_FRAMES` overrides it).
    pub fn frame_limit(mut self, frames: u64) -> Self {
        self.frame_limit = Some(frames);
        self
    }

    /// The build id stored in the capture (`FRAMEWISE_BUILD` overrides it).
    pub fn build_id(mut self, build_id: impl Into<String>) -> Self {
        self.build_id = Some(build_id.into());
        self
    }

    /// Whether the plugin makes the recorder's `tracing` subscriber the process's global one
    /// when it records (default: yes, unless one is already set). Turn it off when the app's
    /// own subscriber (Bevy's `LogPlugin`'s) carries [`tracing_layer`]: left on, the plugin
    /// (added first, so built first) takes the global subscriber, and `LogPlugin` shows no
    /// logs (the plugin says so on stderr).
    pub fn install_subscriber(mut self, install: bool) -> Self {
        self.install_subscriber = Some(install);
        self
    }

    /// Runs a measured bisection at the end of update `updates` (counted from 1), with these
    /// options, inside the running game (`FRAMEWISE_BISECT_AT=N` overrides the update, with
    /// the default options if none were set here): see [`FramewiseBisectRequest`] for how it
    /// runs and where the report goes.
    #[cfg(feature = "render")]
    pub fn bisect_at_update(
        mut self,
        updates: u64,
        options: framewise_census::BisectOptions,
    ) -> Self {
        self.bisect_at = Some((updates, options));
        self
    }

    /// The session these settings and the environment ask for, and its path: `None` when
    /// neither names a capture.
    fn session_request(&self, env: &EnvConfig) -> Option<(SessionBuilder, PathBuf)> {
        let path = env.capture.clone().or_else(|| self.capture.clone())?;
        let mut builder = Session::builder().writer_mode(WriterMode::Lossless);
        if let Some(level) = self.level {
            builder = builder.level(level);
        }
        if let Some(mode) = self.writer_mode {
            builder = builder.writer_mode(mode);
        }
        if let Some(frames) = self.frame_limit {
            builder = builder.frame_limit(frames);
        }
        if let Some(build_id) = &self.build_id {
            builder = builder.build_id(build_id.clone());
        }
        builder = builder
            .setting("engine", format!("bevy {BEVY_VERSION}"))
            .apply_env(env);
        Some((builder, path))
    }
}

/// The Bevy release this crate is built against.
pub const BEVY_VERSION: &str = "0.19.1";

impl Plugin for FramewisePlugin {
    fn build(&self, app: &mut App) {
        #[cfg(feature = "render")]
        scene::install(app, self.bisect_at);
        let env = match EnvConfig::from_env() {
            Ok(env) => env,
            Err(error) => {
                say!("framewise: not recording: {error}");
                return;
            }
        };
        let Some((builder, path)) = self.session_request(&env) else {
            return;
        };
        if self.install_subscriber.unwrap_or(true) && spans::install_subscriber() {
            app.insert_resource(spans::SubscriberInstalled);
        }
        app.insert_resource(frame::Pending { builder, path })
            .add_systems(
                Main,
                (
                    frame::frame_boundary.before(Main::run_main),
                    frame::after_main.after(Main::run_main),
                ),
            );
    }

    /// Once every plugin is built: says on stderr that Bevy's `LogPlugin` shows no logs when
    /// this plugin made the recorder's subscriber the global one before it (and how to keep
    /// both). With the `render` feature (the render app exists then): the bisection's frame
    /// timing, and the render side when the plugin records.
    fn finish(&self, app: &mut App) {
        if app
            .world()
            .contains_resource::<spans::SubscriberInstalled>()
            && app.is_plugin_added::<bevy::log::LogPlugin>()
        {
            say!("{}", spans::LOGS_LOST);
        }
        #[cfg(feature = "render")]
        {
            timing::install_render(app);
            if app.world().contains_resource::<frame::Pending>() {
                render::install(app);
            }
        }
    }
}

/// The recording session, while it records: systems reach it through
/// `Option<Res<FramewiseSession>>` (phases, usermarks, GPU passes).
#[derive(Debug, Resource)]
pub struct FramewiseSession(Arc<Session>);

impl FramewiseSession {
    /// The session.
    pub fn session(&self) -> &Session {
        &self.0
    }
}

/// How the session ended: inserted when it stops (on `AppExit`, or at `frame_limit`).
#[derive(Debug, Resource)]
pub struct FramewiseReport(pub Result<Report, StopError>);
