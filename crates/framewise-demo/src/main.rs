//! `framewise-demo`: the demo game on its own, as a game ships: it takes no flags and is
//! recorded through the recorder's environment harness (`FRAMEWISE_CAPTURE`,
//! `FRAMEWISE_FRAMES`, `FRAMEWISE_LEVEL`, `FRAMEWISE_FIXED_DT`, `FRAMEWISE_GOLDEN_FRAME`, …);
//! without it, it runs the default demo into `framewise-demo.sgpt`. The `framewise demo` verb
//! of the CLI runs the same library with flags and then explains the capture.

#![forbid(unsafe_code)]

use std::process::ExitCode;

/// `eprintln!` that never panics: when stderr cannot be written (`2>/dev/full`, a closed
/// pipe) the line is lost, and the exit code still says what happened.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that never panics (see [`say!`]): a report whose reader went away
/// (`framewise-demo | head -1`) or whose disk is full is lost, never a panic.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

#[global_allocator]
static ALLOC: framewise_demo::CountingAlloc = framewise_demo::CountingAlloc::new();

fn main() -> ExitCode {
    if let Some(arg) = std::env::args().nth(1) {
        if arg == "--version" || arg == "-V" {
            out!("framewise-demo {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        say!(
            "framewise-demo: usage error: {arg}: framewise-demo takes no arguments (it is the \
             game, recorded through the FRAMEWISE_* environment); `framewise demo --help` has \
             the flags"
        );
        return ExitCode::from(4);
    }
    let result = framewise_demo::run(framewise_demo::DemoConfig::default());
    match result {
        Ok(outcome) => {
            let frames = outcome.frames.len();
            let secs = outcome.wall_ns as f64 / 1e9;
            match &outcome.capture {
                Some(path) => out!(
                    "recorded {frames} frames in {secs:.1} s to {}",
                    path.display()
                ),
                None => out!("ran {frames} frames in {secs:.1} s (not recorded)"),
            }
            if let Some(ms) = outcome.steady_mean_period_ms() {
                out!(
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
                out!(
                    "injected {} at frame {} (period {period}; expect {})",
                    h.cause.name(),
                    h.frame,
                    h.cause.expected_kind()
                );
            }
            if let Some(gpu) = &outcome.gpu {
                match &gpu.timestamps_absent {
                    None => out!(
                        "GPU track: {} frames timed on {} ({} adapter, {})",
                        gpu.frames_delivered,
                        gpu.adapter,
                        gpu.adapter_type,
                        gpu.backend
                    ),
                    Some(reason) => out!(
                        "GPU passes recorded on {} without times: {reason}",
                        gpu.adapter
                    ),
                }
            }
            if !outcome.snaps.is_empty() {
                out!("snap-back bug fired at frames {:?}", outcome.snaps);
            }
            if let Some(path) = &outcome.golden {
                out!("golden frame written to {}", path.display());
            }
            if let Some(report) = &outcome.report {
                if !report.is_complete() {
                    say!("framewise-demo: the capture is incomplete: {report:?}");
                    return ExitCode::from(1);
                }
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            say!("framewise-demo: {error:#}");
            ExitCode::from(4)
        }
    }
}
