//! The example scene (feature `render`): a small Bevy 3D scene rendered headless into an
//! offscreen image, with a planted cost. The example (`examples/headless_scene.rs`) and the
//! tests run it on whatever adapter wgpu finds (Mesa's lavapipe in CI).
//!
//! What it holds ([`SceneLayout`] lists the entities, [`SceneSettings`] sizes them):
//!
//! - **a flock**: `flock` cubes sharing one mesh and one material (what batching and
//!   instancing are for), turning every update;
//! - **lights**: one shadow-casting point light, one point light and one directional light
//!   without shadows;
//! - **the planted cost**: a cluster of `duplicates` spheres, each with its own material of
//!   identical parameters (distinct materials that break batching), and one heavy UV sphere
//!   of `heavy_sectors × heavy_stacks` quads (many triangles);
//! - a ground plane, and a camera rendering into a `width × height` image (no window).

use std::time::Duration;

use bevy::app::{App, PluginGroup, PluginsState, ScheduleRunnerPlugin, Startup, Update};
use bevy::asset::{Assets, Handle, RenderAssetUsages};
use bevy::camera::{Camera3d, RenderTarget};
use bevy::color::Color;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::ecs::component::Component;
use bevy::ecs::entity::Entity;
use bevy::ecs::name::Name;
use bevy::ecs::query::With;
use bevy::ecs::resource::Resource;
use bevy::ecs::system::{Commands, Query, Res, ResMut};
use bevy::image::Image;
use bevy::light::{DirectionalLight, PointLight};
use bevy::log::LogPlugin;
use bevy::math::primitives::{Cuboid, Plane3d, Sphere};
use bevy::math::{Quat, Vec3};
use bevy::mesh::{Mesh, Mesh3d, MeshBuilder, Meshable};
use bevy::pbr::{MeshMaterial3d, StandardMaterial};
use bevy::render::render_resource::TextureFormat;
use bevy::time::Time;
use bevy::transform::components::Transform;
use bevy::window::{ExitCondition, WindowPlugin};
use bevy::DefaultPlugins;

use crate::FramewisePlugin;

/// The scene's sizes.
#[derive(Clone, Debug, Resource)]
pub struct SceneSettings {
    /// The offscreen image's width, pixels.
    pub width: u32,
    /// The offscreen image's height, pixels.
    pub height: u32,
    /// Cubes sharing one mesh and one material.
    pub flock: u32,
    /// Spheres with one material each, all of identical parameters.
    pub duplicates: u32,
    /// The heavy sphere's sectors (around).
    pub heavy_sectors: u32,
    /// The heavy sphere's stacks (top to bottom).
    pub heavy_stacks: u32,
}

impl Default for SceneSettings {
    fn default() -> Self {
        Self {
            width: 320,
            height: 180,
            flock: 64,
            duplicates: 12,
            heavy_sectors: 256,
            heavy_stacks: 128,
        }
    }
}

/// A flock member: shares the flock's mesh and material.
#[derive(Component, Debug)]
pub struct FlockMember;

/// A cluster member with a material of its own, identical in parameters to the others'.
#[derive(Component, Debug)]
pub struct DuplicateMaterial;

/// The one mesh with many triangles.
#[derive(Component, Debug)]
pub struct HeavyMesh;

/// The scene as spawned: its entities by role, the assets they share and the triangle counts
/// of its meshes (from the meshes' index buffers).
#[derive(Clone, Debug, Resource)]
pub struct SceneLayout {
    /// The camera rendering into [`target`](Self::target).
    pub camera: Entity,
    /// The offscreen image.
    pub target: Handle<Image>,
    /// The flock's cubes.
    pub flock: Vec<Entity>,
    /// The mesh every flock member shares.
    pub flock_mesh: Handle<Mesh>,
    /// The material every flock member shares.
    pub flock_material: Handle<StandardMaterial>,
    /// The cluster of spheres with duplicate materials.
    pub duplicates: Vec<Entity>,
    /// Their materials, one each.
    pub duplicate_materials: Vec<Handle<StandardMaterial>>,
    /// The heavy sphere.
    pub heavy: Entity,
    /// The shadow-casting point light.
    pub shadow_light: Entity,
    /// The lights without shadows.
    pub other_lights: Vec<Entity>,
    /// The ground plane.
    pub ground: Entity,
    /// Triangles of one flock cube.
    pub flock_mesh_triangles: u64,
    /// Triangles of one cluster sphere.
    pub duplicate_mesh_triangles: u64,
    /// Triangles of the heavy sphere.
    pub heavy_triangles: u64,
    /// Triangles of the ground plane.
    pub ground_triangles: u64,
}

/// A headless app rendering the scene: `plugin` first (so every system is seen), then Bevy's
/// default plugins with no window (the app runs until it sends `AppExit`), a runner that
/// loops without waiting, and the scene. Drive it with [`App::run`] or [`update`].
///
/// The app keeps Bevy's logs and the system scopes both, as the crate documentation says
/// a game with Bevy's `LogPlugin` should: `LogPlugin` carries the recorder's layer
/// ([`tracing_layer`](crate::tracing_layer)), and `plugin`'s own subscriber is turned off
/// ([`FramewisePlugin::install_subscriber`]).
pub fn headless_app(plugin: FramewisePlugin, settings: SceneSettings) -> App {
    let mut app = App::new();
    app.add_plugins(plugin.install_subscriber(false))
        .add_plugins(
            DefaultPlugins
                .set(WindowPlugin {
                    primary_window: None,
                    exit_condition: ExitCondition::DontExit,
                    close_when_requested: false,
                    ..Default::default()
                })
                .set(LogPlugin {
                    custom_layer: |_| Some(Box::new(crate::tracing_layer())),
                    ..Default::default()
                }),
        )
        .add_plugins(ScheduleRunnerPlugin::run_loop(Duration::ZERO))
        .insert_resource(settings)
        .add_systems(Startup, spawn_scene)
        .add_systems(Update, turn_flock);
    app
}

/// Waits for the renderer (its device is made asynchronously) and finishes the app's plugins,
/// as Bevy's runners do before the first update. Call once before [`update`].
pub fn finish(app: &mut App) {
    while app.plugins_state() == PluginsState::Adding {
        bevy::tasks::tick_global_task_pools_on_main_thread();
        std::thread::yield_now();
    }
    app.finish();
    app.cleanup();
}

/// Runs up to `updates` updates, stopping after the one that sends `AppExit`; returns how
/// many ran.
pub fn update(app: &mut App, updates: u32) -> u32 {
    for done in 1..=updates {
        app.update();
        if app.should_exit().is_some() {
            return done;
        }
    }
    updates
}

fn triangles(mesh: &Mesh) -> u64 {
    let indices = mesh.indices().map_or(mesh.count_vertices(), |i| i.len());
    (indices / 3) as u64
}

/// Spawns the scene and inserts its [`SceneLayout`].
pub fn spawn_scene(
    mut commands: Commands,
    settings: Res<SceneSettings>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut images: ResMut<Assets<Image>>,
) {
    let mut image = Image::new_target_texture(
        settings.width,
        settings.height,
        TextureFormat::Rgba8UnormSrgb,
        None,
    );
    image.asset_usage = RenderAssetUsages::RENDER_WORLD;
    let target = images.add(image);
    let camera = commands
        .spawn((
            Name::new("offscreen camera"),
            Camera3d::default(),
            RenderTarget::Image(target.clone().into()),
            // Bevy's default tonemapper needs lookup tables this build leaves out.
            Tonemapping::None,
            Transform::from_xyz(0.0, 9.0, 22.0).looking_at(Vec3::ZERO, Vec3::Y),
        ))
        .id();

    let cube = Mesh::from(Cuboid::new(0.5, 0.5, 0.5));
    let flock_mesh_triangles = triangles(&cube);
    let flock_mesh = meshes.add(cube);
    let flock_material = materials.add(StandardMaterial::from(Color::srgb(0.3, 0.5, 0.9)));
    let side = (f64::from(settings.flock).sqrt().ceil() as u32).max(1);
    let flock = (0..settings.flock)
        .map(|i| {
            let (x, z) = ((i % side) as f32, (i / side) as f32);
            let offset = side as f32 / 2.0;
            commands
                .spawn((
                    FlockMember,
                    Mesh3d(flock_mesh.clone()),
                    MeshMaterial3d(flock_material.clone()),
                    Transform::from_xyz(x - offset - 6.0, 0.5, z - offset),
                ))
                .id()
        })
        .collect();

    let small_sphere = Sphere::new(0.4).mesh().uv(16, 8);
    let duplicate_mesh_triangles = triangles(&small_sphere);
    let small_sphere = meshes.add(small_sphere);
    let mut duplicate_materials = Vec::new();
    let duplicates = (0..settings.duplicates)
        .map(|i| {
            // The same parameters every time, in a material of its own.
            let material = materials.add(StandardMaterial {
                base_color: Color::srgb(0.9, 0.4, 0.2),
                perceptual_roughness: 0.6,
                ..Default::default()
            });
            duplicate_materials.push(material.clone());
            commands
                .spawn((
                    DuplicateMaterial,
                    Mesh3d(small_sphere.clone()),
                    MeshMaterial3d(material),
                    Transform::from_xyz(4.0 + (i % 4) as f32, 0.4, (i / 4) as f32 - 1.0),
                ))
                .id()
        })
        .collect();

    let heavy_mesh = Sphere::new(1.5)
        .mesh()
        .uv(settings.heavy_sectors, settings.heavy_stacks);
    let heavy_triangles = triangles(&heavy_mesh);
    let heavy = commands
        .spawn((
            Name::new("heavy sphere"),
            HeavyMesh,
            Mesh3d(meshes.add(heavy_mesh)),
            MeshMaterial3d(materials.add(StandardMaterial::from(Color::srgb(0.8, 0.8, 0.8)))),
            Transform::from_xyz(0.0, 1.5, -4.0),
        ))
        .id();

    let plane = Plane3d::default().mesh().size(30.0, 30.0).build();
    let ground_triangles = triangles(&plane);
    let ground = commands
        .spawn((
            Name::new("ground"),
            Mesh3d(meshes.add(plane)),
            MeshMaterial3d(materials.add(StandardMaterial::from(Color::srgb(0.3, 0.3, 0.3)))),
        ))
        .id();

    let shadow_light = commands
        .spawn((
            Name::new("shadow point light"),
            PointLight {
                shadow_maps_enabled: true,
                intensity: 2_000_000.0,
                range: 40.0,
                ..Default::default()
            },
            Transform::from_xyz(2.0, 8.0, 2.0),
        ))
        .id();
    let other_lights = vec![
        commands
            .spawn((
                Name::new("fill point light"),
                PointLight {
                    shadow_maps_enabled: false,
                    intensity: 500_000.0,
                    ..Default::default()
                },
                Transform::from_xyz(-8.0, 4.0, 6.0),
            ))
            .id(),
        commands
            .spawn((
                Name::new("sun"),
                DirectionalLight {
                    shadow_maps_enabled: false,
                    illuminance: 2_000.0,
                    ..Default::default()
                },
                Transform::from_xyz(0.0, 10.0, 0.0).looking_at(Vec3::new(1.0, 0.0, 1.0), Vec3::Y),
            ))
            .id(),
    ];

    commands.insert_resource(SceneLayout {
        camera,
        target,
        flock,
        flock_mesh,
        flock_material,
        duplicates,
        duplicate_materials,
        heavy,
        shadow_light,
        other_lights,
        ground,
        flock_mesh_triangles,
        duplicate_mesh_triangles,
        heavy_triangles,
        ground_triangles,
    });
}

/// Turns the flock a little every update.
pub fn turn_flock(time: Res<Time>, mut flock: Query<&mut Transform, With<FlockMember>>) {
    let angle = time.delta_secs().max(1.0 / 60.0);
    for mut transform in &mut flock {
        transform.rotate(Quat::from_rotation_y(angle));
    }
}
