//! The backend contract: an [`Executor`] runs device ops on device memory.
//! The CPU reference ([`crate::device::cpu::CpuExecutor`]) and the GPU
//! backend implement it and must give the same bits.
//!
//! Every backend implements three methods: [`Executor::name`],
//! [`Executor::execute`] and [`Executor::finish`]; the host's copy of
//! device memory is then the only one, and the host reads and writes it
//! freely between ops. A backend that keeps its own copy (the GPU) opts
//! into [`Resident`] through [`Executor::resident`], and the runtime then
//! says what it does to memory: [`Resident::begin`] a run with what the
//! host zeroed and the DRAM it hands over, [`Resident::read`] ranges now or
//! later ([`Resident::collect`]), [`Resident::write`] ranges, offer a DMA
//! ([`Resident::dma`]), and [`Resident::end`] the run reading back or
//! dropping what the backend holds.

use crate::device::memory::DeviceMemory;
use crate::device::ops::{ChipDma, Op};
use std::ops::Range;

pub use crate::device::memory::{HostRange, HostWrite};

/// A copy of device memory a backend started for the host to read later
/// ([`Resident::read`] with [`When::Later`], [`Resident::collect`]): an id
/// of the backend's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capture(pub u64);

/// A backend failure (the CPU executor has none; GPU backends report theirs here).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The GPU failed: its error, typed.
    #[cfg(feature = "gpu")]
    #[error("gpu backend: {0}")]
    Gpu(#[from] super::gpu_error::DeviceError),
    /// A backend was asked for something the backend contract rules out.
    #[error("{backend} backend: {fault}")]
    Contract {
        /// The backend's name.
        backend: &'static str,
        /// What the contract rules out.
        fault: ContractFault,
    },
}

/// What a backend was asked that the backend contract rules out
/// ([`BackendError::Contract`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContractFault {
    /// A validated record the host dispatch found no device op for.
    #[error("a validated record with no device op")]
    NoDeviceOp,
    /// A validated pool-datapath record that is not Pool/MaxPoolSelect.
    #[error("a validated record that is not Pool/MaxPoolSelect")]
    NotPool,
    /// Memory of another generation than the backend's.
    #[error("memory of another generation")]
    OtherGeneration,
    /// A capture the backend does not hold.
    #[error("capture {0} is not pending")]
    CaptureNotPending(u64),
    /// A capture asked for a second time.
    #[error("capture {0} is collected twice")]
    CaptureTwice(u64),
    /// Held DRAM asked back from a backend holding none.
    #[error("holds no DRAM")]
    HoldsNoDram,
    /// The backend refused a DMA of DRAM it said it would run (the DMA,
    /// as the runtime resolved it).
    #[error("refused a DMA of DRAM it holds ({0})")]
    RefusedHeldDma(Box<ResolvedDma>),
}

/// A DMA_MEMCPY as the runtime resolved it, for messages
/// ([`ContractFault::RefusedHeldDma`]): written
/// `DMA <src> -> <dst> (<in> -> <out>), sem[i] += n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedDma {
    /// The source walk.
    pub src: ResolvedWalk,
    /// The destination walk.
    pub dst: ResolvedWalk,
    /// EC-23's conversion; `None` copies bytes verbatim.
    pub convert: Option<(
        crate::device::convert::InType,
        crate::device::convert::OutType,
    )>,
    /// The semaphore incremented on completion.
    pub sem: u8,
    /// The increment.
    pub inc: u8,
}

impl std::fmt::Display for ResolvedDma {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DMA {} -> {}", self.src, self.dst)?;
        if let Some((i, o)) = self.convert {
            write!(f, " ({} -> {})", i.dtype(), o.dtype())?;
        }
        write!(f, ", sem[{}] += {}", self.sem, self.inc)
    }
}

/// One side of a [`ResolvedDma`]: written `dram[START]{n0:s0 n1:s1}xELEM`
/// in DRAM or `0xADDR{n0:s0 n1:s1}xELEM` on chip, steps in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedWalk {
    /// True in device DRAM, false on chip (SBUF or PSUM).
    pub dram: bool,
    /// Byte address of element (0, 0): a DRAM byte, or an on-chip address.
    pub start: i64,
    /// Steps in bytes, dim 0 fastest.
    pub step: [i64; 2],
    /// Elements per dim.
    pub num: [u64; 2],
    /// Bytes of one element.
    pub elem: u64,
}

impl std::fmt::Display for ResolvedWalk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.dram {
            write!(f, "dram[{}]", self.start)?;
        } else {
            write!(f, "0x{:X}", self.start)?;
        }
        let elem = self.elem as i64;
        write!(
            f,
            "{{{}:{} {}:{}}}x{}",
            self.num[0],
            self.step[0] / elem,
            self.num[1],
            self.step[1] / elem,
            self.elem
        )
    }
}

impl BackendError {
    /// `backend` was asked for what `fault` says.
    pub fn contract(backend: &'static str, fault: ContractFault) -> BackendError {
        BackendError::Contract { backend, fault }
    }

    /// The backend's name.
    pub fn backend(&self) -> &'static str {
        match self {
            #[cfg(feature = "gpu")]
            BackendError::Gpu(_) => "gpu",
            BackendError::Contract { backend, .. } => backend,
        }
    }
}

/// A backend: runs the datapath of validated records.
pub trait Executor {
    /// Short name (`cpu`, `gpu`).
    fn name(&self) -> &'static str;
    /// Runs `op` on its lanes of `mem`. Without [`Executor::resident`] the
    /// op has taken effect in `mem` when this returns; a resident backend
    /// may queue it, provided ops still take effect in order.
    fn execute(&mut self, op: &Op, mem: &mut DeviceMemory) -> Result<(), BackendError>;
    /// Completes deferred work so that `mem` holds every op's result and
    /// reports its failures; the backend holds nothing afterwards. Called
    /// once at the end of a run by callers that do not use
    /// [`Executor::resident`].
    fn finish(&mut self, mem: &mut DeviceMemory) -> Result<(), BackendError>;
    /// The backend's own copy of device memory, when it keeps one (the
    /// GPU). `None`, the default: `mem` is the only copy.
    fn resident(&mut self) -> Option<&mut dyn Resident> {
        None
    }
}

/// What the host knows of memory when a run begins ([`Resident::begin`]).
#[derive(Clone, Copy, Debug)]
pub struct Begin<'a> {
    /// SBUF and PSUM are all zero and nothing ran since (a machine at the
    /// start of its program): the backend may zero its own copy instead of
    /// copying `mem`.
    pub zeroed: bool,
    /// Device DRAM offered for the backend to hold during the run: a window
    /// of `len` bytes, zero but for `init`'s pieces (window offset, bytes).
    /// DMAs between it and SBUF/PSUM then run as [`Resident::dma`]s with a
    /// [`crate::device::Place::HeldDram`] walk, and nothing of it crosses
    /// to the host until [`Resident::end`].
    pub dram: Option<DramWindow<'a>>,
}

/// A window of device DRAM offered to a backend ([`Begin::dram`]).
#[derive(Clone, Copy, Debug)]
pub struct DramWindow<'a> {
    /// Its length in bytes.
    pub len: u64,
    /// Its bytes that are not zero: (window offset, bytes).
    pub init: &'a [(u64, &'a [u8])],
}

/// When the host reads ranges of memory ([`Resident::read`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Now: `mem` holds every op's result in the ranges on return.
    Now,
    /// Later, as the ranges are once every op queued so far has run (a DMA
    /// to DRAM whose bytes nothing reads yet): the backend may start a
    /// [`Capture`] for [`Resident::collect`], or start none (`None`), and
    /// the host reads them now.
    Later,
}

/// The bytes the host writes into ranges of memory ([`Resident::write`]).
#[derive(Clone, Copy, Debug)]
pub enum Write<'a> {
    /// The host wrote them into `mem` after reading the ranges
    /// ([`When::Now`]); the backend takes them in. Always taken.
    Done,
    /// The host offers these bytes instead of writing `mem` (a DMA from
    /// DRAM, which reads no device memory). A backend takes them only when
    /// they cover every byte of the ranges exactly once (then their order
    /// does not matter); taken, `mem` is not written and is stale there.
    Offer(&'a [HostWrite<'a>]),
}

/// How a run ends ([`Resident::end`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// `mem` gets every byte the backend holds newer, held DRAM is read
    /// back (as [`Executor::finish`]).
    ReadBack,
    /// The caller reads only DRAM outside the held window afterwards: bytes
    /// the backend holds newer than `mem` are dropped, so `mem` may be
    /// stale.
    Drop,
}

/// A backend that keeps its own copy of device memory, told what the host
/// does to it. The calls of one run come in this order: [`Resident::begin`];
/// ops, DMAs and the host's accesses in program order; [`Resident::end`].
/// A host access reads (and writes) only ranges it has [`Resident::read`]
/// now, and reports what it wrote with [`Resident::write`]. Ranges are the
/// bytes of one partition each, as [`HostRange`] says.
pub trait Resident {
    /// Begins a run on `mem`. True when the backend holds the DRAM window
    /// offered ([`Begin::dram`]); false when it does not (nothing queued
    /// may move, memory of another generation, too large): the host then
    /// keeps all of DRAM.
    fn begin(&mut self, mem: &DeviceMemory, run: Begin<'_>) -> Result<bool, BackendError>;
    /// The host reads `ranges` of `mem` ([`When`]). [`When::Now`]: `mem`
    /// holds every op's result there on return (bytes outside may stay
    /// stale), and the result is `None`. [`When::Later`]: a [`Capture`] to
    /// collect, or `None` when the backend starts none (the host then reads
    /// them now).
    fn read(
        &mut self,
        mem: &mut DeviceMemory,
        ranges: &[HostRange],
        when: When,
    ) -> Result<Option<Capture>, BackendError>;
    /// Hands `sink` the bytes of each of `captures`, in order: its index in
    /// `captures` and the bytes of its ranges, concatenated in order. One
    /// wait for all of them; every capture started before is settled, and
    /// those not named are dropped. A backend may also bring those ranges
    /// of `mem` up to date from the captured bytes.
    fn collect(
        &mut self,
        mem: &mut DeviceMemory,
        captures: &[Capture],
        sink: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), BackendError>;
    /// The host writes `ranges` ([`Write`]). True when the backend took the
    /// bytes: in program order, newer than `mem` from now on. False (an
    /// [`Write::Offer`] refused): nothing happened, and the host reads the
    /// ranges now, writes `mem` and reports [`Write::Done`].
    fn write(
        &mut self,
        mem: &DeviceMemory,
        ranges: &[HostRange],
        bytes: Write<'_>,
    ) -> Result<bool, BackendError>;
    /// A DMA between on-chip places, or between SBUF/PSUM and held DRAM, for
    /// the backend to run behind the queued ops as its datapath would.
    /// `read` and `written` are the bytes of its on-chip walks per
    /// partition. True: the backend took it (the bytes it writes are the
    /// backend's from now on, like an op's). False: nothing happened, and
    /// the host runs it on `mem` (read now, write, [`Write::Done`]).
    fn dma(
        &mut self,
        dma: &ChipDma,
        mem: &DeviceMemory,
        read: &[HostRange],
        written: &[HostRange],
    ) -> Result<bool, BackendError>;
    /// True when [`Resident::dma`] takes `dma`, a DMA between SBUF or PSUM
    /// and held DRAM, whatever else has happened: the runtime offers a
    /// variable to hold only if every DMA that touches it passes.
    fn takes(&self, dma: &ChipDma) -> bool;
    /// Ends the run ([`End`]): runs what is queued and reports its
    /// failures. When the backend holds DRAM, `sink` gets the bytes of each
    /// of `held` (window offsets) as the run leaves them, its index in
    /// `held` with them, and the window is dropped; `held` is empty with
    /// [`End::Drop`]. The backend holds nothing afterwards.
    fn end(
        &mut self,
        mem: &mut DeviceMemory,
        end: End,
        held: &[Range<u64>],
        sink: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), BackendError>;
}
