//! The `CENS` record (format version 2): written between frames, read back by the directory
//! and by a scan, skipped by a reader that does not know it, and damaged, cut and malformed
//! without losing anything else.

use std::io::Cursor;

use crate::support;
use framewise_format::container::{record_header, CENS};
use framewise_format::model::Frame;
use framewise_format::read::{self, Defect};
use framewise_format::{fourcc, payload, Writer};

const DOC: &str = r#"{"schema":"framewise.census/1","engine":"test","note":"naïve ✓"}"#;

/// Four frames with a census after the second; returns the bytes, the frames and the census
/// record's offset and length.
fn with_census(close: bool) -> (Vec<u8>, Vec<Frame>, u64, u64) {
    let symbols = support::symbols();
    let mut rng = support::Rng::new(7);
    let mut w =
        Writer::new(Cursor::new(Vec::new()), &support::meta(), &symbols).expect("as written");
    let mut frames = Vec::new();
    let mut census_at = (0, 0);
    for i in 0..4 {
        let f = support::frame(&mut rng, i, 1_000_000 + i * 20_000_000);
        w.write_frame(&f, &symbols).expect("as written");
        frames.push(f);
        if i == 1 {
            let before = w.bytes_written();
            w.write_census(DOC).expect("as written");
            census_at = (before, w.bytes_written() - before);
        }
    }
    let bytes = if close {
        w.finish_and_close(&[]).expect("as written").into_inner()
    } else {
        w.get_ref().expect("as written").get_ref().clone()
    };
    (bytes, frames, census_at.0, census_at.1)
}

#[test]
fn a_census_reads_back_by_directory_and_by_scan() {
    for close in [true, false] {
        let (bytes, frames, offset, _) = with_census(close);
        let c = read::from_bytes(bytes).expect("as written");
        assert_eq!(c.opened_by_directory(), close);
        let docs: Vec<_> = c
            .censuses()
            .into_iter()
            .map(|r| r.expect("as written"))
            .collect();
        assert_eq!(docs.len(), 1);
        assert_eq!((docs[0].offset, docs[0].document.as_str()), (offset, DOC));
        let back: Vec<Frame> = c.frames().map(|r| r.expect("as written")).collect();
        assert_eq!(back, frames);
        // Known to this reader: no UnknownRecord (an unclosed file reports only that).
        assert!(
            !c.defects()
                .iter()
                .any(|d| matches!(d, Defect::UnknownRecord { .. })),
            "{:?}",
            c.defects()
        );
        assert_eq!(c.verify().len(), usize::from(!close));
    }
    assert_eq!(framewise_format::FORMAT_VERSION, 2);
    assert_eq!(framewise_format::MIN_READER_VERSION, 1);
}

/// What a version 1 reader sees: an intact record of a type it does not know. Renamed to a
/// type this reader does not know either (the checksum covers only the payload, so the
/// record stays intact), it takes the path a version 1 reader's scan takes: skipped,
/// reported as `UnknownRecord`, every frame read as before.
#[test]
fn a_reader_that_does_not_know_it_skips_it() {
    let (mut bytes, frames, offset, _) = with_census(false);
    let at = offset as usize + 4;
    assert_eq!(&bytes[at..at + 4], b"CENS");
    bytes[at..at + 4].copy_from_slice(b"CENZ");
    let c = read::from_bytes(bytes).expect("as written");
    assert!(c.censuses().is_empty());
    assert!(c.defects().iter().any(|d| matches!(
        d,
        Defect::UnknownRecord { offset: o, record_type } if *o == offset && *record_type == fourcc(b"CENZ")
    )));
    let back: Vec<Frame> = c.frames().map(|r| r.expect("as written")).collect();
    assert_eq!(back, frames);
}

#[test]
fn every_cut_keeps_the_census_only_when_whole() {
    let (bytes, _, offset, length) = with_census(true);
    for cut in 32..bytes.len() {
        let c = read::from_bytes(bytes[..cut].to_vec()).expect("as written");
        let docs = c.censuses();
        if (cut as u64) < offset + length {
            assert!(docs.is_empty(), "cut at {cut}");
        } else {
            assert_eq!(docs.len(), 1, "cut at {cut}");
            assert_eq!(docs[0].as_ref().expect("as written").document, DOC);
        }
    }
}

#[test]
fn a_damaged_census_is_skipped_and_the_frames_after_it_read() {
    let (mut bytes, frames, offset, length) = with_census(false);
    // A flipped bit in the document: the record is no longer intact.
    bytes[(offset + length) as usize - 3] ^= 0x20;
    let c = read::from_bytes(bytes).expect("as written");
    assert!(c.censuses().is_empty());
    assert!(c
        .defects()
        .iter()
        .any(|d| matches!(d, Defect::Corrupt { offset: o, .. } if *o == offset)));
    let back: Vec<Frame> = c.frames().map(|r| r.expect("as written")).collect();
    assert_eq!(back, frames);
}

/// Replaces the census record of an unclosed capture by one with this payload (a correct
/// checksum over a payload this version refuses).
fn with_payload(payload: &[u8]) -> (read::Capture, u64) {
    let (bytes, _, offset, length) = with_census(false);
    let (start, end) = (offset as usize, (offset + length) as usize);
    let mut out = bytes[..start].to_vec();
    out.extend_from_slice(&record_header(CENS, payload));
    out.extend_from_slice(payload);
    out.extend_from_slice(&bytes[end..]);
    (read::from_bytes(out).expect("as written"), offset)
}

#[test]
fn a_malformed_census_payload_is_a_bad_payload() {
    let mut good = Vec::new();
    payload::encode_census(&mut good, DOC);
    assert_eq!(payload::decode_census(&good).expect("as written").1, DOC);
    let mut trailing = good.clone();
    trailing.push(0);
    let mut bad_utf8 = Vec::new();
    payload::encode_census(&mut bad_utf8, "ab");
    let n = bad_utf8.len();
    bad_utf8[n - 1] = 0xFF;
    let mut too_long = vec![0u8];
    too_long.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0x0F]); // a 32 M string in 6 bytes
    for (name, payload) in [
        ("trailing byte", trailing),
        ("invalid UTF-8", bad_utf8),
        ("length past the payload", too_long),
        ("no string", vec![0u8]),
    ] {
        let (c, offset) = with_payload(&payload);
        let docs = c.censuses();
        assert_eq!(docs.len(), 1, "{name}");
        match &docs[0] {
            Err(Defect::BadPayload {
                offset: o,
                record_type,
                ..
            }) => {
                assert_eq!((*o, *record_type), (offset, CENS), "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }
        assert!(
            c.verify().iter().any(
                |d| matches!(d, Defect::BadPayload { record_type, .. } if *record_type == CENS)
            ),
            "{name}"
        );
        assert_eq!(c.frame_count(), 4, "{name}");
    }
}
