//! Whole programs end to end: SP DMAs an input from DRAM into SBUF and
//! signals POOL through a semaphore, Pool runs, ACT waits on POOL's update and
//! DMAs the result back to DRAM. The output must equal a reference computed
//! here from the input array, on the CPU and on the GPU backend; the shipped
//! example program is checked the same way through `tpb-emu run`.

use crate::common;
use common::tpb;

use std::path::{Path, PathBuf};
use std::process::Command;

use tpb_emu::device::gpu::GpuExecutor;
use tpb_emu::device::{CpuExecutor, Executor, NoTrace};
use tpb_emu::isa::enums::{Dtype, PoolDim, PoolFunc, UpdateMode, WaitMode};
use tpb_emu::isa::record::Events;
use tpb_emu::isa::{Addr4, Engine, Opcode, Region, S4d4Pl, Tensor4d};
use tpb_emu::limits::Arch;
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::{Machine, Program, Variable, samples, stage};

const LANES: u64 = 24;
const FIRST: u32 = 8; // the first partition used
const W: u64 = 6; // a 6-wide row per lane, pooled in windows of 3

/// The input: lane l, element k (a row of W values) — arbitrary, with a NaN and ±0.
fn input() -> Vec<f32> {
    (0..LANES)
        .flat_map(|l| {
            (0..W).map(move |k| match (l, k) {
                (3, 1) => f32::NAN,
                (5, 0) => -0.0,
                _ => ((l * 13 + k * 7) % 23) as f32 * 1.25 - 9.5,
            })
        })
        .collect()
}

/// The reference, computed from SPEC §6 directly: per lane, windows of 3
/// consecutive elements; MAX from -inf with NaN never winning.
fn reference(x: &[f32]) -> Vec<f32> {
    x.chunks(3)
        .map(|w| {
            let mut acc = f32::NEG_INFINITY;
            for &v in w {
                if v > acc {
                    acc = v;
                }
            }
            acc
        })
        .collect()
}

/// The pipeline, built record by record.
fn pipeline() -> Program {
    let lane_step = (1 << 18) / 4; // one SBUF partition, in fp32 elements
    // SP: x (DRAM) -> SBUF partitions FIRST.., offset 0x40; sem[3] += 1 on completion.
    let dma_in = dma_memcpy(
        walk(var(10, 0), [1, W as i32], [W as u16, LANES as u16], 4),
        walk(
            on_chip(Region::Sbuf.addr(FIRST, 0x40)),
            [1, lane_step],
            [W as u16, LANES as u16],
            4,
        ),
        Dtype::FP32,
        Dtype::FP32,
        3,
        1,
    );
    // POOL: wait sem[3] >= 1; MAX over windows of 3 along X; then event[7] set.
    let pool = S4d4Pl::new(
        Opcode::POOL,
        PoolFunc::MAX_POOL,
        PoolDim::X,
        Dtype::FP32,
        Dtype::FP32,
        LANES as u8,
        1.0,
        Tensor4d::new(
            Addr4::new(Region::Sbuf, FIRST, 0x40),
            [(3, 1), (2, 3), (1, 1), (1, 1)],
        ),
        Tensor4d::new(
            Addr4::new(Region::Sbuf, FIRST, 0x400),
            [(2, 1), (1, 1), (1, 1), (1, 1)],
        ),
    );
    let pool = with_events(
        pool.encode(),
        Events {
            update_mode: UpdateMode::EVT_SET,
            update_idx: 7,
            ..ev_wait(WaitMode::SEM_GE, 3, 1)
        },
    );
    // ACT: wait event[7] set (clearing it), DMA the maxima to y.
    let dma_out = with_events(
        dma_memcpy(
            walk(
                on_chip(Region::Sbuf.addr(FIRST, 0x400)),
                [1, lane_step],
                [2, LANES as u16],
                4,
            ),
            walk(var(11, 0), [1, 2], [2, LANES as u16], 4),
            Dtype::FP32,
            Dtype::FP32,
            0,
            0,
        ),
        ev_wait(WaitMode::EVT_SET_THEN_CLEAR, 7, 0),
    );
    let x: Vec<u8> = input().iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut p = Program::new(Arch::Cayman);
    // ACT's stream is the lowest-numbered, so it is tried first and must wait.
    p.set_stream(Engine::Act, &[dma_out])
        .set_stream(Engine::Pool, &[pool])
        .set_stream(Engine::Sp, &[dma_in])
        .add(Variable::input("x", 10, Dtype::FP32, &[LANES, W], x))
        .add(Variable::output("y", 11, Dtype::FP32, &[LANES, 2]));
    p
}

fn f32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn run_on(exec: &mut dyn Executor, p: &Program) -> Machine {
    let mut m = Machine::new(stage(p).expect("stages"));
    m.run(exec, &mut NoTrace).expect("runs");
    m
}

fn check_pipeline(m: &Machine) {
    let want: Vec<u32> = reference(&input()).iter().map(|v| v.to_bits()).collect();
    assert_eq!(f32s(m.variable("y").unwrap()), want);
    assert_eq!(m.semaphore(3), 1, "the DMA's completion increment");
    assert!(!m.event(7), "EVT_SET_THEN_CLEAR cleared the event");
    assert_eq!(m.executed(), [0, 1, 1, 0, 1]);
}

#[test]
fn pipeline_on_the_cpu_equals_the_reference() {
    let m = run_on(&mut CpuExecutor::default(), &pipeline());
    check_pipeline(&m);
}

#[test]
fn pipeline_on_the_gpu_equals_the_reference() {
    let Some(gpu) = common::gpu() else { return };
    let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
    let m = run_on(&mut exec, &pipeline());
    check_pipeline(&m);
}

// ---------------------------------------------------------------------------
// The shipped example (examples/program, src/runtime/samples.rs).

/// Per lane: the 4×4 map's 2×2 windows in row-major order, each in the walk's
/// stream order (a, b, then the row below).
fn windows(x: &[f32]) -> Vec<[f32; 4]> {
    x.chunks(16)
        .flat_map(|m| {
            [(0, 0), (0, 2), (2, 0), (2, 2)].map(|(r, c)| {
                [
                    m[r * 4 + c],
                    m[r * 4 + c + 1],
                    m[r * 4 + c + 4],
                    m[r * 4 + c + 5],
                ]
            })
        })
        .collect()
}

fn example_avg() -> Vec<u32> {
    windows(&samples::input())
        .iter()
        .map(|w| ((((0.0f32 + w[0]) + w[1]) + w[2]) + w[3]) * 0.25)
        .map(f32::to_bits)
        .collect()
}

fn example_max_bf16() -> Vec<u16> {
    windows(&samples::input())
        .iter()
        .map(|w| w.iter().copied().fold(f32::NEG_INFINITY, f32::max))
        .map(|v| half::bf16::from_f32(v).to_bits())
        .collect()
}

fn u16s(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

#[test]
fn example_program_on_both_backends() {
    let p = samples::program();
    let m = run_on(&mut CpuExecutor::default(), &p);
    assert_eq!(f32s(m.variable("y_avg").unwrap()), example_avg());
    assert_eq!(u16s(m.variable("y_max").unwrap()), example_max_bf16());
    assert_eq!(m.executed(), [0, 2, 2, 0, 1]);
    let Some(gpu) = common::gpu() else { return };
    let mut exec = GpuExecutor::new(&gpu, Arch::Cayman).expect("executor");
    let g = run_on(&mut exec, &p);
    assert_eq!(g.dram(), m.dram());
    assert!(common::first_difference(g.memory(), m.memory()).is_none());
}

fn example_manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/program/program.toml")
}

#[test]
fn example_files_are_the_samples() {
    let loaded = tpb_emu::runtime::manifest::load(&example_manifest()).expect("loads");
    assert_eq!(
        loaded,
        samples::program(),
        "examples/program is stale: cargo run --example make_program"
    );
}

fn read_npy<T: npyz::Deserialize>(path: &Path) -> (Vec<u64>, Vec<T>) {
    let bytes = std::fs::read(path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    (npy.shape().to_vec(), npy.into_vec().unwrap())
}

fn cli_example(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let m = example_manifest();
    let o = tpb(&[
        "run",
        m.to_str().unwrap(),
        "--backend",
        backend,
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (shape, avg) = read_npy::<f32>(&out.join("y_avg.npy"));
    assert_eq!(shape, [128, 4]);
    assert_eq!(
        avg.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        example_avg()
    );
    let (shape, max) = read_npy::<u16>(&out.join("y_max.npy"));
    assert_eq!(shape, [128, 4]);
    assert_eq!(max, example_max_bf16());
    let summary: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap()).expect("one JSON object");
    assert_eq!(summary["records"]["sp"], 1);
    assert_eq!(summary["records"]["pool"], 2);
    assert_eq!(summary["records"]["act"], 2);
    assert_eq!(summary["total_records"], 5);
    assert_eq!(summary["arch"], "cayman");
    assert!(summary["wall_s"].as_f64().unwrap() > 0.0);
    assert_eq!(summary["outputs"].as_array().unwrap().len(), 2);
    assert!(summary["backend"].as_str().unwrap().starts_with(backend));
}

#[test]
fn cli_runs_the_example_on_the_cpu() {
    cli_example("cpu");
}

#[test]
fn cli_runs_the_example_on_the_gpu() {
    if common::gpu().is_none() {
        return;
    }
    cli_example("gpu");
}

#[test]
fn cli_text_summary_and_trace() {
    let dir = tempfile::tempdir().unwrap();
    let m = example_manifest();
    let o = tpb(&[
        "run",
        m.to_str().unwrap(),
        "--backend",
        "cpu",
        "--out",
        dir.path().to_str().unwrap(),
        "--trace",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let s = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = s.lines().collect();
    // EC-31: ACT (1) is tried first and blocks, then POOL (2) blocks, then SP (4) runs.
    assert_eq!(
        lines[0],
        "act  0: blocked: waits for sem[1] >= 2 (sem[1] = 0)"
    );
    assert_eq!(
        lines[1],
        "pool 0: blocked: waits for sem[0] >= 1 (sem[0] = 0)"
    );
    assert!(lines[2].starts_with("sp   0: .raw b810"), "{}", lines[2]);
    assert!(lines[2].contains("sem[0] += 1"), "{}", lines[2]);
    assert!(s.contains(
        "pool 0: POOL func=avg dim=xy in=fp32 out=fp32 ch=128 scale=0.25 \
         src=sbuf[0]+0x0{2:1 2:4 2:2 2:8} dst=sbuf[0]+0x100{2:1 2:2 1:1 1:1} \
         wait=sem_ge[0] update=sem_inc[1] value=1 ; wait sem[0] >= 1 satisfied (sem[0] = 1)"
    ));
    assert!(s.contains("pool P7: Running avg_pool with period = 4 and num = 4."));
    assert!(s.contains("(fp32 -> bf16)"));
    assert!(s.contains("act  end of program after 2 records"));
    assert!(s.contains("records executed: pe 0, act 2, pool 2, dve 0, sp 1 (total 5)"));
    assert!(s.contains("wall time: "));
    assert!(dir.path().join("y_avg.npy").exists() && dir.path().join("y_max.npy").exists());
}

#[test]
fn cli_default_out_folder() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_tpb-emu"))
        .args([
            "run",
            example_manifest().to_str().unwrap(),
            "--backend",
            "cpu",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(dir.path().join("tpb-emu-out/y_avg.npy").exists());
}
