//! Fixtures and helpers: deterministic synthetic captures written with
//! `framewise_format::Writer`, `.litecap` and Chrome JSON files, running the built binary,
//! and redaction for snapshots.

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use framewise_format::model::{
    AdapterInfo, AdapterType, CounterKind, CounterValue, CpuSpan, Frame, Lane, Meta, Symbol,
    SymbolKind, SymbolTable,
};
use framewise_format::Writer;
use serde_json::Value;

/// The result of one run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(out: Output) -> Self {
        Self {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// stdout parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }

    /// Asserts the exit code, showing both streams when it differs.
    pub fn expect(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "exit code {} (expected {code})\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// Asserts stderr is exactly one line, with no panic or backtrace.
    pub fn one_error_line(&self) -> &str {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "expected one stderr line, got:\n{}",
            self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        assert!(!self.stderr.contains("backtrace"), "{}", self.stderr);
        lines[0]
    }
}

/// A temporary directory with the helpers the tests need.
pub struct Dir {
    pub tmp: tempfile::TempDir,
}

impl Dir {
    pub fn new() -> Self {
        Self {
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// Runs `framewise` with `args` in this directory (relative paths resolve here).
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[])
    }

    /// Runs with extra environment variables.
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_framewise"));
        cmd.args(args);
        self.run_command(cmd, env)
    }

    /// Runs with the process's address space limited to `kib` KiB (`ulimit -v`): a run that
    /// reads an endless input into memory fails there (an allocation refused, an abort)
    /// rather than running until the machine runs out.
    pub fn run_address_space_limited(&self, args: &[&str], kib: u64) -> Run {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &format!("ulimit -v {kib} && exec \"$0\" \"$@\"")])
            .arg(env!("CARGO_BIN_EXE_framewise"))
            .args(args);
        self.run_command(cmd, &[])
    }

    /// Runs with stdin fed from the file `name` in this directory: through a pipe (`cat
    /// NAME | framewise …`) when `pipe`, else the file itself (`framewise … < NAME`).
    pub fn run_stdin_from(&self, name: &str, pipe: bool, args: &[&str]) -> Run {
        if pipe {
            let mut cmd = Command::new("sh");
            cmd.args(["-c", "f=$1; shift; cat \"$f\" | \"$0\" \"$@\""])
                .arg(env!("CARGO_BIN_EXE_framewise"))
                .arg(name)
                .args(args);
            return self.run_command(cmd, &[]);
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_framewise"));
        cmd.args(args)
            .stdin(std::fs::File::open(self.path(name)).unwrap());
        self.run_command(cmd, &[])
    }

    fn run_command(&self, mut cmd: Command, env: &[(&str, &str)]) -> Run {
        cmd.current_dir(self.tmp.path())
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("RUST_BACKTRACE")
            // The `.framewise/` verbs read it; a tester's own must not leak in.
            .env_remove("FRAMEWISE_DIR")
            // Incident records are stamped `automated` under CI or the bench harness, and the
            // catalogue leaves those out: the tests must read the same on CI as on a desk.
            .env_remove("CI")
            .env_remove("FRAMEWISE_AUTOMATED")
            .env("NO_COLOR", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        Run::from(cmd.output().unwrap())
    }

    /// Runs with stdout a pipe whose reader takes `read_bytes` bytes and closes it (`| head
    /// -c N`; 0 closes it before the binary writes). The exit code and stderr.
    pub fn run_closing_stdout(&self, args: &[&str], read_bytes: usize) -> (Option<i32>, String) {
        use std::io::Read;
        use std::process::Stdio;
        let mut child = Command::new(env!("CARGO_BIN_EXE_framewise"))
            .args(args)
            .current_dir(self.tmp.path())
            .env_remove("FRAMEWISE_DIR")
            .env_remove("CI")
            .env_remove("FRAMEWISE_AUTOMATED")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut head = vec![0u8; read_bytes];
        stdout.read_exact(&mut head).unwrap();
        drop(stdout);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (child.wait().unwrap().code(), stderr)
    }

    /// Temporary files (`*.partial`) left in the directory.
    pub fn partials(&self) -> Vec<String> {
        std::fs::read_dir(self.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".partial"))
            .collect()
    }

    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

/// How a synthetic game capture is shaped.
#[derive(Clone, Debug)]
pub struct Game {
    pub frames: u64,
    /// Extra render time every frame, ns (a regression).
    pub render_extra_ns: u64,
    /// Extra draw calls every frame.
    pub draw_calls_extra: i64,
    /// Frames with a 38 ms render and two pipelines created.
    pub long_frames: Vec<u64>,
    /// Leave out the `pipelines_created` counter altogether.
    pub without_pipelines_counter: bool,
    /// Declare a software GPU adapter (a different timing regime).
    pub software_adapter: bool,
    /// Also record what differs between two runs of one workload, as in the demo: a sum
    /// counter `particles` and a gauge `camera.z_mm` whose values depend on this run number.
    pub run: Option<u64>,
    /// Frames in which a short `load_level` scope also runs (after `render`): a scope with
    /// few frames behind it, last by total.
    pub load_frames: Vec<u64>,
}

impl Default for Game {
    fn default() -> Self {
        Self {
            frames: 300,
            render_extra_ns: 0,
            draw_calls_extra: 0,
            long_frames: vec![100, 200],
            without_pipelines_counter: false,
            software_adapter: false,
            run: None,
            load_frames: vec![],
        }
    }
}

impl Game {
    /// A capture with no frame at all: nothing to judge.
    pub fn empty() -> Self {
        Self {
            frames: 0,
            ..Self::default()
        }
    }

    /// The default game with 4 ms more render work and 30 more draw calls a frame: a
    /// regression for `gate`.
    pub fn regressed() -> Self {
        Self {
            render_extra_ns: 4_000_000,
            draw_calls_extra: 30,
            ..Self::default()
        }
    }

    /// The default game without its long frames: not one hitch.
    pub fn steady() -> Self {
        Self {
            long_frames: vec![],
            ..Self::default()
        }
    }
}

const THREAD: u32 = 1;
const UPDATE: u32 = 2;
const RENDER: u32 = 3;
const DRAW_CALLS: u32 = 4;
const PIPELINES: u32 = 5;
const PHASE: u32 = 6;
const PARTICLES: u32 = 7;
const CAMERA_Z: u32 = 8;
const LOAD_LEVEL: u32 = 9;

fn symbols(g: &Game) -> SymbolTable {
    let mut s = SymbolTable::new();
    let mut add = |id, kind, name: &str| {
        s.insert(Symbol {
            id,
            kind,
            name: name.into(),
        });
    };
    add(THREAD, SymbolKind::Thread, "main");
    add(
        UPDATE,
        SymbolKind::Scope {
            file: "src/game.rs".into(),
            line: 10,
        },
        "update",
    );
    add(
        RENDER,
        SymbolKind::Scope {
            file: "src/render.rs".into(),
            line: 42,
        },
        "render",
    );
    add(
        DRAW_CALLS,
        SymbolKind::Counter(CounterKind::Sum),
        "draw_calls",
    );
    add(
        PIPELINES,
        SymbolKind::Counter(CounterKind::Sum),
        "pipelines_created",
    );
    add(PHASE, SymbolKind::Phase, "play");
    if !g.load_frames.is_empty() {
        add(
            LOAD_LEVEL,
            SymbolKind::Scope {
                file: "src/level.rs".into(),
                line: 7,
            },
            "load_level",
        );
    }
    if g.run.is_some() {
        add(
            PARTICLES,
            SymbolKind::Counter(CounterKind::Sum),
            "particles",
        );
        add(
            CAMERA_Z,
            SymbolKind::Counter(CounterKind::Gauge),
            "camera.z_mm",
        );
    }
    s
}

fn meta(g: &Game) -> Meta {
    Meta {
        adapter: g.software_adapter.then(|| AdapterInfo {
            vendor: "Mesa".into(),
            device: "llvmpipe".into(),
            driver: "24.0".into(),
            adapter_type: AdapterType::Software,
            backend: "vulkan".into(),
        }),
        session_id: [7; 16],
        wall_clock_start_unix_ns: 1_700_000_000_000_000_000,
        capture_level: 0,
        build_id: "test-build".into(),
        writer: "framewise-cli tests".into(),
        ..Meta::default()
    }
}

/// The frames of a synthetic game: deterministic, ~12–14 ms periods, two scopes, two
/// counters, and long frames where pipelines were created.
pub fn game_frames(g: &Game) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut begin_ns = 1_000_000u64;
    for i in 0..g.frames {
        let long = g.long_frames.contains(&i);
        let update_ns = 3_000_000 + (i % 3) * 250_000;
        let render_ns = if long {
            38_000_000
        } else {
            5_000_000 + (i % 4) * 250_000 + g.render_extra_ns
        };
        let update_start = begin_ns + 500_000;
        let render_start = update_start + update_ns + 200_000;
        let end_ns = render_start + render_ns + 300_000;
        let gap_ns = 2_000_000 + (i % 5) * 100_000;
        let mut counters = vec![CounterValue {
            counter: DRAW_CALLS,
            value: 120 + (i % 2) as i64 + g.draw_calls_extra,
        }];
        if !g.without_pipelines_counter {
            counters.push(CounterValue {
                counter: PIPELINES,
                value: if long { 2 } else { 0 },
            });
        }
        if let Some(run) = g.run {
            // Particles alive and the camera's position drift from run to run.
            counters.push(CounterValue {
                counter: PARTICLES,
                value: 5_000 + (i % 50) as i64 + run as i64 * 7,
            });
            counters.push(CounterValue {
                counter: CAMERA_Z,
                value: 91_000 + (i * 3) as i64 + run as i64,
            });
        }
        let mut spans = vec![
            CpuSpan {
                scope: UPDATE,
                depth: 0,
                start_ns: update_start,
                end_ns: update_start + update_ns,
            },
            CpuSpan {
                scope: RENDER,
                depth: 0,
                start_ns: render_start,
                end_ns: render_start + render_ns,
            },
        ];
        if g.load_frames.contains(&i) {
            let load_start = render_start + render_ns + 50_000;
            spans.push(CpuSpan {
                scope: LOAD_LEVEL,
                depth: 0,
                start_ns: load_start,
                end_ns: load_start + 100_000,
            });
        }
        frames.push(Frame {
            index: i,
            phase: Some(PHASE),
            cpu_begin_ns: begin_ns,
            cpu_end_ns: end_ns,
            lanes: vec![Lane {
                thread: THREAD,
                spans,
                dropped_spans: 0,
            }],
            counters,
            ..Frame::default()
        });
        begin_ns = end_ns + gap_ns;
    }
    frames
}

/// Writes a closed `.sgpt` capture of `g`.
pub fn write_game(path: &Path, g: &Game) {
    let syms = symbols(g);
    let file = std::fs::File::create(path).unwrap();
    let mut w = Writer::new(BufWriter::new(file), &meta(g), &syms).unwrap();
    for f in game_frames(g) {
        w.write_frame(&f, &syms).unwrap();
    }
    w.finish_and_close(&[]).unwrap();
}

/// Writes a closed `.sgpt` capture of `g` with a census record (`CENS`) carrying each of
/// `documents` after the frame of the same rank.
pub fn write_game_with_censuses(path: &Path, g: &Game, documents: &[String]) {
    let syms = symbols(g);
    let file = std::fs::File::create(path).unwrap();
    let mut w = Writer::new(BufWriter::new(file), &meta(g), &syms).unwrap();
    for (i, f) in game_frames(g).iter().enumerate() {
        w.write_frame(f, &syms).unwrap();
        if let Some(doc) = documents.get(i) {
            w.write_census(doc).unwrap();
        }
    }
    w.finish_and_close(&[]).unwrap();
}

/// Writes a closed capture, then cuts it at `keep` of the way through its records before
/// the directory (inside a frame record): the directory and the tail are lost. The cut is
/// placed by the header's directory offset, not the file length, so it lands among the
/// frames however large the directory is.
pub fn write_truncated_game(path: &Path, g: &Game, keep: f64) {
    write_game(path, g);
    let bytes = std::fs::read(path).unwrap();
    let directory_offset = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    assert!(directory_offset > 32 && directory_offset < bytes.len());
    let cut = 32 + ((directory_offset - 32) as f64 * keep) as usize;
    std::fs::write(path, &bytes[..cut]).unwrap();
}

/// A `.litecap` v4 buffer in lite-profiler's published layout: `frames` frames of about
/// 14 ms, phases `update` and `render`, a `drawCalls` counter, and a timeline.
pub fn litecap_v4(frames: usize, with_timeline: bool) -> Vec<u8> {
    let version: u8 = if with_timeline { 4 } else { 3 };
    let mut out = Vec::new();
    out.extend_from_slice(b"LCAP");
    out.push(version);
    out.extend_from_slice(&(frames as u32).to_le_bytes());
    out.push(2);
    let frame_ms: Vec<f32> = (0..frames).map(|i| 12.0 + (i % 4) as f32 * 0.5).collect();
    let update_ms: Vec<f32> = (0..frames).map(|i| 3.0 + (i % 3) as f32 * 0.25).collect();
    let render_ms: Vec<f32> = (0..frames).map(|i| 6.0 + (i % 2) as f32 * 0.5).collect();
    for v in frame_ms.iter().chain(&update_ms).chain(&render_ms) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let tag = |out: &mut Vec<u8>, t: &str| {
        out.push(t.len() as u8);
        out.extend_from_slice(t.as_bytes());
    };
    tag(&mut out, "update");
    tag(&mut out, "render");
    let meta = br#"{"label":"fixture","budgetMs":16.7}"#;
    out.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    out.extend_from_slice(meta);
    out.push(1);
    for i in 0..frames {
        out.extend_from_slice(&(100.0f32 + (i % 3) as f32).to_le_bytes());
    }
    tag(&mut out, "drawCalls");
    if with_timeline {
        let mut starts = Vec::with_capacity(frames);
        let mut t = 1000.0f64;
        for ms in &frame_ms {
            starts.push(t);
            t += f64::from(*ms) + 2.0;
        }
        out.extend_from_slice(&(frames as u32).to_le_bytes());
        for s in &starts {
            out.extend_from_slice(&s.to_le_bytes());
        }
        // Span lanes: update then render inside each frame.
        out.push(2);
        for (lane, offset, dur) in [("update", 0.5, &update_ms), ("render", 4.5, &render_ms)] {
            tag(&mut out, lane);
            out.extend_from_slice(&(frames as u32).to_le_bytes());
            for s in &starts {
                out.extend_from_slice(&(s + offset).to_le_bytes());
            }
            for (s, d) in starts.iter().zip(dur.iter()) {
                out.extend_from_slice(&(s + offset + f64::from(*d)).to_le_bytes());
            }
        }
        // One instant lane with one mark.
        out.push(1);
        tag(&mut out, "checkpoint");
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&(starts[frames / 2] + 1.0).to_le_bytes());
    }
    out
}

/// A Chrome trace (object form) with `frames` frames on thread 1: `frame` spans with
/// `update` and `render` children, a worker thread's `job` spans, and a counter.
pub fn chrome_trace(frames: u64) -> String {
    let mut events = vec![
        serde_json::json!({"ph": "M", "name": "process_name", "pid": 1, "tid": 1, "args": {"name": "game"}}),
        serde_json::json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}),
        serde_json::json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}}),
    ];
    let mut ts = 1000u64;
    for i in 0..frames {
        let update = 3000 + (i % 3) * 250;
        let render = 5000 + (i % 4) * 250;
        let dur = 500 + update + 200 + render + 300;
        events.push(serde_json::json!({"ph": "X", "name": "frame", "pid": 1, "tid": 1, "ts": ts, "dur": dur}));
        events.push(serde_json::json!({"ph": "X", "name": "update", "pid": 1, "tid": 1, "ts": ts + 500, "dur": update}));
        events.push(serde_json::json!({"ph": "B", "name": "render", "pid": 1, "tid": 1, "ts": ts + 700 + update}));
        events.push(serde_json::json!({"ph": "E", "name": "render", "pid": 1, "tid": 1, "ts": ts + 700 + update + render}));
        events.push(serde_json::json!({"ph": "X", "name": "job", "pid": 1, "tid": 2, "ts": ts + 600, "dur": 2000}));
        events.push(serde_json::json!({"ph": "C", "name": "draw_calls", "pid": 1, "tid": 1, "ts": ts + 100, "args": {"draw_calls": 120 + (i % 2)}}));
        ts += dur + 2000;
    }
    serde_json::json!({"traceEvents": events, "displayTimeUnit": "ms"}).to_string()
}

/// Replaces every float with `"[f64]"` and the temporary directory with `[dir]`: the
/// snapshots pin the schema, the integers and the words, not float noise or paths.
pub fn redact(value: &Value, dir: &Path) -> Value {
    let dir = dir.display().to_string();
    match value {
        Value::Number(n) if n.is_f64() => Value::String("[f64]".into()),
        Value::String(s) => Value::String(s.replace(&dir, "[dir]")),
        Value::Array(a) => Value::Array(a.iter().map(|v| redact(v, Path::new(&dir))).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), redact(v, Path::new(&dir))))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Text with the temporary directory replaced by `[dir]`.
pub fn redact_text(text: &str, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "[dir]")
}
