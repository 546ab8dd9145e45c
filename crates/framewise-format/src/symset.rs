//! A set of symbol ids for the writer's per-frame bookkeeping: a bit per id for the dense
//! ids a recorder hands out (0, 1, 2… in interning order), a hash set for the rest, so that
//! a lookup is a shift and a mask rather than a hash, and an odd id (`SymId::MAX`) costs no
//! memory.

use std::collections::HashSet;

use crate::model::SymId;

/// Ids below this are kept in the bit table (at most 128 KiB of it).
const DENSE_LIMIT: SymId = 1 << 20;

/// A set of symbol ids.
#[derive(Default)]
pub(crate) struct SymSet {
    bits: Vec<u64>,
    sparse: HashSet<SymId>,
}

impl SymSet {
    /// Whether `id` is in the set.
    #[inline]
    pub(crate) fn contains(&self, id: SymId) -> bool {
        if id < DENSE_LIMIT {
            let word = (id / 64) as usize;
            self.bits
                .get(word)
                .is_some_and(|bits| bits & (1 << (id % 64)) != 0)
        } else {
            self.sparse.contains(&id)
        }
    }

    /// Adds `id`; true when it was not in the set.
    #[inline]
    pub(crate) fn insert(&mut self, id: SymId) -> bool {
        if id < DENSE_LIMIT {
            let word = (id / 64) as usize;
            if word >= self.bits.len() {
                self.bits.resize(word + 1, 0);
            }
            let Some(bits) = self.bits.get_mut(word) else {
                return false;
            };
            let mask = 1 << (id % 64);
            let new = *bits & mask == 0;
            *bits |= mask;
            new
        } else {
            self.sparse.insert(id)
        }
    }

    /// Removes `id`.
    #[inline]
    pub(crate) fn remove(&mut self, id: SymId) {
        if id < DENSE_LIMIT {
            if let Some(bits) = self.bits.get_mut((id / 64) as usize) {
                *bits &= !(1 << (id % 64));
            }
        } else {
            self.sparse.remove(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_ids_behave_as_a_set() {
        let mut set = SymSet::default();
        for id in [0, 63, 64, 1000, DENSE_LIMIT - 1, DENSE_LIMIT, SymId::MAX] {
            assert!(!set.contains(id));
            assert!(set.insert(id), "{id} is new");
            assert!(!set.insert(id), "{id} is already in");
            assert!(set.contains(id));
        }
        assert!(!set.contains(1));
        assert!(!set.contains(65));
        set.remove(64);
        set.remove(SymId::MAX);
        assert!(!set.contains(64) && !set.contains(SymId::MAX));
        assert!(set.contains(63) && set.contains(DENSE_LIMIT));
        // Removing what is absent, or beyond the table, changes nothing.
        set.remove(500_000);
        assert!(set.contains(1000));
    }
}
