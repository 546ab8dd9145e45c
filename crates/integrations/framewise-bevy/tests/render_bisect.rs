//! The example scene rendered headless on a real adapter (Mesa's lavapipe in CI) while it
//! records, censused and bisected through the real renderer: the census finds the planted
//! costs, the bisection ranks the heavy mesh first with render time measured on every frame
//! and restores the world, and the capture (its census, its paused bisection frames) reads
//! back as `summarize`, `hitches` and `view` read it.

use bevy::app::AppExit;
use bevy::time::{Time, Virtual};
use framewise_analysis::census::read_censuses;
use framewise_analysis::{find_hitches, summarize, HitchOptions, LoadOptions};
use framewise_bevy::example::{self, SceneLayout, SceneSettings};
use framewise_bevy::{
    BevyBisect, FramewiseAppExt, FramewiseBisectReport, FramewisePlugin, FramewiseReport,
};
use framewise_census::{BisectOptions, BisectReport, CandidateResult, HintKind, Measure};

use crate::common;

/// Updates before the census: the renderer has drawn the scene and read back its first
/// diagnostics.
const SETTLE_UPDATES: u32 = 6;

/// Render ms was measured on every frame of the measurement, as a duration.
fn render_ms_measured(measure: &Measure, what: &str) {
    let ms = measure
        .render_ms
        .unwrap_or_else(|| panic!("{what}: render ms not measured on every frame"));
    assert!(
        ms.min.is_finite() && ms.min >= 0.0 && ms.max >= ms.min,
        "{what}: {ms:?}"
    );
}

/// Ranked by render time where a saving stands out of the noise, then by triangles saved:
/// the heavy mesh saves the most triangles, so it is first unless a lighter candidate's time
/// stood out of the noise with a larger saving (lavapipe shares the machine's CPUs: what
/// stands out there is not always what costs).
fn heavy_leads(report: &BisectReport, layout: &SceneLayout) {
    let heavy = report
        .results
        .iter()
        .position(|r| r.id == layout.heavy.to_string())
        .unwrap();
    let saved_ms = |r: &CandidateResult| {
        r.delta_render_ms
            .filter(|d| !d.noisy && d.delta < 0.0)
            .map(|d| -d.delta)
    };
    for r in &report.results[..heavy] {
        let ahead = saved_ms(r);
        assert!(
            ahead.is_some() && saved_ms(&report.results[heavy]).is_none_or(|h| ahead >= Some(h)),
            "{report:#?}"
        );
    }
    let saved = report.results[heavy].delta_triangles.unwrap();
    assert_eq!(saved.delta, -(layout.heavy_triangles as f64));
    assert!(!saved.noisy);
    for r in &report.results {
        assert!(
            r.delta_triangles.unwrap().delta >= saved.delta,
            "{}",
            r.name
        );
    }
}

#[test]
fn the_rendered_scene_is_censused_and_bisected_through_the_renderer() {
    let _serial = common::serial();
    if !crate::render::adapter_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bisected.sgpt");
    let mut app = example::headless_app(
        FramewisePlugin::default().capture(&path),
        SceneSettings::default(),
    );
    example::finish(&mut app);
    assert_eq!(example::update(&mut app, SETTLE_UPDATES), SETTLE_UPDATES);
    let layout = app.world().resource::<SceneLayout>().clone();

    // The census: every mesh of the scene, counted from the meshes Bevy built.
    let census = app.framewise_census();
    let t = &census.totals;
    let meshes = layout.flock.len() + layout.duplicates.len() + 2;
    assert_eq!(t.entities as usize, meshes);
    assert_eq!(
        t.triangles,
        layout.flock.len() as u64 * layout.flock_mesh_triangles
            + layout.duplicates.len() as u64 * layout.duplicate_mesh_triangles
            + layout.heavy_triangles
            + layout.ground_triangles
    );
    assert_eq!(t.visible_entities, Some(t.entities), "all in view");
    assert_eq!((t.lights, t.shadow_casting_lights), (3, 1));
    assert_eq!(t.draw_calls, None, "a walk never counts draw calls");
    let heaviest = &census.entries_by_triangles()[0];
    assert_eq!(heaviest.id, layout.heavy.to_string());
    assert_eq!(heaviest.name, "heavy sphere");
    // The planted costs, as hints.
    common::planted_hints(&census, layout.duplicates.len(), "shadow point light");

    // The bisection, each frame one update through the renderer.
    let before = common::visibilities(&mut app);
    let options = BisectOptions {
        frames: 5,
        warmup_frames: 4,
        top: 4,
    };
    let report = BevyBisect::new(&mut app).run(&options).unwrap();
    assert!(report.restored, "{report:#?}");
    assert_eq!(
        common::visibilities(&mut app),
        before,
        "every Visibility as it was"
    );
    assert!(!app.world().resource::<Time<Virtual>>().is_paused());
    assert_eq!(report.results.len(), 4);
    heavy_leads(&report, &layout);
    assert_eq!(
        report.baseline.triangles.map(|s| s.median),
        Some(t.triangles as f64),
        "the baseline frames saw every mesh"
    );
    // Render time: measured on every frame (the GPU's, the session runs Bevy's render
    // diagnostics, where the device has timestamps); draw calls are not counted (absent).
    let source = report.render_ms_source.as_deref().unwrap();
    let timestamps = app
        .world()
        .resource::<bevy::render::renderer::RenderDevice>()
        .features()
        .contains(
            bevy::render::settings::WgpuFeatures::TIMESTAMP_QUERY
                | bevy::render::settings::WgpuFeatures::TIMESTAMP_QUERY_INSIDE_ENCODERS
                | bevy::render::settings::WgpuFeatures::TIMESTAMP_QUERY_INSIDE_PASSES,
        );
    assert_eq!(source.starts_with("GPU time"), timestamps, "{source}");
    render_ms_measured(&report.baseline, "baseline");
    render_ms_measured(&report.baseline_after, "closing baseline");
    assert!(report.spread.render_ms.is_some());
    for r in &report.results {
        render_ms_measured(&r.hidden, &r.name);
        assert!(r.delta_render_ms.is_some(), "{}", r.name);
        assert_eq!(r.delta_draw_calls, None);
        assert!(r.restored, "{}: {:?}", r.name, r.restore_differences);
    }
    assert_eq!(report.baseline.draw_calls, None);

    app.world_mut().write_message(AppExit::Success);
    app.update();
    let recorded = match &app.world().resource::<FramewiseReport>().0 {
        Ok(report) => report.clone(),
        Err(error) => panic!("the session failed: {error}"),
    };
    assert_eq!(recorded.frames_dropped + recorded.spans_dropped, 0);

    // The capture: its census with the hints, and the bisection's frames marked paused.
    let read = read_censuses(&path).unwrap();
    assert!(read.defects.is_empty(), "{:?}", read.defects);
    assert_eq!(read.censuses.len(), 1);
    assert_eq!(read.censuses[0].totals, census.totals);
    for kind in [
        HintKind::MaterialDedupCandidate,
        HintKind::ShadowCasterLight,
    ] {
        assert!(
            read.hints.iter().any(|h| h.kind == kind),
            "{:#?}",
            read.hints
        );
    }
    let frames = common::frames(&common::open(&path));
    assert_eq!(frames.len() as u64, recorded.frames_written);
    let paused = frames.iter().filter(|f| f.paused).count() as u64;
    // warm-up, both baselines and each candidate's frames, and the updates waited for
    // their measurements.
    let measured = u64::from(options.warmup_frames + options.frames * (2 + 4));
    assert!(paused >= measured, "{paused} paused frames");
    // The frames before it (the last settling update's frame was still open when the
    // bisection paused the game).
    assert!(frames[..SETTLE_UPDATES as usize - 1]
        .iter()
        .all(|f| !f.paused));

    // What `summarize`, `hitches` and `view` read of it.
    let loaded = framewise_analysis::open(&path, &LoadOptions::default()).unwrap();
    let summary = summarize(&loaded);
    assert_eq!(summary.capture.frames, frames.len() as u64);
    assert_eq!(summary.capture.frames_paused, paused);
    let hitches = find_hitches(&loaded, &HitchOptions::default());
    assert_eq!(
        hitches.frames_judged + paused + summary.capture.frames_without_period,
        frames.len() as u64,
        "paused frames are never judged"
    );
    let (viewed, _spans) =
        framewise_analysis::load::open_with_frame_source(&path, &LoadOptions::default(), |_| {})
            .unwrap();
    assert_eq!(viewed.frame_count(), frames.len());
    if let Some(directory) = framewise_analysis::load::frame_directory(&path).unwrap() {
        assert_eq!(directory.index.len(), frames.len());
        assert_eq!(
            directory.paused.iter().filter(|p| **p).count() as u64,
            paused
        );
    }
}

/// A running game (not recording) bisects at the end of update N, each measured frame one
/// update of its own loop through the renderer, with the render world's CPU time as render
/// ms (no session runs Bevy's render diagnostics), and resumes with its world as it was.
#[test]
fn a_running_rendered_game_bisects_at_update_n_and_times_its_render_world() {
    let _serial = common::serial();
    if !crate::render::adapter_present() {
        return;
    }
    let options = BisectOptions {
        frames: 3,
        warmup_frames: 2,
        top: 3,
    };
    let mut app = example::headless_app(
        FramewisePlugin::default().bisect_at_update(u64::from(SETTLE_UPDATES), options),
        SceneSettings::default(),
    );
    example::finish(&mut app);
    app.update(); // the scene spawns
    let layout = app.world().resource::<SceneLayout>().clone();
    let before = common::visibilities(&mut app);
    let mut report = None;
    for _ in 0..2_000 {
        app.update();
        if let Some(done) = app.world_mut().remove_resource::<FramewiseBisectReport>() {
            report = Some(done.0.unwrap());
            break;
        }
    }
    let report = report.expect("the game bisected");
    assert!(report.restored, "{report:#?}");
    assert_eq!(common::visibilities(&mut app), before);
    assert!(!app.world().resource::<Time<Virtual>>().is_paused());
    assert_eq!(report.results.len(), 3);
    heavy_leads(&report, &layout);
    let source = report.render_ms_source.as_deref().unwrap();
    assert!(
        source.starts_with("CPU time of the render world"),
        "{source}"
    );
    render_ms_measured(&report.baseline, "baseline");
    for r in &report.results {
        render_ms_measured(&r.hidden, &r.name);
        assert!(r.delta_render_ms.is_some(), "{}", r.name);
    }
}
