//! `framewise mcp`: a Model Context Protocol server on stdin/stdout, for coding agents.
//!
//! Each tool backed by a verb calls the same function the verb calls
//! (`commands::<verb>::evaluate`), so a tool's verdict and exit code are the verb's;
//! `get_profile` and `get_ledger` read `.framewise/profile.json` and the bench ledger. A tool returns schema-typed JSON: a
//! headline (verdict, exit code, the few numbers an agent acts on) and `report_path`, the
//! verb's whole `--format json` document written under `--reports DIR` — large results are
//! files, not inlined. A call that cannot produce a verdict (an unreadable capture, a bad
//! tolerance, a panic) returns `isError: true` with the CLI's one-line message and exit code
//! 4; the server keeps serving. Nothing but the protocol is written to stdout. A line that
//! is not JSON is answered -32700 (Parse error), JSON that is no request -32600 (Invalid
//! Request), per JSON-RPC 2.0, and the session goes on (`transport`).
//!
//! Exit: 0 when the client closes stdin; 4 when the server cannot start.

mod arguments;
mod bench_results;
mod bisect_results;
mod duplicates;
mod inputs;
mod ledger_results;
mod reports;
mod results;
pub(crate) mod transport;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use arguments::Parameters;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, Json, ServerHandler, ServiceExt};

use crate::commands::{
    attribute, bench, bisect, census, check, diff, fix, gate, history, hitches, issues, summarize,
};
use crate::config::ConfigArgs;
use crate::input::InputArgs;
use crate::ledger::{parse_instant, DirArgs};
use crate::list::ListArgs;
use crate::output::{self, OutputArgs};
use bench_results::{
    read_ledger, BenchParams, BenchResultHeadline, CheckBudgetsResult, CheckParams, LedgerParams,
    LedgerResult,
};
use bisect_results::{BisectParams, BisectResult};
use inputs::regular_input;
use ledger_results::{
    DirParams, FixParams, FixResult, HistoryParams, HistoryResult, IssuesParams, IssuesResult,
    ProfileResult,
};
use reports::{default_reports, usable_reports, Reports, NOTHING_RUN};
use results::{
    AttributeParams, AttributeResult, CaptureParams, CensusParams, CensusResult, CompareMode,
    CompareParams, CompareResult, HitchesResult, SummarizeResult, ToolError,
};

/// `framewise mcp`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where the tools write their whole JSON reports (created when first needed) [default:
    /// `mcp/` in the `.framewise/` the tools read ($FRAMEWISE_DIR, else the nearest from the
    /// working directory up), else `.framewise/mcp`].
    #[arg(long, value_name = "DIR")]
    pub reports: Option<PathBuf>,
}

/// Runs the server until the client closes stdin.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let reports = args.reports.unwrap_or_else(default_reports);
    usable_reports(&reports)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    let started = runtime.block_on(async {
        Server::new(reports)
            .serve(transport::LineTransport::spawn(
                tokio::io::stdin(),
                tokio::io::stdout(),
            ))
            .await
    });
    let service = match started {
        Ok(service) => service,
        Err(e) => {
            // The reader task waits in a read of stdin, on the runtime's blocking pool, and
            // dropping the runtime would wait for that read to return: the server stayed
            // until the client's next line, then exited without answering it. The handshake
            // failed and no tool ran, so nothing is left to wait for.
            runtime.shutdown_background();
            anyhow::bail!("MCP initialization failed: {}", handshake_failure(&e));
        }
    };
    runtime.block_on(async {
        service
            .waiting()
            .await
            .map_err(|e| anyhow::anyhow!("MCP server stopped: {e}"))?;
        Ok(0)
    })
}

/// Why the handshake failed, in the protocol's terms: the SDK says it with the message's
/// whole debug form (`expect initialized request, but received: Some(Notification(…))`).
fn handshake_failure(error: &rmcp::service::ServerInitializeError) -> String {
    use rmcp::model::JsonRpcMessage;
    use rmcp::service::ServerInitializeError as E;
    const STARTS: &str = "the MCP handshake starts with the client's `initialize` request";
    match error {
        E::ConnectionClosed(_) => format!("stdin closed before an `initialize` request ({STARTS})"),
        E::ExpectedInitializeRequest(Some(JsonRpcMessage::Notification(_))) => {
            format!("a notification came before the `initialize` request ({STARTS})")
        }
        E::ExpectedInitializeRequest(Some(
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_),
        )) => {
            format!("a response came before the `initialize` request ({STARTS})")
        }
        other => other.to_string(),
    }
}

/// The MCP server: one tool per verb.
#[derive(Clone, Debug)]
pub struct Server {
    tool_router: ToolRouter<Self>,
    reports: Arc<Reports>,
}

type ToolResult<T> = Result<Json<T>, Json<ToolError>>;

/// Runs a tool's work off the protocol's thread (captures take a while to load), and turns
/// an error or a panic into a structured tool error, [`in_mcp_terms`] of the tool whose
/// arguments are `P`.
async fn blocking<P: schemars::JsonSchema + 'static, T: Send + 'static>(
    work: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> ToolResult<T> {
    let error = |message: String| {
        Json(ToolError {
            error: message,
            exit_code: crate::EXIT_ERROR,
        })
    };
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(value)) => Ok(Json(value)),
        Ok(Err(err)) => Err(error(in_mcp_terms(
            &output::one_line(&err),
            &arguments::argument_names::<P>(),
        ))),
        Err(join) => Err(error(format!("internal error: the tool failed: {join}"))),
    }
}

/// The verbs' option names that a tool takes as an argument, as `(option, argument)`: a
/// message the verbs word for the command line (`--allow-damaged compares what is left`)
/// names the argument instead (`` `allow_damaged` compares what is left ``) when the tool
/// takes that argument. (Test `every_option_named_is_an_argument_of_a_tool`.)
const OPTION_ARGUMENTS: &[(&str, &str)] = &[
    ("--allow-damaged", "allow_damaged"),
    ("--no-default-tolerances", "no_default_tolerances"),
    ("--tolerance", "tolerances"),
    ("--include-automated", "include_automated"),
    ("--from", "from"),
    ("--to", "to"),
    ("--dir", "dir"),
    ("--config", "config"),
    ("--bench", "bench"),
    ("--counters-only", "counters_only"),
    ("--fp", "fp"),
    ("--footprints", "footprints"),
    ("--title", "title"),
    ("--solution", "solution"),
    ("--frame", "frame"),
    ("--before", "before"),
    ("--after", "after"),
    ("--commit", "commit"),
    ("--buckets", "buckets"),
    ("--change", "change"),
];

/// `text` with every option of [`OPTION_ARGUMENTS`] whose argument the tool takes (`takes`)
/// named as that argument, in backquotes; all else as it was. An option is a whole word
/// standing alone — after a space, an opening bracket or quote, a comma, or another option
/// and a `/` (`--from/--to`), and before a space, punctuation or the end — so a path with
/// `--` in it (`old--to.sgpt`, `my--to/x`) is not one; nor is anything between backquotes
/// (a command, a name quoted as given).
pub(crate) fn in_mcp_terms(text: &str, takes: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quoted = false;
    // Where the last option rewritten ended, in `text`.
    let mut after_option = None;
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let c = rest.chars().next().unwrap_or_default();
        if c == '`' {
            quoted = !quoted;
        }
        if quoted || !rest.starts_with("--") {
            out.push(c);
            at += c.len_utf8();
            continue;
        }
        let word = 2 + rest[2..]
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .unwrap_or(rest.len() - 2);
        let before = text[..at].chars().next_back();
        let starts = match before {
            None => true,
            Some('/') => after_option == Some(at - 1),
            Some(b) => b.is_whitespace() || "([{,;'\"=".contains(b),
        };
        let mut next = rest[word..].chars();
        let ends = match next.next() {
            None => true,
            Some('.' | '?' | '!') => next.next().is_none_or(char::is_whitespace),
            Some(n) => n.is_whitespace() || ",;:)]}'\"/=".contains(n),
        };
        let argument = OPTION_ARGUMENTS
            .iter()
            .find(|(o, a)| *o == &rest[..word] && takes.iter().any(|t| t == a))
            .map(|(_, a)| a);
        match argument {
            Some(argument) if starts && ends => {
                out.push('`');
                out.push_str(argument);
                out.push('`');
                after_option = Some(at + word);
            }
            _ => out.push_str(&rest[..word]),
        }
        at += word;
    }
    out
}

/// A verdict's reasons, each [`in_mcp_terms`] of the tool whose arguments are `P`.
pub(crate) fn reasons_in_mcp_terms<'a, P: schemars::JsonSchema + 'static>(
    reasons: impl IntoIterator<Item = &'a String>,
) -> Vec<String> {
    let takes = arguments::argument_names::<P>();
    reasons
        .into_iter()
        .map(|r| in_mcp_terms(r, &takes))
        .collect()
}

/// `--dir` as a tool's `dir` argument names it.
fn dir_args(dir: Option<String>) -> DirArgs {
    DirArgs {
        dir: dir.map(PathBuf::from),
    }
}

/// An optional ISO 8601 time argument, as the verbs' `--from`/`--to` read it.
fn instant(name: &str, text: Option<String>) -> anyhow::Result<Option<i64>> {
    text.map(|t| parse_instant(&t).map_err(|e| anyhow::anyhow!("{name}: {e}")))
        .transpose()
}

/// A `config` argument, refused as [`regular_input`] when it names a stream or a pipe.
fn config_input(path: Option<&str>) -> anyhow::Result<()> {
    path.map_or(Ok(()), |p| regular_input("config", Path::new(p)))
}

fn config(path: Option<String>) -> ConfigArgs {
    ConfigArgs {
        config: path.map(PathBuf::from),
    }
}

#[tool_router]
impl Server {
    /// A server writing its reports under `reports`.
    pub fn new(reports: impl AsRef<Path>) -> Self {
        Self {
            tool_router: Self::tool_router(),
            reports: Arc::new(Reports::new(reports.as_ref())),
        }
    }

    /// `framewise summarize`.
    #[tool(
        description = "Frame, work, scope, GPU pass and counter statistics of one capture (.sgpt, .litecap or Chrome trace JSON), as `framewise summarize` computes them. Returns the headline figures and `report_path`, the whole JSON summary. Verdict pass (exit 0), or inconclusive (exit 2) when no frame has a known period."
    )]
    async fn summarize_capture(
        &self,
        params: Parameters<CaptureParams>,
    ) -> Result<Json<SummarizeResult>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<CaptureParams, _>(move || {
            regular_input("capture", Path::new(&p.capture))?;
            config_input(p.config.as_deref())?;
            let args = summarize::Args {
                file: PathBuf::from(p.capture),
                input: InputArgs::default(),
                list: ListArgs::default(),
                config: config(p.config),
                output: OutputArgs::default(),
            };
            let outcome = summarize::evaluate(&args)?;
            let path = reports.write("summarize", &outcome.view)?;
            Ok(SummarizeResult::new(&outcome.view, outcome.exit_code, path))
        })
        .await
    }

    /// `framewise hitches`.
    #[tool(
        description = "Every hitch of one capture (a frame whose period exceeds max(2 x rolling median, 1.5 x frame budget)), each with ranked classifications, confidence and evidence, as `framewise hitches` finds them. Verdict pass (no hitch, exit 0), fail (hitches, exit 1) or inconclusive (no frame judged, exit 2)."
    )]
    async fn find_hitches(
        &self,
        params: Parameters<CaptureParams>,
    ) -> Result<Json<HitchesResult>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<CaptureParams, _>(move || {
            regular_input("capture", Path::new(&p.capture))?;
            config_input(p.config.as_deref())?;
            let args = hitches::Args {
                file: PathBuf::from(p.capture),
                input: InputArgs::default(),
                list: ListArgs::default(),
                config: config(p.config),
                output: OutputArgs::default(),
                append: false,
                dir: None,
            };
            let outcome = hitches::evaluate(&args, false)?;
            let path = reports.write("hitches", &outcome.view)?;
            Ok(HitchesResult::new(&outcome.view, outcome.exit_code, path))
        })
        .await
    }

    /// `framewise attribute`.
    #[tool(
        description = "Rank scopes (with their call sites) by contribution to one frame's excess over the rolling median, or without `frame` to the p95 frames' excess, as `framewise attribute` does. A ranking, not an accounting. Verdict pass (ranked, exit 0) or inconclusive (exit 2)."
    )]
    async fn attribute(
        &self,
        params: Parameters<AttributeParams>,
    ) -> Result<Json<AttributeResult>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<AttributeParams, _>(move || {
            regular_input("capture", Path::new(&p.capture))?;
            let args = attribute::Args {
                file: PathBuf::from(p.capture),
                frame: p.frame,
                list: ListArgs::default(),
                input: InputArgs::default(),
                output: OutputArgs::default(),
            };
            let outcome = attribute::evaluate(&args)?;
            let path = reports.write("attribute", &outcome.view)?;
            Ok(AttributeResult::new(&outcome.view, outcome.exit_code, path))
        })
        .await
    }

    /// `framewise gate` / `framewise diff`.
    #[tool(
        description = "Compare two captures. mode `gate` (default), as `framewise gate`: fails (exit 1) when a gated metric worsened past its tolerance (defaults: frame.avg and frame.p99 at +10%; add e.g. `counter.draw_calls.max=0`); inconclusive (2) for damaged or empty inputs; incomparable (3) across timing regimes. mode `diff`, as `framewise diff`: every metric side by side, never decides. One pair of captures is a single run: for a verdict with a noise floor, compare canonical benches."
    )]
    async fn compare_captures(
        &self,
        params: Parameters<CompareParams>,
    ) -> Result<Json<CompareResult>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<CompareParams, _>(move || {
            regular_input("base", Path::new(&p.base))?;
            regular_input("cand", Path::new(&p.cand))?;
            config_input(p.config.as_deref())?;
            match p.mode {
                CompareMode::Gate => {
                    let args = gate::Args {
                        base: PathBuf::from(p.base),
                        cand: PathBuf::from(p.cand),
                        tolerances: p.tolerances,
                        no_default_tolerances: p.no_default_tolerances,
                        allow_damaged: p.allow_damaged,
                        list: ListArgs::default(),
                        input: InputArgs::default(),
                        config: config(p.config),
                        output: OutputArgs::default(),
                    };
                    let outcome = gate::evaluate(&args)?;
                    let path = reports.write("gate", &outcome.view)?;
                    Ok(CompareResult::of_gate(&outcome.view, outcome.exit_code, path))
                }
                CompareMode::Diff => {
                    if !p.tolerances.is_empty() || p.no_default_tolerances {
                        anyhow::bail!(
                            "tolerances apply to mode `gate`; a diff reports every metric and decides nothing"
                        );
                    }
                    let args = diff::Args {
                        base: PathBuf::from(p.base),
                        cand: PathBuf::from(p.cand),
                        allow_damaged: p.allow_damaged,
                        list: ListArgs::default(),
                        input: InputArgs::default(),
                        config: config(p.config),
                        output: OutputArgs::default(),
                    };
                    let outcome = diff::evaluate(&args)?;
                    let path = reports.write("diff", &outcome.view)?;
                    Ok(CompareResult::of_diff(&outcome.view, outcome.exit_code, path))
                }
            }
        })
        .await
    }

    /// `framewise census`.
    #[tool(
        description = "The scene census a game recorded (a capture's census records, or .framewise/census.json), as `framewise census` reads it: the latest census's totals (entities, triangles, unique meshes and materials, shadow casters; draw calls are null, only a rendered frame measures them) and its hints (instancing-candidate, material-dedup-candidate, shadow-caster-light, undisposed-suspect, oversized-texture, uncapped-resolution), each with a fix and its spawning site. Verdict pass (exit 0), or inconclusive (exit 2) when the input holds no census."
    )]
    async fn census(
        &self,
        params: Parameters<CensusParams>,
    ) -> Result<Json<CensusResult>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<CensusParams, _>(move || {
            if let Some(input) = &p.input {
                regular_input("input", Path::new(input))?;
            }
            let args = census::Args {
                input: p.input.map(PathBuf::from),
                dir: dir_args(p.dir),
                list: ListArgs::default(),
                output: OutputArgs::default(),
            };
            let outcome = census::evaluate(&args)?;
            let path = reports.write("census", &outcome.view)?;
            Ok(CensusResult::new(&outcome.view, outcome.exit_code, path))
        })
        .await
    }

    /// `framewise bisect`.
    #[tool(
        description = "A measured bisection a game ran (.framewise/bisect.json, written by its engine integration: framewise-bevy's framewise_bisect pauses the game, hides each of the heaviest census entries in turn over K frames and restores it), as `framewise bisect` reads it: candidates ranked by what hiding each saved (Δ triangles, Δ draw calls, Δ render ms; null when not measured, noisy when within the measured spread), sums_to_baseline false (one-at-a-time costs do not add up). Verdict pass (exit 0) when every candidate was restored, fail (exit 1) when the world did not come back as it was, inconclusive (exit 2) when no candidate was measured."
    )]
    async fn bisect(
        &self,
        params: Parameters<BisectParams>,
    ) -> Result<Json<BisectResult>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<BisectParams, _>(move || {
            if let Some(input) = &p.input {
                regular_input("input", Path::new(input))?;
            }
            let args = bisect::Args {
                input: p.input.map(PathBuf::from),
                dir: dir_args(p.dir),
                list: ListArgs::default(),
                output: OutputArgs::default(),
            };
            let outcome = bisect::evaluate(&args)?;
            let path = reports.write("bisect", &outcome.view)?;
            Ok(BisectResult::new(&outcome.view, outcome.exit_code, path))
        })
        .await
    }

    /// `.framewise/profile.json`.
    #[tool(
        description = "The latest session's rolling summary (.framewise/profile.json, rewritten every 2 s while an instrumented program runs with the incident log on): frame median/p95/fps over the trailing window, the classifier's label, budgets checked and breached, counter medians, build, phase and timing regime. An error when no profile has been written."
    )]
    async fn get_profile(
        &self,
        params: Parameters<DirParams>,
    ) -> Result<Json<ProfileResult>, Json<ToolError>> {
        let p = params.0;
        blocking::<DirParams, _>(move || {
            let dir = dir_args(p.dir).locate()?;
            let path = dir.join(framewise_incidents::PROFILE_FILE);
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_file() => {}
                // Something is there, and it is no profile: said as it is, not as a profile
                // to wait for.
                Ok(meta) => anyhow::bail!(
                    "{}: is a {}, not a regular file: the profile is a file an instrumented program writes (the server reads files only: a pipe or a device could block it)",
                    path.display(),
                    framewise_analysis::load::file_kind(&meta)
                ),
                Err(_) => anyhow::bail!(
                    "{}: no profile yet (an instrumented program writes it while it runs with the incident log on)",
                    path.display()
                ),
            }
            // The reader's message names the file already (`PATH: EOF …`): said once.
            let profile = framewise_incidents::read_profile(&path).map_err(|e| {
                let (shown, message) = (path.display().to_string(), e.to_string());
                if message.starts_with(&shown) {
                    anyhow::anyhow!(message)
                } else {
                    anyhow::anyhow!("{shown}: {message}")
                }
            })?;
            Ok(ProfileResult::new(profile, path.display().to_string()))
        })
        .await
    }

    /// `framewise issues`.
    #[tool(
        description = "The issues catalogue of .framewise/perf.jsonl, as `framewise issues` folds it: incidents grouped by footprint (a cause apart from its occurrences), with counts, builds and the fixes recorded against each. Bench and CI runs are left out unless include_automated. `fp` narrows to one issue with every occurrence."
    )]
    async fn list_issues(
        &self,
        params: Parameters<IssuesParams>,
    ) -> Result<Json<IssuesResult>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<IssuesParams, _>(move || {
            let fp =
                p.fp.map(|id| issues::parse_footprint_id(&id).map_err(anyhow::Error::msg))
                    .transpose()?;
            let args = issues::Args {
                fp,
                fold: issues::FoldArgs {
                    include_automated: p.include_automated,
                    from: instant("from", p.from)?,
                    to: instant("to", p.to)?,
                    captures: Vec::new(),
                },
                dir: dir_args(p.dir),
                list: ListArgs::default(),
                output: OutputArgs::default(),
            };
            let outcome = issues::evaluate(&args)?;
            let path = reports.write("issues", &outcome.view)?;
            Ok(IssuesResult::new(&outcome.view, path))
        })
        .await
    }

    /// `framewise history`.
    #[tool(
        description = "The game's timeline from .framewise/ (perf.jsonl and fixes.jsonl), as `framewise history` folds it: equal time buckets and one window per build (hitches per hour, p95 and median period), and the fixes recorded."
    )]
    async fn get_history(
        &self,
        params: Parameters<HistoryParams>,
    ) -> Result<Json<HistoryResult>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<HistoryParams, _>(move || {
            let buckets = p.buckets.unwrap_or(24);
            if !(1..=1000).contains(&buckets) {
                anyhow::bail!("buckets: {buckets} is not in 1..=1000");
            }
            let args = history::Args {
                buckets,
                from: instant("from", p.from)?,
                to: instant("to", p.to)?,
                dir: dir_args(p.dir),
                output: OutputArgs::default(),
            };
            let outcome = history::evaluate(&args)?;
            let path = reports.write("history", &outcome.view)?;
            Ok(HistoryResult::new(&outcome.view, path))
        })
        .await
    }

    /// `framewise fix`.
    #[tool(
        description = "Record a fix in .framewise/fixes.jsonl, as `framewise fix` does: its before and after windows are measured from the ledger (default: the previous and the latest build with evidence), linked to the footprints it addresses. Record only a fix a canonical bench comparison showed `improved`. dry_run measures without appending."
    )]
    async fn record_fix(
        &self,
        params: Parameters<FixParams>,
    ) -> Result<Json<FixResult>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<FixParams, _>(move || {
            let footprints = p
                .footprints
                .iter()
                .map(|id| issues::parse_footprint_id(id).map_err(anyhow::Error::msg))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let args = fix::Args {
                title: p.title,
                footprints,
                issue: p.issue,
                solution: p.solution,
                commit: p.commit,
                files: p.files,
                before: p.before,
                after: p.after,
                dry_run: p.dry_run,
                dir: dir_args(p.dir),
                output: OutputArgs::default(),
            };
            // Before the append: a report that cannot be written is an error while nothing is
            // recorded yet, so that a retry cannot record the fix twice.
            let report = reports.reserve("fix", NOTHING_RUN)?;
            let outcome = fix::evaluate(&args)?;
            if !outcome.view.0.appended {
                let path = report.write(&outcome.view)?;
                return Ok(FixResult::new(&outcome.view, Some(path), None));
            }
            let (path, failed) = report.write_after_change(&outcome.view);
            let report_error = failed.map(|e| {
                format!(
                    "the fix WAS recorded in {} (do not record it again), but its report could not be written: {e}",
                    outcome.view.0.file
                )
            });
            Ok(FixResult::new(&outcome.view, path, report_error))
        })
        .await
    }

    /// `framewise bench NAME [--compare last]`.
    #[tool(
        description = "Run a canonical bench (`[bench.NAME]` in the reviewed framewise.toml) R times through the recorder's harness, as `framewise bench NAME --compare last` does: compares the new result with the newest earlier one of NAME (a significance test across runs, a 2% minimum effect, the noise floor), appends the comparison to the ledger, and states every budget against the new run. Verdict improved (exit 0), regressed (1), no-detectable-change or a first result (2), incomparable (3). compare_last false only measures; counters_only judges the exact counters alone (a machine whose timings move with its load). Takes minutes: the program runs R times."
    )]
    async fn run_bench(
        &self,
        params: Parameters<BenchParams>,
    ) -> Result<Json<BenchResultHeadline>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<BenchParams, _>(move || {
            let compare_last = p.compare_last.unwrap_or(true);
            let counters_only = p.counters_only.unwrap_or(false);
            // As the CLI refuses `bench NAME --counters-only` without `--compare`: only a
            // comparison is judged, so counters_only on a run that only measures would say
            // nothing and read as applied.
            if counters_only && !compare_last {
                anyhow::bail!(
                    "`counters_only` judges a comparison, and `compare_last` false only measures: leave `compare_last` out (true) to compare, or `counters_only` out to only measure"
                );
            }
            config_input(p.config.as_deref())?;
            // Before the bench: it writes a result and appends to the ledger, so a report
            // that cannot be written must be an error while nothing is recorded yet.
            let report = reports.reserve("bench", NOTHING_RUN)?;
            let args = bench::Args {
                bench: Some(p.name.clone()),
                name: None,
                frames: None,
                warmup: None,
                runs: None,
                compare: compare_last.then(|| vec!["last".to_owned()]),
                change: p.change,
                counters_only,
                dir: p
                    .dir
                    .map_or_else(|| PathBuf::from(bench::DEFAULT_DIR), PathBuf::from),
                config: config(p.config),
                output: OutputArgs::default(),
                command: Vec::new(),
            };
            let outcome = bench::evaluate(&args)?;
            let (path, failed) = report.write_after_change(&outcome.view);
            let mut headline =
                BenchResultHeadline::new(&p.name, &outcome.view, outcome.exit_code, path);
            headline.report_error = failed.map(|e| {
                let compared = matches!(outcome.view.outcome, bench::Outcome::Compared { .. });
                let recorded = match (&headline.result_file, compared) {
                    (Some(file), true) => {
                        format!("its result ({file}) and its comparison's ledger line")
                    }
                    (Some(file), false) => format!("its result ({file})"),
                    (None, _) => "its comparison's ledger line".to_owned(),
                };
                format!(
                    "the bench WAS run, and {recorded} recorded (running it again records another), but its report could not be written: {e}"
                )
            });
            Ok(headline)
        })
        .await
    }

    /// `.framewise/bench-history.jsonl`.
    #[tool(
        description = "The bench ledger (.framewise/bench-history.jsonl): one line per comparison ever made — when, the change described, the git revision, the verdict, the metrics that regressed or improved, the budgets breached. Read it before choosing a change: never retry a strategy the ledger shows reverted (no-detectable-change or regressed). Returns the newest lines (default 10), oldest first."
    )]
    async fn get_ledger(
        &self,
        params: Parameters<LedgerParams>,
    ) -> Result<Json<LedgerResult>, Json<ToolError>> {
        let p = params.0;
        blocking::<LedgerParams, _>(move || {
            let last = usize::try_from(p.last.unwrap_or(10)).unwrap_or(10);
            if !(1..=100).contains(&last) {
                anyhow::bail!("last: {last} is not in 1..=100");
            }
            // A `dir` given must be there, as the other tools' `dir` (the ledger missing from
            // it is no comparison yet); the default may not exist before a first bench.
            if let Some(dir) = p.dir.as_deref().filter(|d| !Path::new(d).is_dir()) {
                anyhow::bail!(
                    "dir: {dir}: not a directory (it names the .framewise directory that holds {})",
                    bench::LEDGER_FILE
                );
            }
            let dir = p
                .dir
                .map_or_else(|| PathBuf::from(bench::DEFAULT_DIR), PathBuf::from);
            let file = dir.join(bench::LEDGER_FILE);
            read_ledger(&file, p.name.as_deref(), last)
        })
        .await
    }

    /// `framewise check`.
    #[tool(
        description = "Judge every budget declared in framewise.toml ([budgets]: frame_ms and metric paths, each in its metric's direction), as `framewise check` does: against .framewise/profile.json, or against a fresh run of `bench` when given. Verdict inside (exit 0: every budget measured and inside, the only pass), breached (1), incomplete (2: none breached but a budget not measured, or a bench whose runs lost frames; the warnings name them) or no-budgets (2, with a warning: nothing was judged); nothing measured is an error (exit 4), never a pass. counters_only judges only the exact counters (for a software-GPU machine)."
    )]
    async fn check_budgets(
        &self,
        params: Parameters<CheckParams>,
    ) -> Result<Json<CheckBudgetsResult>, Json<ToolError>> {
        let p = params.0;
        let reports = Arc::clone(&self.reports);
        blocking::<CheckParams, _>(move || {
            config_input(p.config.as_deref())?;
            // A bench writes its result before the check is judged: the report's file is made
            // first, as for `run_bench`.
            let reserved = p
                .bench
                .is_some()
                .then(|| reports.reserve("check", NOTHING_RUN))
                .transpose()?;
            let cfg = crate::config::load_project(&config(p.config), "check")?;
            let dir = p
                .dir
                .map_or_else(|| PathBuf::from(bench::DEFAULT_DIR), PathBuf::from);
            let result = check::evaluate(&cfg, &dir, p.bench.as_deref(), p.counters_only)?;
            if result.verdict == "nothing-measured" {
                anyhow::bail!(
                    "nothing measured for any budget ({})",
                    result.warnings.join("; ")
                );
            }
            let view = check::View(result);
            let path = match reserved {
                Some(report) => report.write(&view)?,
                None => reports.write("check", &view)?,
            };
            Ok(CheckBudgetsResult::new(&view.0, path))
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("framewise", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "framewise measures, attributes and verifies a game's frame performance. The tools that judge return a verdict with the exit code the CLI verb would return (0 pass, 1 fail/regressed, 2 inconclusive, 3 incomparable); the ones that read .framewise/ (the game's memory) return what they read. Errors come back with isError and exit_code 4 — never read one as a pass. Whole reports are files (report_path). Never quote a `software` timing grade as a hardware measurement. The playbook is docs/AGENTS.md.",
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_named_is_an_argument_of_a_tool() {
        let server = Server::new(std::env::temp_dir());
        let arguments: std::collections::BTreeSet<String> = server
            .tool_router
            .list_all()
            .iter()
            .filter_map(|tool| tool.input_schema.get("properties")?.as_object().cloned())
            .flat_map(|properties| properties.keys().cloned().collect::<Vec<_>>())
            .collect();
        for (option, argument) in OPTION_ARGUMENTS {
            assert!(
                arguments.contains(*argument),
                "{option} is named `{argument}`, which no tool takes: {arguments:?}"
            );
        }
    }

    /// Every argument any tool takes.
    fn all_arguments() -> Vec<String> {
        OPTION_ARGUMENTS
            .iter()
            .map(|(_, a)| (*a).to_owned())
            .collect()
    }

    #[test]
    fn options_are_named_as_arguments_and_nothing_else_changes() {
        let all = all_arguments();
        assert_eq!(
            in_mcp_terms(
                "the base lost frames (x); --allow-damaged compares what is left",
                &all
            ),
            "the base lost frames (x); `allow_damaged` compares what is left"
        );
        assert_eq!(
            in_mcp_terms("--tolerance frame.p99=-1: must be >= 0", &all),
            "`tolerances` frame.p99=-1: must be >= 0"
        );
        // Whole words only; unknown options, a lone `--` and text around them stay.
        for text in [
            "--frames must be above 0",
            "run it with --name NAME -- COMMAND",
            "a -- b --",
            "--",
            "",
            "--fps",
            "naïve --ünicode",
        ] {
            assert_eq!(in_mcp_terms(text, &all), text);
        }
        assert_eq!(
            in_mcp_terms("in the --from/--to range", &all),
            "in the `from`/`to` range"
        );
        assert_eq!(in_mcp_terms("x --fp", &all), "x `fp`");
        assert_eq!(
            in_mcp_terms(
                "judged although an input lost frames (--allow-damaged): see",
                &all
            ),
            "judged although an input lost frames (`allow_damaged`): see"
        );
        assert_eq!(
            in_mcp_terms("pass --before and --after (a build name)", &all),
            "pass `before` and `after` (a build name)"
        );
        assert_eq!(
            in_mcp_terms("--commit is empty: give it, or leave --commit out.", &all),
            "`commit` is empty: give it, or leave `commit` out."
        );
    }

    /// A path with `--` in it is user text, never an option; nor is what is quoted.
    #[test]
    fn paths_and_quoted_text_are_left_as_given() {
        let all = all_arguments();
        for text in [
            "old--to.sgpt: no such file or directory (os error 2)",
            "dir/--to.sgpt: no such file",
            "a/--from/x: no such file",
            "--to.sgpt: no such file",
            "x --to.sgpt: no such file",
            "bench `smoke --counters-only` is declared",
            "--dir-x is not --dirs",
        ] {
            assert_eq!(in_mcp_terms(text, &all), text);
        }
        assert_eq!(in_mcp_terms("end --to.", &all), "end `to`.");
    }

    /// Only the options of the tool at hand are named as its arguments: `--from` in a
    /// comparison's message is no argument of `compare_captures`.
    #[test]
    fn only_the_tools_own_options_are_rewritten() {
        let takes = arguments::argument_names::<CompareParams>();
        assert_eq!(
            in_mcp_terms("--from and --allow-damaged", &takes),
            "--from and `allow_damaged`"
        );
        let takes = arguments::argument_names::<FixParams>();
        assert_eq!(
            in_mcp_terms(
                "it has 1: a; pass --before and --after (a build name, or <ISO>..<ISO>)",
                &takes
            ),
            "it has 1: a; pass `before` and `after` (a build name, or <ISO>..<ISO>)"
        );
    }
}
