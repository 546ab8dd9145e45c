//! The scene side's entry points: [`FramewiseAppExt`] for code that owns the `App` (a test,
//! a harness, a headless run), and [`FramewiseCensusRequest`] for systems (a key, a level
//! load) — both take a census, record it and write `.framewise/census.json`.

use bevy::app::{App, Last, PostUpdate};
use bevy::asset::AssetEventSystems;
use bevy::ecs::message::{Message, MessageCursor, Messages};
use bevy::ecs::resource::Resource;
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::ecs::system::Local;
use bevy::ecs::world::World;
use framewise_census::{BisectError, BisectOptions, BisectReport, Census, CENSUS_FILE};

use crate::bisect::{write_report, BevyBisect};
use crate::census::{note_mesh_stats, take_census, MeshStats};
use crate::driver::{drive_bisection, BisectAt, FramewiseBisectRequest};
use crate::FramewiseSession;

/// Ask for a census from a system (`MessageWriter<FramewiseCensusRequest>`): the plugin
/// answers at the end of the update ([`record_census`]), once however many were sent.
#[derive(Clone, Copy, Debug, Default, Message)]
pub struct FramewiseCensusRequest;

/// The censuses taken in an app that does not record (a recording session keeps its own):
/// what `census.json` holds, oldest first (the newest 64).
#[derive(Debug, Default, Resource)]
pub struct CensusHistory(pub Vec<Census>);

/// Takes a census of the world and records it: into the capture (a `CENS` record) and
/// `.framewise/census.json` through the session when one records; else into
/// `.framewise/census.json` directly (`FRAMEWISE_DIR`, else `.framewise/` in the working
/// directory when it exists), with every census this app took. Returns the census.
pub fn record_census(world: &mut World) -> Census {
    let census = take_census(world);
    if let Some(session) = world.get_resource::<FramewiseSession>() {
        session.session().record_census(&census);
        return census;
    }
    let mut history = world.get_resource_or_insert_with(CensusHistory::default);
    history.0.push(census.clone());
    let excess = history
        .0
        .len()
        .saturating_sub(framewise_census::file::MAX_CENSUSES_IN_FILE);
    history.0.drain(..excess);
    if let Some(dir) = framewise_incidents::locate(None) {
        let path = dir.join(CENSUS_FILE);
        if let Err(error) = framewise_census::write_census_file(&path, &history.0) {
            say!(
                "framewise: census not written to {}: {error}",
                path.display()
            );
        }
    }
    census
}

/// Answers [`FramewiseCensusRequest`]s.
fn answer_census_requests(
    world: &mut World,
    mut cursor: Local<MessageCursor<FramewiseCensusRequest>>,
) {
    let asked = world
        .get_resource::<Messages<FramewiseCensusRequest>>()
        .is_some_and(|messages| cursor.read(messages).count() > 0);
    if asked {
        record_census(world);
    }
}

/// The variable that asks a running game for a bisection after this many updates.
pub const BISECT_AT_ENV: &str = "FRAMEWISE_BISECT_AT";

/// Installs the scene side: mesh counts noted as meshes are added, census and bisection
/// requests answered at the end of each update; `bisect_at` from the plugin's settings,
/// `FRAMEWISE_BISECT_AT` overriding its update.
pub(crate) fn install(app: &mut App, bisect_at: Option<(u64, BisectOptions)>) {
    crate::timing::install(app);
    app.init_resource::<MeshStats>()
        .add_message::<FramewiseCensusRequest>()
        .add_message::<FramewiseBisectRequest>()
        .add_systems(PostUpdate, note_mesh_stats.after(AssetEventSystems))
        .add_systems(Last, (answer_census_requests, drive_bisection).chain());
    let options = bisect_at.map(|(_, o)| o).unwrap_or_default();
    let updates = bisect_updates(std::env::var(BISECT_AT_ENV).ok(), bisect_at.map(|(n, _)| n))
        .unwrap_or_else(|message| {
            say!("framewise: {message}");
            None
        });
    if let Some(updates) = updates {
        app.insert_resource(BisectAt { updates, options });
    }
}

/// The update to bisect after: `FRAMEWISE_BISECT_AT`'s value (`env`) when it is set and not
/// blank, else the plugin's `configured` one. A value that is no number of updates from 1 is
/// an error (the message to say; then no bisection runs, whatever was configured).
fn bisect_updates(env: Option<String>, configured: Option<u64>) -> Result<Option<u64>, String> {
    match env {
        Some(text) if !text.trim().is_empty() => match text.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!(
                "{BISECT_AT_ENV}={text:?} is not a number of updates (1 or more): no bisection"
            )),
        },
        _ => Ok(configured),
    }
}

/// The census and the bisection, for code that owns the `App` (call between updates).
pub trait FramewiseAppExt {
    /// Takes a census and records it ([`record_census`]).
    fn framewise_census(&mut self) -> Census;

    /// Runs the measured bisection ([`BevyBisect::run`]: the game paused, each candidate
    /// hidden in turn over `options.frames` updates) and writes the report to
    /// `.framewise/bisect.json` when there is a `.framewise/` directory (a failure to write
    /// is said once on stderr; the report is returned either way).
    fn framewise_bisect(&mut self, options: &BisectOptions) -> Result<BisectReport, BisectError>;
}

impl FramewiseAppExt for App {
    fn framewise_census(&mut self) -> Census {
        record_census(self.world_mut())
    }

    fn framewise_bisect(&mut self, options: &BisectOptions) -> Result<BisectReport, BisectError> {
        let report = BevyBisect::new(self).run(options)?;
        write_report(&report);
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::bisect_updates;

    #[test]
    fn the_variable_overrides_the_plugin_and_bad_values_are_said() {
        let env = |text: &str| Some(text.to_owned());
        assert_eq!(bisect_updates(None, None), Ok(None));
        assert_eq!(bisect_updates(None, Some(30)), Ok(Some(30)));
        assert_eq!(bisect_updates(env("  "), Some(30)), Ok(Some(30)));
        assert_eq!(bisect_updates(env("120"), Some(30)), Ok(Some(120)));
        assert_eq!(bisect_updates(env(" 7\n"), None), Ok(Some(7)));
        assert_eq!(
            bisect_updates(env(&u64::MAX.to_string()), None),
            Ok(Some(u64::MAX))
        );
        for bad in [
            "0",
            "-1",
            "1.5",
            "ten",
            "1e3",
            "18446744073709551616",
            "+-1",
        ] {
            let message = bisect_updates(env(bad), Some(30)).unwrap_err();
            assert!(
                message.starts_with(&format!("FRAMEWISE_BISECT_AT={bad:?} is not a number")),
                "{message}"
            );
        }
    }
}
