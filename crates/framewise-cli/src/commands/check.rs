//! `framewise check`: every budget of framewise.toml against what was measured — the
//! running game's `.framewise/profile.json`, or a fresh bench with `--bench NAME`. After
//! `framewise bench`, profile.json is the bench's last run (its runs' incident log goes to
//! the bench's directory); a `golden` run never replaces it.
//!
//! Exit: 0 every budget judged was measured and inside; 1 any breached; 2 (`incomplete`) no
//! budget breached but one not measured (with a warning naming each, and why), or a bench
//! whose runs lost frames, breached or not (as `bench --compare` calls such a side
//! inconclusive); 2 (`no-budgets`) with a warning when no budget is declared (nothing judged
//! is not a pass); 4 nothing measured for any budget (no profile.json, or none of its
//! figures is a budgeted metric) — never a silent pass. A budget's path whose scope, pass or
//! counter nothing the bench measured has is a usage error (exit 4) with the nearest
//! measured paths.

use std::path::{Path, PathBuf};

use anyhow::bail;
use framewise_analysis::bench::budget::{evaluate_budgets, BudgetCheck, BudgetState};
use framewise_analysis::bench::usable;
use framewise_analysis::MetricTable;
use serde::Serialize;

use crate::commands::bench::{self as bench_verb, DEFAULT_DIR};
use crate::config::{self, ConfigArgs};
use crate::output::{self, Annotation, OutputArgs, Report};
use crate::table;

/// The schema name of `check --format json`.
pub const CHECK_SCHEMA: &str = "framewise.check/1";

/// The verdict of a check that judged less than it was asked to: a budget not measured, or a
/// bench whose runs lost frames. Exit 2, never a pass.
pub const INCOMPLETE: &str = "incomplete";

/// `framewise check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run `[bench.NAME]` and judge its result (the median of its per-run values) instead
    /// of reading `.framewise/profile.json`.
    #[arg(long, value_name = "NAME")]
    pub bench: Option<String>,
    /// Judge only exact counter budgets (`counter.*`): for CI without a GPU, where timings
    /// are not the hardware's.
    #[arg(long)]
    pub counters_only: bool,
    /// The `.framewise` directory.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where the measurement came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// The running (or last) session's rolling summary.
    Profile {
        /// The file.
        file: String,
        /// When it was written.
        at: String,
    },
    /// A bench run by this check.
    Bench {
        /// The bench's name.
        name: String,
        /// The result file.
        file: String,
    },
    /// Nothing: no budget was declared.
    None,
}

/// `check --format json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckResult {
    /// [`CHECK_SCHEMA`].
    pub schema: &'static str,
    /// `inside` (exit 0: every budget judged was measured and inside), `breached` (1),
    /// `incomplete` (2: none breached but one not measured, or a bench whose runs lost
    /// frames), `no-budgets` (2: nothing declared) or `nothing-measured` (4).
    pub verdict: &'static str,
    /// The exit code.
    pub exit_code: u8,
    /// The config file read, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// What was measured.
    pub source: Source,
    /// Only counter budgets were judged.
    pub counters_only: bool,
    /// Every budget judged.
    pub budgets: Vec<BudgetCheck>,
    /// What the reader should know (no budgets; each budget not measured, and why; bench
    /// runs that lost frames).
    pub warnings: Vec<String>,
}

/// A metric's value by path.
type Lookup = Box<dyn Fn(&str) -> Option<f64>>;

/// What profile.json carries, as metric paths: the frame median, p95 and fps; each
/// counter's count, min, max, avg and last; each scope's count, avg, min, p50, p95 and max.
/// Every other path is not measured by it.
fn profile_values(profile: &framewise_incidents::Profile) -> MetricTable {
    let mut t = MetricTable::default();
    let mut put = |path: String, v: Option<f64>| {
        if let Some(v) = v {
            t.values.insert(path, v);
        }
    };
    put("frame.p50".into(), profile.frame.median_ms);
    put("frame.p95".into(), profile.frame.p95_ms);
    put("frame.fps".into(), profile.frame.fps);
    for (name, c) in &profile.counter_stats {
        put(format!("counter.{name}.count"), Some(c.count as f64));
        put(format!("counter.{name}.min"), Some(c.min as f64));
        put(format!("counter.{name}.max"), Some(c.max as f64));
        put(format!("counter.{name}.avg"), Some(c.avg));
        put(format!("counter.{name}.last"), Some(c.last as f64));
    }
    for (name, s) in &profile.scopes {
        put(format!("scope.{name}.count"), Some(s.count as f64));
        put(format!("scope.{name}.avg"), Some(s.avg_ms));
        put(format!("scope.{name}.min"), Some(s.min_ms));
        put(format!("scope.{name}.p50"), s.p50_ms);
        put(format!("scope.{name}.p95"), s.p95_ms);
        put(format!("scope.{name}.max"), Some(s.max_ms));
    }
    t
}

/// Why a budget was not measured by profile.json: what the file carries.
const PROFILE_CARRIES: &str = " (profile.json carries frame.p50/p95/fps, counter.NAME.count/min/max/avg/last and scope.NAME.count/avg/min/p50/p95/max of what ran in its window; check --bench NAME measures every metric)";

/// Why a budget was not measured by a bench.
const BENCH_LACKS: &str = " (no run of the bench has a value for it: a statistic its frames cannot give, such as a p99 under 100 measured frames or a gauge's sum)";

/// What was measured, ready to be judged.
struct Measured {
    source: Source,
    values: Lookup,
    /// The metric tables the names are looked up in (one per bench run, or the profile's).
    tables: Vec<MetricTable>,
    /// Why this measurement cannot pass whatever it reads (a bench whose runs lost frames).
    damaged: Option<String>,
}

impl Measured {
    fn profile(profile: &framewise_incidents::Profile, file: &Path) -> Self {
        let table = profile_values(profile);
        let lookup = table.clone();
        Self {
            source: Source::Profile {
                file: file.display().to_string(),
                at: profile.common.at.clone(),
            },
            values: Box::new(move |p| lookup.get(p)),
            tables: vec![table],
            damaged: None,
        }
    }
}

/// Why a bench result cannot decide a check, if it cannot, by the rules `bench --compare`
/// calls a side inconclusive by ([`usable`]): runs that lost frames
/// ([`usable::lost_runs`]), each named with how many and the defects that lost them; short
/// or long runs ([`usable::length_reasons`]); a value framewise never writes
/// ([`usable::first_unusable`], the rule a result read back from a file is refused by).
fn bench_damage(result: &framewise_analysis::bench::BenchResult) -> Option<String> {
    let lost = usable::lost_runs(result);
    if lost > 0 {
        let each: Vec<String> = result
            .runs
            .iter()
            .filter(|r| r.frames_lost > 0)
            .map(|r| {
                // Each kind once, in the order the run's defects give them.
                let mut kinds: Vec<String> = Vec::new();
                for d in &r.defects {
                    let kind = crate::commands::serde_name(&d.kind);
                    if framewise_analysis::diff::loses_frames(d.kind) && !kinds.contains(&kind) {
                        kinds.push(kind);
                    }
                }
                let kinds = if kinds.is_empty() {
                    String::new()
                } else {
                    format!(", {}", kinds.join(", "))
                };
                format!("run {} lost {} frame(s){kinds}", r.run, r.frames_lost)
            })
            .collect();
        let each = if each.is_empty() {
            String::new()
        } else {
            format!(": {}", each.join("; "))
        };
        return Some(format!(
            "{lost} of {} bench run(s) lost frames (dropped by the recorder or lost from the file){each}; figures over frames that are not all there cannot pass or breach a budget (bench --compare calls such a result inconclusive): the check is incomplete",
            result.runs.len()
        ));
    }
    let lengths = usable::length_reasons(None, result);
    if !lengths.is_empty() {
        return Some(format!(
            "{}; figures over another stretch of the program cannot pass or breach a budget (bench --compare calls such a result inconclusive): the check is incomplete",
            lengths.join("; ")
        ));
    }
    usable::first_unusable(result).map(|why| {
        format!(
            "the bench result holds {why}; framewise writes no such value: the check is incomplete"
        )
    })
}

/// The no-budgets result when nothing is declared (with `counters_only`, no counter budget).
fn no_budgets(cfg: &config::Config, counters_only: bool) -> Option<CheckResult> {
    let config_file = cfg.path.as_ref().map(|p| p.display().to_string());
    let declared = cfg
        .budgets
        .entries()
        .into_iter()
        .filter(|(_, m, _)| !counters_only || m.starts_with("counter."))
        .count();
    if declared != 0 {
        return None;
    }
    let what = if counters_only && !cfg.budgets.is_empty() {
        "no counter budget is declared"
    } else {
        "no budgets are declared"
    };
    Some(CheckResult {
        schema: CHECK_SCHEMA,
        verdict: "no-budgets",
        // Nothing was judged: not a pass (an agent told to stop when `check` exits 0
        // must not stop on a file that declares nothing).
        exit_code: 2,
        source: Source::None,
        counters_only,
        budgets: Vec::new(),
        warnings: vec![match config_file.as_deref() {
            Some(file) => format!(
                "{what} in {file}: nothing to check (add [budgets] with frame_ms or metric paths)"
            ),
            // No file at all: saying "none declared in framewise.toml" named a file that is
            // not there.
            None => format!(
                "no {} (nor .framewise/{0}) to declare budgets: nothing to check (`framewise init` scaffolds one; add [budgets] with frame_ms or metric paths)",
                config::PROJECT_CONFIG
            ),
        }],
        config: config_file,
    })
}

/// Judges the budgets: library form of the verb (the MCP server calls it).
pub fn evaluate(
    cfg: &config::Config,
    dir: &Path,
    bench: Option<&str>,
    counters_only: bool,
) -> anyhow::Result<CheckResult> {
    // A misspelt `--bench` is an error whatever the budgets (`check --bench smok` with no
    // budget declared said only "nothing to check").
    if let Some(name) = bench {
        bench_verb::named_settings(cfg, name, None, None, None)?;
    }
    if let Some(nothing) = no_budgets(cfg, counters_only) {
        return Ok(nothing);
    }
    let measured = match bench {
        Some(name) => {
            let (result, file) = bench_verb::run_named(cfg, name, dir, (None, None, None))?;
            let tables: Vec<MetricTable> = result
                .runs
                .iter()
                .map(|r| MetricTable {
                    values: r.metrics.clone(),
                })
                .collect();
            let damaged = bench_damage(&result);
            Measured {
                source: Source::Bench {
                    name: name.to_owned(),
                    file: file.display().to_string(),
                },
                values: Box::new(move |p| result.value(p)),
                tables,
                damaged,
            }
        }
        None => {
            let path = dir.join(framewise_incidents::PROFILE_FILE);
            if !path.exists() {
                bail!(
                        "nothing measured: {} does not exist (run the game with a recording session, or check --bench NAME)",
                        path.display()
                    );
            }
            // Anything else (a FIFO, a device, a directory) is refused by read_profile, which
            // names what it found.
            let profile = read_profile(&path)?;
            Measured::profile(&profile, &path)
        }
    };
    judge(cfg, counters_only, measured)
}

/// Judges `cfg`'s budgets on `profile` (read from `file`) exactly as `check` without
/// `--bench` does: `hook-status` names the budgets this breaches.
pub fn evaluate_profile(
    cfg: &config::Config,
    profile: &framewise_incidents::Profile,
    file: &Path,
) -> anyhow::Result<CheckResult> {
    if let Some(nothing) = no_budgets(cfg, false) {
        return Ok(nothing);
    }
    judge(cfg, false, Measured::profile(profile, file))
}

/// The verdict on what was measured. Exit 0 (`inside`) only when every budget judged was
/// measured and inside, on a measurement that lost nothing; 4 when no budget was measured;
/// 2 (`incomplete`) when a bench's runs lost frames (whatever the budgets read, as a
/// `bench --compare` with such a side is inconclusive), or when no budget is breached but one
/// was not measured; else 1 (`breached`) for any breach.
fn judge(
    cfg: &config::Config,
    counters_only: bool,
    measured: Measured,
) -> anyhow::Result<CheckResult> {
    let Measured {
        source,
        values,
        tables,
        damaged,
    } = measured;
    if matches!(source, Source::Bench { .. }) {
        let refs: Vec<&MetricTable> = tables.iter().collect();
        for (_, metric, _) in cfg.budgets.entries() {
            if let Some(err) = framewise_analysis::gate::unknown_name(&metric, &refs) {
                bail!("[budgets] {err}");
            }
        }
    }
    let budgets = evaluate_budgets(&cfg.budgets, counters_only, values);
    let mut warnings = Vec::new();
    let unmeasured: Vec<&BudgetCheck> = budgets
        .iter()
        .filter(|b| b.state == BudgetState::Unmeasured)
        .collect();
    if !unmeasured.is_empty() {
        let why = match source {
            Source::Profile { .. } => PROFILE_CARRIES,
            Source::Bench { .. } => BENCH_LACKS,
            Source::None => "",
        };
        let names: Vec<&str> = unmeasured.iter().map(|b| b.budget.as_str()).collect();
        warnings.push(format!("not measured: {}{why}", names.join(", ")));
    }
    if matches!(source, Source::Profile { .. }) {
        let refs: Vec<&MetricTable> = tables.iter().collect();
        for b in &unmeasured {
            // A frame figure the profile carries but this one lacks: its window had too few
            // frames with a period (a p95 needs 20).
            if matches!(b.metric.as_str(), "frame.p50" | "frame.p95" | "frame.fps") {
                warnings.push(format!(
                    "{}: profile.json's frame block has no {} (its window held too few frames with a period; a p95 needs 20)",
                    b.budget, b.metric
                ));
                continue;
            }
            // A scope or counter the window lacks may simply not have run; one a letter or
            // two from a name the profile has is more likely a typo, and is said so.
            if framewise_analysis::gate::unknown_name(&b.metric, &refs).is_none() {
                continue;
            }
            let paths = tables
                .iter()
                .flat_map(|t| t.values.keys())
                .map(String::as_str);
            let near = framewise_analysis::gate::nearest(&b.metric, paths);
            if !near.is_empty() {
                warnings.push(format!(
                    "{}: no such name in profile.json's window; did you mean {}?",
                    b.metric,
                    near.join(", ")
                ));
            }
        }
    }
    let nothing_measured = unmeasured.len() == budgets.len();
    let unjudged = !unmeasured.is_empty();
    if let Some(why) = &damaged {
        warnings.push(why.clone());
    }
    let (verdict, exit_code) = if nothing_measured {
        ("nothing-measured", crate::EXIT_ERROR)
    } else if damaged.is_some() {
        (INCOMPLETE, 2)
    } else if budgets.iter().any(|b| b.state == BudgetState::Breached) {
        ("breached", 1)
    } else if unjudged {
        warnings.push(format!(
            "{} of {} budget(s) not measured: the check is incomplete, not a pass",
            unmeasured.len(),
            budgets.len()
        ));
        (INCOMPLETE, 2)
    } else {
        ("inside", 0)
    };
    Ok(CheckResult {
        schema: CHECK_SCHEMA,
        verdict,
        exit_code,
        config: cfg.path.as_ref().map(|p| p.display().to_string()),
        source,
        counters_only,
        budgets,
        warnings,
    })
}

/// The files `check` reads, which `--json PATH` must not name: the config, and the profile
/// (without `--bench`) or the bench's ledger and earlier results (with it).
fn inputs(cfg: &config::Config, dir: &Path, bench: Option<&str>) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = cfg.path.iter().cloned().collect();
    match bench {
        Some(name) => {
            files.push(dir.join(bench_verb::LEDGER_FILE));
            files.extend(bench_verb::results_of(dir, name).unwrap_or_default());
        }
        None => files.push(dir.join(framewise_incidents::PROFILE_FILE)),
    }
    files
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.stdout_format()?;
    let cfg = config::load_project(&args.config, "check")?;
    let inputs = inputs(&cfg, &args.dir, args.bench.as_deref());
    let refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    args.output.check_inputs(&refs)?;
    let result = evaluate(&cfg, &args.dir, args.bench.as_deref(), args.counters_only)?;
    if result.verdict == "nothing-measured" {
        bail!(
            "nothing measured for any budget ({})",
            result.warnings.join("; ")
        );
    }
    for w in &result.warnings {
        say!("framewise: warning: {w}");
    }
    let code = result.exit_code;
    output::emit(&args.output, &View(result))?;
    Ok(code)
}

/// `check`'s result, for people and machines.
pub struct View(pub CheckResult);

fn source_line(s: &Source) -> String {
    match s {
        Source::Profile { file, at } => format!("measured: {file} (written {at})"),
        Source::Bench { name, file } => {
            format!("measured: bench {name}, the median of its runs ({file})")
        }
        Source::None => "measured: nothing".to_owned(),
    }
}

impl Report for View {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.0)?)
    }

    fn console(&self, out: &mut String) {
        let r = &self.0;
        out.push_str(&format!(
            "{} (exit {})\n",
            r.verdict.to_uppercase(),
            r.exit_code
        ));
        if r.budgets.is_empty() {
            for w in &r.warnings {
                out.push_str(&format!("  {w}\n"));
            }
            return;
        }
        out.push_str(&format!("  {}\n\n", source_line(&r.source)));
        bench_verb::report::budgets_table(&r.budgets, false).console(out, 0);
    }

    fn markdown(&self, out: &mut String) {
        let r = &self.0;
        out.push_str(&format!(
            "### framewise check: {} (exit {})\n\n",
            r.verdict.to_uppercase(),
            r.exit_code
        ));
        for w in &r.warnings {
            out.push_str(&format!("- {w}\n"));
        }
        if !r.budgets.is_empty() {
            out.push_str(&format!("\n{}\n\n", source_line(&r.source)));
            bench_verb::report::budgets_table(&r.budgets, false).markdown(out);
        }
    }

    fn annotations(&self) -> Vec<Annotation> {
        let r = &self.0;
        let mut out: Vec<Annotation> = r
            .budgets
            .iter()
            .filter(|c| c.state == BudgetState::Breached)
            .map(|c| Annotation {
                level: "error",
                title: format!("framewise check: {} breached", c.budget),
                message: format!(
                    "{} = {} against a limit of {}",
                    c.metric,
                    table::metric(&c.metric, c.value),
                    table::metric(&c.metric, Some(c.limit))
                ),
            })
            .collect();
        // An incomplete check is not a pass: say why where a CI run shows it.
        if r.verdict == INCOMPLETE {
            out.extend(r.warnings.iter().map(|w| Annotation {
                level: "warning",
                title: "framewise check: incomplete".to_owned(),
                message: w.clone(),
            }));
        }
        out
    }
}

/// `.framewise/profile.json`, or one error line naming it once, first:
/// `PATH: cannot read the profile: WHY`. A profile of another schema, or holding a figure the
/// recorder never writes (a negative time, a value beyond ±1e100: an edited file), is refused
/// as a bench result is, rather than judged: a p95 of -3 ms is inside every budget.
pub(crate) fn read_profile(path: &std::path::Path) -> anyhow::Result<framewise_incidents::Profile> {
    let profile = framewise_incidents::read_profile(path).map_err(|e| match e {
        framewise_incidents::Error::Json { source, .. } => {
            anyhow::anyhow!("{}: cannot read the profile: {source}", path.display())
        }
        framewise_incidents::Error::Io { source, .. } => {
            anyhow::anyhow!("{}: cannot read the profile: {source}", path.display())
        }
        other => other.into(),
    })?;
    if profile.schema != framewise_incidents::PROFILE_SCHEMA {
        anyhow::bail!(
            "{}: cannot read the profile: schema {} is not {}",
            path.display(),
            profile.schema,
            framewise_incidents::PROFILE_SCHEMA
        );
    }
    let unusable = profile_values(&profile)
        .values
        .iter()
        .find_map(|(metric, &v)| {
            framewise_analysis::bench::usable::unusable(metric, v, metric.starts_with("counter."))
        });
    if let Some(why) = unusable {
        anyhow::bail!(
            "{}: cannot read the profile: {why}; framewise writes no such value (was the file edited?)",
            path.display()
        );
    }
    Ok(profile)
}
