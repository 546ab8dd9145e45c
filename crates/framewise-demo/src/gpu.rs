//! `--gpu`: a real wgpu workload beside the CPU game, timed by `framewise-wgpu`, so the
//! capture has a GPU track. The workload is `framewise-wgpu`'s example: a compute pass that
//! updates particles and a render pass that draws them, instanced, into an offscreen texture.
//!
//! The wgpu dependency is behind the crate's `gpu` feature (it is the largest dependency in
//! the tree); without it `--gpu` is refused with the command that rebuilds with it. The
//! topology merge is always compiled so it stays tested in every build.

use framewise::TopologyDesc;

/// The CPU scope in which the demo encodes and submits its GPU work each frame; the GPU
/// passes name it as the scope that records them.
pub const GPU_SCOPE: &str = "gpu_submit";

/// Appends `other`'s passes, resources and edges to `into`, renumbering `other`'s pass and
/// resource indices (edges, first and last use) to follow `into`'s own. Passes keep their
/// order: `into`'s first, then `other`'s.
pub fn merge_topology(into: &mut TopologyDesc, other: TopologyDesc) {
    let pass_base = u32::try_from(into.passes.len()).unwrap_or(u32::MAX);
    let resource_base = u32::try_from(into.resources.len()).unwrap_or(u32::MAX);
    into.passes.extend(other.passes);
    into.resources
        .extend(other.resources.into_iter().map(|mut resource| {
            resource.first_use = resource.first_use.map(|p| p.saturating_add(pass_base));
            resource.last_use = resource.last_use.map(|p| p.saturating_add(pass_base));
            resource
        }));
    into.edges.extend(other.edges.into_iter().map(|mut edge| {
        edge.pass = edge.pass.saturating_add(pass_base);
        edge.resource = edge.resource.saturating_add(resource_base);
        edge
    }));
}

/// The GPU a `--gpu` run used, as the demo reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuReport {
    /// The adapter's name (`llvmpipe (LLVM 15.0.6, 256 bits)` for lavapipe).
    pub adapter: String,
    /// `hardware`, `software` or `unknown`: the timing regime.
    pub adapter_type: &'static str,
    /// The graphics backend (`vulkan`).
    pub backend: String,
    /// `None` when passes were timed; otherwise why they were not (recorded without times).
    pub timestamps_absent: Option<String>,
    /// Frames whose GPU results arrived and were delivered to the recorder.
    pub frames_delivered: u64,
}

#[cfg(not(feature = "gpu"))]
pub(crate) use disabled::{GpuDevice, GpuWork};
#[cfg(feature = "gpu")]
pub(crate) use enabled::{GpuDevice, GpuWork};

/// A build without the `gpu` feature: the same interface, but there is never a device, so
/// the game loop needs no `cfg` of its own.
#[cfg(not(feature = "gpu"))]
mod disabled {
    use framewise::{Session, SessionBuilder, TopologyDesc};

    use super::GpuReport;
    use crate::DemoError;

    /// Never made: [`GpuDevice::new`] says how to rebuild with the feature.
    pub(crate) enum GpuDevice {}

    impl GpuDevice {
        pub(crate) fn new() -> Result<Self, DemoError> {
            Err(DemoError::GpuNotBuilt)
        }

        pub(crate) fn declare(&self, _builder: SessionBuilder) -> SessionBuilder {
            match *self {}
        }

        pub(crate) fn start(self, _session: &Session) -> Result<GpuWork, DemoError> {
            match self {}
        }
    }

    /// Never made.
    pub(crate) enum GpuWork {}

    impl GpuWork {
        pub(crate) fn topology(&self) -> TopologyDesc {
            match *self {}
        }

        pub(crate) fn run_frame(
            &mut self,
            _session: &Session,
            _last: bool,
        ) -> Result<(), DemoError> {
            match *self {}
        }

        pub(crate) fn report(&self) -> GpuReport {
            match *self {}
        }
    }
}

#[cfg(feature = "gpu")]
mod enabled {
    use std::time::Duration;

    use framewise::{Session, SessionBuilder, TopologyDesc};
    use framewise_wgpu::example::{ExampleConfig, ExampleWorkload};
    use framewise_wgpu::{regime_name, GpuProfiler, GpuSetup, HeadlessGpu};

    use super::{GpuReport, GPU_SCOPE};
    use crate::DemoError;

    /// How long the last frame may wait for the GPU's outstanding results.
    const FLUSH_TIMEOUT: Duration = Duration::from_secs(10);

    /// The device, before the session starts.
    pub(crate) struct GpuDevice {
        gpu: HeadlessGpu,
        setup: GpuSetup,
    }

    impl GpuDevice {
        /// A headless device; the error is the plain reason there is none.
        pub(crate) fn new() -> Result<Self, DemoError> {
            let gpu = HeadlessGpu::new().map_err(|error| DemoError::NoGpu {
                reason: error.to_string(),
            })?;
            let setup = GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue);
            Ok(Self { gpu, setup })
        }

        /// Puts the queue, the adapter and the timestamp features into META.
        pub(crate) fn declare(&self, builder: SessionBuilder) -> SessionBuilder {
            self.setup.declare(builder)
        }

        /// The profiler and the workload, once the session has started.
        pub(crate) fn start(self, session: &Session) -> Result<GpuWork, DemoError> {
            let profiler =
                GpuProfiler::new(session, &self.setup).map_err(|error| DemoError::Gpu {
                    reason: error.to_string(),
                })?;
            let work = ExampleWorkload::new(session, &self.gpu.device, ExampleConfig::default());
            Ok(GpuWork {
                device: self,
                profiler,
                work,
                frames_delivered: 0,
            })
        }
    }

    /// The GPU workload and its profiler, for the length of a session.
    pub(crate) struct GpuWork {
        device: GpuDevice,
        profiler: GpuProfiler,
        work: ExampleWorkload,
        frames_delivered: u64,
    }

    impl GpuWork {
        /// The GPU passes as frame-graph nodes, recorded by the [`GPU_SCOPE`] CPU scope.
        pub(crate) fn topology(&self) -> TopologyDesc {
            let mut topology = self.work.topology();
            for pass in &mut topology.passes {
                pass.scope = Some(GPU_SCOPE.to_owned());
            }
            topology
        }

        /// One frame of GPU work, inside the open session frame; on the last frame, waits
        /// for every outstanding result so no frame is written without its GPU times.
        pub(crate) fn run_frame(&mut self, session: &Session, last: bool) -> Result<(), DemoError> {
            let delivered =
                self.work
                    .run_frame(session, &mut self.profiler, &self.device.gpu.device);
            self.frames_delivered += delivered as u64;
            if last {
                let delivered = self
                    .profiler
                    .flush(session, FLUSH_TIMEOUT)
                    .map_err(|error| DemoError::Gpu {
                        reason: error.to_string(),
                    })?;
                self.frames_delivered += delivered as u64;
            }
            Ok(())
        }

        /// What the run used and got.
        pub(crate) fn report(&self) -> GpuReport {
            let adapter = self.device.setup.adapter();
            GpuReport {
                adapter: adapter.device.clone(),
                adapter_type: regime_name(adapter.adapter_type),
                backend: adapter.backend.clone(),
                timestamps_absent: self.device.setup.pass_timestamps().result().err(),
                frames_delivered: self.frames_delivered,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use framewise::{Access, EdgeDesc, PassDesc, PassKind, ResourceDesc, ResourceKind};

    use super::*;

    fn graph(prefix: &str, kind: PassKind) -> TopologyDesc {
        let mut resource = ResourceDesc::new(format!("{prefix}.r"), ResourceKind::Buffer);
        resource.first_use = Some(0);
        resource.last_use = Some(1);
        TopologyDesc {
            passes: vec![
                PassDesc::new(format!("{prefix}.a"), kind),
                PassDesc::new(format!("{prefix}.b"), kind),
            ],
            resources: vec![
                ResourceDesc::new(format!("{prefix}.x"), ResourceKind::Texture),
                resource,
            ],
            edges: vec![EdgeDesc {
                pass: 1,
                resource: 1,
                access: Access::Read,
                version: 2,
            }],
        }
    }

    #[test]
    fn merged_passes_and_resources_keep_their_own_edges() {
        let mut cpu = graph("cpu", PassKind::Render);
        let cpu_before = cpu.clone();
        merge_topology(&mut cpu, graph("gpu", PassKind::Compute));
        assert_eq!(cpu.passes.len(), 4);
        assert_eq!(cpu.passes[..2], cpu_before.passes[..]);
        assert_eq!(cpu.passes[2].label, "gpu.a");
        assert_eq!(cpu.resources.len(), 4);
        assert_eq!(cpu.edges.len(), 2);
        assert_eq!(cpu.edges[0], cpu_before.edges[0]);
        let edge = &cpu.edges[1];
        assert_eq!(cpu.passes[edge.pass as usize].label, "gpu.b");
        assert_eq!(cpu.resources[edge.resource as usize].label, "gpu.r");
        assert_eq!((edge.access, edge.version), (Access::Read, 2));
        let gpu_r = &cpu.resources[3];
        assert_eq!((gpu_r.first_use, gpu_r.last_use), (Some(2), Some(3)));
        assert_eq!(
            cpu.resources[1].first_use,
            Some(0),
            "the CPU graph's own uses stay"
        );
    }
}
