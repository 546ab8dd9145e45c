//! `framewise-demo`: runs the instrumented demo game and records it. The `framewise demo`
//! verb of the CLI runs the same library and then explains the capture; this binary only
//! records and prints what it wrote.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use framewise_demo::cli::DemoArgs;

#[global_allocator]
static ALLOC: framewise_demo::CountingAlloc = framewise_demo::CountingAlloc::new();

/// Run the framewise demo game and record it.
#[derive(Debug, Parser)]
#[command(name = "framewise-demo", version)]
struct Cli {
    #[command(flatten)]
    args: DemoArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = cli
        .args
        .to_config()
        .and_then(framewise_demo::run)
        .map_err(anyhow::Error::from);
    match result {
        Ok(outcome) => {
            let frames = outcome.frames.len();
            let secs = outcome.wall_ns as f64 / 1e9;
            match &outcome.capture {
                Some(path) => println!(
                    "recorded {frames} frames in {secs:.1} s to {}",
                    path.display()
                ),
                None => println!("ran {frames} frames in {secs:.1} s (not recorded)"),
            }
            if let Some(ms) = outcome.steady_mean_period_ms() {
                println!(
                    "steady play frames: mean period {ms:.2} ms on {} worker threads",
                    outcome.threads
                );
            }
            for h in &outcome.injected {
                let period = outcome
                    .frames
                    .iter()
                    .find(|f| f.index == h.frame)
                    .and_then(|f| f.period_ns)
                    .map(|ns| format!("{:.1} ms", ns as f64 / 1e6))
                    .unwrap_or_else(|| "unknown".into());
                println!(
                    "injected {} at frame {} (period {period}; expect {})",
                    h.cause.name(),
                    h.frame,
                    h.cause.expected_kind()
                );
            }
            if let Some(gpu) = &outcome.gpu {
                match &gpu.timestamps_absent {
                    None => println!(
                        "GPU track: {} frames timed on {} ({} adapter, {})",
                        gpu.frames_delivered, gpu.adapter, gpu.adapter_type, gpu.backend
                    ),
                    Some(reason) => println!(
                        "GPU passes recorded on {} without times: {reason}",
                        gpu.adapter
                    ),
                }
            }
            if !outcome.snaps.is_empty() {
                println!("snap-back bug fired at frames {:?}", outcome.snaps);
            }
            if let Some(path) = &outcome.golden {
                println!("golden frame written to {}", path.display());
            }
            if let Some(report) = &outcome.report {
                if !report.is_complete() {
                    eprintln!("framewise-demo: the capture is incomplete: {report:?}");
                    return ExitCode::from(1);
                }
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("framewise-demo: {error:#}");
            ExitCode::from(4)
        }
    }
}
