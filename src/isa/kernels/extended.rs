//! 0xF0 EXTENDED_INST (SPEC-KERNELS §6): the spec byte (12, EC-15) selects the
//! struct. Two are modelled: spec 0 ENGINE_NOP and spec 2 EXTENDED_TTA.

use super::KernelOperand;
use crate::isa::enums::{AluOp, Dtype, DtypePair};
use crate::isa::layout::{FieldDef, FieldRef, header, operand_layout};
use crate::isa::opcode::Opcode;
use crate::isa::predicates::fail::{Fail, Pred, PredDef, Why, preds};
use crate::isa::predicates::shared::*;
use crate::isa::predicates::{Target, check_event_modes_emulated};
use crate::isa::record::{Events, Record};
use crate::isa::tensor::Tensor2d;
use crate::limits::Arch;

/// completion_info (byte 13): has_read bit 0, has_write bit 2,
/// num_active_ports bits 3..5; bits 1, 6 and 7 are reserved (SPEC-KERNELS §6.1).
pub mod completion {
    /// has_read.
    pub const HAS_READ: u8 = 1 << 0;
    /// has_write.
    pub const HAS_WRITE: u8 = 1 << 2;
    /// The reserved bits 1, 6 and 7 (EC-55: must be zero).
    pub const RESERVED: u8 = 0b1100_0010;

    /// num_active_ports: bits 3..5.
    pub const fn ports(info: u8) -> u8 {
        (info >> 3) & 7
    }

    /// EC-55: the lanes of an extended instruction: 128 when num_active_ports
    /// is 0, else 16 per port.
    pub const fn lanes(info: u8) -> u32 {
        match ports(info) {
            0 => crate::limits::PARTITIONS,
            n => n as u32 * crate::limits::LANES_PER_POOL_CORE,
        }
    }
}

/// The extended sub-opcodes (`EXAMPLE_EXTENDED_OPCODES1`, the header enum; C-10).
pub mod spec {
    /// ENGINE_NOP.
    pub const ENGINE_NOP: u8 = 0;
    /// COPY (layout unknown, EC-58).
    pub const COPY: u8 = 1;
    /// TENSOR_TENSOR_ARITH (EXTENDED_TTA).
    pub const TENSOR_TENSOR_ARITH: u8 = 2;
    /// RAND_SET_STATE (layout unknown, EC-58).
    pub const RAND_SET_STATE: u8 = 3;
    /// RAND_GET_STATE (layout unknown, EC-58).
    pub const RAND_GET_STATE: u8 = 4;
}

/// EC-58: the specs whose struct is modelled (0 and 2); every other spec is
/// `emu_opcode_supported` at SPEC §5 step 5.
pub const fn modelled(spec: u8) -> bool {
    matches!(spec, spec::ENGINE_NOP | spec::TENSOR_TENSOR_ARITH)
}

/// The spec byte of an 0xF0 record (EC-15: byte 12).
pub const fn spec_of(r: &Record) -> u8 {
    r.0[12]
}

operand_layout! {
    /// spec 0, ENGINE_NOP: nothing beyond completion_info (EC-55: bytes 14..64 reserved).
    EngineNop = "EXTENDED_INST/ENGINE_NOP", mod nop_off {
        /// The spec byte: 0.
        spec: u8 = SPEC @ 12, Required("spec");
        /// completion_info.
        completion_info: u8 = COMPLETION_INFO @ 13, Required("info");
        /// Must be zero (EC-55, `reserved_zero`).
        reserved: [u8; 50] = RESERVED @ 14, Reserved;
    }
}

operand_layout! {
    /// spec 2, EXTENDED_TTA (SPEC-KERNELS §6.4): ADD or MULT over TENSOR2D walks.
    ExtTta = "EXTENDED_INST/EXTENDED_TTA", mod tta_off {
        /// The spec byte: 2.
        spec: u8 = SPEC @ 12, Required("spec");
        /// completion_info (EC-55's lanes).
        completion_info: u8 = COMPLETION_INFO @ 13, Required("info");
        /// src0's dtype (low nibble) and src1's (high nibble), EC-43.
        in_dtypes: DtypePair = IN_DTYPES @ 14, Required("in");
        /// Output element type.
        out_dtype: Dtype = OUT_DTYPE @ 15, Required("out");
        /// ADD or MULT.
        op: AluOp = OP @ 16, Required("op");
        /// Must be zero (`reserved_zero`).
        reserved0: [u8; 3] = RESERVED0 @ 17, Reserved;
        /// The first read walk (SBUF only).
        src0: Tensor2d = SRC0 @ 20, Required("src0");
        /// The second read walk (SBUF only).
        src1: Tensor2d = SRC1 @ 32, Required("src1");
        /// The write walk (SBUF only).
        dst: Tensor2d = DST @ 44, Required("dst");
        /// Must be zero (`reserved_zero`).
        reserved1: [u8; 8] = RESERVED1 @ 56, Reserved;
    }
}

impl EngineNop {
    /// An ENGINE_NOP with `completion_info` and zero events.
    pub fn new(completion_info: u8) -> EngineNop {
        EngineNop {
            header: header(Opcode::EXTENDED_INST),
            events: Events::default(),
            spec: spec::ENGINE_NOP,
            completion_info,
            reserved: [0; 50],
        }
    }
}

impl ExtTta {
    /// An EXTENDED_TTA record with zero events.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        completion_info: u8,
        op: AluOp,
        src0_dtype: Dtype,
        src1_dtype: Dtype,
        out_dtype: Dtype,
        src0: Tensor2d,
        src1: Tensor2d,
        dst: Tensor2d,
    ) -> ExtTta {
        ExtTta {
            header: header(Opcode::EXTENDED_INST),
            events: Events::default(),
            spec: spec::TENSOR_TENSOR_ARITH,
            completion_info,
            in_dtypes: DtypePair::new(src0_dtype, src1_dtype),
            out_dtype,
            op,
            reserved0: [0; 3],
            src0,
            src1,
            dst,
            reserved1: [0; 8],
        }
    }
}

impl KernelOperand for EngineNop {
    const TEXT_FIELDS: Option<&'static [FieldDef]> = Some(Self::FIELDS);

    /// EC-55: the lanes of completion_info.
    fn lanes(&self) -> u32 {
        completion::lanes(self.completion_info)
    }

    fn check(&self, r: &Record, t: Target) -> Result<(), Fail> {
        engine_nop(r, self, t)
    }
}

impl KernelOperand for ExtTta {
    const TEXT_FIELDS: Option<&'static [FieldDef]> = Some(Self::FIELDS);

    /// EC-55: the lanes of completion_info.
    fn lanes(&self) -> u32 {
        completion::lanes(self.completion_info)
    }

    fn check(&self, r: &Record, t: Target) -> Result<(), Fail> {
        ext_tta(r, self, t)
    }
}

// ---------------------------------------------------------------------------
// Validation (SPEC-KERNELS §13): 0xF0 spec 0 ENGINE_NOP and spec 2 EXTENDED_TTA (EC-55)
// ---------------------------------------------------------------------------

/// EXTENDED_TTA's own predicates (EC-55).
impl Pred {
    preds! {
        /// `ext_tta_valid_op` (EXTENDED_TTA op not ADD or MULT, EC-55).
        EXT_TTA_VALID_OP says "{alu}; EXTENDED_TTA takes add or mult";
        /// `ext_tta_element_count` (EC-55).
        EXT_TTA_ELEMENT_COUNT;
    }
}

/// `reserved_zero` on completion_info's reserved bits (EC-55).
const COMPLETION_RESERVED: Pred = Pred(&PredDef {
    name: "reserved_zero",
    says: Some("{x}; its reserved bits 1, 6 and 7 must be 0 (EC-55)"),
});

/// EC-55: completion_info's reserved bits 1, 6 and 7 must be zero.
fn completion_reserved(field: FieldRef, info: u8) -> Result<(), Fail> {
    if info & completion::RESERVED != 0 {
        return Err(fail(COMPLETION_RESERVED, field, Why::Byte(info)));
    }
    Ok(())
}

fn engine_nop(r: &Record, p: &EngineNop, t: Target) -> Result<(), Fail> {
    use nop_off as off;
    let f = EngineNop::field;
    // EC-55
    completion_reserved(f(off::COMPLETION_INFO), p.completion_info)?;
    reserved(
        Pred::RESERVED_ZERO,
        f(off::RESERVED),
        off::RESERVED,
        &p.reserved,
    )?;
    check_event_modes_emulated(r)?;
    // EC-58: SUNDA has no 0xF0 rows.
    if t.arch == Arch::Sunda {
        let why = Why::Arch {
            opcode: Opcode::EXTENDED_INST,
            arch: t.arch,
        };
        return Err(fail(Pred::EMU_OPCODE_SUPPORTED, f(off::SPEC), why));
    }
    Ok(())
}

/// src0's dtype nibble of EXTENDED_TTA (EC-43).
const TTA_SRC0_DTYPE: FieldRef = FieldRef {
    name: "in_dtypes (src0, low nibble)",
    offset: tta_off::IN_DTYPES as u8,
};
/// src1's dtype nibble of EXTENDED_TTA (EC-43).
const TTA_SRC1_DTYPE: FieldRef = FieldRef {
    name: "in_dtypes (src1, high nibble)",
    offset: tta_off::IN_DTYPES as u8,
};

fn ext_tta(r: &Record, p: &ExtTta, t: Target) -> Result<(), Fail> {
    use tta_off as off;
    let f = ExtTta::field;
    // EC-55, in this order.
    completion_reserved(f(off::COMPLETION_INFO), p.completion_info)?;
    reserved(
        Pred::RESERVED_ZERO,
        f(off::RESERVED0),
        off::RESERVED0,
        &p.reserved0,
    )?;
    reserved(
        Pred::RESERVED_ZERO,
        f(off::RESERVED1),
        off::RESERVED1,
        &p.reserved1,
    )?;
    if !matches!(p.op, AluOp::ADD | AluOp::MULT) {
        return Err(fail(Pred::EXT_TTA_VALID_OP, f(off::OP), Why::Byte(p.op.0)));
    }
    let (s0, s1, out) = (p.in_dtypes.src0(), p.in_dtypes.src1(), p.out_dtype);
    dtype_valid(f(off::OUT_DTYPE), out, true, false)?;
    dtype_valid(TTA_SRC0_DTYPE, s0, false, false)?;
    dtype_valid(TTA_SRC1_DTYPE, s1, false, false)?;
    // EC-55's lanes: 16 per active port, 128 for 0 ports.
    let lanes = completion::lanes(p.completion_info) as u8;
    let two = |field, t: &crate::isa::tensor::Tensor2d, dtype, write| {
        Opnd::of_dims(2, field, t.to_4d(), dtype, write).sbuf_only()
    };
    let src0 = two(f(off::SRC0), &p.src0, s0, false);
    let src1 = two(f(off::SRC1), &p.src1, s1, false);
    let dst = two(f(off::DST), &p.dst, out, true);
    let ops = [src0, src1, dst];
    starts_then_tensors(&ops, lanes)?;
    let c0 = (src0.field, p.src0.elements());
    let c1 = (src1.field, p.src1.elements());
    let cd = (dst.field, p.dst.elements());
    same_count(Pred::EXT_TTA_ELEMENT_COUNT, c1, c0)?;
    same_count(Pred::EXT_TTA_ELEMENT_COUNT, cd, c0)?;
    addr_modes(&ops)?;
    check_event_modes_emulated(r)?;
    if t.arch == Arch::Sunda {
        // EC-58
        let why = Why::Arch {
            opcode: Opcode::EXTENDED_INST,
            arch: t.arch,
        };
        return Err(fail(Pred::EMU_OPCODE_SUPPORTED, f(off::SPEC), why));
    }
    // EC-44: FP8 on the converting path.
    for (field, d) in [
        (TTA_SRC0_DTYPE, s0),
        (TTA_SRC1_DTYPE, s1),
        (f(off::OUT_DTYPE), out),
    ] {
        if d.is_fp8() {
            return Err(fail(Pred::EMU_DTYPE_SUPPORTED, field, Why::Dtype(d)));
        }
    }
    footprints(&ops, t.arch)?;
    kernel_shape(&[c0, c1, cd])?;
    // EC-42
    overlap(&[src0, src1], &dst, lanes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::layout::testing::spans;

    /// SPEC-KERNELS §6.2 and §6.4's offsets and widths, written out
    /// independently of the layout macro.
    #[test]
    fn layouts_match_the_spec() {
        assert_eq!(spans(EngineNop::FIELDS), [(12, 1), (13, 1), (14, 50)]);
        assert_eq!(
            spans(ExtTta::FIELDS),
            [
                (12, 1),
                (13, 1),
                (14, 1),
                (15, 1),
                (16, 1),
                (17, 3),
                (20, 12),
                (32, 12),
                (44, 12),
                (56, 8)
            ]
        );
    }
}
