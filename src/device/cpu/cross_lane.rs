//! The CPU reference of CrossLaneReduce (0x7C, 0x7D): EC-54's sequential
//! left folds, lanes in increasing order. The Partitions axis splits the
//! walk positions k across threads (each k folds its own lanes in order, so
//! the split never changes a bit); the All axis is one fold.

use super::CpuOptions;
use super::walks::{read_next, walk_at, write_walk};
use crate::device::convert::flush_subnormal;
use crate::device::memory::DeviceMemory;
use crate::device::ops::KernelOp;
use crate::device::ops::cross_lane::{ClrOp, Fold, first, step, store};
use crate::isa::enums::Dtype;

/// `first`/`step(Fold::AddF32, FP32, ..)` over one lane's chunk, on f32
/// bits: acc = flush(x) for the first lane, else flush(acc + flush(x)).
fn add_f32_lane(acc: &mut [u32], xs: &[u32], first_lane: bool) {
    if first_lane {
        for (a, &x) in acc.iter_mut().zip(xs) {
            *a = flush_subnormal(x);
        }
        return;
    }
    for (a, &x) in acc.iter_mut().zip(xs) {
        let s = f32::from_bits(*a) + f32::from_bits(flush_subnormal(x));
        *a = flush_subnormal(s.to_bits());
    }
}

/// Walk positions read per lane at a time.
const CHUNK: usize = 1024;

/// Runs `op` on `mem`.
pub fn execute(op: &ClrOp, mem: &mut DeviceMemory, opts: &CpuOptions) {
    let (fold, d) = (op.fold(), op.in_dtype());
    let [ssize, dsize] = op.sizes();
    let m = op.count() as usize;
    let ch = op.channels();
    let src = op.src();
    if op.all_axis() {
        // EC-54: p outer, k inner, from the first element.
        let mut acc = None::<u64>;
        let mut buf = vec![0u32; CHUNK.min(m)];
        for p in 0..ch {
            let mut w = walk_at(src, 0);
            let mut k = 0;
            while k < m {
                let len = (m - k).min(CHUNK);
                read_next(mem, src, p, ssize, &mut w, &mut buf[..len]);
                for &x in &buf[..len] {
                    acc = Some(match acc {
                        None => first(fold, d, x),
                        Some(a) => step(fold, d, a, x),
                    });
                }
                k += len;
            }
        }
        let out = store(fold, op.out_ty(), acc.unwrap_or(0));
        write_walk(mem, op.dst(), 0, dsize, &[out]);
        return;
    }
    // Partitions axis: r_k = fold over p of x[p][k].
    // FP32 ADD, the common case, folds each lane with one specialised loop
    // (the same bits as `step`; CpuOptions::force_generic turns it off and
    // tests/device/lane_kernels_backends.rs compares the two).
    let fast = !opts.force_generic && fold == Fold::AddF32 && d == Dtype::FP32;
    let mut outs = vec![0u32; m];
    let threads = opts.threads(ch, op.elements());
    let memr: &DeviceMemory = mem;
    let run = |k0: usize, out: &mut [u32]| {
        let mut buf = vec![0u32; CHUNK.min(out.len())];
        let mut acc = vec![0u64; CHUNK.min(out.len())];
        let mut acc32 = vec![0u32; if fast { CHUNK.min(out.len()) } else { 0 }];
        let mut walks: Vec<_> = (0..ch).map(|_| walk_at(src, k0 as u64)).collect();
        let mut k = 0;
        while k < out.len() {
            let len = (out.len() - k).min(CHUNK);
            for (p, w) in (0..ch).zip(walks.iter_mut()) {
                read_next(memr, src, p, ssize, w, &mut buf[..len]);
                let (acc, xs) = (&mut acc[..len], &buf[..len]);
                if fast {
                    add_f32_lane(&mut acc32[..len], xs, p == 0);
                } else if p == 0 {
                    for (a, &x) in acc.iter_mut().zip(xs) {
                        *a = first(fold, d, x);
                    }
                } else {
                    for (a, &x) in acc.iter_mut().zip(xs) {
                        *a = step(fold, d, *a, x);
                    }
                }
            }
            if fast {
                for (a, &b) in acc[..len].iter_mut().zip(&acc32[..len]) {
                    *a = b as u64;
                }
            }
            for (o, &a) in out[k..k + len].iter_mut().zip(&acc[..len]) {
                *o = store(fold, op.out_ty(), a);
            }
            k += len;
        }
    };
    super::for_chunks(&mut outs, threads, run);
    write_walk(mem, op.dst(), 0, dsize, &outs);
}

impl crate::device::ops::CpuKernel for ClrOp {
    fn run_cpu(&self, mem: &mut DeviceMemory, options: &CpuOptions) {
        execute(self, mem, options)
    }
}
