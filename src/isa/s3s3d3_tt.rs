//! `S3S3D3_TT`: the 64-byte operand of TENSOR_TENSOR_ARITH (0x41) and
//! TENSOR_TENSOR_BITVEC (0x51), SPEC-KERNELS §4.2 — the header's slot order
//! (src0 @16, src1 @32, dst @48; C-6, §16b.7).

use super::enums::{AluOp, Dtype, DtypePair};
use super::layout::{Role, header, operand_layout};
use super::opcode::Opcode;
use super::record::Events;
use super::tensor::Tensor3d;

operand_layout! {
    /// The decoded S3S3D3_TT record (SPEC-KERNELS §4.2). Every byte of the 64
    /// has a field, so `S3s3d3Tt::decode(r).encode() == r` for every record.
    S3s3d3Tt = "S3S3D3_TT", mod off {
        /// `in0_in1_dtype`: src0's dtype in the low nibble, src1's in the high (EC-43).
        in_dtypes: DtypePair = IN_DTYPES @ 12, Role::Required("in");
        /// Output element type.
        out_dtype: Dtype = OUT_DTYPE @ 13, Role::Required("out");
        /// The ALU op.
        op: AluOp = OP @ 14, Role::Required("op");
        /// Lanes (1..=128).
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 15, Role::Required("ch");
        /// The first read walk.
        src0: Tensor3d = SRC0 @ 16, Role::Required("src0");
        /// The second read walk.
        src1: Tensor3d = SRC1 @ 32, Role::Required("src1");
        /// The write walk.
        dst: Tensor3d = DST @ 48, Role::Required("dst");
    }
}

impl S3s3d3Tt {
    /// A tensor-tensor record (`opcode` 0x41 or 0x51) with zero events.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        opcode: Opcode,
        op: AluOp,
        src0_dtype: Dtype,
        src1_dtype: Dtype,
        out_dtype: Dtype,
        num_active_channels: u8,
        src0: Tensor3d,
        src1: Tensor3d,
        dst: Tensor3d,
    ) -> S3s3d3Tt {
        S3s3d3Tt {
            header: header(opcode),
            events: Events::default(),
            in_dtypes: DtypePair::new(src0_dtype, src1_dtype),
            out_dtype,
            op,
            num_active_channels,
            src0,
            src1,
            dst,
        }
    }

    /// The opcode.
    pub fn opcode(&self) -> Opcode {
        self.header.opcode
    }
}
