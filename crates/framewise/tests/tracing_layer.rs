//! The `tracing` layer turns spans into scopes.

use framewise::tracing::{FramewiseLayer, FramewiseSubscriber, SpanName};
use framewise::{Session, WriterMode};
use framewise_format::model::Frame;
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
        assert_eq!(
            first_lane(&capture, frame),
            owned(&[("system_update", 0), ("query", 1), ("query", 1)])
        );
    }
    let (file, line) = site(&capture, frames[0].lanes[0].spans[1].scope);
    assert!(
        file.ends_with("tracing_layer.rs") && line > 0,
        "{file}:{line}"
    );
}

#[test]
fn a_naming_field_names_the_scope_without_a_call_site() {
    let layer = FramewiseLayer::new().name_by_field("name", name_test_span);
    named_spans_record_as_named(tracing_subscriber::registry().with(layer));
}

#[test]
fn the_subscriber_records_what_the_layer_records() {
    let layer = FramewiseLayer::new().name_by_field("name", name_test_span);
    named_spans_record_as_named(FramewiseSubscriber::from(layer));
}

fn name_test_span(span: &'static str, value: Option<&str>) -> SpanName {
    match (span, value) {
        ("system", Some(system)) => SpanName::Named(system.to_owned()),
        ("schedule", Some(schedule)) => SpanName::Named(format!("schedule {schedule}")),
        ("frame", _) => SpanName::Skip,
        _ => SpanName::Default,
    }
}

/// Spans named by a field, a skipped one and a default one, through `subscriber`.
fn named_spans_record_as_named(subscriber: impl tracing::Subscriber + Send + Sync + 'static) {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("tracing_named");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        // Made once and entered every frame, as a framework keeps a system's span.
        let systems = [
            tracing::info_span!("system", name = "game::movement"),
            tracing::info_span!("system", name = "game::spawn"),
        ];
        for _ in 0..2 {
            let _skipped = tracing::info_span!("frame").entered();
            let _schedule = tracing::info_span!("schedule", name = ?Label::Update).entered();
            for system in &systems {
                let _system = system.enter();
                let _other = tracing::info_span!("other", name = 7).entered();
            }
            drop(_schedule);
            drop(_skipped);
            session.end_frame();
        }
    });
    session.stop().unwrap();
    let capture = common::open(&path);
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), 2);
    for frame in &frames {
        assert_eq!(
            first_lane(&capture, frame),
            owned(&[
                ("schedule Update", 0),
                ("game::movement", 1),
                ("other", 2),
                ("game::spawn", 1),
                ("other", 2),
            ])
        );
    }
    let spans = &frames[0].lanes[0].spans;
    assert_eq!(site(&capture, spans[1].scope), (String::new(), 0));
    let (file, line) = site(&capture, spans[2].scope);
    assert!(
        file.ends_with("tracing_layer.rs") && line > 0,
        "{file}:{line}"
    );
}

#[derive(Debug)]
enum Label {
    Update,
}

/// The first lane's spans as (name, depth), in order.
fn first_lane(capture: &framewise_format::read::Capture, frame: &Frame) -> Vec<(String, u32)> {
    frame.lanes[0]
        .spans
        .iter()
        .map(|s| (name(capture, s.scope), s.depth))
        .collect()
}

/// Expected (name, depth) pairs, owned.
fn owned(shape: &[(&str, u32)]) -> Vec<(String, u32)> {
    shape.iter().map(|(n, d)| ((*n).to_owned(), *d)).collect()
}
