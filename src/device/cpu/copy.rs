//! The CPU reference of Copy (0x46) and Cast (0x47): EC-45 and EC-46 on
//! the elementwise lane engine.

use super::CpuOptions;
use super::elementwise::{self, CHUNK, Kernel, Operand, load_chunk, store_chunk};
use crate::device::memory::DeviceMemory;
use crate::device::ops::copy::{Conversion, CopyOp};

struct Copy(Conversion);

impl Kernel for Copy {
    type Lane = ();
    fn identity(&self) -> bool {
        matches!(self.0, Conversion::Bits { .. })
    }
    fn lane(&self, _lane: u32) {}
    #[inline]
    fn chunk(&self, _: &mut (), src: [&[u32]; 2], out: &mut [u32]) {
        match self.0 {
            // EC-45, EC-46 (equal dtypes): the bits, unchanged.
            Conversion::Bits { .. } => out.copy_from_slice(src[0]),
            // EC-46: load (SPEC §6, EC-19), then store (EC-13, EC-20).
            Conversion::Convert { from, to } => {
                let mut f = [0u32; CHUNK];
                let f = &mut f[..out.len()];
                load_chunk(from, src[0], f);
                store_chunk(to, f, out);
            }
        }
    }
}

/// Runs `op` on every lane of `mem`.
pub fn execute(op: &CopyOp, mem: &mut DeviceMemory, opts: &CpuOptions) {
    let c = op.conversion();
    elementwise::run(
        &Copy(c),
        mem,
        opts,
        op.channels(),
        op.count(),
        Operand {
            side: op.dst(),
            size: c.dst_size(),
        },
        &[Operand {
            side: op.src(),
            size: c.src_size(),
        }],
    );
}
