//! The crate's errors, one enum per boundary.

use std::time::Duration;

/// Why a [`GpuProfiler`](crate::GpuProfiler) could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfilerError {
    /// The session was built without the queue the setup declares: call
    /// [`GpuSetup::declare`](crate::GpuSetup::declare) on the session builder.
    #[error(
        "the session has no GPU queue named {name:?}: declare it with GpuSetup::declare on the \
         session builder before starting the session"
    )]
    QueueNotDeclared {
        /// The queue name the setup uses.
        name: String,
    },
}

/// Why [`GpuProfiler::flush`](crate::GpuProfiler::flush) could not bring every result in.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FlushError {
    /// The GPU did not finish within the timeout; `frames_pending` frames still wait.
    #[error("GPU results of {frames_pending} frame(s) still pending after {timeout:?}")]
    Timeout {
        /// The timeout given.
        timeout: Duration,
        /// Frames whose results had not arrived.
        frames_pending: usize,
    },
    /// wgpu refused the wait (a `PollError` other than a timeout). A device lost while
    /// waiting is fatal in wgpu itself: it panics in the poll, as on any call that meets a
    /// lost device.
    #[error("waiting for the GPU failed: {0}")]
    Poll(#[from] wgpu::PollError),
}

/// Why a compute shader's `@workgroup_size` could not be read from its WGSL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WgslError {
    /// The WGSL does not parse.
    #[error("WGSL does not parse: {message}")]
    Parse {
        /// The parser's message.
        message: String,
    },
    /// No compute entry point has that name.
    #[error("no compute entry point named {entry_point:?} (found: {found})")]
    NoSuchEntryPoint {
        /// The name asked for.
        entry_point: String,
        /// The compute entry points the module has, comma separated.
        found: String,
    },
    /// No entry point was named and the module has not exactly one compute entry point.
    #[error("name the entry point: the module has {count} compute entry points")]
    AmbiguousEntryPoint {
        /// How many compute entry points the module has.
        count: usize,
    },
}

/// Why a headless device could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HeadlessError {
    /// No adapter was found (no GPU and no software driver such as lavapipe installed).
    #[error("no GPU adapter found: {reason}")]
    NoAdapter {
        /// What wgpu said.
        reason: String,
    },
    /// The adapter refused to make a device.
    #[error("the adapter {adapter:?} refused to create a device: {source}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// What wgpu said.
        #[source]
        source: wgpu::RequestDeviceError,
    },
    /// wgpu did not answer in time (its native futures are normally ready at once).
    #[error("wgpu did not answer within {0:?}")]
    Timeout(Duration),
}
