//! Whole programs (`tpb-emu run`'s engine, in process).
//!
//! - The example program of `examples/program/` end to end per backend:
//!   manifest load + staging, then the run (fresh device memory, scheduler,
//!   DMAs, Pool on the backend, deferred GPU work finished). The GPU executor
//!   is created once, outside the timing (pipeline compilation is a one-time
//!   device cost).
//! - A program of 100,000 control and DMA records on two engines: SP DMAs a
//!   64-byte row from DRAM into SBUF (completion: `sem[0] += 1`) and updates
//!   registers; ACT waits for each row (`sem[0] >= k`), DMAs it back to DRAM
//!   and updates registers. Records/s of the run, and of staging.
//! - 200 transposes between SBUF and PSUM (128 × 16 fp32, DMAs whose walks
//!   cross partitions) between a DMA in and a DMA out, per backend: on the
//!   GPU they run as a kernel behind each other (`Resident::dma`).
//! - 200 DMAs through a scratch variable: SBUF out to it and back into PSUM,
//!   100 times (128 × 16 fp32), per backend: on the GPU the variable is
//!   held in device memory and the DMAs run as a kernel (`Begin::dram`).
//! - A counted loop executing 1,000,000 records from a 4-record stream (the
//!   scheduler alone).
//!
//! Times are medians. `cargo bench --bench programs` (`PROGRAMS_BENCH_MS`
//! sets the time budget per row, default 1500).

mod common;
use common::time;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tpb_emu::device::gpu::{BackendChoice, Gpu, GpuExecutor};
use tpb_emu::device::{CpuExecutor, Executor, NoTrace};
use tpb_emu::isa::control::{alu, cmp};
use tpb_emu::isa::enums::{Dtype, Engine, UpdateMode, WaitMode};
use tpb_emu::isa::tensor::Region;
use tpb_emu::limits::Arch;
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::{Machine, Program, Role, Staged, Variable, manifest, stage};

fn run(staged: &Arc<Staged>, exec: &mut dyn Executor) -> u64 {
    let mut m = Machine::new(Arc::clone(staged));
    m.run(exec, &mut NoTrace).expect("runs");
    m.total_executed()
}

const ROWS: u32 = 12_500; // 4 records per row and engine: 100,000 records

/// 100,000 control and DMA records on SP and ACT.
fn control_and_dma() -> Program {
    let lane = (1 << 18) / 4;
    let mut sp = Vec::new();
    let mut act = Vec::new();
    for k in 0..ROWS {
        let part = k % 128;
        let row = (k % 256) * 64; // byte offset of row k in x and y
        sp.push(dma_memcpy(
            contiguous(var(1, row), 16, 4),
            contiguous(on_chip(Region::Sbuf.addr(part, (k / 128 % 8) * 64)), 16, 4),
            Dtype::FP32,
            Dtype::FP32,
            0,
            1,
        ));
        sp.push(mov32(1, k));
        sp.push(ctrl_al(alu::ADD, 2, 1, 3));
        sp.push(drain());
        act.push(event_semaphore(ev_wait(WaitMode::SEM_GE, 0, k + 1)));
        act.push(dma_memcpy(
            walk(
                on_chip(Region::Sbuf.addr(part, (k / 128 % 8) * 64)),
                [1, lane],
                [16, 1],
                4,
            ),
            contiguous(var(2, row), 16, 4),
            Dtype::FP32,
            Dtype::FP32,
            1,
            1,
        ));
        act.push(mov32(3, k));
        act.push(with_events(
            ctrl_al(alu::SUB, 4, 3, 1),
            ev_update(UpdateMode::SEM_INC, 2, 0),
        ));
    }
    let mut p = Program::new(Arch::Cayman);
    p.set_stream(Engine::Sp, &sp)
        .set_stream(Engine::Act, &act)
        .add(Variable::input(
            "x",
            1,
            Dtype::FP32,
            &[256, 16],
            (0..256 * 16u32)
                .flat_map(|v| (v as f32).to_le_bytes())
                .collect(),
        ))
        .add(Variable::output("y", 2, Dtype::FP32, &[256, 16]));
    p
}

/// A counted loop: 1 + 3 · 333,333 = 1,000,000 records executed.
fn counted_loop() -> Program {
    let mut p = Program::new(Arch::Cayman);
    p.set_stream(
        Engine::Dve,
        &[
            mov32(0, 333_333),
            event_semaphore(ev_update(UpdateMode::SEM_INC, 5, 0)),
            ctrl_al(alu::SUB, 0, 0, 1),
            compare_branch(cmp::GTIMM, 0, 0, BranchTarget::Rel(-128)),
        ],
    )
    .add(Variable::output("unused", 1, Dtype::UINT8, &[1]));
    p
}

fn header() {
    println!(
        "{:<46} {:<40} {:>9} {:>9} {:>12} {:>9}",
        "program", "backend", "stage ms", "run ms", "records/s", "records"
    );
}

fn row(name: &str, backend: &str, stage_s: f64, run_s: f64, records: u64) {
    println!(
        "{name:<46} {backend:<40} {:>9.3} {:>9.3} {:>12.0} {records:>9}",
        stage_s * 1e3,
        run_s * 1e3,
        records as f64 / run_s
    );
}

/// A program with the input x (id 1) and the output y (id 2), both 128 ×
/// 16 fp32, and no records yet.
fn x_and_y() -> Program {
    let bytes: Vec<u8> = (0..128 * 16u32)
        .flat_map(|i| (i as f32).to_le_bytes())
        .collect();
    let mut p = Program::new(Arch::Cayman);
    p.add(Variable::input("x", 1, Dtype::FP32, &[128, 16], bytes));
    p.add(Variable::output("y", 2, Dtype::FP32, &[128, 16]));
    p
}

/// x (128 × 16 fp32) into SBUF, transposed into PSUM and back 100 times,
/// then out to y.
fn transposes() -> Program {
    let mut p = x_and_y();
    // Partition strides in fp32 elements.
    let sp = (Region::Sbuf.addr(1, 0) - Region::Sbuf.addr(0, 0)) as i32 / 4;
    let pp = (Region::Psum.addr(1, 0) - Region::Psum.addr(0, 0)) as i32 / 4;
    let rows = walk(on_chip(Region::Sbuf.addr(0, 0)), [1, sp], [16, 128], 4);
    let cols = walk(on_chip(Region::Sbuf.addr(0, 0)), [sp, 1], [128, 16], 4);
    let psum = walk(on_chip(Region::Psum.addr(0, 0)), [1, pp], [128, 16], 4);
    let fp32 = |src, dst| dma_memcpy(src, dst, Dtype::FP32, Dtype::FP32, 0, 0);
    let mut recs = vec![fp32(walk(var(1, 0), [1, 16], [16, 128], 4), rows)];
    for _ in 0..100 {
        recs.push(fp32(cols, psum));
        recs.push(fp32(psum, cols));
    }
    recs.push(fp32(rows, walk(var(2, 0), [1, 16], [16, 128], 4)));
    p.set_stream(Engine::Pool, &recs);
    p
}

/// x (128 × 16 fp32) into SBUF, then 100 times out to the scratch variable
/// s and back into PSUM, then out to y.
fn scratch_round_trips() -> Program {
    let mut p = x_and_y();
    p.add(Variable::zeroed(
        "s",
        3,
        Dtype::FP32,
        &[128, 16],
        Role::Scratch,
    ));
    let sp = (Region::Sbuf.addr(1, 0) - Region::Sbuf.addr(0, 0)) as i32 / 4;
    let pp = (Region::Psum.addr(1, 0) - Region::Psum.addr(0, 0)) as i32 / 4;
    let sbuf = walk(on_chip(Region::Sbuf.addr(0, 0)), [1, sp], [16, 128], 4);
    let psum = walk(on_chip(Region::Psum.addr(0, 0)), [1, pp], [16, 128], 4);
    let rows = |id| walk(var(id, 0), [1, 16], [16, 128], 4);
    let fp32 = |src, dst| dma_memcpy(src, dst, Dtype::FP32, Dtype::FP32, 0, 0);
    let mut recs = vec![fp32(rows(1), sbuf)];
    for _ in 0..100 {
        recs.push(fp32(sbuf, rows(3)));
        recs.push(fp32(rows(3), psum));
    }
    recs.push(fp32(psum, rows(2)));
    p.set_stream(Engine::Pool, &recs);
    p
}

fn main() {
    let budget = Duration::from_millis(
        std::env::var("PROGRAMS_BENCH_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1500),
    );
    // From the repository root when the build's path is not there (the
    // device check runs this binary on another machine).
    let example = "examples/program/program.toml";
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join(example);
    let manifest_path = if built.exists() {
        built
    } else {
        example.into()
    };
    let load_stage = || stage(&manifest::load(&manifest_path).expect("loads")).expect("stages");
    let example_stage_s = time(budget, || {
        std::hint::black_box(load_stage());
    });
    let example = Arc::new(load_stage());
    let gpu = Gpu::open(BackendChoice::Gpu).ok();
    header();

    let mut cpu = CpuExecutor::default();
    let mut n = 0;
    let s = time(budget, || n = run(&example, &mut cpu));
    row(
        "example (examples/program), end to end",
        "cpu",
        example_stage_s,
        s,
        n,
    );
    match &gpu {
        Some(g) => {
            let mut exec = GpuExecutor::new(g, Arch::Cayman).expect("executor");
            let s = time(budget, || n = run(&example, &mut exec));
            let name = format!("gpu: {}", g.adapter.name);
            row(
                "example (examples/program), end to end",
                &name,
                example_stage_s,
                s,
                n,
            );
        }
        None => println!(
            "{:<46} gpu: no adapter, skipped",
            "example (examples/program)"
        ),
    }

    let p = control_and_dma();
    let stage_s = time(budget, || {
        std::hint::black_box(stage(&p).expect("stages"));
    });
    let staged = Arc::new(stage(&p).expect("stages"));
    let s = time(budget, || n = run(&staged, &mut cpu));
    row(
        "100,000 control + DMA records (SP, ACT)",
        "cpu (no Pool records)",
        stage_s,
        s,
        n,
    );
    println!("{:<46} staging: {:.0} records/s", "", 100_000.0 / stage_s);

    for (name, p) in [
        ("200 on-chip transposes (128 x 16 fp32)", transposes()),
        (
            "200 DMAs via a scratch variable (128 x 16 fp32)",
            scratch_round_trips(),
        ),
    ] {
        let staged = Arc::new(stage(&p).expect("stages"));
        let stage_s = time(budget, || {
            std::hint::black_box(stage(&p).expect("stages"));
        });
        let s = time(budget, || n = run(&staged, &mut cpu));
        row(name, "cpu", stage_s, s, n);
        if let Some(g) = &gpu {
            let mut exec = GpuExecutor::new(g, Arch::Cayman).expect("executor");
            let s = time(budget, || n = run(&staged, &mut exec));
            row(name, &format!("gpu: {}", g.adapter.name), stage_s, s, n);
        }
    }

    let p = counted_loop();
    let staged = Arc::new(stage(&p).expect("stages"));
    let stage_s = time(budget, || {
        std::hint::black_box(stage(&p).expect("stages"));
    });
    let s = time(budget, || n = run(&staged, &mut cpu));
    row(
        "counted loop (MOV32, CTRL_AL, COMPARE_BRANCH)",
        "cpu (no Pool records)",
        stage_s,
        s,
        n,
    );
}
