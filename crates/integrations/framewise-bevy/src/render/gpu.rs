//! GPU passes from Bevy's render diagnostics.
//!
//! The plugin runs Bevy's diagnostics recorder (`DiagnosticsRecorder`, what Bevy's
//! `RenderDiagnosticsPlugin` runs) in the render graph with its own finishing step: after the
//! graph submits, the frame's submission becomes a GPU ticket, and the recorder's callback —
//! run when that frame's timestamps are read back, frames later — delivers the ticket with
//! the frame's passes. So each frame's passes land in the frame that submitted them, exactly.
//! While a bisection measures, the frame's GPU time also goes to it, under the frame's tag.

use bevy::app::SubApp;
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::ecs::system::{Res, ResMut};
use bevy::render::diagnostic::{begin_diagnostics_frame, resolve_encoder, DiagnosticsRecorder};
use bevy::render::renderer::{RenderDevice, RenderGraph, RenderGraphSystems, RenderQueue};
use bevy::render::settings::WgpuFeatures;
use bevy::render::GpuResourceAppExt;
use framewise::{GpuPassTiming, Session};

use super::diagnostics::{parse_render_diagnostics, DiagnosticSpan};
use super::SessionLink;
use crate::timing::{frame_gpu_ms, RenderTag, Samples};

/// The queue the capture names for Bevy's renderer.
pub const QUEUE_NAME: &str = "bevy render";

/// Adds the diagnostics recorder and its per-frame steps to the render app.
pub(super) fn install(render_app: &mut SubApp) {
    render_app.init_gpu_resource::<DiagnosticsRecorder>();
    render_app.add_systems(
        RenderGraph,
        (
            begin_diagnostics_frame.in_set(RenderGraphSystems::Begin),
            resolve_encoder
                .after(RenderGraphSystems::Render)
                .before(RenderGraphSystems::Submit),
            finish_frame.in_set(RenderGraphSystems::Finish),
        ),
    );
}

/// What Bevy's recorder can time on this device, as META says it: its spans write timestamps
/// inside command encoders, and pass spans inside passes too.
pub(super) fn timestamp_support(features: WgpuFeatures) -> String {
    let needed = [
        (WgpuFeatures::TIMESTAMP_QUERY, "TIMESTAMP_QUERY"),
        (
            WgpuFeatures::TIMESTAMP_QUERY_INSIDE_ENCODERS,
            "TIMESTAMP_QUERY_INSIDE_ENCODERS",
        ),
    ];
    let missing: Vec<&str> = needed
        .iter()
        .filter(|(feature, _)| !features.contains(*feature))
        .map(|(_, name)| *name)
        .collect();
    if !missing.is_empty() {
        return format!("absent: the device lacks {}", missing.join(" and "));
    }
    if features.contains(WgpuFeatures::TIMESTAMP_QUERY_INSIDE_PASSES) {
        "enabled".to_owned()
    } else {
        "enabled for time spans; absent inside passes (no TIMESTAMP_QUERY_INSIDE_PASSES)".to_owned()
    }
}

/// Closes the frame's diagnostics after the graph submitted: the submission becomes a
/// ticket, delivered with the passes when the recorder reads the timestamps back.
/// A bisection measuring the frame (its tag) gets the frame's GPU time too.
fn finish_frame(
    mut recorder: ResMut<DiagnosticsRecorder>,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    link: Res<SessionLink>,
    tag: Option<Res<RenderTag>>,
    samples: Option<Res<Samples>>,
) {
    let period_ns = f64::from(queue.get_timestamp_period());
    let ticket = link
        .with(|session| {
            let queue = session.gpu_queue(QUEUE_NAME)?;
            Some(session.gpu_submit(queue))
        })
        .flatten();
    let measured = tag.and_then(|t| t.tag).zip(samples.map(|s| s.clone()));
    let link = link.clone();
    recorder.finish_frame(&device, move |diagnostics| {
        if ticket.is_none() && measured.is_none() {
            return;
        }
        let spans = parse_render_diagnostics(&format!("{diagnostics:?}"));
        if let Some((tag, samples)) = measured {
            samples.gpu_time(tag, frame_gpu_ms(&spans));
        }
        if let Some(ticket) = ticket {
            link.with(|session| deliver(session, ticket, &spans, period_ns));
        }
    });
}

fn deliver(
    session: &Session,
    ticket: framewise::GpuTicket,
    spans: &[DiagnosticSpan],
    period_ns: f64,
) {
    let timings: Vec<GpuPassTiming> = lay_out(spans, Some(period_ns))
        .into_iter()
        .map(|pass| GpuPassTiming {
            pass: session.pass_label(&pass.label),
            depth: pass.depth,
            begin_ticks: pass.ticks.map(|(begin, _)| begin),
            end_ticks: pass.ticks.map(|(_, end)| end),
        })
        .collect();
    session.gpu_deliver(ticket, &timings);
}

/// A pass as the capture gets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaidPass {
    /// The span's path below `render/`, joined by `/`.
    pub label: String,
    /// Nesting depth, 0 outermost.
    pub depth: u32,
    /// Begin and end, in ticks of the queue's clock, when timed.
    pub ticks: Option<(u64, u64)>,
}

/// Places a frame's spans (in Bevy's closing order) as passes in pre-order: a span's parent
/// is the next span closed whose path is its own minus the last name. Bevy gives durations,
/// not timestamps, so the outermost passes are laid end to end from tick 0 in the order they
/// ran and children end to end from their parent's begin; a duration in ticks is the elapsed
/// GPU ms over the queue's period (`period_ns`, 1 ns when unknown, zero or not finite).
///
/// A span without a GPU time, or whose time is no duration (negative — a wrapped timestamp,
/// a driver's garbage — or not a number), is an untimed pass, never a pass of 0 ticks; the
/// passes after it start where its timed children, if any, ended. A pass that would end past
/// the last tick is untimed too.
pub fn lay_out(spans: &[DiagnosticSpan], period_ns: Option<f64>) -> Vec<LaidPass> {
    let period_ns = period_ns
        .filter(|p| p.is_finite() && *p > 0.0)
        .unwrap_or(1.0);
    let parent: Vec<Option<usize>> = spans
        .iter()
        .enumerate()
        .map(|(i, span)| {
            let (_, prefix) = span.path.split_last()?;
            if prefix.is_empty() {
                return None;
            }
            (i + 1..spans.len()).find(|&j| spans[j].path == prefix)
        })
        .collect();
    let mut out = Vec::with_capacity(spans.len());
    let mut cursor = 0_u64;
    for root in (0..spans.len()).filter(|&i| parent[i].is_none()) {
        place(spans, &parent, root, 0, &mut cursor, period_ns, &mut out);
    }
    out
}

fn place(
    spans: &[DiagnosticSpan],
    parent: &[Option<usize>],
    index: usize,
    depth: u32,
    cursor: &mut u64,
    period_ns: f64,
    out: &mut Vec<LaidPass>,
) {
    let span = &spans[index];
    let ticks = span
        .elapsed_gpu_ms
        .and_then(|ms| duration_ticks(ms, period_ns))
        .and_then(|duration| Some((*cursor, cursor.checked_add(duration)?)));
    out.push(LaidPass {
        label: span.path.join("/"),
        depth,
        ticks,
    });
    let mut child_cursor = ticks.map_or(*cursor, |(begin, _)| begin);
    for child in (0..index).filter(|&j| parent[j] == Some(index)) {
        place(
            spans,
            parent,
            child,
            depth + 1,
            &mut child_cursor,
            period_ns,
            out,
        );
    }
    // The next pass starts after this one, or after the timed children of an untimed one.
    *cursor = ticks.map_or(child_cursor, |(_, end)| end);
}

/// A span's elapsed GPU ms as ticks of `period_ns`: `None` when it is no duration (negative
/// or not finite) or more ticks than a `u64` holds.
fn duration_ticks(ms: f64, period_ns: f64) -> Option<u64> {
    if !(ms.is_finite() && ms >= 0.0) {
        return None;
    }
    let ticks = (ms * 1e6 / period_ns).round();
    // 2⁶⁴ is exact in an f64; `as` would saturate there, or at infinity.
    (ticks < 18_446_744_073_709_551_616.0).then_some(ticks as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(path: &str, gpu_ms: Option<f64>) -> DiagnosticSpan {
        let mut span = DiagnosticSpan {
            path: path.split('/').map(str::to_owned).collect(),
            elapsed_cpu_ms: Some(0.01),
            elapsed_gpu_ms: None,
            clipper_invocations: None,
            vertex_shader_invocations: None,
        };
        span.elapsed_gpu_ms = gpu_ms;
        span
    }

    #[test]
    fn passes_are_laid_end_to_end_with_children_inside_their_parent() {
        // Closing order: children before their parent.
        let spans = [
            span("prepass", Some(0.001)),
            span("shadows/face 0", Some(0.002)),
            span("shadows/face 1", Some(0.003)),
            span("shadows", Some(0.006)),
            span("untimed", None),
            span("main", Some(0.004)),
        ];
        let laid = lay_out(&spans, Some(1.0));
        type Row<'a> = (&'a str, u32, Option<(u64, u64)>);
        let got: Vec<Row> = laid
            .iter()
            .map(|p| (p.label.as_str(), p.depth, p.ticks))
            .collect();
        assert_eq!(
            got,
            [
                ("prepass", 0, Some((0, 1_000))),
                ("shadows", 0, Some((1_000, 7_000))),
                ("shadows/face 0", 1, Some((1_000, 3_000))),
                ("shadows/face 1", 1, Some((3_000, 6_000))),
                ("untimed", 0, None),
                ("main", 0, Some((7_000, 11_000))),
            ]
        );
        // Another period: ms × 10⁶ ÷ period ticks.
        assert_eq!(lay_out(&spans[..1], Some(40.0))[0].ticks, Some((0, 25)));
        // A period that is none: 1 ns.
        for period in [
            None,
            Some(0.0),
            Some(-1.0),
            Some(f64::NAN),
            Some(f64::INFINITY),
        ] {
            assert_eq!(
                lay_out(&spans[..1], period)[0].ticks,
                Some((0, 1_000)),
                "{period:?}"
            );
        }
    }

    #[test]
    fn a_time_that_is_no_duration_gives_an_untimed_pass_not_zero_ticks() {
        let spans = [
            span("prepass", Some(0.001)),
            span("wrapped", Some(-0.5)),
            span("barely negative", Some(-1e-12)),
            span("nan", Some(f64::NAN)),
            span("infinite", Some(f64::INFINITY)),
            span("past u64", Some(1e300)),
            span("zero", Some(0.0)),
            span("main", Some(0.002)),
        ];
        let laid = lay_out(&spans, Some(1.0));
        let ticks: Vec<_> = laid.iter().map(|p| (p.label.as_str(), p.ticks)).collect();
        assert_eq!(
            ticks,
            [
                ("prepass", Some((0, 1_000))),
                ("wrapped", None),
                ("barely negative", None),
                ("nan", None),
                ("infinite", None),
                ("past u64", None),
                ("zero", Some((1_000, 1_000))),
                ("main", Some((1_000, 3_000))),
            ]
        );
    }

    #[test]
    fn a_pass_ending_past_the_last_tick_is_untimed_and_nothing_overflows() {
        // 10¹³ ms at 1 ns a tick is 10¹⁹ ticks: one fits a u64, two end to end do not.
        let spans = [
            span("first", Some(1e13)),
            span("second", Some(1e13)),
            span("third", Some(0.001)),
        ];
        let laid = lay_out(&spans, Some(1.0));
        let ticks: Vec<_> = laid.iter().map(|p| p.ticks).collect();
        assert_eq!(
            ticks,
            [
                Some((0, 10_000_000_000_000_000_000)),
                None,
                Some((10_000_000_000_000_000_000, 10_000_000_000_000_001_000)),
            ]
        );
    }

    #[test]
    fn passes_after_an_untimed_parent_start_after_its_timed_children() {
        let spans = [
            span("shadows/face 0", Some(0.002)),
            span("shadows/face 1", Some(0.003)),
            span("shadows", Some(-1.0)),
            span("main", Some(0.004)),
        ];
        let laid = lay_out(&spans, Some(1.0));
        let ticks: Vec<_> = laid.iter().map(|p| (p.label.as_str(), p.ticks)).collect();
        assert_eq!(
            ticks,
            [
                ("shadows", None),
                ("shadows/face 0", Some((0, 2_000))),
                ("shadows/face 1", Some((2_000, 5_000))),
                ("main", Some((5_000, 9_000))),
            ]
        );
    }
}
