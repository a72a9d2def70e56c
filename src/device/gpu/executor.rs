//! The GPU backend behind [`crate::device::Executor`].
//!
//! Ops are encoded as they are dispatched and run in batches (in order, one
//! submission each) when the host must see memory. Memory goes to the GPU
//! whole before the first batch after [`Executor::finish`] — or not at all
//! when the host says it is zero ([`Executor::host_zeroed`]: the GPU zeroes
//! its own). From then on the GPU holds it, and `Newer` (`newer.rs`) tracks the bytes
//! queued ops may have written: a DMA ([`Executor::host_access`]) reads back
//! only the part of its footprint in them, the bytes it writes go up alone
//! ([`Executor::host_wrote`]), and `finish` reads back only them.

use super::batch::{self, Dispatch, EncodeCx};
use super::context::{DeviceError, Gpu};
use super::kernels::Kernels;
use super::memory::GpuMemory;
use super::newer::Newer;
use super::params::{add_by_bits, rows_max_chunks};
use crate::device::memory::DeviceMemory;
use crate::device::ops::Op;
use crate::device::{BackendError, Executor, HostRange};
use crate::limits::Arch;
use std::time::Duration;

/// Runs device ops on a GPU.
pub struct GpuExecutor<'g> {
    memory: GpuMemory<'g>,
    kernels: Kernels<'g>,
    cx: EncodeCx,
    queued: Vec<Dispatch>,
    gpu_time: Option<Duration>,
    /// The GPU holds memory (the host's copy is current outside `newer`);
    /// else the host's copy is the truth, uploaded whole before the next batch.
    gpu_holds: bool,
    /// Bytes queued or run ops may have written since the GPU took memory.
    newer: Newer,
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
            gpu_holds: false,
            newer: Newer::new(arch),
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

    /// Runs the queued ops on the GPU's memory (uploading the host's first
    /// when the host holds the truth).
    fn run_queued(&mut self, mem: &DeviceMemory) -> Result<(), DeviceError> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let queued = std::mem::take(&mut self.queued);
        if !self.gpu_holds {
            // `newer` holds just the queued ops' bytes (cleared by `finish`).
            self.memory.upload(mem)?;
            self.gpu_holds = true;
        }
        self.gpu_time = batch::run(&self.kernels, &self.memory, &queued)?;
        Ok(())
    }

    /// GPU time of the last batch, when timestamps are available.
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
        self.newer.add_op(op);
        Ok(())
    }

    fn finish(&mut self, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        self.run_queued(mem).map_err(backend)?;
        if self.gpu_holds {
            let ranges = self.newer.ranges();
            self.memory.download_ranges(mem, &ranges).map_err(backend)?;
            self.gpu_holds = false;
        }
        self.newer.clear();
        Ok(())
    }

    fn host_zeroed(&mut self, mem: &DeviceMemory) -> Result<(), BackendError> {
        if !self.queued.is_empty() || mem.arch() != self.memory.arch() {
            return Ok(()); // not the start of a run: the next batch uploads `mem`
        }
        self.memory.zero().map_err(backend)?;
        self.newer.clear();
        self.gpu_holds = true;
        Ok(())
    }

    fn host_access(
        &mut self,
        mem: &mut DeviceMemory,
        ranges: &[HostRange],
    ) -> Result<(), BackendError> {
        self.run_queued(mem).map_err(backend)?;
        if self.gpu_holds {
            // Written ranges come back too: a footprint's gaps go up again
            // with the bytes the host writes. Outside `newer` the host's
            // copy is current already.
            let stale: Vec<HostRange> = ranges.iter().filter_map(|r| self.newer.clip(r)).collect();
            self.memory.download_ranges(mem, &stale).map_err(backend)?;
            for r in &stale {
                self.newer.read_back(r);
            }
        }
        Ok(())
    }

    fn host_wrote(&mut self, mem: &DeviceMemory, ranges: &[HostRange]) -> Result<(), BackendError> {
        if self.gpu_holds {
            self.memory.upload_ranges(mem, ranges).map_err(backend)?;
        }
        Ok(())
    }
}
