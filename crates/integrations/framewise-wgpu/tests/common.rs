//! Helpers shared by the tests: the device (or the reason there is none), a recording
//! session on it, and reading the capture back.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use framewise::{Session, SessionBuilder, WriterMode};
use framewise_format::model::{Frame, SymId};
use framewise_format::read::{self, Capture};
use framewise_wgpu::{GpuSetup, HeadlessGpu};

static SERIAL: Mutex<()> = Mutex::new(());

/// Serialises tests that start sessions (one session per process at a time).
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A headless device with `features` (those the adapter has), or `None` when there is no
/// adapter and the tests may skip. With `FRAMEWISE_REQUIRE_GPU` or `CI` set (scripts/check
/// sets the former) a missing adapter panics: a missing driver must not turn the suite
/// silently green.
pub fn gpu(features: wgpu::Features) -> Option<HeadlessGpu> {
    match HeadlessGpu::with_features(features) {
        Ok(gpu) => Some(gpu),
        Err(error) if framewise_wgpu::adapter_required() => panic!(
            "FRAMEWISE_REQUIRE_GPU or CI is set and there is no usable GPU adapter ({error}); \
             scripts/install-test-deps installs Mesa's lavapipe (mesa-vulkan-drivers, \
             libvulkan1)"
        ),
        Err(error) => {
            eprintln!(
                "skipping: no usable GPU adapter ({error}); install mesa-vulkan-drivers and \
                 libvulkan1 for lavapipe, or set FRAMEWISE_REQUIRE_GPU=1 to make this a failure"
            );
            None
        }
    }
}

/// A session recording to a temporary file, declared with the device's setup.
pub struct Recording {
    pub session: Session,
    pub setup: GpuSetup,
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Recording {
    /// Starts a lossless session (every frame written) configured by `configure`.
    pub fn start(
        setup: GpuSetup,
        configure: impl FnOnce(SessionBuilder) -> SessionBuilder,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gpu.sgpt");
        let builder = configure(Session::builder().writer_mode(WriterMode::Lossless));
        let session = setup.declare(builder).start(path.as_path()).unwrap();
        Self {
            session,
            setup,
            path,
            _dir: dir,
        }
    }

    /// Stops the session and opens the capture.
    pub fn finish(self) -> (framewise::Report, Capture, tempfile::TempDir) {
        let report = self.session.stop().unwrap();
        let capture = read::open(&self.path).unwrap();
        assert!(
            capture.defects().is_empty(),
            "defects: {:?}",
            capture.defects()
        );
        (report, capture, self._dir)
    }
}

/// Every frame of a capture, all of which must decode.
pub fn frames(capture: &Capture) -> Vec<Frame> {
    capture
        .frames()
        .map(|frame| frame.unwrap_or_else(|defect| panic!("frame does not decode: {defect}")))
        .collect()
}

/// A symbol's name; panics when undefined.
pub fn name(capture: &Capture, id: SymId) -> String {
    capture
        .symbols()
        .name(id)
        .unwrap_or_else(|| panic!("symbol {id} undefined"))
        .to_owned()
}

/// A META feature's value.
pub fn feature<'a>(capture: &'a Capture, key: &str) -> Option<&'a str> {
    capture
        .meta()
        .unwrap()
        .features
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}
