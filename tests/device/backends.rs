//! One table of cases, run on the CPU reference and on the GPU backend: the
//! GPU's memory must equal the CPU's bit for bit (every byte of SBUF and
//! PSUM), and hand-derived outputs must come out of both.

use crate::common;
use crate::random_walks::*;
use common::*;
use tpb_emu::device::gpu::{GpuExecutor, GpuMemory, Kernels, batch};
use tpb_emu::device::{CpuExecutor, DeviceMemory, Executor};
use tpb_emu::isa::enums::{Dtype, PoolDim, PoolFunc};
use tpb_emu::isa::samples::{SEED_DST_OFFSET, seed_max_pool_select, seed_pool};
use tpb_emu::isa::validate::{Target, check};
use tpb_emu::isa::{Addr4, Location, Region, S4d4Pl, Tensor4d};
use tpb_emu::limits::Arch;

const ARCH: Arch = Arch::Cayman;

fn valid(p: S4d4Pl) -> S4d4Pl {
    if let Err(f) = check(&p.encode(), Target::pool(ARCH)) {
        panic!("table case invalid: {} ({f})", f.predicate());
    }
    p
}

/// The table: the seed example, every dtype pair, SBUF/PSUM, negative steps,
/// all pool_dims, MaxPoolSelect. Records are independent; memory holds
/// special values (NaN, ±inf, ±0, subnormals) from [`randomize`].
fn table() -> Vec<(String, S4d4Pl)> {
    let mut t = vec![
        ("seed max".into(), seed_pool(PoolFunc::MAX_POOL, 128)),
        ("seed avg".into(), seed_pool(PoolFunc::AVG_POOL, 128)),
        ("seed select".into(), seed_max_pool_select(128)),
    ];
    for &i in &IN_DTYPES {
        for &o in &OUT_DTYPES {
            for func in [PoolFunc::MAX_POOL, PoolFunc::AVG_POOL] {
                let mut p = seed_pool(func, 33);
                p.in_dtype = i;
                p.out_dtype = o;
                // A 4×4 map of `i` at offset 0 (steps in elements), output at 0x200.
                p.src = Tensor4d::new(p.src.addr, [(2, 1), (2, 4), (2, 2), (2, 8)]);
                p.dst.addr = Addr4::new(Region::Sbuf, 0, 0x200);
                t.push((format!("{func} {i} -> {o}"), p));
            }
        }
    }
    for (sr, dr) in [
        (Region::Psum, Region::Sbuf),
        (Region::Sbuf, Region::Psum),
        (Region::Psum, Region::Psum),
    ] {
        let mut p = seed_pool(PoolFunc::AVG_POOL, 128);
        p.src.addr = Addr4::new(sr, 0, 0x40);
        p.dst.addr = Addr4::new(dr, 0, 0x300);
        t.push((format!("avg {} -> {}", sr.name(), dr.name()), p));
    }
    let mut back = seed_pool(PoolFunc::MAX_POOL, 100);
    back.src = Tensor4d::new(
        Addr4::new(Region::Sbuf, 20, 60),
        [(2, -1), (2, -4), (2, -2), (2, -8)],
    );
    back.dst = Tensor4d::new(
        Addr4::new(Region::Sbuf, 28, 0x30C),
        [(2, -1), (2, -2), (1, 1), (1, 1)],
    );
    t.push(("negative steps, start partitions 20 and 28".into(), back));
    for (dim, dst_n) in [
        (PoolDim::X, 8u16),
        (PoolDim::XY, 4),
        (PoolDim::XYZ, 2),
        (PoolDim::XYZW, 1),
    ] {
        for func in [PoolFunc::MAX_POOL, PoolFunc::AVG_POOL] {
            let mut p = seed_pool(func, 64);
            p.pool_dim = dim;
            if func == PoolFunc::AVG_POOL {
                p.pool_scale_bits = (1.0f32 / (16 / dst_n) as f32).to_bits();
            }
            p.dst = Tensor4d::new(p.dst.addr, [(dst_n, 1), (1, 1), (1, 1), (1, 1)]);
            t.push((format!("{func} {dim}"), p));
        }
    }
    for out in [Dtype::UINT8, Dtype::UINT16, Dtype::UINT32] {
        for inp in [Dtype::FP32, Dtype::BFLOAT16, Dtype::INT8, Dtype::UINT32] {
            let mut p = seed_max_pool_select(128);
            p.in_dtype = inp;
            p.out_dtype = out;
            p.dst.addr = Addr4::new(Region::Sbuf, 0, 0x380);
            t.push((format!("select {inp} -> {out}"), p));
        }
    }
    // A zero step re-reads one element across a window.
    let mut z = seed_pool(PoolFunc::AVG_POOL, 16);
    z.src = Tensor4d::new(z.src.addr, [(2, 0), (2, 4), (2, 2), (2, 8)]);
    t.push(("zero x step".into(), z));
    t.into_iter().map(|(n, p)| (n, valid(p))).collect()
}

/// Runs `records` from `mem` on the CPU reference and on `gpu`; on any
/// difference in SBUF/PSUM panics with `context`, the first differing byte
/// and the records' text. Returns the CPU's memory.
fn assert_agree(
    gpu: &mut GpuExecutor,
    records: &[S4d4Pl],
    mem: &DeviceMemory,
    context: &str,
) -> DeviceMemory {
    let raw: Vec<Record> = records.iter().map(|r| r.encode()).collect();
    assert_records_agree(gpu, &raw, mem, context)
}

/// [`assert_agree`] for raw records of any kernel.
pub(crate) fn assert_records_agree(
    gpu: &mut GpuExecutor,
    records: &[Record],
    mem: &DeviceMemory,
    context: &str,
) -> DeviceMemory {
    let cpu = run_records(&mut CpuExecutor::default(), records, mem, ARCH);
    let gpu_out = run_records(gpu, records, mem, ARCH);
    if let Some((region, i, a, b)) = first_difference(&cpu, &gpu_out) {
        let text: Vec<String> = records
            .iter()
            .map(tpb_emu::isa::text::disasm_record)
            .collect();
        let active = region.active_bytes(ARCH) as usize;
        panic!(
            "{context}: {} byte {i} (partition {}, offset {}): cpu {a:#04x} gpu {b:#04x}\n{}",
            region.name(),
            i / active,
            i % active,
            text.join("\n")
        );
    }
    cpu
}

/// The pipeline `r` (a valid POOL record) encodes to with at most
/// `row_per_max` positions per elementwise invocation and `add_by_bits`
/// (and a hardware GPU's other choices).
pub(crate) fn encoded_key(
    r: &Record,
    row_per_max: u32,
    add_by_bits: bool,
) -> tpb_emu::device::gpu::kernels::PipelineKey {
    let cx = tpb_emu::device::gpu::batch::EncodeCx {
        arch: ARCH,
        max_x: 65_535,
        rows_max_chunks: 1,
        add_by_bits,
        row_per_max,
        clr_quads_max: 1,
        loop_budget: None,
    };
    encoded_key_in(r, &cx)
}

/// The pipeline `r` (a valid POOL record) encodes to in `cx`.
pub(crate) fn encoded_key_in(
    r: &Record,
    cx: &tpb_emu::device::gpu::batch::EncodeCx,
) -> tpb_emu::device::gpu::kernels::PipelineKey {
    use tpb_emu::device::gpu::executor::encode;
    use tpb_emu::device::{Op, Validated};
    let text = tpb_emu::isa::text::disasm_record(r);
    let v = Validated::new(0, *r, Target::pool(ARCH)).unwrap_or_else(|e| panic!("{e}\n{text}"));
    encode(&Op::from_validated(&v).expect("a datapath record"), cx).key
}

#[test]
fn gpu_matches_cpu_on_every_table_case() {
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0xB4C4);
    let mut mem = DeviceMemory::new(ARCH);
    randomize(&mut mem, &mut rng, 0xA5);
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let table = table();
    assert!(table.len() > 200);
    for (name, p) in &table {
        let cpu = assert_agree(&mut gpu_exec, &[*p], &mem, name);
        assert!(
            first_difference(&cpu, &mem).is_some(),
            "{name}: the record changed nothing"
        );
    }
}

/// Writes f32 values to lane `lane` of SBUF at offset 0.
fn put_f32(mem: &mut DeviceMemory, lane: u32, values: &[f32]) {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let loc = Location {
        region: Region::Sbuf,
        partition: lane,
        offset: 0,
    };
    mem.write(loc, 1, &bytes).unwrap();
}

fn get_u32s(mem: &DeviceMemory, lane: u32, offset: u32, n: usize) -> Vec<u32> {
    let loc = Location {
        region: Region::Sbuf,
        partition: lane,
        offset,
    };
    let b = mem.read(loc, 1, 4 * n as u64).unwrap();
    b.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Hand-derived results on both backends: the seed's 4×4 map a..y, special values.
fn hand_cases(exec: &mut dyn Executor) {
    let mut mem = DeviceMemory::new(ARCH);
    // Lane 0: 0..16. Window-major stream per seed 000 §5.1.
    put_f32(&mut mem, 0, &(0..16).map(|v| v as f32).collect::<Vec<_>>());
    // Lane 1: specials. Windows: {NaN, -0, NaN, +0} {NaN x4 as 2 rows} ...
    let nan = f32::NAN;
    let sub = f32::from_bits(0x0000_0001);
    put_f32(
        &mut mem,
        1,
        &[
            nan,
            -0.0,
            nan,
            nan,
            0.0,
            1.0,
            nan,
            nan,
            -1.0,
            sub,
            3.0,
            3.0,
            -sub,
            2.0,
            3.0,
            -f32::INFINITY,
        ],
    );
    let max = run_on(exec, &[seed_pool(PoolFunc::MAX_POOL, 2)], &mem);
    let d = SEED_DST_OFFSET;
    assert_eq!(
        get_u32s(&max, 0, d, 4),
        [5f32, 7., 13., 15.].map(f32::to_bits)
    );
    // Windows of lane 1: {NaN,-0,0,1} -> 1; {NaN,NaN,NaN,NaN} -> -inf; {-1,sub,-sub,2} -> 2; {3,3,3,-inf} -> 3.
    assert_eq!(
        get_u32s(&max, 1, d, 4),
        [
            1.0f32.to_bits(),
            0xFF80_0000,
            2.0f32.to_bits(),
            3.0f32.to_bits()
        ]
    );
    let avg = run_on(exec, &[seed_pool(PoolFunc::AVG_POOL, 2)], &mem);
    assert_eq!(
        get_u32s(&avg, 0, d, 4),
        [2.5f32, 4.5, 10.5, 12.5].map(f32::to_bits)
    );
    // NaN windows average to the canonical NaN (EC-20); subnormals flush (EC-19):
    // (-1+0+0+2)/4; a -inf in the window makes the average -inf.
    assert_eq!(
        get_u32s(&avg, 1, d, 4),
        [0x7FC0_0000, 0x7FC0_0000, 0.25f32.to_bits(), 0xFF80_0000]
    );
    let sel = run_on(exec, &[seed_max_pool_select(2)], &mem);
    let loc = Location {
        region: Region::Sbuf,
        partition: 0,
        offset: d,
    };
    assert_eq!(sel.read(loc, 2, 4).unwrap(), [3, 3, 3, 3, 3, 0, 3, 0]);
    // -0 vs +0: with the window {-0, +0}, MAX keeps the first (-0).
    let mut zeros = DeviceMemory::new(ARCH);
    put_f32(&mut zeros, 0, &[-0.0, 0.0]);
    let mut p = seed_pool(PoolFunc::MAX_POOL, 1);
    p.pool_dim = PoolDim::X;
    p.src = Tensor4d::new(p.src.addr, [(2, 1), (1, 1), (1, 1), (1, 1)]);
    p.dst = Tensor4d::new(p.dst.addr, [(1, 1), (1, 1), (1, 1), (1, 1)]);
    let out = run_on(exec, &[valid(p)], &zeros);
    assert_eq!(get_u32s(&out, 0, d, 1), [0x8000_0000]);
    // AVG's one multiply rounds before EC-19 flushes: (1 - 2^-24) · 2^-126 =
    // 2^-126 - 2^-150 ties to even, up to 2^-126; (1 - 2^-23) · 2^-126 is the
    // largest subnormal and flushes; 2^127 · 2^-126 = 2; 2^127 · 2 overflows to inf.
    let mut band = DeviceMemory::new(ARCH);
    let words = [
        0x3F7F_FFFF,
        0x3F7F_FFFE,
        0xBF7F_FFFF,
        0x3F80_0000,
        0x7F00_0000,
    ];
    put_f32(&mut band, 0, &words.map(f32::from_bits));
    let mut p = seed_pool(PoolFunc::AVG_POOL, 1);
    p.pool_dim = PoolDim::X;
    p.src = Tensor4d::new(p.src.addr, [(1, 1), (5, 1), (1, 1), (1, 1)]);
    p.dst = Tensor4d::new(p.dst.addr, [(5, 1), (1, 1), (1, 1), (1, 1)]);
    p.pool_scale_bits = 0x0080_0000;
    let out = run_on(exec, &[valid(p)], &band);
    assert_eq!(
        get_u32s(&out, 0, d, 5),
        [0x0080_0000, 0, 0x8080_0000, 0x0080_0000, 0x4000_0000]
    );
    p.pool_scale_bits = 2.0f32.to_bits();
    let out = run_on(exec, &[valid(p)], &band);
    assert_eq!(get_u32s(&out, 0, d, 5)[4], 0x7F80_0000);
}

#[test]
fn hand_derived_values_on_the_cpu() {
    hand_cases(&mut CpuExecutor::default());
}

#[test]
fn hand_derived_values_on_the_gpu() {
    let Some(gpu) = gpu() else { return };
    hand_cases(&mut GpuExecutor::new(&gpu, ARCH).expect("pipeline"));
}

/// AVG's sum both ways on one adapter: integer adds (`ADD_BY_BITS`, what
/// every hardware GPU runs) and the adapter's own f32 adds (what software
/// rasterizers run), each against the CPU on the table's AVG cases, which
/// hold infinities, NaN and values that cancel.
#[test]
fn both_avg_sums_agree_with_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0xADD5);
    let mut mem = DeviceMemory::new(ARCH);
    randomize(&mut mem, &mut rng, 0x3C);
    let avg: Vec<_> = table()
        .into_iter()
        .filter(|(_, p)| p.pool_func == PoolFunc::AVG_POOL)
        .collect();
    assert!(avg.len() > 20);
    for by_bits in [true, false] {
        let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
        gpu_exec.set_add_by_bits(by_bits);
        hand_cases(&mut gpu_exec);
        for (name, p) in &avg {
            assert_agree(
                &mut gpu_exec,
                &[*p],
                &mem,
                &format!("{name}, by bits {by_bits}"),
            );
        }
    }
}

#[test]
fn random_streams_agree_bit_for_bit() {
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0x5EED_0004);
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let mut mem = DeviceMemory::new(ARCH);
    let (streams, per_stream) = (100, 20);
    for s in 0..streams {
        randomize(&mut mem, &mut rng, s as u8);
        let records: Vec<S4d4Pl> = (0..per_stream)
            .map(|_| random_valid_pool(&mut rng, Target::pool(ARCH)))
            .collect();
        assert_agree(&mut gpu_exec, &records, &mem, &format!("stream {s}"));
    }
}

/// Records big enough that the shader's float-based division (`udiv`) meets
/// invocation ids in the hundreds of thousands and odd divisors, on both
/// entry points: a generic fp16 record (dst walked over 29 × 37 × 7) and a
/// `pool_rows` record with runs of 4 vec4s whose dst rows carry mid-invocation.
#[test]
fn large_records_with_odd_counts_agree() {
    use tpb_emu::device::PoolOp;
    use tpb_emu::device::Validated;
    use tpb_emu::device::gpu::params::{dst_vec4, rows_chunks, rows_path};
    use tpb_emu::isa::Opcode;
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0x1A26_E000);
    let sbuf = |offset| Addr4::new(Region::Sbuf, 0, offset);
    let generic = S4d4Pl::new(
        Opcode::POOL,
        PoolFunc::MAX_POOL,
        PoolDim::X,
        Dtype::FP16,
        Dtype::FP32,
        128,
        1.0,
        Tensor4d::new(sbuf(0), [(3, 1), (37, 3), (29, 111), (7, 3219)]),
        Tensor4d::new(sbuf(0x1_0000), [(29, 1), (37, 29), (7, 29 * 37), (1, 1)]),
    );
    let rows = S4d4Pl::new(
        Opcode::POOL,
        PoolFunc::AVG_POOL,
        PoolDim::XY,
        Dtype::FP32,
        Dtype::FP32,
        128,
        0.25,
        Tensor4d::new(sbuf(0), [(2, 1), (2, 96), (48, 2), (61, 192)]),
        Tensor4d::new(sbuf(0x1_0000), [(48, 1), (61, 52), (1, 1), (1, 1)]),
    );
    let op = |p: &S4d4Pl| {
        let v = Validated::new(0, p.encode(), Target::pool(ARCH)).expect("valid");
        PoolOp::from_validated(&v).unwrap()
    };
    assert!(!rows_path(&op(&generic)));
    let r = op(&rows);
    assert!(rows_path(&r) && dst_vec4(&r) && rows_chunks(&r, 4) == 4);
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let mut mem = DeviceMemory::new(ARCH);
    for p in [generic, rows] {
        randomize(&mut mem, &mut rng, 0xA5);
        randomize_lanes(&mut mem, &mut rng, 0..0x1_0000);
        let cpu = assert_agree(&mut gpu_exec, &[p], &mem, "large record");
        assert!(
            first_difference(&cpu, &mem).is_some(),
            "the record wrote nothing"
        );
    }
}

/// AVG's one multiply (done in integer arithmetic on the GPU) against the
/// CPU's IEEE product: one-element windows of random words (specials and
/// subnormals included) times random normal scales, tiny ones to reach the
/// band below 2^-126 and huge ones to overflow.
#[test]
fn avg_products_agree_for_any_scale() {
    use tpb_emu::isa::Opcode;
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0x5CA1_E000);
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let mut mem = DeviceMemory::new(ARCH);
    let sbuf = |offset| Addr4::new(Region::Sbuf, 0, offset);
    for i in 0..40 {
        randomize(&mut mem, &mut rng, i as u8);
        let exponent = match i % 4 {
            0 => rng.u32(1..=24),
            1 => rng.u32(100..=150),
            2 => rng.u32(230..=254),
            _ => rng.u32(1..=254),
        };
        let scale = (exponent << 23) | rng.u32(..1 << 23) | (rng.u32(..2) << 31);
        let mut p = S4d4Pl::new(
            Opcode::POOL,
            PoolFunc::AVG_POOL,
            PoolDim::X,
            Dtype::FP32,
            Dtype::FP32,
            128,
            1.0,
            Tensor4d::new(sbuf(0), [(1, 1), (256, 1), (1, 1), (1, 1)]),
            Tensor4d::new(sbuf(0x800), [(256, 1), (1, 1), (1, 1), (1, 1)]),
        );
        p.pool_scale_bits = scale;
        assert_agree(
            &mut gpu_exec,
            &[valid(p)],
            &mem,
            &format!("scale {scale:#010x}"),
        );
    }
}

/// Records one alignment or count short of `pool_rows` or of vec4 stores:
/// each must take the slower path and still agree with the CPU.
#[test]
fn near_misses_of_the_fast_paths_agree() {
    use tpb_emu::device::PoolOp;
    use tpb_emu::device::Validated;
    use tpb_emu::device::gpu::params::{dst_vec4, rows_path};
    use tpb_emu::isa::Opcode;
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0x2EA2_0000);
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let mut mem = DeviceMemory::new(ARCH);
    let sbuf = |offset| Addr4::new(Region::Sbuf, 0, offset);
    let t = |offset, dims: [(u16, i16); 3]| {
        Tensor4d::new(sbuf(offset), [dims[0], dims[1], dims[2], (1, 1)])
    };
    let rows_src = t(0, [(2, 1), (4, 2), (2, 8)]);
    let vec4_dst = t(0x200, [(8, 1), (1, 1), (1, 1)]);
    // (src, dst, takes pool_rows, stores vec4s)
    let cases = [
        (rows_src, vec4_dst, true, true), // the fast paths themselves
        (t(8, [(2, 1), (4, 2), (2, 8)]), vec4_dst, false, true), // src not 16-byte aligned
        (t(0, [(2, 1), (4, 2), (2, 14)]), vec4_dst, false, true), // outer step 56 bytes
        (t(0, [(2, 1), (4, 2), (2, 10)]), vec4_dst, false, true), // outer step 40 bytes
        (rows_src, t(0x204, [(8, 1), (1, 1), (1, 1)]), true, false), // dst not aligned
        (rows_src, t(0x200, [(2, 1), (4, 4), (1, 1)]), true, false), // dst x count 2
        (rows_src, t(0x200, [(4, 1), (2, 6), (1, 1)]), true, false), // dst row step 24 bytes
    ];
    for (src, dst, rows, vec4) in cases {
        let p = S4d4Pl::new(
            Opcode::POOL,
            PoolFunc::MAX_POOL,
            PoolDim::X,
            Dtype::FP32,
            Dtype::FP32,
            128,
            1.0,
            src,
            dst,
        );
        let v = Validated::new(0, p.encode(), Target::pool(ARCH)).expect("valid");
        let op = PoolOp::from_validated(&v).unwrap();
        let text = tpb_emu::isa::text::disasm_record(&p.encode());
        assert_eq!(rows_path(&op), rows, "rows_path: {text}");
        assert_eq!(
            rows_path(&op) && dst_vec4(&op),
            rows && vec4,
            "dst_vec4: {text}"
        );
        randomize(&mut mem, &mut rng, 0x3C);
        assert_agree(&mut gpu_exec, &[p], &mem, "near miss");
    }
}

/// A record of more invocations than one grid row holds (65,535 workgroups
/// of 64): the dispatch grid has two rows, so the shader's workgroup_id.y
/// term counts.
#[test]
fn a_record_beyond_one_grid_row_agrees() {
    use tpb_emu::isa::Opcode;
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0x6121_D000);
    let sbuf = |offset| Addr4::new(Region::Sbuf, 0, offset);
    // 128 lanes × 512 × 256 outputs: 32,768 invocations per lane, 65,536 workgroups.
    let p = S4d4Pl::new(
        Opcode::POOL,
        PoolFunc::MAX_POOL,
        PoolDim::X,
        Dtype::INT8,
        Dtype::UINT8,
        128,
        1.0,
        Tensor4d::new(sbuf(0), [(2, 1), (512, 2), (256, 0), (1, 1)]),
        Tensor4d::new(sbuf(0x1000), [(512, 1), (256, 512), (1, 1), (1, 1)]),
    );
    let mut mem = DeviceMemory::new(ARCH);
    randomize(&mut mem, &mut rng, 0x11);
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let cpu = assert_agree(&mut gpu_exec, &[valid(p)], &mem, "two grid rows");
    assert!(
        first_difference(&cpu, &mem).is_some(),
        "the record wrote nothing"
    );
}

#[test]
fn a_destroyed_device_is_an_error_not_a_panic() {
    let Some(gpu) = gpu() else { return };
    let memory = GpuMemory::new(&gpu, ARCH).expect("memory");
    let kernels = Kernels::new(&gpu).expect("kernels");
    gpu.device.destroy();
    let mem = DeviceMemory::new(ARCH);
    let r = memory
        .upload(&mem)
        .and_then(|_| batch::run(&kernels, &memory, &[]));
    let mut back = DeviceMemory::new(ARCH);
    let d = memory.download(&mut back);
    assert!(
        r.is_err() || d.is_err(),
        "upload/run/download after destroy: {r:?} {d:?}"
    );
}

#[test]
fn a_validation_error_is_a_value() {
    let Some(gpu) = gpu() else { return };
    let e = gpu
        .scoped(|| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 64,
                // MAP_READ may only be combined with COPY_DST.
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        })
        .unwrap_err();
    assert!(
        matches!(e, tpb_emu::device::gpu::DeviceError::Validation(_)),
        "{e:?}"
    );
}

/// A random record that the GPU's `pool_rows` fast path takes: 4- or 2-byte input,
/// windows 2 wide with x step 1, adjacent along dim k (step 2, a multiple of
/// 4 outputs), 16-byte aligned rows.
fn random_rows_record(rng: &mut fastrand::Rng) -> S4d4Pl {
    use tpb_emu::isa::Opcode;
    // Every input dtype pool_rows takes, each with one output and fold: each
    // combination is a pipeline to compile (about 0.3 s on lavapipe), so the
    // test draws from a fixed few rather than from all of them.
    let (in_dtype, out_dtype, func) = [
        (Dtype::FP32, Dtype::FP32, PoolFunc::MAX_POOL),
        (Dtype::FP32, Dtype::FP32R, PoolFunc::AVG_POOL),
        (Dtype::INT32, Dtype::BFLOAT16, PoolFunc::MAX_POOL),
        (Dtype::UINT32, Dtype::FP32, PoolFunc::AVG_POOL),
        (Dtype::BFLOAT16, Dtype::BFLOAT16, PoolFunc::MAX_POOL),
        (Dtype::FP16, Dtype::FP32, PoolFunc::AVG_POOL),
        (Dtype::INT16, Dtype::INT32, PoolFunc::MAX_POOL),
        (Dtype::UINT16, Dtype::UINT8, PoolFunc::AVG_POOL),
        (Dtype::FP32, Dtype::UINT16, PoolFunc::NONE), // MaxPoolSelect
        (Dtype::BFLOAT16, Dtype::UINT8, PoolFunc::NONE),
    ][rng.usize(..10)];
    let select = func == PoolFunc::NONE;
    // Elements per 16 bytes: row steps are multiples of it, so rows stay aligned.
    let a = 16 / in_dtype.size().expect("a known dtype") as i16;
    let k = rng.usize(1..=3);
    let mut num = [2u16, 1, 1, 1];
    let mut step = [1i16, 0, 0, 0];
    // Window dims 1..k: small counts, row steps that keep rows 16-byte aligned.
    for d in 1..k {
        num[d] = rng.u16(1..=3);
        step[d] = a * rng.i16(3..6);
    }
    // 4..=32 outputs per row: runs of 1, 2 and 4 vec4s per invocation (`rows_chunks`).
    num[k] = 4 * rng.u16(1..=8);
    step[k] = 2;
    let row = 2 * num[k] as i16 + a; // elements a window-row group spans, rounded up
    // Outer dims: forward, or (a third of the time) backward from a higher start.
    let mut start = 16 * rng.u32(0..8);
    for d in k + 1..4 {
        num[d] = rng.u16(1..=2);
        step[d] = a * (row / a + 8 * d as i16);
        if rng.u8(0..3) == 0 {
            step[d] = -step[d];
            start += 0x400;
        }
    }
    let outputs: u16 = num[k..].iter().product();
    // dst: contiguous (vec4-able when 4-byte), strided by 2, or rows of 4
    // or num[k] outputs 16-byte apart (the dst walk carries mid-invocation).
    let base = Addr4::new(Region::Sbuf, 3, 0x2000 + 16 * rng.u32(0..4));
    let dst = match rng.u8(0..4) {
        0 => Tensor4d::new(base, [(outputs, 1), (1, 1), (1, 1), (1, 1)]),
        1 => Tensor4d::new(base, [(outputs, 2), (1, 1), (1, 1), (1, 1)]),
        2 => Tensor4d::new(base, [(4, 1), (outputs / 4, 8), (1, 1), (1, 1)]),
        _ => {
            let row = num[k];
            let stride = row as i16 + 4 * rng.i16(0..3);
            Tensor4d::new(base, [(row, 1), (outputs / row, stride), (1, 1), (1, 1)])
        }
    };
    let src = Tensor4d {
        addr: Addr4::new(Region::Sbuf, 3, start),
        step,
        num,
    };
    S4d4Pl::new(
        if select {
            Opcode::MAX_POOL_SELECT
        } else {
            Opcode::POOL
        },
        func,
        PoolDim(k as u8 + 1),
        in_dtype,
        out_dtype,
        rng.u8(1..=100),
        if func == PoolFunc::AVG_POOL { 0.3 } else { 1.0 },
        src,
        dst,
    )
}

#[test]
fn the_rows_fast_path_matches_the_cpu() {
    use tpb_emu::device::PoolOp;
    use tpb_emu::device::Validated;
    use tpb_emu::device::gpu::params::{
        DstRun, PoolParams, rows_chunks, rows_max_chunks, rows_path,
    };
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0x0F45_7000);
    let mut unrolled = [0; 2]; // window rows from the parameters, unrolled
    let max = rows_max_chunks(gpu.adapter.device_type);
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let mut mem = DeviceMemory::new(ARCH);
    let (mut taken, mut stores, mut chunks, mut two_byte) = (0, [0; 3], [0; 5], 0);
    for i in 0..150 {
        let p = random_rows_record(&mut rng);
        let Ok(v) = Validated::new(0, p.encode(), Target::pool(ARCH)) else {
            continue;
        };
        let op = PoolOp::from_validated(&v).unwrap();
        assert!(
            rows_path(&op),
            "generator made a record pool_rows does not take: {}",
            tpb_emu::isa::text::disasm_record(&p.encode())
        );
        taken += 1;
        stores[DstRun::of(&op) as usize] += 1;
        two_byte += (op.in_ty().size() == 2) as u32;
        chunks[rows_chunks(&op, max) as usize] += 1;
        unrolled[(PoolParams::new(&op, ARCH, max).variant().win_rows > 0) as usize] += 1;
        randomize(&mut mem, &mut rng, i as u8);
        // randomize covers the first WINDOW bytes; the rows records read up to ~2 KiB further.
        randomize_lanes(&mut mem, &mut rng, WINDOW as usize..4096);
        let cpu = assert_agree(&mut gpu_exec, &[p], &mem, "rows record");
        // What a hardware GPU runs: one run per invocation.
        gpu_exec.set_rows_max_chunks(1);
        let one_run = run_on(&mut gpu_exec, &[p], &mem);
        gpu_exec.set_rows_max_chunks(max);
        if let Some((region, b, x, y)) = first_difference(&cpu, &one_run) {
            panic!(
                "one run per invocation: {} byte {b}: cpu {x:#04x} gpu {y:#04x}\n{}",
                region.name(),
                tpb_emu::isa::text::disasm_record(&p.encode())
            );
        }
    }
    assert!(taken > 100, "only {taken} records took the fast path");
    assert!(
        stores.iter().all(|&n| n > 10),
        "each output / vec4 / whole words: {stores:?}"
    );
    assert!(two_byte > 30, "only {two_byte} read 2-byte elements");
    // lavapipe (CI) takes up to 4 runs per invocation; a hardware GPU one.
    assert!(
        [1, 2, 4]
            .iter()
            .all(|&c| c > max || chunks[c as usize] > 10),
        "runs per invocation (up to {max}) not all exercised: {chunks:?}"
    );
    assert!(
        unrolled[0] > 10 && unrolled[1] > 10,
        "window rows from the parameters / unrolled: {unrolled:?}"
    );
}

// ---------------------------------------------------------------------------
// The elementwise kernels (Copy, Cast, Iota, Tensor-Tensor), mixed with Pool.

use tpb_emu::isa::enums::AluOp;
use tpb_emu::isa::record::Record;
use tpb_emu::isa::tensor::Data4d;
use tpb_emu::isa::{D4Iota, Opcode, S3s3d3Tt, S4d4Tr};

/// Copy/Cast dtypes (the validator's twelve; FP32R only as an output).
const TR_DTYPES: [Dtype; 12] = [
    Dtype::INT8,
    Dtype::UINT8,
    Dtype::INT16,
    Dtype::UINT16,
    Dtype::INT32,
    Dtype::UINT32,
    Dtype::BFLOAT16,
    Dtype::FP16,
    Dtype::FP32,
    Dtype::FP8_EXP3,
    Dtype::FP8_EXP4,
    Dtype::FP8_EXP5,
];
/// Integer dtypes of at most 32 bits.
const INT32S: [Dtype; 6] = [
    Dtype::INT8,
    Dtype::UINT8,
    Dtype::INT16,
    Dtype::UINT16,
    Dtype::INT32,
    Dtype::UINT32,
];
/// Tensor-Tensor source dtypes of the f32 path.
const TT_SRC: [Dtype; 9] = [
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

/// One random record of the new kernels (not always valid).
fn random_kernel_record(rng: &mut fastrand::Rng) -> Record {
    let count = rng.u16(1..=24);
    let channels = rng.u32(1..=PARTITIONS_U32);
    let part = |rng: &mut fastrand::Rng| rng.u32(0..=PARTITIONS_U32 - channels);
    let sp = part(rng);
    let dp = if rng.bool() { sp } else { part(rng) };
    match rng.u8(0..4) {
        0 | 1 => {
            let opcode = if rng.bool() {
                Opcode::COPY
            } else {
                Opcode::CAST
            };
            let i = pick(rng, &TR_DTYPES);
            let o = if opcode == Opcode::COPY || rng.u8(0..5) == 0 {
                i
            } else if rng.u8(0..8) == 0 {
                Dtype::FP32R
            } else {
                pick(rng, &TR_DTYPES[..9])
            };
            let (is, os) = (i.size().unwrap(), o.size().unwrap());
            let region = |rng: &mut fastrand::Rng, size: u32| {
                if rng.u8(0..4) == 0 && size == 4 {
                    Region::Psum
                } else {
                    Region::Sbuf
                }
            };
            let sn = split(rng, count, 4);
            let sr = region(rng, 4);
            let src = walk(rng, sr, sp, is, sn);
            let dst = if rng.u8(0..5) == 0 && is == os {
                src // in place (EC-42)
            } else {
                let dn = split(rng, count, 4);
                let dr = region(rng, os);
                walk(rng, dr, dp, os, dn)
            };
            S4d4Tr::new(opcode, i, o, channels as u8, src, dst).encode()
        }
        2 => {
            let o = pick(rng, &TT_SRC);
            let o = if rng.u8(0..8) == 0 { Dtype::FP32R } else { o };
            let gn = split(rng, count, 4);
            let gstep = std::array::from_fn(|_| match rng.u8(0..4) {
                0 => rng.i16(..),
                _ => rng.i16(-300..=300),
            });
            let base = match rng.u8(0..3) {
                0 => rng.i32(..),
                1 => i32::MAX - rng.i32(0..100),
                _ => rng.i32(-1000..1000),
            };
            let data = Data4d {
                base,
                step: gstep,
                num: gn,
            };
            let mult = match rng.u8(0..3) {
                0 => rng.i32(..),
                _ => rng.i32(-70000..70000),
            };
            let size = o.size().unwrap();
            let region = if size == 4 && rng.u8(0..4) == 0 {
                Region::Psum
            } else {
                Region::Sbuf
            };
            let dst = walk_split(rng, region, dp, size, count, 4);
            D4Iota::new(o, channels as u8, data, mult, dst).encode()
        }
        _ => {
            let (opcode, op, d) = if rng.bool() {
                const OPS: [AluOp; 9] = [
                    AluOp::BYPASS,
                    AluOp::BITWISE_NOT,
                    AluOp::ARITH_SHIFT_LEFT,
                    AluOp::ARITH_SHIFT_RIGHT,
                    AluOp::BITWISE_AND,
                    AluOp::BITWISE_OR,
                    AluOp::BITWISE_XOR,
                    AluOp::LOGICAL_SHIFT_LEFT,
                    AluOp::LOGICAL_SHIFT_RIGHT,
                ];
                let t = pick(rng, &INT32S);
                (Opcode::TENSOR_TENSOR_BITVEC, pick(rng, &OPS), [t; 3])
            } else if rng.bool() {
                const SIGNED: [u8; 13] = [
                    0xC4, 0xC5, 0xC6, 0xC9, 0xCA, 0xCF, 0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xC4, 0xC6,
                ];
                const UNSIGNED: [u8; 13] = [
                    0xC4, 0xC5, 0xC6, 0xC9, 0xCA, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xDB, 0xC4,
                ];
                if rng.bool() {
                    (
                        Opcode::TENSOR_TENSOR_ARITH,
                        AluOp(pick(rng, &SIGNED)),
                        [Dtype::INT32; 3],
                    )
                } else {
                    (
                        Opcode::TENSOR_TENSOR_ARITH,
                        AluOp(pick(rng, &UNSIGNED)),
                        [Dtype::UINT32; 3],
                    )
                }
            } else {
                let op = pick(rng, &[AluOp::ADD, AluOp::SUBTRACT, AluOp::MULT]);
                let d = if rng.bool() {
                    [pick(rng, &INT32S), pick(rng, &INT32S), pick(rng, &INT32S)]
                } else {
                    let o = if rng.u8(0..8) == 0 {
                        Dtype::FP32R
                    } else {
                        pick(rng, &TT_SRC)
                    };
                    [pick(rng, &TT_SRC), pick(rng, &TT_SRC), o]
                };
                (Opcode::TENSOR_TENSOR_ARITH, op, d)
            };
            let sizes = d.map(|t| t.size().unwrap());
            let s1p = if rng.bool() { sp } else { part(rng) };
            let src0 = to_3d(walk_split(rng, Region::Sbuf, sp, sizes[0], count, 3));
            let mut src1 = to_3d(walk_split(rng, Region::Sbuf, s1p, sizes[1], count, 3));
            if rng.u8(0..4) == 0 {
                src1.step = [0, 0, 0]; // broadcast of one element
            }
            let dst = if rng.u8(0..4) == 0 && sizes[0] == sizes[2] {
                src0 // in place (EC-42)
            } else {
                to_3d(walk_split(rng, Region::Sbuf, dp, sizes[2], count, 3))
            };
            S3s3d3Tt::new(
                opcode,
                op,
                d[0],
                d[1],
                d[2],
                channels as u8,
                src0,
                src1,
                dst,
            )
            .encode()
        }
    }
}

const PARTITIONS_U32: u32 = tpb_emu::limits::PARTITIONS;

/// A random valid record of the new kernels.
fn random_valid_kernel_record(rng: &mut fastrand::Rng) -> Record {
    loop {
        let r = random_kernel_record(rng);
        if check(&r, Target::pool(ARCH)).is_ok() {
            return r;
        }
    }
}

#[test]
fn random_kernel_streams_agree_bit_for_bit() {
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0x5EED_0046);
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    let mut mem = DeviceMemory::new(ARCH);
    let (streams, per_stream) = (100, 24);
    let mut kernels = 0;
    for s in 0..streams {
        randomize(&mut mem, &mut rng, s as u8);
        // Mostly new kernels, some Pool: all in the same small window, so
        // later records read what earlier ones wrote.
        let records: Vec<Record> = (0..per_stream)
            .map(|_| {
                if rng.u8(0..6) == 0 {
                    random_valid_pool(&mut rng, Target::pool(ARCH)).encode()
                } else {
                    kernels += 1;
                    random_valid_kernel_record(&mut rng)
                }
            })
            .collect();
        assert_records_agree(&mut gpu_exec, &records, &mem, &format!("stream {s}"));
    }
    assert!(kernels >= 2000, "{kernels} new-kernel records");
}

/// The portability test translates `test_support::every_pipeline()`; this keeps
/// that list honest: every pipeline the encoders ask for, for random valid
/// Pool, rows-path and new-kernel records on every adapter setting, is in it.
/// No GPU needed.
#[test]
fn every_pipeline_the_encoders_ask_for_is_listed() {
    use std::collections::HashSet;
    use tpb_emu::device::Op;
    use tpb_emu::device::Validated;
    use tpb_emu::device::gpu::batch::EncodeCx;
    use tpb_emu::device::gpu::executor::encode;
    use tpb_emu::device::gpu::test_support::{every_pipeline, is_listed};
    let is_pool = |k: &tpb_emu::device::gpu::kernels::PipelineKey| k.shader.label() == "pool.wgsl";
    let pool: HashSet<_> = every_pipeline().into_iter().filter(is_pool).collect();
    let mut rng = fastrand::Rng::with_seed(0x1157);
    let mut records: Vec<Record> = Vec::new();
    for _ in 0..1500 {
        records.push(random_valid_pool(&mut rng, Target::pool(ARCH)).encode());
        records.push(random_rows_record(&mut rng).encode());
        records.push(random_valid_kernel_record(&mut rng));
    }
    let mut asked = 0;
    for (i, r) in records.iter().enumerate() {
        let Ok(v) = Validated::new(i * 64, *r, Target::pool(ARCH)) else {
            continue;
        };
        let op = Op::from_validated(&v).expect("a datapath record");
        for (rows_max_chunks, add_by_bits, row_per_max, clr_quads_max) in
            [(1, true, 16, 1), (4, false, 64, 4)]
        {
            let cx = EncodeCx {
                arch: ARCH,
                max_x: 65_535,
                rows_max_chunks,
                add_by_bits,
                row_per_max,
                clr_quads_max,
                loop_budget: None,
            };
            let key = encode(&op, &cx).key;
            let listed = if is_pool(&key) {
                pool.contains(&key)
            } else {
                is_listed(&key)
            };
            assert!(
                listed,
                "not listed: {key:?}\n{}",
                tpb_emu::isa::text::disasm_record(r)
            );
            asked += 1;
        }
    }
    assert!(asked > 6000, "only {asked} dispatches encoded");
}

/// The elementwise kernels' row path with vec4 loads and stores (4-byte
/// sources, 4- or 2-byte dst, rows 16-byte aligned: `SRC0_VEC`, `DST_VEC`):
/// Copy, Cast fp32→bf16/fp16 and Tensor-Tensor ADD/MULT, in place and not,
/// over x counts that give 64, 32, 16 and 8 positions per invocation, on
/// both adapter settings (64 at most: software rasterizers; 16: hardware
/// GPUs, which CI's random streams do not run) — each record is checked to
/// take the path, then the GPU against the CPU over all memory.
#[test]
fn the_vec4_elementwise_row_path_matches_the_cpu() {
    use tpb_emu::device::gpu::kernels::PipelineKey;
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0xEC4_0046);
    let mut mem = DeviceMemory::new(ARCH);
    randomize(&mut mem, &mut rng, 0x46);
    randomize_lanes(&mut mem, &mut rng, 0..8192);
    let sb = |p, off| Addr4::new(Region::Sbuf, p, off);
    let mut records = Vec::new();
    for x in [128u16, 96, 48, 24] {
        // (x, 2 rows 0x400 bytes apart), 5 lanes from partition 3.
        let t4 =
            |off, size: i16| Tensor4d::new(sb(3, off), [(x, 1), (2, 0x400 / size), (1, 0), (1, 0)]);
        for (i, o) in [
            (Dtype::FP32, Dtype::FP32),
            (Dtype::FP32, Dtype::BFLOAT16),
            (Dtype::FP32, Dtype::FP16),
            (Dtype::INT32, Dtype::INT32),
        ] {
            let os = o.size().unwrap() as i16;
            records.push(S4d4Tr::new(Opcode::CAST, i, o, 5, t4(0x10, 4), t4(0x1000, os)).encode());
        }
        records.push(
            S4d4Tr::new(
                Opcode::COPY,
                Dtype::FP32,
                Dtype::FP32,
                5,
                t4(0x20, 4),
                t4(0x20, 4),
            )
            .encode(),
        );
        for (op, o) in [(AluOp::ADD, Dtype::FP32), (AluOp::MULT, Dtype::BFLOAT16)] {
            let os = o.size().unwrap() as i16;
            let (s0, s1) = (to_3d(t4(0x30, 4)), to_3d(t4(0x810, 4)));
            for dst in [to_3d(t4(0x1800, os)), s0] {
                if dst == s0 && os != 4 {
                    continue;
                }
                let r = S3s3d3Tt::new(
                    Opcode::TENSOR_TENSOR_ARITH,
                    op,
                    Dtype::FP32,
                    Dtype::FP32,
                    o,
                    5,
                    s0,
                    s1,
                    dst,
                );
                records.push(r.encode());
            }
        }
    }
    let constant =
        |key: &PipelineKey, name| key.constants.iter().any(|&(n, v)| n == name && v == 1);
    for per_max in [64, 16] {
        let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
        gpu_exec.set_row_per_max(per_max);
        for r in &records {
            let text = tpb_emu::isa::text::disasm_record(r);
            let key = encoded_key(r, per_max, true);
            assert!(
                constant(&key, "DST_VEC") && constant(&key, "SRC0_VEC"),
                "not the vec4 path: {key:?}\n{text}"
            );
            let context = format!("at most {per_max} per invocation");
            assert_records_agree(&mut gpu_exec, &[*r], &mem, &context);
        }
    }
    assert_eq!(records.len(), 32);
}

/// The elementwise kernels' dense path (`elementwise_dense`: every walk
/// visits its lane's elements in order from a 16-byte aligned start, 4-byte
/// sources, 4- or 2-byte dst, one vec4 of dst per invocation): every Cast
/// from a 4-byte dtype to a 4- or 2-byte one, Copy in place, and every
/// executed Tensor-Tensor op over 4-byte operands, over one-row and
/// three-row walks — each record checked to take the path, then the GPU
/// against the CPU over all memory. Walks that break a condition (an
/// unaligned start, a gap between rows, a count that is not whole vec4s of
/// dst) are checked to take the row path instead.
#[test]
fn the_dense_elementwise_path_matches_the_cpu() {
    use tpb_emu::device::Validated;
    use tpb_emu::device::ops::tensor_tensor::executes;
    let Some(gpu) = gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(0xDE45E);
    let mut mem = DeviceMemory::new(ARCH);
    randomize(&mut mem, &mut rng, 0x47);
    randomize_lanes(&mut mem, &mut rng, 0..8192);
    let sb = |p, off| Addr4::new(Region::Sbuf, p, off);
    // x elements a row, `rows` rows back to back, 5 lanes from partition 3.
    let t4 = |off, x: u16, rows: u16| {
        Tensor4d::new(sb(3, off), [(x, 1), (rows, x as i16), (1, 0), (1, 0)])
    };
    let valid = |r: Record| {
        Validated::new(0, r, Target::pool(ARCH))
            .is_ok()
            .then_some(r)
    };
    let dtypes = |sizes: &[u32]| {
        (0..16u8)
            .map(Dtype)
            .filter(|d| sizes.contains(&d.size().unwrap_or(0)))
            .collect::<Vec<_>>()
    };
    let (four, narrow) = (dtypes(&[4]), dtypes(&[4, 2]));
    let mut dense = Vec::new();
    // Rows longer and shorter than an invocation's 8 positions.
    for (x, rows) in [(8u16, 1u16), (24, 3), (4, 2)] {
        for &i in &four {
            for &o in &narrow {
                let cast = S4d4Tr::new(
                    Opcode::CAST,
                    i,
                    o,
                    5,
                    t4(0x10, x, rows),
                    t4(0x1000, x, rows),
                );
                dense.extend(valid(cast.encode()));
            }
        }
        let copy = S4d4Tr::new(
            Opcode::COPY,
            Dtype::FP32,
            Dtype::FP32,
            5,
            t4(0x20, x, rows),
            t4(0x20, x, rows),
        );
        dense.extend(valid(copy.encode()));
        for opcode in [Opcode::TENSOR_TENSOR_ARITH, Opcode::TENSOR_TENSOR_BITVEC] {
            for alu in (0..=255u8).map(AluOp).filter(|&a| executes(opcode, a)) {
                for &d in &four {
                    for o in [d, Dtype::BFLOAT16] {
                        let (s0, s1) = (to_3d(t4(0x30, x, rows)), to_3d(t4(0x830, x, rows)));
                        let os = o.size().unwrap() as u16;
                        for dst in [to_3d(t4(0x1800, x, rows)), s0] {
                            if dst == s0 && os != 4 {
                                continue;
                            }
                            let r = S3s3d3Tt::new(opcode, alu, d, d, o, 5, s0, s1, dst);
                            dense.extend(valid(r.encode()));
                        }
                    }
                }
            }
        }
    }
    let mut row_path: Vec<Record> = [
        // Unaligned start, a gap between rows, 12 bf16 outputs (not whole
        // vec4s), a 2-byte source.
        S4d4Tr::new(
            Opcode::CAST,
            Dtype::FP32,
            Dtype::FP32,
            5,
            t4(0x14, 8, 1),
            t4(0x1000, 8, 1),
        ),
        S4d4Tr::new(
            Opcode::CAST,
            Dtype::FP32,
            Dtype::FP32,
            5,
            Tensor4d::new(sb(3, 0x10), [(8, 1), (2, 12), (1, 0), (1, 0)]),
            t4(0x1000, 8, 2),
        ),
        S4d4Tr::new(
            Opcode::CAST,
            Dtype::FP32,
            Dtype::BFLOAT16,
            5,
            t4(0x10, 12, 1),
            t4(0x1000, 12, 1),
        ),
        S4d4Tr::new(
            Opcode::CAST,
            Dtype::BFLOAT16,
            Dtype::FP32,
            5,
            t4(0x10, 8, 1),
            t4(0x1000, 8, 1),
        ),
    ]
    .map(|r| r.encode())
    .to_vec();
    // A broadcast second source (step 0): not dense.
    let (a, dst) = (to_3d(t4(0x30, 8, 1)), to_3d(t4(0x1800, 8, 1)));
    let b = tpb_emu::isa::Tensor3d::new(sb(3, 0x830), [(8, 0), (1, 0), (1, 0)]);
    row_path.push(
        S3s3d3Tt::new(
            Opcode::TENSOR_TENSOR_ARITH,
            AluOp::ADD,
            Dtype::FP32,
            Dtype::FP32,
            Dtype::FP32,
            5,
            a,
            b,
            dst,
        )
        .encode(),
    );
    let mut gpu_exec = GpuExecutor::new(&gpu, ARCH).expect("pipeline");
    for r in &dense {
        let text = tpb_emu::isa::text::disasm_record(r);
        let key = encoded_key(r, 64, true);
        assert_eq!(key.entry, "elementwise_dense", "{key:?}\n{text}");
        assert!(
            tpb_emu::device::gpu::test_support::is_listed(&key),
            "not listed: {key:?}"
        );
        assert_records_agree(&mut gpu_exec, &[*r], &mem, "dense path");
    }
    for r in row_path {
        let key = encoded_key(&r, 64, true);
        assert_eq!(key.entry, "elementwise", "{key:?}");
        assert_records_agree(&mut gpu_exec, &[r], &mem, "row path");
    }
    assert!(dense.len() > 150, "only {} dense records", dense.len());
}
