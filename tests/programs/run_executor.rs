//! The executor contract's minimum: a backend that implements only the
//! three required methods of `Executor` (`name`, `execute`, `finish`) and
//! opts into nothing (`Executor::resident` is `None`) runs whole programs
//! — DMAs both ways, semaphores, Pool records — and ends with the CPU
//! reference's DRAM, SBUF and PSUM.

use crate::run_coherence::{random_program, run, same_memory};
use tpb_emu::device::{BackendError, CpuExecutor, DeviceMemory, Executor, Op};
use tpb_emu::runtime::samples;

/// A test double: runs each op at once with a kernel of its own choosing
/// (here the reference's, one op at a time on a fresh executor) and counts
/// what the runtime asks of it.
#[derive(Default)]
struct Minimal {
    executed: u64,
    finished: u64,
}

impl Executor for Minimal {
    fn name(&self) -> &'static str {
        "minimal"
    }
    fn execute(&mut self, op: &Op, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        assert_eq!(self.finished, 0, "an op after the end of the run");
        self.executed += 1;
        CpuExecutor::default().execute(op, mem)
    }
    fn finish(&mut self, _mem: &mut DeviceMemory) -> Result<(), BackendError> {
        self.finished += 1;
        Ok(())
    }
}

#[test]
fn a_double_with_the_three_required_methods_runs_the_example_program() {
    let p = samples::program();
    let cpu = run(&mut CpuExecutor::default(), &p);
    let mut double = Minimal::default();
    assert!(double.resident().is_none());
    let m = run(&mut double, &p);
    // Two Pool records (AVG, MAX); the run ends once.
    assert_eq!((double.executed, double.finished), (2, 1));
    assert_eq!(m.variable("y_avg"), cpu.variable("y_avg"));
    assert_eq!(m.variable("y_max"), cpu.variable("y_max"));
    assert!(m.dram() == cpu.dram(), "DRAM differs");
    if let Some(d) = same_memory(m.memory(), cpu.memory()) {
        panic!("{d}");
    }
    assert!(
        m.variable("y_max").unwrap().iter().any(|&b| b != 0),
        "the program wrote its output"
    );
}

#[test]
fn a_double_with_the_three_required_methods_runs_random_programs() {
    let mut ops = 0;
    for seed in 0..20u64 {
        let (p, _) = random_program(seed, 24);
        let cpu = run(&mut CpuExecutor::default(), &p);
        let mut double = Minimal::default();
        let m = run(&mut double, &p);
        assert_eq!(double.finished, 1, "seed {seed}");
        ops += double.executed;
        assert!(m.dram() == cpu.dram(), "seed {seed}: DRAM differs");
        if let Some(d) = same_memory(m.memory(), cpu.memory()) {
            panic!("seed {seed}: {d}");
        }
    }
    assert!(ops > 50, "only {ops} ops ran");
}
