//! The render side (feature `render`): the adapter and its queue in the capture's META, GPU
//! passes from Bevy's render diagnostics, the camera render graphs as the capture's topology,
//! and the render counters of the main world.
//!
//! The render world runs on its own thread under pipelined rendering, one main-world frame
//! behind: what it records goes into the frame open when it records it (its systems on its
//! own lane, its submissions in the frame open at submit), never moved to the main-world
//! frame it draws.

mod counters;
mod diagnostics;
mod gpu;
mod graph;

use std::sync::{Arc, PoisonError, RwLock};

use bevy::app::{App, Main};
use bevy::ecs::resource::Resource;
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::ecs::world::World;
use bevy::render::diagnostic::RenderDiagnosticsPlugin;
use bevy::render::renderer::{RenderAdapterInfo, RenderDevice, RenderQueue};
use bevy::render::RenderApp;
use framewise::{AdapterInfo, AdapterType, Session, SessionBuilder};

pub use counters::{visible_entities_counter, RENDER_COUNTERS};
pub use diagnostics::{parse_render_diagnostics, DiagnosticSpan};
pub use gpu::{lay_out, LaidPass, QUEUE_NAME};
pub use graph::{short_name, topology, ScheduleGraph};

/// The session as the render world reaches it: set while the session records, cleared before
/// it stops. Users hold the read lock only for the call they make, so the main world's
/// resource holds the last reference once the link is cleared.
#[derive(Clone, Default, Resource)]
pub(crate) struct SessionLink(Arc<RwLock<Option<Arc<Session>>>>);

impl SessionLink {
    /// Runs `f` with the session, when one records.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Session) -> R) -> Option<R> {
        let guard = self.0.read().unwrap_or_else(PoisonError::into_inner);
        guard.as_deref().map(f)
    }

    fn set(&self, session: Option<&Arc<Session>>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = session.cloned();
    }
}

/// Sets (or clears) the session the render world records into.
pub(crate) fn link(world: &World, session: Option<&Arc<Session>>) {
    if let Some(link) = world.get_resource::<SessionLink>() {
        link.set(session);
    }
}

/// Installs the render side once every plugin is built (the render app exists then): the
/// counters, and in the render app the GPU passes and the render graph. Called only when the
/// plugin records.
pub(crate) fn install(app: &mut App) {
    app.add_systems(
        Main,
        counters::render_counters
            .after(Main::run_main)
            .before(crate::frame::after_main),
    );
    let link = SessionLink::default();
    app.insert_resource(link.clone());
    let bevy_diagnostics = app.is_plugin_added::<RenderDiagnosticsPlugin>();
    let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
        return;
    };
    render_app.insert_resource(link);
    graph::install(render_app);
    if bevy_diagnostics {
        say!(
            "framewise: Bevy's RenderDiagnosticsPlugin is added, so it owns the render \
             diagnostics: no GPU passes are recorded (remove it; the plugin reads them)"
        );
    } else {
        gpu::install(render_app);
        app.insert_resource(RecordsGpuPasses);
    }
}

/// Present when the plugin runs Bevy's diagnostics recorder (it records GPU passes).
#[derive(Resource)]
struct RecordsGpuPasses;

/// Whether the plugin runs Bevy's diagnostics recorder in this app.
pub(crate) fn records_gpu_passes(world: &World) -> bool {
    world.contains_resource::<RecordsGpuPasses>()
}

/// Declares the renderer's queue (with the tick period wgpu declares), the adapter (hardware
/// or software: the timing regime) and what the render diagnostics can time, before the
/// session starts (the queue only when the plugin records GPU passes). Nothing when the app
/// has no renderer.
pub(crate) fn declare(world: &World, builder: SessionBuilder) -> SessionBuilder {
    let (Some(queue), Some(info), Some(device)) = (
        world.get_resource::<RenderQueue>(),
        world.get_resource::<RenderAdapterInfo>(),
        world.get_resource::<RenderDevice>(),
    ) else {
        return builder;
    };
    let info: &bevy_wgpu_types::AdapterInfo = info;
    let builder = builder.adapter(adapter_info(info));
    if !world.contains_resource::<RecordsGpuPasses>() {
        return builder;
    }
    let period_ns = f64::from(queue.get_timestamp_period());
    builder
        .gpu_queue(QUEUE_NAME, period_ns)
        .feature("gpu.timestamps", gpu::timestamp_support(device.features()))
        .feature(
            "gpu.clock_anchor",
            "per frame: CPU time after Bevy's render graph submits and when its diagnostics \
             are read back; no calibrated re-anchoring",
        )
        .feature(
            "gpu.pass_times",
            "durations: Bevy's render diagnostics give each span's elapsed GPU ticks, not its \
             timestamps; a frame's passes are laid end to end from tick 0 in the order Bevy \
             ran them, children from their parent's begin (gaps between passes unmeasured); \
             a span whose time is negative or not a number is untimed",
        )
        .feature(
            "gpu.integration",
            concat!(
                "framewise-bevy ",
                env!("CARGO_PKG_VERSION"),
                " (Bevy's render diagnostics)"
            ),
        )
}

/// The capture's description of Bevy's adapter.
fn adapter_info(info: &bevy_wgpu_types::AdapterInfo) -> AdapterInfo {
    let driver = format!("{} {}", info.driver, info.driver_info);
    AdapterInfo {
        vendor: format!("0x{:04x}", info.vendor),
        device: info.name.clone(),
        driver: driver.trim().to_owned(),
        adapter_type: adapter_type(info),
        backend: info.backend.to_str().to_owned(),
    }
}

/// Hardware, software or unknown: a CPU device, or a known software rasteriser by name (some
/// report another type), is software.
fn adapter_type(info: &bevy_wgpu_types::AdapterInfo) -> AdapterType {
    use bevy_wgpu_types::DeviceType;
    let name = format!("{} {}", info.name, info.driver).to_lowercase();
    let software = [
        "llvmpipe",
        "lavapipe",
        "swiftshader",
        "softpipe",
        "basic render",
    ];
    if info.device_type == DeviceType::Cpu || software.iter().any(|s| name.contains(s)) {
        return AdapterType::Software;
    }
    match info.device_type {
        DeviceType::DiscreteGpu | DeviceType::IntegratedGpu => AdapterType::Hardware,
        _ => AdapterType::Unknown,
    }
}
