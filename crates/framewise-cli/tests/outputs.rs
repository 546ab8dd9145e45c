//! Every file a verb writes at a user-named path follows one rule: a regular file is
//! replaced whole, a FIFO or a device is written through and never replaced by a regular
//! file, a symlink is followed and stays a symlink. A FIFO and a `mknod` device are made
//! in a temporary directory, never the machine's own `/dev` entries.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{write_game, Dir, Game};

fn file_type(path: &Path) -> std::fs::FileType {
    std::fs::symlink_metadata(path)
        .expect("the output exists")
        .file_type()
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A character device like `/dev/null` (1, 3), made in the test's own directory. Needs
/// root (or CAP_MKNOD): `None` without it, and the caller says it skipped.
fn mknod_null(path: &Path) -> Option<PathBuf> {
    mknod_char(path, "3")
}

/// The character device of major 1 and minor `minor` (3: `/dev/null`, 5: `/dev/zero`),
/// made in the test's own directory; `None`, said on stderr, without root.
fn mknod_char(path: &Path, minor: &str) -> Option<PathBuf> {
    let out = Command::new("mknod")
        .arg(path)
        .args(["c", "1", minor])
        .output()
        .expect("mknod runs");
    if out.status.success() {
        Some(path.to_owned())
    } else {
        eprintln!(
            "skipping the device case: mknod needs root here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        None
    }
}

/// Reads everything written to the FIFO, on a thread (opening a FIFO for writing waits for
/// its reader).
fn drain(fifo: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    let fifo = fifo.to_owned();
    std::thread::spawn(move || std::fs::read(fifo).expect("the FIFO reads"))
}

#[test]
fn trace_output_to_a_fifo_is_written_through_and_stays_a_fifo() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    let fifo = dir.path("trace.fifo");
    mkfifo(&fifo);
    let reader = drain(&fifo);
    let run = dir
        .run(&["trace", "game.sgpt", "-o", "trace.fifo"])
        .expect(0);
    // The FIFO took the trace as a stream: there is no file to open in Perfetto after.
    assert!(run.stdout.starts_with("wrote "), "{}", run.stdout);
    assert!(!run.stdout.contains("next: open"), "{}", run.stdout);
    // Checked before joining the reader: a replaced FIFO never gets a writer.
    assert!(file_type(&fifo).is_fifo(), "the FIFO was replaced");
    let trace: Value = serde_json::from_slice(&reader.join().unwrap()).unwrap();
    assert!(trace["traceEvents"]
        .as_array()
        .is_some_and(|e| !e.is_empty()));
    assert_eq!(dir.partials(), Vec::<String>::new());
}

#[test]
fn trace_output_to_a_device_is_written_through_and_stays_a_device() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    let Some(device) = mknod_null(&dir.path("null")) else {
        return;
    };
    dir.run(&["trace", "game.sgpt", "-o", "null"]).expect(0);
    assert!(
        file_type(&device).is_char_device(),
        "the device was replaced"
    );
    // --json PATH follows the same rule.
    dir.run(&["summarize", "game.sgpt", "--json", "null"])
        .expect(0);
    assert!(
        file_type(&device).is_char_device(),
        "the device was replaced"
    );
    assert_eq!(dir.partials(), Vec::<String>::new());
}

#[test]
fn json_output_to_a_fifo_is_written_through_and_stays_a_fifo() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    let fifo = dir.path("report.fifo");
    mkfifo(&fifo);
    let reader = drain(&fifo);
    dir.run(&["summarize", "game.sgpt", "--json=report.fifo"])
        .expect(0);
    assert!(file_type(&fifo).is_fifo(), "the FIFO was replaced");
    let report: Value = serde_json::from_slice(&reader.join().unwrap()).unwrap();
    assert!(report["schema"].is_string(), "{report}");
}

#[test]
fn a_symlink_output_is_followed_and_stays_a_symlink() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    std::fs::create_dir(dir.path("real")).unwrap();
    std::os::unix::fs::symlink("real/trace.json", dir.path("trace.json")).unwrap();
    std::os::unix::fs::symlink("real/report.json", dir.path("report.json")).unwrap();
    for _ in 0..2 {
        // Twice: through a dangling link (creates the target), then over the target.
        let run = dir
            .run(&["trace", "game.sgpt", "-o", "trace.json"])
            .expect(0);
        // A link to a regular file is a file to open.
        assert!(
            run.stdout
                .contains("next: open trace.json in https://ui.perfetto.dev"),
            "{}",
            run.stdout
        );
        dir.run(&[
            "trace",
            "game.sgpt",
            "-o",
            "trace.json",
            "--json=report.json",
        ])
        .expect(0);
        assert!(file_type(&dir.path("trace.json")).is_symlink());
        assert!(file_type(&dir.path("report.json")).is_symlink());
        let trace: Value =
            serde_json::from_slice(&std::fs::read(dir.path("real/trace.json")).unwrap()).unwrap();
        assert!(trace["traceEvents"].is_array());
        let report: Value =
            serde_json::from_slice(&std::fs::read(dir.path("real/report.json")).unwrap()).unwrap();
        assert_eq!(report["schema"], "framewise.trace-export/1");
    }
}

#[test]
fn trace_output_to_a_directory_is_refused_with_one_line() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    std::fs::create_dir(dir.path("out")).unwrap();
    let run = dir.run(&["trace", "game.sgpt", "-o", "out"]).expect(4);
    let line = run.one_error_line();
    assert_eq!(line, "framewise: error: out: is a directory");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

#[test]
fn an_output_in_a_missing_directory_names_the_directory() {
    // It said `cannot create a temporary file beside it: No such file or directory`.
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    let run = dir
        .run(&["trace", "game.sgpt", "-o", "missing/t.json"])
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: missing/t.json: cannot create it: missing does not exist"
    );
    std::os::unix::fs::symlink("gone/t.json", dir.path("link.json")).unwrap();
    let run = dir
        .run(&["summarize", "game.sgpt", "--json=link.json"])
        .expect(4);
    assert!(
        run.one_error_line()
            .ends_with("link.json: cannot create it: gone does not exist"),
        "{}",
        run.stderr
    );
    assert!(!dir.path("missing").exists() && !dir.path("gone").exists());
}

/// A capture whose trace is far more than a pipe buffers (64 KiB), so a writer meets a
/// reader that left.
fn write_long_game(path: &Path) {
    let game = Game {
        frames: 5000,
        ..Game::steady()
    };
    write_game(path, &game);
}

#[test]
fn trace_to_a_closed_pipe_keeps_exit_0() {
    let dir = Dir::new();
    write_long_game(&dir.path("game.sgpt"));
    // `framewise trace game.sgpt -o - | head -c 100`: the reader takes 100 bytes and goes.
    let (code, stderr) = dir.run_closing_stdout(&["trace", "game.sgpt", "-o", "-"], 100);
    assert!(stderr.is_empty(), "quiet on a broken pipe: {stderr}");
    assert_eq!(code, Some(0), "a closed pipe keeps the verb's exit code");
}

#[test]
fn trace_to_dev_stdout_is_trace_to_stdout() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    // On a pipe (the test's stdout): the trace alone, no report after it.
    let run = dir
        .run(&["trace", "game.sgpt", "-o", "/dev/stdout"])
        .expect(0);
    let trace: Value = serde_json::from_str(&run.stdout).expect("stdout is the trace alone");
    assert!(trace["traceEvents"].is_array());
    // A reader that leaves early changes nothing, as with `-o -`.
    write_long_game(&dir.path("big.sgpt"));
    let (code, stderr) = dir.run_closing_stdout(&["trace", "big.sgpt", "-o", "/dev/stdout"], 100);
    assert!(stderr.is_empty(), "quiet on a broken pipe: {stderr}");
    assert_eq!(code, Some(0));
}

#[test]
fn a_fifo_whose_reader_leaves_early_is_an_error_that_names_it() {
    let dir = Dir::new();
    write_long_game(&dir.path("game.sgpt"));
    let fifo = dir.path("trace.fifo");
    mkfifo(&fifo);
    // The reader takes 100 bytes and goes; the trace is far longer than a pipe buffers.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut f = std::fs::File::open(fifo).expect("the FIFO opens");
            let mut head = [0u8; 100];
            f.read_exact(&mut head).expect("100 bytes");
        })
    };
    let run = dir
        .run(&["trace", "game.sgpt", "-o", "trace.fifo"])
        .expect(4);
    reader.join().expect("reader");
    let line = run.one_error_line();
    assert!(
        line.starts_with("framewise: error: trace.fifo: writing the trace failed after"),
        "{line}"
    );
    assert!(line.contains("Broken pipe"), "{line}");
}

/// Writes `bytes` into the FIFO at `fifo` from another thread (opening it waits for the
/// reader, as `cat FILE > FIFO` does).
fn feed(fifo: &Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    let fifo = fifo.to_owned();
    std::thread::spawn(move || {
        // The reader may stop early (a refused input): a broken pipe is not the test's concern.
        let _ = std::fs::write(fifo, bytes);
    })
}

#[test]
fn a_capture_is_read_from_a_fifo_once_whole() {
    // Every verb peeked at a FIFO's first bytes and then opened it again for the rest:
    // `cat game.sgpt > f & framewise summarize f` said "0 bytes, shorter than the 32-byte
    // header", though the error for `-` points a pipe at /dev/stdin.
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    let capture = std::fs::read(dir.path("game.sgpt")).expect("the capture");
    let fifo = dir.path("game.fifo");
    mkfifo(&fifo);
    for (verb, code) in [("summarize", 0), ("inspect", 0), ("hitches", 0)] {
        let from_file = dir
            .run(&[verb, "game.sgpt", "--format", "json"])
            .expect(code);
        let writer = feed(&fifo, capture.clone());
        let from_fifo = dir
            .run(&[verb, "game.fifo", "--format", "json"])
            .expect(code);
        writer.join().expect("the writer");
        let mut file_json = from_file.json();
        let mut fifo_json = from_fifo.json();
        // The same report but for the name it was read under.
        for json in [&mut file_json, &mut fifo_json] {
            for key in ["capture", "file"] {
                if let Some(obj) = json.as_object_mut() {
                    obj.remove(key);
                }
            }
        }
        assert_eq!(file_json, fifo_json, "{verb}");
    }
    // Two sides, one of them a FIFO.
    let writer = feed(&fifo, capture);
    dir.run(&["gate", "game.sgpt", "game.fifo"]).expect(0);
    writer.join().expect("the writer");
    // An empty stream is an empty input, said once.
    let writer = feed(&fifo, Vec::new());
    let run = dir.run(&["summarize", "game.fifo"]).expect(4);
    writer.join().expect("the writer");
    assert_eq!(
        run.one_error_line(),
        "framewise: error: game.fifo: empty input (0 bytes): not a capture"
    );
}

/// Writes `piece` into the FIFO at `fifo` again and again from another thread, until its
/// reader closes it: an input that never ends.
fn feed_forever(fifo: &Path, piece: Vec<u8>) -> std::thread::JoinHandle<()> {
    let fifo = fifo.to_owned();
    std::thread::spawn(move || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(fifo)
            .expect("the FIFO opens");
        while f.write_all(&piece).is_ok() {}
    })
}

/// Room for a run of the binary, but not for an endless input read into memory.
const ADDRESS_SPACE_KIB: u64 = 4 << 20;

#[test]
fn a_device_given_as_a_capture_is_refused_at_once() {
    // A character device that never ends (`/dev/zero`) was read whole before its first bytes
    // were looked at, and the read never returned. Every verb that reads a capture, or a
    // file beside one, now refuses a device by its type, in one line, exit 4. The address
    // space is limited so that a regression fails (an allocation refused) instead of
    // filling the machine's memory.
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    let Some(_zero) = mknod_char(&dir.path("zero"), "5") else {
        eprintln!("skipping a_device_given_as_a_capture_is_refused_at_once: mknod needs root");
        return;
    };
    let refused: [&[&str]; 14] = [
        &["summarize", "zero"],
        &["inspect", "zero"],
        &["diff", "game.sgpt", "zero"],
        &["gate", "zero", "game.sgpt"],
        &["trace", "zero", "-o", "out.json"],
        &["hitches", "zero"],
        &["attribute", "zero"],
        &["view", "zero", "--port", "0"],
        &["view", "game.sgpt", "--compare", "zero", "--port", "0"],
        &["census", "zero"],
        &["bisect", "zero"],
        &["issues", "--capture", "zero", "--dir", "."],
        &["bench", "--compare", "zero", "zero"],
        &["summarize", "game.sgpt", "--config", "zero"],
    ];
    for args in refused {
        let run = dir.run_address_space_limited(args, ADDRESS_SPACE_KIB);
        let run = run.expect(4);
        let line = run.one_error_line();
        assert!(
            line.starts_with("framewise: ") && line.contains("zero: "),
            "{args:?}: {line}"
        );
        assert!(
            line.contains("character device") || line.contains("device holds no"),
            "{args:?}: {line}"
        );
        assert_eq!(run.stdout, "", "{args:?}");
    }
    // A pipe of garbage that never ends is refused by its first bytes, before it is read
    // on; the writer then meets a closed pipe.
    let fifo = dir.path("zeros.fifo");
    mkfifo(&fifo);
    let writer = feed_forever(&fifo, vec![0u8; 1 << 16]);
    let run = dir
        .run_address_space_limited(&["summarize", "zeros.fifo"], ADDRESS_SPACE_KIB)
        .expect(4);
    writer.join().expect("the writer");
    assert_eq!(
        run.one_error_line(),
        "framewise: error: zeros.fifo: not a capture: its first bytes, 00 00 00 00 00 00 00 00 (hex), match no known format (.sgpt, .litecap, Chrome JSON)"
    );
    // A capture through a FIFO still reads, under the same limit.
    let capture = std::fs::read(dir.path("game.sgpt")).expect("the capture");
    let writer = feed(&fifo, capture);
    dir.run_address_space_limited(&["summarize", "zeros.fifo"], ADDRESS_SPACE_KIB)
        .expect(0);
    writer.join().expect("the writer");
}

#[test]
fn an_endless_stream_after_a_capture_header_is_refused_not_aborted() {
    // A capture's first bytes, then zeros without end, through a FIFO: a capture from a pipe
    // is read whole before it is decoded (its records are found by scanning), and the reader
    // grew its buffer until an allocation failed: an abort (exit 134) and a backtrace. Room is
    // now asked for before each piece, and a refusal is one line, exit 4. The address space is
    // limited (1 GiB) so that the refusal comes after a few hundred megabytes.
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    let capture = std::fs::read(dir.path("game.sgpt")).expect("the capture");
    let fifo = dir.path("endless.fifo");
    mkfifo(&fifo);
    let header = capture.get(..64).expect("a header").to_vec();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(fifo)
                .expect("the FIFO opens");
            let zeros = vec![0u8; 1 << 20];
            if f.write_all(&header).is_ok() {
                while f.write_all(&zeros).is_ok() {}
            }
        })
    };
    let run = dir
        .run_address_space_limited(&["summarize", "endless.fifo"], 1 << 20)
        .expect(4);
    writer.join().expect("the writer");
    let line = run.one_error_line();
    assert!(
        line.starts_with("framewise: error: endless.fifo: cannot hold the input in memory: "),
        "{line}"
    );
    assert_eq!(run.stdout, "");
}

/// The refusal of a stream that is blank for longer than the loader's limit (1 MiB).
const ONLY_BLANK: &str = "not a capture: it starts with more than 1 MiB of blanks (whitespace), and no capture starts so late (a Chrome JSON's first non-blank byte, `{` or `[`, comes sooner)";

#[test]
fn an_endless_stream_of_blanks_is_refused_past_its_limit() {
    // A Chrome JSON may start with blanks, so a stream of blanks decided nothing and was read
    // on without end (`yes '' | framewise summarize /dev/stdin`). Past 1 MiB of blanks it is
    // now refused, one line, exit 4, like any stream whose first bytes are no capture's. The
    // writers never stop: the test ends only because the reader refuses (before the fix it
    // never ended). The address space is limited so that a reader that kept what it read
    // would fail on an allocation rather than fill the machine's memory.
    let dir = Dir::new();
    // Through a FIFO, from a thread that writes blanks of every kind until the pipe closes.
    let fifo = dir.path("blank.fifo");
    mkfifo(&fifo);
    for verb in ["summarize", "inspect"] {
        let writer = feed_forever(&fifo, b" \t\r\n".repeat(1 << 14));
        let run = dir
            .run_address_space_limited(&[verb, "blank.fifo", "--format", "json"], ADDRESS_SPACE_KIB)
            .expect(4);
        writer.join().expect("the writer");
        assert_eq!(
            run.one_error_line(),
            format!("framewise: error: blank.fifo: {ONLY_BLANK}"),
            "{verb}"
        );
        assert_eq!(run.stdout, "", "{verb}");
    }
    // Through a pipe on stdin, from a child process that writes empty lines for ever.
    let mut yes = Command::new("yes")
        .arg("")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("yes runs");
    let stdin = yes.stdout.take().expect("yes's stdout");
    let out = Command::new("sh")
        .args([
            "-c",
            &format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\""),
        ])
        .arg(env!("CARGO_BIN_EXE_framewise"))
        .args(["summarize", "/dev/stdin"])
        .stdin(stdin)
        .output()
        .expect("framewise runs");
    // `yes` meets the closed pipe and ends.
    yes.wait().expect("yes ends");
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        format!("framewise: error: /dev/stdin: {ONLY_BLANK}")
    );
}

/// A span name that, printed raw, ends its line and opens a GitHub workflow command.
const EVIL_SCOPE: &str = "evil\n::error::injected";
/// A counter name with a CR LF before its command.
const EVIL_COUNTER: &str = "draws\r\n::warning::counted";

/// A Chrome trace of 300 frames on one thread, each with one span named [`EVIL_SCOPE`] (38 ms
/// in frames 100 and 200: two hitches it explains; `extra_us` longer in every frame) and a
/// counter named [`EVIL_COUNTER`].
fn evil_chrome_trace(extra_us: u64) -> String {
    let mut events = vec![serde_json::json!(
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}
    )];
    let mut ts = 1000u64;
    for i in 0..300u64 {
        let work = if i == 100 || i == 200 {
            38_000
        } else {
            7_000 + (i % 5) * 100
        } + extra_us;
        let dur = work + 500;
        events.push(serde_json::json!({"ph": "X", "name": "frame", "pid": 1, "tid": 1, "ts": ts, "dur": dur}));
        events.push(serde_json::json!({"ph": "X", "name": EVIL_SCOPE, "pid": 1, "tid": 1, "ts": ts + 100, "dur": work}));
        events.push(serde_json::json!({"ph": "C", "name": EVIL_COUNTER, "pid": 1, "tid": 1, "ts": ts + 50, "args": {EVIL_COUNTER: 100 + i % 3}}));
        ts += dur + 1000;
    }
    serde_json::json!({"traceEvents": events}).to_string()
}

/// The columns of a markdown table row: its `|` not escaped as `\|`, less one.
fn columns(row: &str) -> usize {
    let mut previous = ' ';
    let mut bars = 0;
    for c in row.chars() {
        if c == '|' && previous != '\\' {
            bars += 1;
        }
        previous = c;
    }
    bars - 1
}

/// Asserts what a report for people must hold whatever names its input carries: no line
/// opens (after blanks) with a workflow command (`::`, `##[`) but the annotations framewise
/// puts first under `--format github`; every markdown table row has its header's columns;
/// and each hostile name (`marks`, each the text after its line break) stays on the line
/// it began on, escaped (`\n`, or `%0A` in an annotation).
fn assert_lines_hold(out: &str, what: &str, marks: &[&str]) {
    let mut annotations = true;
    let mut header: Option<usize> = None;
    for line in out.lines() {
        let opened = line.trim_start();
        let command = opened.starts_with("::") || opened.starts_with("##[");
        annotations &= command;
        assert!(
            annotations || !command,
            "{what}: a line opens a workflow command: {line:?}\n{out}"
        );
        if line.starts_with('|') {
            let n = columns(line);
            match header {
                None => header = Some(n),
                Some(h) => assert_eq!(
                    n, h,
                    "{what}: a row of {n} columns under {h}: {line:?}\n{out}"
                ),
            }
        } else {
            header = None;
        }
        for mark in marks {
            if line.contains(mark) {
                let at = line.find(mark).unwrap_or(0);
                let before = &line[..at];
                assert!(
                    before.ends_with("\\n") || before.ends_with("%0A"),
                    "{what}: {mark:?} starts a line of its own: {line:?}\n{out}"
                );
            }
        }
    }
}

#[test]
fn a_line_break_in_a_name_never_starts_a_line() {
    // A scope named "evil\n::error::injected" printed its second half as a line of its own:
    // a table row cut in two, and a real `::error::` for GitHub's runner to act on.
    let dir = Dir::new();
    dir.write("c1.json", evil_chrome_trace(0));
    let marks = ["::error::injected", "::warning::counted"];
    let runs: [(&[&str], i32); 5] = [
        (&["summarize", "c1.json"], 0),
        (&["hitches", "c1.json"], 1),
        (&["attribute", "c1.json", "--frame", "100"], 0),
        (&["attribute", "c1.json"], 0),
        (
            &[
                "gate",
                "c1.json",
                "c1.json",
                "--tolerance",
                "scope.*.max=0",
                "--tolerance",
                "frame.p99=0",
            ],
            0,
        ),
    ];
    for (args, code) in runs {
        for format in ["github", "markdown", "console"] {
            let mut argv = args.to_vec();
            argv.extend(["--format", format]);
            let run = dir.run(&argv).expect(code);
            let what = argv.join(" ");
            assert!(
                run.stdout.contains("evil\\n::error::injected"),
                "{what}: the name is shown, escaped\n{}",
                run.stdout
            );
            assert_lines_hold(&run.stdout, &what, &marks);
        }
    }
    // The counter, in summarize's table of sums.
    let md = dir
        .run(&["summarize", "c1.json", "--format", "markdown"])
        .expect(0)
        .stdout;
    assert!(md.contains("| draws\\r\\n::warning::counted |"), "{md}");
    // The hitch's evidence, in its annotation and in the markdown after it.
    let gh = dir
        .run(&["hitches", "c1.json", "--format", "github"])
        .expect(1)
        .stdout;
    assert!(gh.starts_with("::warning title="), "{gh}");
    assert!(gh.contains("evil%0A::error::injected"), "{gh}");
    // A gate that fails on the scope: its reasons name it. No line of any format opens a
    // workflow command, whoever built it.
    dir.write("c2.json", evil_chrome_trace(3_000));
    for format in ["github", "markdown", "console"] {
        let args = [
            "gate",
            "c1.json",
            "c2.json",
            "--tolerance",
            "scope.*.max=0",
            "--format",
            format,
        ];
        let run = dir.run(&args).expect(1);
        assert!(run.stdout.contains("injected"), "{}", run.stdout);
        assert_lines_hold(&run.stdout, &args.join(" "), &[]);
    }
    // A capture whose own file name breaks a line or drives the terminal: no line it leads
    // opens a command, and no raw control character is printed (gate's and diff's input
    // lines and markdown headings printed it raw).
    let evil_file = "c\n::error::named\u{1b}[2J.json";
    std::fs::copy(dir.path("c1.json"), dir.path(evil_file)).unwrap();
    let runs: [&[&str]; 5] = [
        &["summarize", evil_file],
        &["hitches", evil_file],
        &["attribute", evil_file],
        &["gate", "c1.json", evil_file],
        &["diff", evil_file, "c1.json"],
    ];
    for args in runs {
        for format in ["github", "markdown", "console"] {
            let mut argv = args.to_vec();
            argv.extend(["--format", format]);
            let what = argv.join(" ");
            let run = dir.run(&argv);
            assert_lines_hold(&run.stdout, &what, &["::error::named"]);
            assert_no_control(&run.stdout, &what);
        }
    }
}

#[test]
fn a_line_break_in_a_census_name_never_starts_a_line() {
    // Names in a census document (an entry, a mesh, a material, a light, a site, the
    // engine) went into the tables and the hints' prose as they were.
    let dir = Dir::new();
    let inject = |name: &str, command: &str| format!("\"{name}\\n{command}\"");
    let text = serde_json::to_string(&crate::census::scene(5))
        .unwrap()
        .replace("\"boid\"", &inject("boid", "::error title=x::boids"))
        .replace(
            "\"feather\"",
            &inject("feather\\r", "::error title=y::feathers"),
        )
        .replace("\"Lamp\"", &inject("Lamp", "::warning::lamp"))
        .replace(
            "\"src/flock.rs:20\"",
            &inject("src/flock.rs:20", "##[error]site"),
        )
        .replace("\"test\"", &inject("test", "::notice::engine"));
    dir.write("census.json", text);
    let marks = [
        "::error title=x::boids",
        "::error title=y::feathers",
        "::warning::lamp",
        "##[error]site",
        "::notice::engine",
    ];
    for format in ["github", "markdown", "console"] {
        let run = dir
            .run(&["census", "census.json", "--all", "--format", format])
            .expect(0);
        assert!(
            run.stdout.contains("boid\\n::error title=x::boids"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.contains("Lamp\\n::warning::lamp"),
            "{}",
            run.stdout
        );
        assert_lines_hold(&run.stdout, &format!("census {format}"), &marks);
    }
}

/// The goalposts a person reviews — the budgets file and the golden images — are no place for
/// a report (`bench --compare A B --json=.framewise/goldens/smoke.png` replaced the golden,
/// and `golden --check` then failed on a PNG of JSON), named directly or through a link.
#[test]
fn a_report_never_replaces_a_goalpost() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    std::fs::create_dir_all(dir.path(".framewise/goldens")).unwrap();
    dir.write(".framewise/goldens/smoke.png", b"png");
    dir.write("framewise.toml", b"[budgets]\nframe_ms = 16.67\n");
    std::os::unix::fs::symlink(".framewise/goldens/smoke.png", dir.path("g.json")).unwrap();
    for (args, what) in [
        (
            &[
                "summarize",
                "game.sgpt",
                "--json=.framewise/goldens/smoke.png",
            ][..],
            "the golden image smoke.png",
        ),
        (
            &["summarize", "game.sgpt", "--json=g.json"][..],
            "the golden image smoke.png",
        ),
        (
            &["trace", "game.sgpt", "-o", "framewise.toml"][..],
            "the budgets file framewise.toml",
        ),
        (
            &["inspect", "game.sgpt", "--json=framewise.toml"][..],
            "the budgets file framewise.toml",
        ),
    ] {
        let run = dir.run(args).expect(4);
        assert!(
            run.one_error_line().contains(&format!("is {what}")),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert_eq!(
        std::fs::read(dir.path(".framewise/goldens/smoke.png")).unwrap(),
        b"png"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path("framewise.toml")).unwrap(),
        "[budgets]\nframe_ms = 16.67\n"
    );
    // The rolling summary check judges is no place for a report, nor for a capture (the
    // recorder rewrites it: `demo -o .framewise/profile.json` lost the capture).
    dir.write(".framewise/profile.json", b"{}");
    for args in [
        &["summarize", "game.sgpt", "--json=.framewise/profile.json"][..],
        &[
            "demo",
            "--frames",
            "5",
            "--quiet",
            "-o",
            ".framewise/profile.json",
        ][..],
    ] {
        let run = dir.run(args).expect(4);
        assert!(
            run.one_error_line()
                .contains("is the rolling summary profile.json that check and hook-status judge"),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert_eq!(
        std::fs::read(dir.path(".framewise/profile.json")).unwrap(),
        b"{}"
    );
    // Another file in the directory is written as usual.
    dir.run(&["summarize", "game.sgpt", "--json=.framewise/summary.json"])
        .expect(0);
}

#[test]
fn a_symlink_to_an_append_only_log_is_refused_as_the_log_is() {
    // `ln -s .framewise/perf.jsonl plink; framewise summarize a.sgpt --json=plink` replaced
    // the game's incident log with a summary: the guard looked at the name given only.
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    std::fs::create_dir(dir.path(".framewise")).unwrap();
    for log in ["perf.jsonl", "fixes.jsonl", "bench-history.jsonl"] {
        dir.write(&format!(".framewise/{log}"), b"{}\n");
    }
    let link =
        |target: &str, name: &str| std::os::unix::fs::symlink(target, dir.path(name)).unwrap();
    link(".framewise/perf.jsonl", "plink");
    link("plink", "plink2");
    link(".framewise/fixes.jsonl", "fixes.json");
    link(".framewise/bench-history.jsonl", "history.json");
    link(".framewise", "state");
    let refusals: [(&[&str], &str); 8] = [
        (&["summarize", "game.sgpt", "--json=plink"], "perf.jsonl"),
        (
            &["summarize", "game.sgpt", "--json", "plink2"],
            "perf.jsonl",
        ),
        (
            &["summarize", "game.sgpt", "--json=state/perf.jsonl"],
            "perf.jsonl",
        ),
        (
            &["summarize", "game.sgpt", "--json=fixes.json"],
            "fixes.jsonl",
        ),
        (
            &["inspect", "game.sgpt", "--json=history.json"],
            "bench-history.jsonl",
        ),
        (&["trace", "game.sgpt", "-o", "plink"], "perf.jsonl"),
        (
            &["trace", "game.sgpt", "-o", "t.json", "--json=plink2"],
            "perf.jsonl",
        ),
        (
            &["demo", "--frames", "5", "--quiet", "-o", "plink"],
            "perf.jsonl",
        ),
    ];
    for (args, log) in refusals {
        let run = dir.run(args).expect(4);
        let line = run.one_error_line();
        assert!(
            line.contains(&format!("is the append-only {log} of a game's .framewise/")),
            "{args:?}: {line}"
        );
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    let run = dir
        .run(&["summarize", "game.sgpt", "--json=plink"])
        .expect(4);
    assert!(
        run.one_error_line().contains("(a symlink to ")
            && run
                .one_error_line()
                .ends_with("perf.jsonl); a report would replace it (name another file)"),
        "{}",
        run.stderr
    );
    for log in ["perf.jsonl", "fixes.jsonl", "bench-history.jsonl"] {
        assert_eq!(
            std::fs::read(dir.path(&format!(".framewise/{log}"))).unwrap(),
            b"{}\n",
            "{log} was replaced"
        );
    }
    assert!(file_type(&dir.path("plink")).is_symlink());
    assert!(!dir.path("t.json").exists());
    // Nor is a log that stdout is open on (`>> .framewise/perf.jsonl`) written through.
    for json in ["--json=/dev/stdout", "--json=.framewise/perf.jsonl"] {
        let (code, stderr) = run_redirected(
            &dir,
            &["summarize", "game.sgpt", json],
            ".framewise/perf.jsonl",
            1,
            true,
        );
        assert_eq!(code, 4, "{json}: {stderr}");
        assert!(
            stderr.contains("is the append-only perf.jsonl"),
            "{json}: {stderr}"
        );
        assert_eq!(
            std::fs::read(dir.path(".framewise/perf.jsonl")).unwrap(),
            b"{}\n",
            "{json}: perf.jsonl was written"
        );
    }
    // A link to a file that only looks like a log elsewhere is no log, and is written.
    dir.write("notes.txt", b"x");
    link("notes.txt", "report.json");
    dir.run(&["summarize", "game.sgpt", "--json=report.json"])
        .expect(0);
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path("notes.txt")).unwrap()).unwrap();
    assert!(report["schema"].is_string());
}

/// Runs `framewise ARGS` in `dir` with stdout (or stderr, when `stream` is 2) redirected to
/// the regular file `name` there, as `> name` (or `>> name` when `append`): the exit code
/// and the other stream's text.
fn run_redirected(dir: &Dir, args: &[&str], name: &str, stream: u8, append: bool) -> (i32, String) {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(dir.path(name))
        .expect("the file to redirect to opens");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_framewise"));
    cmd.args(args)
        .current_dir(dir.tmp.path())
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("FRAMEWISE_DIR")
        .env_remove("CI")
        .env_remove("FRAMEWISE_AUTOMATED")
        .env("NO_COLOR", "1");
    if stream == 2 {
        cmd.stderr(file).stdout(std::process::Stdio::piped());
    } else {
        cmd.stdout(file).stderr(std::process::Stdio::piped());
    }
    let out = cmd.output().expect("framewise runs");
    let other = if stream == 2 { out.stdout } else { out.stderr };
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&other).into_owned(),
    )
}

fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).expect("the file exists").ino()
}

#[test]
fn json_to_the_file_stdout_is_open_on_is_written_through_before_the_report() {
    // `framewise summarize a.sgpt --json=/dev/stdout > o.txt` renamed a new file over o.txt:
    // o.txt held the JSON alone, and the console report went to a file no name reached.
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    let report = dir.run(&["summarize", "game.sgpt"]).expect(0).stdout;
    let json = dir
        .run(&["summarize", "game.sgpt", "--format", "json"])
        .expect(0)
        .stdout;
    for path in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "o.txt"] {
        for append in [false, true] {
            std::fs::write(dir.path("o.txt"), "before\n").unwrap();
            let before = inode(&dir.path("o.txt"));
            let json_arg = format!("--json={path}");
            let (code, stderr) = run_redirected(
                &dir,
                &["summarize", "game.sgpt", &json_arg],
                "o.txt",
                1,
                append,
            );
            assert_eq!((code, stderr.as_str()), (0, ""), "{path}");
            assert_eq!(
                inode(&dir.path("o.txt")),
                before,
                "{path}: o.txt was replaced"
            );
            let kept = if append { "before\n" } else { "" };
            assert_eq!(
                std::fs::read_to_string(dir.path("o.txt")).unwrap(),
                format!("{kept}{json}{report}"),
                "{path}, append {append}"
            );
        }
    }
    // The same for stderr, and for trace's -o.
    let (code, stdout) = run_redirected(
        &dir,
        &["summarize", "game.sgpt", "--json=/dev/stderr"],
        "e.txt",
        2,
        false,
    );
    assert_eq!((code, stdout.as_str()), (0, report.as_str()));
    assert_eq!(std::fs::read_to_string(dir.path("e.txt")).unwrap(), json);
    std::fs::write(dir.path("t.txt"), "").unwrap();
    let before = inode(&dir.path("t.txt"));
    for (stream, fd) in [("/dev/stderr", 2), ("/dev/stdout", 1)] {
        let (code, _) = run_redirected(
            &dir,
            &["trace", "game.sgpt", "-o", stream],
            "t.txt",
            fd,
            false,
        );
        assert_eq!(code, 0);
        assert_eq!(inode(&dir.path("t.txt")), before, "t.txt was replaced");
        let trace: Value =
            serde_json::from_slice(&std::fs::read(dir.path("t.txt")).unwrap()).unwrap();
        assert!(trace["traceEvents"].is_array(), "{stream}");
    }
    assert_eq!(dir.partials(), Vec::<String>::new());
}

#[test]
fn json_dash_is_stdout_as_trace_dash_is() {
    // `--json=-` wrote a file named `-` in the working directory.
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::steady());
    let json = dir
        .run(&["summarize", "game.sgpt", "--format", "json"])
        .expect(0)
        .stdout;
    for args in [
        &["summarize", "game.sgpt", "--json=-"][..],
        &["summarize", "game.sgpt", "--json", "-"],
        &["summarize", "game.sgpt", "--json=-", "--format", "json"],
    ] {
        let run = dir.run(args).expect(0);
        assert_eq!(run.stdout, json, "{args:?}");
    }
    assert!(!dir.path("-").exists(), "a file named - was written");
    // With a report for people on stdout too: refused, as bare --json is.
    for format in ["console", "markdown", "github"] {
        let run = dir
            .run(&["summarize", "game.sgpt", "--json=-", "--format", format])
            .expect(4);
        assert_eq!(
            run.one_error_line(),
            format!("framewise: error: --json - prints JSON on stdout, which conflicts with --format {format}; write --json=PATH to keep the {format} output on stdout")
        );
        assert!(run.stdout.is_empty());
    }
    // trace: the report's JSON on stdout, the trace in its file; not both on stdout.
    let run = dir
        .run(&["trace", "game.sgpt", "-o", "t.json", "--json=-"])
        .expect(0);
    assert_eq!(run.json()["schema"], "framewise.trace-export/1");
    assert!(dir.path("t.json").exists());
    let run = dir
        .run(&["trace", "game.sgpt", "-o", "-", "--json=-"])
        .expect(4);
    assert!(
        run.one_error_line()
            .contains("-o - writes the trace to stdout"),
        "{}",
        run.stderr
    );
    assert!(!dir.path("-").exists(), "a file named - was written");
}

/// A stderr that cannot be written (a full device) loses framewise's line, never its exit
/// code: `framewise summarize missing.sgpt 2>/dev/full` panicked in `eprintln!` (exit 101)
/// where it exits 4, and a verb that says something on stderr on success still exits 0.
#[test]
fn a_stderr_that_cannot_be_written_keeps_the_exit_code() {
    let dir = Dir::new();
    let Some(full) = mknod_char(&dir.path("full"), "7") else {
        return;
    };
    write_game(&dir.path("game.sgpt"), &Game::steady());
    let code = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_framewise"))
            .args(args)
            .current_dir(dir.tmp.path())
            .env_remove("FRAMEWISE_DIR")
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::OpenOptions::new().write(true).open(&full).unwrap())
            .status()
            .expect("runs")
            .code()
    };
    assert_eq!(code(&["summarize", "missing.sgpt"]), Some(4));
    assert_eq!(code(&["summarize"]), Some(4), "a usage error");
    std::fs::create_dir(dir.path(".framewise")).unwrap();
    // `watch --once` says where it looked on stderr, then exits 0.
    assert_eq!(code(&["watch", "--once"]), Some(0));
}

/// Texts a hand-edited or hostile `.framewise/` can carry that, printed raw, end a line and
/// open a workflow command or move the terminal (`ESC [2J` clears it, `ESC ]0;…BEL` retitles
/// it): a build name, an incident's phase, guess, evidence and footprint key, a counter's
/// name, a fix's title and commit, and the directory's own name.
const LOG_BUILD: &str = "b42\n::error::build\u{1b}[2J";
const LOG_PHASE: &str = "play\n::error::phase";
const LOG_GUESS: &str = "stall\r\n::warning::guess";
const LOG_EVIDENCE: &str = "spent\n::error::evidence\u{1b}]0;owned\u{7}";
const LOG_KEY: &str =
    "hitch|play|long-cpu-scope\n::error::key\u{1b}[2J|section:physics|ctx:stance=foot\n::error::ctx";
const LOG_COUNTER: &str = "draws\r\n::warning::counter";
const LOG_TITLE: &str = "warm\n::error::title\u{1b}[2J";
const LOG_COMMIT: &str = "abc123\n::error::commit\u{1b}[2J";
const LOG_DIR: &str = "fw\n::error::dir\u{1b}[2J";
/// Each hostile text's part after its line break.
const LOG_MARKS: [&str; 10] = [
    "::error::build",
    "::error::phase",
    "::warning::guess",
    "::error::evidence",
    "::error::key",
    "::error::ctx",
    "::warning::counter",
    "::error::title",
    "::error::commit",
    "::error::dir",
];

/// Asserts that no control character but the line feeds ending its own lines reaches `out`:
/// an ESC, CR or BEL from an input is shown escaped (`\u{1b}`), never handed to the terminal.
fn assert_no_control(out: &str, what: &str) {
    let raw = out.chars().find(|&c| c.is_control() && c != '\n');
    assert!(raw.is_none(), "{what}: a raw {raw:?} is printed\n{out:?}");
}

/// What a report for people must hold whatever the ledger carries: [`assert_lines_hold`] for
/// the hostile texts, and no raw control character.
fn assert_log_escaped(out: &str, what: &str) {
    assert_lines_hold(out, what, &LOG_MARKS);
    assert_no_control(out, what);
}

/// The ledger of `crate::ledger::ledger` moved to a directory named [`LOG_DIR`], with a build
/// [`LOG_BUILD`] after its two: four heartbeats counting [`LOG_COUNTER`] and four hitches of
/// 150 ms keyed [`LOG_KEY`] (the most frequent issue) in phase [`LOG_PHASE`], guessed
/// [`LOG_GUESS`] on [`LOG_EVIDENCE`]; and a fix [`LOG_TITLE`] at [`LOG_COMMIT`] recorded
/// against them (its JSON exact). The hitches' footprint id.
fn hostile_ledger(dir: &Dir) -> String {
    use framewise_incidents::{
        iso_from_unix_ms, Appender, Common, Confidence, Guess, HeartbeatRecord, HitchRecord,
        Record, Window,
    };
    let fw = crate::ledger::ledger(dir);
    let common = |minute: i64| Common {
        // 2026-12-01T00:00:00Z and `minute` minutes, after the ledger's own records.
        at: iso_from_unix_ms(1_796_083_200_000 + minute * 60_000),
        build: Some(LOG_BUILD.to_owned()),
        phase: Some(LOG_PHASE.to_owned()),
        ..Common::default()
    };
    let footprint: framewise_incidents::Footprint =
        framewise_detect::footprint::footprint(1, LOG_KEY).into();
    let id = footprint.id.clone();
    let mut log = Appender::open(fw.join("perf.jsonl")).expect("open");
    for m in [200, 210, 220, 230] {
        log.append(&Record::Heartbeat(HeartbeatRecord {
            common: common(m),
            frame: 100 * u64::try_from(m).expect("minute"),
            window: Window {
                frames: 600,
                median_ms: Some(16.6),
                p95_ms: Some(20.0),
                ..Window::default()
            },
            counters: std::collections::BTreeMap::from([(LOG_COUNTER.to_owned(), 7)]),
            hitches: 1,
        }))
        .expect("append");
        log.append(&Record::Hitch(HitchRecord {
            common: common(m + 5),
            frame: 100 * u64::try_from(m + 5).expect("minute"),
            frame_ms: 150.0,
            median_ms: Some(16.6),
            threshold_ms: 33.2,
            work_ms: None,
            gpu_ms: None,
            delta: std::collections::BTreeMap::new(),
            scopes: Vec::new(),
            classification: vec![Guess {
                guess: LOG_GUESS.to_owned(),
                confidence: Confidence::High,
                evidence: LOG_EVIDENCE.to_owned(),
                scope: None,
                site: None,
            }],
            dropped_since_last: None,
            footprint: footprint.clone(),
        }))
        .expect("append");
    }
    drop(log);
    std::fs::rename(&fw, dir.path(LOG_DIR)).expect("renamed");
    let json = dir
        .run(&[
            "fix",
            "--dir",
            LOG_DIR,
            "--title",
            LOG_TITLE,
            "--commit",
            LOG_COMMIT,
            "--footprints",
            &id,
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    assert_eq!(json["fix"]["title"], LOG_TITLE, "{json}");
    assert_eq!(json["fix"]["commit"], LOG_COMMIT, "{json}");
    assert_eq!(json["fix"]["after"]["build"], LOG_BUILD, "{json}");
    id
}

/// A fix title, a build, an incident's evidence or key, a directory name: `issues` and
/// `report` printed them raw in their prose (`- fix …: warm` then `\::error::x` and ESC [2J
/// on a line of its own), cutting a markdown item and the `**label** (`key`)` heading in two.
#[test]
fn a_line_break_in_the_ledger_never_starts_a_line_of_issues_or_report() {
    let dir = Dir::new();
    let id = hostile_ledger(&dir);
    let runs: [&[&str]; 3] = [&["issues"], &["issues", "--fp", &id], &["report"]];
    for args in runs {
        for format in ["github", "markdown", "console"] {
            let mut argv = args.to_vec();
            argv.extend(["--dir", LOG_DIR, "--format", format]);
            let run = dir.run(&argv).expect(0);
            let what = format!("{} --format {format}", args.join(" "));
            for shown in [
                "warm\\n::error::title\\u{1b}[2J",
                "abc123\\n::error::commit\\u{1b}[2J",
                "spent\\n::error::evidence\\u{1b}]0;owned\\u{7}",
                "stall\\r\\n::warning::guess",
                "long-cpu-scope\\n::error::key\\u{1b}[2J",
            ] {
                assert!(
                    run.stdout.contains(shown),
                    "{what}: {shown} is shown, escaped\n{}",
                    run.stdout
                );
            }
            assert_log_escaped(&run.stdout, &what);
        }
    }
    // The JSON carries every text as it is.
    let json = dir
        .run(&["issues", "--dir", LOG_DIR, "--format", "json"])
        .expect(0)
        .json();
    let issue = &json["issues"][0];
    assert_eq!(issue["key"], LOG_KEY, "{json}");
    assert_eq!(issue["builds"][0], LOG_BUILD, "{json}");
    assert_eq!(issue["last_guess"]["evidence"], LOG_EVIDENCE, "{json}");
    assert_eq!(issue["fixes"][0]["title"], LOG_TITLE, "{json}");
    assert_eq!(json["ledger"]["dir"], LOG_DIR, "{json}");
}

/// `history` printed a fix's title and the directory raw, and a counter's name headed a
/// console column unescaped.
#[test]
fn a_line_break_in_the_ledger_never_starts_a_line_of_history() {
    let dir = Dir::new();
    hostile_ledger(&dir);
    for format in ["github", "markdown", "console"] {
        let run = dir
            .run(&["history", "--dir", LOG_DIR, "--format", format])
            .expect(0);
        let what = format!("history --format {format}");
        for shown in [
            "fw\\n::error::dir\\u{1b}[2J",
            "b42\\n::error::build\\u{1b}[2J",
            "draws\\r\\n::warning::counter",
        ] {
            assert!(
                run.stdout.contains(shown),
                "{what}: {shown} is shown, escaped\n{}",
                run.stdout
            );
        }
        if format == "console" {
            assert!(
                run.stdout.contains("warm\\n::error::title\\u{1b}[2J"),
                "{}",
                run.stdout
            );
        }
        assert_log_escaped(&run.stdout, &what);
    }
    let json = dir
        .run(&["history", "--dir", LOG_DIR, "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(json["fixes"][0]["title"], LOG_TITLE, "{json}");
}

/// `fix` printed its own title (`recorded: fix "warm` then a line of its own) and the
/// windows' build names raw.
#[test]
fn a_line_break_in_a_fix_never_starts_a_line_of_fix() {
    let dir = Dir::new();
    let id = hostile_ledger(&dir);
    // Another title than the fix recorded: the same fix is not measured twice.
    let title = format!("again: {LOG_TITLE}");
    for format in ["github", "markdown", "console"] {
        let args = [
            "fix",
            "--dir",
            LOG_DIR,
            "--title",
            &title,
            "--commit",
            LOG_COMMIT,
            "--footprints",
            &id,
            "--dry-run",
            "--format",
            format,
        ];
        let run = dir.run(&args).expect(0);
        let what = format!("fix --format {format}");
        for shown in [
            "warm\\n::error::title\\u{1b}[2J",
            "b42\\n::error::build\\u{1b}[2J",
        ] {
            assert!(
                run.stdout.contains(shown),
                "{what}: {shown} is shown, escaped\n{}",
                run.stdout
            );
        }
        assert_log_escaped(&run.stdout, &what);
    }
}

/// `watch` made a wake one line by turning line breaks into spaces, but handed an ESC in a
/// build, a guess or an evidence string to the terminal.
#[test]
fn a_control_character_in_the_ledger_never_reaches_a_wake_line() {
    let dir = Dir::new();
    hostile_ledger(&dir);
    let watch = |format: &str| {
        dir.run(&[
            "watch",
            "--once",
            "--from-start",
            "--dir",
            LOG_DIR,
            "--format",
            format,
        ])
        .expect(0)
        .stdout
    };
    let out = watch("console");
    let wakes: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("::error::build"))
        .collect();
    assert_eq!(wakes.len(), 4, "one line per hitch of the build\n{out}");
    for wake in wakes {
        for shown in [
            "b42\\n::error::build\\u{1b}[2J",
            "stall\\r\\n::warning::guess",
            "spent\\n::error::evidence\\u{1b}]0;owned\\u{7}",
            "phase=play\\n::error::phase",
        ] {
            assert!(wake.contains(shown), "{shown} is shown, escaped: {wake}");
        }
    }
    assert_log_escaped(&out, "watch --once");
    // JSON: the record exactly as read, its `line` as the console prints it.
    for text in watch("json").lines() {
        let wake: Value = serde_json::from_str(text).expect("a JSON wake");
        let line = wake["line"].as_str().expect("line");
        assert_no_control(line, "a JSON wake's line");
        if line.contains("::error::build") {
            assert_eq!(wake["record"]["build"], LOG_BUILD, "{wake}");
            assert_eq!(
                wake["record"]["classification"][0]["evidence"], LOG_EVIDENCE,
                "{wake}"
            );
        }
    }
}

/// `hook-status` printed the profile's regime and breached budgets and the last hitch's guess
/// raw: lines an agent's prompt hook reads into its context.
#[test]
fn a_control_character_in_the_profile_or_ledger_never_reaches_hook_status() {
    let dir = Dir::new();
    hostile_ledger(&dir);
    let profile = serde_json::json!({
        "schema": "framewise.profile/1",
        "at": "2026-12-01T16:20:00.000Z",
        "regime": "hardware\n::error::regime\u{1b}[2J",
        "automated": false,
        "frame_index": 900,
        "window": {"frames": 600, "seconds": 10.0},
        "frame": {"median_ms": 12.5, "p95_ms": 20.0, "fps": 80.0},
        "budgets": {"checked": 1, "breached": ["frame_ms\n::error::budget\u{1b}[2J"]},
        "paused": false,
        "written": {"hitch": 0, "heartbeat": 0, "usermark": 0, "jitter": 0},
        "dropped": {"hitch": 0, "usermark": 0, "jitter": 0}
    });
    dir.write(&format!("{LOG_DIR}/profile.json"), profile.to_string());
    let out = dir.run(&["hook-status", "--dir", LOG_DIR]).expect(0).stdout;
    for shown in [
        "hardware\\n::error::regime\\u{1b}[2J",
        "frame_ms\\n::error::budget\\u{1b}[2J",
        "stall\\r\\n::warning::guess",
    ] {
        assert!(out.contains(shown), "{shown} is shown, escaped\n{out}");
    }
    assert_eq!(out.lines().count(), 3, "{out}");
    assert_lines_hold(&out, "hook-status", &["::error::regime", "::error::budget"]);
    assert_log_escaped(&out, "hook-status");
}

/// `footprint KEY` printed the key, its label and its situation raw.
#[test]
fn a_line_break_in_a_footprint_key_never_starts_a_line() {
    let dir = Dir::new();
    for format in ["github", "markdown", "console"] {
        let run = dir
            .run(&["footprint", LOG_KEY, "--format", format])
            .expect(0);
        let what = format!("footprint --format {format}");
        assert!(
            run.stdout
                .contains("long-cpu-scope\\n::error::key\\u{1b}[2J"),
            "{what}\n{}",
            run.stdout
        );
        assert_log_escaped(&run.stdout, &what);
    }
    let json = dir
        .run(&["footprint", LOG_KEY, "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(json["footprint"]["key"], LOG_KEY, "{json}");
}
