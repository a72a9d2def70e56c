//! The GPU backend behind [`crate::device::Executor`].
//!
//! Ops are encoded as they are dispatched and run at [`Executor::finish`]:
//! memory goes up once, every op runs in one submission (in order), memory
//! comes back once. Nothing touches the host memory before then, so a run
//! that fails part-way leaves it as it was.

use super::batch::{self, Dispatch, EncodeCx};
use super::context::{DeviceError, Gpu};
use super::kernels::Kernels;
use super::memory::GpuMemory;
use super::params::{add_by_bits, rows_max_chunks};
use crate::device::memory::DeviceMemory;
use crate::device::ops::Op;
use crate::device::{BackendError, Executor};
use crate::limits::Arch;
use std::time::Duration;

/// Runs device ops on a GPU.
pub struct GpuExecutor<'g> {
    memory: GpuMemory<'g>,
    kernels: Kernels<'g>,
    cx: EncodeCx,
    queued: Vec<Dispatch>,
    gpu_time: Option<Duration>,
}

/// The one place that maps a device op to its kernel family's encoder.
pub fn encode(op: &Op, cx: &EncodeCx) -> Dispatch {
    match op {
        Op::Pool(p) => super::pool::dispatch(p, cx),
        Op::Copy(c) => super::elementwise::copy(c, cx),
        Op::Iota(i) => super::elementwise::iota(i, cx),
        Op::TensorTensor(t) => super::elementwise::tensor_tensor(t, cx),
        Op::CrossLane(c) => super::lane_kernels::cross_lane(c, cx),
        Op::Nonzero(n) => super::lane_kernels::nonzero(n, cx),
        Op::SeqBounds(s) => super::lane_kernels::seq_bounds(s, cx),
    }
}

impl<'g> GpuExecutor<'g> {
    /// Allocates memory for `arch` on `gpu`; pipelines compile on first use.
    pub fn new(gpu: &'g Gpu, arch: Arch) -> Result<GpuExecutor<'g>, DeviceError> {
        Ok(GpuExecutor {
            memory: GpuMemory::new(gpu, arch)?,
            kernels: Kernels::new(gpu)?,
            cx: EncodeCx::of(gpu, arch),
            queued: Vec::new(),
            gpu_time: None,
        })
    }

    /// Overrides how many runs of 4 outputs Pool's `pool_rows` folds per
    /// invocation (1, 2 or 4; [`rows_max_chunks`] of the adapter by default):
    /// for tests that run the other adapters' choice, and for tuning.
    pub fn set_rows_max_chunks(&mut self, max: u32) {
        self.cx.rows_max_chunks = max;
    }

    /// Overrides how Pool AVG adds ([`add_by_bits`] of the adapter by
    /// default), so tests run both sums on one adapter.
    pub fn set_add_by_bits(&mut self, on: bool) {
        self.cx.add_by_bits = on;
    }

    /// GPU time of the last [`Executor::finish`], when timestamps are available.
    pub fn gpu_time(&self) -> Option<Duration> {
        self.gpu_time
    }
}

impl EncodeCx {
    /// The encoding context of `gpu`'s adapter for memory of `arch`.
    pub fn of(gpu: &Gpu, arch: Arch) -> EncodeCx {
        EncodeCx {
            arch,
            max_x: gpu.device.limits().max_compute_workgroups_per_dimension,
            rows_max_chunks: rows_max_chunks(gpu.adapter.device_type),
            add_by_bits: add_by_bits(gpu.adapter.device_type),
        }
    }
}

fn backend(e: DeviceError) -> BackendError {
    BackendError::new("gpu", e.to_string())
}

impl Executor for GpuExecutor<'_> {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn execute(&mut self, op: &Op, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        if mem.arch() != self.memory.arch() {
            return Err(BackendError::new("gpu", "memory of another generation"));
        }
        self.queued.push(encode(op, &self.cx));
        Ok(())
    }

    fn finish(&mut self, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let queued = std::mem::take(&mut self.queued);
        self.memory.upload(mem).map_err(backend)?;
        self.gpu_time = batch::run(&self.kernels, &self.memory, &queued).map_err(backend)?;
        self.memory.download(mem).map_err(backend)
    }
}
