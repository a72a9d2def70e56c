//! The CPU reference of Iota (0x7E): EC-47 and EC-48 on the elementwise
//! lane engine (no sources).

use super::CpuOptions;
use super::elementwise::{self, Kernel, Operand};
use super::lanes::WalkIter;
use crate::device::memory::DeviceMemory;
use crate::device::ops::KernelOp;
use crate::device::ops::iota::{IotaOp, iota_store, iota_value};

struct Iota<'a>(&'a IotaOp);

impl Kernel for Iota<'_> {
    /// The lane's base and the generator walk (DATA4D walked like a
    /// TENSOR4D, x fastest: its index is `Σ coord·step`).
    type Lane = (u32, WalkIter);
    fn lane(&self, lane: u32) -> (u32, WalkIter) {
        (
            self.0.lane_base(lane),
            WalkIter::new(self.0.num(), self.0.step()),
        )
    }
    #[inline]
    fn chunk(&self, (base, walk): &mut (u32, WalkIter), _src: [&[u32]; 2], out: &mut [u32]) {
        let ty = self.0.out_ty();
        for o in out {
            *o = iota_store(ty, iota_value(*base, walk.next_index())); // EC-47, EC-48
        }
    }
}

/// Runs `op` on every lane of `mem`.
pub fn execute(op: &IotaOp, mem: &mut DeviceMemory, opts: &CpuOptions) {
    elementwise::run(
        &Iota(op),
        mem,
        opts,
        op.channels(),
        op.count(),
        Operand {
            side: op.dst(),
            size: op.out_ty().size(),
        },
        &[],
    );
}

impl crate::device::ops::CpuKernel for IotaOp {
    fn run_cpu(&self, mem: &mut DeviceMemory, options: &CpuOptions) {
        execute(self, mem, options)
    }
}
