//! The CPU reference of CrossLaneReduce (0x7C, 0x7D): EC-54's sequential
//! left folds, lanes in increasing order. The Partitions axis splits the
//! walk positions k across threads (each k folds its own lanes in order, so
//! the split never changes a bit); the All axis is one fold.

use super::CpuOptions;
use super::walks::{read_next, walk_at, write_walk};
use crate::device::memory::DeviceMemory;
use crate::device::ops::cross_lane::{ClrOp, first, step, store};

/// Walk positions read per lane at a time.
const CHUNK: usize = 4096;

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
    let mut outs = vec![0u32; m];
    let threads = opts.threads(ch, op.elements());
    let per = m.div_ceil(threads.max(1)).max(1);
    let memr: &DeviceMemory = mem;
    let run = |k0: usize, out: &mut [u32]| {
        let mut buf = vec![0u32; CHUNK.min(out.len())];
        let mut acc = vec![0u64; CHUNK.min(out.len())];
        let mut walks: Vec<_> = (0..ch).map(|_| walk_at(src, k0 as u64)).collect();
        let mut k = 0;
        while k < out.len() {
            let len = (out.len() - k).min(CHUNK);
            for (p, w) in (0..ch).zip(walks.iter_mut()) {
                read_next(memr, src, p, ssize, w, &mut buf[..len]);
                if p == 0 {
                    for (a, &x) in acc.iter_mut().zip(&buf[..len]) {
                        *a = first(fold, d, x);
                    }
                } else {
                    for (a, &x) in acc.iter_mut().zip(&buf[..len]) {
                        *a = step(fold, d, *a, x);
                    }
                }
            }
            for (o, &a) in out[k..k + len].iter_mut().zip(&acc[..len]) {
                *o = store(fold, op.out_ty(), a);
            }
            k += len;
        }
    };
    if threads <= 1 {
        run(0, &mut outs);
    } else {
        std::thread::scope(|sc| {
            for (i, chunk) in outs.chunks_mut(per).enumerate() {
                let run = &run;
                sc.spawn(move || run(i * per, chunk));
            }
        });
    }
    write_walk(mem, op.dst(), 0, dsize, &outs);
}
