//! The Iota (0x7E) device op (SPEC-KERNELS §2, EC-47, EC-48): lane p's dst
//! walk receives the ramp `base + p·channel_multiplier + Σ coord·step`. The
//! CPU reference is `device::cpu::iota`; the GPU kernel is
//! `shaders/iota.wgsl`.

use super::KernelOp;
use super::pool::Side;
use crate::device::Validated;
use crate::device::convert::{self, OutType};
use crate::isa::d4_iota::D4Iota;
use crate::isa::inst::{Inst, Kernel};

/// An Iota record as the executors run it. Only [`IotaOp::from_validated`]
/// makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IotaOp {
    out_ty: OutType,
    channels: u32,
    base: i32,
    channel_multiplier: i32,
    /// The generator's per-dim step (x first), sign-extended.
    step: [i64; 4],
    /// The generator's per-dim count (x first).
    num: [u64; 4],
    dst: Side,
}

impl IotaOp {
    /// The op of a validated Iota record; `None` for any other opcode.
    pub fn from_validated(v: &Validated) -> Option<IotaOp> {
        match v.inst() {
            Inst::Kernel(Kernel::D4Iota(p)) => IotaOp::of(&p),
            _ => None,
        }
    }

    /// The op of a validated Iota record's decoded operand.
    pub(super) fn of(p: &D4Iota) -> Option<IotaOp> {
        Some(IotaOp {
            out_ty: OutType::from_dtype(p.out_dtype)?,
            channels: p.num_active_channels as u32,
            base: p.data.base,
            channel_multiplier: p.channel_multiplier,
            step: p.data.step.map(|s| s as i64),
            num: p.data.num.map(|n| n as u64),
            dst: Side::new(&p.dst)?,
        })
    }

    /// The output dtype.
    pub fn out_ty(&self) -> OutType {
        self.out_ty
    }
    /// DATA4D's base.
    pub fn base(&self) -> i32 {
        self.base
    }
    /// The per-partition increment.
    pub fn channel_multiplier(&self) -> i32 {
        self.channel_multiplier
    }
    /// The generator's per-dim step (x first).
    pub fn step(&self) -> [i64; 4] {
        self.step
    }
    /// The generator's per-dim count (x first).
    pub fn num(&self) -> [u64; 4] {
        self.num
    }
    /// Elements per lane (count(DATA4D) = count(dst)).
    pub fn count(&self) -> u64 {
        self.num.iter().product()
    }
    /// EC-47: lane `lane`'s value before the generator offset,
    /// `base + lane·channel_multiplier` modulo 2^32.
    pub fn lane_base(&self, lane: u32) -> u32 {
        (self.base as u32).wrapping_add(lane.wrapping_mul(self.channel_multiplier as u32))
    }
}

/// EC-47: the ramp value of the generator position whose `Σ coord·step` is
/// `offset`, from the lane's base ([`IotaOp::lane_base`]): two's-complement
/// arithmetic modulo 2^32.
#[inline(always)]
pub const fn iota_value(lane_base: u32, offset: i64) -> u32 {
    lane_base.wrapping_add(offset as u32)
}

/// EC-48: the stored bits of ramp value `v` (in the low bytes): integer
/// outputs keep its low bits (wrap); float outputs read it as a signed int32,
/// round it to f32 (RNE), then store it by EC-13 (fp16/bf16 round a second
/// time, as intended).
#[inline(always)]
pub const fn iota_store(out: OutType, v: u32) -> u32 {
    match out {
        OutType::U8 | OutType::I8 => v & 0xFF,
        OutType::U16 | OutType::I16 => v & 0xFFFF,
        OutType::U32 | OutType::I32 => v,
        OutType::F16 | OutType::Bf16 | OutType::F32 | OutType::F32r => {
            convert::store_f32_bits(out, convert::i32_to_f32_bits(v as i32))
        }
    }
}

impl KernelOp for IotaOp {
    const FAMILY: &'static str = "Iota";
    const ROWS: &'static [(u8, &'static [super::TraceLine])] = &[(0x7E, &[super::TraceLine::Lanes("Iota : num_chans = ")])];
    fn of_kernel(k: &Kernel) -> Option<IotaOp> {
        match k {
            Kernel::D4Iota(p) => IotaOp::of(p),
            _ => None,
        }
    }
    /// Lanes (1..=128).
    fn channels(&self) -> u32 {
        self.channels
    }
    /// Elements written: `channels · count`.
    fn elements(&self) -> u64 {
        self.channels as u64 * self.count()
    }
    /// The destination walk.
    fn dst(&self) -> &Side {
        &self.dst
    }
    fn dst_walk(&self) -> Option<(&Side, usize)> {
        Some((self.dst(), self.out_ty().size()))
    }
    /// Bytes one execution writes.
    fn bytes_moved(&self) -> u64 {
        self.elements() * self.out_ty.size() as u64
    }
}
