//! `framewise hook-status`: at most five lines for an agent's prompt hook — the regime, the
//! frame p95 against the budget, the breached budgets, the last hitch's classification — and
//! nothing at all when no session is running and no budget is breached.
//!
//! The breached budgets are those `framewise check` finds breached on the profile with the
//! same framewise.toml (its evaluation, called here: counters and scopes included, the
//! config's `frame_ms` rather than the recorder's); only when no framewise.toml exists are they
//! the ones the recorder's profile names (`budgets.breached`, against its own frame budget).
//!
//! A session counts as running while its `.framewise/profile.json` was rewritten in the last
//! 10 seconds (the recorder rewrites it every 2) and the incident log holds no `session-end`
//! record of it (a session that stopped a second ago is not running). Exit 0 whenever it printed or stayed quiet;
//! 4 when profile.json exists but cannot be read.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use framewise_analysis::bench::budget::BudgetState;
use framewise_incidents::Record;

use crate::commands::bench::DEFAULT_DIR;
use crate::config::{self, ConfigArgs};
use crate::output;

/// A profile rewritten within this long belongs to a running session.
pub const RUNNING_WITHIN: Duration = Duration::from_secs(10);

/// `framewise hook-status`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The `.framewise` directory.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// The lines to print (empty: print nothing). Library form of the verb.
pub fn lines(dir: &Path, cfg: &config::Config) -> anyhow::Result<Vec<String>> {
    let frame_ms = cfg.frame_ms;
    let path = dir.join(framewise_incidents::PROFILE_FILE);
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(Vec::new());
    };
    let recent = meta
        .modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age <= RUNNING_WITHIN);
    let profile = crate::commands::check::read_profile(&path)?;
    // No incident log yet is no session end yet; one that does not read (a directory, a FIFO)
    // is refused, not taken for a session still running.
    let perf = dir.join(framewise_incidents::PERF_FILE);
    let log = match std::fs::symlink_metadata(&perf) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        _ => Some(framewise_incidents::read_all(&perf)?),
    };
    let running = recent
        && !log
            .as_ref()
            .is_some_and(|log| ended(&log.records, &profile.common));
    // With a config, the breached budgets are exactly those `framewise check` finds with it
    // (the recorder's own frame budget, which the config may set otherwise, is not merged
    // in: "frame p95 36.69 ms vs budget 50.00 ms" followed by "budgets breached: frame_ms"
    // contradicted itself and `check`). Without one, the recorder's own list is all there is.
    let breached: Vec<String> = if cfg.path.is_some() {
        crate::commands::check::evaluate_profile(cfg, &profile, &path)?
            .budgets
            .into_iter()
            .filter(|c| c.state == BudgetState::Breached)
            .map(|c| c.budget)
            .collect()
    } else {
        profile.budgets.breached.clone()
    };
    if !running && breached.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let p95 = profile.frame.p95_ms.map_or_else(
        || "p95 not measured yet".to_owned(),
        |v| format!("p95 {v:.2} ms"),
    );
    let budget = frame_ms.map_or_else(String::new, |b| format!(" vs budget {b:.2} ms"));
    // The regime as the profile states it; a profile from a host that declared no GPU
    // adapter states none, and is not "unknown" (a CPU-only game's timing is hardware).
    let regime = profile
        .common
        .regime
        .as_deref()
        .map_or_else(String::new, |r| format!(" · regime {r}"));
    out.push(format!(
        "framewise: {}{regime} · frame {p95}{budget}",
        if running {
            "session running"
        } else {
            "last session"
        },
    ));
    if !breached.is_empty() {
        // Without a config `check` has no budget to judge ("no framewise.toml"): pointing
        // there contradicted this line.
        let hint = if cfg.path.is_some() {
            "framewise check for values"
        } else {
            "the recorder's own frame budget; no framewise.toml declares budgets for framewise check"
        };
        out.push(format!(
            "budgets breached: {} ({hint})",
            breached.join(", ")
        ));
    }
    if let Some(log) = log {
        let last = log.records.iter().rev().find_map(|r| match r {
            Record::Hitch(h) => Some(h),
            _ => None,
        });
        if let Some(h) = last {
            let guess = h.classification.first().map_or_else(
                || "unclassified".to_owned(),
                |g| {
                    format!(
                        "{} ({})",
                        g.guess,
                        crate::commands::serde_name(&g.confidence)
                    )
                },
            );
            out.push(format!(
                "last hitch: frame {} at {:.1} ms, {guess}",
                h.frame, h.frame_ms
            ));
        }
    }
    out.truncate(5);
    // The regime, a budget's name and a guess come from files: a line break or a terminal
    // escape in them is shown escaped, never printed.
    Ok(out
        .iter()
        .map(|l| crate::table::inline(l).into_owned())
        .collect())
}

/// Whether `records` hold the `session-end` of the session that wrote the profile whose
/// fields are `profile`: the same session id, or (a profile naming none) a session-end made
/// no earlier than the profile.
fn ended(records: &[Record], profile: &framewise_incidents::Common) -> bool {
    records.iter().rev().any(|r| match r {
        Record::SessionEnd(end) => match (&end.common.session, &profile.session) {
            (Some(ended), Some(running)) => ended == running,
            // Both timestamps are UTC ISO 8601 with milliseconds: they order as text.
            _ => end.common.at >= profile.at,
        },
        _ => false,
    })
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let cfg = config::load_project(&args.config, "hook-status")?;
    let text: String = lines(&args.dir, &cfg)?
        .into_iter()
        .map(|l| l + "\n")
        .collect();
    output::write_stdout(&text)?;
    Ok(0)
}
