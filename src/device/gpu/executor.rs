//! The GPU backend behind [`crate::device::Executor`].
//!
//! Records are queued as they are dispatched and run at
//! [`Executor::finish`]: memory goes up once, every record runs in one
//! submission (in order), memory comes back once. Nothing touches the host
//! memory before then, so a run that fails part-way leaves it as it was.

use super::context::{DeviceError, Gpu};
use super::params::PoolParams;
use super::pool::GpuPool;
use crate::device::memory::DeviceMemory;
use crate::device::pool::PoolOp;
use crate::device::{BackendError, Executor};
use crate::limits::Arch;
use std::time::Duration;

/// Runs Pool/MaxPoolSelect records on a GPU.
pub struct GpuExecutor<'g> {
    pool: GpuPool<'g>,
    queued: Vec<PoolParams>,
    gpu_time: Option<Duration>,
}

impl<'g> GpuExecutor<'g> {
    /// Compiles the kernel and allocates memory for `arch` on `gpu`.
    pub fn new(gpu: &'g Gpu, arch: Arch) -> Result<GpuExecutor<'g>, DeviceError> {
        Ok(GpuExecutor {
            pool: GpuPool::new(gpu, arch)?,
            queued: Vec::new(),
            gpu_time: None,
        })
    }

    /// See [`GpuPool::set_rows_max_chunks`].
    pub fn set_rows_max_chunks(&mut self, max: u32) {
        self.pool.set_rows_max_chunks(max);
    }

    /// GPU time of the last [`Executor::finish`], when timestamps are available.
    pub fn gpu_time(&self) -> Option<Duration> {
        self.gpu_time
    }
}

fn backend(e: DeviceError) -> BackendError {
    BackendError::new("gpu", e.to_string())
}

impl Executor for GpuExecutor<'_> {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn execute_pool(&mut self, op: &PoolOp, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        if mem.arch() != self.pool.arch() {
            return Err(BackendError::new("gpu", "memory of another generation"));
        }
        self.queued.push(self.pool.params(op));
        Ok(())
    }

    fn finish(&mut self, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let queued = std::mem::take(&mut self.queued);
        self.pool.upload(mem).map_err(backend)?;
        self.gpu_time = self.pool.run(&queued).map_err(backend)?;
        self.pool.download(mem).map_err(backend)
    }
}
