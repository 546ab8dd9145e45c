//! Runs the analysis crate's hitch finder over a capture and prints each hitch's ranked
//! classification: how the demo's injected causes read back.
//!
//! `cargo run --release -p framewise-demo --example hitch_check -- CAPTURE`

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: hitch_check CAPTURE")?;
    let capture = framewise_analysis::open(&path, &framewise_analysis::LoadOptions::default())?;
    let report =
        framewise_analysis::find_hitches(&capture, &framewise_analysis::HitchOptions::default());
    for h in &report.hitches {
        println!(
            "frame {} ({}) period {:.1} ms threshold {:.1} ms",
            h.frame,
            h.phase.as_deref().unwrap_or("-"),
            h.duration_ms,
            h.threshold_ms
        );
        for g in &h.classification {
            println!(
                "    {:<22} {:?}: {}",
                g.guess.name(),
                g.confidence,
                g.evidence
            );
        }
    }
    Ok(())
}
