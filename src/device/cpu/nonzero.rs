//! The CPU reference of NonzeroWithCount (0xF2, EC-56).

use super::walks::{read_walk, write_walk};
use crate::device::memory::DeviceMemory;
use crate::device::ops::nonzero::{NzOp, is_nonzero};

/// Runs `op` on `mem`: each processed lane (EC-56), in order.
pub fn execute(op: &NzOp, mem: &mut DeviceMemory) {
    let t = op.count() as usize;
    let lanes: Vec<u32> = op.lanes().collect();
    let mut src = vec![0u32; t];
    let mut out = vec![0u32; t + 1];
    for p in lanes {
        read_walk(mem, op.src(), p, 4, &mut src);
        // Every position is written to the next free slot, which moves on
        // only past a nonzero: no branch per element.
        let mut n = 0;
        for (i, &x) in src.iter().enumerate() {
            // EC-56: the src walk position plus index_offset, mod 2^32.
            out[n] = (i as u32).wrapping_add(op.index_offset());
            // EC-56: the bit-level zero test.
            n += is_nonzero(op.float(), x) as usize;
        }
        out[n..t].fill(op.padding());
        out[t] = n as u32;
        write_walk(mem, op.dst(), p, 4, &out);
    }
}
