//! The backend contract: an [`Executor`] runs device ops on device memory.
//! The CPU reference ([`crate::device::cpu::CpuExecutor`]) and the GPU
//! backend implement it and must give the same bits.

use crate::device::memory::DeviceMemory;
use crate::device::ops::Op;

/// A backend failure (the CPU executor has none; GPU backends report theirs here).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{backend} backend: {message}")]
pub struct BackendError {
    /// The backend's name.
    pub backend: &'static str,
    /// What went wrong.
    pub message: String,
}

impl BackendError {
    /// A failure of `backend`.
    pub fn new(backend: &'static str, message: impl Into<String>) -> BackendError {
        BackendError {
            backend,
            message: message.into(),
        }
    }
}

/// A backend: runs the datapath of validated records.
pub trait Executor {
    /// Short name (`cpu`, `gpu`).
    fn name(&self) -> &'static str;
    /// Runs `op` on its lanes of `mem` — or queues it: a backend may defer
    /// work until [`Executor::finish`], provided ops still take effect in
    /// order.
    fn execute(&mut self, op: &Op, mem: &mut DeviceMemory) -> Result<(), BackendError>;
    /// Completes deferred work so that `mem` holds every op's result.
    /// Called once at the end of a run, and before the host reads or writes
    /// device memory.
    fn finish(&mut self, _mem: &mut DeviceMemory) -> Result<(), BackendError> {
        Ok(())
    }
}
