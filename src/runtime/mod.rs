//! The host runtime: whole programs over the five engines.
//!
//! A [`Program`] is what the device would load: one raw stream of 64-byte
//! records per engine (PE, ACT, POOL, DVE, SP; any may be empty) and the
//! device-DRAM variables the streams address (EC-18). It comes from a TOML
//! manifest ([`manifest::load`], schema in `docs/programs.md`) or is built in
//! code ([`build`] has one builder per control/DMA record).
//!
//! ```text
//! manifest ──load──▶ Program ──stage──▶ Staged ──Machine::run──▶ DRAM variables
//!                               (validate every record,   (EC-31 scheduler: waits, updates,
//!                                DMA footprints, VAR_IDs)  control, DMA, Pool via the backend)
//! ```
//!
//! [`stage`] does everything that can fail before a record runs: it validates
//! every record of every stream for its engine (SPEC §5 order), resolves each
//! DMA's ADDR8s (EC-22) and checks its footprint (EC-23), and lays the
//! variables out in DRAM. A [`Machine`] then runs the staged program with the
//! deterministic scheduler of EC-31: Pool records go through the POOL
//! engine's dispatch to the chosen [`crate::device::Executor`], everything
//! else runs on the host.
//!
//! Staging first lowers every engine stream ([`lower`]: pseudo-instructions,
//! functions, branches and blocks; SPEC §8, EC-29, EC-30), then validates the
//! lowered records. A stream without pseudo-opcodes lowers to itself.

pub mod build;
mod dma;
mod held;
mod image;
pub mod lower;
pub mod manifest;
mod program;
pub mod samples;
mod sched;
mod stage;
pub(crate) mod staged;
pub mod timeline;
pub mod why;

pub use dma::FootprintFault;
pub use manifest::{ExitsFault, ManifestError, ManifestFault};
pub use program::{Program, Role, Variable, VariableError, VariableFault};
pub use sched::{
    Blocked, Deadlock, Executed, Machine, PROGRESS_EVERY, RunError, Watch, datapath_work,
};
pub use stage::{StageError, stage, stage_owned};
pub use staged::{SemCmp, Staged, Update, Wait};

use crate::device::CpuExecutor;

/// EC-18: every variable starts at a DRAM byte address aligned to this.
pub const DRAM_ALIGN: u64 = 64;

/// The most DRAM bytes a program's variables may occupy, padding included
/// (4 GiB: what one VAR_ID offset, a u32, can reach).
pub const MAX_DRAM_BYTES: u64 = 1 << 32;

/// EC-18: variable ids are the 24 bits 32..56 of a VAR_ID ADDR8 (EC-22).
pub const MAX_VARIABLE_ID: u32 = (1 << 24) - 1;

/// The default record budget of a run: a program that executes more records
/// than this stops with [`RunError::RecordBudget`] instead of looping forever.
pub const DEFAULT_MAX_RECORDS: u64 = 100_000_000;

/// Why a program did not run to its end: staging or execution.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Rejected before anything ran.
    #[error(transparent)]
    Stage(#[from] StageError),
    /// Stopped while running.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// Stages `program` and runs it on the CPU reference, without a trace.
/// Returns the machine in its final state (DRAM, semaphores, events, registers).
pub fn run_cpu(program: &Program) -> Result<Machine, Error> {
    let mut m = Machine::new(stage(program)?);
    m.run(&mut CpuExecutor::default(), &mut crate::device::NoTrace)?;
    Ok(m)
}
