//! `framewise bisect`: a bisection report a game wrote, ranked, in every format; a world not
//! restored fails; no candidate is inconclusive; bad input is one line.

use std::collections::BTreeMap;

use framewise_census::{
    bisect, BisectEngine, BisectOptions, BisectReport, Candidate, EngineError, FrameCost,
    WorldSnapshot,
};
use serde_json::json;

use crate::support::Dir;

/// A scene of named parts, each drawing `triangles` and one draw call when shown; `sticky`
/// names a part whose `show` forgets to restore it (a broken engine).
struct Scene {
    parts: Vec<(&'static str, u64)>,
    hidden: BTreeMap<String, bool>,
    sticky: Option<&'static str>,
    /// Every `hide` fails (an engine that cannot hide anything).
    hide_fails: bool,
}

impl Scene {
    fn new(parts: Vec<(&'static str, u64)>) -> Self {
        Self {
            hidden: parts
                .iter()
                .map(|(n, _)| ((*n).to_owned(), false))
                .collect(),
            parts,
            sticky: None,
            hide_fails: false,
        }
    }
}

impl BisectEngine for Scene {
    fn name(&self) -> String {
        "test".into()
    }
    fn candidates(&mut self) -> Result<Vec<Candidate>, EngineError> {
        Ok(self
            .parts
            .iter()
            .map(|(n, t)| Candidate {
                id: (*n).into(),
                name: (*n).into(),
                site: (*n == "statue").then(|| "src/plaza.rs:7".to_owned()),
                triangles: *t,
            })
            .collect())
    }
    fn hide(&mut self, id: &str) -> Result<(), EngineError> {
        if self.hide_fails {
            return Err(EngineError(format!("cannot hide {id}")));
        }
        self.hidden.insert(id.into(), true);
        Ok(())
    }
    fn show(&mut self, id: &str) -> Result<(), EngineError> {
        if self.sticky != Some(id) {
            self.hidden.insert(id.into(), false);
        }
        Ok(())
    }
    fn render_frame(&mut self) -> Result<FrameCost, EngineError> {
        let shown = self.parts.iter().filter(|(n, _)| !self.hidden[*n]);
        Ok(FrameCost {
            draw_calls: Some(shown.clone().count() as u64),
            triangles: Some(shown.map(|(_, t)| t).sum()),
            render_ms: None,
        })
    }
    fn snapshot(&mut self) -> Result<WorldSnapshot, EngineError> {
        Ok(WorldSnapshot(
            self.hidden
                .iter()
                .map(|(k, v)| (format!("{k} hidden"), v.to_string()))
                .collect(),
        ))
    }
}

fn report(scene: &mut Scene) -> BisectReport {
    bisect(
        scene,
        &BisectOptions {
            frames: 3,
            warmup_frames: 1,
            top: 20,
        },
    )
    .expect("the scene never fails a step")
}

fn scene() -> Scene {
    Scene::new(vec![("crate", 12), ("statue", 200_000), ("boid", 120)])
}

/// A bisection of a crate, a statue and a boid, every part restored.
pub fn statue_report() -> BisectReport {
    report(&mut scene())
}

#[test]
fn bisect_says_what_render_ms_measures_when_the_engine_says() {
    let dir = Dir::new();
    let mut said = statue_report();
    said.render_ms_source = Some("gpu: the passes' time".to_owned());
    dir.write("said.json", serde_json::to_string(&said).unwrap());
    let out = dir.run(&["bisect", "said.json"]).expect(0).stdout;
    assert!(
        out.contains("render ms measured as: gpu: the passes' time"),
        "{out}"
    );
    // A report written before the field existed reads as not saying.
    let mut old = serde_json::to_value(statue_report()).unwrap();
    old.as_object_mut().unwrap().remove("render_ms_source");
    dir.write("old.json", old.to_string());
    let out = dir.run(&["bisect", "old.json"]).expect(0).stdout;
    assert!(!out.contains("render ms measured as"), "{out}");
}

#[test]
fn bisect_ranks_the_report_in_every_format() {
    let dir = Dir::new();
    dir.write(
        "bisect.json",
        serde_json::to_string(&statue_report()).unwrap(),
    );
    let run = dir.run(&["bisect", "bisect.json"]).expect(0);
    let out = &run.stdout;
    assert!(
        out.starts_with("bisection of bisect.json (engine test; 3 frames per measure after 1 warm-up; 3 candidates)"),
        "{out}"
    );
    assert!(out.contains("they do not sum to the baseline"), "{out}");
    assert!(out.contains("render ms — (not measured)"), "{out}");
    assert!(out.contains("world restored"), "{out}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric))
        .collect();
    assert_eq!(rows.len(), 3, "{out}");
    assert!(
        rows[0].contains("statue") && rows[0].contains("-200000"),
        "{out}"
    );
    assert!(rows[0].contains("src/plaza.rs:7"), "{out}");
    assert!(
        rows[1].contains("boid") && rows[2].contains("crate"),
        "{out}"
    );

    let json = dir
        .run(&["bisect", "bisect.json", "--json"])
        .expect(0)
        .json();
    assert_eq!(json["schema"], "framewise.bisect-report/1");
    let b = &json["bisect"];
    assert_eq!(b["schema"], "framewise.bisect/1");
    assert_eq!(b["sums_to_baseline"], false);
    assert_eq!(b["results"][0]["name"], "statue");
    assert_eq!(b["results"][0]["delta_triangles"]["delta"], -200_000.0);
    assert_eq!(b["results"][0]["delta_render_ms"], serde_json::Value::Null);
    assert_eq!(b["results"][2]["rank"], 3);

    let md = dir
        .run(&[
            "bisect",
            "bisect.json",
            "--format",
            "markdown",
            "--top",
            "1",
        ])
        .expect(0)
        .stdout;
    assert!(md.contains("### Ranked, the costliest first"), "{md}");
    assert!(md.contains("| 1 "), "{md}");
    assert!(md.contains("2 more candidates"), "{md}");
    let gh = dir
        .run(&["bisect", "bisect.json", "--format", "github"])
        .expect(0)
        .stdout;
    assert!(
        gh.lines()
            .any(|l| l.starts_with("::notice") && l.contains("statue costs the most")),
        "{gh}"
    );
}

#[test]
fn bisect_reads_the_directory_file_by_default_and_fails_an_unrestored_world() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path(".framewise")).unwrap();
    let run = dir.run(&["bisect"]).expect(4);
    assert!(
        run.one_error_line()
            .contains("bisect.json: no bisection yet"),
        "{}",
        run.stderr
    );
    let mut broken = scene();
    broken.sticky = Some("boid");
    dir.write(
        ".framewise/bisect.json",
        serde_json::to_string(&report(&mut broken)).unwrap(),
    );
    let run = dir.run(&["bisect"]).expect(1);
    // The boid stays hidden: its snapshot and every later one differ.
    assert!(
        run.stdout.contains("world NOT restored after: crate, boid"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("NO: boid hidden: false → true"),
        "{}",
        run.stdout
    );
    let json = dir.run(&["bisect", "--json"]).expect(1).json();
    assert_eq!(json["bisect"]["restored"], false);
}

#[test]
fn a_report_without_candidates_is_inconclusive() {
    let dir = Dir::new();
    let mut empty = Scene::new(vec![]);
    dir.write(
        "bisect.json",
        serde_json::to_string(&report(&mut empty)).unwrap(),
    );
    let run = dir.run(&["bisect", "bisect.json"]).expect(2);
    assert!(
        run.stdout.contains("no candidate was measured"),
        "{}",
        run.stdout
    );
}

/// Candidates the engine failed on every one of (no delta measured) are no measurement: the
/// world came back, but nothing says what any part costs.
#[test]
fn a_report_whose_every_candidate_failed_is_inconclusive() {
    let dir = Dir::new();
    let mut failing = scene();
    failing.hide_fails = true;
    let report = report(&mut failing);
    assert!(report.results.iter().all(|r| r.error.is_some()));
    assert!(report.restored);
    dir.write("bisect.json", serde_json::to_string(&report).unwrap());
    let run = dir.run(&["bisect", "bisect.json"]).expect(2);
    assert!(
        run.stdout
            .contains("inconclusive: the engine failed on every candidate (3)"),
        "{}",
        run.stdout
    );
    // One candidate measured is a bisection.
    dir.write(
        "bisect.json",
        serde_json::to_string(&statue_report()).unwrap(),
    );
    dir.run(&["bisect", "bisect.json"]).expect(0);
}

#[test]
fn bad_bisect_input_is_one_line() {
    let dir = Dir::new();
    dir.write(
        "census.json",
        json!({"schema": "framewise.census/1"}).to_string(),
    );
    dir.write("trace.json", r#"{"traceEvents": []}"#);
    dir.write("empty.json", b"");
    dir.write("junk.bin", [0xFFu8, 0x00, 0x12]);
    dir.write(
        "short.json",
        json!({"schema": "framewise.bisect/1", "engine": "x"}).to_string(),
    );
    for (args, says) in [
        (vec!["bisect", "missing.json"], "missing.json"),
        (
            vec!["bisect", "census.json"],
            "is not \"framewise.bisect/1\"",
        ),
        (vec!["bisect", "trace.json"], "no \"schema\" field"),
        (vec!["bisect", "empty.json"], "empty"),
        (vec!["bisect", "junk.bin"], "not UTF-8"),
        (vec!["bisect", "short.json"], "missing field"),
        (vec!["bisect", "."], "directory"),
        (vec!["bisect", "--dir", "nowhere"], "not a directory"),
    ] {
        let run = dir.run(&args).expect(4);
        let line = run.one_error_line();
        assert!(line.contains(says), "{args:?}: {line}");
        assert!(run.stdout.is_empty());
    }
}

/// A candidate whose `restored` says true beside `restore_differences` was read by its flag
/// alone: "world restored", exit 0. A difference is the evidence: not restored, exit 1,
/// in every format. A report whose flag says false with no difference named says what it
/// knows, never a bare "NO:".
#[test]
fn differences_mean_not_restored_whatever_the_flag_says() {
    let dir = Dir::new();
    let mut report = statue_report();
    let crate_ = report
        .results
        .iter_mut()
        .find(|r| r.name == "crate")
        .unwrap();
    crate_.restore_differences = vec!["boid hidden: false → true".to_owned()];
    assert!(crate_.restored && report.restored, "the flags say restored");
    dir.write("bisect.json", serde_json::to_string(&report).unwrap());
    let run = dir.run(&["bisect", "bisect.json"]).expect(1);
    assert!(
        run.stdout.contains("world NOT restored after: crate")
            && !run.stdout.contains("world restored"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("NO: boid hidden: false → true"),
        "{}",
        run.stdout
    );
    dir.run(&["bisect", "bisect.json", "--json"]).expect(1);
    let gh = dir
        .run(&["bisect", "bisect.json", "--format", "github"])
        .expect(1)
        .stdout;
    assert!(
        gh.contains("::error title=bisect%3A crate not restored::boid hidden: false → true"),
        "{gh}"
    );

    // Not restored by its flag, no difference listed: said as such.
    let mut report = statue_report();
    let boid = report
        .results
        .iter_mut()
        .find(|r| r.name == "boid")
        .unwrap();
    boid.restored = false;
    dir.write("bisect.json", serde_json::to_string(&report).unwrap());
    let run = dir.run(&["bisect", "bisect.json"]).expect(1);
    assert!(!run.stdout.contains("NO: "), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("NO (the engine said so; it listed no difference)"),
        "{}",
        run.stdout
    );
    // The report's flag false, every candidate restored: not restored, and said so.
    let mut report = statue_report();
    report.restored = false;
    dir.write("bisect.json", serde_json::to_string(&report).unwrap());
    let run = dir.run(&["bisect", "bisect.json"]).expect(1);
    assert!(
        run.stdout
            .contains("world NOT restored: the report says so, and names no candidate"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("after: \n"), "{}", run.stdout);
}

/// `--format github` named the first by rank as the costliest even when the engine failed on
/// it (no delta): the costliest named is the costliest measured, or none.
#[test]
fn the_costliest_named_is_a_measured_one() {
    let dir = Dir::new();
    let mut failing = scene();
    failing.hide_fails = true;
    dir.write(
        "bisect.json",
        serde_json::to_string(&report(&mut failing)).unwrap(),
    );
    let gh = dir
        .run(&["bisect", "bisect.json", "--format", "github"])
        .expect(2)
        .stdout;
    assert!(!gh.contains("costs the most"), "{gh}");

    // A failed candidate ranked first, measured ones after it: the first measured is named.
    let mut report = statue_report();
    let first = &mut report.results[0];
    assert_eq!(first.name, "statue");
    first.error = Some("hide failed".to_owned());
    first.delta_draw_calls = None;
    first.delta_triangles = None;
    first.delta_render_ms = None;
    dir.write("bisect.json", serde_json::to_string(&report).unwrap());
    let gh = dir
        .run(&["bisect", "bisect.json", "--format", "github"])
        .expect(0)
        .stdout;
    let notices: Vec<&str> = gh.lines().filter(|l| l.starts_with("::notice")).collect();
    assert_eq!(notices.len(), 1, "{gh}");
    assert!(notices[0].contains("boid costs the most"), "{gh}");
}

/// Names from the report (the input, the engine, what render ms measures, a candidate not
/// restored) are shown escaped in the prose lines, as in the table.
#[test]
fn names_in_the_prose_are_escaped() {
    let dir = Dir::new();
    let mut report = statue_report();
    report.engine = "evil\n\u{1b}[31m".to_owned();
    report.render_ms_source = Some("a\nb".to_owned());
    report.results[0].name = "bad\nname".to_owned();
    report.results[0].restore_differences = vec!["x".to_owned()];
    dir.write("bisect.json", serde_json::to_string(&report).unwrap());
    let out = dir.run(&["bisect", "bisect.json"]).expect(1).stdout;
    assert!(!out.contains('\u{1b}'), "{out:?}");
    assert!(out.contains("(engine evil\\n\\u{1b}[31m;"), "{out}");
    assert!(out.contains("render ms measured as: a\\nb"), "{out}");
    assert!(
        out.contains("world NOT restored after: bad\\nname"),
        "{out}"
    );
}
