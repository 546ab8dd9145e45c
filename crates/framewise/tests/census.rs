//! `Session::record_census`: a `CENS` record in the capture among the frames, and the
//! session's censuses in `.framewise/census.json` when the live log is on.

use framewise::{Session, Warning, WriterMode};
use framewise_census::{
    parse_census, parse_censuses, AssetCounts, Census, Draw, EntryParts, MeshInfo, SceneParts,
};

use crate::common;

fn census(meshes_loaded: u64) -> Census {
    Census::new(SceneParts {
        engine: "test".into(),
        entries: vec![EntryParts {
            id: "rock".into(),
            name: "rock".into(),
            entities: 1,
            draws: vec![Draw {
                mesh: "rock".into(),
                material: "stone".into(),
                instances: 1,
                shadow_casters: 1,
            }],
            ..EntryParts::default()
        }],
        meshes: vec![MeshInfo {
            id: "rock".into(),
            triangles: 90,
            ..MeshInfo::default()
        }],
        assets: AssetCounts {
            meshes: meshes_loaded,
            materials: 1,
            textures: 0,
        },
        ..SceneParts::default()
    })
}

#[test]
fn censuses_go_into_the_capture_and_the_directory() {
    let _serial = common::serial();
    let (tmp, capture) = common::temp_capture("census");
    let dir = tmp.path().join(".framewise");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .incident_dir(&dir)
        .start(capture.as_path())
        .unwrap();
    for frame in 0..10u64 {
        if frame == 2 || frame == 7 {
            assert!(session.record_census(&census(frame)));
        }
        session.end_frame();
    }
    let mut given = census(99);
    given.frame = Some(1234);
    assert!(session.record_census(&given));
    session.stop().unwrap();

    let c = common::open(&capture);
    assert!(c.verify().is_empty(), "{:?}", c.verify());
    let docs: Vec<_> = c.censuses().into_iter().map(Result::unwrap).collect();
    assert_eq!(docs.len(), 3);
    let read: Vec<Census> = docs
        .iter()
        .map(|d| parse_census(&d.document).unwrap())
        .collect();
    // The open frame's index where the census had none; the census's own where it had one.
    assert_eq!(
        read.iter().map(|c| c.frame).collect::<Vec<_>>(),
        [Some(2), Some(7), Some(1234)]
    );
    assert_eq!(read[0], {
        let mut expected = census(2);
        expected.frame = Some(2);
        expected
    });
    // In file order among the frames: taken while frame 2 was open, the census is written
    // after frame 1's record and before frame 2's (a frame is written once it closes).
    let frame1 = c.frame_entries().find(|e| e.index == 1).unwrap();
    let frame2 = c.frame_entries().find(|e| e.index == 2).unwrap();
    assert!(frame1.offset < docs[0].offset && docs[0].offset < frame2.offset);

    let file = std::fs::read_to_string(dir.join("census.json")).unwrap();
    assert_eq!(parse_censuses(&file).unwrap(), read);
}

#[test]
fn without_the_live_log_only_the_capture_holds_them() {
    let _serial = common::serial();
    let (tmp, capture) = common::temp_capture("census-nolog");
    let dir = tmp.path().join(".framewise");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .incident_dir(&dir)
        .incident_log(false)
        .start(capture.as_path())
        .unwrap();
    assert!(session.record_census(&census(1)));
    session.end_frame();
    session.stop().unwrap();
    assert!(!dir.join("census.json").exists());
    assert_eq!(common::open(&capture).censuses().len(), 1);
}

#[test]
fn an_unwritable_census_file_warns_once_and_the_capture_goes_on() {
    let _serial = common::serial();
    let (tmp, capture) = common::temp_capture("census-unwritable");
    let dir = tmp.path().join(".framewise");
    std::fs::create_dir_all(dir.join("census.json")).unwrap(); // a directory in its place
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .incident_dir(&dir)
        .start(capture.as_path())
        .unwrap();
    for _ in 0..3 {
        assert!(session.record_census(&census(1)));
        session.end_frame();
    }
    let report = session.stop().unwrap();
    let census_warnings: Vec<_> = report
        .warnings
        .iter()
        .filter(|w| matches!(w, Warning::CensusFile { .. }))
        .collect();
    assert_eq!(census_warnings.len(), 1, "{:?}", report.warnings);
    assert!(census_warnings[0].to_string().contains("census.json"));
    assert_eq!(common::open(&capture).censuses().len(), 3);
}
