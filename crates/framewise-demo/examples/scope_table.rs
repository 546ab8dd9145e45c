//! Prints each scope's median and mean per-frame inclusive time over a capture's play frames,
//! and the injected hitch frames' scopes: a quick look while tuning the demo's workload.
//! (The real statistics are `framewise summarize`; this example exists only to read a
//! capture with no other crate than the format.)
//!
//! `cargo run --release -p framewise-demo --example scope_table -- CAPTURE [FRAME...]`

use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: scope_table CAPTURE [FRAME...]")?;
    let frames: Vec<u64> = args.filter_map(|a| a.parse().ok()).collect();
    let capture = framewise_format::read::open(&path)?;
    let symbols = capture.symbols();
    let mut per_scope: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut count = 0usize;
    for frame in capture.frames() {
        let frame = frame?;
        let name = |id| symbols.name(id).unwrap_or("?").to_owned();
        let mut totals: BTreeMap<String, u64> = BTreeMap::new();
        for lane in &frame.lanes {
            let thread = name(lane.thread);
            for span in &lane.spans {
                let key = if thread.starts_with("demo-worker") {
                    format!("[worker] {}", name(span.scope))
                } else {
                    name(span.scope)
                };
                *totals.entry(key).or_default() += span.duration_ns();
            }
        }
        if frames.contains(&frame.index) {
            println!(
                "frame {} work {:.2} ms",
                frame.index,
                frame.work_ns() as f64 / 1e6
            );
            for (k, v) in &totals {
                println!("  {k:<28} {:>9.3} ms", *v as f64 / 1e6);
            }
        }
        let phase = frame.phase.and_then(|p| symbols.name(p)).unwrap_or("");
        if phase != "play" || frame.paused {
            continue;
        }
        count += 1;
        for (k, v) in totals {
            per_scope.entry(k).or_default().push(v);
        }
    }
    println!(
        "{count} play frames; per-frame inclusive time (median / mean over frames it ran in):"
    );
    for (k, mut v) in per_scope {
        v.sort_unstable();
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        println!(
            "  {k:<28} {:>9.3} / {:>9.3} ms  ({} frames)",
            v[v.len() / 2] as f64 / 1e6,
            mean / 1e6,
            v.len()
        );
    }
    Ok(())
}
