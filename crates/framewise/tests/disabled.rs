//! With the `disabled` feature the macros compile to nothing: frames are still recorded
//! (the session API stays), but no scope, counter or mark is, nor any span of the `tracing`
//! layer or dynamic scope.

use framewise::tracing::FramewiseLayer;
use framewise::{counter, gauge, mark, scope, scope_dynamic, Session, WriterMode};
use tracing_subscriber::layer::SubscriberExt;

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

/// An engine's spans (the `tracing` layer, as the Bevy plugin records systems) and dynamic
/// scopes are compiled out with the macros: a `disabled` build records no scope at all.
#[test]
fn tracing_spans_and_dynamic_scopes_record_nothing_when_disabled() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("disabled-tracing");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    let subscriber = tracing_subscriber::registry().with(FramewiseLayer::new());
    tracing::subscriber::with_default(subscriber, || {
        let _system = tracing::info_span!("system_update").entered();
        let dynamic = scope_dynamic("dynamic");
        assert!(!dynamic.is_recording());
    });
    session.end_frame();
    session.stop().unwrap();
    let capture = common::open(&path);
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), 1);
    assert!(frames[0].lanes.is_empty(), "{:?}", frames[0].lanes);
}
