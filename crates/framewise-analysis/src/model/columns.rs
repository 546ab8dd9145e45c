//! The compact columns a long capture is kept in: chunked values, ns durations that widen
//! once, and a summary-only load's per-name columns.

/// An append-only column stored in fixed-size chunks, so that growing it copies nothing
/// past its first chunk (a one-hour capture has columns of 216,000 values). The first chunk
/// grows by doubling from 16 values, so a column of a few values (one of 300,000 span names
/// seen once) holds a few values' room, not a whole chunk's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chunked<T> {
    /// Full chunks of [`Self::CHUNK`] values.
    full: Vec<Vec<T>>,
    /// The chunk being filled.
    tail: Vec<T>,
}

impl<T: Copy> Chunked<T> {
    const CHUNK: usize = 4096;

    /// Appends a value.
    #[inline]
    pub fn push(&mut self, value: T) {
        if self.tail.len() == self.tail.capacity() {
            self.make_room();
        }
        self.tail.push(value);
    }

    /// Room for one more value in the tail: twice its room (16 values at first, a whole
    /// chunk's at most), or a fresh tail of a whole chunk when full.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self) {
        if self.tail.len() >= Self::CHUNK {
            let full = std::mem::replace(&mut self.tail, Vec::with_capacity(Self::CHUNK));
            self.full.push(full);
        } else {
            let want = (self.tail.capacity() * 2).clamp(16, Self::CHUNK);
            self.tail.reserve_exact(want - self.tail.len());
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.full.len() * Self::CHUNK + self.tail.len()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.tail.is_empty() && self.full.is_empty()
    }

    fn chunks(&self) -> impl Iterator<Item = &[T]> + '_ {
        self.full
            .iter()
            .map(Vec::as_slice)
            .chain(std::iter::once(self.tail.as_slice()))
    }

    /// Values in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.chunks().flat_map(|c| c.iter().copied())
    }

    /// A contiguous copy.
    pub fn to_vec(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len());
        for c in self.chunks() {
            out.extend_from_slice(c);
        }
        out
    }

    pub(crate) fn shrink(&mut self) {
        self.tail.shrink_to_fit();
        self.full.shrink_to_fit();
    }
}

/// Durations in ns, in push order: four bytes a value while every value fits in 32 bits
/// (up to 4.29 s), eight from the first one that does not (the column is widened once,
/// keeping every value). A one-hour capture keeps one such column per scope name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NsColumn {
    narrow: Chunked<u32>,
    wide: Option<Chunked<u64>>,
}

impl NsColumn {
    /// Appends a value.
    #[inline]
    pub fn push(&mut self, value_ns: u64) {
        match &mut self.wide {
            Some(wide) => wide.push(value_ns),
            None => match u32::try_from(value_ns) {
                Ok(narrow) => self.narrow.push(narrow),
                Err(_) => self.widen(value_ns),
            },
        }
    }

    #[cold]
    #[inline(never)]
    fn widen(&mut self, value_ns: u64) {
        let mut wide = Chunked::default();
        for v in std::mem::take(&mut self.narrow).iter() {
            wide.push(u64::from(v));
        }
        wide.push(value_ns);
        self.wide = Some(wide);
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.wide.as_ref().map_or(self.narrow.len(), Chunked::len)
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let narrow = self
            .wide
            .is_none()
            .then(|| self.narrow.iter().map(u64::from));
        let wide = self.wide.as_ref().map(|w| w.iter());
        narrow
            .into_iter()
            .flatten()
            .chain(wide.into_iter().flatten())
    }

    /// A contiguous copy.
    pub fn to_vec(&self) -> Vec<u64> {
        match &self.wide {
            Some(wide) => wide.to_vec(),
            None => {
                let mut out = Vec::with_capacity(self.narrow.len());
                for c in self.narrow.chunks() {
                    out.extend(c.iter().map(|&v| u64::from(v)));
                }
                out
            }
        }
    }

    pub(crate) fn shrink(&mut self) {
        self.narrow.shrink();
        if let Some(w) = self.wide.as_mut() {
            w.shrink();
        }
    }
}

/// One name's per-frame totals, in frame order over non-paused frames: what a
/// summary-only load keeps instead of per-frame aggregates (4 bytes per scope per frame,
/// 8 for a name whose per-frame total ever exceeds 4.29 s).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameColumn {
    /// The scope or pass name (call sites merged).
    pub name: String,
    /// Per-frame inclusive totals, ns, in the non-paused frames in which it ran.
    pub totals_ns: NsColumn,
    /// Self time over those frames, ns.
    pub self_ns: u64,
    /// Calls over those frames.
    pub calls: u64,
}

/// What a summary-only load keeps: per-name and per-counter columns over non-paused
/// frames, enough for `summarize`, `diff` and `gate`, not for hitches or attribution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SummaryColumns {
    /// Scopes by name.
    pub scopes: Vec<NameColumn>,
    /// GPU passes by name.
    pub passes: Vec<NameColumn>,
    /// Raw counter values by [`CounterId`](super::CounterId), in frame order over non-paused frames.
    pub counters: Vec<Chunked<i64>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns_columns_widen_once_and_keep_every_value() {
        let mut c = NsColumn::default();
        let values: Vec<u64> = (0..10_000u64)
            .map(|i| match i {
                5_000 => u64::from(u32::MAX) + 1,
                7_777 => u64::MAX,
                _ => i * 1_000,
            })
            .collect();
        for (n, &v) in values.iter().enumerate() {
            c.push(v);
            if n == 4_999 {
                assert!(c.wide.is_none(), "narrow while every value fits");
            }
        }
        assert!(c.wide.is_some());
        assert_eq!(c.len(), values.len());
        assert_eq!(c.to_vec(), values);
        assert_eq!(c.iter().collect::<Vec<_>>(), values);
        let mut narrow = NsColumn::default();
        narrow.push(u64::from(u32::MAX));
        assert_eq!(narrow.to_vec(), vec![u64::from(u32::MAX)]);
        assert!(narrow.wide.is_none());
    }
}
