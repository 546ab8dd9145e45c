//! Scope guards, marks and the entry points the macros expand to.

use std::cell::RefCell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::atomic::Ordering;

use framewise_format::model::SymId;

use crate::intern::{intern_scope, MarkSite, ScopeSite};
use crate::{thread, ENABLED};

/// An open CPU scope; the scope ends when the guard is dropped.
///
/// Made by [`scope!`](crate::scope!) or [`scope_dynamic`]. A guard belongs to the thread that
/// made it (it is neither `Send` nor `Sync`), so every scope begins and ends on one lane.
#[must_use = "a scope ends when its guard is dropped: bind it, `let _scope = scope!(..);`"]
#[derive(Debug)]
pub struct ScopeGuard {
    id: SymId,
    recorded: bool,
    _not_send: PhantomData<*const ()>,
}

impl ScopeGuard {
    /// A guard that records nothing (what scopes return while no session runs).
    #[inline(always)]
    pub const fn inactive() -> Self {
        Self {
            id: 0,
            recorded: false,
            _not_send: PhantomData,
        }
    }

    /// Begins the scope of a `scope!` call site.
    #[doc(hidden)]
    #[inline(always)]
    pub fn begin(site: &'static ScopeSite) -> Self {
        // A session records with the TSC for a clock: both known from one load.
        let flags = ENABLED.bits();
        if flags.recording_with_tsc() {
            let id = site.id();
            return Self {
                id,
                recorded: thread::begin_tsc(id),
                _not_send: PhantomData,
            };
        }
        // No session, or one that records with the monotonic clock.
        std::hint::cold_path();
        if !flags.recording() {
            return Self::inactive();
        }
        Self::begin_enabled(site.id())
    }

    #[inline(always)]
    fn begin_enabled(id: SymId) -> Self {
        Self {
            id,
            recorded: thread::begin(id),
            _not_send: PhantomData,
        }
    }

    /// Whether this guard's begin was recorded (false while no session runs, or when the
    /// thread's buffer was full and the span was dropped and counted).
    pub fn is_recording(&self) -> bool {
        self.recorded
    }
}

impl Drop for ScopeGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.recorded {
            thread::end(self.id);
        }
    }
}

thread_local! {
    /// Dynamic names already interned by this thread, per call site.
    static DYNAMIC: RefCell<HashMap<&'static Location<'static>, HashMap<Box<str>, SymId>>> =
        RefCell::new(HashMap::new());
}

/// Begins a scope whose name is only known at run time.
///
/// Slower than [`scope!`](crate::scope!): the name is hashed on every call (and allocated
/// the first time a thread sees it at this call site). The call site recorded with it is the
/// caller's.
#[track_caller]
#[inline]
pub fn scope_dynamic(name: &str) -> ScopeGuard {
    if cfg!(feature = "disabled") || !ENABLED.load(Ordering::Relaxed) {
        return ScopeGuard::inactive();
    }
    let location = Location::caller();
    let id = DYNAMIC
        .try_with(|cache| {
            let mut cache = cache.borrow_mut();
            let per_site = cache.entry(location).or_default();
            if let Some(&id) = per_site.get(name) {
                return id;
            }
            let id = intern_scope(name, location.file(), location.line());
            per_site.insert(name.into(), id);
            id
        })
        .unwrap_or_else(|_| intern_scope(name, location.file(), location.line()));
    ScopeGuard::begin_enabled(id)
}

/// Records an instant mark from a `mark!` call site.
#[doc(hidden)]
#[inline]
pub fn mark_at(site: &'static MarkSite) {
    if ENABLED.load(Ordering::Relaxed) {
        thread::mark(site.id());
    }
}

/// Records an instant mark with a run-time name on the calling thread's lane.
pub fn mark_dynamic(name: &str) {
    if !cfg!(feature = "disabled") && ENABLED.load(Ordering::Relaxed) {
        thread::mark(crate::intern::intern(crate::intern::NamedKind::Mark, name));
    }
}

/// Begins a scope by symbol id with no guard: the caller must call [`raw_end`] with the same
/// id on the same thread, innermost first, when this returned true. For integrations (the
/// `tracing` layer) whose scopes are not lexical.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) fn raw_begin(id: SymId) -> bool {
    !cfg!(feature = "disabled") && ENABLED.load(Ordering::Relaxed) && thread::begin(id)
}

/// Ends a scope begun by [`raw_begin`] that returned true.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) fn raw_end(id: SymId) {
    thread::end(id);
}
