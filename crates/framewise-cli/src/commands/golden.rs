//! `framewise golden --check NAME` / `--record NAME`: the correctness gate.
//!
//! Runs `[bench.NAME]`'s command once through the recorder's environment harness (the
//! bench's settings, `FRAMEWISE_FRAMES` = K + 1 and `FRAMEWISE_GOLDEN_FRAME` = K, K the
//! bench's `golden_frame`, else its warm-up), takes the PNG the program wrote for frame K
//! (`<capture stem>.frame-<K>.png` beside `FRAMEWISE_CAPTURE`, the recorder harness's
//! convention), and compares it with `.framewise/goldens/NAME.png` by SSIM
//! (framewise-analysis's `golden` module). The evidence comes from the harness: the verb
//! takes no image from the caller. `--record` writes the golden, and is for a person.
//! The run's incident log and `profile.json` go to `DIR/golden/NAME/.framewise/`
//! (`FRAMEWISE_DIR`), never the project's: `check` and `hook-status` judge the game's last
//! session or bench, not a run of K + 1 frames. A program that writes them elsewhere anyway
//! (one that names its incident directory in code, which beats `FRAMEWISE_DIR`) has the
//! project's `profile.json` and `census.json` put back as they were before the run.
//!
//! The golden is read and decoded before the program runs, and must be another file than the
//! run's frame; the frame must be a regular file the program wrote (no link).
//!
//! Exit: 0 the frame passes (or the golden was recorded); 1 it fails (SSIM below the
//! threshold, or another size); 4 no golden recorded (or not a regular file, or not a whole
//! PNG), no such bench, a K of `u64::MAX`, `--json PATH` naming an input, a golden and a frame
//! that are one file, the program failed or wrote no image (or a link, or no whole PNG).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use framewise_analysis::golden::{self, Similarity};
use framewise_analysis::Verdict;
use serde::Serialize;

use crate::commands::bench::{harness, named_settings, DEFAULT_DIR};
use crate::commands::{exit, Outcome};
use crate::config::{self, ConfigArgs};
use crate::output::{self, Annotation, OutputArgs, Report};

/// `framewise golden`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["check", "record"])))]
pub struct Args {
    /// Run bench NAME, compare its golden frame with `.framewise/goldens/NAME.png`.
    #[arg(long, value_name = "NAME")]
    pub check: Option<String>,
    /// Run bench NAME and write its golden frame to `.framewise/goldens/NAME.png` (for a
    /// person: it moves the goalpost).
    #[arg(long, value_name = "NAME")]
    pub record: Option<String>,
    /// The `.framewise` directory (goldens, the runs' files).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Whether the run checks against the golden or records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `--check`.
    Check,
    /// `--record`.
    Record,
}

/// `framewise golden --format json` (schema `framewise.golden/1`).
#[derive(Clone, Debug, Serialize)]
pub struct GoldenReport {
    /// `framewise.golden/1`.
    pub schema: &'static str,
    /// The bench.
    pub name: String,
    /// `check` or `record`.
    pub mode: Mode,
    /// `pass` or `fail` (a recording passes).
    pub verdict: Verdict,
    /// 0 or 1.
    pub exit_code: u8,
    /// The program and its arguments, as the bench declares them.
    pub command: Vec<String>,
    /// The frame compared (`FRAMEWISE_GOLDEN_FRAME`).
    pub golden_frame: u64,
    /// The image the program wrote in this run.
    pub frame: String,
    /// The golden image (written by `--record`).
    pub golden: String,
    /// `--check`: the SSIM required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// `--check`: the comparison (`ssim` null when the sizes differ).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<Similarity>,
    /// What a reader should know about the evidence (e.g. a bench with no `fixed_dt`).
    pub notes: Vec<String>,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[])?;
    let outcome = evaluate(&args)?;
    output::emit(&args.output, &outcome.view)?;
    Ok(outcome.exit_code)
}

/// The golden's path for bench `name`.
pub fn golden_path(dir: &Path, name: &str) -> PathBuf {
    dir.join("goldens").join(format!("{name}.png"))
}

/// The verb's result without printing it.
pub fn evaluate(args: &Args) -> anyhow::Result<Outcome<GoldenReport>> {
    let (name, mode) = match (&args.check, &args.record) {
        (Some(n), None) => (n.as_str(), Mode::Check),
        (None, Some(n)) => (n.as_str(), Mode::Record),
        _ => bail!("give one of --check NAME or --record NAME"),
    };
    let cfg = config::load_project(&args.config, "golden")?;
    let settings = named_settings(&cfg, name, None, None, None)?;
    let bench = cfg.benches.get(name).context("the bench went missing")?;
    let k = bench.golden_frame.unwrap_or(settings.warmup);
    // The program runs K + 1 frames (FRAMEWISE_FRAMES): a K of u64::MAX would wrap to 0.
    let Some(frames) = k.checked_add(1) else {
        let key = if bench.golden_frame.is_some() {
            "golden_frame"
        } else {
            "warmup (the default golden_frame)"
        };
        bail!(
            "[bench.{name}] {key} = {k}: at most {} (the program runs golden_frame + 1 frames)",
            u64::MAX - 1
        );
    };
    let threshold = bench.golden_threshold.unwrap_or(golden::DEFAULT_THRESHOLD);
    let golden_file = golden_path(&args.dir, name);
    let run_dir = run_dir(&args.dir, name);
    let run_files = [
        capture_path(&run_dir, name),
        frame_path(&run_dir, name, k),
        log_path(&run_dir),
    ];
    let mut inputs: Vec<&Path> = cfg.path.iter().map(PathBuf::as_path).collect();
    inputs.push(&golden_file);
    inputs.extend(run_files.iter().map(PathBuf::as_path));
    args.output.check_inputs(&inputs)?;
    // The golden and the run's frame must be two files: a golden that is a link to the frame
    // (or the frame's other name) was removed with the stale frame and then read as the
    // program's new one, and the frame passed against itself.
    refuse_one_file(&golden_file, &run_files[1])?;
    // `--check`: the golden as it is before the program runs, read and decoded now: nothing
    // the run does (removing the stale frame, writing the new one, rewriting files) changes
    // what the frame is compared with.
    let mut golden_before: Option<(golden::RgbImage, FileId)> = None;
    if mode == Mode::Check {
        let meta = match std::fs::metadata(&golden_file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "no golden for bench `{name}`: {} does not exist (a person records it with `framewise golden --record {name}`)",
                golden_file.display()
            ),
            Err(e) => bail!(
                "{}: cannot read the golden PNG of bench `{name}`: {e}",
                golden_file.display()
            ),
            Ok(meta) if meta.is_dir() => bail!(
                "{}: is a directory, not the golden PNG of bench `{name}`",
                golden_file.display()
            ),
            Ok(meta) if !meta.is_file() => bail!(
                "{}: is a {}, not a regular file: not the golden PNG of bench `{name}`",
                golden_file.display(),
                framewise_analysis::load::file_kind(&meta)
            ),
            Ok(meta) => meta,
        };
        let bytes = std::fs::read(&golden_file)
            .with_context(|| format!("{}: cannot read the golden", golden_file.display()))?;
        let image = golden::decode_png(&bytes)
            .with_context(|| format!("{}: the golden", golden_file.display()))?;
        golden_before = Some((image, FileId::of(&meta)));
    }
    let frame = run_for_frame(&args.dir, name, &settings, k, frames)?;
    // The frame is a regular file of the program's (no link: `run_for_frame`); one that is the
    // golden itself under another name (a hard link made by the program) is no evidence.
    let frame_id = std::fs::symlink_metadata(&frame)
        .map(|m| FileId::of(&m))
        .with_context(|| format!("{}: cannot read the frame", frame.display()))?;
    let golden_now = std::fs::metadata(&golden_file).ok().map(|m| FileId::of(&m));
    if golden_before.as_ref().map(|(_, id)| *id) == Some(frame_id) || golden_now == Some(frame_id) {
        bail!(
            "{} and the golden {} are one file: the program's frame {k} must be an image of its own, never the golden (it would be compared with itself)",
            frame.display(),
            golden_file.display()
        );
    }
    let frame_bytes = std::fs::read(&frame)
        .with_context(|| format!("{}: cannot read the frame", frame.display()))?;
    let frame_image = golden::decode_png(&frame_bytes)
        .with_context(|| format!("{}: the program's frame {k}", frame.display()))?;
    let mut report = GoldenReport {
        schema: golden::GOLDEN_SCHEMA,
        name: name.to_owned(),
        mode,
        verdict: Verdict::Pass,
        exit_code: 0,
        command: settings.command.clone(),
        golden_frame: k,
        frame: frame.display().to_string(),
        golden: golden_file.display().to_string(),
        threshold: None,
        similarity: None,
        notes: Vec::new(),
    };
    if settings.fixed_dt.is_none() {
        report.notes.push(format!(
            "[bench.{name}] sets no fixed_dt: a program that steps its simulation by the measured frame time draws a different frame {k} on every run"
        ));
    }
    match mode {
        Mode::Record => {
            if let Some(parent) = golden_file.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("{}: cannot create it", parent.display()))?;
            }
            framewise_output::write_file(&golden_file, |w| {
                std::io::Write::write_all(w, &frame_bytes).map_err(|e| {
                    std::io::Error::new(e.kind(), format!("{}: {e}", golden_file.display()))
                })
            })?;
        }
        Mode::Check => {
            let (golden_image, _) =
                golden_before.context("the golden was not read before the run")?;
            let similarity = golden::compare(&golden_image, &frame_image, threshold)?;
            report.verdict = if similarity.pass {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            report.threshold = Some(threshold);
            report.similarity = Some(similarity);
        }
    }
    report.exit_code = exit(report.verdict);
    let exit_code = report.exit_code;
    Ok(Outcome {
        view: report,
        exit_code,
    })
}

/// `DIR/golden/NAME/`: where a golden run's files go.
fn run_dir(dir: &Path, name: &str) -> PathBuf {
    dir.join("golden").join(name)
}

/// The run's capture in `run_dir`.
fn capture_path(run_dir: &Path, name: &str) -> PathBuf {
    run_dir.join(format!("{name}.sgpt"))
}

/// The image the program writes for frame `k` beside its capture.
fn frame_path(run_dir: &Path, name: &str, k: u64) -> PathBuf {
    run_dir.join(format!("{name}.frame-{k}.png"))
}

/// The program's output.
fn log_path(run_dir: &Path) -> PathBuf {
    run_dir.join("run.log")
}

/// Where the run's incident log and `profile.json` go (`FRAMEWISE_DIR`): never the
/// project's `.framewise`.
fn incident_dir(run_dir: &Path) -> PathBuf {
    run_dir.join(framewise_incidents::DIR_NAME)
}

/// Runs the bench's command once for frame `k` (`frames` = k + 1 frames) and returns the
/// image it wrote. The run's files (capture, log, image, and its incident log and
/// `profile.json` in `.framewise/` there) go to `DIR/golden/NAME/`; a stale image is removed
/// first so that only this run's can be taken as evidence.
fn run_for_frame(
    dir: &Path,
    name: &str,
    settings: &framewise_analysis::bench::BenchSettings,
    k: u64,
    frames: u64,
) -> anyhow::Result<PathBuf> {
    if !config::valid_bench_name(name) {
        bail!("bench name `{name}`: letters, digits, `_`, `-` and `.` only (it names files)");
    }
    let run_dir = run_dir(dir, name);
    std::fs::create_dir_all(&run_dir)
        .with_context(|| format!("{}: cannot create it", run_dir.display()))?;
    let capture = capture_path(&run_dir, name);
    let image = frame_path(&run_dir, name, k);
    match std::fs::remove_file(&image) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("{}: cannot remove it", image.display())),
    }
    let log = log_path(&run_dir);
    // The run's incident log and profile.json go to a directory of its own: a run of K + 1
    // frames replacing the project's profile.json would have `check` and `hook-status`
    // judge it rather than the game's last session or bench. Created here, so the recorder
    // finds it and scaffolds nothing into it.
    let incidents = incident_dir(&run_dir);
    std::fs::create_dir_all(&incidents)
        .with_context(|| format!("{}: cannot create it", incidents.display()))?;
    let extra = [
        (framewise::env::FRAMES, frames.to_string()),
        (framewise::env::GOLDEN_FRAME, k.to_string()),
    ];
    // A program that writes its incident log where it likes rather than to FRAMEWISE_DIR
    // (one that names its incident directory in code, which beats it) would still replace
    // the project's latest-session files: what they held before the run is put back after.
    let kept = LatestSession::keep(dir);
    let ran = crate::input::with_spinner(format!("running {name} to frame {k}"), || {
        harness::run_program(settings, &capture, &log, &incidents, &extra, || {})
    });
    kept.put_back()?;
    ran?;
    // Not followed through a link: a frame that is a symbolic link (to the golden, or to any
    // image the program did not draw in this run) is no evidence of this run.
    match std::fs::symlink_metadata(&image) {
        Ok(meta) if meta.is_file() => Ok(image),
        Ok(meta) if meta.file_type().is_symlink() => bail!(
            "{}: is a symbolic link{}, not an image `{}` wrote for frame {k}: the program must write the frame as a regular file of its own",
            image.display(),
            std::fs::read_link(&image)
                .map(|to| format!(" to {}", to.display()))
                .unwrap_or_default(),
            settings.command.join(" ")
        ),
        Ok(meta) => bail!(
            "{}: is a {}, not a regular file: not an image `{}` wrote for frame {k}",
            image.display(),
            framewise_analysis::load::file_kind(&meta),
            settings.command.join(" ")
        ),
        Err(_) => bail!(
            "`{}` wrote no image for frame {k} (expected {}): the program must write frame FRAMEWISE_GOLDEN_FRAME's image as <capture stem>.frame-<K>.png beside FRAMEWISE_CAPTURE",
            settings.command.join(" "),
            image.display()
        ),
    }
}

/// A file's identity: its device and inode, whichever name or link reaches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId(u64, u64);

impl FileId {
    fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self(meta.dev(), meta.ino())
    }
}

/// Refuses a golden that is the run's frame file (a symbolic link to it, or a hard link),
/// before anything runs: the stale frame is removed before the program starts, and the
/// golden read afterwards would be the program's new frame.
fn refuse_one_file(golden: &Path, frame: &Path) -> anyhow::Result<()> {
    // The frame's own entry, which the run removes (a stale frame that is a link to the
    // golden is removed as a link, and leaves the golden as it was).
    let (Ok(g), Ok(f)) = (std::fs::metadata(golden), std::fs::symlink_metadata(frame)) else {
        return Ok(());
    };
    if FileId::of(&g) == FileId::of(&f) {
        bail!(
            "{} and the run's frame {} are one file: a golden must be a file of its own (compared with the frame it is, the frame would pass against itself)",
            golden.display(),
            frame.display()
        );
    }
    Ok(())
}

/// The latest-session files (`profile.json`, `census.json`) of the `.framewise` directories
/// that `check`, `hook-status` and `census` read (`--dir`, and `.framewise` in the working
/// directory, where a recorder looks when no directory is named), as they were before a
/// golden run: what `check` judges is the game's last session or bench, never a golden run
/// of K + 1 frames.
struct LatestSession(Vec<KeptDir>);

/// One directory's latest-session files, each path with its contents (`None`: absent, or
/// not a regular file, which is left alone).
struct KeptDir {
    profile: (PathBuf, Option<Vec<u8>>),
    census: (PathBuf, Option<Vec<u8>>),
}

impl LatestSession {
    /// The files' contents now.
    fn keep(dir: &Path) -> Self {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for d in [dir, Path::new(framewise_incidents::DIR_NAME)] {
            let d = std::fs::canonicalize(d).unwrap_or_else(|_| d.to_owned());
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        let kept = |path: PathBuf| {
            let bytes = read_regular(&path);
            (path, bytes)
        };
        Self(
            dirs.iter()
                .map(|d| KeptDir {
                    profile: kept(d.join(framewise_incidents::PROFILE_FILE)),
                    census: kept(d.join(framewise_census::CENSUS_FILE)),
                })
                .collect(),
        )
    }

    /// Puts back a directory's files when the golden run's session wrote them: its
    /// `profile.json` was created, or now names another session than before (a game running
    /// meanwhile rewrites its own session's, which is left as it is). Each file the run
    /// changed is rewritten as it was, or removed when the run created it.
    fn put_back(self) -> anyhow::Result<()> {
        let session = |bytes: &[u8]| {
            serde_json::from_slice::<serde_json::Value>(bytes)
                .ok()
                .and_then(|v| v.get("session").and_then(|s| s.as_str()).map(str::to_owned))
        };
        for kept in self.0 {
            let (path, before) = &kept.profile;
            let wrote = match (before, read_regular(path)) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(before), Some(now)) => {
                    *before != now
                        && (session(before).is_none() || session(before) != session(&now))
                }
            };
            if wrote {
                for (path, before) in [kept.profile, kept.census] {
                    restore(&path, before)?;
                }
            }
        }
        Ok(())
    }
}

/// A regular file's contents (`None`: absent, unreadable, or not a regular file).
fn read_regular(path: &Path) -> Option<Vec<u8>> {
    std::fs::metadata(path)
        .is_ok_and(|m| m.is_file())
        .then(|| std::fs::read(path).ok())
        .flatten()
}

/// Makes `path` hold `before` again: rewritten when it changed, removed when it did not exist.
fn restore(path: &Path, before: Option<Vec<u8>>) -> anyhow::Result<()> {
    let now = read_regular(path);
    if now == before {
        return Ok(());
    }
    match before {
        Some(bytes) => framewise_output::write_file(path, |w| std::io::Write::write_all(w, &bytes))
            .with_context(|| {
                format!(
                    "{}: cannot put back what it held before the golden run",
                    path.display()
                )
            }),
        None if now.is_some() => std::fs::remove_file(path).with_context(|| {
            format!(
                "{}: cannot remove what the golden run wrote",
                path.display()
            )
        }),
        None => Ok(()),
    }
}

impl Report for GoldenReport {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(self)?)
    }

    fn console(&self, out: &mut String) {
        let word = match (self.mode, self.verdict) {
            (Mode::Record, _) => "RECORDED".to_owned(),
            (_, v) => crate::commands::gate::verdict_word(v).to_owned(),
        };
        out.push_str(&format!(
            "golden {}: {word} (exit {})\n",
            self.name, self.exit_code
        ));
        out.push_str(&format!("  command  {}\n", self.command.join(" ")));
        out.push_str(&format!(
            "  frame    {} ({})\n",
            self.frame, self.golden_frame
        ));
        out.push_str(&format!("  golden   {}\n", self.golden));
        if let Some(s) = &self.similarity {
            out.push_str(&format!("  size     {}\n", s.frame_size));
            out.push_str(&format!("  result   {}\n", s.reason));
        }
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        if self.mode == Mode::Record {
            out.push_str(&format!(
                "  the golden moved: review {} like any goalpost\n",
                self.golden
            ));
        }
    }

    fn markdown(&self, out: &mut String) {
        let mut s = String::new();
        self.console(&mut s);
        out.push_str("```\n");
        out.push_str(&s);
        out.push_str("```\n");
    }

    fn annotations(&self) -> Vec<Annotation> {
        match (self.mode, self.verdict) {
            (Mode::Record, _) => vec![Annotation {
                level: "notice",
                title: format!("framewise golden: {} recorded", self.name),
                message: format!("the golden moved: review {} like any goalpost", self.golden),
            }],
            (_, Verdict::Fail) => vec![Annotation {
                level: "error",
                title: format!("framewise golden: {} changed", self.name),
                message: self.similarity.as_ref().map_or_else(
                    || format!("frame {} differs from {}", self.golden_frame, self.golden),
                    |s| format!("frame {}: {}", self.golden_frame, s.reason),
                ),
            }],
            _ => Vec::new(),
        }
    }
}
