//! Loading captures for a verb: the kind is sniffed from the content by the analysis
//! crate (`.sgpt` by magic, `.litecap` by `LCAP`, Chrome JSON by a leading `{` or `[`),
//! a progress bar runs on stderr while it loads when stderr is a terminal (fed by the
//! analysis crate's progress reports: bytes read and parsed, frames decoded), and a file
//! that cannot be loaded becomes one error line that names it.

use std::io::IsTerminal;
use std::path::Path;

use std::time::Duration;

use framewise_analysis::load::LoadError;
use framewise_analysis::{Capture, FrameSource, LoadOptions, Progress, Stage};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Options every verb that reads a capture accepts.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct InputArgs {
    /// Chrome JSON only: the span that marks a frame. Without it the importer uses the
    /// trace's own frame track, else the top-level span that tiles its thread's timeline,
    /// and says which in `notes`.
    #[arg(long, value_name = "NAME")]
    pub frame_span: Option<String>,
}

/// What a verb needs from the loader: the less it keeps, the less memory a load takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Statistics only (`summarize`, `diff`, `gate`).
    Summary,
    /// Per-frame aggregates (`hitches`, `attribute`, `inspect`).
    Frames,
    /// Every span (`trace`).
    Spans,
}

impl InputArgs {
    /// Load options for these arguments.
    pub fn options(&self, need: Need) -> LoadOptions {
        LoadOptions::default()
            .with_spans(need == Need::Spans)
            .with_frame_span(self.frame_span.clone())
            .with_summary_only(need == Need::Summary)
    }
}

/// A load failure, phrased to name the file exactly once.
#[derive(Debug)]
pub struct InputError {
    line: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.line)
    }
}

impl std::error::Error for InputError {}

fn describe(path: &Path, err: &LoadError) -> String {
    let shown = path.display().to_string();
    let text = err.to_string();
    // Loader messages may name the path themselves, at the start or after the format's
    // name (`sgpt: FILE: header checksum mismatch`): say it once, at the start.
    let text = if shown.is_empty() {
        text
    } else {
        text.replace(&format!("{shown}: "), "")
    };
    // `-` is stdin to many tools; here it is a file that does not exist: say which to use.
    let text = if shown == "-" && !path.exists() {
        format!("{text}; a capture is read from a file, not from `-` (name the file, or /dev/stdin for a pipe)")
    } else {
        text
    };
    if text.starts_with(&shown) {
        text
    } else {
        format!("{shown}: {text}")
    }
}

/// A spinner on stderr while `work` runs, only when stderr is a terminal: stdout stays
/// exactly the report, and logs stay clean. For work that reports no progress.
pub fn with_spinner<T>(message: String, work: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return work();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(120));
    let out = work();
    bar.finish_and_clear();
    out
}

/// A progress bar on stderr fed by the analysis crate's [`Progress`] reports; drawn only
/// when stderr is a terminal.
pub struct Bar {
    bar: Option<ProgressBar>,
    label: String,
    stage: Option<Stage>,
}

impl Bar {
    /// A bar for loading `label` (nothing is drawn when stderr is not a terminal; a bar
    /// appears with the first report of each stage).
    pub fn new(label: String) -> Self {
        Self {
            bar: None,
            label,
            stage: None,
        }
    }

    /// Shows one report: each stage gets its own bar, in its own unit and total.
    pub fn update(&mut self, p: Progress) {
        if self.stage != Some(p.stage) {
            let first = self.stage.is_none();
            self.stage = Some(p.stage);
            if let Some(old) = self.bar.take() {
                old.finish_and_clear();
            } else if !first {
                // Not a terminal: no bar was made for the first stage, and none will be.
                return;
            }
            if !std::io::stderr().is_terminal() {
                return;
            }
            let counts = if p.stage.unit() == "bytes" {
                "{bytes}/{total_bytes}"
            } else {
                "{human_pos}/{human_len} frames"
            };
            let template = format!("{{msg}} [{{wide_bar}}] {counts} ({{eta}})");
            // Configured while hidden, so that nothing is drawn half set up.
            let bar = ProgressBar::with_draw_target(Some(p.total), ProgressDrawTarget::hidden());
            if let Ok(style) = ProgressStyle::with_template(&template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(format!("{} {}", p.stage.name(), self.label));
            bar.set_position(p.done);
            bar.set_draw_target(ProgressDrawTarget::stderr());
            // Redraws while a stage reports nothing for a while (a scan, a big parse).
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(p.done);
        }
    }

    /// Clears the bar.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Loads one capture, of any supported kind.
pub fn load(path: &Path, options: &LoadOptions) -> anyhow::Result<Capture> {
    let mut bar = Bar::new(path.display().to_string());
    let loaded = framewise_analysis::load::open_with_progress(path, options, |p| bar.update(p));
    bar.finish();
    let capture = loaded.map_err(|err| load_error(path, &err))?;
    warn_unused_frame_span(path, options, &capture);
    Ok(capture)
}

/// `--frame-span` names a Chrome trace's frame span; another kind of capture records its
/// frames as frames, and the flag does nothing to it: say so rather than ignore it silently.
fn warn_unused_frame_span(path: &Path, options: &LoadOptions, capture: &Capture) {
    use framewise_analysis::model::SourceKind;
    let Some(span) = &options.frame_span else {
        return;
    };
    let kind = match capture.meta().source {
        SourceKind::Chrome => return,
        SourceKind::Sgpt => ".sgpt capture",
        SourceKind::Litecap => ".litecap buffer",
        _ => return,
    };
    say!(
        "framewise: warning: --frame-span {span} is for Chrome JSON traces; {} is a {kind}, which records its frames itself, and is read without it",
        path.display()
    );
}

/// Loads one capture for browsing frame by frame (`framewise view`): an `.sgpt` without
/// its spans, with a [`FrameSource`] that reads one frame's spans from the file when
/// asked; another kind with its spans.
pub fn load_with_frames(
    path: &Path,
    options: &LoadOptions,
) -> anyhow::Result<(Capture, FrameSource)> {
    let mut bar = Bar::new(path.display().to_string());
    let loaded = framewise_analysis::load::open_with_frame_source(path, options, |p| bar.update(p));
    bar.finish();
    let (capture, frames) = loaded.map_err(|err| load_error(path, &err))?;
    warn_unused_frame_span(path, options, &capture);
    Ok((capture, frames))
}

/// A load failure as one error line that names the file once.
pub fn load_error(path: &Path, err: &LoadError) -> anyhow::Error {
    InputError {
        line: describe(path, err),
    }
    .into()
}

/// Refuses a character or block device, or a socket, where a verb reads a file that is not a
/// capture (`--config`, a bench result): a device such as `/dev/zero` never ends, so reading
/// it whole would never return. Anything else, a path that does not exist included, is left
/// to the read, which says what is wrong.
pub fn refuse_device(path: &Path, what: &str) -> anyhow::Result<()> {
    let kind = std::fs::metadata(path)
        .ok()
        .and_then(|meta| framewise_analysis::load::special_kind(&meta));
    match kind {
        Some(kind) => anyhow::bail!("{}: is a {kind}, not {what}", path.display()),
        None => Ok(()),
    }
}

/// Refuses two sides of a comparison that are one stream (`/dev/stdin /dev/stdin`, or one
/// FIFO named twice): a pipe is read once, so the second side would read as empty. The same
/// regular file on both sides is allowed (a capture against itself: no difference).
pub fn refuse_one_stream(a: &Path, b: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return Ok(());
    };
    if x.file_type().is_fifo() && (x.dev(), x.ino()) == (y.dev(), y.ino()) {
        anyhow::bail!(
            "{} and {} are one pipe, which is read once: the second side would be empty (save the capture to a file and name the file twice, or compare it with another)",
            a.display(),
            b.display()
        );
    }
    Ok(())
}

/// A path as shown in outputs: as the user spelled it.
pub fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_file_once() {
        let p = Path::new("/tmp/x.sgpt");
        let e = LoadError::Empty;
        assert_eq!(
            describe(p, &e),
            "/tmp/x.sgpt: empty input (0 bytes): not a capture"
        );
        let e = LoadError::IsDirectory { path: p.to_owned() };
        assert_eq!(
            describe(p, &e),
            "/tmp/x.sgpt: is a directory, not a capture"
        );
    }
}
