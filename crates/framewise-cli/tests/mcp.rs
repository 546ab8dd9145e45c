//! `framewise mcp`: a real MCP session over the child's stdin/stdout, driven by hand as a
//! client would (JSON-RPC lines): initialize, list the tools, call each, the error cases.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{write_game, write_game_with_censuses, Dir, Game};

/// How long one answer may take before the test calls it a hang.
const ANSWER_WITHIN: Duration = Duration::from_secs(120);

/// A client session with `framewise mcp` running in a directory.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Session {
    fn start(dir: &Dir) -> Self {
        Self::start_in(dir.tmp.path(), &[])
    }

    /// A session with `framewise mcp ARGS` running in `cwd`.
    fn start_in(cwd: &std::path::Path, args: &[&str]) -> Self {
        let mut session = Self::spawn_in(cwd, args);
        let init = session.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "framewise-tests", "version": "0"}
            }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "framewise", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    /// `framewise mcp ARGS` running in `cwd`, before any message (no handshake).
    fn spawn_in(cwd: &std::path::Path, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_framewise"))
            .arg("mcp")
            .args(args)
            .current_dir(cwd)
            // The `.framewise/` tools (and the reports' default) read it; a tester's own must
            // not leak in.
            .env_remove("FRAMEWISE_DIR")
            .env_remove("CI")
            .env_remove("FRAMEWISE_AUTOMATED")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends one line as it is (not necessarily JSON), with its `\n`.
    fn send_raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line the server writes, as JSON.
    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(ANSWER_WITHIN)
            .unwrap_or_else(|e| panic!("no answer within {ANSWER_WITHIN:?}: {e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"))
    }

    /// Sends a request and waits for the response with its id (nothing else may come first:
    /// the server sends no notification to a client that subscribed to none).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let line = self
            .lines
            .recv_timeout(ANSWER_WITHIN)
            .unwrap_or_else(|e| panic!("no answer to {method} within {ANSWER_WITHIN:?}: {e}"));
        let answer: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"));
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    /// Calls a tool; the `result` (content, structuredContent, isError).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{tool}: no result: {answer}"))
    }

    /// Sends a request and waits for the response with its id, returning it and the lines
    /// that came before it (the answers to what was sent before, each JSON-RPC).
    fn request_after(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut before = Vec::new();
        loop {
            let line = self.lines.recv_timeout(ANSWER_WITHIN).unwrap_or_else(|e| {
                panic!("no answer to {method} within {ANSWER_WITHIN:?} (after {before:?}): {e}")
            });
            let answer: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"));
            if answer["id"] == id {
                return (answer, before);
            }
            before.push(answer);
        }
    }

    /// Closes stdin and returns the server's exit code.
    fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        self.child.wait().unwrap().code()
    }

    /// The server's exit code once it has exited by itself, stdin still open; `None` when it
    /// is still running after `within` (then it is killed).
    fn exits_within(mut self, within: Duration) -> Option<Option<i32>> {
        let start = std::time::Instant::now();
        while start.elapsed() < within {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status.code());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }
}

/// A test that fails while its server is still running (a tool that hung) leaves no server
/// behind.
impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A successful call's structured content, checked against its text copy.
fn structured(result: &Value) -> &Value {
    assert_ne!(result["isError"], true, "{result}");
    let content = &result["structuredContent"];
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(&serde_json::from_str::<Value>(text).unwrap(), content);
    content
}

/// The report a tool wrote, which must be what the CLI prints with `--format json`.
fn report_matches_cli(dir: &Dir, content: &Value, argv: &[&str]) {
    let path = content["report_path"].as_str().unwrap();
    assert!(path.starts_with(".framewise/mcp/"), "{path}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path(path)).unwrap()).unwrap();
    let mut args = argv.to_vec();
    args.extend(["--format", "json"]);
    let cli = dir.run(&args);
    assert_eq!(
        i64::from(cli.code),
        // The ledger tools report no verdict: their verbs always exit 0.
        content["exit_code"].as_i64().unwrap_or(0),
        "{argv:?}"
    );
    assert_eq!(
        without_clock(report),
        without_clock(cli.json()),
        "{argv:?}: the report is the CLI's JSON"
    );
}

/// A document without what depends on when it was made (`last_ago_ms`).
fn without_clock(mut value: Value) -> Value {
    match &mut value {
        Value::Object(map) => {
            map.remove("last_ago_ms");
            for v in map.values_mut() {
                *v = without_clock(v.take());
            }
        }
        Value::Array(items) => {
            for v in items.iter_mut() {
                *v = without_clock(v.take());
            }
        }
        _ => {}
    }
    value
}

#[test]
fn a_client_session_lists_and_calls_every_tool() {
    let dir = Dir::new();
    write_game(&dir.path("base.sgpt"), &Game::default());
    write_game(&dir.path("cand.sgpt"), &Game::regressed());
    let mut s = Session::start(&dir);

    let tools = s.request("tools/list", json!({}));
    let mut names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["inputSchema"]["type"], "object", "{t}");
            assert_eq!(t["outputSchema"]["type"], "object", "{t}");
            assert!(!t["description"].as_str().unwrap().is_empty());
            t["name"].as_str().unwrap()
        })
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "attribute",
            "bisect",
            "census",
            "check_budgets",
            "compare_captures",
            "find_hitches",
            "get_history",
            "get_ledger",
            "get_profile",
            "list_issues",
            "record_fix",
            "run_bench",
            "summarize_capture"
        ]
    );

    let r = s.call("summarize_capture", json!({"capture": "base.sgpt"}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "pass");
    assert_eq!(c["frames"], 300);
    assert_eq!(c["grade"]["timing"], "hardware");
    assert!(c["frame_p95_ms"].as_f64().unwrap() > 0.0, "{c}");
    report_matches_cli(&dir, c, &["summarize", "base.sgpt"]);

    let r = s.call("find_hitches", json!({"capture": "base.sgpt"}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "fail", "the default game has long frames");
    assert_eq!(c["exit_code"], 1);
    let worst = c["worst"].as_array().unwrap();
    assert!(!worst.is_empty() && worst.len() <= 5, "{c}");
    assert!(worst[0]["evidence"].as_str().is_some(), "{c}");
    report_matches_cli(&dir, c, &["hitches", "base.sgpt"]);

    let frame = worst[0]["frame"].as_u64().unwrap();
    let r = s.call("attribute", json!({"capture": "base.sgpt", "frame": frame}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "pass", "{c}");
    assert_eq!(c["frame"], frame);
    assert!(!c["top"].as_array().unwrap().is_empty(), "{c}");
    let frame_arg = frame.to_string();
    report_matches_cli(&dir, c, &["attribute", "base.sgpt", "--frame", &frame_arg]);

    let r = s.call(
        "compare_captures",
        json!({"base": "base.sgpt", "cand": "cand.sgpt", "tolerances": ["counter.draw_calls.max=0"]}),
    );
    let c = structured(&r);
    assert_eq!(c["mode"], "gate");
    assert_eq!(c["verdict"], "fail", "{c}");
    let failing: Vec<&str> = c["failing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["metric"].as_str().unwrap())
        .collect();
    assert!(failing.contains(&"counter.draw_calls.max"), "{c}");
    report_matches_cli(
        &dir,
        c,
        &[
            "gate",
            "base.sgpt",
            "cand.sgpt",
            "--tolerance",
            "counter.draw_calls.max=0",
        ],
    );

    let r = s.call(
        "compare_captures",
        json!({"base": "base.sgpt", "cand": "cand.sgpt", "mode": "diff"}),
    );
    let c = structured(&r);
    assert_eq!(c["mode"], "diff");
    assert_eq!(c["verdict"], "pass", "a diff decides nothing: {c}");
    assert!(c["failing_count"].as_u64().unwrap() > 0, "{c}");
    report_matches_cli(&dir, c, &["diff", "base.sgpt", "cand.sgpt"]);

    assert_eq!(s.close(), Some(0), "closing stdin ends the server cleanly");
}

#[test]
fn the_census_tool_reads_a_capture_as_the_verb_does() {
    let dir = Dir::new();
    let census = crate::census::scene(4);
    let doc = serde_json::to_string(&census).unwrap();
    write_game_with_censuses(&dir.path("game.sgpt"), &Game::default(), &[doc]);
    write_game(&dir.path("plain.sgpt"), &Game::default());
    let mut s = Session::start(&dir);

    let r = s.call("census", json!({"input": "game.sgpt"}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "pass");
    assert_eq!(c["censuses"], 1);
    assert_eq!(c["triangles"], census.totals.triangles);
    assert_eq!(c["hints"][0]["kind"], "instancing-candidate");
    assert_eq!(c["hints"][0]["site"], "src/flock.rs:20");
    report_matches_cli(&dir, c, &["census", "game.sgpt"]);

    let r = s.call("census", json!({"input": "plain.sgpt"}));
    let c = structured(&r);
    assert_eq!(
        (c["verdict"].as_str(), c["exit_code"].as_i64()),
        (Some("inconclusive"), Some(2))
    );
    assert!(c["triangles"].is_null());
    report_matches_cli(&dir, c, &["census", "plain.sgpt"]);
    assert_eq!(s.close(), Some(0));
}

#[test]
fn the_bisect_tool_reads_a_report_as_the_verb_does() {
    let dir = Dir::new();
    let report = crate::bisect::statue_report();
    dir.write("bisect.json", serde_json::to_string(&report).unwrap());
    let mut s = Session::start(&dir);
    let r = s.call("bisect", json!({"input": "bisect.json"}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "pass");
    assert_eq!(c["sums_to_baseline"], false);
    assert_eq!(c["top"][0]["name"], "statue");
    assert_eq!(c["top"][0]["delta_triangles"], -200_000.0);
    assert!(c["top"][0]["delta_render_ms"].is_null());
    report_matches_cli(&dir, c, &["bisect", "bisect.json"]);
    assert_eq!(s.close(), Some(0));
}

#[test]
fn errors_are_structured_and_the_server_keeps_serving() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    dir.write("junk.sgpt", b"not a capture at all");
    let mut s = Session::start(&dir);

    for (tool, args, says) in [
        (
            "summarize_capture",
            json!({"capture": "missing.sgpt"}),
            "missing.sgpt",
        ),
        ("find_hitches", json!({"capture": "junk.sgpt"}), "junk.sgpt"),
        (
            "attribute",
            json!({"capture": "game.sgpt", "frame": 999_999}),
            "999999",
        ),
        (
            "compare_captures",
            json!({"base": "game.sgpt", "cand": "game.sgpt", "tolerances": ["frame.p98=0.1"]}),
            "frame.p98",
        ),
    ] {
        let r = s.call(tool, args);
        assert_eq!(r["isError"], true, "{tool}: {r}");
        let e = &r["structuredContent"];
        assert_eq!(e["exit_code"], 4, "{tool}: {r}");
        let message = e["error"].as_str().unwrap();
        assert!(message.contains(says), "{tool}: {message}");
        assert!(!message.contains('\n'), "{tool}: one line: {message}");
    }

    // Arguments that do not fit the schema: an error result naming the problem, not a hang.
    let r = s.call("attribute", json!({"capture": 7}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("parameters"),
        "{r}"
    );
    let answer = s.request(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");

    // Still serving after every error.
    let r = s.call("summarize_capture", json!({"capture": "game.sgpt"}));
    assert_eq!(structured(&r)["verdict"], "pass");
    assert_eq!(s.close(), Some(0));
}

/// A misspelt argument is refused, naming it and the one meant: `tolerance` for `tolerances`
/// ignored would judge the comparison without the tolerance and pass what should fail.
#[test]
fn a_misspelt_argument_is_refused_with_the_one_meant() {
    let dir = Dir::new();
    write_game(&dir.path("base.sgpt"), &Game::default());
    write_game(&dir.path("cand.sgpt"), &Game::regressed());
    let mut s = Session::start(&dir);
    let r = s.call(
        "compare_captures",
        json!({"base": "base.sgpt", "cand": "cand.sgpt", "no_default_tolerances": true,
            "tolerance": ["counter.draw_calls.max=0"]}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.get("structuredContent").is_none(), "no verdict: {r}");
    let message = r["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("unknown argument `tolerance` (did you mean `tolerances`?)"),
        "{message}"
    );
    assert!(!message.contains('\n'), "one line: {message}");

    // Spelt right, the same call fails the comparison.
    let r = s.call(
        "compare_captures",
        json!({"base": "base.sgpt", "cand": "cand.sgpt", "no_default_tolerances": true,
            "tolerances": ["counter.draw_calls.max=0"]}),
    );
    assert_eq!(structured(&r)["verdict"], "fail", "{r}");
    assert_eq!(s.close(), Some(0));
}

/// Every tool's `inputSchema` says it takes no other argument, and every tool refuses one,
/// before it runs anything (a bench, an append to fixes.jsonl).
#[test]
fn every_tool_refuses_an_argument_it_does_not_take() {
    let dir = Dir::new();
    let mut s = Session::start(&dir);
    let tools = s.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    assert!(tools.len() >= 13, "{tools:?}");
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        assert_eq!(
            tool["inputSchema"]["additionalProperties"], false,
            "{name}: {tool}"
        );
        let r = s.call(name, json!({"no_such_argument": 1}));
        assert_eq!(r["isError"], true, "{name}: {r}");
        let message = r["content"][0]["text"].as_str().unwrap();
        assert!(
            message.contains("unknown argument `no_such_argument`"),
            "{name}: {message}"
        );
    }
    assert!(
        !dir.path(".framewise").exists(),
        "a refused call runs nothing"
    );
    assert_eq!(s.close(), Some(0));
}

/// Lines a client should never send (not JSON, a message cut short, JSON that is no
/// JSON-RPC message, a request whose parameters are no object): each is answered with an
/// error or ignored, and the server keeps serving.
#[test]
fn cut_and_garbage_lines_leave_the_server_serving() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let mut s = Session::start(&dir);
    let whole = json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call",
        "params": {"name": "summarize_capture", "arguments": {"capture": "game.sgpt"}}})
    .to_string();
    for garbage in [
        "not json at all",
        &whole[..whole.len() / 2],
        "[1, 2, 3]",
        "{}",
        "\"a string\"",
        r#"{"jsonrpc": "2.0", "id": 901, "method": "tools/call", "params": "x"}"#,
        r#"{"jsonrpc": "2.0", "id": 902, "method": "tools/call", "params": {"name": 7}}"#,
        r#"{"jsonrpc": "1.0", "id": 903, "method": "tools/list"}"#,
        "\u{0}\u{1}\u{7f}",
    ] {
        s.send_raw(garbage.as_bytes());
    }
    let (r, before) = s.request_after(
        "tools/call",
        json!({"name": "summarize_capture", "arguments": {"capture": "game.sgpt"}}),
    );
    for answer in &before {
        assert!(
            answer.get("error").is_some(),
            "an answer to garbage: {answer}"
        );
    }
    let r = r.get("result").unwrap_or_else(|| panic!("no result: {r}"));
    assert_eq!(structured(r)["verdict"], "pass", "{r}");
    assert_eq!(s.close(), Some(0));
}

#[test]
fn the_ledger_tools_read_and_append_the_games_memory() {
    use crate::ledger::{id, ledger, COMPILE};

    let dir = Dir::new();
    let fw = ledger(&dir);
    let mut s = Session::start(&dir);

    // No session has written profile.json yet: an error, never an empty pass.
    let r = s.call("get_profile", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["structuredContent"]["error"]
            .as_str()
            .unwrap()
            .contains("profile.json"),
        "{r}"
    );
    let profile = framewise_incidents::Profile {
        schema: framewise_incidents::PROFILE_SCHEMA.to_owned(),
        common: framewise_incidents::Common {
            at: "2026-12-01T03:00:00.000Z".to_owned(),
            build: Some("b".to_owned()),
            regime: Some("hardware".to_owned()),
            ..framewise_incidents::Common::default()
        },
        frame_index: 9000,
        window: framewise_incidents::Window {
            frames: 600,
            ..framewise_incidents::Window::default()
        },
        frame: framewise_incidents::FrameSummary {
            median_ms: Some(16.6),
            p95_ms: Some(18.0),
            fps: Some(60.2),
        },
        counters: [("draw_calls".to_owned(), 120)].into(),
        counter_stats: Default::default(),
        scopes: Default::default(),
        class: Some("STEADY".to_owned()),
        budgets: framewise_incidents::Budgets {
            checked: 1,
            breached: vec!["frame_ms".to_owned()],
        },
        paused: false,
        written: Default::default(),
        dropped: Default::default(),
    };
    framewise_incidents::write_profile(&fw.join("profile.json"), &profile).unwrap();
    let r = s.call("get_profile", json!({}));
    let c = structured(&r);
    assert_eq!(c["p95_ms"], 18.0);
    assert_eq!(c["budgets_breached"], json!(["frame_ms"]));
    assert_eq!(c["counters"]["draw_calls"], 120);
    assert!(
        c["report_path"]
            .as_str()
            .unwrap()
            .ends_with(".framewise/profile.json"),
        "{c}"
    );

    // Budgets judged against that profile, as `framewise check` judges them.
    let r = s.call("check_budgets", json!({}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "no-budgets", "no framewise.toml: {c}");
    assert_eq!(c["exit_code"], 2, "nothing judged is not a pass");
    assert!(!c["warnings"].as_array().unwrap().is_empty(), "{c}");
    dir.write(
        "framewise.toml",
        "[budgets]\nframe_ms = 16.67\n\"frame.fps\" = 55\n",
    );
    let r = s.call("check_budgets", json!({}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "breached", "p95 18 ms over 16.67: {c}");
    assert_eq!(c["exit_code"], 1);
    assert_eq!(c["source"], "profile");
    let states: Vec<(&str, &str)> = c["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["budget"].as_str().unwrap(), b["state"].as_str().unwrap()))
        .collect();
    assert!(states.contains(&("frame_ms", "breached")), "{c}");
    assert!(states.contains(&("frame.fps", "inside")), "{c}");
    report_matches_cli(&dir, c, &["check"]);
    // A budget the profile did not measure, none breached: incomplete, exit 2, not a pass.
    dir.write(
        "framewise.toml",
        "[budgets]\n\"frame.fps\" = 55\n\"scope.nothing_ran.p95\" = 2\n",
    );
    let r = s.call("check_budgets", json!({}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "incomplete", "{c}");
    assert_eq!(c["exit_code"], 2, "{c}");
    assert!(
        c["warnings"].to_string().contains("scope.nothing_ran.p95"),
        "{c}"
    );
    report_matches_cli(&dir, c, &["check"]);
    dir.write(
        "framewise.toml",
        "[budgets]\nframe_ms = 16.67\n\"frame.fps\" = 55\n",
    );
    let r = s.call("check_budgets", json!({"counters_only": true}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "no-budgets", "{c}");
    assert_eq!(c["exit_code"], 2);

    let r = s.call("list_issues", json!({}));
    let c = structured(&r);
    assert_eq!(c["issue_count"], 2, "{c}");
    assert_eq!(c["automated_left_out"], 1);
    assert_eq!(c["top"][0]["id"], id(COMPILE).as_str());
    report_matches_cli(&dir, c, &["issues"]);
    let r = s.call("list_issues", json!({"fp": "zz"}));
    assert_eq!(r["isError"], true, "{r}");

    let r = s.call("get_history", json!({"buckets": 4}));
    let c = structured(&r);
    assert_eq!(c["buckets"], 4);
    assert_eq!(c["build_count"], 2, "{c}");
    assert_eq!(c["future"], 0, "{c}");
    report_matches_cli(&dir, c, &["history", "--buckets", "4"]);

    let before = std::fs::read_to_string(fw.join("perf.jsonl")).unwrap();
    let r = s.call(
        "record_fix",
        json!({"title": "compile pipelines at load", "footprints": [id(COMPILE)]}),
    );
    let c = structured(&r);
    assert_eq!(c["appended"], true, "{c}");
    assert_eq!(c["before"]["build"], "a", "{c}");
    assert_eq!(c["after"]["build"], "b", "{c}");
    let fixes = std::fs::read_to_string(fw.join("fixes.jsonl")).unwrap();
    assert_eq!(fixes.lines().count(), 1);
    assert!(fixes.contains("compile pipelines at load"));
    assert_eq!(
        std::fs::read_to_string(fw.join("perf.jsonl")).unwrap(),
        before,
        "the incident log is never written by a tool"
    );
    // The catalogue now lists the fix under its issue.
    let r = s.call("list_issues", json!({}));
    assert_eq!(structured(&r)["top"][0]["fixes"], 1);
    let r = s.call(
        "record_fix",
        json!({"title": "typo", "footprints": ["00000000"]}),
    );
    assert_eq!(r["isError"], true, "an id the ledger never saw: {r}");

    // A record from a clock set decades ahead: left out of the timeline, and counted.
    let log = std::fs::read_to_string(fw.join("perf.jsonl")).unwrap();
    let line = log.lines().next().unwrap();
    let at = &line[line.find("\"at\":\"").unwrap() + 6..][..24];
    let ahead = line.replace(at, "2090-01-01T00:00:00.000Z");
    std::fs::write(fw.join("perf.jsonl"), format!("{log}{ahead}\n")).unwrap();
    let r = s.call("get_history", json!({"buckets": 4}));
    let c = structured(&r);
    assert_eq!(c["future"], 1, "{c}");
    assert_eq!(c["build_count"], 2, "{c}");
    assert_eq!(s.close(), Some(0));
}

#[test]
fn run_bench_compares_with_the_last_run_and_get_ledger_reads_the_line() {
    let dir = Dir::new();
    let exe = env!("CARGO_BIN_EXE_framewise");
    dir.write(
        "framewise.toml",
        format!(
            "[budgets]\n\"counter.draw_calls.max\" = 300\n\n[bench.smoke]\ncommand = [{exe:?}, \"demo\", \"--quiet\"]\nframes = 40\nwarmup = 10\nruns = 3\nfixed_dt = 0.016666\n"
        ),
    );
    let mut s = Session::start(&dir);

    let r = s.call("get_ledger", json!({}));
    let c = structured(&r);
    assert_eq!(c["lines"], 0, "no comparison yet: {c}");

    let r = s.call("run_bench", json!({"name": "smoke"}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "first-result", "{c}");
    assert_eq!(c["exit_code"], 2);
    assert!(c["result_file"]
        .as_str()
        .unwrap()
        .starts_with(".framewise/bench/smoke-"));

    let r = s.call(
        "run_bench",
        json!({"name": "smoke", "change": "nothing (A/A)"}),
    );
    let c = structured(&r);
    let verdict = c["verdict"].as_str().unwrap().to_owned();
    let expected_code = match verdict.as_str() {
        "improved" => 0,
        "regressed" => 1,
        "no-detectable-change" | "inconclusive" => 2,
        "incomparable" => 3,
        other => panic!("not a comparison verdict: {other}"),
    };
    assert_eq!(c["exit_code"], expected_code, "{c}");
    assert_eq!(c["budgets"][0]["budget"], "counter.draw_calls.max", "{c}");
    assert_eq!(c["budgets"][0]["state"], "inside", "{c}");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path(c["report_path"].as_str().unwrap())).unwrap(),
    )
    .unwrap();
    assert_eq!(report["overall"]["verdict"], verdict.as_str(), "{report}");

    let r = s.call("get_ledger", json!({"name": "smoke"}));
    let l = structured(&r);
    assert_eq!(l["lines"], 1, "{l}");
    assert_eq!(l["newest"][0]["verdict"], verdict.as_str());
    assert_eq!(l["newest"][0]["change"], "nothing (A/A)");

    // A metric every run before measured and no run after has: a regression the headline
    // names (its `metrics` rows cannot show it; it listed only the reasons).
    let last = dir.path(c["result_file"].as_str().unwrap());
    let mut result: Value = serde_json::from_str(&std::fs::read_to_string(&last).unwrap()).unwrap();
    for run in result["runs"].as_array_mut().unwrap() {
        run["counters"]["ghost"] = json!(7);
        run["metrics"]["counter.ghost.sum"] = json!(7.0);
    }
    std::fs::write(&last, serde_json::to_vec_pretty(&result).unwrap()).unwrap();
    let r = s.call("run_bench", json!({"name": "smoke"}));
    let c = structured(&r);
    assert_eq!(c["verdict"], "regressed", "{c}");
    assert_eq!(c["exit_code"], 1, "{c}");
    assert_eq!(c["missing"][0]["metric"], "counter.ghost.sum", "{c}");
    assert_eq!(c["missing"][0]["before"], 7.0, "{c}");
    assert_eq!(c["missing"][0]["after_runs"], 0, "{c}");
    assert_eq!(c["missing"][0]["verdict"], "regressed", "{c}");

    let r = s.call("run_bench", json!({"name": "smokey"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["structuredContent"]["error"]
            .as_str()
            .unwrap()
            .contains("did you mean smoke"),
        "{r}"
    );
    assert_eq!(s.close(), Some(0));
}

#[test]
fn a_line_that_is_no_request_is_answered_per_json_rpc_and_the_session_goes_on() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let mut s = Session::start(&dir);

    let cases: [(&[u8], i64, Value); 8] = [
        (b"this is not json", -32700, Value::Null),
        // A request cut short, as a client killed mid-write leaves it.
        (
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"#,
            -32700,
            Value::Null,
        ),
        (b"\xff\xfe not UTF-8", -32700, Value::Null),
        (
            br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#,
            -32600,
            json!(7),
        ),
        (br#"{"id":"x"}"#, -32600, json!("x")),
        (b"[]", -32600, Value::Null),
        (b"42", -32600, Value::Null),
        (
            br#"{"jsonrpc":"2.0","id":{"no":1},"method":"ping"}"#,
            -32600,
            Value::Null,
        ),
    ];
    for (line, code, id) in cases {
        s.send_raw(line);
        let answer = s.next();
        let shown = String::from_utf8_lossy(line);
        assert_eq!(answer["jsonrpc"], "2.0", "{shown}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{shown}: {answer}");
        assert!(answer["error"]["message"].is_string(), "{shown}: {answer}");
        // `id` is there, null when the line has no readable one.
        assert_eq!(answer.get("id"), Some(&id), "{shown}: {answer}");
    }

    // A malformed notification and a response (our own error echoed back) get no answer:
    // the next line is the ping's.
    s.send_raw(br#"{"jsonrpc":"2.0","method":"notifications/unheard","params":7}"#);
    s.send_raw(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
    s.send_raw(b"");
    let pong = s.request("ping", json!({}));
    assert!(pong["result"].is_object(), "{pong}");

    // A method the server does not have is named, as JSON-RPC's "Method not found".
    for method in ["nope", "resources/list"] {
        let answer = s.request(method, json!({}));
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(&format!("Method not found: {method} (")),
            "{answer}"
        );
    }

    // Still serving tools after all of it.
    let r = s.call("summarize_capture", json!({"capture": "game.sgpt"}));
    assert_eq!(structured(&r)["verdict"], "pass");
    assert_eq!(s.close(), Some(0));
}

/// A comparison with a capture cut short says why it is inconclusive in the tools' terms:
/// the argument that judges it anyway is `allow_damaged`, not the command line's option;
/// a bad tolerance names `tolerances`. With `allow_damaged` the regression is judged.
#[test]
fn a_cut_capture_is_inconclusive_and_named_in_the_tools_terms() {
    let dir = Dir::new();
    write_game(&dir.path("base.sgpt"), &Game::default());
    write_game(&dir.path("cand.sgpt"), &Game::regressed());
    let whole = std::fs::read(dir.path("cand.sgpt")).unwrap();
    dir.write("cut.sgpt", &whole[..whole.len() * 2 / 3]);
    let mut s = Session::start(&dir);

    let r = s.call(
        "compare_captures",
        json!({"base": "base.sgpt", "cand": "cut.sgpt"}),
    );
    let c = structured(&r);
    assert_eq!(c["verdict"], "inconclusive", "{c}");
    assert_eq!(c["exit_code"], 2, "{c}");
    let reasons = c["reasons"].to_string();
    assert!(
        reasons.contains("`allow_damaged` compares what is left"),
        "{reasons}"
    );
    assert!(!reasons.contains("--"), "{reasons}");

    let r = s.call(
        "compare_captures",
        json!({"base": "base.sgpt", "cand": "cut.sgpt", "allow_damaged": true}),
    );
    assert_eq!(structured(&r)["verdict"], "fail", "{r}");

    let r = s.call(
        "compare_captures",
        json!({"base": "base.sgpt", "cand": "base.sgpt", "tolerances": ["frame.p99=-1"]}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let message = r["structuredContent"]["error"].as_str().unwrap();
    assert!(
        message.starts_with("`tolerances` frame.p99=-1: "),
        "{message}"
    );
    assert_eq!(s.close(), Some(0));
}

/// A session that never gets to the `initialize` request ends with exit 4 and one line saying
/// why in the protocol's terms (the SDK's own words were the message's whole debug form).
#[test]
fn a_handshake_that_never_starts_is_one_line_and_exit_4() {
    let dir = Dir::new();
    dir.write("empty", b"");
    dir.write(
        "notification",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
    );
    dir.write(
        "response",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
    );
    for (input, says) in [
        ("empty", "stdin closed before an `initialize` request"),
        (
            "notification",
            "a notification came before the `initialize` request",
        ),
        (
            "response",
            "a response came before the `initialize` request",
        ),
    ] {
        let run = dir.run_stdin_from(input, false, &["mcp"]).expect(4);
        assert_eq!(
            run.one_error_line(),
            format!(
                "framewise: error: MCP initialization failed: {says} (the MCP handshake starts \
                 with the client's `initialize` request)"
            ),
            "{input}"
        );
        assert!(run.stdout.is_empty(), "{input}: {}", run.stdout);
    }
}

/// `--reports` naming a file (or a FIFO, a device) failed every tool call with "File exists";
/// it is refused before the handshake.
#[test]
fn reports_naming_something_other_than_a_directory_is_refused_at_start() {
    let dir = Dir::new();
    dir.write("empty", b"");
    dir.write("a-file", b"x");
    let run = dir
        .run_stdin_from("empty", false, &["mcp", "--reports", "a-file"])
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: --reports a-file: not a directory (the tools write their reports into it)"
    );
}

/// A method the server answers, sent with params that do not read, is -32602 (Invalid params)
/// saying what is wrong, never -32601 (Method not found: it is found); a second `initialize`
/// is -32600, the session being initialized already. The session goes on.
#[test]
fn bad_params_and_a_second_initialize_are_not_method_not_found() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let mut s = Session::start(&dir);
    let id = |s: &mut Session| {
        s.next_id += 1;
        s.next_id - 1
    };
    let cases: [(Value, i64, &str); 6] = [
        (json!({}), -32602, "Invalid params: tools/call: no params"),
        (
            json!({"params": {"name": "summarize_capture", "arguments": "x"}}),
            -32602,
            "Invalid params: tools/call: `arguments` must be an object",
        ),
        (
            json!({"params": {"arguments": {}}}),
            -32602,
            "Invalid params: tools/call: `name`",
        ),
        (
            json!({"method": "tools/list", "params": "x"}),
            -32602,
            "Invalid params: tools/list: params must be an object",
        ),
        (
            json!({"method": "initialize", "params": {}}),
            -32600,
            "Invalid Request: the session is already initialized",
        ),
        (
            json!({"method": "initialize", "params": {"protocolVersion": "2025-06-18",
                "capabilities": {}, "clientInfo": {"name": "again", "version": "0"}}}),
            -32600,
            "Invalid Request: the session is already initialized",
        ),
    ];
    for (mut request, code, says) in cases {
        let id = id(&mut s);
        let fields = request.as_object_mut().unwrap();
        fields.insert("jsonrpc".into(), json!("2.0"));
        fields.insert("id".into(), json!(id));
        fields.entry("method").or_insert(json!("tools/call"));
        s.send(&request);
        let answer = s.next();
        assert_eq!(answer["id"], id, "{request}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{request}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(says), "{request}: {message}");
    }
    let r = s.call("summarize_capture", json!({"capture": "game.sgpt"}));
    assert_eq!(structured(&r)["verdict"], "pass");
    assert_eq!(s.close(), Some(0));
}

/// An `initialize` whose params do not read is answered -32602, and the server goes on
/// waiting for one that does.
#[test]
fn a_malformed_initialize_is_invalid_params_and_the_handshake_can_start_after_it() {
    let dir = Dir::new();
    dir.write(
        "input",
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
            "\n"
        )
        .as_bytes(),
    );
    let run = dir.run_stdin_from("input", false, &["mcp"]).expect(0);
    let answers: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 2, "{}", run.stdout);
    assert_eq!(answers[0]["id"], 1, "{}", run.stdout);
    assert_eq!(answers[0]["error"]["code"], -32602, "{}", run.stdout);
    assert_eq!(
        answers[0]["error"]["message"],
        "Invalid params: initialize: missing field `protocolVersion`"
    );
    assert_eq!(answers[1]["result"]["serverInfo"]["name"], "framewise");
}

/// A `tools/call` whose params misspell `arguments` ran the tool with its defaults: a
/// `check_budgets` meant for a bench judged the old profile and said `inside`. A member MCP
/// does not define there is refused (-32602) naming it, and nothing runs; the members it
/// does define (`_meta`, `task`) are taken.
#[test]
fn a_misspelt_arguments_member_is_refused_not_ignored() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let mut s = Session::start(&dir);
    for (params, says) in [
        (
            json!({"name": "get_ledger", "argumnts": {"last": 0}}),
            "unknown member `argumnts` (did you mean `arguments`?)",
        ),
        (
            json!({"name": "check_budgets", "args": {"bench": "smoke"}}),
            "unknown member `args`",
        ),
        (
            json!({"name": "summarize_capture", "arguments": {"capture": "game.sgpt"},
                "meta": {}}),
            "unknown member `meta` (did you mean `_meta`?)",
        ),
    ] {
        let answer = s.request("tools/call", params.clone());
        assert_eq!(answer["error"]["code"], -32602, "{params}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Invalid params: tools/call: ") && message.contains(says),
            "{params}: {message}"
        );
        assert!(!message.contains('\n'), "one line: {message}");
    }
    assert!(
        !dir.path(".framewise").exists(),
        "a refused call runs nothing (no report written)"
    );
    // Spelt right, the same call is refused by the tool (`last` 0 is out of range)...
    let r = s.call("get_ledger", json!({"last": 0}));
    assert_eq!(r["isError"], true, "{r}");
    // ... and the members MCP defines are taken: `_meta` (a progress token) and `task`
    // (2025-11-25; a server without tasks runs the call as usual).
    let answer = s.request(
        "tools/call",
        json!({"name": "summarize_capture", "arguments": {"capture": "game.sgpt"},
            "_meta": {"progressToken": 7}, "task": {"ttl": 60000}}),
    );
    let r = answer
        .get("result")
        .unwrap_or_else(|| panic!("no result: {answer}"));
    assert_eq!(structured(r)["verdict"], "pass", "{answer}");
    assert_eq!(s.close(), Some(0));
}

/// A capture named `/dev/stdin` swallowed the JSON-RPC lines after the call; a FIFO blocked
/// the tool (and the server's exit) forever. Both are refused before anything is opened, and
/// the session goes on; the message for `-` does not send the agent to /dev/stdin.
#[test]
fn a_capture_that_is_the_servers_stdin_or_a_pipe_is_refused() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let fifo = dir.path("pipe.sgpt");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut s = Session::start(&dir);
    for (tool, args, says) in [
        (
            "summarize_capture",
            json!({"capture": "/dev/stdin"}),
            "capture: /dev/stdin names one of the server's open streams",
        ),
        (
            "find_hitches",
            json!({"capture": "/dev/fd/0"}),
            "capture: /dev/fd/0 names one of the server's open streams",
        ),
        (
            "attribute",
            json!({"capture": "/proc/self/fd/0"}),
            "capture: /proc/self/fd/0 names one of the server's open streams",
        ),
        (
            "summarize_capture",
            json!({"capture": "pipe.sgpt"}),
            "capture: pipe.sgpt is a FIFO (a named pipe), not a regular file",
        ),
        (
            "compare_captures",
            json!({"base": "game.sgpt", "cand": "pipe.sgpt"}),
            "cand: pipe.sgpt is a FIFO",
        ),
        (
            "summarize_capture",
            json!({"capture": "game.sgpt", "config": "pipe.sgpt"}),
            "config: pipe.sgpt is a FIFO",
        ),
        (
            "census",
            json!({"input": "/dev/stdin"}),
            "input: /dev/stdin names one of the server's open streams",
        ),
        (
            "summarize_capture",
            json!({"capture": "-"}),
            "capture: `-` is not a file",
        ),
    ] {
        let r = s.call(tool, args.clone());
        assert_eq!(r["isError"], true, "{tool} {args}: {r}");
        let message = r["structuredContent"]["error"].as_str().unwrap();
        assert!(message.starts_with(says), "{tool} {args}: {message}");
        assert!(!message.contains("/dev/stdin for"), "{message}");
    }
    // The lines after those calls were read as requests, not as a capture.
    let pong = s.request("ping", json!({}));
    assert!(pong["result"].is_object(), "{pong}");
    let r = s.call("summarize_capture", json!({"capture": "game.sgpt"}));
    assert_eq!(structured(&r)["verdict"], "pass");
    assert_eq!(s.close(), Some(0), "the server exits when stdin closes");
}

/// `record_fix` appended to fixes.jsonl and then failed on the reports directory, so an
/// agent retrying recorded the fix twice. The reports directory is made before the verb
/// runs: unusable, the call is an error and nothing is recorded; usable again, the fix is
/// recorded once.
#[test]
fn a_fix_is_not_recorded_when_its_report_cannot_be_written() {
    use crate::ledger::{id, ledger, COMPILE};

    let dir = Dir::new();
    let fw = ledger(&dir);
    let mut s = Session::start_in(dir.tmp.path(), &["--reports", "reports/mcp"]);
    dir.write("reports", "a file where the reports directory goes");
    let fix = json!({"title": "compile pipelines at load", "footprints": [id(COMPILE)]});
    let r = s.call("record_fix", fix.clone());
    assert_eq!(r["isError"], true, "{r}");
    let message = r["structuredContent"]["error"].as_str().unwrap();
    assert!(
        message.contains("cannot create the reports directory")
            && message.ends_with("nothing was run or recorded"),
        "{message}"
    );
    assert!(!fw.join("fixes.jsonl").exists(), "nothing recorded");

    std::fs::remove_file(dir.path("reports")).unwrap();
    let r = s.call("record_fix", fix);
    let c = structured(&r);
    assert_eq!(c["appended"], true, "{c}");
    assert!(c.get("report_error").is_none(), "{c}");
    assert!(
        c["report_path"]
            .as_str()
            .unwrap()
            .starts_with("reports/mcp/fix-"),
        "{c}"
    );
    let fixes = std::fs::read_to_string(fw.join("fixes.jsonl")).unwrap();
    assert_eq!(fixes.lines().count(), 1, "{fixes}");
    assert_eq!(s.close(), Some(0));
}

/// `--reports` under a regular file (`a.sgpt/sub`) is as unusable as a file: refused at
/// start, exit 4, one line.
#[test]
fn reports_under_a_file_is_refused_at_start() {
    let dir = Dir::new();
    dir.write("empty", b"");
    dir.write("a.sgpt", b"x");
    let run = dir
        .run_stdin_from("empty", false, &["mcp", "--reports", "a.sgpt/sub"])
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: --reports a.sgpt/sub: a.sgpt is a regular file, not a directory, so \
         the directory cannot be made there (the tools write their reports into it)"
    );
}

/// A bench whose report cannot be written after it ran (its result and ledger line are
/// recorded) is no error, which would read as nothing done: the result says it was recorded,
/// with `report_error` and no `report_path`. `counters_only` without a comparison is refused,
/// as the CLI refuses `bench NAME --counters-only` without `--compare`.
#[test]
fn a_bench_recorded_is_said_so_when_its_report_fails_and_counters_only_needs_a_comparison() {
    let dir = Dir::new();
    let exe = env!("CARGO_BIN_EXE_framewise");
    // The program run by the bench takes the reports directory away once `swap` exists.
    let script =
        "if [ -f swap ]; then rm -rf reports; echo x > reports; fi; exec \"$0\" demo --quiet";
    dir.write(
        "framewise.toml",
        format!(
            "[bench.smoke]\ncommand = [\"sh\", \"-c\", {script:?}, {exe:?}]\nframes = 30\nwarmup = 5\nruns = 3\nfixed_dt = 0.016666\n"
        ),
    );
    let mut s = Session::start_in(dir.tmp.path(), &["--reports", "reports"]);

    let r = s.call(
        "run_bench",
        json!({"name": "smoke", "compare_last": false, "counters_only": true}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let message = r["structuredContent"]["error"].as_str().unwrap();
    assert!(
        message.contains("`counters_only`") && message.contains("`compare_last`"),
        "{message}"
    );
    assert!(!dir.path(".framewise").exists(), "nothing ran: {message}");

    let r = s.call("run_bench", json!({"name": "smoke"}));
    assert_eq!(structured(&r)["verdict"], "first-result", "{r}");
    dir.write("swap", "");
    let r = s.call(
        "run_bench",
        json!({"name": "smoke", "change": "nothing (A/A)"}),
    );
    let c = structured(&r);
    assert!(c["report_path"].is_null(), "{c}");
    let said = c["report_error"].as_str().unwrap();
    assert!(
        said.starts_with("the bench WAS run, and its result (")
            && said.contains("and its comparison's ledger line recorded"),
        "{said}"
    );
    assert!(!said.contains('\n'), "{said}");
    let l = s.call("get_ledger", json!({"name": "smoke"}));
    assert_eq!(structured(&l)["lines"], 1, "{l}");
    assert_eq!(s.close(), Some(0));
}

/// The messages and schemas say what the tools take: `record_fix`'s errors name its
/// arguments, not the CLI's flags; `buckets` and `last` state their range; a profile that
/// does not parse is named once; `get_ledger` refuses a `dir` that is not there; a path with
/// `--` in it comes back as given.
#[test]
fn messages_and_schemas_say_what_the_tools_take() {
    let dir = Dir::new();
    std::fs::create_dir_all(dir.path("empty/.framewise")).unwrap();
    dir.write("empty/.framewise/perf.jsonl", "");
    std::fs::create_dir_all(dir.path("bad")).unwrap();
    dir.write("bad/profile.json", "");
    let mut s = Session::start(&dir);

    let tools = s.request("tools/list", json!({}));
    let schema = |tool: &str, argument: &str| -> Value {
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == tool)
            .unwrap()["inputSchema"]["properties"][argument]
            .clone()
    };
    let buckets = schema("get_history", "buckets");
    assert_eq!(
        (&buckets["minimum"], &buckets["maximum"]),
        (&json!(1), &json!(1000)),
        "{buckets}"
    );
    let last = schema("get_ledger", "last");
    assert_eq!(
        (&last["minimum"], &last["maximum"]),
        (&json!(1), &json!(100)),
        "{last}"
    );

    let error = |s: &mut Session, tool: &str, args: Value| -> String {
        let r = s.call(tool, args);
        assert_eq!(r["isError"], true, "{tool}: {r}");
        r["structuredContent"]["error"].as_str().unwrap().to_owned()
    };
    let m = error(
        &mut s,
        "record_fix",
        json!({"title": "x", "dir": "empty/.framewise"}),
    );
    assert!(m.contains("pass `before` and `after`"), "{m}");
    let m = error(
        &mut s,
        "record_fix",
        json!({"title": "x", "commit": "", "dir": "empty/.framewise"}),
    );
    assert!(
        m.starts_with("`commit` is empty") && m.contains("leave `commit` out"),
        "{m}"
    );
    assert!(!m.contains("--"), "{m}");
    let m = error(&mut s, "get_profile", json!({"dir": "bad"}));
    assert_eq!(m.matches("profile.json").count(), 1, "the path once: {m}");
    let m = error(&mut s, "get_ledger", json!({"dir": "nope"}));
    assert!(m.starts_with("dir: nope: not a directory"), "{m}");
    for capture in ["old--to.sgpt", "x--from--allow-damaged.sgpt"] {
        let m = error(&mut s, "find_hitches", json!({"capture": capture}));
        assert!(m.starts_with(&format!("{capture}: ")), "{m}");
    }
    let m = error(
        &mut s,
        "compare_captures",
        json!({"base": "old--to.sgpt", "cand": "old--to.sgpt"}),
    );
    assert!(m.starts_with("old--to.sgpt: "), "{m}");
    // `get_ledger` without `dir`, before any bench: no comparison yet, no error.
    let r = s.call("get_ledger", json!({}));
    assert_eq!(structured(&r)["lines"], 0);
    assert_eq!(s.close(), Some(0));
}

/// Started in a subdirectory of the game's repository, the server made `sub/.framewise/mcp`
/// for its first report, and from then on the `.framewise/` tools read that empty directory.
/// The reports go into the `.framewise/` the tools read, and none is made in `sub/`.
#[test]
fn a_server_started_in_a_subdirectory_reports_into_the_repositorys_framewise() {
    use crate::ledger::ledger;

    let dir = Dir::new();
    let fw = ledger(&dir);
    write_game(&dir.path("game.sgpt"), &Game::default());
    std::fs::create_dir_all(dir.path("sub")).unwrap();
    let mut s = Session::start_in(&dir.path("sub"), &[]);

    let r = s.call("summarize_capture", json!({"capture": "../game.sgpt"}));
    let path = std::path::PathBuf::from(structured(&r)["report_path"].as_str().unwrap());
    assert!(path.starts_with(fw.join("mcp")), "{}", path.display());
    assert!(path.is_file());
    assert!(
        !dir.path("sub/.framewise").exists(),
        "no .framewise/ made in sub/"
    );

    let r = s.call("get_history", json!({"buckets": 4}));
    let c = structured(&r);
    assert_eq!(c["build_count"], 2, "the repository's ledger: {c}");
    assert!(!dir.path("sub/.framewise").exists());
    assert_eq!(s.close(), Some(0));

    // With no `.framewise/` anywhere up, the reports go to `./.framewise/mcp`, as before.
    let bare = Dir::new();
    write_game(&bare.path("game.sgpt"), &Game::default());
    let mut s = Session::start(&bare);
    let r = s.call("summarize_capture", json!({"capture": "game.sgpt"}));
    let c = structured(&r);
    assert!(
        c["report_path"]
            .as_str()
            .unwrap()
            .starts_with(".framewise/mcp/summarize-"),
        "{c}"
    );
    assert_eq!(s.close(), Some(0));
}

/// `mkfifo PATH`.
fn mkfifo(path: &std::path::Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The character device of major 1 and minor `minor` (5: `/dev/zero`), made in the test's own
/// directory, never the machine's `/dev`; false, said on stderr, without root.
fn mknod_char(path: &std::path::Path, minor: &str) -> bool {
    let out = Command::new("mknod")
        .arg(path)
        .args(["c", "1", minor])
        .output()
        .expect("mknod runs");
    if !out.status.success() {
        eprintln!(
            "skipping the device case: mknod needs root here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    out.status.success()
}

/// A failed call's one-line message.
fn tool_error(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    let message = &result["structuredContent"]["error"];
    message
        .as_str()
        .unwrap_or_else(|| panic!("no structured error: {result}"))
        .to_owned()
}

/// A ledger line as `framewise bench` appends it, of bench `name` and verdict `verdict`.
fn ledger_line(name: &str, at: &str, verdict: &str) -> String {
    let side = json!({"name": name, "at": at, "runs": 3, "config_hash": "h",
        "regime": "hardware", "canonical": true});
    json!({"schema": "framewise.ledger/1", "at": at, "name": name, "canonical": true,
        "change": format!("change at {at}"), "config_hash": "h", "before": side, "after": side,
        "verdict": verdict, "exit_code": 2, "regressed": [], "improved": [], "budgets": [],
        "automated": true})
    .to_string()
}

/// `get_ledger` on a FIFO ledger never answered (read_to_string waited for a writer), and the
/// server outlived its stdin; a link to a device such as /dev/zero read until memory ran out.
/// The ledger must be a regular file, as for `framewise bench`. A regular ledger is read as
/// before: the newest `last` lines of the bench asked for, oldest first, the lines no ledger
/// line counted.
#[test]
fn get_ledger_refuses_a_ledger_that_is_no_regular_file() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path(".framewise")).unwrap();
    let ledger = dir.path(".framewise/bench-history.jsonl");
    mkfifo(&ledger);
    let mut s = Session::start(&dir);

    let m = tool_error(&s.call("get_ledger", json!({})));
    assert!(
        m.starts_with(
            ".framewise/bench-history.jsonl: is a FIFO (a named pipe), not a regular file"
        ),
        "{m}"
    );

    std::fs::remove_file(&ledger).unwrap();
    if mknod_char(&dir.path("zero"), "5") {
        std::os::unix::fs::symlink("../zero", &ledger).unwrap();
        let m = tool_error(&s.call("get_ledger", json!({})));
        assert!(
            m.starts_with(
                ".framewise/bench-history.jsonl: is a character device, not a regular file"
            ),
            "{m}"
        );
        std::fs::remove_file(&ledger).unwrap();
    }
    std::fs::create_dir(&ledger).unwrap();
    let m = tool_error(&s.call("get_ledger", json!({})));
    assert!(m.contains("is a directory, not a regular file"), "{m}");
    std::fs::remove_dir(&ledger).unwrap();

    let mut text = String::new();
    for i in 0..12 {
        text.push_str(&ledger_line(
            "smoke",
            &format!("2026-12-01T00:00:{i:02}Z"),
            "improved",
        ));
        text.push('\n');
        if i == 3 {
            text.push_str("not a ledger line\n\n");
            text.push_str(&ledger_line("other", "2026-12-01T01:00:00Z", "regressed"));
            text.push_str("\r\n");
        }
    }
    // A last line without its newline is still read.
    text.push_str(&ledger_line(
        "smoke",
        "2026-12-01T00:00:12Z",
        "no-detectable-change",
    ));
    std::fs::write(&ledger, text).unwrap();
    let r = s.call("get_ledger", json!({"name": "smoke", "last": 3}));
    let c = structured(&r);
    assert_eq!(c["lines"], 13, "{c}");
    assert_eq!(c["malformed"], 1, "{c}");
    let at: Vec<&str> = c["newest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["at"].as_str().unwrap())
        .collect();
    assert_eq!(
        at,
        [
            "2026-12-01T00:00:10Z",
            "2026-12-01T00:00:11Z",
            "2026-12-01T00:00:12Z"
        ],
        "{c}"
    );
    assert_eq!(c["newest"][2]["verdict"], "no-detectable-change", "{c}");
    let c = structured(&s.call("get_ledger", json!({}))).clone();
    assert_eq!(c["lines"], 14, "{c}");
    assert_eq!(c["newest"].as_array().unwrap().len(), 10, "{c}");
    assert_eq!(s.close(), Some(0));
}

/// `get_profile` on a FIFO `profile.json` said "no profile yet" (refusing it all the same):
/// it says what is there. With nothing there, there is no profile yet.
#[test]
fn get_profile_says_what_is_there_when_it_is_no_regular_file() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path(".framewise")).unwrap();
    let mut s = Session::start(&dir);
    let m = tool_error(&s.call("get_profile", json!({})));
    assert!(m.ends_with(".framewise/profile.json: no profile yet (an instrumented program writes it while it runs with the incident log on)"), "{m}");
    mkfifo(&dir.path(".framewise/profile.json"));
    let m = tool_error(&s.call("get_profile", json!({})));
    assert!(
        m.ends_with(".framewise/profile.json: is a FIFO (a named pipe), not a regular file: the profile is a file an instrumented program writes (the server reads files only: a pipe or a device could block it)"),
        "{m}"
    );
    assert_eq!(s.close(), Some(0));
}

/// A response (or a notification) before `initialize` ends the server with exit 4, as the
/// docs say, at once: it stayed until the client's next line, and then exited without
/// answering that line.
#[test]
fn a_response_or_notification_before_initialize_ends_the_server_at_once() {
    let dir = Dir::new();
    for line in [
        json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "x"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        let mut s = Session::spawn_in(dir.tmp.path(), &[]);
        s.send(&line);
        // stdin stays open: the server must not wait for another line.
        assert_eq!(
            s.exits_within(Duration::from_secs(20)),
            Some(Some(4)),
            "{line}: still running with stdin open"
        );
    }
}

/// Before `initialize`, `tools/list` and `tools/call` were answered "request _meta is missing
/// … io.modelcontextprotocol/protocolVersion", sending a handshake client to add fields; and a
/// `_meta` naming a handshake revision (2025-06-18) ran the tool with no handshake at all. A
/// request before `initialize` is told to send it, and nothing runs; `ping` is answered; a
/// request of 2026-07-28, which has no handshake, is served as that revision says.
#[test]
fn a_request_before_initialize_is_told_to_initialize_unless_its_revision_has_no_handshake() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let call = json!({"name": "summarize_capture", "arguments": {"capture": "game.sgpt"}});
    let mut s = Session::spawn_in(dir.tmp.path(), &[]);
    for (method, params) in [
        ("tools/list", json!({})),
        ("tools/call", call.clone()),
        ("resources/list", json!({})),
    ] {
        let answer = s.request(method, params);
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "Invalid params: {method} came before `initialize`: send the `initialize` request first"
            )),
            "{method}: {message}"
        );
    }
    let mut legacy = call.clone();
    legacy["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2025-06-18",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let answer = s.request("tools/call", legacy);
    assert_eq!(answer["error"]["code"], -32022, "{answer}");
    assert_eq!(
        answer["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-06-18"}),
        "{answer}"
    );
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "Unsupported protocol version: 2025-06-18 starts with the `initialize` request: send it first"
        ),
        "{message}"
    );
    assert!(
        !dir.path(".framewise").exists(),
        "nothing ran before the handshake (no report written)"
    );
    let pong = s.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");
    let init = s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "late", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "framewise", "{init}");
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = s.call("summarize_capture", json!({"capture": "game.sgpt"}));
    assert_eq!(structured(&r)["verdict"], "pass");
    assert_eq!(s.close(), Some(0));

    // 2026-07-28 has no handshake: its requests carry the lifecycle in `_meta`.
    let mut s = Session::spawn_in(dir.tmp.path(), &[]);
    let mut modern = call.clone();
    modern["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let answer = s.request("tools/call", modern);
    let r = answer
        .get("result")
        .unwrap_or_else(|| panic!("no result: {answer}"));
    assert_eq!(structured(r)["verdict"], "pass", "{answer}");
    assert_eq!(s.close(), Some(0));
}

/// `{"capture": "game.sgpt", "capture": "nonexist"}` ran on "nonexist" (JSON keeps the last
/// value). An argument given twice is refused, named, and nothing runs; a key repeated in the
/// call's params is refused too.
#[test]
fn an_argument_given_twice_is_refused_not_resolved() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let mut s = Session::start(&dir);
    for (id, line) in [
        (
            100,
            r#"{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"summarize_capture","arguments":{"capture":"game.sgpt","capture":"nonexist"}}}"#,
        ),
        (
            101,
            r#"{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"summarize_capture","arguments":{"capture":"nonexist","capture":"game.sgpt"}}}"#,
        ),
    ] {
        s.send_raw(line.as_bytes());
        let answer = s.next();
        assert_eq!(answer["id"], id, "{answer}");
        let r = &answer["result"];
        assert_eq!(r["isError"], true, "{line}: {answer}");
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with(
                "failed to deserialize parameters: argument `capture` is given more than once: "
            ),
            "{text}"
        );
    }
    s.send_raw(
        br#"{"jsonrpc":"2.0","id":102,"method":"tools/call","params":{"name":"compare_captures","arguments":{"base":"game.sgpt","cand":"game.sgpt","mode":"diff","base":"x","mode":"gate"}}}"#,
    );
    let answer = s.next();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "failed to deserialize parameters: arguments `base` and `mode` are given more than once: "
        ),
        "{text}"
    );
    s.send_raw(
        br#"{"jsonrpc":"2.0","id":103,"method":"tools/call","params":{"name":"summarize_capture","name":"find_hitches","arguments":{"capture":"game.sgpt"}}}"#,
    );
    let answer = s.next();
    assert_eq!(answer["id"], 103, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid params: tools/call: `params.name` is given more than once"),
        "{answer}"
    );
    assert!(
        !dir.path(".framewise").exists(),
        "a refused call runs nothing (no report written)"
    );
    // Given once, the call runs.
    let r = s.call("summarize_capture", json!({"capture": "game.sgpt"}));
    assert_eq!(structured(&r)["verdict"], "pass");
    assert_eq!(s.close(), Some(0));
}
