//! `framewise watch`: tails `.framewise/perf.jsonl` with a byte cursor and prints one wake
//! line per meaningful new record — a hitch of at least `--min-hitch-ms`, any usermark, any
//! jitter — e.g. `hitch 142ms pipeline-compile fp=a3f92c1d ×7`, where `×7` is how many
//! times the ledger has seen that footprint. The push channel an agent's monitor waits on:
//! stdout carries the wake lines and nothing else (the armed line goes to stderr).
//!
//! It starts at the end of the file (history is `framewise issues`' business), holds a line
//! still being written until its newline lands, and starts over when the file shrinks
//! (replaced). Exit: 0 when `--once` or `--timeout` ends it, or the reader closes the pipe;
//! 4 when there is no `.framewise/` or the file cannot be read.

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use framewise_incidents::{read_from, Record, PERF_FILE};
use serde::Serialize;

use crate::ledger::DirArgs;

/// `framewise watch`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read what is new once and exit (with `--from-start`: the whole ledger once).
    #[arg(long)]
    pub once: bool,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<f64>,
    /// How often to look at the file, ms.
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    pub interval_ms: u64,
    /// The shortest hitch that wakes, ms.
    #[arg(long, value_name = "MS", default_value_t = 100.0, value_parser = parse_min_hitch_ms)]
    pub min_hitch_ms: f64,
    /// Start at the beginning of the file instead of its end (replays the ledger).
    #[arg(long)]
    pub from_start: bool,
    /// Wake on the records of bench and CI runs (`automated`) too.
    #[arg(long)]
    pub include_automated: bool,
    /// `console`: one line per wake; `json`: one JSON object per line (docs/cli/dot-framewise.md).
    #[arg(long, value_enum, default_value = "console")]
    pub format: WatchFormat,
    #[command(flatten)]
    pub dir: DirArgs,
}

/// How wake lines are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchFormat {
    /// `hitch 142ms pipeline-compile fp=a3f92c1d ×7 …`
    Console,
    /// One `framewise.wake/1` object per line.
    Json,
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(s),
        _ => Err(format!("`{text}` is not a number of seconds")),
    }
}

/// `--min-hitch-ms`: a finite number of milliseconds, 0 or more (NaN would let every hitch
/// through while the armed line said "hitches ≥ NaN ms").
fn parse_min_hitch_ms(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(ms) if ms.is_finite() && ms >= 0.0 => Ok(ms),
        _ => Err(format!(
            "`{text}` is not a number of milliseconds (0 or more)"
        )),
    }
}

/// One wake as JSON (`--format json`).
#[derive(Debug, Serialize)]
pub struct Wake<'a> {
    /// `framewise.wake/1`.
    pub schema: &'static str,
    /// The console line.
    pub line: String,
    /// The footprint id.
    pub fp: &'a str,
    /// Occurrences of the footprint in the ledger, this one included.
    pub count: u64,
    /// The record, as read.
    pub record: &'a Record,
}

/// The wake line for `record` (its footprint seen `count` times), or `None` when the
/// record is not worth waking for.
pub fn wake_line(record: &Record, count: u64, min_hitch_ms: f64) -> Option<String> {
    let fp = record.footprint()?;
    let c = record.common();
    let top = |guesses: &[framewise_incidents::Guess]| {
        guesses.first().map_or_else(
            || ("unclassified".to_owned(), String::new()),
            |g| (g.guess.clone(), g.evidence.clone()),
        )
    };
    let (head, frame, (guess, evidence)) = match record {
        Record::Hitch(r) => {
            if r.frame_ms.is_nan() || r.frame_ms < min_hitch_ms {
                return None;
            }
            (
                format!("hitch {:.0}ms", r.frame_ms),
                r.frame,
                top(&r.classification),
            )
        }
        Record::Usermark(r) => {
            let note = r
                .note
                .as_deref()
                .map_or_else(String::new, |n| format!(" {n:?}"));
            let worst = r.worst_frames.first();
            let worst_ms =
                worst.map_or_else(String::new, |w| format!(" worst {:.0}ms", w.frame_ms));
            (
                format!("usermark{note}{worst_ms}"),
                r.frame,
                worst.map_or_else(|| top(&[]), |w| top(&w.classification)),
            )
        }
        Record::Jitter(r) => {
            let size = if r.kind == "oscillation" {
                r.amplitude.unwrap_or(r.units)
            } else {
                r.units
            };
            (
                format!(
                    "jitter {} {} {size:.3}{}",
                    r.track,
                    r.kind,
                    r.unit.as_deref().unwrap_or("u")
                ),
                r.frame,
                top(&r.classification),
            )
        }
        Record::Heartbeat(_) | Record::SessionEnd(_) => return None,
    };
    let mut line = format!("{head} {guess} fp={} ×{count} frame={frame}", fp.id);
    if let Some(phase) = &c.phase {
        line.push_str(&format!(" phase={phase}"));
    }
    if let Some(build) = &c.build {
        line.push_str(&format!(" build={build}"));
    }
    line.push_str(&format!(" at={}", c.at));
    if !evidence.is_empty() {
        line.push_str(&format!(": {evidence}"));
    }
    // One wake is one line, whatever a note or an evidence string holds.
    Some(line.replace(['\n', '\r'], " "))
}

/// The tail of `perf.jsonl` and the footprint counts seen so far.
struct Tail {
    path: std::path::PathBuf,
    offset: u64,
    counts: HashMap<String, u64>,
    include_automated: bool,
}

impl Tail {
    /// New records since the last read (a file that shrank is read from its start).
    fn read(&mut self) -> anyhow::Result<Vec<Record>> {
        let len = match std::fs::metadata(&self.path) {
            // A FIFO or a device has no length to tail: refused at once, never waited on
            // (a directory is refused the same way).
            Ok(m) if !m.is_file() => bail!("{}: not a regular file", self.path.display()),
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.start_over();
                return Ok(Vec::new());
            }
            Err(e) => return Err(e).with_context(|| self.path.display().to_string()),
        };
        if len < self.offset {
            self.start_over();
        }
        if len == self.offset {
            return Ok(Vec::new());
        }
        let outcome = read_from(&self.path, self.offset)?;
        self.offset = outcome.next_offset;
        Ok(outcome
            .records
            .into_iter()
            .filter(|r| self.include_automated || !r.common().automated)
            .collect())
    }

    /// A ledger gone or cut shorter (replaced, rotated) is another ledger: read from its start,
    /// its footprints counted afresh (`×N` counts the ledger's occurrences, not the watch's).
    fn start_over(&mut self) {
        self.offset = 0;
        self.counts.clear();
    }

    /// Counts `record`'s footprint; the count with it.
    fn count(&mut self, record: &Record) -> u64 {
        record.footprint().map_or(0, |fp| {
            let n = self.counts.entry(fp.id.clone()).or_insert(0);
            *n += 1;
            *n
        })
    }
}

/// Writes one line to stdout; `false` when the reader has gone away.
fn emit_line(line: &str) -> anyhow::Result<bool> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match lock
        .write_all(line.as_bytes())
        .and_then(|()| lock.write_all(b"\n"))
        .and_then(|()| lock.flush())
    {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            crate::output::mark_stdout_gone();
            Ok(false)
        }
        Err(e) => Err(e).context("writing to stdout"),
    }
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let dir = args.dir.locate()?;
    let mut tail = Tail {
        path: dir.join(PERF_FILE),
        offset: 0,
        counts: HashMap::new(),
        include_automated: args.include_automated,
    };
    if !args.from_start {
        // Armed at the end: what is already there only seeds the counts.
        for record in tail.read()? {
            tail.count(&record);
        }
    }
    eprintln!(
        "framewise watch: armed on {} (every {} ms; hitches ≥ {} ms, every usermark and jitter)",
        tail.path.display(),
        args.interval_ms,
        args.min_hitch_ms
    );
    let deadline = args
        .timeout
        .map(|s| Instant::now() + Duration::from_secs_f64(s.min(1e9)));
    loop {
        for record in tail.read()? {
            let count = tail.count(&record);
            let Some(line) = wake_line(&record, count, args.min_hitch_ms) else {
                continue;
            };
            let text = match args.format {
                WatchFormat::Console => line,
                WatchFormat::Json => serde_json::to_string(&Wake {
                    schema: "framewise.wake/1",
                    fp: record.footprint().map_or("", |fp| fp.id.as_str()),
                    count,
                    record: &record,
                    line,
                })?,
            };
            if !emit_line(&text)? {
                // The reader went away: the watch is over, and nothing went wrong.
                return Ok(0);
            }
        }
        if args.once {
            return Ok(0);
        }
        let mut pause = Duration::from_millis(args.interval_ms);
        if let Some(deadline) = deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(0);
            }
            pause = pause.min(left);
        }
        std::thread::sleep(pause);
    }
}
