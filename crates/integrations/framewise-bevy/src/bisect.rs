//! Bevy's [`BisectEngine`]: candidates are the census's entries, hiding one sets
//! `Visibility::Hidden` on each of its mesh entities (showing puts back exactly the
//! `Visibility` each had), a frame is one `App::update`, and the snapshot is every entity's
//! `Visibility`.
//!
//! What a frame reports (`timing` matches each update to what its render work measured):
//! **triangles**, those of the mesh entities Bevy's visibility pass marked visible in a view
//! during that update (`ViewVisibility`, what the renderer extracts), counted from the
//! meshes by the census, not by the GPU; **render ms**, the GPU time of the frame's render
//! diagnostics when the plugin records GPU passes on a device with timestamp queries in
//! encoders and inside passes (`TIMESTAMP_QUERY`, `TIMESTAMP_QUERY_INSIDE_ENCODERS` and
//! `TIMESTAMP_QUERY_INSIDE_PASSES`), else the render world's CPU time for the frame (the
//! report's `render_ms_source` says which; `null` without a render app); **draw calls** are
//! not measured: `null` (absent, never 0) — Bevy 0.19 counts none.
//!
//! Two ways to run it: [`BevyBisect`] over an `App` the caller owns (it calls `update`
//! itself), and the plugin's driver (`driver`) inside a running game, whatever its runner.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bevy::app::App;
use bevy::camera::visibility::Visibility;
use bevy::ecs::entity::Entity;
use bevy::ecs::world::World;
use bevy::time::{Time, Virtual};
use framewise_census::{
    bisect, BisectEngine, BisectError, BisectOptions, BisectReport, Candidate, EngineError,
    FrameCost, WorldSnapshot, BISECT_FILE,
};

use crate::census::{self, Groups};
use crate::timing::{FrameClock, Source};
use crate::{FramewiseSession, BEVY_VERSION};

/// The world side of the engine: what each entry holds, and what was hidden.
#[derive(Debug, Default)]
pub(crate) struct WorldScene {
    groups: Groups,
    /// Hidden entries: each mesh entity's `Visibility` before `hide`.
    hidden: BTreeMap<String, Vec<(Entity, Visibility)>>,
}

impl WorldScene {
    /// The census's entries as candidates (the groups are kept for `hide`).
    pub(crate) fn candidates(&mut self, world: &mut World) -> Vec<Candidate> {
        let census = census::take_census(world);
        self.groups = census::groups(world);
        Candidate::from_census(&census)
    }

    /// Hides an entry's mesh entities, noting each one's `Visibility`.
    pub(crate) fn hide(&mut self, world: &mut World, id: &str) -> Result<(), EngineError> {
        if self.hidden.contains_key(id) {
            return Err(EngineError(format!("entry {id} is hidden already")));
        }
        let entities = self
            .groups
            .get(id)
            .ok_or_else(|| EngineError(format!("no census entry {id}")))?;
        let mut before = Vec::with_capacity(entities.len());
        for &entity in entities {
            let Ok(mut e) = world.get_entity_mut(entity) else {
                continue; // despawned since the listing: nothing left to hide
            };
            let previous = e.get::<Visibility>().copied().unwrap_or_default();
            e.insert(Visibility::Hidden);
            before.push((entity, previous));
        }
        self.hidden.insert(id.to_owned(), before);
        Ok(())
    }

    /// Puts back the `Visibility` each of the entry's entities had before `hide`.
    pub(crate) fn show(&mut self, world: &mut World, id: &str) -> Result<(), EngineError> {
        let before = self
            .hidden
            .remove(id)
            .ok_or_else(|| EngineError(format!("entry {id} is not hidden")))?;
        let mut gone = 0usize;
        for (entity, visibility) in before {
            match world.get_entity_mut(entity) {
                Ok(mut e) => {
                    e.insert(visibility);
                }
                Err(_) => gone += 1,
            }
        }
        if gone > 0 {
            return Err(EngineError(format!(
                "{gone} of entry {id}'s entities were despawned while it was hidden"
            )));
        }
        Ok(())
    }

    /// Every entity's `Visibility`.
    pub(crate) fn snapshot(world: &mut World) -> WorldSnapshot {
        WorldSnapshot(census::visibilities(world))
    }
}

/// The game paused for a bisection, and how to put it back.
#[derive(Debug)]
pub(crate) struct Pause {
    /// Whether virtual time was paused before (`None`: no virtual clock).
    virtual_was_paused: Option<bool>,
}

impl Pause {
    /// Pauses the game: virtual time stops (`Time<Virtual>`, so gameplay driven by it holds
    /// still) and a recording session marks the frames paused (kept out of budgets and
    /// hitches).
    pub(crate) fn start(world: &mut World) -> Self {
        let virtual_was_paused = world.get_resource_mut::<Time<Virtual>>().map(|mut time| {
            let was = time.is_paused();
            time.pause();
            was
        });
        if let Some(session) = world.get_resource::<FramewiseSession>() {
            session.session().set_paused(true);
        }
        Self { virtual_was_paused }
    }

    /// Puts both back as they were.
    pub(crate) fn end(self, world: &mut World) {
        if let Some(session) = world.get_resource::<FramewiseSession>() {
            session.session().set_paused(false);
        }
        if self.virtual_was_paused == Some(false) {
            if let Some(mut time) = world.get_resource_mut::<Time<Virtual>>() {
                time.unpause();
            }
        }
    }
}

/// The engine over an `App` the caller owns: [`BevyBisect::run`] pauses the game, runs the
/// protocol (each frame one `App::update`) and resumes it.
///
/// What a frame reports (the plugin's driver inside a running game reports the same):
/// - `render_ms`: the GPU's time when the plugin records (it then runs Bevy's render
///   diagnostics) on a device with timestamp queries in encoders and passes — the sum of
///   the frame's outermost diagnostics spans, gaps between them not timed; otherwise the
///   render world's CPU time for the frame, from extraction until its render graph
///   submitted; `None` without a render app. The report's `render_ms_source` says which.
///   A frame's render work runs after its update (during the next one, pipelined) and its
///   GPU times are read back updates later, so updates are tagged and the engine runs more
///   of them, in the same state and not measured, until the frame's measurements are in.
/// - `triangles`: the census's count, not the GPU's — the mesh entities Bevy's visibility
///   pass left visible in a view during the update, times their meshes' triangles.
/// - `draw_calls`: `None` (Bevy 0.19 counts no draw calls).
pub struct BevyBisect<'a> {
    app: &'a mut App,
    scene: WorldScene,
    clock: FrameClock,
}

impl<'a> BevyBisect<'a> {
    /// The engine over `app` (its world as it stands: take it between updates). Its updates
    /// are tagged for measuring until it is dropped.
    pub fn new(app: &'a mut App) -> Self {
        let clock = FrameClock::start(app.world_mut());
        Self {
            app,
            scene: WorldScene::default(),
            clock,
        }
    }

    /// Runs the bisection with the game paused, resumed afterwards: virtual time stops
    /// (`Time<Virtual>`) and a recording session marks the frames paused, both put back as
    /// they were.
    pub fn run(mut self, options: &BisectOptions) -> Result<BisectReport, BisectError> {
        let pause = Pause::start(self.app.world_mut());
        let report = bisect(&mut self, options);
        pause.end(self.app.world_mut());
        report
    }
}

impl BisectEngine for BevyBisect<'_> {
    fn name(&self) -> String {
        engine_name()
    }

    fn candidates(&mut self) -> Result<Vec<Candidate>, EngineError> {
        Ok(self.scene.candidates(self.app.world_mut()))
    }

    fn hide(&mut self, id: &str) -> Result<(), EngineError> {
        self.clock.changed();
        self.scene.hide(self.app.world_mut(), id)
    }

    fn show(&mut self, id: &str) -> Result<(), EngineError> {
        self.clock.changed();
        self.scene.show(self.app.world_mut(), id)
    }

    /// Runs updates until one drawn in the current state has its measurements in (see
    /// `timing`): one update when render time is not measured, a few more otherwise, and
    /// more while the renderer compiles pipelines (frames it drew then are not measured).
    fn render_frame(&mut self) -> Result<FrameCost, EngineError> {
        loop {
            if let Some(cost) = self.clock.ready(self.app.world()) {
                return Ok(cost);
            }
            if self.clock.stalled() {
                return Ok(FrameClock::untimed(self.app.world_mut()));
            }
            self.app.update();
            self.clock.updated(self.app.world_mut());
        }
    }

    fn snapshot(&mut self) -> Result<WorldSnapshot, EngineError> {
        Ok(WorldScene::snapshot(self.app.world_mut()))
    }

    fn render_ms_source(&self) -> Option<String> {
        self.clock.source().map(Source::describe)
    }
}

impl Drop for BevyBisect<'_> {
    fn drop(&mut self) {
        FrameClock::stop(self.app.world_mut());
    }
}

/// The engine's name in reports.
pub(crate) fn engine_name() -> String {
    format!("bevy {BEVY_VERSION}")
}

/// Where bisection reports go: `bisect.json` in the `.framewise/` directory
/// (`FRAMEWISE_DIR`, else `.framewise/` in the working directory when it exists); `None`
/// when there is none.
pub fn bisect_file() -> Option<PathBuf> {
    framewise_incidents::locate(None).map(|dir| dir.join(BISECT_FILE))
}

/// Writes a report to [`bisect_file`] when there is one; a failure is said on stderr.
pub(crate) fn write_report(report: &BisectReport) {
    let Some(path) = bisect_file() else {
        return;
    };
    if let Err(error) = framewise_census::write_bisect_file(&path, report) {
        say!(
            "framewise: bisection not written to {}: {error}",
            path.display()
        );
    }
}
