//! The emulated device: memory (SBUF/PSUM), the POOL engine dispatch, the
//! device ops, and the backends that run them: the CPU reference and the
//! wgpu executor.
//!
//! Validate first: the device runs only [`Validated`] records, and the only way
//! to make one is [`Validated::new`], which runs [`crate::isa::validate::check`].
//! A [`Program`] is a stream of them. [`run_program`] dispatches each record in
//! order through the POOL engine's kernel table ([`dispatch`]), which turns it
//! into a typed [`Op`] ([`ops`]) for an [`Executor`] ([`exec`], the backend
//! contract): [`CpuExecutor`] is the reference ([`cpu`], one module per kernel
//! family); the GPU backend (`gpu`, feature `gpu`) implements the same trait and must give
//! the same bits, using the same conversions ([`convert`]).

pub mod convert;
pub mod cpu;
pub mod dispatch;
pub mod exec;
#[cfg(feature = "gpu")]
pub mod gpu;
#[cfg(feature = "gpu")]
mod gpu_error;
pub mod memory;
pub mod ops;

pub use cpu::CpuExecutor;
pub use dispatch::DispatchError;
pub use exec::{
    BackendError, Begin, Capture, ContractFault, DramWindow, End, Executor, Resident, When, Write,
};
pub use memory::{DeviceMemory, HostRange, HostWrite, MemError};
pub use ops::{ChipDma, ChipWalk, CopyOp, IotaOp, Op, Place, PoolOp, TtOp};

use crate::isa::inst::Inst;
use crate::isa::record::Record;
use crate::isa::stream::records;
use crate::isa::validate::{InvalidRecord, StreamInvalid, Target, check};
use std::num::NonZeroUsize;

/// Host-side knobs of the CPU executor. They never change results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuOptions {
    /// Most chunks one record is cut into, each a task on rayon's pool (whose
    /// threads, `RAYON_NUM_THREADS` or the host's cores, bound how many run at
    /// once); `None` = the host's available parallelism.
    pub threads: Option<NonZeroUsize>,
    /// Run every record on the generic path (the definition), never the specialised one.
    pub force_generic: bool,
}

/// Below this many elements per thread a record is not split further.
const MIN_ELEMENTS_PER_THREAD: u64 = 1 << 16;

impl CpuOptions {
    /// The threads a record of `channels` lanes touching `elements` elements
    /// in all uses: one for small records, else up to the limit, at most one
    /// per lane.
    pub fn threads(&self, channels: u32, elements: u64) -> usize {
        let by_work = (elements / MIN_ELEMENTS_PER_THREAD).max(1);
        if by_work == 1 {
            return 1;
        }
        let max = match self.threads {
            Some(n) => n.get(),
            None => cpu::host_threads(),
        };
        max.min(channels as usize).min(by_work as usize).max(1)
    }

    /// The threads this executor uses for `op`.
    pub fn threads_for(&self, op: &Op) -> usize {
        self.threads(op.channels(), op.elements())
    }
}

/// A record that validation accepted for a target, with its byte offset in
/// its stream. The only constructor is [`Validated::new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Validated {
    offset: usize,
    record: Record,
    target: Target,
}

impl Validated {
    /// Validates `record` (SPEC §5) for `target`.
    pub fn new(offset: usize, record: Record, target: Target) -> Result<Validated, InvalidRecord> {
        match check(&record, target) {
            Ok(()) => Ok(Validated {
                offset,
                record,
                target,
            }),
            Err(fail) => Err(InvalidRecord {
                offset,
                opcode: record.0[0],
                fail,
            }),
        }
    }

    /// Byte offset of the record in its stream.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The record.
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// What it was validated for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The record decoded by its opcode (the one decoded type, [`Inst`]).
    pub fn inst(&self) -> Inst {
        Inst::decode(&self.record)
    }
}

/// A validated stream: every record passed [`check`], in stream order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    target: Target,
    records: Vec<Validated>,
}

impl Program {
    /// Validates every record of a raw stream; stops at the first invalid one.
    pub fn from_stream(bytes: &[u8], target: Target) -> Result<Program, StreamInvalid> {
        let mut v = Vec::with_capacity(bytes.len() / crate::limits::RECORD_BYTES);
        for (offset, r) in records(bytes)? {
            v.push(Validated::new(offset, r, target)?);
        }
        Ok(Program { target, records: v })
    }

    /// A program of already validated records (all for `target`).
    pub fn from_validated(target: Target, records: Vec<Validated>) -> Option<Program> {
        records
            .iter()
            .all(|v| v.target == target)
            .then_some(Program { target, records })
    }

    /// The target every record was validated for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The records, in order.
    pub fn records(&self) -> &[Validated] {
        &self.records
    }
}

/// Where the dispatch trace goes (SPEC §7's `P%i:` lines and one line per record).
pub trait Trace {
    /// False when nothing is collected (lines are then not even formatted).
    fn enabled(&self) -> bool {
        true
    }
    /// One line, without its newline.
    fn line(&mut self, line: &str);
}

impl Trace for Vec<String> {
    fn line(&mut self, line: &str) {
        self.push(line.to_owned());
    }
}

/// Discards the trace.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl Trace for NoTrace {
    fn enabled(&self) -> bool {
        false
    }
    fn line(&mut self, _line: &str) {}
}

/// Why a program did not run (or stopped).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A record waits or updates: that needs the scheduler of `tpb-emu run`.
    #[error(
        "record at byte offset {offset} ({opcode}) has wait/update modes that are not NONE; \
         synchronised programs run with `tpb-emu run`"
    )]
    NeedsScheduler {
        /// Byte offset of the record.
        offset: usize,
        /// Its opcode.
        opcode: crate::isa::Opcode,
    },
    /// A valid record this executor does not run (control and DMA records).
    #[error(
        "record at byte offset {offset} ({opcode}) is not a POOL datapath record (a kernel \
         of the POOL kernel table, or MaxPoolSelect); programs with control or DMA records run \
         with `tpb-emu run`"
    )]
    NotPool {
        /// Byte offset of the record.
        offset: usize,
        /// Its opcode.
        opcode: crate::isa::Opcode,
    },
    /// The program was validated for another generation than the memory's.
    #[error("program validated for {program} but device memory is {memory}")]
    ArchMismatch {
        /// The program's generation.
        program: &'static str,
        /// The memory's generation.
        memory: &'static str,
    },
    /// The backend failed completing the run.
    #[error(transparent)]
    Backend(BackendError),
    /// Dispatch or the backend failed on a record.
    #[error("record at byte offset {offset}: {source}")]
    Dispatch {
        /// Byte offset of the record.
        offset: usize,
        /// What failed.
        source: DispatchError,
    },
}

/// Checks, before anything runs, that `exec`-style execution can run every
/// record: a POOL datapath record, with no wait or update.
pub fn check_runnable(program: &Program) -> Result<(), ExecError> {
    for v in program.records() {
        let r = v.record();
        if !r.opcode().class().is_pool_kernel() {
            return Err(ExecError::NotPool {
                offset: v.offset(),
                opcode: r.opcode(),
            });
        }
        if !r.events().is_none() {
            return Err(ExecError::NeedsScheduler {
                offset: v.offset(),
                opcode: r.opcode(),
            });
        }
    }
    Ok(())
}

/// Runs every record of `program` in order on `mem` (each complete before the
/// next starts, SPEC §6), after [`check_runnable`].
pub fn run_program(
    exec: &mut dyn Executor,
    program: &Program,
    mem: &mut DeviceMemory,
    trace: &mut dyn Trace,
) -> Result<(), ExecError> {
    if program.target().arch != mem.arch() {
        return Err(ExecError::ArchMismatch {
            program: program.target().arch.name(),
            memory: mem.arch().name(),
        });
    }
    check_runnable(program)?;
    for v in program.records() {
        dispatch::dispatch(v, mem, trace, exec).map_err(|source| ExecError::Dispatch {
            offset: v.offset(),
            source,
        })?;
    }
    exec.finish(mem).map_err(ExecError::Backend)
}
