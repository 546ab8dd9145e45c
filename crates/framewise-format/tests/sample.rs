//! The committed sample captures, one per format version, must read forever.

use framewise_format::model::SymbolKind;
use framewise_format::read;

const SAMPLE_V1: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sample-v1.sgpt");
const SAMPLE_V2: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sample-v2.sgpt");

/// The census document the version 2 sample carries.
pub const SAMPLE_V2_CENSUS: &str = r#"{"schema":"framewise.census/1","engine":"sample"}"#;

/// The version 2 sample as the writer writes it today.
pub fn sample_v2() -> Vec<u8> {
    crate::support::capture_with_census(12, 42, true, Some(SAMPLE_V2_CENSUS)).0
}

#[test]
fn sample_v1_reads_forever() {
    let c = read::open(SAMPLE_V1).expect("the committed v1 sample opens");
    assert_eq!(c.header().format_version, 1);
    assert!(c.opened_by_directory());
    assert!(c.verify().is_empty(), "{:?}", c.verify());
    assert_eq!(c.frame_count(), 12);
    let meta = c.meta().expect("meta");
    assert_eq!(meta.build_id, "test-build");
    assert_eq!(meta.capture_level, 2);
    let frames: Vec<_> = c.frames().map(|f| f.expect("frame")).collect();
    assert_eq!(frames[3].index, 3);
    assert_eq!(
        frames
            .iter()
            .map(|f| f.lanes.iter().map(|l| l.spans.len()).sum::<usize>())
            .sum::<usize>(),
        2400
    );
    assert_eq!(frames[0].counters.len(), 20);
    assert_eq!(c.topologies().len(), 1);
    let scope = frames[0].lanes[0].spans[0].scope;
    assert!(matches!(
        c.symbols().get(scope).map(|s| &s.kind),
        Some(SymbolKind::Scope { .. })
    ));
}

#[test]
fn sample_v2_reads_forever() {
    let c = read::open(SAMPLE_V2).expect("the committed v2 sample opens");
    assert_eq!(c.header().format_version, 2);
    assert_eq!(c.header().min_reader_version, 1);
    assert!(c.opened_by_directory());
    assert!(c.verify().is_empty(), "{:?}", c.verify());
    assert_eq!(c.frame_count(), 12);
    let censuses: Vec<_> = c
        .censuses()
        .into_iter()
        .map(|d| d.expect("census"))
        .collect();
    assert_eq!(censuses.len(), 1);
    assert_eq!(censuses[0].document, SAMPLE_V2_CENSUS);
}

/// Regenerates the current version's sample (run once per format version with
/// `--ignored`, then commit it; earlier versions' samples stay as they are).
#[test]
#[ignore]
fn write_sample_v2() {
    std::fs::write(SAMPLE_V2, sample_v2()).expect("write sample");
}
