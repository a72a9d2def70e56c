//! The NonzeroWithCount device op: 0xF2 NONZERO_WITH_COUNT (SPEC-KERNELS
//! §9, EC-56). Each processed lane ([`processed`]) walks its T src elements;
//! dst walk position j < N gets the j-th nonzero's src position plus
//! index_offset, N ≤ j < T gets padding_val, and position T the count N, all
//! INT32. Other lanes are untouched. The CPU reference is
//! `device::cpu::nonzero`; the GPU kernel is `shaders/nonzero.wgsl`.

use super::KernelOp;
use super::pool::Side;
use crate::device::Validated;
use crate::isa::enums::Dtype;
use crate::isa::inst::{Inst, Kernel};
use crate::isa::s3d3_nonzero::S3d3NonzeroWithCount;
use crate::limits::LANES_PER_POOL_CORE;

/// A NonzeroWithCount record as the executors run it. Only
/// [`NzOp::from_validated`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NzOp {
    float: bool,
    channels: u32,
    count: u64,
    index_offset: u32,
    padding: u32,
    src: Side,
    dst: Side,
}

/// EC-56: lane `p` of a record whose src starts at partition `start` is
/// processed iff its absolute src partition is the first of a Q7 core
/// (≡ 0 mod 16) — the absolute reading of C-22.
pub const fn processed(start: u32, p: u32) -> bool {
    (start + p).is_multiple_of(LANES_PER_POOL_CORE)
}

/// EC-56: the zero test on bits. INT32 x is zero iff x == 0; FP32 x iff
/// `bits & 0x7FFFFFFF == 0` (±0); every other pattern (subnormals, NaNs) is
/// nonzero, and nothing is converted (no EC-19).
#[inline(always)]
pub const fn is_nonzero(float: bool, bits: u32) -> bool {
    if float {
        bits & 0x7FFF_FFFF != 0
    } else {
        bits != 0
    }
}

impl NzOp {
    /// The op of a validated NonzeroWithCount record; `None` for any other record.
    pub fn from_validated(v: &Validated) -> Option<NzOp> {
        match v.inst() {
            Inst::Kernel(Kernel::NonzeroWithCount(p)) => NzOp::of(&p),
            _ => None,
        }
    }

    /// The op of a validated NonzeroWithCount record's decoded operand.
    pub(super) fn of(p: &S3d3NonzeroWithCount) -> Option<NzOp> {
        Some(NzOp {
            float: p.in_dtype == Dtype::FP32,
            channels: p.num_active_channels as u32,
            count: p.src.elements(),
            // EC-60: only inline immediates execute.
            index_offset: p.index_offset as u32,
            padding: p.padding_val as u32,
            src: Side::new(&p.src.to_4d())?,
            dst: Side::new(&p.dst.to_4d())?,
        })
    }

    /// FP32 src (else INT32).
    pub fn float(&self) -> bool {
        self.float
    }
    /// The processed lanes (EC-56), increasing.
    pub fn lanes(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.channels).filter(|&p| processed(self.src.partition, p))
    }
    /// T = count(src).
    pub fn count(&self) -> u64 {
        self.count
    }
    /// index_offset's bits (added modulo 2^32).
    pub fn index_offset(&self) -> u32 {
        self.index_offset
    }
    /// padding_val's bits.
    pub fn padding(&self) -> u32 {
        self.padding
    }
    /// The source walk.
    pub fn src(&self) -> &Side {
        &self.src
    }
}

impl KernelOp for NzOp {
    const FAMILY: &'static str = "NonzeroWithCount";
    const ROWS: &'static [(u8, &'static [super::TraceLine])] = &[(0xF2, &[super::TraceLine::Lanes("NonzeroWithCount : num_chans = ")])];
    fn of_kernel(k: &Kernel) -> Option<NzOp> {
        match k {
            Kernel::NonzeroWithCount(p) => NzOp::of(p),
            _ => None,
        }
    }
    /// Lanes of the record (1..=128); only [`NzOp::lanes`] are processed.
    fn channels(&self) -> u32 {
        self.channels
    }
    /// Elements read and written: `lanes · (2T + 1)`.
    fn elements(&self) -> u64 {
        self.lanes().count() as u64 * (2 * self.count + 1)
    }
    /// The destination walk (T + 1 positions).
    fn dst(&self) -> &Side {
        &self.dst
    }
    /// Bytes one execution reads and writes.
    fn bytes_moved(&self) -> u64 {
        4 * self.elements()
    }
}
