//! The places of a loop's connections ([`super::evloop`], [`super::ring`]):
//! a connection is known by its index here, in epoll tokens, ring requests
//! and timer entries ([`super::timers`]), and each place has a generation
//! that moves on when its connection is gone, so that a late event, a late
//! completion or a stale timer entry for a closed connection never reaches
//! the next one in the same place.
//!
//! A place can also be empty and still taken: `event`'s loop lends a
//! connection to a worker and keeps its place ([`Places::lend`],
//! [`Places::put`]).

use std::ops::{Index, IndexMut};

/// A loop's connections by place.
#[derive(Debug)]
pub(crate) struct Places<T> {
    slots: Vec<Option<T>>,
    /// Each place's generation.
    gens: Vec<u32>,
    /// Places whose connection is gone, to be used again.
    free: Vec<u32>,
    /// Places taken (a connection lent to a worker counts).
    open: usize,
}

impl<T> Default for Places<T> {
    fn default() -> Self {
        Places {
            slots: Vec::new(),
            gens: Vec::new(),
            free: Vec::new(),
            open: 0,
        }
    }
}

impl<T> Places<T> {
    /// Puts `t` in a free place, or a new one at the end; its index.
    pub(crate) fn insert(&mut self, t: T) -> usize {
        let index = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                self.slots.push(None);
                self.gens.push(0);
                self.slots.len() - 1
            }
        };
        self.slots[index] = Some(t);
        self.open += 1;
        index
    }

    /// Takes the connection out and frees its place: the place's
    /// generation moves on.
    pub(crate) fn remove(&mut self, index: usize) -> Option<T> {
        let t = self.slots[index].take()?;
        self.gens[index] = self.gens[index].wrapping_add(1);
        self.free.push(index as u32);
        self.open -= 1;
        Some(t)
    }

    /// Takes the connection out and keeps its place (it comes back with
    /// [`Places::put`]).
    pub(crate) fn lend(&mut self, index: usize) -> Option<T> {
        self.slots[index].take()
    }

    /// Puts a lent connection back in its place.
    pub(crate) fn put(&mut self, index: usize, t: T) {
        self.slots[index] = Some(t);
    }

    /// The generation of each place, by index.
    pub(crate) fn gens(&self) -> &[u32] {
        &self.gens
    }

    /// Is `index` a place of generation `gen_` now?
    #[inline]
    pub(crate) fn is_current(&self, index: usize, gen_: u32) -> bool {
        self.gens.get(index) == Some(&gen_)
    }

    /// Places taken.
    pub(crate) fn open(&self) -> usize {
        self.open
    }

    /// Places made so far (taken or free): the indices are below it.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }
}

/// The connection in a place, if it is there (not freed, not lent).
impl<T> Index<usize> for Places<T> {
    type Output = Option<T>;

    #[inline]
    fn index(&self, index: usize) -> &Option<T> {
        &self.slots[index]
    }
}

impl<T> IndexMut<usize> for Places<T> {
    #[inline]
    fn index_mut(&mut self, index: usize) -> &mut Option<T> {
        &mut self.slots[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_place_is_used_again_with_a_new_generation() {
        let mut p = Places::default();
        let a = p.insert("a");
        let gen_a = p.gens()[a];
        assert_eq!(p.remove(a), Some("a"));
        assert_eq!(p.open(), 0);
        let b = p.insert("b");
        assert_eq!(b, a);
        assert!(!p.is_current(b, gen_a));
        assert!(p.is_current(b, p.gens()[b]));
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn a_lent_connection_keeps_its_place() {
        let mut p = Places::default();
        let a = p.insert(1);
        let gen_a = p.gens()[a];
        assert_eq!(p.lend(a), Some(1));
        assert_eq!(p.open(), 1);
        let b = p.insert(2);
        assert_ne!(a, b);
        p.put(a, 1);
        assert!(p.is_current(a, gen_a));
        assert_eq!(p[a], Some(1));
        assert_eq!(p.remove(a), Some(1));
        assert_eq!(p.remove(a), None, "freed once");
        assert_eq!(p.open(), 1);
    }
}
