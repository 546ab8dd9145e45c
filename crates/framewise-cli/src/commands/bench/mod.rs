//! `framewise bench`: run a named workload R times and measure it with noise floors;
//! compare two results with one verdict per metric; append every comparison to the ledger.
//!
//! - `framewise bench NAME`: runs `[bench.NAME]` of framewise.toml, writes
//!   `.framewise/bench/NAME-<timestamp>.json`. Exit 0 when measured, 2 when a run was short
//!   or long or lost frames (the result is written, and a comparison with it is
//!   inconclusive), 4 when a run failed. The runs' incident log (and so `profile.json`) goes
//!   to the bench's `.framewise` directory; no `FRAMEWISE_*` variable of the caller's
//!   environment reaches them but those the harness sets ([`harness::run_program`]).
//! - `framewise bench --name NAME [--frames N] -- COMMAND ARGS...`: an ad-hoc bench,
//!   `canonical: false` in everything it writes.
//! - `framewise bench NAME --compare last`: runs NAME, then compares the new result with the
//!   newest earlier one of NAME.
//! - `framewise bench --compare A B`: compares two result files.
//!
//! A comparison's exit code: 3 incomparable, then 1 any metric regressed, then 0 any
//! improved, else 2 (no detectable change, or inconclusive). Every comparison appends one
//! line to `.framewise/bench-history.jsonl`.
//!
//! The verb's work is in library functions ([`run_named`], [`run_bench`],
//! [`compare_files`], [`compare_last`]) so other front ends (the MCP server) call them
//! in-process.

pub mod harness;
pub mod report;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use framewise_analysis::bench::{
    self, BenchResult, BenchSettings, Budgets, Comparison, LedgerLine,
};

use crate::config::{self, ConfigArgs};
use crate::output::{self, OutputArgs};

/// The `.framewise` directory by default.
pub const DEFAULT_DIR: &str = ".framewise";
/// The ledger's file name inside the `.framewise` directory.
pub const LEDGER_FILE: &str = "bench-history.jsonl";

/// `framewise bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A bench declared in framewise.toml as `[bench.NAME]`.
    #[arg(value_name = "NAME")]
    pub bench: Option<String>,
    /// An ad-hoc bench's name (with `-- COMMAND ARGS...`); stamped `canonical: false`.
    #[arg(long, value_name = "NAME", conflicts_with = "bench")]
    pub name: Option<String>,
    /// Frames recorded per run after the warm-up (overrides the bench's `frames`).
    #[arg(long, value_name = "N")]
    pub frames: Option<u64>,
    /// Warm-up frames per run, run and discarded (overrides the bench's `warmup`).
    #[arg(long, value_name = "N")]
    pub warmup: Option<u64>,
    /// Runs (3 to 1000; overrides the bench's `runs`).
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,
    /// `--compare A B`: compare two bench result files; `NAME --compare last`: run NAME and
    /// compare with its newest earlier result.
    #[arg(long, num_args = 1..=2, value_names = ["A", "B"])]
    pub compare: Option<Vec<String>>,
    /// What changed, for the ledger line a comparison appends.
    #[arg(long, value_name = "TEXT")]
    pub change: Option<String>,
    /// With `--compare`: judge only the exact counters, not the timings (for a machine whose
    /// timings move with what else runs on it: a shared CI runner, a software GPU).
    #[arg(long, requires = "compare")]
    pub counters_only: bool,
    /// The `.framewise` directory (results, ledger).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// The ad-hoc program and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// A moment, as `at` (RFC 3339, UTC, milliseconds) and as a file-name part.
#[derive(Clone, Debug)]
pub struct Stamp {
    /// `2026-12-01T16:20:00.123Z`.
    pub at: String,
    /// `20261201T162000123Z`.
    pub file: String,
}

impl Stamp {
    /// Now.
    pub fn now() -> Self {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        Self::of_unix_ms(ms)
    }

    /// A given instant, ms since the epoch.
    pub fn of_unix_ms(ms: i64) -> Self {
        let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
        let (y, m, d) = date_of_day(days);
        let (hh, mm, ss, mmm) = (
            rem / 3_600_000,
            rem / 60_000 % 60,
            rem / 1000 % 60,
            rem % 1000,
        );
        Self {
            at: format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{mmm:03}Z"),
            file: format!("{y:04}{m:02}{d:02}T{hh:02}{mm:02}{ss:02}{mmm:03}Z"),
        }
    }
}

/// Year, month, day of a day number counted from 1970-01-01 (the Gregorian calendar in
/// 400-year cycles of 146,097 days, with March as the first month of the computing year).
fn date_of_day(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719_468; // days from 0000-03-01
    let cycle = shifted.div_euclid(146_097);
    let in_cycle = shifted.rem_euclid(146_097);
    let year_in_cycle = (in_cycle - in_cycle / 1460 + in_cycle / 36_524 - in_cycle / 146_096) / 365;
    let day_of_year = in_cycle - (365 * year_in_cycle + year_in_cycle / 4 - year_in_cycle / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = 400 * cycle + year_in_cycle + i64::from(month <= 2);
    (year, month, day)
}

/// What a bench verb produced.
pub enum Outcome {
    /// A bench ran and its result was written.
    Ran {
        /// The result.
        result: Box<BenchResult>,
        /// Where it was written.
        file: PathBuf,
    },
    /// Two results were compared (and the ledger appended).
    Compared {
        /// The comparison.
        comparison: Box<Comparison>,
        /// The result file written by this invocation, if it ran a bench.
        ran: Option<PathBuf>,
    },
    /// A bench ran but had nothing earlier to compare with.
    FirstResult {
        /// Where it was written.
        file: PathBuf,
    },
}

impl Outcome {
    /// The exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Ran { result, .. } => {
                if unfit(result).is_empty() {
                    0
                } else {
                    2
                }
            }
            Self::Compared { comparison, .. } => {
                u8::try_from(comparison.overall.exit_code).unwrap_or(crate::EXIT_ERROR)
            }
            Self::FirstResult { .. } => 2,
        }
    }
}

/// The settings of a named bench, with the command-line overrides.
pub(crate) fn named_settings(
    cfg: &config::Config,
    name: &str,
    frames: Option<u64>,
    warmup: Option<u64>,
    runs: Option<u32>,
) -> anyhow::Result<BenchSettings> {
    let Some(b) = cfg.benches.get(name) else {
        let file = cfg.path.as_deref().map_or_else(
            || config::PROJECT_CONFIG.to_owned(),
            |p| p.display().to_string(),
        );
        let known: Vec<&str> = cfg.benches.keys().map(String::as_str).collect();
        let near = framewise_analysis::gate::nearest(name, known.iter().copied());
        let hint = if !near.is_empty() {
            format!("; did you mean {}?", near.join(", "))
        } else if known.is_empty() {
            format!(
                "; {file} declares no bench (add [bench.{name}] with command = [...]), or run an ad-hoc one with --name {name} -- COMMAND"
            )
        } else {
            format!("; {file} declares {}", known.join(", "))
        };
        bail!("no bench named `{name}`{hint}");
    };
    Ok(BenchSettings {
        command: b.command.clone(),
        frames: frames.unwrap_or(b.frames),
        warmup: warmup.unwrap_or(b.warmup),
        runs: runs.unwrap_or(b.runs),
        seed: b.seed,
        fixed_dt: b.fixed_dt,
        resolution: b.resolution.clone(),
    })
}

fn check_settings(s: &BenchSettings) -> anyhow::Result<()> {
    if s.frames == 0 {
        bail!("--frames must be above 0");
    }
    // Each run records warm-up + frames (FRAMEWISE_FRAMES): a sum past u64 would wrap.
    if s.warmup.checked_add(s.frames).is_none() {
        bail!(
            "--warmup {} + --frames {}: more frames than a run can count",
            s.warmup,
            s.frames
        );
    }
    if s.runs < bench::MIN_RUNS as u32 {
        bail!(
            "--runs {}: a bench needs at least {} runs to be compared",
            s.runs,
            bench::MIN_RUNS
        );
    }
    if s.runs > config::MAX_RUNS {
        bail!(
            "--runs {}: at most {} runs (each run starts the program anew)",
            s.runs,
            config::MAX_RUNS
        );
    }
    Ok(())
}

/// Why a comparison with `result` would be inconclusive, in phrases (empty: it can be
/// compared): its short or long runs, its runs that lost frames.
pub fn unfit(result: &BenchResult) -> Vec<String> {
    let mut why: Vec<String> = bench::usable::length_reasons(None, result);
    let lost = bench::usable::lost_runs(result);
    if lost > 0 {
        why.push(format!(
            "{lost} of {} run(s) lost frames (dropped by the recorder or lost from the file)",
            result.runs.len()
        ));
    }
    why
}

/// Writes a result as `DIR/bench/NAME-<stamp>.json`.
fn write_result(dir: &Path, stamp: &Stamp, result: &BenchResult) -> anyhow::Result<PathBuf> {
    let path = dir
        .join("bench")
        .join(format!("{}-{}.json", result.name, stamp.file));
    let text = output::json_text(&serde_json::to_value(result)?)?;
    output::write_json(&path, &text)?;
    Ok(path)
}

/// Runs a bench and writes its result.
pub fn run_bench(
    name: &str,
    canonical: bool,
    settings: BenchSettings,
    dir: &Path,
    budget_ns: Option<u64>,
) -> anyhow::Result<(BenchResult, PathBuf)> {
    if !config::valid_bench_name(name) {
        bail!("bench name `{name}`: letters, digits, `_`, `-` and `.` only (it names files)");
    }
    check_settings(&settings)?;
    let stamp = Stamp::now();
    let plan = harness::Plan {
        name: name.to_owned(),
        canonical,
        settings,
        dir: dir.to_owned(),
        budget_ns,
    };
    let result = harness::run(&plan, &stamp)?;
    let file = write_result(dir, &stamp, &result)?;
    for why in unfit(&result) {
        say!(
            "framewise: warning: bench {name}: {why}: a comparison with {} is inconclusive",
            file.display()
        );
    }
    Ok((result, file))
}

/// Runs `[bench.NAME]` of the project config.
pub fn run_named(
    cfg: &config::Config,
    name: &str,
    dir: &Path,
    overrides: (Option<u64>, Option<u64>, Option<u32>),
) -> anyhow::Result<(BenchResult, PathBuf)> {
    let settings = named_settings(cfg, name, overrides.0, overrides.1, overrides.2)?;
    run_bench(name, true, settings, dir, cfg.budget_ns())
}

/// Reads a bench result file.
pub fn read_result(path: &Path) -> anyhow::Result<BenchResult> {
    crate::input::refuse_device(path, "a bench result")?;
    let bytes = std::fs::read(path)
        .with_context(|| format!("{}: cannot read the bench result", path.display()))?;
    let Ok(text) = String::from_utf8(bytes) else {
        bail!(
            "{}: not a framewise bench result: not text (bench --compare takes the .json files `framewise bench` writes into .framewise/bench/, not captures)",
            path.display()
        );
    };
    let result: BenchResult = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a framewise bench result", path.display()))?;
    if result.schema != bench::BENCH_SCHEMA {
        bail!(
            "{}: schema {} is not {}",
            path.display(),
            result.schema,
            bench::BENCH_SCHEMA
        );
    }
    if let Some(why) = bench::usable::first_unusable(&result) {
        bail!(
            "{}: {why}; framewise writes no such value (was the file edited?)",
            path.display()
        );
    }
    Ok(result)
}

/// The result files of bench `name` in `dir`, oldest first (by their timestamp names).
pub fn results_of(dir: &Path, name: &str) -> anyhow::Result<Vec<PathBuf>> {
    let bench_dir = dir.join("bench");
    let entries = match std::fs::read_dir(&bench_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot list", bench_dir.display())),
    };
    let prefix = format!("{name}-");
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension().is_some_and(|x| x == "json")
                && p.file_stem()
                    .and_then(|s| s.to_str())
                    .and_then(|s| s.strip_prefix(&prefix))
                    .is_some_and(is_stamp)
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Whether `s` is a file stamp (`20261201T162000123Z`).
fn is_stamp(s: &str) -> bool {
    s.len() == 19
        && s.ends_with('Z')
        && s.as_bytes()[8] == b'T'
        && s[..8].bytes().all(|b| b.is_ascii_digit())
        && s[9..18].bytes().all(|b| b.is_ascii_digit())
}

/// Appends one line to the ledger with a single write on an append-only file (the incident
/// log's appender: a ledger whose last line was torn gets a newline first, so the line
/// appended after it is not glued onto it and lost; a ledger that is not a regular file is
/// refused). A ledger path that resolves (through a link) to a file not named
/// `bench-history.jsonl`, or to nothing, is refused: a comparison appended to another log
/// (`perf.jsonl`) would corrupt it.
pub fn append_ledger(dir: &Path, line: &LedgerLine) -> anyhow::Result<PathBuf> {
    let path = dir.join(LEDGER_FILE);
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the directory", dir.display()))?;
    refuse_foreign_ledger(&path)?;
    // The appender's errors name the file.
    let ledger_error = |e: framewise_incidents::Error| anyhow::anyhow!("{e} (the bench ledger)");
    framewise_incidents::Appender::open(&path)
        .and_then(|mut ledger| ledger.append(line))
        .map_err(ledger_error)?;
    Ok(path)
}

/// Refuses a ledger path that is a link to another file than a bench ledger (one named
/// `bench-history.jsonl`), or to nothing (appending would create whatever it names).
fn refuse_foreign_ledger(path: &Path) -> anyhow::Result<()> {
    let is_link = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link(path) {
        return Ok(());
    }
    match std::fs::canonicalize(path) {
        Ok(target) if target.file_name() == Some(std::ffi::OsStr::new(LEDGER_FILE)) => Ok(()),
        Ok(target) => bail!(
            "{}: a link to {}, which is not a bench ledger ({LEDGER_FILE}): refusing to append a comparison to another file (the bench ledger)",
            path.display(),
            target.display()
        ),
        Err(e) => bail!(
            "{}: a link that does not resolve ({e}): refusing to append a comparison through it (the bench ledger)",
            path.display()
        ),
    }
}

/// Compares two results, and appends the comparison to the ledger in `dir`.
pub fn compare_results(
    before: &BenchResult,
    after: &BenchResult,
    budgets: &Budgets,
    dir: &Path,
    change: Option<String>,
    counters_only: bool,
) -> anyhow::Result<Comparison> {
    let comparison = if counters_only {
        bench::compare_counters_only(before, after, budgets)
    } else {
        bench::compare(before, after, budgets)
    };
    let line = LedgerLine::of(
        &comparison,
        Stamp::now().at,
        change,
        harness::git_revision(dir),
    );
    append_ledger(dir, &line)?;
    Ok(comparison)
}

/// `--compare A B`.
pub fn compare_files(
    a: &Path,
    b: &Path,
    budgets: &Budgets,
    dir: &Path,
    change: Option<String>,
    counters_only: bool,
) -> anyhow::Result<Comparison> {
    crate::input::refuse_one_stream(a, b)?;
    let before = read_result(a)?;
    let after = read_result(b)?;
    compare_results(&before, &after, budgets, dir, change, counters_only)
}

/// `NAME --compare last`: runs NAME, then compares with its newest earlier result; `None`
/// comparison when there was none.
pub fn compare_last(
    cfg: &config::Config,
    name: &str,
    dir: &Path,
    overrides: (Option<u64>, Option<u64>, Option<u32>),
    change: Option<String>,
    counters_only: bool,
) -> anyhow::Result<(Option<Comparison>, PathBuf)> {
    let earlier = results_of(dir, name)?;
    let (after, file) = run_named(cfg, name, dir, overrides)?;
    let Some(previous) = earlier.last() else {
        return Ok((None, file));
    };
    let before = read_result(previous)?;
    let c = compare_results(&before, &after, &cfg.budgets, dir, change, counters_only)?;
    Ok((Some(c), file))
}

/// The files a bench invocation reads (or appends to) that `--json PATH` must not replace:
/// the config, the compared results, the ledger.
fn inputs_of(args: &Args, cfg: &config::Config) -> anyhow::Result<Vec<PathBuf>> {
    let mut inputs: Vec<PathBuf> = cfg.path.iter().cloned().collect();
    inputs.push(args.dir.join(LEDGER_FILE));
    match (&args.compare, &args.bench) {
        (Some(files), None) => inputs.extend(files.iter().map(PathBuf::from)),
        (Some(_), Some(name)) if config::valid_bench_name(name) => {
            inputs.extend(results_of(&args.dir, name)?.pop());
        }
        _ => {}
    }
    Ok(inputs)
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.stdout_format()?;
    let done = evaluate(&args)?;
    output::emit(&args.output, &done.view)?;
    Ok(done.exit_code)
}

/// The verb's result without printing it (`framewise bench` and the MCP server's
/// `run_bench` both call this).
pub fn evaluate(args: &Args) -> anyhow::Result<crate::commands::Outcome<report::View>> {
    let cfg = config::load_project(&args.config, "bench")?;
    let inputs = inputs_of(args, &cfg)?;
    args.output
        .check_inputs(&inputs.iter().map(PathBuf::as_path).collect::<Vec<_>>())?;
    let overrides = (args.frames, args.warmup, args.runs);
    let outcome = match (&args.compare, &args.bench, &args.name) {
        (Some(files), None, None) if files.len() == 2 => {
            if !args.command.is_empty() {
                bail!("--compare A B compares two result files; it runs no command");
            }
            // Settings of a run, where nothing runs: ignored, they would read as applied.
            let given: Vec<&str> = [
                (args.frames.is_some(), "--frames"),
                (args.warmup.is_some(), "--warmup"),
                (args.runs.is_some(), "--runs"),
            ]
            .iter()
            .filter(|(set, _)| *set)
            .map(|&(_, flag)| flag)
            .collect();
            if !given.is_empty() {
                bail!(
                    "{} set how a bench runs, and --compare A B runs nothing: it compares two results as they were measured",
                    given.join(", ")
                );
            }
            let c = compare_files(
                Path::new(&files[0]),
                Path::new(&files[1]),
                &cfg.budgets,
                &args.dir,
                args.change.clone(),
                args.counters_only,
            )?;
            Outcome::Compared {
                comparison: Box::new(c),
                ran: None,
            }
        }
        (Some(files), Some(name), None) if files.len() == 1 => {
            if files[0] != "last" {
                bail!(
                    "NAME --compare takes `last` (the newest earlier result of NAME); to compare two files, write --compare A B without NAME"
                );
            }
            match compare_last(
                &cfg,
                name,
                &args.dir,
                overrides,
                args.change.clone(),
                args.counters_only,
            )? {
                (Some(c), file) => Outcome::Compared {
                    comparison: Box::new(c),
                    ran: Some(file),
                },
                (None, file) => Outcome::FirstResult { file },
            }
        }
        (Some(_), _, _) => bail!(
            "--compare takes two result files (--compare A B) or, after a bench name, `last` (NAME --compare last)"
        ),
        (None, Some(name), None) => {
            if !args.command.is_empty() {
                bail!("`{name}` is declared in framewise.toml; an ad-hoc command takes --name NAME -- COMMAND");
            }
            let (result, file) = run_named(&cfg, name, &args.dir, overrides)?;
            Outcome::Ran {
                result: Box::new(result),
                file,
            }
        }
        (None, None, Some(name)) => {
            if args.command.is_empty() {
                bail!("--name {name} runs an ad-hoc command: add -- COMMAND ARGS...");
            }
            // Results are found by name: an ad-hoc result under a declared bench's name would
            // become that bench's `last`, a different workload to compare with.
            if cfg.benches.contains_key(name) {
                let file = cfg
                    .path
                    .as_deref()
                    .map_or_else(|| config::PROJECT_CONFIG.to_owned(), |p| p.display().to_string());
                bail!(
                    "`{name}` is a bench {file} declares: run it as `framewise bench {name}`, or give the ad-hoc bench another name (its results would become {name}'s)"
                );
            }
            let settings = BenchSettings {
                command: args.command.clone(),
                frames: args.frames.unwrap_or(config::DEFAULT_FRAMES),
                warmup: args.warmup.unwrap_or(config::DEFAULT_WARMUP),
                runs: args.runs.unwrap_or(config::DEFAULT_RUNS),
                seed: None,
                fixed_dt: None,
                resolution: None,
            };
            let (result, file) = run_bench(name, false, settings, &args.dir, cfg.budget_ns())?;
            Outcome::Ran {
                result: Box::new(result),
                file,
            }
        }
        _ => bail!(
            "name a bench (framewise bench NAME), an ad-hoc one (--name NAME -- COMMAND), or two results (--compare A B)"
        ),
    };
    let exit_code = outcome.exit_code();
    Ok(crate::commands::Outcome {
        view: report::View { outcome },
        exit_code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps() {
        let s = Stamp::of_unix_ms(0);
        assert_eq!(s.at, "1970-01-01T00:00:00.000Z");
        assert_eq!(s.file, "19700101T000000000Z");
        assert!(is_stamp(&s.file));
        // 2000-02-29 (a leap day in a century divisible by 400).
        assert_eq!(
            Stamp::of_unix_ms(951_782_400_123).at,
            "2000-02-29T00:00:00.123Z"
        );
        assert_eq!(
            Stamp::of_unix_ms(1_796_142_000_000).at,
            "2026-12-01T16:20:00.000Z"
        );
        assert!(!is_stamp("latest"));
    }
}
