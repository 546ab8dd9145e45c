//! The meshes the renderer draws and the instances and particles it is given.

use super::materials::Material;
use crate::math::Vec3;

/// Which mesh an instance draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum MeshId {
    /// A unit box standing on the ground.
    Cube = 0,
    /// The agents' dart.
    Dart = 1,
    /// The crystals' octahedron.
    Octahedron = 2,
}

/// One drawable instance, as uploaded.
#[derive(Clone, Copy, Debug)]
pub struct Instance {
    /// Position of the mesh origin, metres.
    pub pos: Vec3,
    /// Rotation about the vertical, radians.
    pub yaw: f32,
    /// Per-axis scale.
    pub scale: Vec3,
    /// 0xRRGGBB.
    pub colour: u32,
    /// Material.
    pub material: Material,
    /// Mesh.
    pub mesh: MeshId,
}

/// One particle, as uploaded.
#[derive(Clone, Copy, Debug)]
pub struct ParticleVertex {
    /// Position, metres.
    pub pos: Vec3,
    /// 0xRRGGBB.
    pub colour: u32,
}

pub(super) struct Mesh {
    pub(super) verts: Vec<Vec3>,
    pub(super) tris: Vec<[usize; 3]>,
    pub(super) normals: Vec<Vec3>,
}

impl Mesh {
    /// Orients every triangle outward (counter-clockwise seen from outside) from `centre`.
    fn new(verts: Vec<Vec3>, mut tris: Vec<[usize; 3]>, centre: Vec3) -> Self {
        let mut normals = Vec::with_capacity(tris.len());
        for t in &mut tris {
            let (a, b, c) = (verts[t[0]], verts[t[1]], verts[t[2]]);
            let mut n = (b - a).cross(c - a).normalized();
            let centroid = (a + b + c) * (1.0 / 3.0);
            if n.dot(centroid - centre) < 0.0 {
                t.swap(1, 2);
                n = -n;
            }
            normals.push(n);
        }
        Self {
            verts,
            tris,
            normals,
        }
    }

    pub(super) fn cube() -> Self {
        let v = |x: f32, y: f32, z: f32| Vec3::new(x, y, z);
        let verts = vec![
            v(-0.5, 0.0, -0.5),
            v(0.5, 0.0, -0.5),
            v(0.5, 0.0, 0.5),
            v(-0.5, 0.0, 0.5),
            v(-0.5, 1.0, -0.5),
            v(0.5, 1.0, -0.5),
            v(0.5, 1.0, 0.5),
            v(-0.5, 1.0, 0.5),
        ];
        // No bottom face: boxes stand on the ground.
        let tris = vec![
            [4, 5, 6],
            [4, 6, 7],
            [0, 1, 5],
            [0, 5, 4],
            [1, 2, 6],
            [1, 6, 5],
            [2, 3, 7],
            [2, 7, 6],
            [3, 0, 4],
            [3, 4, 7],
        ];
        Self::new(verts, tris, v(0.0, 0.5, 0.0))
    }

    pub(super) fn dart() -> Self {
        let verts = vec![
            Vec3::new(0.7, 0.25, 0.0),
            Vec3::new(-0.45, 0.0, -0.4),
            Vec3::new(-0.45, 0.0, 0.4),
            Vec3::new(-0.45, 0.6, 0.0),
        ];
        let tris = vec![[0, 1, 2], [0, 2, 3], [0, 3, 1], [1, 3, 2]];
        Self::new(verts, tris, Vec3::new(-0.1, 0.2, 0.0))
    }

    pub(super) fn octahedron() -> Self {
        let verts = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.0, 2.0, 0.0),
            Vec3::new(0.5, 1.0, 0.0),
            Vec3::new(-0.5, 1.0, 0.0),
            Vec3::new(0.0, 1.0, 0.5),
            Vec3::new(0.0, 1.0, -0.5),
        ];
        let tris = vec![
            [1, 2, 4],
            [1, 4, 3],
            [1, 3, 5],
            [1, 5, 2],
            [0, 4, 2],
            [0, 3, 4],
            [0, 5, 3],
            [0, 2, 5],
        ];
        Self::new(verts, tris, Vec3::new(0.0, 1.0, 0.0))
    }
}
