//! The CPU reference executor against SPEC §6: the seed's worked example with
//! hand-computed outputs, the edge semantics of EC-10..EC-13, EC-19, EC-20,
//! every pool_dim, negative and zero steps, PSUM, start partitions, every
//! EC-13b dtype pair, and the specialised path against the generic one.
//!
//! Every run goes through both CPU paths from the same memory and asserts the
//! two agree byte for byte before the result is checked.

use crate::common;
use common::{IN_DTYPES as IN_TYPES, OUT_DTYPES as OUT_TYPES};
use tpb_emu::device::cpu::pool;
use tpb_emu::device::{CpuExecutor, DeviceMemory, NoTrace, Program, Validated, run_program};
use tpb_emu::device::{CpuOptions, PoolOp};
use tpb_emu::isa::samples::{SEED_DST_OFFSET, SEED_SRC, seed_dst, seed_max_pool_select, seed_pool};
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Addr4, Dtype, Location, Opcode, PoolDim, PoolFunc, Region, S4d4Pl, Tensor4d};
use tpb_emu::limits::Arch;

// ---------------------------------------------------------------------------
// Helpers.

fn run_on(recs: &[S4d4Pl], mem: &mut DeviceMemory, force_generic: bool) {
    let bytes = to_bytes(&recs.iter().map(|r| r.encode()).collect::<Vec<_>>());
    let prog = match Program::from_stream(&bytes, Target::pool(mem.arch())) {
        Ok(p) => p,
        Err(e) => panic!("test record invalid: {e}"),
    };
    let mut cpu = CpuExecutor {
        options: CpuOptions {
            threads: None,
            force_generic,
        },
    };
    run_program(&mut cpu, &prog, mem, &mut NoTrace).expect("runs");
}

/// Runs `recs` on the generic and the specialised path from `init`; asserts
/// both leave identical memory and returns it.
fn run_both(recs: &[S4d4Pl], init: &DeviceMemory) -> DeviceMemory {
    let (mut generic, mut fast) = (init.clone(), init.clone());
    run_both_in(recs, init, &mut generic, &mut fast);
    fast
}

/// [`run_both`] into reused buffers.
fn run_both_in(
    recs: &[S4d4Pl],
    init: &DeviceMemory,
    generic: &mut DeviceMemory,
    fast: &mut DeviceMemory,
) {
    generic.clone_from(init);
    run_on(recs, generic, true);
    fast.clone_from(init);
    run_on(recs, fast, false);
    for region in [Region::Sbuf, Region::Psum] {
        let (g, f) = (generic.region_bytes(region), fast.region_bytes(region));
        if g != f {
            let i = g.iter().zip(f).position(|(a, b)| a != b).unwrap();
            panic!(
                "generic and fast paths differ in {region:?} at byte {i}: {} vs {}",
                g[i], f[i]
            );
        }
    }
}

fn loc(region: Region, partition: u32, offset: u32) -> Location {
    Location {
        region,
        partition,
        offset,
    }
}

fn put_f32(mem: &mut DeviceMemory, at: Location, lanes: &[Vec<f32>]) {
    let bytes: Vec<u8> = lanes
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    mem.write(at, lanes.len() as u32, &bytes).unwrap();
}

fn put_bits32(mem: &mut DeviceMemory, at: Location, bits: &[u32]) {
    let bytes: Vec<u8> = bits.iter().flat_map(|v| v.to_le_bytes()).collect();
    mem.write(at, 1, &bytes).unwrap();
}

fn get_bits32(mem: &DeviceMemory, at: Location, lanes: u32, n: usize) -> Vec<Vec<u32>> {
    let b = mem.read(at, lanes, 4 * n as u64).unwrap();
    b.chunks(4 * n)
        .map(|l| {
            l.chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        })
        .collect()
}

fn get_f32(mem: &DeviceMemory, at: Location, lanes: u32, n: usize) -> Vec<Vec<f32>> {
    get_bits32(mem, at, lanes, n)
        .into_iter()
        .map(|l| l.into_iter().map(f32::from_bits).collect())
        .collect()
}

fn t(region: Region, partition: u32, offset: u32, dims: [(u16, i16); 4]) -> Tensor4d {
    Tensor4d::new(Addr4::new(region, partition, offset), dims)
}

const FLAT: [(u16, i16); 3] = [(1, 1), (1, 1), (1, 1)];

/// A 1-D walk of `n` elements with step `s`.
fn line(region: Region, partition: u32, offset: u32, n: u16, s: i16) -> Tensor4d {
    t(
        region,
        partition,
        offset,
        [(n, s), FLAT[0], FLAT[1], FLAT[2]],
    )
}

/// A Pool/MaxPoolSelect record with pool_dim X over one lane: windows of
/// `period` consecutive elements of `src` (which has `period * outputs` elements).
#[allow(clippy::too_many_arguments)]
fn x_record(
    opcode: Opcode,
    func: PoolFunc,
    scale: f32,
    din: Dtype,
    dout: Dtype,
    period: u16,
    outputs: u16,
    src_off: u32,
    dst_off: u32,
) -> S4d4Pl {
    S4d4Pl::new(
        opcode,
        func,
        PoolDim::X,
        din,
        dout,
        1,
        scale,
        t(
            Region::Sbuf,
            0,
            src_off,
            [(period, 1), (outputs, period as i16), (1, 1), (1, 1)],
        ),
        line(Region::Sbuf, 0, dst_off, outputs, 1),
    )
}

fn max_rec(period: u16, outputs: u16) -> S4d4Pl {
    x_record(
        Opcode::POOL,
        PoolFunc::MAX_POOL,
        1.0,
        Dtype::FP32,
        Dtype::FP32,
        period,
        outputs,
        0,
        0x1000,
    )
}
fn avg_rec(period: u16, outputs: u16, scale: f32) -> S4d4Pl {
    x_record(
        Opcode::POOL,
        PoolFunc::AVG_POOL,
        scale,
        Dtype::FP32,
        Dtype::FP32,
        period,
        outputs,
        0,
        0x1000,
    )
}
fn sel_rec(period: u16, outputs: u16) -> S4d4Pl {
    x_record(
        Opcode::MAX_POOL_SELECT,
        PoolFunc::NONE,
        1.0,
        Dtype::FP32,
        Dtype::UINT32,
        period,
        outputs,
        0,
        0x1000,
    )
}

/// Runs one fp32 X-window record over `input` (lane 0) and returns the output words.
fn run_x(rec: S4d4Pl, input: &[u32]) -> Vec<u32> {
    let mut mem = DeviceMemory::new(Arch::Cayman);
    put_bits32(&mut mem, loc(Region::Sbuf, 0, 0), input);
    let out = rec.dst.num[0] as usize;
    let mem = run_both(&[rec], &mem);
    get_bits32(&mem, loc(Region::Sbuf, 0, 0x1000), 1, out).remove(0)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

const NAN: u32 = 0x7FC0_0000;
const NEG_INF: u32 = 0xFF80_0000;

// ---------------------------------------------------------------------------
// The seed's worked example (seed 000 §5.1): 4×4 → 2×2 over several lanes.

/// Lane maps, row-major a b c d / m n o p / q r s t / v w x y.
fn seed_lanes() -> Vec<Vec<f32>> {
    let up: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let down: Vec<f32> = (1..=16).rev().map(|v| v as f32).collect();
    #[rustfmt::skip]
    let mixed = vec![
        0.0, -1.0, 7.0,  7.0,
       -2.0, -3.0, 7.0,  2.0,
        5.0,  9.0, 9.0, -9.0,
        1.0,  9.0, 0.0,  8.0,
    ];
    let shifted: Vec<f32> = (1..=16).map(|v| v as f32 + 100.0).collect();
    vec![up, down, mixed, shifted]
}

fn seed_memory() -> DeviceMemory {
    let mut mem = DeviceMemory::new(Arch::Cayman);
    put_f32(&mut mem, loc(Region::Sbuf, 0, 0), &seed_lanes());
    mem
}

#[test]
fn seed_example_max() {
    let mem = run_both(&[seed_pool(PoolFunc::MAX_POOL, 4)], &seed_memory());
    let out = get_f32(&mem, loc(Region::Sbuf, 0, SEED_DST_OFFSET), 4, 4);
    assert_eq!(out[0], [6.0, 8.0, 14.0, 16.0]);
    assert_eq!(out[1], [16.0, 14.0, 8.0, 6.0]);
    assert_eq!(out[2], [0.0, 7.0, 9.0, 9.0]);
    assert_eq!(out[3], [106.0, 108.0, 114.0, 116.0]);
}

#[test]
fn seed_example_avg() {
    let mem = run_both(&[seed_pool(PoolFunc::AVG_POOL, 4)], &seed_memory());
    let out = get_f32(&mem, loc(Region::Sbuf, 0, SEED_DST_OFFSET), 4, 4);
    assert_eq!(out[0], [3.5, 5.5, 11.5, 13.5]);
    assert_eq!(out[1], [13.5, 11.5, 5.5, 3.5]);
    assert_eq!(out[2], [-1.5, 5.75, 6.0, 2.0]);
    assert_eq!(out[3], [103.5, 105.5, 111.5, 113.5]);
}

#[test]
fn seed_example_max_pool_select() {
    let mem = run_both(&[seed_max_pool_select(4)], &seed_memory());
    let b = mem
        .read(loc(Region::Sbuf, 0, SEED_DST_OFFSET), 4, 4)
        .unwrap();
    assert_eq!(&b[0..4], [3, 3, 3, 3]);
    assert_eq!(&b[4..8], [0, 0, 0, 0]);
    // Windows in stream order: {0,-1,-2,-3} {7,7,7,2} {5,9,1,9} {9,-9,0,8}.
    assert_eq!(&b[8..12], [0, 0, 1, 0]);
    assert_eq!(&b[12..16], [3, 3, 3, 3]);
}

#[test]
fn seed_example_leaves_other_lanes_and_bytes_alone() {
    let mut init = seed_memory();
    // Lane 4 holds data but is not active.
    put_f32(&mut init, loc(Region::Sbuf, 4, 0), &[vec![1.0; 16]]);
    let mem = run_both(&[seed_pool(PoolFunc::MAX_POOL, 4)], &init);
    assert!(
        mem.read(loc(Region::Sbuf, 4, SEED_DST_OFFSET), 1, 16)
            .unwrap()
            .iter()
            .all(|&b| b == 0)
    );
    let after = mem
        .read(loc(Region::Sbuf, 0, SEED_DST_OFFSET + 16), 4, 16)
        .unwrap();
    assert!(after.iter().all(|&b| b == 0));
}

// ---------------------------------------------------------------------------
// SPEC §6 edge semantics.

#[test]
fn max_ignores_nan_and_all_nan_gives_neg_inf() {
    let nan_neg = 0xFFC1_2345;
    let input = [
        NAN,
        1.0f32.to_bits(),
        0x7F80_0001,
        (-2.0f32).to_bits(), // NaN never wins
        NAN,
        nan_neg,
        0x7FFF_FFFF,
        NAN, // all NaN → −inf
        NEG_INF,
        NEG_INF,
        NEG_INF,
        NEG_INF, // all −inf → −inf
        NEG_INF,
        NAN,
        (-5.0f32).to_bits(),
        NEG_INF, // −5 beats −inf
    ];
    let out = run_x(max_rec(4, 4), &input);
    assert_eq!(
        out,
        [1.0f32.to_bits(), NEG_INF, NEG_INF, (-5.0f32).to_bits()]
    );
}

#[test]
fn max_pool_select_first_max_wins() {
    let f = |v: f32| v.to_bits();
    let input = [
        f(3.0),
        f(5.0),
        f(5.0),
        f(1.0), // first 5 at 1
        NAN,
        f(2.0),
        NAN,
        f(2.0), // NaN skipped, first 2 at 1
        NAN,
        NAN,
        NAN,
        NAN, // nothing beats −inf → 0
        NEG_INF,
        NEG_INF,
        f(-7.0),
        f(-7.0), // −7 at 2
        0x8000_0000,
        0,
        0,
        0x8000_0000, // −0 and +0 are equal: 0
        f(-1.0),
        f(-0.5),
        f(-0.5),
        f(-1.0), // 1
    ];
    let out = run_x(sel_rec(4, 6), &input);
    assert_eq!(out, [1, 1, 0, 2, 0, 1]);
}

#[test]
fn max_keeps_the_first_of_equal_zeros() {
    let input = [0x8000_0000, 0, 0, 0x8000_0000];
    let out = run_x(max_rec(2, 2), &input);
    assert_eq!(out, [0x8000_0000, 0]);
}

#[test]
fn avg_sums_in_stream_order() {
    // 1e8 + 1 rounds to 1e8, − 1e8 gives 0, + 1 gives 1. Any other order
    // (reversed, pairwise) gives 0.
    let input = bits(&[1e8, 1.0, -1e8, 1.0]);
    assert_eq!(run_x(avg_rec(4, 1, 1.0), &input), [1.0f32.to_bits()]);
    let input = bits(&[1.0, -1e8, 1.0, 1e8]);
    assert_eq!(run_x(avg_rec(4, 1, 1.0), &input), [0]);
}

#[test]
fn avg_multiplies_once_after_the_sum() {
    // (1 + 2^-24) rounds to 1 (tie to even); × 3 = 3 exactly. Scaling each
    // element first (3 + 3·2^-24) or a fused multiply-add gives 3 + 2^-22.
    let input = bits(&[1.0, f32::from_bits(0x3380_0000)]);
    let out = run_x(avg_rec(2, 1, 3.0), &input);
    assert_eq!(out, [0x4040_0000]);
    assert_ne!(
        out[0],
        (3.0f32 + 3.0 * f32::from_bits(0x3380_0000)).to_bits()
    );
}

#[test]
fn avg_starts_from_positive_zero() {
    // −0 + −0 from +0.0 is +0; a sum started at −0 would stay −0.
    let input = [0x8000_0000, 0x8000_0000];
    assert_eq!(run_x(avg_rec(2, 1, 0.5), &input), [0]);
}

#[test]
fn subnormals_are_flushed() {
    let sub = 0x0000_0001; // the smallest positive f32 subnormal
    // EC-19 on input: +sub is +0, which does not beat −0 (first max wins).
    assert_eq!(run_x(sel_rec(2, 1), &[0x8000_0000, sub]), [0]);
    assert_eq!(run_x(max_rec(1, 2), &[sub, 0x8000_0001]), [0, 0x8000_0000]);
    // EC-19 on an add: 1.5·2^-126 − 2^-126 = 2^-127 (subnormal) → +0.
    let a = f32::from_bits(0x00C0_0000);
    let b = -f32::MIN_POSITIVE;
    assert_eq!(run_x(avg_rec(2, 1, 1.0), &bits(&[a, b])), [0]);
    // ... and the flushed partial sum is what the next add sees: 0 + 2^-126,
    // not 2^-127 + 2^-126.
    let c = f32::MIN_POSITIVE;
    assert_eq!(run_x(avg_rec(3, 1, 1.0), &bits(&[a, b, c])), [0x0080_0000]);
    // EC-19 on the multiply: 2^-100 × 2^-30 = 2^-130 → +0; negative keeps its sign.
    let tiny = f32::from_bits(0x0D80_0000); // 2^-100
    let scale = f32::from_bits(0x3080_0000); // 2^-30
    assert_eq!(
        run_x(avg_rec(1, 2, scale), &bits(&[tiny, -tiny])),
        [0, 0x8000_0000]
    );
}

#[test]
fn nans_are_canonical_on_store() {
    // inf + −inf = NaN; a negative NaN input; both stored as 0x7FC00000.
    let input = [0x7F80_0000, NEG_INF, 0xFFC1_2345, 0];
    assert_eq!(run_x(avg_rec(2, 2, 1.0), &input), [NAN, NAN]);
    let mut mem = DeviceMemory::new(Arch::Cayman);
    put_bits32(&mut mem, loc(Region::Sbuf, 0, 0), &input);
    let recs = [
        x_record(
            Opcode::POOL,
            PoolFunc::AVG_POOL,
            1.0,
            Dtype::FP32,
            Dtype::FP16,
            2,
            2,
            0,
            0x100,
        ),
        x_record(
            Opcode::POOL,
            PoolFunc::AVG_POOL,
            1.0,
            Dtype::FP32,
            Dtype::BFLOAT16,
            2,
            2,
            0,
            0x200,
        ),
        x_record(
            Opcode::POOL,
            PoolFunc::AVG_POOL,
            1.0,
            Dtype::FP32,
            Dtype::INT32,
            2,
            2,
            0,
            0x300,
        ),
        x_record(
            Opcode::POOL,
            PoolFunc::AVG_POOL,
            1.0,
            Dtype::FP32,
            Dtype::FP32R,
            2,
            2,
            0,
            0x400,
        ),
    ];
    let mem = run_both(&recs, &mem);
    let r = |off, n| mem.read(loc(Region::Sbuf, 0, off), 1, n).unwrap();
    assert_eq!(r(0x100, 4), [0x00, 0x7E, 0x00, 0x7E]);
    assert_eq!(r(0x200, 4), [0xC0, 0x7F, 0xC0, 0x7F]);
    assert_eq!(r(0x300, 8), [0; 8]);
    assert_eq!(r(0x400, 8), [0, 0, 0xC0, 0x7F, 0, 0, 0xC0, 0x7F]);
}

// ---------------------------------------------------------------------------
// Shapes: every pool_dim, steps, PSUM, partitions.

/// 1..=16 contiguous, walked x(2,1) y(2,2) z(2,4) w(2,8): stream order is 1..=16.
fn cube_record(func: PoolFunc, dim: PoolDim, scale: f32, outputs: u16) -> S4d4Pl {
    S4d4Pl::new(
        Opcode::POOL,
        func,
        dim,
        Dtype::FP32,
        Dtype::FP32,
        2,
        scale,
        t(Region::Sbuf, 0, 0, [(2, 1), (2, 2), (2, 4), (2, 8)]),
        line(Region::Sbuf, 0, 0x1000, outputs, 1),
    )
}

#[test]
fn every_pool_dim() {
    let mut init = DeviceMemory::new(Arch::Cayman);
    let up: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let neg: Vec<f32> = up.iter().map(|v| -v).collect();
    put_f32(&mut init, loc(Region::Sbuf, 0, 0), &[up, neg]);
    type Case<'a> = (PoolDim, u16, f32, [&'a [f32]; 2], [&'a [f32]; 2]);
    let cases: [Case; 4] = [
        (
            PoolDim::X,
            8,
            0.5,
            [
                &[2., 4., 6., 8., 10., 12., 14., 16.],
                &[-1., -3., -5., -7., -9., -11., -13., -15.],
            ],
            [
                &[1.5, 3.5, 5.5, 7.5, 9.5, 11.5, 13.5, 15.5],
                &[-1.5, -3.5, -5.5, -7.5, -9.5, -11.5, -13.5, -15.5],
            ],
        ),
        (
            PoolDim::XY,
            4,
            0.25,
            [&[4., 8., 12., 16.], &[-1., -5., -9., -13.]],
            [&[2.5, 6.5, 10.5, 14.5], &[-2.5, -6.5, -10.5, -14.5]],
        ),
        (
            PoolDim::XYZ,
            2,
            0.125,
            [&[8., 16.], &[-1., -9.]],
            [&[4.5, 12.5], &[-4.5, -12.5]],
        ),
        (
            PoolDim::XYZW,
            1,
            0.0625,
            [&[16.], &[-1.]],
            [&[8.5], &[-8.5]],
        ),
    ];
    for (dim, n, scale, max, avg) in cases {
        let mem = run_both(&[cube_record(PoolFunc::MAX_POOL, dim, 1.0, n)], &init);
        let got = get_f32(&mem, loc(Region::Sbuf, 0, 0x1000), 2, n as usize);
        assert_eq!(got, [max[0].to_vec(), max[1].to_vec()], "{dim} max");
        let mem = run_both(&[cube_record(PoolFunc::AVG_POOL, dim, scale, n)], &init);
        let got = get_f32(&mem, loc(Region::Sbuf, 0, 0x1000), 2, n as usize);
        assert_eq!(got, [avg[0].to_vec(), avg[1].to_vec()], "{dim} avg");
    }
}

#[test]
fn negative_and_zero_steps() {
    let mut init = DeviceMemory::new(Arch::Cayman);
    put_f32(
        &mut init,
        loc(Region::Sbuf, 0, 0),
        &[vec![5.0, 7.0, 7.0, 1.0, 1.5, -2.0]],
    );
    // Backwards over elements 3,2,1,0: values 1,7,7,5 — the first 7 is at position 1.
    let sel = S4d4Pl::new(
        Opcode::MAX_POOL_SELECT,
        PoolFunc::NONE,
        PoolDim::X,
        Dtype::FP32,
        Dtype::UINT8,
        1,
        1.0,
        line(Region::Sbuf, 0, 12, 4, -1),
        line(Region::Sbuf, 0, 0x100, 1, 1),
    );
    // Zero step: each window reads one element three times (elements 4 and 5);
    // the outputs go backwards (dst x step −1 from element 1).
    let avg = S4d4Pl::new(
        Opcode::POOL,
        PoolFunc::AVG_POOL,
        PoolDim::X,
        Dtype::FP32,
        Dtype::FP32,
        1,
        0.5,
        t(Region::Sbuf, 0, 16, [(3, 0), (2, 1), (1, 1), (1, 1)]),
        line(Region::Sbuf, 0, 0x204, 2, -1),
    );
    let mem = run_both(&[sel, avg], &init);
    assert_eq!(mem.read(loc(Region::Sbuf, 0, 0x100), 1, 1).unwrap(), [1]);
    // Window 0: 1.5·3·0.5 = 2.25 at element 1; window 1: −2·3·0.5 = −3 at element 0.
    assert_eq!(
        get_f32(&mem, loc(Region::Sbuf, 0, 0x200), 1, 2)[0],
        [-3.0, 2.25]
    );
}

#[test]
fn psum_on_either_side() {
    let mut init = DeviceMemory::new(Arch::Cayman);
    put_f32(
        &mut init,
        loc(Region::Psum, 3, 0x40),
        &[vec![1.0, -4.0, 2.5, 2.0], vec![-1.0, -4.0, 9.0, 8.0]],
    );
    put_f32(
        &mut init,
        loc(Region::Sbuf, 3, 0x40),
        &[vec![10.0, 20.0, 30.0, 40.0], vec![0.5, 0.25, 2.0, 4.0]],
    );
    let rec = |func, scale, dout, src: Tensor4d, dst: Tensor4d| {
        S4d4Pl::new(
            Opcode::POOL,
            func,
            PoolDim::X,
            Dtype::FP32,
            dout,
            2,
            scale,
            src,
            dst,
        )
    };
    let src = |r| t(r, 3, 0x40, [(2, 1), (2, 2), (1, 1), (1, 1)]);
    let recs = [
        // PSUM → PSUM (a PSUM write needs a 4-byte dtype).
        rec(
            PoolFunc::MAX_POOL,
            1.0,
            Dtype::INT32,
            src(Region::Psum),
            line(Region::Psum, 3, 0x100, 2, 1),
        ),
        // PSUM → SBUF fp16.
        rec(
            PoolFunc::AVG_POOL,
            0.5,
            Dtype::FP16,
            src(Region::Psum),
            line(Region::Sbuf, 3, 0x100, 2, 1),
        ),
        // SBUF → PSUM.
        rec(
            PoolFunc::AVG_POOL,
            0.5,
            Dtype::FP32,
            src(Region::Sbuf),
            line(Region::Psum, 3, 0x200, 2, 1),
        ),
    ];
    let mem = run_both(&recs, &init);
    let i32s = mem.read(loc(Region::Psum, 3, 0x100), 2, 8).unwrap();
    let i32s: Vec<i32> = i32s
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(i32s, [1, 2, -1, 9]);
    let h = mem.read(loc(Region::Sbuf, 3, 0x100), 2, 4).unwrap();
    let h: Vec<u16> = h
        .chunks(2)
        .map(|c| u16::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // (1 − 4)/2 = −1.5, (2.5 + 2)/2 = 2.25, −2.5, 8.5 as fp16 bits.
    assert_eq!(h, [0xBE00, 0x4080, 0xC100, 0x4840]);
    assert_eq!(
        get_f32(&mem, loc(Region::Psum, 3, 0x200), 2, 2),
        [vec![15.0, 35.0], vec![0.375, 3.0]]
    );
}

#[test]
fn start_partitions_and_channels_reaching_128() {
    let mut init = DeviceMemory::new(Arch::Cayman);
    // Partition q holds [q, −q, 2q, 0.5].
    let lanes: Vec<Vec<f32>> = (0..128)
        .map(|q| vec![q as f32, -(q as f32), 2.0 * q as f32, 0.5])
        .collect();
    put_f32(&mut init, loc(Region::Sbuf, 0, 0), &lanes);
    let rec = |src_p, dst: Tensor4d, ch| {
        S4d4Pl::new(
            Opcode::POOL,
            PoolFunc::MAX_POOL,
            PoolDim::X,
            Dtype::FP32,
            Dtype::FP32,
            ch,
            1.0,
            t(Region::Sbuf, src_p, 0, [(2, 1), (2, 2), (1, 1), (1, 1)]),
            dst,
        )
    };
    let recs = [
        // Lanes 100..128 into PSUM partitions 100..128.
        rec(100, line(Region::Psum, 100, 0, 2, 1), 28),
        // Reads partitions 10..110, writes 0..100 of the same region: lane p
        // reads partition 10 + p, which lane p + 10 writes (other bytes).
        rec(10, line(Region::Sbuf, 0, 0x1000, 2, 1), 100),
        // One lane at the last partition.
        rec(127, line(Region::Sbuf, 127, 0x2000, 2, 1), 1),
    ];
    let mem = run_both(&recs, &init);
    let max = |q: u32| vec![q as f32, if q == 0 { 0.5 } else { 2.0 * q as f32 }];
    let got = get_f32(&mem, loc(Region::Psum, 100, 0), 28, 2);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, max(100 + i as u32));
    }
    let got = get_f32(&mem, loc(Region::Sbuf, 0, 0x1000), 100, 2);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, max(10 + i as u32), "lane {i}");
    }
    assert_eq!(
        get_f32(&mem, loc(Region::Sbuf, 127, 0x2000), 1, 2)[0],
        max(127)
    );
    assert!(
        mem.read(loc(Region::Sbuf, 100, 0x1000), 28, 8)
            .unwrap()
            .iter()
            .all(|&b| b == 0)
    );
}

// ---------------------------------------------------------------------------
// Every EC-13b dtype pair, against independent code (Rust casts and `half`).

/// Raw element values per input dtype (little-endian bits), chosen to hit
/// rounding, saturation, NaN, inf and subnormals.
fn raw_inputs(d: Dtype) -> Vec<u64> {
    let f32s = |v: &[f32]| v.iter().map(|x| x.to_bits() as u64).collect::<Vec<_>>();
    match d {
        Dtype::UINT8 => vec![0, 1, 127, 128, 200, 255, 3, 77],
        Dtype::INT8 => [0i8, -1, 127, -128, 5, -77, 100, -3]
            .iter()
            .map(|&v| v as u8 as u64)
            .collect(),
        Dtype::UINT16 => vec![0, 1, 300, 65535, 40000, 256, 7, 1000],
        Dtype::INT16 => [0i16, -1, 32767, -32768, 300, -300, 129, -129]
            .iter()
            .map(|&v| v as u16 as u64)
            .collect(),
        Dtype::UINT32 => vec![
            0,
            16_777_217,
            4_294_967_295,
            2_147_483_648,
            70_000,
            16_777_219,
            1,
            255,
        ],
        Dtype::INT32 => [
            0i32,
            -16_777_217,
            2_147_483_647,
            i32::MIN,
            33_554_435,
            -70_000,
            -1,
            40_000,
        ]
        .iter()
        .map(|&v| v as u32 as u64)
        .collect(),
        Dtype::INT64 => [
            0i64,
            (1 << 53) + 1,
            i64::MAX,
            i64::MIN,
            -(1 << 40) - 3,
            9_007_199_791_611_905,
            -5,
            4_294_967_297,
        ]
        .iter()
        .map(|&v| v as u64)
        .collect(),
        Dtype::FP16 => vec![
            0x3C00, 0xFC00, 0x7BFF, 0x0001, 0x8400, 0x7E00, 0xC500, 0x3555,
        ],
        Dtype::BFLOAT16 => vec![
            0x3F80, 0xFF80, 0x7F7F, 0x0001, 0x8080, 0x7FC1, 0xC2F7, 0x4B80,
        ],
        Dtype::FP32 => {
            let mut v = f32s(&[
                1.5,
                -2.75,
                65520.0,
                1e10,
                -3.4e38,
                0.333_333_34,
                -0.5,
                70_000.7,
            ]);
            v[2] = 0x0000_0003; // a subnormal
            v[7] = 0x7FC0_0000; // NaN
            v
        }
        _ => unreachable!(),
    }
}

/// Independent load: Rust casts and `half`, with the EC-19 flush written out.
fn ref_load(d: Dtype, raw: u64) -> f32 {
    let flush = |x: f32| {
        if x.is_subnormal() {
            0.0f32.copysign(x)
        } else {
            x
        }
    };
    match d {
        Dtype::UINT8 => raw as u8 as f32,
        Dtype::INT8 => raw as u8 as i8 as f32,
        Dtype::UINT16 => raw as u16 as f32,
        Dtype::INT16 => raw as u16 as i16 as f32,
        Dtype::UINT32 => raw as u32 as f32,
        Dtype::INT32 => raw as u32 as i32 as f32,
        Dtype::INT64 => raw as i64 as f32,
        Dtype::FP16 => half::f16::from_bits(raw as u16).to_f32(),
        Dtype::BFLOAT16 => flush(half::bf16::from_bits(raw as u16).to_f32()),
        Dtype::FP32 => flush(f32::from_bits(raw as u32)),
        _ => unreachable!(),
    }
}

/// Independent store: little-endian bytes of `x` as `d`.
fn ref_store(d: Dtype, x: f32) -> Vec<u8> {
    match d {
        Dtype::UINT8 => vec![x as u8],
        Dtype::INT8 => vec![x as i8 as u8],
        Dtype::UINT16 => (x as u16).to_le_bytes().to_vec(),
        Dtype::INT16 => (x as i16).to_le_bytes().to_vec(),
        Dtype::UINT32 => (x as u32).to_le_bytes().to_vec(),
        Dtype::INT32 => (x as i32).to_le_bytes().to_vec(),
        Dtype::FP16 if x.is_nan() => 0x7E00u16.to_le_bytes().to_vec(),
        Dtype::FP16 => half::f16::from_f32(x).to_bits().to_le_bytes().to_vec(),
        Dtype::BFLOAT16 if x.is_nan() => 0x7FC0u16.to_le_bytes().to_vec(),
        Dtype::BFLOAT16 => half::bf16::from_f32(x).to_bits().to_le_bytes().to_vec(),
        Dtype::FP32 | Dtype::FP32R if x.is_nan() => 0x7FC0_0000u32.to_le_bytes().to_vec(),
        Dtype::FP32 | Dtype::FP32R => x.to_bits().to_le_bytes().to_vec(),
        _ => unreachable!(),
    }
}

#[test]
fn every_dtype_pair() {
    // Windows of 2 over 8 elements: MAX, AVG ×0.5 and period-1 MAX (a pure conversion).
    let ftz = |x: f32| {
        if x.is_subnormal() {
            0.0f32.copysign(x)
        } else {
            x
        }
    };
    for din in IN_TYPES {
        let raw = raw_inputs(din);
        let isz = din.size().unwrap() as usize;
        let bytes: Vec<u8> = raw
            .iter()
            .flat_map(|r| r.to_le_bytes()[..isz].to_vec())
            .collect();
        let vals: Vec<f32> = raw.iter().map(|&r| ref_load(din, r)).collect();
        for dout in OUT_TYPES {
            let mut init = DeviceMemory::new(Arch::Cayman);
            init.write(loc(Region::Sbuf, 0, 0), 1, &bytes).unwrap();
            let rec = |func, scale, period, outputs, dst| {
                x_record(
                    Opcode::POOL,
                    func,
                    scale,
                    din,
                    dout,
                    period,
                    outputs,
                    0,
                    dst,
                )
            };
            let recs = [
                rec(PoolFunc::MAX_POOL, 1.0, 2, 4, 0x100),
                rec(PoolFunc::AVG_POOL, 0.5, 2, 4, 0x200),
                rec(PoolFunc::MAX_POOL, 1.0, 1, 8, 0x300),
            ];
            let mem = run_both(&recs, &init);
            let osz = dout.size().unwrap() as u64;
            let mut want_max = vec![];
            let mut want_avg = vec![];
            for w in vals.chunks(2) {
                let mut m = f32::NEG_INFINITY;
                for &x in w {
                    if x > m {
                        m = x;
                    }
                }
                want_max.extend(ref_store(dout, m));
                let s = ftz(ftz(0.0 + w[0]) + w[1]);
                want_avg.extend(ref_store(dout, ftz(s * 0.5)));
            }
            let want_conv: Vec<u8> = vals
                .iter()
                .flat_map(|&x| ref_store(dout, if x.is_nan() { f32::NEG_INFINITY } else { x }))
                .collect();
            let got = |off, n| mem.read(loc(Region::Sbuf, 0, off), 1, n * osz).unwrap();
            assert_eq!(got(0x100, 4), want_max, "max {din} -> {dout}");
            assert_eq!(got(0x200, 4), want_avg, "avg {din} -> {dout}");
            assert_eq!(got(0x300, 8), want_conv, "convert {din} -> {dout}");
        }
        for dout in [Dtype::UINT8, Dtype::UINT16, Dtype::UINT32] {
            let mut init = DeviceMemory::new(Arch::Cayman);
            init.write(loc(Region::Sbuf, 0, 0), 1, &bytes).unwrap();
            let rec = x_record(
                Opcode::MAX_POOL_SELECT,
                PoolFunc::NONE,
                1.0,
                din,
                dout,
                4,
                2,
                0,
                0x100,
            );
            let mem = run_both(&[rec], &init);
            let mut want: Vec<u8> = vec![];
            for w in vals.chunks(4) {
                let (mut m, mut at) = (f32::NEG_INFINITY, 0u32);
                for (i, &x) in w.iter().enumerate() {
                    if x > m {
                        (m, at) = (x, i as u32);
                    }
                }
                want.extend(&at.to_le_bytes()[..dout.size().unwrap() as usize]);
            }
            let got = mem
                .read(loc(Region::Sbuf, 0, 0x100), 1, want.len() as u64)
                .unwrap();
            assert_eq!(got, want, "select {din} -> {dout}");
        }
    }
}

// ---------------------------------------------------------------------------
// The specialised path against the generic one, on random records.

/// Random element bits: mostly ordinary values, with NaN, inf, zeros,
/// subnormals and ties sprinkled in.
fn random_bytes(rng: &mut fastrand::Rng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    // NaN, ±inf, ±0, subnormals, 1, and small normals whose sums are subnormal.
    let specials: [u32; 11] = [
        0x0080_0000,
        0x80C0_0000,
        0x00A0_0000,
        0x7FC0_0000,
        0xFF80_0000,
        0x7F80_0000,
        0x8000_0000,
        0,
        1,
        0x8000_0003,
        0x3F80_0000,
    ];
    for c in v.chunks_mut(4) {
        let w = match rng.u32(..8) {
            0 => specials[rng.usize(..specials.len())],
            1 => rng.u32(..),
            _ => (rng.f32() * 200.0 - 100.0).to_bits() & rng.pick_mask(),
        };
        let b = w.to_le_bytes();
        c.copy_from_slice(&b[..c.len()]);
    }
    v
}

trait PickMask {
    fn pick_mask(&mut self) -> u32;
}
impl PickMask for fastrand::Rng {
    fn pick_mask(&mut self) -> u32 {
        // Sometimes clear low mantissa bits so equal values (and ties) appear.
        if self.bool() {
            0xFFFF_0000
        } else {
            0xFFFF_FFFF
        }
    }
}

/// A random Pool/MaxPoolSelect record shaped like real pooling (x step 1,
/// window rows, adjacent or overlapping windows), or anything else walkable.
fn random_record(r: &mut fastrand::Rng) -> S4d4Pl {
    let select = r.u32(..4) == 0;
    let din = IN_TYPES[r.usize(..IN_TYPES.len())];
    let dout = if select {
        [Dtype::UINT8, Dtype::UINT16, Dtype::UINT32][r.usize(..3)]
    } else {
        OUT_TYPES[r.usize(..OUT_TYPES.len())]
    };
    let func = if select {
        PoolFunc::NONE
    } else if r.bool() {
        PoolFunc::MAX_POOL
    } else {
        PoolFunc::AVG_POOL
    };
    let dim = [PoolDim::X, PoolDim::XY, PoolDim::XYZ, PoolDim::XYZW][r.usize(..4)];
    let k = dim.window_dims().unwrap();
    let num: [u16; 4] = std::array::from_fn(|d| r.u16(1..=if d == 0 { 5 } else { 4 }));
    let mut step = [1i16; 4];
    // Rows of the window: x step 1 usually; y/z steps past the row.
    step[0] = if r.u32(..6) == 0 { r.i16(-2..=2) } else { 1 };
    let row = num[0] as i16 * step[0].max(1);
    for (d, s) in step.iter_mut().enumerate().skip(1) {
        *s = match r.u32(..6) {
            0 => r.i16(-3..=3),
            1 => row,
            _ => row * (d as i16 + 1) * r.i16(1..=3),
        };
    }
    if k < 4 && r.bool() {
        // Adjacent windows along the run dim (the contiguous hot shape).
        step[k] = num[0] as i16;
    }
    let src = Tensor4d {
        addr: Addr4(0),
        step,
        num,
    };
    let (lo, _) = src.index_range();
    let isz = din.size().unwrap() as i64;
    let src_off = (-lo * isz + r.i64(0..4) * 8) as u32;
    let period: u64 = num[..k].iter().map(|&n| n as u64).product();
    let outputs = (src.elements() / period) as u16;
    let (a, b) = if outputs.is_multiple_of(2) && r.bool() {
        (outputs / 2, 2)
    } else {
        (outputs, 1)
    };
    let dstep0 = if r.u32(..4) == 0 { -1 } else { r.i16(1..=2) };
    let ch = r.u8(1..=6);
    let src_region = if r.u32(..4) == 0 {
        Region::Psum
    } else {
        Region::Sbuf
    };
    let dst_region = if dout.size() == Some(4) && r.u32(..4) == 0 {
        Region::Psum
    } else {
        Region::Sbuf
    };
    let dst_base = if dst_region == Region::Psum {
        0x2000
    } else {
        0x10000
    };
    let dst_off = dst_base + (r.u32(..4) * 8) + if dstep0 < 0 { 2048 } else { 0 };
    let dst = t(
        Region::Sbuf,
        0,
        dst_off,
        [
            (a, dstep0),
            (b, (a as i16) * dstep0.abs() * 2 + 1),
            (1, 0),
            (1, 0),
        ],
    );
    let (sp, dp) = (r.u32(0..4), r.u32(0..4));
    let mut src = src;
    src.addr = Addr4::new(src_region, sp, src_off);
    let mut dst = dst;
    dst.addr = Addr4::new(dst_region, dp, dst_off);
    let scale = [0.25f32, 0.5, 1.0 / 3.0, 1e-20, 3.0][r.usize(..5)];
    let (opcode, scale) = if select {
        (Opcode::MAX_POOL_SELECT, 1.0)
    } else if func == PoolFunc::MAX_POOL {
        (Opcode::POOL, 1.0)
    } else {
        (Opcode::POOL, scale)
    };
    S4d4Pl::new(opcode, func, dim, din, dout, ch, scale, src, dst)
}

#[test]
fn fast_path_matches_generic_path_on_random_records() {
    let mut rng = fastrand::Rng::with_seed(0x5EED_0003);
    let mut init = DeviceMemory::new(Arch::Cayman);
    for region in [Region::Sbuf, Region::Psum] {
        for p in 0..10 {
            let bytes = random_bytes(&mut rng, 0x4000);
            init.write(loc(region, p, 0), 1, &bytes).unwrap();
        }
    }
    let (mut ran, mut fast) = (0, 0);
    let (mut gen_mem, mut fast_mem) = (init.clone(), init.clone());
    for _ in 0..4000 {
        let rec = random_record(&mut rng);
        let Ok(v) = Validated::new(0, rec.encode(), Target::pool(Arch::Cayman)) else {
            continue;
        };
        let op = PoolOp::from_validated(&v).unwrap();
        if pool::fast_path_applies(&op) {
            fast += 1;
        }
        run_both_in(&[rec], &init, &mut gen_mem, &mut fast_mem);
        ran += 1;
        if ran == 400 {
            break;
        }
    }
    eprintln!("{ran} random records ran, {fast} on the fast path");
    assert!(ran >= 300, "only {ran} random records were valid");
    assert!(fast * 2 >= ran, "only {fast} of {ran} took the fast path");
}

#[test]
fn fast_path_matches_generic_on_a_large_multithreaded_record() {
    // 2×2 fp32 windows over 128 lanes of a 64×256 map: big enough to be split over threads.
    let (h, w) = (64u16, 256u16);
    let mut rng = fastrand::Rng::with_seed(7);
    let mut init = DeviceMemory::new(Arch::Cayman);
    let bytes = random_bytes(&mut rng, 128 * h as usize * w as usize * 4);
    init.write(loc(Region::Sbuf, 0, 0), 128, &bytes).unwrap();
    for func in [PoolFunc::MAX_POOL, PoolFunc::AVG_POOL] {
        let rec = S4d4Pl::new(
            Opcode::POOL,
            func,
            PoolDim::XY,
            Dtype::FP32,
            Dtype::FP32,
            128,
            if func == PoolFunc::AVG_POOL {
                0.25
            } else {
                1.0
            },
            t(
                Region::Sbuf,
                0,
                0,
                [(2, 1), (2, w as i16), (w / 2, 2), (h / 2, 2 * w as i16)],
            ),
            t(
                Region::Sbuf,
                0,
                0x20000,
                [(w / 2, 1), (h / 2, (w / 2) as i16), (1, 1), (1, 1)],
            ),
        );
        let v = Validated::new(0, rec.encode(), Target::pool(Arch::Cayman)).unwrap();
        let op = PoolOp::from_validated(&v).unwrap();
        assert!(pool::fast_path_applies(&op));
        let threads = CpuOptions::default().threads_for(&op.into());
        assert!(threads >= 1);
        let mem = run_both(&[rec], &init);
        // Spot-check one window against the definition by hand.
        let lane5 = &bytes[5 * (h as usize * w as usize * 4)..];
        let f = |i: usize| {
            let x = f32::from_le_bytes(lane5[4 * i..4 * i + 4].try_into().unwrap());
            if x.is_subnormal() {
                0.0f32.copysign(x)
            } else {
                x
            }
        };
        let win = [
            f(2 * 3 + 2 * w as usize * 7),
            f(2 * 3 + 1 + 2 * w as usize * 7),
            f(2 * 3 + w as usize * 15),
            f(2 * 3 + 1 + w as usize * 15),
        ];
        let got = get_bits32(
            &mem,
            loc(Region::Sbuf, 5, 0x20000 + 4 * (7 * (w as u32 / 2) + 3)),
            1,
            1,
        )[0][0];
        let want = if func == PoolFunc::MAX_POOL {
            let mut m = f32::NEG_INFINITY;
            for x in win {
                if x > m {
                    m = x;
                }
            }
            m
        } else {
            let ftz = |x: f32| {
                if x.is_subnormal() {
                    0.0f32.copysign(x)
                } else {
                    x
                }
            };
            let s = ftz(ftz(ftz(ftz(0.0 + win[0]) + win[1]) + win[2]) + win[3]);
            ftz(s * 0.25)
        };
        let want = if want.is_nan() { NAN } else { want.to_bits() };
        assert_eq!(got, want, "{func}");
    }
}

#[test]
fn seed_source_walk_is_the_seed_stream() {
    // The sample's src walk visits a,b,m,n, c,d,o,p, q,r,v,w, s,t,x,y.
    let mut v = vec![];
    SEED_SRC.for_each_index(|i| v.push(i));
    assert_eq!(v, [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]);
    assert_eq!(seed_dst().elements(), 4);
}
