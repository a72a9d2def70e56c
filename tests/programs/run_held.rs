//! Scratch variables the GPU holds for a run (`Begin::dram`): when
//! every DMA that touches one runs between it and SBUF/PSUM as a kernel,
//! its bytes stay on the GPU, and the run must still end with the CPU
//! reference's DRAM (every variable, scratch included, when the run reads
//! everything back), SBUF and PSUM, byte for byte.

use crate::common;
use crate::run_coherence::{dma, dram, run, same_memory, sbuf};
use tpb_emu::device::gpu::GpuExecutor;
use tpb_emu::device::{CpuExecutor, NoTrace};
use tpb_emu::isa::Record;
use tpb_emu::isa::Region;
use tpb_emu::isa::control::DmaWalk;
use tpb_emu::isa::enums::{Dtype, Engine, PoolFunc};
use tpb_emu::isa::samples::seed_pool;
use tpb_emu::isa::validate::Target;
use tpb_emu::limits::Arch;
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::{Machine, Program, Role, Variable, stage};

/// Elements from one partition to the next, for `es`-byte elements.
fn part(region: Region, es: u32) -> i32 {
    ((region.addr(1, 0) - region.addr(0, 0)) / es) as i32
}

/// `x` (input, 128 × 16 fp32), the scratch variables `s` (fp32, 16 × 128)
/// and `t` (bf16, 128 × 16), and `y` (output, 128 × 16 fp32).
fn round_trip_program() -> Program {
    let mut p = Program::new(Arch::Cayman);
    let x: Vec<u8> = (0..128 * 16u32)
        .flat_map(|i| ((i % 97) as f32 * 1.5 - 40.0).to_le_bytes())
        .collect();
    p.add(Variable::input("x", 1, Dtype::FP32, &[128, 16], x));
    p.add(Variable::zeroed(
        "s",
        2,
        Dtype::FP32,
        &[16, 128],
        Role::Scratch,
    ));
    p.add(Variable::zeroed(
        "t",
        3,
        Dtype::BFLOAT16,
        &[128, 16],
        Role::Scratch,
    ));
    p.add(Variable::output("y", 4, Dtype::FP32, &[128, 16]));
    p
}

/// The round trip: x into SBUF, MAX pool, SBUF transposed into `s`, `s`
/// transposed back into PSUM as bf16, PSUM into `t`, `t` into SBUF as fp32
/// over x's copy, AVG pool over it, SBUF out to `y`. Four DMAs touch the
/// scratch variables, every one between them and SBUF/PSUM.
fn round_trip() -> Vec<Record> {
    let (sb, ps) = (part(Region::Sbuf, 4), part(Region::Psum, 2));
    let psum = on_chip(Region::Psum.addr(0, 0));
    vec![
        dma(dram(1, 16), sbuf(0, 16)),
        seed_pool(PoolFunc::MAX_POOL, 128).encode(),
        // Column j of SBUF (one element per partition) is row j of `s`.
        dma(
            walk(on_chip(Region::Sbuf.addr(0, 0)), [sb, 1], [128, 16], 4),
            walk(var(2, 0), [1, 128], [128, 16], 4),
        ),
        dma_memcpy(
            walk(var(2, 0), [1, 128], [128, 16], 4),
            walk(psum, [ps, 1], [128, 16], 2),
            Dtype::FP32,
            Dtype::BFLOAT16,
            0,
            0,
        ),
        dma_memcpy(
            walk(psum, [1, ps], [16, 128], 2),
            walk(var(3, 0), [1, 16], [16, 128], 2),
            Dtype::BFLOAT16,
            Dtype::BFLOAT16,
            0,
            0,
        ),
        dma_memcpy(
            walk(var(3, 0), [1, 16], [16, 128], 2),
            sbuf(0, 16),
            Dtype::BFLOAT16,
            Dtype::FP32,
            0,
            0,
        ),
        seed_pool(PoolFunc::AVG_POOL, 128).encode(),
        dma(sbuf(0, 16), dram(4, 16)),
    ]
}

#[test]
fn scratch_variables_stay_on_the_gpu_when_every_dma_of_theirs_can() {
    let Some(gpu) = common::gpu() else { return };
    let mut p = round_trip_program();
    p.set_stream(Engine::Pool, &round_trip());
    let cpu = run(&mut CpuExecutor::default(), &p);
    // The reference moved something through both scratch variables.
    for v in ["s", "t", "y"] {
        assert!(
            cpu.variable(v).unwrap().iter().any(|&b| b != 0),
            "`{v}` stayed zero"
        );
    }
    let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
    let g = run(&mut exec, &p);
    assert_eq!(exec.chip_dmas(), 4, "the scratch DMAs ran as kernels");
    assert!(g.dram() == cpu.dram(), "DRAM differs");
    if let Some(d) = same_memory(g.memory(), cpu.memory()) {
        panic!("{d}");
    }
    // Reading back only DRAM (outputs): `y` is the reference's, and the
    // executor is ready for the next run.
    let mut m = Machine::new(stage(&p).expect("stages"));
    m.set_dram_only(true);
    for pass in ["dram only", "restarted"] {
        m.run(&mut exec, &mut NoTrace).expect("runs");
        assert_eq!(m.variable("y"), cpu.variable("y"), "{pass}");
        m.restart();
    }
    // A run stopped half way by its record budget, then resumed: the held
    // bytes come back to the host and go up again.
    let mut m = Machine::new(stage(&p).expect("stages"));
    m.set_max_records(4);
    assert!(
        m.run(&mut exec, &mut NoTrace).is_err(),
        "stops at 4 records"
    );
    assert_eq!(m.variable("s"), cpu.variable("s"), "`s` after the stop");
    m.set_max_records(100);
    m.run(&mut exec, &mut NoTrace).expect("resumes");
    assert!(m.dram() == cpu.dram(), "DRAM differs after the resume");
    if let Some(d) = same_memory(m.memory(), cpu.memory()) {
        panic!("resumed: {d}");
    }
}

/// A scratch variable may start with bytes (a NEFF's `file` weights): the
/// GPU holds them from the start, and a DMA that reads the variable before
/// any writes it sees them. (One only read is not held: an input in all
/// but name.)
#[test]
fn a_held_scratch_variable_starts_with_its_bytes() {
    let Some(gpu) = common::gpu() else { return };
    let mut p = round_trip_program();
    let weights: Vec<u8> = (0..128 * 16u32)
        .flat_map(|i| (i as f32 * 0.25 - 7.0).to_le_bytes())
        .collect();
    p.variables[1].init = Some(weights.clone().into());
    let rows = |n| walk(var(2, 0), [1, 16], [n, 128], 4);
    // Each row of `s` into a partition; its last 8 elements back over its
    // first 8; the row into SBUF again and out to `y`.
    let records = [
        dma(rows(16), sbuf(0, 16)),
        dma(sbuf(32, 8), rows(8)),
        dma(rows(16), sbuf(0x400, 16)),
        dma(sbuf(0x400, 16), dram(4, 16)),
    ];
    let want: Vec<u8> = weights
        .chunks(64)
        .flat_map(|row| [&row[32..], &row[32..]].concat())
        .collect();
    for (what, records) in [
        ("read only", &records[..1]),
        ("read and written", &records[..]),
    ] {
        let mut p = p.clone();
        let mut records = records.to_vec();
        if records.len() == 1 {
            records.push(dma(sbuf(0, 16), dram(4, 16)));
        }
        p.set_stream(Engine::Pool, &records);
        let cpu = run(&mut CpuExecutor::default(), &p);
        let y = cpu.variable("y").unwrap();
        assert_eq!(
            y,
            if records.len() == 2 { &weights } else { &want },
            "{what}"
        );
        let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
        let mut m = Machine::new(stage(&p).expect("stages"));
        m.set_dram_only(true);
        m.run(&mut exec, &mut NoTrace).expect("runs");
        let held = if records.len() == 2 { 0 } else { 3 };
        assert_eq!(exec.chip_dmas(), held, "{what}: DMAs of `s` as kernels");
        assert_eq!(m.variable("y"), Some(y), "{what}");
    }
}

#[test]
fn a_scratch_variable_stays_on_the_host_when_one_dma_of_its_cannot_run_on_the_gpu() {
    let Some(gpu) = common::gpu() else { return };
    let cases: [(&str, Record); 3] = [
        (
            "`s` to `y`, DRAM to DRAM",
            dma(
                walk(var(2, 0), [1, 16], [16, 16], 4),
                walk(var(4, 0), [1, 16], [16, 16], 4),
            ),
        ),
        (
            "into `s`, each element twice",
            dma(
                walk(on_chip(Region::Sbuf.addr(0, 0)), [1, 0], [2, 1], 4),
                walk(var(2, 64), [0, 0], [2, 1], 4),
            ),
        ),
        (
            "`t` to SBUF as fp32 from an odd address",
            dma_memcpy(
                walk(var(3, 1), [1, 0], [4, 1], 2),
                walk(on_chip(Region::Sbuf.addr(5, 0x200)), [1, 0], [4, 1], 4),
                Dtype::BFLOAT16,
                Dtype::FP32,
                0,
                0,
            ),
        ),
    ];
    for (k, (what, record)) in cases.into_iter().enumerate() {
        let mut p = round_trip_program();
        let mut records = round_trip();
        records.insert(5, record);
        p.set_stream(Engine::Pool, &records);
        let cpu = run(&mut CpuExecutor::default(), &p);
        let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
        let g = run(&mut exec, &p);
        // The other scratch variable is still held: two DMAs of its own.
        assert_eq!(exec.chip_dmas(), 2, "{what}");
        assert!(g.dram() == cpu.dram(), "{what}: DRAM differs");
        if let Some(d) = same_memory(g.memory(), cpu.memory()) {
            panic!("{what}: {d}");
        }
        // The first case's DMA moved `s`'s bytes into `y`.
        if k == 0 {
            assert_ne!(cpu.variable("y").unwrap()[..64], [0; 64], "{what}");
        }
    }
}

/// A random walk of `n` elements of `es` bytes on chip: along a partition,
/// or one partition per row. `tidy`: at an address aligned to the element
/// and rows that do not interleave; else any.
fn chip_walk(rng: &mut fastrand::Rng, es: u16, n: [u16; 2], tidy: bool) -> DmaWalk {
    let region = if rng.bool() {
        Region::Sbuf
    } else {
        Region::Psum
    };
    let offset = rng.u32(0..128) * if tidy { es as u32 } else { 1 };
    let addr = region.addr(rng.u32(0..100), offset);
    let stride = region.addr(1, 0) - region.addr(0, 0);
    let step0 = rng.i32(1..=3);
    let step1 = if rng.bool() && stride % es as u32 == 0 {
        (stride / es as u32) as i32
    } else if tidy {
        n[0] as i32 * step0 + rng.i32(0..=4)
    } else {
        rng.i32(0..=40)
    };
    walk(on_chip(addr), [step0, step1], n, es)
}

/// A random walk of `n` elements of `es` bytes in variable `id`: at an
/// offset aligned to the element and rows one after another (`tidy`), or
/// any.
fn var_walk(rng: &mut fastrand::Rng, id: u32, es: u16, n: [u16; 2], tidy: bool) -> DmaWalk {
    let step0 = rng.i32(1..=2);
    let step1 = if tidy {
        n[0] as i32 * step0
    } else {
        rng.i32(0..=12)
    };
    let offset = rng.u32(0..32) * if tidy { es as u32 } else { 1 };
    walk(var(id, offset), [step0, step1], n, es)
}

/// A random DMA between SBUF/PSUM and scratch variable 2 (int16) or 3
/// (fp32), either way, converting or not; `tidy` as for the walks.
fn scratch_dma(rng: &mut fastrand::Rng, tidy: bool) -> Record {
    const TYPES: [Dtype; 4] = [Dtype::INT16, Dtype::FP32, Dtype::BFLOAT16, Dtype::INT8];
    let id = rng.u32(2..=3);
    let scratch = if id == 2 { Dtype::INT16 } else { Dtype::FP32 };
    let chip = TYPES[rng.usize(..TYPES.len())];
    let n = [rng.u16(1..=12), rng.u16(1..=6)];
    let size = |d: Dtype| d.size().unwrap() as u16;
    if rng.bool() {
        let src = var_walk(rng, id, size(scratch), n, tidy);
        let dst = chip_walk(rng, size(chip), n, tidy);
        dma_memcpy(src, dst, scratch, chip, 0, 0)
    } else {
        let src = chip_walk(rng, size(chip), n, tidy);
        let dst = var_walk(rng, id, size(scratch), n, tidy);
        dma_memcpy(src, dst, chip, scratch, 0, 0)
    }
}

#[test]
fn random_programs_through_held_scratch_end_as_on_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    let mut held_dmas = 0;
    for seed in 0..40u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        // Every generation: their active bytes per partition differ.
        let arch = [Arch::Cayman, Arch::Sunda, Arch::Mariana][seed as usize % 3];
        let mut p = Program::new(arch);
        let x: Vec<u8> = (0..4096).map(|_| rng.u8(..)).collect();
        p.add(Variable::input("x", 1, Dtype::INT16, &[2048], x));
        p.add(Variable::zeroed(
            "a",
            2,
            Dtype::INT16,
            &[300],
            Role::Scratch,
        ));
        p.add(Variable::zeroed("b", 3, Dtype::FP32, &[200], Role::Scratch));
        // Every partition's first 512 bytes of SBUF and PSUM hold data.
        let fill = |at: u32, part: i32| {
            dma_memcpy(
                walk(var(1, 0), [1, 8], [256, 128], 2),
                walk(on_chip(at), [1, part], [256, 128], 2),
                Dtype::INT16,
                Dtype::INT16,
                0,
                0,
            )
        };
        let mut recs = vec![
            fill(Region::Sbuf.addr(0, 0), 1 << 17),
            fill(Region::Psum.addr(0, 0), 1 << 14),
        ];
        while recs.len() < 26 {
            let r = if rng.u8(0..3) == 0 {
                common::random_valid_pool(&mut rng, Target::pool(arch)).encode()
            } else {
                // One DMA in twenty may keep its variable on the host.
                let tidy = rng.u8(0..20) > 0;
                scratch_dma(&mut rng, tidy)
            };
            let mut q = p.clone();
            q.set_stream(Engine::Pool, &[r]);
            if stage(&q).is_ok() {
                recs.push(r);
            }
        }
        // One program in eight also copies `a` to `b` in DRAM: both stay
        // on the host.
        if seed % 8 == 7 {
            recs.push(dma_memcpy(
                walk(var(2, 0), [1, 0], [8, 1], 2),
                walk(var(3, 0), [1, 0], [8, 1], 4),
                Dtype::INT16,
                Dtype::FP32,
                0,
                0,
            ));
        }
        p.set_stream(Engine::Pool, &recs);
        let cpu = run(&mut CpuExecutor::default(), &p);
        let mut exec = GpuExecutor::new(&gpu, arch).expect("executor");
        let g = run(&mut exec, &p);
        if seed % 8 == 7 {
            assert_eq!(exec.chip_dmas(), 0, "seed {seed}");
        }
        held_dmas += exec.chip_dmas();
        assert!(g.dram() == cpu.dram(), "seed {seed}: DRAM differs");
        if let Some(d) = same_memory(g.memory(), cpu.memory()) {
            panic!("seed {seed}: {d}");
        }
    }
    assert!(held_dmas > 300, "only {held_dmas} DMAs ran with held DRAM");
}

/// The dtype of `es`-byte elements.
fn int_of(es: u16) -> Dtype {
    match es {
        1 => Dtype::INT8,
        2 => Dtype::INT16,
        4 => Dtype::FP32,
        _ => Dtype::INT64,
    }
}

/// A random walk on chip of rows of `n[0]` adjacent `es`-byte elements,
/// 16-byte aligned: near the end of a partition's active bytes (rows that
/// cross into the next partition on MARIANA's SBUF) or anywhere, rows a
/// partition or two apart, or a row's length (and some) apart, either way,
/// or all at one place.
fn row_walk(rng: &mut fastrand::Rng, arch: Arch, es: u16, n: [u16; 2]) -> DmaWalk {
    let region = if rng.u8(0..3) > 0 {
        Region::Sbuf
    } else {
        Region::Psum
    };
    let active = region.active_bytes(arch);
    let stride = region.addr(1, 0) - region.addr(0, 0);
    let row = n[0] as u32 * es as u32;
    let offset = if rng.bool() && row < active {
        active - 16 * rng.u32(1..=(row / 16 + 2))
    } else {
        16 * rng.u32(0..(active / 16))
    };
    let addr = region.addr(rng.u32(0..128), offset);
    let (es, row) = (es as i32, row as i32);
    let step1 = match rng.u8(0..5) {
        0 => (stride as i32 / es) * rng.i32(1..=2),
        1 => -(stride as i32 / es) * rng.i32(1..=2),
        2 => row / es + 16 / es * rng.i32(0..=3),
        3 => -(row / es + 16 / es * rng.i32(0..=3)),
        _ => 0,
    };
    walk(on_chip(addr), [1, step1], n, es as u16)
}

/// The same in scratch variable 2 (`len` bytes): forwards from a 16-byte
/// offset, or backwards from near its end.
fn held_row_walk(rng: &mut fastrand::Rng, es: u16, n: [u16; 2], len: u32) -> DmaWalk {
    let row = n[0] as u32 * es as u32;
    let step1 = (row + 16 * rng.u32(0..=2)) / es as u32;
    if rng.bool() {
        return walk(var(2, 16 * rng.u32(0..8)), [1, step1 as i32], n, es);
    }
    let span = (n[1].max(1) as u32 - 1) * step1 * es as u32 + row;
    let start = len.saturating_sub(span + 16 * rng.u32(0..4)) & !15;
    walk(var(2, start), [1, -(step1 as i32)], n, es)
}

/// DMAs of whole 16-byte pieces of rows (`ROWS16` in dma.wgsl) on every
/// generation: between SBUF and PSUM places and a held scratch variable,
/// rows crossing partitions, backward steps, one row, no rows; DRAM, SBUF
/// and PSUM end as on the CPU. (From an independent review's fuzz test.)
#[test]
fn random_row_dmas_in_16_byte_pieces_end_as_on_the_cpu() {
    let Some(gpu) = common::gpu() else { return };
    let mut kernels = 0;
    for seed in 0..36u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let arch = [Arch::Sunda, Arch::Cayman, Arch::Mariana][seed as usize % 3];
        let mut p = Program::new(arch);
        let x: Vec<u8> = (0..4096).map(|_| rng.u8(..)).collect();
        p.add(Variable::input("x", 1, Dtype::INT8, &[4096], x));
        let len = 8192u32;
        p.add(Variable::zeroed(
            "a",
            2,
            Dtype::INT8,
            &[len as u64],
            Role::Scratch,
        ));
        let int8 = |src, dst| dma_memcpy(src, dst, Dtype::INT8, Dtype::INT8, 0, 0);
        let stride = |r: Region| (r.addr(1, 0) - r.addr(0, 0)) as i32;
        // Data at both ends of every partition of SBUF and PSUM, then in `a`.
        let mut recs = Vec::new();
        for r in [Region::Sbuf, Region::Psum] {
            for k in 0..8u32 {
                for at in [k * 32, r.active_bytes(arch) - 32 * (k + 1)] {
                    recs.push(int8(
                        walk(var(1, 0), [1, 32], [32, 128], 1),
                        walk(on_chip(r.addr(0, at)), [1, stride(r)], [32, 128], 1),
                    ));
                }
            }
        }
        recs.push(int8(
            walk(
                on_chip(Region::Sbuf.addr(0, 0)),
                [1, stride(Region::Sbuf)],
                [32, 128],
                1,
            ),
            walk(var(2, 0), [1, 32], [32, 128], 1),
        ));
        let mut added = 0;
        while added < 12 {
            let es = [1u16, 2, 4, 8][rng.usize(0..4)];
            let n = [
                16 / es * rng.u16(1..=4),
                [0, 1, 2, 3, 5, 8][rng.usize(0..6)],
            ];
            let (src, dst) = match rng.u8(0..4) {
                0 => (
                    held_row_walk(&mut rng, es, n, len),
                    row_walk(&mut rng, arch, es, n),
                ),
                1 => (
                    row_walk(&mut rng, arch, es, n),
                    held_row_walk(&mut rng, es, n, len),
                ),
                _ => (
                    row_walk(&mut rng, arch, es, n),
                    row_walk(&mut rng, arch, es, n),
                ),
            };
            let r = dma_memcpy(src, dst, int_of(es), int_of(es), 0, 0);
            let mut q = p.clone();
            q.set_stream(Engine::Pool, &[r]);
            if stage(&q).is_ok() {
                recs.push(r);
                added += 1;
            }
        }
        // `a` read back into SBUF at the end.
        recs.push(int8(
            walk(var(2, 0), [1, 0], [16, 1], 1),
            walk(on_chip(Region::Sbuf.addr(5, 16)), [1, 0], [16, 1], 1),
        ));
        p.set_stream(Engine::Pool, &recs);
        let cpu = run(&mut CpuExecutor::default(), &p);
        let mut exec = GpuExecutor::new(&gpu, arch).expect("executor");
        let g = run(&mut exec, &p);
        kernels += exec.chip_dmas();
        assert!(g.dram() == cpu.dram(), "seed {seed} {arch:?}: DRAM differs");
        if let Some(d) = same_memory(g.memory(), cpu.memory()) {
            panic!("seed {seed} {arch:?}: {d}");
        }
    }
    assert!(kernels > 200, "only {kernels} DMAs ran as kernels");
}
