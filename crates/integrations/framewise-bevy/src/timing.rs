//! What each bisection frame cost, matched to the update that drew it.
//!
//! A bisection frame is one `App::update`; its render work happens later: at the end of the
//! update (the render sub-app), or during the next one under pipelined rendering, and its GPU
//! times are read back frames later still. So while a bisection measures, every update gets
//! a **tag** (in `First`), the render world extracts it with the rest of the frame, and what
//! the render world measures for the frame is filed under its tag ([`Samples`]); the engine
//! ([`FrameClock`]) reports a frame once its measurements are in, letting the game run more
//! updates meanwhile (the same hidden state, not measured). A hide or show starts a new
//! generation: frames drawn before it are never reported after it. A frame drawn while the
//! renderer was still compiling pipelines (Bevy draws a mesh only once its pipeline is
//! ready, so the frame is incomplete: a scene just loaded) is skipped, not measured.
//!
//! **Render ms** ([`Source`]): the GPU's time when the plugin runs Bevy's render diagnostics
//! (it records GPU passes) on a device with timestamp queries in encoders and passes — the
//! sum of the frame's outermost diagnostics spans' GPU time (gaps between them are not
//! timed); otherwise the render world's CPU time for the frame, from extraction until the
//! render graph submitted (the GPU's own work not included). Without a render app, none.
//! **Triangles** are the census's count of what the frame's views saw (see `bisect`).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bevy::app::{App, First};
use bevy::ecs::resource::Resource;
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::ecs::system::{Commands, Res, ResMut};
use bevy::ecs::world::World;
use bevy::render::render_resource::PipelineCache;
use bevy::render::renderer::{RenderDevice, RenderGraph, RenderGraphSystems};
use bevy::render::settings::WgpuFeatures;
use bevy::render::{Extract, ExtractSchedule, RenderApp};
use framewise_census::FrameCost;

use crate::census;

/// Updates the engine lets run while waiting for one frame's measurements before it reports
/// the frame without render time.
const MAX_WAIT_UPDATES: u32 = 12;

/// Frames drawn while the renderer was still compiling pipelines that the engine skips (not
/// measured: what they draw is incomplete) before it measures them anyway.
const MAX_COMPILING_FRAMES: u32 = 600;

/// What one tagged update measured.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    triangles: Option<u64>,
    render_cpu_ms: Option<f64>,
    /// `Some` once the frame's diagnostics were read back (`Some(None)`: no GPU time in them).
    gpu_ms: Option<Option<f64>>,
    /// Pipelines were still compiling when the frame rendered (its meshes may not draw yet).
    compiling: bool,
}

/// Measurements by tag, shared by the main and the render world.
#[derive(Clone, Debug, Default, Resource)]
pub(crate) struct Samples(Arc<Mutex<BTreeMap<u64, Sample>>>);

impl Samples {
    fn with<R>(&self, f: impl FnOnce(&mut BTreeMap<u64, Sample>) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Files the GPU time of the frame tagged `tag` (read back from its diagnostics).
    pub(crate) fn gpu_time(&self, tag: u64, gpu_ms: Option<f64>) {
        self.with(|s| s.entry(tag).or_default().gpu_ms = Some(gpu_ms));
    }
}

/// Main world: tags the updates while a bisection measures.
#[derive(Debug, Default, Resource)]
pub(crate) struct Tags {
    measuring: bool,
    next: u64,
    /// This update's tag (`None` when no bisection measures).
    current: Option<u64>,
}

/// Render world: the tag of the frame it renders, and when its work began.
#[derive(Clone, Copy, Debug, Default, Resource)]
pub(crate) struct RenderTag {
    pub(crate) tag: Option<u64>,
    began: Option<Instant>,
}

/// Present in the main world when the app has a render app (render time is measured).
#[derive(Debug, Resource)]
struct RenderTimed;

/// Installs the tags (when the plugin is built).
pub(crate) fn install(app: &mut App) {
    app.init_resource::<Tags>()
        .init_resource::<Samples>()
        .add_systems(First, tag_update);
}

/// Installs the frame's timing in the render app, when there is one (once every plugin is
/// built: the render app exists then).
pub(crate) fn install_render(app: &mut App) {
    let Some(samples) = app.world().get_resource::<Samples>().cloned() else {
        return;
    };
    let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
        return;
    };
    render_app
        .insert_resource(samples)
        .init_resource::<RenderTag>()
        .add_systems(ExtractSchedule, extract_tag)
        .add_systems(RenderGraph, render_done.in_set(RenderGraphSystems::Finish));
    app.insert_resource(RenderTimed);
}

fn tag_update(mut tags: ResMut<Tags>) {
    tags.current = tags.measuring.then_some(tags.next);
    if tags.measuring {
        tags.next += 1;
    }
}

fn extract_tag(tags: Extract<Res<Tags>>, mut commands: Commands) {
    commands.insert_resource(RenderTag {
        tag: tags.current,
        began: tags.current.map(|_| Instant::now()),
    });
}

/// After the render graph submitted: the frame's CPU time, and whether pipelines were still
/// compiling.
fn render_done(tag: Res<RenderTag>, samples: Res<Samples>, cache: Option<Res<PipelineCache>>) {
    if let (Some(tag), Some(began)) = (tag.tag, tag.began) {
        let ms = began.elapsed().as_secs_f64() * 1e3;
        let compiling = cache.is_some_and(|c| c.waiting_pipelines().next().is_some());
        samples.with(|s| {
            let sample = s.entry(tag).or_default();
            sample.render_cpu_ms = Some(ms);
            sample.compiling = compiling;
        });
    }
}

/// What render ms is on this app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The frame's diagnostics spans' GPU time.
    Gpu,
    /// The render world's CPU time.
    Cpu,
}

impl Source {
    /// The sentence the report carries.
    pub(crate) fn describe(self) -> String {
        match self {
            Source::Gpu => "GPU time: the sum of the frame's outermost Bevy render-diagnostics \
                            spans, timed by timestamp queries (gaps between them not timed)"
                .to_owned(),
            Source::Cpu => "CPU time of the render world: from extracting the frame until \
                            its render graph submitted (the GPU's own work not included; \
                            GPU time needs a recording session on a device with timestamp \
                            queries in encoders and inside passes)"
                .to_owned(),
        }
    }

    /// The source this app measures, `None` without a render app.
    pub(crate) fn of(world: &World) -> Option<Source> {
        if !world.contains_resource::<RenderTimed>() {
            return None;
        }
        let timestamps = WgpuFeatures::TIMESTAMP_QUERY
            | WgpuFeatures::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | WgpuFeatures::TIMESTAMP_QUERY_INSIDE_PASSES;
        let timed = world
            .get_resource::<RenderDevice>()
            .is_some_and(|d| d.features().contains(timestamps));
        if timed && crate::render::records_gpu_passes(world) {
            Some(Source::Gpu)
        } else {
            Some(Source::Cpu)
        }
    }
}

/// The GPU time of a frame's diagnostics: the sum of its outermost spans' GPU time; `None`
/// when none has one. A time that is no duration (negative: a wrapped timestamp, a driver's
/// garbage; or not finite) is left out, as a span without one is, never added; a sum past
/// the largest `f64` is none.
pub(crate) fn frame_gpu_ms(spans: &[crate::render::DiagnosticSpan]) -> Option<f64> {
    spans
        .iter()
        .filter(|s| s.path.len() == 1)
        .filter_map(|s| s.elapsed_gpu_ms)
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .fold(None, |sum, ms| Some(sum.unwrap_or(0.0) + ms))
        .filter(|sum| sum.is_finite())
}

/// The engine's side: which updates were drawn in the current state, and their costs once
/// measured.
#[derive(Debug)]
pub(crate) struct FrameClock {
    source: Option<Source>,
    generation: u64,
    /// Tagged updates not reported yet, oldest first, with their generation.
    drawn: VecDeque<(u64, u64)>,
    /// Updates run since the last frame was reported or skipped.
    waited: u32,
    /// Frames skipped because pipelines were still compiling.
    compiling_skipped: u32,
}

impl FrameClock {
    /// What the world shows now, without render time: for an engine whose updates were not
    /// tagged.
    pub(crate) fn untimed(world: &mut World) -> FrameCost {
        FrameCost {
            draw_calls: None,
            triangles: Some(census::visible_triangles(world)),
            render_ms: None,
        }
    }

    /// Starts tagging updates (and forgets what frames of an earlier run, still in flight
    /// when it stopped, filed since).
    pub(crate) fn start(world: &mut World) -> Self {
        if let Some(mut tags) = world.get_resource_mut::<Tags>() {
            tags.measuring = true;
        }
        if let Some(samples) = world.get_resource::<Samples>() {
            samples.with(BTreeMap::clear);
        }
        Self {
            source: Source::of(world),
            generation: 0,
            drawn: VecDeque::new(),
            waited: 0,
            compiling_skipped: 0,
        }
    }

    /// What render ms measures (`None`: not measured).
    pub(crate) fn source(&self) -> Option<Source> {
        self.source
    }

    /// Stops tagging and forgets every measurement.
    pub(crate) fn stop(world: &mut World) {
        if let Some(mut tags) = world.get_resource_mut::<Tags>() {
            tags.measuring = false;
            tags.current = None;
        }
        if let Some(samples) = world.get_resource::<Samples>() {
            samples.with(BTreeMap::clear);
        }
    }

    /// The world changed (a hide or a show): frames drawn before are not reported.
    pub(crate) fn changed(&mut self) {
        self.generation += 1;
    }

    /// The update that just ran: notes its tag in the current generation and the triangles
    /// its views saw.
    pub(crate) fn updated(&mut self, world: &mut World) {
        self.waited += 1;
        let Some(tag) = world.get_resource::<Tags>().and_then(|t| t.current) else {
            return;
        };
        self.drawn.push_back((tag, self.generation));
        let triangles = census::visible_triangles(world);
        if let Some(samples) = world.get_resource::<Samples>() {
            samples.with(|s| s.entry(tag).or_default().triangles = Some(triangles));
        }
    }

    /// Whether the engine has run more updates than a frame can take without one being
    /// tagged (updates that are never tagged, without the plugin, cannot wait forever): it
    /// then reports [`FrameClock::untimed`].
    pub(crate) fn stalled(&self) -> bool {
        self.waited > MAX_WAIT_UPDATES + 1
    }

    /// A frame of the current state whose measurements are in, oldest first, skipping
    /// frames drawn while pipelines were compiling (up to `MAX_COMPILING_FRAMES` in a run);
    /// after `MAX_WAIT_UPDATES` updates without one, the oldest without its render time.
    /// `None`: run another update.
    pub(crate) fn ready(&mut self, world: &World) -> Option<FrameCost> {
        let samples = world.get_resource::<Samples>()?;
        let generation = self.generation;
        let (tag, sample) = loop {
            let &(tag, g) = self.drawn.front()?;
            let sample = samples.with(|s| s.get(&tag).copied()).unwrap_or_default();
            let skip = g != generation
                || (sample.compiling && self.compiling_skipped < MAX_COMPILING_FRAMES);
            if !skip {
                break (tag, sample);
            }
            if g == generation {
                self.compiling_skipped += 1;
                self.waited = 0;
            }
            self.drawn.pop_front();
            samples.with(|s| s.remove(&tag));
        };
        let render_ms = match self.source {
            None => Some(None),
            Some(Source::Cpu) => sample.render_cpu_ms.map(Some),
            Some(Source::Gpu) => sample.gpu_ms,
        };
        let render_ms = match render_ms {
            Some(ms) => ms,
            None if self.waited >= MAX_WAIT_UPDATES => None,
            None => return None,
        };
        self.drawn.pop_front();
        samples.with(|s| s.remove(&tag));
        self.waited = 0;
        Some(FrameCost {
            draw_calls: None,
            triangles: sample.triangles,
            render_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::DiagnosticSpan;

    fn span(path: &str, gpu_ms: Option<f64>) -> DiagnosticSpan {
        DiagnosticSpan {
            path: path.split('/').map(str::to_owned).collect(),
            elapsed_cpu_ms: Some(0.01),
            elapsed_gpu_ms: gpu_ms,
            clipper_invocations: None,
            vertex_shader_invocations: None,
        }
    }

    #[test]
    fn a_frames_gpu_time_sums_its_outermost_durations_and_leaves_garbage_out() {
        let spans = [
            span("prepass", Some(0.25)),
            span("shadows/face 0", Some(4.0)),
            span("shadows", Some(0.5)),
            span("untimed", None),
            span("wrapped", Some(-3.0)),
            span("nan", Some(f64::NAN)),
            span("infinite", Some(f64::INFINITY)),
            span("main", Some(1.0)),
        ];
        assert_eq!(frame_gpu_ms(&spans), Some(1.75));
        // Nothing measured: no time, not 0.
        assert_eq!(frame_gpu_ms(&spans[3..7]), None);
        assert_eq!(frame_gpu_ms(&[]), None);
        // A zero duration is one.
        assert_eq!(frame_gpu_ms(&[span("empty", Some(0.0))]), Some(0.0));
        // Finite durations whose sum is not.
        let huge = [span("a", Some(f64::MAX)), span("b", Some(f64::MAX))];
        assert_eq!(frame_gpu_ms(&huge), None);
    }
}
