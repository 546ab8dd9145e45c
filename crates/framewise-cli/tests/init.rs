//! `framewise init` → `framewise bench NAME` → `framewise check`, as README says: the
//! scaffolded `framewise.toml` is where `bench` and `check` look, and its commented bench is
//! one `#` away from running.

use crate::support::Dir;

const BIN: &str = env!("CARGO_BIN_EXE_framewise");

/// The scaffolded config with its `[bench.smoke]` example uncommented, run through this
/// build's binary and shortened for a test.
fn uncomment_the_bench(toml: &str) -> String {
    let mut out = String::new();
    let mut in_bench = false;
    for line in toml.lines() {
        if line == "# [bench.smoke]" {
            in_bench = true;
        } else if line.is_empty() {
            in_bench = false;
        }
        let line = if in_bench {
            line.strip_prefix("# ").expect("a commented line")
        } else {
            line
        };
        let line = match line.split_whitespace().next() {
            Some("command") => format!("command = [{BIN:?}, \"demo\", \"--quiet\"]"),
            Some("frames") => "frames = 30".to_owned(),
            Some("warmup") => "warmup = 5".to_owned(),
            Some("runs") => "runs = 3".to_owned(),
            _ => line.to_owned(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    assert!(out.contains("\n[bench.smoke]\ncommand = ["), "{out}");
    out
}

#[test]
fn init_then_bench_then_check_works_from_the_scaffolded_config() {
    let dir = Dir::new();
    let run = dir.run(&["init"]).expect(0);
    assert!(
        run.stdout.contains("created .framewise/framewise.toml"),
        "{}",
        run.stdout
    );
    let scaffolded = std::fs::read_to_string(dir.path(".framewise/framewise.toml")).expect("toml");
    assert!(scaffolded.contains("\n# [bench.smoke]\n"), "{scaffolded}");
    assert!(
        scaffolded.contains("\n[budgets]\nframe_ms = 16.67"),
        "{scaffolded}"
    );
    let guide = std::fs::read_to_string(dir.path(".framewise/agent-guide.md")).expect("guide");
    assert!(guide.contains("Never claim a performance fix without a canonical bench"));

    // As scaffolded, the bench is only an example: naming it is an error that says so.
    let line = dir
        .run(&["bench", "smoke"])
        .expect(4)
        .one_error_line()
        .to_owned();
    assert!(line.contains("smoke"), "{line}");
    // The budget is read from .framewise/framewise.toml; nothing is measured yet.
    let run = dir.run(&["check"]).expect(4);
    assert!(
        run.one_error_line().contains("nothing measured"),
        "{}",
        run.stderr
    );

    // A person declares the bench by uncommenting it.
    dir.write(
        ".framewise/framewise.toml",
        uncomment_the_bench(&scaffolded),
    );
    let bench = dir
        .run(&["bench", "smoke", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(bench["canonical"], true, "{bench}");
    assert_eq!(bench["runs"].as_array().expect("runs").len(), 3);
    let check = dir.run(&["check", "--bench", "smoke", "--format", "json"]);
    assert!(matches!(check.code, 0 | 1), "{}", check.stderr);
    let check = check.json();
    assert_eq!(check["source"]["kind"], "bench", "{check}");
    assert_eq!(check["budgets"][0]["budget"], "frame_ms", "{check}");
    assert!(check["budgets"][0]["value"].is_number(), "{check}");
}

/// `.framewise` as a link to nothing said "File exists (os error 17)".
#[test]
fn init_over_a_link_to_nothing_says_so() {
    let dir = Dir::new();
    std::os::unix::fs::symlink("elsewhere", dir.path(".framewise")).expect("symlink");
    let run = dir.run(&["init"]).expect(4);
    let line = run.one_error_line();
    assert!(
        line.ends_with(
            "/.framewise: is a link to nothing (remove it, or create the directory it points to)"
        ),
        "{line}"
    );
}

/// A project directory whose name holds a line break and an escape sequence went raw to the
/// terminal (`created game` on one line, the rest coloured red on the next): shown escaped,
/// on its line, in console and markdown; the JSON keeps the path as it is.
#[test]
fn init_escapes_the_project_name() {
    let dir = Dir::new();
    let name = "game\n\u{1b}[31mred";
    std::fs::create_dir(dir.path(name)).expect("mkdir");
    let run = dir.run(&["init", name]).expect(0);
    let first = run.stdout.lines().next().expect("a line");
    assert_eq!(
        first, "created game\\n\\u{1b}[31mred/.framewise/",
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains('\u{1b}'), "{:?}", run.stdout);
    for args in [
        vec!["init", name],
        vec!["init", name, "--format", "markdown"],
    ] {
        let out = dir.run(&args).expect(0).stdout;
        assert!(!out.contains('\u{1b}'), "{args:?}: {out:?}");
        assert!(
            out.lines()
                .next()
                .is_some_and(|l| l.contains("game\\n\\u{1b}[31mred/.framewise")),
            "{args:?}: {out:?}"
        );
    }
    let json = dir
        .run(&["init", name, "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(json["dir"], format!("{name}/.framewise"));
}
