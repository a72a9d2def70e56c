//! `S4D4_TR`: the 64-byte operand of COPY (0x46) and CAST (0x47)
//! (SPEC-KERNELS §3.1; TENSOR_REDUCE_BITVEC 0x52 shares the bytes, §7.1).

use super::KernelOperand;
use crate::isa::enums::{AluOp, Dtype, PoolDim};
use crate::isa::layout::{FieldDef, FieldRef, header, operand_layout};
use crate::isa::opcode::Opcode;
use crate::isa::predicates::fail::{Fail, Pred, Why, preds};
use crate::isa::predicates::shared::*;
use crate::isa::predicates::{Target, check_event_modes_emulated};
use crate::isa::record::{Events, Record};
use crate::isa::tensor::Tensor4d;

operand_layout! {
    /// The decoded S4D4_TR record (SPEC-KERNELS §3.1). Every byte of the 64
    /// has a field, so `S4d4Tr::decode(r).encode() == r` for every record.
    S4d4Tr = "S4D4_TR", mod off {
        /// The read walk (SBUF or PSUM).
        src: Tensor4d = SRC @ 12, Required("src");
        /// Input element type (no FP32R, no 64-bit).
        in_dtype: Dtype = IN_DTYPE @ 32, Required("in");
        /// Output element type (FP32R allowed, no 64-bit).
        out_dtype: Dtype = OUT_DTYPE @ 33, Required("out");
        /// Lanes (1..=128).
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 34, Required("ch");
        /// Must be 0 for Copy/Cast (`has_zero_negated_field`).
        negated: u8 = NEGATED @ 35, Optional("neg");
        /// ALU_OP; BYPASS for Copy/Cast (`s4d4_tr_op_bypass`).
        op: AluOp = OP @ 36, Optional("op");
        /// SUBDIM: UNUSED or X (`is_zero_subdim`).
        op_dim: PoolDim = OP_DIM @ 37, Optional("op_dim");
        /// Must be 0 (`mask_enable_zero`).
        mask_enable: u8 = MASK_ENABLE @ 38, Optional("mask");
        /// Must be zero (`s4d4_tr_reserved_zero`).
        reserved1: [u8; 5] = RESERVED1 @ 39, Reserved;
        /// The write walk (SBUF or PSUM).
        dst: Tensor4d = DST @ 44, Required("dst");
    }
}

impl S4d4Tr {
    /// A COPY or CAST record (`opcode`) with zero events, op BYPASS, op_dim
    /// UNUSED and every flag and reserved byte zero.
    pub fn new(
        opcode: Opcode,
        in_dtype: Dtype,
        out_dtype: Dtype,
        num_active_channels: u8,
        src: Tensor4d,
        dst: Tensor4d,
    ) -> S4d4Tr {
        S4d4Tr {
            header: header(opcode),
            events: Events::default(),
            src,
            in_dtype,
            out_dtype,
            num_active_channels,
            negated: 0,
            op: AluOp::BYPASS,
            op_dim: PoolDim::UNUSED,
            mask_enable: 0,
            reserved1: [0; 5],
            dst,
        }
    }

    /// The opcode.
    pub fn opcode(&self) -> Opcode {
        self.header.opcode
    }
}

impl KernelOperand for S4d4Tr {
    const TEXT_FIELDS: Option<&'static [FieldDef]> = Some(Self::FIELDS);

    fn lanes(&self) -> u32 {
        self.num_active_channels as u32
    }

    fn check(&self, r: &Record, t: Target) -> Result<(), Fail> {
        copy_cast(r, self, t)
    }
}

// ---------------------------------------------------------------------------
// Validation (SPEC-KERNELS §13): 0x46 COPY / 0x47 CAST
// ---------------------------------------------------------------------------

/// COPY and CAST's own predicates (SPEC-KERNELS §13).
impl Pred {
    preds! {
        /// `s4d4_tr_reserved_zero` (bytes 39..43).
        S4D4_TR_RESERVED_ZERO;
        /// `mask_enable_zero` (S4D4_TR byte 38).
        MASK_ENABLE_ZERO;
        /// `is_zero_subdim` (S4D4_TR op_dim not UNUSED or X).
        IS_ZERO_SUBDIM says "{dim}; must be unused or x";
        /// `s4d4_tr_same_src_dst_count`.
        S4D4_TR_SAME_SRC_DST_COUNT;
        /// `s4d4_tr_op_bypass`.
        S4D4_TR_OP_BYPASS says "{op}; {opcode} needs bypass";
        /// `s4d4_tr_same_src_dst_type` (COPY only).
        S4D4_TR_SAME_SRC_DST_TYPE
            says "in_dtype {in} != out_dtype {out}; COPY moves bits between equal dtypes";
        /// `has_zero_negated_field`.
        HAS_ZERO_NEGATED_FIELD;
    }
}

fn copy_cast(r: &Record, p: &S4d4Tr, t: Target) -> Result<(), Fail> {
    let f = S4d4Tr::field;
    let opcode = p.opcode();
    if let Some(i) = p.reserved1.iter().position(|&b| b != 0) {
        let field = FieldRef {
            offset: (off::RESERVED1 + i) as u8,
            ..f(off::RESERVED1)
        };
        return Err(fail(
            Pred::S4D4_TR_RESERVED_ZERO,
            field,
            Why::Byte(p.reserved1[i]),
        ));
    }
    if p.mask_enable != 0 {
        return Err(fail(
            Pred::MASK_ENABLE_ZERO,
            f(off::MASK_ENABLE),
            Why::Byte(p.mask_enable),
        ));
    }
    dtype_valid(f(off::IN_DTYPE), p.in_dtype, false, false)?;
    dtype_valid(f(off::OUT_DTYPE), p.out_dtype, true, false)?;
    if !p.op.is_named() {
        return Err(fail(Pred::IS_VALID_ENUM, f(off::OP), Why::Byte(p.op.0)));
    }
    if !matches!(p.op_dim, PoolDim::UNUSED | PoolDim::X) {
        return Err(fail(
            Pred::IS_ZERO_SUBDIM,
            f(off::OP_DIM),
            Why::Byte(p.op_dim.0),
        ));
    }
    let ch = p.num_active_channels;
    channel_range(f(off::NUM_ACTIVE_CHANNELS), ch)?;
    let src = Opnd::four(f(off::SRC), p.src, p.in_dtype, false);
    let dst = Opnd::four(f(off::DST), p.dst, p.out_dtype, true);
    starts_then_tensors(&[src, dst], ch)?;
    let src_count = (src.field, p.src.elements());
    let dst_count = (dst.field, p.dst.elements());
    same_count(Pred::S4D4_TR_SAME_SRC_DST_COUNT, src_count, dst_count)?;
    if p.op != AluOp::BYPASS {
        return Err(fail(
            Pred::S4D4_TR_OP_BYPASS,
            f(off::OP),
            Why::Op { opcode, op: p.op },
        ));
    }
    if opcode == Opcode::COPY && p.in_dtype != p.out_dtype {
        return Err(fail(
            Pred::S4D4_TR_SAME_SRC_DST_TYPE,
            f(off::OUT_DTYPE),
            in_out(p.in_dtype, p.out_dtype),
        ));
    }
    if p.negated != 0 {
        return Err(fail(
            Pred::HAS_ZERO_NEGATED_FIELD,
            f(off::NEGATED),
            Why::Byte(p.negated),
        ));
    }
    // Emulator checks (EC-40).
    addr_modes(&[src, dst])?;
    check_event_modes_emulated(r)?;
    on_pool(opcode, f(off::SRC), t)?;
    // EC-45: Copy executes every admitted dtype. EC-46: Cast between equal
    // dtypes copies bits; between different dtypes FP8 is not executed.
    if opcode == Opcode::CAST && p.in_dtype != p.out_dtype {
        for (at, d) in [(off::IN_DTYPE, p.in_dtype), (off::OUT_DTYPE, p.out_dtype)] {
            if d.is_fp8() {
                return Err(fail(Pred::EMU_DTYPE_SUPPORTED, f(at), Why::Dtype(d)));
            }
        }
    }
    footprints(&[src, dst], t.arch)?;
    kernel_shape(&[src_count, dst_count])?;
    overlap(&[src], &dst, ch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::layout::testing::{counting_record, rows};

    /// SPEC-KERNELS §3.1's offsets and widths, written out independently of the layout
    /// macro (which checks that the fields tile bytes 12..64).
    #[test]
    fn layout_matches_the_spec() {
        assert_eq!(
            rows(S4d4Tr::FIELDS),
            [
                ("src", 12, 20),
                ("in_dtype", 32, 1),
                ("out_dtype", 33, 1),
                ("num_active_channels", 34, 1),
                ("negated", 35, 1),
                ("op", 36, 1),
                ("op_dim", 37, 1),
                ("mask_enable", 38, 1),
                ("reserved1", 39, 5),
                ("dst", 44, 20),
            ]
        );
        let r = counting_record();
        let t = S4d4Tr::decode(&r);
        assert_eq!(
            (t.in_dtype.0, t.out_dtype.0, t.num_active_channels),
            (32, 33, 34)
        );
        assert_eq!(
            (t.negated, t.op.0, t.op_dim.0, t.mask_enable),
            (35, 36, 37, 38)
        );
        assert_eq!(t.reserved1, [39, 40, 41, 42, 43]);
        assert_eq!(t.src.addr.0, u32::from_le_bytes([12, 13, 14, 15]));
        assert_eq!(t.dst.num[3], u16::from_le_bytes([62, 63]));
    }
}
