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
    /// Every id below this one is in the set.
    filled_below: SymId,
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
            if id == self.filled_below {
                self.fill_from(id);
            }
            new
        } else {
            self.sparse.insert(id)
        }
    }

    /// Every id below the one returned is in the set (for a quick test before
    /// [`SymSet::contains`] of the ids a writer has written, which grow from 0).
    #[inline]
    pub(crate) fn filled_below(&self) -> SymId {
        self.filled_below
    }

    /// Moves `filled_below` past `id`, just inserted, and the ids after it in the set.
    #[cold]
    fn fill_from(&mut self, id: SymId) {
        let mut next = id;
        while next < DENSE_LIMIT && self.contains(next) {
            next += 1;
        }
        self.filled_below = next;
    }

    /// Removes `id`.
    #[inline]
    pub(crate) fn remove(&mut self, id: SymId) {
        self.filled_below = self.filled_below.min(id);
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

    #[test]
    fn filled_below_is_the_first_id_missing() {
        let mut set = SymSet::default();
        assert_eq!(set.filled_below(), 0);
        set.insert(1);
        set.insert(2);
        assert_eq!(set.filled_below(), 0);
        set.insert(0);
        assert_eq!(set.filled_below(), 3);
        set.remove(1);
        assert_eq!(set.filled_below(), 1);
        assert!(set.insert(1));
        assert_eq!(set.filled_below(), 3);
        for id in 3..200 {
            set.insert(id);
        }
        set.insert(DENSE_LIMIT);
        assert_eq!(set.filled_below(), 200);
        set.remove(DENSE_LIMIT);
        assert_eq!(set.filled_below(), 200);
        for id in 0..set.filled_below() {
            assert!(set.contains(id));
        }
    }
}
