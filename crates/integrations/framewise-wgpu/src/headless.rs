//! A headless wgpu device with every timestamp feature the adapter has: what a test, a
//! benchmark or the demo needs when there is no window.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::error::HeadlessError;
use crate::setup::TIMER_FEATURES;

/// How long to wait for wgpu's adapter and device futures (ready at once on native).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The environment variable that makes a missing adapter a failure rather than a skip, for
/// the GPU tests of every crate (`scripts/check` sets it: it installs lavapipe).
pub const REQUIRE_GPU_ENV: &str = "FRAMEWISE_REQUIRE_GPU";

/// Whether a missing GPU adapter must fail a test rather than skip it: when
/// [`REQUIRE_GPU_ENV`] or `CI` is set to anything but empty, `0` or `false`.
pub fn adapter_required() -> bool {
    adapter_required_by(|name| std::env::var(name).ok())
}

/// [`adapter_required`] over any environment (`lookup` returns a variable's value).
pub fn adapter_required_by(lookup: impl Fn(&str) -> Option<String>) -> bool {
    [REQUIRE_GPU_ENV, "CI"].into_iter().any(|name| {
        lookup(name).is_some_and(|value| {
            let value = value.trim().to_ascii_lowercase();
            !value.is_empty() && value != "false" && value != "0"
        })
    })
}

/// An instance, adapter, device and queue with no surface.
#[derive(Debug, Clone)]
pub struct HeadlessGpu {
    /// The instance.
    pub instance: wgpu::Instance,
    /// The adapter the device was made from.
    pub adapter: wgpu::Adapter,
    /// The device, with [`TIMER_FEATURES`] the adapter supports (or none, when asked).
    pub device: wgpu::Device,
    /// The device's queue.
    pub queue: wgpu::Queue,
}

impl HeadlessGpu {
    /// The first adapter wgpu offers (on a machine with no GPU: a software driver such as
    /// Mesa's lavapipe), with every timestamp feature it supports.
    pub fn new() -> Result<Self, HeadlessError> {
        Self::with_features(TIMER_FEATURES)
    }

    /// As [`new`](Self::new), requesting only `wanted & adapter.features()` (pass
    /// `wgpu::Features::empty()` for a device without timestamps).
    pub fn with_features(wanted: wgpu::Features) -> Result<Self, HeadlessError> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::all();
        desc.flags = wgpu::InstanceFlags::from_build_config().with_env();
        let instance = wgpu::Instance::new(desc);
        let adapter = block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))?
            .map_err(|error| HeadlessError::NoAdapter {
                reason: error.to_string(),
            })?;
        let (device, queue) = block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("framewise-wgpu headless"),
            required_features: wanted & adapter.features(),
            ..Default::default()
        }))?
        .map_err(|source| HeadlessError::RequestDevice {
            adapter: adapter.get_info().name,
            source,
        })?;
        Ok(Self {
            instance,
            adapter,
            device,
            queue,
        })
    }
}

/// Drives a wgpu future to completion. On native backends wgpu's futures are ready at once;
/// this polls with a no-op waker and sleeps briefly between polls otherwise.
fn block_on<F: Future>(future: F) -> Result<F::Output, HeadlessError> {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    let deadline = Instant::now() + ANSWER_TIMEOUT;
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return Ok(output);
        }
        if Instant::now() >= deadline {
            return Err(HeadlessError::Timeout(ANSWER_TIMEOUT));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_tests_require_an_adapter_when_framewise_require_gpu_or_ci_is_set() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert!(!adapter_required_by(env(&[])));
        assert!(adapter_required_by(env(&[(REQUIRE_GPU_ENV, "1")])));
        assert!(adapter_required_by(env(&[("CI", "true")])));
        assert!(!adapter_required_by(env(&[
            (REQUIRE_GPU_ENV, "0"),
            ("CI", "false")
        ])));
        assert!(!adapter_required_by(env(&[(REQUIRE_GPU_ENV, " ")])));
    }

    #[test]
    fn scripts_check_requires_the_gpu() {
        // scripts/check installs lavapipe, so a missing adapter there is a failure, never a
        // silent pass.
        let check = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../scripts/check"),
        )
        .unwrap();
        assert!(
            check
                .lines()
                .any(|l| l.trim() == "export FRAMEWISE_REQUIRE_GPU=1"),
            "scripts/check must export FRAMEWISE_REQUIRE_GPU=1"
        );
    }
}
