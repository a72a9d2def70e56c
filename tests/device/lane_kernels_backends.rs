//! The CPU/GPU differential test of CrossLaneReduce (0x7C, 0x7D),
//! NonzeroWithCount (0xF2), GetSequenceBounds (0xBE) and 0xF0 specs 0 and 2:
//! random valid records (at least 1,000 of each kernel) in mixed streams with
//! Pool records, all in the same small window so later records read what
//! earlier ones wrote, compared over every byte of SBUF and PSUM.

use crate::backends::{assert_records_agree, encoded_key, encoded_key_in};
use crate::common;
use crate::random_walks::*;
use common::{WINDOW, first_difference, gpu, random_valid_pool, randomize};
use tpb_emu::device::gpu::GpuExecutor;
use tpb_emu::device::{CpuExecutor, DeviceMemory};
use tpb_emu::isa::enums::{AluOp, Dtype, ReduceAxis, ReduceOp};
use tpb_emu::isa::record::Record;
use tpb_emu::isa::validate::{Target, check};
use tpb_emu::isa::{
    Addr4, EngineNop, ExtTta, Opcode, Region, S3d3NonzeroWithCount, S3d3SeqBounds, S4d4Cr, S4d4Tr,
    Tensor3d, Tensor4d,
};
use tpb_emu::limits::{Arch, PARTITIONS};

const ARCH: Arch = Arch::Cayman;

const INT32S: [Dtype; 6] = [
    Dtype::INT8,
    Dtype::UINT8,
    Dtype::INT16,
    Dtype::UINT16,
    Dtype::INT32,
    Dtype::UINT32,
];
const ALL9: [Dtype; 9] = [
    Dtype::INT8,
    Dtype::UINT8,
    Dtype::INT16,
    Dtype::UINT16,
    Dtype::INT32,
    Dtype::UINT32,
    Dtype::BFLOAT16,
    Dtype::FP16,
    Dtype::FP32,
];

fn scale(rng: &mut fastrand::Rng) -> f32 {
    match rng.u8(0..6) {
        0 => 0.5,
        1 => 1.0 / 3.0,
        2 => f32::from_bits(rng.u32(1..0x0080_0000)), // subnormal (EC-19 flushes it)
        3 => f32::from_bits(rng.u32(..)),
        4 => -2.0,
        _ => 1.0 / rng.u32(1..200) as f32,
    }
}

/// Which kernel a record is (for the counts).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Clr,
    Nonzero,
    Bounds,
    Tta,
    Nop,
}

fn random_record(rng: &mut fastrand::Rng, kind: Kind) -> Record {
    let count = rng.u16(1..=24);
    match kind {
        Kind::Clr => {
            let nac = rng.u32(1..=PARTITIONS);
            let sp = rng.u32(0..=PARTITIONS - nac);
            let arith = rng.bool();
            let (opcode, op, i, o) = if arith {
                let op = pick(rng, &[ReduceOp::ADD, ReduceOp::AVERAGE, ReduceOp::MAX]);
                let o = if rng.u8(0..8) == 0 {
                    Dtype::FP32R
                } else {
                    pick(rng, &ALL9)
                };
                (Opcode::CROSS_LANE_REDUCE_ARITH, op, pick(rng, &ALL9), o)
            } else {
                let op = pick(
                    rng,
                    &[
                        ReduceOp::BITWISE_OR,
                        ReduceOp::BITWISE_AND,
                        ReduceOp::BITWISE_XOR,
                    ],
                );
                let t = pick(rng, &INT32S);
                (Opcode::CROSS_LANE_REDUCE_BITVEC, op, t, t)
            };
            let all = rng.u8(0..4) == 0;
            let src = walk_split(rng, Region::Sbuf, sp, i.size().unwrap(), count, 4);
            let dp = rng.u32(0..PARTITIONS);
            let dst = if all {
                walk(rng, Region::Sbuf, dp, o.size().unwrap(), [1; 4])
            } else {
                walk_split(rng, Region::Sbuf, dp, o.size().unwrap(), count, 4)
            };
            let axis = if all {
                ReduceAxis::ALL
            } else {
                ReduceAxis::PARTITIONS
            };
            S4d4Cr::new(opcode, op, axis, i, o, nac as u8, scale(rng), src, dst).encode()
        }
        Kind::Nonzero => {
            let nac = rng.u32(1..=PARTITIONS);
            let sp = rng.u32(0..=PARTITIONS - nac);
            let dp = if rng.bool() {
                sp
            } else {
                rng.u32(0..=PARTITIONS - nac)
            };
            let i = if rng.bool() {
                Dtype::INT32
            } else {
                Dtype::FP32
            };
            let src = to_3d(walk_split(rng, Region::Sbuf, sp, 4, count, 3));
            let dst = to_3d(walk_split(rng, Region::Sbuf, dp, 4, count + 1, 3));
            let off = match rng.u8(0..3) {
                0 => rng.i32(..),
                _ => rng.i32(-40..40),
            };
            S3d3NonzeroWithCount::new(i, nac as u8, off, rng.i32(..), src, dst).encode()
        }
        Kind::Bounds => {
            let sp = rng.u32(0..PARTITIONS);
            let dp = if rng.bool() {
                sp
            } else {
                rng.u32(0..PARTITIONS)
            };
            let f = |rng: &mut fastrand::Rng| {
                if rng.bool() {
                    Dtype::INT32
                } else {
                    Dtype::FP32
                }
            };
            let (i, o) = (f(rng), f(rng));
            let src = to_3d(walk_split(rng, Region::Sbuf, sp, 4, count, 3));
            let n = split(rng, count, 2);
            let mut d = walk(rng, Region::Sbuf, dp, 4, [n[0], n[1], 2, 1]);
            if rng.bool() {
                d.step = [1, n[0] as i16, (n[0] * n[1]) as i16, 0];
            }
            S3d3SeqBounds::new(i, o, 1, src, to_3d(d)).encode()
        }
        Kind::Tta => {
            let ports = rng.u8(0..8);
            let lanes = if ports == 0 { 128 } else { 16 * ports as u32 };
            let part = |rng: &mut fastrand::Rng| rng.u32(0..=PARTITIONS - lanes);
            let op = if rng.bool() { AluOp::ADD } else { AluOp::MULT };
            let d = if rng.bool() {
                [pick(rng, &INT32S), pick(rng, &INT32S), pick(rng, &INT32S)]
            } else {
                let o = if rng.u8(0..8) == 0 {
                    Dtype::FP32R
                } else {
                    pick(rng, &ALL9)
                };
                [pick(rng, &ALL9), pick(rng, &ALL9), o]
            };
            let s = d.map(|t| t.size().unwrap());
            let (p0, p1, pd) = (part(rng), part(rng), part(rng));
            let src0 = to_2d(walk_split(rng, Region::Sbuf, p0, s[0], count, 2));
            let src1 = to_2d(walk_split(rng, Region::Sbuf, p1, s[1], count, 2));
            let dst = if rng.u8(0..4) == 0 && s[0] == s[2] {
                src0
            } else {
                to_2d(walk_split(rng, Region::Sbuf, pd, s[2], count, 2))
            };
            ExtTta::new(ports << 3, op, d[0], d[1], d[2], src0, src1, dst).encode()
        }
        Kind::Nop => EngineNop::new(rng.u8(0..8) << 3).encode(),
    }
}

fn random_valid(rng: &mut fastrand::Rng, kind: Kind) -> Record {
    loop {
        let r = random_record(rng, kind);
        if check(&r, Target::pool(ARCH)).is_ok() {
            return r;
        }
    }
}

/// Ids and zeros that repeat: the second half of the window of every SBUF
/// partition holds words from a small set (0, ±0.0, 1, 2, NaN, a subnormal).
fn repeat_words(mem: &mut DeviceMemory, rng: &mut fastrand::Rng) {
    const WORDS: [u32; 7] = [0, 0x8000_0000, 1, 2, 0x7FC0_0000, 0x3F80_0000, 0x0000_0001];
    let active = Region::Sbuf.active_bytes(ARCH) as usize;
    let data = mem.region_bytes_mut(Region::Sbuf);
    for p in 0..PARTITIONS as usize {
        let mut w = pick(rng, &WORDS);
        for at in (WINDOW as usize / 2..WINDOW as usize).step_by(4) {
            if rng.u8(0..4) == 0 {
                w = pick(rng, &WORDS);
            }
            data[p * active + at..p * active + at + 4].copy_from_slice(&w.to_le_bytes());
        }
    }
}

#[test]
fn random_streams_of_the_new_kernels_agree_bit_for_bit() {
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0x5EED_007C);
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let mut mem = DeviceMemory::new(ARCH);
    let kinds = [Kind::Clr, Kind::Nonzero, Kind::Bounds, Kind::Tta, Kind::Nop];
    let mut counts = [0usize; 5];
    let (streams, per_stream) = (240, 26);
    for s in 0..streams {
        randomize(&mut mem, &mut rng, s as u8);
        repeat_words(&mut mem, &mut rng);
        let records: Vec<Record> = (0..per_stream)
            .map(|_| {
                if rng.u8(0..12) == 0 {
                    return random_valid_pool(&mut rng, Target::pool(ARCH)).encode();
                }
                let k = rng.usize(0..kinds.len());
                counts[k] += 1;
                random_valid(&mut rng, kinds[k])
            })
            .collect();
        assert_records_agree(&mut gpu_exec, &records, &mem, &format!("stream {s}"));
    }
    for (k, n) in kinds.iter().zip(counts) {
        assert!(n >= 1000, "{n} records of {k:?}");
    }
}

/// An encoding context with at most `max` vec4s per CrossLaneReduce
/// invocation (its other choices fixed).
fn quads_cx(max: u32) -> tpb_emu::device::gpu::batch::EncodeCx {
    tpb_emu::device::gpu::batch::EncodeCx {
        arch: ARCH,
        max_x: 65_535,
        rows_max_chunks: 1,
        add_by_bits: false,
        row_per_max: 64,
        clr_quads_max: max,
        loop_budget: None,
    }
}

/// The Partitions fold 4·`QUADS` positions at a time (`QUADS` vec4 loads
/// per lane) for every fold over 4-byte in dtypes, into 4-, 2- and 1-byte
/// outputs, on bytes that hold NaN, ±0, subnormals, infinities and large
/// integers: each record is checked to take the path, then the GPU against
/// the CPU over all memory (random streams rarely meet its alignment). Rows
/// of 16 positions take 4 vec4s (a software rasterizer's choice) and, with
/// at most 1 allowed or rows of 8, 1 vec4 (a hardware GPU's).
#[test]
fn the_vec4_cross_lane_fold_matches_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0xEC4_007C);
    let mut mem = DeviceMemory::new(ARCH);
    randomize(&mut mem, &mut rng, 0x7C);
    repeat_words(&mut mem, &mut rng);
    let sb = |p, off| Addr4::new(Region::Sbuf, p, off);
    let arith = [ReduceOp::ADD, ReduceOp::AVERAGE, ReduceOp::MAX];
    let bitvec = [
        ReduceOp::BITWISE_OR,
        ReduceOp::BITWISE_AND,
        ReduceOp::BITWISE_XOR,
    ];
    let mut cases = Vec::new();
    for i in [Dtype::FP32, Dtype::INT32, Dtype::UINT32] {
        for op in arith {
            for o in [Dtype::FP32, Dtype::BFLOAT16, Dtype::INT8] {
                cases.push((Opcode::CROSS_LANE_REDUCE_ARITH, op, i, o));
            }
        }
        if i != Dtype::FP32 {
            for op in bitvec {
                cases.push((Opcode::CROSS_LANE_REDUCE_BITVEC, op, i, i));
            }
        }
    }
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    for (n, &(opcode, op, i, o)) in cases.iter().enumerate() {
        // Rows of 16 (or 8) × 3 positions (rows 0x100 bytes apart) from 37
        // partitions, at a 16-byte-aligned offset; the dst rows in another
        // partition. Each case takes 4 vec4s, then 1 by one of two reasons.
        let nac = [128u8, 37, 2][n % 3];
        let os = o.size().unwrap() as i16;
        let one = if n % 2 == 0 { (16, 1) } else { (8, 4) };
        for (row, quads_max) in [(16u16, 4u32), one] {
            let src = Tensor4d::new(sb(0, 0x40), [(row, 1), (3, 0x100 / 4), (1, 0), (1, 0)]);
            let dst = Tensor4d::new(sb(5, 0x800), [(row, 1), (3, 0x80 / os), (1, 0), (1, 0)]);
            let r = S4d4Cr::new(
                opcode,
                op,
                ReduceAxis::PARTITIONS,
                i,
                o,
                nac,
                scale(&mut rng),
                src,
                dst,
            )
            .encode();
            let cx = quads_cx(quads_max);
            let quads = if row == 16 && quads_max == 4 { 4 } else { 1 };
            let key = encoded_key_in(&r, &cx);
            assert!(
                key.constants.contains(&("QUADS", quads)),
                "not the fold of {quads} vec4s: {key:?}"
            );
            gpu_exec.set_clr_quads_max(quads_max);
            let context = format!("case {n}, rows of {row}, at most {quads_max} vec4s");
            assert_records_agree(&mut gpu_exec, &[r], &mem, &context);
        }
    }
}

/// The All axis of MAX, integer ADD and the bitwise folds over 128 lanes ×
/// 1,000 positions (and 2-D walks, and 3 lanes), against the CPU's
/// sequential fold. MAX reads words of −1, −0, +0, ± subnormals (flushed to
/// ±0) and NaN, so the greatest value is a zero whose sign says which was
/// first: a fold in any other order (docs/gpu.md tried one in 64 parts)
/// fails here, where the short random streams did not. On llvmpipe a fold
/// of nac·(M + 1) > 61,440 loop iterations (15/16 of 65,535) runs on the CPU
/// reference (`tuning::loop_budget`; the kernel gave wrong sums past
/// 127 × 514), and 127 × 480 (61,087) still runs as the kernel.
#[test]
fn large_all_axis_folds_match_the_cpu() {
    let Some(gpu) = gpu() else { return };
    const WORDS: [u32; 6] = [0xBF80_0000, 0x8000_0000, 0, 0x7FC0_0000, 1, 0x8000_0001];
    let mut rng = fastrand::Rng::with_seed(0xA11_A715);
    let mut mem = DeviceMemory::new(ARCH);
    let active = Region::Sbuf.active_bytes(ARCH) as usize;
    let data = mem.region_bytes_mut(Region::Sbuf);
    // Bytes 0..0x1000 of each partition: those words; 0x1000..0x2000: random.
    for p in 0..PARTITIONS as usize {
        for at in (0..0x2000).step_by(4) {
            let w = if at < 0x1000 {
                WORDS[rng.usize(..WORDS.len())]
            } else {
                rng.u32(..)
            };
            data[p * active + at..][..4].copy_from_slice(&w.to_le_bytes());
        }
    }
    let sb = |off| Addr4::new(Region::Sbuf, 0, off);
    let one = Tensor4d::new(sb(0x3000), [(1, 1), (1, 0), (1, 0), (1, 0)]);
    let arith = Opcode::CROSS_LANE_REDUCE_ARITH;
    let bitvec = Opcode::CROSS_LANE_REDUCE_BITVEC;
    let cases = [
        (arith, ReduceOp::MAX, Dtype::FP32, Dtype::FP32),
        (arith, ReduceOp::MAX, Dtype::BFLOAT16, Dtype::FP32),
        (arith, ReduceOp::MAX, Dtype::INT16, Dtype::INT32),
        (arith, ReduceOp::ADD, Dtype::INT32, Dtype::INT32),
        (arith, ReduceOp::ADD, Dtype::INT32, Dtype::FP32),
        (arith, ReduceOp::ADD, Dtype::UINT8, Dtype::UINT16),
        (bitvec, ReduceOp::BITWISE_XOR, Dtype::INT32, Dtype::INT32),
        (bitvec, ReduceOp::BITWISE_AND, Dtype::UINT8, Dtype::UINT8),
        (bitvec, ReduceOp::BITWISE_OR, Dtype::INT16, Dtype::INT16),
    ];
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let budget = tpb_emu::device::gpu::batch::EncodeCx::of(&gpu, ARCH).loop_budget;
    for (n, (opcode, op, i, o)) in cases.into_iter().enumerate() {
        // MAX reads the special words, the others the random ones.
        let base = if op == ReduceOp::MAX { 0 } else { 0x1000 };
        let flat = Tensor4d::new(sb(base), [(1000, 1), (1, 0), (1, 0), (1, 0)]);
        let rows = Tensor4d::new(sb(base + 0x40), [(40, 1), (20, 48), (1, 0), (1, 0)]);
        let under = Tensor4d::new(sb(base), [(480, 1), (1, 0), (1, 0), (1, 0)]);
        for (nac, src) in [(128u8, flat), (128, rows), (3, flat), (127, under)] {
            let r = S4d4Cr::new(opcode, op, ReduceAxis::ALL, i, o, nac, 1.0, src, one).encode();
            let text = tpb_emu::isa::text::disasm_record(&r);
            assert!(check(&r, Target::pool(ARCH)).is_ok(), "case {n}: {text}");
            let before = gpu_exec.host_ops();
            assert_records_agree(&mut gpu_exec, &[r], &mem, &format!("case {n}, {nac} lanes"));
            let m = src.num.iter().map(|&x| x as u64).product::<u64>();
            let on_host = budget.is_some_and(|b| nac as u64 * (m + 1) > b - b / 16);
            assert_eq!(
                gpu_exec.host_ops() - before,
                on_host as u64,
                "case {n}, {nac} × {m}"
            );
        }
    }
}

/// Where the Partitions fold takes 4 vec4s, 1 or none (`QUADS`, no GPU
/// needed): each shape breaks one condition of `clr_quads`.
#[test]
fn the_cross_lane_fold_takes_quads_only_where_they_fit() {
    let sb = |p, off| Addr4::new(Region::Sbuf, p, off);
    let t = |off, x: (u16, i16), y: (u16, i16)| Tensor4d::new(sb(0, off), [x, y, (1, 0), (1, 0)]);
    let fp32 = |src, dst| {
        S4d4Cr::new(
            Opcode::CROSS_LANE_REDUCE_ARITH,
            ReduceOp::ADD,
            ReduceAxis::PARTITIONS,
            Dtype::FP32,
            Dtype::FP32,
            64,
            0.0,
            src,
            dst,
        )
        .encode()
    };
    let dst = |x: (u16, i16), y| t(0x1000, x, y);
    // (src, dst, QUADS at most 4, at most 1)
    let cases = [
        // Rows of 16 both sides: 4, or 1 where at most 1 is allowed.
        (t(0x40, (16, 1), (3, 64)), dst((16, 1), (3, 32)), 4, 1),
        // Rows of 32: still 4 (two invocations a row).
        (t(0x40, (32, 1), (2, 64)), dst((32, 1), (2, 32)), 4, 1),
        // Rows of 24 (not whole runs of 16): 1.
        (t(0x40, (24, 1), (2, 64)), dst((24, 1), (2, 32)), 1, 1),
        // src rows of 16, dst rows of 8 (the same 48 positions): 1.
        (t(0x40, (16, 1), (3, 64)), dst((8, 1), (6, 16)), 1, 1),
        // src not 16-byte aligned: none.
        (t(0x44, (16, 1), (3, 64)), dst((16, 1), (3, 32)), 0, 0),
        // A src row step of 65 elements (260 bytes, not 16-byte aligned): none.
        (t(0x40, (16, 1), (3, 65)), dst((16, 1), (3, 32)), 0, 0),
        // src step 2 along x: none.
        (t(0x40, (16, 2), (3, 64)), dst((16, 1), (3, 32)), 0, 0),
        // dst step 2 along x: none.
        (t(0x40, (16, 1), (3, 64)), dst((16, 2), (3, 64)), 0, 0),
    ];
    for (n, (src, dst, four, one)) in cases.into_iter().enumerate() {
        let r = fp32(src, dst);
        assert!(
            check(&r, Target::pool(ARCH)).is_ok(),
            "case {n} must be valid"
        );
        for (max, want) in [(4, four), (1, one)] {
            let cx = quads_cx(max);
            let key = encoded_key_in(&r, &cx);
            let got = key
                .constants
                .iter()
                .find(|c| c.0 == "QUADS")
                .map_or(0, |c| c.1);
            assert_eq!(got, want, "case {n}, at most {max}: {key:?}");
        }
    }
}

/// The CPU backend's chunking never changes a bit: CrossLaneReduce (the
/// fp32 ADD fast path and generic folds, 128 lanes × 2,048 positions, four
/// chunks of positions) and NonzeroWithCount (8 processed lanes × 16,384
/// positions, two chunks of lanes) and a Cast over the elementwise lanes,
/// run on one chunk and on several, compared over all memory.
#[test]
fn cpu_threads_never_change_a_bit() {
    use std::num::NonZeroUsize;
    use tpb_emu::device::cpu::CpuOptions;
    let mut rng = fastrand::Rng::with_seed(0x0007_EAD5);
    let mut mem = DeviceMemory::new(ARCH);
    let data = mem.region_bytes_mut(Region::Sbuf);
    for (i, b) in data.iter_mut().enumerate() {
        // Random words, one in four zero.
        *b = if (i / 4) % 4 == 0 { 0 } else { rng.u8(..) };
    }
    let sb = |p, off| Addr4::new(Region::Sbuf, p, off);
    let rows = |off| Tensor4d::new(sb(0, off), [(256, 1), (8, 256), (1, 0), (1, 0)]);
    let mut records = Vec::new();
    for (opcode, op, d) in [
        (Opcode::CROSS_LANE_REDUCE_ARITH, ReduceOp::ADD, Dtype::FP32),
        (Opcode::CROSS_LANE_REDUCE_ARITH, ReduceOp::MAX, Dtype::FP32),
        (Opcode::CROSS_LANE_REDUCE_ARITH, ReduceOp::ADD, Dtype::INT32),
        (
            Opcode::CROSS_LANE_REDUCE_BITVEC,
            ReduceOp::BITWISE_XOR,
            Dtype::INT32,
        ),
    ] {
        let r = S4d4Cr::new(
            opcode,
            op,
            ReduceAxis::PARTITIONS,
            d,
            d,
            128,
            0.0,
            rows(0),
            rows(0x2000),
        );
        records.push(r.encode());
    }
    let nz = S3d3NonzeroWithCount::new(
        Dtype::FP32,
        128,
        7,
        -1,
        Tensor3d::new(sb(0, 0), [(256, 1), (64, 256), (1, 0)]),
        Tensor3d::new(sb(0, 0x1_0000), [(16_385, 1), (1, 0), (1, 0)]),
    );
    records.push(nz.encode());
    // And the elementwise engine's lanes: a Cast (the chunk path).
    let cast = S4d4Tr::new(
        Opcode::CAST,
        Dtype::FP32,
        Dtype::BFLOAT16,
        128,
        rows(0),
        rows(0x8000),
    );
    records.push(cast.encode());
    for r in &records {
        assert!(
            check(r, Target::pool(ARCH)).is_ok(),
            "{}",
            tpb_emu::isa::text::disasm_record(r)
        );
    }
    let mut one = CpuExecutor {
        options: CpuOptions {
            threads: NonZeroUsize::new(1),
            ..Default::default()
        },
    };
    let mut four = CpuExecutor {
        options: CpuOptions {
            threads: NonZeroUsize::new(4),
            ..Default::default()
        },
    };
    for r in &records {
        let a = run_records(&mut one, &[*r], &mem, ARCH);
        let b = run_records(&mut four, &[*r], &mem, ARCH);
        assert_eq!(
            first_difference(&a, &b),
            None,
            "{}",
            tpb_emu::isa::text::disasm_record(r)
        );
        assert_ne!(first_difference(&a, &mem), None, "the record wrote nothing");
    }
}

#[test]
fn the_cpu_fp32_add_fast_path_matches_the_generic_fold() {
    use tpb_emu::device::cpu::CpuOptions;
    let mut rng = fastrand::Rng::with_seed(0xFA57_007C);
    let mut mem = DeviceMemory::new(ARCH);
    let mut tested = 0;
    for _ in 0..80 {
        randomize(&mut mem, &mut rng, 0);
        let nac = rng.u32(1..=PARTITIONS);
        let count = rng.u16(1..=200);
        let src = walk_split(&mut rng, Region::Sbuf, 0, 4, count, 4);
        let dst = Tensor4d::new(
            Addr4::new(Region::Sbuf, PARTITIONS - 1, 2048),
            [(count, 1), (1, 0), (1, 0), (1, 0)],
        );
        let r = S4d4Cr::new(
            Opcode::CROSS_LANE_REDUCE_ARITH,
            ReduceOp::ADD,
            ReduceAxis::PARTITIONS,
            Dtype::FP32,
            Dtype::FP32,
            nac as u8,
            0.0,
            src,
            dst,
        )
        .encode();
        if check(&r, Target::pool(ARCH)).is_err() {
            continue;
        }
        tested += 1;
        let mut generic = CpuExecutor {
            options: CpuOptions {
                force_generic: true,
                ..Default::default()
            },
        };
        let a = run_records(&mut CpuExecutor::default(), &[r], &mem, ARCH);
        let b = run_records(&mut generic, &[r], &mem, ARCH);
        assert_eq!(first_difference(&a, &b), None);
    }
    assert!(tested >= 20, "{tested} records");
}

/// How the dense NonzeroWithCount test fills its sources.
#[derive(Clone, Copy, Debug)]
enum NzFill {
    /// Runs of zero, −0, NaN, subnormal and 1.0 words, a quarter random:
    /// chunks hold none, some or all nonzeros.
    Runs,
    /// Every word nonzero in both readings: whole chunks of nonzeros (the
    /// second pass's vec4 form where the chunk's first position is aligned).
    Nonzero,
    /// Zeros and −0s: no nonzero as FP32 (all padding), some as INT32.
    Zeros,
    /// One word in sixteen nonzero: mostly padding.
    Sparse,
}

/// The src window of every SBUF partition filled as `fill` says.
fn fill_nz(mem: &mut DeviceMemory, rng: &mut fastrand::Rng, fill: NzFill, bytes: usize) {
    const WORDS: [u32; 6] = [0, 0, 0x8000_0000, 0x7FC0_0000, 1, 0x3F80_0000];
    let active = Region::Sbuf.active_bytes(ARCH) as usize;
    let data = mem.region_bytes_mut(Region::Sbuf);
    for p in 0..PARTITIONS as usize {
        let mut w = 0u32;
        for at in (0..bytes).step_by(4) {
            let x = match fill {
                NzFill::Runs => {
                    if rng.u8(0..8) == 0 {
                        w = pick(rng, &WORDS);
                    }
                    if rng.u8(0..4) == 0 { rng.u32(..) } else { w }
                }
                NzFill::Nonzero => rng.u32(1..0x8000_0000),
                NzFill::Zeros => pick(rng, &[0, 0x8000_0000]),
                NzFill::Sparse => {
                    if rng.u8(0..16) == 0 {
                        rng.u32(1..)
                    } else {
                        0
                    }
                }
            };
            data[p * active + at..p * active + at + 4].copy_from_slice(&x.to_le_bytes());
        }
    }
}

/// NonzeroWithCount's dense form (`DENSE`: vec4 reads, addresses from the
/// position) for int32 and fp32 inputs over T a multiple of 4 in one row or
/// several (up to 24,000: chunks of 376 positions, whose 12 mask words the
/// second pass takes in two blocks), for each [`NzFill`], into a dst that starts on a 16-byte
/// boundary (so whole chunks of nonzeros and of padding go out as vec4s)
/// and one that does not (so the first and last words of each chunk's run
/// go a word at a time): each record is checked to take the form, then the
/// GPU against the CPU over all memory.
#[test]
fn the_dense_nonzero_form_matches_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0xDE45_00F2);
    let mut mem = DeviceMemory::new(ARCH);
    randomize(&mut mem, &mut rng, 0xF2);
    let sb = |p, off| Addr4::new(Region::Sbuf, p, off);
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let mut n = 0;
    let fills = [NzFill::Runs, NzFill::Nonzero, NzFill::Zeros, NzFill::Sparse];
    for fill in fills {
        fill_nz(&mut mem, &mut rng, fill, 0x10 + 4 * 24_000);
        for (t, rows) in [
            (4u16, 1u16),
            (256, 1),
            (1000, 1),
            (64, 8),
            (8192, 1),
            (24_000, 1),
        ] {
            for dst_at in [0x1_8010, 0x1_8004] {
                // Both dtypes and both lane counts over each fill's cases.
                let (i, nac, sp) = match n % 3 {
                    0 => (Dtype::INT32, 128u8, 0u32),
                    1 => (Dtype::FP32, 33, 16),
                    _ => (Dtype::FP32, 128, 0),
                };
                let x = t / rows;
                let src = to_3d(Tensor4d::new(
                    sb(sp, 0x10),
                    [(x, 1), (rows, x as i16), (1, 0), (1, 0)],
                ));
                let dst = to_3d(Tensor4d::new(
                    sb(sp, dst_at),
                    [(t + 1, 1), (1, 0), (1, 0), (1, 0)],
                ));
                let r = S3d3NonzeroWithCount::new(i, nac, rng.i32(-8..8), -7, src, dst).encode();
                let key = encoded_key(&r, 64, false);
                assert!(
                    key.constants.contains(&("DENSE", 1)),
                    "not the dense form: {key:?}"
                );
                assert_records_agree(
                    &mut gpu_exec,
                    &[r],
                    &mem,
                    &format!("{fill:?}, T {t}, {i:?}, {nac} lanes, dst at {dst_at:#x}"),
                );
                n += 1;
            }
        }
    }
    assert_eq!(n, 48);
}
