//! Hand-derived values for the kernels of the POOL table's second part —
//! CrossLaneReduce (0x7C, 0x7D), NonzeroWithCount (0xF2), GetSequenceBounds
//! (0xBE) and 0xF0 specs 0 and 2 — on the CPU reference and, when an adapter
//! exists, the GPU (bit-identical). Every expected value is worked out by
//! hand from SPEC-KERNELS §5, §6, §8, §9 and EC-54 … EC-57, EC-59.

use crate::common;
use crate::hand::*;
use tpb_emu::device::DeviceMemory;
use tpb_emu::isa::enums::{AluOp, Dtype, ReduceAxis, ReduceOp};
use tpb_emu::isa::{
    EngineNop, ExtTta, Opcode, S3d3NonzeroWithCount, S3d3SeqBounds, S4d4Cr, Tensor2d, Tensor3d,
};

fn f32s(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Lane p's src (at partition p, byte 0) is `lanes[p]`; dst at partition 0, byte 512.
#[allow(clippy::too_many_arguments)]
fn clr(
    opcode: Opcode,
    op: ReduceOp,
    axis: ReduceAxis,
    in_d: Dtype,
    out_d: Dtype,
    scale: f32,
    lanes: &[Vec<u8>],
    esize: usize,
) -> (DeviceMemory, usize) {
    let mut mem = DeviceMemory::new(ARCH);
    mem.fill(0xEE);
    for (p, b) in lanes.iter().enumerate() {
        put(&mut mem, p as u32, 0, b);
    }
    let m = (lanes[0].len() / esize) as u16;
    let dst_n = if axis == ReduceAxis::ALL { 1 } else { m };
    let r = S4d4Cr::new(
        opcode,
        op,
        axis,
        in_d,
        out_d,
        lanes.len() as u8,
        scale,
        row(sbuf(0, 0), m),
        row(sbuf(0, 512), dst_n),
    );
    (run(&[r.encode()], &mem), dst_n as usize)
}

const ARITH: Opcode = Opcode::CROSS_LANE_REDUCE_ARITH;
const BITVEC: Opcode = Opcode::CROSS_LANE_REDUCE_BITVEC;
const PARTS: ReduceAxis = ReduceAxis::PARTITIONS;

#[test]
fn clr_integer_add_is_exact_then_saturated() {
    // INT8: 100+100+100 = 300 → 127; −300 → −128; 100+100−100 = 100 (no int8 wrap on the way).
    let lanes = vec![
        vec![100u8, 0x9C, 100],
        vec![100, 0x9C, 100],
        vec![100, 0x9C, 0x9C],
    ];
    let (mem, n) = clr(
        ARITH,
        ReduceOp::ADD,
        PARTS,
        Dtype::INT8,
        Dtype::INT8,
        0.0,
        &lanes,
        1,
    );
    assert_eq!(get(&mem, 0, 512, n), [0x7F, 0x80, 100]);
    // INT32 → FP32: 2^24 + 1 + 1 = 16777218 exactly (an f32 fold would give 2^24).
    let lanes = vec![le32(&[1 << 24]), le32(&[1]), le32(&[1])];
    let (mem, _) = clr(
        ARITH,
        ReduceOp::ADD,
        PARTS,
        Dtype::INT32,
        Dtype::FP32,
        0.0,
        &lanes,
        4,
    );
    assert_eq!(get(&mem, 0, 512, 4), le32(&[0x4B80_0001]));
    // INT32 0x7FFFFFFF + 1 = 2^31: saturates to INT32_MAX (no 32-bit wrap).
    let lanes = vec![le32(&[0x7FFF_FFFF]), le32(&[1])];
    let (mem, _) = clr(
        ARITH,
        ReduceOp::ADD,
        PARTS,
        Dtype::INT32,
        Dtype::INT32,
        0.0,
        &lanes,
        4,
    );
    assert_eq!(get(&mem, 0, 512, 4), le32(&[0x7FFF_FFFF]));
    // UINT32 2·(2^32 − 1) = 2^33 − 2 → FP32 rounds once to 2^33 (0x50000000);
    // → FP16 overflows to +inf; → UINT16 saturates to 0xFFFF.
    let lanes = vec![le32(&[u32::MAX]), le32(&[u32::MAX])];
    let (mem, _) = clr(
        ARITH,
        ReduceOp::ADD,
        PARTS,
        Dtype::UINT32,
        Dtype::FP32,
        0.0,
        &lanes,
        4,
    );
    assert_eq!(get(&mem, 0, 512, 4), le32(&[0x5000_0000]));
    let (mem, _) = clr(
        ARITH,
        ReduceOp::ADD,
        PARTS,
        Dtype::UINT32,
        Dtype::FP16,
        0.0,
        &lanes,
        4,
    );
    assert_eq!(get(&mem, 0, 512, 2), le16(&[0x7C00]));
    let (mem, _) = clr(
        ARITH,
        ReduceOp::ADD,
        PARTS,
        Dtype::UINT32,
        Dtype::UINT16,
        0.0,
        &lanes,
        4,
    );
    assert_eq!(get(&mem, 0, 512, 2), le16(&[0xFFFF]));
    // INT16 −3 + −4 = −7 → BF16 0xC0E0 (−7.0); 257 + 0 → BF16 256 (tie to even, 0x4380).
    let lanes = vec![le16(&[0xFFFD, 257]), le16(&[0xFFFC, 0])];
    let (mem, _) = clr(
        ARITH,
        ReduceOp::ADD,
        PARTS,
        Dtype::INT16,
        Dtype::BFLOAT16,
        0.0,
        &lanes,
        2,
    );
    assert_eq!(get(&mem, 0, 512, 4), le16(&[0xC0E0, 0x4380]));
}

#[test]
fn clr_float_add_folds_lanes_in_order() {
    // (1e8 + 1) rounds to 1e8 (ulp 8), then + (−1e8) = 0: lane order, from the first.
    let lanes = vec![
        le32(&f32s(&[1e8])),
        le32(&f32s(&[1.0])),
        le32(&f32s(&[-1e8])),
    ];
    let (mem, _) = clr(
        ARITH,
        ReduceOp::ADD,
        PARTS,
        Dtype::FP32,
        Dtype::FP32,
        0.0,
        &lanes,
        4,
    );
    assert_eq!(get(&mem, 0, 512, 4), le32(&[0]));
}

#[test]
fn clr_average_scales_each_element_then_adds() {
    // scale 0.5: 0.5 + 1 + 1.5 = 3.0.
    let lanes = vec![
        le32(&f32s(&[1.0])),
        le32(&f32s(&[2.0])),
        le32(&f32s(&[3.0])),
    ];
    let (mem, _) = clr(
        ARITH,
        ReduceOp::AVERAGE,
        PARTS,
        Dtype::FP32,
        Dtype::FP32,
        0.5,
        &lanes,
        4,
    );
    assert_eq!(get(&mem, 0, 512, 4), le32(&[0x4040_0000]));
    // A subnormal scale (2^-149) flushes to +0 first: 1·0 + 2·0 = +0; −1·0 + −2·0 = −0.
    let sub = f32::from_bits(1);
    let lanes = vec![le32(&f32s(&[1.0, -1.0])), le32(&f32s(&[2.0, -2.0]))];
    let (mem, _) = clr(
        ARITH,
        ReduceOp::AVERAGE,
        PARTS,
        Dtype::FP32,
        Dtype::FP32,
        sub,
        &lanes,
        4,
    );
    assert_eq!(get(&mem, 0, 512, 8), le32(&[0, 0x8000_0000]));
    // Products below 2^-126 flush (EC-19): 2^-30 · 2^-100 = 2^-130 → 0.
    let tiny = f32::from_bits(0x0D80_0000); // 2^-100
    let lanes = vec![le32(&[0x3080_0000]), le32(&[0x3080_0000])];
    let (mem, _) = clr(
        ARITH,
        ReduceOp::AVERAGE,
        PARTS,
        Dtype::FP32,
        Dtype::FP32,
        tiny,
        &lanes,
        4,
    );
    assert_eq!(get(&mem, 0, 512, 4), le32(&[0]));
    // Integer AVERAGE folds in f32: INT8 3·0.5 + 4·0.5 = 3.5 → INT8 3, FP32 0x40600000.
    let lanes = vec![vec![3u8], vec![4u8]];
    let (mem, _) = clr(
        ARITH,
        ReduceOp::AVERAGE,
        PARTS,
        Dtype::INT8,
        Dtype::INT8,
        0.5,
        &lanes,
        1,
    );
    assert_eq!(get(&mem, 0, 512, 1), [3]);
    let (mem, _) = clr(
        ARITH,
        ReduceOp::AVERAGE,
        PARTS,
        Dtype::INT8,
        Dtype::FP32,
        0.5,
        &lanes,
        1,
    );
    assert_eq!(get(&mem, 0, 512, 4), le32(&[0x4060_0000]));
}

#[test]
fn clr_max_skips_nan_and_keeps_the_first_of_ties() {
    let nan = 0x7FC0_0001u32;
    let (ninf, m0) = (0xFF80_0000u32, 0x8000_0000u32);
    let one = 1.0f32.to_bits();
    // k: 0 NaN/1/NaN → 1; 1 −0/+0/−0 → −0; 2 +0/−0/+0 → +0; 3 all NaN → canonical;
    // 4 −inf/−3/−5 → −3.
    let lanes = vec![
        le32(&[nan, m0, 0, nan, ninf]),
        le32(&[one, 0, m0, nan, (-3.0f32).to_bits()]),
        le32(&[nan, m0, 0, nan, (-5.0f32).to_bits()]),
    ];
    let (mem, n) = clr(
        ARITH,
        ReduceOp::MAX,
        PARTS,
        Dtype::FP32,
        Dtype::FP32,
        0.0,
        &lanes,
        4,
    );
    assert_eq!(
        get(&mem, 0, 512, 4 * n),
        le32(&[one, m0, 0, 0x7FC0_0000, 0xC040_0000])
    );
    // INT32 MAX in f32: 16777217 loads as 2^24; stored back to INT32 as 16777216.
    let lanes = vec![le32(&[5]), le32(&[(-7i32) as u32]), le32(&[16_777_217])];
    let (mem, _) = clr(
        ARITH,
        ReduceOp::MAX,
        PARTS,
        Dtype::INT32,
        Dtype::INT32,
        0.0,
        &lanes,
        4,
    );
    assert_eq!(get(&mem, 0, 512, 4), le32(&[16_777_216]));
}

#[test]
fn clr_bitvec_folds_raw_bits() {
    let lanes = vec![le16(&[0x1234]), le16(&[0x00FF]), le16(&[0xF000])];
    for (op, want) in [
        (ReduceOp::BITWISE_OR, 0xF2FF),
        (ReduceOp::BITWISE_AND, 0x0000),
        (ReduceOp::BITWISE_XOR, 0xE2CB),
    ] {
        let (mem, _) = clr(
            BITVEC,
            op,
            PARTS,
            Dtype::UINT16,
            Dtype::UINT16,
            0.0,
            &lanes,
            2,
        );
        assert_eq!(get(&mem, 0, 512, 2), le16(&[want]), "{op:?}");
    }
    let lanes = vec![vec![0x81u8, 0xF0], vec![0x01, 0x3C]];
    let (mem, _) = clr(
        BITVEC,
        ReduceOp::BITWISE_AND,
        PARTS,
        Dtype::INT8,
        Dtype::INT8,
        0.0,
        &lanes,
        1,
    );
    assert_eq!(get(&mem, 0, 512, 2), [0x01, 0x30]);
}

#[test]
fn clr_all_axis_folds_lane_major() {
    // p outer, k inner: 1e8 + 1 + 1 (each rounds back to 1e8) − 1e8 + 1 + 1 = 2.
    // An element-major order would give 4.
    let lanes = vec![
        le32(&f32s(&[1e8, 1.0, 1.0])),
        le32(&f32s(&[-1e8, 1.0, 1.0])),
    ];
    let (mem, n) = clr(
        ARITH,
        ReduceOp::ADD,
        ReduceAxis::ALL,
        Dtype::FP32,
        Dtype::FP32,
        0.0,
        &lanes,
        4,
    );
    assert_eq!(n, 1);
    assert_eq!(
        get(&mem, 0, 512, 8),
        [le32(&[0x4000_0000]), vec![0xEE; 4]].concat()
    );
    // Bitvec XOR over all: 0x0F ^ 0xF0 ^ 0x01 ^ 0x10 = 0xEE.
    let lanes = vec![vec![0x0Fu8, 0xF0], vec![0x01, 0x10]];
    let (mem, _) = clr(
        BITVEC,
        ReduceOp::BITWISE_XOR,
        ReduceAxis::ALL,
        Dtype::UINT8,
        Dtype::UINT8,
        0.0,
        &lanes,
        1,
    );
    assert_eq!(get(&mem, 0, 512, 2), [0xEE, 0xEE]);
    let lanes = vec![vec![0x0Fu8, 0xF0], vec![0x01, 0x11]];
    let (mem, _) = clr(
        BITVEC,
        ReduceOp::BITWISE_XOR,
        ReduceAxis::ALL,
        Dtype::UINT8,
        Dtype::UINT8,
        0.0,
        &lanes,
        1,
    );
    assert_eq!(get(&mem, 0, 512, 2), [0xEF, 0xEE]);
}

fn nonzero(start: u32, nac: u8, in_d: Dtype, off: i32, pad: i32, src: &[u32]) -> DeviceMemory {
    let t = src.len() as u16;
    let mut mem = DeviceMemory::new(ARCH);
    mem.fill(0xEE);
    for p in 0..nac as u32 {
        put(&mut mem, start + p, 0, &le32(src));
    }
    let r = S3d3NonzeroWithCount::new(
        in_d,
        nac,
        off,
        pad,
        row3(sbuf(start, 0), t),
        row3(sbuf(start, 256), t + 1),
    );
    run(&[r.encode()], &mem)
}

#[test]
fn nonzero_with_count_vendor_example_on_partitions_0_mod_16() {
    // The NKI docstring's example: [0,1,1,0,0,1,0,0], offset 16, pad −1.
    let src = [0, 1, 1, 0, 0, 1, 0, 0];
    let want = le32(&[
        17,
        18,
        21,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        u32::MAX,
        3,
    ]);
    let mem = nonzero(0, 40, Dtype::INT32, 16, -1, &src);
    for p in 0..40 {
        let got = get(&mem, p, 256, 36);
        if p % 16 == 0 {
            assert_eq!(got, want, "partition {p}");
        } else {
            assert_eq!(got, vec![0xEE; 36], "partition {p} must be untouched");
        }
    }
    // A record starting at partition 8 with 16 lanes processes partition 16 only (EC-56).
    let mem = nonzero(8, 16, Dtype::INT32, 16, -1, &src);
    for p in 8..24 {
        let untouched = get(&mem, p, 256, 36) == vec![0xEE; 36];
        assert_eq!(untouched, p != 16, "partition {p}");
    }
    // No processed lane: nothing written.
    let mem = nonzero(1, 15, Dtype::INT32, 16, -1, &src);
    for p in 1..16 {
        assert_eq!(get(&mem, p, 256, 36), vec![0xEE; 36]);
    }
}

#[test]
fn nonzero_with_count_tests_bits() {
    // FP32: −0 and +0 are zero; NaN, a subnormal and 1.0 are not (EC-56).
    let src = [0x8000_0000, 0x7FC0_0000, 0x0000_0001, 0, 0x3F80_0000];
    let mem = nonzero(0, 1, Dtype::FP32, 0, 7, &src);
    assert_eq!(get(&mem, 0, 256, 24), le32(&[1, 2, 4, 7, 7, 3]));
    // INT32: 0x80000000 is nonzero there; index_offset wraps mod 2^32.
    let src = [0x8000_0000, 0, 5];
    let mem = nonzero(0, 1, Dtype::INT32, i32::MAX, 0, &src);
    assert_eq!(
        get(&mem, 0, 256, 16),
        le32(&[0x7FFF_FFFF, 0x8000_0001, 0, 2])
    );
    // All zero: every slot padding, count 0.
    let mem = nonzero(0, 1, Dtype::INT32, 3, -2, &[0, 0]);
    assert_eq!(
        get(&mem, 0, 256, 12),
        le32(&[(-2i32) as u32, (-2i32) as u32, 0])
    );
}

/// A long NonzeroWithCount (T = 16,411: blocks of 8 with every nonzero mask,
/// a tail of 3, enough work for two threads) over 128 lanes into the same
/// partitions and over 64 lanes into others: each processed lane's
/// positions are those whose word is nonzero, in order, then padding and
/// the count; the words the test writes make block b of lane p nonzero
/// where mask (b + p) mod 256 has a bit set, the tail all nonzero.
#[test]
fn nonzero_with_count_long_rows_every_mask() {
    const T: u32 = 16_411;
    let word = |p: u32, i: u32| {
        let mask = if i >= T / 8 * 8 {
            0xFF
        } else {
            (i / 8 + p) % 256
        };
        if (mask >> (i % 8)) & 1 == 1 {
            0x100 + i
        } else {
            0
        }
    };
    // Into the same partitions; into partitions 64.. (no lane reads
    // another's dst partition); into partitions 16.. (lane p writes the
    // partition lane p + 16 reads, at another offset).
    for (nac, dp, dst_off) in [
        (128u8, 0u32, 0x1_0100u32),
        (64, 64, 0x100),
        (112, 16, 0x1_0100),
    ] {
        let mut mem = DeviceMemory::new(ARCH);
        mem.fill(0xEE);
        for p in 0..nac as u32 {
            let src: Vec<u32> = (0..T).map(|i| word(p, i)).collect();
            put(&mut mem, p, 0, &le32(&src));
        }
        let r = S3d3NonzeroWithCount::new(
            Dtype::INT32,
            nac,
            5,
            -1,
            row3(sbuf(0, 0), T as u16),
            row3(sbuf(dp, dst_off), T as u16 + 1),
        );
        let mem = run(&[r.encode()], &mem);
        for p in 0..nac as u32 {
            let got = get(&mem, dp + p, dst_off, 4 * (T as usize + 1));
            if p % 16 != 0 {
                assert!(got.iter().all(|&b| b == 0xEE), "lane {p} must be untouched");
                continue;
            }
            let mut want: Vec<u32> = (0..T).filter(|&i| word(p, i) != 0).map(|i| i + 5).collect();
            let n = want.len() as u32;
            want.resize(T as usize, u32::MAX);
            want.push(n);
            assert_eq!(
                got,
                le32(&want),
                "lane {p}, {nac} lanes into partition {dp}"
            );
        }
    }
}

/// The FP32 leg over blocks of 8 (T = 21): −0 and +0 are zero, NaN, a
/// subnormal and −1.0 are not (EC-56), and positions + index_offset wrap
/// past 2^31 − 1 as unsigned words.
#[test]
fn nonzero_with_count_fp32_blocks() {
    const NEG0: u32 = 0x8000_0000;
    const NAN: u32 = 0x7FC0_0000;
    const SUB: u32 = 0x0000_0001;
    const M1: u32 = 0xBF80_0000;
    #[rustfmt::skip]
    let src = [
        NEG0, NAN, 0, SUB, NEG0, NEG0, M1, 0, // nonzero at 1, 3, 6
        0, 0, 0, 0, 0, 0, 0, 0, // none
        SUB, SUB, NEG0, NAN, M1, // 16, 17, 19, 20
    ];
    let mem = nonzero(0, 1, Dtype::FP32, i32::MAX, 9, &src);
    let m = 0x7FFF_FFFFu32;
    let want = [
        m + 1,
        m + 3,
        m + 6,
        m + 16,
        m + 17,
        m + 19,
        m + 20, // 0x80000000.., 7 of them
        9,
        9,
        9,
        9,
        9,
        9,
        9,
        9,
        9,
        9,
        9,
        9,
        9,
        9, // padding to T = 21
        7,
    ];
    assert_eq!(get(&mem, 0, 256, 4 * 22), le32(&want));
}

fn seq(in_d: Dtype, out_d: Dtype, ids: &[u32]) -> Vec<u32> {
    let n = ids.len() as u16;
    let mut mem = DeviceMemory::new(ARCH);
    mem.fill(0xEE);
    put(&mut mem, 3, 0, &le32(ids));
    let dst = Tensor3d::new(sbuf(3, 4096), [(n, 1), (1, 0), (2, n as i16)]);
    let r = S3d3SeqBounds::new(in_d, out_d, 1, row3(sbuf(3, 0), n), dst);
    let mem = run(&[r.encode()], &mem);
    get(&mem, 3, 4096, 8 * ids.len())
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn sequence_bounds_runs_and_padding() {
    let ids = [0, 1, 1, 2, 2, 2, 0, 3];
    let m1 = u32::MAX;
    assert_eq!(
        seq(Dtype::INT32, Dtype::INT32, &ids),
        [8, 1, 1, 3, 3, 3, 8, 7, m1, 3, 3, 6, 6, 6, m1, 8]
    );
    // FP32 output: the same values as floats.
    let f = |v: f32| v.to_bits();
    assert_eq!(
        seq(Dtype::INT32, Dtype::FP32, &ids),
        [
            8., 1., 1., 3., 3., 3., 8., 7., -1., 3., 3., 6., 6., 6., -1., 8.
        ]
        .map(f)
    );
    // A long run across many GPU chunks: 200 equal ids then 100 others.
    let mut ids = vec![7u32; 200];
    ids.extend(std::iter::repeat_n(9u32, 100));
    let got = seq(Dtype::INT32, Dtype::INT32, &ids);
    for i in 0..300 {
        let (s, e) = if i < 200 { (0, 200) } else { (200, 300) };
        assert_eq!((got[i], got[300 + i]), (s, e), "{i}");
    }
}

#[test]
fn sequence_bounds_float_ids() {
    // NaN ids are runs of one and not padding; −0 and +0 are padding; a
    // subnormal id is an id (equal to itself by bits).
    let nan = 0x7FC0_0000;
    let ids = [
        0x3F80_0000,
        nan,
        nan,
        0x8000_0000,
        0x4000_0000,
        0x4000_0000,
        0,
        1,
        1,
    ];
    let m1 = u32::MAX;
    assert_eq!(
        seq(Dtype::FP32, Dtype::INT32, &ids),
        [0, 1, 2, 9, 4, 4, 9, 7, 7, 1, 2, 3, m1, 6, 6, m1, 9, 9]
    );
}

fn frame(first: &str, opcode: u8, lanes: u32, lines: &[&str]) -> Vec<String> {
    let mut want = vec![first.to_string()];
    for core in 0..8u32 {
        let n = lanes.saturating_sub(16 * core).min(16);
        if n == 0 {
            break;
        }
        want.push(format!("P{core}: Entering Dispatch"));
        want.push(format!(
            "P{core}: In dispatch, CPU ID: {core}, got opcode 0x{opcode:x}."
        ));
        for l in lines {
            want.push(format!("P{core}: {}", l.replace("{n}", &n.to_string())));
        }
        want.push(format!("P{core}: Exiting Dispatch"));
    }
    want
}

#[test]
fn ec59_trace_lines() {
    let r = S4d4Cr::new(
        ARITH,
        ReduceOp::ADD,
        PARTS,
        Dtype::FP32,
        Dtype::FP32,
        20,
        0.0,
        row(sbuf(0, 0), 4),
        row(sbuf(0, 64), 4),
    )
    .encode();
    let t = trace_of(&r);
    assert_eq!(t, frame(&t[0], 0x7C, 20, &[]));
    let r = S3d3NonzeroWithCount::new(
        Dtype::INT32,
        17,
        0,
        0,
        row3(sbuf(0, 0), 4),
        row3(sbuf(0, 64), 5),
    )
    .encode();
    let t = trace_of(&r);
    assert_eq!(
        t,
        frame(&t[0], 0xF2, 17, &["NonzeroWithCount : num_chans = {n}"])
    );
    let dst = Tensor3d::new(sbuf(0, 64), [(4, 1), (1, 0), (2, 4)]);
    let r = S3d3SeqBounds::new(Dtype::INT32, Dtype::INT32, 1, row3(sbuf(0, 0), 4), dst).encode();
    let t = trace_of(&r);
    assert_eq!(
        t,
        frame(
            &t[0],
            0xBE,
            1,
            &[
                "GetSequenceBounds : num_chans = {n}",
                "Decode : GetSequenceBounds : active_chans = 1"
            ]
        )
    );
    let r = EngineNop::new(2 << 3).encode();
    let t = trace_of(&r);
    assert_eq!(
        t,
        frame(
            &t[0],
            0xF0,
            32,
            &[
                "dispatch_extended_inst(0) : num_chans = {n}",
                "ExtendedInstEngineNop : processing complete"
            ]
        )
    );
    let two = |n: u16| Tensor2d::new(sbuf(0, 0), [(n, 1), (2, n as i16)]);
    let mut r = ExtTta::new(
        0,
        AluOp::MULT,
        Dtype::FP32,
        Dtype::FP32,
        Dtype::FP32,
        two(3),
        two(3),
        two(3),
    );
    r.src1.addr = sbuf(0, 64);
    r.dst.addr = sbuf(0, 128);
    let t = trace_of(&r.encode());
    assert_eq!(
        t,
        frame(
            &t[0],
            0xF0,
            128,
            &[
                "dispatch_extended_inst(2) : num_chans = {n}",
                "Decode : ExtendedInstTensorTensorArith",
                "ExtendedInstTensorTensorArith : num_tensor_elements = 6 : alu_op = 0x6",
            ]
        )
    );
}

#[test]
fn engine_nop_changes_nothing() {
    let mut mem = DeviceMemory::new(ARCH);
    let mut rng = fastrand::Rng::with_seed(0xF000);
    common::randomize(&mut mem, &mut rng, 0);
    for ports in 0..8u8 {
        let out = run(&[EngineNop::new(ports << 3).encode()], &mem);
        assert!(common::first_difference(&out, &mem).is_none());
    }
}

#[test]
fn ext_tta_runs_on_16_per_port() {
    // src0 = 10·p + i at byte 0, src1 = 1000 + i at byte 16 (INT32, 4 each);
    // dst at byte 32 = src0 + src1 on the lanes of the active ports only.
    let mut mem = DeviceMemory::new(ARCH);
    mem.fill(0xEE);
    for p in 0..128u32 {
        put(
            &mut mem,
            p,
            0,
            &le32(&[10 * p, 10 * p + 1, 10 * p + 2, 10 * p + 3]),
        );
        put(&mut mem, p, 16, &le32(&[1000, 1001, 1002, 1003]));
    }
    for ports in 0..8u8 {
        let lanes = if ports == 0 { 128 } else { 16 * ports as u32 };
        let t = |off| Tensor2d::new(sbuf(0, off), [(2, 1), (2, 2)]);
        let r = ExtTta::new(
            ports << 3,
            AluOp::ADD,
            Dtype::INT32,
            Dtype::INT32,
            Dtype::INT32,
            t(0),
            t(16),
            t(32),
        );
        let out = run(&[r.encode()], &mem);
        for p in 0..128u32 {
            let got = get(&out, p, 32, 16);
            if p < lanes {
                let b = 10 * p + 1000;
                assert_eq!(
                    got,
                    le32(&[b, b + 2, b + 4, b + 6]),
                    "ports {ports} lane {p}"
                );
            } else {
                assert_eq!(got, vec![0xEE; 16], "ports {ports} lane {p}");
            }
        }
    }
    // MULT on the f32 path: FP32 1.5 × BF16 2.0 → FP16 3.0 (0x4200), one lane group.
    let mut mem = DeviceMemory::new(ARCH);
    put(&mut mem, 0, 0, &le32(&[1.5f32.to_bits()]));
    put(&mut mem, 0, 16, &le16(&[0x4000]));
    let t = |off| Tensor2d::new(sbuf(0, off), [(1, 1), (1, 0)]);
    let r = ExtTta::new(
        1 << 3,
        AluOp::MULT,
        Dtype::FP32,
        Dtype::BFLOAT16,
        Dtype::FP16,
        t(0),
        t(16),
        t(32),
    );
    let out = run(&[r.encode()], &mem);
    assert_eq!(get(&out, 0, 32, 2), le16(&[0x4200]));
}
