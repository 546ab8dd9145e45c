//! Output plumbing shared by every verb: `--format`, `--json [PATH]`, GitHub annotations,
//! broken pipes, and one-line errors.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// How a verb's result is printed on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned tables with units, for people.
    Console,
    /// The JSON documented on each verb's page under docs/cli/, for machines.
    Json,
    /// Markdown tables (a PR comment, a report).
    Markdown,
    /// GitHub Actions: `::error::`/`::warning::` annotations, then a markdown summary.
    Github,
}

/// `--format` and `--json`, flattened into every verb.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct OutputArgs {
    /// Output format on stdout [default: console].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Write the JSON to PATH as well; bare `--json` (or `--json -`) prints the JSON on
    /// stdout instead of the console output. Put it after the input files, or write
    /// `--json=PATH`.
    #[arg(long, value_name = "PATH", num_args = 0..=1)]
    pub json: Option<Option<PathBuf>>,
}

/// One GitHub Actions annotation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    /// `error`, `warning` or `notice`.
    pub level: &'static str,
    /// Short title.
    pub title: String,
    /// The message.
    pub message: String,
}

/// What a verb hands to [`emit`]: its JSON and its renderings for people.
pub trait Report {
    /// The machine-readable result (each verb's page under docs/cli/ documents its schema).
    fn json(&self) -> anyhow::Result<serde_json::Value>;
    /// Aligned text tables for a terminal.
    fn console(&self, out: &mut String);
    /// Markdown.
    fn markdown(&self, out: &mut String);
    /// GitHub annotations, printed before the markdown summary under `--format github`.
    fn annotations(&self) -> Vec<Annotation> {
        Vec::new()
    }
}

/// Escapes an annotation's data (GitHub's workflow-command escaping).
fn escape_data(s: &str) -> String {
    let s = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    // Any other control character (ESC above all) is shown escaped, as in the tables: a
    // runner's log is read in a terminal too.
    crate::table::inline(&s).into_owned()
}

/// Escapes an annotation property value.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

impl OutputArgs {
    /// Whether `--json` sends the JSON to stdout: bare, or `--json -` (`-` is stdout, as in
    /// `trace -o -`; never a file named `-`).
    fn json_to_stdout(&self) -> bool {
        match &self.json {
            Some(None) => true,
            Some(Some(p)) => p.as_os_str() == "-",
            None => false,
        }
    }

    /// The format for stdout, after `--json` is taken into account.
    pub fn stdout_format(&self) -> anyhow::Result<Format> {
        match (self.json_to_stdout(), self.format) {
            (true, Some(f)) if f != Format::Json => {
                let spelt = if self.json == Some(None) {
                    "bare --json"
                } else {
                    "--json -"
                };
                bail!(
                    "{spelt} prints JSON on stdout, which conflicts with --format {}; write --json=PATH to keep the {} output on stdout",
                    format_name(f),
                    format_name(f)
                )
            }
            (true, _) => Ok(Format::Json),
            (false, Some(f)) => Ok(f),
            (false, None) => Ok(Format::Console),
        }
    }

    /// The file `--json PATH` names, if any (`--json -` names none: it is stdout).
    pub fn json_path(&self) -> Option<&Path> {
        match &self.json {
            Some(Some(p)) if p.as_os_str() != "-" => Some(p.as_path()),
            _ => None,
        }
    }

    /// Checks the output flags before any work: `--format` and `--json` agree, and a
    /// `--json PATH` does not name one of the inputs (it would be overwritten).
    pub fn check_inputs(&self, inputs: &[&Path]) -> anyhow::Result<()> {
        self.stdout_format()?;
        if let Some(out) = self.json_path() {
            refuse_log("--json", out)?;
            for input in inputs {
                if same_file(out, input) {
                    bail!(
                        "--json {} names an input file; it would be overwritten (write --json=PATH after the inputs)",
                        out.display()
                    );
                }
            }
        }
        Ok(())
    }
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Console => "console",
        Format::Json => "json",
        Format::Markdown => "markdown",
        Format::Github => "github",
    }
}

/// The append-only logs of `.framewise/`: the audit trail, which no report replaces.
const LOGS: [&str; 3] = [
    framewise_incidents::PERF_FILE,
    framewise_incidents::FIXES_FILE,
    framewise_incidents::BENCH_HISTORY_FILE,
];

/// Refuses an output (`flag PATH`) that would replace one of the append-only logs
/// (`perf.jsonl`, `fixes.jsonl`, `bench-history.jsonl`) where one exists: the game's
/// memory, read by `issues`, `history`, `fix`, `bench`, would be lost to a report. So is an
/// existing goalpost: a `framewise.toml`, or a golden image (`goldens/*.png`; except for
/// `--golden-path`, whose purpose is a golden frame); and `.framewise/profile.json`, the
/// rolling summary `check` judges (the recorder rewrites it, so a capture there is lost too).
///
/// The file judged is the one the bytes would reach: PATH with its symlinks followed
/// (framewise-output's [`destination`](framewise_output::destination)), so a link to a log
/// (`ln -s .framewise/perf.jsonl out.json`) is refused as the log itself is, and so is a
/// link named like a log that leads to the file holding one, or a log this process's stdout
/// is open on (`--json=/dev/stdout >> .framewise/perf.jsonl`: pretty JSON is no line of a
/// log). A FIFO or a device is no log and is written through; a path that cannot be
/// written at all is left for the writer to name.
pub fn refuse_log(flag: &str, path: &Path) -> anyhow::Result<()> {
    let target = match framewise_output::destination(path) {
        Ok(framewise_output::Destination::File(t) | framewise_output::Destination::Through(t)) => t,
        Err(_) => return Ok(()),
    };
    if !std::fs::metadata(&target).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    // Every name on the way: the path given, each link it goes through, the file reached
    // (by its canonical path, whatever directory links led there).
    let real = target.canonicalize().unwrap_or_else(|_| target.clone());
    let mut names: Vec<PathBuf> = vec![real.clone()];
    names.extend(framewise_output::link_chain(path));
    let log = names.iter().find_map(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| LOGS.iter().find(|log| **log == n))
    });
    // More than the file reached and the path given: PATH is a symlink.
    let through = if names.len() > 2 {
        format!(" (a symlink to {})", real.display())
    } else {
        String::new()
    };
    if let Some(name) = log {
        bail!(
            "{flag} {} is the append-only {name} of a game's .framewise/{through}; a report would replace it (name another file)",
            path.display()
        );
    }
    // The goalposts a person reviews (the budgets and benches, the golden images: `golden
    // --record` writes those, and `demo --golden-path` a golden frame by purpose), and the
    // rolling summary `check` and `hook-status` judge.
    let in_dir = |p: &Path, dir: &str| {
        p.parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == dir)
    };
    let kept = names.iter().find_map(|p| {
        let name = p.file_name()?.to_str()?;
        if name == crate::config::PROJECT_CONFIG {
            Some(format!(
                "the budgets file {name}, a goalpost a person reviews"
            ))
        } else if name == framewise_incidents::PROFILE_FILE
            && in_dir(p, framewise_incidents::DIR_NAME)
        {
            Some(format!(
                "the rolling summary {name} that check and hook-status judge"
            ))
        } else if flag != "--golden-path" && in_dir(p, "goldens") && name.ends_with(".png") {
            Some(format!(
                "the golden image {name}, a goalpost a person reviews"
            ))
        } else {
            None
        }
    });
    if let Some(what) = kept {
        bail!(
            "{flag} {} is {what}{through}; a report would replace it (name another file)",
            path.display()
        );
    }
    Ok(())
}

/// Whether two paths name the same file: by canonical path when both exist, else by name in
/// the same directory (a file not written yet — a ledger not started, a frame the program
/// has yet to write — is one file however its directory is spelt: `./.framewise/x`,
/// `.framewise/x`).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => {
            let dir_of = |p: &Path| match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
                _ => PathBuf::from("."),
            };
            a == b
                || (a.file_name().is_some()
                    && a.file_name() == b.file_name()
                    && same_file(&dir_of(a), &dir_of(b)))
        }
    }
}

/// Pretty JSON with a trailing newline.
pub fn json_text(value: &serde_json::Value) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(value).context("serializing the JSON output")?;
    s.push('\n');
    Ok(s)
}

/// Writes the JSON document to `--json PATH` by framewise-output's rule (a regular file
/// replaced whole, a FIFO or device written through, symlinks followed).
pub fn write_json(path: &Path, text: &str) -> anyhow::Result<()> {
    refuse_log("--json", path)?;
    framewise_output::write_file(path, |w| {
        w.write_all(text.as_bytes()).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("{}: cannot write the JSON output: {e}", path.display()),
            )
        })
    })?;
    Ok(())
}

thread_local! {
    /// While [`capture_stdout`] runs: what [`write_stdout`] would have printed.
    static CAPTURED: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs `work` with [`write_stdout`] collecting into a string instead of printing, and
/// returns both. A verb that runs other verbs (`demo`) prints their reports only once all
/// succeeded, so stdout stays empty on exit 4.
pub fn capture_stdout<T>(work: impl FnOnce() -> T) -> (T, String) {
    let outer = CAPTURED.with(|c| c.replace(Some(String::new())));
    let value = work();
    let text = CAPTURED.with(|c| c.replace(outer)).unwrap_or_default();
    (value, text)
}

/// Writes `text` to stdout. A reader that went away (broken pipe) is not an error: the
/// caller still returns the verdict's exit code.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    let captured = CAPTURED.with(|c| match c.borrow_mut().as_mut() {
        Some(buffer) => {
            buffer.push_str(text);
            true
        }
        None => false,
    });
    if captured {
        return Ok(());
    }
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match lock.write_all(text.as_bytes()).and_then(|()| lock.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            mark_stdout_gone();
            Ok(())
        }
        Err(e) => Err(e).context("writing to stdout"),
    }
}

/// Keeps a report for people from carrying a workflow command of its own: a line that
/// opens (after blanks) with `::` (`::error::`, `::stop-commands::`) or `##[` is one to
/// GitHub's runner, which reads every line a step prints. The report's names are already
/// [`inline`](crate::table::inline) and cannot start a line; this is the last guard, for
/// any text a verb put at a line's start unescaped. A backslash goes before the first
/// mark: markdown renders `\:` and `\#` as the mark itself.
fn defuse_commands(text: &str) -> std::borrow::Cow<'_, str> {
    let command = |line: &str| {
        let line = line.trim_start();
        line.starts_with("::") || line.starts_with("##[")
    };
    if !text.split_inclusive('\n').any(command) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        if command(line) {
            let blanks = line.len() - line.trim_start().len();
            out.push_str(&line[..blanks]);
            out.push('\\');
            out.push_str(&line[blanks..]);
        } else {
            out.push_str(line);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Prints a verb's report as `args` asks: the chosen format on stdout, the JSON to
/// `--json PATH` when given, and under `--format github` the markdown summary to
/// `$GITHUB_STEP_SUMMARY` when that is set. Under `--format github` only the annotations
/// built here open a line with `::`.
pub fn emit(args: &OutputArgs, report: &dyn Report) -> anyhow::Result<()> {
    let format = args.stdout_format()?;
    let needs_json = format == Format::Json || args.json_path().is_some();
    let json = if needs_json {
        Some(json_text(&report.json()?)?)
    } else {
        None
    };
    if let (Some(path), Some(text)) = (args.json_path(), json.as_deref()) {
        write_json(path, text)?;
    }
    let mut out = String::new();
    match format {
        Format::Json => out.push_str(json.as_deref().unwrap_or("")),
        Format::Console => {
            let mut text = String::new();
            report.console(&mut text);
            out.push_str(&defuse_commands(&text));
        }
        Format::Markdown => {
            let mut md = String::new();
            report.markdown(&mut md);
            out.push_str(&defuse_commands(&md));
        }
        Format::Github => {
            for a in report.annotations() {
                out.push_str(&format!(
                    "::{} title={}::{}\n",
                    a.level,
                    escape_property(&a.title),
                    escape_data(&a.message)
                ));
            }
            let mut md = String::new();
            report.markdown(&mut md);
            let md = defuse_commands(&md);
            match std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
                Some(path) => {
                    let path = PathBuf::from(path);
                    let mut f = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&path)
                        .with_context(|| {
                            format!("{}: cannot open $GITHUB_STEP_SUMMARY", path.display())
                        })?;
                    f.write_all(md.as_bytes()).with_context(|| {
                        format!("{}: cannot write $GITHUB_STEP_SUMMARY", path.display())
                    })?;
                }
                None => out.push_str(&md),
            }
        }
    }
    write_stdout(&out)
}

/// Set once stdout's reader has gone away (`framewise … | head`).
static STDOUT_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that a write to stdout found its reader gone: the broken pipe `main` keeps silent
/// about. A broken pipe anywhere else (`-o FIFO` whose reader left) is an error it names.
pub fn mark_stdout_gone() {
    STDOUT_GONE.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a write to stdout found its reader gone.
pub fn stdout_gone() -> bool {
    STDOUT_GONE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether `path` is this process's stdout (`/dev/stdout`, `/proc/self/fd/1`, or the file
/// or pipe stdout is): the same file, by device and inode (framewise-output's rule, by
/// which such a path is written through, never replaced).
pub fn is_stdout(path: &Path) -> bool {
    framewise_output::standard_stream(path) == Some(framewise_output::Stream::Stdout)
}

/// Whether an error is, at bottom, a broken pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// An error chain on one line: `outer: inner: innermost`, with repeats dropped (a context
/// that already contains its cause's text is not repeated) and newlines folded.
pub fn one_line(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = cause.to_string();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        // What whitespace leaves of control characters (ESC, from a name in an input) is
        // shown escaped: an error line must not drive the terminal.
        let text = crate::table::inline(&text).into_owned();
        if text.is_empty() || parts.iter().any(|p| p.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_escaping() {
        assert_eq!(escape_data("50% a\nb"), "50%25 a%0Ab");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }

    #[test]
    fn a_line_that_would_be_a_workflow_command_is_defused() {
        assert_eq!(defuse_commands("| a | b |\n"), "| a | b |\n");
        assert_eq!(
            defuse_commands("x\n::error::y\n  ##[warning]z\nw :: v\n"),
            "x\n\\::error::y\n  \\##[warning]z\nw :: v\n"
        );
    }

    #[test]
    fn json_dash_is_stdout() {
        let dash = |format| OutputArgs {
            format,
            json: Some(Some("-".into())),
        };
        assert_eq!(dash(None).json_path(), None);
        assert_eq!(dash(None).stdout_format().ok(), Some(Format::Json));
        assert_eq!(
            dash(Some(Format::Json)).stdout_format().ok(),
            Some(Format::Json)
        );
        let err = dash(Some(Format::Console)).stdout_format().unwrap_err();
        assert!(err
            .to_string()
            .starts_with("--json - prints JSON on stdout"));
    }

    #[test]
    fn bare_json_conflicts_with_a_human_format() {
        let args = OutputArgs {
            format: Some(Format::Markdown),
            json: Some(None),
        };
        assert!(args.stdout_format().is_err());
        let args = OutputArgs {
            format: None,
            json: Some(None),
        };
        assert_eq!(args.stdout_format().ok(), Some(Format::Json));
        let args = OutputArgs {
            format: Some(Format::Markdown),
            json: Some(Some("x.json".into())),
        };
        assert_eq!(args.stdout_format().ok(), Some(Format::Markdown));
    }

    #[test]
    fn one_line_drops_repeats() {
        let err = anyhow::anyhow!("inner problem").context("file.sgpt: inner problem");
        assert_eq!(one_line(&err), "file.sgpt: inner problem");
        let err = anyhow::anyhow!("line one\nline two").context("outer");
        assert_eq!(one_line(&err), "outer: line one line two");
        let err = anyhow::anyhow!("fix `warm\u{1b}[2J` is already recorded");
        assert_eq!(one_line(&err), "fix `warm\\u{1b}[2J` is already recorded");
    }

    #[test]
    fn annotation_data_escapes_every_control_character() {
        assert_eq!(
            escape_data("50% slower\nat\r\u{1b}[2J"),
            "50%25 slower%0Aat%0D\\u{1b}[2J"
        );
    }
}
