//! With the `disabled` feature the macros compile to nothing: frames are still recorded
//! (the session API stays), but no scope, counter or mark is.

use framewise::{counter, gauge, mark, scope, Session, WriterMode};

use crate::common;

#[test]
fn macros_record_nothing_when_disabled() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("disabled");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    {
        let guard = scope!("never");
        assert!(!guard.is_recording());
        counter!("never", 1);
        gauge!("never_gauge", 1);
        mark!("never_mark");
    }
    session.end_frame();
    session.stop().unwrap();
    let capture = common::open(&path);
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), 1);
    assert!(
        frames[0].lanes.is_empty() && frames[0].counters.is_empty() && frames[0].marks.is_empty()
    );
}
