//! The Tensor-Tensor device op: 0x41 TENSOR_TENSOR_ARITH and 0x51
//! TENSOR_TENSOR_BITVEC on POOL (SPEC-KERNELS §4, EC-49 … EC-52): element k
//! of lane p's dst walk = op(element k of src0, element k of src1), each
//! operand walked by its own TENSOR3D (step 0 = broadcast). The CPU
//! reference is `device::cpu::tensor_tensor`; the GPU kernel is
//! `shaders/tensor_tensor.wgsl`, whose `int_op`/`f32_op` mirror
//! [`int_op`]/[`f32_op`] one for one.

use super::KernelOp;
use super::pool::Side;
use crate::device::Validated;
use crate::device::convert::{self, InType, OutType};
use crate::isa::enums::{AluOp, Dtype};
use crate::isa::inst::{Inst, Kernel};
use crate::isa::opcode::Opcode;
use crate::isa::s3s3d3_tt::S3s3d3Tt;

/// How the elements are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtPath {
    /// On 32-bit patterns ([`int_op`]): the int band (EC-50), 0x51 (EC-52),
    /// and base ADD/SUBTRACT/MULT on all-integer operands (EC-51).
    Int,
    /// Base ADD/SUBTRACT/MULT with a float operand (EC-51): each source
    /// loads to f32, one f32 operation ([`f32_op`]), an EC-13 store.
    F32 {
        /// src0's and src1's load types.
        src: [InType; 2],
        /// The store type.
        out: OutType,
    },
}

/// A Tensor-Tensor record as the executors run it. Only
/// [`TtOp::from_validated`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtOp {
    opcode: Opcode,
    alu: AluOp,
    path: TtPath,
    src_dtype: [Dtype; 2],
    out_dtype: Dtype,
    channels: u32,
    count: u64,
    src: [Side; 2],
    dst: Side,
}

/// An integer dtype of at most 32 bits.
const fn int32(d: Dtype) -> bool {
    matches!(d.0, 0x2..=0x5 | 0x8 | 0x9)
}

/// EC-49, EC-52: whether the emulator executes `alu` of `opcode` on POOL.
pub const fn executes(opcode: Opcode, alu: AluOp) -> bool {
    match opcode.0 {
        // 0x41: base ADD/SUBTRACT/MULT (EC-51) and 18 int-band ops (EC-50).
        0x41 => matches!(alu.0, 0x04..=0x06 | 0xC4..=0xC6 | 0xC9 | 0xCA | 0xCF..=0xDB),
        // 0x51: `is_general_bitvec_op` (EC-52).
        0x51 => alu.is_general_bitvec_op(),
        _ => false,
    }
}

impl TtOp {
    /// The op of a validated Tensor-Tensor record; `None` for any other
    /// opcode or a form the emulator does not execute (validation has
    /// refused those).
    pub fn from_validated(v: &Validated) -> Option<TtOp> {
        match v.inst() {
            Inst::Kernel(Kernel::S3s3d3Tt(p)) => TtOp::of(&p),
            _ => None,
        }
    }

    /// The op of a validated Tensor-Tensor record's decoded operand.
    pub(super) fn of(p: &S3s3d3Tt) -> Option<TtOp> {
        let (d0, d1, out) = (p.in_dtypes.src0(), p.in_dtypes.src1(), p.out_dtype);
        if !executes(p.opcode(), p.op) {
            return None;
        }
        // EC-51: base ADD/SUBTRACT/MULT take the f32 path when any operand is
        // a float; everything else combines 32-bit patterns.
        let base = matches!(p.op.0, 0x04..=0x06);
        let path = if base && !(int32(d0) && int32(d1) && int32(out)) {
            TtPath::F32 {
                src: [InType::from_dtype(d0)?, InType::from_dtype(d1)?],
                out: OutType::from_dtype(out)?,
            }
        } else if int32(d0) && int32(d1) && int32(out) {
            TtPath::Int
        } else {
            return None;
        };
        Some(TtOp {
            opcode: p.opcode(),
            alu: p.op,
            path,
            src_dtype: [d0, d1],
            out_dtype: out,
            channels: p.num_active_channels as u32,
            count: p.src0.elements(),
            src: [Side::new(&p.src0.to_4d())?, Side::new(&p.src1.to_4d())?],
            dst: Side::new(&p.dst.to_4d())?,
        })
    }

    /// 0x41 or 0x51.
    pub fn opcode(&self) -> Opcode {
        self.opcode
    }
    /// The ALU op.
    pub fn alu(&self) -> AluOp {
        self.alu
    }
    /// How elements combine.
    pub fn path(&self) -> TtPath {
        self.path
    }
    /// src0's and src1's dtypes.
    pub fn src_dtype(&self) -> [Dtype; 2] {
        self.src_dtype
    }
    /// The output dtype.
    pub fn out_dtype(&self) -> Dtype {
        self.out_dtype
    }
    /// Bytes of one element of src0, src1, dst.
    pub fn sizes(&self) -> [usize; 3] {
        let s = |d: Dtype| d.size().unwrap_or(4) as usize;
        [
            s(self.src_dtype[0]),
            s(self.src_dtype[1]),
            s(self.out_dtype),
        ]
    }
    /// Elements per lane (count(src0) = count(src1) = count(dst)).
    pub fn count(&self) -> u64 {
        self.count
    }
    /// src0's and src1's walks.
    pub fn src(&self) -> &[Side; 2] {
        &self.src
    }
}

/// A raw element of `d` (its bits in the low bytes) as a 32-bit pattern:
/// sign-extended for the signed integer types, zero-extended otherwise.
#[inline(always)]
pub const fn extend(raw: u32, d: Dtype) -> u32 {
    match d.0 {
        0x2 => raw as u8 as i8 as i32 as u32,
        0x4 => raw as u16 as i16 as i32 as u32,
        0x3 => raw & 0xFF,
        0x5 => raw & 0xFFFF,
        _ => raw,
    }
}

/// The integer path on 32-bit patterns `a`, `b` ([`extend`]ed from their
/// dtypes; `width` the bits of the elements, `signed` whether src0's dtype is
/// signed). The caller stores the low bits of the result.
/// - EC-51 (base ADD/SUBTRACT/MULT, all-integer operands) and EC-50
///   (ADD_INT, SUBTRACT_INT, MULT_INT, MULT_UINT): exact modulo 2^32, so
///   exact modulo 2^width(out) after the store.
/// - EC-50: MAX/MIN and IS_* compare signed (`_INT`) or unsigned (`_UINT`);
///   IS_* give 1 or 0; IS_EQUAL_INT/IS_NE_INT compare bits.
/// - EC-52: BYPASS → a; NOT → !a; AND/OR/XOR; shifts by `b` read as unsigned:
///   left shifts and the logical right shift bring in zeros, the arithmetic
///   right shift copies the sign of a signed dtype; a count ≥ `width` gives 0
///   (all sign bits for an arithmetic right shift of a negative value).
#[inline(always)]
pub const fn int_op(alu: u8, a: u32, b: u32, width: u32, signed: bool) -> u32 {
    let (sa, sb) = (a as i32, b as i32);
    let mask = if width >= 32 {
        u32::MAX
    } else {
        (1u32 << width) - 1
    };
    let count = b & mask; // EC-52: the count is src1 read as unsigned
    match alu {
        0x04 | 0xC4 => a.wrapping_add(b),
        0x05 | 0xC6 => a.wrapping_sub(b),
        0x06 | 0xC5 | 0xDB => a.wrapping_mul(b),
        0xCF => (if sa > sb { sa } else { sb }) as u32,
        0xD0 => (if sa < sb { sa } else { sb }) as u32,
        0xD5 => {
            if a > b {
                a
            } else {
                b
            }
        }
        0xD6 => {
            if a < b {
                a
            } else {
                b
            }
        }
        0xC9 => (a == b) as u32,
        0xCA => (a != b) as u32,
        0xD1 => (sa > sb) as u32,
        0xD2 => (sa >= sb) as u32,
        0xD3 => (sa <= sb) as u32,
        0xD4 => (sa < sb) as u32,
        0xD7 => (a > b) as u32,
        0xD8 => (a >= b) as u32,
        0xD9 => (a <= b) as u32,
        0xDA => (a < b) as u32,
        0x00 => a,
        0x01 => !a,
        0x0A => a & b,
        0x0B => a | b,
        0x0C => a ^ b,
        // ARITH_SHIFT_LEFT, LOGICAL_SHIFT_LEFT
        0x02 | 0x10 => {
            if count >= width {
                0
            } else {
                a << count
            }
        }
        // LOGICAL_SHIFT_RIGHT
        0x11 => {
            if count >= width {
                0
            } else {
                (a & mask) >> count
            }
        }
        // ARITH_SHIFT_RIGHT
        0x03 => {
            let c = if count >= width { 31 } else { count };
            if signed {
                (sa >> c) as u32
            } else if count >= width {
                0
            } else {
                (a & mask) >> c
            }
        }
        _ => 0,
    }
}

/// EC-51's f32 path: one IEEE binary32 add, subtract or multiply (round to
/// nearest even, never fused) of f32 bits already loaded by SPEC §6 (EC-19),
/// its result flushed by EC-19; the caller stores it by EC-13/EC-20.
#[inline(always)]
pub fn f32_op(alu: u8, a: u32, b: u32) -> u32 {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    let r = match alu {
        0x04 => x + y,
        0x05 => x - y,
        _ => x * y,
    };
    convert::flush_subnormal(r.to_bits())
}

impl TtOp {
    /// EC-55: the op of a validated 0xF0 spec-2 EXTENDED_TTA record — EC-51's
    /// ADD/MULT on TENSOR2D walks, `completion::lanes` lanes, each operand
    /// from its own start partition. It runs as 0x41 does (`opcode()` is
    /// 0x41). `None` for any other record.
    pub fn from_ext_tta(v: &Validated) -> Option<TtOp> {
        match v.inst() {
            Inst::Kernel(Kernel::ExtTta(p)) => TtOp::of_ext_tta(&p),
            _ => None,
        }
    }

    /// The op of a validated 0xF0 spec 2 record's decoded operand.
    pub(super) fn of_ext_tta(p: &crate::isa::extended::ExtTta) -> Option<TtOp> {
        use crate::isa::extended::completion;
        let (d0, d1, out) = (p.in_dtypes.src0(), p.in_dtypes.src1(), p.out_dtype);
        if !matches!(p.op, AluOp::ADD | AluOp::MULT) {
            return None;
        }
        let path = if int32(d0) && int32(d1) && int32(out) {
            TtPath::Int
        } else {
            TtPath::F32 {
                src: [InType::from_dtype(d0)?, InType::from_dtype(d1)?],
                out: OutType::from_dtype(out)?,
            }
        };
        Some(TtOp {
            opcode: Opcode::TENSOR_TENSOR_ARITH,
            alu: p.op,
            path,
            src_dtype: [d0, d1],
            out_dtype: out,
            channels: completion::lanes(p.completion_info),
            count: p.src0.elements(),
            src: [Side::new(&p.src0.to_4d())?, Side::new(&p.src1.to_4d())?],
            dst: Side::new(&p.dst.to_4d())?,
        })
    }
}

impl KernelOp for TtOp {
    const FAMILY: &'static str = "Tensor-Tensor";
    // 0xF0 spec 2 has its lines from dispatch_extended_inst.
    const ROWS: &'static [(u8, &'static [super::TraceLine])] = &[
        (0x51, &[super::TraceLine::Lanes("TensorTensorBitvec : num_chans = ")]),
        (0x41, &[super::TraceLine::Lanes("TensorTensorArith num_chans = ")]),
    ];
    fn of_kernel(k: &Kernel) -> Option<TtOp> {
        match k {
            Kernel::S3s3d3Tt(p) => TtOp::of(p),
            // EC-55: spec 2 runs as Tensor-Tensor; spec 0 has no datapath work.
            Kernel::ExtTta(p) => TtOp::of_ext_tta(p),
            _ => None,
        }
    }
    /// Lanes (1..=128).
    fn channels(&self) -> u32 {
        self.channels
    }
    /// Elements written: `channels · count`.
    fn elements(&self) -> u64 {
        self.channels as u64 * self.count
    }
    /// The destination walk.
    fn dst(&self) -> &Side {
        &self.dst
    }
    fn dst_walk(&self) -> Option<(&Side, usize)> {
        Some((self.dst(), self.sizes()[2]))
    }
    /// Bytes one execution reads and writes.
    fn bytes_moved(&self) -> u64 {
        self.elements() * self.sizes().iter().sum::<usize>() as u64
    }
}
