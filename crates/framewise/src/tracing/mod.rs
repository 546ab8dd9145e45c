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
//! Frameworks that name their spans by a field rather than by the span's name (Bevy's
//! `system` span carries the system in its `name` field) are named with
//! [`FramewiseLayer::name_by_field`]: such a scope is named by the field's value and has no
//! call site (the span's own call site is the framework's, not the code the span times); the
//! same hook skips spans that must not become scopes.
//!
//! A program with no other `tracing` subscriber can install [`FramewiseSubscriber`] instead:
//! the same scopes, without the registry (no per-span storage, no lookup on enter and exit).
//!
//! This cost is that of `tracing` plus a scope: use `scope!` directly on paths that must be
//! cheap.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use framewise_format::model::SymId;
use tracing_core::callsite::Identifier;
use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id};
use tracing_core::{Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use crate::intern::intern_scope;
use crate::scope::{raw_begin, raw_end};

mod subscriber;

pub use subscriber::FramewiseSubscriber;

/// What a span records as, decided by a [`FramewiseLayer::name_by_field`] namer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpanName {
    /// The default: the span's name and call site.
    Default,
    /// A scope of this name, with no call site.
    Named(String),
    /// Nothing: the span records no scope (a span that outlives a frame, for one).
    Skip,
}

/// Decides what a span records as from the span's name and the naming field's value (`None`
/// when the span does not carry the field).
pub type SpanNamer = dyn Fn(&'static str, Option<&str>) -> SpanName + Send + Sync;

/// A span's call site and the value of its naming field: what a namer decides once.
type NamedKey = (Identifier, Option<String>);

/// The layer. Add it to a `tracing_subscriber::registry()`.
#[derive(Debug, Default)]
pub struct FramewiseLayer {
    names: Names,
}

impl FramewiseLayer {
    /// A new layer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lets `namer(span name, value of field)` decide what each span records as: the default
    /// scope, a scope named by the field (a string field's text, any other field's `Debug`
    /// form) with no call site, or nothing. Each distinct (call site, value) is decided once,
    /// when its first span is created; entering a span costs the same either way.
    ///
    /// ```
    /// use framewise::tracing::{FramewiseLayer, SpanName};
    ///
    /// // Bevy's `system` span carries the system's name in `name`.
    /// let layer = FramewiseLayer::new().name_by_field("name", |span, value| match (span, value) {
    ///     ("system", Some(system)) => SpanName::Named(system.to_owned()),
    ///     ("bevy_app", _) => SpanName::Skip,
    ///     _ => SpanName::Default,
    /// });
    /// # let _ = layer;
    /// ```
    pub fn name_by_field(
        mut self,
        field: &'static str,
        namer: impl Fn(&'static str, Option<&str>) -> SpanName + Send + Sync + 'static,
    ) -> Self {
        self.names.naming = Some((field, Box::new(namer)));
        self
    }
}

/// How spans are named, and the scopes already interned for them.
#[derive(Default)]
pub(crate) struct Names {
    callsites: Mutex<HashMap<Identifier, SymId>>,
    named: Mutex<HashMap<NamedKey, Option<SymId>>>,
    pub(crate) naming: Option<(&'static str, Box<SpanNamer>)>,
}

impl fmt::Debug for Names {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Names")
            .field("name_field", &self.naming.as_ref().map(|(field, _)| *field))
            .finish_non_exhaustive()
    }
}

impl Names {
    /// The scope a new span records as, `None` for a skipped one.
    pub(crate) fn symbol(&self, attrs: &Attributes<'_>) -> Option<SymId> {
        let metadata = attrs.metadata();
        let Some((field, namer)) = &self.naming else {
            return Some(self.default_symbol(metadata));
        };
        let value = metadata.fields().field(field).and_then(|_| {
            let mut value = FieldValue { field, value: None };
            attrs.record(&mut value);
            value.value
        });
        let key = (metadata.callsite(), value);
        let mut named = self.named.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&symbol) = named.get(&key) {
            return symbol;
        }
        let symbol = match namer(metadata.name(), key.1.as_deref()) {
            SpanName::Default => Some(self.default_symbol(metadata)),
            SpanName::Named(name) => Some(intern_scope(&name, "", 0)),
            SpanName::Skip => None,
        };
        named.insert(key, symbol);
        symbol
    }

    /// The span's name at its call site.
    fn default_symbol(&self, metadata: &'static Metadata<'static>) -> SymId {
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
    }
}

/// Reads one field's value as text.
struct FieldValue<'a> {
    field: &'a str,
    value: Option<String>,
}

impl Visit for FieldValue<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == self.field {
            self.value = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == self.field {
            self.value = Some(format!("{value:?}"));
        }
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
        let Some(symbol) = self.names.symbol(attrs) else {
            return;
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
        enter(symbol.0);
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        let Some(symbol) = ctx
            .span(id)
            .and_then(|span| span.extensions().get::<SpanScope>().copied())
        else {
            return;
        };
        exit(symbol.0);
    }
}

/// Begins `symbol`'s scope on this thread and remembers whether the begin was recorded.
fn enter(symbol: SymId) {
    let recorded = raw_begin(symbol);
    let _ = ENTERED.try_with(|entered| entered.borrow_mut().push((symbol, recorded)));
}

/// Ends the innermost entered `symbol` on this thread, when its begin was recorded.
fn exit(symbol: SymId) {
    let recorded = ENTERED
        .try_with(|entered| {
            let mut entered = entered.borrow_mut();
            let position = entered.iter().rposition(|(s, _)| *s == symbol)?;
            let (_, recorded) = entered.remove(position);
            Some(recorded)
        })
        .ok()
        .flatten();
    if recorded == Some(true) {
        raw_end(symbol);
    }
}
