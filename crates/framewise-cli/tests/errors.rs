//! Bad files, usage errors, help and version: one stderr line naming the file, exit 4,
//! never a panic.

use crate::support::{write_game, write_truncated_game, Dir, Game};

/// Every verb that reads one capture.
const ONE_FILE_VERBS: [&str; 4] = ["summarize", "inspect", "hitches", "attribute"];

fn bad_file(dir: &Dir, name: &str) {
    for verb in ONE_FILE_VERBS {
        let run = dir.run(&[verb, name]).expect(4);
        names_the_file_once(verb, run.one_error_line(), name);
        assert!(
            run.stdout.is_empty(),
            "{verb}: nothing on stdout: {}",
            run.stdout
        );
    }
    let run = dir.run(&["trace", name, "-o", "out.json"]).expect(4);
    names_the_file_once("trace", run.one_error_line(), name);
    assert!(!dir.path("out.json").exists());
    // As either side of a comparison.
    write_game(&dir.path("good.sgpt"), &Game::default());
    for verb in ["diff", "gate"] {
        let run = dir.run(&[verb, "good.sgpt", name]).expect(4);
        names_the_file_once(verb, run.one_error_line(), name);
        let run = dir.run(&[verb, name, "good.sgpt"]).expect(4);
        names_the_file_once(verb, run.one_error_line(), name);
    }
}

/// The error line names the file, once (`FILE: sgpt: FILE: …` says it twice).
fn names_the_file_once(verb: &str, line: &str, name: &str) {
    assert_eq!(
        line.matches(name).count(),
        1,
        "{verb}: the line names the file exactly once: {line}"
    );
}

#[test]
fn wrong_magic() {
    let dir = Dir::new();
    let mut bytes = b"SGPX".to_vec();
    bytes.extend_from_slice(&[0u8; 60]);
    dir.write("wrong.sgpt", bytes);
    bad_file(&dir, "wrong.sgpt");
    let run = dir.run(&["summarize", "wrong.sgpt"]);
    assert!(run.stderr.contains("not a capture"), "{}", run.stderr);
}

#[test]
fn garbage() {
    let dir = Dir::new();
    let mut x = 0x1234_5678u32;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 24) as u8 | 0x80
        })
        .collect();
    dir.write("garbage.bin", bytes);
    bad_file(&dir, "garbage.bin");
}

#[test]
fn empty_file() {
    let dir = Dir::new();
    dir.write("empty.sgpt", b"");
    bad_file(&dir, "empty.sgpt");
    let run = dir.run(&["summarize", "empty.sgpt"]);
    assert!(run.stderr.contains("empty"), "{}", run.stderr);
}

#[test]
fn directory() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path("captures")).unwrap();
    bad_file(&dir, "captures");
    let run = dir.run(&["summarize", "captures"]);
    assert!(run.stderr.contains("directory"), "{}", run.stderr);
}

#[test]
fn missing_file() {
    let dir = Dir::new();
    bad_file(&dir, "nope.sgpt");
}

#[test]
fn a_dash_is_not_stdin_and_says_so() {
    let dir = Dir::new();
    for verb in ONE_FILE_VERBS {
        let run = dir.run(&[verb, "-"]).expect(4);
        let line = run.one_error_line();
        assert!(
            line.starts_with("framewise: error: -: cannot read")
                && line.contains("not from `-` (name the file, or /dev/stdin for a pipe)"),
            "{verb}: {line}"
        );
    }
}

#[test]
fn one_pipe_on_both_sides_is_refused_and_one_file_is_not() {
    let dir = Dir::new();
    write_game(&dir.path("good.sgpt"), &Game::default());
    // A pipe is read once: the second side would read as empty.
    for args in [
        &["diff", "/dev/stdin", "/dev/stdin"][..],
        &["gate", "/dev/stdin", "/dev/stdin"],
        &["bench", "--compare", "/dev/stdin", "/dev/stdin"],
    ] {
        let run = dir.run_stdin_from("good.sgpt", true, args).expect(4);
        let line = run.one_error_line();
        assert!(
            line.starts_with(
                "framewise: error: /dev/stdin and /dev/stdin are one pipe, which is read once"
            ),
            "{args:?}: {line}"
        );
    }
    // The same regular file on both sides is a capture against itself: no difference.
    for verb in ["diff", "gate"] {
        dir.run_stdin_from("good.sgpt", false, &[verb, "/dev/stdin", "/dev/stdin"])
            .expect(0);
        dir.run(&[verb, "good.sgpt", "good.sgpt"]).expect(0);
    }
}

#[test]
fn sgpt_header_only_too_short_and_bad_header_crc() {
    let dir = Dir::new();
    // SGPT magic, then too few bytes for a header.
    dir.write("short.sgpt", b"SGPT\x01\x00");
    bad_file(&dir, "short.sgpt");
    // A header whose checksum is wrong, over no intact record (over intact records the
    // capture is recovered by scanning: tests/damaged.rs).
    write_game(&dir.path("crc.sgpt"), &Game::default());
    let mut bytes = std::fs::read(dir.path("crc.sgpt")).unwrap();
    bytes.truncate(32);
    bytes.extend_from_slice(&[0u8; 100]);
    bytes[12] ^= 0xff;
    dir.write("crc.sgpt", bytes);
    bad_file(&dir, "crc.sgpt");
    let run = dir.run(&["summarize", "crc.sgpt"]);
    assert!(
        run.stderr.contains("header checksum mismatch"),
        "{}",
        run.stderr
    );
}

#[test]
fn broken_json_and_litecap() {
    let dir = Dir::new();
    dir.write("bad.json", "{\"traceEvents\": 12}");
    let run = dir.run(&["summarize", "bad.json"]).expect(4);
    assert!(run.one_error_line().contains("bad.json"));
    dir.write("bad.litecap", b"LCAP\x09\x00\x00\x00\x00\x00");
    let run = dir.run(&["summarize", "bad.litecap"]).expect(4);
    assert!(run.one_error_line().contains("bad.litecap"));
}

#[test]
fn truncated_capture_is_still_summarized_with_defects() {
    let dir = Dir::new();
    write_truncated_game(&dir.path("cut.sgpt"), &Game::default(), 0.6);
    let run = dir
        .run(&["summarize", "cut.sgpt", "--format", "json"])
        .expect(0);
    let json = run.json();
    let defects = json["defects"].as_array().unwrap();
    assert!(!defects.is_empty(), "a truncated capture reports defects");
    let frames = json["capture"]["frames"].as_u64().unwrap();
    assert!(frames > 100 && frames < 300, "recovered {frames} frames");
    let run = dir.run(&["summarize", "cut.sgpt"]).expect(0);
    assert!(run.stdout.contains("defects ("), "{}", run.stdout);
}

#[test]
fn usage_errors_exit_4_on_one_line() {
    let dir = Dir::new();
    write_game(&dir.path("a.sgpt"), &Game::default());
    for args in [
        vec![],
        vec!["frobnicate"],
        vec!["summarize"],
        vec!["summarize", "a.sgpt", "--bogus"],
        vec!["summarize", "a.sgpt", "--format", "xml"],
        vec!["diff", "a.sgpt"],
        vec!["trace", "a.sgpt"],
        vec!["attribute", "a.sgpt", "--frame", "x"],
    ] {
        let run = dir.run(&args);
        assert_eq!(run.code, 4, "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{args:?}");
        if !args.is_empty() {
            run.one_error_line();
        }
    }
    // Errors the verbs find themselves.
    for args in [
        vec!["gate", "a.sgpt", "a.sgpt", "--tolerance", "frame.p99"],
        vec!["gate", "a.sgpt", "a.sgpt", "--tolerance", "frame.p99=-1"],
        vec!["gate", "a.sgpt", "a.sgpt", "--tolerance", "bogus=0.1"],
        vec!["gate", "a.sgpt", "a.sgpt", "--no-default-tolerances"],
        vec!["summarize", "a.sgpt", "--format", "markdown", "--json"],
        vec!["summarize", "a.sgpt", "--json", "a.sgpt"],
        vec!["attribute", "a.sgpt", "--frame", "100000"],
        vec!["summarize", "a.sgpt", "--config", "missing.toml"],
        // Absurd values are refused before anything runs: a NaN threshold that would let
        // every hitch wake, a warm-up whose sum with the frames wraps around u64.
        vec!["watch", "--once", "--min-hitch-ms", "nan"],
        vec![
            "bench",
            "--name",
            "x",
            "--warmup",
            "18446744073709551615",
            "--frames",
            "1",
            "--",
            "true",
        ],
    ] {
        let run = dir.run(&args);
        assert_eq!(run.code, 4, "{args:?}: {}", run.stderr);
        run.one_error_line();
    }
    // A negative number is the value refused, with the verb's reason, not taken for a flag
    // (every option that takes a value takes one).
    for (args, reason) in [
        (
            vec!["watch", "--once", "--min-hitch-ms", "-5"],
            "`-5` is not a number of milliseconds (0 or more)",
        ),
        (
            vec!["watch", "--timeout", "-1"],
            "`-1` is not a number of seconds",
        ),
        (
            vec!["issues", "--top", "-3"],
            "`-3` is not a whole number of rows",
        ),
        (
            vec!["issues", "--top", "99999999999999999999"],
            "`99999999999999999999` rows is more than any list holds: --all lists every row",
        ),
        (
            vec!["attribute", "a.sgpt", "--frame", "-1"],
            "invalid value '-1' for '--frame <N>'",
        ),
    ] {
        let run = dir.run(&args);
        assert_eq!(run.code, 4, "{args:?}: {}", run.stderr);
        assert!(run.one_error_line().contains(reason), "{}", run.stderr);
    }
    // The capture that --json tried to name is untouched.
    assert!(std::fs::read(dir.path("a.sgpt"))
        .unwrap()
        .starts_with(b"SGPT"));
}

#[test]
fn every_usage_error_carries_the_verbs_usage() {
    let dir = Dir::new();
    write_game(&dir.path("a.sgpt"), &Game::default());
    // A value clap's parser refuses (`--top 0`) renders no usage of its own: it gets the
    // verb's, as every other usage error does, and clap's "For more information" goes.
    for args in [
        vec!["summarize", "a.sgpt", "--top", "0"],
        vec!["hitches", "a.sgpt", "--top", "-3"],
        vec!["summarize", "a.sgpt", "--top", "99999999999999999999999"],
        vec!["summarize", "a.sgpt", "--bogus"],
    ] {
        let run = dir.run(&args).expect(4);
        let line = run.one_error_line();
        assert!(
            line.starts_with("framewise: usage error: ")
                && line.contains(&format!("(usage: framewise {} ", args[0]))
                && line.ends_with("<FILE>)"),
            "{args:?}: {line}"
        );
        assert!(!line.contains("For more information"), "{line}");
    }
}

#[test]
fn an_unknown_verb_that_means_one_of_ours_names_it() {
    let dir = Dir::new();
    // Clap's spelling tip would say `report` for `export`; the verb that exports is `trace`.
    for (word, verb) in [
        ("export", "trace"),
        ("compare", "diff"),
        ("stats", "summarize"),
    ] {
        let run = dir.run(&[word, "a.sgpt"]).expect(4);
        let line = run.one_error_line();
        assert!(
            line.contains(&format!("tip: the verb for that is '{verb}': ")),
            "{word}: {line}"
        );
        assert!(!line.contains("'report'"), "{line}");
    }
    // A word for a file framewise keeps says where the file is.
    let run = dir.run(&["ledger"]).expect(4);
    assert!(
        run.one_error_line()
            .contains("tip: the bench ledger is .framewise/bench-history.jsonl"),
        "{}",
        run.stderr
    );
    // A misspelt verb keeps clap's spelling tip.
    let run = dir.run(&["summarise", "a.sgpt"]).expect(4);
    assert!(run.one_error_line().contains("summarize"), "{}", run.stderr);
    let run = dir.run(&["hitchs", "a.sgpt"]).expect(4);
    assert!(run.one_error_line().contains("'hitches'"), "{}", run.stderr);
}

#[test]
fn help_and_version_exit_0() {
    let dir = Dir::new();
    let run = dir.run(&["--help"]).expect(0);
    for verb in [
        "inspect",
        "summarize",
        "diff",
        "gate",
        "trace",
        "hitches",
        "attribute",
        "doctor",
    ] {
        assert!(run.stdout.contains(verb), "help lists {verb}");
    }
    let run = dir.run(&["gate", "--help"]).expect(0);
    assert!(run.stdout.contains("--tolerance"));
    let run = dir.run(&["--version"]).expect(0);
    assert!(run.stdout.starts_with("framewise "));
}

#[test]
fn broken_pipe_is_quiet() {
    let dir = Dir::new();
    write_game(&dir.path("a.sgpt"), &Game::default());
    // Close our end of stdout before the binary writes: it must not panic or complain.
    let (code, stderr) = dir.run_closing_stdout(&["summarize", "a.sgpt", "--format", "json"], 0);
    assert!(stderr.is_empty(), "quiet on a broken pipe: {stderr}");
    assert_eq!(code, Some(0), "the verb's own exit code");
}
