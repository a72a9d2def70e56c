//! The GPU backend keeps device memory on the GPU for a whole run: a DMA
//! reads back only its footprint and sends up only what it wrote
//! (`Resident::read`/`write`). Random programs that mix DMAs
//! (DRAM, SBUF and PSUM both ways, partition-crossing walks, gaps,
//! conversions) with Pool records that read and write the same bytes must
//! end with the CPU reference's DRAM, SBUF and PSUM, byte for byte.

use crate::common;
use crate::run_props::{random_dma, share_some_inits, with_random_variables};
use tpb_emu::device::gpu::GpuExecutor;
use tpb_emu::device::{CpuExecutor, DeviceMemory, Executor, NoTrace};
use tpb_emu::isa::control::DmaWalk;
use tpb_emu::isa::enums::{Dtype, Engine};
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Record, Region};
use tpb_emu::limits::Arch;
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::{Machine, Program, stage};

pub(crate) fn run(exec: &mut dyn Executor, p: &Program) -> Machine {
    let mut m = Machine::new(stage(p).expect("stages"));
    m.run(exec, &mut NoTrace).expect("runs");
    m
}

/// A program on the POOL engine: SBUF/PSUM filled from DRAM, then `n`
/// records, each a random DMA that stages or a random valid Pool record.
pub(crate) fn random_program(seed: u64, n: usize) -> (Program, usize) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let sizes: Vec<u64> = (0..3).map(|_| rng.u64(400..600)).collect();
    let mut base = with_random_variables(&mut rng, &sizes);
    // Every partition's first 512 bytes of SBUF and PSUM hold data (row j
    // of the src walk starts at the variable's element j).
    let mut recs: Vec<Record> = vec![
        dma_memcpy(
            walk(var(1, 0), [1, 1], [256, 128], 2),
            walk(on_chip(0), [1, 1 << 17], [256, 128], 2),
            Dtype::INT16,
            Dtype::INT16,
            0,
            0,
        ),
        dma_memcpy(
            walk(var(2, 0), [1, 1], [256, 128], 2),
            walk(
                on_chip(Region::Psum.addr(0, 0)),
                [1, 1 << 14],
                [256, 128],
                2,
            ),
            Dtype::INT16,
            Dtype::INT16,
            0,
            0,
        ),
    ];
    let mut dmas_after_pool = 0;
    let mut pooled = false;
    while recs.len() < n {
        if rng.bool() {
            let pool = common::random_valid_pool(&mut rng, Target::pool(Arch::Cayman));
            recs.push(pool.encode());
            pooled = true;
        } else {
            let r = random_dma(&mut rng, &sizes);
            let mut p = base.clone();
            p.set_stream(Engine::Pool, &[r]);
            if stage(&p).is_ok() {
                recs.push(r);
                dmas_after_pool += usize::from(pooled);
            }
        }
    }
    base.set_stream(Engine::Pool, &recs);
    (base, dmas_after_pool)
}

pub(crate) fn same_memory(a: &DeviceMemory, b: &DeviceMemory) -> Option<String> {
    common::first_difference(a, b)
        .map(|(r, i, x, y)| format!("{r:?} byte {i}: gpu {x:#04x}, cpu {y:#04x}"))
}

#[test]
fn dmas_between_gpu_records_see_and_leave_the_references_bytes() {
    let Some(gpu) = common::gpu() else { return };
    let mut checked = 0;
    for seed in 0..60u64 {
        let (p, dmas) = random_program(seed, 24);
        checked += dmas;
        let cpu = run(&mut CpuExecutor::default(), &p);
        let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
        // Odd seeds: the GPU's run has inputs shared with files (DRAM in parts).
        let on_gpu = if seed % 2 == 1 {
            share_some_inits(&mut fastrand::Rng::with_seed(seed), &p)
        } else {
            p.clone()
        };
        let g = run(&mut exec, &on_gpu);
        assert!(g.dram() == cpu.dram(), "seed {seed}: DRAM differs");
        if let Some(d) = same_memory(g.memory(), cpu.memory()) {
            panic!("seed {seed}: {d}");
        }
    }
    assert!(checked > 300, "only {checked} DMAs ran after a Pool record");
}

#[test]
fn one_executor_runs_program_after_program() {
    // finish() hands memory back to the host; the next run's memory (a new
    // machine, all zero) must go up whole before its first batch.
    let Some(gpu) = common::gpu() else { return };
    let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
    for seed in 100..110u64 {
        let (p, _) = random_program(seed, 16);
        let cpu = run(&mut CpuExecutor::default(), &p);
        let g = run(&mut exec, &p);
        assert!(g.dram() == cpu.dram(), "seed {seed}: DRAM differs");
        if let Some(d) = same_memory(g.memory(), cpu.memory()) {
            panic!("seed {seed}: {d}");
        }
    }
}

/// `n` fp32 elements from SBUF `offset` in each of the 128 partitions.
pub(crate) fn sbuf(offset: u32, n: u16) -> DmaWalk {
    // Elements from one partition to the next, for 4-byte elements.
    let part = ((Region::Sbuf.addr(1, 0) - Region::Sbuf.addr(0, 0)) / 4) as i32;
    walk(
        on_chip(Region::Sbuf.addr(0, offset)),
        [1, part],
        [n, 128],
        4,
    )
}

/// Variable `id`'s first 128 rows of `n` fp32 elements.
pub(crate) fn dram(id: u32, n: u16) -> DmaWalk {
    walk(var(id, 0), [1, n as i32], [n, 128], 4)
}

/// A program with the fp32 input `x` (id 1, 128 × 16, `bytes`) and the
/// fp32 output `y` (id 2, 128 × `n`), and no records yet.
fn x_to_y(bytes: &[u8], n: u64) -> Program {
    use tpb_emu::runtime::Variable;
    let mut p = Program::new(Arch::Cayman);
    p.add(Variable::input(
        "x",
        1,
        Dtype::FP32,
        &[128, 16],
        bytes.to_vec(),
    ));
    p.add(Variable::output("y", 2, Dtype::FP32, &[128, n]));
    p
}

/// An fp32 DMA that increments nothing.
pub(crate) fn dma(src: DmaWalk, dst: DmaWalk) -> Record {
    dma_memcpy(src, dst, Dtype::FP32, Dtype::FP32, 0, 0)
}

/// DMAs from SBUF to DRAM that the GPU backend defers (it captures their
/// source behind the kernels: `When::Later`) land in DRAM before a
/// later DMA reads their DRAM bytes, from the bytes they read even when a
/// later DMA overwrote those, and at the end of the run.
#[test]
fn deferred_dmas_to_dram_land_before_their_bytes_are_read() {
    use tpb_emu::isa::enums::PoolFunc;
    use tpb_emu::isa::samples::{SEED_DST_OFFSET, seed_pool};
    use tpb_emu::runtime::Variable;
    let Some(gpu) = common::gpu() else { return };
    let mut rng = fastrand::Rng::with_seed(7);
    let f32s = |n: usize, rng: &mut fastrand::Rng| -> Vec<u8> {
        (0..n)
            .flat_map(|_| (rng.f32() * 200.0 - 100.0).to_le_bytes())
            .collect()
    };
    let mut p = Program::new(Arch::Cayman);
    p.add(Variable::input(
        "x",
        1,
        Dtype::FP32,
        &[128, 16],
        f32s(2048, &mut rng),
    ));
    p.add(Variable::input(
        "mid",
        2,
        Dtype::FP32,
        &[128, 4],
        f32s(512, &mut rng),
    ));
    p.add(Variable::input(
        "y",
        3,
        Dtype::FP32,
        &[128, 4],
        f32s(512, &mut rng),
    ));
    let out = SEED_DST_OFFSET;
    p.set_stream(
        Engine::Pool,
        &[
            dma(dram(1, 16), sbuf(0, 16)),
            seed_pool(PoolFunc::MAX_POOL, 128).encode(),
            // Deferred: its source was written by the Pool record.
            dma(sbuf(out, 4), dram(2, 4)),
            // Overwrites that source before the deferred DMA lands.
            dma(walk(var(1, 0), [1, 16], [4, 128], 4), sbuf(out, 4)),
            // Reads the deferred DMA's DRAM bytes: it must land first.
            dma(dram(2, 4), dram(3, 4)),
            seed_pool(PoolFunc::AVG_POOL, 128).encode(),
            // Deferred until the end of the run.
            dma(sbuf(out, 4), dram(2, 4)),
        ],
    );
    let cpu = run(&mut CpuExecutor::default(), &p);
    let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
    let g = run(&mut exec, &p);
    // The reference moved MAX outputs into `y` (not `x`'s bytes, not `y`'s
    // initial bytes), and AVG outputs into `mid`.
    assert_ne!(
        cpu.variable("y"),
        Some(&p.variables[2].init.clone().unwrap()[..])
    );
    for v in ["x", "mid", "y"] {
        assert!(g.variable(v) == cpu.variable(v), "`{v}` differs");
    }
    if let Some(d) = same_memory(g.memory(), cpu.memory()) {
        panic!("{d}");
    }
}

/// A capture that nothing touched afterwards brings its bytes into the
/// host's copy of memory, so the end of the run reads nothing back; one
/// followed by a DMA that overwrites its source, or by a record that
/// rewrites it, must not: the run ends with their bytes there, as on the CPU.
#[test]
fn a_capture_updates_host_memory_only_when_it_is_the_last_word() {
    use tpb_emu::isa::enums::PoolFunc;
    use tpb_emu::isa::samples::{SEED_DST_OFFSET, seed_pool};
    let Some(gpu) = common::gpu() else { return };
    let bytes: Vec<u8> = (0..2048u32)
        .flat_map(|i| (i as f32 * 0.5 - 300.0).to_le_bytes())
        .collect();
    let out = SEED_DST_OFFSET;
    for after in ["nothing", "a DMA in", "a Pool record"] {
        let mut p = x_to_y(&bytes, 4);
        // The DMA in converts (bf16 halves of the fp32 values), so its
        // bytes pass through the host's copy: a DMA the GPU takes straight
        // from DRAM is read back at the end of the run (see
        // `a_dma_from_dram_goes_to_the_gpu_without_the_hosts_copy`).
        let bf16_in = dma_memcpy(
            walk(var(1, 0), [1, 32], [16, 128], 2),
            sbuf(0, 16),
            Dtype::BFLOAT16,
            Dtype::FP32,
            0,
            0,
        );
        let mut records = vec![
            bf16_in,
            seed_pool(PoolFunc::MAX_POOL, 128).encode(),
            dma(sbuf(out, 4), dram(2, 4)),
        ];
        match after {
            "a DMA in" => records.push(dma(walk(var(1, 0), [1, 16], [4, 128], 4), sbuf(out, 4))),
            "a Pool record" => records.push(seed_pool(PoolFunc::AVG_POOL, 128).encode()),
            _ => {}
        }
        p.set_stream(Engine::Pool, &records);
        let cpu = run(&mut CpuExecutor::default(), &p);
        let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
        let g = run(&mut exec, &p);
        assert!(g.variable("y") == cpu.variable("y"), "{after}: `y` differs");
        if let Some(d) = same_memory(g.memory(), cpu.memory()) {
            panic!("after {after}: {d}");
        }
        let read_back = exec.finish_read_back();
        match after {
            "nothing" => assert_eq!(read_back, 0, "the capture was the last word"),
            "a Pool record" => assert!(read_back > 0, "the AVG outputs must come back"),
            _ => {}
        }
    }
}

/// DMAs of 5 MiB into SBUF go up in two halves on two threads (from 4 MiB):
/// one from DRAM straight from its rows (`GpuMemory::write_spans`), one from
/// SBUF to SBUF through the host's copy (`GpuMemory::upload_spans`). A Copy
/// record on the GPU then reads every byte of the second, and a DMA brings
/// the copy back to DRAM: the output is the input, as on the CPU.
#[test]
fn a_large_dma_into_sbuf_reaches_the_gpu_whole() {
    use tpb_emu::isa::{Addr4, Opcode, S4d4Tr, Tensor4d};
    use tpb_emu::runtime::Variable;
    let Some(gpu) = common::gpu() else { return };
    const N: u16 = 10_240; // fp32 per partition: 5 MiB over 128
    let bytes: Vec<u8> = (0..128 * N as u32)
        .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
        .collect();
    let mut p = Program::new(Arch::Cayman);
    p.add(Variable::input(
        "x",
        1,
        Dtype::FP32,
        &[128, N as u64],
        bytes.clone(),
    ));
    p.add(Variable::output("y", 2, Dtype::FP32, &[128, N as u64]));
    let t4 = |off: u32| {
        Tensor4d::new(
            Addr4::new(Region::Sbuf, 0, off),
            [(256, 1), (N / 256, 256), (1, 0), (1, 0)],
        )
    };
    let copy = S4d4Tr::new(
        Opcode::COPY,
        Dtype::FP32,
        Dtype::FP32,
        128,
        t4(0x20000),
        t4(0x10000),
    );
    p.set_stream(
        Engine::Pool,
        &[
            dma(dram(1, N), sbuf(0, N)),
            dma(sbuf(0, N), sbuf(0x20000, N)),
            copy.encode(),
            dma(sbuf(0x10000, N), dram(2, N)),
        ],
    );
    let cpu = run(&mut CpuExecutor::default(), &p);
    assert_eq!(cpu.variable("y"), Some(&bytes[..]));
    let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
    let g = run(&mut exec, &p);
    assert!(g.variable("y") == cpu.variable("y"), "`y` differs");
    if let Some(d) = same_memory(g.memory(), cpu.memory()) {
        panic!("{d}");
    }
}

/// A DMA from DRAM into SBUF whose rows cover their bytes once goes to the
/// GPU straight from DRAM (`Write::Offer`), never through the
/// host's copy of SBUF: with `set_dram_only` that copy stays zero.
/// Without it, the end of the run reads those bytes back. DMAs that
/// overlap themselves, convert, or write 2-byte pieces of words take the
/// host's path, and land in its copy.
#[test]
fn a_dma_from_dram_goes_to_the_gpu_without_the_hosts_copy() {
    let Some(gpu) = common::gpu() else { return };
    let bytes: Vec<u8> = (0..128 * 16u32)
        .flat_map(|i| (i as f32 * 0.25 + 1.0).to_le_bytes())
        .collect();
    // Rows of 8 fp32 at element 0 and element 4 of each partition: they
    // overlap, so the second row's first 4 elements win.
    let overlapping = walk(on_chip(0), [1, 4], [8, 2], 4);
    let cases: [(&str, Record, bool); 4] = [
        ("whole rows", dma(dram(1, 16), sbuf(0, 16)), true),
        (
            "overlapping rows",
            dma(walk(var(1, 0), [1, 8], [8, 2], 4), overlapping),
            false,
        ),
        (
            "fp32 to bf16",
            dma_memcpy(
                dram(1, 16),
                walk(on_chip(0), [1, 1 << 17], [16, 128], 2),
                Dtype::FP32,
                Dtype::BFLOAT16,
                0,
                1,
            ),
            false,
        ),
        (
            "2-byte pieces",
            dma_memcpy(
                walk(var(1, 2), [1, 8], [1, 128], 2),
                walk(on_chip(2), [1, 1 << 17], [1, 128], 2),
                Dtype::INT16,
                Dtype::INT16,
                0,
                1,
            ),
            false,
        ),
    ];
    for (what, record, direct) in cases {
        let mut p = x_to_y(&bytes, 16);
        // The last DMA (into PSUM) makes the capture of SBUF not the last
        // word, which would also land in the host's copy.
        let psum = walk(
            on_chip(Region::Psum.addr(0, 0)),
            [
                1,
                ((Region::Psum.addr(1, 0) - Region::Psum.addr(0, 0)) / 4) as i32,
            ],
            [16, 128],
            4,
        );
        p.set_stream(
            Engine::Pool,
            &[
                record,
                dma(sbuf(0, 16), dram(2, 16)),
                dma(dram(1, 16), psum),
            ],
        );
        let cpu = run(&mut CpuExecutor::default(), &p);
        assert!(
            cpu.memory()
                .region_bytes(Region::Sbuf)
                .iter()
                .any(|&b| b != 0),
            "{what}: the DMA wrote nothing"
        );
        let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
        // The end of the run reads the GPU's bytes back.
        let g = run(&mut exec, &p);
        assert!(g.variable("y") == cpu.variable("y"), "{what}: `y` differs");
        if let Some(d) = same_memory(g.memory(), cpu.memory()) {
            panic!("{what}: {d}");
        }
        // Only DRAM comes back: the host's copy shows which path the DMA took.
        let mut m = Machine::new(stage(&p).expect("stages"));
        m.set_dram_only(true);
        m.run(&mut exec, &mut NoTrace).expect("runs");
        assert!(
            m.variable("y") == cpu.variable("y"),
            "{what}: `y` differs (DRAM only)"
        );
        let host = m.memory().region_bytes(Region::Sbuf);
        if direct {
            assert!(
                host.iter().all(|&b| b == 0),
                "{what}: went through the host"
            );
        } else {
            assert!(
                host == cpu.memory().region_bytes(Region::Sbuf),
                "{what}: the host's copy lacks the DMA"
            );
        }
    }
}

/// A run that reads only DRAM afterwards (`set_dram_only`) drops the
/// GPU's memory at its end (`End::Drop`). The same executor then
/// runs the next program, from zero memory or restarted, and Pool records
/// on memory of the caller's own (`run_program`): each sees its own bytes,
/// not the ones the run left on the GPU.
#[test]
fn a_dram_only_run_leaves_the_executor_ready_for_the_next() {
    use tpb_emu::device::{Program as Records, run_program};
    let Some(gpu) = common::gpu() else { return };
    let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
    let mut rng = fastrand::Rng::with_seed(7);
    for seed in 200..212u64 {
        let (p, _) = random_program(seed, 16);
        let cpu = run(&mut CpuExecutor::default(), &p);
        let mut m = Machine::new(stage(&p).expect("stages"));
        m.set_dram_only(seed % 2 == 0);
        for pass in ["run", "restarted"] {
            m.run(&mut exec, &mut NoTrace).expect("runs");
            assert!(m.dram() == cpu.dram(), "seed {seed} {pass}: DRAM differs");
            if seed % 2 == 1
                && let Some(d) = same_memory(m.memory(), cpu.memory())
            {
                panic!("seed {seed} {pass}: {d}");
            }
            m.restart();
        }
        let pools: Vec<Record> = (0..4)
            .map(|_| common::random_valid_pool(&mut rng, Target::pool(Arch::Cayman)).encode())
            .collect();
        let records = Records::from_stream(
            &tpb_emu::isa::stream::to_bytes(&pools),
            Target::pool(Arch::Cayman),
        )
        .expect("valid records");
        let mut init = DeviceMemory::new(Arch::Cayman);
        for (i, b) in init.region_bytes_mut(Region::Sbuf).iter_mut().enumerate() {
            *b = (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3] & 0x3F;
        }
        let (mut want, mut got) = (init.clone(), init);
        run_program(
            &mut CpuExecutor::default(),
            &records,
            &mut want,
            &mut NoTrace,
        )
        .expect("cpu runs");
        run_program(&mut exec, &records, &mut got, &mut NoTrace).expect("gpu runs");
        if let Some(d) = same_memory(&got, &want) {
            panic!("seed {seed}, Pool records after the run: {d}");
        }
    }
}

/// DMAs between on-chip places run on the GPU as kernels
/// (`Resident::dma`) when every element can move at once, and through
/// the host otherwise; either way SBUF, PSUM and DRAM end as on the CPU.
/// The cases: rows of adjacent bytes (16-byte pieces, and rows 4 bytes off
/// that alignment), a transpose of 128 × 16 fp32 from SBUF into PSUM (one
/// element per partition along dim 0), fp32 → bf16 and int8 → fp32
/// conversions, verbatim elements of 6 bytes (2-byte pieces) and of 3
/// bytes at odd addresses (bytes), PSUM to PSUM with a backward step,
/// int64 → fp32; and on the host: a converted element not aligned to its
/// size, and a DMA whose dst overlaps its src one element on (sequential
/// semantics).
#[test]
fn on_chip_dmas_run_as_kernels_when_their_elements_can_move_at_once() {
    let Some(gpu) = common::gpu() else { return };
    let bytes: Vec<u8> = (0..128 * 16u32)
        .flat_map(|i| (i as f32 * 0.75 - 300.0).to_le_bytes())
        .collect();
    // Partition strides in elements of 1, 2 and 4 bytes.
    let sbuf_part = (Region::Sbuf.addr(1, 0) - Region::Sbuf.addr(0, 0)) as i32;
    let psum_part = (Region::Psum.addr(1, 0) - Region::Psum.addr(0, 0)) as i32;
    let sb = |off| on_chip(Region::Sbuf.addr(0, off));
    let ps = |off| on_chip(Region::Psum.addr(0, off));
    let cases: [(&str, Record, bool); 11] = [
        (
            "rows of 64 bytes into PSUM, 16-byte pieces",
            dma(
                walk(sb(0), [1, sbuf_part / 4], [16, 128], 4),
                walk(ps(0x200), [1, psum_part / 4], [16, 128], 4),
            ),
            true,
        ),
        (
            "rows of 48 bytes 4 bytes past a 16-byte boundary",
            dma(
                walk(sb(4), [1, sbuf_part / 4], [12, 128], 4),
                walk(ps(0x300), [1, psum_part / 4], [12, 128], 4),
            ),
            true,
        ),
        (
            "transpose into PSUM",
            dma(
                walk(sb(0), [sbuf_part / 4, 1], [128, 16], 4),
                walk(ps(0), [1, psum_part / 4], [128, 16], 4),
            ),
            true,
        ),
        (
            "fp32 to bf16",
            dma_memcpy(
                walk(sb(0), [1, sbuf_part / 4], [16, 128], 4),
                walk(sb(0x1000), [1, sbuf_part / 2], [16, 128], 2),
                Dtype::FP32,
                Dtype::BFLOAT16,
                0,
                0,
            ),
            true,
        ),
        (
            "int8 to fp32",
            dma_memcpy(
                walk(sb(1), [1, sbuf_part], [60, 128], 1),
                walk(ps(0x100), [1, psum_part / 4], [60, 128], 4),
                Dtype::INT8,
                Dtype::FP32,
                0,
                0,
            ),
            true,
        ),
        (
            "6-byte elements",
            dma_memcpy(
                walk(sb(2), [1, 20], [10, 2], 6),
                walk(sb(0x2002), [3, 40], [10, 2], 6),
                Dtype::INT16,
                Dtype::INT16,
                0,
                0,
            ),
            true,
        ),
        (
            "3-byte elements at odd addresses",
            dma_memcpy(
                walk(sb(1), [1, 0], [20, 1], 3),
                walk(sb(0x3001), [2, 0], [20, 1], 3),
                Dtype::INT8,
                Dtype::INT8,
                0,
                0,
            ),
            true,
        ),
        (
            "PSUM to PSUM backwards",
            dma(
                walk(ps(0), [1, psum_part / 4], [16, 128], 4),
                walk(ps(0x1000 + 60), [-1, psum_part / 4], [16, 128], 4),
            ),
            true,
        ),
        (
            "int64 to fp32",
            dma_memcpy(
                walk(sb(0), [1, sbuf_part / 8], [8, 128], 8),
                walk(sb(0x4000), [1, sbuf_part / 4], [8, 128], 4),
                Dtype::INT64,
                Dtype::FP32,
                0,
                0,
            ),
            true,
        ),
        (
            "bf16 at an odd address (the host's)",
            dma_memcpy(
                walk(sb(1), [1, 0], [8, 1], 2),
                walk(sb(0x5000), [1, 0], [8, 1], 4),
                Dtype::BFLOAT16,
                Dtype::FP32,
                0,
                0,
            ),
            false,
        ),
        (
            "dst one element past src",
            dma(
                walk(sb(0), [1, sbuf_part / 4], [16, 128], 4),
                walk(sb(4), [1, sbuf_part / 4], [16, 128], 4),
            ),
            false,
        ),
    ];
    for (what, record, kernel) in cases {
        let mut p = x_to_y(&bytes, 16);
        p.set_stream(Engine::Pool, &[dma(dram(1, 16), sbuf(0, 16)), record]);
        let cpu = run(&mut CpuExecutor::default(), &p);
        let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
        let g = run(&mut exec, &p);
        assert_eq!(exec.chip_dmas(), kernel as u64, "{what}");
        if let Some(d) = same_memory(g.memory(), cpu.memory()) {
            panic!("{what}: {d}");
        }
        assert!(g.dram() == cpu.dram(), "{what}: DRAM differs");
    }
}

/// On MARIANA, SBUF's active bytes fill its partition stride, so one DMA
/// element may straddle partitions p and p + 1. Whichever way its bytes
/// reach the GPU — the on-chip DMA kernel, or rows handed over from DRAM —
/// a later DMA that reads the first bytes of p + 1 must see them (the
/// written ranges are split per partition, as `HostRange` promises).
#[test]
fn an_element_straddling_two_partitions_is_newer_in_both() {
    use tpb_emu::runtime::Variable;
    let Some(gpu) = common::gpu() else { return };
    let bytes: Vec<u8> = (0..16u32)
        .flat_map(|i| (i as f32 + 1.0).to_le_bytes())
        .collect();
    let stride = Region::Sbuf.addr(1, 0) - Region::Sbuf.addr(0, 0);
    let straddle = walk(
        on_chip(Region::Sbuf.addr(0, 0) + stride - 4),
        [1, 0],
        [1, 1],
        8,
    );
    let int8 = |src, dst| dma_memcpy(src, dst, Dtype::INT8, Dtype::INT8, 0, 0);
    let into_sbuf = dma(
        walk(var(1, 0), [1, 0], [16, 1], 4),
        walk(on_chip(Region::Sbuf.addr(0, 0x100)), [1, 0], [16, 1], 4),
    );
    let read_p1 = dma(
        walk(on_chip(Region::Sbuf.addr(1, 0)), [1, 0], [1, 1], 4),
        walk(var(2, 0), [1, 0], [1, 1], 4),
    );
    let cases = [
        (
            "on-chip DMA",
            int8(
                walk(on_chip(Region::Sbuf.addr(0, 0x100)), [1, 0], [1, 1], 8),
                straddle,
            ),
        ),
        (
            "from DRAM",
            int8(walk(var(1, 8), [1, 0], [1, 1], 8), straddle),
        ),
    ];
    for (what, record) in cases {
        let mut p = Program::new(Arch::Mariana);
        p.add(Variable::input(
            "x",
            1,
            Dtype::FP32,
            &[1, 16],
            bytes.clone(),
        ));
        p.add(Variable::output("y", 2, Dtype::FP32, &[1, 4]));
        p.set_stream(Engine::Pool, &[into_sbuf, record, read_p1]);
        let cpu = run(&mut CpuExecutor::default(), &p);
        let mut exec = GpuExecutor::new(&gpu, Arch::Mariana).expect("executor");
        let g = run(&mut exec, &p);
        assert!(g.dram() == cpu.dram(), "{what}: DRAM differs");
        assert_ne!(
            cpu.variable("y").unwrap(),
            &[0; 16],
            "{what}: nothing moved"
        );
        if let Some(d) = same_memory(g.memory(), cpu.memory()) {
            panic!("{what}: {d}");
        }
    }
}
