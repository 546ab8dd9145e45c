//! `framewise trace FILE -o trace.json [--normalize]`: Chrome Trace Event JSON that
//! Perfetto and chrome://tracing load. The export itself is framewise-analysis's; this
//! verb chooses where the bytes go and reports what was written.
//!
//! The file is written by framewise-output's rule: a regular file is replaced only when
//! the trace is complete (a failed export never leaves half a trace under the name), a
//! FIFO or a device is written through and never replaced, a symlink is followed.
//! `-o -` writes the trace to stdout (and nothing else goes there); a reader that goes
//! away early (`| head`) is not an error: the exit code stays 0.
//!
//! Exit: 0 written; 4 when the capture cannot be read, has no timeline (a `.litecap`
//! without one: durations without a clock cannot make an honest flame chart), or the
//! output cannot be written.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{bail, Context};
use framewise_analysis::export::chrome::TraceStats;
use framewise_analysis::model::Defect;
use framewise_analysis::{write_trace, Capture, ExportError, TraceOptions};

use crate::commands::{defects_console, defects_markdown};
use crate::input::{self, InputArgs, Need};
use crate::output::{self, Format, OutputArgs, Report};

/// `framewise trace`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The capture: .sgpt, .litecap v4 (with a timeline) or Chrome trace JSON.
    pub file: PathBuf,
    /// Where to write the trace; `-` for stdout.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub out: PathBuf,
    /// Shift every time so the first frame begins at 0.
    #[arg(long)]
    pub normalize: bool,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Writes `capture`'s trace to `sink`; a failure names the capture (`file`) when it cannot
/// be exported, else the output (`out`) that could not take the bytes.
fn export(
    file: &str,
    out: &str,
    capture: &Capture,
    options: TraceOptions,
    sink: impl Write,
) -> anyhow::Result<TraceStats> {
    let mut w = BufWriter::with_capacity(1 << 20, sink);
    let stats = match write_trace(capture, options, &mut w) {
        Ok(stats) => stats,
        Err(e @ ExportError::NoTimeline { .. }) => bail!("{file}: cannot export a trace: {e}"),
        // The error says "writing the trace failed after N bytes were serialized": it lacks only the name.
        Err(e) => return Err(e).context(out.to_owned()),
    };
    w.flush()
        .with_context(|| format!("{out}: writing the trace failed"))?;
    Ok(stats)
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    // `-o /dev/stdout` (or the file stdout is) is `-o -`: the report must not follow the
    // trace into it, and a reader that leaves early is no failure.
    let to_stdout = args.out.as_os_str() == "-" || output::is_stdout(&args.out);
    if to_stdout && args.output.stdout_format()? != Format::Console {
        bail!("-o - writes the trace to stdout; the report cannot go there too (use --json=PATH for it)");
    }
    if !to_stdout {
        output::refuse_log("-o", &args.out)?;
    }
    if !to_stdout && output::same_file(&args.out, &args.file) {
        bail!(
            "-o {} names the input capture; it would be overwritten",
            args.out.display()
        );
    }
    if let Some(json) = args.output.json_path() {
        if !to_stdout && output::same_file(json, &args.out) {
            bail!(
                "--json {} is also -o: the report and the trace would overwrite each other",
                json.display()
            );
        }
    }
    args.output.check_inputs(&[&args.file, &args.out])?;
    let file = input::shown(&args.file);
    let capture = input::load(&args.file, &args.input.options(Need::Spans))?;
    let options = TraceOptions {
        normalize: args.normalize,
    };
    let stats = if to_stdout {
        match export(&file, "stdout", &capture, options, std::io::stdout().lock()) {
            Ok(stats) => stats,
            // The reader went away (`| head`): as with every verb, that is not a failure
            // of the export, and the exit code stays the verb's own.
            Err(e) if output::is_broken_pipe(&e) => {
                output::mark_stdout_gone();
                return Ok(0);
            }
            Err(e) => return Err(e),
        }
    } else {
        input::with_spinner(format!("writing {}", args.out.display()), || {
            let out = input::shown(&args.out);
            framewise_output::write_file(&args.out, |sink| {
                export(&file, &out, &capture, options, sink)
            })
        })?
    };
    let view = TraceView {
        file,
        out: if to_stdout {
            "-".to_owned()
        } else {
            input::shown(&args.out)
        },
        normalize: args.normalize,
        gpu_timed: capture.gpu_timed(),
        // A FIFO or a device took the trace as a stream: there is no file to open after.
        openable: !to_stdout && std::fs::metadata(&args.out).is_ok_and(|m| m.is_file()),
        stats,
        defects: capture.defects().to_vec(),
    };
    if to_stdout {
        // stdout holds the trace; only --json=PATH gets the report.
        if let Some(path) = args.output.json_path() {
            output::write_json(path, &output::json_text(&view.json()?)?)?;
        }
    } else {
        output::emit(&args.output, &view)?;
    }
    Ok(0)
}

struct TraceView {
    file: String,
    out: String,
    normalize: bool,
    /// Whether the trace has GPU tracks (only then is their clock worth a sentence).
    gpu_timed: bool,
    /// Whether the trace is a regular file a viewer can open (the `next:` line names it).
    openable: bool,
    stats: TraceStats,
    defects: Vec<Defect>,
}

/// `trace --format json` (docs/cli/trace.md, `framewise.trace-export/1`).
#[derive(serde::Serialize)]
struct TraceReport<'a> {
    schema: &'static str,
    /// The capture, as the user named it.
    file: &'a str,
    /// Where the trace went (`-`: stdout).
    output: &'a str,
    /// Times were shifted so the first frame begins at 0.
    normalized: bool,
    /// Events written.
    events: u64,
    /// Bytes written.
    bytes: u64,
    /// Spans clipped to their parent.
    clipped_spans: u64,
    /// The capture's defects.
    defects: &'a [Defect],
}

impl TraceView {
    fn line(&self) -> String {
        format!(
            "wrote {} events ({} bytes) from {} to {}{}; {} spans clipped to their parent",
            self.stats.events,
            self.stats.bytes,
            self.file,
            self.out,
            if self.normalize {
                ", times shifted so the first frame begins at 0"
            } else {
                ""
            },
            self.stats.clipped_spans
        )
    }
}

impl Report for TraceView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(TraceReport {
            schema: "framewise.trace-export/1",
            file: &self.file,
            output: &self.out,
            normalized: self.normalize,
            events: self.stats.events,
            bytes: self.stats.bytes,
            clipped_spans: self.stats.clipped_spans,
            defects: &self.defects,
        })?)
    }

    fn console(&self, out: &mut String) {
        out.push_str(&format!("{}\n", self.line()));
        if self.gpu_timed {
            out.push_str("GPU tracks are on a nominal clock: GPU-measured durations placed at each frame's CPU anchor\n");
        }
        if self.openable {
            out.push_str(&format!(
                "next: open {} in https://ui.perfetto.dev (\"Open trace file\") or chrome://tracing\n",
                self.out
            ));
        }
        defects_console(&self.defects, "defects", out);
    }

    fn markdown(&self, out: &mut String) {
        out.push_str(&format!("### framewise trace\n\n{}\n", self.line()));
        defects_markdown(&self.defects, "Defects", out);
    }
}
