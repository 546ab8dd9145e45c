//! Symbol interning.
//!
//! Symbol ids are process-wide and append-only: a call site is interned once, the first time
//! it runs, and keeps its id for the life of the process. A capture only carries the symbols
//! its records refer to (the writer emits each definition the first time a record needs it),
//! so ids stay unique within a capture however many sessions a process runs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

use framewise_format::model::{CounterKind, SymId, Symbol, SymbolKind, SymbolTable};

/// Kinds that are identified by their name alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum NamedKind {
    Pass,
    Pipeline,
    Counter,
    Resource,
    Phase,
    Mark,
    Queue,
    Label,
}

/// Every symbol, indexed by id, and the lookups that deduplicate them. Lookups go by `&str`
/// so that naming an existing symbol (a phase set every frame) allocates nothing.
#[derive(Default)]
struct Interner {
    symbols: Vec<Symbol>,
    scopes: HashMap<(String, String, u32), SymId>,
    named: HashMap<NamedKind, HashMap<String, SymId>>,
}

static INTERNER: LazyLock<Mutex<Interner>> = LazyLock::new(Mutex::default);

/// How many symbols the interner holds, published after each is pushed: the writer thread
/// reads it to skip the interner's lock when nothing new was interned (the steady state), so
/// that it never contends with a game thread naming a phase or a dynamic scope every frame.
static INTERNED: AtomicUsize = AtomicUsize::new(0);

fn interner() -> MutexGuard<'static, Interner> {
    // Interning never leaves the table half-updated, so a panic elsewhere while the lock was
    // held does not make its contents wrong.
    INTERNER.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Interner {
    fn push(&mut self, kind: SymbolKind, name: String) -> SymId {
        let id = SymId::try_from(self.symbols.len()).unwrap_or(SymId::MAX);
        self.symbols.push(Symbol { id, kind, name });
        INTERNED.store(self.symbols.len(), Ordering::Release);
        id
    }
}

/// Interns a scope name with its call site.
pub(crate) fn intern_scope(name: &str, file: &str, line: u32) -> SymId {
    let mut interner = interner();
    let key = (name.to_owned(), file.to_owned(), line);
    if let Some(&id) = interner.scopes.get(&key) {
        return id;
    }
    let id = interner.push(
        SymbolKind::Scope {
            file: file.to_owned(),
            line,
        },
        name.to_owned(),
    );
    interner.scopes.insert(key, id);
    id
}

/// Interns a name of a kind identified by its name alone.
pub(crate) fn intern_named(kind: NamedKind, name: &str, counter_kind: CounterKind) -> SymId {
    let mut interner = interner();
    if let Some(&id) = interner.named.get(&kind).and_then(|names| names.get(name)) {
        return id;
    }
    let symbol_kind = match kind {
        NamedKind::Pass => SymbolKind::Pass,
        NamedKind::Pipeline => SymbolKind::Pipeline,
        NamedKind::Counter => SymbolKind::Counter(counter_kind),
        NamedKind::Resource => SymbolKind::Resource,
        NamedKind::Phase => SymbolKind::Phase,
        NamedKind::Mark => SymbolKind::Mark,
        NamedKind::Queue => SymbolKind::Queue,
        NamedKind::Label => SymbolKind::Label,
    };
    let id = interner.push(symbol_kind, name.to_owned());
    interner
        .named
        .entry(kind)
        .or_default()
        .insert(name.to_owned(), id);
    id
}

/// Interns a name that is not a counter.
pub(crate) fn intern(kind: NamedKind, name: &str) -> SymId {
    intern_named(kind, name, CounterKind::Sum)
}

/// A new thread symbol. Threads are never merged by name: two threads both called `worker`
/// are two lanes.
pub(crate) fn intern_thread(name: &str) -> SymId {
    interner().push(SymbolKind::Thread, name.to_owned())
}

/// Copies every symbol interned since `*synced` into `table` and advances `*synced`.
pub(crate) fn sync_into(table: &mut SymbolTable, synced: &mut usize) {
    if INTERNED.load(Ordering::Acquire) == *synced {
        return;
    }
    let interner = interner();
    if let Some(new) = interner.symbols.get(*synced..) {
        for symbol in new {
            table.insert(symbol.clone());
        }
    }
    *synced = interner.symbols.len();
}

/// Copies the given symbols into `table` (for content hashing outside the writer).
pub(crate) fn copy_into(table: &mut SymbolTable, ids: &[SymId]) {
    let interner = interner();
    for &id in ids {
        if let Some(symbol) = usize::try_from(id)
            .ok()
            .and_then(|i| interner.symbols.get(i))
        {
            table.insert(symbol.clone());
        }
    }
}

/// A static call site of `scope!`: its id once interned, and its name and location.
///
/// Built by the macros; not meant to be named by users. 16 bytes and 16-aligned, the name and
/// file behind a reference: the sites a frame's code runs through (its statics, laid out one
/// after another) share cache lines four to a line, none across two, where at 40 bytes each
/// took a line or two.
#[doc(hidden)]
#[derive(Debug)]
#[repr(C, align(16))]
pub struct ScopeSite {
    /// The interned id; [`NOT_INTERNED`] until the site first runs. (A site whose id is
    /// `SymId::MAX` itself, were there ever that many symbols, asks the interner each time,
    /// which returns the same id: slower, never wrong.)
    id: AtomicU32,
    line: u32,
    names: &'static SiteNames,
}

/// A `scope!` call site's name and file, read only when the site is interned.
#[doc(hidden)]
#[derive(Debug)]
pub struct SiteNames {
    name: &'static str,
    file: &'static str,
}

impl SiteNames {
    /// A call site's name and file.
    pub const fn new(name: &'static str, file: &'static str) -> Self {
        Self { name, file }
    }
}

/// What a [`ScopeSite`] holds until it is interned: a value tested without adjusting the id
/// read, so that the hot path is a load and a compare.
const NOT_INTERNED: SymId = SymId::MAX;

impl ScopeSite {
    /// A site that has not been interned yet.
    pub const fn new(names: &'static SiteNames, line: u32) -> Self {
        Self {
            id: AtomicU32::new(NOT_INTERNED),
            line,
            names,
        }
    }

    /// The site's symbol id, interning it the first time.
    #[inline(always)]
    pub(crate) fn id(&'static self) -> SymId {
        let stored = self.id.load(Ordering::Relaxed);
        if stored != NOT_INTERNED {
            return stored;
        }
        self.intern_slow()
    }

    #[cold]
    #[inline(never)]
    fn intern_slow(&'static self) -> SymId {
        let id = intern_scope(self.names.name, self.names.file, self.line);
        self.id.store(id, Ordering::Relaxed);
        id
    }
}

/// A static call site of `mark!`.
#[doc(hidden)]
#[derive(Debug)]
pub struct MarkSite {
    name: &'static str,
    id_plus_one: AtomicU32,
}

impl MarkSite {
    /// A site that has not been interned yet.
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            id_plus_one: AtomicU32::new(0),
        }
    }

    /// The mark name's symbol id, interning it the first time.
    #[inline(always)]
    pub(crate) fn id(&'static self) -> SymId {
        let stored = self.id_plus_one.load(Ordering::Relaxed);
        if stored != 0 {
            return stored - 1;
        }
        self.intern_slow()
    }

    #[cold]
    #[inline(never)]
    fn intern_slow(&'static self) -> SymId {
        let id = intern(NamedKind::Mark, self.name);
        self.id_plus_one
            .store(id.saturating_add(1), Ordering::Relaxed);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_site_same_id_other_site_other_id() {
        let a = intern_scope("physics", "src/a.rs", 10);
        let b = intern_scope("physics", "src/a.rs", 10);
        let c = intern_scope("physics", "src/a.rs", 11);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut table = SymbolTable::new();
        let mut synced = 0;
        sync_into(&mut table, &mut synced);
        let symbol = table.get(c).expect("interned symbol is synced");
        assert_eq!(symbol.name, "physics");
        assert_eq!(
            symbol.kind,
            SymbolKind::Scope {
                file: "src/a.rs".into(),
                line: 11
            }
        );
    }

    #[test]
    fn threads_with_one_name_are_two_symbols() {
        assert_ne!(intern_thread("worker"), intern_thread("worker"));
        assert_eq!(
            intern(NamedKind::Phase, "load"),
            intern(NamedKind::Phase, "load")
        );
        assert_ne!(
            intern(NamedKind::Phase, "load"),
            intern(NamedKind::Mark, "load")
        );
    }
}
