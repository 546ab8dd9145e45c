//! Opening files: by directory, falling back to scan, and refusing what is not a capture.

use crate::support;
use framewise_format::model::FrameEntry;
use framewise_format::read::{self, Defect};
use framewise_format::{EncodeError, Header, OpenError};

fn temp(name: &str, bytes: &[u8]) -> support::TempFile {
    support::TempFile::new(name, bytes)
}

#[test]
fn closed_file_opens_by_directory_and_reads_frames_lazily() {
    let (bytes, frames, _) = support::capture(30, 4, true);
    let p = temp("closed.sgpt", &bytes);
    let c = read::open(&p).expect("open");
    assert!(c.opened_by_directory());
    assert_eq!(c.frame_count(), 30);
    assert_eq!(c.read_frame(17).expect("frame"), frames[17]);
    assert!(c.verify().is_empty(), "{:?}", c.verify());
}

#[test]
fn damaged_directory_falls_back_to_scan() {
    let (mut bytes, frames, _) = support::capture(30, 4, true);
    let h = Header::parse(&bytes).expect("header");
    bytes[h.directory_offset as usize + 20] ^= 0x55;
    let p = temp("baddir.sgpt", &bytes);
    let c = read::open(&p).expect("open");
    assert!(!c.opened_by_directory());
    assert!(
        matches!(c.defects()[0], Defect::DirectoryUnusable { .. }),
        "{:?}",
        c.defects()
    );
    let got: Vec<_> = c.frames().map(|f| f.expect("frame")).collect();
    assert_eq!(got, frames);
}

#[test]
fn non_captures_are_refused_with_what_was_found() {
    let p = temp("text.sgpt", b"hello, this is not a capture at all, no sir");
    let e = read::open(&p).expect_err("refused");
    assert!(matches!(e, OpenError::BadMagic { .. }));
    assert!(e.to_string().contains("hell"), "{e}");
    let p = temp("empty.sgpt", b"");
    assert!(matches!(
        read::open(&p),
        Err(OpenError::TooShort { len: 0 })
    ));
    let dir = std::env::temp_dir();
    assert!(read::open(&dir).is_err());
    assert!(read::open(dir.join("does-not-exist.sgpt")).is_err());
    let mut h = Header::new();
    h.min_reader_version = 9;
    let e = read::from_bytes(h.to_bytes().to_vec()).expect_err("too new");
    assert!(e.to_string().contains("reader version 9"), "{e}");
    let mut b = Header::new().to_bytes();
    b[5] ^= 1;
    assert!(matches!(
        read::from_bytes(b.to_vec()),
        Err(OpenError::BadHeaderChecksum { .. })
    ));
}

#[test]
fn unfinished_and_non_seekable_files_scan() {
    // A writer that never reached stop: scanned, and reported unclosed.
    let (bytes, frames, symbols) = support::capture(3, 4, false);
    let c = read::from_bytes(bytes).expect("open");
    assert_eq!(c.frames().count(), frames.len());
    assert!(c
        .defects()
        .iter()
        .any(|d| matches!(d, Defect::Unclosed { .. })));

    // finish() on a plain Write writes DIRE but cannot patch the header: the file is
    // complete, and the reader must not call it unclosed.
    let mut w =
        framewise_format::Writer::new(Vec::new(), &support::meta(), &symbols).expect("writer");
    for f in &frames {
        w.write_frame(f, &symbols).expect("frame");
    }
    let bytes = w.finish(&[]).expect("finish");
    let c = read::from_bytes(bytes).expect("open");
    assert!(!c.opened_by_directory());
    assert!(c.defects().is_empty(), "{:?}", c.defects());
    assert_eq!(c.frames().count(), frames.len());
}

#[test]
fn periods_are_unknown_across_missing_frame_indices() {
    let (bytes, mut frames, symbols) = support::capture(4, 4, false);
    let _ = bytes;
    frames.remove(2); // frame 2 never written (dropped, or lost)
    let mut w =
        framewise_format::Writer::new(std::io::Cursor::new(Vec::new()), &support::meta(), &symbols)
            .expect("writer");
    for f in &frames {
        w.write_frame(f, &symbols).expect("frame");
    }
    let bytes = w.finish_and_close(&[]).expect("finish").into_inner();
    let c = read::from_bytes(bytes).expect("open");
    let periods: Vec<_> = c.frame_entries().map(|e| e.period_ns.is_some()).collect();
    assert_eq!(periods, [true, false, false]);
}

#[test]
fn frames_read_in_pieces_are_the_frames_read_one_by_one() {
    // Pieces of 1 MiB end inside records (and run over a TOPO and a CNTR); a corrupt frame
    // must come out as the same defect, and indices past the last frame are not visited.
    let (mut bytes, _, _) = support::capture(2_500, 11, true);
    let c = read::from_bytes(bytes.clone()).expect("open");
    let damaged = c.frame_entry(400).expect("frame 400");
    bytes[(damaged.offset + damaged.length / 2) as usize] ^= 0x21;
    let p = temp("pieces.sgpt", &bytes);
    let c = read::open(&p).expect("open");
    assert!(c.opened_by_directory());
    let mut decoder = framewise_format::payload::FrameDecoder::new();
    let mut frame = framewise_format::model::Frame::default();
    let one_by_one: Vec<_> = (0..c.frame_count() + 2)
        .map(|i| {
            c.read_frame_into(i, &mut decoder, &mut frame)
                .map(|()| frame.clone())
        })
        .take(c.frame_count())
        .collect();
    for range in [
        0..c.frame_count(),
        399..405,
        0..0,
        2_450..c.frame_count() + 7,
    ] {
        let mut in_pieces = Vec::new();
        c.read_frames_into(range.clone(), &mut decoder, &mut frame, |i, f| {
            in_pieces.push((i, f.cloned()));
        });
        let want: Vec<_> = range
            .clone()
            .filter(|&i| i < c.frame_count())
            .map(|i| (i, one_by_one[i].clone()))
            .collect();
        assert_eq!(in_pieces, want, "{range:?}");
    }
    assert!(one_by_one[400].is_err() && one_by_one[399].is_ok());
    assert!(
        bytes.len() > 3 << 20,
        "pieces of 1 MiB must not cover the file"
    );
}

#[test]
fn a_frame_read_at_its_offset_is_the_frame_read_by_the_capture() {
    // Closed (read by the directory) and cut (read by scanning, the file's offsets all
    // the same): every frame read again from the file by its entry is the same frame, and
    // a file changed afterwards gives a defect, never a panic.
    let (bytes, _, _) = support::capture(60, 4, true);
    let cut = bytes[..bytes.len() * 2 / 3].to_vec();
    for (name, bytes) in [("at.sgpt", &bytes), ("at-cut.sgpt", &cut)] {
        let p = temp(name, bytes);
        let c = read::open(&p).expect("open");
        let file = std::fs::File::open(&p).expect("open");
        let mut decoder = framewise_format::payload::FrameDecoder::new();
        let mut frame = framewise_format::model::Frame::default();
        for i in 0..c.frame_count() {
            let entry = c.frame_entry(i).expect("entry");
            read::read_frame_at(&file, entry, &mut decoder, &mut frame).expect("reads");
            assert_eq!(frame, c.read_frame(i).expect("frame"), "{name}: frame {i}");
        }
        let last = c.frame_entry(c.frame_count() - 1).expect("entry");
        let mut wrong = last;
        wrong.offset += 1;
        assert!(matches!(
            read::read_frame_at(&file, wrong, &mut decoder, &mut frame),
            Err(Defect::Corrupt { .. })
        ));
        // Overwritten in place, shorter: the last frame is no longer there.
        std::fs::write(&p, &bytes[..last.offset as usize + 20]).expect("write");
        assert!(matches!(
            read::read_frame_at(&file, last, &mut decoder, &mut frame),
            Err(Defect::Corrupt { .. })
        ));
    }
}

/// The writer keeps its directory packed (deltas, about 11–14 bytes a frame) and streams
/// `DIRE` from it at finish: every entry must come back as written, including the cases the
/// packing encodes explicitly (an index that does not follow, a record between two frames,
/// a frame that begins before the previous one, paused frames, hitch flags).
#[test]
fn the_packed_directory_reads_back_every_entry_as_written() {
    use framewise_format::model::{CounterTrack, Sample};
    use framewise_format::Writer;
    use std::io::Cursor;

    let symbols = support::symbols();
    let mut rng = support::Rng::new(7);
    let mut w = Writer::new(Cursor::new(Vec::new()), &support::meta(), &symbols).expect("writer");
    let indices = [0u64, 1, 2, 5, 6, 7, 40, 41, u64::from(u32::MAX) + 3];
    let begins = [
        1_000, 2_000_000, 3_000_000, 2_500_000, 9_000_000, 9_000_000, 20_000_000,
    ];
    for (i, &index) in indices.iter().enumerate() {
        let begin = begins
            .get(i)
            .copied()
            .unwrap_or(30_000_000 + i as u64 * 1_000_000);
        let mut f = support::frame(&mut rng, index, begin);
        f.paused = i % 3 == 1;
        w.write_frame(&f, &symbols).expect("frame");
        if i == 3 {
            let track = CounterTrack {
                counter: support::COUNTER_BASE + 3,
                samples: vec![Sample {
                    at_ns: 5,
                    value: -2,
                }],
            };
            w.write_counter_track(&track, &symbols).expect("cntr");
        }
    }
    // Hitch frames in any order, one twice: a set.
    let built = w.directory(&[41, 5, 41]);
    assert_eq!(built.frames.len(), indices.len());
    assert!(w.directory_bytes_in_memory() < 128 * 1024);
    let bytes = w
        .finish_and_close(&[41, 5, 41])
        .expect("finish")
        .into_inner();
    let capture = read::from_bytes(bytes).expect("open");
    assert!(capture.opened_by_directory());
    let read_back: Vec<_> = capture.frame_entries().collect();
    assert_eq!(read_back, built.frames);
    assert_eq!(
        read_back.iter().map(|f| f.index).collect::<Vec<_>>(),
        indices.to_vec()
    );
    assert!(read_back[3].hitch && read_back[7].hitch && !read_back[4].hitch);
    assert_eq!(read_back.iter().filter(|f| f.hitch).count(), 2);
    assert_eq!(read_back[1].period_ns, Some(1_000_000));
    assert_eq!(
        read_back[2].period_ns, None,
        "frame 2 is not followed by frame 3"
    );
    assert!(read_back[1].paused && !read_back[0].paused);
}

/// Frames 0..5 whose clock goes backwards between frames 2 and 3, and a frame 5 written
/// after two dropped frames yet with the next index: the writer's directory and the
/// reader's scan must both leave those periods unknown, never 0.
fn backwards_and_dropped() -> (
    Vec<framewise_format::model::Frame>,
    framewise_format::model::SymbolTable,
) {
    let (_, mut frames, symbols) = support::capture(6, 9, false);
    let begins_ms = [0u64, 10, 20, 15, 25, 35];
    for (f, begin_ms) in frames.iter_mut().zip(begins_ms) {
        let work_ns = f.work_ns();
        let shift = |t: u64| t - f.cpu_begin_ns + begin_ms * 1_000_000;
        for lane in &mut f.lanes {
            for s in &mut lane.spans {
                (s.start_ns, s.end_ns) = (shift(s.start_ns), shift(s.end_ns));
            }
        }
        for m in &mut f.marks {
            m.at_ns = shift(m.at_ns);
        }
        for q in &mut f.gpu.queues {
            q.anchor.cpu_submit_ns = q.anchor.cpu_submit_ns.map(shift);
            q.anchor.cpu_readback_ns = q.anchor.cpu_readback_ns.map(shift);
        }
        f.cpu_begin_ns = begin_ms * 1_000_000;
        f.cpu_end_ns = f.cpu_begin_ns + work_ns.min(4_000_000);
    }
    frames[5].dropped_frames_before = 2;
    (frames, symbols)
}

const BACKWARDS_PERIODS: [Option<u64>; 6] = [
    Some(10_000_000),
    Some(10_000_000),
    None,
    Some(10_000_000),
    None,
    None,
];

fn write_all(
    frames: &[framewise_format::model::Frame],
    symbols: &framewise_format::model::SymbolTable,
) -> framewise_format::Writer<std::io::Cursor<Vec<u8>>> {
    let mut w =
        framewise_format::Writer::new(std::io::Cursor::new(Vec::new()), &support::meta(), symbols)
            .expect("writer");
    for f in frames {
        w.write_frame(f, symbols).expect("frame");
    }
    w
}

#[test]
fn a_frame_whose_next_begins_earlier_has_no_period_in_the_writer_directory() {
    let (frames, symbols) = backwards_and_dropped();
    let w = write_all(&frames, &symbols);
    let periods: Vec<_> = w
        .directory(&[])
        .frames
        .iter()
        .map(|e| e.period_ns)
        .collect();
    assert_eq!(periods, BACKWARDS_PERIODS);
    let c = read::from_bytes(w.finish_and_close(&[]).expect("finish").into_inner()).expect("open");
    assert!(c.opened_by_directory());
    let periods: Vec<_> = c.frame_entries().map(|e| e.period_ns).collect();
    assert_eq!(periods, BACKWARDS_PERIODS);
}

#[test]
fn a_frame_whose_next_begins_earlier_has_no_period_in_the_reader_scan() {
    let (frames, symbols) = backwards_and_dropped();
    let w = write_all(&frames, &symbols);
    let unclosed = w.get_ref().expect("sink").get_ref().clone();
    let c = read::from_bytes(unclosed).expect("open");
    assert!(!c.opened_by_directory());
    let periods: Vec<_> = c.frame_entries().map(|e| e.period_ns).collect();
    assert_eq!(periods, BACKWARDS_PERIODS);
}

#[test]
fn the_directory_gpu_duration_ignores_reversed_passes_and_undeclared_periods() {
    use framewise_format::model::GpuTiming;
    let (_, mut frames, symbols) = support::capture(2, 5, false);
    let f = &mut frames[0];
    assert!(f.gpu.passes.len() >= 2, "the fixture frame has GPU passes");
    for p in &mut f.gpu.passes {
        p.timing = Some(GpuTiming {
            begin_ticks: 1_000,
            end_ticks: 1_100,
        });
    }
    f.gpu.passes[0].timing = Some(GpuTiming {
        begin_ticks: 900,
        end_ticks: 10,
    });
    let w = write_all(&frames, &symbols);
    let dir = w.directory(&[]);
    assert_eq!(
        dir.frames[0].gpu_ns,
        Some(100),
        "the reversed pass is left out"
    );

    let mut meta = support::meta();
    for c in &mut meta.gpu_clocks {
        c.timestamp_period_ns = f64::NAN;
    }
    let mut w = framewise_format::Writer::new(Vec::new(), &meta, &symbols).expect("writer");
    w.write_frame(&frames[0], &symbols).expect("frame");
    assert_eq!(
        w.directory(&[]).frames[0].gpu_ns,
        None,
        "a NaN period declares nothing"
    );
}

/// A long capture's directory: the writer packs its entries in 64 KiB chunks (about 4,400
/// entries each), each entry a delta from the one before it, across chunk boundaries too.
/// Written out, every entry must read back where its frame is, so the file opens by its
/// directory, not by a scan of the whole file.
#[test]
fn a_directory_longer_than_one_packed_chunk_reads_back_by_directory() {
    use framewise_format::model::Frame;
    use framewise_format::Writer;
    use std::io::Cursor;

    let symbols = support::symbols();
    let mut w = Writer::new(Cursor::new(Vec::new()), &support::meta(), &symbols).expect("writer");
    let n = 12_000u64;
    let begin = |i: u64| 1_000_000 + i * 16_666_667;
    for i in 0..n {
        let f = Frame {
            index: i,
            cpu_begin_ns: begin(i),
            cpu_end_ns: begin(i) + 5_000_000 + (i % 7) * 1_000,
            ..Frame::default()
        };
        w.write_frame(&f, &symbols).expect("frame");
    }
    let built = w.directory(&[]);
    let bytes = w.finish_and_close(&[]).expect("finish").into_inner();
    let c = read::from_bytes(bytes).expect("open");
    assert!(c.opened_by_directory(), "{:?}", c.defects());
    assert!(c.defects().is_empty(), "{:?}", c.defects());
    let entries: Vec<_> = c.frame_entries().collect();
    assert_eq!(entries, built.frames);
    assert_eq!(entries.len(), n as usize);
    for (i, e) in entries.iter().enumerate() {
        let i = i as u64;
        assert_eq!((e.index, e.cpu_begin_ns), (i, begin(i)), "entry {i}");
        assert_eq!(e.work_ns, 5_000_000 + (i % 7) * 1_000, "entry {i}");
        let period = (i + 1 < n).then_some(16_666_667);
        assert_eq!(e.period_ns, period, "entry {i}");
    }
    for w in entries.windows(2) {
        assert_eq!(
            w[0].offset + w[0].length,
            w[1].offset,
            "frame {}",
            w[1].index
        );
    }
    for i in [0, 4_369, 4_370, 4_371, 8_741, 11_999] {
        assert_eq!(c.read_frame(i).expect("frame").index, i as u64);
    }
}

#[test]
fn a_frame_refused_leaves_nothing_in_the_capture_and_the_writer_usable() {
    // The recorder drops a frame the writer refuses and goes on: that is only sound if the
    // refusal left no byte in the sink and no state behind. The capture must be the bytes of
    // one written without the refused frames.
    let (_, frames, symbols) = support::capture(6, 5, false);
    let mut bad_nesting = frames[2].clone();
    let lane = bad_nesting
        .lanes
        .iter_mut()
        .find(|l| l.spans.len() > 1)
        .expect("a lane of several spans");
    lane.spans[1].depth = lane.spans[0].depth + 5;
    let mut undefined = frames[4].clone();
    undefined.lanes[0].spans[0].scope = 0xFFFF_FFF0;

    let write = |refused: bool| {
        let sink = std::io::Cursor::new(Vec::new());
        let mut w = framewise_format::Writer::new(sink, &support::meta(), &symbols).expect("w");
        for (i, f) in frames.iter().enumerate() {
            if refused && i == 2 {
                let before = w.bytes_written();
                let error = w.write_frame(&bad_nesting, &symbols).unwrap_err();
                assert!(matches!(error, EncodeError::BadNesting { .. }), "{error}");
                assert_eq!(w.bytes_written(), before);
            }
            if refused && i == 4 {
                let error = w.write_frame(&undefined, &symbols).unwrap_err();
                assert!(
                    matches!(error, EncodeError::UndefinedSymbol { .. }),
                    "{error}"
                );
            }
            if i != 2 && i != 4 {
                w.write_frame(f, &symbols).expect("frame");
            }
        }
        w.finish_and_close(&[]).expect("finish").into_inner()
    };
    let with_refusals = write(true);
    assert_eq!(with_refusals, write(false));
    let c = read::from_bytes(with_refusals).expect("open");
    assert!(c.defects().is_empty(), "{:?}", c.defects());
    assert_eq!(c.frames().count(), 4);
}

#[test]
fn the_directory_written_in_one_pass_is_the_one_written_in_two() {
    // finish_and_close writes DIRE in one pass and patches its CRC after; finish, on a sink
    // that cannot seek, takes the CRC in a first pass. A table of 2,500 entries (140,000
    // bytes) crosses the 64 KiB pieces it is written in.
    let (_, frames, symbols) = support::capture(2_500, 3, false);
    let hitches = [2_499, 30, 0, 1_171, 30];
    let mut one =
        framewise_format::Writer::new(std::io::Cursor::new(Vec::new()), &support::meta(), &symbols)
            .expect("writer");
    let mut two =
        framewise_format::Writer::new(Vec::new(), &support::meta(), &symbols).expect("writer");
    for f in &frames {
        one.write_frame(f, &symbols).expect("frame");
        two.write_frame(f, &symbols).expect("frame");
    }
    let one = one.finish_and_close(&hitches).expect("finish").into_inner();
    let two = two.finish(&hitches).expect("finish");
    let header_len = framewise_format::container::HEADER_LEN;
    assert_eq!(one.len(), two.len());
    assert!(one[header_len..] == two[header_len..], "the records differ");
    let c = read::from_bytes(one).expect("open");
    assert!(c.opened_by_directory());
    assert!(c.verify().is_empty(), "{:?}", c.verify());
    assert_eq!(c.frame_entries().filter(|f| f.hitch).count(), 4);
}

#[test]
fn a_judged_directory_flags_the_frames_its_judge_flags_seeing_each_entry_once() {
    // finish_and_close_judged asks for each entry's hitch flag as the entry goes out: the
    // judge sees every entry once, in write order, as directory_frames gives it (period
    // filled in), and the bytes are those of finish_and_close given the frames it flagged.
    let (_, frames, symbols) = support::capture(2_500, 3, false);
    let flag = |f: &FrameEntry| f.index % 7 == 3 || f.period_ns.is_none();
    let mut judged =
        framewise_format::Writer::new(std::io::Cursor::new(Vec::new()), &support::meta(), &symbols)
            .expect("writer");
    let mut listed =
        framewise_format::Writer::new(std::io::Cursor::new(Vec::new()), &support::meta(), &symbols)
            .expect("writer");
    for f in &frames {
        judged.write_frame(f, &symbols).expect("frame");
        listed.write_frame(f, &symbols).expect("frame");
    }
    let expected: Vec<FrameEntry> = judged.directory_frames().collect();
    let hitches: Vec<u64> = expected
        .iter()
        .filter(|f| flag(f))
        .map(|f| f.index)
        .collect();
    let mut seen = Vec::new();
    let judged = judged
        .finish_and_close_judged(|f| {
            seen.push(*f);
            flag(f)
        })
        .expect("finish")
        .into_inner();
    let listed = listed
        .finish_and_close(&hitches)
        .expect("finish")
        .into_inner();
    assert_eq!(seen, expected);
    assert!(judged == listed, "the captures differ");
    let c = read::from_bytes(judged).expect("open");
    assert!(c.opened_by_directory());
    assert!(c.verify().is_empty(), "{:?}", c.verify());
    assert_eq!(c.frame_entries().filter(|f| f.hitch).count(), hitches.len());
    assert!(hitches.len() > 300);
}
