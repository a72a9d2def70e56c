//! Walk reads and writes of one lane: `gather` and `scatter` on a lane's
//! bytes (the elementwise engine, NonzeroWithCount), and on a region of
//! device memory (CrossLaneReduce, and through `ops::Walks` the folds that
//! sit next to their op).

use super::lanes::{WalkIter, read_le};
use crate::device::memory::DeviceMemory;
use crate::device::ops::pool::Side;

/// Byte of element index `i` (relative to the walk's start) of lane `lane`.
fn byte(mem: &DeviceMemory, s: &Side, lane: u32, i: i64, size: usize) -> usize {
    let pb = mem.active_bytes(s.region) as i64;
    ((s.partition + lane) as i64 * pb + s.offset as i64 + i * size as i64) as usize
}

/// The walk of `s` positioned at walk position `from`.
pub(crate) fn walk_at(s: &Side, from: u64) -> WalkIter {
    let mut w = WalkIter::new(s.num, s.step);
    let mut left = from;
    while left > 0 {
        left -= w.next_run(left).1;
    }
    w
}

/// Reads walk positions `0..out.len()` of lane `lane` of `s` (elements of
/// `size` bytes, raw bits in the low bytes).
pub(crate) fn read_walk(mem: &DeviceMemory, s: &Side, lane: u32, size: usize, out: &mut [u32]) {
    read_next(mem, s, lane, size, &mut walk_at(s, 0), out);
}

/// Reads the next `out.len()` positions of walk `w` of lane `lane` of `s`
/// ([`gather`] on the region's bytes).
pub(crate) fn read_next(
    mem: &DeviceMemory,
    s: &Side,
    lane: u32,
    size: usize,
    w: &mut WalkIter,
    out: &mut [u32],
) {
    let at = byte(mem, s, lane, 0, size) as i64;
    gather(mem.region_bytes(s.region), at, w, size, out);
}

/// Writes `vals` (low bytes) to walk positions `0..vals.len()` of lane
/// `lane` of `s` ([`scatter`] on the region's bytes).
pub(crate) fn write_walk(mem: &mut DeviceMemory, s: &Side, lane: u32, size: usize, vals: &[u32]) {
    let at = byte(mem, s, lane, 0, size) as i64;
    let mut w = WalkIter::new(s.num, s.step);
    scatter(mem.region_bytes_mut(s.region), at, &mut w, size, vals);
}

// The folds that live next to their op read and write through this.
impl crate::device::ops::Walks for DeviceMemory {
    fn read_walk(&self, s: &Side, lane: u32, size: usize, out: &mut [u32]) {
        read_walk(self, s, lane, size, out)
    }
    fn write_walk(&mut self, s: &Side, lane: u32, size: usize, vals: &[u32]) {
        write_walk(self, s, lane, size, vals)
    }
}

/// Reads the next `out.len()` elements of walk `w` (element 0 at byte `at`).
pub(crate) fn gather(bytes: &[u8], at: i64, w: &mut WalkIter, size: usize, out: &mut [u32]) {
    let step0 = w.step0();
    let mut i = 0;
    while i < out.len() {
        let (start, n) = w.next_run((out.len() - i) as u64);
        let n = n as usize;
        let o = &mut out[i..i + n];
        let first = (at + start * size as i64) as usize;
        if step0 == 1 || n == 1 {
            let src = &bytes[first..first + n * size];
            // Elements are aligned to their size (SPEC §3) in u64-backed
            // memory, so the typed views normally succeed (little-endian host).
            match (size, bytemuck::try_cast_slice::<u8, u32>(src)) {
                (4, Ok(w)) => o.copy_from_slice(w),
                (4, Err(_)) => {
                    for (x, c) in o.iter_mut().zip(src.chunks_exact(4)) {
                        *x = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
                (2, _) => match bytemuck::try_cast_slice::<u8, u16>(src) {
                    Ok(h) => {
                        for (x, &c) in o.iter_mut().zip(h) {
                            *x = c as u32;
                        }
                    }
                    Err(_) => {
                        for (x, c) in o.iter_mut().zip(src.chunks_exact(2)) {
                            *x = u16::from_le_bytes([c[0], c[1]]) as u32;
                        }
                    }
                },
                _ => {
                    for (x, &c) in o.iter_mut().zip(src) {
                        *x = c as u32;
                    }
                }
            }
        } else {
            let stride = step0 * size as i64;
            for (j, x) in o.iter_mut().enumerate() {
                let a = (first as i64 + j as i64 * stride) as usize;
                *x = read_le(bytes, a, size) as u32;
            }
        }
        i += n;
    }
}

/// Writes `vals` (low bytes) to the next `vals.len()` elements of walk `w`.
pub(crate) fn scatter(bytes: &mut [u8], at: i64, w: &mut WalkIter, size: usize, vals: &[u32]) {
    let step0 = w.step0();
    let mut i = 0;
    while i < vals.len() {
        let (start, n) = w.next_run((vals.len() - i) as u64);
        let n = n as usize;
        let v = &vals[i..i + n];
        let first = (at + start * size as i64) as usize;
        if step0 == 1 || n == 1 {
            let dst = &mut bytes[first..first + n * size];
            match size {
                4 => match bytemuck::try_cast_slice_mut::<u8, u32>(dst) {
                    Ok(w) => w.copy_from_slice(v),
                    Err(_) => {
                        for (c, x) in dst.chunks_exact_mut(4).zip(v) {
                            c.copy_from_slice(&x.to_le_bytes());
                        }
                    }
                },
                2 => match bytemuck::try_cast_slice_mut::<u8, u16>(dst) {
                    Ok(h) => {
                        for (d, x) in h.iter_mut().zip(v) {
                            *d = *x as u16;
                        }
                    }
                    Err(_) => {
                        for (c, x) in dst.chunks_exact_mut(2).zip(v) {
                            c.copy_from_slice(&(*x as u16).to_le_bytes());
                        }
                    }
                },
                _ => {
                    for (c, x) in dst.iter_mut().zip(v) {
                        *c = *x as u8;
                    }
                }
            }
        } else {
            let stride = step0 * size as i64;
            for (j, x) in v.iter().enumerate() {
                let a = (first as i64 + j as i64 * stride) as usize;
                bytes[a..a + size].copy_from_slice(&x.to_le_bytes()[..size]);
            }
        }
        i += n;
    }
}
