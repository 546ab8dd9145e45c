//! The verification loop of docs/AGENTS.md, played end to end on the demo without a person.
//!
//! A person sets the game up once: its settings file (`game.toml`, the demo's `slow`
//! variant), a reviewed `framewise.toml` with a draw-call budget and a canonical bench, a
//! golden frame. Then a scripted agent plays the playbook: it measures a baseline, sees the
//! budget breached, and tries one change to the game per iteration — a no-op, a change that
//! breaks the picture, the real fix — acting on the verbs' exit codes mechanically (improved
//! and the same picture: commit with the ledger line in the message; anything else: revert)
//! and stopping by the doctrine's rules. The loop must keep the fix, revert the others, leave
//! a ledger of exactly its comparisons and stop inside the budgets. The agent compares with
//! `--counters-only`, as an agent on a shared CI runner would: counters compare exactly, so
//! its verdicts do not depend on what else the machine runs (judged on timings too, a run of
//! 3 × 20 frames beside a parallel build read `regressed` for the fix).

use std::process::Command;

use serde_json::Value;

use crate::support::{Dir, Run};

const BIN: &str = env!("CARGO_BIN_EXE_framewise");

/// The game as the person left it: batching off.
const SLOW: &str =
    "# The demo game's settings: framewise demo --settings game.toml\nvariant = \"slow\"\n";

/// One change the agent tries: a description (the ledger's `change`) and the settings file
/// it leaves behind.
struct Candidate {
    change: &'static str,
    settings: String,
}

fn candidates() -> Vec<Candidate> {
    vec![
        Candidate {
            change: "state the snap-back bug's default explicitly",
            settings: format!("{SLOW}snap_bug = false\n"),
        },
        Candidate {
            change: "skip the shadow pass",
            settings: format!("{SLOW}shadows = false\n"),
        },
        Candidate {
            change: "batch instances by mesh and material",
            settings: SLOW.replace("\"slow\"", "\"normal\""),
        },
    ]
}

/// Runs git in the game's repository; its stdout.
fn git(dir: &Dir, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir.path("."))
        .args([
            "-c",
            "user.name=agent",
            "-c",
            "user.email=agent@example.com",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ledger(dir: &Dir) -> Vec<(String, Value)> {
    std::fs::read_to_string(dir.path(".framewise/bench-history.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let v = serde_json::from_str(l).expect("a ledger line is JSON");
            (l.to_owned(), v)
        })
        .collect()
}

/// Why the agent stopped.
#[derive(Debug, PartialEq)]
enum Stop {
    BudgetsPass,
    NoDetectableChange,
    CorrectnessFailures,
    Cap,
    OutOfIdeas,
}

/// What the agent did with one candidate.
#[derive(Debug, PartialEq)]
enum Action {
    Kept,
    Reverted { bench: i32, golden: i32 },
    Skipped,
}

fn check(dir: &Dir) -> Run {
    dir.run(&["check", "--format", "json"])
}

#[test]
fn the_agent_loop_keeps_the_fix_reverts_the_rest_and_stops_inside_budgets() {
    let dir = Dir::new();
    // ── The person: the game, its reviewed goalposts, a golden frame, one commit.
    git(&dir, &["init", "-q"]);
    dir.write("game.toml", SLOW);
    dir.write(
        "framewise.toml",
        format!(
            "[budgets]\n\"counter.draw_calls.max\" = 300\n\n[bench.loop]\ncommand = [{BIN:?}, \"demo\", \"--quiet\", \"--threads\", \"2\", \"--settings\", \"game.toml\"]\nframes = 20\nwarmup = 45\nruns = 3\nfixed_dt = 0.016666\ngolden_frame = 50\n"
        ),
    );
    dir.run(&["init"]).expect(0);
    dir.run(&["golden", "--record", "loop"]).expect(0);
    // The incident log the game's sessions keep, committed as the audit trail (a golden run's
    // own log goes to its run directory, not here).
    dir.write(".framewise/perf.jsonl", "");
    git(&dir, &["add", "-A"]);
    git(
        &dir,
        &["commit", "-qm", "the game, its budgets and its bench"],
    );
    let base = git(&dir, &["rev-parse", "--short=12", "HEAD"])
        .trim()
        .to_owned();

    // ── The agent. Read the ledger (empty), measure a baseline, check the budgets.
    assert!(ledger(&dir).is_empty());
    let baseline = dir
        .run(&["bench", "loop", "--format", "json"])
        .expect(0)
        .json();
    // The runs appended to the tracked incident log (the audit trail the person committed);
    // the game's code is still the commit, and the result says so.
    assert_eq!(
        git(&dir, &["ls-files", ".framewise/perf.jsonl"]).trim(),
        ".framewise/perf.jsonl"
    );
    assert_eq!(baseline["git_revision"], base.as_str(), "{baseline}");
    let first = check(&dir).expect(1).json();
    assert_eq!(first["budgets"][0]["metric"], "counter.draw_calls.max");
    assert_eq!(first["budgets"][0]["state"], "breached", "{first}");

    const CAP: usize = 6;
    let (mut iterations, mut no_change_run, mut correctness_failures) = (0, 0, 0);
    let mut actions = Vec::new();
    let mut stop = Stop::OutOfIdeas;
    for candidate in candidates() {
        // Never retry a strategy the ledger shows reverted.
        if ledger(&dir)
            .iter()
            .any(|(_, l)| l["change"] == candidate.change && l["verdict"] != "improved")
        {
            actions.push(Action::Skipped);
            continue;
        }
        if iterations == CAP {
            stop = Stop::Cap;
            break;
        }
        iterations += 1;
        // One change, measured against the last result, then the picture.
        dir.write("game.toml", &candidate.settings);
        let bench = dir.run(&[
            "bench",
            "loop",
            "--compare",
            "last",
            "--change",
            candidate.change,
            "--counters-only",
        ]);
        assert!(
            [0, 1, 2].contains(&bench.code),
            "incomparable or an error is the measurement's fault, not the change's: {}\n{}",
            bench.stdout,
            bench.stderr
        );
        let golden = dir.run(&["golden", "--check", "loop"]);
        assert!([0, 1].contains(&golden.code), "{}", golden.stderr);
        if golden.code == 1 {
            correctness_failures += 1;
        }
        no_change_run = if bench.code == 2 {
            no_change_run + 1
        } else {
            0
        };
        if bench.code == 0 && golden.code == 0 {
            let (line, _) = ledger(&dir).pop().expect("the comparison's ledger line");
            git(&dir, &["add", "-A"]);
            let message = format!("{}\n\nframewise ledger: {line}", candidate.change);
            git(&dir, &["commit", "-qm", &message]);
            actions.push(Action::Kept);
            if check(&dir).code == 0 {
                stop = Stop::BudgetsPass;
                break;
            }
        } else {
            git(&dir, &["checkout", "--", "game.toml"]);
            // `--compare last` compares with the newest result, which measured the change
            // just reverted: measure the game as it is again before the next change.
            dir.run(&["bench", "loop"]).expect(0);
            actions.push(Action::Reverted {
                bench: bench.code,
                golden: golden.code,
            });
        }
        if no_change_run >= 3 {
            stop = Stop::NoDetectableChange;
            break;
        }
        if correctness_failures >= 2 {
            stop = Stop::CorrectnessFailures;
            break;
        }
    }

    // ── What the loop did: the no-op reverted (no detectable change), the shadow cut
    // reverted although it measured better (the picture changed), the fix kept; then it
    // stopped, inside the budgets, in three iterations.
    assert_eq!(
        actions,
        [
            Action::Reverted {
                bench: 2,
                golden: 0
            },
            Action::Reverted {
                bench: 0,
                golden: 1
            },
            Action::Kept,
        ]
    );
    assert_eq!(stop, Stop::BudgetsPass);
    assert_eq!(iterations, 3);
    let last = check(&dir).expect(0).json();
    assert_eq!(last["verdict"], "inside", "{last}");
    assert_eq!(last["source"]["kind"], "profile");
    let draw_calls = last["budgets"][0]["value"].as_f64().expect("measured");
    assert!(draw_calls <= 300.0, "{last}");

    // The ledger: one line per comparison, in order, and nothing else.
    let lines = ledger(&dir);
    let summary: Vec<(&str, &str, i64)> = lines
        .iter()
        .map(|(_, l)| {
            (
                l["change"].as_str().expect("change"),
                l["verdict"].as_str().expect("verdict"),
                l["exit_code"].as_i64().expect("exit code"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "state the snap-back bug's default explicitly",
                "no-detectable-change",
                2
            ),
            ("skip the shadow pass", "improved", 0),
            ("batch instances by mesh and material", "improved", 0),
        ]
    );
    let hash = &lines[0].1["config_hash"];
    for (_, l) in &lines {
        assert_eq!(l["schema"], "framewise.ledger/1");
        assert_eq!(l["name"], "loop");
        assert_eq!(l["canonical"], true);
        assert_eq!(&l["config_hash"], hash, "the game changed, not the bench");
        assert_eq!(l["regressed"], serde_json::json!([]), "{l}");
        // Each change was measured on top of the person's commit, uncommitted.
        assert_eq!(l["git_revision"], format!("{base}+dirty"), "{l}");
    }
    for (_, l) in &lines[1..] {
        let improved = l["improved"].as_array().expect("improved");
        assert!(improved.contains(&"counter.draw_calls.sum".into()), "{l}");
    }
    let budget_state = |i: usize| {
        lines[i].1["budgets"][0]["state"]
            .as_str()
            .map(str::to_owned)
    };
    assert_eq!(
        budget_state(1).as_deref(),
        Some("breached"),
        "shadows off, still slow"
    );
    assert_eq!(budget_state(2).as_deref(), Some("inside"));

    // The history: the person's commit and the fix, whose message quotes its ledger line.
    let log = git(&dir, &["log", "--format=%s"]);
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        [
            "batch instances by mesh and material",
            "the game, its budgets and its bench"
        ]
    );
    let message = git(&dir, &["log", "-1", "--format=%B"]);
    assert!(message.contains(&lines[2].0), "{message}");
    let head = git(&dir, &["show", "HEAD:game.toml"]);
    assert_eq!(head, SLOW.replace("\"slow\"", "\"normal\""));
    assert!(!head.contains("shadows"), "the broken picture was reverted");
    assert_eq!(git(&dir, &["status", "--porcelain", "--", "game.toml"]), "");
    // The commit carries the audit trail (the ledger), never this machine's runs.
    let tracked = git(&dir, &["ls-files"]);
    assert!(
        tracked
            .lines()
            .any(|f| f == ".framewise/bench-history.jsonl"),
        "{tracked}"
    );
    assert!(
        !tracked.lines().any(|f| f.starts_with(".framewise/golden/")
            || f.starts_with(".framewise/bench/")
            || f.ends_with("profile.json")),
        "{tracked}"
    );
}
