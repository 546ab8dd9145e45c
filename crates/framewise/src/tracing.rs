//! A `tracing_subscriber::Layer` that turns `tracing` spans into framewise scopes, so code
//! instrumented with `tracing` (Bevy's systems, for one) shows up with no further changes.
//!
//! Each span callsite is interned once, with its `file:line`, as a scope. Entering a span
//! begins the scope on the entering thread's lane and exiting ends it. Spans must be exited on
//! the thread that entered them, innermost first, as synchronous code does; an async span
//! held across an `.await` that is exited out of order loses the spans above it (counted as
//! dropped), never mislabels them.
//!
//! ```
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! let subscriber = tracing_subscriber::registry().with(framewise::tracing::FramewiseLayer::new());
//! tracing::subscriber::with_default(subscriber, || {
//!     let _span = tracing::info_span!("update").entered();
//! });
//! ```
//!
//! This cost is that of `tracing` plus a scope: use `scope!` directly on paths that must be
//! cheap.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use framewise_format::model::SymId;
use tracing_core::callsite::Identifier;
use tracing_core::span::{Attributes, Id};
use tracing_core::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use crate::intern::intern_scope;
use crate::scope::{raw_begin, raw_end};

/// The layer. Add it to a `tracing_subscriber::registry()`.
#[derive(Debug, Default)]
pub struct FramewiseLayer {
    callsites: Mutex<HashMap<Identifier, SymId>>,
}

impl FramewiseLayer {
    /// A new layer.
    pub fn new() -> Self {
        Self::default()
    }
}

/// The scope a span records as, kept in the span's extensions.
#[derive(Clone, Copy, Debug)]
struct SpanScope(SymId);

thread_local! {
    /// Spans entered on this thread: their scope and whether the begin was recorded.
    static ENTERED: RefCell<Vec<(SymId, bool)>> = const { RefCell::new(Vec::new()) };
}

impl<S> Layer<S> for FramewiseLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let metadata = attrs.metadata();
        let symbol = {
            let mut callsites = self
                .callsites
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *callsites.entry(metadata.callsite()).or_insert_with(|| {
                intern_scope(
                    metadata.name(),
                    metadata.file().unwrap_or(""),
                    metadata.line().unwrap_or(0),
                )
            })
        };
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanScope(symbol));
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let Some(symbol) = ctx
            .span(id)
            .and_then(|span| span.extensions().get::<SpanScope>().copied())
        else {
            return;
        };
        let recorded = raw_begin(symbol.0);
        let _ = ENTERED.try_with(|entered| entered.borrow_mut().push((symbol.0, recorded)));
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        let Some(symbol) = ctx
            .span(id)
            .and_then(|span| span.extensions().get::<SpanScope>().copied())
        else {
            return;
        };
        let recorded = ENTERED
            .try_with(|entered| {
                let mut entered = entered.borrow_mut();
                let position = entered.iter().rposition(|(s, _)| *s == symbol.0)?;
                let (_, recorded) = entered.remove(position);
                Some(recorded)
            })
            .ok()
            .flatten();
        if recorded == Some(true) {
            raw_end(symbol.0);
        }
    }
}
