//! The GPU backend behind [`crate::device::Executor`], [`Resident`]: it
//! keeps its own copy of device memory.
//!
//! Ops are encoded as they are dispatched and submitted in batches (in
//! order, one submission each, not waited for) when the host must see
//! memory; only a read-back or the end of a run waits. Memory goes to the
//! GPU whole before the first batch after a run's end — or not at all when
//! the host says it is zero ([`Begin::zeroed`]: the GPU zeroes its own).
//! From then on the GPU holds it, and `Newer` (`newer.rs`) tracks the bytes
//! queued ops may have written: a host read ([`When::Now`]) reads back only
//! the part of its footprint in them, the bytes the host writes go up alone
//! ([`Write`]), and the end of a run reads back only them. A DMA to DRAM may
//! instead take a capture ([`When::Later`]): a copy of its source queued
//! behind the ops, collected with others in one wait.

use super::batch::{self, Command, Dispatch, Staged};
use super::context::{DeviceError, Gpu};
use super::kernels::Kernels;
use super::memory::{GpuMemory, Parts, Route};
use super::newer::Newer;
use super::params::fits_loop_budget;
use super::staging::{Mapped, Staging};
use super::types::{EncodeCx, GpuKernel, Span};
use crate::device::memory::DeviceMemory;
use crate::device::ops::KernelOp;
use crate::device::ops::pool::Side;
use crate::device::ops::{ChipDma, Op, Place};
use crate::device::{
    BackendError, Begin, Capture, ContractFault, End, Executor, HostRange, HostWrite, Resident,
    When, Write,
};
use crate::isa::tensor::Region;
use crate::limits::{Arch, PARTITIONS};
use std::ops::Range;

/// Runs device ops on a GPU.
pub struct GpuExecutor {
    memory: GpuMemory,
    kernels: Kernels,
    cx: EncodeCx,
    /// Commands not yet submitted, in program order.
    queued: Vec<Command>,
    /// The host's bytes and spans for their uploads and captures.
    staged: Staged,
    /// The GPU holds memory (the host's copy is current outside `newer`);
    /// else the host's copy is the truth, uploaded whole before the next batch.
    gpu_holds: bool,
    /// Bytes queued or run ops may have written since the GPU took memory.
    newer: Newer,
    /// Captures not yet collected ([`When::Later`]).
    captures: Vec<Pending>,
    /// The capture buffers of submitted batches, their mappings requested.
    batches: Vec<Staging>,
    /// The next capture's id.
    next_capture: u64,
    /// Bytes of the captures not yet collected.
    captured_bytes: u64,
    /// Bytes of the queued uploads' own staging (belt slices).
    own_upload_bytes: u64,
    /// Bytes the last `finish` read back.
    finish_read_back: u64,
    /// DMAs run as kernels ([`Resident::dma`]).
    chip_dmas: u64,
    /// Ops run on the CPU reference ([`GpuExecutor::host_ops`]).
    host_ops: u64,
    /// The memory buffer holds a window of DRAM ([`Begin::dram`]).
    holds_dram: bool,
    /// Ops queued and host accesses so far: a capture taken when this was
    /// what it is now holds its bytes as the run leaves them.
    touched: u64,
}

/// A capture not yet collected.
struct Pending {
    id: u64,
    /// Where its bytes are.
    held: Held,
    /// Its ranges' bytes in that buffer.
    parts: Parts,
    bytes: u64,
    /// Its ranges.
    ranges: Vec<HostRange>,
    /// `touched` when it was taken.
    at: u64,
}

/// Where a capture's bytes are: in a queued batch's capture buffer, then a
/// submitted one's (in `batches`); or in a buffer of its own, then its
/// mapping.
enum Held {
    Queued,
    Batch(usize),
    Own(wgpu::Buffer),
    Mapped(Staging),
}

/// Commands queued before they are submitted without waiting (bounds the
/// submission's size).
const MAX_QUEUED: usize = 4096;
/// Upload bytes queued before they are submitted (bounds staging memory).
const MAX_QUEUED_BYTES: u64 = 64 << 20;
/// Captured bytes held for the host before a capture is refused (the
/// caller then reads device memory at once).
const MAX_CAPTURED_BYTES: u64 = 256 << 20;

#[doc(hidden)]
/// The one place that maps a device op to its kernel family's encoder
/// (its [`GpuKernel`] impl).
pub fn encode(op: &Op, cx: &EncodeCx) -> Dispatch {
    // Each op's `GpuKernel` impl, in its family's file.
    macro_rules! arms {
        ($($(#[$doc:meta])* $v:ident($file:ident::$t:ident),)*) => {
            match op {
                $(Op::$v(o) => GpuKernel::encode(o, cx),)*
            }
        };
    }
    crate::device::ops::for_each_op!(arms)
}

impl GpuExecutor {
    /// Allocates memory for `arch` on `gpu`; pipelines compile on first use.
    pub fn new(gpu: &Gpu, arch: Arch) -> Result<GpuExecutor, DeviceError> {
        Ok(GpuExecutor {
            memory: GpuMemory::new(gpu, arch)?,
            kernels: Kernels::new(gpu)?,
            cx: EncodeCx::of(gpu, arch),
            queued: Vec::new(),
            staged: Staged::default(),
            gpu_holds: false,
            newer: Newer::new(arch),
            captures: Vec::new(),
            batches: Vec::new(),
            next_capture: 0,
            captured_bytes: 0,
            own_upload_bytes: 0,
            finish_read_back: 0,
            chip_dmas: 0,
            host_ops: 0,
            holds_dram: false,
            touched: 0,
        })
    }

    #[doc(hidden)]
    /// Tuning and test counters (hidden from the docs: for tests and
    /// `tpb-emu bench`, not the library's API).
    ///
    /// Overrides how many runs of 4 outputs Pool's `pool_rows` folds per
    /// invocation (1, 2 or 4; [`rows_max_chunks`](super::tuning::rows_max_chunks) of the adapter by default):
    /// for tests that run the other adapters' choice, and for tuning.
    pub fn set_rows_max_chunks(&mut self, max: u32) {
        self.cx.rows_max_chunks = max;
    }

    #[doc(hidden)]
    /// Overrides the most positions an elementwise row-path invocation
    /// takes ([`row_per_max`](super::tuning::row_per_max) of the adapter by default): for tests that run
    /// the other adapters' choice, and for tuning.
    pub fn set_row_per_max(&mut self, max: u32) {
        self.cx.row_per_max = max;
    }

    #[doc(hidden)]
    /// Overrides the most vec4s per lane a CrossLaneReduce invocation folds
    /// ([`clr_quads_max`](super::tuning::clr_quads_max) of the adapter by default): 4 for `max` ≥ 4, else
    /// 1 (the shader's two choices), for tests that run the other adapters'
    /// choice, and for tuning.
    pub fn set_clr_quads_max(&mut self, max: u32) {
        self.cx.clr_quads_max = if max >= 4 { 4 } else { 1 };
    }

    #[doc(hidden)]
    /// Records this executor ran on the CPU reference because no kernel of
    /// this adapter can run them whole
    /// ([`fits_loop_budget`]).
    pub fn host_ops(&self) -> u64 {
        self.host_ops
    }

    /// Runs `op` on the CPU reference in `mem`, as the host would between
    /// ops: every queued op's result comes down first (the op may read any
    /// of it), and its dst bytes go up again before the next kernel.
    fn execute_on_host(&mut self, op: &Op, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        // Host ranges lie in one partition each; (lo, hi) within it, never
        // negative (`inside` below, and whole partitions).
        let range = |region: Region, p: u32, (lo, hi): (i64, i64)| {
            let at = p as usize * mem.active_bytes(region) as usize;
            HostRange {
                region,
                bytes: at + lo as usize..at + hi as usize,
            }
        };
        let mut all = Vec::new();
        for region in [Region::Sbuf, Region::Psum] {
            let whole = (0, mem.active_bytes(region) as i64);
            all.extend((0..PARTITIONS).map(|p| range(region, p, whole)));
        }
        // Validation keeps walks inside the active bytes; where one were not,
        // all of memory counts as written.
        let inside = |d: &Side, size: usize| {
            let (lo, hi) = d.byte_range(size);
            lo >= 0 && hi <= mem.active_bytes(d.region) as i64
        };
        let written: Vec<HostRange> = match (op, op.dst_walk()) {
            (_, Some((d, size))) if inside(d, size) => (0..op.channels())
                .map(|l| range(d.region, d.partition + l, d.byte_range(size)))
                .collect(),
            // A CrossLaneReduce writes its dst walk in its dst partition.
            (Op::CrossLane(c), None) if inside(c.dst(), c.sizes()[1]) => {
                vec![range(
                    c.dst().region,
                    c.dst().partition,
                    c.dst().byte_range(c.sizes()[1]),
                )]
            }
            _ => all.clone(),
        };
        self.host_access(mem, &all)?;
        crate::device::cpu::CpuExecutor::default().execute(op, mem)?;
        self.host_ops += 1;
        self.host_wrote(mem, &written)
    }

    #[doc(hidden)]
    /// Bytes of device memory the last [`Executor::finish`] read back: what
    /// the end of a run cost (for tests of what it can skip).
    pub fn finish_read_back(&self) -> u64 {
        self.finish_read_back
    }

    #[doc(hidden)]
    /// DMAs this executor has run as kernels, on chip or with held DRAM
    /// (for tests of which DMAs stay on the GPU).
    pub fn chip_dmas(&self) -> u64 {
        self.chip_dmas
    }

    #[doc(hidden)]
    /// Overrides how Pool AVG adds ([`add_by_bits`](super::tuning::add_by_bits) of the adapter by
    /// default), so tests run both sums on one adapter.
    pub fn set_add_by_bits(&mut self, on: bool) {
        self.cx.add_by_bits = on;
    }

    /// Submits the queued commands on the GPU's memory (uploading the
    /// host's first when the host holds the truth), without waiting: a
    /// read-back waits for them, `finish` for the rest. Captures whose
    /// copies are now submitted may be mapped.
    fn run_queued(&mut self, mem: &DeviceMemory) -> Result<(), DeviceError> {
        if self.queued.is_empty() {
            return Ok(());
        }
        if !self.gpu_holds {
            // `newer` holds just the queued ops' bytes (cleared by `finish`).
            self.memory.upload(mem)?;
            self.gpu_holds = true;
        }
        self.submit_queued()
    }

    /// [`GpuExecutor::run_queued`] when the GPU holds memory.
    fn submit_queued(&mut self) -> Result<(), DeviceError> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let queued = std::mem::take(&mut self.queued);
        let staged = std::mem::take(&mut self.staged);
        self.own_upload_bytes = 0;
        let buffer = batch::queue(&self.kernels, &self.memory, &queued, staged)?;
        let at = self.batches.len();
        if let Some((b, size)) = buffer {
            self.batches.push(Staging::map(b, size));
        }
        for c in &mut self.captures {
            c.held = match std::mem::replace(&mut c.held, Held::Queued) {
                Held::Queued => Held::Batch(at),
                Held::Own(b) => Held::Mapped(Staging::map(b, c.bytes)),
                done => done,
            };
        }
        Ok(())
    }

    /// The command that moves `spans` along `route`: copy commands through
    /// the DMA's own buffer, or a spans dispatch through the batch's.
    fn command(&mut self, route: Route, spans: &[Span], upload: bool) -> Command {
        match route {
            Route::Own(buffer) => Command::Copy {
                upload,
                spans: spans.to_vec(),
                buffer,
            },
            Route::Batch => self.staged.add(spans, upload, self.cx.max_x),
        }
    }

    /// Queues `command` in program order, submitting the queue when it
    /// grows large.
    fn push(&mut self, command: Command, mem: &DeviceMemory) -> Result<(), DeviceError> {
        if let Command::Copy {
            upload: true,
            spans,
            ..
        } = &command
        {
            self.own_upload_bytes += spans.iter().map(|s| s.2).sum::<u64>();
        }
        self.queued.push(command);
        let bytes =
            self.staged.upload.len() as u64 + self.staged.capture_bytes + self.own_upload_bytes;
        if self.queued.len() >= MAX_QUEUED || bytes >= MAX_QUEUED_BYTES {
            self.run_queued(mem)?;
        }
        Ok(())
    }

    /// Runs what is queued and waits for it; with `read_back`, `mem` gets
    /// the bytes the GPU holds newer (`finish`), else they are dropped
    /// (`settle`). Either way the GPU holds nothing after: whatever memory
    /// comes next goes up whole.
    fn end_run(&mut self, mem: &mut DeviceMemory, read_back: bool) -> Result<(), BackendError> {
        self.touched += 1;
        self.run_queued(mem).map_err(backend)?;
        self.finish_read_back = 0;
        if self.gpu_holds && read_back {
            let ranges = self.newer.ranges();
            self.memory.download_ranges(mem, &ranges).map_err(backend)?;
            self.finish_read_back = ranges.iter().map(|r| r.bytes.len() as u64).sum();
        }
        self.gpu_holds = false;
        self.holds_dram = false;
        self.newer.clear();
        self.captures.clear();
        self.batches.clear();
        self.captured_bytes = 0;
        // Every submission has completed (and any failure is reported) by
        // the time a run ends.
        self.kernels.gpu().wait().map_err(backend)
    }

    /// Queues `command`, which writes `written` for the host (a DMA the
    /// GPU took): in program order behind the queued ops, and newer than
    /// the host's copy from now on.
    fn took(
        &mut self,
        written: &[HostRange],
        command: Option<Command>,
        mem: &DeviceMemory,
    ) -> Result<bool, BackendError> {
        self.touched += 1;
        for r in written {
            self.newer.add_range(r);
        }
        if let Some(c) = command {
            self.push(c, mem).map_err(backend)?;
        }
        Ok(true)
    }

    /// Makes `mem` hold every op's result in `ranges` ([`When::Now`]).
    fn host_access(
        &mut self,
        mem: &mut DeviceMemory,
        ranges: &[HostRange],
    ) -> Result<(), BackendError> {
        self.touched += 1;
        if !self.gpu_holds && !self.queued.is_empty() {
            // The queued ops run on memory as it is before the host's access.
            self.run_queued(mem).map_err(backend)?;
        }
        // Outside `newer` the host's copy is current already: nothing to
        // submit or wait for. Written ranges count too: a footprint's gaps
        // go up again with the bytes the host writes.
        if !self.any_newer(ranges) {
            return Ok(());
        }
        self.run_queued(mem).map_err(backend)?;
        let stale: Vec<HostRange> = ranges.iter().filter_map(|r| self.newer.clip(r)).collect();
        self.memory.download_ranges(mem, &stale).map_err(backend)?;
        for r in &stale {
            self.newer.read_back(r);
        }
        Ok(())
    }

    /// The host wrote `ranges` of `mem` after reading them now ([`Write::Done`]).
    fn host_wrote(&mut self, mem: &DeviceMemory, ranges: &[HostRange]) -> Result<(), BackendError> {
        self.touched += 1;
        // `host_access` came first, so queued ops are ahead of an upload:
        // while the host holds the truth the next batch uploads it whole.
        if self.gpu_holds {
            // In program order behind the queued ops.
            let (route, spans) = (self.memory)
                .upload_spans(mem, ranges, &mut self.staged.upload)
                .map_err(backend)?;
            if !spans.is_empty() {
                let c = self.command(route, &spans, true);
                self.push(c, mem).map_err(backend)?;
            }
        }
        Ok(())
    }

    /// The host offers the bytes of a DMA from DRAM ([`Write::Offer`]).
    fn host_write(
        &mut self,
        mem: &DeviceMemory,
        ranges: &[HostRange],
        writes: &[HostWrite<'_>],
    ) -> Result<bool, BackendError> {
        // While the host holds the truth, its copy is what goes up.
        if !self.gpu_holds || mem.arch() != self.memory.arch() {
            return Ok(false);
        }
        let Some((route, spans)) = (self.memory)
            .write_spans(ranges, writes, &mut self.staged.upload)
            .map_err(backend)?
        else {
            return Ok(false);
        };
        let c = (!spans.is_empty()).then(|| self.command(route, &spans, true));
        self.took(ranges, c, mem)
    }

    /// A capture of `ranges` for the host to collect later ([`When::Later`]).
    fn capture(
        &mut self,
        mem: &DeviceMemory,
        ranges: &[HostRange],
    ) -> Result<Option<Capture>, BackendError> {
        if !self.any_newer(ranges) || self.captured_bytes >= MAX_CAPTURED_BYTES {
            return Ok(None); // the host's copy is current there, or read it now
        }
        if !self.gpu_holds {
            self.run_queued(mem).map_err(backend)?;
        }
        let id = self.next_capture;
        self.next_capture += 1;
        let (route, spans, parts) = (self.memory)
            .capture_spans(ranges, &mut self.staged.capture_bytes)
            .map_err(backend)?;
        let bytes = spans.iter().map(|s| s.2).sum::<u64>();
        // What the capture holds until it is collected: its own buffer, or
        // its bytes of the batch's.
        let (held, holds) = match &route {
            Route::Own(b) => (Held::Own(b.clone()), b.size()),
            Route::Batch => (Held::Queued, bytes),
        };
        self.captured_bytes += holds;
        self.captures.push(Pending {
            id,
            held,
            parts,
            bytes,
            ranges: ranges.to_vec(),
            at: self.touched,
        });
        let c = self.command(route, &spans, false);
        self.push(c, mem).map_err(backend)?;
        Ok(Some(Capture(id)))
    }

    /// True when queued or run ops may have written some byte of `ranges`
    /// that the host's copy lacks.
    fn any_newer(&self, ranges: &[HostRange]) -> bool {
        ranges.iter().any(|r| self.newer.clip(r).is_some())
    }
}

fn backend(e: DeviceError) -> BackendError {
    BackendError::Gpu(e)
}

impl Executor for GpuExecutor {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn execute(&mut self, op: &Op, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        if mem.arch() != self.memory.arch() {
            return Err(BackendError::contract(
                "gpu",
                ContractFault::OtherGeneration,
            ));
        }
        if !fits_loop_budget(op, &self.cx) {
            return self.execute_on_host(op, mem);
        }
        self.touched += 1;
        self.newer.add_op(op);
        self.push(Command::Dispatch(encode(op, &self.cx)), mem)
            .map_err(backend)
    }

    fn finish(&mut self, mem: &mut DeviceMemory) -> Result<(), BackendError> {
        self.end_run(mem, true)
    }

    fn resident(&mut self) -> Option<&mut dyn Resident> {
        Some(self)
    }
}

impl Resident for GpuExecutor {
    fn begin(&mut self, mem: &DeviceMemory, run: Begin<'_>) -> Result<bool, BackendError> {
        self.touched += 1;
        // Not the start of a run (something is queued), or memory of
        // another generation: the next batch uploads `mem`, and the host
        // keeps DRAM (the buffer may move: nothing may be queued against
        // the old one).
        if !self.queued.is_empty() || mem.arch() != self.memory.arch() {
            return Ok(false);
        }
        if run.zeroed {
            self.memory.zero().map_err(backend)?;
            self.newer.clear();
            self.gpu_holds = true;
        }
        if let Some(w) = run.dram {
            self.holds_dram = self.memory.hold(w.len, w.init).map_err(backend)?;
        }
        Ok(self.holds_dram)
    }

    fn read(
        &mut self,
        mem: &mut DeviceMemory,
        ranges: &[HostRange],
        when: When,
    ) -> Result<Option<Capture>, BackendError> {
        match when {
            When::Now => self.host_access(mem, ranges).map(|()| None),
            When::Later => self.capture(mem, ranges),
        }
    }

    fn collect(
        &mut self,
        mem: &mut DeviceMemory,
        captures: &[Capture],
        sink: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), BackendError> {
        if captures.is_empty() {
            return Ok(());
        }
        // Captures exist only while the GPU holds memory.
        self.submit_queued().map_err(backend)?;
        self.kernels.gpu().wait().map_err(backend)?;
        // Every pending capture is in a submitted batch now: map them all.
        let batches: Vec<Mapped> = std::mem::take(&mut self.batches)
            .into_iter()
            .map(Staging::open)
            .collect::<Result<_, _>>()
            .map_err(backend)?;
        let mut pending = std::mem::take(&mut self.captures);
        self.captured_bytes = 0;
        let mut scratch = Vec::new();
        for (k, c) in captures.iter().enumerate() {
            let p = pending.iter_mut().find(|p| p.id == c.0).ok_or_else(|| {
                BackendError::contract("gpu", ContractFault::CaptureNotPending(c.0))
            })?;
            // Nothing touched memory since this capture: its bytes are
            // what the run leaves there, so the host needs not read them
            // back again at the end.
            let last = p.at == self.touched;
            let mut deliver = |bytes: &[u8]| {
                sink(k, bytes);
                if last {
                    let mut at = 0;
                    for r in &p.ranges {
                        let n = r.bytes.len();
                        mem.region_bytes_mut(r.region)[r.bytes.clone()]
                            .copy_from_slice(&bytes[at..at + n]);
                        self.newer.read_back(r);
                        at += n;
                    }
                }
            };
            match std::mem::replace(&mut p.held, Held::Queued) {
                Held::Mapped(m) => {
                    let own = m.open().map_err(backend)?;
                    deliver(gather(own.bytes(), &p.parts, &mut scratch));
                    own.release(self.memory.reads());
                }
                Held::Batch(i) => deliver(gather(batches[i].bytes(), &p.parts, &mut scratch)),
                // Every capture was submitted above: a second ask for one.
                Held::Queued | Held::Own(_) => {
                    return Err(BackendError::contract(
                        "gpu",
                        ContractFault::CaptureTwice(c.0),
                    ));
                }
            }
        }
        for b in batches {
            b.release(self.memory.reads());
        }
        Ok(())
    }

    fn write(
        &mut self,
        mem: &DeviceMemory,
        ranges: &[HostRange],
        bytes: Write<'_>,
    ) -> Result<bool, BackendError> {
        match bytes {
            Write::Done => self.host_wrote(mem, ranges).map(|()| true),
            Write::Offer(writes) => self.host_write(mem, ranges, writes),
        }
    }

    fn dma(
        &mut self,
        dma: &ChipDma,
        mem: &DeviceMemory,
        read: &[HostRange],
        written: &[HostRange],
    ) -> Result<bool, BackendError> {
        let held = [dma.src.place, dma.dst.place].contains(&Place::HeldDram);
        if mem.arch() != self.memory.arch()
            || (held && !self.holds_dram)
            || !dma.runs_at_once(read, written)
        {
            return Ok(false);
        }
        let Some(d) = super::dma::dispatch(dma, &self.cx) else {
            return Ok(false);
        };
        self.chip_dmas += 1;
        self.took(written, Some(Command::Dispatch(d)), mem)
    }

    /// Every DMA between held DRAM and SBUF/PSUM that the DMA kernel runs.
    /// The runtime offers only scratch variables to hold: an input's rows
    /// go up by copy commands as DMAs read them ([`Write::Offer`]) and an
    /// output's come back by one copy of what its DMAs read
    /// ([`When::Later`]); held, they would go through the DMA kernel
    /// instead, and lavapipe runs `bench program` six times slower that
    /// way (10.4 → 62 ms, 16 MiB).
    fn takes(&self, dma: &ChipDma) -> bool {
        // Between held DRAM and on-chip bytes no range meets another.
        dma.runs_at_once(&[], &[]) && super::dma::dispatch(dma, &self.cx).is_some()
    }

    fn end(
        &mut self,
        mem: &mut DeviceMemory,
        end: End,
        held: &[Range<u64>],
        sink: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), BackendError> {
        let released = if self.holds_dram {
            self.touched += 1;
            self.holds_dram = false;
            self.run_queued(mem)
                .and_then(|()| self.memory.read_held(held, sink))
                .map_err(backend)
        } else if held.is_empty() {
            Ok(())
        } else {
            Err(BackendError::contract("gpu", ContractFault::HoldsNoDram))
        };
        // A run whose held DRAM did not come back reads memory back.
        let done = self.end_run(mem, end == End::ReadBack || released.is_err());
        released?;
        done
    }
}

/// The bytes of `parts` of `b`, concatenated: a slice of `b` when they
/// follow one another there (ranges of whole words), else gathered into
/// `scratch`.
fn gather<'a>(b: &'a [u8], parts: &Parts, scratch: &'a mut Vec<u8>) -> &'a [u8] {
    let (Some(first), Some(last)) = (parts.first(), parts.last()) else {
        return &[];
    };
    if parts.windows(2).all(|w| w[0].end == w[1].start) {
        return &b[first.start..last.end];
    }
    scratch.clear();
    for part in parts {
        scratch.extend_from_slice(&b[part.clone()]);
    }
    scratch
}

#[cfg(test)]
mod tests {
    use super::gather;

    #[test]
    fn gather_slices_adjacent_parts_and_copies_the_others() {
        let b: Vec<u8> = (0..16).collect();
        let mut scratch = vec![99];
        assert_eq!(
            gather(&b, &vec![2..4, 4..9], &mut scratch),
            &[2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(scratch, [99], "adjacent parts are not copied");
        assert_eq!(
            gather(&b, &vec![1..3, 5..6, 12..16], &mut scratch),
            &[1, 2, 5, 12, 13, 14, 15]
        );
        assert_eq!(gather(&b, &vec![], &mut scratch), &[] as &[u8]);
    }
}
