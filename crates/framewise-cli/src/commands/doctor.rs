//! `framewise doctor`: what this machine and this build can and cannot measure.
//!
//! The CPU clock is not guessed: doctor starts a real recorder session into memory (no
//! frames), stops it, and reads back the clock the recorder declared in META — the same
//! choice a game linking this build would get (the time-stamp counter when the kernel
//! trusts it, else the monotonic clock). The GPU is not guessed either: in a build with the
//! `gpu` feature doctor opens a headless device with framewise-wgpu's probe, as a program
//! timing its passes (and `framewise demo --gpu`) would, and reports the adapter, its type
//! (the timing regime) and which timestamp kinds it writes; without the feature it says
//! that GPU support is not compiled in. Everything this build cannot do is listed under
//! `degraded` with the reason; nothing is degraded silently.
//!
//! Exit: 0 reported (degraded features are data, not failure); 4 when it cannot run.

use std::io::{Cursor, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use std::collections::BTreeMap;

use anyhow::Context;
use serde::Serialize;

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

/// The clock the recorder declares, read back from a probe session's META. The probe keeps
/// no incident log: run in a game's repository it would otherwise overwrite the game's
/// `.framewise/profile.json` with an empty session and append its session-end to perf.jsonl.
fn probe_clock() -> Result<(String, f64), String> {
    let buffer = SharedBuffer::default();
    let session = framewise::Session::builder()
        .writer_mode(framewise::WriterMode::Lossless)
        .incident_log(false)
        // Doctor reports what the recorder would warn about (an unknown `FRAMEWISE_*`
        // variable) in its own report, not as a stray stderr line.
        .on_warning(|_| {})
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

/// The document `framewise doctor --format json` prints (docs/cli/doctor.md, `framewise.doctor/1`).
#[derive(Clone, Debug, Serialize)]
struct Doctor {
    schema: &'static str,
    build: Build,
    cpu_clock: CpuClock,
    gpu_timestamps: GpuTimestamps,
    timing_regime: Reasoned<String>,
    incident_log: IncidentLog,
    environment: Environment,
    degraded: Vec<Degraded>,
    limits: Vec<&'static str>,
}

/// This binary.
#[derive(Clone, Debug, Serialize)]
struct Build {
    version: &'static str,
    profile: &'static str,
    target_arch: &'static str,
    target_os: &'static str,
}

/// The recorder's clock, read back from a probe session.
#[derive(Clone, Debug, Serialize)]
struct CpuClock {
    source: Option<String>,
    /// `None` when the platform does not declare it.
    resolution_ns: Option<f64>,
    resolution_declared: bool,
    /// Why the probe failed; `None` when it ran.
    error: Option<String>,
}

/// What the GPU can time.
#[derive(Clone, Debug, Serialize)]
struct GpuTimestamps {
    /// False: this binary has no `gpu` feature, nothing was probed.
    built: bool,
    /// Pass timestamps are written on this GPU.
    supported: bool,
    adapter: Option<Adapter>,
    timestamp_period_ns: Option<f64>,
    kinds: Option<Kinds>,
    reason: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
struct Adapter {
    name: String,
    vendor: String,
    driver: String,
    #[serde(rename = "type")]
    adapter_type: &'static str,
    backend: String,
}

#[derive(Clone, Debug, Serialize)]
struct Kinds {
    passes: Kind,
    inside_encoders: Kind,
    inside_passes: Kind,
}

#[derive(Clone, Debug, Serialize)]
struct Kind {
    enabled: bool,
    reason: Option<String>,
}

impl Kind {
    #[cfg(feature = "gpu")]
    fn of(support: &Result<(), String>) -> Self {
        Self {
            enabled: support.is_ok(),
            reason: support.as_ref().err().cloned(),
        }
    }
}

/// A grade (or state) with its reason.
#[derive(Clone, Debug, Serialize)]
struct Reasoned<T> {
    grade: T,
    reason: String,
}

/// Whether a session started in this working directory would keep the live incident log.
#[derive(Clone, Debug, Serialize)]
struct IncidentLog {
    /// `on` (a directory was found), `off` (none), or `unusable` (one is named, but a
    /// session could not keep its log there).
    state: &'static str,
    /// The directory a session's log would go to; `None` when off.
    dir: Option<String>,
    reason: String,
}

impl IncidentLog {
    /// The recorder's own rule (`framewise_incidents::locate`): `FRAMEWISE_DIR`, else
    /// `.framewise/` in the working directory.
    fn here() -> Self {
        match framewise_incidents::locate(None) {
            None => Self::off(),
            Some(dir) => match unusable(&dir) {
                Some(why) => Self::unusable(&dir, &why),
                None => Self::on(&dir),
            },
        }
    }

    /// A directory is named, but a session could not keep its log there: `why`.
    fn unusable(dir: &std::path::Path, why: &str) -> Self {
        let shown = dir.display().to_string();
        let named = if std::env::var_os(framewise_incidents::DIR_ENV).is_some_and(|d| !d.is_empty())
        {
            "FRAMEWISE_DIR names"
        } else {
            "the incident log goes to"
        };
        Self {
            state: "unusable",
            reason: format!(
                "{named} {shown}, which cannot be used: {why}; a session started here keeps no incident log (it warns once and records on)"
            ),
            dir: Some(shown),
        }
    }

    /// A session would log into `dir`.
    fn on(dir: &std::path::Path) -> Self {
        let shown = dir.display().to_string();
        Self {
            state: "on",
            reason: format!(
                "a session started here writes its incident log (perf.jsonl, profile.json) into {shown}"
            ),
            dir: Some(shown),
        }
    }

    /// No directory: a session would keep no log.
    fn off() -> Self {
        Self {
            state: "off",
            dir: None,
            reason: "no .framewise/ in the working directory and FRAMEWISE_DIR is not set: a session started here keeps no incident log (framewise init scaffolds one)".to_owned(),
        }
    }
}

/// Why a session could not keep its incident log in `dir`, or `None` when it could: `dir`
/// is a directory (or nothing yet, below a directory: the session scaffolds it) whose
/// `perf.jsonl` is a file or nothing yet.
fn unusable(dir: &std::path::Path) -> Option<String> {
    let kind = |m: &std::fs::Metadata| {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_dir() {
            "a directory"
        } else if t.is_fifo() {
            "a FIFO"
        } else if t.is_socket() {
            "a socket"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else {
            "a file"
        }
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {
            let perf = dir.join(framewise_incidents::PERF_FILE);
            match std::fs::metadata(&perf) {
                Ok(m) if m.is_file() => None,
                Ok(m) => Some(format!(
                    "its {} is {}, not a file",
                    framewise_incidents::PERF_FILE,
                    kind(&m)
                )),
                Err(_) if std::fs::symlink_metadata(&perf).is_ok() => Some(format!(
                    "its {} is a link to nothing",
                    framewise_incidents::PERF_FILE
                )),
                Err(_) => None,
            }
        }
        Ok(m) => Some(format!("it is {}, not a directory", kind(&m))),
        Err(_) if std::fs::symlink_metadata(dir).is_ok() => {
            Some("it is a link to nothing".to_owned())
        }
        Err(_) => {
            // Made at a session's start, with its parents, below the nearest that exists.
            let mut above = dir.parent();
            while let Some(parent) = above.filter(|p| !p.as_os_str().is_empty()) {
                if let Ok(m) = std::fs::metadata(parent) {
                    return (!m.is_dir()).then(|| {
                        format!(
                            "it cannot be made: {} is {}, not a directory",
                            parent.display(),
                            kind(&m)
                        )
                    });
                }
                above = parent.parent();
            }
            None
        }
    }
}

/// The `FRAMEWISE_*` variables that are set, whether they parse, and those framewise does
/// not read.
#[derive(Clone, Debug, Serialize)]
struct Environment {
    /// Every variable framewise reads that is set: the harness's, `FRAMEWISE_DIR`,
    /// `FRAMEWISE_AUTOMATED`, an integration's.
    set: BTreeMap<String, String>,
    /// Every error of `errors`, joined with `; `; `None` when all parse.
    error: Option<String>,
    /// Why each variable that is set does not parse: the harness's, in the order of its
    /// table, then `FRAMEWISE_BISECT_AT` (framewise-bevy's rule).
    errors: Vec<String>,
    /// `FRAMEWISE_*` variables framewise does not read (misspelt ones, most likely).
    unknown: Vec<Unknown>,
}

/// A `FRAMEWISE_*` variable framewise does not read.
#[derive(Clone, Debug, Serialize)]
struct Unknown {
    name: String,
    /// The known name within a few edits of it, if any.
    nearest: Option<&'static str>,
}

/// A feature this machine or build cannot provide, and why.
#[derive(Clone, Debug, Serialize)]
struct Degraded {
    feature: &'static str,
    reason: String,
}

fn degraded(feature: &'static str, reason: impl Into<String>) -> Degraded {
    Degraded {
        feature,
        reason: reason.into(),
    }
}

/// framewise-bevy's variable: bisect the scene after this many updates.
const BISECT_AT: &str = "FRAMEWISE_BISECT_AT";

/// Why `FRAMEWISE_BISECT_AT`'s value does not parse, by framewise-bevy's rule
/// (`scene::bisect_updates`): blank is unset (the plugin's own setting holds); otherwise, trimmed,
/// a number of updates from 1 (`u64`), else the plugin says so on stderr and runs no bisection.
fn bisect_at_error(value: Option<&str>) -> Option<String> {
    let text = value?;
    if text.trim().is_empty() {
        return None;
    }
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 => None,
        _ => Some(format!(
            "environment variable {BISECT_AT}={text:?}: expected a number of updates (1 or more); framewise-bevy runs no bisection"
        )),
    }
}

fn environment() -> Environment {
    use framewise::env;
    let set = env::ALL
        .iter()
        .chain(env::OTHERS.iter())
        .filter_map(|n| {
            std::env::var_os(n).map(|v| ((*n).to_owned(), v.to_string_lossy().into_owned()))
        })
        .collect();
    let (_, errors) = env::EnvConfig::read(|name| std::env::var(name).ok());
    let mut errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
    // The integrations' variables that parse, after the harness's: framewise-bevy's.
    errors.extend(bisect_at_error(
        std::env::var_os(BISECT_AT)
            .map(|v| v.to_string_lossy().into_owned())
            .as_deref(),
    ));
    let unknown = env::unknown_variables_in_env()
        .into_iter()
        .map(|u| Unknown {
            name: u.name,
            nearest: u.nearest,
        })
        .collect();
    Environment {
        set,
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        errors,
        unknown,
    }
}

/// What the GPU probe found, or why nothing was probed.
enum GpuFound {
    /// This binary was built without the `gpu` feature: nothing was probed.
    #[cfg_attr(
        all(feature = "gpu", not(test)),
        expect(dead_code, reason = "a build with the `gpu` feature always probes")
    )]
    NotBuilt,
    /// No device could be opened; why, as framewise-wgpu said it.
    #[cfg_attr(
        all(not(feature = "gpu"), not(test)),
        expect(dead_code, reason = "only a build with the `gpu` feature probes")
    )]
    NoGpu(String),
    /// What framewise-wgpu's probe found.
    #[cfg(feature = "gpu")]
    Probed(framewise_wgpu::GpuProbe),
}

/// Opens the GPU as a program timing its passes with framewise-wgpu would
/// ([`framewise_wgpu::probe`]).
#[cfg(feature = "gpu")]
fn probe_gpu() -> GpuFound {
    match framewise_wgpu::probe() {
        Ok(probe) => GpuFound::Probed(probe),
        Err(error) => GpuFound::NoGpu(error.to_string()),
    }
}

/// This build has no GPU support compiled in.
#[cfg(not(feature = "gpu"))]
fn probe_gpu() -> GpuFound {
    GpuFound::NotBuilt
}

/// The `gpu_timestamps` and `timing_regime` blocks for what the GPU probe found, with what
/// is missing added to `degraded`.
fn gpu_blocks(
    found: GpuFound,
    degraded_out: &mut Vec<Degraded>,
) -> (GpuTimestamps, Reasoned<String>) {
    let (built, reason) = match found {
        #[cfg(feature = "gpu")]
        GpuFound::Probed(probe) => return probed_blocks(probe, degraded_out),
        GpuFound::NoGpu(error) => (
            true,
            format!("no GPU device could be opened, so no GPU timestamps can be recorded: {error}"),
        ),
        GpuFound::NotBuilt => (
            false,
            "GPU support is not compiled into this build of the CLI (it was built without the `gpu` feature: `cargo build --release -p framewise-cli --features gpu`); a game times its passes by linking framewise-wgpu".to_owned(),
        ),
    };
    degraded_out.push(degraded("gpu-timestamps", reason.clone()));
    let gpu = GpuTimestamps {
        built,
        supported: false,
        adapter: None,
        timestamp_period_ns: None,
        kinds: None,
        reason: Some(reason),
    };
    let why = if built {
        "no GPU here"
    } else {
        "GPU support is not compiled in"
    };
    (gpu, cpu_only(why))
}

/// The CPU-only grade's reason.
fn cpu_only(why: &str) -> Reasoned<String> {
    Reasoned {
        grade: "hardware".to_owned(),
        reason: format!(
            "CPU-only: {why}; CPU timing is graded hardware (docs/CONCEPTS.md#truth-grades)"
        ),
    }
}

/// [`gpu_blocks`] for a GPU that was opened.
#[cfg(feature = "gpu")]
fn probed_blocks(
    probe: framewise_wgpu::GpuProbe,
    degraded_out: &mut Vec<Degraded>,
) -> (GpuTimestamps, Reasoned<String>) {
    let supported = probe.pass_timestamps.is_ok();
    let reason = match &probe.pass_timestamps {
        Ok(()) => None,
        Err(why) => {
            let reason = format!(
                "{} has no pass timestamps ({why}): passes are recorded without GPU times",
                probe.adapter
            );
            degraded_out.push(degraded("gpu-timestamps", reason.clone()));
            Some(reason)
        }
    };
    if supported && probe.adapter_type != "hardware" {
        degraded_out.push(degraded(
            "gpu-timing-regime",
            format!(
                "the GPU is a {} adapter, {}: its pass times are graded {}, and timing comparisons with hardware-timed captures are refused (incomparable)",
                probe.adapter_type, probe.adapter, probe.adapter_type
            ),
        ));
    }
    let regime = if supported {
        Reasoned {
            grade: probe.adapter_type.to_owned(),
            reason: format!(
                "GPU work timed on this {} adapter, {}, is graded {}; CPU-only captures are graded hardware (docs/CONCEPTS.md#truth-grades)",
                probe.adapter_type, probe.adapter, probe.adapter_type
            ),
        }
    } else {
        cpu_only("this GPU cannot be timed")
    };
    let gpu = GpuTimestamps {
        built: true,
        supported,
        timestamp_period_ns: supported.then_some(probe.timestamp_period_ns),
        kinds: Some(Kinds {
            passes: Kind::of(&probe.pass_timestamps),
            inside_encoders: Kind::of(&probe.encoder_timestamps),
            inside_passes: Kind::of(&probe.in_pass_timestamps),
        }),
        reason,
        adapter: Some(Adapter {
            name: probe.adapter,
            vendor: probe.vendor,
            driver: probe.driver,
            adapter_type: probe.adapter_type,
            backend: probe.backend,
        }),
    };
    (gpu, regime)
}

/// The report for what the probes found.
fn report_of(
    clock: Result<(String, f64), String>,
    gpu_probe: GpuFound,
    environment: Environment,
    incident_log: IncidentLog,
) -> Doctor {
    let mut degraded_list: Vec<Degraded> = Vec::new();
    let cpu_clock = match clock {
        Ok((source, resolution_ns)) => {
            let declared = resolution_ns > 0.0;
            if !declared {
                degraded_list.push(degraded(
                    "cpu-clock-resolution",
                    "the monotonic clock's resolution is not declared by this platform; timestamps are nanosecond-denominated but their true granularity is unknown",
                ));
            }
            CpuClock {
                source: Some(source),
                resolution_ns: declared.then_some(resolution_ns),
                resolution_declared: declared,
                error: None,
            }
        }
        Err(error) => {
            degraded_list.push(degraded("cpu-clock", error.clone()));
            CpuClock {
                source: None,
                resolution_ns: None,
                resolution_declared: false,
                error: Some(error),
            }
        }
    };
    let (gpu_timestamps, timing_regime) = gpu_blocks(gpu_probe, &mut degraded_list);
    if incident_log.state == "unusable" {
        degraded_list.push(degraded("incident-log", incident_log.reason.clone()));
    }
    Doctor {
        schema: "framewise.doctor/1",
        build: Build {
            version: env!("CARGO_PKG_VERSION"),
            profile: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
            target_arch: std::env::consts::ARCH,
            target_os: std::env::consts::OS,
        },
        cpu_clock,
        gpu_timestamps,
        timing_regime,
        incident_log,
        environment,
        degraded: degraded_list,
        limits: vec![
            "GPU times are per pass, not per draw",
            "timestamps are what the device reported, quantized where the platform quantizes them, never corrected",
            "attribution ranks scopes; it does not sum to the excess",
            "a motion monitor cannot see a pure rotation pop, or a camera pop under look input",
            "CPU time inside a scope is wall time, not on-CPU time",
        ],
    }
}

/// Runs the verb.
pub fn run(args: Args) -> anyhow::Result<u8> {
    args.output.check_inputs(&[])?;
    let doctor = report_of(
        probe_clock(),
        probe_gpu(),
        environment(),
        IncidentLog::here(),
    );
    output::emit(&args.output, &DoctorView { doctor })?;
    Ok(0)
}

struct DoctorView {
    doctor: Doctor,
}

fn shown<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| NONE.to_owned(), |v| v.to_string())
}

impl DoctorView {
    fn rows(&self) -> Table {
        let d = &self.doctor;
        let b = &d.build;
        let c = &d.cpu_clock;
        let mut t = Table::new(&["what", "state"]).align(1, Align::Left);
        t.row(vec![
            "build".into(),
            format!(
                "framewise {} ({}, {}-{})",
                b.version, b.profile, b.target_arch, b.target_os
            ),
        ]);
        t.row(vec![
            "cpu clock".into(),
            match &c.error {
                None => shown(c.source.as_deref()),
                Some(error) => format!("unknown: {error}"),
            },
        ]);
        t.row(vec![
            "cpu clock resolution".into(),
            match c.resolution_ns {
                Some(ns) if c.resolution_declared => format!("{ns:.3} ns"),
                _ => "not declared by the platform".into(),
            },
        ]);
        let g = &d.gpu_timestamps;
        t.row(vec![
            "gpu".into(),
            match (g.built, &g.adapter) {
                (false, _) => "GPU support not compiled in (build with `--features gpu`)".into(),
                (true, None) => "none".into(),
                (true, Some(a)) => {
                    format!("{} · {} · {} adapter", a.name, a.backend, a.adapter_type)
                }
            },
        ]);
        t.row(vec![
            "gpu timestamps".into(),
            match &g.kinds {
                Some(k) if g.supported => {
                    let kinds: Vec<String> = [
                        ("passes", &k.passes),
                        ("inside encoders", &k.inside_encoders),
                        ("inside passes", &k.inside_passes),
                    ]
                    .iter()
                    .map(|(name, kind)| {
                        format!("{name} {}", if kind.enabled { "yes" } else { "no" })
                    })
                    .collect();
                    format!(
                        "{} · period {} ns",
                        kinds.join(", "),
                        // Spelled as in the JSON (`1.0`, not `1`).
                        shown(g.timestamp_period_ns.map(serde_json::Value::from))
                    )
                }
                _ => "none (see degraded)".into(),
            },
        ]);
        t.row(vec![
            "timing regime".into(),
            if g.adapter.is_none() || !g.supported {
                format!("{} (CPU-only)", d.timing_regime.grade)
            } else {
                format!(
                    "{} for GPU-timed captures · hardware for CPU-only ones",
                    d.timing_regime.grade
                )
            },
        ]);
        let log = &d.incident_log;
        t.row(vec![
            "incident log".into(),
            match (&log.dir, log.state) {
                (Some(_), "unusable") => format!("unusable: {}", log.reason),
                (Some(dir), _) => format!("on: {dir}"),
                (None, _) => {
                    "off: no .framewise/ here (framewise init) and FRAMEWISE_DIR not set".into()
                }
            },
        ]);
        let env = &d.environment;
        let set: Vec<String> = env.set.iter().map(|(k, v)| format!("{k}={v}")).collect();
        t.row(vec![
            "FRAMEWISE_* harness".into(),
            match (&env.error, set.is_empty()) {
                (Some(e), _) => format!("invalid: {e}"),
                (None, true) => "not set".into(),
                (None, false) => set.join(" "),
            },
        ]);
        if !env.unknown.is_empty() {
            let unknown: Vec<String> = env
                .unknown
                .iter()
                .map(|u| match u.nearest {
                    Some(nearest) => format!("{} (did you mean {nearest}?)", u.name),
                    None => u.name.clone(),
                })
                .collect();
            t.row(vec![
                "FRAMEWISE_* unknown".into(),
                format!("not read by framewise: {}", unknown.join(", ")),
            ]);
        }
        t
    }

    fn lists(&self, out: &mut String, heading: &str, bullet: &str) {
        out.push_str(&format!("\n{heading}degraded\n"));
        for d in &self.doctor.degraded {
            out.push_str(&format!("{bullet}{}: {}\n", d.feature, d.reason));
        }
        out.push_str(&format!("\n{heading}standing limits\n"));
        for l in &self.doctor.limits {
            out.push_str(&format!("{bullet}{l}\n"));
        }
    }
}

impl Report for DoctorView {
    fn json(&self) -> anyhow::Result<serde_json::Value> {
        serde_json::to_value(&self.doctor).context("serializing the doctor report")
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

#[cfg(test)]
mod tests {
    use super::*;

    /// framewise-bevy's rule (`scene::bisect_updates`'s test): the same values pass and fail.
    #[test]
    fn bisect_at_is_judged_by_framewise_bevys_rule() {
        for good in [None, Some(""), Some("  "), Some("120"), Some(" 7\n")] {
            assert_eq!(bisect_at_error(good), None, "{good:?}");
        }
        let max = u64::MAX.to_string();
        assert_eq!(bisect_at_error(Some(&max)), None);
        for bad in [
            "0",
            "-1",
            "-3",
            "1.5",
            "ten",
            "abc",
            "1e3",
            "18446744073709551616",
            "+-1",
        ] {
            let error = bisect_at_error(Some(bad)).expect(bad);
            assert!(
                error.starts_with(&format!(
                    "environment variable FRAMEWISE_BISECT_AT={bad:?}: expected a number of updates (1 or more)"
                )),
                "{error}"
            );
        }
    }

    #[cfg(feature = "gpu")]
    fn lavapipe() -> GpuFound {
        GpuFound::Probed(framewise_wgpu::GpuProbe {
            adapter: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            vendor: "0x10005".into(),
            driver: "llvmpipe · Mesa 22.3.6".into(),
            adapter_type: "software",
            backend: "vulkan".into(),
            timestamp_period_ns: 1.0,
            pass_timestamps: Ok(()),
            encoder_timestamps: Ok(()),
            in_pass_timestamps: Err("TIMESTAMP_QUERY_INSIDE_PASSES is absent".into()),
        })
    }

    /// The document for fixed probe results; the build block (this binary's version and
    /// profile) is the one machine-specific part left, and is redacted.
    fn document(clock: Result<(String, f64), String>, gpu: GpuFound) -> serde_json::Value {
        let environment = Environment {
            set: BTreeMap::from([("FRAMEWISE_FRAMES".to_owned(), "600".to_owned())]),
            error: None,
            errors: Vec::new(),
            unknown: Vec::new(),
        };
        let mut json =
            serde_json::to_value(report_of(clock, gpu, environment, IncidentLog::off())).unwrap();
        json["build"] = serde_json::json!("[build]");
        json
    }

    #[cfg(feature = "gpu")]
    #[test]
    fn doctor_json_with_a_software_gpu() {
        let json = document(Ok(("tsc".into(), 0.4)), lavapipe());
        insta::assert_json_snapshot!("doctor_json_software_gpu", json);
    }

    #[test]
    fn doctor_json_without_a_gpu_or_a_declared_resolution() {
        let json = document(
            Ok(("monotonic".into(), 0.0)),
            GpuFound::NoGpu("no GPU adapter found".into()),
        );
        insta::assert_json_snapshot!("doctor_json_no_gpu", json);
        let json = document(
            Err("the recorder could not start a probe session: busy".into()),
            GpuFound::NotBuilt,
        );
        insta::assert_json_snapshot!("doctor_json_gpu_not_built", json);
    }
}
