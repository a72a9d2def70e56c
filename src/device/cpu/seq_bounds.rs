//! The CPU reference of GetSequenceBounds (0xBE, EC-57).

use super::walks::{read_walk, write_walk};
use crate::device::memory::DeviceMemory;
use crate::device::ops::seq_bounds::{SbOp, bounds, index_bits};

/// Runs `op` on `mem`: starts at dst walk positions 0..n, ends at n..2n (EC-57).
pub fn execute(op: &SbOp, mem: &mut DeviceMemory) {
    let n = op.count() as usize;
    let mut ids = vec![0u32; n];
    read_walk(mem, op.src(), 0, 4, &mut ids);
    let (start, end) = bounds(op.float_in(), &ids);
    let out: Vec<u32> = start
        .iter()
        .chain(&end)
        .map(|&v| index_bits(op.float_out(), v))
        .collect();
    write_walk(mem, op.dst(), 0, 4, &out);
}
