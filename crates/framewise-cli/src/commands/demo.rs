//! `framewise demo`: the main job. Runs the instrumented demo game (a flocking simulation
//! on worker threads, a CPU software renderer as a frame graph, hitches with real causes),
//! records it, then explains the capture with the same verbs a user would type next:
//! `summarize` and `hitches`, followed by the exact commands to look further.
//!
//! Exit: 0 when the game ran and the capture was recorded and explained (hitches are the
//! demo's point, not a failure); 4 when the run or the recording failed — including `--gpu`
//! with no GPU adapter, or in a build without the `gpu` feature (the message says why and,
//! for the latter, the command that rebuilds with it).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use framewise_analysis::gate::number_as_written as show;
use framewise_demo::{CaptureLevel, DemoConfig, Schedule, Variant, DEFAULT_FRAMES};

use crate::input;
use crate::output;

/// How to run the demo game.
///
/// A recorder variable that is set (`FRAMEWISE_CAPTURE`, `FRAMEWISE_FRAMES`,
/// `FRAMEWISE_LEVEL`, `FRAMEWISE_SEED`, `FRAMEWISE_FIXED_DT`, `FRAMEWISE_GOLDEN_FRAME`) wins
/// over the flag that says the same, as under a bench's harness; stderr says so when the two
/// disagree. Hence the flags with a default are options here: a default is no disagreement.
#[derive(Clone, Debug, clap::Args)]
pub struct DemoArgs {
    /// Seed for every decision the game makes [default: 1] (FRAMEWISE_SEED wins over it).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Frames to run [default: 1200] (the hitch schedule scales to fit; a run shorter than 59
    /// frames has no hitches and no pause; FRAMEWISE_FRAMES wins over it).
    #[arg(long, value_parser = clap::builder::RangedI64ValueParser::<u64>::new().range(1..))]
    pub frames: Option<u64>,
    /// Worker threads (0: one per core; at most 8 per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Capture level: timing, structure, workload, verbose (or 0-3) [default: workload]
    /// (FRAMEWISE_LEVEL wins over it).
    #[arg(long)]
    pub level: Option<String>,
    /// `normal` (the default), or `slow` (batching disabled: many more draw calls).
    #[arg(long, value_name = "VARIANT")]
    pub variant: Option<String>,
    /// Switch on the snap-back bug (the unit jumps back a few metres for one frame).
    #[arg(long)]
    pub snap_bug: bool,
    /// Skip the shadow pass (the sun casts no shadows: fewer draw calls, another picture).
    #[arg(long)]
    pub no_shadows: bool,
    /// The game's settings file (TOML: `variant`, `shadows`, `snap_bug`), kept in the
    /// game's repository: a change to the game is an edit to it. A key the command line
    /// also sets is refused.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Press the usermark hotkey at this frame.
    #[arg(long, value_name = "FRAME")]
    pub usermark_at: Option<u64>,
    /// Capture path [default: framewise-demo.sgpt] (FRAMEWISE_CAPTURE wins over it).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Run without recording (the overhead baseline; a usage error with FRAMEWISE_CAPTURE
    /// set).
    #[arg(long, conflicts_with = "output")]
    pub no_record: bool,
    /// Pin the simulation step, seconds in (0, 1) (FRAMEWISE_FIXED_DT wins over it).
    #[arg(long, value_name = "SECONDS")]
    pub fixed_dt: Option<f64>,
    /// Write this frame's image as PNG (FRAMEWISE_GOLDEN_FRAME wins over it).
    #[arg(long, value_name = "FRAME")]
    pub golden_frame: Option<u64>,
    /// Where the golden PNG goes.
    #[arg(long, value_name = "PATH")]
    pub golden_path: Option<PathBuf>,
    /// Do not inject the four hitches and the pause.
    #[arg(long)]
    pub quiet: bool,
    /// Hold each injected hitch's frame, on the recorder's clock, until it is a hitch by the
    /// hitch rule's own numbers (4× a bound of its rolling median): every hitch is then
    /// found however loaded the machine is. Without it the hitches are their real work
    /// alone.
    #[arg(long, conflicts_with = "quiet")]
    pub hold_hitches: bool,
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
    /// The run these arguments describe (reading `--settings`, when given).
    pub fn to_config(&self) -> anyhow::Result<DemoConfig> {
        let bad = |reason: String| framewise_demo::DemoError::Config { reason };
        let file = match &self.settings {
            Some(path) => crate::commands::demo_settings::load(path)?,
            None => crate::commands::demo_settings::Settings::default(),
        };
        let clash = |flag: &str, key: &str| {
            anyhow::anyhow!(
                "{flag} and `{key}` in --settings {} both set it: keep one",
                self.settings.as_deref().unwrap_or(Path::new("")).display()
            )
        };
        if self.variant.is_some() && file.variant.is_some() {
            return Err(clash("--variant", "variant"));
        }
        if self.no_shadows && file.shadows.is_some() {
            return Err(clash("--no-shadows", "shadows"));
        }
        if self.snap_bug && file.snap_bug.is_some() {
            return Err(clash("--snap-bug", "snap_bug"));
        }
        let variant_name = self
            .variant
            .as_deref()
            .or(file.variant.as_deref())
            .unwrap_or("normal");
        let level = match &self.level {
            None => CaptureLevel::Workload,
            Some(name) => parse_level(name).ok_or_else(|| {
                bad(format!(
                    "--level {name}: expected timing, structure, workload, verbose or 0-3"
                ))
            })?,
        };
        let frames = self.frames.unwrap_or(DEFAULT_FRAMES);
        let variant = Variant::parse(variant_name)
            .ok_or_else(|| bad(format!("--variant {variant_name}: expected normal or slow")))?;
        let fixed_dt = self
            .fixed_dt
            .map(|s| {
                match (s.is_finite() && s > 0.0 && s < 1.0).then(|| Duration::from_secs_f64(s)) {
                    // A step below a nanosecond is a step of 0: the world would never move.
                    Some(dt) if dt.is_zero() => Err(bad(format!(
                        "--fixed-dt {}: less than a nanosecond, a step of 0",
                        show(s)
                    ))),
                    Some(dt) => Ok(dt),
                    None => Err(bad(format!(
                        "--fixed-dt {}: expected seconds in (0, 1)",
                        show(s)
                    ))),
                }
            })
            .transpose()?;
        Ok(DemoConfig {
            seed: self.seed.unwrap_or(1),
            frames,
            threads: self.threads,
            level,
            variant,
            shadows: !self.no_shadows && file.shadows.unwrap_or(true),
            snap_bug: self.snap_bug || file.snap_bug.unwrap_or(false),
            usermark_at: self.usermark_at,
            output: (!self.no_record).then(|| {
                self.output
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(DEFAULT_CAPTURE))
            }),
            gpu: self.gpu,
            fixed_dt,
            golden_frame: self.golden_frame,
            golden_path: self.golden_path.clone(),
            schedule: if self.quiet {
                Schedule::quiet(frames)
            } else {
                Schedule::for_frames(frames)
            },
            hold_hitches: self.hold_hitches,
            ..DemoConfig::default()
        })
    }
}

impl DemoArgs {
    /// One stderr line for each flag given on the command line whose recorder variable is
    /// set to something else: the variable wins (as under a bench's harness).
    fn overridden_by(&self, env: &framewise::env::EnvConfig) -> Vec<String> {
        use framewise::env;
        let mut notes = Vec::new();
        let mut note = |var: &str, value: String, flag: &str, given: String| {
            notes.push(format!(
                "framewise demo: {var}={value} wins over {flag} {given} (a recorder variable that is set wins over its flag)"
            ));
        };
        if let (Some(given), Some(capture)) = (&self.output, &env.capture) {
            if given != capture {
                note(
                    env::CAPTURE,
                    capture.display().to_string(),
                    "-o",
                    given.display().to_string(),
                );
            }
        }
        if let (Some(given), Some(frames)) = (self.frames, env.frames) {
            if given != frames {
                note(
                    env::FRAMES,
                    frames.to_string(),
                    "--frames",
                    given.to_string(),
                );
            }
        }
        if let (Some(given), Some(level)) = (&self.level, env.level) {
            if parse_level(given) != Some(level) {
                note(
                    env::LEVEL,
                    level.name().to_owned(),
                    "--level",
                    given.clone(),
                );
            }
        }
        if let (Some(given), Some(seed)) = (self.seed, env.seed) {
            if given != seed {
                note(env::SEED, seed.to_string(), "--seed", given.to_string());
            }
        }
        if let (Some(given), Some(dt)) = (self.fixed_dt, env.fixed_dt) {
            if Duration::try_from_secs_f64(given).ok() != Some(dt) {
                note(
                    env::FIXED_DT,
                    show(dt.as_secs_f64()),
                    "--fixed-dt",
                    show(given),
                );
            }
        }
        if let (Some(given), Some(frame)) = (self.golden_frame, env.golden_frame) {
            if given != frame {
                note(
                    env::GOLDEN_FRAME,
                    frame.to_string(),
                    "--golden-frame",
                    given.to_string(),
                );
            }
        }
        notes
    }
}

/// The capture path when neither `-o` nor `FRAMEWISE_CAPTURE` names one.
const DEFAULT_CAPTURE: &str = "framewise-demo.sgpt";

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

/// Which setting named the capture path, for the messages that refuse it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Named {
    /// `-o` (or its default).
    Flag,
    /// `FRAMEWISE_CAPTURE`.
    Env,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let mut config = args.demo.to_config()?;
    // The recorder's variables, read as the run reads them: one that does not parse is
    // refused here, with the arguments.
    let env = framewise::env::EnvConfig::from_env().map_err(framewise_demo::DemoError::from)?;
    if let (Some(capture), true) = (&env.capture, args.demo.no_record) {
        anyhow::bail!(
            "--no-record conflicts with FRAMEWISE_CAPTURE={}, which asks for a recording: unset the variable or drop --no-record",
            capture.display()
        );
    }
    // Where the capture goes: FRAMEWISE_CAPTURE wins over -o. Every check below is the same
    // whichever named it, and all come before anything is scaffolded or run.
    let capture = match (&config.output, &env.capture) {
        (None, _) => None,
        (Some(_), Some(path)) => Some((path.clone(), Named::Env)),
        (Some(path), None) => Some((path.clone(), Named::Flag)),
    };
    let log_dir = incident_dir_path();
    if let Some((path, named)) = &capture {
        check_capture(path, *named, &log_dir)?;
    }
    if let Some(path) = &config.golden_path {
        output::refuse_log("--golden-path", path)?;
    }
    if let (Some((capture, _)), Some(golden)) = (&capture, &config.golden_path) {
        if output::same_file(capture, golden) {
            anyhow::bail!(
                "--golden-path {} is also {}: the golden frame would overwrite the capture",
                golden.display(),
                if env.capture.is_some() {
                    "FRAMEWISE_CAPTURE"
                } else {
                    "-o"
                }
            );
        }
    }
    if let Some(path) = &config.golden_path {
        if let framewise_output::Destination::File(target) = framewise_output::destination(path)? {
            refuse_missing_parent(&path.display(), &target, "the golden frame")?;
        }
    }
    // Refused for its arguments before anything runs (it said "the demo game failed" for a
    // run that never started), and a recording refused leaves no `.framewise/` behind.
    config.validate()?;
    for note in args.demo.overridden_by(&env) {
        say!("{note}");
    }
    if config.output.is_some() {
        config.incident_dir = Some(incident_dir(&log_dir)?);
    }
    // The run as the environment makes it (what `framewise_demo::run` plays).
    let config = config.with_env(&env);
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
            outcome.injected.first().map(|h| (h.frame, h.cause.name())),
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

/// Refuses a capture path the demo cannot record into and read back, named by `-o` or by
/// `FRAMEWISE_CAPTURE` (the messages say which): a FIFO or a device (never opened: a FIFO
/// would wait for a reader), a directory, a file in a directory that does not exist, and a
/// file of the incident log's directory `log_dir` or of any `.framewise/` — `perf.jsonl`
/// and the other logs, `profile.json` (which the recorder rewrites over the capture), whether
/// they exist yet or not (the recorder's own rule, [`framewise::check_capture_path`]).
fn check_capture(path: &Path, named: Named, log_dir: &Path) -> anyhow::Result<()> {
    let (flag, shown) = match named {
        Named::Flag => ("-o", path.display().to_string()),
        Named::Env => (
            "FRAMEWISE_CAPTURE",
            format!("FRAMEWISE_CAPTURE={}", path.display()),
        ),
    };
    let destination = framewise_output::destination(path).map_err(|e| match named {
        Named::Flag => anyhow::Error::new(e),
        Named::Env => anyhow::anyhow!("FRAMEWISE_CAPTURE: {e}"),
    })?;
    let target = match destination {
        // The capture is read back to explain it: a FIFO or a device cannot be.
        framewise_output::Destination::Through(_) => anyhow::bail!(
            "{shown}: not a regular file (a FIFO or a device); the demo reads its capture back to explain it"
        ),
        framewise_output::Destination::File(target) => target,
    };
    // What no output of a verb replaces, where it exists: a log of `.framewise/` (through any
    // links), the budgets file, a golden image, the rolling summary.
    output::refuse_log(flag, path)?;
    // A file of the incident log, even one not written yet in a directory not scaffolded yet,
    // and in the directory `FRAMEWISE_DIR` names: the recorder's own rule.
    match framewise::check_capture_path(path, Some(log_dir)) {
        Ok(()) => {}
        Err(framewise::StartError::CapturePath { reason, .. }) => {
            anyhow::bail!("{shown}: {reason}")
        }
        Err(other) => return Err(other.into()),
    }
    // A capture with nowhere to go is refused with the arguments, before the incident log's
    // directory is scaffolded and anything runs.
    refuse_missing_parent(&shown, &target, "the capture")
}

/// Refuses a file the run would write into a directory that does not exist: said with the
/// arguments, before the incident log's directory is scaffolded and the game runs.
fn refuse_missing_parent(
    shown: &dyn std::fmt::Display,
    target: &Path,
    what: &str,
) -> anyhow::Result<()> {
    let parent = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        anyhow::bail!(
            "{shown}: cannot create {what}: {}",
            framewise_output::no_directory(parent)
        );
    }
    Ok(())
}

/// The directory the recording's incident log goes to, as the recorder and the other verbs
/// find it: `FRAMEWISE_DIR` when set, else `.framewise/` in the working directory.
fn incident_dir_path() -> PathBuf {
    std::env::var_os(framewise_incidents::DIR_ENV)
        .filter(|dir| !dir.is_empty())
        .map_or_else(
            || PathBuf::from(framewise_incidents::DIR_NAME),
            PathBuf::from,
        )
}

/// `dir` ([`incident_dir_path`]), scaffolded as `framewise init` does when missing: the
/// recording's incident log goes there. `.framewise/` of the working directory is scaffolded
/// whole (a file it lacks is added); a directory `FRAMEWISE_DIR` names is taken as it is when
/// it exists, as the recorder takes it (a harness's own directory gets no scaffold). Says so
/// on stderr.
fn incident_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    let named = std::env::var_os(framewise_incidents::DIR_ENV).is_some_and(|d| !d.is_empty());
    if named && dir.is_dir() {
        say!(
            "framewise demo: incident log → {}",
            dir.join(framewise_incidents::PERF_FILE).display()
        );
        return Ok(dir.to_owned());
    }
    let made = framewise_incidents::scaffold_dir(dir).with_context(|| {
        if named {
            "the incident log's directory (FRAMEWISE_DIR) cannot be used"
        } else {
            "the incident log's directory cannot be used"
        }
    })?;
    if made.created_dir {
        let files: Vec<String> = made
            .created
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        say!(
            "framewise demo: created {}/ ({}) for the incident log",
            dir.display(),
            files.join(", ")
        );
    }
    say!(
        "framewise demo: incident log → {}",
        dir.join(framewise_incidents::PERF_FILE).display()
    );
    Ok(made.dir)
}

/// The commands to look further, spelled out for this capture. `hitch` is the first hitch the game injected: its frame and its cause's name.
fn next_steps(capture: &Path, hitch: Option<(u64, &str)>) -> String {
    let file = capture.display().to_string();
    let trace = capture.with_extension("trace.json").display().to_string();
    let frame = hitch.map_or_else(String::new, |(f, _)| format!(" --frame {f}"));
    let attribute_says = hitch.map_or_else(
        || "which scopes (and call sites) make up the excess over the p95".to_owned(),
        |(f, cause)| {
            format!("which scopes (and call sites) made frame {f} slow: the {cause} injected there")
        },
    );
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
            attribute_says.as_str(),
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
