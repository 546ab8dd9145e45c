//! What the device can time, and what goes into the capture's META before the session starts.

use framewise::{AdapterInfo, AdapterType, SessionBuilder};

/// Every timestamp feature the profiler can use: pass timestamps, and timestamps inside
/// encoders and passes (for nested scopes). Request the ones the adapter has:
/// `adapter.features() & framewise_wgpu::TIMER_FEATURES`.
pub const TIMER_FEATURES: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);

/// The queue name [`GpuSetup`] declares unless told otherwise.
pub const DEFAULT_QUEUE_NAME: &str = "wgpu";

/// Whether one kind of timestamp is available, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Support {
    /// Timestamps of this kind are written.
    Enabled,
    /// They are not; the reason goes into META.
    Absent(String),
}

impl Support {
    /// Whether timestamps of this kind are written.
    pub fn is_enabled(&self) -> bool {
        matches!(self, Self::Enabled)
    }

    fn meta_value(&self) -> String {
        match self {
            Self::Enabled => "enabled".to_owned(),
            Self::Absent(reason) => format!("absent: {reason}"),
        }
    }
}

/// What the GPU can time and how it describes itself, read from the adapter, device and
/// queue before the session starts (the session's META is written when it starts).
///
/// [`declare`](Self::declare) puts the queue with its tick period, the adapter (with its type,
/// hardware or software, which decides the timing regime) and the timestamp features into the
/// session builder; [`GpuProfiler::new`](crate::GpuProfiler::new) then times with it.
#[derive(Clone, Debug)]
pub struct GpuSetup {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) queue_name: String,
    pub(crate) timestamp_period_ns: f32,
    pub(crate) adapter: AdapterInfo,
    pub(crate) passes: Support,
    pub(crate) inside_encoders: Support,
    pub(crate) inside_passes: Support,
}

impl GpuSetup {
    /// Reads what `device` (made from `adapter`) can time.
    pub fn new(adapter: &wgpu::Adapter, device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        let adapter_features = adapter.features();
        let device_features = device.features();
        let support = |feature: wgpu::Features, name: &str| {
            if device_features.contains(feature) {
                Support::Enabled
            } else if adapter_features.contains(feature) {
                Support::Absent(format!(
                    "the device was created without {name} (request \
                     adapter.features() & framewise_wgpu::TIMER_FEATURES)"
                ))
            } else {
                Support::Absent(format!("the adapter does not support {name}"))
            }
        };
        let passes = support(wgpu::Features::TIMESTAMP_QUERY, "TIMESTAMP_QUERY");
        let absent_without_passes = |inner: Support| match (&passes, inner) {
            (Support::Absent(reason), _) => Support::Absent(reason.clone()),
            (Support::Enabled, inner) => inner,
        };
        let inside_encoders = absent_without_passes(support(
            wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
            "TIMESTAMP_QUERY_INSIDE_ENCODERS",
        ));
        let inside_passes = absent_without_passes(support(
            wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES,
            "TIMESTAMP_QUERY_INSIDE_PASSES",
        ));
        Self {
            device: device.clone(),
            queue: queue.clone(),
            queue_name: DEFAULT_QUEUE_NAME.to_owned(),
            timestamp_period_ns: queue.get_timestamp_period(),
            adapter: adapter_info(&adapter.get_info()),
            passes,
            inside_encoders,
            inside_passes,
        }
    }

    /// Names the queue in the capture (default `wgpu`).
    pub fn queue_name(mut self, name: impl Into<String>) -> Self {
        self.queue_name = name.into();
        self
    }

    /// Records passes and workload without any timestamps, as if the device had none; META
    /// says the host chose so.
    pub fn without_timestamps(mut self) -> Self {
        let reason = Support::Absent("disabled by the host".to_owned());
        self.passes = reason.clone();
        self.inside_encoders = reason.clone();
        self.inside_passes = reason;
        self
    }

    /// The device the setup describes.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue the setup describes.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The queue's tick-to-nanosecond factor, as wgpu declares it
    /// (`Queue::get_timestamp_period`). What a backend declares without timestamps varies
    /// (Vulkan gives the device's period whether or not `TIMESTAMP_QUERY` was enabled): read
    /// whether passes are timed from [`pass_timestamps`](Self::pass_timestamps), not from this.
    pub fn timestamp_period_ns(&self) -> f32 {
        self.timestamp_period_ns
    }

    /// The adapter as the capture describes it.
    pub fn adapter(&self) -> &AdapterInfo {
        &self.adapter
    }

    /// Whether passes are timed (`TIMESTAMP_QUERY`).
    pub fn pass_timestamps(&self) -> &Support {
        &self.passes
    }

    /// Whether scopes on a command encoder are timed (`TIMESTAMP_QUERY_INSIDE_ENCODERS`).
    pub fn encoder_timestamps(&self) -> &Support {
        &self.inside_encoders
    }

    /// Whether scopes inside a pass are timed (`TIMESTAMP_QUERY_INSIDE_PASSES`).
    pub fn in_pass_timestamps(&self) -> &Support {
        &self.inside_passes
    }

    /// Declares the queue (with the period wgpu reports), the adapter and the timestamp
    /// features on a session builder. Call before `start`: META is written then.
    pub fn declare(&self, builder: SessionBuilder) -> SessionBuilder {
        builder
            .gpu_queue(self.queue_name.clone(), f64::from(self.timestamp_period_ns))
            .adapter(self.adapter.clone())
            .feature("gpu.timestamps", self.passes.meta_value())
            .feature(
                "gpu.timestamps_inside_encoders",
                self.inside_encoders.meta_value(),
            )
            .feature(
                "gpu.timestamps_inside_passes",
                self.inside_passes.meta_value(),
            )
            .feature(
                "gpu.clock_anchor",
                "per frame: CPU time at submit and at readback; no calibrated re-anchoring \
                 (wgpu exposes no CPU/GPU clock correlation)",
            )
            .feature(
                "gpu.integration",
                concat!("framewise-wgpu ", env!("CARGO_PKG_VERSION")),
            )
    }
}

/// The capture's description of a wgpu adapter.
pub fn adapter_info(info: &wgpu::AdapterInfo) -> AdapterInfo {
    let driver = format!("{} {}", info.driver, info.driver_info);
    AdapterInfo {
        vendor: vendor_name(info.vendor),
        device: info.name.clone(),
        driver: driver.trim().to_owned(),
        adapter_type: adapter_type(info),
        backend: info.backend.to_str().to_owned(),
    }
}

/// Hardware, software or unknown. A software rasteriser is recognised by wgpu's device type
/// (`Cpu`) or by name, since some report themselves as another type.
pub fn adapter_type(info: &wgpu::AdapterInfo) -> AdapterType {
    const SOFTWARE_NAMES: [&str; 5] = [
        "llvmpipe",
        "lavapipe",
        "swiftshader",
        "microsoft basic render",
        "softpipe",
    ];
    let name = format!("{} {}", info.name, info.driver).to_lowercase();
    if info.device_type == wgpu::DeviceType::Cpu
        || SOFTWARE_NAMES
            .iter()
            .any(|software| name.contains(software))
    {
        return AdapterType::Software;
    }
    match info.device_type {
        wgpu::DeviceType::DiscreteGpu | wgpu::DeviceType::IntegratedGpu => AdapterType::Hardware,
        // A virtual GPU may be a passed-through device or an emulation: not known.
        _ => AdapterType::Unknown,
    }
}

fn vendor_name(vendor: u32) -> String {
    let name = match vendor {
        0x1002 => "AMD",
        0x10de => "NVIDIA",
        0x8086 => "Intel",
        0x13b5 => "ARM",
        0x5143 => "Qualcomm",
        0x106b => "Apple",
        0x1010 => "Imagination",
        0x10005 => "Mesa",
        _ => "",
    };
    if name.is_empty() {
        format!("0x{vendor:04x}")
    } else {
        format!("{name} (0x{vendor:04x})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str, device_type: wgpu::DeviceType) -> wgpu::AdapterInfo {
        let mut info = wgpu::AdapterInfo::new(device_type, wgpu::Backend::Vulkan);
        info.name = name.to_owned();
        info.vendor = 0x10005;
        info.driver = "llvmpipe".to_owned();
        info.driver_info = "Mesa 22.3.6".to_owned();
        info
    }

    #[test]
    fn software_rasterisers_are_software_whatever_type_they_claim() {
        let lavapipe = info("llvmpipe (LLVM 15.0.6, 256 bits)", wgpu::DeviceType::Cpu);
        assert_eq!(adapter_type(&lavapipe), AdapterType::Software);
        let mut claims_gpu = info("SwiftShader Device", wgpu::DeviceType::IntegratedGpu);
        claims_gpu.driver = String::new();
        assert_eq!(adapter_type(&claims_gpu), AdapterType::Software);
        let mut discrete = info("Radeon RX 7600", wgpu::DeviceType::DiscreteGpu);
        discrete.driver = "radv".to_owned();
        assert_eq!(adapter_type(&discrete), AdapterType::Hardware);
        let mut virtual_gpu = info("virgl", wgpu::DeviceType::VirtualGpu);
        virtual_gpu.driver = String::new();
        assert_eq!(adapter_type(&virtual_gpu), AdapterType::Unknown);
    }

    #[test]
    fn adapter_info_names_vendor_driver_and_backend() {
        let described = adapter_info(&info("llvmpipe", wgpu::DeviceType::Cpu));
        assert_eq!(described.vendor, "Mesa (0x10005)");
        assert_eq!(described.driver, "llvmpipe Mesa 22.3.6");
        assert_eq!(described.backend, "vulkan");
        assert_eq!(vendor_name(0xabcd), "0xabcd");
    }
}
