//! `framewise doctor`: what this machine and this build can and cannot measure.
//!
//! The CPU clock is not guessed: doctor starts a real recorder session into memory (no
//! frames), stops it, and reads back the clock the recorder declared in META — the same
//! choice a game linking this build would get (the time-stamp counter when the kernel
//! trusts it, else the monotonic clock). The GPU is not guessed either: in a build with the
//! `gpu` feature doctor opens a headless device exactly as `framewise demo --gpu` and
//! framewise-wgpu do, and reports the adapter, its type (the timing regime) and which
//! timestamp kinds it writes. Everything this build cannot do is listed under
//! `degraded` with the reason; nothing is degraded silently.
//!
//! Exit: 0 reported (degraded features are data, not failure); 4 when it cannot run.

use std::io::{Cursor, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::output::{self, OutputArgs, Report};
use crate::table::{Align, Table, NONE};

/// `framewise doctor`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub output: OutputArgs,
}

/// An in-memory, seekable sink the probe session writes to and doctor reads back.
#[derive(Clone, Default)]
struct SharedBuffer(Arc<Mutex<Cursor<Vec<u8>>>>);

impl SharedBuffer {
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Cursor<Vec<u8>>) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let mut guard = self
            .0
            .lock()
            .map_err(|_| std::io::Error::other("probe buffer lock poisoned"))?;
        f(&mut guard)
    }

    fn bytes(&self) -> Vec<u8> {
        self.with(|c| Ok(c.get_ref().clone())).unwrap_or_default()
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.with(|c| c.write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Seek for SharedBuffer {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.with(|c| c.seek(pos))
    }
}

/// The clock the recorder declares, read back from a probe session's META.
fn probe_clock() -> Result<(String, f64), String> {
    let buffer = SharedBuffer::default();
    let session = framewise::Session::builder()
        .writer_mode(framewise::WriterMode::Lossless)
        .note("framewise doctor probe")
        .start(framewise::Sink::seekable(buffer.clone()))
        .map_err(|e| format!("the recorder could not start a probe session: {e}"))?;
    session
        .stop()
        .map_err(|e| format!("the recorder's probe session did not stop cleanly: {e}"))?;
    let capture = framewise_format::read::from_bytes(buffer.bytes())
        .map_err(|e| format!("the probe capture does not read back: {e}"))?;
    let meta = capture
        .meta()
        .ok_or_else(|| "the probe capture has no META".to_owned())?;
    Ok((meta.cpu_clock.source.clone(), meta.cpu_clock.resolution_ns))
}

fn environment() -> Value {
    use framewise::env;
    let names = [
        env::CAPTURE,
        env::FRAMES,
        env::LEVEL,
        env::NOTE,
        env::BUILD,
        env::WRITER,
        env::FIXED_DT,
        env::GOLDEN_FRAME,
    ];
    let set: serde_json::Map<String, Value> = names
        .iter()
        .filter_map(|n| std::env::var_os(n).map(|v| ((*n).to_owned(), json!(v.to_string_lossy()))))
        .collect();
    let error = env::EnvConfig::from_env().err().map(|e| e.to_string());
    json!({"set": set, "error": error})
}

/// The GPU as `framewise demo --gpu` (and so framewise-wgpu) would open it: the
/// `gpu_timestamps` and `timing_regime` blocks, with what is missing added to `degraded`.
fn probe_gpu(degraded: &mut Vec<Value>) -> (Value, Value) {
    let cpu_only = |why: &str| {
        json!({
            "grade": "hardware",
            "reason": format!("CPU-only: {why}; CPU timing is graded hardware (docs/CONCEPTS.md#truth-grades)"),
        })
    };
    let probe = match framewise_demo::gpu::probe() {
        Ok(probe) => probe,
        Err(error) => {
            let built = !matches!(error, framewise_demo::DemoError::GpuNotBuilt);
            let reason = if built {
                format!(
                    "no GPU device could be opened, so no GPU timestamps can be recorded: {error}"
                )
            } else {
                "this build of the CLI cannot open a GPU (it was built without the `gpu` feature: `cargo build --release -p framewise-cli --features gpu`); a game times its passes by linking framewise-wgpu".to_owned()
            };
            degraded.push(json!({"feature": "gpu-timestamps", "reason": reason}));
            let gpu = json!({
                "built": built,
                "supported": false,
                "adapter": Value::Null,
                "timestamp_period_ns": Value::Null,
                "kinds": Value::Null,
                "reason": reason,
            });
            let why = if built {
                "no GPU here"
            } else {
                "no GPU probe in this build"
            };
            return (gpu, cpu_only(why));
        }
    };
    let kind = |support: &Result<(), String>| match support {
        Ok(()) => json!({"enabled": true, "reason": Value::Null}),
        Err(reason) => json!({"enabled": false, "reason": reason}),
    };
    let supported = probe.pass_timestamps.is_ok();
    let reason = match &probe.pass_timestamps {
        Ok(()) => Value::Null,
        Err(why) => {
            let reason = format!(
                "{} has no pass timestamps ({why}): passes are recorded without GPU times",
                probe.adapter
            );
            degraded.push(json!({"feature": "gpu-timestamps", "reason": reason}));
            json!(reason)
        }
    };
    if supported && probe.adapter_type != "hardware" {
        degraded.push(json!({
            "feature": "gpu-timing-regime",
            "reason": format!(
                "the GPU is a {} adapter, {}: its pass times are graded {}, and timing comparisons with hardware-timed captures are refused (incomparable)",
                probe.adapter_type, probe.adapter, probe.adapter_type
            ),
        }));
    }
    let gpu = json!({
        "built": true,
        "supported": supported,
        "adapter": {
            "name": probe.adapter,
            "vendor": probe.vendor,
            "driver": probe.driver,
            "type": probe.adapter_type,
            "backend": probe.backend,
        },
        "timestamp_period_ns": if supported { json!(probe.timestamp_period_ns) } else { Value::Null },
        "kinds": {
            "passes": kind(&probe.pass_timestamps),
            "inside_encoders": kind(&probe.encoder_timestamps),
            "inside_passes": kind(&probe.in_pass_timestamps),
        },
        "reason": reason,
    });
    let regime = if supported {
        json!({
            "grade": probe.adapter_type,
            "reason": format!(
                "GPU work timed on this {} adapter, {}, is graded {}; CPU-only captures are graded hardware (docs/CONCEPTS.md#truth-grades)",
                probe.adapter_type, probe.adapter, probe.adapter_type
            ),
        })
    } else {
        cpu_only("this GPU cannot be timed")
    };
    (gpu, regime)
}

/// Builds the report.
fn report() -> Value {
    let mut degraded: Vec<Value> = Vec::new();
    let cpu_clock = match probe_clock() {
        Ok((source, resolution_ns)) => {
            let declared = resolution_ns > 0.0;
            if !declared {
                degraded.push(json!({
                    "feature": "cpu-clock-resolution",
                    "reason": "the monotonic clock's resolution is not declared by this platform; timestamps are nanosecond-denominated but their true granularity is unknown",
                }));
            }
            json!({
                "source": source,
                "resolution_ns": if declared { json!(resolution_ns) } else { Value::Null },
                "resolution_declared": declared,
                "error": Value::Null,
            })
        }
        Err(error) => {
            degraded.push(json!({"feature": "cpu-clock", "reason": error}));
            json!({"source": Value::Null, "resolution_ns": Value::Null, "resolution_declared": false, "error": error})
        }
    };
    let (gpu_timestamps, timing_regime) = probe_gpu(&mut degraded);
    let incident_reason = "this build's recorder has no incident log (.framewise/perf.jsonl): hitches are found after the fact by `framewise hitches`, not written as they happen";
    degraded.push(json!({"feature": "incident-log", "reason": incident_reason}));
    degraded.push(json!({
        "feature": "verbs",
        "reason": "not in this build: bench, check, init, mcp",
    }));
    json!({
        "schema": "framewise.doctor/1",
        "build": {
            "version": env!("CARGO_PKG_VERSION"),
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
            "target_arch": std::env::consts::ARCH,
            "target_os": std::env::consts::OS,
        },
        "cpu_clock": cpu_clock,
        "gpu_timestamps": gpu_timestamps,
        "timing_regime": timing_regime,
        "incident_log": {"state": "unavailable", "reason": incident_reason},
        "environment": environment(),
        "degraded": degraded,
        "limits": [
            "GPU times are per pass, not per draw",
            "timestamps are what the device reported, quantized where the platform quantizes them, never corrected",
            "attribution ranks scopes; it does not sum to the excess",
            "a motion monitor cannot see a pure rotation pop, or a camera pop under look input",
            "CPU time inside a scope is wall time, not on-CPU time",
        ],
    })
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[])?;
    output::emit(&args.output, &DoctorView { json: report() })?;
    Ok(0)
}

struct DoctorView {
    json: Value,
}

fn s(v: &Value) -> String {
    match v {
        Value::Null => NONE.to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl DoctorView {
    fn rows(&self) -> Table {
        let j = &self.json;
        let b = &j["build"];
        let c = &j["cpu_clock"];
        let mut t = Table::new(&["what", "state"]).align(1, Align::Left);
        t.row(vec![
            "build".into(),
            format!(
                "framewise {} ({}, {}-{})",
                s(&b["version"]),
                s(&b["profile"]),
                s(&b["target_arch"]),
                s(&b["target_os"])
            ),
        ]);
        t.row(vec![
            "cpu clock".into(),
            if c["error"].is_null() {
                s(&c["source"])
            } else {
                format!("unknown: {}", s(&c["error"]))
            },
        ]);
        t.row(vec![
            "cpu clock resolution".into(),
            if c["resolution_declared"] == true {
                format!("{:.3} ns", c["resolution_ns"].as_f64().unwrap_or(0.0))
            } else {
                "not declared by the platform".into()
            },
        ]);
        let g = &j["gpu_timestamps"];
        let a = &g["adapter"];
        t.row(vec![
            "gpu".into(),
            match (&g["built"], a.is_null()) {
                (Value::Bool(false), _) => "not probed: built without the `gpu` feature".into(),
                (_, true) => "none".into(),
                (_, false) => format!(
                    "{} · {} · {} adapter",
                    s(&a["name"]),
                    s(&a["backend"]),
                    s(&a["type"])
                ),
            },
        ]);
        let kinds: Vec<String> = ["passes", "inside_encoders", "inside_passes"]
            .iter()
            .map(|k| {
                let on = g["kinds"][k]["enabled"] == true;
                format!("{} {}", k.replace('_', " "), if on { "yes" } else { "no" })
            })
            .collect();
        t.row(vec![
            "gpu timestamps".into(),
            if g["supported"] == true {
                format!(
                    "{} · period {} ns",
                    kinds.join(", "),
                    s(&g["timestamp_period_ns"])
                )
            } else {
                "none (see degraded)".into()
            },
        ]);
        t.row(vec![
            "timing regime".into(),
            if a.is_null() || g["supported"] != true {
                format!("{} (CPU-only)", s(&j["timing_regime"]["grade"]))
            } else {
                format!(
                    "{} for GPU-timed captures · hardware for CPU-only ones",
                    s(&j["timing_regime"]["grade"])
                )
            },
        ]);
        t.row(vec![
            "incident log".into(),
            format!(
                "{}: not in this build's recorder",
                s(&j["incident_log"]["state"])
            ),
        ]);
        let env = &j["environment"];
        let set: Vec<String> = env["set"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| format!("{k}={}", s(v))).collect())
            .unwrap_or_default();
        t.row(vec![
            "FRAMEWISE_* harness".into(),
            match (&env["error"], set.is_empty()) {
                (Value::String(e), _) => format!("invalid: {e}"),
                (_, true) => "not set".into(),
                (_, false) => set.join(" "),
            },
        ]);
        t
    }

    fn lists(&self, out: &mut String, heading: &str, bullet: &str) {
        out.push_str(&format!("\n{heading}degraded\n"));
        for d in self.json["degraded"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "{bullet}{}: {}\n",
                s(&d["feature"]),
                s(&d["reason"])
            ));
        }
        out.push_str(&format!("\n{heading}standing limits\n"));
        for l in self.json["limits"].as_array().into_iter().flatten() {
            out.push_str(&format!("{bullet}{}\n", s(l)));
        }
    }
}

impl Report for DoctorView {
    fn json(&self) -> anyhow::Result<Value> {
        Ok(self.json.clone())
    }

    fn console(&self, out: &mut String) {
        out.push_str("framewise doctor: what this machine and build can measure\n\n");
        self.rows().console(out, 2);
        self.lists(out, "", "  ");
    }

    fn markdown(&self, out: &mut String) {
        out.push_str("### framewise doctor\n\n");
        self.rows().markdown(out);
        self.lists(out, "#### ", "- ");
    }
}
