//! EC-6 (footprint inside active memory) and EC-21 (no overlap within a record).
//!
//! Both are exact. Every lane walks the same byte pattern in its own
//! partition, so one lane's byte set decides for all of them. Fast interval
//! and injectivity tests settle the common cases; a bitmap over one
//! partition's active bytes (at most 256 KiB of bits) settles the rest.

use super::fail::{Fail, Operand, OverlapFault};
use crate::isa::enums::Dtype;
use crate::isa::tensor::{Dims, Location, Region, Tensor4dBytes};
use crate::limits::Arch;

/// One lane's resolved walk: where it starts and the bytes it touches.
#[derive(Clone, Copy)]
pub(crate) struct Walk<'a> {
    /// The descriptor, read in place from its record.
    pub tensor: Tensor4dBytes<'a>,
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
    /// Resolves an immediate-address walk from `loc`, its address's location.
    ///
    /// Infallible on purpose: returning the walk inside a `Result` made the
    /// compiler build it in a temporary and copy it out (through
    /// store-forwarding stalls) on every record; [`Walk::check_in_bounds`]
    /// returns only a unit `Result`.
    #[inline(always)]
    pub fn new(t: Tensor4dBytes<'a>, loc: Location, dtype: Dtype) -> Walk<'a> {
        let size = dtype.size().expect("dtype validated") as i64;
        let (ilo, ihi) = t.index_range();
        let offset = loc.offset as i64;
        Walk {
            tensor: t,
            region: loc.region,
            partition: loc.partition,
            offset,
            size,
            lo: offset + ilo * size,
            hi: offset + ihi * size + size,
        }
    }

    /// EC-6 (`emu_footprint_in_bounds`): every touched byte (negative steps
    /// included) lies in the active bytes of the lane's partition, in the
    /// region the walk starts in.
    #[inline(always)]
    pub fn check_in_bounds(&self, o: Operand, arch: Arch) -> Result<(), Fail> {
        let active = self.region.active_bytes(arch);
        if self.lo < 0 || self.hi > active as i64 {
            return Err(out_of_bounds(o, self.region, self.lo, self.hi, active));
        }
        Ok(())
    }

    fn for_each_byte_start(&self, mut f: impl FnMut(i64)) {
        self.tensor
            .decode()
            .for_each_index(|i| f(self.offset + i * self.size));
    }
}

#[cold]
#[inline(never)]
fn out_of_bounds(o: Operand, region: Region, lo: i64, hi: i64, active: u32) -> Fail {
    Fail::EmuFootprintInBounds {
        operand: o,
        region,
        lo,
        hi,
        active,
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
///
/// The interval and injectivity tests here settle the common cases inline;
/// the exact byte-by-byte searches are out of line so they do not weigh on
/// the validator's hot loop.
#[inline(always)]
pub(crate) fn check_overlap(src: &Walk, dst: &Walk, channels: u32) -> Result<(), Fail> {
    // Outputs: equal-size elements from one base are disjoint iff their indices differ.
    if !dst.tensor.provably_injective()
        && let Some(b) = first_repeated_output(*dst)
    {
        return Err(Fail::EmuOverlap {
            why: OverlapFault::Outputs { offset: b as u32 },
        });
    }
    // src vs dst: only lanes that land in the same partition of the same region matter.
    let lanes_meet = src.region == dst.region
        && src.partition < dst.partition + channels
        && dst.partition < src.partition + channels;
    if !lanes_meet || src.hi <= dst.lo || dst.hi <= src.lo {
        return Ok(());
    }
    match first_shared_byte(*src, *dst) {
        Some(k) => Err(Fail::EmuOverlap {
            why: OverlapFault::SrcDst {
                region: src.region,
                offset: k as u32,
            },
        }),
        None => Ok(()),
    }
}

/// The first output (in walk order) whose start byte an earlier output already
/// started at, if any. (The walks are passed by value: a reference would make
/// the caller keep them in memory on the hot path.)
#[inline(never)]
fn first_repeated_output(dst: Walk) -> Option<i64> {
    let mut seen = Bits::new(dst.lo, dst.hi - dst.lo);
    let mut dup = None;
    dst.for_each_byte_start(|b| {
        if dup.is_none() && seen.set(b) {
            dup = Some(b);
        }
    });
    dup
}

/// The first byte (in dst walk order) that both walks touch, if any, given
/// that their byte ranges intersect.
#[inline(never)]
fn first_shared_byte(src: Walk, dst: Walk) -> Option<i64> {
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
    shared
}

/// EC-21's output rule alone: no two dst elements share a byte.
pub(crate) fn outputs_distinct(dst: &Walk) -> Result<(), OverlapFault> {
    if !dst.tensor.provably_injective()
        && let Some(b) = first_repeated_output(*dst)
    {
        return Err(OverlapFault::Outputs { offset: b as u32 });
    }
    Ok(())
}

/// Marks a byte no source element touches, in [`in_place`]'s map.
const UNTOUCHED: u32 = u32::MAX;
/// Marks a byte two source elements touch.
const SHARED: u32 = u32::MAX - 1;

/// EC-42 (exact in-place elementwise records): `src` and `dst` may share a
/// byte only where the elements containing it are the same lane's element at
/// the same walk position, at the same address with the same size. Lanes are
/// counted from each walk's own start partition, so walks starting at
/// different partitions may share no byte at all. Both walks hold the same
/// element count (the kernels' count predicates ran first).
pub(crate) fn in_place(src: &Walk, dst: &Walk, channels: u32) -> Result<(), OverlapFault> {
    let lanes_meet = src.region == dst.region
        && src.partition < dst.partition + channels
        && dst.partition < src.partition + channels;
    if !lanes_meet || src.hi <= dst.lo || dst.hi <= src.lo {
        return Ok(());
    }
    let region = src.region;
    if src.partition != dst.partition {
        // Every shared byte is shared between different lanes.
        return match first_shared_byte(*src, *dst) {
            Some(k) => Err(OverlapFault::NotInPlace {
                region,
                offset: k as u32,
            }),
            None => Ok(()),
        };
    }
    match first_not_in_place(*src, *dst) {
        Some(k) => Err(OverlapFault::NotInPlace {
            region,
            offset: k as u32,
        }),
        None => Ok(()),
    }
}

/// The first byte (in dst walk order) that breaks EC-42 for two walks of the
/// same lanes, if any.
#[inline(never)]
fn first_not_in_place(src: Walk, dst: Walk) -> Option<i64> {
    let lo = src.lo.max(dst.lo);
    let hi = src.hi.min(dst.hi);
    let len = (hi - lo) as usize;
    // Per byte of the common range: the source position touching it and that
    // element's start byte.
    let mut pos = vec![UNTOUCHED; len];
    let mut start = vec![0i64; len];
    let mut k = 0u32;
    src.for_each_byte_start(|b| {
        for x in b.max(lo)..(b + src.size).min(hi) {
            let i = (x - lo) as usize;
            pos[i] = if pos[i] == UNTOUCHED { k } else { SHARED };
            start[i] = b;
        }
        k += 1;
    });
    let mut bad = None;
    let mut k = 0u32;
    dst.for_each_byte_start(|b| {
        if bad.is_none() {
            bad = (b.max(lo)..(b + dst.size).min(hi)).find(|&x| {
                let i = (x - lo) as usize;
                let p = pos[i];
                p != UNTOUCHED && (p != k || start[i] != b || src.size != dst.size)
            });
        }
        k += 1;
    });
    bad
}

/// EC-21 for walks whose lanes are listed by partition: `src` and `dst` share
/// no byte in any partition that both touch. (Every lane walks the same byte
/// pattern from its own partition, so the byte test is done once.)
pub(crate) fn disjoint_partitions(
    src: &Walk,
    src_parts: &[u32],
    dst: &Walk,
    dst_parts: &[u32],
) -> Result<(), OverlapFault> {
    let meet = src.region == dst.region && src_parts.iter().any(|p| dst_parts.contains(p));
    if !meet || src.hi <= dst.lo || dst.hi <= src.lo {
        return Ok(());
    }
    match first_shared_byte(*src, *dst) {
        Some(k) => Err(OverlapFault::SrcDst {
            region: src.region,
            offset: k as u32,
        }),
        None => Ok(()),
    }
}
