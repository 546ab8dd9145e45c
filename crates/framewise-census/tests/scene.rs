//! A synthetic engine: a real in-memory scene (objects with meshes, materials and a visible
//! flag) and a renderer model that derives each frame's draw calls, triangles and render
//! time from what is visible — batching instances that share a mesh and material — with a
//! seeded jitter on the time so the spread is real.

use std::collections::{BTreeMap, BTreeSet};

use framewise_census::*;

/// One object in the scene.
#[derive(Clone, Debug)]
pub struct Object {
    pub id: String,
    pub mesh: String,
    pub material: String,
    pub visible: bool,
    pub site: Option<String>,
}

/// The scene and its renderer.
pub struct Scene {
    pub objects: Vec<Object>,
    pub mesh_triangles: BTreeMap<String, u64>,
    /// Hidden objects' previous visibility, restored by `show`.
    hidden: BTreeMap<String, bool>,
    /// xorshift state for the render-time jitter.
    rng: u64,
    /// Jitter amplitude, ms (uniform in ±jitter).
    pub jitter_ms: f64,
    /// A fault to test verification: `show` of this id forgets to restore it.
    pub forget_to_show: Option<String>,
    /// A fault: `hide` of this id fails.
    pub refuse_hide: Option<String>,
    /// The renderer cannot time frames (render_ms unmeasured).
    pub untimed: bool,
    pub frames_rendered: u64,
}

impl Scene {
    /// A flock of `boids` small instanced meshes, a cluster of `cluster` entities each with
    /// its own copy of one material, and one heavy mesh.
    pub fn planted(boids: usize, cluster: usize, heavy_triangles: u64) -> Scene {
        let mut objects = Vec::new();
        for i in 0..boids {
            objects.push(Object {
                id: format!("boid{i}"),
                mesh: "boid".into(),
                material: "feather".into(),
                visible: true,
                site: Some("src/flock.rs:20".into()),
            });
        }
        for i in 0..cluster {
            objects.push(Object {
                id: format!("crate{i}"),
                mesh: "crate".into(),
                material: format!("wood{i}"),
                visible: true,
                site: Some("src/props.rs:44".into()),
            });
        }
        objects.push(Object {
            id: "statue".into(),
            mesh: "statue".into(),
            material: "marble".into(),
            visible: true,
            site: Some("src/plaza.rs:7".into()),
        });
        let mesh_triangles = [
            ("boid".to_owned(), 120),
            ("crate".to_owned(), 12),
            ("statue".to_owned(), heavy_triangles),
        ]
        .into_iter()
        .collect();
        Scene {
            objects,
            mesh_triangles,
            hidden: BTreeMap::new(),
            rng: 0x9E37_79B9_7F4A_7C15,
            jitter_ms: 0.02,
            forget_to_show: None,
            refuse_hide: None,
            untimed: false,
            frames_rendered: 0,
        }
    }

    fn jitter(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let unit = (self.rng >> 11) as f64 / (1u64 << 53) as f64; // [0, 1)
        (unit * 2.0 - 1.0) * self.jitter_ms
    }

    /// The census of the scene as it stands.
    pub fn census(&self) -> Census {
        let entries = self
            .objects
            .iter()
            .map(|o| EntryParts {
                id: o.id.clone(),
                name: o.id.clone(),
                site: o.site.clone(),
                entities: 1,
                visible_entities: Some(u64::from(o.visible)),
                draws: vec![Draw {
                    mesh: o.mesh.clone(),
                    material: o.material.clone(),
                    instances: 1,
                    shadow_casters: 1,
                }],
                batched: Some(true),
            })
            .collect();
        let meshes = self
            .mesh_triangles
            .iter()
            .map(|(id, tris)| MeshInfo {
                id: id.clone(),
                name: id.clone(),
                triangles: *tris,
                vertices: tris * 3,
                bytes: None,
            })
            .collect();
        let materials: BTreeSet<&str> = self.objects.iter().map(|o| o.material.as_str()).collect();
        let materials = materials
            .into_iter()
            .map(|m| MaterialInfo {
                id: m.to_owned(),
                name: m.to_owned(),
                // Every woodN copy has the same parameters.
                fingerprint: Some(m.trim_end_matches(char::is_numeric).to_owned()),
                textures: vec![],
            })
            .collect();
        Census::new(SceneParts {
            engine: "synthetic".into(),
            entries,
            meshes,
            materials,
            ..SceneParts::default()
        })
    }
}

impl BisectEngine for Scene {
    fn name(&self) -> String {
        "synthetic".into()
    }

    fn candidates(&mut self) -> Result<Vec<Candidate>, EngineError> {
        Ok(Candidate::from_census(&self.census()))
    }

    fn hide(&mut self, id: &str) -> Result<(), EngineError> {
        if self.refuse_hide.as_deref() == Some(id) {
            return Err(EngineError(format!("{id} cannot be hidden")));
        }
        let object = self
            .objects
            .iter_mut()
            .find(|o| o.id == id)
            .ok_or_else(|| EngineError(format!("no object {id}")))?;
        self.hidden.insert(id.to_owned(), object.visible);
        object.visible = false;
        Ok(())
    }

    fn show(&mut self, id: &str) -> Result<(), EngineError> {
        let Some(was) = self.hidden.remove(id) else {
            // Never hidden (its hide failed): nothing to restore.
            return Ok(());
        };
        if self.forget_to_show.as_deref() == Some(id) {
            return Ok(());
        }
        if let Some(object) = self.objects.iter_mut().find(|o| o.id == id) {
            object.visible = was;
        }
        Ok(())
    }

    fn render_frame(&mut self) -> Result<FrameCost, EngineError> {
        self.frames_rendered += 1;
        let visible: Vec<&Object> = self.objects.iter().filter(|o| o.visible).collect();
        // One draw per distinct mesh + material among visible objects (instanced batches).
        let batches: BTreeSet<(&str, &str)> = visible
            .iter()
            .map(|o| (o.mesh.as_str(), o.material.as_str()))
            .collect();
        let triangles: u64 = visible
            .iter()
            .map(|o| self.mesh_triangles.get(&o.mesh).copied().unwrap_or(0))
            .sum();
        let draw_calls = batches.len() as u64;
        // The cost model: a fixed frame cost, per draw and per triangle.
        let render_ms = 0.5 + draw_calls as f64 * 0.01 + triangles as f64 * 2e-6 + self.jitter();
        Ok(FrameCost {
            draw_calls: Some(draw_calls),
            triangles: Some(triangles),
            render_ms: (!self.untimed).then_some(render_ms),
        })
    }

    fn render_ms_source(&self) -> Option<String> {
        (!self.untimed).then(|| "the synthetic cost model".to_owned())
    }

    fn snapshot(&mut self) -> Result<WorldSnapshot, EngineError> {
        Ok(WorldSnapshot(
            self.objects
                .iter()
                .map(|o| (format!("{}.visible", o.id), o.visible.to_string()))
                .collect(),
        ))
    }
}
