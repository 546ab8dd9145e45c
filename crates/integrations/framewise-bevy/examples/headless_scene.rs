//! The example scene rendered headless (no window: into an offscreen image) and recorded.
//!
//! ```text
//! cargo run -p framewise-bevy --features render --example headless_scene -j2 -- scene.sgpt 120
//! framewise summarize scene.sgpt
//! ```
//!
//! Arguments: the capture's path (default `scene.sgpt`; `FRAMEWISE_CAPTURE` overrides it) and
//! the number of updates (default 120). The scene: a flock sharing one mesh and material,
//! three lights (one shadow-casting point light), and a planted cost (a cluster of identical
//! materials, one heavy mesh); see `framewise_bevy::example`. It renders on the adapter wgpu
//! finds first (Mesa's lavapipe on a machine without a GPU), and keeps Bevy's logs: its
//! `LogPlugin` carries the recorder's layer (`example::headless_app` says how).

use bevy::app::AppExit;
use framewise::env::EnvConfig;
use framewise::CaptureLevel;
use framewise_bevy::example::{self, SceneSettings};
use framewise_bevy::{FramewisePlugin, FramewiseReport};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "scene.sgpt".to_owned());
    let updates: u32 = match args.next().map(|n| n.parse()) {
        None => 120,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("headless_scene: the number of updates must be a positive integer");
            std::process::exit(2);
        }
    };
    let mut app = example::headless_app(
        // Structure level: the render graph's topology too.
        FramewisePlugin::default()
            .capture(&path)
            .level(CaptureLevel::Structure),
        SceneSettings::default(),
    );
    example::finish(&mut app);
    let ran = example::update(&mut app, updates - 1);
    if ran == updates - 1 {
        // The last update sends AppExit: the plugin stops the session in it.
        app.world_mut().write_message(AppExit::Success);
        app.update();
    }
    match app.world().get_resource::<FramewiseReport>() {
        Some(FramewiseReport(Ok(report))) => println!(
            "recorded {} frames into {} ({} bytes)",
            report.frames_written,
            // Where the capture went: FRAMEWISE_CAPTURE's path when it overrode the argument.
            report
                .path
                .as_deref()
                .map_or_else(|| path.clone(), |p| p.display().to_string()),
            report.bytes_written
        ),
        Some(FramewiseReport(Err(error))) => {
            eprintln!("headless_scene: the capture failed: {error}");
            std::process::exit(1);
        }
        None => {
            // The plugin was given a path, so it did not record because the environment's
            // FRAMEWISE_* variables are bad, or because the session did not start (the
            // plugin said why on stderr).
            let reason = match EnvConfig::from_env() {
                Err(error) => error.to_string(),
                Ok(_) => "the session did not start (framewise said why above)".to_owned(),
            };
            eprintln!("headless_scene: not recorded: {reason}");
            std::process::exit(1);
        }
    }
}
