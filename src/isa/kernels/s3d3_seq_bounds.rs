//! `S3D3_SEQ_BOUNDS`: the 64-byte operand of GET_SEQUENCE_BOUNDS (0xBE),
//! SPEC-KERNELS §8.1.

use super::KernelOperand;
use crate::isa::enums::Dtype;
use crate::isa::layout::{FieldDef, header, operand_layout};
use crate::isa::opcode::Opcode;
use crate::isa::predicates::fail::{Fail, Pred, PredDef, Why, preds};
use crate::isa::predicates::shared::*;
use crate::isa::predicates::{Target, check_event_modes_emulated};
use crate::isa::record::{Events, Record};
use crate::isa::tensor::Tensor3d;

operand_layout! {
    /// The decoded S3D3_SEQ_BOUNDS record (SPEC-KERNELS §8.1). Every byte of
    /// the 64 has a field, so `S3d3SeqBounds::decode(r).encode() == r`.
    S3d3SeqBounds = "S3D3_SEQ_BOUNDS", mod off {
        /// Lanes: must be 1.
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 12, Required("ch");
        /// Must be zero (`s3d3_seq_bounds_reserved_zero`).
        reserved0: u8 = RESERVED0 @ 13, Reserved;
        /// Segment id type: INT32 or FP32.
        in_dtype: Dtype = IN_DTYPE @ 14, Required("in");
        /// Bound type: INT32 or FP32.
        out_dtype: Dtype = OUT_DTYPE @ 15, Required("out");
        /// The ids (SBUF only).
        src: Tensor3d = SRC @ 16, Required("src");
        /// The starts, then the ends (SBUF only; `num_elem[2] == 2`).
        dst: Tensor3d = DST @ 32, Required("dst");
        /// Must be zero (`s3d3_seq_bounds_reserved_zero`).
        reserved1: [u8; 16] = RESERVED1 @ 48, Reserved;
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

impl KernelOperand for S3d3SeqBounds {
    const TEXT_FIELDS: Option<&'static [FieldDef]> = Some(Self::FIELDS);

    fn lanes(&self) -> u32 {
        self.num_active_channels as u32
    }

    fn check(&self, r: &Record, t: Target) -> Result<(), Fail> {
        sequence_bounds(r, self, t)
    }
}

// ---------------------------------------------------------------------------
// Validation (SPEC-KERNELS §13): 0xBE GET_SEQUENCE_BOUNDS
// ---------------------------------------------------------------------------

/// GET_SEQUENCE_BOUNDS's own predicates (SPEC-KERNELS §13).
impl Pred {
    preds! {
        /// `has_valid_nc_get_sequence_bounds` (NeuronCore v3 and later).
        HAS_VALID_NC_GET_SEQUENCE_BOUNDS;
        /// `has_valid_s3d3_seq_bounds_channels` (exactly one lane).
        HAS_VALID_S3D3_SEQ_BOUNDS_CHANNELS says "{v}; must be 1";
        /// `s3d3_seq_bounds_reserved_zero` (byte 13, bytes 48..63).
        S3D3_SEQ_BOUNDS_RESERVED_ZERO;
        /// `has_valid_seq_bounds_dtype` (INT32 or FP32 each).
        HAS_VALID_SEQ_BOUNDS_DTYPE
            says "in_dtype {in}, out_dtype {out}; each must be int32 or fp32";
        /// `s3d3_seq_bounds_element_count_check_t3d`.
        S3D3_SEQ_BOUNDS_ELEMENT_COUNT_CHECK_T3D;
    }
}

/// The element-count check's second clause: `dst.num_elem[2]` must be 2.
const SEQ_BOUNDS_DIM: Pred = Pred(&PredDef {
    name: "s3d3_seq_bounds_element_count_check_t3d",
    says: Some("num_elem[2] = {n}; must be 2 (starts, then ends)"),
});

fn sequence_bounds(r: &Record, p: &S3d3SeqBounds, t: Target) -> Result<(), Fail> {
    let f = S3d3SeqBounds::field;
    not_on_sunda(
        Pred::HAS_VALID_NC_GET_SEQUENCE_BOUNDS,
        Opcode::GET_SEQUENCE_BOUNDS,
        t,
    )?;
    let ch = p.num_active_channels;
    channels_in_range(Pred::CHECK_ACTIVE_CHANNELS, f(off::NUM_ACTIVE_CHANNELS), ch)?;
    if ch != 1 {
        return Err(fail(
            Pred::HAS_VALID_S3D3_SEQ_BOUNDS_CHANNELS,
            f(off::NUM_ACTIVE_CHANNELS),
            Why::Byte(ch),
        ));
    }
    let rz = Pred::S3D3_SEQ_BOUNDS_RESERVED_ZERO;
    reserved(rz, f(off::RESERVED0), off::RESERVED0, &[p.reserved0])?;
    reserved(rz, f(off::RESERVED1), off::RESERVED1, &p.reserved1)?;
    dtype_valid(f(off::IN_DTYPE), p.in_dtype, false, false)?;
    dtype_valid(f(off::OUT_DTYPE), p.out_dtype, true, false)?;
    let ok = |d| matches!(d, Dtype::INT32 | Dtype::FP32);
    if !ok(p.in_dtype) || !ok(p.out_dtype) {
        let at = if ok(p.in_dtype) {
            off::OUT_DTYPE
        } else {
            off::IN_DTYPE
        };
        return Err(fail(
            Pred::HAS_VALID_SEQ_BOUNDS_DTYPE,
            f(at),
            in_out(p.in_dtype, p.out_dtype),
        ));
    }
    let src = sbuf3(f(off::SRC), &p.src, p.in_dtype, false);
    let dst = sbuf3(f(off::DST), &p.dst, p.out_dtype, true);
    starts_then_tensors(&[src, dst], ch)?;
    let (n, m) = (p.src.elements(), p.dst.elements());
    let pred = Pred::S3D3_SEQ_BOUNDS_ELEMENT_COUNT_CHECK_T3D;
    if m != 2 * n {
        let why = Why::DerivedCount {
            count: m,
            expected: 2 * n,
            rule: "2 · count(src)",
        };
        return Err(fail(pred, dst.field, why));
    }
    if p.dst.num[2] != 2 {
        let why = Why::Value(p.dst.num[2] as u64);
        return Err(fail(SEQ_BOUNDS_DIM, dst.field, why));
    }
    addr_modes(&[src, dst])?;
    check_event_modes_emulated(r)?;
    footprints(&[src, dst], t.arch)?;
    kernel_shape(&[(src.field, n), (dst.field, m)])?;
    let (sp, dp) = (partitions(&src, 0..1), partitions(&dst, 0..1));
    overlap_disjoint(&src, &sp, &dst, &dp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::layout::testing::spans;

    /// SPEC-KERNELS §8.1's offsets and widths, written out independently of the layout
    /// macro (which checks that the fields tile bytes 12..64).
    #[test]
    fn layout_matches_the_spec() {
        assert_eq!(
            spans(S3d3SeqBounds::FIELDS),
            [
                (12, 1),
                (13, 1),
                (14, 1),
                (15, 1),
                (16, 16),
                (32, 16),
                (48, 16)
            ]
        );
    }
}
