//! `S3D3_NONZERO_WITH_COUNT`: the 64-byte operand of NONZERO_WITH_COUNT
//! (0xF2), SPEC-KERNELS §9.1.

use super::KernelOperand;
use crate::isa::enums::{Dtype, ImmSrc};
use crate::isa::layout::{FieldDef, header, operand_layout};
use crate::isa::opcode::Opcode;
use crate::isa::predicates::fail::{Fail, Pred, PredDef, Why, preds};
use crate::isa::predicates::shared::*;
use crate::isa::predicates::{Target, check_event_modes_emulated};
use crate::isa::record::{Events, Record};
use crate::isa::tensor::Tensor3d;

operand_layout! {
    /// The decoded S3D3_NONZERO_WITH_COUNT record (SPEC-KERNELS §9.1). Every
    /// byte of the 64 has a field, so `S3d3NonzeroWithCount::decode(r).encode() == r`.
    S3d3NonzeroWithCount = "S3D3_NONZERO_WITH_COUNT", mod off {
        /// Lanes (1..=128); only the first partition of each core is processed (EC-56).
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 12, Required("ch");
        /// INT32 or FP32.
        in_dtype: Dtype = IN_DTYPE @ 13, Required("in");
        /// INT32.
        out_dtype: Dtype = OUT_DTYPE @ 14, Required("out");
        /// IMM_SRC of `index_offset` (EC-60: only inline executes).
        index_offset_src: ImmSrc = INDEX_OFFSET_SRC @ 15, Optional("offset_src");
        /// The read walk (SBUF only).
        src: Tensor3d = SRC @ 16, Required("src");
        /// IMM_VAL: added to each nonzero position (inline int32).
        index_offset: i32 = INDEX_OFFSET @ 32, Required("offset");
        /// IMM_SRC of `padding_val`.
        padding_val_src: ImmSrc = PADDING_VAL_SRC @ 36, Optional("pad_src");
        /// Must be zero (`s3d3_nonzero_with_count_reserved_zero`).
        reserved0: [u8; 3] = RESERVED0 @ 37, Reserved;
        /// IMM_VAL: the padding (inline int32).
        padding_val: i32 = PADDING_VAL @ 40, Required("pad");
        /// The write walk (SBUF only): positions, padding, then the count.
        dst: Tensor3d = DST @ 44, Required("dst");
        /// Must be zero (`s3d3_nonzero_with_count_reserved_zero`).
        reserved1: [u8; 4] = RESERVED1 @ 60, Reserved;
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

impl KernelOperand for S3d3NonzeroWithCount {
    const TEXT_FIELDS: Option<&'static [FieldDef]> = Some(Self::FIELDS);

    fn lanes(&self) -> u32 {
        self.num_active_channels as u32
    }

    fn check(&self, r: &Record, t: Target) -> Result<(), Fail> {
        nonzero_with_count(r, self, t)
    }
}

// ---------------------------------------------------------------------------
// Validation (SPEC-KERNELS §13): 0xF2 NONZERO_WITH_COUNT
// ---------------------------------------------------------------------------

/// NONZERO_WITH_COUNT's own predicates (SPEC-KERNELS §13).
impl Pred {
    preds! {
        /// `has_valid_nc_nonzero_with_count` (NeuronCore v3 and later).
        HAS_VALID_NC_NONZERO_WITH_COUNT;
        /// `s3d3_nonzero_with_count_reserved_zero` (bytes 37..39, 60..63).
        S3D3_NONZERO_WITH_COUNT_RESERVED_ZERO;
        /// `has_valid_immediates` (an IMM_SRC byte not 0, 1 or 2; EC-60).
        HAS_VALID_IMMEDIATES says "{v}; IMM_SRC must be 0, 1 or 2";
        /// `has_valid_nonzero_with_count_dtype` (in INT32 or FP32, out INT32).
        HAS_VALID_NONZERO_WITH_COUNT_DTYPE
            says "in_dtype {in}, out_dtype {out}; in must be int32 or fp32, out int32";
        /// `s3d3_nonzero_with_count_element_count_check_t3d`.
        S3D3_NONZERO_WITH_COUNT_ELEMENT_COUNT_CHECK_T3D;
    }
}

/// EC-60: pointer and register immediates are not emulated.
const NZ_IMM_SRC_MODE: Pred = Pred(&PredDef {
    name: "emu_addr_mode_supported",
    says: Some("IMM_SRC {imm}: pointer and register immediates are not emulated (EC-60)"),
});

fn nonzero_with_count(r: &Record, p: &S3d3NonzeroWithCount, t: Target) -> Result<(), Fail> {
    let f = S3d3NonzeroWithCount::field;
    not_on_sunda(
        Pred::HAS_VALID_NC_NONZERO_WITH_COUNT,
        Opcode::NONZERO_WITH_COUNT,
        t,
    )?;
    let ch = p.num_active_channels;
    channels_in_range(Pred::CHECK_ACTIVE_CHANNELS, f(off::NUM_ACTIVE_CHANNELS), ch)?;
    let rz = Pred::S3D3_NONZERO_WITH_COUNT_RESERVED_ZERO;
    reserved(rz, f(off::RESERVED0), off::RESERVED0, &p.reserved0)?;
    reserved(rz, f(off::RESERVED1), off::RESERVED1, &p.reserved1)?;
    // EC-60: has_valid_immediates fails iff the IMM_SRC byte is not 0, 1 or 2.
    for (at, s) in [
        (off::INDEX_OFFSET_SRC, p.index_offset_src),
        (off::PADDING_VAL_SRC, p.padding_val_src),
    ] {
        if !s.is_named() {
            return Err(fail(Pred::HAS_VALID_IMMEDIATES, f(at), Why::Byte(s.0)));
        }
    }
    dtype_valid(f(off::IN_DTYPE), p.in_dtype, false, false)?;
    dtype_valid(f(off::OUT_DTYPE), p.out_dtype, true, false)?;
    let in_ok = matches!(p.in_dtype, Dtype::INT32 | Dtype::FP32);
    if !in_ok || p.out_dtype != Dtype::INT32 {
        let at = if in_ok { off::OUT_DTYPE } else { off::IN_DTYPE };
        return Err(fail(
            Pred::HAS_VALID_NONZERO_WITH_COUNT_DTYPE,
            f(at),
            in_out(p.in_dtype, p.out_dtype),
        ));
    }
    let src = sbuf3(f(off::SRC), &p.src, p.in_dtype, false);
    let dst = sbuf3(f(off::DST), &p.dst, p.out_dtype, true);
    starts_then_tensors(&[src, dst], ch)?;
    let (n, m) = (p.src.elements(), p.dst.elements());
    if m != n + 1 {
        return Err(fail(
            Pred::S3D3_NONZERO_WITH_COUNT_ELEMENT_COUNT_CHECK_T3D,
            dst.field,
            Why::DerivedCount {
                count: m,
                expected: n + 1,
                rule: "count(src) + 1",
            },
        ));
    }
    addr_modes(&[src, dst])?;
    // EC-60: pointer and register immediates are not emulated.
    for (at, s) in [
        (off::INDEX_OFFSET_SRC, p.index_offset_src),
        (off::PADDING_VAL_SRC, p.padding_val_src),
    ] {
        if s != ImmSrc::INLINE {
            return Err(fail(NZ_IMM_SRC_MODE, f(at), Why::Byte(s.0)));
        }
    }
    check_event_modes_emulated(r)?;
    // EC-56: only lanes whose src partition is the first of a core are processed.
    let lanes: Vec<u32> = {
        let start = src.loc().map_or(0, |l| l.partition);
        (0..ch as u32)
            .filter(|q| (start + q).is_multiple_of(crate::limits::LANES_PER_POOL_CORE))
            .collect()
    };
    if lanes.is_empty() {
        // No processed lane: nothing is read or written (§16b.5).
        return kernel_shape(&[(src.field, n), (dst.field, m)]);
    }
    footprints(&[src, dst], t.arch)?;
    kernel_shape(&[(src.field, n), (dst.field, m)])?;
    let sp = partitions(&src, lanes.iter().copied());
    let dp = partitions(&dst, lanes.iter().copied());
    overlap_disjoint(&src, &sp, &dst, &dp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::layout::testing::spans;

    /// SPEC-KERNELS §9.1's offsets and widths, written out independently of the layout
    /// macro (which checks that the fields tile bytes 12..64).
    #[test]
    fn layout_matches_the_spec() {
        assert_eq!(
            spans(S3d3NonzeroWithCount::FIELDS),
            [
                (12, 1),
                (13, 1),
                (14, 1),
                (15, 1),
                (16, 16),
                (32, 4),
                (36, 1),
                (37, 3),
                (40, 4),
                (44, 16),
                (60, 4)
            ]
        );
    }
}
