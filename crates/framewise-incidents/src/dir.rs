//! `.framewise/`: where it is, and scaffolding a new one.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Error;

/// The directory's name in a game's project.
pub const DIR_NAME: &str = ".framewise";
/// The incident log, append-only.
pub const PERF_FILE: &str = "perf.jsonl";
/// The rolling summary of the latest session.
pub const PROFILE_FILE: &str = "profile.json";
/// Verified fixes with before/after windows, append-only.
pub const FIXES_FILE: &str = "fixes.jsonl";
/// Every bench comparison ever made, append-only.
pub const BENCH_HISTORY_FILE: &str = "bench-history.jsonl";
/// The environment variable that names the directory (the builder's setting wins over it).
pub const DIR_ENV: &str = "FRAMEWISE_DIR";

/// The `.gitignore` scaffolded into the directory.
pub const GITIGNORE: &str = "\
# framewise: bench runs, golden frames and the rolling summary belong to this machine.
# perf.jsonl, bench-history.jsonl and fixes.jsonl are the audit trail: keep them in git.
bench/
golden/
goldens/
mcp/
profile.json
.profile.json.*.tmp
watch-cursor.json
.watch-cursor.json.*.partial
";

/// The `framewise.toml` scaffolded into the directory: the frame budget, and commented
/// examples of the other budgets, a canonical bench and gate tolerances (docs/CLI.md,
/// "framewise.toml").
pub const CONFIG_TOML: &str = "\
# framewise.toml: this game's budgets and canonical benches. A person reviews every change
# to this file: an agent never edits the goalposts to make a result pass.
#
# `framewise bench`, `check`, `golden` and `hook-status` read ./framewise.toml, else this
# file (.framewise/framewise.toml); the analysis verbs read it when given --config.

[budgets]
frame_ms = 16.67          # the frame budget (judged on frame.p95); the hitch bar is max(2 x median, 1.5 x this)
# \"frame.p99\" = 33.3      # any metric path (docs/CLI.md, \"Metric paths\"), judged in its direction
# \"counter.draw_calls.max\" = 300

# A canonical workload, declared by a person: `framewise bench smoke` runs it `runs` times
# through the recorder and compares with noise floors (`--compare last`). Replace the
# command with your game's (any program linked with the recorder), then uncomment.
# [bench.smoke]
# command = [\"framewise\", \"demo\", \"--quiet\"]
# frames = 600            # measured frames per run
# warmup = 120            # frames run first and discarded
# runs = 5                # 3 to 1000
# seed = 1                # handed to the program as FRAMEWISE_SEED
# fixed_dt = 0.016666     # FRAMEWISE_FIXED_DT: pins the simulation step, seconds
# golden_frame = 300      # the frame `framewise golden --check smoke` compares

# [gate.tolerances]       # how far `framewise gate` lets a metric move, as a fraction
# \"frame.p99\" = 0.10
# \"counter.draw_calls.max\" = 0
";

/// The agent guide fragment's file name: a project includes it from its own agent
/// instructions.
pub const AGENT_GUIDE_FILE: &str = "agent-guide.md";

/// The doctrine an agent follows with framewise: the numbered list of docs/AGENTS.md's
/// "The doctrine", word for word (a test compares them), so the guide a project scaffolds
/// and the project's own docs never disagree.
pub const AGENT_DOCTRINE: &str = include_str!("agent_doctrine.md");

/// The agent guide fragment scaffolded into the directory: the doctrine, the loop, and
/// what the files say.
pub const AGENT_GUIDE: &str = concat!(
    "\
# framewise — for coding agents working on this game

framewise measures, attributes and verifies this game's performance. Its verbs print JSON
(`--format json`) and exit with a verdict: 0 pass / improved / inside, 1 fail / regressed /
breached, 2 inconclusive / no detectable change, 3 incomparable, 4 error (never a pass).
Act on `verdict` and `exit_code`, not on console prose.

## The doctrine

",
    include_str!("agent_doctrine.md"),
    "
## The loop, one change per iteration

1. `framewise issues --json` (the incident log folded by cause) and the ledger
   `.framewise/bench-history.jsonl`: what is known, what was tried and reverted.
2. `framewise check`: every `[budgets]` entry of `framewise.toml` (exit 1 names each breach;
   exit 2 `incomplete`: a budget not measured, never a pass).
3. `framewise hitches CAPTURE --json`, `framewise attribute CAPTURE --json`: the causes.
4. One change, aimed at the top of that ranking.
5. `framewise bench NAME --compare last`: improved (0), regressed (1), no detectable
   change (2), inconclusive (2: a run lost frames or stopped early: fix the measurement),
   incomparable (3). `NAME` is a `[bench.NAME]` of `framewise.toml`.
6. `framewise golden --check NAME`: 0 same picture, 1 changed (revert), 4 no golden.
7. Keep and commit, or revert. A kept fix of catalogued issues:
   `framewise fix --title ... --footprints ID,...` (its before/after measured from the log).

## .framewise/ — what this game remembers

framewise writes these files while the game runs with a recording session (and
`framewise demo` writes them for the demo). Read them cold; nothing here needs the
game to be running.

- `perf.jsonl` — append-only, one JSON object per line, `type` first among equals:
  `hitch` (a frame over max(2 x rolling median, 1.5 x frame budget): its period,
  counter deltas, longest scopes, ranked guesses with evidence, `footprint`),
  `usermark` (someone pressed the mark key: the trailing window's worst frames),
  `jitter` (a tracked point jumped off its trajectory), `heartbeat` (every 10 s of
  play: median/p95 and counter medians), `session-end` (frames, duration, and how
  many records the rate limits dropped: all zero means nothing was dropped).
  Every line carries `at`, `build`, `phase`, `ctx` (the situation), `automated`, and
  `world` when the game attached one (entities spawned and removed, inputs held, camera).
  A field that was not measured is absent, never 0. A last line without its newline
  was cut by a crash: skip it.
- `footprint.id` names the cause, apart from the occurrence: the same id on two
  days is the same issue. `footprint.key` is exactly what was hashed.
- `profile.json` — the latest session's rolling summary, rewritten every 2 s.
- `bench-history.jsonl` — every bench comparison, append-only, machine-written.
- `fixes.jsonl` — recorded fixes with their measured before and after.
- `framewise.toml` — the budgets and canonical benches: a person's, not yours to edit.
"
);

/// Finds the directory: `configured` when given (it need not exist yet), else
/// `FRAMEWISE_DIR` when set and not empty, else `.framewise/` in the working directory when
/// it exists. `None`: no incident log for this process.
pub fn locate(configured: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = configured {
        return Some(dir.to_owned());
    }
    if let Some(dir) = std::env::var_os(DIR_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let here = std::env::current_dir().ok()?.join(DIR_NAME);
    here.is_dir().then_some(here)
}

/// What [`scaffold`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scaffold {
    /// The directory.
    pub dir: PathBuf,
    /// Whether the directory itself was created.
    pub created_dir: bool,
    /// The files created, in the order written.
    pub created: Vec<PathBuf>,
    /// The files that existed, left as they were.
    pub kept: Vec<PathBuf>,
}

/// Scaffolds `.framewise/` inside `project` (the game's repository root): the directory,
/// its `.gitignore`, `framewise.toml` and the agent guide fragment ([`AGENT_GUIDE_FILE`]). Idempotent: a file
/// that exists is never touched, so a user's edits survive.
pub fn scaffold(project: &Path) -> Result<Scaffold, Error> {
    scaffold_dir(&project.join(DIR_NAME))
}

/// What a file that is not a regular file is, in words.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() || t.is_block_device() {
        "device"
    } else {
        "special file"
    }
}

/// [`scaffold`] for a directory named directly (`FRAMEWISE_DIR`, a builder setting).
pub fn scaffold_dir(dir: &Path) -> Result<Scaffold, Error> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    let created_dir = !dir.is_dir();
    if created_dir && dir.exists() {
        // A file (or a FIFO, a device) where the directory goes: say so, not "File exists".
        return Err(io(dir)(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "exists and is not a directory (remove it or point the incident log elsewhere)",
        )));
    }
    if created_dir && std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        // A link to nothing where the directory goes: create_dir says only "File exists".
        return Err(io(dir)(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "is a link to nothing (remove it, or create the directory it points to)",
        )));
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let (mut created, mut kept) = (Vec::new(), Vec::new());
    for (name, text) in [
        (".gitignore", GITIGNORE),
        ("framewise.toml", CONFIG_TOML),
        (AGENT_GUIDE_FILE, AGENT_GUIDE),
    ] {
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                file.write_all(text.as_bytes()).map_err(io(&path))?;
                created.push(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // Kept only when it is a file that reads: a link to nothing, a FIFO or a
                // directory there is no scaffold, and every verb reading it would refuse it.
                match std::fs::metadata(&path) {
                    Ok(m) if m.is_file() => kept.push(path),
                    Ok(m) => {
                        return Err(io(&path)(std::io::Error::new(
                            std::io::ErrorKind::AlreadyExists,
                            format!(
                                "exists and is a {}, not a file (remove it and run init again)",
                                file_kind(&m)
                            ),
                        )))
                    }
                    Err(_) => {
                        return Err(io(&path)(std::io::Error::new(
                            std::io::ErrorKind::NotFound,
                            "is a link to nothing (remove it and run init again, or create the file it points to)",
                        )))
                    }
                }
            }
            Err(e) => return Err(io(&path)(e)),
        }
    }
    Ok(Scaffold {
        dir: dir.to_owned(),
        created_dir,
        created,
        kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaffold_is_idempotent_and_keeps_user_files() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let first = scaffold(tmp.path()).expect("scaffold");
        assert!(first.created_dir);
        assert_eq!(first.created.len(), 3);
        let toml = tmp.path().join(DIR_NAME).join("framewise.toml");
        std::fs::write(&toml, "[budgets]\nframe_ms = 8.33\n").expect("edit");
        let second = scaffold(tmp.path()).expect("again");
        assert!(!second.created_dir);
        assert!(second.created.is_empty());
        assert_eq!(second.kept.len(), 3);
        assert_eq!(
            std::fs::read_to_string(&toml).expect("read"),
            "[budgets]\nframe_ms = 8.33\n"
        );
    }

    /// A scaffold file that is there but is no file (a link to nothing, a FIFO, a directory)
    /// is said, not reported kept: every verb reading it would refuse it.
    #[test]
    fn a_scaffold_file_that_is_no_file_is_an_error_not_kept() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join(DIR_NAME);
        std::fs::create_dir(&dir).expect("dir");
        std::os::unix::fs::symlink("nowhere.toml", dir.join("framewise.toml")).expect("link");
        let err = scaffold(tmp.path())
            .expect_err("a dangling framewise.toml")
            .to_string();
        assert!(err.contains("is a link to nothing"), "{err}");
        std::fs::remove_file(dir.join("framewise.toml")).expect("rm");
        std::fs::create_dir(dir.join("framewise.toml")).expect("a directory");
        let err = scaffold(tmp.path()).expect_err("a directory").to_string();
        assert!(err.contains("is a directory, not a file"), "{err}");
        // A link to a file is a file: kept.
        std::fs::remove_dir(dir.join("framewise.toml")).expect("rmdir");
        std::fs::write(tmp.path().join("mine.toml"), "[budgets]\n").expect("write");
        std::os::unix::fs::symlink("../mine.toml", dir.join("framewise.toml")).expect("link");
        let done = scaffold(tmp.path()).expect("scaffold");
        assert!(done.kept.contains(&dir.join("framewise.toml")));
    }

    #[test]
    fn configured_directory_wins() {
        let dir = Path::new("/nonexistent/elsewhere");
        assert_eq!(locate(Some(dir)), Some(dir.to_owned()));
    }
}
