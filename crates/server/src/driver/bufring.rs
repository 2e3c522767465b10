//! The receive buffers of one io_uring loop ([`super::ring`]): a
//! provided-buffer ring (`IORING_REGISTER_PBUF_RING`), memory shared with the
//! kernel, from which a multishot receive takes a buffer for each batch of
//! bytes it delivers. The loop hands the bytes to their connection (or
//! copies them to its inbox) and gives the buffer back in the same turn, so
//! the buffers are shared by every connection of the loop and an idle
//! connection holds none.

use std::io::ErrorKind;

use io_uring::{IoUring, types};

/// Buffers per ring, and their size. 16 KiB holds a TLS record; 256 of them
/// (4 MiB) cover a turn in which that many connections received; a receive
/// that finds none ends with `ENOBUFS` and the loop re-arms it.
const BUFFERS: u16 = 256;
pub(crate) const BUFFER: usize = 16 * 1024;
/// The buffer group the loop's receives name.
pub(crate) const GROUP: u16 = 0;

/// The provided-buffer ring of one [`super::ring::Ring`]: [`BUFFERS`] buffers of
/// [`BUFFER`] bytes that the kernel fills with received bytes, each given
/// back as soon as its bytes are read or copied out.
pub(crate) struct BufRing {
    entries: *mut types::BufRingEntry,
    layout: std::alloc::Layout,
    data: Vec<u8>,
    tail: u16,
}

impl std::fmt::Debug for BufRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufRing").field("tail", &self.tail).finish()
    }
}

#[allow(unsafe_code)] // the buffer ring is memory shared with the kernel
impl BufRing {
    /// Allocates the buffers and registers them as group [`GROUP`].
    pub(crate) fn new(ring: &IoUring) -> std::io::Result<BufRing> {
        let layout =
            std::alloc::Layout::from_size_align(usize::from(BUFFERS) * 16, 4096).expect("layout");
        // SAFETY: the layout has a non-zero size.
        let entries = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<types::BufRingEntry>();
        if entries.is_null() {
            return Err(ErrorKind::OutOfMemory.into());
        }
        let mut bufs = BufRing {
            entries,
            layout,
            data: vec![0; usize::from(BUFFERS) * BUFFER],
            tail: 0,
        };
        for bid in 0..BUFFERS {
            bufs.give(bid);
        }
        bufs.publish();
        // SAFETY: `entries` is page aligned and holds `BUFFERS` entries; it
        // and `data` live as long as the `BufRing`, which its owner must drop
        // after the `IoUring` (`Ring`'s field order does), so the kernel never sees them
        // freed while the group is registered.
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(entries as u64, BUFFERS, GROUP, 0)?;
        }
        Ok(bufs)
    }

    /// The bytes of buffer `bid` the kernel filled.
    pub(crate) fn bytes(&self, bid: u16, len: usize) -> &[u8] {
        let at = usize::from(bid) * BUFFER;
        &self.data[at..at + len.min(BUFFER)]
    }

    /// Puts buffer `bid` back (seen by the kernel at the next `publish`).
    pub(crate) fn give(&mut self, bid: u16) {
        let slot = usize::from(self.tail & (BUFFERS - 1));
        // SAFETY: `slot` < BUFFERS, inside the allocation; the kernel reads
        // entries only up to the published tail, and this one is past it.
        let e = unsafe { &mut *self.entries.add(slot) };
        e.set_addr(self.data.as_ptr() as u64 + (usize::from(bid) * BUFFER) as u64);
        e.set_len(BUFFER as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Tells the kernel about the buffers given back.
    pub(crate) fn publish(&self) {
        // SAFETY: the tail is the `resv` field of the first entry, inside the
        // allocation, u16-aligned; the kernel reads it with acquire ordering.
        unsafe {
            let tail = types::BufRingEntry::tail(self.entries).cast_mut();
            std::sync::atomic::AtomicU16::from_ptr(tail)
                .store(self.tail, std::sync::atomic::Ordering::Release);
        }
    }
}

#[allow(unsafe_code)] // frees the allocation made in `new`
impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.entries.cast(), self.layout) }
    }
}
