//! The buffers a driver lends to its connections while they read and write
//! ([`Buffers`]), and takes back while they are idle, so that an idle
//! keep-alive connection costs its `Conn` and its socket, not 16 KiB of
//! buffers. One for each of the loops ([`super::evloop`], [`super::ring`])
//! and one for each tokio runtime thread ([`super::tokio_task`]).

use crate::conn::{Buffers, Conn};

/// Spare buffer pairs, at most `most` of them (beyond that, a pair given
/// back is freed).
#[derive(Debug)]
pub(crate) struct Spares {
    kept: Vec<Buffers>,
    most: usize,
}

impl Spares {
    /// None kept yet; at most `most` will be.
    pub(crate) const fn new(most: usize) -> Spares {
        Spares {
            kept: Vec::new(),
            most,
        }
    }

    /// A pair, spare or new.
    #[inline]
    pub(crate) fn lend(&mut self) -> Buffers {
        self.kept.pop().unwrap_or_else(Buffers::new)
    }

    /// Takes `b` back (or frees it, with `most` kept already).
    #[inline]
    pub(crate) fn keep(&mut self, b: Buffers) {
        if self.kept.len() < self.most {
            self.kept.push(b);
        }
    }

    /// An idle connection that is about to wait gives its buffers back.
    #[inline]
    pub(crate) fn reclaim(&mut self, conn: &mut Conn) {
        if conn.is_idle()
            && let Some(b) = conn.detach()
        {
            self.keep(b);
        }
    }

    /// An idle connection that is about to read is lent buffers.
    #[inline]
    pub(crate) fn lend_to(&mut self, conn: &mut Conn) {
        if conn.is_idle() {
            conn.attach(self.lend());
        }
    }

    /// Pairs kept now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.kept.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spares_are_bounded() {
        let mut s = Spares::new(4);
        for _ in 0..10 {
            s.keep(Buffers::new());
        }
        assert_eq!(s.len(), 4);
        let _b = s.lend();
        assert_eq!(s.len(), 3);
    }
}
