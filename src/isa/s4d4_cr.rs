//! `S4D4_CR`: the 64-byte operand of CROSS_LANE_REDUCE_ARITH (0x7C) and
//! CROSS_LANE_REDUCE_BITVEC (0x7D), SPEC-KERNELS §5.1.

use super::enums::{Dtype, ReduceAxis, ReduceOp};
use super::layout::{F32Bits, Role, header, operand_layout};
use super::opcode::Opcode;
use super::record::Events;
use super::tensor::Tensor4d;

operand_layout! {
    /// The decoded S4D4_CR record (SPEC-KERNELS §5.1). Every byte of the 64
    /// has a field, so `S4d4Cr::decode(r).encode() == r` for every record.
    S4d4Cr = "S4D4_CR", mod off {
        /// The read walk (SBUF only), spanning `num_active_channels` partitions.
        src: Tensor4d = SRC @ 12, Role::Required("src");
        /// Input element type (no FP32R, no 64-bit).
        in_dtype: Dtype = IN_DTYPE @ 32, Role::Required("in");
        /// Output element type (FP32R allowed, no 64-bit).
        out_dtype: Dtype = OUT_DTYPE @ 33, Role::Required("out");
        /// Partitions reduced over.
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 34, Role::Required("ch");
        /// The fold.
        reduce_op: ReduceOp = REDUCE_OP @ 35, Role::Required("op");
        /// All (0) or Partitions (1).
        reduce_axis: ReduceAxis = REDUCE_AXIS @ 36, Role::Required("axis");
        /// Must be zero (`s4d4_cr_reserved_zero`).
        reserved0: [u8; 3] = RESERVED0 @ 37, Role::Reserved;
        /// AVERAGE's multiplier (f32 bits; not validated).
        scale: F32Bits = SCALE @ 40, Role::Required("scale");
        /// The write walk (SBUF only), one partition.
        dst: Tensor4d = DST @ 44, Role::Required("dst");
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
