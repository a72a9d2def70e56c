//! `S3D3_SEQ_BOUNDS`: the 64-byte operand of GET_SEQUENCE_BOUNDS (0xBE),
//! SPEC-KERNELS §8.1.

use super::enums::Dtype;
use super::layout::{Role, header, operand_layout};
use super::opcode::Opcode;
use super::record::Events;
use super::tensor::Tensor3d;

operand_layout! {
    /// The decoded S3D3_SEQ_BOUNDS record (SPEC-KERNELS §8.1). Every byte of
    /// the 64 has a field, so `S3d3SeqBounds::decode(r).encode() == r`.
    S3d3SeqBounds = "S3D3_SEQ_BOUNDS", mod off {
        /// Lanes: must be 1.
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 12, Role::Required("ch");
        /// Must be zero (`s3d3_seq_bounds_reserved_zero`).
        reserved0: u8 = RESERVED0 @ 13, Role::Reserved;
        /// Segment id type: INT32 or FP32.
        in_dtype: Dtype = IN_DTYPE @ 14, Role::Required("in");
        /// Bound type: INT32 or FP32.
        out_dtype: Dtype = OUT_DTYPE @ 15, Role::Required("out");
        /// The ids (SBUF only).
        src: Tensor3d = SRC @ 16, Role::Required("src");
        /// The starts, then the ends (SBUF only; `num_elem[2] == 2`).
        dst: Tensor3d = DST @ 32, Role::Required("dst");
        /// Must be zero (`s3d3_seq_bounds_reserved_zero`).
        reserved1: [u8; 16] = RESERVED1 @ 48, Role::Reserved;
    }
}

impl S3d3SeqBounds {
    /// A GET_SEQUENCE_BOUNDS record with zero events and reserved bytes.
    pub fn new(
        in_dtype: Dtype,
        out_dtype: Dtype,
        num_active_channels: u8,
        src: Tensor3d,
        dst: Tensor3d,
    ) -> S3d3SeqBounds {
        S3d3SeqBounds {
            header: header(Opcode::GET_SEQUENCE_BOUNDS),
            events: Events::default(),
            num_active_channels,
            reserved0: 0,
            in_dtype,
            out_dtype,
            src,
            dst,
            reserved1: [0; 16],
        }
    }
}
