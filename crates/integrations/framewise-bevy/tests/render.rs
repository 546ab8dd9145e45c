//! The example scene rendered headless on a real adapter (Mesa's lavapipe in CI): system
//! scopes, GPU passes under the adapter's regime, the render graph's topology and exact
//! render counters, read back as `summarize` and `hitches` read them.

use std::collections::{BTreeSet, HashMap};

use bevy::app::AppExit;
use bevy::asset::Assets;
use bevy::camera::visibility::VisibleEntities;
use bevy::ecs::resource::Resource;
use bevy::ecs::world::World;
use bevy::image::Image;
use bevy::mesh::Mesh;
use bevy::pbr::StandardMaterial;
use bevy::prelude::{App, Last};
use bevy::render::renderer::RenderQueue;
use framewise::{AdapterType, CaptureLevel};
use framewise_analysis::{find_hitches, summarize, HitchOptions, LoadOptions, TimingGrade};
use framewise_bevy::example::{self, SceneLayout, SceneSettings};
use framewise_bevy::render::{visible_entities_counter, QUEUE_NAME};
use framewise_bevy::{FramewisePlugin, FramewiseReport};
use framewise_format::model::Frame;

use crate::common;

const UPDATES: u32 = 24;

/// Whether a GPU adapter is there; without one the test skips, unless `FRAMEWISE_REQUIRE_GPU`
/// or `CI` is set (scripts/check sets the former): then a missing driver fails.
pub(crate) fn adapter_present() -> bool {
    match framewise_wgpu::probe() {
        Ok(_) => true,
        Err(error) if framewise_wgpu::adapter_required() => panic!(
            "FRAMEWISE_REQUIRE_GPU or CI is set and there is no usable GPU adapter ({error}); \
             scripts/install-test-deps installs Mesa's lavapipe"
        ),
        Err(error) => {
            eprintln!("skipping: no usable GPU adapter ({error})");
            false
        }
    }
}

/// What the world holds at the end of each update's `Last`, counted by Bevy itself.
#[derive(Debug, Default, Resource)]
struct RenderTruth {
    meshes: Vec<usize>,
    materials: Vec<usize>,
    images: Vec<usize>,
    visible: Vec<usize>,
}

fn count_truth(world: &mut World) {
    let meshes = world.resource::<Assets<Mesh>>().len();
    let materials = world.resource::<Assets<StandardMaterial>>().len();
    let images = world.resource::<Assets<Image>>().len();
    let camera = world.get_resource::<SceneLayout>().map(|l| l.camera);
    let visible = camera
        .and_then(|camera| world.get::<VisibleEntities>(camera))
        .map_or(0, |v| v.entities.values().map(Vec::len).sum());
    let mut truth = world.resource_mut::<RenderTruth>();
    truth.meshes.push(meshes);
    truth.materials.push(materials);
    truth.images.push(images);
    truth.visible.push(visible);
}

/// Whether a frame's passes lie as the plugin lays them out from Bevy's durations: a
/// submission's timed outermost passes end to end from tick 0, each pass's timed children
/// end to end from its begin, and what follows an untimed pass from where its timed children
/// ended. A frame can hold two submissions (under pipelined rendering, a render that submits
/// just before the frame closes, and the next just after it opens): a timed outermost pass
/// at tick 0 that is not next in line starts the second.
fn laid_end_to_end(frame: &Frame) -> Result<(), String> {
    // Per depth: where its next timed pass begins, and whether its parent is timed.
    let mut levels: Vec<(u64, bool)> = vec![(0, true)];
    for (i, pass) in frame.gpu.passes.iter().enumerate() {
        let depth = pass.depth as usize;
        if depth >= levels.len() {
            return Err(format!("pass {i} at depth {depth} has no parent"));
        }
        while levels.len() > depth + 1 {
            let (end_of_children, parent_timed) = levels.pop().unwrap();
            if !parent_timed {
                levels.last_mut().unwrap().0 = end_of_children;
            }
        }
        let next = levels[depth].0;
        match pass.timing {
            Some(timing) => {
                let another_submission = depth == 0 && timing.begin_ticks == 0;
                if timing.begin_ticks != next && !another_submission {
                    return Err(format!(
                        "pass {i} begins at tick {} where {next} was next",
                        timing.begin_ticks
                    ));
                }
                if timing.end_ticks < timing.begin_ticks {
                    return Err(format!("pass {i} ends before it begins"));
                }
                levels[depth].0 = timing.end_ticks;
                levels.push((timing.begin_ticks, true));
            }
            None => levels.push((next, false)),
        }
    }
    Ok(())
}

#[test]
fn the_layout_check_refuses_passes_that_do_not_abut() {
    use framewise_format::model::{GpuPass, GpuTiming};
    let pass = |depth, ticks: Option<(u64, u64)>| GpuPass {
        pass: 0,
        queue_index: 0,
        depth,
        timing: ticks.map(|(begin_ticks, end_ticks)| GpuTiming {
            begin_ticks,
            end_ticks,
        }),
    };
    let frame = |passes| {
        let mut frame = Frame::default();
        frame.gpu.passes = passes;
        frame
    };
    let laid = frame(vec![
        pass(0, Some((0, 10))),
        pass(0, None),
        pass(1, Some((10, 12))),
        pass(1, Some((12, 15))),
        pass(0, Some((15, 20))),
        pass(1, Some((15, 16))),
        // The next submission.
        pass(0, Some((0, 4))),
    ]);
    assert_eq!(laid_end_to_end(&laid), Ok(()));
    let gap = frame(vec![pass(0, Some((0, 10))), pass(0, Some((11, 12)))]);
    assert!(laid_end_to_end(&gap).is_err());
    let child_late = frame(vec![pass(0, Some((0, 10))), pass(1, Some((2, 4)))]);
    assert!(laid_end_to_end(&child_late).is_err());
    let overlap_after_untimed = frame(vec![
        pass(0, None),
        pass(1, Some((0, 3))),
        pass(0, Some((2, 5))),
    ]);
    assert!(laid_end_to_end(&overlap_after_untimed).is_err());
}

fn run_scene(path: &std::path::Path) -> App {
    let mut app = example::headless_app(
        // The render graph is recorded from the structure level up.
        FramewisePlugin::default()
            .capture(path)
            .level(CaptureLevel::Structure),
        SceneSettings::default(),
    );
    app.init_resource::<RenderTruth>()
        .add_systems(Last, count_truth);
    example::finish(&mut app);
    assert_eq!(example::update(&mut app, UPDATES - 1), UPDATES - 1);
    app.world_mut().write_message(AppExit::Success);
    app.update();
    app
}

#[test]
fn the_headless_scene_records_gpu_passes_topology_and_exact_render_counters() {
    let _serial = common::serial();
    if !adapter_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.sgpt");
    let app = run_scene(&path);

    let report = match &app.world().resource::<FramewiseReport>().0 {
        Ok(report) => report.clone(),
        Err(error) => panic!("the session failed: {error}"),
    };
    assert_eq!(report.frames_written, u64::from(UPDATES));
    assert_eq!(
        report.frames_dropped + report.spans_dropped,
        0,
        "{report:?}"
    );
    assert!(report.error.is_none(), "{report:?}");
    // The frames still in flight when the app exits never get their results back (Bevy
    // renders no later frame to read them): at most the pipeline's depth.
    assert!(report.gpu_results_missing <= 3, "{report:?}");

    let capture = common::open(&path);
    assert!(capture.defects().is_empty(), "{:?}", capture.defects());
    let meta = capture.meta().unwrap();
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), UPDATES as usize);
    let missing = frames.iter().filter(|f| f.gpu.results_missing).count();
    assert_eq!(missing as u64, report.gpu_results_missing);
    assert!(
        frames
            .iter()
            .filter(|f| f.gpu.results_missing)
            .all(|f| f.index + 3 >= u64::from(UPDATES)),
        "only the last frames miss their results"
    );

    // The adapter and its queue as Bevy's renderer declares them.
    let adapter = meta.adapter.as_ref().expect("the adapter is declared");
    let software = adapter.device.to_lowercase().contains("llvmpipe");
    if software {
        assert_eq!(adapter.adapter_type, AdapterType::Software, "{adapter:?}");
    }
    let period_ns = f64::from(app.world().resource::<RenderQueue>().get_timestamp_period());
    assert_eq!(meta.gpu_clocks.len(), 1);
    assert_eq!(common::name(&capture, meta.gpu_clocks[0].queue), QUEUE_NAME);
    assert_eq!(meta.gpu_clocks[0].timestamp_period_ns, period_ns);
    let feature = |key: &str| {
        meta.features
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let timestamps = feature("gpu.timestamps").expect("gpu.timestamps declared");

    // GPU passes: Bevy's own pass names, in the frame that submitted them.
    // Every frame from the first that drew has its passes, but for the last few (the
    // pipeline's depth): those whose results never came back (above), and the exit update's,
    // never rendered. The frames before the first that drew are the renderer starting up:
    // how many depends on the machine's load.
    let gpu_frames: Vec<_> = frames.iter().filter(|f| !f.gpu.passes.is_empty()).collect();
    let passless: Vec<_> = frames
        .iter()
        .filter(|f| f.gpu.passes.is_empty())
        .map(|f| (f.index, f.gpu.expected, f.gpu.results_missing))
        .collect();
    let first_drawn = gpu_frames.first().map_or(u64::MAX, |f| f.index);
    assert!(
        passless
            .iter()
            .all(|&(index, _, _)| index < first_drawn || index + 3 >= u64::from(UPDATES)),
        "passes in {} of {} frames; without (index, expected, results missing): {passless:?}",
        gpu_frames.len(),
        UPDATES
    );
    assert!(
        gpu_frames.len() >= UPDATES as usize / 2,
        "the renderer drew in only {} of {} frames; without: {passless:?}",
        gpu_frames.len(),
        UPDATES
    );
    let mut pass_names = BTreeSet::new();
    let mut timed = 0;
    for frame in &gpu_frames {
        assert!(!frame.gpu.results_missing, "frame {}", frame.index);
        for pass in &frame.gpu.passes {
            pass_names.insert(common::name(&capture, pass.pass));
            timed += usize::from(pass.timing.is_some());
        }
        // Where each pass lies is what the plugin says of it (META's gpu.pass_times).
        if let Err(error) = laid_end_to_end(frame) {
            let passes: Vec<_> = frame
                .gpu
                .passes
                .iter()
                .map(|p| (common::name(&capture, p.pass), p.depth, p.timing))
                .collect();
            panic!("frame {}: {error}: {passes:#?}", frame.index);
        }
    }
    assert!(pass_names.contains("main_opaque_pass_3d"), "{pass_names:?}");
    if timestamps == "enabled" {
        assert!(timed > 0, "timestamps enabled, none delivered");
    }

    // The render graph: Core3d's systems and their ordering, set on the frames.
    let topologies = capture.topologies();
    assert_eq!(topologies.len(), 1, "one graph throughout");
    let topology = &topologies[0];
    let passes: Vec<String> = topology
        .passes
        .iter()
        .map(|p| common::name(&capture, p.label))
        .collect();
    for node in [
        "main_opaque_pass_3d",
        "main_transparent_pass_3d",
        "tonemapping",
    ] {
        assert!(passes.iter().any(|p| p == node), "{node} in {passes:?}");
    }
    let position = |name: &str| passes.iter().position(|p| p == name).unwrap();
    // Ordering edges: a pass writes `after <pass>`, which its successors read.
    let mut next: HashMap<u32, Vec<u32>> = HashMap::new();
    for write in topology
        .edges
        .iter()
        .filter(|e| e.access == framewise::Access::Write)
    {
        for read in topology
            .edges
            .iter()
            .filter(|e| e.access == framewise::Access::Read && e.resource == write.resource)
        {
            next.entry(write.pass).or_default().push(read.pass);
        }
    }
    let reaches = |from: u32, to: u32| {
        let mut stack = vec![from];
        let mut seen = BTreeSet::new();
        while let Some(pass) = stack.pop() {
            if pass == to {
                return true;
            }
            if seen.insert(pass) {
                stack.extend(next.get(&pass).into_iter().flatten());
            }
        }
        false
    };
    let opaque = position("main_opaque_pass_3d") as u32;
    let transparent = position("main_transparent_pass_3d") as u32;
    let upscaling = position("upscaling") as u32;
    assert!(reaches(opaque, transparent), "opaque → … → transparent");
    assert!(
        reaches(transparent, upscaling),
        "transparent → … → upscaling"
    );
    assert!(!reaches(upscaling, opaque), "no cycle");
    let unique: BTreeSet<&String> = passes.iter().collect();
    assert_eq!(
        unique.len(),
        passes.len(),
        "pass labels are unique: {passes:?}"
    );
    // Set by the render world in the frame open as it renders: every frame that submitted.
    for frame in frames.iter().filter(|f| !f.gpu.queues.is_empty()) {
        assert_eq!(frame.topology, Some(topology.id), "frame {}", frame.index);
    }

    // Counters: exactly what the world held at the end of each update.
    let truth = app.world().resource::<RenderTruth>();
    assert_eq!(truth.meshes.len(), frames.len());
    let view = visible_entities_counter(
        app.world().resource::<SceneLayout>().camera,
        Some("offscreen camera"),
    );
    let layout = app.world().resource::<SceneLayout>();
    for (i, frame) in frames.iter().enumerate() {
        let counters: HashMap<String, i64> = common::counters(&capture, frame);
        assert_eq!(counters["meshes"], truth.meshes[i] as i64, "frame {i}");
        assert_eq!(
            counters["materials"], truth.materials[i] as i64,
            "frame {i}"
        );
        assert_eq!(counters["images"], truth.images[i] as i64, "frame {i}");
        assert_eq!(counters[&view], truth.visible[i] as i64, "frame {i}");
        assert!(!counters.contains_key("draw calls") && !counters.contains_key("triangles"));
    }
    // The scene's own assets: 4 meshes, flock + duplicates + heavy + ground materials.
    let last = frames.len() - 1;
    assert!(truth.meshes[last] >= 4);
    assert!(truth.materials[last] >= layout.duplicate_materials.len() + 3);
    // Every mesh and every light is in the camera's view once visibility ran.
    let meshes_in_scene = layout.flock.len() + layout.duplicates.len() + 2;
    let lights = 1 + layout.other_lights.len();
    assert_eq!(truth.visible[last], meshes_in_scene + lights);

    // System scopes: the game's system in every frame; render work on its own lanes.
    let mut lanes_with_render = 0;
    let mut turns_per_frame = Vec::new();
    for frame in &frames {
        let names = common::scope_names(&capture, frame);
        let turns = names
            .iter()
            .filter(|n| *n == "framewise_bevy::example::turn_flock")
            .count();
        turns_per_frame.push(turns);
        if names.iter().any(|n| n.contains("main_opaque_pass_3d")) {
            lanes_with_render += 1;
        }
    }
    assert!(lanes_with_render > 0, "render systems recorded");
    // Every run of the game's system, each in the update that ran it.
    assert!(
        turns_per_frame.iter().all(|&t| t == 1),
        "{turns_per_frame:?}"
    );

    // What `framewise summarize` and `hitches` compute from it.
    let loaded = framewise_analysis::open(&path, &LoadOptions::default()).unwrap();
    let summary = summarize(&loaded);
    if software {
        assert_eq!(summary.grade.timing, TimingGrade::Software);
    }
    assert!(summary.passes.get("main_opaque_pass_3d").is_some());
    assert_eq!(
        summary.counters.get("meshes").map(|c| c.count),
        Some(u64::from(UPDATES))
    );
    assert!(summary.counters.get("draw calls").is_none());
    let hitches = find_hitches(&loaded, &HitchOptions::default());
    assert_eq!(hitches.frames_judged + 1, u64::from(UPDATES));
}

/// A camera entity with `seen` entities in its view, filled by hand: the app has no renderer
/// and no visibility systems to change them.
fn spawn_camera(world: &mut World, name: &str, seen: usize) -> bevy::ecs::entity::Entity {
    let seen: Vec<_> = (0..seen).map(|_| world.spawn_empty().id()).collect();
    let mut visible = VisibleEntities::default();
    visible
        .entities
        .insert(std::any::TypeId::of::<Mesh>(), seen);
    world
        .spawn((
            bevy::camera::Camera::default(),
            visible,
            bevy::ecs::name::Name::new(name.to_owned()),
        ))
        .id()
}

#[test]
fn an_inactive_camera_sees_nothing_and_a_despawned_one_reads_zero() {
    let _serial = common::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cameras.sgpt");
    let mut app = common::game(
        FramewisePlugin::default().capture(&path),
        common::Script::new(None),
    );
    app.finish();
    app.cleanup();
    let a = spawn_camera(app.world_mut(), "camera a", 3);
    let b = spawn_camera(app.world_mut(), "camera b", 2);
    let set_active = |app: &mut App, active: bool| {
        app.world_mut()
            .get_mut::<bevy::camera::Camera>(a)
            .unwrap()
            .is_active = active;
    };
    app.update(); // frame 0: both active
    app.update(); // frame 1
    set_active(&mut app, false);
    app.update(); // frame 2: a inactive
    app.world_mut().despawn(b);
    app.update(); // frame 3: b gone
    app.update(); // frame 4
    set_active(&mut app, true);
    app.update(); // frame 5: a active again
    app.world_mut().write_message(AppExit::Success);
    app.update(); // frame 6, and the session stops
    assert!(app.world().resource::<FramewiseReport>().0.is_ok());

    let capture = common::open(&path);
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), 7);
    let level = |frame, name| {
        let counters = common::counters(&capture, &frames[frame]);
        counters
            .get(&visible_entities_counter(a, Some(name)))
            .copied()
    };
    let got: Vec<_> = (0..7)
        .map(|f| (level(f, "camera a"), level(f, "camera b")))
        .collect();
    let want: Vec<_> = [(3, 2), (3, 2), (0, 2), (0, 0), (0, 0), (3, 0), (3, 0)]
        .into_iter()
        .map(|(a, b)| (Some(a), Some(b)))
        .collect();
    assert_eq!(got, want);
}
