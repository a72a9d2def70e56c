//! The by-value paths (`stage_owned`, `Machine::from_owned`,
//! `compile_owned`, `parse_npy_owned`) give exactly what the copying ones give.

use tpb_emu::frontend::{Pool2d, PoolMode, Tensor, compile, compile_owned};
use tpb_emu::isa::enums::Dtype;
use tpb_emu::runtime::{Machine, Program, Role, Variable, stage, stage_owned};

fn program() -> Program {
    let mut p = Program::default();
    p.add(Variable::input("a", 1, Dtype::UINT8, &[3], vec![1, 2, 3]));
    p.add(Variable::zeroed("s", 2, Dtype::FP32, &[5], Role::Scratch));
    p.add(Variable::input(
        "b",
        3,
        Dtype::UINT16,
        &[2],
        vec![9, 8, 7, 6],
    ));
    p.add(Variable::output("y", 4, Dtype::FP32, &[7]));
    p
}

#[test]
fn stage_owned_builds_the_same_dram() {
    let p = program();
    let copied = Machine::new(stage(&p).unwrap());
    let owned = Machine::from_owned(stage_owned(p.clone()).unwrap());
    assert_eq!(copied.dram(), owned.dram());
    assert_eq!(owned.variable("b"), Some(&[9u8, 8, 7, 6][..]));
    // A program whose first variable is not an input.
    let mut q = Program::default();
    q.add(Variable::output("y", 4, Dtype::FP32, &[7]));
    q.add(Variable::input("a", 1, Dtype::UINT8, &[3], vec![1, 2, 3]));
    let copied = Machine::new(stage(&q).unwrap());
    let owned = Machine::from_owned(stage_owned(q).unwrap());
    assert_eq!(copied.dram(), owned.dram());
}

#[test]
fn stage_owned_checks_initial_lengths() {
    let mut p = program();
    p.variables[2].init = Some(vec![1, 2, 3].into());
    assert!(stage_owned(p).is_err());
}

#[test]
fn a_staged_program_without_its_image_runs_from_zero_dram() {
    let m = Machine::from_owned(stage_owned(program()).unwrap());
    let again = Machine::new(m.staged().clone());
    assert_eq!(again.dram().len(), m.dram().len());
}

#[test]
fn compile_owned_and_run_owned_agree_with_the_copying_paths() {
    let values: Vec<f32> = (0..2 * 3 * 9 * 10)
        .map(|i| (i * 37 % 101) as f32 - 50.0)
        .collect();
    let x = Tensor::from_f32(&[2, 3, 9, 10], &values);
    for mode in [PoolMode::Max, PoolMode::Avg] {
        let p = Pool2d::new(mode, 2, 3).padding(1, 1);
        let copied = compile(&p, &x).unwrap().run_cpu_for_test();
        let owned = compile_owned(&p, x.clone())
            .unwrap()
            .run_owned(&mut tpb_emu::device::CpuExecutor::default(), u64::MAX)
            .unwrap();
        assert_eq!(copied, owned);
    }
}

trait RunCpu {
    fn run_cpu_for_test(&self) -> tpb_emu::frontend::PoolOutput;
}

impl RunCpu for tpb_emu::frontend::Compiled {
    fn run_cpu_for_test(&self) -> tpb_emu::frontend::PoolOutput {
        self.run(&mut tpb_emu::device::CpuExecutor::default())
            .unwrap()
    }
}

#[test]
fn parse_npy_owned_matches_parse_npy() {
    let dir = std::env::temp_dir();
    let path = dir.join(format!("perf_owned_{}.npy", std::process::id()));
    let data: Vec<u8> = (0..24u8).collect();
    for (dtype, shape) in [(Dtype::FP32, vec![2u64, 3]), (Dtype::UINT16, vec![3, 4])] {
        let bytes = tpb_emu::npy::npy_bytes(dtype, &shape, &data).unwrap();
        let a = tpb_emu::npy::parse_npy(&path, &bytes).unwrap();
        let b = tpb_emu::npy::parse_npy_owned(&path, bytes).unwrap();
        assert_eq!((a.shape, a.data), (b.shape, b.data));
    }
}

#[test]
fn read_npy_reads_the_data_straight_and_refuses_what_parse_refuses() {
    let path = std::env::temp_dir().join(format!("perf_owned_read_{}.npy", std::process::id()));
    let data: Vec<u8> = (0..48u8).collect();
    let bytes = tpb_emu::npy::npy_bytes(Dtype::FP32, &[3, 4], &data).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    let read = tpb_emu::npy::read_npy(&path).unwrap();
    assert_eq!((read.shape, read.data), (vec![3, 4], data.clone().into()));
    // One byte short, and one too many: the same errors as parsing the bytes.
    for cut in [
        &bytes[..bytes.len() - 1],
        &[&bytes[..], &[0u8][..]].concat()[..],
    ] {
        std::fs::write(&path, cut).unwrap();
        let a = tpb_emu::npy::read_npy(&path).unwrap_err().to_string();
        let b = tpb_emu::npy::parse_npy(&path, cut).unwrap_err().to_string();
        assert_eq!(a, b);
    }
    // Shorter than a header.
    std::fs::write(&path, &bytes[..7]).unwrap();
    assert!(tpb_emu::npy::read_npy(&path).is_err());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn large_dmas_split_over_threads_give_the_reference_answer() {
    // 1x128x64x256 fp32: 8 MiB in, each band's DMAs above the threshold
    // at which rows are copied on several threads.
    let n = 128 * 64 * 256;
    let values: Vec<f32> = (0..n)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 9) as f32 - 4e6)
        .collect();
    let x = Tensor::from_f32(&[1, 128, 64, 256], &values);
    for mode in [PoolMode::Max, PoolMode::Avg] {
        let p = Pool2d::new(mode, 2, 2);
        let want = tpb_emu::frontend::reference(&p, &x).unwrap();
        let got = compile_owned(&p, x.clone())
            .unwrap()
            .run_owned(&mut tpb_emu::device::CpuExecutor::default(), u64::MAX)
            .unwrap();
        assert_eq!(got.output, want.output, "{mode:?}");
    }
}

#[test]
fn a_restarted_machine_runs_as_a_fresh_one() {
    let values: Vec<f32> = (0..128 * 4 * 6).map(|i| (i % 23) as f32).collect();
    let x = Tensor::from_f32(&[1, 128, 4, 6], &values);
    let c = compile(&Pool2d::new(PoolMode::Avg, 2, 2), &x).unwrap();
    let staged = std::sync::Arc::new(stage(&c.program).unwrap());
    let mut exec = tpb_emu::device::CpuExecutor::default();
    let mut fresh = Machine::new(std::sync::Arc::clone(&staged));
    fresh.run(&mut exec, &mut tpb_emu::device::NoTrace).unwrap();
    let mut m = Machine::new(staged);
    for _ in 0..3 {
        m.restart();
        assert_eq!(m.total_executed(), 0);
        m.run(&mut exec, &mut tpb_emu::device::NoTrace).unwrap();
        assert_eq!(m.dram(), fresh.dram());
        assert_eq!(m.semaphore(2), fresh.semaphore(2));
        assert_eq!(m.work_done(), fresh.work_done());
    }
}
