//! The backend contract: an [`Executor`] runs device ops on device memory.
//! The CPU reference ([`crate::device::cpu::CpuExecutor`]) and the GPU
//! backend implement it and must give the same bits.

use crate::device::memory::DeviceMemory;
use crate::device::ops::{ChipDma, Op};
use std::ops::Range;

pub use crate::device::memory::{HostRange, HostWrite};

/// A copy of device memory a backend started for the host to read later
/// ([`Executor::capture`], [`Executor::collect`]): an id of the backend's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capture(pub u64);

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
    /// Makes `mem` hold every op's result in `ranges`, which the host is
    /// about to read or write (a DMA); bytes outside them may stay stale
    /// until [`Executor::finish`]. The default finishes everything.
    fn host_access(
        &mut self,
        mem: &mut DeviceMemory,
        _ranges: &[HostRange],
    ) -> Result<(), BackendError> {
        self.finish(mem)
    }
    /// `mem` is all zero and nothing is queued (a machine at the start of its
    /// program); a backend that keeps its own copy may zero that instead of
    /// copying `mem`. From here until [`Executor::finish`] the host changes
    /// `mem` only in ranges it reports to [`Executor::host_wrote`].
    fn host_zeroed(&mut self, _mem: &DeviceMemory) -> Result<(), BackendError> {
        Ok(())
    }
    /// The host wrote `ranges` of `mem` after [`Executor::host_access`] on
    /// them; a backend that keeps its own copy of memory takes them in.
    fn host_wrote(
        &mut self,
        _mem: &DeviceMemory,
        _ranges: &[HostRange],
    ) -> Result<(), BackendError> {
        Ok(())
    }
    /// True when the backend keeps its own copy of device memory: the host
    /// then says what it reads and writes ([`Executor::host_access`],
    /// [`Executor::host_wrote`], [`Executor::host_write`],
    /// [`Executor::capture`]). False, the default: `mem` is the only copy,
    /// every op has taken effect in it when `execute` returns, and the host
    /// reads and writes it freely.
    fn keeps_memory(&self) -> bool {
        false
    }
    /// The host is about to write `writes` into `ranges` (a DMA from DRAM,
    /// which reads no device memory) and offers the bytes to the backend
    /// instead of `mem`. A backend takes them only when they cover every
    /// byte of `ranges` exactly once (no gap, no overlap: then their order
    /// does not matter). `Ok(true)`: the backend took them in program
    /// order; `mem` is not written and is stale there (the backend reads
    /// them back when the host next needs them). `Ok(false)`, the default:
    /// nothing happened, and the caller writes `mem` as for any write
    /// ([`Executor::host_access`], then [`Executor::host_wrote`]).
    fn host_write(
        &mut self,
        _mem: &DeviceMemory,
        _ranges: &[HostRange],
        _writes: &[HostWrite<'_>],
    ) -> Result<bool, BackendError> {
        Ok(false)
    }
    /// A DMA between on-chip places for a backend that keeps its own copy
    /// of memory to run behind the queued ops, as its datapath would.
    /// `read` and `written` are the bytes of its walks per partition, as
    /// for [`Executor::host_access`]. `Ok(true)`: the backend took it (the
    /// bytes it writes are the backend's from now on, like an op's).
    /// `Ok(false)`, the default: nothing happened, and the host runs it on
    /// `mem` ([`Executor::host_access`], then [`Executor::host_wrote`]).
    fn chip_dma(
        &mut self,
        _dma: &ChipDma,
        _mem: &DeviceMemory,
        _read: &[HostRange],
        _written: &[HostRange],
    ) -> Result<bool, BackendError> {
        Ok(false)
    }
    /// Takes device DRAM for the backend to hold during a run, so that DMAs
    /// between it and SBUF/PSUM run behind the queued ops
    /// ([`Executor::chip_dma`] with a [`crate::device::Place::HeldDram`]
    /// walk) and nothing of it crosses to the host until
    /// [`Executor::release_dram`]: a window of `len` bytes, zero but for
    /// `init`'s pieces (window offset, bytes), for the run on `mem`. Called
    /// at the start of a run, before any op; `Ok(false)`, the default: the
    /// backend holds no DRAM (too large for it, memory of another
    /// generation, or it keeps no memory of its own) and the host keeps all
    /// of DRAM.
    fn hold_dram(
        &mut self,
        _mem: &DeviceMemory,
        _len: u64,
        _init: &[(u64, &[u8])],
    ) -> Result<bool, BackendError> {
        Ok(false)
    }
    /// True when [`Executor::chip_dma`] takes `dma`, a DMA between SBUF or
    /// PSUM and held DRAM, whatever else has happened: the runtime holds a
    /// variable only if every DMA that touches it passes. The default: no.
    fn takes_held_dma(&self, _dma: &ChipDma) -> bool {
        false
    }
    /// Ends [`Executor::hold_dram`]: hands `sink` the bytes of each of
    /// `ranges` (window offsets) as every op queued so far leaves them,
    /// its index in `ranges` with them; the window is dropped. `mem` is the
    /// host's copy of SBUF and PSUM, for queued ops that still need it.
    /// Called before [`Executor::finish`] or [`Executor::settle`] when the
    /// backend holds DRAM.
    fn release_dram(
        &mut self,
        _mem: &DeviceMemory,
        ranges: &[Range<u64>],
        _sink: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), BackendError> {
        match ranges {
            [] => Ok(()),
            _ => Err(BackendError::new(self.name(), "holds no DRAM")),
        }
    }
    /// Completes deferred work and reports its failures, like
    /// [`Executor::finish`], for a caller that needs nothing of device
    /// memory afterwards (it reads only DRAM): bytes the backend holds
    /// newer than `mem` are dropped, not read back, so `mem` may be stale;
    /// as after `finish`, the backend holds nothing. The default finishes.
    fn settle(&mut self, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        self.finish(mem)
    }
    /// Starts a copy of `ranges` as they will be once every op queued so
    /// far has run, for the host to read later with [`Executor::collect`]
    /// instead of waiting now (a DMA from SBUF/PSUM to DRAM whose DRAM
    /// bytes nothing reads yet). `Ok(None)`, the default: nothing to defer,
    /// the caller makes `mem` current with [`Executor::host_access`] and
    /// reads it now.
    fn capture(
        &mut self,
        _mem: &DeviceMemory,
        _ranges: &[HostRange],
    ) -> Result<Option<Capture>, BackendError> {
        Ok(None)
    }
    /// Hands `sink` the bytes of each of `captures`, in order: its index in
    /// `captures` and the bytes of its ranges, concatenated in order. One
    /// wait for all of them; every capture started before is settled, and
    /// those not named are dropped. A backend may also bring those ranges
    /// of `mem` up to date from the captured bytes.
    fn collect(
        &mut self,
        _mem: &mut DeviceMemory,
        captures: &[Capture],
        _sink: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), BackendError> {
        match captures {
            [] => Ok(()),
            _ => Err(BackendError::new(self.name(), "no captures were started")),
        }
    }
}
