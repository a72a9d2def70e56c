//! `S3S3D3_TT`: the 64-byte operand of TENSOR_TENSOR_ARITH (0x41) and
//! TENSOR_TENSOR_BITVEC (0x51), SPEC-KERNELS §4.2 — the header's slot order
//! (src0 @16, src1 @32, dst @48; C-6, §16b.7).

use super::KernelOperand;
use crate::isa::enums::{AluOp, Dtype, DtypePair, Engine};
use crate::isa::layout::{FieldDef, FieldRef, header, operand_layout};
use crate::isa::opcode::Opcode;
use crate::isa::predicates::fail::{Fail, Pred, PredDef, Why, preds};
use crate::isa::predicates::shared::*;
use crate::isa::predicates::{Target, check_event_modes_emulated};
use crate::isa::record::{Events, Record};
use crate::isa::tensor::{Addr4, Tensor3d};
use crate::limits::Arch;

operand_layout! {
    /// The decoded S3S3D3_TT record (SPEC-KERNELS §4.2). Every byte of the 64
    /// has a field, so `S3s3d3Tt::decode(r).encode() == r` for every record.
    S3s3d3Tt = "S3S3D3_TT", mod off {
        /// `in0_in1_dtype`: src0's dtype in the low nibble, src1's in the high (EC-43).
        in_dtypes: DtypePair = IN_DTYPES @ 12, Required("in");
        /// Output element type.
        out_dtype: Dtype = OUT_DTYPE @ 13, Required("out");
        /// The ALU op.
        op: AluOp = OP @ 14, Required("op");
        /// Lanes (1..=128).
        num_active_channels: u8 = NUM_ACTIVE_CHANNELS @ 15, Required("ch");
        /// The first read walk.
        src0: Tensor3d = SRC0 @ 16, Required("src0");
        /// The second read walk.
        src1: Tensor3d = SRC1 @ 32, Required("src1");
        /// The write walk.
        dst: Tensor3d = DST @ 48, Required("dst");
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

impl KernelOperand for S3s3d3Tt {
    const TEXT_FIELDS: Option<&'static [FieldDef]> = Some(Self::FIELDS);

    fn lanes(&self) -> u32 {
        self.num_active_channels as u32
    }

    fn check(&self, r: &Record, t: Target) -> Result<(), Fail> {
        tensor_tensor(r, self, t)
    }
}

// ---------------------------------------------------------------------------
// Validation (SPEC-KERNELS §13): 0x41 TENSOR_TENSOR_ARITH / 0x51 TENSOR_TENSOR_BITVEC
// ---------------------------------------------------------------------------

/// src0's dtype nibble (EC-43), named for messages.
const SRC0_DTYPE: FieldRef = FieldRef {
    name: "in_dtypes (src0, low nibble)",
    offset: off::IN_DTYPES as u8,
};
/// src1's dtype nibble (EC-43), named for messages.
const SRC1_DTYPE: FieldRef = FieldRef {
    name: "in_dtypes (src1, high nibble)",
    offset: off::IN_DTYPES as u8,
};

/// EC-49: the POOL-legal 0x41 forms the emulator does not execute.
const fn tt_op_unexecuted(op: AluOp) -> bool {
    matches!(
        op,
        AluOp::POW
            | AluOp::MOD
            | AluOp::DIVIDE_INT
            | AluOp::DIVIDE_UINT
            | AluOp::MOD_INT
            | AluOp::MOD_UINT
            | AluOp::ABS_MAX_INT
            | AluOp::ABS_MIN_INT
            | AluOp::ABS_DIFF_INT
    )
}

/// `is_valid_tensor_tensor_arith_pool`'s op arm (0x41): POW, an int op on
/// all-32-bit or all-64-bit integers, or base ADD/SUBTRACT/MULT.
fn pool_arm_op(op: AluOp, d: [Dtype; 3]) -> bool {
    let all = |set: [Dtype; 2]| d.iter().all(|x| set.contains(x));
    let int = op.is_valid_int_aluop();
    op == AluOp::POW
        || (int && all([Dtype::INT32, Dtype::UINT32]))
        || matches!(op, AluOp::ADD | AluOp::SUBTRACT | AluOp::MULT)
        || (int && all([Dtype::INT64, Dtype::UINT64]))
}

/// `is_s3s3d3_tt_tensors_in_sbuf`: a register-mode address passes (resolved
/// at run time, EC-5); otherwise bits 0..28 must lie in SBUF.
fn in_sbuf(a: Addr4) -> bool {
    a.is_register() || a.byte_addr() < crate::limits::SBUF_END
}

/// The tensor-tensor pair's own predicates (SPEC-KERNELS §13).
impl Pred {
    preds! {
        /// `s3s3d3_tt_valid_op`.
        S3S3D3_TT_VALID_OP says "{op} is not an op of {opcode}";
        /// `s3s3d3_tt_dtype` (0x51: out is an integer dtype).
        S3S3D3_TT_DTYPE says "{d}; TENSOR_TENSOR_BITVEC writes an integer dtype";
        /// `s3s3d3_tt_src_dst_dtype` (0x51: src0 == src1 == out, shifts aside).
        S3S3D3_TT_SRC_DST_DTYPE
            says "{op} with src0 {src0}, src1 {src1}, out {out}: bitvec needs src0 == src1 == out";
        /// `s3s3d3_tt_valid_int_signness`.
        S3S3D3_TT_VALID_INT_SIGNNESS
            says "{op} with src0 {src0}, src1 {src1}, out {out}: an integer op needs three \
                  dtypes of one signedness that the op accepts";
        /// `s3s3d3_tt_src_element_cnt_check`.
        S3S3D3_TT_SRC_ELEMENT_CNT_CHECK;
        /// `s3s3d3_tt_dst_element_cnt_check`.
        S3S3D3_TT_DST_ELEMENT_CNT_CHECK;
        /// `is_valid_tensor_tensor_arith_pool` (POOL streams only; EC-41, EC-52):
        /// the op arm.
        IS_VALID_TENSOR_TENSOR_ARITH_POOL
            says "{op} with src0 {src0}, src1 {src1}, out {out} is not a POOL form \
                  (POW, ADD/SUBTRACT/MULT, or an integer op on INT32/UINT32 or INT64/UINT64)";
    }
}

/// `is_valid_tensor_tensor_arith_pool`'s SBUF clause (EC-41).
const TT_POOL_SBUF_ONLY: Pred = Pred(&PredDef {
    name: "is_valid_tensor_tensor_arith_pool",
    says: Some(
        "address {addr} is not in SBUF; tensor-tensor operands on POOL are SBUF-only (EC-41)",
    ),
});
/// EC-49: a POOL-legal 0x41 op the emulator does not execute.
const TT_OP_NOT_EXECUTED: Pred = Pred(&PredDef {
    name: "emu_opcode_supported",
    says: Some("{opcode} op {op} is not executed by the emulator (EC-49)"),
});

fn tensor_tensor(r: &Record, p: &S3s3d3Tt, t: Target) -> Result<(), Fail> {
    let f = S3s3d3Tt::field;
    let opcode = p.opcode();
    let bitvec = opcode == Opcode::TENSOR_TENSOR_BITVEC;
    let (s0, s1, out, op) = (p.in_dtypes.src0(), p.in_dtypes.src1(), p.out_dtype, p.op);
    // is_valid_dtype_64: FP32R only on out; UINT64/INT64 admitted (EC-53 later).
    dtype_valid(f(off::OUT_DTYPE), out, true, true)?;
    dtype_valid(SRC0_DTYPE, s0, false, true)?;
    dtype_valid(SRC1_DTYPE, s1, false, true)?;
    if !op.is_named() {
        return Err(fail(Pred::IS_VALID_ENUM, f(off::OP), Why::Byte(op.0)));
    }
    let valid_op = if bitvec {
        op.is_general_bitvec_op()
    } else {
        op.is_general_arith_op() || op == AluOp::POW || op.is_valid_int_aluop()
    };
    if !valid_op {
        return Err(fail(
            Pred::S3S3D3_TT_VALID_OP,
            f(off::OP),
            Why::Op { opcode, op },
        ));
    }
    let op_dtypes = Why::OpDtypes {
        op,
        src0: s0,
        src1: s1,
        out,
    };
    if bitvec && !out.is_int() {
        return Err(fail(
            Pred::S3S3D3_TT_DTYPE,
            f(off::OUT_DTYPE),
            Why::Dtype(out),
        ));
    }
    if bitvec {
        let equal = s0 == s1 && s1 == out;
        // A 64-bit shift takes a UINT32 count.
        let shift64 = op.is_shift_op() && s0.is_64bit() && s1 == Dtype::UINT32 && out == s0;
        if !(equal || shift64) {
            return Err(fail(
                Pred::S3S3D3_TT_SRC_DST_DTYPE,
                f(off::IN_DTYPES),
                op_dtypes,
            ));
        }
    }
    if op.is_valid_int_aluop() {
        let d = [s0, s1, out];
        let signed = d.iter().all(|x| x.is_signed_int()) && op.is_signed_alu_op();
        let unsigned = d.iter().all(|x| x.is_unsigned_int()) && op.is_unsigned_alu_op();
        if !(signed || unsigned) {
            return Err(fail(
                Pred::S3S3D3_TT_VALID_INT_SIGNNESS,
                f(off::IN_DTYPES),
                op_dtypes,
            ));
        }
    }
    let ch = p.num_active_channels;
    channel_range(f(off::NUM_ACTIVE_CHANNELS), ch)?;
    let three = |field, t: &crate::isa::tensor::Tensor3d, dtype, write| {
        Opnd::of_dims(3, field, t.to_4d(), dtype, write)
    };
    let src0 = three(f(off::SRC0), &p.src0, s0, false);
    let src1 = three(f(off::SRC1), &p.src1, s1, false);
    let dst = three(f(off::DST), &p.dst, out, true);
    let ops = [src0, src1, dst];
    starts_then_tensors(&ops, ch)?;
    let c0 = (src0.field, p.src0.elements());
    let c1 = (src1.field, p.src1.elements());
    let cd = (dst.field, p.dst.elements());
    // The shape-register exemption (ADDR4 bit 30) of the two count checks.
    let shaped = |a: Addr4, b: Addr4| a.shape_from_register() || b.shape_from_register();
    if !shaped(p.src0.addr, p.src1.addr) {
        same_count(Pred::S3S3D3_TT_SRC_ELEMENT_CNT_CHECK, c1, c0)?;
    }
    if !shaped(p.src0.addr, p.dst.addr) {
        same_count(Pred::S3S3D3_TT_DST_ELEMENT_CNT_CHECK, cd, c0)?;
    }
    if t.engine == Engine::Pool {
        // EC-49: the op arm applies to 0x41; EC-52: 0x51 takes the SBUF clause only.
        if !bitvec && !pool_arm_op(op, [s0, s1, out]) {
            return Err(fail(
                Pred::IS_VALID_TENSOR_TENSOR_ARITH_POOL,
                f(off::OP),
                op_dtypes,
            ));
        }
        // EC-41: a PSUM operand on POOL fails here.
        if let Some(o) = ops.iter().find(|o| !in_sbuf(o.t.addr)) {
            return Err(fail(
                TT_POOL_SBUF_ONLY,
                o.field,
                Why::Psum { addr: o.t.addr.0 },
            ));
        }
    }
    // Emulator checks (EC-40).
    addr_modes(&ops)?;
    check_event_modes_emulated(r)?;
    on_pool(opcode, f(off::OP), t)?;
    if bitvec && t.arch == Arch::Sunda {
        // EC-58: SUNDA's kernel table has no 0x51 row.
        return Err(fail(
            Pred::EMU_OPCODE_SUPPORTED,
            f(off::OP),
            Why::Arch {
                opcode,
                arch: t.arch,
            },
        ));
    }
    if !bitvec && tt_op_unexecuted(op) {
        // EC-49
        return Err(fail(TT_OP_NOT_EXECUTED, f(off::OP), Why::Op { opcode, op }));
    }
    // EC-44 (FP8 on these paths) and EC-53 (64-bit operands).
    for (field, d) in [(SRC0_DTYPE, s0), (SRC1_DTYPE, s1), (f(off::OUT_DTYPE), out)] {
        if d.is_fp8() || d.is_64bit() {
            return Err(fail(Pred::EMU_DTYPE_SUPPORTED, field, Why::Dtype(d)));
        }
    }
    footprints(&ops, t.arch)?;
    kernel_shape(&[c0, c1, cd])?;
    overlap(&[src0, src1], &dst, ch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::layout::testing::{counting_record, rows};

    /// SPEC-KERNELS §4.2's offsets and widths, written out independently of the layout
    /// macro (which checks that the fields tile bytes 12..64).
    #[test]
    fn layout_matches_the_spec() {
        assert_eq!(
            rows(S3s3d3Tt::FIELDS),
            [
                ("in_dtypes", 12, 1),
                ("out_dtype", 13, 1),
                ("op", 14, 1),
                ("num_active_channels", 15, 1),
                ("src0", 16, 16),
                ("src1", 32, 16),
                ("dst", 48, 16),
            ]
        );
        let r = counting_record();
        let tt = S3s3d3Tt::decode(&r);
        assert_eq!((tt.in_dtypes.src0().0, tt.in_dtypes.src1().0), (12, 0));
        assert_eq!(
            (tt.out_dtype.0, tt.op.0, tt.num_active_channels),
            (13, 14, 15)
        );
        assert_eq!(tt.src0.addr.0, u32::from_le_bytes([16, 17, 18, 19]));
        assert_eq!(tt.src0.step[2], i16::from_le_bytes([24, 25]));
        assert_eq!(tt.src0.num[0], u16::from_le_bytes([26, 27]));
        assert_eq!(tt.src1.addr.0, u32::from_le_bytes([32, 33, 34, 35]));
        assert_eq!(tt.dst.num[2], u16::from_le_bytes([62, 63]));
        assert_eq!(S3s3d3Tt::field(48).name, "dst");
    }
}
