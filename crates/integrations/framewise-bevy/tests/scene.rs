//! The census and the bisection on a scene with planted costs, built with Bevy's asset,
//! mesh, camera and visibility plugins and no renderer (no GPU): a flock sharing one mesh and
//! material, a cluster of cubes each with its own copy of one material, one heavy mesh, a
//! shadow-casting point light and a directional light without shadows.

use bevy::app::ScheduleRunnerPlugin;
use bevy::asset::{AssetPlugin, RenderAssetUsages};
use bevy::camera::CameraPlugin;
use bevy::image::ImagePlugin;
use bevy::mesh::MeshPlugin;
use bevy::prelude::*;
use bevy::render::batching::NoAutomaticBatching;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};
use framewise_bevy::{
    BevyBisect, FramewiseAppExt, FramewiseBisectReport, FramewiseBisectRequest,
    FramewiseCensusRequest, FramewisePlugin, OTHER_MATERIAL,
};
use framewise_census::{hints, BisectOptions, BisectReport, HintKind};

/// Flock members (one mesh, one material handle).
const FLOCK: usize = 24;
/// Cubes with a material copy each.
const DUPLICATES: usize = 6;

/// The triangles of each of the scene's meshes, as Bevy built them.
struct Planted {
    heavy: Entity,
    heavy_triangles: u64,
    bird_triangles: u64,
    cube_triangles: u64,
}

fn triangles(mesh: &Mesh) -> u64 {
    mesh.indices().map_or(0, |i| i.len() as u64 / 3)
}

/// The scene's offscreen image, kept loaded.
#[derive(Resource)]
struct RenderTarget(#[allow(dead_code, reason = "held for its handle")] Handle<Image>);

fn app() -> (App, Planted) {
    app_with(FramewisePlugin::default())
}

fn app_with(plugin: FramewisePlugin) -> (App, Planted) {
    let mut app = App::new();
    app.add_plugins(plugin)
        .add_plugins((
            MinimalPlugins.build().disable::<ScheduleRunnerPlugin>(),
            TransformPlugin,
            AssetPlugin::default(),
            ImagePlugin::default(),
            MeshPlugin,
            CameraPlugin,
        ))
        .init_asset::<StandardMaterial>();
    let world = app.world_mut();
    let bird = Sphere::new(0.2).mesh().uv(8, 6);
    let cube = Mesh::from(Cuboid::new(0.5, 0.5, 0.5));
    let heavy = Sphere::new(1.5).mesh().uv(256, 128);
    let (bird_triangles, cube_triangles, heavy_triangles) =
        (triangles(&bird), triangles(&cube), triangles(&heavy));
    let mut meshes = world.resource_mut::<Assets<Mesh>>();
    let (bird, cube, heavy) = (meshes.add(bird), meshes.add(cube), meshes.add(heavy));
    let mut materials = world.resource_mut::<Assets<StandardMaterial>>();
    let feathers = materials.add(StandardMaterial::from(Color::srgb(0.9, 0.9, 0.2)));
    let copies: Vec<_> = (0..DUPLICATES)
        .map(|_| materials.add(StandardMaterial::from(Color::srgb(0.8, 0.1, 0.1))))
        .collect();
    let mut images = world.resource_mut::<Assets<Image>>();
    let size = Extent3d {
        width: 64,
        height: 32,
        depth_or_array_layers: 1,
    };
    let (dimension, usage) = (TextureDimension::D2, RenderAssetUsages::default());
    // Texels the main world holds (exact bytes), and a render target it does not (estimated).
    let marble = images.add(Image::new_fill(
        size,
        dimension,
        &[200, 200, 200, 255],
        TextureFormat::Rgba8UnormSrgb,
        usage,
    ));
    let target = images.add(Image::new_uninit(
        size,
        dimension,
        TextureFormat::Rgba16Float,
        usage,
    ));
    let mut materials = world.resource_mut::<Assets<StandardMaterial>>();
    let stone = materials.add(StandardMaterial {
        base_color_texture: Some(marble),
        ..StandardMaterial::from(Color::srgb(0.5, 0.5, 0.5))
    });
    for i in 0..FLOCK {
        world.spawn((
            Name::new(format!("bird {i}")),
            Mesh3d(bird.clone()),
            MeshMaterial3d(feathers.clone()),
            Transform::from_xyz(i as f32 * 0.5 - 6.0, 3.0, 0.0),
        ));
    }
    for (i, copy) in copies.into_iter().enumerate() {
        world.spawn((
            Name::new(format!("crate {i}")),
            Mesh3d(cube.clone()),
            MeshMaterial3d(copy),
            Transform::from_xyz(i as f32 - 3.0, -2.0, 0.0),
        ));
    }
    let heavy = world
        .spawn((
            Name::new("statue"),
            Mesh3d(heavy),
            MeshMaterial3d(stone),
            Transform::from_xyz(0.0, 0.0, 0.0),
        ))
        .id();
    world.spawn((
        Name::new("lamp"),
        PointLight {
            shadow_maps_enabled: true,
            range: 20.0,
            ..default()
        },
        Transform::from_xyz(0.0, 6.0, 4.0),
    ));
    world.spawn((
        Name::new("sun"),
        DirectionalLight::default(),
        Transform::default().looking_at(Vec3::new(-1.0, -1.0, -1.0), Vec3::Y),
    ));
    // A handle keeps its asset loaded.
    world.insert_resource(RenderTarget(target));
    world.spawn((
        Name::new("eye"),
        Camera3d::default(),
        Transform::from_xyz(0.0, 0.0, 20.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    app.update();
    app.update();
    (
        app,
        Planted {
            heavy,
            heavy_triangles,
            bird_triangles,
            cube_triangles,
        },
    )
}

#[test]
fn the_census_counts_the_scene_and_finds_the_planted_costs() {
    let (mut app, planted) = app();
    let census = app.framewise_census();
    assert_eq!(census.engine, "bevy 0.19.1");
    let t = &census.totals;
    assert_eq!(t.entities as usize, FLOCK + DUPLICATES + 1, "mesh entities");
    assert_eq!(t.mesh_instances as usize, FLOCK + DUPLICATES + 1);
    assert_eq!(
        t.triangles,
        FLOCK as u64 * planted.bird_triangles
            + DUPLICATES as u64 * planted.cube_triangles
            + planted.heavy_triangles
    );
    assert_eq!(t.unique_meshes, 3);
    assert_eq!(t.unique_materials as usize, 1 + DUPLICATES + 1);
    assert_eq!(t.lights, 2);
    assert_eq!(t.shadow_casting_lights, 1);
    assert_eq!(t.draw_calls, None, "a walk never counts draw calls");
    // Everything stands in front of the camera: Bevy's visibility pass saw every mesh.
    assert_eq!(t.visible_entities, Some(t.entities));
    assert!(census.materials.iter().all(|m| m.id != OTHER_MATERIAL));
    // 64 × 32 RGBA8 texels held (exact), beside ImagePlugin's two 1 × 1 RGBA8 defaults;
    // 64 × 32 RGBA16F, one mip, not held (estimated).
    assert_eq!(t.texture_bytes, 64 * 32 * 4 + 2 * 4);
    assert_eq!(t.texture_bytes_estimate, 64 * 32 * 8);
    let textured: Vec<_> = census
        .materials
        .iter()
        .filter(|m| !m.textures.is_empty())
        .collect();
    assert_eq!(textured.len(), 1, "the stone samples the marble");
    let marble = census
        .textures
        .iter()
        .find(|x| x.id == textured[0].textures[0])
        .unwrap();
    assert_eq!((marble.width_px, marble.height_px), (64, 32));
    assert_eq!(
        (marble.bytes, marble.bytes_estimate),
        (Some(64 * 32 * 4), None)
    );
    assert_eq!(marble.format.as_deref(), Some("rgba8unormsrgb"));

    let heavy = &census.entries_by_triangles()[0];
    assert_eq!(heavy.name, "statue");
    assert_eq!(heavy.id, planted.heavy.to_string());
    assert_eq!(heavy.triangles, planted.heavy_triangles);
    let flock = &census.shared_groups[0];
    assert_eq!(flock.instances as usize, FLOCK);
    assert_eq!(
        flock.batched,
        Some(true),
        "Bevy batches one mesh + material"
    );

    let found = crate::common::planted_hints(&census, DUPLICATES, "lamp");
    // Sites come from Bevy's track_location (the `spawn-sites` feature): all or none.
    let known = found.iter().filter(|h| h.site != "unknown").count();
    let expected = if cfg!(feature = "spawn-sites") {
        found.len()
    } else {
        0
    };
    assert_eq!(known, expected, "{found:#?}");
}

/// With the `spawn-sites` feature (Bevy's `track_location`) the census knows where each entry,
/// light and view was spawned, and every hint names its site.
#[cfg(feature = "spawn-sites")]
#[test]
fn with_spawn_sites_the_census_and_its_hints_name_where_things_were_spawned() {
    let (mut app, planted) = app();
    let world = app.world_mut();
    let mesh = world.get::<Mesh3d>(planted.heavy).unwrap().0.clone();
    let line = line!() + 1;
    let lone = world.spawn((Name::new("lone"), Mesh3d(mesh))).id();
    app.update();
    let census = app.framewise_census();
    let site = census.entry(&lone.to_string()).unwrap().site.clone();
    assert_eq!(site, Some(format!("{}:{line}", file!())));
    assert!(census.entries.iter().all(|e| e.site.is_some()));
    assert!(census.lights.iter().all(|l| l.site.is_some()));
    let found = hints(&[census]);
    assert!(!found.is_empty());
    assert!(found.iter().all(|h| h.site != "unknown"), "{found:#?}");
}

#[test]
fn an_unbatched_flock_is_an_instancing_candidate() {
    let (mut app, _) = app();
    let world = app.world_mut();
    let birds: Vec<Entity> = world
        .query_filtered::<(Entity, &Name), With<Mesh3d>>()
        .iter(world)
        .filter(|(_, n)| n.as_str().starts_with("bird"))
        .map(|(e, _)| e)
        .collect();
    for bird in birds {
        world.entity_mut(bird).insert(NoAutomaticBatching);
    }
    let census = app.framewise_census();
    let found = hints(&[census]);
    let instancing: Vec<_> = found
        .iter()
        .filter(|h| h.kind == HintKind::InstancingCandidate)
        .collect();
    assert_eq!(instancing.len(), 1, "{found:#?}");
}

#[test]
fn a_hierarchy_is_one_entry_and_hiding_it_restores_each_visibility() {
    let (mut app, planted) = app();
    let world = app.world_mut();
    // The statue gets two children: one inherits, one is explicitly visible.
    let mesh = world.get::<Mesh3d>(planted.heavy).unwrap().0.clone();
    let material = world
        .get::<MeshMaterial3d<StandardMaterial>>(planted.heavy)
        .unwrap()
        .0
        .clone();
    let inherits = world
        .spawn((Mesh3d(mesh.clone()), MeshMaterial3d(material.clone())))
        .id();
    let visible = world
        .spawn((Mesh3d(mesh), MeshMaterial3d(material), Visibility::Visible))
        .id();
    world
        .entity_mut(planted.heavy)
        .add_children(&[inherits, visible]);
    app.update();
    let census = app.framewise_census();
    let statue = census.entry(&planted.heavy.to_string()).unwrap();
    assert_eq!(statue.entities, 3);
    assert_eq!(statue.triangles, 3 * planted.heavy_triangles);

    let report = BevyBisect::new(&mut app)
        .run(&BisectOptions {
            frames: 2,
            warmup_frames: 1,
            top: 1,
        })
        .unwrap();
    let first = &report.results[0];
    assert_eq!(first.id, planted.heavy.to_string());
    let saved = first.delta_triangles.unwrap();
    assert_eq!(saved.delta, -3.0 * planted.heavy_triangles as f64);
    assert!(report.restored, "{:?}", first.restore_differences);
    let world = app.world();
    assert_eq!(world.get::<Visibility>(visible), Some(&Visibility::Visible));
    assert_eq!(
        world.get::<Visibility>(inherits),
        Some(&Visibility::Inherited)
    );
}

#[test]
fn bisection_ranks_the_heavy_mesh_first_and_restores_the_world() {
    let (mut app, planted) = app();
    let before = crate::common::visibilities(&mut app);
    let report = BevyBisect::new(&mut app)
        .run(&BisectOptions {
            frames: 3,
            warmup_frames: 1,
            top: 8,
        })
        .unwrap();
    assert_eq!(report.engine, "bevy 0.19.1");
    assert!(!report.sums_to_baseline);
    assert_eq!(report.results.len(), 8);
    let base = report.baseline.triangles.unwrap();
    let census_total = FLOCK as u64 * planted.bird_triangles
        + DUPLICATES as u64 * planted.cube_triangles
        + planted.heavy_triangles;
    assert_eq!(base.median, census_total as f64, "every mesh seen");
    assert_eq!(
        report.spread.triangles,
        Some(0.0),
        "a paused scene holds still"
    );
    assert_eq!(
        report.baseline.draw_calls, None,
        "not measured: absent, not 0"
    );
    assert_eq!(report.baseline.render_ms, None);

    let first = &report.results[0];
    assert_eq!(first.rank, 1);
    assert_eq!(first.name, "statue");
    let delta = first.delta_triangles.unwrap();
    assert_eq!(delta.delta, -(planted.heavy_triangles as f64));
    assert!(!delta.noisy);
    assert_eq!(first.delta_render_ms, None);
    for r in &report.results[1..] {
        let d = r.delta_triangles.unwrap();
        assert!(
            d.delta > delta.delta,
            "{} saves less than the statue",
            r.name
        );
        assert!(r.restored, "{}: {:?}", r.name, r.restore_differences);
    }
    assert!(report.restored);
    assert_eq!(report.baseline_after, report.baseline);

    assert_eq!(
        crate::common::visibilities(&mut app),
        before,
        "every Visibility as it was"
    );
    assert!(
        !app.world().resource::<Time<Virtual>>().is_paused(),
        "the game runs again"
    );
}

/// Updates until the running game has a bisection report (at most `limit` updates).
fn run_until_report(app: &mut App, limit: u32) -> (u32, BisectReport) {
    for n in 1..=limit {
        app.update();
        if let Some(done) = app.world_mut().remove_resource::<FramewiseBisectReport>() {
            return (n, done.0.unwrap());
        }
    }
    panic!("no bisection report after {limit} updates");
}

#[test]
fn a_running_game_bisects_when_asked_and_resumes() {
    let options = BisectOptions {
        frames: 2,
        warmup_frames: 1,
        top: 4,
    };
    // The plugin's setting: at the end of the 5th update (the scene's setup ran 2).
    let (mut app, planted) = app_with(FramewisePlugin::default().bisect_at_update(5, options));
    let before = crate::common::visibilities(&mut app);
    let (updates, report) = run_until_report(&mut app, 100);
    // 3 updates to reach the 5th; then warm-up 1, baseline 2, 4 candidates × 2, closing 2.
    assert_eq!(updates, 3 + 1 + 2 + 4 * 2 + 2);
    assert_eq!(report.results.len(), 4);
    assert_eq!(report.results[0].id, planted.heavy.to_string());
    assert_eq!(
        report.results[0].delta_triangles.unwrap().delta,
        -(planted.heavy_triangles as f64)
    );
    assert!(report.restored);
    assert_eq!(crate::common::visibilities(&mut app), before);
    assert!(!app.world().resource::<Time<Virtual>>().is_paused());

    // A message asks again, from a system's point of view.
    app.world_mut()
        .write_message(FramewiseBisectRequest(BisectOptions { top: 1, ..options }));
    let (updates, again) = run_until_report(&mut app, 100);
    assert_eq!(updates, 1 + 1 + 2 + 2 + 2);
    assert_eq!(again.results.len(), 1);
    assert_eq!(again.results[0].name, "statue");
}

#[test]
fn a_recording_game_records_the_census_it_is_asked_for_into_its_capture() {
    let _serial = crate::common::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.sgpt");
    let (mut app, planted) = app_with(FramewisePlugin::default().capture(&path));
    // A system's request, answered at the end of the update.
    app.world_mut().write_message(FramewiseCensusRequest);
    app.update();
    app.update();
    drop(app); // the recorder closes the capture as the app drops

    let read = framewise_analysis::census::read_censuses(&path).unwrap();
    assert!(read.defects.is_empty(), "{:?}", read.defects);
    assert_eq!(read.censuses.len(), 1, "one request, one census");
    let census = &read.censuses[0];
    assert_eq!(census.frame, Some(2), "taken in the third update (frame 2)");
    assert_eq!(
        census.entries_by_triangles()[0].triangles,
        planted.heavy_triangles
    );
    let kinds: Vec<HintKind> = read.hints.iter().map(|h| h.kind).collect();
    assert_eq!(
        kinds,
        [
            HintKind::MaterialDedupCandidate,
            HintKind::ShadowCasterLight
        ],
        "{:#?}",
        read.hints
    );
}
