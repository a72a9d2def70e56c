//! The CPU reference of NonzeroWithCount (0xF2, EC-56).

use super::walks::{read_walk, write_walk};
use crate::device::memory::DeviceMemory;
use crate::device::ops::nonzero::{NzOp, is_nonzero};

/// Runs `op` on `mem`: each processed lane (EC-56), in order.
pub fn execute(op: &NzOp, mem: &mut DeviceMemory) {
    let t = op.count() as usize;
    let lanes: Vec<u32> = op.lanes().collect();
    let mut src = vec![0u32; t];
    for p in lanes {
        read_walk(mem, op.src(), p, 4, &mut src);
        let mut out = Vec::with_capacity(t + 1);
        for (i, &x) in src.iter().enumerate() {
            if is_nonzero(op.float(), x) {
                // EC-56: the bit-level zero test.
                // EC-56: the src walk position plus index_offset, mod 2^32.
                out.push((i as u32).wrapping_add(op.index_offset()));
            }
        }
        let n = out.len() as u32;
        out.resize(t, op.padding());
        out.push(n);
        write_walk(mem, op.dst(), p, 4, &out);
    }
}
