//! `framewise watch`: tails `.framewise/perf.jsonl` with a byte cursor and prints one wake
//! line per meaningful new record — a hitch of at least `--min-hitch-ms`, any usermark, any
//! jitter — e.g. `hitch 142ms pipeline-compile fp=a3f92c1d ×7`, where `×7` is how many
//! times the ledger has seen that footprint. The push channel an agent's monitor waits on:
//! stdout carries the wake lines and nothing else (the armed line goes to stderr).
//!
//! It starts at the end of the file (history is `framewise issues`' business), holds a line
//! still being written until its newline lands, and starts over when the file shrinks
//! (replaced). `--once` is a poll: it prints what was appended since the last `--once` on
//! this directory (a byte cursor kept in `.framewise/watch-cursor.json`) and moves the
//! cursor; the first one arms it at the end. Exit: 0 when `--once` or `--timeout` ends it,
//! or the reader closes the pipe; 4 when there is no `.framewise/` or the file cannot be
//! read.

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
    /// Print what was appended since the last `--once` on this directory and exit (the first
    /// one arms at the end and prints nothing; with `--from-start`: the whole ledger once).
    #[arg(long)]
    pub once: bool,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<f64>,
    /// How often to look at the file, ms.
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = clap::builder::RangedI64ValueParser::<u64>::new().range(10..=3_600_000))]
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
    // One wake is one line, whatever a note, a build or an evidence string holds: a line
    // break or a terminal escape in them is shown escaped (`\n`, `\u{1b}`), as every verb
    // shows a name from an input.
    Some(crate::table::inline(&line).into_owned())
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

/// Where the last `--once` stopped: `.framewise/watch-cursor.json`.
pub const CURSOR_FILE: &str = "watch-cursor.json";

/// Bytes at the start of the ledger that identify it: a cursor into another ledger (replaced,
/// rotated) is not used.
const CURSOR_HEAD_BYTES: usize = 4096;

/// `watch-cursor.json`: the byte offset a `--once` read to, and a checksum of the ledger's
/// first bytes up to it (at most [`CURSOR_HEAD_BYTES`]).
#[derive(Debug, Serialize, serde::Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Cursor {
    schema: String,
    offset: u64,
    head_crc32: u32,
}

const CURSOR_SCHEMA: &str = "framewise.watch-cursor/1";

impl Cursor {
    /// The cursor at `offset` of a ledger whose bytes are `bytes`.
    fn at(bytes: &[u8], offset: u64) -> Self {
        let head = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(CURSOR_HEAD_BYTES)
            .min(bytes.len());
        Self {
            schema: CURSOR_SCHEMA.to_owned(),
            offset,
            head_crc32: crc32fast::hash(&bytes[..head]),
        }
    }

    /// Whether this cursor points into the ledger `bytes` (its offset is within it, its first
    /// bytes are the ones the cursor saw, and the offset ends a line).
    fn fits(&self, bytes: &[u8]) -> bool {
        let Ok(offset) = usize::try_from(self.offset) else {
            return false;
        };
        offset <= bytes.len()
            && (offset == 0 || bytes[offset - 1] == b'\n')
            && *self == Self::at(bytes, self.offset)
    }
}

/// What a `--once` poll reads: the ledger's bytes from where the last one stopped.
struct Poll {
    /// The records before the cursor (they seed the counts).
    seen: Vec<Record>,
    /// The records after it.
    new: Vec<Record>,
    /// The cursor to save: just past the last whole line.
    next: Cursor,
}

/// Reads the ledger at `path` for a `--once` poll from `cursor_path`'s cursor (from the start
/// with `from_start`; at the end, printing nothing, when there is no cursor yet). Says on
/// stderr when a cursor no longer fits the ledger.
fn poll(
    path: &std::path::Path,
    cursor_path: &std::path::Path,
    from_start: bool,
) -> anyhow::Result<(Poll, &'static str)> {
    let bytes = match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => bail!("{}: not a regular file", path.display()),
        Ok(_) => std::fs::read(path).with_context(|| path.display().to_string())?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| path.display().to_string()),
    };
    let saved = read_cursor(cursor_path)?;
    let (start, how) = if from_start {
        (0, "the whole ledger (--from-start)")
    } else {
        match &saved {
            Some(c) if c.fits(&bytes) => (c.offset, "since the last --once"),
            Some(_) => (0, "the whole ledger: it was replaced since the last --once"),
            None => (
                // Just past the last whole line: a line being written is news when it lands.
                bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i as u64 + 1),
                "first look: armed at the end, nothing printed (the next --once prints what lands after this; --from-start replays the ledger)",
            ),
        }
    };
    let start = usize::try_from(start)
        .unwrap_or(bytes.len())
        .min(bytes.len());
    let seen = framewise_incidents::parse_bytes(&bytes[..start], 0).records;
    let after = framewise_incidents::parse_bytes(&bytes[start..], start as u64);
    let next = Cursor::at(&bytes, after.next_offset);
    Ok((
        Poll {
            seen,
            new: after.records,
            next,
        },
        how,
    ))
}

/// The saved cursor; `None` when there is none. One that does not read is an error: a
/// damaged cursor is said, not silently replaced by a replay or a skip.
fn read_cursor(path: &std::path::Path) -> anyhow::Result<Option<Cursor>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| path.display().to_string()),
    };
    match serde_json::from_str::<Cursor>(&text) {
        Ok(c) if c.schema == CURSOR_SCHEMA => Ok(Some(c)),
        _ => bail!(
            "{}: not a watch cursor framewise wrote (delete it to arm the next --once at the end)",
            path.display()
        ),
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

/// Prints `record`'s wake, if it wakes; `false` when the reader has gone away.
fn wake(args: &Args, record: &Record, count: u64) -> anyhow::Result<bool> {
    let Some(line) = wake_line(record, count, args.min_hitch_ms) else {
        return Ok(true);
    };
    let text = match args.format {
        WatchFormat::Console => line,
        WatchFormat::Json => serde_json::to_string(&Wake {
            schema: "framewise.wake/1",
            fp: record.footprint().map_or("", |fp| fp.id.as_str()),
            count,
            record,
            line,
        })?,
    };
    emit_line(&text)
}

/// `--once`: what was appended since the last `--once`, then the cursor moved past it.
fn run_once(args: &Args, dir: &std::path::Path) -> anyhow::Result<u8> {
    let path = dir.join(PERF_FILE);
    let cursor_path = dir.join(CURSOR_FILE);
    let (poll, how) = poll(&path, &cursor_path, args.from_start)?;
    let mut tail = Tail {
        path,
        offset: 0,
        counts: HashMap::new(),
        include_automated: args.include_automated,
    };
    let kept = |r: &Record| args.include_automated || !r.common().automated;
    for record in poll.seen.iter().filter(|r| kept(r)) {
        tail.count(record);
    }
    say!(
        "framewise watch: {} once, {how} (hitches ≥ {} ms, every usermark and jitter)",
        tail.path.display(),
        args.min_hitch_ms
    );
    for record in poll.new.iter().filter(|r| kept(r)) {
        let count = tail.count(record);
        if !wake(args, record, count)? {
            // The reader went away: the cursor stays, so the next poll prints these again.
            return Ok(0);
        }
    }
    framewise_output::write_file(&cursor_path, |out| -> anyhow::Result<()> {
        serde_json::to_writer(&mut *out, &poll.next)?;
        out.write_all(b"\n")?;
        Ok(())
    })
    .with_context(|| format!("saving the watch cursor {}", cursor_path.display()))?;
    Ok(0)
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    let dir = args.dir.locate()?;
    if args.once {
        return run_once(&args, &dir);
    }
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
    say!(
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
            if !wake(&args, &record, count)? {
                // The reader went away: the watch is over, and nothing went wrong.
                return Ok(0);
            }
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
