//! `--config PATH`: `framewise.toml` (budgets, gate tolerances, named benches), or for
//! `gate` a lite-profiler gate config in JSON. The analysis verbs read no configuration
//! file they were not given: without `--config` they use the documented defaults. The
//! verification verbs (`bench`, `check`, `hook-status`) work on a game's repository and
//! read `./framewise.toml`, else `.framewise/framewise.toml`, when `--config` is not given
//! ([`load_project`]). A key the file
//! format does not have (a misspelt `[gaet.tolerances]`) is an error naming the file, the
//! line and the key, never silently ignored.
//!
//! ```toml
//! [budgets]
//! frame_ms = 16.67          # the hitch rule's frame budget (judged on frame.p95)
//! "counter.draw_calls.max" = 300   # any metric path, judged in its direction
//!
//! [bench.smoke]
//! command = ["framewise", "demo", "--quiet"]
//! frames = 600              # frames recorded per run after the warm-up
//! warmup = 120              # frames run first and discarded
//! runs = 5                  # 3 to 1000
//! seed = 1                  # FRAMEWISE_SEED
//! fixed_dt = 0.016666       # FRAMEWISE_FIXED_DT, seconds
//! resolution = "1280x720"   # FRAMEWISE_RESOLUTION
//! golden_frame = 300        # the frame `framewise golden` compares
//! golden_threshold = 0.98   # the SSIM `framewise golden --check` requires
//!
//! [gate]
//! defaults = true           # keep the default tolerances under these (default: false
//!                           # when tolerances are listed, true otherwise)
//! [gate.tolerances]
//! "frame.p99" = 0.10
//! "counter.draw_calls.max" = 0
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use framewise_analysis::bench::Budgets;
use framewise_analysis::GateConfig;
use serde::Deserialize;

/// The file the verification verbs read when `--config` is not given.
pub const PROJECT_CONFIG: &str = "framewise.toml";

/// `--config`, flattened into verbs that read one.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ConfigArgs {
    /// framewise.toml (`[budgets] frame_ms`, `[gate.tolerances]`); `gate` also accepts a
    /// lite-profiler gate config (`{"tolerances": {...}}`).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Toml {
    /// `frame_ms` and metric paths; checked entry by entry so an error names its line.
    #[serde(default)]
    budgets: BTreeMap<toml::Spanned<String>, toml::Spanned<f64>>,
    #[serde(default)]
    gate: Option<GateSection>,
    #[serde(default)]
    bench: BTreeMap<toml::Spanned<String>, toml::Spanned<BenchSection>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BenchSection {
    command: Vec<String>,
    frames: Option<u64>,
    warmup: Option<u64>,
    runs: Option<u32>,
    seed: Option<u64>,
    fixed_dt: Option<f64>,
    resolution: Option<String>,
    golden_frame: Option<u64>,
    golden_threshold: Option<f64>,
}

/// Frames recorded per run after the warm-up when `[bench.NAME]` does not say.
pub const DEFAULT_FRAMES: u64 = 600;
/// Warm-up frames when `[bench.NAME]` does not say.
pub const DEFAULT_WARMUP: u64 = 120;
/// Runs when `[bench.NAME]` does not say (the 95% power target needs 5).
pub const DEFAULT_RUNS: u32 = 5;
/// The most runs a bench may ask for: each run starts the program anew, and a thousand runs
/// of the default 720 frames already take hours at 60 Hz (a larger number is a typo, not a
/// workload).
pub const MAX_RUNS: u32 = 1000;

/// A `[bench.NAME]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchConfig {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Frames recorded per run after the warm-up (the last has no period, so a run measures
    /// one frame fewer).
    pub frames: u64,
    /// Warm-up frames per run.
    pub warmup: u64,
    /// Runs (at least 3).
    pub runs: u32,
    /// `FRAMEWISE_SEED`.
    pub seed: Option<u64>,
    /// `FRAMEWISE_FIXED_DT`, seconds.
    pub fixed_dt: Option<f64>,
    /// `FRAMEWISE_RESOLUTION`, `WIDTHxHEIGHT`.
    pub resolution: Option<String>,
    /// The frame `framewise golden` compares (`FRAMEWISE_GOLDEN_FRAME`).
    pub golden_frame: Option<u64>,
    /// The SSIM `framewise golden --check` requires (0–1].
    pub golden_threshold: Option<f64>,
}

/// Whether `text` is `WIDTHxHEIGHT` as the recorder reads `FRAMEWISE_RESOLUTION` (each side
/// 1 to 16,384 pixels): a bench cannot declare what its program would refuse.
pub fn valid_resolution(text: &str) -> bool {
    framewise::env::parse_resolution(text).is_some()
}

/// The line where `key` is set (`key = …`, spaces allowed) in the table that starts at
/// `start` of `text`: its lines up to the next table header; `None` when none sets it.
fn key_line(text: &str, start: usize, key: &str) -> Option<usize> {
    let mut offset = start;
    for (i, line) in text.get(start..)?.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if i > 0 && trimmed.starts_with('[') {
            return None;
        }
        let sets = trimmed
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('='));
        if sets {
            return Some(line_of(text, offset));
        }
        offset += line.len();
    }
    None
}

fn bench_config(raw: &BenchSection) -> Result<BenchConfig, String> {
    if raw.command.is_empty() || raw.command[0].is_empty() {
        return Err("`command` must name a program: command = [\"program\", \"arg\", ...]".into());
    }
    let runs = raw.runs.unwrap_or(DEFAULT_RUNS);
    if runs < framewise_analysis::bench::MIN_RUNS as u32 {
        return Err(format!(
            "`runs` = {runs}: a bench needs at least {} runs to be compared",
            framewise_analysis::bench::MIN_RUNS
        ));
    }
    if runs > MAX_RUNS {
        return Err(format!(
            "`runs` = {runs}: at most {MAX_RUNS} runs (each run starts the program anew)"
        ));
    }
    let frames = raw.frames.unwrap_or(DEFAULT_FRAMES);
    if frames == 0 {
        return Err("`frames` must be above 0".into());
    }
    if let Some(dt) = raw.fixed_dt {
        if !(dt.is_finite() && dt > 0.0 && dt < 1.0) {
            return Err(format!(
                "`fixed_dt` = {}: expected seconds in (0, 1)",
                framewise_analysis::gate::number_as_written(dt)
            ));
        }
        // Under a nanosecond the step rounds to zero (the recorder and `demo` refuse it).
        if std::time::Duration::from_secs_f64(dt).is_zero() {
            return Err(format!(
                "`fixed_dt` = {}: less than a nanosecond, a step of 0",
                framewise_analysis::gate::number_as_written(dt)
            ));
        }
    }
    if let Some(r) = &raw.resolution {
        if !valid_resolution(r) {
            return Err(format!(
                "`resolution` = {r:?}: expected WIDTHxHEIGHT, e.g. \"1280x720\""
            ));
        }
    }
    if let Some(t) = raw.golden_threshold {
        if !(t.is_finite() && t > 0.0 && t <= 1.0) {
            return Err(format!(
                "`golden_threshold` = {t}: expected an SSIM in (0, 1], e.g. 0.98"
            ));
        }
    }
    Ok(BenchConfig {
        command: raw.command.clone(),
        frames,
        warmup: raw.warmup.unwrap_or(DEFAULT_WARMUP),
        runs,
        seed: raw.seed,
        fixed_dt: raw.fixed_dt,
        resolution: raw.resolution.clone(),
        golden_frame: raw.golden_frame,
        golden_threshold: raw.golden_threshold,
    })
}

/// Whether a bench name can be part of a file name (`NAME-<timestamp>.json`).
pub fn valid_bench_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
        && !name.starts_with('.')
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GateSection {
    defaults: Option<bool>,
    #[serde(default)]
    tolerances: BTreeMap<toml::Spanned<String>, f64>,
}

/// What a config file said.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file it came from.
    pub path: Option<PathBuf>,
    /// `[budgets] frame_ms`.
    pub frame_ms: Option<f64>,
    /// Every `[budgets]` entry (`frame_ms` and metric paths).
    pub budgets: Budgets,
    /// `[bench.NAME]` tables by name.
    pub benches: BTreeMap<String, BenchConfig>,
    /// Gate tolerances it lists (TOML `[gate.tolerances]` or a JSON gate config).
    pub gate: Option<GateConfig>,
    /// Whether the default tolerances stay under the listed ones.
    pub gate_keeps_defaults: bool,
    /// The file was a JSON gate config (only `gate` reads those).
    pub is_json_gate_config: bool,
}

impl Config {
    /// The frame budget in ns, when configured.
    pub fn budget_ns(&self) -> Option<u64> {
        // Unit conversion only: the value was validated as finite and positive.
        self.frame_ms.map(|ms| (ms * 1_000_000.0).round() as u64)
    }
}

use crate::toml_error::line_of;
pub use crate::toml_error::toml_error;

/// The smallest `[budgets] frame_ms`: one microsecond.
pub const FRAME_MS_MIN: f64 = 0.001;
/// The largest `[budgets] frame_ms`: an hour.
pub const FRAME_MS_MAX: f64 = 3_600_000.0;

/// Counter values are signed 64-bit integers: a limit beyond ±2^63 can never be crossed.
const COUNTER_LIMIT_MAX: f64 = 9_223_372_036_854_775_808.0;

/// Refuses a budget limit that could never breach (`"frame.fps" = 0`, `"frame.p95" = 1e308`,
/// a ratio of 1) or never be met (`"frame.p95" = -5`), by the unit of the metric's values.
fn budget_limit_bound(key: &str, limit: f64) -> Result<(), String> {
    use framewise_analysis::summary::MetricUnit;
    let unit = MetricUnit::of(&framewise_analysis::gate::alias_path(key));
    let (ok, bound) = match unit {
        MetricUnit::Ms => (
            (0.0..=FRAME_MS_MAX).contains(&limit),
            "a time limit must be from 0 ms to 3600000 ms (an hour)",
        ),
        MetricUnit::Fps => (
            limit > 0.0 && limit <= 1_000_000.0,
            "an fps limit must be above 0 (no frame rate is below it, so it could never breach) and at most 1000000",
        ),
        MetricUnit::Ratio => (
            (0.0..1.0).contains(&limit),
            "a ratio limit must be from 0 to below 1 (a ratio is at most 1, so 1 or more could never breach)",
        ),
        MetricUnit::Frames | MetricUnit::Calls => (
            (0.0..COUNTER_LIMIT_MAX).contains(&limit),
            "a count limit must be from 0 to below 2^63",
        ),
        _ => (
            limit.abs() < COUNTER_LIMIT_MAX,
            "a counter limit must be within ±2^63 (a counter is a signed 64-bit integer, so a larger one could never breach)",
        ),
    };
    if ok {
        Ok(())
    } else {
        Err(bound.to_owned())
    }
}

/// Parses `text`, the contents of `framewise.toml` read from `path` (which the errors name,
/// with the line).
pub fn parse_toml(path: &Path, text: &str) -> anyhow::Result<Config> {
    let raw: Toml = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
    let mut budgets = Budgets::default();
    for (key, value) in &raw.budgets {
        let line = line_of(text, key.span().start);
        let (key, limit) = (key.get_ref(), *value.get_ref());
        let shown = framewise_analysis::gate::number_as_written(limit);
        if !limit.is_finite() {
            bail!(
                "{}: line {line}: [budgets] `{key}` must be a finite number, got {shown}",
                path.display()
            );
        }
        if key == "frame_ms" {
            if limit <= 0.0 {
                bail!(
                    "{}: line {line}: [budgets] frame_ms must be a positive number of milliseconds, got {shown}",
                    path.display()
                );
            }
            // The budget is used in whole nanoseconds: a value that rounds to 0 ns, or one
            // too large to mean a frame, would be judged as another budget than the one written.
            if !(FRAME_MS_MIN..=FRAME_MS_MAX).contains(&limit) {
                bail!(
                    "{}: line {line}: [budgets] frame_ms must be from {FRAME_MS_MIN} ms to {FRAME_MS_MAX} ms (an hour), got {shown}",
                    path.display()
                );
            }
            budgets.frame_ms = Some(limit);
            continue;
        }
        framewise_analysis::gate::check_metric(key).map_err(|e| {
            // A key without a dot is no metric path: most likely the frame budget misspelt.
            let hint = if !key.contains('.')
                && !framewise_analysis::gate::nearest(key, ["frame_ms"]).is_empty()
            {
                "; did you mean frame_ms?"
            } else {
                ""
            };
            anyhow::anyhow!("{}: line {line}: [budgets] {e}{hint}", path.display())
        })?;
        if key.contains('*') {
            bail!(
                "{}: line {line}: [budgets] `{key}`: a budget names one metric, not a wildcard",
                path.display()
            );
        }
        if let Err(bound) = budget_limit_bound(key, limit) {
            bail!(
                "{}: line {line}: [budgets] `{key}` = {}: {bound}",
                path.display(),
                framewise_analysis::gate::number_as_written(limit)
            );
        }
        budgets.limits.insert(key.clone(), limit);
    }
    let mut benches = BTreeMap::new();
    for (name, table) in &raw.bench {
        let line = line_of(text, name.span().start);
        if !valid_bench_name(name.get_ref()) {
            bail!(
                "{}: line {line}: [bench.{}]: a bench name is letters, digits, `_`, `-` and `.` (it names files)",
                path.display(),
                name.get_ref()
            );
        }
        let bench = bench_config(table.get_ref()).map_err(|e| {
            // The line of the key the message names (`runs` = 5000: …), else the table's.
            let key = e.strip_prefix('`').and_then(|rest| rest.split('`').next());
            let line = key
                .and_then(|key| key_line(text, table.span().start, key))
                .unwrap_or_else(|| line_of(text, table.span().start));
            anyhow::anyhow!(
                "{}: line {line}: [bench.{}] {e}",
                path.display(),
                name.get_ref()
            )
        })?;
        benches.insert(name.get_ref().clone(), bench);
    }
    let mut cfg = Config {
        path: Some(path.to_owned()),
        frame_ms: budgets.frame_ms,
        budgets,
        benches,
        gate_keeps_defaults: true,
        ..Config::default()
    };
    if let Some(gate) = raw.gate {
        if !gate.tolerances.is_empty() {
            let mut g = GateConfig::empty();
            // In the file's order, so that a metric named again is refused at its second line.
            let mut listed: Vec<_> = gate.tolerances.iter().collect();
            listed.sort_by_key(|(metric, _)| metric.span().start);
            for (metric, tolerance) in listed {
                g.add(metric.get_ref(), *tolerance).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: line {}: [gate.tolerances] {e}",
                        path.display(),
                        line_of(text, metric.span().start)
                    )
                })?;
            }
            cfg.gate = Some(g);
            cfg.gate_keeps_defaults = gate.defaults.unwrap_or(false);
        } else {
            cfg.gate_keeps_defaults = gate.defaults.unwrap_or(true);
        }
    }
    Ok(cfg)
}

/// Reads `--config`, or the empty config when none was given.
pub fn load(args: &ConfigArgs) -> anyhow::Result<Config> {
    let Some(path) = &args.config else {
        return Ok(Config {
            gate_keeps_defaults: true,
            ..Config::default()
        });
    };
    if path.is_dir() {
        bail!("{}: is a directory, not a config file", path.display());
    }
    crate::input::refuse_device(path, "a config file")?;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the config", path.display()))?;
    if text.trim_start().starts_with('{') {
        let gate = GateConfig::from_json(&text).with_context(|| path.display().to_string())?;
        return Ok(Config {
            path: Some(path.clone()),
            gate: Some(gate),
            gate_keeps_defaults: false,
            is_json_gate_config: true,
            ..Config::default()
        });
    }
    parse_toml(path, &text)
}

/// For the verification verbs: `--config`, else `./framewise.toml` when it exists, else
/// `.framewise/framewise.toml` (where `framewise init` scaffolds it), else the empty config
/// (`None` path). A JSON gate config is refused.
pub fn load_project(args: &ConfigArgs, verb: &str) -> anyhow::Result<Config> {
    let cfg = if args.config.is_some() {
        load(args)?
    } else if let Some(found) = discovered()? {
        load(&ConfigArgs {
            config: Some(found),
        })?
    } else {
        load(args)?
    };
    require_toml(&cfg, verb)?;
    Ok(cfg)
}

/// The project's config when `--config` is not given: `./framewise.toml`, else
/// `.framewise/framewise.toml`. Something at either path that is not a regular file (a
/// dangling link, a FIFO, a directory) is refused, naming it: skipped, it would leave the
/// budgets of the other file (or none) in force without a word.
fn discovered() -> anyhow::Result<Option<PathBuf>> {
    for path in [
        PathBuf::from(PROJECT_CONFIG),
        Path::new(".framewise").join(PROJECT_CONFIG),
    ] {
        let Ok(link) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if path.is_file() {
            return Ok(Some(path));
        }
        let what = match std::fs::metadata(&path) {
            Err(_) if link.file_type().is_symlink() => "a link to nothing".to_owned(),
            Err(_) => "unreadable".to_owned(),
            Ok(meta) => format!("a {}", framewise_analysis::load::file_kind(&meta)),
        };
        bail!(
            "{}: is {what}, not a config file (framewise.toml is a regular file; --config names another)",
            path.display()
        );
    }
    Ok(None)
}

/// Refuses a JSON gate config for a verb other than `gate`: it would be ignored.
pub fn require_toml(cfg: &Config, verb: &str) -> anyhow::Result<()> {
    if cfg.is_json_gate_config {
        bail!(
            "{}: a JSON gate config only applies to `framewise gate`; `{verb}` reads framewise.toml",
            cfg.path.as_deref().unwrap_or(Path::new("--config")).display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_budgets_and_tolerances() {
        let cfg = parse_toml(
            Path::new("framewise.toml"),
            "[budgets]\nframe_ms = 8.0\n[gate.tolerances]\n\"frame.p99\" = 0.2\n",
        )
        .expect("valid");
        assert_eq!(cfg.budget_ns(), Some(8_000_000));
        let gate = cfg.gate.expect("tolerances");
        assert_eq!(gate.tolerances.get("frame.p99"), Some(&0.2));
        assert!(!cfg.gate_keeps_defaults);
    }

    #[test]
    fn an_unknown_key_is_an_error_naming_file_line_and_key() {
        // `[gaet.tolerances]` used to be ignored, and the default tolerances ran.
        let err = parse_toml(
            Path::new("framewise.toml"),
            "[budgets]\nframe_ms = 8.0\n\n[gaet.tolerances]\n\"frame.p99\" = 0.2\n",
        )
        .expect_err("misspelt section");
        let text = err.to_string();
        assert!(
            text.starts_with("framewise.toml: line 4:") && text.contains("`gaet`"),
            "{text}"
        );
        for (toml, key) in [
            ("[budgets]\nframe_msec = 8.0\n", "did you mean frame_ms?"),
            ("[budgets]\nfram_ms = 8.0\n", "`fram_ms` is not a metric path (frame.<m>, work.<m>, scope.<name>.<m>, pass.<name>.<m>, counter.<name>.<m>); did you mean frame_ms?"),
            ("[gate]\ndefault = true\n", "default"),
        ] {
            let text = parse_toml(Path::new("f.toml"), toml)
                .expect_err(key)
                .to_string();
            assert!(
                text.starts_with("f.toml: line 2:") && text.contains(key),
                "{text}"
            );
        }
    }

    #[test]
    fn a_bad_tolerance_path_names_its_line() {
        let err = parse_toml(
            Path::new("f.toml"),
            "[gate.tolerances]\n\"frame.avg\" = 0.1\n\"frame.p98\" = 0.1\n",
        )
        .expect_err("no p98");
        let text = err.to_string();
        assert!(
            text.starts_with("f.toml: line 3: [gate.tolerances] `frame.p98`")
                && text.contains("frame.p99"),
            "{text}"
        );
    }

    #[test]
    fn a_tolerance_naming_a_metric_twice_is_refused_at_its_second_line() {
        // `frame.P99` is `frame.p99` by its alias; sorted, it would come first.
        let err = parse_toml(
            Path::new("f.toml"),
            "[gate.tolerances]\n\"frame.p99\" = 0.1\n\"frame.P99\" = 0.5\n",
        )
        .expect_err("the same metric twice");
        let text = err.to_string();
        assert!(
            text.starts_with("f.toml: line 3: [gate.tolerances] `frame.P99` names the metric `frame.p99` already names"),
            "{text}"
        );
    }

    #[test]
    fn bad_budget_is_refused() {
        let err = parse_toml(Path::new("f.toml"), "[budgets]\nframe_ms = -1\n")
            .expect_err("negative budget");
        assert!(err.to_string().contains("frame_ms"), "{err}");
        // Absurd budgets are refused, not saturated to u64::MAX ns or rounded to 0 ns.
        for absurd in ["1e300", "1e-9", "3600001"] {
            let err = parse_toml(
                Path::new("f.toml"),
                &format!("[budgets]\nframe_ms = {absurd}\n"),
            )
            .expect_err(absurd);
            assert!(
                err.to_string()
                    .starts_with("f.toml: line 2: [budgets] frame_ms must be from 0.001 ms"),
                "{err}"
            );
        }
        let err = parse_toml(Path::new("f.toml"), "[budgets\n").expect_err("not toml");
        assert!(err.to_string().starts_with("f.toml: line 1"), "{err}");
    }

    #[test]
    fn benches_and_metric_budgets() {
        let cfg = parse_toml(
            Path::new("framewise.toml"),
            "[budgets]\nframe_ms = 16.67\n\"counter.draw_calls.max\" = 300\n\"frame.fps\" = 55\n\n[bench.smoke]\ncommand = [\"framewise\", \"demo\"]\nseed = 7\nfixed_dt = 0.016\nresolution = \"640x360\"\ngolden_frame = 300\n",
        )
        .expect("valid");
        assert_eq!(cfg.frame_ms, Some(16.67));
        assert_eq!(
            cfg.budgets.limits.get("counter.draw_calls.max"),
            Some(&300.0)
        );
        assert_eq!(cfg.budgets.limits.get("frame.fps"), Some(&55.0));
        let smoke = cfg.benches.get("smoke").expect("bench");
        assert_eq!(smoke.command, ["framewise", "demo"]);
        assert_eq!(
            (smoke.frames, smoke.warmup, smoke.runs),
            (DEFAULT_FRAMES, DEFAULT_WARMUP, DEFAULT_RUNS)
        );
        assert_eq!(smoke.seed, Some(7));
        assert_eq!(smoke.golden_frame, Some(300));
        assert_eq!(smoke.resolution.as_deref(), Some("640x360"));
    }

    /// Every table and key `framewise.toml` has, as the module's documentation writes them.
    const EVERY_KEY: &str = "[budgets]\nframe_ms = 16.67\n\"counter.draw_calls.max\" = 300\n\n[bench.smoke]\ncommand = [\"framewise\", \"demo\", \"--quiet\"]\nframes = 600\nwarmup = 120\nruns = 5\nseed = 1\nfixed_dt = 0.016666\nresolution = \"1280x720\"\ngolden_frame = 300\ngolden_threshold = 0.98\n\n[gate]\ndefaults = true\n[gate.tolerances]\n\"frame.p99\" = 0.10\n\"counter.draw_calls.max\" = 0\n";

    /// `framewise.toml` cut at every character, and with every byte in turn replaced by one
    /// that makes or breaks TOML's structure: parsing never panics, and a refusal names the
    /// file (the `.framewise/framewise.toml` that `init` writes, and every key, as samples).
    #[test]
    fn cut_and_corrupted_configs_are_refused_naming_the_file() {
        let path = Path::new("f.toml");
        let mut parsed = 0usize;
        let mut check = |text: &str| match parse_toml(path, text) {
            Ok(_) => parsed += 1,
            Err(e) => {
                let line = crate::output::one_line(&e);
                assert!(line.starts_with("f.toml: "), "{text:?}: {line}");
            }
        };
        for sample in [EVERY_KEY, framewise_incidents::CONFIG_TOML] {
            assert!(parse_toml(path, sample).is_ok(), "the sample parses");
            for (at, _) in sample.char_indices() {
                check(&sample[..at]);
            }
            for at in 0..sample.len() {
                for byte in *b"\"\n=[].0x\\#-e" {
                    let mut bytes = sample.as_bytes().to_vec();
                    bytes[at] = byte;
                    if let Ok(text) = String::from_utf8(bytes) {
                        check(&text);
                    }
                }
            }
        }
        assert!(
            parsed > 0,
            "some corruptions still parse (a comment, a digit)"
        );
    }

    #[test]
    fn bad_benches_and_budgets_name_their_line() {
        for (toml, line, needle) in [
            ("[budgets]\n\"frame.p98\" = 3\n", 2, "frame.p99"),
            ("[budgets]\nframe_msec = 8.0\n", 2, "frame_msec"),
            ("[budgets]\n\"counter.*.max\" = 3\n", 2, "wildcard"),
            (
                "\n[bench.a]\ncommand = [\"x\"]\nruns = 2\n",
                4,
                "at least 3",
            ),
            ("[bench.a]\ncommand = []\n", 2, "command"),
            (
                "[bench.a]\ncommand = [\"x\"]\nresolution = \"big\"\n",
                3,
                "WIDTHxHEIGHT",
            ),
            ("[bench.a]\ncommand = [\"x\"]\nframes = 0\n", 3, "frames"),
            (
                "[bench.a]\ncommand = [\"x\"]\nfixed_dt = 1e300\n",
                3,
                "`fixed_dt` = 1e300: expected seconds in (0, 1)",
            ),
            (
                "[bench.a]\ncommand = [\"x\"]\nfixed_dt = 1e-12\n",
                3,
                "`fixed_dt` = 1e-12: less than a nanosecond, a step of 0",
            ),
            // The key's line, not the table's, however far below the header it is.
            (
                "[bench.a]\ncommand = [\"x\"]\n\n# runs\n  runs   = 5000\n",
                5,
                "at most 1000 runs",
            ),
            ("[bench.a]\ncommand = [\"x\"]\nwarmpu = 3\n", 3, "warmpu"),
            ("[bench.\"../x\"]\ncommand = [\"x\"]\n", 1, "bench name"),
        ] {
            let text = parse_toml(Path::new("f.toml"), toml)
                .expect_err(toml)
                .to_string();
            assert!(
                text.starts_with(&format!("f.toml: line {line}:")) && text.contains(needle),
                "{toml:?}: {text}"
            );
        }
    }
}
