//! EC-6 (footprint inside active memory) and EC-21 (no overlap within a record).
//!
//! Both are exact. Every lane walks the same byte pattern in its own
//! partition, so one lane's byte set decides for all of them. Fast interval
//! and injectivity tests settle the common cases; a bitmap over one
//! partition's active bytes (at most 256 KiB of bits) settles the rest.

use super::fail::{Fail, Operand, OverlapFault};
use crate::isa::enums::Dtype;
use crate::isa::tensor::{Region, Tensor4d};
use crate::limits::Arch;

/// One lane's resolved walk: where it starts and the bytes it touches.
pub(crate) struct Walk<'a> {
    pub tensor: &'a Tensor4d,
    pub region: Region,
    pub partition: u32,
    /// Byte offset of element index 0 within the partition.
    pub offset: i64,
    /// Element size in bytes.
    pub size: i64,
    /// First byte touched, relative to the partition.
    pub lo: i64,
    /// One past the last byte touched.
    pub hi: i64,
}

impl<'a> Walk<'a> {
    /// Resolves an immediate-address walk and checks EC-6 (`emu_footprint_in_bounds`):
    /// every touched byte (negative steps included) lies in the active bytes of
    /// the lane's partition, in the region the walk starts in.
    #[inline(always)]
    pub fn new(o: Operand, t: &'a Tensor4d, dtype: Dtype, arch: Arch) -> Result<Walk<'a>, Fail> {
        let loc = t
            .addr
            .location()
            .expect("tensor4d_valid checked the region");
        let size = dtype.size().expect("dtype validated") as i64;
        let (ilo, ihi) = t.index_range();
        let offset = loc.offset as i64;
        let lo = offset + ilo * size;
        let hi = offset + ihi * size + size;
        let active = loc.region.active_bytes(arch);
        if lo < 0 || hi > active as i64 {
            return Err(Fail::EmuFootprintInBounds {
                operand: o,
                region: loc.region,
                lo,
                hi,
                active,
            });
        }
        Ok(Walk {
            tensor: t,
            region: loc.region,
            partition: loc.partition,
            offset,
            size,
            lo,
            hi,
        })
    }

    fn for_each_byte_start(&self, mut f: impl FnMut(i64)) {
        self.tensor
            .for_each_index(|i| f(self.offset + i * self.size));
    }
}

/// A bitmap over the bytes `[base, base + len)` of one partition.
struct Bits {
    base: i64,
    words: Vec<u64>,
}

impl Bits {
    fn new(base: i64, len: i64) -> Bits {
        Bits {
            base,
            words: vec![0; (len as usize).div_ceil(64)],
        }
    }
    /// Sets bit `i`; returns whether it was already set.
    fn set(&mut self, i: i64) -> bool {
        let k = (i - self.base) as usize;
        let (w, b) = (k / 64, 1u64 << (k % 64));
        let was = self.words[w] & b != 0;
        self.words[w] |= b;
        was
    }
    fn get(&self, i: i64) -> bool {
        let k = (i - self.base) as usize;
        self.words[k / 64] & (1u64 << (k % 64)) != 0
    }
}

/// EC-21 (`emu_overlap`): no two outputs share a byte, and src and dst share none.
#[inline(always)]
pub(crate) fn check_overlap(src: &Walk, dst: &Walk, channels: u32) -> Result<(), Fail> {
    let overlap = |why| Err(Fail::EmuOverlap { why });
    // Outputs: equal-size elements from one base are disjoint iff their indices differ.
    if !dst.tensor.provably_injective() {
        let mut seen = Bits::new(dst.lo, dst.hi - dst.lo);
        let mut dup = None;
        dst.for_each_byte_start(|b| {
            if dup.is_none() && seen.set(b) {
                dup = Some(b);
            }
        });
        if let Some(b) = dup {
            return overlap(OverlapFault::Outputs { offset: b as u32 });
        }
    }
    // src vs dst: only lanes that land in the same partition of the same region matter.
    let lanes_meet = src.region == dst.region
        && src.partition < dst.partition + channels
        && dst.partition < src.partition + channels;
    if !lanes_meet || src.hi <= dst.lo || dst.hi <= src.lo {
        return Ok(());
    }
    let lo = src.lo.max(dst.lo);
    let hi = src.hi.min(dst.hi);
    let mut read = Bits::new(lo, hi - lo);
    src.for_each_byte_start(|b| {
        for k in b.max(lo)..(b + src.size).min(hi) {
            read.set(k);
        }
    });
    let mut shared = None;
    dst.for_each_byte_start(|b| {
        if shared.is_none() {
            shared = (b.max(lo)..(b + dst.size).min(hi)).find(|&k| read.get(k));
        }
    });
    match shared {
        Some(k) => overlap(OverlapFault::SrcDst {
            region: src.region,
            offset: k as u32,
        }),
        None => Ok(()),
    }
}
