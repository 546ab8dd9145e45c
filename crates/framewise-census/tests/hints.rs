//! Every hint kind fires on its evidence, at its documented threshold and not below it.

use framewise_census::hints::*;
use framewise_census::*;

fn entry(
    id: &str,
    mesh: &str,
    material: &str,
    site: Option<&str>,
    batched: Option<bool>,
) -> EntryParts {
    EntryParts {
        id: id.into(),
        name: id.into(),
        site: site.map(str::to_owned),
        entities: 1,
        visible_entities: Some(1),
        draws: vec![Draw {
            mesh: mesh.into(),
            material: material.into(),
            instances: 1,
            shadow_casters: 1,
        }],
        batched,
    }
}

fn mesh(id: &str, triangles: u64) -> MeshInfo {
    MeshInfo {
        id: id.into(),
        name: id.into(),
        triangles,
        ..MeshInfo::default()
    }
}

fn material(id: &str, fingerprint: Option<&str>) -> MaterialInfo {
    MaterialInfo {
        id: id.into(),
        name: id.into(),
        fingerprint: fingerprint.map(str::to_owned),
        textures: vec![],
    }
}

fn kinds(hints: &[Hint]) -> Vec<HintKind> {
    hints.iter().map(|h| h.kind).collect()
}

fn rocks(n: usize, batched: Option<bool>, site: Option<&str>) -> Census {
    Census::new(SceneParts {
        engine: "test".into(),
        entries: (0..n)
            .map(|i| entry(&format!("rock{i}"), "rock", "stone", site, batched))
            .collect(),
        meshes: vec![mesh("rock", 300)],
        materials: vec![material("stone", Some("grey"))],
        ..SceneParts::default()
    })
}

#[test]
fn instancing_candidate_at_its_threshold() {
    let n = INSTANCING_MIN_INSTANCES as usize;
    let found = hints(&[rocks(n, Some(false), Some("src/rocks.rs:9"))]);
    assert_eq!(kinds(&found), vec![HintKind::InstancingCandidate]);
    let h = &found[0];
    assert_eq!(h.site, "src/rocks.rs:9");
    assert!(h.fix.contains("src/rocks.rs:9"), "{}", h.fix);
    match &h.evidence {
        Evidence::Instancing {
            instances,
            entries,
            triangles_per_instance,
            batched,
            ..
        } => {
            assert_eq!(
                (*instances, *entries, *triangles_per_instance),
                (n as u64, n as u64, Some(300))
            );
            assert_eq!(*batched, Some(false));
        }
        other => panic!("{other:?}"),
    }
    // One fewer: no hint. Batched already: no hint. Unknown batching: still a candidate.
    assert!(hints(&[rocks(n - 1, Some(false), None)]).is_empty());
    assert!(hints(&[rocks(n, Some(true), None)]).is_empty());
    let unknown = hints(&[rocks(n, None, None)]);
    assert_eq!(unknown[0].site, SITE_UNKNOWN);
    assert!(unknown[0].fix.contains("spawned at unknown"));
}

#[test]
fn material_dedup_candidate_names_the_copies() {
    let mut entries: Vec<EntryParts> = (0..4)
        .map(|i| {
            entry(
                &format!("crate{i}"),
                "crate",
                &format!("wood{i}"),
                Some("src/props.rs:44"),
                Some(true),
            )
        })
        .collect();
    entries.push(entry("lamp", "lamp", "brass", None, Some(true)));
    let census = Census::new(SceneParts {
        engine: "test".into(),
        entries,
        meshes: vec![mesh("crate", 12), mesh("lamp", 50)],
        materials: (0..4)
            .map(|i| material(&format!("wood{i}"), Some("oak")))
            .chain([material("brass", Some("metal")), material("unused", None)])
            .collect(),
        ..SceneParts::default()
    });
    let found = hints(&[census]);
    assert_eq!(kinds(&found), vec![HintKind::MaterialDedupCandidate]);
    assert_eq!(found[0].site, "src/props.rs:44");
    match &found[0].evidence {
        Evidence::MaterialDedup {
            fingerprint,
            materials,
            instances,
        } => {
            assert_eq!(fingerprint, "oak");
            assert_eq!(materials, &["wood0", "wood1", "wood2", "wood3"]);
            assert_eq!(*instances, 4);
        }
        other => panic!("{other:?}"),
    }
}

fn light(id: &str, kind: LightKind, shadows: bool) -> LightInfo {
    LightInfo {
        id: id.into(),
        name: id.into(),
        kind,
        shadows,
        shadow_map_px: Some(1024),
        range: Some(20.0),
        site: Some("src/lights.rs:3".into()),
    }
}

#[test]
fn shadow_caster_light_costs_its_faces() {
    let mut census = rocks(3, Some(true), None);
    census.lights = vec![
        light("lamp", LightKind::Point, true),
        light("torch", LightKind::Spot, true),
        light("sun", LightKind::Directional, true),
        light("fill", LightKind::Point, false),
    ];
    let found = hints(&[census]);
    assert_eq!(
        kinds(&found),
        vec![HintKind::ShadowCasterLight, HintKind::ShadowCasterLight]
    );
    match &found[0].evidence {
        Evidence::ShadowLight {
            light,
            faces,
            shadow_map_bytes_estimate,
            shadow_casters,
            shadow_draws_estimate,
            ..
        } => {
            assert_eq!(light, "lamp");
            assert_eq!(*faces, 6);
            assert_eq!(*shadow_map_bytes_estimate, Some(6 * 1024 * 1024 * 4));
            assert_eq!((*shadow_casters, *shadow_draws_estimate), (3, 18));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(found[0].site, "src/lights.rs:3");
    match &found[1].evidence {
        Evidence::ShadowLight { faces, .. } => assert_eq!(*faces, 1),
        other => panic!("{other:?}"),
    }
}

fn with_meshes_loaded(counts: &[u64]) -> Vec<Census> {
    counts
        .iter()
        .map(|&n| {
            let mut c = rocks(1, Some(true), None);
            c.assets = AssetCounts {
                meshes: n,
                materials: 1,
                textures: 0,
            };
            c
        })
        .collect()
}

#[test]
fn undisposed_suspect_needs_a_rising_run() {
    let found = hints(&with_meshes_loaded(&[40, 10, 12, 15]));
    assert_eq!(kinds(&found), vec![HintKind::UndisposedSuspect]);
    assert_eq!(found[0].site, SITE_UNKNOWN);
    match &found[0].evidence {
        Evidence::Undisposed {
            asset,
            counts,
            in_use,
        } => {
            assert_eq!(asset, "meshes");
            assert_eq!(counts, &[10, 12, 15]);
            assert_eq!(*in_use, 1);
        }
        other => panic!("{other:?}"),
    }
    // A plateau breaks the run; two censuses are too few; a fall ends it.
    assert!(hints(&with_meshes_loaded(&[10, 12, 12, 15])).is_empty());
    assert!(hints(&with_meshes_loaded(&[10, 12])).is_empty());
    assert!(hints(&with_meshes_loaded(&[10, 12, 15, 3])).is_empty());
}

#[test]
fn oversized_texture_above_its_side() {
    let mut census = rocks(1, Some(true), None);
    let tex = |id: &str, w, h| TextureInfo {
        id: id.into(),
        name: id.into(),
        width_px: w,
        height_px: h,
        layers: 1,
        mip_levels: 1,
        format: Some("rgba8unorm".into()),
        bytes: None,
        bytes_estimate: Some(estimate_texture_bytes(w, h, 1, 1, 4.0)),
    };
    census.textures = vec![
        tex("ok", OVERSIZED_TEXTURE_SIDE_PX, OVERSIZED_TEXTURE_SIDE_PX),
        tex("wide", 8192, 1024),
        tex("huge", 8192, 8192),
    ];
    let found = hints(&[census]);
    assert_eq!(kinds(&found), vec![HintKind::OversizedTexture; 2]);
    // Largest first.
    assert_eq!(found[0].subject, "texture huge");
    match &found[1].evidence {
        Evidence::Texture {
            bytes,
            bytes_estimate,
            ..
        } => {
            assert_eq!(*bytes, None);
            assert_eq!(*bytes_estimate, Some(8192 * 1024 * 4));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn uncapped_resolution_only_when_it_follows_the_window() {
    let view = |name: &str, w, h, capped| ViewInfo {
        name: name.into(),
        width_px: w,
        height_px: h,
        scale_factor: Some(2.0),
        capped,
        site: None,
    };
    let mut census = rocks(1, Some(true), None);
    census.views = vec![
        view("main", 5120, 2880, Some(false)),
        view("capped", 5120, 2880, Some(true)),
        view("offscreen", 5120, 2880, None),
        view("hd", 2560, 1440, Some(false)),
    ];
    let found = hints(&[census]);
    assert_eq!(kinds(&found), vec![HintKind::UncappedResolution]);
    match &found[0].evidence {
        Evidence::Resolution { pixels, .. } => assert_eq!(*pixels, 5120 * 2880),
        other => panic!("{other:?}"),
    }
    let json = serde_json::to_value(&found[0]).unwrap();
    assert_eq!(json["kind"], "uncapped-resolution");
    assert_eq!(json["site"], "unknown");
    assert_eq!(json["evidence"]["width_px"], 5120);
}

#[test]
fn no_census_no_hints_and_names_match_the_json() {
    assert!(hints(&[]).is_empty());
    for kind in [
        HintKind::InstancingCandidate,
        HintKind::MaterialDedupCandidate,
        HintKind::ShadowCasterLight,
        HintKind::UndisposedSuspect,
        HintKind::OversizedTexture,
        HintKind::UncappedResolution,
    ] {
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.name());
    }
}

/// A shared group whose mesh the census does not list had `triangles_per_instance: 0`: unknown
/// is `null`, never 0.
#[test]
fn an_unknown_mesh_has_no_triangles_per_instance() {
    let mut census = rocks(INSTANCING_MIN_INSTANCES as usize, Some(false), None);
    census.meshes.clear();
    let found = hints(&[census]);
    assert_eq!(kinds(&found), vec![HintKind::InstancingCandidate]);
    match &found[0].evidence {
        Evidence::Instancing {
            triangles_per_instance,
            ..
        } => assert_eq!(*triangles_per_instance, None),
        other => panic!("{other:?}"),
    }
    let json = serde_json::to_value(&found[0]).unwrap();
    assert!(
        json["evidence"]["triangles_per_instance"].is_null(),
        "{json}"
    );
    // And it reads back.
    let back: Hint = serde_json::from_value(json).unwrap();
    assert_eq!(back, found[0]);
}

/// A point light's shadow map of side 2^31 estimated 0 bytes (6 × 2^62 × 4 wrapped), one of
/// side 2^32 − 1 a wrapped 18446743867551121432: past 2^64 − 1 there is no estimate (`null`),
/// and the fix says why; the largest side that fits is still estimated exactly.
#[test]
fn a_shadow_map_too_large_to_count_has_no_estimate() {
    let estimate = |kind: LightKind, px: u32| {
        let mut census = rocks(3, Some(true), None);
        census.lights = vec![LightInfo {
            shadow_map_px: Some(px),
            ..light("lamp", kind, true)
        }];
        let found = hints(&[census]);
        assert_eq!(kinds(&found), vec![HintKind::ShadowCasterLight]);
        match &found[0].evidence {
            Evidence::ShadowLight {
                shadow_map_bytes_estimate,
                ..
            } => (*shadow_map_bytes_estimate, found[0].fix.clone()),
            other => panic!("{other:?}"),
        }
    };
    for px in [1u32 << 31, u32::MAX] {
        let (bytes, fix) = estimate(LightKind::Point, px);
        assert_eq!(bytes, None, "{px}");
        assert!(
            fix.contains(&format!("shadow_map_px {px} is no real shadow map's side"))
                && fix.contains("exceeds 2^64 − 1"),
            "{fix}"
        );
    }
    // A spot light's one face: side 2^31 − 1 fits ((2^31 − 1)² × 4 < 2^64), 2^31 does not.
    let side = (1u32 << 31) - 1;
    let (bytes, fix) = estimate(LightKind::Spot, side);
    assert_eq!(bytes, Some(u64::from(side) * u64::from(side) * 4));
    assert!(!fix.contains("no real"), "{fix}");
    assert_eq!(estimate(LightKind::Spot, side + 1).0, None);
    // The largest point-light side that fits.
    let side = 876_706_528u32;
    assert!(6u64
        .checked_mul(u64::from(side) * u64::from(side))
        .and_then(|x| x.checked_mul(4))
        .is_some());
    let (bytes, _) = estimate(LightKind::Point, side);
    assert_eq!(bytes, Some(6 * u64::from(side) * u64::from(side) * 4));
    let (bytes, _) = estimate(LightKind::Point, side + 1);
    assert_eq!(bytes, None);
}

/// Two draws of 2^63 instances each with copies of one material: the sum wrapped to 0 (in a
/// release build; a debug one panicked) and the hint vanished. It is held at 2^64 − 1 and
/// said as a lower bound; the entry's `mesh_instances` (and the totals) the same.
#[test]
fn instance_sums_saturate_and_say_so() {
    let half = 1u64 << 63;
    let draw = |material: &str| Draw {
        mesh: "crate".into(),
        material: material.into(),
        instances: half,
        shadow_casters: half,
    };
    let census = Census::new(SceneParts {
        engine: "test".into(),
        entries: vec![EntryParts {
            id: "crates".into(),
            name: "crates".into(),
            site: None,
            entities: 1,
            visible_entities: Some(1),
            draws: vec![draw("wood0"), draw("wood1")],
            batched: Some(true),
        }],
        meshes: vec![mesh("crate", 12)],
        materials: vec![
            material("wood0", Some("oak")),
            material("wood1", Some("oak")),
        ],
        ..SceneParts::default()
    });
    assert_eq!(census.entries[0].mesh_instances, u64::MAX);
    assert_eq!(census.entries[0].shadow_casters, u64::MAX);
    assert_eq!(census.totals.mesh_instances, u64::MAX);
    assert_eq!(census.totals.shadow_casters, u64::MAX);
    let found = hints(std::slice::from_ref(&census));
    assert_eq!(kinds(&found), vec![HintKind::MaterialDedupCandidate]);
    match &found[0].evidence {
        Evidence::MaterialDedup { instances, .. } => assert_eq!(*instances, u64::MAX),
        other => panic!("{other:?}"),
    }
    assert!(
        found[0]
            .fix
            .contains("among the at least 18446744073709551615 instances"),
        "{}",
        found[0].fix
    );

    // The same census read from a document (its draws as given): the hint is there too.
    let text = serde_json::to_string(&census).unwrap();
    let read = parse_censuses(&text).unwrap();
    assert_eq!(kinds(&hints(&read)), vec![HintKind::MaterialDedupCandidate]);

    // An instancing group of 2^64 − 1 instances says so too.
    let mut many = rocks(INSTANCING_MIN_INSTANCES as usize, Some(false), None);
    many.shared_groups[0].instances = u64::MAX;
    let found = hints(&[many]);
    assert!(
        found[0]
            .fix
            .contains("draw the at least 18446744073709551615 instances"),
        "{}",
        found[0].fix
    );
}
