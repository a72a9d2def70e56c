//! The Pool (0x45) and MaxPoolSelect (0x58) device op: what a validated
//! record asks every backend to compute (SPEC §6). The CPU fold is
//! `device::cpu::pool`; the GPU kernel is `shaders/pool.wgsl`.

use super::KernelOp;
use crate::device::Validated;
use crate::device::convert::{InType, OutType};
use crate::isa::enums::PoolFunc;
use crate::isa::inst::{Inst, Kernel};
use crate::isa::opcode::Opcode;
use crate::isa::s4d4_pl::S4d4Pl;
use crate::isa::tensor::{Region, Tensor4d};

/// What one Pool/MaxPoolSelect record computes per window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Func {
    /// EC-11: the first maximum, from −inf; NaN never wins.
    Max,
    /// EC-12: the stream-order sum from +0.0, then one multiply by `scale`.
    Avg {
        /// `pool_scale`.
        scale: f32,
    },
    /// MaxPoolSelect: the 0-based position of the first maximum (0 if nothing beat −inf).
    Select,
}

/// One side (src or dst) of a record: where lane 0's walk starts and its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Side {
    /// SBUF or PSUM.
    pub region: Region,
    /// Partition of lane 0; lane `p` walks partition `partition + p`.
    pub partition: u32,
    /// Byte offset of element (0, 0, 0, 0) within the partition.
    pub offset: u32,
    /// Per-dim step in elements (x first).
    pub step: [i64; 4],
    /// Per-dim count (x first).
    pub num: [u64; 4],
}

impl Side {
    pub(crate) fn new(t: &Tensor4d) -> Option<Side> {
        let loc = t.addr.location()?;
        Some(Side {
            region: loc.region,
            partition: loc.partition,
            offset: loc.offset,
            step: t.step.map(|s| s as i64),
            num: t.num.map(|n| n as u64),
        })
    }

    /// First and one-past-last byte (relative to the partition) the walk touches.
    pub(crate) fn byte_range(&self, size: usize) -> (i64, i64) {
        let (mut lo, mut hi) = (0i64, 0i64);
        for d in 0..4 {
            let span = self.step[d] * (self.num[d] as i64 - 1);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        let s = size as i64;
        (self.offset as i64 + lo * s, self.offset as i64 + hi * s + s)
    }
}

/// A Pool or MaxPoolSelect record as the executors run it. Only
/// [`PoolOp::from_validated`] makes one, so every op comes from a record that
/// passed validation (EC-6, EC-10 and EC-21 included).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolOp {
    func: Func,
    in_ty: InType,
    out_ty: OutType,
    channels: u32,
    window_dims: usize,
    period: u64,
    num: u64,
    src: Side,
    dst: Side,
}

impl PoolOp {
    /// The op of a validated Pool/MaxPoolSelect record; `None` for any other opcode.
    pub fn from_validated(v: &Validated) -> Option<PoolOp> {
        match v.inst() {
            Inst::Kernel(Kernel::S4d4Pl(p)) => PoolOp::of(&p),
            _ => None,
        }
    }

    /// The op of a validated Pool/MaxPoolSelect record's decoded operand.
    pub(super) fn of(p: &S4d4Pl) -> Option<PoolOp> {
        let func = match (p.opcode(), p.pool_func) {
            (Opcode::POOL, PoolFunc::MAX_POOL) => Func::Max,
            (Opcode::POOL, PoolFunc::AVG_POOL) => Func::Avg {
                scale: p.pool_scale(),
            },
            (Opcode::MAX_POOL_SELECT, _) => Func::Select,
            _ => return None,
        };
        Some(PoolOp {
            func,
            in_ty: InType::from_dtype(p.in_dtype)?,
            out_ty: OutType::from_dtype(p.out_dtype)?,
            channels: p.num_active_channels as u32,
            window_dims: p.pool_dim.window_dims()?,
            period: p.period()?,
            num: p.outputs()?,
            src: Side::new(&p.src)?,
            dst: Side::new(&p.dst)?,
        })
    }

    /// What each window computes.
    pub fn func(&self) -> Func {
        self.func
    }
    /// Input element type.
    pub fn in_ty(&self) -> InType {
        self.in_ty
    }
    /// Output element type.
    pub fn out_ty(&self) -> OutType {
        self.out_ty
    }
    /// Elements per window (seed 000's `period`).
    pub fn period(&self) -> u64 {
        self.period
    }
    /// Outputs per lane (seed 000's `num`).
    pub fn num(&self) -> u64 {
        self.num
    }
    /// How many of the innermost src dims form a window (1..=4).
    pub fn window_dims(&self) -> usize {
        self.window_dims
    }
    /// The input side.
    pub fn src(&self) -> &Side {
        &self.src
    }
}

impl KernelOp for PoolOp {
    const FAMILY: &'static str = "Pool/MaxPoolSelect";
    // decode_pool runs it (seed 001), not an EC-59 kernel line.
    const ROWS: &'static [(u8, &'static [super::TraceLine])] = &[];
    fn of_kernel(k: &Kernel) -> Option<PoolOp> {
        match k {
            Kernel::S4d4Pl(p) => PoolOp::of(p),
            _ => None,
        }
    }
    /// Lanes (1..=128).
    fn channels(&self) -> u32 {
        self.channels
    }
    /// Input elements folded in all: `channels · period · num`.
    fn elements(&self) -> u64 {
        self.channels as u64 * self.period * self.num
    }
    /// The output side.
    fn dst(&self) -> &Side {
        &self.dst
    }
    fn dst_walk(&self) -> Option<(&Side, usize)> {
        Some((self.dst(), self.out_ty().size()))
    }
    /// Bytes one execution reads and writes: `channels · (period · num · in size + num · out size)`.
    fn bytes_moved(&self) -> u64 {
        self.channels as u64
            * self.num
            * (self.period * self.in_ty.size() as u64 + self.out_ty.size() as u64)
    }
}
