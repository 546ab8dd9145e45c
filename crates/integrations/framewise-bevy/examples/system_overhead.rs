//! What recording costs a Bevy app per system run: an app with `SYSTEMS` small systems on
//! the single-threaded executor (so the measure is one thread's), updated `UPDATES` times,
//! in one of three modes (one per process: a process has one global `tracing` subscriber):
//!
//! - `none`: no plugin and no subscriber (Bevy's `trace` spans compiled in, recording nothing);
//! - `layer`: the plugin recording, system scopes through a `tracing_subscriber` registry
//!   carrying [`framewise_bevy::tracing_layer`] (what an app with Bevy's `LogPlugin` runs);
//! - `subscriber`: the plugin recording, through the subscriber it installs itself.
//!
//! ```sh
//! cargo run --release -p framewise-bevy --example system_overhead -- subscriber
//! valgrind --tool=callgrind target/release/examples/system_overhead subscriber 2000
//! ```
//!
//! It prints the mode, the wall time per update and per system run (ns), and the capture's
//! size; the difference between modes is the cost of recording.

use std::time::Instant;

use bevy::ecs::schedule::SingleThreadedExecutor;
use bevy::prelude::*;
use framewise_bevy::FramewisePlugin;
use tracing_subscriber::layer::SubscriberExt;

/// Systems in `Update`.
const SYSTEMS: usize = 60;
/// Entities each system reads and writes.
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

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "subscriber".to_owned());
    let updates: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let capture = std::env::temp_dir().join(format!("system_overhead-{mode}.sgpt"));
    let mut app = App::new();
    match mode.as_str() {
        "none" => {}
        "layer" => {
            let subscriber = tracing_subscriber::registry().with(framewise_bevy::tracing_layer());
            if tracing::subscriber::set_global_default(subscriber).is_err() {
                eprintln!("system_overhead: a subscriber is already set");
                std::process::exit(2);
            }
            app.add_plugins(
                FramewisePlugin::default()
                    .capture(&capture)
                    .install_subscriber(false),
            );
        }
        "subscriber" => {
            app.add_plugins(FramewisePlugin::default().capture(&capture));
        }
        other => {
            eprintln!(
                "system_overhead: unknown mode {other:?}: expected none, layer or subscriber"
            );
            std::process::exit(2);
        }
    }
    app.add_plugins(MinimalPlugins);
    app.edit_schedule(Update, |schedule| {
        schedule.set_executor(SingleThreadedExecutor::new());
    });
    add_steps!(app, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27
        28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56
        57 58 59);
    app.world_mut()
        .spawn_batch((0..ENTITIES).map(|i| Position(i as f32)));
    app.finish();
    app.cleanup();
    for _ in 0..100 {
        app.update();
    }
    let start = Instant::now();
    for _ in 0..updates {
        app.update();
    }
    let elapsed_ns = start.elapsed().as_nanos() as f64;
    app.world_mut().write_message(AppExit::Success);
    app.update();
    let per_update_ns = elapsed_ns / f64::from(updates);
    let capture_bytes = std::fs::metadata(&capture).map(|m| m.len()).unwrap_or(0);
    println!(
        "mode={mode} systems={SYSTEMS} updates={updates} per_update_ns={per_update_ns:.0} \
         per_system_ns={:.1} capture_bytes={capture_bytes}",
        per_update_ns / SYSTEMS as f64
    );
}
