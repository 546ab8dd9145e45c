//! Long lists for people: `--top N` and `--all` cut the console and markdown (with a line
//! saying what was left out and how to see it), null reasons fold to one line per kind, and
//! the JSON never changes.

use crate::support::{redact_text, write_game, Dir, Game};

/// framewise-format's committed fixture: 12 frames, 120 scopes, 30 GPU passes, 20 counters.
const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../framewise-format/tests/data/sample-v1.sgpt"
);

fn sample(dir: &Dir) {
    std::fs::copy(SAMPLE, dir.path("sample.sgpt")).expect("copy the sample capture");
}

/// Lines of a table that start with `prefix` after the indent.
fn rows(stdout: &str, prefix: &str) -> usize {
    stdout
        .lines()
        .filter(|l| l.trim_start().starts_with(prefix))
        .count()
}

#[test]
fn summarize_shows_the_top_of_each_list_on_one_screen() {
    let dir = Dir::new();
    sample(&dir);
    let run = dir.run(&["summarize", "sample.sgpt"]).expect(0);
    let out = &run.stdout;
    assert_eq!(rows(out, "scope_"), 15, "{out}");
    assert_eq!(rows(out, "pass_"), 15, "{out}");
    // 15 sum counters, ranked by sum, and 5 gauges apart, by name: each list under 15.
    assert_eq!(rows(out, "counter_"), 20, "{out}");
    assert!(out.contains("\ngauges (exact levels"), "{out}");
    assert!(out.contains("… 105 more scopes (--all to list every one, --format json for machines)"));
    assert!(out.contains("… 15 more passes"), "{out}");
    assert!(out.contains("top 15 of 120 by total"), "{out}");
    // One line per kind of null reason, not one per metric.
    assert!(!out.contains("needs at least"), "{out}");
    assert!(
        out.contains("— = not enough frames behind it: p95 needs ≥ 20, p01/p99/1% low need ≥ 100, p99.9/0.1% low need ≥ 1000 (those rows: 11–12 frames)"),
        "{out}"
    );
    assert!(out.lines().count() < 100, "{} lines", out.lines().count());
    insta::assert_snapshot!("summarize_sample_console", redact_text(out, dir.tmp.path()));
}

/// The dashes explained are those of the rows shown: a scope that ran in one frame, cut
/// by `--top`, leaves no reason on the screen; shown, it has its line and its count.
#[test]
fn summarize_explains_only_the_dashes_it_shows() {
    let dir = Dir::new();
    write_game(
        &dir.path("game.sgpt"),
        &Game {
            load_frames: vec![150],
            ..Game::default()
        },
    );
    let run = dir.run(&["summarize", "game.sgpt", "--top", "2"]).expect(0);
    let out = &run.stdout;
    assert!(out.contains("… 1 more scope"), "{out}");
    assert_eq!(rows(out, "load_level"), 0, "{out}");
    // Only the frame table's p99.9 and 0.1% low, with the frames behind them.
    assert!(
        out.contains(
            "— = not enough frames behind it: p99.9/0.1% low need ≥ 1000 (those rows: 299–300 frames)"
        ),
        "{out}"
    );

    let run = dir.run(&["summarize", "game.sgpt", "--all"]).expect(0);
    let out = &run.stdout;
    assert_eq!(rows(out, "load_level"), 1, "{out}");
    assert!(out.contains("p50 needs ≥ 2"), "{out}");
    assert!(out.contains("(those rows: 1–300 frames)"), "{out}");
}

#[test]
fn summarize_top_and_all() {
    let dir = Dir::new();
    sample(&dir);
    let run = dir
        .run(&["summarize", "sample.sgpt", "--top", "3"])
        .expect(0);
    assert_eq!(rows(&run.stdout, "scope_"), 3, "{}", run.stdout);
    // The top 3 sums and the first 3 gauges.
    assert_eq!(rows(&run.stdout, "counter_"), 6, "{}", run.stdout);
    assert!(run.stdout.contains("… 12 more counters"), "{}", run.stdout);
    assert!(run.stdout.contains("… 2 more gauges"), "{}", run.stdout);
    assert!(run.stdout.contains("… 117 more scopes"), "{}", run.stdout);
    assert!(run.stdout.contains("top 3 of 120 by total"));

    let run = dir.run(&["summarize", "sample.sgpt", "--all"]).expect(0);
    assert_eq!(rows(&run.stdout, "scope_"), 120);
    assert_eq!(rows(&run.stdout, "pass_"), 30);
    assert_eq!(rows(&run.stdout, "counter_"), 20);
    assert!(!run.stdout.contains(" more "), "{}", run.stdout);
    // Still one line per kind of reason under --all: every metric's reason is in the JSON.
    assert!(!run.stdout.contains("needs at least"));

    // The JSON has every row whatever --top says.
    let full = dir
        .run(&["summarize", "sample.sgpt", "--json"])
        .expect(0)
        .json();
    let cut = dir
        .run(&["summarize", "sample.sgpt", "--top", "3", "--json"])
        .expect(0)
        .json();
    assert_eq!(full, cut);
    assert_eq!(full["scopes"].as_object().map(|o| o.len()), Some(120));
    assert!(full["scopes"]["scope_90"]["null_reasons"]["p95"].is_string());

    // Markdown is cut the same way, with a note.
    let run = dir
        .run(&[
            "summarize",
            "sample.sgpt",
            "--top",
            "3",
            "--format",
            "markdown",
        ])
        .expect(0);
    assert!(
        run.stdout.contains(
            "_… 117 more scopes (`--all` lists every one; `--format json` has them all)_"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(rows(&run.stdout, "| scope_"), 3);
}

#[test]
fn top_must_be_a_positive_count_and_excludes_all() {
    let dir = Dir::new();
    sample(&dir);
    for args in [
        &["summarize", "sample.sgpt", "--top", "0"][..],
        &["summarize", "sample.sgpt", "--top", "x"],
        &["summarize", "sample.sgpt", "--top", "3", "--all"],
        &["hitches", "sample.sgpt", "--top", "0"],
    ] {
        let run = dir.run(args).expect(4);
        assert!(
            run.one_error_line().starts_with("framewise: usage error:"),
            "{}",
            run.stderr
        );
        assert!(run.stdout.is_empty());
    }
}

fn many_hitches() -> Game {
    Game {
        long_frames: (20..300).step_by(7).collect(),
        ..Game::default()
    }
}

#[test]
fn hitches_lists_the_first_n_and_the_evidence_of_the_worst() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &many_hitches());
    let json = dir
        .run(&["hitches", "game.sgpt", "--json"])
        .expect(1)
        .json();
    assert_eq!(json["hitches"].as_array().map(Vec::len), Some(40));

    let run = dir.run(&["hitches", "game.sgpt"]).expect(1);
    let out = &run.stdout;
    assert!(
        out.starts_with("game.sgpt: 40 hitches in 299 frames judged\n"),
        "{out}"
    );
    let table_rows = out
        .lines()
        .filter(|l| l.contains("pipeline-compile (high)") && !l.contains(':'))
        .count();
    assert_eq!(table_rows, 15, "{out}");
    assert!(out.contains("… 25 more hitches (--all to list every one, --format json for machines)"));
    assert!(out.contains("evidence for the worst 3 of 40 hitches by excess (--all for every one)"));
    assert_eq!(out.matches("): guesses, best first").count(), 3, "{out}");
    assert!(
        out.contains("next: framewise attribute game.sgpt --frame "),
        "{out}"
    );

    let run = dir.run(&["hitches", "game.sgpt", "--top", "5"]).expect(1);
    assert!(run.stdout.contains("… 35 more hitches"), "{}", run.stdout);

    let run = dir.run(&["hitches", "game.sgpt", "--all"]).expect(1);
    assert!(!run.stdout.contains("more hitches"));
    assert_eq!(run.stdout.matches("): guesses, best first").count(), 40);

    let run = dir
        .run(&["hitches", "game.sgpt", "--top", "2", "--format", "markdown"])
        .expect(1);
    assert!(run.stdout.contains("_… 38 more hitches"), "{}", run.stdout);
    assert_eq!(run.stdout.matches("**Frame ").count(), 2);
}

#[test]
fn no_hitch_says_what_the_slowest_frame_was() {
    let dir = Dir::new();
    write_game(&dir.path("steady.sgpt"), &Game::steady());
    let run = dir.run(&["hitches", "steady.sgpt"]).expect(0);
    assert!(
        run.stdout
            .starts_with("steady.sgpt: no hitches in 299 frames judged\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("the longest period, 12.650 ms, did not pass the rule's threshold"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("next:"), "{}", run.stdout);
}

#[test]
fn attribute_top() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &many_hitches());
    let run = dir.run(&["attribute", "game.sgpt"]).expect(0);
    assert!(run.stdout.contains("   2  update"), "{}", run.stdout);
    assert!(
        run.stdout.contains("next: framewise hitches game.sgpt"),
        "{}",
        run.stdout
    );
    let run = dir.run(&["attribute", "game.sgpt", "--top", "1"]).expect(0);
    assert!(!run.stdout.contains("   2  update"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("… 1 more scope (--all to list every one"),
        "{}",
        run.stdout
    );
    let json = dir
        .run(&["attribute", "game.sgpt", "--top", "1", "--json"])
        .expect(0)
        .json();
    assert_eq!(json["ranking"].as_array().map(Vec::len), Some(2));
}

#[test]
fn diff_and_gate_top_and_all() {
    let dir = Dir::new();
    write_game(&dir.path("base.sgpt"), &Game::default());
    write_game(
        &dir.path("cand.sgpt"),
        &Game {
            render_extra_ns: 4_000_000,
            draw_calls_extra: 30,
            ..Game::default()
        },
    );
    let run = dir
        .run(&["diff", "base.sgpt", "cand.sgpt", "--top", "3"])
        .expect(0);
    assert!(run.stdout.contains("(showing 3 of 32)"), "{}", run.stdout);
    assert_eq!(rows(&run.stdout, "scope.render."), 3, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("… 29 more changed metrics and 32 unchanged not shown"),
        "{}",
        run.stdout
    );
    // --all: every row in path order, unchanged ones too.
    let run = dir
        .run(&["diff", "base.sgpt", "cand.sgpt", "--all"])
        .expect(0);
    let every: usize = ["counter.", "frame.", "scope.", "work."]
        .iter()
        .map(|p| rows(&run.stdout, p))
        .sum();
    assert_eq!(every, 64, "32 changed and 32 unchanged: {}", run.stdout);
    assert!(run.stdout.contains("same"), "{}", run.stdout);
    assert!(!run.stdout.contains("not shown"), "{}", run.stdout);

    // Failing checks come first, and what is cut is counted by status.
    let counters = ["--tolerance", "counter.*.max=0"];
    let run = dir
        .run(
            &[
                &["gate", "base.sgpt", "cand.sgpt", "--top", "1"][..],
                &counters,
            ]
            .concat(),
        )
        .expect(1);
    assert!(
        run.stdout
            .contains("… 3 more checks (2 regressed, 1 pass) not shown"),
        "{}",
        run.stdout
    );
    let run = dir
        .run(&[&["gate", "base.sgpt", "cand.sgpt", "--all"][..], &counters].concat())
        .expect(1);
    assert!(!run.stdout.contains("not shown"), "{}", run.stdout);
    assert!(run.stdout.contains("counter.pipelines_created.max"));
}

#[test]
fn inspect_cuts_the_symbol_table() {
    let dir = Dir::new();
    sample(&dir);
    let run = dir.run(&["inspect", "sample.sgpt", "--top", "5"]).expect(0);
    assert!(run.stdout.contains("symbols (179)"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("… 174 more symbols (--all to list every one"),
        "{}",
        run.stdout
    );
    let run = dir.run(&["inspect", "sample.sgpt", "--all"]).expect(0);
    assert!(run.stdout.contains("scope_119"), "{}", run.stdout);
    assert!(!run.stdout.contains("more symbols"));
}
