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

use bevy::prelude::*;
use framewise_bevy::FramewisePlugin;
use tracing_subscriber::layer::SubscriberExt;

#[allow(dead_code, reason = "this example measures the `systems` app only")]
#[path = "support/apps.rs"]
mod apps;

use apps::SYSTEMS;

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
    apps::add_systems_app(&mut app);
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
