//! `framewise mcp`: a real MCP session over the child's stdin/stdout, driven by hand as a
//! client would (JSON-RPC lines): initialize, list the tools, call each, the error cases.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{write_game, Dir, Game};

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
        let mut child = Command::new(env!("CARGO_BIN_EXE_framewise"))
            .arg("mcp")
            .current_dir(dir.tmp.path())
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
        let mut session = Self {
            child,
            stdin,
            lines,
            next_id: 1,
        };
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

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
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

    /// Closes stdin and returns the server's exit code.
    fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        self.child.wait().unwrap().code()
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
        content["exit_code"].as_i64().unwrap(),
        "{argv:?}"
    );
    assert_eq!(report, cli.json(), "{argv:?}: the report is the CLI's JSON");
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
            "compare_captures",
            "find_hitches",
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
