//! The fold: nested span instances of one frame into per-id aggregates (inclusive total,
//! self time, calls), by a stack or, for lanes that allow it, level by level.

use crate::model::{Agg, NameColumn, PerFrame};

use super::NameGroups;

#[derive(Clone, Copy)]
struct Slot {
    calls: u32,
    /// The stack fold: instances of this id open in the lane.
    active: u32,
    /// The level fold: the level of the shallowest instance of this id open in the lane,
    /// if `levels[open_level]` still holds it (see [`Folder::fold_levels`]); `u32::MAX`:
    /// none.
    open_level: u32,
    total_ns: u64,
    self_ns: u64,
}

impl Default for Slot {
    fn default() -> Self {
        Self {
            calls: 0,
            active: 0,
            open_level: u32::MAX,
            total_ns: 0,
            self_ns: 0,
        }
    }
}

/// One instance of a lane, as [`Folder::fold_lane`] takes it.
#[derive(Clone, Copy)]
struct Instance {
    id: u32,
    depth: u32,
    duration_ns: u64,
}

impl Instance {
    const EMPTY: Self = Self {
        id: 0,
        depth: 0,
        duration_ns: 0,
    };
}

#[derive(Clone, Copy)]
struct Open {
    id: u32,
    depth: u32,
    duration_ns: u64,
    children_ns: u64,
}

/// The level fold's latest instance at one level (depth + 1; level 0 is a root that is
/// never closed).
#[derive(Clone, Copy)]
struct Level {
    id: u32,
    duration_ns: u64,
    children_ns: u64,
}

impl Level {
    const EMPTY: Self = Self {
        id: 0,
        duration_ns: 0,
        children_ns: 0,
    };
}

#[inline]
fn slot_of(slots: &mut Vec<Slot>, id: u32) -> &mut Slot {
    let at = id as usize;
    if at >= slots.len() {
        grow(slots, at);
    }
    // Never out of bounds (grown above); the check is one compare the branch predictor
    // always gets right.
    &mut slots[at]
}

#[cold]
#[inline(never)]
fn grow(slots: &mut Vec<Slot>, at: usize) {
    slots.resize(at + 1, Slot::default());
}

/// An instance closes: its self time is its duration less its direct children's.
#[inline]
fn add_self(slots: &mut Vec<Slot>, id: u32, duration_ns: u64, children_ns: u64) {
    let slot = slot_of(slots, id);
    slot.self_ns = slot
        .self_ns
        .saturating_add(duration_ns.saturating_sub(children_ns));
}

/// Folds nested instances into per-id aggregates for one frame.
///
/// The builder folds a [`FrameInput`](super::FrameInput)'s lanes with one; a loader that decodes spans
/// itself (the `.sgpt` loader) folds them as it goes and hands the folder to
/// [`CaptureBuilder::push_frame_folded`](super::CaptureBuilder::push_frame_folded), so that spans are never copied into a
/// [`FrameInput`](super::FrameInput) only to be read once. Either way the same [`Folder::fold_lane`] decides
/// inclusive totals, self times and calls.
#[derive(Default)]
pub(crate) struct Folder {
    slots: Vec<Slot>,
    touched: Vec<u32>,
    stack: Vec<Open>,
    levels: Vec<Level>,
    /// The lane being folded.
    lane: Vec<Instance>,
    /// Tests: fold every lane with the stack (the reference).
    #[cfg(test)]
    pub(super) stack_only: bool,
    /// Summary-only: per-name totals of the frame being drained, and which are set.
    group_totals: Vec<Option<u64>>,
    groups_touched: Vec<u32>,
}

impl Folder {
    #[inline]
    fn slot(&mut self, id: u32) -> &mut Slot {
        slot_of(&mut self.slots, id)
    }

    /// Folds one lane's instances, `(id, depth, duration_ns)` in pre-order. An
    /// instance's parent is the nearest open instance of smaller depth; its self time is
    /// its duration less its direct children's; a scope running inside itself is counted
    /// once in the inclusive total; every instance still open at the end of the lane
    /// closes.
    ///
    /// The instances are first copied into a scratch lane (so that whatever maps a
    /// loader's ids runs in its own tight loop, and the fold in another). A lane whose
    /// depths never skip a level on the way down (the first at depth 0, each at most one
    /// deeper than the one before: every lane the recorder writes when no span was open
    /// across the frame's start) takes [`Self::fold_levels`], which does the same without
    /// a data-dependent loop; any other lane takes [`Self::fold_stack`]. They agree on
    /// every lane the first accepts (a property test below).
    #[inline]
    pub(crate) fn fold_lane(&mut self, instances: impl ExactSizeIterator<Item = (u32, u32, u64)>) {
        let mut lane = std::mem::take(&mut self.lane);
        // Written in place, not pushed: the copy loop then needs no room checks.
        lane.clear();
        lane.resize(instances.len(), Instance::EMPTY);
        let mut copied = 0;
        for (to, (id, depth, duration_ns)) in lane.iter_mut().zip(instances) {
            *to = Instance {
                id,
                depth,
                duration_ns,
            };
            copied += 1;
        }
        lane.truncate(copied);
        let mut next_limit = 0u32;
        let mut contiguous = true;
        let mut deepest = 0u32;
        let mut top_id = 0u32;
        for i in &lane {
            contiguous &= i.depth <= next_limit;
            next_limit = i.depth.saturating_add(1);
            deepest = deepest.max(i.depth);
            top_id = top_id.max(i.id);
        }
        #[cfg(test)]
        let contiguous = contiguous && !self.stack_only;
        if contiguous && (deepest as usize) < lane.len() {
            self.fold_levels(&lane, deepest as usize + 1, top_id);
        } else {
            self.fold_stack(&lane);
        }
        self.lane = lane;
    }

    /// The general fold: a stack of open instances, popped as shallower ones arrive.
    fn fold_stack(&mut self, lane: &[Instance]) {
        // Locals, so that the hot loop keeps their lengths in registers: stores into the
        // slots could otherwise alias the vectors' own fields.
        let mut slots = std::mem::take(&mut self.slots);
        let mut stack = std::mem::take(&mut self.stack);
        let mut touched = std::mem::take(&mut self.touched);
        for &Instance {
            id,
            depth,
            duration_ns,
        } in lane
        {
            while let Some(&top) = stack.last() {
                if top.depth < depth {
                    break;
                }
                stack.pop();
                add_self(&mut slots, top.id, top.duration_ns, top.children_ns);
                let slot = slot_of(&mut slots, top.id);
                slot.active = slot.active.saturating_sub(1);
            }
            if let Some(parent) = stack.last_mut() {
                parent.children_ns = parent.children_ns.saturating_add(duration_ns);
            }
            let slot = slot_of(&mut slots, id);
            let first = slot.calls == 0;
            slot.calls = slot.calls.saturating_add(1);
            if slot.active == 0 {
                slot.total_ns = slot.total_ns.saturating_add(duration_ns);
            }
            slot.active += 1;
            if first {
                touched.push(id);
            }
            stack.push(Open {
                id,
                depth,
                duration_ns,
                children_ns: 0,
            });
        }
        while let Some(open) = stack.pop() {
            add_self(&mut slots, open.id, open.duration_ns, open.children_ns);
            let slot = slot_of(&mut slots, open.id);
            slot.active = slot.active.saturating_sub(1);
        }
        self.slots = slots;
        self.stack = stack;
        self.touched = touched;
    }

    /// The fold of a lane whose depths never skip a level on the way down, with `levels`
    /// levels of nesting (deepest depth + 1) and no id above `top_id`. In such a lane the
    /// open instances are exactly the latest instance at each level above the current
    /// one, so one entry per level replaces the stack: an instance's parent is the latest
    /// instance one level up, and the instance it replaces at its own level has closed
    /// (its self time is added then; instances left deeper close when replaced or at the
    /// end of the lane — self times are saturating sums of unsigned values, so when does
    /// not matter). Whether an id runs inside itself is read from the level its
    /// shallowest open instance was recorded at (`open_level`): that level still holds it
    /// exactly when it is still open. No branch depends on the shape of the tree.
    fn fold_levels(&mut self, lane: &[Instance], levels: usize, top_id: u32) {
        // Plain slices, sized before the loop (every slot up to the lane's largest id):
        // nothing in it can grow or move them, so their lengths and pointers stay in
        // registers.
        if top_id as usize >= self.slots.len() {
            grow(&mut self.slots, top_id as usize);
        }
        self.levels.clear();
        self.levels.resize(levels + 1, Level::EMPTY);
        let mut n_touched = self.touched.len();
        // Room for every instance to be a first one; trimmed below.
        self.touched.resize(n_touched + lane.len(), 0);
        let slots: &mut [Slot] = &mut self.slots;
        let level: &mut [Level] = &mut self.levels;
        let touched: &mut [u32] = &mut self.touched;
        // An entry no instance has used yet closes as an empty instance of id 0: it adds
        // nothing. (Level 0 is the root: the parent of depth 0, never closed.)
        let close = |slots: &mut [Slot], l: Level| {
            if let Some(slot) = slots.get_mut(l.id as usize) {
                slot.self_ns = slot
                    .self_ns
                    .saturating_add(l.duration_ns.saturating_sub(l.children_ns));
            }
        };
        for &Instance {
            id,
            depth,
            duration_ns,
        } in lane
        {
            // Level = depth + 1 ≤ levels (the caller checked every depth).
            let at = (depth as usize + 1).min(levels);
            close(slots, level[at]);
            let parent = &mut level[at - 1];
            parent.children_ns = parent.children_ns.saturating_add(duration_ns);
            // Never missing: the slots were grown to `top_id`.
            let Some(slot) = slots.get_mut(id as usize) else {
                continue;
            };
            let open = slot.open_level as usize;
            let recursive = open < at && level[open.min(at)].id == id;
            if !recursive {
                slot.total_ns = slot.total_ns.saturating_add(duration_ns);
                slot.open_level = at as u32;
            }
            touched[n_touched] = id;
            n_touched += usize::from(slot.calls == 0);
            slot.calls = slot.calls.saturating_add(1);
            level[at] = Level {
                id,
                duration_ns,
                children_ns: 0,
            };
        }
        for &l in level.iter().skip(1) {
            close(slots, l);
        }
        self.touched.truncate(n_touched);
    }

    /// A total given directly (no nesting known): inclusive and self are the same.
    pub(super) fn direct(&mut self, id: u32, total_ns: u64) {
        let slot = self.slot(id);
        let first = slot.calls == 0;
        slot.calls = slot.calls.saturating_add(1);
        slot.total_ns = slot.total_ns.saturating_add(total_ns);
        slot.self_ns = slot.self_ns.saturating_add(total_ns);
        if first {
            self.touched.push(id);
        }
    }

    /// Summary-only: folds this frame's per-id aggregates into per-name columns (only
    /// when `keep`, i.e. the frame is not paused), then resets. A name's per-frame total
    /// is the sum over its ids (call sites); saturating sums of unsigned values do not
    /// depend on their order.
    pub(super) fn drain_grouped(
        &mut self,
        groups: &NameGroups,
        columns: &mut [NameColumn],
        keep: bool,
    ) {
        for &id in &self.touched {
            let Some(slot) = self.slots.get_mut(id as usize).map(std::mem::take) else {
                continue;
            };
            if !keep {
                continue;
            }
            let Some(&g) = groups.of_id.get(id as usize) else {
                continue;
            };
            let Some(col) = columns.get_mut(g as usize) else {
                continue;
            };
            col.self_ns = col.self_ns.saturating_add(slot.self_ns);
            col.calls = col.calls.saturating_add(u64::from(slot.calls));
            if !groups.shared.get(g as usize).copied().unwrap_or(false) {
                // The name's only id: its total is the name's.
                col.totals_ns.push(slot.total_ns);
                continue;
            }
            let at = g as usize;
            if at >= self.group_totals.len() {
                self.group_totals.resize(at + 1, None);
            }
            let acc = &mut self.group_totals[at];
            match acc {
                Some(total) => *total = total.saturating_add(slot.total_ns),
                None => {
                    self.groups_touched.push(g);
                    *acc = Some(slot.total_ns);
                }
            }
        }
        self.touched.clear();
        for &g in &self.groups_touched {
            let total = self.group_totals.get_mut(g as usize).and_then(Option::take);
            if let (Some(total), Some(col)) = (total, columns.get_mut(g as usize)) {
                col.totals_ns.push(total);
            }
        }
        self.groups_touched.clear();
    }

    pub(super) fn drain_into(&mut self, out: &mut PerFrame<Agg>) {
        self.touched.sort_unstable();
        for &id in &self.touched {
            if let Some(slot) = self.slots.get_mut(id as usize) {
                out.push_item(Agg {
                    id,
                    calls: slot.calls,
                    total_ns: slot.total_ns,
                    self_ns: slot.self_ns,
                });
                *slot = Slot::default();
            }
        }
        self.touched.clear();
        out.close_frame();
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    /// What a folder holds for the frame: per touched id, in first-seen order.
    fn state(f: &Folder) -> Vec<(u32, u32, u64, u64)> {
        f.touched
            .iter()
            .map(|&id| {
                let s = f.slots[id as usize];
                (id, s.calls, s.total_ns, s.self_ns)
            })
            .collect()
    }

    fn duration() -> impl Strategy<Value = u64> {
        prop_oneof![
            8 => 0u64..2_000,
            1 => Just(u64::MAX / 3),
            1 => Just(u64::MAX),
        ]
    }

    proptest! {
        /// The level fold agrees with the stack fold on every lane it takes: nesting,
        /// recursion (few ids), zero and saturating durations, several lanes per frame.
        #[test]
        fn level_fold_is_the_stack_fold(
            lanes in proptest::collection::vec(
                proptest::collection::vec((0u32..5, 0u32..5, duration()), 0..40),
                1..4,
            ),
        ) {
            let mut by_levels = Folder::default();
            let mut by_stack = Folder::default();
            for raw in &lanes {
                // Depths that never skip a level on the way down.
                let mut limit = 0u32;
                let lane: Vec<(u32, u32, u64)> = raw
                    .iter()
                    .map(|&(id, depth, duration_ns)| {
                        let depth = depth.min(limit);
                        limit = depth + 1;
                        (id, depth, duration_ns)
                    })
                    .collect();
                let lane: Vec<Instance> = lane
                    .into_iter()
                    .map(|(id, depth, duration_ns)| Instance { id, depth, duration_ns })
                    .collect();
                let levels = lane.iter().map(|s| s.depth as usize + 1).max().unwrap_or(1);
                let top_id = lane.iter().map(|s| s.id).max().unwrap_or(0);
                by_levels.fold_levels(&lane, levels, top_id);
                by_stack.fold_stack(&lane);
                prop_assert_eq!(state(&by_levels), state(&by_stack));
            }
        }

        /// `fold_lane` takes either fold and always gives the stack fold's answer,
        /// whatever the depths (gaps, lanes opening deep, depths far past the length).
        #[test]
        fn any_lane_folds_as_the_stack_does(
            lane in proptest::collection::vec((0u32..5, 0u32..6, duration()), 0..40),
            far in any::<bool>(),
        ) {
            let lane: Vec<(u32, u32, u64)> = lane
                .into_iter()
                .map(|(id, d, dur)| (id, if far && d == 5 { u32::MAX } else { d }, dur))
                .collect();
            let mut a = Folder::default();
            let mut b = Folder::default();
            a.fold_lane(lane.iter().copied());
            let lane: Vec<Instance> = lane
                .into_iter()
                .map(|(id, depth, duration_ns)| Instance { id, depth, duration_ns })
                .collect();
            b.fold_stack(&lane);
            prop_assert_eq!(state(&a), state(&b));
        }
    }
}
