//! Cutting a capture at every byte offset: exhaustive, not sampled.

use crate::support;
use framewise_format::read::{self, Defect};
use framewise_format::OpenError;

#[test]
fn every_cut_recovers_exactly_the_records_completed_before_it() {
    let (bytes, frames, _) = support::small_capture(200);
    let full = read::from_bytes(bytes.clone()).expect("open");
    assert!(full.verify().is_empty());
    // (end offset, frame index) of every frame record, in file order.
    let ends: Vec<(u64, u64)> = full
        .frame_entries()
        .map(|e| (e.offset + e.length, e.index))
        .collect();
    assert_eq!(ends.len(), 200);
    let record_starts: Vec<u64> = full.records().iter().map(|r| r.offset).collect();

    for cut in 0..bytes.len() {
        let c = match read::from_bytes(bytes[..cut].to_vec()) {
            Ok(c) => c,
            Err(OpenError::TooShort { len }) => {
                assert!(cut < 32 && len == cut as u64);
                continue;
            }
            Err(e) => panic!("cut at {cut}: {e}"),
        };
        let expected: Vec<u64> = ends
            .iter()
            .filter(|(end, _)| *end <= cut as u64)
            .map(|(_, i)| *i)
            .collect();
        let mut got = Vec::with_capacity(expected.len());
        for f in c.frames() {
            let f = f.unwrap_or_else(|d| panic!("cut at {cut}: intact frame failed: {d}"));
            assert!(
                c.unresolved(&f).is_empty(),
                "cut at {cut}: frame {} has unresolved names",
                f.index
            );
            assert_eq!(f, frames[f.index as usize], "cut at {cut}");
            got.push(f.index);
        }
        assert_eq!(got, expected, "cut at {cut}");
        // A defect names the cut: a truncated tail at the start of the incomplete record,
        // or, when the cut falls on a record boundary, the end of the last intact record.
        let names_cut = c.defects().iter().any(|d| match d {
            // Mid-record: the incomplete record's start and the bytes up to the cut.
            // On a boundary: the cut itself, and how far short of its directory it is.
            Defect::TruncatedTail { offset, bytes_lost } => {
                (offset + bytes_lost == cut as u64 && record_starts.contains(offset))
                    || (*offset == cut as u64 && *bytes_lost > 0)
            }
            Defect::Unclosed { end_offset } => *end_offset == cut as u64,
            _ => false,
        });
        assert!(
            names_cut,
            "cut at {cut}: no defect names it: {:?}",
            c.defects()
        );
        assert!(
            c.defects()
                .iter()
                .any(|d| matches!(d, Defect::DirectoryUnusable { .. })),
            "cut at {cut}: the CLOSED header's directory is gone and must be reported"
        );
        assert!(
            !c.defects()
                .iter()
                .any(|d| matches!(d, Defect::Corrupt { .. })),
            "cut at {cut}: {:?}",
            c.defects()
        );
    }
}
