//! Hints: a closed vocabulary of findings read off censuses, each with its evidence and a
//! fix that names the spawning site where the census knows it (else `unknown`).
//!
//! The thresholds are constants here and in docs/cli/census.md; a hint is
//! a lead to measure (the bisection measures), never a verdict.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{Census, LightKind};

/// A shared mesh + material drawn by at least this many instances, not batched, is an
/// `instancing-candidate`.
pub const INSTANCING_MIN_INSTANCES: u64 = 8;
/// A loaded-asset count that rose at each of at least this many consecutive censuses
/// (that is, this many censuses, each above the one before) is an `undisposed-suspect`.
pub const UNDISPOSED_MIN_CENSUSES: usize = 3;
/// A texture whose longer side exceeds this many texels is an `oversized-texture`.
pub const OVERSIZED_TEXTURE_SIDE_PX: u32 = 4096;
/// A view rendering more physical pixels than this (2560 × 1440) at a resolution that
/// follows its window (`capped: false`) is an `uncapped-resolution`.
pub const UNCAPPED_RESOLUTION_MIN_PIXELS: u64 = 2560 * 1440;
/// Bytes per shadow-map texel in the estimate (a 32-bit depth format).
pub const SHADOW_MAP_BYTES_PER_TEXEL: u64 = 4;

/// The site of a hint whose census does not know where the thing was spawned.
pub const SITE_UNKNOWN: &str = "unknown";

/// The closed vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HintKind {
    /// Many instances share one mesh and material but are not batched.
    InstancingCandidate,
    /// Distinct materials with identical parameters split what could be one batch.
    MaterialDedupCandidate,
    /// A point or spot light casts shadows: its shadow map and the draws into it cost.
    ShadowCasterLight,
    /// Loaded assets of a kind grew at every census: something loads and never frees.
    UndisposedSuspect,
    /// A texture larger than any screen shows.
    OversizedTexture,
    /// A view renders at the window's full physical size, however large.
    UncappedResolution,
}

impl HintKind {
    /// The kebab-case name, as in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            HintKind::InstancingCandidate => "instancing-candidate",
            HintKind::MaterialDedupCandidate => "material-dedup-candidate",
            HintKind::ShadowCasterLight => "shadow-caster-light",
            HintKind::UndisposedSuspect => "undisposed-suspect",
            HintKind::OversizedTexture => "oversized-texture",
            HintKind::UncappedResolution => "uncapped-resolution",
        }
    }
}

/// One hint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hint {
    /// Which finding.
    pub kind: HintKind,
    /// What it is about, in a few words (`mesh tree × material bark`, `light Lamp`).
    pub subject: String,
    /// The numbers behind it; the shape depends on `kind` (docs/cli/census.md).
    pub evidence: Evidence,
    /// What to change, naming the site where known.
    pub fix: String,
    /// The spawning site(s) (`src/scene.rs:42`, several joined by `, `), or `unknown`.
    pub site: String,
}

/// A hint's evidence, by kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Evidence {
    /// `instancing-candidate`.
    Instancing {
        /// The mesh.
        mesh: String,
        /// The material.
        material: String,
        /// Mesh instances sharing the pair.
        instances: u64,
        /// Entries (entities or groups) holding them.
        entries: u64,
        /// Triangles of one instance, `null` when the census lists no such mesh (unknown,
        /// never 0).
        triangles_per_instance: Option<u64>,
        /// The entries' batching: `false` some are not, `null` unknown.
        batched: Option<bool>,
    },
    /// `material-dedup-candidate`.
    MaterialDedup {
        /// The parameters' digest the materials share.
        fingerprint: String,
        /// The materials (ids) with those parameters.
        materials: Vec<String>,
        /// Mesh instances drawn with them.
        instances: u64,
    },
    /// `shadow-caster-light`.
    ShadowLight {
        /// The light's id.
        light: String,
        /// Point or spot.
        light_kind: LightKind,
        /// Shadow map faces rendered per frame (6 for a point light, 1 for a spot).
        faces: u64,
        /// The shadow map's side, `null` when the engine did not say.
        shadow_map_px: Option<u32>,
        /// faces × side² × 4 bytes, `null` without a side, and `null` when that product
        /// exceeds 2^64 − 1 (a side no real shadow map has; the fix says so).
        shadow_map_bytes_estimate: Option<u64>,
        /// Shadow-casting mesh instances in the scene (each face may draw each of them).
        shadow_casters: u64,
        /// faces × shadow casters: the most draws its maps can cost per frame.
        shadow_draws_estimate: u64,
    },
    /// `undisposed-suspect`.
    Undisposed {
        /// `meshes`, `materials` or `textures`.
        asset: String,
        /// The loaded count at each census, oldest first (the rising run).
        counts: Vec<u64>,
        /// Distinct ones the latest census's entries use.
        in_use: u64,
    },
    /// `oversized-texture`.
    Texture {
        /// The texture's id.
        texture: String,
        /// Width.
        width_px: u32,
        /// Height.
        height_px: u32,
        /// Exact bytes, when known.
        bytes: Option<u64>,
        /// Estimated bytes, when the exact size is unknown.
        bytes_estimate: Option<u64>,
    },
    /// `uncapped-resolution`.
    Resolution {
        /// The view.
        view: String,
        /// Physical width.
        width_px: u32,
        /// Physical height.
        height_px: u32,
        /// width × height.
        pixels: u64,
        /// The window's scale factor, when known.
        scale_factor: Option<f64>,
    },
}

/// A count for a sentence: a sum held at `u64::MAX` (the sums saturate rather than wrap) is
/// said as a lower bound, since the true sum may be larger.
fn count_text(n: u64) -> String {
    if n == u64::MAX {
        format!("at least {n}")
    } else {
        n.to_string()
    }
}

/// The shadow map's bytes, faces × side² × [`SHADOW_MAP_BYTES_PER_TEXEL`]: `None` without a
/// side, or when the product exceeds `u64::MAX` (never a wrapped number).
fn shadow_map_bytes(faces: u64, side_px: Option<u32>) -> Option<u64> {
    let side = u64::from(side_px?);
    faces
        .checked_mul(side)?
        .checked_mul(side)?
        .checked_mul(SHADOW_MAP_BYTES_PER_TEXEL)
}

fn site_of(sites: &[String]) -> String {
    if sites.is_empty() {
        SITE_UNKNOWN.to_owned()
    } else {
        sites.join(", ")
    }
}

/// The hints of a series of censuses of one session, oldest first: every kind but
/// `undisposed-suspect` reads the latest census; that one reads the series. In vocabulary
/// order, then the largest first within a kind.
pub fn hints(censuses: &[Census]) -> Vec<Hint> {
    let Some(latest) = censuses.last() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    instancing(latest, &mut out);
    material_dedup(latest, &mut out);
    shadow_lights(latest, &mut out);
    undisposed(censuses, &mut out);
    oversized_textures(latest, &mut out);
    uncapped(latest, &mut out);
    out
}

fn instancing(census: &Census, out: &mut Vec<Hint>) {
    for group in &census.shared_groups {
        if group.instances < INSTANCING_MIN_INSTANCES || group.batched == Some(true) {
            continue;
        }
        let site = site_of(&group.sites);
        out.push(Hint {
            kind: HintKind::InstancingCandidate,
            subject: format!("mesh {} × material {}", group.mesh, group.material),
            evidence: Evidence::Instancing {
                mesh: group.mesh.clone(),
                material: group.material.clone(),
                instances: group.instances,
                entries: group.entries.len() as u64,
                triangles_per_instance: census.mesh(&group.mesh).map(|m| m.triangles),
                batched: group.batched,
            },
            fix: format!(
                "draw the {} instances of mesh {} with material {} as one instanced draw \
                 (spawned at {site})",
                count_text(group.instances),
                group.mesh,
                group.material
            ),
            site,
        });
    }
}

fn material_dedup(census: &Census, out: &mut Vec<Hint>) {
    let mut by_print: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for material in &census.materials {
        if let Some(print) = &material.fingerprint {
            by_print
                .entry(print.as_str())
                .or_default()
                .push(material.id.as_str());
        }
    }
    let mut found = Vec::new();
    for (print, materials) in by_print {
        if materials.len() < 2 {
            continue;
        }
        let mut instances = 0u64;
        let mut sites: Vec<String> = Vec::new();
        for entry in &census.entries {
            // Saturating, as every sum of the census: a sum of 2^63 and 2^63 wrapped to 0,
            // and the hint vanished.
            let uses: u64 = entry
                .draws
                .iter()
                .filter(|d| materials.contains(&d.material.as_str()))
                .map(|d| d.instances)
                .fold(0, u64::saturating_add);
            if uses > 0 {
                instances = instances.saturating_add(uses);
                if let Some(site) = &entry.site {
                    if !sites.contains(site) {
                        sites.push(site.clone());
                    }
                }
            }
        }
        if instances == 0 {
            continue;
        }
        let site = site_of(&sites);
        found.push(Hint {
            kind: HintKind::MaterialDedupCandidate,
            subject: format!("{} materials with identical parameters", materials.len()),
            fix: format!(
                "create the material once and share its handle among the {} \
                 instances that use {} identical copies (spawned at {site})",
                count_text(instances),
                materials.len()
            ),
            evidence: Evidence::MaterialDedup {
                fingerprint: print.to_owned(),
                materials: materials.iter().map(|m| (*m).to_owned()).collect(),
                instances,
            },
            site,
        });
    }
    found.sort_by_key(|h| match &h.evidence {
        Evidence::MaterialDedup { materials, .. } => std::cmp::Reverse(materials.len()),
        _ => std::cmp::Reverse(0),
    });
    out.extend(found);
}

fn shadow_lights(census: &Census, out: &mut Vec<Hint>) {
    for light in &census.lights {
        let faces = match light.kind {
            LightKind::Point => 6,
            LightKind::Spot => 1,
            LightKind::Directional | LightKind::Other => continue,
        };
        if !light.shadows {
            continue;
        }
        let bytes = shadow_map_bytes(faces, light.shadow_map_px);
        // A side whose bytes pass 2^64 − 1 has no estimate: said, rather than a wrapped one.
        let too_large = match (light.shadow_map_px, bytes) {
            (Some(px), None) => format!(
                "; its shadow_map_px {px} is no real shadow map's side ({faces} × {px}² × \
                 {SHADOW_MAP_BYTES_PER_TEXEL} bytes exceeds 2^64 − 1): no bytes estimate"
            ),
            _ => String::new(),
        };
        let casters = census.totals.shadow_casters;
        let site = light
            .site
            .clone()
            .unwrap_or_else(|| SITE_UNKNOWN.to_owned());
        out.push(Hint {
            kind: HintKind::ShadowCasterLight,
            subject: format!("light {}", light.name),
            fix: format!(
                "turn shadows off on light {} or shrink its range so fewer of the {} \
                 casters fall in its {faces} shadow face(s) (spawned at {site}){too_large}",
                light.name,
                count_text(casters)
            ),
            evidence: Evidence::ShadowLight {
                light: light.id.clone(),
                light_kind: light.kind,
                faces,
                shadow_map_px: light.shadow_map_px,
                shadow_map_bytes_estimate: bytes,
                shadow_casters: casters,
                shadow_draws_estimate: faces.saturating_mul(casters),
            },
            site,
        });
    }
}

/// Reads one loaded-asset count off a census.
type AssetCount = fn(&Census) -> u64;

fn undisposed(censuses: &[Census], out: &mut Vec<Hint>) {
    let Some(latest) = censuses.last() else {
        return;
    };
    let kinds: [(&str, AssetCount, u64); 3] = [
        ("meshes", |c| c.assets.meshes, latest.totals.unique_meshes),
        (
            "materials",
            |c| c.assets.materials,
            latest.totals.unique_materials,
        ),
        (
            "textures",
            |c| c.assets.textures,
            latest.textures.len() as u64,
        ),
    ];
    for (asset, count, in_use) in kinds {
        // The rising run that ends at the latest census.
        let counts: Vec<u64> = censuses.iter().map(count).collect();
        let mut start = counts.len() - 1;
        while start > 0 && counts[start - 1] < counts[start] {
            start -= 1;
        }
        let run = &counts[start..];
        if run.len() < UNDISPOSED_MIN_CENSUSES {
            continue;
        }
        out.push(Hint {
            kind: HintKind::UndisposedSuspect,
            subject: format!("loaded {asset}"),
            fix: format!(
                "loaded {asset} rose at each of the last {} censuses ({} → {}) while {in_use} \
                 are in use: find what creates them each time and reuse or drop the handles",
                run.len(),
                run[0],
                run[run.len() - 1]
            ),
            evidence: Evidence::Undisposed {
                asset: asset.to_owned(),
                counts: run.to_vec(),
                in_use,
            },
            site: SITE_UNKNOWN.to_owned(),
        });
    }
}

fn oversized_textures(census: &Census, out: &mut Vec<Hint>) {
    let mut found: Vec<Hint> = Vec::new();
    for t in &census.textures {
        if t.width_px.max(t.height_px) <= OVERSIZED_TEXTURE_SIDE_PX {
            continue;
        }
        found.push(Hint {
            kind: HintKind::OversizedTexture,
            subject: format!("texture {}", t.name),
            fix: format!(
                "downscale texture {} ({}×{}) to at most {OVERSIZED_TEXTURE_SIDE_PX} texels a \
                 side, or compress it",
                t.name, t.width_px, t.height_px
            ),
            evidence: Evidence::Texture {
                texture: t.id.clone(),
                width_px: t.width_px,
                height_px: t.height_px,
                bytes: t.bytes,
                bytes_estimate: t.bytes_estimate,
            },
            site: SITE_UNKNOWN.to_owned(),
        });
    }
    found.sort_by_key(|h| match &h.evidence {
        Evidence::Texture {
            width_px,
            height_px,
            ..
        } => std::cmp::Reverse(u64::from(*width_px) * u64::from(*height_px)),
        _ => std::cmp::Reverse(0),
    });
    out.extend(found);
}

fn uncapped(census: &Census, out: &mut Vec<Hint>) {
    for view in &census.views {
        let pixels = u64::from(view.width_px) * u64::from(view.height_px);
        if view.capped != Some(false) || pixels <= UNCAPPED_RESOLUTION_MIN_PIXELS {
            continue;
        }
        let site = view.site.clone().unwrap_or_else(|| SITE_UNKNOWN.to_owned());
        out.push(Hint {
            kind: HintKind::UncappedResolution,
            subject: format!("view {}", view.name),
            fix: format!(
                "render view {} at a capped resolution (a render scale, or a fixed size \
                 upscaled to the window) instead of all {}×{} physical pixels (camera spawned \
                 at {site})",
                view.name, view.width_px, view.height_px
            ),
            evidence: Evidence::Resolution {
                view: view.name.clone(),
                width_px: view.width_px,
                height_px: view.height_px,
                pixels,
                scale_factor: view.scale_factor,
            },
            site,
        });
    }
}
