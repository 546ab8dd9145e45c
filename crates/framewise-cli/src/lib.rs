//! The `framewise` command-line tool — verdicts with meaningful exit codes — as a library for
//! its binary (`src/main.rs`, which calls [`main`]) and for the fuzz targets (`fuzz/`, which
//! call the parsers of [`parsers`]).
//!
//! Who should use this crate: nobody else. People, CI pipelines and coding agents run the
//! `framewise` binary (see `docs/CLI.md`); programs that want the numbers in-process link
//! `framewise-analysis`, which computes everything this crate presents: it parses arguments,
//! renders and holds no arithmetic of its own.
//!
//! [`main`] parses arguments and maps errors to exit codes; each verb lives in
//! `commands/<verb>.rs`.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `eprintln!` that never panics: when stderr cannot be written (`2>/dev/full`, a closed
/// pipe) the line is lost, and the exit code still says what happened.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics (see [`say!`]).
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod commands;
mod config;
mod input;
mod ledger;
mod list;
mod output;
mod table;
mod toml_error;
mod usage;

/// Exit code for an infrastructure or usage error (docs/CONCEPTS.md, "Exit codes": the codes are API).
pub const EXIT_ERROR: u8 = 4;

/// framewise: a frame profiler's verdicts.
///
/// Exit codes (every verb): 0 pass/improved/inside, 1 fail/regressed/breached,
/// 2 inconclusive/no detectable change, 3 incomparable, 4 infrastructure or usage error.
#[derive(Debug, Parser)]
#[command(name = "framewise", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Structural dump of a capture: header, records by type, symbols, topologies, defects.
    Inspect(commands::inspect::Args),
    /// Frame, work, scope, GPU pass and counter statistics of a capture.
    Summarize(commands::summarize::Args),
    /// Every metric of two captures side by side: base, cand, delta, pct. Reports; never decides.
    Diff(commands::diff::Args),
    /// Regression gate: fails when a gated metric worsened past its tolerance.
    Gate(commands::gate::Args),
    /// Export a capture as Chrome Trace Event JSON (Perfetto, chrome://tracing).
    Trace(commands::trace::Args),
    /// Every hitch, with ranked classifications, confidence and evidence.
    Hitches(commands::hitches::Args),
    /// Rank scopes by contribution to one frame's excess or to the p95 excess.
    Attribute(commands::attribute::Args),
    /// The stated limits of this machine and this build: clock, GPU timestamps, degraded features.
    Doctor(commands::doctor::Args),
    /// Run the instrumented demo game, record it, and explain the capture (the main job).
    Demo(commands::demo::Args),
    /// The web inspector: serve a capture's views on 127.0.0.1 until interrupted.
    View(commands::view::Args),
    /// A scene census and its hints: a capture's census records, or .framewise/census.json.
    Census(commands::census::Args),
    /// A measured bisection a game ran (.framewise/bisect.json), ranked by what each part costs.
    Bisect(commands::bisect::Args),
    /// The footprint of an incident key: `{v, id, key}` and how the key reads.
    Footprint(commands::footprint::Args),
    /// MCP server on stdin/stdout: the verbs as tools for a coding agent.
    Mcp(commands::mcp::Args),
    /// Scaffold `.framewise/` in a game's repository (idempotent; never overwrites a file).
    Init(commands::init::Args),
    /// The issues catalogue: the incident log folded by footprint, with the fixes recorded.
    Issues(commands::issues::Args),
    /// The top five issues of the catalogue.
    Report(commands::report::Args),
    /// Record a fix with its before/after measured from the incident log.
    Fix(commands::fix::Args),
    /// The incident log as a timeline: time buckets, one window per build, the fixes.
    History(commands::history::Args),
    /// Tail the incident log and print one wake line per meaningful new record.
    Watch(commands::watch::Args),
    /// Run a workload R times with noise floors; compare two results with verdicts.
    Bench(commands::bench::Args),
    /// The correctness gate: a bench's frame against its golden image, by SSIM.
    Golden(commands::golden::Args),
    /// Every budget of framewise.toml against what was measured: exit 0 inside, 1 breached.
    Check(commands::check::Args),
    /// At most five lines for an agent's prompt hook; nothing when all is quiet.
    HookStatus(commands::hook_status::Args),
}

fn run(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Inspect(args) => commands::inspect::run(args),
        Command::Summarize(args) => commands::summarize::run(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Gate(args) => commands::gate::run(args),
        Command::Trace(args) => commands::trace::run(args),
        Command::Hitches(args) => commands::hitches::run(args),
        Command::Attribute(args) => commands::attribute::run(args),
        Command::Doctor(args) => commands::doctor::run(args),
        Command::Demo(args) => commands::demo::run(args),
        Command::View(args) => commands::view::run(args),
        Command::Census(args) => commands::census::run(args),
        Command::Bisect(args) => commands::bisect::run(args),
        Command::Footprint(args) => commands::footprint::run(args),
        Command::Mcp(args) => commands::mcp::run(args),
        Command::Init(args) => commands::init::run(args),
        Command::Issues(args) => commands::issues::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Fix(args) => commands::fix::run(args),
        Command::History(args) => commands::history::run(args),
        Command::Watch(args) => commands::watch::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Golden(args) => commands::golden::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::HookStatus(args) => commands::hook_status::run(args),
    }
}

/// Runs another verb as if it had been typed after `framewise` (the demo verb explains its
/// capture this way, so its output is exactly what those verbs print).
pub(crate) fn run_verb<const N: usize>(argv: [&str; N]) -> anyhow::Result<u8> {
    let cli = parse(std::iter::once("framewise").chain(argv))?;
    run(cli.command)
}

/// Parses the command line. Every option that takes a value takes a negative number as that
/// value (`--frame -1`, `--fixed-dt -1`), so that the verb refuses it with its own reason,
/// where clap would have read it as an unknown flag.
fn parse<I, T>(argv: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory, FromArgMatches};
    fn negative_numbers_as_values(command: clap::Command) -> clap::Command {
        command
            .mut_args(|arg| {
                if arg.get_action().takes_values() {
                    arg.allow_negative_numbers(true)
                } else {
                    arg
                }
            })
            .mut_subcommands(negative_numbers_as_values)
    }
    let matches = negative_numbers_as_values(Cli::command()).try_get_matches_from(argv)?;
    Cli::from_arg_matches(&matches)
}

/// The parsers of what the binary reads itself, public for the fuzz targets (`fuzz/`): not an
/// API. Every other input is parsed by a library crate, and fuzzed there.
pub mod parsers {
    pub use crate::commands::demo_settings::parse as demo_settings;
    pub use crate::commands::mcp::transport::{
        classify as mcp_line, ErrorBody, ErrorResponse, Line,
    };
    pub use crate::config::{parse_toml as framewise_toml, FRAME_MS_MAX, FRAME_MS_MIN};
    pub use crate::output::one_line;
}

/// The `framewise` binary: parses the command line, runs the verb, and maps its result or
/// error to the exit code (an error is one line on stderr).
pub fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match parse(&argv) {
        Ok(cli) => cli,
        Err(err) => {
            use clap::error::ErrorKind;
            return match err.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    // Help and version go to stdout and are not errors.
                    if let Err(e) = err.print() {
                        if e.kind() != std::io::ErrorKind::BrokenPipe {
                            return ExitCode::from(EXIT_ERROR);
                        }
                    }
                    ExitCode::SUCCESS
                }
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    // `framewise` alone: show the help, but it is still a usage error.
                    let _ = err.print();
                    ExitCode::from(EXIT_ERROR)
                }
                _ => {
                    say!("framewise: usage error: {}", usage::usage_line(&err, &argv));
                    ExitCode::from(EXIT_ERROR)
                }
            };
        }
    };
    match run(cli.command) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if output::is_broken_pipe(&err) && output::stdout_gone() {
                // stdout's reader went away; say nothing, and never let it read as a
                // pass. A named output's reader that left (`-o FIFO`) is said below.
                return ExitCode::from(EXIT_ERROR);
            }
            say!("framewise: error: {}", output::one_line(&err));
            ExitCode::from(EXIT_ERROR)
        }
    }
}
