//! Adapter discovery: what this machine's GPU can time, found by opening it the way a
//! profiled program does (a headless device with every timestamp feature the adapter has,
//! [`HeadlessGpu::new`]) and asking [`GpuSetup`]. `framewise doctor` reports it; a program
//! can call it before deciding to time its passes.

use framewise::AdapterType;

use crate::{GpuSetup, HeadlessError, HeadlessGpu, Support};

/// What a GPU can time.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuProbe {
    /// The adapter's name (`llvmpipe (LLVM 15.0.6, 256 bits)` for lavapipe).
    pub adapter: String,
    /// The adapter's vendor.
    pub vendor: String,
    /// The driver's name and version, as wgpu reports them.
    pub driver: String,
    /// `hardware`, `software` or `unknown`: the timing regime of GPU work timed on it
    /// ([`regime_name`]).
    pub adapter_type: &'static str,
    /// The graphics backend (`vulkan`).
    pub backend: String,
    /// The queue's tick-to-nanosecond factor as the API declares it (declared with or
    /// without timestamps: Vulkan gives the device's period either way; whether they are
    /// written is `pass_timestamps`).
    pub timestamp_period_ns: f64,
    /// Pass timestamps: `Ok` when written, else why not.
    pub pass_timestamps: Result<(), String>,
    /// Timestamps inside command encoders (nested encoder scopes).
    pub encoder_timestamps: Result<(), String>,
    /// Timestamps inside passes (scopes within a pass).
    pub in_pass_timestamps: Result<(), String>,
}

impl GpuProbe {
    /// What the device behind `setup` can time.
    pub fn of(setup: &GpuSetup) -> Self {
        let adapter = setup.adapter();
        Self {
            adapter: adapter.device.clone(),
            vendor: adapter.vendor.clone(),
            driver: adapter.driver.clone(),
            adapter_type: regime_name(adapter.adapter_type),
            backend: adapter.backend.clone(),
            timestamp_period_ns: f64::from(setup.timestamp_period_ns()),
            pass_timestamps: setup.pass_timestamps().result(),
            encoder_timestamps: setup.encoder_timestamps().result(),
            in_pass_timestamps: setup.in_pass_timestamps().result(),
        }
    }
}

/// Opens a headless device on the first adapter, reports what it can time, and drops it.
/// Fails when there is no adapter or no device (no GPU, no driver): the error says which.
pub fn probe() -> Result<GpuProbe, HeadlessError> {
    let gpu = HeadlessGpu::new()?;
    let setup = GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue);
    Ok(GpuProbe::of(&setup))
}

/// The timing regime of work timed on an adapter of this type, as outputs spell it:
/// `hardware`, `software` or `unknown`.
pub fn regime_name(adapter_type: AdapterType) -> &'static str {
    match adapter_type {
        AdapterType::Hardware => "hardware",
        AdapterType::Software => "software",
        AdapterType::Unknown => "unknown",
    }
}

impl Support {
    /// `Ok` when timestamps of this kind are written, else why not.
    pub fn result(&self) -> Result<(), String> {
        match self {
            Self::Enabled => Ok(()),
            Self::Absent(reason) => Err(reason.clone()),
        }
    }
}
