//! Whole-walk reads and writes of one lane, shared by the kernels that are
//! not elementwise (CrossLaneReduce, NonzeroWithCount, GetSequenceBounds).

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

/// Reads the next `out.len()` positions of walk `w` of lane `lane` of `s`:
/// runs along dim 0 at a time, decoded in bulk when they are contiguous.
pub(crate) fn read_next(
    mem: &DeviceMemory,
    s: &Side,
    lane: u32,
    size: usize,
    w: &mut WalkIter,
    out: &mut [u32],
) {
    let bytes = mem.region_bytes(s.region);
    let base = byte(mem, s, lane, 0, size) as i64;
    let mut i = 0;
    while i < out.len() {
        let (start, n) = w.next_run((out.len() - i) as u64);
        let n = n as usize;
        let o = &mut out[i..i + n];
        let first = (base + start * size as i64) as usize;
        if s.step[0] == 1 || n == 1 {
            let src = &bytes[first..first + n * size];
            match size {
                4 => {
                    for (x, c) in o.iter_mut().zip(src.chunks_exact(4)) {
                        *x = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
                2 => {
                    for (x, c) in o.iter_mut().zip(src.chunks_exact(2)) {
                        *x = u16::from_le_bytes([c[0], c[1]]) as u32;
                    }
                }
                _ => {
                    for (x, &c) in o.iter_mut().zip(src) {
                        *x = c as u32;
                    }
                }
            }
        } else {
            let stride = s.step[0] * size as i64;
            for (j, x) in o.iter_mut().enumerate() {
                let a = (first as i64 + j as i64 * stride) as usize;
                *x = read_le(bytes, a, size) as u32;
            }
        }
        i += n;
    }
}

/// Writes `vals` (low bytes) to walk positions `0..vals.len()` of lane
/// `lane` of `s`: runs along dim 0 at a time.
pub(crate) fn write_walk(mem: &mut DeviceMemory, s: &Side, lane: u32, size: usize, vals: &[u32]) {
    let base = byte(mem, s, lane, 0, size) as i64;
    let mut w = WalkIter::new(s.num, s.step);
    let bytes = mem.region_bytes_mut(s.region);
    let mut i = 0;
    while i < vals.len() {
        let (start, n) = w.next_run((vals.len() - i) as u64);
        let n = n as usize;
        let v = &vals[i..i + n];
        let first = (base + start * size as i64) as usize;
        if (s.step[0] == 1 || n == 1) && size == 4 {
            for (c, x) in bytes[first..first + 4 * n].chunks_exact_mut(4).zip(v) {
                c.copy_from_slice(&x.to_le_bytes());
            }
        } else {
            let stride = s.step[0] * size as i64;
            for (j, x) in v.iter().enumerate() {
                let a = (first as i64 + j as i64 * stride) as usize;
                bytes[a..a + size].copy_from_slice(&x.to_le_bytes()[..size]);
            }
        }
        i += n;
    }
}
