//! The CPU reference of NonzeroWithCount (0xF2, EC-56). Processed lanes
//! are independent (EC-21: no dst byte is a src byte of any lane), so each
//! runs on its own partitions, split across threads.

use super::CpuOptions;
use super::lanes::{LaneIo, WalkIter, split_lanes};
use super::walks::{gather, scatter};
use crate::device::memory::DeviceMemory;
use crate::device::ops::KernelOp;
use crate::device::ops::nonzero::{NzOp, is_nonzero, processed};

/// Runs `op` on `mem`.
pub fn execute(op: &NzOp, mem: &mut DeviceMemory, opts: &CpuOptions) {
    let t = op.count() as usize;
    let (s, d) = (op.src(), op.dst());
    if op.lanes().next().is_none() {
        return;
    }
    let mut snapshot = Vec::new();
    // EC-56: only the lanes at the first partition of a pool core.
    let keep = |p| processed(s.partition, p);
    let (mut lanes, at) = split_lanes(op.channels(), keep, s, 4, d, mem, &mut snapshot);
    let run = |lanes: &mut [LaneIo]| {
        let (mut src, mut out) = (vec![0u32; t], vec![0u32; t + 1]);
        for io in lanes {
            let mut w = WalkIter::new(s.num, s.step);
            gather(bytemuck::cast_slice(io.src()), at.src, &mut w, 4, &mut src);
            compact(op, &src, &mut out);
            let mut w = WalkIter::new(d.num, d.step);
            scatter(bytemuck::cast_slice_mut(io.dst()), at.dst, &mut w, 4, &out);
        }
    };
    let threads = opts.threads(lanes.len() as u32, (lanes.len() * t) as u64);
    super::for_chunks(&mut lanes, threads, |_, chunk| run(chunk));
}

/// For each mask of 8 positions, the indices of its set bits in order
/// (the rest 0): a block's nonzero positions without a branch per element.
const SET_BITS: [[u32; 8]; 256] = {
    let mut t = [[0u32; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut k, mut b) = (0, 0);
        while b < 8 {
            if (m >> b) & 1 == 1 {
                t[m][k] = b as u32;
                k += 1;
            }
            b += 1;
        }
        m += 1;
    }
    t
};

/// The set bits of each mask of 8 positions (`count_ones` without x86-64's
/// optional POPCNT is a dozen instructions).
const SET_COUNT: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut m = 0;
    while m < 256 {
        t[m] = (m as u32).count_ones() as u8;
        m += 1;
    }
    t
};

/// The nonzero mask of 8 elements (bit j for element j): one byte of 0 or
/// 1 per element, gathered into bits by one multiply.
#[inline(always)]
fn block(float: bool, xs: &[u32]) -> usize {
    let mut flags = [0u8; 8];
    for (f, &x) in flags.iter_mut().zip(xs) {
        // EC-56: the bit-level zero test.
        *f = is_nonzero(float, x) as u8;
    }
    (u64::from_le_bytes(flags).wrapping_mul(0x0102_0408_1020_4080) >> 56) as usize
}

/// One lane's dst words (`src.len() + 1`): the positions of the nonzero
/// elements, the padding after them, the count last.
fn compact(op: &NzOp, src: &[u32], out: &mut [u32]) {
    let t = src.len();
    let (float, offset) = (op.float(), op.index_offset());
    // Blocks of 8: each writes all 8 slots from the next free one (those
    // past its nonzeros are written again later, or padded), then moves on
    // by its nonzeros. A block starting at position i has n <= i, so its 8
    // slots lie inside out[..t].
    let mut n = 0;
    let blocks = src.chunks_exact(8);
    let tail = blocks.remainder();
    for (b, xs) in blocks.enumerate() {
        let mask = block(float, xs);
        // EC-56: the src walk position plus index_offset, mod 2^32.
        let base = ((8 * b) as u32).wrapping_add(offset);
        let slots: &mut [u32; 8] = (&mut out[n..n + 8]).try_into().expect("8 slots");
        for (o, &k) in slots.iter_mut().zip(&SET_BITS[mask]) {
            *o = base.wrapping_add(k);
        }
        n += SET_COUNT[mask] as usize;
    }
    for (i, &x) in (t - tail.len()..t).zip(tail) {
        out[n] = (i as u32).wrapping_add(offset);
        n += is_nonzero(float, x) as usize;
    }
    out[n..t].fill(op.padding());
    out[t] = n as u32;
}

impl crate::device::ops::CpuKernel for NzOp {
    fn run_cpu(&self, mem: &mut DeviceMemory, options: &CpuOptions) {
        execute(self, mem, options)
    }
}
