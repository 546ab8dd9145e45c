//! A capture with GPU passes, for the tests of what the inspector shows of them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use framewise::{GpuPassTiming, Session, WriterMode};

/// A short CPU + GPU recording (the demo runs without a GPU): two passes on a `graphics`
/// queue every frame, delivered in the frame that submitted them, beside CPU scopes. A
/// process records one session at a time: the caller holds its lock.
pub fn gpu_recording(dir: &Path) -> PathBuf {
    let path = dir.join("gpu.sgpt");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .build_id("browser-test")
        .gpu_queue("graphics", 1.0)
        .start(path.as_path())
        .expect("the session starts");
    let queue = session
        .gpu_queue("graphics")
        .expect("the queue was declared");
    let (shadow, lighting) = (session.pass_label("shadow"), session.pass_label("lighting"));
    session.set_phase("play");
    for frame in 0..150_u64 {
        let _frame = session.frame();
        {
            let _update = framewise::scope!("update");
            std::thread::sleep(Duration::from_millis(2));
        }
        let ticket = session.gpu_submit(queue);
        let base = frame * 16_000_000;
        let pass = |pass, begin: u64, end: u64| GpuPassTiming {
            pass,
            depth: 0,
            begin_ticks: Some(base + begin),
            end_ticks: Some(base + end),
        };
        session.gpu_deliver(
            ticket,
            &[
                pass(shadow, 0, 1_200_000),
                pass(lighting, 1_300_000, 3_900_000),
            ],
        );
    }
    session.stop().expect("the session stops");
    path
}
