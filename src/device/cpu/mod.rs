//! The CPU reference backend: SPEC §6 and SPEC-KERNELS in executable form,
//! one module per kernel family. Every GPU backend must reproduce its bits.

pub(crate) mod copy;
pub(crate) mod cross_lane;
pub(crate) mod elementwise;
pub(crate) mod iota;
pub(crate) mod lanes;
pub(crate) mod nonzero;
pub mod pool;
pub(crate) mod seq_bounds;
pub(crate) mod tensor_tensor;
pub(crate) mod walks;

use crate::device::exec::{BackendError, Executor};
use crate::device::memory::DeviceMemory;
use crate::device::ops::Op;
use std::num::NonZeroUsize;

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
        match op {
            Op::Pool(p) => pool::execute(p, mem, &self.options),
            Op::Copy(c) => copy::execute(c, mem, &self.options),
            Op::Iota(i) => iota::execute(i, mem, &self.options),
            Op::TensorTensor(t) => tensor_tensor::execute(t, mem, &self.options),
            Op::CrossLane(c) => cross_lane::execute(c, mem, &self.options),
            Op::Nonzero(n) => nonzero::execute(n, mem, &self.options),
            Op::SeqBounds(s) => seq_bounds::execute(s, mem),
        }
        Ok(())
    }
    fn finish(&mut self, _mem: &mut DeviceMemory) -> Result<(), BackendError> {
        Ok(())
    }
}

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
            None => host_threads(),
        };
        max.min(channels as usize).min(by_work as usize).max(1)
    }

    /// The threads this executor uses for `op`.
    pub fn threads_for(&self, op: &Op) -> usize {
        self.threads(op.channels(), op.elements())
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
