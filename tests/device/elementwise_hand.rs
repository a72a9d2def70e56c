//! Hand-derived values for the elementwise kernels — Cast (0x47), Copy
//! (0x46), Iota (0x7E), Tensor-Tensor (0x41, 0x51) — on the CPU reference
//! and, when an adapter exists, on the GPU. Every expected value below is
//! worked out by hand from SPEC §6 and SPEC-KERNELS EC-44 … EC-52.

use crate::hand::*;
use tpb_emu::device::DeviceMemory;
use tpb_emu::isa::enums::{AluOp, Dtype};
use tpb_emu::isa::tensor::{Data4d, Tensor3d};
use tpb_emu::isa::{Addr4, D4Iota, Opcode, Region, S3s3d3Tt, S4d4Tr, Tensor4d};

/// Casts `src` (raw bytes of `n` elements of `from`) to `to`; the raw result.
fn cast(op: Opcode, from: Dtype, to: Dtype, src: &[u8]) -> Vec<u8> {
    let (si, so) = (from.size().unwrap() as usize, to.size().unwrap() as usize);
    let n = src.len() / si;
    let mut mem = DeviceMemory::new(ARCH);
    put(&mut mem, 0, 0, src);
    // Poison the output so an unwritten byte shows.
    put(&mut mem, 0, 0x800, &vec![0xA5; n * so + 8]);
    let r = S4d4Tr::new(
        op,
        from,
        to,
        1,
        row(sbuf(0, 0), n as u16),
        row(sbuf(0, 0x800), n as u16),
    );
    let out = run(&[r.encode()], &mem);
    let got = get(&out, 0, 0x800, n * so + 8);
    assert_eq!(
        &got[n * so..],
        &[0xA5; 8],
        "bytes past the output untouched"
    );
    got[..n * so].to_vec()
}

#[test]
fn cast_fp32_to_bf16_rounds_to_nearest_even_and_keeps_specials() {
    let src = [
        0x3F80_0000, // 1.0
        0x3F80_8000, // 1 + 2^-8: a tie, even stays → 1.0
        0x3F81_8000, // tie, odd rounds up
        0x3F80_8001, // above the tie → up
        0x7FC0_0001, // NaN with payload → canonical (EC-20)
        0x7F80_0000, // +inf
        0x8000_0000, // -0
        0x0000_0001, // subnormal → +0 (EC-19)
        0x8000_0001, // negative subnormal → -0
        0x7F7F_FFFF, // max finite rounds up to inf
    ];
    let got = cast(Opcode::CAST, Dtype::FP32, Dtype::BFLOAT16, &le32(&src));
    let want = le16(&[
        0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x7FC0, 0x7F80, 0x8000, 0x0000, 0x8000, 0x7F80,
    ]);
    assert_eq!(got, want);
}

#[test]
fn cast_float_to_int_truncates_saturates_and_zeroes_nan() {
    let f = |x: f32| x.to_bits();
    let src = [
        f(300.0),
        f(-300.5),
        f32::NAN.to_bits(),
        f(2.9),
        f(-2.9),
        f(-0.0),
    ];
    let got = cast(Opcode::CAST, Dtype::FP32, Dtype::INT8, &le32(&src));
    assert_eq!(got, [127, 0x80, 0, 2, 0xFE, 0]);
    let src = [
        f(-1.5),
        0x4F80_0000,
        f(3e9),
        f32::INFINITY.to_bits(),
        0xFF80_0000,
    ];
    let got = cast(Opcode::CAST, Dtype::FP32, Dtype::UINT32, &le32(&src));
    assert_eq!(got, le32(&[0, 0xFFFF_FFFF, 3_000_000_000, 0xFFFF_FFFF, 0]));
    let src = [f(1e10), f(-1e10), f(-2147483648.0)];
    let got = cast(Opcode::CAST, Dtype::FP32, Dtype::INT32, &le32(&src));
    assert_eq!(got, le32(&[0x7FFF_FFFF, 0x8000_0000, 0x8000_0000]));
}

#[test]
fn cast_int_to_int_goes_through_f32() {
    // EC-46: INT32 16777217 → f32 16777216 → UINT32 16777216.
    let got = cast(
        Opcode::CAST,
        Dtype::INT32,
        Dtype::UINT32,
        &le32(&[16_777_217, 0xFFFF_FFFF]),
    );
    assert_eq!(got, le32(&[16_777_216, 0])); // -1 saturates to 0
    // UINT32 0x80000000 → INT32 saturated.
    let got = cast(
        Opcode::CAST,
        Dtype::UINT32,
        Dtype::INT32,
        &le32(&[0x8000_0000]),
    );
    assert_eq!(got, le32(&[0x7FFF_FFFF]));
    // UINT8 200 → INT8 saturates to 127; INT8 -1 → UINT16 0.
    assert_eq!(
        cast(Opcode::CAST, Dtype::UINT8, Dtype::INT8, &[200, 7]),
        [127, 7]
    );
    assert_eq!(
        cast(Opcode::CAST, Dtype::INT8, Dtype::UINT16, &[0xFF]),
        le16(&[0])
    );
    // INT16 -32768 → INT8 -128; UINT16 65535 → INT16 32767.
    assert_eq!(
        cast(Opcode::CAST, Dtype::INT16, Dtype::INT8, &le16(&[0x8000])),
        [0x80]
    );
    assert_eq!(
        cast(Opcode::CAST, Dtype::UINT16, Dtype::INT16, &le16(&[0xFFFF])),
        le16(&[0x7FFF])
    );
}

#[test]
fn cast_to_and_from_fp16() {
    // INT32 2049 → f32 2049 → fp16 2048 (ties to even); 65520 → inf; -65504 stays.
    let got = cast(
        Opcode::CAST,
        Dtype::INT32,
        Dtype::FP16,
        &le32(&[2049, 65520, (-65504i32) as u32]),
    );
    assert_eq!(got, le16(&[0x6800, 0x7C00, 0xFBFF]));
    // fp16 subnormal 2^-24 → f32 normal 0x33800000; fp16 NaN → canonical f32.
    let got = cast(
        Opcode::CAST,
        Dtype::FP16,
        Dtype::FP32,
        &le16(&[0x0001, 0x7E01, 0xFC00, 0x8000]),
    );
    assert_eq!(
        got,
        le32(&[0x3380_0000, 0x7FC0_0000, 0xFF80_0000, 0x8000_0000])
    );
    // f32 2^-25 (a tie between 0 and the smallest fp16 subnormal) → 0; 3·2^-26 → 2^-24.
    let got = cast(
        Opcode::CAST,
        Dtype::FP32,
        Dtype::FP16,
        &le32(&[0x3300_0000, 0x3340_0000]),
    );
    assert_eq!(got, le16(&[0x0000, 0x0001]));
    // bf16 subnormals flush on load (EC-19): 0x0001 → +0, 0x8001 → -0.
    let got = cast(
        Opcode::CAST,
        Dtype::BFLOAT16,
        Dtype::FP32,
        &le16(&[0x0001, 0x8001, 0x3F80]),
    );
    assert_eq!(got, le32(&[0, 0x8000_0000, 0x3F80_0000]));
}

#[test]
fn equal_dtypes_copy_bits_without_canonicalising() {
    // EC-46: a Cast between equal dtypes is a bit copy: NaN payloads and
    // subnormals survive; EC-45: Copy of FP8 copies bytes.
    let src = le32(&[0x7FC0_0001, 0x0000_0001, 0xFF80_0001]);
    assert_eq!(cast(Opcode::CAST, Dtype::FP32, Dtype::FP32, &src), src);
    assert_eq!(cast(Opcode::COPY, Dtype::FP32, Dtype::FP32, &src), src);
    let fp8 = [0x7F, 0xFF, 0x01, 0x80, 0x00];
    assert_eq!(
        cast(Opcode::COPY, Dtype::FP8_EXP4, Dtype::FP8_EXP4, &fp8),
        fp8
    );
    assert_eq!(
        cast(Opcode::CAST, Dtype::FP8_EXP5, Dtype::FP8_EXP5, &fp8),
        fp8
    );
    let h = le16(&[0x7E01, 0x0001]);
    assert_eq!(cast(Opcode::COPY, Dtype::FP16, Dtype::FP16, &h), h);
}

#[test]
fn copy_walks_strides_lanes_and_negative_steps() {
    // 3 lanes from partition 5; src a 2×3 block read with negative x step;
    // dst a column (x step 2) in partition 9..12.
    let mut mem = DeviceMemory::new(ARCH);
    for p in 5..8u32 {
        let v: Vec<u32> = (0..16).map(|i| p * 100 + i).collect();
        put(&mut mem, p, 0x100, &le32(&v));
    }
    let src = Tensor4d::new(sbuf(5, 0x100 + 4 * 2), [(3, -1), (2, 8), (1, 0), (1, 0)]);
    let dst = Tensor4d::new(sbuf(9, 0x40), [(6, 2), (1, 0), (1, 0), (1, 0)]);
    let r = S4d4Tr::new(Opcode::COPY, Dtype::UINT32, Dtype::UINT32, 3, src, dst);
    let out = run(&[r.encode()], &mem);
    for lane in 0..3u32 {
        let p = 5 + lane;
        let got = get(&out, 9 + lane, 0x40, 4 * 12);
        let idx = [2, 1, 0, 10, 9, 8];
        for (k, i) in idx.iter().enumerate() {
            assert_eq!(
                &got[8 * k..8 * k + 4],
                &(p * 100 + i).to_le_bytes(),
                "lane {lane} k {k}"
            );
            assert_eq!(&got[8 * k + 4..8 * k + 8], &[0; 4], "gap untouched");
        }
    }
}

fn iota(out: Dtype, base: i32, dims: [(u16, i16); 4], mult: i32, lanes: u8) -> DeviceMemory {
    let n: u16 = dims.iter().map(|d| d.0).product();
    let r = D4Iota::new(
        out,
        lanes,
        Data4d::new(base, dims),
        mult,
        row(sbuf(0, 0x200), n),
    );
    run(&[r.encode()], &DeviceMemory::new(ARCH))
}

#[test]
fn iota_wraps_at_2_pow_32_and_narrow_stores_keep_low_bits() {
    // EC-47: int32 arithmetic modulo 2^32.
    let m = iota(
        Dtype::INT32,
        i32::MAX,
        [(3, 1), (1, 0), (1, 0), (1, 0)],
        0,
        1,
    );
    assert_eq!(
        get(&m, 0, 0x200, 12),
        le32(&[0x7FFF_FFFF, 0x8000_0000, 0x8000_0001])
    );
    let m = iota(Dtype::UINT32, -1, [(2, 1), (1, 0), (1, 0), (1, 0)], 0, 1);
    assert_eq!(get(&m, 0, 0x200, 8), le32(&[0xFFFF_FFFF, 0]));
    // EC-48: narrow outputs wrap.
    let m = iota(Dtype::UINT8, 254, [(4, 1), (1, 0), (1, 0), (1, 0)], 0, 1);
    assert_eq!(get(&m, 0, 0x200, 4), [254, 255, 0, 1]);
    let m = iota(Dtype::INT16, 32767, [(2, 1), (1, 0), (1, 0), (1, 0)], 0, 1);
    assert_eq!(get(&m, 0, 0x200, 4), le16(&[0x7FFF, 0x8000]));
    // A negative step: 5, 2, -1, -4 as int8.
    let m = iota(Dtype::INT8, 5, [(4, -3), (1, 0), (1, 0), (1, 0)], 0, 1);
    assert_eq!(get(&m, 0, 0x200, 4), [5, 2, 0xFF, 0xFC]);
}

#[test]
fn iota_float_outputs_of_negative_and_large_values() {
    let m = iota(Dtype::FP32, -3, [(3, 1), (1, 0), (1, 0), (1, 0)], 0, 1);
    assert_eq!(
        get(&m, 0, 0x200, 12),
        le32(&[0xC040_0000, 0xC000_0000, 0xBF80_0000])
    );
    // 16777217 → f32 16777216; as bf16 0x4B80; fp16: 2049 → 2048, 65520 → inf.
    let m = iota(
        Dtype::FP32,
        16_777_217,
        [(1, 1), (1, 0), (1, 0), (1, 0)],
        0,
        1,
    );
    assert_eq!(get(&m, 0, 0x200, 4), le32(&[0x4B80_0000]));
    let m = iota(
        Dtype::BFLOAT16,
        16_777_217,
        [(1, 1), (1, 0), (1, 0), (1, 0)],
        0,
        1,
    );
    assert_eq!(get(&m, 0, 0x200, 2), le16(&[0x4B80]));
    let m = iota(
        Dtype::FP16,
        2049,
        [(2, -2065), (1, 0), (1, 0), (1, 0)],
        0,
        1,
    );
    // 2049 - 2065 = -16 → fp16 0xCC00.
    assert_eq!(get(&m, 0, 0x200, 4), le16(&[0x6800, 0xCC00]));
    // i32::MIN → -2^31 exactly; as fp32r the same bits.
    let m = iota(
        Dtype::FP32R,
        i32::MIN,
        [(1, 1), (1, 0), (1, 0), (1, 0)],
        0,
        1,
    );
    assert_eq!(get(&m, 0, 0x200, 4), le32(&[0xCF00_0000]));
}

#[test]
fn iota_walks_the_generator_and_the_lanes() {
    // x: 2 with step 1, y: 3 with step 10; lanes add 1000 each.
    let m = iota(Dtype::INT32, 7, [(2, 1), (3, 10), (1, 0), (1, 0)], 1000, 3);
    for lane in 0..3u32 {
        let b = 7 + 1000 * lane;
        let want: Vec<u32> = [0, 1, 10, 11, 20, 21].iter().map(|v| b + v).collect();
        assert_eq!(get(&m, lane, 0x200, 24), le32(&want), "lane {lane}");
    }
    // channel_multiplier wraps too: lane 1 of base 0x7FFFFFFF, mult 1.
    let m = iota(
        Dtype::INT32,
        i32::MAX,
        [(1, 1), (1, 0), (1, 0), (1, 0)],
        1,
        2,
    );
    assert_eq!(get(&m, 1, 0x200, 4), le32(&[0x8000_0000]));
}

/// Runs one tensor-tensor record on `a` (src0 at 0) and `b` (src1 at 0x400)
/// of `n` elements; returns dst (at 0x800).
fn tt(opcode: Opcode, op: AluOp, d: [Dtype; 3], a: &[u8], b: &[u8]) -> Vec<u8> {
    let (s0, so) = (d[0].size().unwrap() as usize, d[2].size().unwrap() as usize);
    let n = (a.len() / s0) as u16;
    let mut mem = DeviceMemory::new(ARCH);
    put(&mut mem, 0, 0, a);
    put(&mut mem, 0, 0x400, b);
    let r = S3s3d3Tt::new(
        opcode,
        op,
        d[0],
        d[1],
        d[2],
        1,
        row3(sbuf(0, 0), n),
        row3(sbuf(0, 0x400), n),
        row3(sbuf(0, 0x800), n),
    );
    let out = run(&[r.encode()], &mem);
    get(&out, 0, 0x800, n as usize * so)
}

const I32: [Dtype; 3] = [Dtype::INT32; 3];
const U32: [Dtype; 3] = [Dtype::UINT32; 3];

#[test]
fn int_band_wraps_and_compares_by_signedness() {
    let arith = Opcode::TENSOR_TENSOR_ARITH;
    let a = le32(&[0x7FFF_FFFF, 0xFFFF_FFFF, 5]);
    let b = le32(&[1, 1, 0xFFFF_FFFF]);
    assert_eq!(
        tt(arith, AluOp::ADD_INT, I32, &a, &b),
        le32(&[0x8000_0000, 0, 4])
    );
    assert_eq!(
        tt(arith, AluOp::SUBTRACT_INT, I32, &a, &b),
        le32(&[0x7FFF_FFFE, 0xFFFF_FFFE, 6])
    );
    assert_eq!(
        tt(arith, AluOp::MULT_INT, I32, &a, &b),
        le32(&[0x7FFF_FFFF, 0xFFFF_FFFF, 0xFFFF_FFFB])
    );
    let m = le32(&[0xFFFF_FFFF, 0x10000]);
    assert_eq!(tt(arith, AluOp::MULT_UINT, U32, &m, &m), le32(&[1, 0]));
    // -1 vs 1: signed says less, unsigned says greater.
    let x = le32(&[0xFFFF_FFFF, 1, 7]);
    let y = le32(&[1, 0xFFFF_FFFF, 7]);
    assert_eq!(tt(arith, AluOp::IS_GT_INT, I32, &x, &y), le32(&[0, 1, 0]));
    assert_eq!(tt(arith, AluOp::IS_GT_UINT, U32, &x, &y), le32(&[1, 0, 0]));
    assert_eq!(tt(arith, AluOp::IS_GE_INT, I32, &x, &y), le32(&[0, 1, 1]));
    assert_eq!(tt(arith, AluOp::IS_LE_UINT, U32, &x, &y), le32(&[0, 1, 1]));
    assert_eq!(tt(arith, AluOp::IS_LT_INT, I32, &x, &y), le32(&[1, 0, 0]));
    assert_eq!(
        tt(arith, AluOp::IS_EQUAL_INT, I32, &x, &y),
        le32(&[0, 0, 1])
    );
    assert_eq!(tt(arith, AluOp::IS_NE_INT, U32, &x, &y), le32(&[1, 1, 0]));
    assert_eq!(tt(arith, AluOp::MAX_INT, I32, &x, &y), le32(&[1, 1, 7]));
    assert_eq!(
        tt(arith, AluOp::MIN_INT, I32, &x, &y),
        le32(&[0xFFFF_FFFF, 0xFFFF_FFFF, 7])
    );
    assert_eq!(
        tt(arith, AluOp::MAX_UINT, U32, &x, &y),
        le32(&[0xFFFF_FFFF, 0xFFFF_FFFF, 7])
    );
    assert_eq!(tt(arith, AluOp::MIN_UINT, U32, &x, &y), le32(&[1, 1, 7]));
}

#[test]
fn base_add_is_exact_on_integers_and_one_f32_op_on_floats() {
    let arith = Opcode::TENSOR_TENSOR_ARITH;
    // EC-51's example: 0x01000001 + 0 stays exact (f32 would give 0x01000000).
    assert_eq!(
        tt(arith, AluOp::ADD, I32, &le32(&[0x0100_0001]), &le32(&[0])),
        le32(&[0x0100_0001])
    );
    // int8 + int8 → int8 wraps: 100 + 100 = -56.
    let i8s = [Dtype::INT8; 3];
    assert_eq!(
        tt(arith, AluOp::ADD, i8s, &[100, 0x80], &[100, 0xFF]),
        [0xC8, 0x7F]
    );
    // uint8 - uint8 → int32: 1 - 2 = -1 exactly.
    let mixed = [Dtype::UINT8, Dtype::UINT8, Dtype::INT32];
    assert_eq!(
        tt(arith, AluOp::SUBTRACT, mixed, &[1, 255], &[2, 0]),
        le32(&[0xFFFF_FFFF, 255])
    );
    // int16 × uint16 → uint8: (-3) × 65535 = -196605 → low byte 0x03.
    let mixed = [Dtype::INT16, Dtype::UINT16, Dtype::UINT8];
    assert_eq!(
        tt(
            arith,
            AluOp::MULT,
            mixed,
            &le16(&[0xFFFD]),
            &le16(&[0xFFFF])
        ),
        [0x03]
    );
    // fp32: 1 + 2^-24 rounds to 1 (tie to even); 1 + 3·2^-24 rounds up.
    let f32s = [Dtype::FP32; 3];
    let a = le32(&[0x3F80_0000, 0x3F80_0000, 0x7F80_0000, 0x0080_0000]);
    let b = le32(&[0x3380_0000, 0x3440_0000, 0xFF80_0000, 0x8080_0001]);
    // inf + -inf = NaN (canonical); 2^-126 - (2^-126 + 2^-149) = -2^-149 → -0 (EC-19).
    assert_eq!(
        tt(arith, AluOp::ADD, f32s, &a, &b),
        le32(&[0x3F80_0000, 0x3F80_0002, 0x7FC0_0000, 0x8000_0000])
    );
    // A float operand sends integers through f32: int32 16777217 × 1.0 → 16777216.
    let mixed = [Dtype::INT32, Dtype::FP32, Dtype::INT32];
    assert_eq!(
        tt(
            arith,
            AluOp::MULT,
            mixed,
            &le32(&[16_777_217]),
            &le32(&[0x3F80_0000])
        ),
        le32(&[16_777_216])
    );
    // bf16 × bf16 → fp32: 3 × -0.5 = -1.5; subnormal product flushes to -0.
    let bf = [Dtype::BFLOAT16, Dtype::BFLOAT16, Dtype::FP32];
    assert_eq!(
        tt(
            arith,
            AluOp::MULT,
            bf,
            &le16(&[0x4040, 0x0100]),
            &le16(&[0xBF00, 0x8100])
        ),
        le32(&[0xBFC0_0000, 0x8000_0000])
    );
    // fp32 - fp32 → int16 saturates: 1e6 - 0 → 32767.
    let f2i = [Dtype::FP32, Dtype::FP32, Dtype::INT16];
    assert_eq!(
        tt(
            arith,
            AluOp::SUBTRACT,
            f2i,
            &le32(&[0x4974_2400]),
            &le32(&[0])
        ),
        le16(&[0x7FFF])
    );
}

#[test]
fn bitvec_shifts_by_counts_at_and_beyond_the_width() {
    let bv = Opcode::TENSOR_TENSOR_BITVEC;
    let u8s = [Dtype::UINT8; 3];
    let i8s = [Dtype::INT8; 3];
    assert_eq!(
        tt(
            bv,
            AluOp::LOGICAL_SHIFT_LEFT,
            u8s,
            &[0x81, 0x81, 0x81, 1],
            &[1, 8, 200, 7]
        ),
        [0x02, 0, 0, 0x80]
    );
    assert_eq!(
        tt(bv, AluOp::ARITH_SHIFT_LEFT, i8s, &[0xC1, 0x01], &[1, 0xFF]),
        [0x82, 0]
    );
    // Arithmetic right: the sign of int8 comes in; count 9 (≥ 8) gives all
    // sign bits; a count of -1 is 255 unsigned.
    assert_eq!(
        tt(
            bv,
            AluOp::ARITH_SHIFT_RIGHT,
            i8s,
            &[0x80, 0x80, 0x40, 0x80],
            &[1, 9, 9, 0xFF]
        ),
        [0xC0, 0xFF, 0, 0xFF]
    );
    // ... zeros for uint8.
    assert_eq!(
        tt(bv, AluOp::ARITH_SHIFT_RIGHT, u8s, &[0x80, 0x80], &[1, 8]),
        [0x40, 0]
    );
    assert_eq!(
        tt(bv, AluOp::LOGICAL_SHIFT_RIGHT, i8s, &[0x80, 0x80], &[1, 8]),
        [0x40, 0]
    );
    let i32s = [Dtype::INT32; 3];
    assert_eq!(
        tt(
            bv,
            AluOp::ARITH_SHIFT_RIGHT,
            i32s,
            &le32(&[0x8000_0000, 0x8000_0000, 0x8000_0000]),
            &le32(&[31, 32, 0xFFFF_FFFF])
        ),
        le32(&[0xFFFF_FFFF; 3])
    );
    assert_eq!(
        tt(
            bv,
            AluOp::LOGICAL_SHIFT_LEFT,
            i32s,
            &le32(&[1, 1, 1]),
            &le32(&[31, 32, 0xFFFF_FFFF])
        ),
        le32(&[0x8000_0000, 0, 0])
    );
    let u16s = [Dtype::UINT16; 3];
    assert_eq!(
        tt(
            bv,
            AluOp::LOGICAL_SHIFT_RIGHT,
            u16s,
            &le16(&[0x8000, 0x8000]),
            &le16(&[15, 16])
        ),
        le16(&[1, 0])
    );
}

#[test]
fn bitvec_logic_ops() {
    let bv = Opcode::TENSOR_TENSOR_BITVEC;
    let u16s = [Dtype::UINT16; 3];
    let a = le16(&[0xF0F0, 0x1234]);
    let b = le16(&[0xFF00, 0x00FF]);
    assert_eq!(
        tt(bv, AluOp::BITWISE_AND, u16s, &a, &b),
        le16(&[0xF000, 0x0034])
    );
    assert_eq!(
        tt(bv, AluOp::BITWISE_OR, u16s, &a, &b),
        le16(&[0xFFF0, 0x12FF])
    );
    assert_eq!(
        tt(bv, AluOp::BITWISE_XOR, u16s, &a, &b),
        le16(&[0x0FF0, 0x12CB])
    );
    assert_eq!(
        tt(bv, AluOp::BITWISE_NOT, u16s, &a, &b),
        le16(&[0x0F0F, 0xEDCB])
    );
    assert_eq!(tt(bv, AluOp::BYPASS, u16s, &a, &b), a);
}

#[test]
fn broadcast_by_step_zero_and_in_place() {
    let mut mem = DeviceMemory::new(ARCH);
    put(&mut mem, 0, 0, &le32(&[1, 2, 3, 4]));
    put(&mut mem, 0, 0x40, &le32(&[100]));
    // src1 is one element walked 4 times (step 0); dst is src0 itself (EC-42).
    let bcast = Tensor3d::new(sbuf(0, 0x40), [(4, 0), (1, 0), (1, 0)]);
    let r = S3s3d3Tt::new(
        Opcode::TENSOR_TENSOR_ARITH,
        AluOp::ADD_INT,
        Dtype::INT32,
        Dtype::INT32,
        Dtype::INT32,
        1,
        row3(sbuf(0, 0), 4),
        bcast,
        row3(sbuf(0, 0), 4),
    );
    // Then a Copy in place and a Cast in place (equal sizes).
    let c = S4d4Tr::new(
        Opcode::CAST,
        Dtype::INT32,
        Dtype::FP32,
        1,
        row(sbuf(0, 0), 4),
        row(sbuf(0, 0), 4),
    );
    let out = run(&[r.encode()], &mem);
    assert_eq!(get(&out, 0, 0, 16), le32(&[101, 102, 103, 104]));
    let out = run(&[r.encode(), c.encode()], &mem);
    let f = |x: f32| x.to_bits();
    assert_eq!(
        get(&out, 0, 0, 16),
        le32(&[f(101.0), f(102.0), f(103.0), f(104.0)])
    );
}

#[test]
fn psum_sources_and_destinations() {
    // Copy and Cast may read and write PSUM (EC-41): SBUF → PSUM → SBUF.
    let mut mem = DeviceMemory::new(ARCH);
    put(&mut mem, 3, 0x10, &le16(&[0x3F80, 0xC000]));
    let psum = Addr4::new(Region::Psum, 3, 0x20);
    let a = S4d4Tr::new(
        Opcode::CAST,
        Dtype::BFLOAT16,
        Dtype::FP32,
        1,
        row(sbuf(3, 0x10), 2),
        row(psum, 2),
    );
    let b = S4d4Tr::new(
        Opcode::CAST,
        Dtype::FP32,
        Dtype::INT16,
        1,
        row(psum, 2),
        row(sbuf(3, 0x30), 2),
    );
    let out = run(&[a.encode(), b.encode()], &mem);
    assert_eq!(get(&out, 3, 0x30, 4), le16(&[1, 0xFFFE]));
}

#[test]
fn row_path_records_agree_and_compute() {
    // Shapes the GPU's row path takes (x step 1, rows of whole segments,
    // 16-byte aligned: vec4 loads and stores, whole-word stores), next to
    // unaligned ones; `run` compares the CPU and the GPU byte for byte.
    let mut mem = DeviceMemory::new(ARCH);
    let mut rng = fastrand::Rng::with_seed(0x0E1E);
    for p in 0..128 {
        let v: Vec<u8> = (0..0x3000).map(|_| rng.u8(..)).collect();
        put(&mut mem, p, 0, &v);
    }
    let t4 = |off: u32, n: u16, rows: u16| {
        Tensor4d::new(sbuf(0, off), [(n, 1), (rows, 2 * n as i16), (1, 0), (1, 0)])
    };
    let t3 = |off: u32, n: u16| Tensor3d::new(sbuf(0, off), [(n, 1), (2, 2 * n as i16), (1, 0)]);
    let mut records = Vec::new();
    for (off, n) in [(0x100u32, 64u16), (0x104, 32), (0x108, 16)] {
        records.push(
            S4d4Tr::new(
                Opcode::COPY,
                Dtype::FP32,
                Dtype::FP32,
                128,
                t4(off, n, 2),
                t4(0x1000, n, 2),
            )
            .encode(),
        );
        records.push(
            S4d4Tr::new(
                Opcode::CAST,
                Dtype::FP32,
                Dtype::BFLOAT16,
                128,
                t4(off, n, 2),
                t4(0x1800, n, 2),
            )
            .encode(),
        );
        records.push(
            S4d4Tr::new(
                Opcode::CAST,
                Dtype::BFLOAT16,
                Dtype::INT8,
                100,
                t4(off, n, 2),
                t4(0x1A00, n, 2),
            )
            .encode(),
        );
        records.push(
            S3s3d3Tt::new(
                Opcode::TENSOR_TENSOR_ARITH,
                AluOp::ADD,
                Dtype::FP32,
                Dtype::FP32,
                Dtype::FP32,
                128,
                t3(off, n),
                t3(0x1000, n),
                t3(0x2000, n),
            )
            .encode(),
        );
        // In place, 4-byte: the sum written over src0.
        records.push(
            S3s3d3Tt::new(
                Opcode::TENSOR_TENSOR_ARITH,
                AluOp::MULT_INT,
                Dtype::INT32,
                Dtype::INT32,
                Dtype::INT32,
                128,
                t3(0x2000, n),
                t3(off, n),
                t3(0x2000, n),
            )
            .encode(),
        );
        let data = Data4d::new(-7, [(n, 1), (2, 1000), (1, 0), (1, 0)]);
        records.push(D4Iota::new(Dtype::UINT16, 128, data, 3, t4(0x2800, n, 2)).encode());
        records.push(D4Iota::new(Dtype::FP32, 128, data, 3, t4(0x2C00, n, 2)).encode());
    }
    let out = run(&records, &mem);
    // Spot checks from the last group (n = 16): iota fp32 at lane 5, row 1, x 3:
    // -7 + 5·3 + 1000 + 3 = 1011.
    let got = get(&out, 5, 0x2C00 + 4 * (32 + 3), 4);
    assert_eq!(got, 1011f32.to_bits().to_le_bytes());
}
