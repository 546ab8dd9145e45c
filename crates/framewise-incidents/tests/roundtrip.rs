//! Every record type survives a write and a read, and unmeasured fields are absent.

use std::collections::BTreeMap;

use framewise_incidents::{
    parse_line, read_profile, write_profile, Budgets, Camera, Common, Confidence, DropCounts,
    Footprint, FrameSummary, Guess, HeartbeatRecord, HitchRecord, JitterRecord, Profile, Reach,
    Record, ScopeTime, SessionEndRecord, UsermarkRecord, Window, World, WorstFrame, WrittenCounts,
    PROFILE_SCHEMA,
};

fn common() -> Common {
    Common {
        at: "2026-12-01T16:20:00.000Z".into(),
        ..Common::default()
    }
}

fn full_common() -> Common {
    Common {
        at: "2026-12-01T16:20:00.000Z".into(),
        build: Some("b42".into()),
        phase: Some("play".into()),
        ctx: Some("stance=foot,view=fp".into()),
        regime: Some("hardware".into()),
        automated: true,
        session: Some("0123456789abcdef0123456789abcdef".into()),
        world: Some(World {
            spawned: [("enemy".to_owned(), 17)].into(),
            removed: Default::default(),
            inputs_held: vec!["KeyW".into()],
            camera: Some(Camera {
                position: [4.0, 12.0, -30.0],
                quaternion: Some([0.0, 0.7, 0.0, 0.7]),
            }),
        }),
    }
}

fn guess(name: &str) -> Guess {
    Guess {
        guess: name.into(),
        confidence: Confidence::Medium,
        evidence: "pipelines_created +3 in the frame".into(),
        scope: None,
        site: None,
    }
}

fn footprint() -> Footprint {
    Footprint {
        v: 1,
        id: "a3f92c1d".into(),
        key: "hitch|play|pipeline-compile".into(),
    }
}

fn samples() -> Vec<Record> {
    let delta = BTreeMap::from([("pipelines_created".to_owned(), 3i64)]);
    vec![
        Record::Hitch(HitchRecord {
            common: full_common(),
            frame: 8412,
            frame_ms: 41.0,
            median_ms: Some(8.1),
            threshold_ms: 25.0,
            work_ms: Some(39.5),
            gpu_ms: Some(3.0),
            delta: delta.clone(),
            scopes: vec![ScopeTime {
                name: "compile".into(),
                site: Some("src/render.rs:88".into()),
                ms: 30.2,
            }],
            classification: vec![guess("pipeline-compile")],
            dropped_since_last: Some(4),
            footprint: footprint(),
        }),
        Record::Heartbeat(HeartbeatRecord {
            common: common(),
            frame: 600,
            window: Window {
                ms: None,
                frames: 600,
                seconds: Some(10.0),
                median_ms: Some(16.6),
                p95_ms: Some(17.9),
            },
            counters: delta.clone(),
            hitches: 1,
        }),
        Record::SessionEnd(SessionEndRecord {
            common: common(),
            frames: 1200,
            paused_frames: 10,
            duration_s: 20.1,
            written: WrittenCounts {
                hitch: 2,
                heartbeat: 2,
                usermark: 1,
                jitter: 0,
            },
            dropped: DropCounts {
                hitch: 3,
                usermark: 0,
                jitter: 0,
            },
        }),
        Record::Usermark(UsermarkRecord {
            common: common(),
            frame: 900,
            window: Window {
                ms: Some(5000.0),
                frames: 300,
                seconds: None,
                median_ms: Some(16.6),
                p95_ms: None,
            },
            worst_frames: vec![WorstFrame {
                frame: 880,
                ago_ms: 333.0,
                frame_ms: 40.0,
                delta,
                classification: vec![guess("spawn-burst")],
            }],
            note: Some("stutter at the gate".into()),
            footprint: footprint(),
        }),
        Record::Jitter(JitterRecord {
            common: common(),
            track: "unit".into(),
            kind: "snap".into(),
            frame: 77,
            jump: [0.6, 0.3, 0.0],
            units: 0.671,
            unit: Some("m".to_owned()),
            travel_units: 0.133,
            speed: 8.0,
            dt_ms: 16.7,
            median_dt_ms: Some(16.7),
            from: [12.1, 3.0, -4.2],
            to: [12.83, 3.3, -4.2],
            frames: None,
            duration_ms: None,
            amplitude: None,
            coincident: vec!["camera".into()],
            reach: Some(Reach {
                name: "boom".into(),
                before: 10.0,
                after: 9.1,
            }),
            classification: vec![guess("snap")],
            dropped_since_last: None,
            footprint: footprint(),
        }),
    ]
}

#[test]
fn every_record_round_trips_with_its_type() {
    for record in samples() {
        let line = serde_json::to_string(&record).expect("encode");
        assert!(!line.contains('\n'), "one record is one line");
        let value: serde_json::Value = serde_json::from_str(&line).expect("json");
        assert_eq!(value["type"], record.type_name());
        assert_eq!(parse_line(line.as_bytes()), Ok(record));
    }
}

#[test]
fn unmeasured_fields_are_absent_never_null_or_zero() {
    let Record::Hitch(mut hitch) = samples().remove(0) else {
        panic!("the first sample is a hitch");
    };
    hitch.common = common();
    hitch.median_ms = None;
    hitch.work_ms = None;
    hitch.gpu_ms = None;
    hitch.delta.clear();
    hitch.scopes.clear();
    hitch.dropped_since_last = None;
    let line = serde_json::to_string(&Record::Hitch(hitch)).expect("encode");
    assert!(!line.contains("null"), "{line}");
    for absent in [
        "median_ms",
        "work_ms",
        "gpu_ms",
        "delta",
        "scopes",
        "dropped_since_last",
        "build",
        "phase",
        "ctx",
        "regime",
        "session",
        "world",
    ] {
        assert!(
            !line.contains(&format!("\"{absent}\"")),
            "{absent} in {line}"
        );
    }
    // What every record carries is there.
    for present in [
        "\"at\"",
        "\"automated\":false",
        "\"frame_ms\"",
        "\"footprint\"",
    ] {
        assert!(line.contains(present), "{present} missing from {line}");
    }
}

/// A profile with every part filled.
fn sample_profile() -> Profile {
    Profile {
        schema: PROFILE_SCHEMA.into(),
        common: full_common(),
        frame_index: 100,
        window: Window {
            frames: 100,
            ..Window::default()
        },
        frame: FrameSummary {
            median_ms: Some(16.6),
            p95_ms: Some(18.0),
            fps: Some(60.2),
        },
        counters: [("draw_calls".to_owned(), 40)].into(),
        counter_stats: [(
            "draw_calls".to_owned(),
            framewise_incidents::CounterStats {
                count: 100,
                min: 30,
                max: 44,
                avg: 40.25,
                last: 41,
            },
        )]
        .into(),
        scopes: [(
            "render".to_owned(),
            framewise_incidents::ScopeStats {
                count: 100,
                avg_ms: 5.5,
                min_ms: 4.0,
                p50_ms: Some(5.25),
                p95_ms: Some(7.125),
                max_ms: 9.0,
            },
        )]
        .into(),
        class: Some("STEADY".into()),
        budgets: Budgets {
            checked: 1,
            breached: Vec::new(),
        },
        paused: false,
        written: WrittenCounts::default(),
        dropped: DropCounts::default(),
    }
}

#[test]
fn profile_is_replaced_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("profile.json");
    let mut profile = sample_profile();
    write_profile(&path, &profile).expect("write");
    profile.frame_index = 200;
    write_profile(&path, &profile).expect("rewrite");
    assert_eq!(read_profile(&path).expect("read"), profile);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["profile.json"], "no temporary file left behind");
}

/// Every cut of a profile, and every byte of it replaced by each of a few characters of JSON's
/// syntax, reads back as a profile or as a one-line error naming the file: never a panic.
#[test]
fn cut_and_corrupted_profiles_are_one_line_errors_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("profile.json");
    write_profile(&path, &sample_profile()).expect("write");
    let text = std::fs::read_to_string(&path).expect("read");
    let read = |doc: &str| {
        std::fs::write(&path, doc).expect("write");
        match read_profile(&path) {
            Ok(_) => true,
            Err(e) => {
                let e = e.to_string();
                assert!(e.starts_with(&path.display().to_string()), "{e}");
                assert!(!e.contains('\n'), "{doc:?}: {e}");
                false
            }
        }
    };
    assert!(read(&text), "the whole profile reads");
    let whole = text.trim_end().len();
    for cut in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
        assert_eq!(read(&text[..cut]), cut >= whole, "cut at {cut}");
    }
    for (i, c) in text.char_indices() {
        for b in ["{", "]", "\"", ",", "0", "-"] {
            let mut doc = text.clone();
            doc.replace_range(i..i + c.len_utf8(), b);
            read(&doc);
        }
    }
}
