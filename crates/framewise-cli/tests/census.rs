//! `framewise census`: a capture's censuses or census.json, with their hints, in every
//! format; no census is inconclusive; bad input is one line.

use framewise_census::{
    AssetCounts, Census, CensusFile, Draw, EntryParts, LightInfo, LightKind, MaterialInfo,
    MeshInfo, SceneParts,
};

use crate::support::{write_game, write_game_with_censuses, Dir, Game};

/// A scene with a flock of 12 unbatched boids, 4 crates with copies of one material, a
/// statue, and a shadow-casting point light; `meshes_loaded` as the loaded mesh count.
pub fn scene(meshes_loaded: u64) -> Census {
    let mut entries: Vec<EntryParts> = (0..12)
        .map(|i| entry(&format!("boid{i}"), "boid", "feather", "src/flock.rs:20"))
        .collect();
    entries.extend((0..4).map(|i| {
        entry(
            &format!("crate{i}"),
            "crate",
            &format!("wood{i}"),
            "src/props.rs:44",
        )
    }));
    entries.push(entry("statue", "statue", "marble", "src/plaza.rs:7"));
    let mesh = |id: &str, triangles| MeshInfo {
        id: id.into(),
        name: id.into(),
        triangles,
        ..MeshInfo::default()
    };
    let material = |id: &str, print: &str| MaterialInfo {
        id: id.into(),
        name: id.into(),
        fingerprint: Some(print.into()),
        textures: vec![],
    };
    Census::new(SceneParts {
        engine: "test".into(),
        frame: None,
        entries,
        meshes: vec![
            mesh("boid", 120),
            mesh("crate", 12),
            mesh("statue", 200_000),
        ],
        materials: std::iter::once(material("feather", "f"))
            .chain((0..4).map(|i| material(&format!("wood{i}"), "oak")))
            .chain(std::iter::once(material("marble", "m")))
            .collect(),
        lights: vec![LightInfo {
            id: "lamp".into(),
            name: "Lamp".into(),
            kind: LightKind::Point,
            shadows: true,
            shadow_map_px: Some(1024),
            range: Some(20.0),
            site: Some("src/lights.rs:3".into()),
        }],
        assets: AssetCounts {
            meshes: meshes_loaded,
            materials: 6,
            textures: 0,
        },
        ..SceneParts::default()
    })
}

fn entry(id: &str, mesh: &str, material: &str, site: &str) -> EntryParts {
    EntryParts {
        id: id.into(),
        name: id.into(),
        site: Some(site.into()),
        entities: 1,
        visible_entities: Some(1),
        draws: vec![Draw {
            mesh: mesh.into(),
            material: material.into(),
            instances: 1,
            shadow_casters: 1,
        }],
        batched: Some(false),
    }
}

fn documents(loaded: &[u64]) -> Vec<String> {
    loaded
        .iter()
        .map(|&n| serde_json::to_string(&scene(n)).unwrap())
        .collect()
}

#[test]
fn census_of_a_capture_lists_totals_entries_and_hints() {
    let dir = Dir::new();
    write_game_with_censuses(
        &dir.path("game.sgpt"),
        &Game::default(),
        &documents(&[3, 4, 5]),
    );
    let json = dir
        .run(&["census", "game.sgpt", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(json["schema"], "framewise.census-report/1");
    assert_eq!(json["source"], "capture");
    assert_eq!(json["censuses"], 3);
    assert_eq!(
        json["census"]["totals"]["triangles"],
        12 * 120 + 4 * 12 + 200_000
    );
    assert!(json["census"]["totals"]["draw_calls"].is_null());
    assert_eq!(json["history"].as_array().unwrap().len(), 3);
    assert_eq!(json["history"][2]["assets"]["meshes"], 5);
    let kinds: Vec<&str> = json["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "instancing-candidate",
            "material-dedup-candidate",
            "shadow-caster-light",
            "undisposed-suspect"
        ]
    );
    assert_eq!(json["hints"][0]["site"], "src/flock.rs:20");
    assert_eq!(json["hints"][1]["evidence"]["materials"][3], "wood3");
    assert_eq!(json["hints"][3]["site"], "unknown");
    assert_eq!(json["defects"].as_array().unwrap().len(), 0);

    let text = dir
        .run(&["census", "game.sgpt", "--top", "2"])
        .expect(0)
        .stdout;
    assert!(
        text.starts_with("census of game.sgpt (capture, 3 censuses;"),
        "{text}"
    );
    assert!(text.contains("201,488 triangles"), "{text}");
    assert!(
        text.contains("draw calls — (a rendered frame measures them)"),
        "{text}"
    );
    // The heaviest entry first; --top cuts the list and says so.
    let statue = text.find("statue").unwrap();
    assert!(statue < text.find("boid").unwrap(), "{text}");
    assert!(text.contains("… 15 more entries"), "{text}");
    assert!(
        text.contains("instancing-candidate — mesh boid × material feather"),
        "{text}"
    );
    assert!(text.contains("site: src/flock.rs:20"), "{text}");

    let md = dir
        .run(&["census", "game.sgpt", "--format", "markdown"])
        .expect(0)
        .stdout;
    assert!(md.contains("### Hints"), "{md}");
    assert!(md.contains("| statue |"), "{md}");
    let gh = dir
        .run(&["census", "game.sgpt", "--format", "github"])
        .expect(0)
        .stdout;
    assert!(
        gh.lines()
            .any(|l| l.starts_with("::warning") && l.contains("shadow-caster-light")),
        "{gh}"
    );
}

#[test]
fn census_reads_the_directory_file_by_default() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path(".framewise")).unwrap();
    let file = CensusFile::new(vec![scene(6)]);
    dir.write(
        ".framewise/census.json",
        serde_json::to_string(&file).unwrap(),
    );
    let json = dir.run(&["census", "--json"]).expect(0).json();
    assert_eq!(json["source"], "census-file");
    assert_eq!(json["censuses"], 1);
    assert!(json["input"].as_str().unwrap().ends_with("census.json"));
    // One census: no series, no undisposed-suspect.
    assert!(json["hints"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["kind"] != "undisposed-suspect"));
}

#[test]
fn a_capture_without_a_census_is_inconclusive() {
    let dir = Dir::new();
    write_game(&dir.path("plain.sgpt"), &Game::default());
    let run = dir.run(&["census", "plain.sgpt"]).expect(2);
    assert!(run.stdout.contains("no census recorded"), "{}", run.stdout);
    let json = dir
        .run(&["census", "plain.sgpt", "--json"])
        .expect(2)
        .json();
    assert!(json["census"].is_null());
    assert_eq!(json["censuses"], 0);
}

#[test]
fn bad_input_is_one_line() {
    let dir = Dir::new();
    dir.write("trace.json", r#"{"traceEvents": []}"#);
    dir.write("empty.sgpt", b"");
    dir.write("junk.bin", [0xFFu8, 0x00, 0x12]);
    for (args, says) in [
        (vec!["census", "missing.sgpt"], "missing.sgpt"),
        (vec!["census", "trace.json"], "no \"schema\" field"),
        (vec!["census", "empty.sgpt"], "empty"),
        (vec!["census", "junk.bin"], "not UTF-8"),
        (vec!["census", "."], "directory"),
        (vec!["census", "--dir", "nowhere"], "not a directory"),
    ] {
        let run = dir.run(&args).expect(4);
        let line = run.one_error_line();
        assert!(line.contains(says), "{args:?}: {line}");
        assert!(run.stdout.is_empty());
    }
    // The default file, before any census was recorded.
    std::fs::create_dir(dir.path(".framewise")).unwrap();
    let run = dir.run(&["census"]).expect(4);
    assert!(
        run.one_error_line().contains("census.json: no census yet"),
        "{}",
        run.stderr
    );
}
