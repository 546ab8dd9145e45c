//! Names: the file's symbol ids mapped to the builder's ids, interned on first use.

use std::collections::{HashMap, HashSet};

use framewise_format::model::{CounterKind as FmtCounterKind, SymId, SymbolKind, SymbolTable};

use crate::build::CaptureBuilder;
use crate::model::{
    CounterKind, Numeric, TopologyAccess, TopologyDetail, TopologyEdge, TopologyPass,
    TopologyPassKind, TopologyResource, TopologyResourceKind,
};

/// SymId → builder id: a dense vector for the small ids writers hand out, a map beyond.
#[derive(Clone, Default)]
pub(super) struct IdMap {
    dense: Vec<u32>,
    sparse: HashMap<SymId, u32>,
}

impl IdMap {
    const DENSE_LIMIT: usize = 1 << 16;

    #[inline]
    pub(super) fn get(&self, id: SymId) -> Option<u32> {
        match self.dense.get(id as usize) {
            Some(&v) if v != u32::MAX => Some(v),
            Some(_) => None,
            None => self.sparse.get(&id).copied(),
        }
    }

    pub(super) fn insert(&mut self, id: SymId, value: u32) {
        let at = id as usize;
        if at < Self::DENSE_LIMIT {
            if at >= self.dense.len() {
                self.dense.resize(at + 1, u32::MAX);
            }
            self.dense[at] = value;
        } else {
            self.sparse.insert(id, value);
        }
    }
}

/// Format symbol → builder id, per kind, and the symbols no intact record defined: what
/// a load learnt about names, kept to re-read frames later ([`FrameSource`]).
#[derive(Clone, Default)]
pub(super) struct Ids {
    pub(super) unresolved: HashSet<SymId>,
    pub(super) scopes: IdMap,
    pub(super) threads: IdMap,
    /// Pass symbol → (queue symbol, builder id) of the first queue it ran on.
    pub(super) passes: Vec<(SymId, u32)>,
    /// The same label on other queues.
    pub(super) passes_elsewhere: HashMap<(SymId, SymId), u32>,
    pub(super) phases: HashMap<SymId, u32>,
    pub(super) counters: IdMap,
    pub(super) marks: HashMap<SymId, u32>,
}

/// Interns format symbols into builder ids, remembering which were never defined.
pub(super) struct Names<'a> {
    pub(super) symbols: &'a SymbolTable,
    pub(super) ids: Ids,
}

impl<'a> Names<'a> {
    pub(super) fn name(&mut self, id: SymId) -> String {
        match self.symbols.name(id) {
            Some(n) => n.to_owned(),
            None => {
                self.ids.unresolved.insert(id);
                format!("#{id}")
            }
        }
    }

    #[inline]
    pub(super) fn scope(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        match self.ids.scopes.dense.get(id as usize) {
            Some(&s) if s != u32::MAX => s,
            _ => self.scope_slow(b, id),
        }
    }

    /// A scope id past the dense table, or not yet seen.
    #[cold]
    #[inline(never)]
    pub(super) fn scope_slow(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(s) = self.ids.scopes.get(id) {
            return s;
        }
        let name = self.name(id);
        let (file, line) = match self.symbols.get(id).map(|s| &s.kind) {
            Some(SymbolKind::Scope { file, line }) => (file.as_str(), *line),
            _ => ("", 0),
        };
        let s = b.scope(&name, file, line);
        self.ids.scopes.insert(id, s);
        s
    }

    pub(super) fn thread(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(t) = self.ids.threads.get(id) {
            return t;
        }
        let name = self.name(id);
        let t = b.thread(&name);
        self.ids.threads.insert(id, t);
        t
    }

    pub(super) fn pass(&mut self, b: &mut CaptureBuilder, pass: SymId, queue: SymId) -> u32 {
        let at = pass as usize;
        if let Some(&(q, p)) = self.ids.passes.get(at) {
            if q == queue && p != u32::MAX {
                return p;
            }
        }
        if let Some(&p) = self.ids.passes_elsewhere.get(&(pass, queue)) {
            return p;
        }
        let queue_name = self.name(queue);
        let q = b.queue(&queue_name);
        let name = self.name(pass);
        let p = b.pass(&name, q);
        if at < IdMap::DENSE_LIMIT && self.ids.passes.get(at).is_none_or(|&(_, p)| p == u32::MAX) {
            if at >= self.ids.passes.len() {
                self.ids.passes.resize(at + 1, (0, u32::MAX));
            }
            self.ids.passes[at] = (queue, p);
        } else {
            self.ids.passes_elsewhere.insert((pass, queue), p);
        }
        p
    }

    pub(super) fn phase(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(&p) = self.ids.phases.get(&id) {
            return p;
        }
        let name = self.name(id);
        let p = b.phase(&name);
        self.ids.phases.insert(id, p);
        p
    }

    pub(super) fn counter(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(c) = self.ids.counters.get(id) {
            return c;
        }
        let name = self.name(id);
        let kind = match self.symbols.get(id).map(|s| &s.kind) {
            Some(SymbolKind::Counter(FmtCounterKind::Gauge)) => CounterKind::Gauge,
            _ => CounterKind::Sum,
        };
        let c = b.counter(&name, kind, Numeric::Integer);
        self.ids.counters.insert(id, c);
        c
    }

    pub(super) fn mark(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(&m) = self.ids.marks.get(&id) {
            return m;
        }
        let name = self.name(id);
        let m = b.mark_name(&name);
        self.ids.marks.insert(id, m);
        m
    }
}

/// `x.round() as u64`, exactly, without the library call where truncation gives the
/// same: below 2^52 the integer part and the fraction of a non-negative `x` are exact.
#[inline]
/// A topology with its symbols resolved to names.
pub(super) fn topology_detail(
    t: &framewise_format::model::Topology,
    names: &mut Names,
) -> TopologyDetail {
    use framewise_format::model::{Access, PassKind, ResourceKind};
    let passes = t
        .passes
        .iter()
        .map(|p| TopologyPass {
            label: names.name(p.label),
            kind: match p.kind {
                PassKind::Render => TopologyPassKind::Render,
                PassKind::Compute => TopologyPassKind::Compute,
                PassKind::Copy => TopologyPassKind::Copy,
                PassKind::Other => TopologyPassKind::Other,
            },
            culled: p.culled,
            scope: p.scope.map(|s| names.name(s)),
        })
        .collect();
    let resources = t
        .resources
        .iter()
        .map(|r| TopologyResource {
            label: names.name(r.label),
            kind: match r.kind {
                ResourceKind::Buffer => TopologyResourceKind::Buffer,
                ResourceKind::Texture => TopologyResourceKind::Texture,
                ResourceKind::Other => TopologyResourceKind::Other,
            },
            format: r.format.map(|f| names.name(f)),
            bytes: r.declared_bytes,
            transient: r.transient,
        })
        .collect();
    let edges = t
        .edges
        .iter()
        .map(|e| TopologyEdge {
            pass: e.pass,
            resource: e.resource,
            version: e.version,
            access: match e.access {
                Access::Read => TopologyAccess::Read,
                Access::Write => TopologyAccess::Write,
                Access::ReadWrite => TopologyAccess::ReadWrite,
            },
        })
        .collect();
    TopologyDetail {
        id: t.id,
        passes,
        resources,
        edges,
    }
}
