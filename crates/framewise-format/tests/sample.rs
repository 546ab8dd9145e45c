//! The committed sample capture for format version 1 must read forever.

use framewise_format::model::SymbolKind;
use framewise_format::read;

const SAMPLE_V1: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sample-v1.sgpt");

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

/// Regenerates the sample (run once per format version with `--ignored`, then commit it).
#[test]
#[ignore]
fn write_sample_v1() {
    let (bytes, _, _) = crate::support::capture(12, 42, true);
    std::fs::write(SAMPLE_V1, bytes).expect("write sample");
}
