//! Bevy's [`BisectEngine`]: candidates are the census's entries, hiding one sets
//! `Visibility::Hidden` on each of its mesh entities (showing puts back exactly the
//! `Visibility` each had), a frame is one `App::update`, and the snapshot is every entity's
//! `Visibility`.
//!
//! What a frame reports: **triangles**, those of the mesh entities Bevy's visibility pass
//! marked visible in a view during that update (`ViewVisibility`, what the renderer extracts),
//! counted from the meshes; **draw calls** and **render ms** are not measured here: `null`
//! (absent, never 0), and the report ranks by Δ triangles.
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

    /// What the update that just ran cost (see the module documentation).
    pub(crate) fn cost(world: &mut World) -> FrameCost {
        FrameCost {
            draw_calls: None,
            triangles: Some(census::visible_triangles(world)),
            render_ms: None,
        }
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
pub struct BevyBisect<'a> {
    app: &'a mut App,
    scene: WorldScene,
}

impl<'a> BevyBisect<'a> {
    /// The engine over `app` (its world as it stands: take it between updates).
    pub fn new(app: &'a mut App) -> Self {
        Self {
            app,
            scene: WorldScene::default(),
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
        self.scene.hide(self.app.world_mut(), id)
    }

    fn show(&mut self, id: &str) -> Result<(), EngineError> {
        self.scene.show(self.app.world_mut(), id)
    }

    fn render_frame(&mut self) -> Result<FrameCost, EngineError> {
        self.app.update();
        Ok(WorldScene::cost(self.app.world_mut()))
    }

    fn snapshot(&mut self) -> Result<WorldSnapshot, EngineError> {
        Ok(WorldScene::snapshot(self.app.world_mut()))
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
        eprintln!(
            "framewise: bisection not written to {}: {error}",
            path.display()
        );
    }
}
