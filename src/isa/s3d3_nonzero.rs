//! `S3D3_NONZERO_WITH_COUNT`: the 64-byte operand of NONZERO_WITH_COUNT
//! (0xF2), SPEC-KERNELS §9.1.

use super::enums::{Dtype, ImmSrc};
use super::layout::{Role, header, operand_layout};
use super::opcode::Opcode;
use super::record::Events;
use super::tensor::Tensor3d;

operand_layout! {
    /// The decoded S3D3_NONZERO_WITH_COUNT record (SPEC-KERNELS §9.1). Every
    /// byte of the 64 has a field, so `S3d3NonzeroWithCount::decode(r).encode() == r`.
    S3d3NonzeroWithCount = "S3D3_NONZERO_WITH_COUNT", mod off {
        /// Lanes (1..=128); only the first partition of each core is processed (EC-56).
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 12, Role::Required("ch");
        /// INT32 or FP32.
        in_dtype: Dtype = IN_DTYPE @ 13, Role::Required("in");
        /// INT32.
        out_dtype: Dtype = OUT_DTYPE @ 14, Role::Required("out");
        /// IMM_SRC of `index_offset` (EC-60: only inline executes).
        index_offset_src: ImmSrc = INDEX_OFFSET_SRC @ 15, Role::Optional("offset_src");
        /// The read walk (SBUF only).
        src: Tensor3d = SRC @ 16, Role::Required("src");
        /// IMM_VAL: added to each nonzero position (inline int32).
        index_offset: i32 = INDEX_OFFSET @ 32, Role::Required("offset");
        /// IMM_SRC of `padding_val`.
        padding_val_src: ImmSrc = PADDING_VAL_SRC @ 36, Role::Optional("pad_src");
        /// Must be zero (`s3d3_nonzero_with_count_reserved_zero`).
        reserved0: [u8; 3] = RESERVED0 @ 37, Role::Reserved;
        /// IMM_VAL: the padding (inline int32).
        padding_val: i32 = PADDING_VAL @ 40, Role::Required("pad");
        /// The write walk (SBUF only): positions, padding, then the count.
        dst: Tensor3d = DST @ 44, Role::Required("dst");
        /// Must be zero (`s3d3_nonzero_with_count_reserved_zero`).
        reserved1: [u8; 4] = RESERVED1 @ 60, Role::Reserved;
    }
}

impl S3d3NonzeroWithCount {
    /// A NONZERO_WITH_COUNT record with inline immediates and zero events.
    pub fn new(
        in_dtype: Dtype,
        num_active_channels: u8,
        index_offset: i32,
        padding_val: i32,
        src: Tensor3d,
        dst: Tensor3d,
    ) -> S3d3NonzeroWithCount {
        S3d3NonzeroWithCount {
            header: header(Opcode::NONZERO_WITH_COUNT),
            events: Events::default(),
            num_active_channels,
            in_dtype,
            out_dtype: Dtype::INT32,
            index_offset_src: ImmSrc::INLINE,
            src,
            index_offset,
            padding_val_src: ImmSrc::INLINE,
            reserved0: [0; 3],
            padding_val,
            dst,
            reserved1: [0; 4],
        }
    }
}
