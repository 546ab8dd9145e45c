//! Any bytes, written to a file and opened from it (by its directory when the header says
//! CLOSED, else by scanning): never panics, and reading the frames in pieces
//! (`Capture::read_frames_into`, what the analysis loader does with a file) gives exactly the
//! frames and defects that reading them one by one (`read_frame_into`) gives.
//!
//! The header is left as the fuzzer made it, so mutations of a closed seed capture (the
//! committed sample) keep exercising the directory path.
#![no_main]

use framewise_format::model::Frame;
use framewise_format::payload::FrameDecoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // /dev/shm when there is one: a file per input, without touching a disk.
    let dir = std::path::Path::new("/dev/shm");
    let dir = if dir.is_dir() {
        dir.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("framewise-fuzz-read-file-{}.sgpt", std::process::id()));
    std::fs::write(&path, data).expect("write the input to a file");
    if let Ok(capture) = framewise_format::read::open(&path) {
        let count = capture.frame_count();
        let mut decoder = FrameDecoder::new();
        let mut frame = Frame::default();
        let one_by_one: Vec<_> = (0..count)
            .map(|i| {
                capture
                    .read_frame_into(i, &mut decoder, &mut frame)
                    .map(|()| frame.clone())
            })
            .collect();
        let mut in_pieces = Vec::with_capacity(count);
        capture.read_frames_into(0..count + 1, &mut decoder, &mut frame, |i, f| {
            in_pieces.push((i, f.cloned()));
        });
        let want: Vec<_> = one_by_one.into_iter().enumerate().collect();
        assert_eq!(in_pieces, want, "pieces and single reads disagree");
        let _ = capture.verify();
    }
    let _ = std::fs::remove_file(&path);
});
