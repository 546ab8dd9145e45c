//! The frame table and the per-frame items (aggregates, counter values, marks).

use super::*;

/// One row of the frame table, by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRow {
    /// The frame's index as the source numbered it.
    pub index: u64,
    /// The phase, if the host set one.
    pub phase: Option<PhaseId>,
    /// The host declared it paused.
    pub paused: bool,
    /// CPU begin, ns.
    pub cpu_begin_ns: u64,
    /// CPU end, ns.
    pub cpu_end_ns: u64,
    /// Period: this begin to the next frame's begin, ns; `None` when unknown (the last
    /// frame, the next frame was lost or dropped, or the clock stepped back): the rule of
    /// [`framewise_format::derived::period_ns`], the directory's.
    pub period_ns: Option<u64>,
    /// GPU duration (first begin to last end over timed passes, longest queue), ns.
    pub gpu_ns: Option<u64>,
}

impl FrameRow {
    /// CPU work: begin to end, ns.
    pub fn work_ns(&self) -> u64 {
        self.cpu_end_ns.saturating_sub(self.cpu_begin_ns)
    }
}

/// The frame table, one column per field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameTable {
    /// Frame indices.
    pub index: Vec<u64>,
    /// Phases.
    pub phase: Vec<Option<PhaseId>>,
    /// Pause flags.
    pub paused: Vec<bool>,
    /// CPU begins, ns.
    pub cpu_begin_ns: Vec<u64>,
    /// CPU ends, ns.
    pub cpu_end_ns: Vec<u64>,
    /// Periods, ns.
    pub period_ns: Vec<Option<u64>>,
    /// GPU durations, ns.
    pub gpu_ns: Vec<Option<u64>>,
}

impl FrameTable {
    /// Number of frames.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether there are no frames.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Row `row` by value, if it exists.
    pub fn row(&self, row: usize) -> Option<FrameRow> {
        Some(FrameRow {
            index: *self.index.get(row)?,
            phase: *self.phase.get(row)?,
            paused: *self.paused.get(row)?,
            cpu_begin_ns: *self.cpu_begin_ns.get(row)?,
            cpu_end_ns: *self.cpu_end_ns.get(row)?,
            period_ns: *self.period_ns.get(row)?,
            gpu_ns: *self.gpu_ns.get(row)?,
        })
    }

    /// Every row, in order.
    pub fn rows(&self) -> impl Iterator<Item = FrameRow> + '_ {
        (0..self.len()).filter_map(|r| self.row(r))
    }
}

/// Per-frame items in compressed-row form: `offsets[r]..offsets[r + 1]` are frame `r`'s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerFrame<T> {
    offsets: Vec<usize>,
    items: Vec<T>,
}

impl<T> Default for PerFrame<T> {
    fn default() -> Self {
        Self {
            offsets: vec![0],
            items: Vec::new(),
        }
    }
}

impl<T> PerFrame<T> {
    /// Frame `row`'s items (empty when the row does not exist).
    pub fn frame(&self, row: usize) -> &[T] {
        match (self.offsets.get(row), self.offsets.get(row + 1)) {
            (Some(&a), Some(&b)) => self.items.get(a..b).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Every item of every frame.
    pub fn all(&self) -> &[T] {
        &self.items
    }

    /// Number of frames.
    pub fn frames(&self) -> usize {
        self.offsets.len() - 1
    }

    pub(crate) fn push_item(&mut self, item: T) {
        self.items.push(item);
    }

    /// Removes the items pushed since the last [`Self::close_frame`].
    pub(crate) fn drain_open(&mut self) -> std::vec::Drain<'_, T> {
        let start = self
            .offsets
            .last()
            .copied()
            .unwrap_or(0)
            .min(self.items.len());
        self.items.drain(start..)
    }

    pub(crate) fn close_frame(&mut self) {
        self.offsets.push(self.items.len());
    }

    pub(crate) fn shrink(&mut self) {
        self.offsets.shrink_to_fit();
        self.items.shrink_to_fit();
    }
}

/// A scope's or a pass's aggregate within one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Agg {
    /// The scope or pass.
    pub id: u32,
    /// Times it ran in the frame.
    pub calls: u32,
    /// Inclusive total, ns (a recursive instance inside itself is not counted twice).
    pub total_ns: u64,
    /// Self time (inclusive minus direct children), ns.
    pub self_ns: u64,
}

/// A counter's value in one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterEntry {
    /// The counter.
    pub counter: CounterId,
    /// The raw value: an `i64`, or `f64::to_bits` for a [`Numeric::Float`] counter. Read it
    /// with [`Capture::counter_value`].
    pub raw: i64,
}

/// A usermark's extra fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserMark {
    /// The trailing window the mark flags, ns.
    pub window_ns: u64,
    /// The player's note.
    pub note: String,
}

/// An instant mark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkRow {
    /// Row of the frame it belongs to.
    pub frame_row: u32,
    /// The mark's name.
    pub name: MarkNameId,
    /// The thread it was made on, if known.
    pub thread: Option<ThreadId>,
    /// When, ns.
    pub at_ns: u64,
    /// Usermark fields, for a usermark.
    pub user: Option<UserMark>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_frame_slices() {
        let mut pf = PerFrame::default();
        pf.push_item(1u32);
        pf.push_item(2);
        pf.close_frame();
        pf.close_frame();
        pf.push_item(3);
        pf.close_frame();
        assert_eq!(pf.frames(), 3);
        assert_eq!(pf.frame(0), &[1, 2]);
        assert_eq!(pf.frame(1), &[] as &[u32]);
        assert_eq!(pf.frame(2), &[3]);
        assert_eq!(pf.frame(3), &[] as &[u32]);
    }
}
