//! Writes a small capture to a file, reads it back, and prints what the reader found.
//!
//! `cargo run -p framewise-format --example roundtrip -- [PATH]`

use framewise_format::model::*;
use framewise_format::{read, Writer};
use std::error::Error;
use std::fs::File;
use std::io::BufWriter;

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/roundtrip.sgpt".into());
    let mut symbols = SymbolTable::new();
    symbols.insert(Symbol {
        id: 1,
        kind: SymbolKind::Thread,
        name: "main".into(),
    });
    symbols.insert(Symbol {
        id: 2,
        kind: SymbolKind::Phase,
        name: "play".into(),
    });
    symbols.insert(Symbol {
        id: 3,
        kind: SymbolKind::Counter(CounterKind::Sum),
        name: "draw_calls".into(),
    });
    for (id, name) in [(10, "frame"), (11, "update"), (12, "render")] {
        let kind = SymbolKind::Scope {
            file: file!().into(),
            line: line!(),
        };
        symbols.insert(Symbol {
            id,
            kind,
            name: name.into(),
        });
    }
    let meta = Meta {
        capture_level: 0,
        cpu_clock: CpuClock {
            source: "synthetic".into(),
            resolution_ns: 1.0,
        },
        writer: concat!("framewise-format example ", env!("CARGO_PKG_VERSION")).into(),
        ..Meta::default()
    };
    let file = BufWriter::new(File::create(&path)?);
    let mut w = Writer::new(file, &meta, &symbols)?;
    for i in 0..600u64 {
        let begin = i * 16_666_667;
        let update_ns = 3_000_000 + (i % 7) * 100_000;
        let render_ns = 8_000_000 + if i == 300 { 30_000_000 } else { 0 };
        let frame = Frame {
            index: i,
            phase: Some(2),
            cpu_begin_ns: begin,
            cpu_end_ns: begin + 1_000 + update_ns + render_ns + 2_000,
            lanes: vec![Lane {
                thread: 1,
                spans: vec![
                    CpuSpan {
                        scope: 10,
                        depth: 0,
                        start_ns: begin,
                        end_ns: begin + 1_000 + update_ns + render_ns + 1_000,
                    },
                    CpuSpan {
                        scope: 11,
                        depth: 1,
                        start_ns: begin + 500,
                        end_ns: begin + 500 + update_ns,
                    },
                    CpuSpan {
                        scope: 12,
                        depth: 1,
                        start_ns: begin + 1_000 + update_ns,
                        end_ns: begin + 1_000 + update_ns + render_ns,
                    },
                ],
                dropped_spans: 0,
            }],
            counters: vec![CounterValue {
                counter: 3,
                value: 120 + (i % 3) as i64,
            }],
            ..Frame::default()
        };
        w.write_frame(&frame, &symbols)?;
    }
    let bytes = w.bytes_written();
    let mut file = w.finish_and_close(&[300])?;
    std::io::Write::flush(&mut file)?;
    drop(file);

    let capture = read::open(&path)?;
    let frames: Vec<Frame> = capture.frames().collect::<Result<_, _>>()?;
    let spans: usize = frames
        .iter()
        .flat_map(|f| &f.lanes)
        .map(|l| l.spans.len())
        .sum();
    println!(
        "wrote {path}: {} frames, {spans} spans, {bytes} bytes before the directory",
        frames.len()
    );
    println!(
        "read back by {}: {} symbols, {} defects, hitch flagged at frame {:?}",
        if capture.opened_by_directory() {
            "directory"
        } else {
            "scan"
        },
        capture.symbols().len(),
        capture.verify().len(),
        capture
            .frame_entries()
            .filter(|e| e.hitch)
            .map(|e| e.index)
            .collect::<Vec<_>>()
    );
    Ok(())
}
