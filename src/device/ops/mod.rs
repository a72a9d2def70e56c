//! Device ops: what a validated record asks a backend to compute, one typed
//! op per kernel family. Only [`Op::from_validated`] makes one, so every op
//! comes from a record that passed validation; the CPU reference
//! ([`crate::device::cpu`]) and the GPU kernels consume the same op.

pub mod chip_dma;
pub mod copy;
pub mod cross_lane;
pub mod iota;
pub mod nonzero;
pub mod pool;
pub mod seq_bounds;
pub mod tensor_tensor;

use crate::device::Validated;
use crate::isa::inst::{Inst, Kernel};

pub use chip_dma::{ChipDma, ChipWalk, Place};
pub use copy::CopyOp;
pub use cross_lane::ClrOp;
pub use iota::IotaOp;
pub use nonzero::NzOp;
pub use pool::PoolOp;
pub use seq_bounds::SbOp;
pub use tensor_tensor::TtOp;

/// One validated record's datapath work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// Pool (0x45) and MaxPoolSelect (0x58).
    Pool(PoolOp),
    /// Copy (0x46) and Cast (0x47).
    Copy(CopyOp),
    /// Iota (0x7E).
    Iota(IotaOp),
    /// Tensor-Tensor arith (0x41) and bitvec (0x51).
    TensorTensor(TtOp),
    /// CrossLaneReduce arith (0x7C) and bitvec (0x7D).
    CrossLane(ClrOp),
    /// NonzeroWithCount (0xF2).
    Nonzero(NzOp),
    /// GetSequenceBounds (0xBE).
    SeqBounds(SbOp),
}

impl Op {
    /// The op of a validated record; `None` for records with no datapath
    /// work on this device (control and DMA records, kernels not emulated).
    pub fn from_validated(v: &Validated) -> Option<Op> {
        let Inst::Kernel(k) = v.inst() else {
            return None;
        };
        match k {
            Kernel::S4d4Pl(p) => PoolOp::of(&p).map(Op::Pool),
            Kernel::S4d4Tr(p) => CopyOp::of(&p).map(Op::Copy),
            Kernel::D4Iota(p) => IotaOp::of(&p).map(Op::Iota),
            Kernel::S3s3d3Tt(p) => TtOp::of(&p).map(Op::TensorTensor),
            Kernel::S4d4Cr(p) => ClrOp::of(&p).map(Op::CrossLane),
            Kernel::NonzeroWithCount(p) => NzOp::of(&p).map(Op::Nonzero),
            Kernel::SeqBounds(p) => SbOp::of(&p).map(Op::SeqBounds),
            // EC-55: spec 2 runs as Tensor-Tensor; spec 0 has no datapath work.
            Kernel::ExtTta(p) => TtOp::of_ext_tta(&p).map(Op::TensorTensor),
            Kernel::EngineNop(_) | Kernel::NotModelled(_) => None,
        }
    }

    /// Lanes the op runs on (partitions from the start partition).
    pub fn channels(&self) -> u32 {
        match self {
            Op::Pool(p) => p.channels(),
            Op::Copy(c) => c.channels(),
            Op::Iota(i) => i.channels(),
            Op::TensorTensor(t) => t.channels(),
            Op::CrossLane(c) => c.channels(),
            Op::Nonzero(n) => n.channels(),
            Op::SeqBounds(s) => s.channels(),
        }
    }

    /// Elements the op reads or writes in all: the unit of the work budget
    /// and of the CPU backend's thread split.
    pub fn elements(&self) -> u64 {
        match self {
            Op::Pool(p) => p.elements(),
            Op::Copy(c) => c.elements(),
            Op::Iota(i) => i.elements(),
            Op::TensorTensor(t) => t.elements(),
            Op::CrossLane(c) => c.elements(),
            Op::Nonzero(n) => n.elements(),
            Op::SeqBounds(s) => s.elements(),
        }
    }

    /// Where the op writes, when it writes only along its dst walk: the dst
    /// side (lane `p` in partition `dst.partition + p`, for
    /// [`Op::channels`] lanes) and the bytes of one element. `None` for the
    /// kernels whose writes follow their own layouts (CrossLaneReduce,
    /// NonzeroWithCount, GetSequenceBounds): a backend that tracks written
    /// bytes then counts all of memory as written.
    pub fn dst_walk(&self) -> Option<(&pool::Side, usize)> {
        match self {
            Op::Pool(p) => Some((p.dst(), p.out_ty().size())),
            Op::Copy(c) => Some((c.dst(), c.conversion().dst_size())),
            Op::Iota(i) => Some((i.dst(), i.out_ty().size())),
            Op::TensorTensor(t) => Some((t.dst(), t.sizes()[2])),
            Op::CrossLane(_) | Op::Nonzero(_) | Op::SeqBounds(_) => None,
        }
    }

    /// Bytes one execution reads and writes (benchmarks' GB/s).
    pub fn bytes_moved(&self) -> u64 {
        match self {
            Op::Pool(p) => p.bytes_moved(),
            Op::Copy(c) => c.bytes_moved(),
            Op::Iota(i) => i.bytes_moved(),
            Op::TensorTensor(t) => t.bytes_moved(),
            Op::CrossLane(c) => c.bytes_moved(),
            Op::Nonzero(n) => n.bytes_moved(),
            Op::SeqBounds(s) => s.bytes_moved(),
        }
    }
}

impl From<PoolOp> for Op {
    fn from(p: PoolOp) -> Op {
        Op::Pool(p)
    }
}
