//! Device ops: what a validated record asks a backend to compute, one typed
//! op per kernel family. Only [`Op::from_validated`] makes one, so every op
//! comes from a record that passed validation; the CPU reference
//! ([`crate::device::cpu`]) and the GPU kernels consume the same op.

pub mod pool;

use crate::device::Validated;
use crate::isa::opcode::OpcodeClass;

pub use pool::PoolOp;

/// One validated record's datapath work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// Pool (0x45) and MaxPoolSelect (0x58).
    Pool(PoolOp),
}

impl Op {
    /// The op of a validated record; `None` for records with no datapath
    /// work on this device (control and DMA records, kernels not emulated).
    pub fn from_validated(v: &Validated) -> Option<Op> {
        match v.record().opcode().class() {
            OpcodeClass::S4d4Pl => PoolOp::from_validated(v).map(Op::Pool),
            _ => None,
        }
    }

    /// Lanes the op runs on (partitions from the start partition).
    pub fn channels(&self) -> u32 {
        match self {
            Op::Pool(p) => p.channels(),
        }
    }

    /// Elements the op reads or writes in all: the unit of the work budget
    /// and of the CPU backend's thread split.
    pub fn elements(&self) -> u64 {
        match self {
            Op::Pool(p) => p.elements(),
        }
    }

    /// Bytes one execution reads and writes (benchmarks' GB/s).
    pub fn bytes_moved(&self) -> u64 {
        match self {
            Op::Pool(p) => p.bytes_moved(),
        }
    }
}

impl From<PoolOp> for Op {
    fn from(p: PoolOp) -> Op {
        Op::Pool(p)
    }
}
