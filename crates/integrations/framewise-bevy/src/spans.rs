//! Bevy's `trace` spans as framewise scopes: the recorder's `tracing` subscriber or layer,
//! told how Bevy names its spans.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use bevy::ecs::resource::Resource;
use framewise::tracing::{FramewiseLayer, FramewiseSubscriber, SpanName};

/// Whether the process's global subscriber is one this crate installed.
static INSTALLED: OnceLock<bool> = OnceLock::new();

/// Whether [`tracing_layer`] was called (the app put the layer in a subscriber of its own).
static LAYER_GIVEN: AtomicBool = AtomicBool::new(false);

/// The recorder's `tracing` layer, naming Bevy's spans: a `system` span becomes a scope named
/// by the system, `system_commands` one named `<system> commands`, `schedule` and `sub app`
/// ones `schedule <label>` and `sub app <label>`. The spans that outlive a frame (`bevy_app`,
/// `update`, `main app`, the `Main` schedule, this crate's own systems) record nothing; any
/// other span keeps its name and call site.
///
/// When it records, [`FramewisePlugin`](crate::FramewisePlugin) makes the recorder's
/// subscriber, which names spans the same way, the process's global one, unless one is set
/// already. Added first, as it should be, it is built before Bevy's `LogPlugin`, which then
/// cannot set its own subscriber: the app shows no logs (the plugin says so on stderr once
/// every plugin is built). To keep Bevy's logs and the scopes, turn the plugin's
/// [`install_subscriber`](crate::FramewisePlugin::install_subscriber) off and pass this layer
/// to `LogPlugin` as `custom_layer` (`LogPlugin`'s filter then applies to the spans too: its
/// default records Bevy's, at `INFO`, and leaves out wgpu's and naga's own):
///
/// ```ignore
/// app.add_plugins(FramewisePlugin::default().install_subscriber(false))
///     .add_plugins(DefaultPlugins.set(LogPlugin {
///         custom_layer: |_| Some(Box::new(framewise_bevy::tracing_layer())),
///         ..default()
///     }));
/// ```
pub fn tracing_layer() -> FramewiseLayer {
    LAYER_GIVEN.store(true, Ordering::Relaxed);
    bevy_naming()
}

/// The layer with Bevy's naming.
fn bevy_naming() -> FramewiseLayer {
    FramewiseLayer::new().name_by_field("name", name_span)
}

/// What a Bevy span records as.
fn name_span(span: &'static str, value: Option<&str>) -> SpanName {
    match (span, value) {
        ("bevy_app" | "update" | "main app", _) | ("schedule", Some("Main")) => SpanName::Skip,
        ("system" | "system_commands", Some(system)) if is_own(system) => SpanName::Skip,
        ("system", Some(system)) => SpanName::Named(system.to_owned()),
        ("system_commands", Some(system)) => SpanName::Named(format!("{system} commands")),
        ("schedule", Some(label)) => SpanName::Named(format!("schedule {label}")),
        ("sub app", Some(label)) => SpanName::Named(format!("sub app {label}")),
        _ => SpanName::Default,
    }
}

/// Whether a system is the plugin's own bookkeeping (the frame loop, the render side, the
/// census and bisection hooks), not the game's (the example scene's systems are the game's).
fn is_own(system: &str) -> bool {
    system.starts_with("framewise_bevy::") && !system.starts_with("framewise_bevy::example::")
}

/// Makes the recorder's own subscriber, naming spans as [`tracing_layer`] does, the global
/// one (the cheaper path: no registry), unless one is set already (then says so once on
/// stderr, unless the app was given the layer). Returns whether the global subscriber is
/// the recorder's (installed now, or by an earlier call in this process).
pub(crate) fn install_subscriber() -> bool {
    let installed = *INSTALLED.get_or_init(|| {
        let subscriber = FramewiseSubscriber::from(bevy_naming());
        tracing::subscriber::set_global_default(subscriber).is_ok()
    });
    if !installed && !LAYER_GIVEN.load(Ordering::Relaxed) {
        say!(
            "framewise: another tracing subscriber is global (Bevy's LogPlugin?): no system \
             scopes are recorded unless it carries framewise_bevy::tracing_layer()"
        );
    }
    installed
}

/// Present in an app whose plugin made the recorder's subscriber the global one (or found it
/// so): a `LogPlugin` built after it could not set its own subscriber, so every log line,
/// `LogPlugin`'s error about it included, goes to the recorder's subscriber, which shows none.
#[derive(Resource)]
pub(crate) struct SubscriberInstalled;

/// The one line the plugin says, once every plugin is built, when the app has Bevy's
/// `LogPlugin` and the recorder's subscriber is the global one.
pub(crate) const LOGS_LOST: &str = "framewise: Bevy's LogPlugin shows no logs: framewise's \
    tracing subscriber is the process's global one, so LogPlugin could not set its own; to \
    keep both, add FramewisePlugin::default().install_subscriber(false) and give LogPlugin \
    the recorder's layer: LogPlugin { custom_layer: |_| \
    Some(Box::new(framewise_bevy::tracing_layer())), ..default() }";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bevy_spans_are_named_by_what_they_time() {
        let named = |span, value| name_span(span, value);
        assert_eq!(
            named("system", Some("game::movement")),
            SpanName::Named("game::movement".into())
        );
        assert_eq!(
            named("system_commands", Some("game::spawn")),
            SpanName::Named("game::spawn commands".into())
        );
        assert_eq!(
            named("schedule", Some("Update")),
            SpanName::Named("schedule Update".into())
        );
        assert_eq!(named("schedule", Some("Main")), SpanName::Skip);
        assert_eq!(named("main app", None), SpanName::Skip);
        assert_eq!(
            named("system", Some("framewise_bevy::frame::after_main")),
            SpanName::Skip
        );
        assert_eq!(
            named("system", Some("framewise_bevy::render::gpu::finish_frame")),
            SpanName::Skip
        );
        for own in [
            "framewise_bevy::scene::answer_census_requests",
            "framewise_bevy::driver::drive_bisection",
            "framewise_bevy::census::note_mesh_stats",
        ] {
            assert_eq!(named("system", Some(own)), SpanName::Skip, "{own}");
        }
        assert_eq!(
            named("system", Some("framewise_bevy::example::turn_flock")),
            SpanName::Named("framewise_bevy::example::turn_flock".into())
        );
        assert_eq!(named("multithreaded executor", None), SpanName::Default);
    }
}
