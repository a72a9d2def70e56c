//! DMA_MEMCPY (EC-23): resolving its ADDR8s (EC-22), checking its footprint
//! before anything runs, and copying on the host.
//!
//! A walk's element `(i, j)` (i fastest) is at byte address
//! `start + (j·step[1] + i·step[0]) · elem_size`. On chip that address is read
//! through SPEC §3's map, so one walk may cross partitions (a `step[1]` of
//! 256 KiB / elem_size visits one partition per row); in DRAM it is a byte of
//! the flat DRAM space (EC-18). Element `k` of the src walk moves to element
//! `k` of the dst walk, both in walk order; the copy is sequential in that
//! order, so overlapping walks behave as if each element moved before the
//! next one was read.

use super::image::DramImage;
use super::program::Dram;
use crate::device::convert::{InType, OutType, load_f32_bits, store_f32_bits};
use crate::device::exec::{ResolvedDma, ResolvedWalk};
use crate::device::{ChipDma, ChipWalk, DeviceMemory, HostRange, HostWrite, Place};
use crate::isa::control::{Addr8, DmaMemcpy, DmaWalk};
use crate::isa::tensor::Region;
use crate::isa::validate::Operand;
use crate::limits::{Arch, PARTITIONS};
use std::borrow::Cow;
use std::fmt;

/// Where a walk's bytes live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    /// Device DRAM (EC-18).
    Dram,
    /// SBUF or PSUM (SPEC §3).
    OnChip(Region),
}

impl Space {
    fn index(self) -> usize {
        match self {
            Space::Dram => 0,
            Space::OnChip(Region::Sbuf) => 1,
            Space::OnChip(Region::Psum) => 2,
        }
    }
}

/// One resolved side of a DMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WalkPlan {
    space: Space,
    /// Byte address of element (0, 0): a DRAM byte, or an on-chip address.
    start: i64,
    /// Steps in bytes.
    step: [i64; 2],
    num: [u64; 2],
    elem: usize,
    /// On chip: partition shift, active bytes per partition, region base.
    shift: u32,
    active: i64,
    base: i64,
}

impl WalkPlan {
    fn new(space: Space, start: i64, w: &DmaWalk, arch: Arch) -> WalkPlan {
        let es = w.elem_size as i64;
        let (shift, active, base) = match space {
            Space::Dram => (0, 0, 0),
            Space::OnChip(r) => (
                r.partition_shift(),
                r.active_bytes(arch) as i64,
                r.base() as i64,
            ),
        };
        WalkPlan {
            space,
            start,
            step: [w.step[0] as i64 * es, w.step[1] as i64 * es],
            num: [w.num[0] as u64, w.num[1] as u64],
            elem: w.elem_size as usize,
            shift,
            active,
            base,
        }
    }

    fn elements(&self) -> u64 {
        self.num[0] * self.num[1]
    }

    /// `[lo, hi)` spanned by the elements `i` in `0..num[0]` of a row starting at `row`.
    fn row_span(&self, row: i128) -> (i128, i128) {
        let reach = (self.num[0] as i128 - 1) * self.step[0] as i128;
        (row + reach.min(0), row + reach.max(0) + self.elem as i128)
    }

    /// `[lo, hi)` spanned by the whole walk (its corners are touched elements).
    fn span(&self) -> (i128, i128) {
        let reach = (self.num[1] as i128 - 1) * self.step[1] as i128;
        let (lo, hi) = self.row_span(self.start as i128);
        (lo + reach.min(0), hi + reach.max(0))
    }

    /// The index into the space's byte buffer of a (checked) byte address.
    #[inline(always)]
    fn index(&self, addr: i64) -> usize {
        match self.space {
            Space::Dram => addr as usize,
            Space::OnChip(_) => {
                let rel = addr - self.base;
                ((rel >> self.shift) * self.active + (rel & ((1 << self.shift) - 1))) as usize
            }
        }
    }

    /// The buffer index of every element, in walk order.
    #[inline(always)]
    fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.num[1]).flat_map(move |j| {
            let row = self.start + j as i64 * self.step[1];
            (0..self.num[0]).map(move |i| self.index(row + i as i64 * self.step[0]))
        })
    }

    /// On chip: for each partition the walk touches, the range of its bytes
    /// from the first touched to the last (a row that stays in one partition
    /// costs one step, one that crosses partitions one per element). In
    /// DRAM: nothing.
    /// In DRAM: the bytes `[lo, hi)` from the lowest element the walk
    /// touches to the end of the highest. On chip, or empty: none.
    fn dram_hull(&self) -> Option<(i64, i64)> {
        if !matches!(self.space, Space::Dram) || self.elements() == 0 {
            return None;
        }
        let (mut lo, mut hi) = (self.start, self.start);
        for d in 0..2 {
            let extent = (self.num[d] as i64 - 1) * self.step[d];
            if extent < 0 {
                lo += extent;
            } else {
                hi += extent;
            }
        }
        Some((lo, hi + self.elem as i64))
    }

    fn host_ranges(&self, out: &mut Vec<HostRange>) {
        let Space::OnChip(region) = self.space else {
            return;
        };
        if self.elements() == 0 {
            return;
        }
        let part = |addr: i128| (addr - self.base as i128) >> self.shift;
        let mut spans = [(usize::MAX, 0usize); PARTITIONS as usize];
        // An element may straddle two partitions where a region's active
        // bytes fill its stride (SBUF on MARIANA): each partition gets its
        // own part, as a HostRange never crosses into the next.
        let active = self.active as usize;
        let mut add = |mut lo: usize, hi: usize| {
            while lo < hi {
                let p = lo / active;
                let end = hi.min((p + 1) * active);
                spans[p] = (spans[p].0.min(lo), spans[p].1.max(end));
                lo = end;
            }
        };
        let mut row = self.start;
        for _ in 0..self.num[1] {
            let (lo, hi) = self.row_span(row as i128);
            if part(lo) == part(hi - 1) {
                add(self.index(lo as i64), self.index(hi as i64 - 1) + 1);
            } else {
                for i in 0..self.num[0] as i64 {
                    let at = self.index(row + i * self.step[0]);
                    add(at, at + self.elem);
                }
            }
            row += self.step[1];
        }
        out.extend(
            spans
                .into_iter()
                .filter(|&(lo, hi)| lo < hi)
                .map(|(lo, hi)| HostRange {
                    region,
                    bytes: lo..hi,
                }),
        );
    }

    /// When every row is `num[0]` adjacent elements in the buffer (step[0] is
    /// one element and the row does not cross a partition gap): each row's
    /// first index.
    fn contiguous_rows(&self) -> Option<Vec<usize>> {
        if self.step[0] != self.elem as i64 && self.num[0] > 1 {
            return None;
        }
        let row_bytes = (self.num[0] as usize - 1) * self.elem;
        let mut rows = Vec::with_capacity(self.num[1] as usize);
        let mut row = self.start;
        for _ in 0..self.num[1] {
            let (first, last) = (self.index(row), self.index(row + row_bytes as i64));
            if last != first + row_bytes {
                return None;
            }
            rows.push(first);
            row += self.step[1];
        }
        Some(rows)
    }
}

/// A DMA_MEMCPY ready to run: both walks resolved and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DmaPlan {
    src: WalkPlan,
    dst: WalkPlan,
    /// `None`: equal dtypes, bytes copied verbatim.
    convert: Option<(InType, OutType)>,
    /// EC-23: `sem[sem] += inc` on completion.
    pub sem: u8,
    /// The increment.
    pub inc: u8,
}

/// Why a DMA's footprint is rejected (`emu_footprint_in_bounds`, EC-23), or
/// names a variable that does not exist (EC-22).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FootprintFault {
    /// A VAR_ID ADDR8 names an id no variable has.
    UnknownVariable {
        /// src or dst.
        operand: Operand,
        /// The id.
        id: u32,
    },
    /// The walk leaves the variable its VAR_ID names.
    Variable {
        /// src or dst.
        operand: Operand,
        /// The variable.
        name: String,
        /// Its id.
        id: u32,
        /// First byte touched, relative to the variable.
        lo: i128,
        /// One past the last byte touched.
        hi: i128,
        /// The variable's size in bytes.
        len: u64,
    },
    /// A physical DRAM walk touches bytes outside every declared variable.
    Dram {
        /// src or dst.
        operand: Operand,
        /// The first element outside, as DRAM bytes `[lo, hi)`.
        lo: i128,
        /// One past its last byte.
        hi: i128,
    },
    /// An on-chip walk touches bytes outside the active memory of the region it starts in.
    OnChip {
        /// src or dst.
        operand: Operand,
        /// The region the walk starts in.
        region: Region,
        /// The first element outside, as on-chip addresses `[lo, hi)`.
        lo: i128,
        /// One past its last byte.
        hi: i128,
        /// Active bytes per partition.
        active: u32,
    },
}

impl FootprintFault {
    /// The predicate reported.
    pub const fn predicate(&self) -> &'static str {
        "emu_footprint_in_bounds"
    }
}

impl fmt::Display for FootprintFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FootprintFault::UnknownVariable { operand, id } => write!(
                f,
                "{} ADDR8 names variable id {id}, which the program does not declare (EC-22)",
                operand.name()
            ),
            FootprintFault::Variable {
                operand,
                name,
                id,
                lo,
                hi,
                len,
            } => write!(
                f,
                "{} walk touches bytes {lo}..{hi} of variable `{name}` (id {id}), \
                 which holds {len} bytes (EC-23)",
                operand.name()
            ),
            FootprintFault::Dram { operand, lo, hi } => write!(
                f,
                "{} walk touches DRAM bytes {lo}..{hi}, outside every declared variable (EC-23)",
                operand.name()
            ),
            FootprintFault::OnChip {
                operand,
                region,
                lo,
                hi,
                active,
            } => write!(
                f,
                "{} walk touches on-chip bytes 0x{lo:X}..0x{hi:X}, outside the active {} \
                 ({active} bytes in each of 128 partitions) (EC-23)",
                operand.name(),
                region.name().to_uppercase()
            ),
        }
    }
}

/// Resolves and checks a validated DMA_MEMCPY record against `dram`'s variables.
pub(crate) fn plan(d: &DmaMemcpy, dram: &Dram, arch: Arch) -> Result<DmaPlan, FootprintFault> {
    let src = side(Operand::Src, &d.src, dram, arch)?;
    let dst = side(Operand::Dst, &d.dst, dram, arch)?;
    let convert = if d.in_dtype == d.out_dtype {
        None
    } else {
        // Validation (EC-23, EC-13b) admits only executable pairs here.
        match (
            InType::from_dtype(d.in_dtype),
            OutType::from_dtype(d.out_dtype),
        ) {
            (Some(i), Some(o)) => Some((i, o)),
            _ => unreachable!("validated DMA dtypes {} -> {}", d.in_dtype, d.out_dtype),
        }
    };
    Ok(DmaPlan {
        src,
        dst,
        convert,
        sem: d.sem,
        inc: d.sem_inc,
    })
}

fn side(o: Operand, w: &DmaWalk, dram: &Dram, arch: Arch) -> Result<WalkPlan, FootprintFault> {
    let plan = match w.addr {
        Addr8::OnChip(a) => {
            let region = if a < Region::Psum.base() {
                Region::Sbuf
            } else {
                Region::Psum
            };
            WalkPlan::new(Space::OnChip(region), a as i64, w, arch)
        }
        Addr8::Dram(a) => WalkPlan::new(Space::Dram, a as i64, w, arch),
        Addr8::Var { id, offset } => {
            let Some(v) = dram.by_id(id) else {
                return Err(FootprintFault::UnknownVariable { operand: o, id });
            };
            let p = WalkPlan::new(Space::Dram, (v.base + offset as u64) as i64, w, arch);
            if p.elements() > 0 {
                let (lo, hi) = p.span();
                let (base, len) = (v.base as i128, v.len as i128);
                if lo < base || hi > base + len {
                    return Err(FootprintFault::Variable {
                        operand: o,
                        name: v.name.clone(),
                        id,
                        lo: lo - base,
                        hi: hi - base,
                        len: v.len,
                    });
                }
            }
            return Ok(p);
        }
        // Validation rejects the other forms before staging.
        Addr8::OutsideMap(_) | Addr8::OtherMarker(_) => {
            unreachable!("validated ADDR8 {:?}", w.addr)
        }
    };
    if plan.elements() > 0 {
        check_each(o, &plan, dram)?;
    }
    Ok(plan)
}

/// True when every byte of `[lo, hi)` may be touched by `plan`'s space.
fn inside(plan: &WalkPlan, dram: &Dram, lo: i128, hi: i128) -> bool {
    match plan.space {
        Space::Dram => dram.covered(lo, hi),
        Space::OnChip(r) => {
            let (base, end) = (
                r.base() as i128,
                r.base() as i128 + ((PARTITIONS as i128) << r.partition_shift()),
            );
            if lo < base || hi > end {
                return false;
            }
            let stride = 1i128 << r.partition_shift();
            let active = plan.active as i128;
            if active == stride {
                return true;
            }
            let (first, last) = (lo - base, hi - 1 - base);
            first / stride == last / stride && last % stride < active
        }
    }
}

/// EC-23, exact: the whole walk, else each row, else each element of a row.
fn check_each(o: Operand, p: &WalkPlan, dram: &Dram) -> Result<(), FootprintFault> {
    let (lo, hi) = p.span();
    if inside(p, dram, lo, hi) {
        return Ok(());
    }
    // On chip, a row whose step is whole partitions keeps one offset in
    // each partition it visits, in a run of partitions: inside iff both
    // its ends are (a transpose's rows, without a check per element).
    let across = match p.space {
        Space::OnChip(_) => p.step[0] % (1i64 << p.shift) == 0,
        Space::Dram => false,
    };
    let last = (p.num[0] as i128 - 1) * p.step[0] as i128;
    let element = |a: i128| inside(p, dram, a, a + p.elem as i128);
    let mut row = p.start as i128;
    for _ in 0..p.num[1] {
        let (rlo, rhi) = p.row_span(row);
        let ends = across && element(row) && element(row + last);
        if !ends && !inside(p, dram, rlo, rhi) {
            let mut a = row;
            for _ in 0..p.num[0] {
                let e = (a, a + p.elem as i128);
                if !inside(p, dram, e.0, e.1) {
                    return Err(match p.space {
                        Space::Dram => FootprintFault::Dram {
                            operand: o,
                            lo: e.0,
                            hi: e.1,
                        },
                        Space::OnChip(region) => FootprintFault::OnChip {
                            operand: o,
                            region,
                            lo: e.0,
                            hi: e.1,
                            active: p.active as u32,
                        },
                    });
                }
                a += p.step[0] as i128;
            }
        }
        row += p.step[1] as i128;
    }
    Ok(())
}

/// Below this many bytes a DMA copies its rows on the calling thread.
const PARALLEL_BYTES: usize = 4 << 20;

/// The most threads one DMA uses.
const MAX_THREADS: usize = 8;

/// Copies `n` bytes from `src[a..]` to `dst[b..]` for every `(a, b)` of
/// `rows`. Large copies whose destination rows do not overlap are cut into
/// chunks of rows, each a task on rayon's pool (no thread is started per
/// DMA: a spawn costs tens of microseconds, more on a loaded machine); the
/// result is the same bytes, as the rows are disjoint and their order does
/// not matter. Smaller copies run on the calling thread.
fn copy_rows(src: &[u8], dst: &mut [u8], rows: Vec<(usize, usize)>, n: usize) {
    let threads = crate::device::cpu::host_threads()
        .min(MAX_THREADS)
        .min(rows.len() * n / (PARALLEL_BYTES / 4).max(1))
        .min(rows.len());
    if threads > 1 && rows.len() * n >= PARALLEL_BYTES {
        // Sorted apart: rows whose destinations overlap are copied in walk
        // order below (the last one written wins), not in sorted order.
        let mut sorted = rows.clone();
        sorted.sort_unstable_by_key(|&(_, b)| b);
        if sorted.windows(2).all(|w| w[0].1 + n <= w[1].1) {
            // Cut dst into each row's own slice, in order.
            let mut pieces = Vec::with_capacity(sorted.len());
            let mut rest = dst;
            let mut at = 0;
            for &(a, b) in &sorted {
                let (_, tail) = std::mem::take(&mut rest).split_at_mut(b - at);
                let (row, tail) = tail.split_at_mut(n);
                pieces.push((a, row));
                rest = tail;
                at = b + n;
            }
            use rayon::prelude::*;
            let per = pieces.len().div_ceil(threads);
            pieces.par_chunks_mut(per).for_each(|chunk| {
                for (a, row) in chunk.iter_mut() {
                    row.copy_from_slice(&src[*a..*a + n]);
                }
            });
            return;
        }
    }
    for (a, b) in rows {
        dst[b..b + n].copy_from_slice(&src[a..a + n]);
    }
}

fn read_raw(b: &[u8], at: usize, n: usize) -> u64 {
    let mut w = [0u8; 8];
    w[..n].copy_from_slice(&b[at..at + n]);
    u64::from_le_bytes(w)
}

/// Runs a planned DMA on the host: `mem` is the host copy of SBUF/PSUM (a
/// deferring backend must have finished its queue first). DRAM is reached
/// through the window of `dram` that holds the DMA's DRAM bytes.
pub(crate) fn execute(p: &DmaPlan, mem: &mut DeviceMemory, dram: &mut DramImage) {
    if p.elements() == 0 {
        return;
    }
    let (sbuf, psum) = mem.split_mut();
    let (sbuf, psum): (&mut [u8], &mut [u8]) = (
        bytemuck::cast_slice_mut(sbuf),
        bytemuck::cast_slice_mut(psum),
    );
    let hull = p
        .dram_hulls()
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
        .map(|(lo, hi)| (lo as u64, hi as u64));
    let Some((lo, hi)) = hull else {
        // SBUF <-> PSUM, or within one of them.
        return match (p.src.space.index(), p.dst.space.index()) {
            (1, 2) => between(p, sbuf, psum),
            (2, 1) => between(p, psum, sbuf),
            (1, _) => within(p, sbuf),
            _ => within(p, psum),
        };
    };
    let dst_in_dram = matches!(p.dst.space, Space::Dram);
    let on_chip = |space: Space, sbuf, psum| match space {
        Space::OnChip(Region::Psum) => psum,
        _ => sbuf,
    };
    if !dst_in_dram {
        let (window, base) = dram.window(lo, hi);
        let q = p.rebased(base);
        between(&q, window, on_chip(p.dst.space, sbuf, psum));
        return;
    }
    let (window, base) = dram.window_mut(lo, hi);
    let q = p.rebased(base);
    if matches!(p.src.space, Space::Dram) {
        within(&q, window);
    } else {
        between(&q, on_chip(p.src.space, sbuf, psum), window);
    }
}

/// The rows of a DMA from DRAM into SBUF/PSUM that a backend can take
/// instead of the host's copy of device memory
/// ([`crate::device::Write::Offer`]): when it converts nothing and
/// both walks are rows of adjacent bytes, the DRAM bytes of each row and
/// where they go. `None` for any other DMA. Rows that overlap (the later
/// must win, as in [`execute`]) or leave gaps in the DMA's ranges are
/// refused by the backend, which checks that the writes cover them once.
pub(crate) fn rows_into_chip<'a>(
    p: &DmaPlan,
    dram: &'a mut DramImage,
) -> Option<Vec<HostWrite<'a>>> {
    let (Space::Dram, Space::OnChip(region)) = (p.src.space, p.dst.space) else {
        return None;
    };
    let (lo, hi) = p.src.dram_hull()?;
    if p.convert.is_some() || p.src.num != p.dst.num {
        return None;
    }
    let n = p.src.num[0] as usize * p.src.elem;
    let dst = p.dst.contiguous_rows()?;
    let (window, base) = dram.window(lo as u64, hi as u64);
    let src = p.rebased(base).src.contiguous_rows()?;
    let writes = src.iter().zip(&dst).map(|(&a, &b)| HostWrite {
        region,
        at: b,
        bytes: &window[a..a + n],
    });
    Some(writes.collect())
}

/// A DMA as the device op a backend may run itself
/// ([`crate::device::Resident::dma`]): between on-chip places, or
/// with `held`, between one and DRAM the backend holds, `held` being a DRAM
/// address minus its address in the held window. `None` for a DMA from
/// DRAM to DRAM, and for one with a DRAM walk without `held`.
pub(crate) fn chip_dma(p: &DmaPlan, held: Option<i64>) -> Option<ChipDma> {
    if p.src.space == Space::Dram && p.dst.space == Space::Dram {
        return None;
    }
    let walk = |w: &WalkPlan| {
        let (place, start) = match (w.space, held) {
            (Space::OnChip(region), _) => (Place::Chip(region), w.start - w.base),
            (Space::Dram, Some(delta)) => (Place::HeldDram, w.start - delta),
            (Space::Dram, None) => return None,
        };
        Some(ChipWalk {
            place,
            start: start as u64,
            step: w.step,
            num: w.num,
            elem: w.elem as u64,
        })
    };
    Some(ChipDma {
        src: walk(&p.src)?,
        dst: walk(&p.dst)?,
        convert: p.convert,
    })
}

/// Runs a planned DMA from SBUF/PSUM to DRAM (`p.on_chip_to_dram()`)
/// whose source bytes the host holds in a capture instead of its copy of
/// device memory: `bytes` holds the bytes of `ranges`, the plan's
/// [`DmaPlan::host_ranges`] (one per partition), back to back.
pub(crate) fn execute_captured(
    p: &DmaPlan,
    ranges: &[HostRange],
    bytes: &[u8],
    dram: &mut DramImage,
) {
    let Some((lo, hi)) = p.dst.dram_hull() else {
        return; // nothing moves
    };
    debug_assert!(p.on_chip_to_dram());
    // A partition's bytes sit at the same distance from its range's start.
    let active = p.src.active as usize;
    let mut delta = [0isize; PARTITIONS as usize];
    let mut at = 0;
    for r in ranges {
        delta[r.bytes.start / active] = at as isize - r.bytes.start as isize;
        at += r.bytes.len();
    }
    let (window, base) = dram.window_mut(lo as u64, hi as u64);
    let q = p.rebased(base);
    between_by(&q, bytes, window, |i| {
        i.wrapping_add_signed(delta[i / active])
    });
}

/// A DMA from the buffer `src` to the different buffer `dst`.
fn between(p: &DmaPlan, src: &[u8], dst: &mut [u8]) {
    between_by(p, src, dst, |i| i)
}

/// [`between`], the src walk's element at index `i` of its space being
/// at `src[src_at(i)]` (`src_at` keeps a partition's bytes together).
#[inline(always)]
fn between_by(p: &DmaPlan, src: &[u8], dst: &mut [u8], src_at: impl Fn(usize) -> usize) {
    let (se, de) = (p.src.elem, p.dst.elem);
    let pairs = p.src.indices().map(&src_at).zip(p.dst.indices());
    let Some((it, ot)) = p.convert else {
        // Whole rows at once when both walks are rows of adjacent elements.
        let rows = if p.src.num == p.dst.num {
            p.src.contiguous_rows().zip(p.dst.contiguous_rows())
        } else {
            None
        };
        if let Some((sr, dr)) = rows {
            let n = p.src.num[0] as usize * se;
            copy_rows(src, dst, sr.into_iter().map(src_at).zip(dr).collect(), n);
            return;
        }
        for (a, b) in pairs {
            dst[b..b + de].copy_from_slice(&src[a..a + se]);
        }
        return;
    };
    // EC-23: in -> f32 -> out with SPEC §6's conversions.
    for (a, b) in pairs {
        let out = store_f32_bits(ot, load_f32_bits(it, read_raw(src, a, se))).to_le_bytes();
        dst[b..b + de].copy_from_slice(&out[..de]);
    }
}

/// A DMA within one buffer: element by element in walk order (sequential
/// semantics, so overlapping walks see earlier elements' writes).
fn within(p: &DmaPlan, buf: &mut [u8]) {
    let (se, de) = (p.src.elem, p.dst.elem);
    let pairs = p.src.indices().zip(p.dst.indices());
    match p.convert {
        None => {
            for (a, b) in pairs {
                buf.copy_within(a..a + se, b);
            }
        }
        // EC-23: in -> f32 -> out with SPEC §6's conversions.
        Some((it, ot)) => {
            for (a, b) in pairs {
                let out = store_f32_bits(ot, load_f32_bits(it, read_raw(buf, a, se))).to_le_bytes();
                buf[b..b + de].copy_from_slice(&out[..de]);
            }
        }
    }
}

impl fmt::Display for WalkPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.resolved().fmt(f)
    }
}

impl WalkPlan {
    /// The walk's public description (its message form).
    fn resolved(&self) -> ResolvedWalk {
        ResolvedWalk {
            dram: self.space == Space::Dram,
            start: self.start,
            step: self.step,
            num: self.num,
            elem: self.elem as u64,
        }
    }
}

/// `DMA <src> -> <dst> (<conversion>), sem[i] += n` ([`ResolvedDma`]).
impl fmt::Display for DmaPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.resolved().fmt(f)
    }
}

impl DmaPlan {
    /// The DMA's public description: what a message shows of it
    /// ([`crate::device::exec::ContractFault::RefusedHeldDma`]).
    pub(crate) fn resolved(&self) -> ResolvedDma {
        ResolvedDma {
            src: self.src.resolved(),
            dst: self.dst.resolved(),
            convert: self.convert,
            sem: self.sem,
            inc: self.inc,
        }
    }

    /// The plan with its DRAM addresses counted from `base` (for a window
    /// of DRAM that starts there; itself when the window is all of DRAM).
    fn rebased(&self, base: u64) -> Cow<'_, DmaPlan> {
        if base == 0 {
            return Cow::Borrowed(self);
        }
        let mut q = self.clone();
        for w in [&mut q.src, &mut q.dst] {
            if w.space == Space::Dram {
                w.start -= base as i64;
            }
        }
        Cow::Owned(q)
    }

    /// Elements moved.
    pub(crate) fn elements(&self) -> u64 {
        self.src.elements()
    }

    /// The on-chip bytes the DMA reads or writes (see
    /// [`WalkPlan::host_ranges`]), and the index from which they are the
    /// bytes it writes.
    pub(crate) fn host_ranges(&self) -> (Vec<HostRange>, usize) {
        let mut v = Vec::new();
        self.src.host_ranges(&mut v);
        let written = v.len();
        self.dst.host_ranges(&mut v);
        (v, written)
    }

    /// The DRAM bytes `[lo, hi)` from the lowest either walk touches in
    /// DRAM to the highest, per walk in DRAM.
    pub(crate) fn dram_hulls(&self) -> impl Iterator<Item = (i64, i64)> {
        self.src.dram_hull().into_iter().chain(self.dst.dram_hull())
    }

    /// True when the DMA reads SBUF/PSUM and writes DRAM: its host half may
    /// wait on a capture of its source ([`crate::device::When::Later`]).
    pub(crate) fn on_chip_to_dram(&self) -> bool {
        self.elements() > 0
            && matches!(self.src.space, Space::OnChip(_))
            && matches!(self.dst.space, Space::Dram)
    }

    /// Where element `k` of the src walk (`dst` false) or the dst walk
    /// lies: its memory (0 DRAM, 1 SBUF, 2 PSUM), its byte index in that
    /// memory's buffer (on chip: partition · active bytes + offset) and its
    /// size (`tpb-emu why`).
    pub(crate) fn element(&self, dst: bool, k: u64) -> (usize, usize, usize) {
        let w = if dst { &self.dst } else { &self.src };
        let (i, j) = (k % w.num[0].max(1), k / w.num[0].max(1));
        let addr = w.start + j as i64 * w.step[1] + i as i64 * w.step[0];
        (w.space.index(), w.index(addr), w.elem)
    }

    /// The last element `k` of the dst walk (walk order: the one whose
    /// bytes stay) that covers byte `at` of memory `mem` (as in
    /// [`DmaPlan::element`]): solved per row, not scanned.
    pub(crate) fn dst_position(&self, mem: usize, at: usize) -> Option<u64> {
        if !self.dst_may_write(mem, at) {
            return None;
        }
        let w = &self.dst;
        let addr = self.dst_address(at);
        let (s0, elem) = (w.step[0] as i128, w.elem as i128);
        let n0 = w.num[0] as i128;
        for j in (0..w.num[1]).rev() {
            let d = addr - (w.start as i128 + j as i128 * w.step[1] as i128);
            // The largest i in 0..n0 with 0 <= d - i·s0 < elem.
            let cand = if s0 == 0 {
                n0 - 1
            } else if s0 > 0 {
                d.div_euclid(s0).min(n0 - 1)
            } else {
                ((elem - d) + (-s0) - 1).div_euclid(-s0) - 1
            }
            .min(n0 - 1);
            for i in [cand, cand - 1] {
                if (0..n0).contains(&i) {
                    let r = d - i * s0;
                    if (0..elem).contains(&r) {
                        return Some(j * w.num[0] + i as u64);
                    }
                }
            }
        }
        None
    }

    /// The on-chip or DRAM address of byte index `at` of the dst walk's memory.
    fn dst_address(&self, at: usize) -> i128 {
        let w = &self.dst;
        match w.space {
            Space::Dram => at as i128,
            Space::OnChip(_) => {
                let a = w.active as usize;
                w.base as i128 + (((at / a) as i128) << w.shift) + (at % a) as i128
            }
        }
    }

    /// False when the dst walk cannot touch byte `at` of memory `mem` (as in
    /// [`DmaPlan::element`]): outside the walk's span.
    pub(crate) fn dst_may_write(&self, mem: usize, at: usize) -> bool {
        let w = &self.dst;
        if w.space.index() != mem || w.elements() == 0 {
            return false;
        }
        let addr = self.dst_address(at);
        let (lo, hi) = w.span();
        lo <= addr && addr < hi
    }

    /// The conversion the DMA applies (`None`: bytes copied as they are).
    pub(crate) fn conversion(&self) -> Option<(InType, OutType)> {
        self.convert
    }

    /// True when either walk is in SBUF or PSUM (the host copy must be current).
    pub(crate) fn touches_on_chip(&self) -> bool {
        self.elements() > 0
            && (matches!(self.src.space, Space::OnChip(_))
                || matches!(self.dst.space, Space::OnChip(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pooled copy of large disjoint rows (shuffled, with gaps) and the
    /// sequential copy of overlapping ones give the bytes of a copy row by
    /// row in order.
    #[test]
    fn copy_rows_on_the_pool_is_the_sequential_copy() {
        let mut rng = fastrand::Rng::with_seed(0xD3A5);
        let n = 4096 + 12;
        let count = 2 * PARALLEL_BYTES / n + 7;
        let src: Vec<u8> = (0..count * n + 999).map(|_| rng.u8(..)).collect();
        for overlap in [false, true] {
            let stride = if overlap { n - 5 } else { n + 3 };
            let mut rows: Vec<(usize, usize)> = (0..count)
                .map(|k| (rng.usize(..src.len() - n), 17 + k * stride))
                .collect();
            rng.shuffle(&mut rows);
            let len = 17 + count * stride + n + 40;
            let init: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
            let mut want = init.clone();
            for &(a, b) in &rows {
                want[b..b + n].copy_from_slice(&src[a..a + n]);
            }
            let mut got = init;
            copy_rows(&src, &mut got, rows, n);
            assert!(got == want, "overlap {overlap}");
        }
    }

    /// `dst_position` (solved per row) agrees with a scan of every element
    /// (the last one covering the byte wins) on random walks, negative and
    /// zero steps and overlaps included, in DRAM and in SBUF.
    #[test]
    fn dst_position_is_the_last_covering_element() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for case in 0..400 {
            let elem = [1u16, 2, 4][rnd(3) as usize];
            let num = [1 + rnd(6) as u16, 1 + rnd(4) as u16];
            let step = [rnd(7) as i32 - 3, rnd(40) as i32 - 20];
            let on_chip = case % 2 == 1;
            let space = if on_chip {
                Space::OnChip(Region::Sbuf)
            } else {
                Space::Dram
            };
            let w = DmaWalk {
                addr: Addr8::OnChip(0),
                step,
                num,
                elem_size: elem,
            };
            let start = 4096 + if on_chip { 3 << 18 } else { 0 };
            let dst = WalkPlan::new(space, start, &w, Arch::Cayman);
            let plan = DmaPlan {
                src: dst,
                dst,
                convert: None,
                sem: 0,
                inc: 0,
            };
            let mem = space.index();
            let (lo, hi) = (0..plan.elements())
                .map(|k| plan.element(true, k))
                .fold((usize::MAX, 0), |(l, h), (_, i, n)| {
                    (l.min(i), h.max(i + n))
                });
            for at in lo.saturating_sub(3)..hi + 3 {
                let scan = (0..plan.elements()).rev().find(|&k| {
                    let (_, i, n) = plan.element(true, k);
                    i <= at && at < i + n
                });
                assert_eq!(
                    plan.dst_position(mem, at),
                    scan,
                    "case {case}: {step:?} {num:?} elem {elem}, byte {at}"
                );
            }
        }
    }
}
