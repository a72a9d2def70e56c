//! Validation of the SPEC-KERNELS structs: IOTA (0x7E), COPY/CAST (0x46/0x47)
//! and TENSOR_TENSOR_ARITH/BITVEC (0x41/0x51), SPEC-KERNELS §13.
//!
//! One test per predicate: a record valid in every other respect fails
//! exactly that predicate, at the field's byte offset, with the offending
//! value in the message. The expected offsets are the spec tables' (§2.1,
//! §3.1, §4.2), written here by hand.

use crate::common::{psum, sbuf};
use tpb_emu::isa::build::{Geometry, row3, row4};
use tpb_emu::isa::text::{asm, disasm_record};
use tpb_emu::isa::validate::{Fail, Target, check, is_valid, validate_stream};
use tpb_emu::isa::{
    Addr4, AluOp, D4Iota, Dtype, DtypePair, Engine, Inst, Opcode, PoolDim, Record, S3s3d3Tt,
    S4d4Tr, UpdateMode, WaitMode,
};
use tpb_emu::limits::Arch;

const T: Target = Target::pool(Arch::Cayman);

fn on(engine: Engine) -> Target {
    Target {
        engine,
        arch: Arch::Cayman,
    }
}

/// Asserts `r` fails exactly `pred` on target `t`, naming byte `offset`, and
/// that the message contains each of `needles` (the offending values).
#[track_caller]
fn fails_on(r: &Record, t: Target, pred: &str, offset: Option<u8>, needles: &[&str]) {
    let f: Fail = match check(r, t) {
        Ok(()) => panic!("expected {pred}, got ok: {}", disasm_record(r)),
        Err(f) => f,
    };
    let detail = f.detail();
    assert_eq!(f.predicate(), pred, "{detail}\n{}", disasm_record(r));
    assert_eq!(f.offset(), offset, "{detail}");
    if let Some(o) = offset {
        assert!(detail.contains(&format!("byte {o}:")), "{detail}");
    }
    for n in needles {
        assert!(detail.contains(n), "{detail:?} lacks {n:?}");
    }
    assert!(!is_valid(r, t), "the fast face agrees");
}

#[track_caller]
fn fails(r: &Record, pred: &str, offset: u8, needles: &[&str]) {
    fails_on(r, T, pred, Some(offset), needles)
}

#[track_caller]
fn ok_on(r: &Record, t: Target) {
    if let Err(f) = check(r, t) {
        panic!("{}: {f}\n{}", f.predicate(), disasm_record(r));
    }
    assert!(is_valid(r, t));
}

#[track_caller]
fn ok(r: &Record) {
    ok_on(r, T)
}

/// `fn $name(f)`: the record of `$base` after `f` edits it (one field
/// made invalid, the rest valid).
macro_rules! edited {
    ($name:ident, $ty:ty, $base:expr) => {
        fn $name(f: impl FnOnce(&mut $ty)) -> Record {
            let mut p = $base;
            f(&mut p);
            p.encode()
        }
    };
}

fn g() -> Geometry {
    Geometry::default()
}

fn iota() -> D4Iota {
    g().iota(Dtype::INT32, 0, 1, 64)
}

edited!(iota_with, D4Iota, iota());

edited!(copy_with, S4d4Tr, g().copy(Dtype::FP32));

edited!(cast_with, S4d4Tr, g().cast(Dtype::FP32, Dtype::BFLOAT16));

fn add() -> S3s3d3Tt {
    g().arith(AluOp::ADD_INT, Dtype::INT32)
}

edited!(tt_with, S3s3d3Tt, add());

fn set(mut r: Record, at: usize, v: u8) -> Record {
    r.0[at] = v;
    r
}

// ---------------------------------------------------------------------------
// Valid records
// ---------------------------------------------------------------------------

#[test]
fn valid_records_of_each_kernel_pass() {
    // IOTA: every admitted out dtype but FP8 (EC-48), SBUF or PSUM (EC-41).
    for d in [
        Dtype::INT8,
        Dtype::UINT8,
        Dtype::INT16,
        Dtype::UINT16,
        Dtype::BFLOAT16,
        Dtype::FP16,
        Dtype::INT32,
        Dtype::UINT32,
        Dtype::FP32,
        Dtype::FP32R,
    ] {
        ok(&g().iota(d, -5, -3, 7).encode());
    }
    ok(&Geometry {
        dst: psum(0, 0x100),
        channels: 128,
        ..g()
    }
    .iota(Dtype::FP32, 0, 1, 1)
    .encode());
    // COPY: every admitted dtype, FP8 included (EC-45), PSUM both sides for 4-byte dtypes.
    for d in [
        Dtype::INT8,
        Dtype::UINT8,
        Dtype::INT16,
        Dtype::UINT16,
        Dtype::BFLOAT16,
        Dtype::FP16,
        Dtype::INT32,
        Dtype::UINT32,
        Dtype::FP32,
        Dtype::FP8_EXP3,
        Dtype::FP8_EXP4,
        Dtype::FP8_EXP5,
    ] {
        ok(&g().copy(d).encode());
    }
    let psum_both = Geometry {
        src: psum(0, 0),
        dst: psum(0, 0x1000),
        ..g()
    };
    ok(&psum_both.copy(Dtype::INT32).encode());
    // op_dim X is allowed (is_zero_subdim admits UNUSED and X).
    ok(&copy_with(|p| p.op_dim = PoolDim::X));
    // CAST: different dtypes, equal dtypes (bits copied, FP8 included: EC-46), to FP32R.
    ok(&g().cast(Dtype::FP32, Dtype::INT8).encode());
    ok(&g().cast(Dtype::UINT32, Dtype::FP16).encode());
    ok(&g().cast(Dtype::FP8_EXP4, Dtype::FP8_EXP4).encode());
    ok(&g().cast(Dtype::FP32, Dtype::FP32R).encode());
    // COPY and CAST on ACT and DVE pass instruction_engine_check (EC-39) and
    // fail only the emulator's emu_opcode_supported.
    for e in [Engine::Act, Engine::Dve] {
        fails_on(
            &g().copy(Dtype::FP32).encode(),
            on(e),
            "emu_opcode_supported",
            Some(12),
            &[e.name(), "EC-39"],
        );
    }
    // Tensor-tensor: base ADD/SUBTRACT/MULT on any ≤32-bit mix (EC-51), the
    // int band on INT32/UINT32 (EC-50), the bitvec ops on 8/16/32-bit ints (EC-52).
    for op in [AluOp::ADD, AluOp::SUBTRACT, AluOp::MULT] {
        ok(&g().arith(op, Dtype::FP32).encode());
        ok(&g()
            .tensor_tensor(
                Opcode::TENSOR_TENSOR_ARITH,
                op,
                Dtype::BFLOAT16,
                Dtype::INT8,
                Dtype::FP32R,
            )
            .encode());
    }
    for op in [
        AluOp::ADD_INT,
        AluOp::SUBTRACT_INT,
        AluOp::MULT_INT,
        AluOp::MAX_INT,
        AluOp::MIN_INT,
        AluOp::IS_EQUAL_INT,
        AluOp::IS_NE_INT,
        AluOp::IS_GT_INT,
        AluOp::IS_LT_INT,
    ] {
        ok(&g().arith(op, Dtype::INT32).encode());
    }
    for op in [
        AluOp::MULT_UINT,
        AluOp::MAX_UINT,
        AluOp::IS_GE_UINT,
        AluOp::ADD_INT,
    ] {
        ok(&g().arith(op, Dtype::UINT32).encode());
    }
    for op in [
        AluOp::BYPASS,
        AluOp::BITWISE_NOT,
        AluOp::BITWISE_AND,
        AluOp::BITWISE_OR,
        AluOp::BITWISE_XOR,
        AluOp::ARITH_SHIFT_LEFT,
        AluOp::ARITH_SHIFT_RIGHT,
        AluOp::LOGICAL_SHIFT_LEFT,
        AluOp::LOGICAL_SHIFT_RIGHT,
    ] {
        for d in [Dtype::INT8, Dtype::UINT16, Dtype::INT32] {
            ok(&g().bitvec(op, d).encode());
        }
    }
    // 0x41 on DVE: hardware predicates pass, then emu_opcode_supported (EC-39).
    fails_on(
        &add().encode(),
        on(Engine::Dve),
        "emu_opcode_supported",
        Some(14),
        &["dve", "EC-39"],
    );
}

#[test]
fn in_place_records_pass_exactly_in_place_ec42() {
    let inplace = Geometry {
        dst: g().src,
        ..g()
    };
    ok(&inplace.copy(Dtype::FP32).encode());
    ok(&inplace.cast(Dtype::INT32, Dtype::FP32).encode());
    // dst over src0, and over src1; the two sources may overlap each other.
    ok(&inplace.arith(AluOp::ADD_INT, Dtype::INT32).encode());
    ok(&Geometry {
        dst: g().src1,
        ..g()
    }
    .arith(AluOp::MULT, Dtype::FP32)
    .encode());
    ok(&Geometry {
        src1: g().src,
        ..g()
    }
    .arith(AluOp::ADD, Dtype::FP32)
    .encode());
}

// ---------------------------------------------------------------------------
// 0x7E IOTA, in §13 order
// ---------------------------------------------------------------------------

#[test]
fn d4_iota_reserved_zero() {
    for (at, name) in [
        (32, "reserved0"),
        (35, "reserved1"),
        (40, "reserved2"),
        (43, "reserved2"),
    ] {
        let r = set(iota().encode(), at, 0x5A);
        fails(&r, "d4_iota_reserved_zero", at as u8, &[name, "0x5A"]);
    }
}

#[test]
fn iota_dtype_invalid_check() {
    for d in [Dtype::INVALID, Dtype::UINT64, Dtype::INT64, Dtype(0x10)] {
        let r = iota_with(|p| p.out_dtype = d);
        fails(
            &r,
            "dtype_invalid_check",
            33,
            &["out_dtype", &d.to_string()],
        );
    }
}

#[test]
fn iota_has_valid_active_channel_range() {
    for ch in [0u8, 129, 255] {
        let r = iota_with(|p| p.num_active_channels = ch);
        fails(&r, "has_valid_active_channel_range", 34, &[&ch.to_string()]);
    }
}

#[test]
fn iota_start_addr_active_channels() {
    let r = iota_with(|p| p.dst.addr = sbuf(120, 0));
    fails(
        &r,
        "start_addr_active_channels",
        44,
        &["partition 120", "16"],
    );
}

#[test]
fn iota_tensor4d_valid() {
    // A PSUM write needs a 4-byte dtype (EC-41: PSUM admitted).
    let r = iota_with(|p| {
        p.out_dtype = Dtype::INT16;
        p.dst.addr = psum(0, 0);
    });
    fails(&r, "tensor4d_valid", 44, &["PSUM", "int16"]);
    let r = iota_with(|p| p.dst.addr = Addr4(0x0240_0000));
    fails(&r, "tensor4d_valid", 44, &["0x02400000"]);
    let r = iota_with(|p| p.dst.addr = sbuf(0, 2));
    fails(&r, "tensor4d_valid", 44, &["4-byte aligned"]);
    let r = iota_with(|p| p.dst.num[2] = 0);
    fails(&r, "tensor4d_valid", 44, &["num_elem[2] = 0"]);
}

#[test]
fn d4_iota_same_src_dst_count() {
    let r = iota_with(|p| p.data.num[1] = 2);
    fails(&r, "d4_iota_same_src_dst_count", 12, &["128", "64", "dst"]);
}

#[test]
fn iota_emu_checks() {
    let r = iota_with(|p| p.dst.addr = Addr4(0x2000_2000));
    fails(&r, "emu_addr_mode_supported", 44, &["0x20002000"]);
    let mut r = iota().encode();
    r.set_events(tpb_emu::isa::Events {
        wait_mode: WaitMode::REG_EQ,
        ..Default::default()
    });
    fails_on(&r, T, "emu_event_mode_supported", None, &["0x81"]);
    let r = iota_with(|p| {
        p.out_dtype = Dtype::FP8_EXP4;
    });
    fails(&r, "emu_dtype_supported", 33, &["fp8e4"]);
    // 64 int32 from 224 KiB - 128: bytes [229248, 229504) of 229376 active.
    let r = iota_with(|p| p.dst.addr = sbuf(0, 224 * 1024 - 128));
    fails(
        &r,
        "emu_footprint_in_bounds",
        44,
        &["[229248, 229504)", "229376"],
    );
    // 4096 · 4097 elements per lane > 2^24 (the DATA4D walk is named first).
    let r = iota_with(|p| {
        p.data.num = [4096, 4097, 1, 1];
        p.dst.num = [4096, 4097, 1, 1];
        p.dst.step = [0, 0, 0, 0];
    });
    fails(&r, "emu_kernel_shape", 12, &["16781312"]);
    let r = iota_with(|p| p.dst.step[0] = 0);
    fails(&r, "emu_overlap", 44, &["two outputs"]);
}

// ---------------------------------------------------------------------------
// 0x46 COPY / 0x47 CAST, in §13 order
// ---------------------------------------------------------------------------

#[test]
fn s4d4_tr_reserved_zero() {
    for at in 39..44 {
        fails(
            &set(g().copy(Dtype::FP32).encode(), at, 0x80),
            "s4d4_tr_reserved_zero",
            at as u8,
            &["reserved1", "0x80"],
        );
    }
}

#[test]
fn mask_enable_zero() {
    let r = copy_with(|p| p.mask_enable = 1);
    fails(&r, "mask_enable_zero", 38, &["mask_enable", "0x01"]);
}

#[test]
fn copy_dtype_checks() {
    for d in [Dtype::INVALID, Dtype::UINT64, Dtype::INT64, Dtype(0x42)] {
        let r = cast_with(|p| p.in_dtype = d);
        fails(&r, "dtype_invalid_check", 32, &["in_dtype", &d.to_string()]);
        let r = cast_with(|p| p.out_dtype = d);
        fails(
            &r,
            "dtype_invalid_check",
            33,
            &["out_dtype", &d.to_string()],
        );
    }
    let r = cast_with(|p| p.in_dtype = Dtype::FP32R);
    fails(&r, "dtype_fp32r_illegal_check", 32, &["fp32r"]);
}

#[test]
fn copy_is_valid_enum() {
    let r = copy_with(|p| p.op = AluOp(0x1E));
    fails(&r, "is_valid_enum", 36, &["op", "0x1E"]);
}

#[test]
fn is_zero_subdim() {
    for d in [1u8, 3, 5, 0x40] {
        let r = copy_with(|p| p.op_dim = PoolDim(d));
        fails(
            &r,
            "is_zero_subdim",
            37,
            &["op_dim", &PoolDim(d).to_string()],
        );
    }
}

#[test]
fn copy_has_valid_active_channel_range() {
    let r = copy_with(|p| p.num_active_channels = 0);
    fails(&r, "has_valid_active_channel_range", 34, &[": 0;"]);
}

#[test]
fn copy_start_addr_active_channels() {
    let r = copy_with(|p| p.src.addr = sbuf(113, 0));
    fails(&r, "start_addr_active_channels", 12, &["partition 113"]);
    let r = copy_with(|p| p.dst.addr = psum(127, 0));
    fails(&r, "start_addr_active_channels", 44, &["partition 127"]);
}

#[test]
fn copy_tensor4d_valid() {
    let r = copy_with(|p| p.src.addr = Addr4(0x8000_0040));
    fails(&r, "tensor4d_valid", 12, &["register-mode", "0x80000040"]);
    let r = cast_with(|p| p.dst.addr = psum(0, 0));
    fails(&r, "tensor4d_valid", 44, &["PSUM", "bf16"]);
    let r = copy_with(|p| p.dst.num[0] = 0);
    fails(&r, "tensor4d_valid", 44, &["num_elem[0] = 0"]);
}

#[test]
fn s4d4_tr_same_src_dst_count() {
    let r = copy_with(|p| p.src.num[3] = 2);
    fails(&r, "s4d4_tr_same_src_dst_count", 12, &["128", "64"]);
}

#[test]
fn s4d4_tr_op_bypass() {
    let r = copy_with(|p| p.op = AluOp::ADD);
    fails(&r, "s4d4_tr_op_bypass", 36, &["add", "COPY"]);
}

#[test]
fn s4d4_tr_same_src_dst_type() {
    let r = copy_with(|p| p.out_dtype = Dtype::BFLOAT16);
    fails(&r, "s4d4_tr_same_src_dst_type", 33, &["fp32", "bf16"]);
    // CAST omits it.
    ok(&cast_with(|_| {}));
}

#[test]
fn has_zero_negated_field() {
    let r = cast_with(|p| p.negated = 3);
    fails(&r, "has_zero_negated_field", 35, &["negated", "0x03"]);
}

#[test]
fn copy_cast_emu_checks() {
    let r = copy_with(|p| p.dst.addr = Addr4(0x4000_2000));
    fails(&r, "emu_addr_mode_supported", 44, &["0x40002000"]);
    // EC-46: FP8 on either side of a converting CAST.
    let r = g().cast(Dtype::FP8_EXP3, Dtype::FP32).encode();
    fails(&r, "emu_dtype_supported", 32, &["fp8e3"]);
    let r = g().cast(Dtype::FP16, Dtype::FP8_EXP5).encode();
    fails(&r, "emu_dtype_supported", 33, &["fp8e5"]);
    let r = copy_with(|p| p.src.addr = psum(0, 16 * 1024 - 4));
    fails(&r, "emu_footprint_in_bounds", 12, &["psum", "16384"]);
    let r = copy_with(|p| {
        p.src.num = [4097, 4096, 1, 1];
        p.src.step = [0, 0, 0, 0];
        p.dst.num = [4097, 4096, 1, 1];
    });
    fails(&r, "emu_kernel_shape", 12, &["16781312"]);
}

#[test]
fn copy_emu_overlap_ec42() {
    // Shifted by one element: bytes shared at different positions.
    let r = copy_with(|p| p.dst.addr = sbuf(0, 4));
    fails(&r, "emu_overlap", 44, &["EC-42", "offset 4"]);
    // Same bytes but a different lane: src from partition 0, dst from partition 1.
    let r = copy_with(|p| {
        p.src.addr = sbuf(0, 0);
        p.dst.addr = sbuf(1, 0);
    });
    fails(&r, "emu_overlap", 44, &["EC-42"]);
    // A broadcast source element reused at other positions.
    let r = copy_with(|p| {
        p.src.step[0] = 0;
        p.dst.addr = p.src.addr;
    });
    fails(&r, "emu_overlap", 44, &["EC-42", "offset 0"]);
    // Same address, different sizes (CAST fp32 -> bf16 in place).
    let r = cast_with(|p| p.dst.addr = p.src.addr);
    fails(&r, "emu_overlap", 44, &["EC-42"]);
    // Two dst elements sharing a byte.
    let r = copy_with(|p| p.dst.step[0] = 0);
    fails(&r, "emu_overlap", 44, &["two outputs"]);
}

// ---------------------------------------------------------------------------
// 0x41 / 0x51 tensor-tensor, in §13 order
// ---------------------------------------------------------------------------

#[test]
fn tt_dtype_invalid_check() {
    let r = tt_with(|p| p.out_dtype = Dtype::INVALID);
    fails(&r, "dtype_invalid_check", 13, &["out_dtype", "invalid"]);
    let r = tt_with(|p| p.out_dtype = Dtype(0x10));
    fails(&r, "dtype_invalid_check", 13, &["0x10"]);
    let r = tt_with(|p| p.in_dtypes = DtypePair::new(Dtype::INVALID, Dtype::INT32));
    fails(&r, "dtype_invalid_check", 12, &["src0", "invalid"]);
    let r = tt_with(|p| p.in_dtypes = DtypePair::new(Dtype::INT32, Dtype::INVALID));
    fails(&r, "dtype_invalid_check", 12, &["src1", "invalid"]);
}

#[test]
fn tt_dtype_fp32r_illegal_check() {
    let r = tt_with(|p| {
        p.op = AluOp::ADD;
        p.in_dtypes = DtypePair::new(Dtype::FP32, Dtype::FP32R);
    });
    fails(&r, "dtype_fp32r_illegal_check", 12, &["src1", "fp32r"]);
}

#[test]
fn tt_is_valid_enum() {
    for op in [0x1Eu8, 0x20, 0xC3, 0xE2, 0xFF] {
        let r = tt_with(|p| p.op = AluOp(op));
        fails(&r, "is_valid_enum", 14, &[&format!("0x{op:02X}")]);
    }
}

#[test]
fn s3s3d3_tt_valid_op() {
    // 0x41: outside is_general_arith_op, POW and is_valid_int_aluop.
    for op in [
        AluOp::DIVIDE,
        AluOp::RSQRT,
        AluOp::BITWISE_AND,
        AluOp::CRC32,
        AluOp::ABS_VALUE_INT,
        AluOp::AMAX_UINT,
    ] {
        let r = tt_with(|p| p.op = op);
        fails(
            &r,
            "s3s3d3_tt_valid_op",
            14,
            &[&op.to_string(), "TENSOR_TENSOR_ARITH"],
        );
    }
    // 0x51: outside is_general_bitvec_op.
    for op in [AluOp::ADD, AluOp::CRC32, AluOp::ADD_INT] {
        let r = g().bitvec(op, Dtype::INT32).encode();
        fails(
            &r,
            "s3s3d3_tt_valid_op",
            14,
            &[&op.to_string(), "TENSOR_TENSOR_BITVEC"],
        );
    }
}

#[test]
fn s3s3d3_tt_dtype() {
    let r = g().bitvec(AluOp::BITWISE_AND, Dtype::FP32).encode();
    fails(&r, "s3s3d3_tt_dtype", 13, &["fp32"]);
}

#[test]
fn s3s3d3_tt_src_dst_dtype() {
    let r = g()
        .tensor_tensor(
            Opcode::TENSOR_TENSOR_BITVEC,
            AluOp::BITWISE_OR,
            Dtype::INT32,
            Dtype::INT32,
            Dtype::INT16,
        )
        .encode();
    fails(&r, "s3s3d3_tt_src_dst_dtype", 12, &["int32", "int16"]);
    // The 64-bit shift exception passes it (and is then EC-53's).
    let r = g()
        .tensor_tensor(
            Opcode::TENSOR_TENSOR_BITVEC,
            AluOp::LOGICAL_SHIFT_LEFT,
            Dtype::INT64,
            Dtype::UINT32,
            Dtype::INT64,
        )
        .encode();
    fails(&r, "emu_dtype_supported", 12, &["int64"]);
}

#[test]
fn s3s3d3_tt_valid_int_signness() {
    // A float operand, mixed signedness, or an op of the other signedness.
    let r = g().arith(AluOp::ADD_INT, Dtype::FP32).encode();
    fails(&r, "s3s3d3_tt_valid_int_signness", 12, &["add_int", "fp32"]);
    let r = g()
        .tensor_tensor(
            Opcode::TENSOR_TENSOR_ARITH,
            AluOp::ADD_INT,
            Dtype::INT32,
            Dtype::UINT32,
            Dtype::INT32,
        )
        .encode();
    fails(&r, "s3s3d3_tt_valid_int_signness", 12, &["uint32"]);
    let r = g().arith(AluOp::MAX_UINT, Dtype::INT32).encode();
    fails(&r, "s3s3d3_tt_valid_int_signness", 12, &["max_uint"]);
    let r = g().arith(AluOp::MAX_INT, Dtype::UINT32).encode();
    fails(&r, "s3s3d3_tt_valid_int_signness", 12, &["max_int"]);
    // MOD is in is_valid_int_aluop (C-20's list).
    let r = g().arith(AluOp::MOD, Dtype::FP32).encode();
    fails(&r, "s3s3d3_tt_valid_int_signness", 12, &["mod"]);
}

#[test]
fn tt_has_valid_active_channel_range() {
    let r = tt_with(|p| p.num_active_channels = 200);
    fails(&r, "has_valid_active_channel_range", 15, &["200"]);
}

#[test]
fn tt_start_addr_active_channels() {
    let r = tt_with(|p| p.src1.addr = sbuf(125, 0x1000));
    fails(&r, "start_addr_active_channels", 32, &["partition 125"]);
}

#[test]
fn tensor3d_valid() {
    let r = tt_with(|p| p.src0.addr = sbuf(0, 1));
    fails(&r, "tensor3d_valid", 16, &["aligned"]);
    let r = tt_with(|p| p.dst.num[2] = 0);
    fails(&r, "tensor3d_valid", 48, &["num_elem[2] = 0"]);
    let r = tt_with(|p| p.src1.addr = Addr4(0x1FFF_FFFC));
    fails(&r, "tensor3d_valid", 32, &["neither SBUF nor PSUM"]);
}

#[test]
fn s3s3d3_tt_src_element_cnt_check() {
    let r = tt_with(|p| p.src1.num[1] = 2);
    fails(
        &r,
        "s3s3d3_tt_src_element_cnt_check",
        32,
        &["128", "src0", "64"],
    );
    // Skipped when an address takes its shape from a register (bit 30):
    // emu_addr_mode_supported rejects the record instead.
    let r = tt_with(|p| {
        p.src1.num[1] = 2;
        p.src1.addr = Addr4(p.src1.addr.0 | 1 << 30);
    });
    fails(&r, "emu_addr_mode_supported", 32, &["0x40001000"]);
}

#[test]
fn s3s3d3_tt_dst_element_cnt_check() {
    let r = tt_with(|p| p.dst.num[2] = 3);
    fails(&r, "s3s3d3_tt_dst_element_cnt_check", 48, &["192", "64"]);
}

#[test]
fn is_valid_tensor_tensor_arith_pool() {
    // Base-band ops other than ADD/SUBTRACT/MULT/POW are DVE forms.
    for op in [AluOp::MAX, AluOp::BYPASS, AluOp::IS_EQ, AluOp::LOGICAL_AND] {
        let r = g().arith(op, Dtype::FP32).encode();
        fails(
            &r,
            "is_valid_tensor_tensor_arith_pool",
            14,
            &[&op.to_string()],
        );
        // On DVE the arm is not evaluated: the emulator rejects it (EC-39).
        fails_on(
            &r,
            on(Engine::Dve),
            "emu_opcode_supported",
            Some(14),
            &["EC-39"],
        );
    }
    // An int op on 16-bit integers.
    let r = g().arith(AluOp::ADD_INT, Dtype::INT16).encode();
    fails(&r, "is_valid_tensor_tensor_arith_pool", 14, &["int16"]);
    // A PSUM operand on POOL (EC-41), for 0x41 and for 0x51 (EC-52).
    let r = tt_with(|p| p.src0.addr = psum(0, 0));
    fails(
        &r,
        "is_valid_tensor_tensor_arith_pool",
        16,
        &["0x02000000", "SBUF"],
    );
    let r = Geometry {
        dst: psum(0, 0),
        ..g()
    }
    .bitvec(AluOp::BITWISE_XOR, Dtype::INT32)
    .encode();
    fails(&r, "is_valid_tensor_tensor_arith_pool", 48, &["0x02000000"]);
}

#[test]
fn tt_emu_opcode_supported() {
    // EC-49: POOL-legal 0x41 forms that are not executed.
    for (op, d) in [
        (AluOp::POW, Dtype::FP32),
        (AluOp::MOD, Dtype::INT32),
        (AluOp::DIVIDE_INT, Dtype::INT32),
        (AluOp::DIVIDE_UINT, Dtype::UINT32),
        (AluOp::MOD_INT, Dtype::INT32),
        (AluOp::MOD_UINT, Dtype::UINT32),
        (AluOp::ABS_MAX_INT, Dtype::INT32),
        (AluOp::ABS_MIN_INT, Dtype::INT32),
        (AluOp::ABS_DIFF_INT, Dtype::INT32),
    ] {
        let r = g().arith(op, d).encode();
        fails(&r, "emu_opcode_supported", 14, &[&op.to_string(), "EC-49"]);
    }
    // EC-58: no 0x51 row on SUNDA; 0x41 has one.
    let sunda = Target::pool(Arch::Sunda);
    let r = g().bitvec(AluOp::BITWISE_AND, Dtype::INT32).encode();
    fails_on(
        &r,
        sunda,
        "emu_opcode_supported",
        Some(14),
        &["sunda", "EC-58"],
    );
    ok_on(&add().encode(), sunda);
}

#[test]
fn tt_emu_dtype_supported() {
    // EC-53: 64-bit operands pass the hardware predicates, then stop here.
    let r = g().arith(AluOp::ADD_INT, Dtype::INT64).encode();
    fails(&r, "emu_dtype_supported", 12, &["src0", "int64"]);
    let r = g().arith(AluOp::MULT_UINT, Dtype::UINT64).encode();
    fails(&r, "emu_dtype_supported", 12, &["uint64"]);
    // FP8 on the base f32 path (EC-44, EC-51).
    let r = g()
        .tensor_tensor(
            Opcode::TENSOR_TENSOR_ARITH,
            AluOp::ADD,
            Dtype::FP32,
            Dtype::FP32,
            Dtype::FP8_EXP4,
        )
        .encode();
    fails(&r, "emu_dtype_supported", 13, &["out_dtype", "fp8e4"]);
}

#[test]
fn tt_emu_footprint_shape_overlap() {
    // 64 int32 from 224 KiB - 64: bytes [229312, 229568).
    let r = tt_with(|p| p.src1.addr = sbuf(0, 224 * 1024 - 64));
    fails(
        &r,
        "emu_footprint_in_bounds",
        32,
        &["[229312, 229568)", "229376"],
    );
    let r = tt_with(|p| {
        for t in [&mut p.src0, &mut p.src1, &mut p.dst] {
            *t = tpb_emu::isa::Tensor3d::new(t.addr, [(4096, 0), (4097, 0), (1, 0)]);
        }
    });
    fails(&r, "emu_kernel_shape", 16, &["16781312"]);
    // dst overlapping src1 one element off.
    let r = tt_with(|p| p.dst = row3(sbuf(0, 0x1004), 64));
    fails(&r, "emu_overlap", 48, &["EC-42", "offset 4100"]);
}

// ---------------------------------------------------------------------------
// Messages, streams, and random input
// ---------------------------------------------------------------------------

#[test]
fn stream_message_names_predicate_field_offset_and_value() {
    let mut bytes = add().encode().0.to_vec();
    bytes.extend_from_slice(&tt_with(|p| p.op = AluOp::DIVIDE).0);
    let e = validate_stream(&bytes, T).unwrap_err().to_string();
    assert_eq!(
        e,
        "Found invalid instruction! opcode=65, offset=64: s3s3d3_tt_valid_op \
         (op byte 14: divide is not an op of TENSOR_TENSOR_ARITH)"
    );
}

/// A record of one of the new opcodes: random bytes, or a valid record with
/// a few random bytes changed.
fn random_kernel_record(rng: &mut fastrand::Rng) -> Record {
    const OPS: [u8; 5] = [0x7E, 0x46, 0x47, 0x41, 0x51];
    if rng.bool() {
        let mut r = Record::default();
        rng.fill(&mut r.0);
        r.0[0] = OPS[rng.usize(..OPS.len())];
        if rng.bool() {
            r.0[1] = 16;
            r.0[4..12].fill(0);
        }
        return r;
    }
    let base = match rng.u8(..5) {
        0 => iota().encode(),
        1 => g().copy(Dtype::FP32).encode(),
        2 => g().cast(Dtype::INT32, Dtype::FP16).encode(),
        3 => add().encode(),
        _ => g().bitvec(AluOp::ARITH_SHIFT_RIGHT, Dtype::INT8).encode(),
    };
    let mut r = base;
    for _ in 0..rng.usize(1..4) {
        let w = [1usize, 2, 4][rng.usize(..3)];
        let at = rng.usize(12..=64 - w);
        for b in &mut r.0[at..at + w] {
            *b = rng.u8(..);
        }
    }
    r
}

#[test]
fn random_kernel_records_never_panic_and_round_trip() {
    let mut rng = fastrand::Rng::with_seed(0x4B45_524E);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..100_000 {
        let r = random_kernel_record(&mut rng);
        assert_eq!(Inst::decode(&r).encode(), r);
        assert_eq!(S4d4Tr::decode(&r).encode(), r);
        assert_eq!(D4Iota::decode(&r).encode(), r);
        assert_eq!(S3s3d3Tt::decode(&r).encode(), r);
        let t = Target {
            engine: Engine::ALL[rng.usize(..5)],
            arch: Arch::ALL[rng.usize(..3)],
        };
        let res = check(&r, t);
        assert_eq!(res.is_ok(), is_valid(&r, t));
        match res {
            Ok(()) => {
                seen.insert("ok");
            }
            Err(f) => {
                assert!(!f.detail().is_empty());
                seen.insert(f.predicate());
            }
        }
        let text = disasm_record(&r);
        assert_eq!(asm(&text).unwrap(), [r], "{text}");
    }
    // The mutations reached deep into every kernel's tree.
    for p in [
        "ok",
        "d4_iota_reserved_zero",
        "s4d4_tr_reserved_zero",
        "d4_iota_same_src_dst_count",
        "s4d4_tr_same_src_dst_count",
        "s3s3d3_tt_valid_op",
        "s3s3d3_tt_dst_element_cnt_check",
        "tensor3d_valid",
        "tensor4d_valid",
        "emu_footprint_in_bounds",
        "emu_overlap",
    ] {
        assert!(seen.contains(p), "no mutation reached {p}: {seen:?}");
    }
}

#[test]
fn events_on_kernel_records_are_honoured_by_validation() {
    // A valid wait and update pass; an unknown update byte fails step 4.
    let mut r = add().encode();
    r.set_events(tpb_emu::isa::Events {
        wait_mode: WaitMode::SEM_GE,
        wait_idx: 1,
        update_mode: UpdateMode::SEM_INC,
        update_idx: 2,
        semaphore_value: 3,
    });
    ok(&r);
    r.0[6] = 0x06;
    fails_on(&r, T, "valid_event_modes", None, &["0x06"]);
    // 0x46 in a PE stream: instruction_engine_check (EC-39 admits POOL, ACT, DVE).
    fails_on(
        &g().copy(Dtype::FP32).encode(),
        on(Engine::Pe),
        "instruction_engine_check",
        None,
        &["pe"],
    );
    let _ = row4(sbuf(0, 0), 1);
}

// ---------------------------------------------------------------------------
// Issue (2): 0x7C/0x7D, 0xBE, 0xF2, 0xF0 specs 0 and 2
// ---------------------------------------------------------------------------

mod issue2 {
    use super::*;
    use tpb_emu::isa::{
        EngineNop, ExtTta, ImmSrc, ReduceAxis, ReduceOp, S3d3NonzeroWithCount, S3d3SeqBounds,
        S4d4Cr, Tensor3d, Tensor4d,
    };

    fn clr() -> S4d4Cr {
        g().cross_lane_reduce(
            ReduceOp::ADD,
            ReduceAxis::PARTITIONS,
            Dtype::FP32,
            Dtype::FP32,
            1.0,
        )
    }

    edited!(clr_with, S4d4Cr, clr());

    fn gsb() -> S3d3SeqBounds {
        g().sequence_bounds(Dtype::INT32, Dtype::INT32)
    }

    edited!(gsb_with, S3d3SeqBounds, gsb());

    fn nz() -> S3d3NonzeroWithCount {
        g().nonzero_with_count(Dtype::INT32, 16, -1)
    }

    edited!(nz_with, S3d3NonzeroWithCount, nz());

    fn tta() -> ExtTta {
        g().ext_tta(1, AluOp::ADD, Dtype::FP32)
    }

    edited!(tta_with, ExtTta, tta());

    #[test]
    fn valid_records_pass() {
        for (op, d) in [
            (ReduceOp::ADD, Dtype::INT8),
            (ReduceOp::AVERAGE, Dtype::BFLOAT16),
            (ReduceOp::MAX, Dtype::UINT32),
            (ReduceOp::BITWISE_OR, Dtype::UINT8),
            (ReduceOp::BITWISE_AND, Dtype::INT16),
            (ReduceOp::BITWISE_XOR, Dtype::INT32),
        ] {
            for axis in [ReduceAxis::ALL, ReduceAxis::PARTITIONS] {
                ok(&g().cross_lane_reduce(op, axis, d, d, 0.5).encode());
            }
        }
        ok(&gsb().encode());
        ok(&g().sequence_bounds(Dtype::FP32, Dtype::INT32).encode());
        ok(&nz().encode());
        ok(&g().nonzero_with_count(Dtype::FP32, 0, 0).encode());
        // EC-56: no processed lane (src from partition 1, 8 lanes): valid, writes nothing.
        ok(&nz_with(|p| {
            p.num_active_channels = 8;
            p.src.addr = sbuf(1, 0);
            p.dst.addr = sbuf(1, 0);
        }));
        for ports in 0..8 {
            ok(&g().engine_nop(ports).encode());
        }
        ok(&g().ext_tta(0, AluOp::MULT, Dtype::INT16).encode());
        ok(&Geometry {
            dst: g().src,
            ..g()
        }
        .ext_tta(2, AluOp::ADD, Dtype::FP32)
        .encode());
    }

    // 0x7C / 0x7D in §13 order.

    #[test]
    fn s4d4_cr_reserved_zero() {
        for at in 37..40 {
            fails(
                &set(clr().encode(), at, 9),
                "s4d4_cr_reserved_zero",
                at as u8,
                &["0x09"],
            );
        }
    }

    #[test]
    fn clr_is_valid_enum() {
        let r = clr_with(|p| p.reduce_op = ReduceOp(6));
        fails(
            &r,
            "is_valid_enum",
            35,
            &["reduce_op", "0x06 is not a REDUCE_OP"],
        );
    }

    #[test]
    fn clr_dtypes() {
        let r = clr_with(|p| p.in_dtype = Dtype::FP32R);
        fails(&r, "dtype_fp32r_illegal_check", 32, &["fp32r"]);
        let r = clr_with(|p| p.out_dtype = Dtype::INT64);
        fails(&r, "dtype_invalid_check", 33, &["int64"]);
    }

    #[test]
    fn clr_start_addr_active_channels() {
        let r = clr_with(|p| p.src.addr = sbuf(120, 0));
        fails(
            &r,
            "start_addr_active_channels",
            12,
            &["partition 120", "16"],
        );
        // dst spans one partition: partition 127 is fine.
        ok(&clr_with(|p| p.dst.addr = sbuf(127, 0x2000)));
    }

    #[test]
    fn check_active_channels() {
        let r = clr_with(|p| p.num_active_channels = 0);
        fails(&r, "check_active_channels", 34, &["0; must be 1..=128"]);
        let r = nz_with(|p| p.num_active_channels = 130);
        fails(&r, "check_active_channels", 12, &["130"]);
    }

    #[test]
    fn clr_tensor4d_valid_sbuf_only() {
        let r = clr_with(|p| p.src.addr = psum(0, 0));
        fails(&r, "tensor4d_valid", 12, &["PSUM", "SBUF-only"]);
        let r = clr_with(|p| p.dst.num[1] = 0);
        fails(&r, "tensor4d_valid", 44, &["num_elem[1] = 0"]);
    }

    #[test]
    fn valid_reduce_axis_enum() {
        let r = clr_with(|p| p.reduce_axis = ReduceAxis(2));
        fails(&r, "valid_reduce_axis_enum", 36, &["2"]);
    }

    #[test]
    fn valid_axis_dst_element_cnt() {
        // Partitions: count(dst) == count(src).
        let r = clr_with(|p| p.dst.num[0] = 63);
        fails(&r, "valid_axis_dst_element_cnt", 44, &["63", "64"]);
        // All: one element, unless the dst shape comes from a register.
        let r = clr_with(|p| p.reduce_axis = ReduceAxis::ALL);
        fails(&r, "valid_axis_dst_element_cnt", 44, &["holds 64"]);
        let r = clr_with(|p| {
            p.reduce_axis = ReduceAxis::ALL;
            p.dst.addr = Addr4(p.dst.addr.0 | 1 << 30);
        });
        fails(&r, "emu_addr_mode_supported", 44, &["0x40002000"]);
    }

    #[test]
    fn clr_emu_opcode_and_dtype() {
        // EC-54: a bitwise op on 0x7C, an arith op on 0x7D.
        let r = clr_with(|p| p.reduce_op = ReduceOp::BITWISE_OR);
        fails(&r, "emu_opcode_supported", 35, &["bitwise_or", "EC-54"]);
        let r = clr_with(|p| p.header.opcode = Opcode::CROSS_LANE_REDUCE_BITVEC);
        fails(&r, "emu_opcode_supported", 35, &["add"]);
        // FP8 on 0x7C; unequal or non-integer dtypes on 0x7D.
        let r = clr_with(|p| p.in_dtype = Dtype::FP8_EXP4);
        fails(&r, "emu_dtype_supported", 32, &["fp8e4"]);
        let r = g()
            .cross_lane_reduce(
                ReduceOp::BITWISE_AND,
                ReduceAxis::ALL,
                Dtype::INT32,
                Dtype::UINT32,
                1.0,
            )
            .encode();
        fails(&r, "emu_dtype_supported", 33, &["int32", "uint32"]);
        let r = g()
            .cross_lane_reduce(
                ReduceOp::BITWISE_XOR,
                ReduceAxis::ALL,
                Dtype::FP32,
                Dtype::FP32,
                1.0,
            )
            .encode();
        fails(&r, "emu_dtype_supported", 33, &["fp32"]);
    }

    #[test]
    fn clr_emu_footprint_shape_overlap() {
        let r = clr_with(|p| p.dst.addr = sbuf(0, 224 * 1024 - 16));
        fails(&r, "emu_footprint_in_bounds", 44, &["[229360, 229616)"]);
        let r = clr_with(|p| {
            p.src = Tensor4d::new(p.src.addr, [(4097, 0), (4096, 0), (1, 0), (1, 0)]);
            p.dst = Tensor4d::new(p.dst.addr, [(4097, 0), (4096, 0), (1, 0), (1, 0)]);
        });
        fails(&r, "emu_kernel_shape", 12, &["16781312"]);
        // dst's one lane lands on src lane 5's bytes (EC-21).
        let r = clr_with(|p| p.dst.addr = sbuf(5, 0x40));
        fails(&r, "emu_overlap", 44, &["src and dst share", "offset 64"]);
        // The same bytes in a partition src does not touch.
        ok(&clr_with(|p| p.dst.addr = sbuf(16, 0)));
    }

    // 0xBE in §13 order.

    #[test]
    fn has_valid_nc_get_sequence_bounds() {
        let sunda = Target::pool(Arch::Sunda);
        fails_on(
            &gsb().encode(),
            sunda,
            "has_valid_nc_get_sequence_bounds",
            Some(0),
            &["sunda"],
        );
    }

    #[test]
    fn has_valid_s3d3_seq_bounds_channels() {
        let r = gsb_with(|p| p.num_active_channels = 2);
        fails(
            &r,
            "has_valid_s3d3_seq_bounds_channels",
            12,
            &["2; must be 1"],
        );
        let r = gsb_with(|p| p.num_active_channels = 0);
        fails(&r, "check_active_channels", 12, &["0"]);
    }

    #[test]
    fn s3d3_seq_bounds_reserved_zero() {
        for at in [13usize, 48, 63] {
            fails(
                &set(gsb().encode(), at, 1),
                "s3d3_seq_bounds_reserved_zero",
                at as u8,
                &["0x01"],
            );
        }
    }

    #[test]
    fn has_valid_seq_bounds_dtype() {
        let r = gsb_with(|p| p.in_dtype = Dtype::UINT32);
        fails(&r, "has_valid_seq_bounds_dtype", 14, &["uint32"]);
        let r = gsb_with(|p| p.out_dtype = Dtype::FP16);
        fails(&r, "has_valid_seq_bounds_dtype", 15, &["fp16"]);
        // FP32R passes the dtype step and fails here (§13).
        let r = gsb_with(|p| p.out_dtype = Dtype::FP32R);
        fails(
            &r,
            "has_valid_seq_bounds_dtype",
            15,
            &["fp32r", "int32 or fp32"],
        );
        let r = gsb_with(|p| p.in_dtype = Dtype::FP32R);
        fails(&r, "dtype_fp32r_illegal_check", 14, &["fp32r"]);
    }

    #[test]
    fn gsb_tensor3d_valid_and_start() {
        let r = gsb_with(|p| p.dst.addr = psum(0, 0));
        fails(&r, "tensor3d_valid", 32, &["SBUF-only"]);
        let r = gsb_with(|p| p.src.addr = sbuf(0, 2));
        fails(&r, "tensor3d_valid", 16, &["aligned"]);
    }

    #[test]
    fn s3d3_seq_bounds_element_count_check_t3d() {
        let r = gsb_with(|p| p.dst.num[0] = 63);
        fails(
            &r,
            "s3d3_seq_bounds_element_count_check_t3d",
            32,
            &["126", "128"],
        );
        // 2·count(src) elements, but not as a num_elem[2] of 2.
        let r = gsb_with(|p| p.dst = Tensor3d::new(p.dst.addr, [(128, 1), (1, 1), (1, 1)]));
        fails(
            &r,
            "s3d3_seq_bounds_element_count_check_t3d",
            32,
            &["num_elem[2] = 1"],
        );
    }

    #[test]
    fn gsb_emu_overlap() {
        let r = gsb_with(|p| p.dst.addr = p.src.addr);
        fails(&r, "emu_overlap", 32, &["src and dst share"]);
    }

    // 0xF2 in §13 order.

    #[test]
    fn has_valid_nc_nonzero_with_count() {
        let sunda = Target::pool(Arch::Sunda);
        fails_on(
            &nz().encode(),
            sunda,
            "has_valid_nc_nonzero_with_count",
            Some(0),
            &["sunda"],
        );
    }

    #[test]
    fn s3d3_nonzero_with_count_reserved_zero() {
        for at in [37usize, 39, 60, 63] {
            let r = set(nz().encode(), at, 0x11);
            fails(
                &r,
                "s3d3_nonzero_with_count_reserved_zero",
                at as u8,
                &["0x11"],
            );
        }
    }

    #[test]
    fn has_valid_immediates() {
        let r = nz_with(|p| p.index_offset_src = ImmSrc(3));
        fails(&r, "has_valid_immediates", 15, &["3"]);
        let r = nz_with(|p| p.padding_val_src = ImmSrc(0xFF));
        fails(&r, "has_valid_immediates", 36, &["255"]);
    }

    #[test]
    fn has_valid_nonzero_with_count_dtype() {
        let r = nz_with(|p| p.in_dtype = Dtype::INT16);
        fails(&r, "has_valid_nonzero_with_count_dtype", 13, &["int16"]);
        let r = nz_with(|p| p.out_dtype = Dtype::FP32);
        fails(&r, "has_valid_nonzero_with_count_dtype", 14, &["fp32"]);
    }

    #[test]
    fn s3d3_nonzero_with_count_element_count_check_t3d() {
        let r = nz_with(|p| p.dst.num[0] = 64);
        fails(
            &r,
            "s3d3_nonzero_with_count_element_count_check_t3d",
            44,
            &["64", "65"],
        );
    }

    #[test]
    fn nz_emu_checks() {
        // EC-60: pointer and register immediates pass the hardware, then stop here.
        let r = nz_with(|p| p.index_offset_src = ImmSrc::POINTER);
        fails(&r, "emu_addr_mode_supported", 15, &["pointer", "EC-60"]);
        let r = nz_with(|p| p.padding_val_src = ImmSrc::REGISTER);
        fails(&r, "emu_addr_mode_supported", 36, &["register"]);
        // EC-56: footprint and overlap on processed lanes only.
        let r = nz_with(|p| p.dst.addr = sbuf(0, 224 * 1024 - 64));
        fails(&r, "emu_footprint_in_bounds", 44, &["229376"]);
        let r = nz_with(|p| p.dst.addr = p.src.addr);
        fails(&r, "emu_overlap", 44, &["src and dst share"]);
        // src lanes from partition 1: its processed lane is partition 16 (lane 15),
        // which writes dst partition 15+1 = 16 with dst from partition 1: overlap.
        let r = nz_with(|p| {
            p.src.addr = sbuf(1, 0);
            p.dst.addr = sbuf(1, 0);
        });
        fails(&r, "emu_overlap", 44, &["offset 0"]);
        // dst one partition off: lane 15 reads partition 16 and writes partition 17.
        ok(&nz_with(|p| {
            p.src.addr = sbuf(1, 0);
            p.dst.addr = sbuf(2, 0);
        }));
    }

    // 0xF0 in §13 order.

    #[test]
    fn extended_specs_without_a_struct_stop_at_step_5() {
        for spec in [1u8, 3, 4, 5, 200] {
            let r = set(g().engine_nop(0).encode(), 12, spec);
            fails_on(&r, T, "emu_opcode_supported", None, &["EXTENDED_INST"]);
        }
    }

    #[test]
    fn extended_reserved_zero() {
        // ENGINE_NOP: completion_info bits 1, 6, 7; bytes 14..63.
        for bit in [1u8, 6, 7] {
            let r = set(g().engine_nop(1).encode(), 13, 1 << bit | 8);
            fails(&r, "reserved_zero", 13, &["completion_info"]);
        }
        for at in [14usize, 40, 63] {
            fails(
                &set(g().engine_nop(0).encode(), at, 5),
                "reserved_zero",
                at as u8,
                &["0x05"],
            );
        }
        // EXTENDED_TTA: completion bits, bytes 17..19, 56..63.
        for at in [17usize, 19, 56, 63] {
            fails(
                &set(tta().encode(), at, 5),
                "reserved_zero",
                at as u8,
                &["0x05"],
            );
        }
        let r = set(tta().encode(), 13, 0x0A);
        fails(&r, "reserved_zero", 13, &["0x0A"]);
    }

    #[test]
    fn ext_tta_valid_op() {
        for op in [AluOp::SUBTRACT, AluOp::ADD_INT, AluOp(0x77)] {
            let r = tta_with(|p| p.op = op);
            fails(&r, "ext_tta_valid_op", 16, &[&op.to_string()]);
        }
    }

    #[test]
    fn ext_tta_dtypes() {
        let r = tta_with(|p| p.out_dtype = Dtype::UINT64);
        fails(&r, "dtype_invalid_check", 15, &["uint64"]);
        let r = tta_with(|p| p.in_dtypes = DtypePair::new(Dtype::FP32R, Dtype::FP32));
        fails(&r, "dtype_fp32r_illegal_check", 14, &["src0"]);
        let r = tta_with(|p| p.in_dtypes = DtypePair::new(Dtype::FP32, Dtype::INT64));
        fails(&r, "dtype_invalid_check", 14, &["src1", "int64"]);
    }

    #[test]
    fn ext_tta_lanes_and_tensor2d_valid() {
        // EC-55: 3 ports = 48 lanes from partition 96 is too many.
        let r = tta_with(|p| {
            p.completion_info = 3 << 3;
            p.src1.addr = sbuf(96, 0x1000);
        });
        fails(
            &r,
            "start_addr_active_channels",
            32,
            &["partition 96", "48"],
        );
        // 0 ports = 128 lanes.
        let r = tta_with(|p| {
            p.completion_info = 0;
            p.dst.addr = sbuf(1, 0x2000);
        });
        fails(&r, "start_addr_active_channels", 44, &["128"]);
        let r = tta_with(|p| p.src0.addr = psum(0, 0));
        fails(&r, "tensor2d_valid", 20, &["SBUF-only"]);
        let r = tta_with(|p| p.dst.num[1] = 0);
        fails(&r, "tensor2d_valid", 44, &["num_elem[1] = 0"]);
    }

    #[test]
    fn ext_tta_element_count() {
        let r = tta_with(|p| p.src1.num[1] = 2);
        fails(&r, "ext_tta_element_count", 32, &["128", "64"]);
        let r = tta_with(|p| p.dst.num[0] = 32);
        fails(&r, "ext_tta_element_count", 44, &["32", "64"]);
    }

    #[test]
    fn extended_emu_checks() {
        let sunda = Target::pool(Arch::Sunda);
        fails_on(
            &g().engine_nop(0).encode(),
            sunda,
            "emu_opcode_supported",
            Some(12),
            &["EC-58"],
        );
        fails_on(
            &tta().encode(),
            sunda,
            "emu_opcode_supported",
            Some(12),
            &["EC-58"],
        );
        let r = tta_with(|p| p.in_dtypes = DtypePair::new(Dtype::FP8_EXP3, Dtype::FP32));
        fails(&r, "emu_dtype_supported", 14, &["fp8e3"]);
        let r = tta_with(|p| p.dst.addr = sbuf(0, 4));
        fails(&r, "emu_overlap", 44, &["EC-42"]);
        let r = tta_with(|p| p.src0.addr = Addr4(0x8000_0003));
        fails(&r, "emu_addr_mode_supported", 20, &["0x80000003"]);
    }

    #[test]
    fn random_records_never_panic_and_round_trip() {
        let mut rng = fastrand::Rng::with_seed(0x4B45_524F);
        let bases = [
            clr().encode(),
            gsb().encode(),
            nz().encode(),
            g().engine_nop(3).encode(),
            tta().encode(),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..100_000 {
            let mut r = bases[i % bases.len()];
            if rng.u8(..4) == 0 {
                rng.fill(&mut r.0[12..]);
            } else {
                for _ in 0..rng.usize(1..3) {
                    let at = rng.usize(12..64);
                    r.0[at] = rng.u8(..);
                }
            }
            assert_eq!(Inst::decode(&r).encode(), r);
            let t = Target {
                engine: Engine::ALL[rng.usize(..5)],
                arch: Arch::ALL[rng.usize(..3)],
            };
            let res = check(&r, t);
            assert_eq!(res.is_ok(), is_valid(&r, t));
            seen.insert(match res {
                Ok(()) => "ok",
                Err(f) => {
                    assert!(!f.detail().is_empty());
                    f.predicate()
                }
            });
            let text = disasm_record(&r);
            assert_eq!(asm(&text).unwrap(), [r], "{text}");
        }
        for p in [
            "ok",
            "s4d4_cr_reserved_zero",
            "valid_axis_dst_element_cnt",
            "s3d3_seq_bounds_element_count_check_t3d",
            "s3d3_nonzero_with_count_element_count_check_t3d",
            "ext_tta_element_count",
            "reserved_zero",
            "tensor2d_valid",
            "emu_overlap",
        ] {
            assert!(seen.contains(p), "no mutation reached {p}: {seen:?}");
        }
        let _ = (EngineNop::FIELDS, ImmSrc::INLINE);
    }
}
