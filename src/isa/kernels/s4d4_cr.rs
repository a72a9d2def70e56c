//! `S4D4_CR`: the 64-byte operand of CROSS_LANE_REDUCE_ARITH (0x7C) and
//! CROSS_LANE_REDUCE_BITVEC (0x7D), SPEC-KERNELS §5.1.

use super::KernelOperand;
use crate::isa::enums::{Dtype, ReduceAxis, ReduceOp};
use crate::isa::layout::{F32Bits, FieldDef, header, operand_layout};
use crate::isa::opcode::Opcode;
use crate::isa::predicates::fail::{Fail, Pred, PredDef, Why, preds};
use crate::isa::predicates::shared::*;
use crate::isa::predicates::{Target, check_event_modes_emulated};
use crate::isa::record::{Events, Record};
use crate::isa::tensor::Tensor4d;

operand_layout! {
    /// The decoded S4D4_CR record (SPEC-KERNELS §5.1). Every byte of the 64
    /// has a field, so `S4d4Cr::decode(r).encode() == r` for every record.
    S4d4Cr = "S4D4_CR", mod off {
        /// The read walk (SBUF only), spanning `num_active_channels` partitions.
        src: Tensor4d = SRC @ 12, Required("src");
        /// Input element type (no FP32R, no 64-bit).
        in_dtype: Dtype = IN_DTYPE @ 32, Required("in");
        /// Output element type (FP32R allowed, no 64-bit).
        out_dtype: Dtype = OUT_DTYPE @ 33, Required("out");
        /// Partitions reduced over.
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 34, Required("ch");
        /// The fold.
        reduce_op: ReduceOp = REDUCE_OP @ 35, Required("op");
        /// All (0) or Partitions (1).
        reduce_axis: ReduceAxis = REDUCE_AXIS @ 36, Required("axis");
        /// Must be zero (`s4d4_cr_reserved_zero`).
        reserved0: [u8; 3] = RESERVED0 @ 37, Reserved;
        /// AVERAGE's multiplier (f32 bits; not validated).
        scale: F32Bits = SCALE @ 40, Required("scale");
        /// The write walk (SBUF only), one partition.
        dst: Tensor4d = DST @ 44, Required("dst");
    }
}

impl S4d4Cr {
    /// A cross-lane reduce record (`opcode` 0x7C or 0x7D) with zero events.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        opcode: Opcode,
        reduce_op: ReduceOp,
        reduce_axis: ReduceAxis,
        in_dtype: Dtype,
        out_dtype: Dtype,
        num_active_channels: u8,
        scale: f32,
        src: Tensor4d,
        dst: Tensor4d,
    ) -> S4d4Cr {
        S4d4Cr {
            header: header(opcode),
            events: Events::default(),
            src,
            in_dtype,
            out_dtype,
            num_active_channels,
            reduce_op,
            reduce_axis,
            reserved0: [0; 3],
            scale: F32Bits(scale.to_bits()),
            dst,
        }
    }

    /// The opcode.
    pub fn opcode(&self) -> Opcode {
        self.header.opcode
    }
}

impl KernelOperand for S4d4Cr {
    const TEXT_FIELDS: Option<&'static [FieldDef]> = Some(Self::FIELDS);

    fn lanes(&self) -> u32 {
        self.num_active_channels as u32
    }

    fn check(&self, r: &Record, t: Target) -> Result<(), Fail> {
        cross_lane_reduce(r, self, t)
    }
}

// ---------------------------------------------------------------------------
// Validation (SPEC-KERNELS §13): 0x7C / 0x7D CROSS_LANE_REDUCE
// ---------------------------------------------------------------------------

/// CROSS_LANE_REDUCE's own predicates (SPEC-KERNELS §13).
impl Pred {
    preds! {
        /// `s4d4_cr_reserved_zero` (bytes 37..39).
        S4D4_CR_RESERVED_ZERO;
        /// `valid_reduce_axis_enum` (byte 36 not All or Partitions).
        VALID_REDUCE_AXIS_ENUM says "{v}; must be all 0 or partitions 1";
        /// `valid_axis_dst_element_cnt`.
        VALID_AXIS_DST_ELEMENT_CNT;
    }
}

/// `is_valid_enum` on the REDUCE_OP byte (EC-40).
const CR_REDUCE_OP_ENUM: Pred = Pred(&PredDef {
    name: "is_valid_enum",
    says: Some("{x} is not a REDUCE_OP"),
});
/// `valid_axis_dst_element_cnt` on the All axis: one dst element.
const CR_ALL_AXIS_DST: Pred = Pred(&PredDef {
    name: "valid_axis_dst_element_cnt",
    says: Some("the All axis writes one element, but the dst walk holds {n}"),
});
/// EC-54: arith ops on 0x7C, bitwise ops on 0x7D.
const CR_OP_CLASS: Pred = Pred(&PredDef {
    name: "emu_opcode_supported",
    says: Some(
        "{opcode} does not execute reduce op {op} (arith ops on 0x7C, bitwise ops on 0x7D; EC-54)",
    ),
});
/// EC-54: a bitwise reduce's dtypes.
const CR_BITWISE_DTYPES: Pred = Pred(&PredDef {
    name: "emu_dtype_supported",
    says: Some(
        "in_dtype {in}, out_dtype {out}: a bitwise reduce needs equal \
     8/16/32-bit integer dtypes (EC-54)",
    ),
});

fn cross_lane_reduce(r: &Record, p: &S4d4Cr, t: Target) -> Result<(), Fail> {
    let f = S4d4Cr::field;
    let opcode = p.opcode();
    reserved(
        Pred::S4D4_CR_RESERVED_ZERO,
        f(off::RESERVED0),
        off::RESERVED0,
        &p.reserved0,
    )?;
    // EC-40: a REDUCE_OP byte > 5 fails is_valid_enum right after the reserved bytes.
    if !p.reduce_op.is_named() {
        return Err(fail(
            CR_REDUCE_OP_ENUM,
            f(off::REDUCE_OP),
            Why::Byte(p.reduce_op.0),
        ));
    }
    dtype_valid(f(off::IN_DTYPE), p.in_dtype, false, false)?;
    dtype_valid(f(off::OUT_DTYPE), p.out_dtype, true, false)?;
    let ch = p.num_active_channels;
    let src = Opnd::four(f(off::SRC), p.src, p.in_dtype, false).sbuf_only();
    let dst = Opnd::four(f(off::DST), p.dst, p.out_dtype, true).sbuf_only();
    start_addr(&src, ch)?;
    start_addr(&dst, 1)?;
    channels_in_range(Pred::CHECK_ACTIVE_CHANNELS, f(off::NUM_ACTIVE_CHANNELS), ch)?;
    tensor_valid(&src)?;
    tensor_valid(&dst)?;
    if !p.reduce_axis.is_named() {
        return Err(fail(
            Pred::VALID_REDUCE_AXIS_ENUM,
            f(off::REDUCE_AXIS),
            Why::Byte(p.reduce_axis.0),
        ));
    }
    let src_count = (src.field, p.src.elements());
    let dst_count = (dst.field, p.dst.elements());
    if p.reduce_axis == ReduceAxis::ALL {
        // Every dst num is 1, unless the dst shape comes from a register.
        if !p.dst.addr.shape_from_register() && p.dst.num != [1; 4] {
            return Err(fail(CR_ALL_AXIS_DST, dst.field, Why::Value(dst_count.1)));
        }
    } else {
        same_count(Pred::VALID_AXIS_DST_ELEMENT_CNT, dst_count, src_count)?;
    }
    addr_modes(&[src, dst])?;
    check_event_modes_emulated(r)?;
    // EC-54: arith ops on 0x7C, bitwise ops on 0x7D.
    let arith = opcode == Opcode::CROSS_LANE_REDUCE_ARITH;
    if p.reduce_op.is_arith() != arith {
        return Err(fail(
            CR_OP_CLASS,
            f(off::REDUCE_OP),
            Why::Reduce {
                opcode,
                op: p.reduce_op,
            },
        ));
    }
    if arith {
        for (at, d) in [(off::IN_DTYPE, p.in_dtype), (off::OUT_DTYPE, p.out_dtype)] {
            if d.is_fp8() {
                return Err(fail(Pred::EMU_DTYPE_SUPPORTED, f(at), Why::Dtype(d)));
            }
        }
    } else {
        let int32 = matches!(p.in_dtype.size(), Some(1 | 2 | 4)) && p.in_dtype.is_int();
        if p.in_dtype != p.out_dtype || !int32 {
            return Err(fail(
                CR_BITWISE_DTYPES,
                f(off::OUT_DTYPE),
                in_out(p.in_dtype, p.out_dtype),
            ));
        }
    }
    footprints(&[src, dst], t.arch)?;
    kernel_shape(&[src_count, dst_count])?;
    let src_parts = partitions(&src, 0..ch as u32);
    let dst_parts = partitions(&dst, 0..1);
    overlap_disjoint(&src, &src_parts, &dst, &dst_parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::layout::testing::spans;

    /// SPEC-KERNELS §5.1's offsets and widths, written out independently of the layout
    /// macro (which checks that the fields tile bytes 12..64).
    #[test]
    fn layout_matches_the_spec() {
        assert_eq!(
            spans(S4d4Cr::FIELDS),
            [
                (12, 20),
                (32, 1),
                (33, 1),
                (34, 1),
                (35, 1),
                (36, 1),
                (37, 3),
                (40, 4),
                (44, 20)
            ]
        );
    }
}
