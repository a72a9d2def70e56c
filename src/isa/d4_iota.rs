//! `D4_IOTA`: the 64-byte operand of IOTA (0x7E), SPEC-KERNELS §2.1.

use super::enums::Dtype;
use super::layout::{Role, header, operand_layout};
use super::opcode::Opcode;
use super::record::Events;
use super::tensor::{Data4d, Tensor4d};

operand_layout! {
    /// The decoded D4_IOTA record (SPEC-KERNELS §2.1). Every byte of the 64 has
    /// a field, so `D4Iota::decode(r).encode() == r` for every record.
    D4Iota = "D4_IOTA", mod off {
        /// `src_data_pattern`: the ramp's base, steps and nums.
        data: Data4d = DATA @ 12, Role::Required("data");
        /// Must be zero (`d4_iota_reserved_zero`).
        reserved0: u8 = RESERVED0 @ 32, Role::Reserved;
        /// Output element type (FP32R allowed, no 64-bit).
        out_dtype: Dtype = OUT_DTYPE @ 33, Role::Required("out");
        /// Lanes (1..=128).
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 34, Role::Required("ch");
        /// Must be zero (`d4_iota_reserved_zero`).
        reserved1: u8 = RESERVED1 @ 35, Role::Reserved;
        /// Per-partition additive stride (i32).
        channel_multiplier: i32 = CHANNEL_MULTIPLIER @ 36, Role::Required("mult");
        /// Must be zero (`d4_iota_reserved_zero`).
        reserved2: [u8; 4] = RESERVED2 @ 40, Role::Reserved;
        /// The write walk (SBUF or PSUM).
        dst: Tensor4d = DST @ 44, Role::Required("dst");
    }
}

impl D4Iota {
    /// An IOTA record with zero events and reserved bytes.
    pub fn new(
        out_dtype: Dtype,
        num_active_channels: u8,
        data: Data4d,
        channel_multiplier: i32,
        dst: Tensor4d,
    ) -> D4Iota {
        D4Iota {
            header: header(Opcode::IOTA),
            events: Events::default(),
            data,
            reserved0: 0,
            out_dtype,
            num_active_channels,
            reserved1: 0,
            channel_multiplier,
            reserved2: [0; 4],
            dst,
        }
    }
}
