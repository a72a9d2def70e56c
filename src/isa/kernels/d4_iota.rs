//! `D4_IOTA`: the 64-byte operand of IOTA (0x7E), SPEC-KERNELS §2.1.

use super::KernelOperand;
use crate::isa::enums::Dtype;
use crate::isa::layout::{FieldDef, FieldRef, header, operand_layout};
use crate::isa::opcode::Opcode;
use crate::isa::predicates::fail::{Fail, Pred, Why, preds};
use crate::isa::predicates::shared::*;
use crate::isa::predicates::{Target, check_event_modes_emulated};
use crate::isa::record::{Events, Record};
use crate::isa::tensor::{Data4d, Tensor4d};

operand_layout! {
    /// The decoded D4_IOTA record (SPEC-KERNELS §2.1). Every byte of the 64 has
    /// a field, so `D4Iota::decode(r).encode() == r` for every record.
    D4Iota = "D4_IOTA", mod off {
        /// `src_data_pattern`: the ramp's base, steps and nums.
        data: Data4d = DATA @ 12, Required("data");
        /// Must be zero (`d4_iota_reserved_zero`).
        reserved0: u8 = RESERVED0 @ 32, Reserved;
        /// Output element type (FP32R allowed, no 64-bit).
        out_dtype: Dtype = OUT_DTYPE @ 33, Required("out");
        /// Lanes (1..=128).
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 34, Required("ch");
        /// Must be zero (`d4_iota_reserved_zero`).
        reserved1: u8 = RESERVED1 @ 35, Reserved;
        /// Per-partition additive stride (i32).
        channel_multiplier: i32 = CHANNEL_MULTIPLIER @ 36, Required("mult");
        /// Must be zero (`d4_iota_reserved_zero`).
        reserved2: [u8; 4] = RESERVED2 @ 40, Reserved;
        /// The write walk (SBUF or PSUM).
        dst: Tensor4d = DST @ 44, Required("dst");
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

impl KernelOperand for D4Iota {
    const TEXT_FIELDS: Option<&'static [FieldDef]> = Some(Self::FIELDS);

    fn lanes(&self) -> u32 {
        self.num_active_channels as u32
    }

    fn check(&self, r: &Record, t: Target) -> Result<(), Fail> {
        iota(r, self, t)
    }
}

// ---------------------------------------------------------------------------
// Validation (SPEC-KERNELS §13): 0x7E IOTA
// ---------------------------------------------------------------------------

/// IOTA's own predicates (SPEC-KERNELS §13).
impl Pred {
    preds! {
        /// `d4_iota_reserved_zero` (bytes 32, 35, 40..43).
        D4_IOTA_RESERVED_ZERO;
        /// `d4_iota_same_src_dst_count`.
        D4_IOTA_SAME_SRC_DST_COUNT;
    }
}

fn iota(r: &Record, p: &D4Iota, t: Target) -> Result<(), Fail> {
    let f = D4Iota::field;
    // d4_iota_reserved_zero: bytes 32, 35, 40..43.
    let reserved = [(off::RESERVED0, p.reserved0), (off::RESERVED1, p.reserved1)]
        .into_iter()
        .chain((0..4).map(|i| (off::RESERVED2 + i, p.reserved2[i])));
    for (at, v) in reserved {
        if v != 0 {
            let field = FieldRef {
                offset: at as u8,
                ..f(if at >= off::RESERVED2 {
                    off::RESERVED2
                } else {
                    at
                })
            };
            return Err(fail(Pred::D4_IOTA_RESERVED_ZERO, field, Why::Byte(v)));
        }
    }
    // EC-48: FP32R allowed; no 64-bit out.
    dtype_valid(f(off::OUT_DTYPE), p.out_dtype, true, false)?;
    let ch = p.num_active_channels;
    channel_range(f(off::NUM_ACTIVE_CHANNELS), ch)?;
    let dst = Opnd::four(f(off::DST), p.dst, p.out_dtype, true);
    start_addr(&dst, ch)?;
    tensor_valid(&dst)?;
    let data = (f(off::DATA), p.data.elements());
    let dst_count = (dst.field, p.dst.elements());
    same_count(Pred::D4_IOTA_SAME_SRC_DST_COUNT, data, dst_count)?;
    // Emulator checks (EC-40).
    addr_modes(&[dst])?;
    check_event_modes_emulated(r)?;
    if p.out_dtype.is_fp8() {
        // EC-48: FP8 out is not executed.
        return Err(fail(
            Pred::EMU_DTYPE_SUPPORTED,
            f(off::OUT_DTYPE),
            Why::Dtype(p.out_dtype),
        ));
    }
    footprints(&[dst], t.arch)?;
    kernel_shape(&[data, dst_count])?;
    overlap(&[], &dst, ch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::layout::testing::{counting_record, rows};

    /// SPEC-KERNELS §2.1's offsets and widths, written out independently of the layout
    /// macro (which checks that the fields tile bytes 12..64).
    #[test]
    fn layout_matches_the_spec() {
        assert_eq!(
            rows(D4Iota::FIELDS),
            [
                ("data", 12, 20),
                ("reserved0", 32, 1),
                ("out_dtype", 33, 1),
                ("num_active_channels", 34, 1),
                ("reserved1", 35, 1),
                ("channel_multiplier", 36, 4),
                ("reserved2", 40, 4),
                ("dst", 44, 20),
            ]
        );
        let r = counting_record();
        let i = D4Iota::decode(&r);
        assert_eq!(i.data.base, i32::from_le_bytes([12, 13, 14, 15]));
        assert_eq!(i.data.step[0], i16::from_le_bytes([16, 17]));
        assert_eq!(i.data.num[3], u16::from_le_bytes([30, 31]));
        assert_eq!(i.channel_multiplier, i32::from_le_bytes([36, 37, 38, 39]));
    }
}
