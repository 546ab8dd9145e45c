//! `census::read_censuses`: a capture's census records (good, unparsable, damaged) and
//! census documents, and one-line errors for everything else.

use std::io::Cursor;
use std::path::PathBuf;

use crate::inspect::Temp;

use framewise_analysis::census::{read_censuses, CensusError, CensusSource};
use framewise_analysis::model::DefectKind;
use framewise_census::{
    AssetCounts, Census, CensusFile, Draw, EntryParts, HintKind, MeshInfo, SceneParts,
};
use framewise_format::model::AdapterType;
use framewise_format::Writer;

fn census(meshes_loaded: u64) -> Census {
    Census::new(SceneParts {
        engine: "test".into(),
        entries: (0..10)
            .map(|i| EntryParts {
                id: format!("rock{i}"),
                name: "rock".into(),
                site: Some("src/rocks.rs:9".into()),
                entities: 1,
                visible_entities: Some(1),
                draws: vec![Draw {
                    mesh: "rock".into(),
                    material: "stone".into(),
                    instances: 1,
                    shadow_casters: 1,
                }],
                batched: Some(false),
            })
            .collect(),
        meshes: vec![MeshInfo {
            id: "rock".into(),
            triangles: 300,
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

/// A capture whose census records carry these documents, a frame between each.
fn capture(documents: &[String]) -> Vec<u8> {
    let symbols = crate::sgpt::symbols();
    let mut w = Writer::new(
        Cursor::new(Vec::new()),
        &crate::sgpt::meta(AdapterType::Hardware),
        &symbols,
    )
    .expect("writer");
    for (i, doc) in documents.iter().enumerate() {
        w.write_frame(&crate::sgpt::frame(i as u64), &symbols)
            .expect("frame");
        w.write_census(doc).expect("census");
    }
    w.finish_and_close(&[]).expect("close").into_inner()
}

#[test]
fn a_capture_gives_its_censuses_and_their_hints() {
    let t = Temp::new("capture");
    let docs: Vec<String> = [3, 5, 8]
        .iter()
        .map(|&n| serde_json::to_string(&census(n)).expect("json"))
        .collect();
    let path = t.write("game.sgpt", &capture(&docs));
    let read = read_censuses(&path).expect("reads");
    assert_eq!(read.source, CensusSource::Capture);
    assert_eq!(read.censuses.len(), 3);
    assert!(read.defects.is_empty(), "{:?}", read.defects);
    let kinds: Vec<HintKind> = read.hints.iter().map(|h| h.kind).collect();
    assert_eq!(
        kinds,
        [HintKind::InstancingCandidate, HintKind::UndisposedSuspect]
    );
}

#[test]
fn a_census_that_does_not_parse_is_a_defect_and_the_others_read() {
    let t = Temp::new("badjson");
    let docs = vec![
        serde_json::to_string(&census(1)).expect("json"),
        r#"{"schema":"framewise.census/1","engine":7}"#.to_owned(),
    ];
    let path = t.write("game.sgpt", &capture(&docs));
    let read = read_censuses(&path).expect("reads");
    assert_eq!(read.censuses.len(), 1);
    assert_eq!(read.defects.len(), 1);
    let d = &read.defects[0];
    assert_eq!(d.kind, DefectKind::CorruptRange);
    assert!(
        d.message.starts_with("census record at offset"),
        "{}",
        d.message
    );
    assert!(d.offset.is_some());
}

#[test]
fn a_census_file_and_a_single_census_read() {
    let t = Temp::new("file");
    let file = CensusFile::new(vec![census(1), census(2)]);
    let path = t.write(
        "census.json",
        serde_json::to_string(&file).expect("json").as_bytes(),
    );
    let read = read_censuses(&path).expect("reads");
    assert_eq!(read.source, CensusSource::CensusFile);
    assert_eq!(read.censuses.len(), 2);
    let single = t.write(
        "one.json",
        serde_json::to_string(&census(1)).expect("json").as_bytes(),
    );
    assert_eq!(read_censuses(&single).expect("reads").censuses.len(), 1);
}

#[test]
fn everything_else_is_a_one_line_error() {
    let t = Temp::new("errors");
    let cases: Vec<(PathBuf, &str)> = vec![
        (t.0.join("missing.json"), "cannot read"),
        (
            t.0.clone(),
            "is a directory: give a capture (.sgpt) or a census",
        ),
        (
            t.write("empty", b""),
            "empty file (0 bytes): neither an .sgpt capture nor a census document",
        ),
        (
            t.write("trace.json", br#"{"traceEvents":[]}"#),
            "no \"schema\" field",
        ),
        (
            t.write("garbage.bin", &[0xFF, 0xFE, 0x00, 0x01]),
            "not UTF-8",
        ),
        (t.write("text.txt", b"hello"), "not a census document"),
        (t.write("bad.sgpt", b"SGPT\x01\x00"), "sgpt:"),
    ];
    for (path, expected) in cases {
        let err: CensusError = read_censuses(&path).expect_err("refused");
        let message = err.to_string();
        assert!(message.contains(expected), "{}: {message}", path.display());
        assert!(!message.contains('\n'), "{message}");
    }
}

/// A census record whose checksum holds but whose payload does not decode (a writer's bug, not
/// a cut) is a defect for `census` and for `inspect` alike: inspect lists what the reader's
/// own `verify` finds, census records included.
#[test]
fn a_census_record_that_does_not_decode_is_a_defect_census_and_inspect_both_name() {
    let t = Temp::new("census-undecodable");
    let docs: Vec<String> = [1, 2]
        .iter()
        .map(|&n| serde_json::to_string(&census(n)).expect("json"))
        .collect();
    let mut bytes = capture(&docs);
    let clean = framewise_format::read::from_bytes(bytes.clone()).expect("opens");
    let records = clean.censuses();
    let first = records[0].as_ref().expect("the census reads");
    let at = first.offset as usize;
    // The record: "SREC", its type, the payload's length and CRC, then the payload, whose
    // last byte (the JSON's closing brace) becomes a byte that is not UTF-8; the CRC is
    // made to hold again.
    let length = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().expect("4 bytes")) as usize;
    let payload = at + 16..at + 16 + length;
    bytes[payload.end - 1] = 0xff;
    let crc = crc32fast::hash(&bytes[payload]);
    bytes[at + 12..at + 16].copy_from_slice(&crc.to_le_bytes());
    let path = t.write("undecodable-census.sgpt", &bytes);

    let read = read_censuses(&path).expect("reads");
    assert_eq!(read.censuses.len(), 1, "the other census reads");
    assert_eq!(read.defects.len(), 1, "{:?}", read.defects);

    let reader = framewise_format::read::open(&path).expect("opens");
    assert!(
        reader.defects().is_empty(),
        "the record is intact as framed"
    );
    let expected: Vec<String> = reader.verify().iter().map(ToString::to_string).collect();
    assert_eq!(expected.len(), 1, "{expected:?}");
    let inspection = framewise_analysis::inspect::inspect(&path).expect("inspects");
    let messages: Vec<String> = inspection
        .defects
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(messages, expected);
}

/// A frame that does not decode (its checksum fails) is found only by decoding it: `census`
/// reports it as `inspect` and `summarize` do, not only what the reader found at open.
#[test]
fn census_reports_a_frame_that_does_not_decode() {
    let t = Temp::new("census-bad-frame");
    let docs: Vec<String> = [1, 2, 3]
        .iter()
        .map(|&n| serde_json::to_string(&census(n)).expect("json"))
        .collect();
    let clean = capture(&docs);
    // The first byte whose flip leaves the file opening clean but a frame undecodable.
    let bytes = (0..clean.len())
        .map(|i| {
            let mut b = clean.clone();
            b[i] ^= 0x5a;
            b
        })
        .find(|b| {
            framewise_format::read::from_bytes(b.clone()).is_ok_and(|r| {
                r.defects().is_empty()
                    && r.censuses().iter().all(Result::is_ok)
                    && !r.verify().is_empty()
            })
        })
        .expect("a byte inside a frame's payload");
    let path = t.write("bad-frame.sgpt", &bytes);
    let read = read_censuses(&path).expect("reads");
    assert_eq!(read.censuses.len(), 3, "every census still reads");
    let reader = framewise_format::read::open(&path).expect("opens");
    let expected: Vec<String> = reader.verify().iter().map(ToString::to_string).collect();
    let got: Vec<String> = read.defects.iter().map(|d| d.message.clone()).collect();
    assert_eq!(got, expected);
    assert!(read
        .defects
        .iter()
        .all(|d| d.kind == DefectKind::CorruptRange));
}
