//! The CPU reference of Tensor-Tensor (0x41 arith, 0x51 bitvec on POOL):
//! EC-49 … EC-52 on the elementwise lane engine, two sources.

use super::CpuOptions;
use super::elementwise::{self, CHUNK, Kernel, Operand, load_chunk, store_chunk};
use crate::device::memory::DeviceMemory;
use crate::device::ops::KernelOp;
use crate::device::ops::tensor_tensor::{TtOp, TtPath, extend, f32_op, int_op};

struct Tt<'a>(&'a TtOp);

impl Kernel for Tt<'_> {
    type Lane = ();
    fn lane(&self, _lane: u32) {}
    #[inline]
    fn chunk(&self, _: &mut (), src: [&[u32]; 2], out: &mut [u32]) {
        let op = self.0;
        let alu = op.alu().0;
        let [d0, d1] = op.src_dtype();
        match op.path() {
            TtPath::Int => {
                let width = 8 * op.sizes()[0] as u32;
                let signed = d0.is_signed_int();
                for ((o, &a), &b) in out.iter_mut().zip(src[0]).zip(src[1]) {
                    *o = int_op(alu, extend(a, d0), extend(b, d1), width, signed);
                }
            }
            TtPath::F32 {
                src: [t0, t1],
                out: to,
            } => {
                let (mut x, mut y) = ([0u32; CHUNK], [0u32; CHUNK]);
                let (x, y) = (&mut x[..out.len()], &mut y[..out.len()]);
                load_chunk(t0, src[0], x);
                load_chunk(t1, src[1], y);
                // One loop per op, so each vectorises (EC-51).
                macro_rules! each {
                    ($op:expr) => {
                        for (a, &b) in x.iter_mut().zip(y.iter()) {
                            *a = f32_op($op, *a, b);
                        }
                    };
                }
                match alu {
                    0x04 => each!(0x04),
                    0x05 => each!(0x05),
                    _ => each!(0x06),
                }
                store_chunk(to, x, out);
            }
        }
    }
}

/// Runs `op` on every lane of `mem`.
pub fn execute(op: &TtOp, mem: &mut DeviceMemory, opts: &CpuOptions) {
    let [s0, s1, sd] = op.sizes();
    let [a, b] = op.src();
    elementwise::run(
        &Tt(op),
        mem,
        opts,
        op.channels(),
        op.count(),
        Operand {
            side: op.dst(),
            size: sd,
        },
        &[Operand { side: a, size: s0 }, Operand { side: b, size: s1 }],
    );
}

impl crate::device::ops::CpuKernel for TtOp {
    fn run_cpu(&self, mem: &mut DeviceMemory, options: &CpuOptions) {
        execute(self, mem, options)
    }
}
