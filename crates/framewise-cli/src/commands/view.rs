//! `framewise view CAPTURE [--compare OTHER] [--port N] [--follow]`: the web inspector.
//!
//! A closed `.sgpt` is served from its frame directory at once and loaded behind
//! (framewise-inspector's `Background`: the page draws the frame strip while the rest
//! loads, and the capture's defects are printed to stderr once it is loaded); any other
//! capture, and a followed one, is loaded first through framewise-analysis (with the usual
//! progress bar on stderr when it is a terminal). Either way it prints the address line
//! `inspector: http://127.0.0.1:PORT/?token=TOKEN` on stdout and serves until Ctrl-C or
//! SIGTERM. With `--follow` the inspector also reloads the file as a running game writes
//! it, until the game closes it (framewise-inspector's `Follow`). The server, the API and the web app live in framewise-inspector
//! (docs/INSPECTOR.md); this file only loads, prints and maps errors.
//!
//! Exit: 0 after a clean shutdown; 4 when a capture cannot be read or the port cannot be
//! bound.

use std::io::Write;
use std::path::{Path, PathBuf};

use framewise_analysis::Defect;
use framewise_inspector::{Background, Compared, Follow, Inspector, Server};

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
    if let Some(dir) = &args.web_dir {
        // Every page would be a 404: refused before the capture loads.
        if !dir.join("index.html").is_file() {
            anyhow::bail!(
                "--web-dir {}: no index.html there (it names a copy of the web app's files, crates/framewise-inspector/web)",
                dir.display()
            );
        }
    }
    if args.follow && framewise_analysis::load::is_stream(&args.capture) {
        // Following re-reads the file as it grows; a stream is read once and then is gone.
        anyhow::bail!(
            "{}: --follow tails a file a running game writes; a pipe or a FIFO is read once, whole (drop --follow)",
            args.capture.display()
        );
    }
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
    let background = if follow {
        None
    } else {
        Background::open(capture, options.clone()).map_err(|e| input::load_error(capture, &e))?
    };
    let compared = match compare {
        Some(path) => Some(Compared {
            file: input::shown(path),
            capture: input::load(path, &input_args.options(Need::Summary))?,
        }),
        None => None,
    };
    // The game's incident log, for the Issues panel: the one named, else the nearest.
    let project = project.or_else(|| framewise_inspector::find_project(capture));
    if let Some(background) = background {
        if let Some(other) = &compared {
            print_defects(other.capture.defects(), &other.file);
        }
        let shown = input::shown(capture);
        let background = background
            .with_compare(compared)
            .with_project(project)
            .on_loaded(move |loaded| match loaded {
                Ok(capture) => print_defects(capture.defects(), &shown),
                Err(e) => say!(
                    "framewise: error: {} (the inspector keeps serving the frame strip)",
                    input::load_error(Path::new(&shown), e)
                ),
            });
        let server = Server::background(background, port)?.with_web_dir(web_dir);
        return announce(server);
    }
    let (loaded, frames) = input::load_with_frames(capture, &options)?;
    // stdout carries only the address line (a script reads it); what the reader had to
    // recover goes to stderr as well as to the page's banner, so it is never missed. (A
    // followed file still being written reads as unclosed, with a truncated tail at times:
    // printed too, once, for the first load.)
    print_defects(loaded.defects(), &input::shown(capture));
    if let Some(other) = &compared {
        print_defects(other.capture.defects(), &other.file);
    }
    let file = input::shown(capture);
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
    announce(server)
}

/// What the reader had to recover, on stderr (stdout carries only the address line).
fn print_defects(defects: &[Defect], file: &str) {
    let mut notes = String::new();
    super::defects_console(defects, &format!("{file}: capture defects"), &mut notes);
    say_raw!("{}", notes.trim_start_matches('\n'));
}

/// Serves until interrupted, printing the address line once the server can be stopped
/// cleanly.
fn announce(server: Server) -> anyhow::Result<u8> {
    // Printed once Ctrl-C and SIGTERM stop the server cleanly, and flushed at once: a
    // script reads this line to find the server.
    server.run_announced(|url| {
        let mut out = std::io::stdout().lock();
        let written = writeln!(out, "inspector: {url}").and_then(|()| out.flush());
        if written
            .as_ref()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
        {
            crate::output::mark_stdout_gone();
        }
        written
    })?;
    Ok(0)
}
