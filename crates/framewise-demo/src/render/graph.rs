//! The frame graph's structure: passes, the resources they read and write, as the
//! recorder's topology description.

use framewise::{Access, EdgeDesc, PassDesc, PassKind, ResourceDesc, ResourceKind, TopologyDesc};

/// The passes, in execution order; each pass's CPU scope has the same name.
pub const PASSES: [&str; 6] = ["shadow", "geometry", "lighting", "particles", "post", "ui"];

/// Index of a pass in [`PASSES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Pass {
    /// Shadow map (depth from the sun).
    Shadow = 0,
    /// G-buffer.
    Geometry = 1,
    /// Deferred lighting (compute).
    Lighting = 2,
    /// Particles, blended into the HDR target.
    Particles = 3,
    /// Bloom, tone mapping, vignette (compute).
    Post = 4,
    /// HUD and minimap.
    Ui = 5,
}

impl Pass {
    /// The pass label.
    pub fn label(self) -> &'static str {
        PASSES[self as usize]
    }

    /// The pipeline the pass runs (its workload's pipeline label).
    pub fn pipeline(self) -> &'static str {
        match self {
            Self::Shadow => "shadow_depth",
            Self::Geometry => "gbuffer",
            Self::Lighting => "deferred_lighting",
            Self::Particles => "particle_additive",
            Self::Post => "tonemap_bloom",
            Self::Ui => "ui_blend",
        }
    }

    /// Render or compute.
    pub fn kind(self) -> PassKind {
        match self {
            Self::Lighting | Self::Post => PassKind::Compute,
            _ => PassKind::Render,
        }
    }
}

/// Every pass.
pub const ALL_PASSES: [Pass; 6] = [
    Pass::Shadow,
    Pass::Geometry,
    Pass::Lighting,
    Pass::Particles,
    Pass::Post,
    Pass::Ui,
];

/// Side of the shadow map, texels.
pub const SHADOW_SIZE: usize = 512;

/// The frame graph for a `width × height` framebuffer.
pub fn topology(width: u32, height: u32) -> TopologyDesc {
    let pixels = u64::from(width) * u64::from(height);
    let shadow_bytes = (SHADOW_SIZE * SHADOW_SIZE * 4) as u64;
    let texture = |label: &str, format: &str, usage: &str, bytes: Option<u64>, transient: bool| {
        let mut r = ResourceDesc::new(label, ResourceKind::Texture);
        r.format = Some(format.into());
        r.usage = Some(usage.into());
        r.declared_bytes = bytes;
        r.transient = transient;
        r.imported = !transient;
        r
    };
    let buffer = |label: &str, usage: &str| {
        let mut r = ResourceDesc::new(label, ResourceKind::Buffer);
        r.usage = Some(usage.into());
        r.imported = true;
        r
    };
    let mut resources = vec![
        texture(
            "shadow_map",
            "depth32float",
            "render_attachment|texture_binding",
            Some(shadow_bytes),
            true,
        ),
        texture(
            "ground_texture",
            "rgba8unorm",
            "texture_binding",
            None,
            false,
        ),
        buffer("material_tables", "storage"),
        buffer("instances", "vertex"),
        texture(
            "depth",
            "depth32float",
            "render_attachment|texture_binding",
            Some(pixels * 4),
            true,
        ),
        texture(
            "gbuffer_albedo",
            "rgba8unorm",
            "render_attachment|texture_binding",
            Some(pixels * 4),
            true,
        ),
        texture(
            "gbuffer_normal",
            "rgba8snorm",
            "render_attachment|texture_binding",
            Some(pixels * 4),
            true,
        ),
        texture(
            "gbuffer_position",
            "rgba32float",
            "render_attachment|texture_binding",
            Some(pixels * 12),
            true,
        ),
        texture(
            "hdr",
            "rgba32float",
            "storage_binding|render_attachment",
            Some(pixels * 12),
            true,
        ),
        buffer("particle_buffer", "vertex"),
        texture(
            "bloom",
            "rgba32float",
            "storage_binding",
            Some(pixels / 16 * 12),
            true,
        ),
        texture(
            "backbuffer",
            "rgba8unorm",
            "storage_binding|render_attachment",
            Some(pixels * 4),
            false,
        ),
    ];
    use Access::{Read, ReadWrite, Write};
    let edges_spec: [(Pass, usize, Access, u32); 19] = [
        (Pass::Shadow, 3, Read, 0),
        (Pass::Shadow, 0, Write, 1),
        (Pass::Geometry, 1, Read, 0),
        (Pass::Geometry, 3, Read, 0),
        (Pass::Geometry, 4, Write, 1),
        (Pass::Geometry, 5, Write, 1),
        (Pass::Geometry, 6, Write, 1),
        (Pass::Geometry, 7, Write, 1),
        (Pass::Lighting, 0, Read, 1),
        (Pass::Lighting, 2, Read, 0),
        (Pass::Lighting, 5, Read, 1),
        (Pass::Lighting, 6, Read, 1),
        (Pass::Lighting, 7, Read, 1),
        (Pass::Lighting, 8, Write, 1),
        (Pass::Particles, 4, Read, 1),
        (Pass::Particles, 9, Read, 0),
        (Pass::Particles, 8, ReadWrite, 2),
        (Pass::Post, 8, Read, 2),
        (Pass::Post, 10, ReadWrite, 1),
    ];
    let mut edges: Vec<EdgeDesc> = edges_spec
        .iter()
        .map(|&(pass, resource, access, version)| EdgeDesc {
            pass: pass as u32,
            resource: resource as u32,
            access,
            version,
        })
        .collect();
    edges.push(EdgeDesc {
        pass: Pass::Post as u32,
        resource: 11,
        access: Write,
        version: 1,
    });
    edges.push(EdgeDesc {
        pass: Pass::Ui as u32,
        resource: 11,
        access: ReadWrite,
        version: 2,
    });
    for (i, r) in resources.iter_mut().enumerate() {
        let uses = edges
            .iter()
            .filter(|e| e.resource as usize == i)
            .map(|e| e.pass);
        r.first_use = uses.clone().min();
        r.last_use = uses.max();
    }
    TopologyDesc {
        passes: ALL_PASSES
            .iter()
            .map(|&p| {
                let mut d = PassDesc::new(p.label(), p.kind());
                d.scope = Some(p.label().to_owned());
                d
            })
            .collect(),
        resources,
        edges,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pass_touches_a_resource_and_every_resource_is_used() {
        let t = topology(640, 360);
        assert_eq!(t.passes.len(), PASSES.len());
        for p in 0..t.passes.len() as u32 {
            assert!(t.edges.iter().any(|e| e.pass == p), "pass {p} has no edge");
        }
        for (i, r) in t.resources.iter().enumerate() {
            assert!(r.first_use.is_some(), "resource {i} ({}) unused", r.label);
        }
    }
}
