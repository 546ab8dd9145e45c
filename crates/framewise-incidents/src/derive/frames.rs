//! What the incident log remembers of recent frames: a fixed ring of compact summaries
//! (period, pause, phase, counters, per-scope totals), refilled in place so that steady
//! state allocates nothing once every slot's buffers have grown.

use framewise_detect::median::median;
use framewise_detect::motion::names::is_motion_counter;

use crate::world::is_world_counter;
use framewise_format::model::{CounterKind, CpuSpan, Frame, SymId, SymbolKind, SymbolTable};

/// Frames remembered: 10 s at 400 frames/s, enough for a usermark's 5 s window and the
/// profile's 10 s window at ordinary frame rates (a faster game's windows hold fewer
/// seconds, and say how many they hold).
pub(crate) const RING_FRAMES: usize = 4096;

/// One frame, as the incident log keeps it.
#[derive(Clone, Debug, Default)]
pub(crate) struct FrameSummary {
    pub(crate) index: u64,
    pub(crate) begin_ns: u64,
    pub(crate) end_ns: u64,
    /// Begin to the next frame's begin; `None` until the next frame arrives, and for good
    /// when frames were dropped between them.
    pub(crate) period_ns: Option<u64>,
    pub(crate) paused: bool,
    pub(crate) phase: Option<SymId>,
    /// Counter values, as recorded (motion tracks and the world object left out).
    pub(crate) counters: Vec<(SymId, i64)>,
    /// The world object's counters (`world.*`), as recorded.
    pub(crate) world: Vec<(SymId, i64)>,
    /// Per scope, longest first: its inclusive time in the frame (all threads; a span
    /// nested in a span of the same scope is not counted twice), and the sum of its spans'
    /// self times (each less the spans nested directly in it), as the analysis counts them.
    pub(crate) scopes: Vec<ScopeTotals>,
    /// The rolling median the hitch rule judged the frame against, once judged.
    pub(crate) median_ns: Option<u64>,
}

impl FrameSummary {
    pub(crate) fn work_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.begin_ns)
    }

    pub(crate) fn counter(&self, id: SymId) -> Option<i64> {
        self.counters
            .iter()
            .find(|(counter, _)| *counter == id)
            .map(|&(_, value)| value)
    }
}

/// One scope's time in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ScopeTotals {
    pub(crate) scope: SymId,
    pub(crate) total_ns: u64,
    pub(crate) self_ns: u64,
}

/// Scope ids below this size the per-scope scratch without a symbol lookup; above it, only
/// an id the symbol table defines does.
const UNCHECKED_SCOPE_IDS: usize = 1 << 16;

/// The ring of recent frames, oldest first.
#[derive(Debug)]
pub(crate) struct FrameRing {
    slots: Vec<FrameSummary>,
    /// Slot of the oldest frame.
    head: usize,
    len: usize,
    /// Scratch for per-scope totals, indexed by symbol id (ids are small integers given
    /// out in order): no hashing per span.
    scope_totals: Vec<ScopeScratch>,
    /// The ids with an entry in `scope_totals` this frame.
    touched: Vec<SymId>,
    /// Scratch for the open spans of a lane, outermost first.
    open: Vec<OpenSpan>,
}

/// One scope's totals in the frame being summarised.
#[derive(Clone, Copy, Debug, Default)]
struct ScopeScratch {
    total_ns: u64,
    self_ns: u64,
    /// Its spans open in the lane being read: a span that starts while one is open runs
    /// inside itself, and its time is already in the outer span's.
    active: u32,
    /// Listed in `touched` this frame.
    touched: bool,
}

/// A span of the lane being read that has not closed yet.
#[derive(Clone, Copy, Debug)]
struct OpenSpan {
    depth: u32,
    scope: SymId,
    duration_ns: u64,
    /// The durations of the spans nested directly in it.
    children_ns: u64,
    /// Whether its scope has an entry in `scope_totals` (an id no symbol defines has none).
    counted: bool,
}

impl FrameRing {
    pub(crate) fn new() -> Self {
        Self {
            slots: vec![FrameSummary::default(); RING_FRAMES],
            head: 0,
            len: 0,
            scope_totals: Vec::new(),
            touched: Vec::new(),
            open: Vec::new(),
        }
    }

    /// Summarises `frame` into the next slot (the oldest frame's, once the ring is full).
    /// Motion-tracking counters are left out and the world object's kept apart: they record
    /// where things are and what the host said, not what the frame cost, and would read as
    /// counter deltas.
    pub(crate) fn push(&mut self, frame: &Frame, symbols: &SymbolTable) -> &mut FrameSummary {
        let slot_index = (self.head + self.len) % RING_FRAMES;
        if self.len == RING_FRAMES {
            self.head = (self.head + 1) % RING_FRAMES;
        } else {
            self.len += 1;
        }
        for lane in &frame.lanes {
            self.fold_lane(&lane.spans, symbols);
        }
        // `slot_index < RING_FRAMES`, the slots' length.
        let slot = &mut self.slots[slot_index];
        slot.index = frame.index;
        slot.begin_ns = frame.cpu_begin_ns;
        slot.end_ns = frame.cpu_end_ns;
        slot.period_ns = None;
        slot.paused = frame.paused;
        slot.phase = frame.phase;
        slot.median_ns = None;
        slot.counters.clear();
        slot.world.clear();
        for c in &frame.counters {
            let name = symbols.get(c.counter).map(|s| s.name.as_str());
            if name.is_some_and(is_world_counter) {
                slot.world.push((c.counter, c.value));
            } else if !name.is_some_and(is_motion_counter) {
                slot.counters.push((c.counter, c.value));
            }
        }
        slot.scopes.clear();
        for &scope in &self.touched {
            let Some(entry) = self.scope_totals.get_mut(scope as usize) else {
                continue;
            };
            let ScopeScratch {
                total_ns, self_ns, ..
            } = std::mem::take(entry);
            slot.scopes.push(ScopeTotals {
                scope,
                total_ns,
                self_ns,
            });
        }
        self.touched.clear();
        slot.scopes
            .sort_unstable_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.scope.cmp(&b.scope)));
        slot
    }

    /// Adds one lane's spans (in pre-order) to the frame's per-scope totals, with the
    /// analysis's meanings (`framewise_analysis`'s fold, which `summarize` and `hitches`
    /// read): a span's parent is the nearest open span of smaller depth; its self time is
    /// its duration less its direct children's; a span of a scope that starts while another
    /// span of that scope is open (a recursive call, directly or with other scopes between)
    /// adds nothing to the scope's inclusive total, which already holds it; every span still
    /// open at the end of the lane closes.
    fn fold_lane(&mut self, spans: &[CpuSpan], symbols: &SymbolTable) {
        self.open.clear();
        for span in spans {
            let duration_ns = span.duration_ns();
            while let Some(top) = self.open.last().copied() {
                if top.depth < span.depth {
                    break;
                }
                self.open.pop();
                self.close(top);
            }
            if let Some(parent) = self.open.last_mut() {
                parent.children_ns = parent.children_ns.saturating_add(duration_ns);
            }
            let counted = self.count(span.scope, duration_ns, symbols);
            self.open.push(OpenSpan {
                depth: span.depth,
                scope: span.scope,
                duration_ns,
                children_ns: 0,
                counted,
            });
        }
        while let Some(top) = self.open.pop() {
            self.close(top);
        }
    }

    /// A span of `scope` opens: its duration goes into the scope's inclusive total unless
    /// a span of the scope is open around it. False when the scope has no entry (an id no
    /// symbol defines, too large to index by).
    fn count(&mut self, scope: SymId, duration_ns: u64, symbols: &SymbolTable) -> bool {
        let at = scope as usize;
        if at >= self.scope_totals.len() {
            // Ids are given out in order, so a real one is below the symbol count; an id no
            // symbol defines (a damaged capture fed after the fact) must not size the
            // scratch to billions of entries.
            if at >= UNCHECKED_SCOPE_IDS && symbols.get(scope).is_none() {
                return false;
            }
            self.scope_totals.resize(at + 1, ScopeScratch::default());
        }
        let entry = &mut self.scope_totals[at];
        if !entry.touched {
            entry.touched = true;
            self.touched.push(scope);
        }
        if entry.active == 0 {
            entry.total_ns = entry.total_ns.saturating_add(duration_ns);
        }
        entry.active = entry.active.saturating_add(1);
        true
    }

    /// An open span closes: its self time is its duration less its direct children's.
    fn close(&mut self, span: OpenSpan) {
        if !span.counted {
            return;
        }
        if let Some(entry) = self.scope_totals.get_mut(span.scope as usize) {
            entry.self_ns = entry
                .self_ns
                .saturating_add(span.duration_ns.saturating_sub(span.children_ns));
            entry.active = entry.active.saturating_sub(1);
        }
    }

    /// The newest frame, if any.
    pub(crate) fn newest_mut(&mut self) -> Option<&mut FrameSummary> {
        let last = self.len.checked_sub(1)?;
        self.slots.get_mut((self.head + last) % RING_FRAMES)
    }

    /// The `back`-th newest frame (0 = newest).
    pub(crate) fn back(&self, back: usize) -> Option<&FrameSummary> {
        let from_oldest = self.len.checked_sub(back + 1)?;
        self.slots.get((self.head + from_oldest) % RING_FRAMES)
    }

    /// Frames newest first.
    pub(crate) fn newest_first(&self) -> impl Iterator<Item = &FrameSummary> + '_ {
        (0..self.len).filter_map(move |back| self.back(back))
    }

    /// Per counter: the median of its values over the non-paused frames that have a
    /// period, newest first up to `max_frames`, skipping frame `except` (a frame is not its
    /// own baseline). Sum counters absent from a frame count as 0 there.
    pub(crate) fn counter_medians(
        &self,
        max_frames: usize,
        except: Option<u64>,
        symbols: &SymbolTable,
    ) -> Vec<(SymId, i64)> {
        let frames: Vec<&FrameSummary> = self
            .newest_first()
            .filter(|f| !f.paused && f.period_ns.is_some() && Some(f.index) != except)
            .take(max_frames)
            .collect();
        let mut ids: Vec<SymId> = frames
            .iter()
            .flat_map(|f| f.counters.iter().map(|&(id, _)| id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let mut values = Vec::with_capacity(frames.len());
        ids.into_iter()
            .filter_map(|id| {
                let sum = counter_kind(symbols, id) == Some(CounterKind::Sum);
                values.clear();
                values.extend(frames.iter().filter_map(|f| match f.counter(id) {
                    Some(v) => Some(v),
                    None if sum => Some(0),
                    None => None,
                }));
                median(&mut values).map(|m| (id, m))
            })
            .collect()
    }
}

/// A counter's kind, from its symbol.
pub(crate) fn counter_kind(symbols: &SymbolTable, id: SymId) -> Option<CounterKind> {
    match symbols.get(id)?.kind {
        SymbolKind::Counter(kind) => Some(kind),
        _ => None,
    }
}

impl FrameSummary {
    /// The scope's inclusive and self time in the frame, ns (0 and 0 when it did not run).
    pub(crate) fn scope_times_ns(&self, scope: SymId) -> (u64, u64) {
        self.scopes
            .iter()
            .find(|s| s.scope == scope)
            .map_or((0, 0), |s| (s.total_ns, s.self_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use framewise_format::model::{CpuSpan, Lane, Symbol};

    const A: SymId = 1;
    const B: SymId = 2;
    const C: SymId = 3;

    fn symbols() -> SymbolTable {
        let mut table = SymbolTable::new();
        for (id, name) in [(A, "a"), (B, "b"), (C, "c")] {
            table.insert(Symbol {
                id,
                kind: SymbolKind::Scope {
                    file: "src/x.rs".into(),
                    line: id,
                },
                name: name.into(),
            });
        }
        table
    }

    /// A frame whose lanes hold these spans, `(scope, depth, duration_ns)` in pre-order.
    fn frame(lanes: &[&[(SymId, u32, u64)]]) -> Frame {
        Frame {
            lanes: lanes
                .iter()
                .map(|spans| Lane {
                    thread: 0,
                    spans: spans
                        .iter()
                        .map(|&(scope, depth, duration_ns)| CpuSpan {
                            scope,
                            depth,
                            start_ns: 1_000,
                            end_ns: 1_000 + duration_ns,
                        })
                        .collect(),
                    dropped_spans: 0,
                })
                .collect(),
            ..Frame::default()
        }
    }

    /// Per scope: (inclusive total, self time), by id.
    fn totals(lanes: &[&[(SymId, u32, u64)]]) -> Vec<(SymId, u64, u64)> {
        let mut ring = FrameRing::new();
        let slot = ring.push(&frame(lanes), &symbols());
        let mut out: Vec<_> = slot
            .scopes
            .iter()
            .map(|s| (s.scope, s.total_ns, s.self_ns))
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn a_scope_nested_in_itself_counts_once_in_its_total() {
        // a > a > a > a, 300 of its own per level.
        assert_eq!(
            totals(&[&[(A, 0, 1_200), (A, 1, 900), (A, 2, 600), (A, 3, 300)]]),
            [(A, 1_200, 1_200)]
        );
    }

    #[test]
    fn a_scope_nested_in_itself_through_another_counts_once() {
        // a(1000) > b(700) > a(400) > b(100), then a sibling a(50) at depth 2 under b.
        assert_eq!(
            totals(&[&[
                (A, 0, 1_000),
                (B, 1, 700),
                (A, 2, 400),
                (B, 3, 100),
                (A, 2, 50),
            ]]),
            // a: total 1000; self (1000 − 700) + (400 − 100) + 50.
            // b: total 700; self (700 − 400 − 50) + 100.
            [(A, 1_000, 650), (B, 700, 350)]
        );
    }

    #[test]
    fn recursion_ends_with_its_lane_and_siblings_add_up() {
        // Two sibling a's at depth 0 add; an a on another thread adds; c beside them.
        assert_eq!(
            totals(&[
                &[(A, 0, 500), (A, 1, 200), (A, 0, 300), (C, 1, 100)],
                &[(A, 0, 40), (A, 1, 10)],
            ]),
            [(A, 840, 740), (C, 100, 100)]
        );
    }

    #[test]
    fn a_span_whose_depth_skips_a_level_is_its_nearest_open_spans_child() {
        // As the analysis's fold: b at depth 2 under a at depth 0 (the span between them
        // began before the frame) is a's child.
        assert_eq!(
            totals(&[&[(A, 0, 1_000), (B, 2, 300), (C, 3, 100)]]),
            [(A, 1_000, 700), (B, 300, 200), (C, 100, 100)]
        );
    }
}
