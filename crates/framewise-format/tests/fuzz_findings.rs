//! Inputs the fuzzers (`fuzz/`) found, kept here with what a reader must do with them.

use framewise_format::container::{record_header, FRAM, META};
use framewise_format::model::Meta;
use framewise_format::{payload, read, DecodeError, Defect, Header};

/// `frame_roundtrip`, 2026-11 (the artifact was lost; rebuilt from its description): a
/// lane holding a zero-length top-level span at u64::MAX, then one at the same instant
/// with depth 2. The reader used to read it, and the writer refused to write the spans
/// back: the second lies inside the first, but is not one level deeper.
const SAME_INSTANT_DEPTH_2: &[u8] = &[
    0x00, // no symbols
    0x00, 0x00, 0x00, // index 0, flags 0, no phase
    0x00, 0x00, 0x00, // cpu_begin_ns 0, work 0, no dropped frames
    0x01, // 1 lane
    0x01, 0x00, 0x02, 0x01, 0x07, // thread 1, 0 dropped, S = 2, base zz(-1) = u64::MAX, B = 7
    // 0 000000 | 0 00 | 0        begin: gap 0, scope 0, depth 0
    // 0 | 0 00000000000000       end token, leaf of length 0
    // 0 00000 | 0 0 | 110        begin (nothing open): gap 0, scope 0, depth 2
    // 0 0000000000000 | 0000     its leaf of length 0; padding
    0x00, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, // no queues, passes, workloads, bindings, counters, marks
];

#[test]
fn a_deeper_zero_length_top_level_span_at_the_instant_the_last_ended_is_refused() {
    let err = payload::decode_frame(SAME_INSTANT_DEPTH_2).expect_err("refused");
    assert_eq!(
        err,
        DecodeError::LaneNesting {
            thread: 1,
            span: 1,
            start_ns: u64::MAX,
            depth: 2,
            previous_depth: 0,
        }
    );
    let message = err.to_string();
    for number in [
        "thread symbol 1",
        "span 1",
        "18446744073709551615 ns",
        "depth 0",
        "depth 2",
    ] {
        assert!(message.contains(number), "{message}");
    }

    // In a capture: the frame is listed, and reading it reports the payload as bad.
    let mut bytes = Header::new().to_bytes().to_vec();
    let mut meta = Vec::new();
    payload::encode_meta(&mut meta, &Meta::default(), std::iter::empty());
    let fram_offset = (bytes.len() + 16 + meta.len()) as u64;
    for (record_type, p) in [(META, &meta[..]), (FRAM, SAME_INSTANT_DEPTH_2)] {
        bytes.extend_from_slice(&record_header(record_type, p));
        bytes.extend_from_slice(p);
    }
    let capture = read::from_bytes(bytes).expect("open");
    assert_eq!(capture.frame_count(), 1);
    let bad = Defect::FrameUnreadable {
        index: 0,
        offset: fram_offset,
        length: 16 + SAME_INSTANT_DEPTH_2.len() as u64,
        cause: Box::new(Defect::BadPayload {
            offset: fram_offset,
            record_type: FRAM,
            error: err,
        }),
    };
    assert_eq!(capture.read_frame(0), Err(bad.clone()));
    assert!(capture.verify().contains(&bad), "{:?}", capture.verify());
}

/// The same lane with the second span one level deeper than the first, and the same with
/// the two at the same depth: the first is refused too (the writer nests the second span
/// inside the first and so writes other events); the second is two siblings, which the
/// writer writes with these very bytes.
#[test]
fn the_writer_decides_how_spans_at_one_instant_nest() {
    let mut depth_1 = SAME_INSTANT_DEPTH_2.to_vec();
    // depth 1 is `10`, one bit shorter than `110`: 51 bits, still 7 bytes.
    depth_1[17] = 0x10;
    assert!(matches!(
        payload::decode_frame(&depth_1),
        Err(DecodeError::LaneNesting {
            depth: 1,
            previous_depth: 0,
            ..
        })
    ));

    let mut siblings = SAME_INSTANT_DEPTH_2.to_vec();
    // depth 0 is `0`: 50 bits.
    siblings[17] = 0x00;
    let (symbols, frame) = payload::decode_frame(&siblings).expect("siblings");
    assert_eq!(frame.lanes[0].spans.len(), 2);
    let mut again = Vec::new();
    payload::encode_frame(&mut again, &frame, symbols.iter()).expect("written");
    assert_eq!(again, siblings);
}
