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
    for _ in 0..from {
        w.next_index();
    }
    w
}

/// Reads walk positions `0..out.len()` of lane `lane` of `s` (elements of
/// `size` bytes, raw bits in the low bytes).
pub(crate) fn read_walk(mem: &DeviceMemory, s: &Side, lane: u32, size: usize, out: &mut [u32]) {
    read_next(mem, s, lane, size, &mut walk_at(s, 0), out);
}

/// Reads the next `out.len()` positions of walk `w` of lane `lane` of `s`.
pub(crate) fn read_next(
    mem: &DeviceMemory,
    s: &Side,
    lane: u32,
    size: usize,
    w: &mut WalkIter,
    out: &mut [u32],
) {
    let bytes = mem.region_bytes(s.region);
    for o in out.iter_mut() {
        let i = w.next_index();
        *o = read_le(bytes, byte(mem, s, lane, i, size), size) as u32;
    }
}

/// Writes `vals` (low bytes) to walk positions `0..vals.len()` of lane `lane` of `s`.
pub(crate) fn write_walk(mem: &mut DeviceMemory, s: &Side, lane: u32, size: usize, vals: &[u32]) {
    let mut w = WalkIter::new(s.num, s.step);
    let at: Vec<usize> = vals
        .iter()
        .map(|_| byte(mem, s, lane, w.next_index(), size))
        .collect();
    let bytes = mem.region_bytes_mut(s.region);
    for (&a, v) in at.iter().zip(vals) {
        bytes[a..a + size].copy_from_slice(&v.to_le_bytes()[..size]);
    }
}
