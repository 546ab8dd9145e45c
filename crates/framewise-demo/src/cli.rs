//! The demo's command-line arguments, shared by the `framewise-demo` binary and the
//! `framewise demo` verb so both accept exactly the same flags.

use std::path::PathBuf;
use std::time::Duration;

use crate::{CaptureLevel, DemoConfig, DemoError, Schedule, Variant, DEFAULT_FRAMES};

/// How to run the demo game.
#[derive(Clone, Debug, clap::Args)]
pub struct DemoArgs {
    /// Seed for every decision the game makes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Frames to run (the hitch schedule scales to fit; a run shorter than 59 frames has
    /// no hitches and no pause).
    #[arg(long, default_value_t = DEFAULT_FRAMES)]
    pub frames: u64,
    /// Worker threads (0: one per core; at most 8 per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Capture level: timing, structure, workload, verbose (or 0-3).
    #[arg(long, default_value = "workload")]
    pub level: String,
    /// `normal`, or `slow` (batching disabled: many more draw calls).
    #[arg(long, default_value = "normal")]
    pub variant: String,
    /// Switch on the snap-back bug (the unit jumps back a few metres for one frame).
    #[arg(long)]
    pub snap_bug: bool,
    /// Press the usermark hotkey at this frame.
    #[arg(long, value_name = "FRAME")]
    pub usermark_at: Option<u64>,
    /// Capture path.
    #[arg(short = 'o', long, default_value = "framewise-demo.sgpt")]
    pub output: PathBuf,
    /// Run without recording (the overhead baseline).
    #[arg(long, conflicts_with = "output")]
    pub no_record: bool,
    /// Pin the simulation step, seconds (also FRAMEWISE_FIXED_DT).
    #[arg(long, value_name = "SECONDS")]
    pub fixed_dt: Option<f64>,
    /// Write this frame's image as PNG (also FRAMEWISE_GOLDEN_FRAME).
    #[arg(long, value_name = "FRAME")]
    pub golden_frame: Option<u64>,
    /// Where the golden PNG goes.
    #[arg(long, value_name = "PATH")]
    pub golden_path: Option<PathBuf>,
    /// Do not inject the four hitches and the pause.
    #[arg(long)]
    pub quiet: bool,
    /// Also run a wgpu workload (particle compute + offscreen render passes) and record its
    /// GPU pass timings. Fails with the reason when there is no GPU adapter or this build
    /// lacks the `gpu` feature.
    #[arg(long, conflicts_with = "no_record")]
    pub gpu: bool,
}

fn parse_level(value: &str) -> Option<CaptureLevel> {
    match value.trim().to_ascii_lowercase().as_str() {
        "0" | "timing" => Some(CaptureLevel::Timing),
        "1" | "structure" => Some(CaptureLevel::Structure),
        "2" | "workload" => Some(CaptureLevel::Workload),
        "3" | "verbose" => Some(CaptureLevel::Verbose),
        _ => None,
    }
}

impl DemoArgs {
    /// The run these arguments describe.
    pub fn to_config(&self) -> Result<DemoConfig, DemoError> {
        let bad = |reason: String| DemoError::Config { reason };
        let level = parse_level(&self.level).ok_or_else(|| {
            bad(format!(
                "--level {}: expected timing, structure, workload, verbose or 0-3",
                self.level
            ))
        })?;
        let variant = Variant::parse(&self.variant).ok_or_else(|| {
            bad(format!(
                "--variant {}: expected normal or slow",
                self.variant
            ))
        })?;
        let fixed_dt = self
            .fixed_dt
            .map(|s| {
                if s.is_finite() && s > 0.0 && s < 1.0 {
                    Ok(Duration::from_secs_f64(s))
                } else {
                    Err(bad(format!("--fixed-dt {s}: expected seconds in (0, 1)")))
                }
            })
            .transpose()?;
        Ok(DemoConfig {
            seed: self.seed,
            frames: self.frames,
            threads: self.threads,
            level,
            variant,
            snap_bug: self.snap_bug,
            usermark_at: self.usermark_at,
            output: (!self.no_record).then(|| self.output.clone()),
            gpu: self.gpu,
            fixed_dt,
            golden_frame: self.golden_frame,
            golden_path: self.golden_path.clone(),
            schedule: if self.quiet {
                Schedule::quiet(self.frames)
            } else {
                Schedule::for_frames(self.frames)
            },
            ..DemoConfig::default()
        })
    }
}
