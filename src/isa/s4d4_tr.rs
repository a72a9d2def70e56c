//! `S4D4_TR`: the 64-byte operand of COPY (0x46) and CAST (0x47)
//! (SPEC-KERNELS §3.1; TENSOR_REDUCE_BITVEC 0x52 shares the bytes, §7.1).

use super::enums::{AluOp, Dtype, PoolDim};
use super::layout::{Role, header, operand_layout};
use super::opcode::Opcode;
use super::record::Events;
use super::tensor::Tensor4d;

operand_layout! {
    /// The decoded S4D4_TR record (SPEC-KERNELS §3.1). Every byte of the 64
    /// has a field, so `S4d4Tr::decode(r).encode() == r` for every record.
    S4d4Tr = "S4D4_TR", mod off {
        /// The read walk (SBUF or PSUM).
        src: Tensor4d = SRC @ 12, Role::Required("src");
        /// Input element type (no FP32R, no 64-bit).
        in_dtype: Dtype = IN_DTYPE @ 32, Role::Required("in");
        /// Output element type (FP32R allowed, no 64-bit).
        out_dtype: Dtype = OUT_DTYPE @ 33, Role::Required("out");
        /// Lanes (1..=128).
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 34, Role::Required("ch");
        /// Must be 0 for Copy/Cast (`has_zero_negated_field`).
        negated: u8 = NEGATED @ 35, Role::Optional("neg");
        /// ALU_OP; BYPASS for Copy/Cast (`s4d4_tr_op_bypass`).
        op: AluOp = OP @ 36, Role::Optional("op");
        /// SUBDIM: UNUSED or X (`is_zero_subdim`).
        op_dim: PoolDim = OP_DIM @ 37, Role::Optional("op_dim");
        /// Must be 0 (`mask_enable_zero`).
        mask_enable: u8 = MASK_ENABLE @ 38, Role::Optional("mask");
        /// Must be zero (`s4d4_tr_reserved_zero`).
        reserved1: [u8; 5] = RESERVED1 @ 39, Role::Reserved;
        /// The write walk (SBUF or PSUM).
        dst: Tensor4d = DST @ 44, Role::Required("dst");
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
