//! The lane engine of the elementwise kernels (Copy/Cast, Iota,
//! Tensor-Tensor): for each lane and walk position k, element k of every
//! source walk is read, combined, and written to element k of the dst walk.
//!
//! Lanes go in chunks of [`CHUNK`] positions: gather each source's elements
//! (as 32-bit patterns) in walk order, let the kernel combine them, scatter
//! the results along the dst walk. Validation guarantees (EC-42) that a
//! source byte the dst walk also writes belongs to the same element at the
//! same position k of the same lane, so reading a chunk before writing it
//! reads exactly what the record reads; no byte is shared across lanes, so
//! lanes run on separate threads. A source in another partition of the dst
//! region is copied first (a snapshot), which Rust's borrows need and EC-42
//! makes exact.

use super::CpuOptions;
use super::lanes::WalkIter;
use super::walks::{gather, scatter};
use crate::device::convert::{self, InType, OutType};
use crate::device::memory::DeviceMemory;
use crate::device::ops::pool::Side;
use crate::isa::tensor::Region;

/// Walk positions per chunk.
pub(crate) const CHUNK: usize = 256;

/// One operand: its walk and its element size in bytes (1, 2 or 4).
#[derive(Clone, Copy)]
pub(crate) struct Operand<'s> {
    pub(crate) side: &'s Side,
    pub(crate) size: usize,
}

/// A kernel's one-pass form ([`Kernel::fused`]): a run of adjacent src
/// elements' bytes to a run of adjacent dst elements' bytes.
pub(crate) type RunFn = fn(&[u8], &mut [u8]);

/// An elementwise kernel: what one lane computes from its sources' elements.
pub(crate) trait Kernel: Sync {
    /// Per-lane state (Iota's generator walk).
    type Lane;
    /// True when `chunk` copies `src[0]` unchanged and the element sizes are
    /// equal (Copy, Cast between equal dtypes): contiguous runs are then
    /// moved as bytes.
    fn identity(&self) -> bool {
        false
    }
    /// A one-pass form for one source: converts a run of adjacent src
    /// elements into a run of adjacent dst elements (the byte slices hold
    /// whole elements, the same count). Used where both walks go on along x
    /// with step 1; the result is the chunk path's, without its copies.
    fn fused(&self) -> Option<RunFn> {
        None
    }
    /// The state of lane `lane` (counted from the start partition).
    fn lane(&self, lane: u32) -> Self::Lane;
    /// Combines one chunk: `src[i][j]` is source i's element (its raw bits in
    /// the low bytes, higher bits zero) at the chunk's position j; `out[j]`
    /// receives the dst element's bits in its low bytes.
    fn chunk(&self, lane: &mut Self::Lane, src: [&[u32]; 2], out: &mut [u32]);
}

/// Where a lane reads one source.
enum SrcMem<'a> {
    /// In the dst partition (same region and partition as dst).
    Dst,
    /// A slice of another region, or a snapshot, with element 0 at `at`.
    Slice(&'a [u8], i64),
}

struct Lane<'a> {
    index: u32,
    dst: &'a mut [u8],
    srcs: Vec<SrcMem<'a>>,
}

/// Runs kernel `k` on `channels` lanes of `count` positions: `srcs` (at most
/// two) are read, `dst` written.
pub(crate) fn run<K: Kernel>(
    k: &K,
    mem: &mut DeviceMemory,
    opts: &CpuOptions,
    channels: u32,
    count: u64,
    dst: Operand,
    srcs: &[Operand],
) {
    let ch = channels as usize;
    let d = dst.side;
    // Snapshots of sources in other partitions of dst's region.
    let mut snaps: Vec<Option<(Vec<u8>, usize, i64)>> = Vec::with_capacity(srcs.len());
    for s in srcs {
        let side = s.side;
        if side.region != d.region || side.partition == d.partition {
            snaps.push(None);
            continue;
        }
        let (lo, hi) = side.byte_range(s.size);
        let (lo, hi) = (lo.max(0) as usize, hi.max(0) as usize);
        let pb = mem.active_bytes(side.region) as usize;
        let region = mem.region_bytes(side.region);
        let mut v = Vec::with_capacity(ch * (hi - lo));
        for lane in 0..ch {
            let p = (side.partition as usize + lane) * pb;
            v.extend_from_slice(&region[p + lo..p + hi]);
        }
        snaps.push(Some((v, hi - lo, side.offset as i64 - lo as i64)));
    }
    let dpb = mem.active_bytes(d.region) as usize;
    let opb = mem.active_bytes(other(d.region)) as usize;
    let (sbuf, psum) = mem.split_mut();
    let (dmem, omem): (&mut [u64], &[u64]) = match d.region {
        Region::Sbuf => (sbuf, psum),
        Region::Psum => (psum, sbuf),
    };
    let dmem: &mut [u8] = bytemuck::cast_slice_mut(dmem);
    let omem: &[u8] = bytemuck::cast_slice(omem);
    let mut lanes: Vec<Lane> = dmem
        .chunks_mut(dpb)
        .skip(d.partition as usize)
        .take(ch)
        .enumerate()
        .map(|(lane, dst)| Lane {
            index: lane as u32,
            dst,
            srcs: Vec::new(),
        })
        .collect();
    for (s, snap) in srcs.iter().zip(&snaps) {
        let side = s.side;
        for lane in lanes.iter_mut() {
            let l = lane.index as usize;
            lane.srcs.push(match snap {
                Some((v, len, at)) => SrcMem::Slice(&v[l * len..(l + 1) * len], *at),
                None if side.region == d.region => SrcMem::Dst,
                None => {
                    let p = (side.partition as usize + l) * opb;
                    SrcMem::Slice(&omem[p..p + opb], side.offset as i64)
                }
            });
        }
    }
    let threads = opts.threads(channels, count.saturating_mul(channels as u64));
    super::for_chunks(&mut lanes, threads, |_, lanes| {
        for lane in lanes {
            run_lane(k, lane, count, dst, srcs);
        }
    });
}

fn other(r: Region) -> Region {
    match r {
        Region::Sbuf => Region::Psum,
        Region::Psum => Region::Sbuf,
    }
}

fn walk(s: &Side) -> WalkIter {
    WalkIter::new(s.num, s.step)
}

fn run_lane<K: Kernel>(k: &K, lane: &mut Lane, count: u64, dst: Operand, srcs: &[Operand]) {
    if k.identity() && srcs.len() == 1 {
        return copy_lane(lane, count, dst, srcs[0]);
    }
    if let (Some(f), [src]) = (k.fused(), srcs)
        && fused_lane(f, lane, count, dst, *src)
    {
        return;
    }
    let mut st = k.lane(lane.index);
    let mut dwalk = walk(dst.side);
    let mut swalk: Vec<WalkIter> = srcs.iter().map(|s| walk(s.side)).collect();
    let mut buf = [[0u32; CHUNK]; 2];
    let mut out = [0u32; CHUNK];
    let mut done = 0u64;
    while done < count {
        let len = (count - done).min(CHUNK as u64) as usize;
        for (i, s) in srcs.iter().enumerate() {
            let (bytes, at): (&[u8], i64) = match &lane.srcs[i] {
                SrcMem::Dst => (&*lane.dst, s.side.offset as i64),
                SrcMem::Slice(b, at) => (b, *at),
            };
            gather(bytes, at, &mut swalk[i], s.size, &mut buf[i][..len]);
        }
        let [b0, b1] = &buf;
        k.chunk(&mut st, [&b0[..len], &b1[..len]], &mut out[..len]);
        scatter(
            lane.dst,
            dst.side.offset as i64,
            &mut dwalk,
            dst.size,
            &out[..len],
        );
        done += len as u64;
    }
}

/// EC-45: one lane of a bit copy, run by run: wherever both walks go on
/// along x with step 1, the bytes move in one copy (`copy_within` when src
/// is in the dst partition; EC-42 makes any overlap an exact one).
fn copy_lane(lane: &mut Lane, count: u64, dst: Operand, src: Operand) {
    let runs = goes_on(src.side) && goes_on(dst.side);
    let size = dst.size;
    let Lane { dst: out, srcs, .. } = lane;
    for_runs(count, dst, src, &srcs[0], runs, |s, d, n| {
        let len = n * size;
        match &srcs[0] {
            SrcMem::Dst => out.copy_within(s..s + len, d),
            SrcMem::Slice(b, _) => out[d..d + len].copy_from_slice(&b[s..s + len]),
        }
    });
}

/// One lane through a kernel's one-pass form `f`, run by run, when both
/// walks go on along x with step 1 and the src bytes are not the dst's
/// (another region, a snapshot, or a disjoint part of the dst partition);
/// false, with nothing done, otherwise.
fn fused_lane(f: RunFn, lane: &mut Lane, count: u64, dst: Operand, src: Operand) -> bool {
    if !goes_on(src.side) || !goes_on(dst.side) {
        return false;
    }
    let range = |o: &Operand| {
        let (lo, hi) = o.side.byte_range(o.size);
        (o.side.offset as i64 + lo, o.side.offset as i64 + hi)
    };
    let (dlo, dhi) = range(&dst);
    if matches!(lane.srcs[0], SrcMem::Dst) {
        let (slo, shi) = range(&src);
        if slo < dhi && dlo < shi {
            return false;
        }
    }
    let Lane { dst: out, srcs, .. } = lane;
    for_runs(count, dst, src, &srcs[0], true, |s, d, n| {
        let (sl, dl) = (n * src.size, n * dst.size);
        match &srcs[0] {
            SrcMem::Slice(b, _) => f(&b[s..s + sl], &mut out[d..d + dl]),
            SrcMem::Dst if s < d => {
                let (a, b) = out.split_at_mut(d);
                f(&a[s..s + sl], &mut b[..dl]);
            }
            SrcMem::Dst => {
                let (a, b) = out.split_at_mut(s);
                f(&b[..sl], &mut a[d..d + dl]);
            }
        }
    });
    true
}

/// Whether a walk goes on along x with step 1 (runs of adjacent elements).
fn goes_on(s: &Side) -> bool {
    s.step[0] == 1 || s.num[0] == 1
}

/// Walks `src` (read from `mem`) and `dst` together for `count` positions,
/// in runs of adjacent elements when `runs` (else one element at a time):
/// `each(s, d, n)` gets a run's first src byte in `mem`, its first dst
/// byte in the lane's partition, and its length in elements.
fn for_runs(
    count: u64,
    dst: Operand,
    src: Operand,
    mem: &SrcMem,
    runs: bool,
    mut each: impl FnMut(usize, usize, usize),
) {
    let at = match mem {
        SrcMem::Dst => src.side.offset as i64,
        SrcMem::Slice(_, at) => *at,
    };
    let (mut sw, mut dw) = (walk(src.side), walk(dst.side));
    let mut done = 0u64;
    while done < count {
        let n = if runs {
            sw.run_left().min(dw.run_left()).min(count - done)
        } else {
            1
        };
        let (s, _) = sw.next_run(n);
        let (d, _) = dw.next_run(n);
        let s = (at + s * src.size as i64) as usize;
        let d = (dst.side.offset as i64 + d * dst.size as i64) as usize;
        each(s, d, n as usize);
        done += n;
    }
}

/// `dst[i] = f(src[i])` over whole elements of types `S` and `D`
/// (little-endian; a slice not aligned to its type is read and written
/// element by element).
#[inline(always)]
pub(crate) fn map_run<S: bytemuck::Pod, D: bytemuck::Pod>(
    src: &[u8],
    dst: &mut [u8],
    f: impl Fn(S) -> D,
) {
    match (
        bytemuck::try_cast_slice::<u8, S>(src),
        bytemuck::try_cast_slice_mut::<u8, D>(dst),
    ) {
        (Ok(s), Ok(d)) => {
            for (d, &s) in d.iter_mut().zip(s) {
                *d = f(s);
            }
        }
        _ => {
            let (ss, ds) = (size_of::<S>(), size_of::<D>());
            for (s, d) in src.chunks_exact(ss).zip(dst.chunks_exact_mut(ds)) {
                d.copy_from_slice(bytemuck::bytes_of(&f(bytemuck::pod_read_unaligned(s))));
            }
        }
    }
}

/// SPEC §6 loads of a chunk of raw elements of `ty` to f32 bits
/// ([`convert::load_f32_bits`]), one loop per type so that the conversion
/// is inlined and the loop vectorises.
pub(crate) fn load_chunk(ty: InType, src: &[u32], out: &mut [u32]) {
    macro_rules! each {
        ($t:expr) => {
            for (o, &x) in out.iter_mut().zip(src) {
                *o = convert::load_f32_bits($t, x as u64);
            }
        };
    }
    match ty {
        InType::U8 => each!(InType::U8),
        InType::I8 => each!(InType::I8),
        InType::U16 => each!(InType::U16),
        InType::I16 => each!(InType::I16),
        InType::U32 => each!(InType::U32),
        InType::I32 => each!(InType::I32),
        InType::I64 => each!(InType::I64),
        InType::F16 => each!(InType::F16),
        InType::Bf16 => each!(InType::Bf16),
        InType::F32 => each!(InType::F32),
    }
}

/// EC-13/EC-20 stores of a chunk of f32 bits to `ty`
/// ([`convert::store_f32_bits`]), one loop per type.
pub(crate) fn store_chunk(ty: OutType, vals: &[u32], out: &mut [u32]) {
    macro_rules! each {
        ($t:expr) => {
            for (o, &x) in out.iter_mut().zip(vals) {
                *o = convert::store_f32_bits($t, x);
            }
        };
    }
    match ty {
        OutType::U8 => each!(OutType::U8),
        OutType::I8 => each!(OutType::I8),
        OutType::U16 => each!(OutType::U16),
        OutType::I16 => each!(OutType::I16),
        OutType::U32 => each!(OutType::U32),
        OutType::I32 => each!(OutType::I32),
        OutType::F16 => each!(OutType::F16),
        OutType::Bf16 => each!(OutType::Bf16),
        OutType::F32 => each!(OutType::F32),
        OutType::F32r => each!(OutType::F32r),
    }
}
