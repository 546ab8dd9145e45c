//! The `tracing` layer turns spans into scopes.

use framewise::tracing::FramewiseLayer;
use framewise::{Session, WriterMode};
use tracing_subscriber::layer::SubscriberExt;

use crate::common::{self, name, site};

#[test]
fn tracing_spans_become_nested_scopes_with_their_call_site() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("tracing");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    let subscriber = tracing_subscriber::registry().with(FramewiseLayer::new());
    tracing::subscriber::with_default(subscriber, || {
        for _ in 0..3 {
            let outer = tracing::info_span!("system_update");
            let _outer = outer.enter();
            for _ in 0..2 {
                let _inner = tracing::debug_span!("query").entered();
            }
            drop(_outer);
            session.end_frame();
        }
    });
    session.stop().unwrap();
    let capture = common::open(&path);
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), 3);
    for frame in &frames {
        let shape: Vec<(String, u32)> = frame.lanes[0]
            .spans
            .iter()
            .map(|s| (name(&capture, s.scope), s.depth))
            .collect();
        assert_eq!(
            shape,
            vec![
                ("system_update".to_owned(), 0),
                ("query".to_owned(), 1),
                ("query".to_owned(), 1)
            ]
        );
    }
    let (file, line) = site(&capture, frames[0].lanes[0].spans[1].scope);
    assert!(
        file.ends_with("tracing_layer.rs") && line > 0,
        "{file}:{line}"
    );
}
