//! `inspect`: the structure of a file, damaged or not, and progress while loading.

use std::path::PathBuf;

use framewise_analysis::import::litecap;
use framewise_analysis::inspect::{inspect, inspect_with, OpenedBy};
use framewise_analysis::model::{DefectKind, SourceKind};
use framewise_analysis::{load, LoadOptions, Progress, Stage};
use framewise_format::model::AdapterType;

/// A temporary directory, removed when dropped.
pub struct Temp(pub PathBuf);

impl Temp {
    pub fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "framewise-analysis-inspect-{tag}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Self(dir)
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).expect("write");
        p
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn closed_sgpt() {
    let t = Temp::new("closed");
    let path = t.write("game.sgpt", &crate::sgpt::write(120, AdapterType::Hardware));
    let i = inspect(&path).expect("inspects");
    assert_eq!(i.kind, SourceKind::Sgpt);
    assert_eq!(i.source_version, Some(2));
    assert!(i.defects.is_empty(), "{:?}", i.defects);
    assert_eq!(i.frames.count, 120);
    assert_eq!(
        (i.frames.first_index, i.frames.last_index),
        (Some(0), Some(119))
    );
    assert_eq!(i.frames.with_period, 119);
    assert_eq!(i.frames.with_gpu, 120);
    assert_eq!(i.frames.hitch_flagged.map(|n| n <= 120), Some(true));
    let s = i.sgpt().expect("sgpt detail");
    assert!(s.header.closed);
    assert_eq!(s.opened_by, OpenedBy::Directory);
    let types: Vec<&str> = s.records.iter().map(|r| r.record_type.as_str()).collect();
    assert_eq!(types.first(), Some(&"META"));
    assert!(
        types.contains(&"FRAM") && types.contains(&"DIRE"),
        "{types:?}"
    );
    let fram = s
        .records
        .iter()
        .find(|r| r.record_type == "FRAM")
        .expect("FRAM");
    assert_eq!(fram.count, 120);
    assert_eq!(i.frames.record_bytes, Some(fram.bytes));
    assert_eq!(s.symbol_kinds.get("scope"), Some(&2));
    assert_eq!(s.symbol_kinds.values().sum::<u64>(), s.symbols.len() as u64);
    assert_eq!(
        s.meta.as_ref().map(|m| m.capture_level.as_str()),
        Some("workload")
    );
    // Flattened: the kind-specific fields sit beside the common ones.
    let json = serde_json::to_value(&i).expect("serializes");
    assert_eq!(json["schema"], "framewise.inspect/1");
    assert_eq!(json["opened_by"], "directory");
    assert_eq!(json["header"]["closed"], true);
    assert_eq!(json["symbol_kinds"]["counter"], 2);
}

#[test]
fn damaged_sgpt_lists_what_verify_finds() {
    let t = Temp::new("damaged");
    let mut bytes = crate::sgpt::write(60, AdapterType::Hardware);
    // Flip a byte inside a frame's payload: the file still opens by its directory, but
    // that frame does not decode.
    let at = bytes.len() / 3;
    bytes[at] ^= 0xff;
    let path = t.write("flipped.sgpt", &bytes);
    let i = inspect(&path).expect("inspects");
    let reader = framewise_format::read::open(&path).expect("opens");
    let expected = reader.verify();
    assert!(!expected.is_empty());
    assert_eq!(i.defects.len(), expected.len());
    for (d, e) in i.defects.iter().zip(&expected) {
        assert_eq!(d.message, e.to_string());
    }
    // Cut inside the frames: the header still says closed, but the directory is gone, so
    // the file is scanned, and the cut is a truncated tail.
    let bytes = crate::sgpt::write(60, AdapterType::Hardware);
    let path = t.write("cut.sgpt", &bytes[..bytes.len() / 2]);
    let i = inspect(&path).expect("inspects");
    let s = i.sgpt().expect("sgpt detail");
    assert_eq!(s.opened_by, OpenedBy::Scan);
    assert!(s.header.closed);
    let kinds: Vec<DefectKind> = i.defects.iter().map(|d| d.kind).collect();
    assert!(kinds.contains(&DefectKind::DirectoryUnusable), "{kinds:?}");
    assert!(kinds.contains(&DefectKind::TruncatedTail), "{kinds:?}");
    assert_eq!(i.frames.hitch_flagged, None, "the directory is gone");
    assert!(i.frames.count > 0 && i.frames.count < 60);
}

#[test]
fn inspect_counts_the_frames_a_load_reads_when_a_listed_frame_record_is_corrupt() {
    let t = Temp::new("lost-frame");
    let bytes = crate::sgpt::write(60, AdapterType::Hardware);
    let clean = framewise_format::read::from_bytes(bytes.clone()).expect("opens");
    let entry = clean.frame_entry(37).expect("frame 37");
    let mut bytes = bytes;
    bytes[(entry.offset + 20) as usize] ^= 0x01;
    let path = t.write("lost.sgpt", &bytes);
    let i = inspect(&path).expect("inspects");
    let loaded = load::open(&path, &LoadOptions::default()).expect("loads");
    assert_eq!(loaded.frame_count(), 59);
    assert_eq!(i.frames.count, loaded.frame_count() as u64);
    assert_eq!(i.frames.unreadable, 1);
    let s = i.sgpt().expect("sgpt detail");
    assert_eq!(s.opened_by, OpenedBy::Directory);
    let fram = s.records.iter().find(|r| r.record_type == "FRAM");
    assert_eq!(
        fram.map(|r| r.count),
        Some(59),
        "the corrupt record is not intact"
    );
    assert_eq!(i.frames.record_bytes, fram.map(|r| r.bytes));
    // The defect names the record and the frame it held, in both.
    for defects in [&i.defects, &loaded.defects().to_vec()] {
        let lost: Vec<_> = defects
            .iter()
            .filter(|d| d.kind == DefectKind::CorruptRange)
            .collect();
        assert_eq!(lost.len(), 1, "{defects:?}");
        assert_eq!(lost[0].offset, Some(entry.offset));
        assert!(lost[0].message.contains("frame 37"), "{}", lost[0].message);
    }
}

#[test]
fn a_flipped_magic_bit_or_trailing_bytes_load_every_frame_with_a_defect() {
    let t = Temp::new("header");
    let bytes = crate::sgpt::write(40, AdapterType::Hardware);
    let mut flipped = bytes.clone();
    flipped[0] ^= 0x02;
    let mut trailing = bytes.clone();
    trailing.extend_from_slice(&[0u8; 7]);
    for (name, bytes, kind) in [
        ("flipped.sgpt", flipped, DefectKind::HeaderDamaged),
        ("trailing.sgpt", trailing, DefectKind::TrailingBytes),
    ] {
        let path = t.write(name, &bytes);
        let loaded = load::open(&path, &LoadOptions::default()).expect(name);
        assert_eq!(loaded.frame_count(), 40, "{name}");
        let kinds: Vec<DefectKind> = loaded.defects().iter().map(|d| d.kind).collect();
        assert_eq!(kinds, vec![kind], "{name}");
        let i = inspect(&path).expect(name);
        assert_eq!(i.frames.count, 40, "{name}");
        assert_eq!(i.defects, loaded.defects().to_vec(), "{name}");
    }
}

#[test]
fn imported_files() {
    let t = Temp::new("imported");
    let path = t.write(
        "run.litecap",
        &litecap::encode(&crate::litecap::sample(4, 30, 2)),
    );
    let i = inspect(&path).expect("inspects");
    assert_eq!(i.kind, SourceKind::Litecap);
    assert_eq!(i.source_version, Some(4));
    assert_eq!(i.frames.count, 30);
    assert_eq!(i.frames.hitch_flagged, None);
    let d = i.imported().expect("imported detail");
    assert!(!d.notes.is_empty());
    let json = serde_json::to_value(&i).expect("serializes");
    assert!(json.get("header").is_none());
    assert!(json["scopes"].is_array());

    let path = t.write("trace.json", crate::chrome::trace(12).as_bytes());
    let i = inspect_with(
        &path,
        &LoadOptions::default().with_frame_span(Some("frame".into())),
        |_| {},
    )
    .expect("inspects");
    assert_eq!(i.kind, SourceKind::Chrome);
    assert_eq!(i.frames.count, 12);
    assert!(inspect(t.0.join("missing.sgpt")).is_err());
}

/// Every stage starts at 0, never goes back, and ends at its total; stages come in order.
fn check_progress(events: &[Progress]) -> Vec<Stage> {
    let mut stages = Vec::new();
    for e in events {
        assert!(e.done <= e.total, "{e:?}");
        if stages.last() != Some(&e.stage) {
            assert_eq!(e.done, 0, "a stage starts at 0: {e:?}");
            assert!(!stages.contains(&e.stage), "stages in order: {events:?}");
            stages.push(e.stage);
        }
    }
    for w in events.windows(2) {
        if w[0].stage == w[1].stage {
            assert!(w[1].done > w[0].done, "{w:?}");
        } else {
            assert_eq!(w[0].done, w[0].total, "a stage ends at its total: {w:?}");
        }
    }
    if let Some(last) = events.last() {
        assert_eq!(last.done, last.total);
    }
    stages
}

#[test]
fn progress_counts_up_to_the_total() {
    let t = Temp::new("progress");
    let sgpt = t.write(
        "game.sgpt",
        &crate::sgpt::write(1000, AdapterType::Hardware),
    );
    let mut events = Vec::new();
    let c = load::open_with_progress(&sgpt, &LoadOptions::default(), |p| events.push(p))
        .expect("loads");
    assert_eq!(check_progress(&events), vec![Stage::Frames]);
    assert_eq!(events.last().map(|p| p.total), Some(c.frame_count() as u64));
    // Throttled: a few hundred calls at most, however many frames.
    assert!(events.len() <= 260, "{} calls", events.len());

    let json = t.write("trace.json", crate::chrome::trace(400).as_bytes());
    let mut events = Vec::new();
    load::open_with_progress(&json, &LoadOptions::default(), |p| events.push(p)).expect("loads");
    // Streamed: read and parsed in one pass, never held whole.
    assert_eq!(check_progress(&events), vec![Stage::Parsing, Stage::Frames]);
    let len = std::fs::metadata(&json).expect("exists").len();
    assert_eq!(events[0].total, len);
    assert_eq!(Stage::Parsing.unit(), "bytes");
    assert_eq!(Stage::Frames.unit(), "frames");

    let lc = t.write(
        "run.litecap",
        &litecap::encode(&crate::litecap::sample(3, 50, 1)),
    );
    let mut events = Vec::new();
    load::open_with_progress(&lc, &LoadOptions::default(), |p| events.push(p)).expect("loads");
    assert_eq!(check_progress(&events), vec![Stage::Reading, Stage::Frames]);

    let mut events = Vec::new();
    inspect_with(&sgpt, &LoadOptions::default(), |p| events.push(p)).expect("inspects");
    assert_eq!(check_progress(&events), vec![Stage::Verifying]);
}

/// A scope with no call site (a topology pass's scope, an imported span) has no `file` or
/// `line` in the inspection, rather than an empty file at line 0.
#[test]
fn scope_without_call_site_has_no_site() {
    use framewise_format::model::{CpuSpan, Frame, Lane, Meta, Symbol, SymbolKind, SymbolTable};
    let mut symbols = SymbolTable::new();
    for (id, kind, name) in [
        (1, SymbolKind::Thread, "main"),
        (
            2,
            SymbolKind::Scope {
                file: String::new(),
                line: 0,
            },
            "shadow",
        ),
        (
            3,
            SymbolKind::Scope {
                file: "src/main.rs".into(),
                line: 0,
            },
            "frame",
        ),
    ] {
        symbols.insert(Symbol {
            id,
            kind,
            name: name.into(),
        });
    }
    let frame = Frame {
        cpu_begin_ns: 1_000,
        cpu_end_ns: 9_000,
        lanes: vec![Lane {
            thread: 1,
            spans: vec![
                CpuSpan {
                    scope: 3,
                    depth: 0,
                    start_ns: 1_000,
                    end_ns: 9_000,
                },
                CpuSpan {
                    scope: 2,
                    depth: 1,
                    start_ns: 2_000,
                    end_ns: 3_000,
                },
            ],
            dropped_spans: 0,
        }],
        ..Frame::default()
    };
    let mut w =
        framewise_format::Writer::new(std::io::Cursor::new(Vec::new()), &Meta::default(), &symbols)
            .expect("writer");
    w.write_frame(&frame, &symbols).expect("frame");
    let bytes = w.finish_and_close(&[]).expect("close").into_inner();
    let t = Temp::new("no-site");
    let i = inspect(t.write("sites.sgpt", &bytes)).expect("inspects");
    let json = serde_json::to_value(&i).expect("serializes");
    let scopes: Vec<&serde_json::Value> = json["symbols"]
        .as_array()
        .expect("symbols")
        .iter()
        .filter(|s| s["kind"] == "scope")
        .collect();
    let by_name = |name: &str| {
        scopes
            .iter()
            .find(|s| s["name"] == name)
            .copied()
            .unwrap_or_else(|| panic!("scope {name} in {scopes:?}"))
    };
    let shadow = by_name("shadow");
    assert!(
        shadow.get("file").is_none() && shadow.get("line").is_none(),
        "{shadow}"
    );
    let frame = by_name("frame");
    assert_eq!(frame["file"], "src/main.rs");
    assert!(frame.get("line").is_none(), "{frame}");
}
