//! Running a bench: the program R times through the recorder's environment harness, each
//! run's capture measured, the result written to `.framewise/bench/NAME-<timestamp>.json`.
//!
//! Every run gets `FRAMEWISE_CAPTURE` (its own file), `FRAMEWISE_FRAMES` (warm-up plus
//! measured frames), `FRAMEWISE_WRITER=lossless`, `FRAMEWISE_AUTOMATED=1`, `FRAMEWISE_DIR`
//! (where its incident log and `profile.json` go: the bench's `.framewise` directory), and,
//! when the bench sets them, `FRAMEWISE_FIXED_DT`, `FRAMEWISE_SEED` and
//! `FRAMEWISE_RESOLUTION`. Every other `FRAMEWISE_*` variable of the caller's environment is
//! removed from the program's: none of them is in the config hash, so a `FRAMEWISE_LEVEL`
//! or `FRAMEWISE_SEED` left in a shell would change the workload of one side of a
//! comparison unseen. The program's stdout and stderr go to `run-K.log` beside its capture.

use std::io::{IsTerminal, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context};
use framewise_analysis::bench::{
    measure_run, measured_periods_ns, pool_periods, BenchResult, BenchSettings, Fingerprint,
};
use framewise_analysis::LoadOptions;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Set to `1` for every bench run: the program's incidents are automated, not a player's.
pub const AUTOMATED_VAR: &str = "FRAMEWISE_AUTOMATED";
/// The seed a bench hands to the program.
pub const SEED_VAR: &str = "FRAMEWISE_SEED";
/// The resolution a bench hands to the program, `WIDTHxHEIGHT`.
pub const RESOLUTION_VAR: &str = "FRAMEWISE_RESOLUTION";

/// What to run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The bench's name.
    pub name: String,
    /// Declared in framewise.toml.
    pub canonical: bool,
    /// How.
    pub settings: BenchSettings,
    /// The `.framewise` directory.
    pub dir: PathBuf,
    /// The frame budget for hitches, ns (`[budgets] frame_ms`), else the capture's.
    pub budget_ns: Option<u64>,
}

/// The environment a run of `settings` gets, besides the capture path: what `golden`
/// and `bench` both hand the program.
pub fn harness_env(settings: &BenchSettings) -> Vec<(&'static str, String)> {
    let mut env = vec![
        (
            framewise::env::FRAMES,
            (settings.warmup + settings.frames).to_string(),
        ),
        (framewise::env::WRITER, "lossless".to_owned()),
        (AUTOMATED_VAR, "1".to_owned()),
    ];
    if let Some(dt) = settings.fixed_dt {
        env.push((framewise::env::FIXED_DT, dt.to_string()));
    }
    if let Some(seed) = settings.seed {
        env.push((SEED_VAR, seed.to_string()));
    }
    if let Some(r) = &settings.resolution {
        env.push((RESOLUTION_VAR, r.clone()));
    }
    env
}

/// The names of the caller's environment variables the program must not inherit: every
/// `FRAMEWISE_*` one (the recorder's harness variables, `FRAMEWISE_DIR`,
/// `FRAMEWISE_AUTOMATED`, an integration's such as `FRAMEWISE_BISECT_AT`). The harness sets
/// the ones it means the program to have itself. `CI`, which the recorder also reads, is
/// left: it only marks incidents automated, which `FRAMEWISE_AUTOMATED=1` already does.
pub fn inherited_framewise_vars() -> Vec<std::ffi::OsString> {
    std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| name.as_encoded_bytes().starts_with(b"FRAMEWISE_"))
        .collect()
}

/// Runs `settings.command` once with the harness environment and `capture` as its capture
/// path; its output goes to `log`, its incident log and `profile.json` to `incident_dir`
/// (`FRAMEWISE_DIR`, made absolute: the program may change its working directory). No
/// `FRAMEWISE_*` variable of the caller's environment reaches it but those the harness sets
/// ([`inherited_framewise_vars`]). `on_wait` is called while it runs.
pub fn run_program(
    settings: &BenchSettings,
    capture: &Path,
    log: &Path,
    incident_dir: &Path,
    extra_env: &[(&str, String)],
    mut on_wait: impl FnMut(),
) -> anyhow::Result<()> {
    let Some((program, args)) = settings.command.split_first() else {
        bail!("the bench has no command");
    };
    let log_file = std::fs::File::create(log)
        .with_context(|| format!("{}: cannot create the run's log", log.display()))?;
    let err_file = log_file
        .try_clone()
        .with_context(|| format!("{}: cannot share the run's log", log.display()))?;
    let incident_dir = std::path::absolute(incident_dir)
        .with_context(|| format!("{}: cannot make the path absolute", incident_dir.display()))?;
    let mut cmd = Command::new(program);
    for name in inherited_framewise_vars() {
        cmd.env_remove(name);
    }
    cmd.args(args)
        .env(framewise::env::CAPTURE, capture)
        .env(framewise_incidents::DIR_ENV, &incident_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log_file))
        .stderr(Stdio::from(err_file));
    for (k, v) in harness_env(settings).iter().chain(extra_env) {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start `{program}`"))?;
    let status = loop {
        if let Some(status) = child.try_wait().context("waiting for the program")? {
            break status;
        }
        on_wait();
        std::thread::sleep(Duration::from_millis(100));
    };
    if !status.success() {
        let tail = log_tail(log);
        bail!(
            "`{}` failed ({status}); its output is in {}{}",
            settings.command.join(" "),
            log.display(),
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            }
        );
    }
    Ok(())
}

/// The last non-empty line of a log, trimmed to 200 characters.
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    line.trim().chars().take(200).collect()
}

/// Counts `FRAM` records in a growing capture, reading only record headers from where it
/// stopped (for the progress bar; the capture is measured by the reader afterwards).
struct FrameCounter {
    path: PathBuf,
    offset: u64,
    frames: u64,
}

impl FrameCounter {
    fn new(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            offset: framewise_format::container::HEADER_LEN as u64,
            frames: 0,
        }
    }

    fn poll(&mut self) -> u64 {
        use framewise_format::container::{FRAM, RECORD_HEADER_LEN, SYNC};
        let Ok(mut f) = std::fs::File::open(&self.path) else {
            return self.frames;
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let mut header = [0u8; RECORD_HEADER_LEN];
        while self.offset + RECORD_HEADER_LEN as u64 <= len {
            if f.seek(SeekFrom::Start(self.offset)).is_err() || f.read_exact(&mut header).is_err() {
                break;
            }
            let word = |i: usize| {
                u32::from_le_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]])
            };
            if word(0) != SYNC {
                break;
            }
            let end = self.offset + RECORD_HEADER_LEN as u64 + u64::from(word(8));
            if end > len {
                break;
            }
            if word(4) == FRAM {
                self.frames += 1;
            }
            self.offset = end;
        }
        self.frames
    }
}

fn progress_bar(plan: &Plan) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let per_run = plan.settings.warmup + plan.settings.frames;
    let bar = ProgressBar::with_draw_target(
        Some(per_run.saturating_mul(u64::from(plan.settings.runs))),
        ProgressDrawTarget::hidden(),
    );
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{wide_bar}] {human_pos}/{human_len} frames ({eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_draw_target(ProgressDrawTarget::stderr());
    Some(bar)
}

/// `Some(cpu model)` from /proc/cpuinfo.
fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
}

fn os_name() -> String {
    match std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        Ok(release) => format!("{} {}", std::env::consts::OS, release.trim()),
        Err(_) => std::env::consts::OS.to_owned(),
    }
}

/// The git revision of the working directory (`+dirty` when tracked files changed), if any.
/// Changes to the audit trail in `dir` (the `.framewise` directory: `perf.jsonl`, the ledger,
/// `fixes.jsonl`) do not count: the runs and the verbs append to them themselves, and they
/// are not the game. Every other tracked file does, `dir/framewise.toml` included.
pub fn git_revision(dir: &Path) -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let rev = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let status = |pathspecs: &[String]| {
        Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=no", "--"])
            .args(pathspecs)
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| !o.stdout.is_empty())
    };
    // The whole work tree but the audit trail; a `dir` outside the repository makes git refuse
    // the pathspecs, and then nothing is left out.
    let mut pathspecs = vec![":/".to_owned()];
    pathspecs.extend(
        [
            framewise_incidents::PERF_FILE,
            framewise_incidents::BENCH_HISTORY_FILE,
            framewise_incidents::FIXES_FILE,
        ]
        .iter()
        .map(|file| format!(":(exclude){}", dir.join(file).display())),
    );
    let dirty = status(&pathspecs).or_else(|| status(&[])).unwrap_or(false);
    Some(if dirty { format!("{rev}+dirty") } else { rev })
}

/// Runs the plan: every run, measured; the result assembled (not yet written).
pub fn run(plan: &Plan, stamp: &super::Stamp) -> anyhow::Result<BenchResult> {
    let runs_dir = plan
        .dir
        .join("bench")
        .join(format!("{}-{}", plan.name, stamp.file));
    std::fs::create_dir_all(&runs_dir)
        .with_context(|| format!("{}: cannot create the bench directory", runs_dir.display()))?;
    // The code measured is the code as the runs start.
    let revision = git_revision(&plan.dir);
    let bar = progress_bar(plan);
    let per_run = plan.settings.warmup + plan.settings.frames;
    let mut runs = Vec::new();
    let mut grades = Vec::new();
    let mut periods = Vec::new();
    let mut adapter = None;
    let mut build = None;
    for k in 1..=plan.settings.runs {
        let capture = runs_dir.join(format!("run-{k}.sgpt"));
        let log = runs_dir.join(format!("run-{k}.log"));
        if let Some(bar) = &bar {
            bar.set_message(format!(
                "bench {} run {k}/{}",
                plan.name, plan.settings.runs
            ));
        }
        let mut counter = FrameCounter::new(&capture);
        let done_before = u64::from(k - 1) * per_run;
        run_program(&plan.settings, &capture, &log, &plan.dir, &[], || {
            if let Some(bar) = &bar {
                bar.set_position(done_before + counter.poll().min(per_run));
            }
        })
        .inspect_err(|_| {
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
        })?;
        if !capture.is_file() {
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            bail!(
                "`{}` exited without writing a capture to {}: is it linked with the framewise recorder, starting its session with Session::from_env?",
                plan.settings.command.join(" "),
                capture.display()
            );
        }
        let loaded = framewise_analysis::open(&capture, &LoadOptions::default())
            .with_context(|| format!("{}: cannot read the run's capture", capture.display()))?;
        let file = capture.display().to_string();
        let measured = measure_run(&loaded, k, &file, plan.settings.warmup, plan.budget_ns);
        if measured.frames_measured == 0 {
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            bail!(
                "{}: no frame after the {} warm-up frames was measured ({} frames recorded)",
                capture.display(),
                plan.settings.warmup,
                loaded.frames().len()
            );
        }
        periods.extend(measured_periods_ns(&loaded, plan.settings.warmup));
        grades.push(loaded.grade());
        let meta = loaded.meta();
        if adapter.is_none() {
            adapter = meta.adapter_name.clone();
        }
        if build.is_none() {
            build = meta.build.clone();
        }
        runs.push(measured);
        if let Some(bar) = &bar {
            bar.set_position(u64::from(k) * per_run);
        }
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let s = &plan.settings;
    let fingerprint = Fingerprint {
        cpu_model: cpu_model(),
        os: os_name(),
        gpu_adapter: adapter,
        build_profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
        .to_owned(),
        settings: s.clone(),
        build,
    };
    let mut result = BenchResult::new(
        &plan.name,
        plan.canonical,
        stamp.at.clone(),
        s.clone(),
        fingerprint,
        runs,
        &grades,
    );
    result.git_revision = revision;
    pool_periods(&mut result, periods);
    Ok(result)
}
