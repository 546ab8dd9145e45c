//! `framewise view CAPTURE [--compare OTHER] [--port N] [--follow]`: the web inspector.
//!
//! Loads the capture through framewise-analysis (with the usual progress bar on stderr
//! when it is a terminal), hands it to framewise-inspector, prints the address line
//! `inspector: http://127.0.0.1:PORT/?token=TOKEN` on stdout and serves until Ctrl-C or
//! SIGTERM. With `--follow` the inspector also reloads the file as a running game writes
//! it, until the game closes it (framewise-inspector's `Follow`). The server, the API and the web app live in framewise-inspector
//! (docs/INSPECTOR.md); this file only loads, prints and maps errors.
//!
//! Exit: 0 after a clean shutdown; 4 when a capture cannot be read or the port cannot be
//! bound.

use std::io::Write;
use std::path::{Path, PathBuf};

use framewise_inspector::{Compared, Follow, Inspector, Server};

use crate::input::{self, InputArgs, Need};

/// `framewise view`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The capture to inspect.
    pub capture: PathBuf,
    /// A second capture: the inspector also shows `framewise diff CAPTURE OTHER`.
    #[arg(long, value_name = "OTHER")]
    pub compare: Option<PathBuf>,
    /// The port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Serve the web app's files from DIR instead of the embedded copies (for editing
    /// them: a reload shows the change).
    #[arg(long, value_name = "DIR")]
    pub web_dir: Option<PathBuf>,
    /// Tail a capture a running game is still writing: the page shows the frames written
    /// so far and picks up new ones, until the game closes the file. Only the file is
    /// read; nothing is sent to the game.
    #[arg(long)]
    pub follow: bool,
    /// The game's repository (or its `.framewise/` directory) whose issues catalogue the
    /// page shows [default: the nearest `.framewise/` from the capture's directory up].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let project = match &args.project {
        Some(dir) => Some(framewise_inspector::project_dir(dir).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: no .framewise/ there (--project names a game's repository or its .framewise/ directory)",
                dir.display()
            )
        })?),
        None => None,
    };
    serve_capture(
        &args.capture,
        args.compare.as_deref(),
        args.port,
        args.web_dir,
        &args.input,
        args.follow,
        project,
    )
}

/// Loads `capture` (and `compare`), prints the address line and serves until interrupted
/// (also `framewise demo --view`).
pub fn serve(
    capture: &Path,
    compare: Option<&Path>,
    port: u16,
    web_dir: Option<PathBuf>,
    input_args: &InputArgs,
) -> anyhow::Result<u8> {
    serve_capture(capture, compare, port, web_dir, input_args, false, None)
}

/// [`serve`], following the file as it grows when `follow` is set.
fn serve_capture(
    capture: &Path,
    compare: Option<&Path>,
    port: u16,
    web_dir: Option<PathBuf>,
    input_args: &InputArgs,
    follow: bool,
    project: Option<PathBuf>,
) -> anyhow::Result<u8> {
    // Per-frame aggregates only: a frame's spans are read from the file when the page asks
    // for its timeline (docs/INSPECTOR.md, "Memory").
    let options = input_args.options(Need::Frames);
    let (loaded, frames) = input::load_with_frames(capture, &options)?;
    let compared = match compare {
        Some(path) => Some(Compared {
            file: input::shown(path),
            capture: input::load(path, &input_args.options(Need::Summary))?,
        }),
        None => None,
    };
    // stdout carries only the address line (a script reads it); what the reader had to
    // recover goes to stderr as well as to the page's banner, so it is never missed. (A
    // followed file still being written reads as unclosed, with a truncated tail at times:
    // printed too, once, for the first load.)
    let mut notes = String::new();
    super::defects_console(
        loaded.defects(),
        &format!("{}: capture defects", input::shown(capture)),
        &mut notes,
    );
    if let Some(other) = &compared {
        super::defects_console(
            other.capture.defects(),
            &format!("{}: capture defects", other.file),
            &mut notes,
        );
    }
    eprint!("{}", notes.trim_start_matches('\n'));
    let file = input::shown(capture);
    // The game's incident log, for the Issues panel: the one named, else the nearest.
    let project = project.or_else(|| framewise_inspector::find_project(capture));
    let server = if follow {
        let follow = Follow::with_frames(loaded, frames, capture, &file, options, compared)
            .with_project(project);
        Server::following(follow, port)?
    } else {
        Server::new(
            Inspector::with_frames(loaded, frames, &file, compared).with_project(project),
            port,
        )?
    }
    .with_web_dir(web_dir);
    // Printed once Ctrl-C and SIGTERM stop the server cleanly, and flushed at once: a
    // script reads this line to find the server.
    server.run_announced(|url| {
        let mut out = std::io::stdout().lock();
        writeln!(out, "inspector: {url}")?;
        out.flush()
    })?;
    Ok(0)
}
