//! Damage the reader used to lose or hide: a flipped header bit, bytes after the
//! directory, a corrupt frame record the directory still lists.

use crate::support;
use framewise_format::container::{HEADER_LEN, MAGIC};
use framewise_format::read::{self, Defect};
use framewise_format::{Header, OpenError};

/// Both ways of opening: from the file and from its bytes. The opened capture holds its
/// file open, so the file's directory may go once it is opened.
fn open_both(name: &str, bytes: &[u8]) -> [Result<read::Capture, OpenError>; 2] {
    [
        read::open(support::TempFile::new(name, bytes)),
        read::from_bytes(bytes.to_vec()),
    ]
}

#[test]
fn one_flipped_header_bit_loses_no_frame() {
    let (bytes, frames, _) = support::capture(40, 11, true);
    for bit in 0..HEADER_LEN * 8 {
        let mut damaged = bytes.clone();
        damaged[bit / 8] ^= 1 << (bit % 8);
        for opened in open_both("flip.sgpt", &damaged) {
            let c = opened.unwrap_or_else(|e| panic!("bit {bit}: refused: {e}"));
            let got: Vec<_> = c
                .frames()
                .map(|f| f.unwrap_or_else(|d| panic!("bit {bit}: {d}")))
                .collect();
            assert_eq!(got, frames, "bit {bit}");
            // Bytes [0, 8) and the checksum at [12, 16) are checked: their damage is
            // named. A flipped flag or directory field is caught by the directory checks.
            let checked = bit / 8 < 8 || (12..16).contains(&(bit / 8));
            let named = c
                .defects()
                .iter()
                .any(|d| matches!(d, Defect::HeaderDamaged { .. }));
            assert_eq!(named, checked, "bit {bit}: {:?}", c.defects());
            if checked {
                assert!(!c.opened_by_directory(), "bit {bit}");
                assert!(
                    !c.defects()
                        .iter()
                        .any(|d| matches!(d, Defect::Unclosed { .. })),
                    "bit {bit}: the file ends with its directory: {:?}",
                    c.defects()
                );
            }
        }
    }
}

#[test]
fn a_damaged_header_over_no_intact_record_is_still_not_a_capture() {
    // The magic one bit away from SGPT, and nothing after it.
    let mut bytes = Header::new().to_bytes().to_vec();
    bytes.extend_from_slice(&[0xA5; 200]);
    bytes[0] ^= 0x04;
    for opened in open_both("nothing.sgpt", &bytes) {
        assert!(
            matches!(opened, Err(OpenError::BadMagic { .. })),
            "{opened:?}"
        );
    }
    // A good magic, a bad checksum, nothing after it.
    let mut bytes = Header::new().to_bytes().to_vec();
    bytes.extend_from_slice(&[0xA5; 200]);
    bytes[13] ^= 0x01;
    for opened in open_both("nothing2.sgpt", &bytes) {
        assert!(
            matches!(opened, Err(OpenError::BadHeaderChecksum { .. })),
            "{opened:?}"
        );
    }
    // A different format (magic far from SGPT) holding a capture is not read as one.
    let (capture, _, _) = support::capture(5, 3, true);
    let mut bytes = capture.clone();
    bytes[0..4].copy_from_slice(b"PK\x03\x04");
    assert_ne!(u32::from_le_bytes(*b"PK\x03\x04"), MAGIC);
    for opened in open_both("zip.sgpt", &bytes) {
        assert!(
            matches!(opened, Err(OpenError::BadMagic { .. })),
            "{opened:?}"
        );
    }
}

#[test]
fn bytes_after_the_directory_are_reported_as_trailing_bytes() {
    let (mut bytes, frames, _) = support::capture(30, 4, true);
    let h = Header::parse(&bytes).expect("header");
    let dir_end = h.directory_offset + h.directory_byte_length;
    assert_eq!(dir_end, bytes.len() as u64);
    bytes.extend_from_slice(b"junk after the end\n");
    for opened in open_both("trailing.sgpt", &bytes) {
        let c = opened.expect("opens");
        assert!(c.opened_by_directory());
        assert_eq!(
            c.defects(),
            &[Defect::TrailingBytes {
                offset: dir_end,
                bytes: 19
            }]
        );
        let got: Vec<_> = c.frames().map(|f| f.expect("frame")).collect();
        assert_eq!(got, frames);
    }
    // Scanned (the CLOSED flag lost, as on a non-seekable sink): the same defect, not a
    // truncated tail.
    let mut unclosed = bytes.clone();
    let mut h2 = h;
    h2.flags = 0;
    unclosed[..HEADER_LEN].copy_from_slice(&h2.to_bytes());
    for opened in open_both("trailing-scan.sgpt", &unclosed) {
        let c = opened.expect("opens");
        assert!(!c.opened_by_directory());
        assert_eq!(
            c.defects(),
            &[Defect::TrailingBytes {
                offset: dir_end,
                bytes: 19
            }]
        );
    }
}

#[test]
fn a_corrupt_frame_record_names_the_frame_it_held() {
    let (mut bytes, _, _) = support::capture(30, 4, true);
    let clean = read::from_bytes(bytes.clone()).expect("opens");
    let entry = clean.frame_entry(17).expect("entry");
    bytes[(entry.offset + 40) as usize] ^= 0x10;
    for opened in open_both("frame17.sgpt", &bytes) {
        let c = opened.expect("opens");
        assert!(c.opened_by_directory());
        let d = c.read_frame(17).expect_err("frame 17 is damaged");
        match &d {
            Defect::FrameUnreadable {
                index,
                offset,
                length,
                ..
            } => {
                assert_eq!((*index, *offset, *length), (17, entry.offset, entry.length));
            }
            other => panic!("{other:?}"),
        }
        assert!(d.to_string().contains("frame 17"), "{d}");
        let verified = c.verify();
        assert_eq!(verified, vec![d.clone()]);
        // The batch read reports the same.
        let mut seen = Vec::new();
        c.read_frames_into(
            0..c.frame_count(),
            &mut framewise_format::payload::FrameDecoder::new(),
            &mut framewise_format::model::Frame::default(),
            |i, r| {
                if let Err(e) = r {
                    seen.push((i, e));
                }
            },
        );
        assert_eq!(seen, vec![(17, d)]);
    }
}

#[test]
fn a_lost_directory_is_not_a_lost_tail_of_frames() {
    let (bytes, frames, _) = support::capture(30, 5, true);
    let h = Header::parse(&bytes).expect("header");
    let only_the_directory = |c: &read::Capture, what: &str| {
        assert!(
            matches!(c.defects(), [Defect::DirectoryUnusable { .. }]),
            "{what}: {:?}",
            c.defects()
        );
        let got: Vec<_> = c.frames().map(|f| f.expect("frame")).collect();
        assert_eq!(got, frames, "{what}: every frame reads");
    };
    // A flipped byte inside the directory: it fails its check, every frame before it reads.
    let mut flipped = bytes.clone();
    let inside = usize::try_from(h.directory_offset + h.directory_byte_length / 2).unwrap();
    flipped[inside] ^= 0x5a;
    for opened in open_both("dir-flipped.sgpt", &flipped) {
        only_the_directory(&opened.expect("opens"), "flipped directory");
    }
    // The raw scan, which knows no header, still reports the unreadable bytes as a tail:
    // it is the reader that knows them for the directory.
    let (records, defects) = read::scan_records(&flipped);
    assert_eq!(records.len() + 1, read::scan_records(&bytes).0.len());
    assert_eq!(
        defects,
        [Defect::TruncatedTail {
            offset: h.directory_offset,
            bytes_lost: h.directory_byte_length
        }]
    );
    // A header whose directory pointer lies past the end: the scan still ends on the intact
    // directory, so nothing was cut (it said 300 GB were lost).
    let mut pointer = bytes.clone();
    let mut h2 = h;
    h2.directory_offset += 1 << 38;
    pointer[..HEADER_LEN].copy_from_slice(&h2.to_bytes());
    for opened in open_both("dir-pointer.sgpt", &pointer) {
        only_the_directory(&opened.expect("opens"), "pointer past the end");
    }
    // A file cut inside its directory is still a cut.
    let cut = &bytes[..bytes.len() - 3];
    for opened in open_both("dir-cut.sgpt", cut) {
        let c = opened.expect("opens");
        assert!(
            c.defects()
                .iter()
                .any(|d| matches!(d, Defect::TruncatedTail { .. })),
            "{:?}",
            c.defects()
        );
    }
}

/// The file without the frame records of the frames `drop` names (their bytes cut out, the
/// header and the directory left as they were).
fn without_frames(bytes: &[u8], drop: std::ops::Range<u64>) -> Vec<u8> {
    let clean = read::from_bytes(bytes.to_vec()).expect("opens");
    let cut: Vec<(u64, u64)> = drop
        .map(|i| {
            let e = clean.frame_entry(i as usize).expect("entry");
            (e.offset, e.length)
        })
        .collect();
    let (records, _) = read::scan_records(bytes);
    let mut out = bytes[..HEADER_LEN].to_vec();
    for r in records {
        if !cut.contains(&(r.offset, r.length())) {
            out.extend_from_slice(&bytes[r.offset as usize..(r.offset + r.length()) as usize]);
        }
    }
    out
}

#[test]
fn frames_cut_from_the_end_are_named_by_the_directory_that_lists_them() {
    let (bytes, frames, _) = support::capture(30, 6, true);
    let tail_cut = without_frames(&bytes, 25..30);
    for opened in open_both("tail-cut.sgpt", &tail_cut) {
        let c = opened.expect("opens");
        assert!(!c.opened_by_directory());
        let got: Vec<_> = c.frames().map(|f| f.expect("frame")).collect();
        assert_eq!(got, frames[..25]);
        let missing: Vec<_> = c
            .defects()
            .iter()
            .filter(|d| matches!(d, Defect::FramesMissing { .. }))
            .collect();
        assert_eq!(
            missing,
            [&Defect::FramesMissing {
                count: 5,
                first_index: 25
            }],
            "{:?}",
            c.defects()
        );
        assert!(
            missing[0].to_string().contains("5 frames"),
            "{}",
            missing[0]
        );
    }
    // Frames cut from the middle: the indices after them say so, not the directory.
    let middle_cut = without_frames(&bytes, 10..13);
    for opened in open_both("middle-cut.sgpt", &middle_cut) {
        let c = opened.expect("opens");
        assert_eq!(c.frame_count(), 27);
        assert!(
            !c.defects()
                .iter()
                .any(|d| matches!(d, Defect::FramesMissing { .. })),
            "{:?}",
            c.defects()
        );
    }
}
