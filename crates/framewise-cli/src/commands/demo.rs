//! `framewise demo`: the main job. Runs the instrumented demo game (a flocking simulation
//! on worker threads, a CPU software renderer as a frame graph, hitches with real causes),
//! records it, then explains the capture with the same verbs a user would type next:
//! `summarize` and `hitches`, followed by the exact commands to look further.
//!
//! Exit: 0 when the game ran and the capture was recorded and explained (hitches are the
//! demo's point, not a failure); 4 when the run or the recording failed — including `--gpu`
//! with no GPU adapter, or in a build without the `gpu` feature (the message says why and,
//! for the latter, the command that rebuilds with it).

use std::path::Path;

use anyhow::Context;
use framewise_demo::cli::DemoArgs;

use crate::input;
use crate::output;

/// `framewise demo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub demo: DemoArgs,
    /// After the report, serve the capture in the web inspector (`framewise view`) and
    /// print its address; serves until Ctrl-C.
    #[arg(long, conflicts_with = "no_record")]
    pub view: bool,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let config = args.demo.to_config()?;
    if let Some(path) = &config.output {
        // The capture is read back to explain it: a FIFO or a device cannot be.
        if let framewise_output::Destination::Through(_) = framewise_output::destination(path)? {
            anyhow::bail!(
                "{}: not a regular file (a FIFO or a device); the demo reads its capture back to explain it",
                path.display()
            );
        }
    }
    let frames = config.frames;
    let message = match &config.output {
        Some(path) => format!(
            "running the demo game: {frames} frames → {}",
            path.display()
        ),
        None => format!("running the demo game: {frames} frames, not recorded"),
    };
    let outcome = input::with_spinner(message, || framewise_demo::run(config))
        .context("the demo game failed")?;
    let seconds = outcome.wall_ns as f64 / 1e9;
    let Some(capture) = outcome.capture.clone() else {
        output::write_stdout(&format!(
            "ran {} frames in {seconds:.1} s on {} worker threads (not recorded)\n",
            outcome.frames.len(),
            outcome.threads
        ))?;
        return Ok(0);
    };
    if let Some(report) = &outcome.report {
        if !report.is_complete() {
            anyhow::bail!(
                "the recording of {} is incomplete: {} frames closed, {} written, {} dropped, {} lost to an error",
                capture.display(),
                report.frames_closed,
                report.frames_written,
                report.frames_dropped,
                report.frames_lost_to_error
            );
        }
    }
    let bytes = std::fs::metadata(&capture).map(|m| m.len()).unwrap_or(0);
    let file = capture.display().to_string();
    let mut head = format!(
        "framewise demo: recorded {} frames in {seconds:.1} s on {} worker threads → {file} ({:.1} MB)\n",
        outcome.frames.len(),
        outcome.threads,
        bytes as f64 / 1e6
    );
    if let Some(gpu) = &outcome.gpu {
        match &gpu.timestamps_absent {
            None => head.push_str(&format!(
                "GPU track: {} frames of wgpu passes (particles.update, particles.draw) timed on {} ({} adapter, {}){}\n",
                gpu.frames_delivered,
                gpu.adapter,
                gpu.adapter_type,
                gpu.backend,
                if gpu.adapter_type == "software" {
                    "; software timings, not comparable with a GPU's"
                } else {
                    ""
                }
            )),
            Some(reason) => head.push_str(&format!(
                "GPU passes recorded on {} without times: {reason}\n",
                gpu.adapter
            )),
        }
    }
    let min_frames = framewise_demo::Schedule::min_frames_for_hitches(outcome.config.scale.agents);
    if outcome.injected.is_empty() && outcome.frames.len() < min_frames as usize {
        head.push_str(&format!(
            "no hitches injected: {} frames is too short for them (they need at least {min_frames})\n",
            outcome.frames.len()
        ));
    }
    if !outcome.injected.is_empty() {
        let causes: Vec<String> = outcome
            .injected
            .iter()
            .map(|h| format!("{} at frame {}", h.cause.name(), h.frame))
            .collect();
        head.push_str(&format!(
            "the game injected {} hitches with real causes: {}\n",
            causes.len(),
            causes.join(", ")
        ));
    }
    // The explanation is collected first and printed only when all of it worked: on exit
    // 4, stdout stays empty.
    let (explained, text) = output::capture_stdout(|| -> anyhow::Result<()> {
        output::write_stdout(&head)?;
        output::write_stdout(&format!("\n── framewise summarize {file}\n"))?;
        crate::run_verb(["summarize", file.as_str()])?;
        output::write_stdout(&format!("\n── framewise hitches {file}\n"))?;
        // `hitches` exits 1 when it finds any: here that is the expected outcome, not a
        // failure.
        crate::run_verb(["hitches", file.as_str()])?;
        output::write_stdout(&next_steps(
            &capture,
            outcome.injected.first().map(|h| h.frame),
        ))
    });
    explained?;
    output::write_stdout(&text)?;
    if args.view {
        output::write_stdout(&format!("\n── framewise view {file}\n"))?;
        return crate::commands::view::serve(
            &capture,
            None,
            0,
            None,
            &crate::input::InputArgs::default(),
        );
    }
    Ok(0)
}

/// The commands to look further, spelled out for this capture.
fn next_steps(capture: &Path, hitch_frame: Option<u64>) -> String {
    let file = capture.display().to_string();
    let trace = capture.with_extension("trace.json").display().to_string();
    let frame = hitch_frame.map_or_else(String::new, |f| format!(" --frame {f}"));
    let rows = [
        (
            format!("framewise view {file}"),
            "the web inspector: frame strip, timelines, statistics over a range, structure",
        ),
        (
            format!("framewise hitches {file} --format json"),
            "every hitch with its evidence, for machines",
        ),
        (
            format!("framewise attribute {file}{frame}"),
            "which scopes (and call sites) made that frame slow",
        ),
        (
            format!("framewise trace {file} -o {trace}"),
            "a timeline for Perfetto (ui.perfetto.dev) or chrome://tracing",
        ),
        (
            format!(
                "framewise demo --variant slow -o slow.sgpt && framewise gate {file} slow.sgpt --tolerance counter.draw_calls.max=0"
            ),
            "a real regression (batching off: far more draw calls), caught by the gate with draw calls gated exactly: exit 1",
        ),
        (
            format!("framewise inspect {file}"),
            "the file itself: records, symbols, topology, defects",
        ),
    ];
    let mut out = String::from("\n── next\n");
    for (command, why) in rows {
        out.push_str(&format!("  {command}\n      {why}\n"));
    }
    out
}
