//! The apps the overhead examples measure (`system_overhead`, `tracy_compare`): the same
//! systems, entities and executors for every way of recording them.

use bevy::ecs::schedule::SingleThreadedExecutor;
use bevy::prelude::*;

/// Systems in the `systems` app's `Update`.
pub const SYSTEMS: usize = 60;
/// Entities each of the `systems` app's systems reads and writes.
const ENTITIES: usize = 100;

#[derive(Component)]
struct Position(f32);

/// One small system; `I` makes sixty distinct systems of it.
fn step<const I: usize>(mut positions: Query<&mut Position>) {
    for mut position in &mut positions {
        position.0 += I as f32;
    }
}

macro_rules! add_steps {
    ($app:expr, $($i:literal)*) => { $( $app.add_systems(Update, step::<$i>); )* };
}

/// The `systems` app: [`SYSTEMS`] small systems in `Update`, each over the same
/// 100 entities, on the single-threaded executor (one thread's cost).
pub fn add_systems_app(app: &mut App) {
    app.edit_schedule(Update, |schedule| {
        schedule.set_executor(SingleThreadedExecutor::new());
    });
    add_steps!(app, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27
        28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56
        57 58 59);
    app.world_mut()
        .spawn_batch((0..ENTITIES).map(|i| Position(i as f32)));
}

/// Groups of the `game` app: each has its own component, entities and systems.
pub const GROUPS: usize = 8;
/// Systems in `Update` of the `game` app: per group, [`GROUP_STEPS`] steps, a reader of the
/// next group's data, and a system that spawns and despawns through `Commands`.
pub const GAME_SYSTEMS: usize = GROUPS * (GROUP_STEPS + 2);
/// Step systems per group of the `game` app.
const GROUP_STEPS: usize = 12;
/// Entities per group of the `game` app.
const GROUP_ENTITIES: usize = 250;

/// A group's data: `Data<G>` for group `G`.
#[derive(Component)]
struct Data<const G: usize>([f32; 4]);

/// An entity a group's churn system spawns one update and despawns the next.
#[derive(Component)]
struct Churned<const G: usize>;

/// Group `G`'s step `I`: a few multiply-adds on every entity of the group.
fn group_step<const G: usize, const I: usize>(mut data: Query<&mut Data<G>>) {
    for mut data in &mut data {
        let [a, b, c, d] = data.0;
        data.0 = [
            a.mul_add(0.999, b * 1e-3),
            b.mul_add(0.998, c * 1e-3),
            c.mul_add(0.997, d * 1e-3),
            d.mul_add(0.996, I as f32 * 1e-3),
        ];
    }
}

/// Group `G` reads group `H`'s data (which orders it against `H`'s writers).
fn group_read<const G: usize, const H: usize>(
    mine: Query<&Data<G>>,
    theirs: Query<&Data<H>>,
    mut sum: Local<f32>,
) {
    *sum = mine.iter().map(|data| data.0[0]).sum::<f32>()
        + theirs.iter().map(|data| data.0[0]).sum::<f32>();
}

/// Group `G` despawns what it spawned last update and spawns one entity (a command buffer
/// applied at the schedule's sync point, as a game's spawns are).
fn group_churn<const G: usize>(mut commands: Commands, churned: Query<Entity, With<Churned<G>>>) {
    for entity in &churned {
        commands.entity(entity).despawn();
    }
    commands.spawn((Churned::<G>, Data::<G>([0.0; 4])));
}

macro_rules! add_group {
    ($app:expr, $g:literal, $h:literal) => {
        add_group!(@steps $app, $g, 0 1 2 3 4 5 6 7 8 9 10 11);
        $app.add_systems(Update, (group_read::<$g, $h>, group_churn::<$g>));
        $app.world_mut().spawn_batch(
            (0..GROUP_ENTITIES).map(|i| Data::<$g>([i as f32, 1.0, 2.0, 3.0])),
        );
    };
    (@steps $app:expr, $g:literal, $($i:literal)*) => {
        $( $app.add_systems(Update, group_step::<$g, $i>); )*
    };
}

/// The `game` app: [`GAME_SYSTEMS`] systems in `Update` on Bevy's multi-threaded executor
/// (its default): [`GROUPS`] groups of 250 entities, each with 12 steps over its own data,
/// one reader of the next group's data and one system spawning and despawning an entity
/// through `Commands`; the groups run in parallel where their data allow.
pub fn add_game_app(app: &mut App) {
    add_group!(app, 0, 1);
    add_group!(app, 1, 2);
    add_group!(app, 2, 3);
    add_group!(app, 3, 4);
    add_group!(app, 4, 5);
    add_group!(app, 5, 6);
    add_group!(app, 6, 7);
    add_group!(app, 7, 0);
}
