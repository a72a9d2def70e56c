//! A DMA_MEMCPY (EC-23) between places a backend that keeps its own copy of
//! device memory holds, as it may run it ([`crate::device::Resident::dma`]):
//! both walks on chip (SBUF or PSUM), or one on chip and the other in the
//! device DRAM the backend holds for the run ([`crate::device::Begin::dram`]).
//! The runtime resolves and checks the record (`runtime::dma`) and runs it
//! on the host when no backend takes it. On-chip DMAs are how a program
//! moves data across partitions; DMAs to and from held DRAM keep a
//! program's DRAM variables on the backend.
//!
//! A walk's element `(i, j)` (i fastest) is at address
//! `start + j·step[1] + i·step[0]` (bytes). On chip it is read through
//! SPEC §3's map: partition `rel >> shift`, byte `rel & (2^shift − 1)` of it;
//! in held DRAM it is a byte of the held window.

use crate::device::HostRange;
use crate::device::convert::{InType, OutType};
use crate::isa::tensor::Region;

/// Where a [`ChipWalk`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// SBUF or PSUM, addressed through SPEC §3's map.
    Chip(Region),
    /// The device DRAM the backend holds for the run
    /// ([`crate::device::Begin::dram`]): flat, from its first byte.
    HeldDram,
}

/// One side of a DMA a backend may run, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChipWalk {
    /// SBUF, PSUM or held DRAM.
    pub place: Place,
    /// The address of element (0, 0), from the region's base (in held
    /// DRAM, from the held window's first byte).
    pub start: u64,
    /// Steps in bytes, dim 0 fastest.
    pub step: [i64; 2],
    /// Elements per dim.
    pub num: [u64; 2],
    /// Bytes of one element.
    pub elem: u64,
}

impl ChipWalk {
    /// True when no two elements share a byte: the rows (or the columns)
    /// follow each other without interleaving. Sufficient, not necessary.
    pub fn distinct(&self) -> bool {
        let [n0, n1] = self.num;
        let [s0, s1] = [self.step[0].unsigned_abs(), self.step[1].unsigned_abs()];
        let e = self.elem;
        let after = |n: u64, s: u64, m: u64, t: u64| {
            // Elements along (n, s) apart, and each line along (m, t) past
            // the whole of the one before.
            (n <= 1 || s >= e) && (m <= 1 || t >= (n.max(1) - 1) * s + e)
        };
        after(n0, s0, n1, s1) || after(n1, s1, n0, s0)
    }

    /// The largest power of two up to 4 that divides the start and both
    /// steps: every element address is aligned to it.
    pub fn alignment(&self) -> u64 {
        let bits = self.start | self.step[0].unsigned_abs() | self.step[1].unsigned_abs();
        1 << bits.trailing_zeros().min(2)
    }
}

/// A DMA_MEMCPY between on-chip places, or between one and held DRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChipDma {
    /// The source walk.
    pub src: ChipWalk,
    /// The destination walk (as many elements as the source).
    pub dst: ChipWalk,
    /// EC-23: in → f32 → out; `None` copies each element's bytes verbatim
    /// (equal element sizes).
    pub convert: Option<(InType, OutType)>,
}

impl ChipDma {
    /// Elements moved.
    pub fn elements(&self) -> u64 {
        self.src.num[0] * self.src.num[1]
    }

    /// True when running every element at once gives EC-23's sequential
    /// result: no dst byte is written twice ([`ChipWalk::distinct`]) and no
    /// byte the DMA reads is one it writes. `read` and `written` are the
    /// walks' bytes per partition ([`HostRange`]s, from the first byte
    /// touched to the last), each list in increasing order as the runtime
    /// makes them (one region each, a range per partition): one sweep
    /// through both, not every pair. A walk in held DRAM has no ranges: it
    /// meets no on-chip byte.
    pub fn runs_at_once(&self, read: &[HostRange], written: &[HostRange]) -> bool {
        debug_assert!(read.is_sorted_by_key(|r| (r.region, r.bytes.start)));
        debug_assert!(written.is_sorted_by_key(|r| (r.region, r.bytes.start)));
        if !self.dst.distinct() {
            return false;
        }
        let (mut r, mut w) = (read.iter().peekable(), written.iter().peekable());
        while let (Some(a), Some(b)) = (r.peek(), w.peek()) {
            let (a, b) = ((a.region, &a.bytes), (b.region, &b.bytes));
            if a.0 == b.0 && a.1.start < b.1.end && b.1.start < a.1.end {
                return false;
            }
            // The range that ends first meets nothing later in the other list.
            if (a.0, a.1.end) <= (b.0, b.1.end) {
                r.next();
            } else {
                w.next();
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(start: u64, step: [i64; 2], num: [u64; 2], elem: u64) -> ChipWalk {
        ChipWalk {
            place: Place::Chip(Region::Sbuf),
            start,
            step,
            num,
            elem,
        }
    }

    #[test]
    fn distinct_walks_write_no_byte_twice() {
        // Rows of adjacent elements, rows one after another.
        assert!(w(0, [4, 16], [4, 3], 4).distinct());
        // A transpose: dim 0 across partitions, dim 1 along them.
        assert!(w(0, [1 << 18, 4], [128, 16], 4).distinct());
        // Backwards steps count by their size.
        assert!(w(64, [-4, -16], [4, 3], 4).distinct());
        // Elements 2 bytes apart share bytes.
        assert!(!w(0, [2, 64], [4, 2], 4).distinct());
        // Rows 12 bytes apart, 16 bytes long, interleave either way.
        assert!(!w(0, [4, 12], [4, 2], 4).distinct());
        // One element, or a step 0 along a dim of one.
        assert!(w(0, [0, 0], [1, 1], 8).distinct());
        assert!(w(0, [4, 0], [4, 1], 4).distinct());
    }

    #[test]
    fn runs_at_once_only_when_no_read_range_meets_a_written_one() {
        let r = |region, lo, hi| HostRange {
            region,
            bytes: lo..hi,
        };
        let dma = ChipDma {
            src: w(0, [4, 0], [4, 1], 4),
            dst: w(0, [4, 0], [4, 1], 4),
            convert: None,
        };
        let read = [r(Region::Sbuf, 0, 16), r(Region::Sbuf, 100, 116)];
        // Between and after the read ranges, or in the other region.
        let apart = [r(Region::Sbuf, 16, 100), r(Region::Sbuf, 116, 200)];
        assert!(dma.runs_at_once(&read, &apart));
        assert!(dma.runs_at_once(&read, &[r(Region::Psum, 0, 200)]));
        // One byte shared with the second read range, past the first.
        let meets = [r(Region::Sbuf, 20, 40), r(Region::Sbuf, 115, 120)];
        assert!(!dma.runs_at_once(&read, &meets));
        assert!(!dma.runs_at_once(&meets, &read));
        // A dst that writes a byte twice.
        let twice = ChipDma {
            dst: w(0, [2, 0], [4, 1], 4),
            ..dma
        };
        assert!(!twice.runs_at_once(&read, &apart));
    }

    #[test]
    fn alignment_is_what_divides_start_and_steps() {
        assert_eq!(w(8, [4, 1 << 18], [2, 2], 4).alignment(), 4);
        assert_eq!(w(2, [4, 8], [2, 2], 2).alignment(), 2);
        assert_eq!(w(4, [6, 8], [2, 2], 6).alignment(), 2);
        assert_eq!(w(4, [3, 8], [2, 2], 3).alignment(), 1);
        assert_eq!(w(0, [-8, 0], [2, 1], 4).alignment(), 4);
    }
}
