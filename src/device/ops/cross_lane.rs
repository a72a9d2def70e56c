//! The CrossLaneReduce device op: 0x7C CROSS_LANE_REDUCE_ARITH and 0x7D
//! CROSS_LANE_REDUCE_BITVEC (SPEC-KERNELS §5, EC-54). Lanes p = 0..nac−1
//! from src's start partition; M = count(src) elements per lane. The
//! Partitions axis folds x\[p\]\[k\] over p for each walk position k into dst
//! element k; the All axis folds all nac·M elements, p outer and k inner, into
//! the one dst element. Every fold is a sequential left fold from the first
//! element (no identity).
//!
//! The fold step ([`step`]), its first element ([`first`]) and the store
//! ([`store`]) are defined here once; the CPU reference
//! (`device::cpu::cross_lane`) runs them and `shaders/cross_lane.wgsl`
//! mirrors them one for one.

use super::KernelOp;
use super::pool::Side;
use crate::device::Validated;
use crate::device::convert::{self, InType, OutType};
use crate::isa::enums::{Dtype, ReduceAxis, ReduceOp};
use crate::isa::inst::{Inst, Kernel};
use crate::isa::opcode::Opcode;
use crate::isa::s4d4_cr::S4d4Cr;

/// How the elements of a CrossLaneReduce fold combine (EC-54).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// f32 ADD of f32-loaded elements (float in_dtype).
    AddF32,
    /// AVERAGE: each element times `scale` (f32, flushed), then the f32 ADD
    /// fold; for every in_dtype. `scale` is the EC-19-flushed f32 bits.
    Average {
        /// The scale's f32 bits, a subnormal already flushed to ±0.
        scale: u32,
    },
    /// MAX in f32 (any in_dtype): NaN never wins, the first of equal values stays.
    Max,
    /// Integer ADD: exact in an i64, stored by [`store_exact_int`].
    AddInt,
    /// Raw-bit OR (0x7D).
    Or,
    /// Raw-bit AND (0x7D).
    And,
    /// Raw-bit XOR (0x7D).
    Xor,
}

impl Fold {
    /// Whether the accumulator is f32 bits (else an integer).
    pub const fn is_f32(self) -> bool {
        matches!(self, Fold::AddF32 | Fold::Average { .. } | Fold::Max)
    }
}

/// A CrossLaneReduce record as the executors run it. Only
/// [`ClrOp::from_validated`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClrOp {
    opcode: Opcode,
    fold: Fold,
    all: bool,
    in_dtype: Dtype,
    out_dtype: Dtype,
    channels: u32,
    count: u64,
    src: Side,
    dst: Side,
}

impl ClrOp {
    /// The op of a validated CrossLaneReduce record; `None` for any other record.
    pub fn from_validated(v: &Validated) -> Option<ClrOp> {
        match v.inst() {
            Inst::Kernel(Kernel::S4d4Cr(p)) => ClrOp::of(&p),
            _ => None,
        }
    }

    /// The op of a validated CrossLaneReduce record's decoded operand.
    pub(super) fn of(p: &S4d4Cr) -> Option<ClrOp> {
        let float_in = matches!(p.in_dtype, Dtype::FP16 | Dtype::BFLOAT16 | Dtype::FP32);
        let fold = match p.reduce_op {
            ReduceOp::ADD if float_in => Fold::AddF32,
            ReduceOp::ADD => Fold::AddInt,
            // EC-54: a subnormal scale is flushed to ±0 first (EC-19).
            ReduceOp::AVERAGE => Fold::Average {
                scale: convert::flush_subnormal(p.scale.0),
            },
            ReduceOp::MAX => Fold::Max,
            ReduceOp::BITWISE_OR => Fold::Or,
            ReduceOp::BITWISE_AND => Fold::And,
            ReduceOp::BITWISE_XOR => Fold::Xor,
            _ => return None,
        };
        if fold.is_f32() {
            InType::from_dtype(p.in_dtype)?;
        }
        OutType::from_dtype(p.out_dtype)?;
        Some(ClrOp {
            opcode: p.opcode(),
            fold,
            all: p.reduce_axis == ReduceAxis::ALL,
            in_dtype: p.in_dtype,
            out_dtype: p.out_dtype,
            channels: p.num_active_channels as u32,
            count: p.src.elements(),
            src: Side::new(&p.src)?,
            dst: Side::new(&p.dst)?,
        })
    }

    /// 0x7C or 0x7D.
    pub fn opcode(&self) -> Opcode {
        self.opcode
    }
    /// How elements combine.
    pub fn fold(&self) -> Fold {
        self.fold
    }
    /// The All axis (one dst element) rather than Partitions.
    pub fn all_axis(&self) -> bool {
        self.all
    }
    /// The input dtype.
    pub fn in_dtype(&self) -> Dtype {
        self.in_dtype
    }
    /// The output dtype.
    pub fn out_dtype(&self) -> Dtype {
        self.out_dtype
    }
    /// The store type.
    pub fn out_ty(&self) -> OutType {
        OutType::from_dtype(self.out_dtype).unwrap_or(OutType::F32)
    }
    /// Bytes of one src element and one dst element.
    pub fn sizes(&self) -> [usize; 2] {
        [
            self.in_dtype.size().unwrap_or(4) as usize,
            self.out_dtype.size().unwrap_or(4) as usize,
        ]
    }
    /// Elements per lane (M = count(src)).
    pub fn count(&self) -> u64 {
        self.count
    }
    /// The source walk (lane p in partition `src.partition + p`).
    pub fn src(&self) -> &Side {
        &self.src
    }
}

/// An element's raw bits (low bytes) as the fold's accumulator value: f32
/// bits (SPEC §6 load, EC-19; AVERAGE's product with `scale`, flushed) or,
/// for the integer folds, the value extended by the dtype's signedness.
#[inline(always)]
pub fn first(fold: Fold, in_dtype: Dtype, raw: u32) -> u64 {
    match fold {
        Fold::AddF32 | Fold::Max => load(in_dtype, raw) as u64,
        Fold::Average { scale } => scaled(in_dtype, raw, scale) as u64,
        Fold::AddInt => int_value(in_dtype, raw) as u64,
        Fold::Or | Fold::And | Fold::Xor => raw as u64,
    }
}

/// One step of the left fold: `acc` combined with the next element's raw bits (EC-54).
#[inline(always)]
pub fn step(fold: Fold, in_dtype: Dtype, acc: u64, raw: u32) -> u64 {
    match fold {
        Fold::AddF32 => add_bits(acc as u32, load(in_dtype, raw)) as u64,
        Fold::Average { scale } => add_bits(acc as u32, scaled(in_dtype, raw, scale)) as u64,
        Fold::Max => max_bits(acc as u32, load(in_dtype, raw)) as u64,
        // EC-54: exact; 128 lanes × 2^24 elements of 32 bits cannot overflow.
        Fold::AddInt => (acc as i64).wrapping_add(int_value(in_dtype, raw)) as u64,
        Fold::Or => acc | raw as u64,
        Fold::And => acc & raw as u64,
        Fold::Xor => acc ^ raw as u64,
    }
}

/// The dst element's bits (low bytes) of a fold's result (EC-54): f32 folds
/// by EC-13/EC-20, integer ADD by [`store_exact_int`], bitwise folds as raw bits.
#[inline(always)]
pub fn store(fold: Fold, out: OutType, acc: u64) -> u32 {
    let mask = match out.size() {
        1 => 0xFF,
        2 => 0xFFFF,
        _ => u32::MAX,
    };
    match fold {
        Fold::AddF32 | Fold::Average { .. } | Fold::Max => convert::store_f32_bits(out, acc as u32),
        Fold::AddInt => store_exact_int(out, acc as i64),
        Fold::Or | Fold::And | Fold::Xor => acc as u32 & mask,
    }
}

fn load(in_dtype: Dtype, raw: u32) -> u32 {
    match InType::from_dtype(in_dtype) {
        Some(t) => convert::load_f32_bits(t, raw as u64),
        None => 0,
    }
}

fn scaled(in_dtype: Dtype, raw: u32, scale: u32) -> u32 {
    let x = f32::from_bits(load(in_dtype, raw));
    convert::mul(x, f32::from_bits(scale)).to_bits()
}

fn add_bits(a: u32, b: u32) -> u32 {
    convert::add(f32::from_bits(a), f32::from_bits(b)).to_bits()
}

/// EC-54 MAX: `x` replaces `acc` when `x > acc`, or when `acc` is NaN and
/// `x` is not; among equal values (±0 included) the first stays.
#[inline(always)]
pub fn max_bits(acc: u32, x: u32) -> u32 {
    let (a, b) = (f32::from_bits(acc), f32::from_bits(x));
    if b > a || (a.is_nan() && !b.is_nan()) {
        x
    } else {
        acc
    }
}

/// An integer element's exact value (INT8..UINT32).
#[inline(always)]
pub const fn int_value(d: Dtype, raw: u32) -> i64 {
    match d.0 {
        0x2 => raw as u8 as i8 as i64,
        0x3 => (raw & 0xFF) as i64,
        0x4 => raw as u16 as i16 as i64,
        0x5 => (raw & 0xFFFF) as i64,
        0x8 => raw as i32 as i64,
        _ => raw as i64,
    }
}

/// EC-54: the exact integer sum stored by EC-13's rules applied to the exact
/// value — an integer out_dtype saturates to its range; FP32/FP32R, FP16 and
/// BF16 round the exact value once, to nearest even (fp16 overflow → ±inf),
/// with no intermediate f32.
pub const fn store_exact_int(out: OutType, v: i64) -> u32 {
    if let Some((lo, hi)) = out.int_range() {
        let c = if v < lo {
            lo
        } else if v > hi {
            hi
        } else {
            v
        };
        return match out.size() {
            1 => c as u8 as u32,
            2 => c as u16 as u32,
            _ => c as u32,
        };
    }
    // (explicit mantissa bits, exponent bias, all-ones exponent field)
    let (mant, bias, top) = match out {
        OutType::F16 => (10u32, 15i64, 0x1Fi64),
        OutType::Bf16 => (7, 127, 0xFF),
        _ => (23, 127, 0xFF),
    };
    round_int(v, mant, bias, top)
}

/// An exact integer rounded once, to nearest even, to a binary format with
/// `mant` explicit mantissa bits, exponent `bias` and all-ones exponent field
/// `top` (overflow → ±inf). Integers are never subnormal.
const fn round_int(v: i64, mant: u32, bias: i64, top: i64) -> u32 {
    let sign: u32 = if v < 0 {
        1 << (mant + (if top == 0x1F { 5 } else { 8 }))
    } else {
        0
    };
    let m = v.unsigned_abs();
    if m == 0 {
        return 0;
    }
    let p = mant + 1; // precision
    let n = 64 - m.leading_zeros(); // bits of m
    let mut e = n as i64 - 1;
    let kept = if n > p {
        let shift = n - p;
        let mut kept = m >> shift;
        let rest = m & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        if rest > half || (rest == half && kept & 1 == 1) {
            kept += 1;
            if kept == 1u64 << p {
                kept >>= 1;
                e += 1;
            }
        }
        kept
    } else {
        m << (p - n)
    };
    let biased = e + bias;
    if biased >= top {
        return sign | ((top as u32) << mant);
    }
    sign | ((biased as u32) << mant) | (kept as u32 & ((1u32 << mant) - 1))
}

impl KernelOp for ClrOp {
    const FAMILY: &'static str = "CrossLaneReduce";
    // EC-59, C-18: it runs with no kernel line.
    const ROWS: &'static [(u8, &'static [super::TraceLine])] = &[(0x7C, &[]), (0x7D, &[])];
    fn of_kernel(k: &Kernel) -> Option<ClrOp> {
        match k {
            Kernel::S4d4Cr(p) => ClrOp::of(p),
            _ => None,
        }
    }
    /// Lanes folded (1..=128).
    fn channels(&self) -> u32 {
        self.channels
    }
    /// Elements read: `channels · count`.
    fn elements(&self) -> u64 {
        self.channels as u64 * self.count
    }
    /// The destination walk (one partition).
    fn dst(&self) -> &Side {
        &self.dst
    }
    /// Bytes one execution reads and writes.
    fn bytes_moved(&self) -> u64 {
        let [s, d] = self.sizes();
        let outs = if self.all { 1 } else { self.count };
        self.elements() * s as u64 + outs * d as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_int_rounds_once() {
        // 2^24 + 1 → f32 2^24 (tie to even); 2^24 + 3 → 2^24 + 4.
        assert_eq!(store_exact_int(OutType::F32, (1 << 24) + 1), 0x4B80_0000);
        assert_eq!(store_exact_int(OutType::F32, (1 << 24) + 3), 0x4B80_0002);
        assert_eq!(store_exact_int(OutType::F32, -1), 0xBF80_0000);
        assert_eq!(store_exact_int(OutType::F32, 0), 0);
        // fp16: 65504 is the largest finite; 65519 rounds down, 65520 to inf.
        assert_eq!(store_exact_int(OutType::F16, 65504), 0x7BFF);
        assert_eq!(store_exact_int(OutType::F16, 65519), 0x7BFF);
        assert_eq!(store_exact_int(OutType::F16, 65520), 0x7C00);
        assert_eq!(store_exact_int(OutType::F16, -65520), 0xFC00);
        assert_eq!(store_exact_int(OutType::F16, 2049), 0x6800); // 2048, tie to even
        // bf16: 257 → 256 (tie to even), 259 → 260.
        assert_eq!(store_exact_int(OutType::Bf16, 257), 0x4380);
        assert_eq!(store_exact_int(OutType::Bf16, 259), 0x4382);
        assert_eq!(store_exact_int(OutType::Bf16, -1), 0xBF80);
        // Saturation.
        assert_eq!(store_exact_int(OutType::I8, 200), 0x7F);
        assert_eq!(store_exact_int(OutType::I8, -200), 0x80);
        assert_eq!(store_exact_int(OutType::U16, -5), 0);
        assert_eq!(store_exact_int(OutType::U32, 1 << 40), u32::MAX);
        assert_eq!(store_exact_int(OutType::I32, -(1 << 40)), 0x8000_0000);
    }

    #[test]
    fn max_keeps_the_first_of_equals_and_skips_nan() {
        let nan = 0x7FC0_0001;
        assert_eq!(max_bits(0x8000_0000, 0), 0x8000_0000); // -0 then +0: first stays
        assert_eq!(max_bits(0, 0x8000_0000), 0);
        assert_eq!(max_bits(nan, 0xBF80_0000), 0xBF80_0000);
        assert_eq!(max_bits(0x3F80_0000, nan), 0x3F80_0000);
        assert_eq!(max_bits(nan, nan), nan);
    }
}
