//! What the incident log remembers of recent frames: a fixed ring of compact summaries
//! (period, pause, phase, counters, per-scope totals), refilled in place so that steady
//! state allocates nothing once every slot's buffers have grown.

use framewise_detect::median::median;
use framewise_detect::motion::names::is_motion_counter;

use crate::world::is_world_counter;
use framewise_format::model::{CounterKind, Frame, SymId, SymbolKind, SymbolTable};

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
    /// Per scope, longest first: the sum of its spans' durations in the frame (all
    /// threads), and of their self times (less the spans nested directly in them).
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
    /// Scratch for per-scope totals, (total, self) ns, indexed by symbol id (ids are small
    /// integers given out in order): no hashing per span.
    scope_totals: Vec<(u64, i64)>,
    /// The ids with an entry in `scope_totals` this frame.
    touched: Vec<SymId>,
    /// Scratch for the open spans of a lane: (depth, scope).
    open: Vec<(u32, SymId)>,
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
            // Spans are in pre-order: a span's parent is the nearest open span one level up.
            self.open.clear();
            for span in &lane.spans {
                let duration_ns = span.duration_ns();
                while self
                    .open
                    .last()
                    .is_some_and(|&(depth, _)| depth >= span.depth)
                {
                    self.open.pop();
                }
                if let Some(&(depth, parent)) = self.open.last() {
                    if depth + 1 == span.depth {
                        // The parent was entered before its child: its slot exists.
                        if let Some(entry) = self.scope_totals.get_mut(parent as usize) {
                            entry.1 = entry.1.saturating_sub(duration_ns as i64);
                        }
                    }
                }
                let at = span.scope as usize;
                if at >= self.scope_totals.len() {
                    // Ids are given out in order, so a real one is below the symbol count; an
                    // id no symbol defines (a damaged capture fed after the fact) must not
                    // size the scratch to billions of entries.
                    if at >= UNCHECKED_SCOPE_IDS && symbols.get(span.scope).is_none() {
                        continue;
                    }
                    self.scope_totals.resize(at + 1, (0, -1));
                }
                let entry = &mut self.scope_totals[at];
                if entry.1 < 0 && entry.0 == 0 {
                    // First span of this scope in the frame (the -1 marks an empty slot).
                    *entry = (0, 0);
                    self.touched.push(span.scope);
                }
                entry.0 += duration_ns;
                entry.1 = entry.1.saturating_add(duration_ns as i64);
                self.open.push((span.depth, span.scope));
            }
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
            let (total_ns, self_ns) = self.scope_totals[scope as usize];
            self.scope_totals[scope as usize] = (0, -1);
            slot.scopes.push(ScopeTotals {
                scope,
                total_ns,
                self_ns: u64::try_from(self_ns).unwrap_or(0),
            });
        }
        self.touched.clear();
        slot.scopes
            .sort_unstable_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.scope.cmp(&b.scope)));
        slot
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
    /// A scope's total in the frame, ns (0 when it did not run).
    pub(crate) fn scope_total_ns(&self, scope: SymId) -> u64 {
        self.scopes
            .iter()
            .find(|s| s.scope == scope)
            .map_or(0, |s| s.total_ns)
    }
}
