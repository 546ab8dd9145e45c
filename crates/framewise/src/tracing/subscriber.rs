//! A whole `tracing` subscriber that records spans as scopes and nothing else: the cheapest
//! way in for a program that needs no other subscriber.

use framewise_format::model::SymId;
use tracing_core::span::{Attributes, Id, Record};
use tracing_core::subscriber::Interest;
use tracing_core::{Event, Metadata, Subscriber};

use super::{enter, exit, FramewiseLayer, Names};

/// The id of a span that records nothing (a skipped one).
const SKIPPED: u64 = u64::MAX;

/// A `tracing` subscriber that records each span as a framewise scope, with the naming of
/// [`FramewiseLayer`] (made from one with `From`), and ignores events.
///
/// It keeps no per-span state: a span's id *is* its scope (a span's scope is decided when the
/// span is created), so entering and exiting cost a scope's begin and end plus a
/// thread-local stack push and pop, with no registry lookup. Span ids are therefore shared
/// by every span of one scope, which `tracing` allows of a subscriber that does not track
/// spans; [`Span::current`](https://docs.rs/tracing/latest/tracing/struct.Span.html) knows
/// nothing under it.
///
/// ```
/// let subscriber = framewise::tracing::FramewiseSubscriber::new();
/// tracing::subscriber::with_default(subscriber, || {
///     let _span = tracing::info_span!("update").entered();
/// });
/// ```
#[derive(Debug, Default)]
pub struct FramewiseSubscriber {
    names: Names,
}

impl FramewiseSubscriber {
    /// A new subscriber.
    pub fn new() -> Self {
        Self::default()
    }
}

/// A subscriber that names spans as the layer would (its
/// [`name_by_field`](FramewiseLayer::name_by_field) included).
///
/// ```
/// use framewise::tracing::{FramewiseLayer, FramewiseSubscriber, SpanName};
///
/// let subscriber = FramewiseSubscriber::from(
///     FramewiseLayer::new().name_by_field("name", |_, _| SpanName::Default),
/// );
/// # let _ = subscriber;
/// ```
impl From<FramewiseLayer> for FramewiseSubscriber {
    fn from(layer: FramewiseLayer) -> Self {
        Self { names: layer.names }
    }
}

impl Subscriber for FramewiseSubscriber {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if metadata.is_span() {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_span()
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        match self.names.symbol(span) {
            Some(symbol) => Id::from_u64(u64::from(symbol) + 1),
            None => Id::from_u64(SKIPPED),
        }
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, _event: &Event<'_>) {}

    fn enter(&self, span: &Id) {
        if let Some(symbol) = symbol_of(span) {
            enter(symbol);
        }
    }

    fn exit(&self, span: &Id) {
        if let Some(symbol) = symbol_of(span) {
            exit(symbol);
        }
    }
}

/// The scope a span id stands for; `None` for a skipped span.
fn symbol_of(span: &Id) -> Option<SymId> {
    SymId::try_from(span.into_u64().checked_sub(1)?).ok()
}
