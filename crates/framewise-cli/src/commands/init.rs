//! `framewise init [PROJECT]`: scaffolds `.framewise/` in a game's repository — its
//! `.gitignore` (bench runs and golden frames ignored; `perf.jsonl`, `bench-history.jsonl`
//! and `fixes.jsonl` kept: they are the audit trail), `framewise.toml` (the frame budget,
//! and commented examples of a canonical bench, budgets and gate tolerances, where `bench`
//! and `check` look for it), and the agent guide fragment `agent-guide.md` (docs/AGENTS.md's
//! doctrine, the loop, the files). Idempotent: a file that exists is never touched, and the
//! verb says what it created and what it left as it was.
//!
//! Exit: 0 (created, or everything was already there); 4 when the directory cannot be
//! made or a file cannot be written.

use std::path::PathBuf;

use anyhow::{bail, Context};
use framewise_incidents::{scaffold, DIR_NAME};
use serde::Serialize;

use crate::output::{self, OutputArgs, Report};
use crate::table::inline;

/// `framewise init`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The game's repository (where `.framewise/` goes) [default: the working directory].
    pub project: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The JSON of `init` (docs/cli/dot-framewise.md).
#[derive(Debug, Serialize)]
pub struct InitDoc {
    /// `framewise.init/1`.
    pub schema: &'static str,
    /// The `.framewise/` directory.
    pub dir: String,
    /// Whether the directory itself was created.
    pub created_dir: bool,
    /// Files created.
    pub created: Vec<String>,
    /// Files that existed and were left as they were.
    pub kept: Vec<String>,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[])?;
    let project = match args.project {
        Some(p) => p,
        None => std::env::current_dir().context("the working directory")?,
    };
    if !project.is_dir() {
        bail!(
            "{}: not a directory (name the game's repository)",
            project.display()
        );
    }
    let done = scaffold(&project)?;
    let names = |paths: &[PathBuf]| -> Vec<String> {
        paths
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect()
    };
    let (created, kept) = (names(&done.created), names(&done.kept));
    let view = InitView(InitDoc {
        schema: "framewise.init/1",
        dir: done.dir.display().to_string(),
        created_dir: done.created_dir,
        created,
        kept,
    });
    output::emit(&args.output, &view)?;
    Ok(0)
}

struct InitView(InitDoc);

impl Report for InitView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.0)?)
    }

    fn console(&self, out: &mut String) {
        let d = &self.0;
        // The project's path is the caller's: a line break or an escape in a directory's
        // name is shown as one (`\n`, `\u{1b}`), never sent to the terminal.
        let dir = inline(&d.dir);
        if d.created_dir {
            out.push_str(&format!("created {dir}/\n"));
        } else if d.created.is_empty() {
            out.push_str(&format!("{dir}/ is already set up: nothing to do\n"));
        } else {
            out.push_str(&format!("{dir}/ existed; added what was missing\n"));
        }
        for f in &d.created {
            out.push_str(&format!("  created {DIR_NAME}/{f}\n"));
        }
        for f in &d.kept {
            out.push_str(&format!(
                "  kept    {DIR_NAME}/{f} (exists; left as it was)\n"
            ));
        }
        if !d.created.is_empty() {
            out.push_str(&format!(
                "\nnext: record a session with this directory (the recorder finds {DIR_NAME}/ in the working directory), then `framewise issues`\n"
            ));
        }
    }

    fn markdown(&self, out: &mut String) {
        let d = &self.0;
        out.push_str(&format!("### framewise init: `{}`\n\n", inline(&d.dir)));
        for f in &d.created {
            out.push_str(&format!("- created `{DIR_NAME}/{f}`\n"));
        }
        for f in &d.kept {
            out.push_str(&format!("- kept `{DIR_NAME}/{f}`\n"));
        }
    }
}
