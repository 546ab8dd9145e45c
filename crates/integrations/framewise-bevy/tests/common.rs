//! A small headless game, and helpers to read its capture.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use bevy::app::{AppExit, ScheduleRunnerPlugin};
use bevy::prelude::*;
#[cfg(feature = "render")]
use framewise_census::{hints, Census, Hint, HintKind};
use framewise_format::model::Frame;
use framewise_format::read::{self, Capture};

/// Boids spawned by every update.
pub const SPAWN_PER_FRAME: u32 = 7;

static SERIAL: Mutex<()> = Mutex::new(());

/// One session per process at a time: tests that record take this first.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A flock member.
#[derive(Component)]
pub struct Boid {
    velocity: f32,
}

/// Where a boid is.
#[derive(Component)]
pub struct Position(f32);

/// Added to the boids spawned by one update only: a new archetype appears then.
#[derive(Component)]
pub struct Tagged;

/// The truth the capture is checked against: entities spawned and archetypes at the end of
/// each update's main schedule, counted by Bevy itself.
#[derive(Debug, Default, Resource)]
pub struct Truth {
    pub entities: Vec<u32>,
    pub archetypes: Vec<usize>,
}

/// Which update tags its boids, and after how many updates the game sends `AppExit`.
#[derive(Resource)]
pub struct Script {
    pub tag_at: u32,
    pub exit_after: Option<u32>,
    pub panic_at: Option<u32>,
    updates: u32,
}

impl Script {
    pub fn new(exit_after: Option<u32>) -> Self {
        Self {
            tag_at: 3,
            exit_after,
            panic_at: None,
            updates: 0,
        }
    }
}

pub fn spawn_boids(mut commands: Commands, script: Res<Script>) {
    for i in 0..SPAWN_PER_FRAME {
        let boid = (Boid { velocity: i as f32 }, Position(0.0));
        if script.updates == script.tag_at {
            commands.spawn((boid, Tagged));
        } else {
            commands.spawn(boid);
        }
    }
}

pub fn move_boids(mut boids: Query<(&Boid, &mut Position)>) {
    for (boid, mut position) in &mut boids {
        position.0 += boid.velocity;
    }
}

pub fn count_truth(world: &mut World) {
    let entities = world.entities().count_spawned();
    let archetypes = world.archetypes().len();
    let mut truth = world.resource_mut::<Truth>();
    truth.entities.push(entities);
    truth.archetypes.push(archetypes);
}

pub fn advance_script(mut script: ResMut<Script>, mut exit: MessageWriter<AppExit>) {
    script.updates += 1;
    if script.panic_at == Some(script.updates) {
        panic!("the game panics on purpose");
    }
    if script.exit_after == Some(script.updates) {
        exit.write(AppExit::Success);
    }
}

/// The game: the plugin first, then the minimal plugins and the game's systems.
pub fn game(plugin: framewise_bevy::FramewisePlugin, script: Script) -> App {
    let mut app = App::new();
    app.add_plugins(plugin);
    game_after(app, script)
}

/// The game with Bevy's `LogPlugin` right after the plugin (where `DefaultPlugins` has it).
pub fn game_with_log(
    plugin: framewise_bevy::FramewisePlugin,
    log: bevy::log::LogPlugin,
    script: Script,
) -> App {
    let mut app = App::new();
    app.add_plugins(plugin).add_plugins(log);
    game_after(app, script)
}

fn game_after(mut app: App, script: Script) -> App {
    app.add_plugins(MinimalPlugins.set(ScheduleRunnerPlugin::run_loop(std::time::Duration::ZERO)))
        .insert_resource(script)
        .init_resource::<Truth>()
        .add_systems(Update, (spawn_boids, move_boids))
        .add_systems(Last, (count_truth, advance_script).chain());
    app
}

/// Updates the app the way Bevy's runners do, until it sends `AppExit` (at most `limit`
/// updates).
pub fn run(app: &mut App, limit: u32) -> u32 {
    app.finish();
    app.cleanup();
    for updates in 1..=limit {
        app.update();
        if app.should_exit().is_some() {
            return updates;
        }
    }
    limit
}

pub fn open(path: &Path) -> Capture {
    read::open(path).unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()))
}

pub fn frames(capture: &Capture) -> Vec<Frame> {
    capture
        .frames()
        .map(|f| f.unwrap_or_else(|d| panic!("frame does not decode: {d}")))
        .collect()
}

pub fn name(capture: &Capture, id: u32) -> String {
    capture.symbols().name(id).unwrap_or("?").to_owned()
}

/// The names of a frame's spans, every lane's.
pub fn scope_names(capture: &Capture, frame: &Frame) -> Vec<String> {
    frame
        .lanes
        .iter()
        .flat_map(|lane| &lane.spans)
        .map(|span| name(capture, span.scope))
        .collect()
}

/// A frame's counters by name.
pub fn counters(capture: &Capture, frame: &Frame) -> HashMap<String, i64> {
    frame
        .counters
        .iter()
        .map(|c| (name(capture, c.counter), c.value))
        .collect()
}

/// Every entity's `Visibility` (what bisection must leave as it found it).
#[cfg(feature = "render")]
pub fn visibilities(app: &mut App) -> Vec<(Entity, Visibility)> {
    let world = app.world_mut();
    let mut query = world.query::<(Entity, &Visibility)>();
    query.iter(world).map(|(e, v)| (e, *v)).collect()
}

/// A census's hints, checked for the planted costs: one material-dedup candidate naming
/// `duplicates` materials, one shadow-casting light named `light`, and no instancing
/// candidate (the flock shares one mesh and material, which Bevy batches).
#[cfg(feature = "render")]
pub fn planted_hints(census: &Census, duplicates: usize, light: &str) -> Vec<Hint> {
    let found = hints(std::slice::from_ref(census));
    let count = |kind: HintKind| found.iter().filter(|h| h.kind == kind).count();
    assert_eq!(count(HintKind::MaterialDedupCandidate), 1, "{found:#?}");
    assert_eq!(count(HintKind::ShadowCasterLight), 1, "{found:#?}");
    assert_eq!(count(HintKind::InstancingCandidate), 0, "{found:#?}");
    let of = |kind: HintKind| found.iter().find(|h| h.kind == kind).unwrap();
    assert_eq!(
        of(HintKind::MaterialDedupCandidate).subject,
        format!("{duplicates} materials with identical parameters")
    );
    assert_eq!(
        of(HintKind::ShadowCasterLight).subject,
        format!("light {light}")
    );
    found
}
