//! The CPU reference backend: SPEC §6 and SPEC-KERNELS in executable form,
//! one module per kernel family whose fold uses the shared engines here
//! (the others' folds sit next to their op, `ops::CpuKernel`). Every GPU
//! backend must reproduce its bits.

pub(crate) mod copy;
pub(crate) mod cross_lane;
pub(crate) mod elementwise;
pub(crate) mod iota;
pub(crate) mod lanes;
pub(crate) mod nonzero;
pub mod pool;
pub(crate) mod tensor_tensor;
pub(crate) mod walks;

use crate::device::exec::{BackendError, Executor};
use crate::device::memory::DeviceMemory;
use crate::device::ops::Op;
use std::num::NonZeroUsize;

pub use crate::device::CpuOptions;

// Typed views of device memory read its bytes in host order; device memory is little-endian.
#[cfg(target_endian = "big")]
compile_error!("tpb-emu's CPU executor assumes a little-endian host");

/// The CPU reference backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuExecutor {
    /// Threads and path selection (never change results).
    pub options: CpuOptions,
}

impl Executor for CpuExecutor {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn execute(&mut self, op: &Op, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        // Each op's `CpuKernel` impl (next to the op, or in this folder).
        op.run_cpu(mem, &self.options);
        Ok(())
    }
    fn finish(&mut self, _mem: &mut DeviceMemory) -> Result<(), BackendError> {
        Ok(())
    }
}

/// Runs `f(first, chunk)` over `items` cut into at most `threads` chunks of
/// consecutive items (`first`: the index of the chunk's first item), on
/// rayon's pool of threads: a thread spawned per record costs 35–80 µs on
/// a 2-core VM, as much as a small record's whole work.
pub(crate) fn for_chunks<T: Send>(
    items: &mut [T],
    threads: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    if threads <= 1 || items.len() <= 1 {
        return f(0, items);
    }
    use rayon::prelude::*;
    let per = items.len().div_ceil(threads);
    items
        .par_chunks_mut(per)
        .enumerate()
        .for_each(|(i, chunk)| f(i * per, chunk));
}

/// The host's available parallelism, asked once (on Linux the question reads
/// cgroup files: tens of microseconds).
pub(crate) fn host_threads() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
}
