//! The census's derived counts, its JSON, the texture estimate and the census file.

use framewise_census::*;

use crate::scene::Scene;

#[test]
fn counts_are_derived_from_the_walk() {
    let census = Scene::planted(30, 5, 200_000).census();
    let t = &census.totals;
    assert_eq!(t.entities, 36);
    assert_eq!(t.visible_entities, Some(36));
    assert_eq!(t.mesh_instances, 36);
    assert_eq!(t.triangles, 30 * 120 + 5 * 12 + 200_000);
    assert_eq!(t.unique_meshes, 3);
    assert_eq!(t.unique_materials, 1 + 5 + 1);
    // Only boid + feather is used by more than one instance.
    assert_eq!(t.shared_groups, 1);
    assert_eq!(census.shared_groups[0].mesh, "boid");
    assert_eq!(census.shared_groups[0].instances, 30);
    assert_eq!(
        census.shared_groups[0].sites,
        vec!["src/flock.rs:20".to_owned()]
    );
    assert_eq!(census.shared_groups[0].batched, Some(true));
    assert_eq!(t.shadow_casters, 36);
    assert_eq!(t.draw_calls, None);
    let first = census.entries_by_triangles()[0];
    assert_eq!(first.id, "statue");
    assert_eq!(first.triangles, 200_000);
}

#[test]
fn an_entry_with_several_draws_counts_each() {
    let census = Census::new(SceneParts {
        engine: "test".into(),
        entries: vec![EntryParts {
            id: "car".into(),
            name: "car".into(),
            entities: 1,
            visible_entities: None,
            draws: vec![
                Draw {
                    mesh: "body".into(),
                    material: "paint".into(),
                    instances: 1,
                    shadow_casters: 1,
                },
                Draw {
                    mesh: "wheel".into(),
                    material: "rubber".into(),
                    instances: 4,
                    shadow_casters: 0,
                },
            ],
            ..EntryParts::default()
        }],
        meshes: vec![
            MeshInfo {
                id: "body".into(),
                triangles: 1000,
                ..MeshInfo::default()
            },
            MeshInfo {
                id: "wheel".into(),
                triangles: 200,
                ..MeshInfo::default()
            },
        ],
        ..SceneParts::default()
    });
    let car = &census.entries[0];
    assert_eq!(car.mesh_instances, 5);
    assert_eq!(car.triangles, 1000 + 4 * 200);
    assert_eq!((car.unique_meshes, car.unique_materials), (2, 2));
    assert_eq!(car.shadow_casters, 1);
    // Unknown visibility anywhere makes the total unknown, never 0.
    assert_eq!(census.totals.visible_entities, None);
    // The four wheels of one entry are a shared group of unknown batching.
    assert_eq!(census.shared_groups.len(), 1);
    assert_eq!(census.shared_groups[0].batched, None);
}

#[test]
fn json_says_null_for_what_only_a_frame_measures() {
    let census = Scene::planted(3, 2, 1000).census();
    let json = serde_json::to_value(&census).unwrap();
    assert_eq!(json["schema"], CENSUS_SCHEMA);
    assert!(json["totals"]["draw_calls"].is_null());
    assert!(json["totals"].get("texture_bytes_estimate").is_some());
    let text = serde_json::to_string(&census).unwrap();
    assert_eq!(parse_census(&text).unwrap(), census);
}

#[test]
fn texture_estimate_counts_every_mip() {
    // 1024² with 11 mips: (4^11 − 1) / 3 texels, 4 bytes each.
    assert_eq!(
        estimate_texture_bytes(1024, 1024, 1, 11, 4.0),
        1_398_101 * 4
    );
    assert_eq!(
        estimate_texture_bytes(1024, 1024, 1, 1, 4.0),
        1024 * 1024 * 4
    );
    // Non-square, odd sizes round each level up; 6 layers for a cube.
    assert_eq!(estimate_texture_bytes(3, 1, 6, 2, 1.0), (3 + 2) * 6);
    // Block-compressed: half a byte per texel.
    assert_eq!(estimate_texture_bytes(4, 4, 1, 1, 0.5), 8);
}

#[test]
fn the_file_keeps_the_newest_censuses() {
    let one = Scene::planted(2, 1, 10).census();
    let mut all = Vec::new();
    for frame in 0..70 {
        let mut c = one.clone();
        c.frame = Some(frame);
        all.push(c);
    }
    let file = CensusFile::new(all);
    assert_eq!(file.censuses.len(), 64);
    assert_eq!(file.censuses[0].frame, Some(6));
    let text = serde_json::to_string(&file).unwrap();
    let back = parse_censuses(&text).unwrap();
    assert_eq!(back.len(), 64);
    assert_eq!(back[63].frame, Some(69));
    // A single census reads as a series of one.
    let single = serde_json::to_string(&one).unwrap();
    assert_eq!(parse_censuses(&single).unwrap(), vec![one]);
}

#[test]
fn bad_documents_are_one_line_errors() {
    let cases = [
        ("", "not a census document"),
        (
            "[1, 2]",
            "not a census document: an array, where a JSON object",
        ),
        ("[]", "not a census document: an array, where a JSON object"),
        ("42", "not a census document: a number"),
        ("null", "not a census document: null"),
        ("{\"a\": 1}", "no \"schema\" field"),
        ("{\"schema\": \"framewise.profile/1\"}", "is neither"),
        (
            "{\"schema\": \"framewise.census/1\", \"engine\": 3}",
            "not a census document",
        ),
        (
            "{\"schema\": \"framewise.census-file/1\"}",
            "missing field `censuses`",
        ),
    ];
    for (text, expected) in cases {
        let err = parse_censuses(text).unwrap_err().to_string();
        assert!(err.contains(expected), "{text:?}: {err}");
        assert!(!err.contains('\n'), "{err}");
    }
    // A file is not one census.
    let file = serde_json::to_string(&CensusFile::new(vec![])).unwrap();
    assert!(parse_census(&file)
        .unwrap_err()
        .to_string()
        .contains("is neither"));
}

#[test]
fn the_file_is_written_whole_and_reads_back() {
    // A directory of its own: one named by the process id could be left over, with whatever
    // a killed run left in it, from an earlier process that had the same id.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let path = dir.join(CENSUS_FILE);
    let one = Scene::planted(2, 1, 10).census();
    let many: Vec<Census> = (0..70).map(|_| one.clone()).collect();
    write_census_file(&path, &many).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(parse_censuses(&text).unwrap().len(), 64);
    // Nothing left beside it.
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from(CENSUS_FILE)]);
}

#[test]
fn an_entry_drawing_one_pair_twice_is_listed_once_in_its_group() {
    let draw = Draw {
        mesh: "leaf".into(),
        material: "green".into(),
        instances: 3,
        shadow_casters: 0,
    };
    let census = Census::new(SceneParts {
        engine: "test".into(),
        entries: vec![EntryParts {
            id: "tree".into(),
            name: "tree".into(),
            entities: 1,
            draws: vec![draw.clone(), draw],
            ..EntryParts::default()
        }],
        ..SceneParts::default()
    });
    assert_eq!(census.shared_groups.len(), 1);
    assert_eq!(census.shared_groups[0].instances, 6);
    assert_eq!(census.shared_groups[0].entries, vec!["tree".to_owned()]);
}
