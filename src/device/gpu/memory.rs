//! Device memory on a GPU: SBUF then PSUM of one generation in one storage
//! buffer, uploaded whole when the host's copy is the truth, otherwise moved
//! in ranges (what a DMA touches, what kernels wrote). During a run the same
//! buffer may hold a window of device DRAM after PSUM (held DRAM,
//! [`crate::device::Begin::dram`]), addressed flat. Kernels borrow
//! it ([`super::batch::run`]); it knows nothing of them.

use super::context::{DeviceError, Gpu};
use super::staging::{ReadPool, UPLOAD_CHUNK, read_spans};
use super::types::{Span, memory_bytes, region_base};
use crate::device::memory::{DeviceMemory, HostRange, HostWrite};
use crate::isa::tensor::Region;
use crate::limits::Arch;

/// Copies SBUF then PSUM of `mem` into one byte vector in the buffer layout.
pub(crate) fn pack(mem: &DeviceMemory) -> Vec<u8> {
    let mut v = Vec::with_capacity(memory_bytes(mem.arch()) as usize);
    v.extend_from_slice(mem.region_bytes(Region::Sbuf));
    v.extend_from_slice(mem.region_bytes(Region::Psum));
    v
}

/// The emulated SBUF and PSUM of one generation on a GPU.
pub struct GpuMemory {
    gpu: Gpu,
    arch: Arch,
    /// SBUF, PSUM, then room for held DRAM.
    buf: wgpu::Buffer,
    /// Upload staging, reused once the GPU has copied from it.
    belt: std::sync::Mutex<wgpu::util::StagingBelt>,
    /// Read-back staging, reused once the host has read it.
    reads: ReadPool,
}

impl GpuMemory {
    /// Allocates zeroed memory for `arch`, or says why the adapter cannot hold it.
    pub fn new(gpu: &Gpu, arch: Arch) -> Result<GpuMemory, DeviceError> {
        let bytes = memory_bytes(arch);
        let limits = gpu.device.limits();
        if bytes > limits.max_storage_buffer_binding_size || bytes > limits.max_buffer_size {
            return Err(DeviceError::OutOfMemory(format!(
                "{bytes} bytes of SBUF+PSUM exceed the adapter's storage binding limit ({})",
                limits.max_storage_buffer_binding_size
            )));
        }
        let buf = memory_buffer(gpu, bytes)?;
        let belt = wgpu::util::StagingBelt::new(gpu.device.clone(), UPLOAD_CHUNK);
        Ok(GpuMemory {
            gpu: gpu.clone(),
            arch,
            buf,
            belt: std::sync::Mutex::new(belt),
            reads: ReadPool::default(),
        })
    }

    /// The generation this memory was laid out for.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The buffer (SBUF then PSUM), for the kernels that bind it.
    pub(crate) fn buffer(&self) -> &wgpu::Buffer {
        &self.buf
    }

    /// Copies all of `mem` to the GPU.
    pub fn upload(&self, mem: &DeviceMemory) -> Result<(), DeviceError> {
        self.check_arch(mem)?;
        self.gpu
            .scoped(|| self.gpu.queue.write_buffer(&self.buf, 0, &pack(mem)))
    }

    /// The pool read-back buffers come from and go back to.
    pub(crate) fn reads(&self) -> &ReadPool {
        &self.reads
    }

    /// Closes the upload chunks written since the last call: call before
    /// submitting the copies out of them.
    pub(crate) fn uploads_submitting(&self) {
        self.belt().finish();
    }

    /// Lets the upload chunks closed by [`GpuMemory::uploads_submitting`]
    /// be mapped again once the GPU is done with them: call after the
    /// submission.
    pub(crate) fn uploads_submitted(&self) {
        self.belt().recall();
    }

    fn belt(&self) -> std::sync::MutexGuard<'_, wgpu::util::StagingBelt> {
        self.belt.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Copies the GPU's SBUF and PSUM back into `mem`.
    pub fn download(&self, mem: &mut DeviceMemory) -> Result<(), DeviceError> {
        self.check_arch(mem)?;
        let size = memory_bytes(self.arch);
        let split = region_base(Region::Psum, self.arch) as usize;
        self.read_copies(&[(0, 0, size)], size, |bytes| {
            mem.region_bytes_mut(Region::Sbuf)
                .copy_from_slice(&bytes[..split]);
            mem.region_bytes_mut(Region::Psum)
                .copy_from_slice(&bytes[split..]);
        })
    }

    /// Sets every byte of SBUF and PSUM to zero on the GPU (no copy from
    /// the host).
    pub(crate) fn zero(&self) -> Result<(), DeviceError> {
        self.gpu.scoped(|| {
            let mut enc = self.gpu.device.create_command_encoder(&Default::default());
            enc.clear_buffer(&self.buf, 0, Some(memory_bytes(self.arch)));
            self.gpu.queue.submit([enc.finish()]);
        })
    }

    /// Makes the `len` bytes after PSUM a window of held DRAM, zero but for
    /// `init`'s pieces (window offset, bytes), behind every submitted
    /// command; the buffer grows (SBUF and PSUM copied on the GPU) when it
    /// is too small (and stays that size). `Ok(false)` when the adapter
    /// cannot bind or allocate that much, or the window would pass
    /// [`MAX_HELD_DRAM`]. Call with nothing queued.
    pub(crate) fn hold(&mut self, len: u64, init: &[(u64, &[u8])]) -> Result<bool, DeviceError> {
        let chip = memory_bytes(self.arch);
        let len = len.next_multiple_of(4);
        let limits = self.gpu.device.limits();
        let size = chip + len;
        if len > MAX_HELD_DRAM
            || size > limits.max_storage_buffer_binding_size
            || size > limits.max_buffer_size
        {
            return Ok(false);
        }
        let grown = match (size > self.buf.size()).then(|| memory_buffer(&self.gpu, size)) {
            // The adapter could not give that much: the host keeps DRAM.
            Some(Err(DeviceError::OutOfMemory(_))) => return Ok(false),
            other => other.transpose()?,
        };
        self.gpu.scoped(|| {
            let mut enc = self.gpu.device.create_command_encoder(&Default::default());
            if let Some(new) = &grown {
                enc.copy_buffer_to_buffer(&self.buf, 0, new, 0, chip);
            }
            let buf = grown.as_ref().unwrap_or(&self.buf);
            enc.clear_buffer(buf, chip, Some(len));
            self.gpu.queue.submit([enc.finish()]);
            // Writes land at the next submission, after the clear.
            for &(at, bytes) in init {
                debug_assert!(at.is_multiple_of(4) && at + bytes.len() as u64 <= len);
                let whole = bytes.len() & !3;
                if whole > 0 {
                    self.gpu.queue.write_buffer(buf, chip + at, &bytes[..whole]);
                }
                if whole < bytes.len() {
                    // The last word, padded with zeros (the window's own).
                    let mut tail = [0u8; 4];
                    tail[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
                    self.gpu
                        .queue
                        .write_buffer(buf, chip + at + whole as u64, &tail);
                }
            }
        })?;
        if let Some(new) = grown {
            self.buf = new;
        }
        Ok(true)
    }

    /// Hands `sink` the bytes of each of `ranges` of held DRAM (window
    /// offsets), with its index: one staging buffer, one submission, one
    /// wait, behind every submitted command.
    pub(crate) fn read_held(
        &self,
        ranges: &[std::ops::Range<u64>],
        sink: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), DeviceError> {
        let chip = memory_bytes(self.arch);
        // Each range widened to whole words, back to back in the staging.
        let mut spans = Vec::with_capacity(ranges.len());
        let mut total = 0;
        for r in ranges {
            let (lo, hi) = (r.start & !3, r.end.next_multiple_of(4));
            spans.push((chip + lo, total, hi - lo));
            total += hi - lo;
        }
        if total == 0 {
            return Ok(());
        }
        self.read_copies(&spans, total, |bytes| {
            for (k, (r, &(_, at, _))) in ranges.iter().zip(&spans).enumerate() {
                let lo = (at + (r.start & 3)) as usize;
                sink(k, &bytes[lo..lo + (r.end - r.start) as usize]);
            }
        })
    }

    /// The spans that copy `ranges` of `mem` to the GPU (widened to whole
    /// 4-byte words, wgpu's copy alignment: partitions are whole words, so
    /// a widened range stays in its partition, and the widening bytes are
    /// `mem`'s too), and the route they take: few or long spans
    /// ([`by_copies`]) a slice of the upload belt of their
    /// own, their bytes written straight into its mapping (spans from the
    /// slice's offset in its chunk); others the batch's, their bytes
    /// appended to `data` ([`super::batch::Staged`]).
    pub(crate) fn upload_spans(
        &self,
        mem: &DeviceMemory,
        ranges: &[HostRange],
        data: &mut Vec<u8>,
    ) -> Result<(Route, Vec<Span>), DeviceError> {
        self.check_arch(mem)?;
        let (spans, total) = self.spans(ranges);
        let copy = self.copy_spans(&spans);
        let pieces: Vec<Piece> = spans
            .iter()
            .zip(&copy)
            .map(|(&(region, lo, hi), c)| (c.1 as usize, &mem.region_bytes(region)[lo..hi]))
            .collect();
        self.stage_upload(copy, total, &pieces, data)
    }

    /// The spans that copy `ranges` to the GPU, as
    /// [`GpuMemory::upload_spans`], their bytes taken from `writes` instead
    /// of host memory: `None` unless every range is whole words and the
    /// writes cover the ranges, each byte once (no gap, no overlap, nothing
    /// outside them).
    pub(crate) fn write_spans(
        &self,
        ranges: &[HostRange],
        writes: &[HostWrite<'_>],
        data: &mut Vec<u8>,
    ) -> Result<Option<(Route, Vec<Span>)>, DeviceError> {
        let aligned =
            |r: &HostRange| r.bytes.start.is_multiple_of(4) && r.bytes.end.is_multiple_of(4);
        if !ranges.iter().all(aligned) {
            return Ok(None);
        }
        let (spans, total) = self.spans(ranges);
        let copy = self.copy_spans(&spans);
        // Each span with where it starts in the staging bytes, by address.
        let mut by_addr: Vec<(Region, usize, usize, usize)> = spans
            .iter()
            .zip(&copy)
            .map(|(&(region, lo, hi), c)| (region, lo, hi, c.1 as usize))
            .collect();
        by_addr.sort_unstable_by_key(|&(region, lo, ..)| (region, lo));
        let mut pieces: Vec<Piece> = Vec::with_capacity(writes.len());
        for w in writes {
            let (mut from, mut bytes) = (w.at, w.bytes);
            while !bytes.is_empty() {
                // The span holding `from` (spans never cross partitions).
                let i = by_addr.partition_point(|&(r, lo, ..)| (r, lo) <= (w.region, from));
                let Some(&(region, lo, hi, start)) = i.checked_sub(1).map(|i| &by_addr[i]) else {
                    return Ok(None);
                };
                if region != w.region || from >= hi {
                    return Ok(None);
                }
                let n = bytes.len().min(hi - from);
                pieces.push((start + from - lo, &bytes[..n]));
                (from, bytes) = (from + n, &bytes[n..]);
            }
        }
        // The pieces must tile the staging bytes: no gap, no overlap.
        pieces.sort_unstable_by_key(|p| p.0);
        let mut end = 0;
        for &(at, bytes) in &pieces {
            if at != end {
                return Ok(None);
            }
            end += bytes.len();
        }
        if end as u64 != total {
            return Ok(None);
        }
        self.stage_upload(copy, total, &pieces, data).map(Some)
    }

    /// Stages `pieces` (offsets in the `total` staging bytes of the copies
    /// `copy`, which they cover in order) for those copies: see
    /// [`GpuMemory::upload_spans`].
    fn stage_upload(
        &self,
        mut copy: Vec<Span>,
        total: u64,
        pieces: &[Piece],
        data: &mut Vec<u8>,
    ) -> Result<(Route, Vec<Span>), DeviceError> {
        if total > 0 && by_copies(&copy) {
            // Written straight into a chunk of the upload belt.
            let mut belt = self.belt();
            let size = wgpu::BufferSize::new(total).expect("total > 0");
            let slice = belt.allocate(size, wgpu::BufferSize::new(4).expect("4 > 0"));
            let buffer = slice.buffer().clone();
            let offset = slice.offset();
            drop(belt);
            fill(&buffer, offset, total, pieces)?;
            shift(&mut copy, offset);
            return Ok((Route::Own(buffer), copy));
        }
        // The pieces tile the bytes in order (both callers make them so).
        let base = data.len();
        shift(&mut copy, base as u64);
        for &(at, bytes) in pieces {
            debug_assert_eq!(base + at, data.len());
            data.extend_from_slice(bytes);
        }
        Ok((Route::Batch, copy))
    }

    /// The spans that copy `ranges` (widened to words) to where the host
    /// reads them, the route they take (as [`GpuMemory::upload_spans`]: a
    /// buffer of their own from its byte 0, or a batch's capture buffer from
    /// byte `*at` on, `*at` moving past them), and where each range's own
    /// bytes lie there.
    pub(crate) fn capture_spans(
        &self,
        ranges: &[HostRange],
        at: &mut u64,
    ) -> Result<(Route, Vec<Span>, Parts), DeviceError> {
        let (spans, total) = self.spans(ranges);
        let mut copy = self.copy_spans(&spans);
        let own = total > 0 && by_copies(&copy);
        let base = if own { 0 } else { *at };
        let mut parts = Vec::with_capacity(ranges.len());
        let mut off = base as usize;
        for r in ranges.iter().filter(|r| !r.bytes.is_empty()) {
            let (lo, hi) = words(r);
            parts.push(off + r.bytes.start - lo..off + r.bytes.end - lo);
            off += hi - lo;
        }
        let route = if own {
            Route::Own(self.reads.take(&self.gpu, total)?)
        } else {
            *at += total;
            Route::Batch
        };
        shift(&mut copy, base);
        Ok((route, copy, parts))
    }

    /// `ranges` widened to whole words, without the empty ones, and their
    /// total bytes.
    fn spans(&self, ranges: &[HostRange]) -> (Vec<(Region, usize, usize)>, u64) {
        let spans: Vec<(Region, usize, usize)> = ranges
            .iter()
            .filter(|r| !r.bytes.is_empty())
            .map(|r| {
                let (lo, hi) = words(r);
                (r.region, lo, hi)
            })
            .collect();
        let total = spans.iter().map(|&(_, lo, hi)| (hi - lo) as u64).sum();
        (spans, total)
    }

    /// `(memory offset, offset in a staging buffer, bytes)` of `spans` laid
    /// out back to back in the staging buffer from byte 0.
    fn copy_spans(&self, spans: &[(Region, usize, usize)]) -> Vec<Span> {
        let mut at = 0;
        spans
            .iter()
            .map(|&(region, lo, hi)| {
                let from = region_base(region, self.arch) as u64 + lo as u64;
                let span = (from, at, (hi - lo) as u64);
                at += (hi - lo) as u64;
                span
            })
            .collect()
    }

    /// Copies `ranges` of the GPU's memory into `mem` (widened to whole
    /// words as in [`GpuMemory::upload_spans`]): one staging buffer, one
    /// submission, one wait.
    pub(crate) fn download_ranges(
        &self,
        mem: &mut DeviceMemory,
        ranges: &[HostRange],
    ) -> Result<(), DeviceError> {
        self.check_arch(mem)?;
        let (spans, total) = self.spans(ranges);
        if total == 0 {
            return Ok(());
        }
        self.read_copies(&self.copy_spans(&spans), total, |bytes| {
            let mut at = 0;
            for &(region, lo, hi) in &spans {
                mem.region_bytes_mut(region)[lo..hi].copy_from_slice(&bytes[at..at + hi - lo]);
                at += hi - lo;
            }
        })
    }

    /// Hands `read` the `total` bytes that `copy` (memory byte, staging
    /// byte, bytes) gathers from the buffer: one staging buffer, one
    /// submission, one wait.
    fn read_copies<T>(
        &self,
        copy: &[Span],
        total: u64,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<T, DeviceError> {
        let gather = |enc: &mut wgpu::CommandEncoder, staging: &wgpu::Buffer| {
            for &(from, at, len) in copy.iter().filter(|s| s.2 > 0) {
                enc.copy_buffer_to_buffer(&self.buf, from, staging, at, len);
            }
        };
        read_spans(&self.gpu, &self.reads, total, gather, read)
    }

    fn check_arch(&self, mem: &DeviceMemory) -> Result<(), DeviceError> {
        if mem.arch() == self.arch {
            Ok(())
        } else {
            Err(DeviceError::Validation(format!(
                "host memory is {} but GPU memory is {}",
                mem.arch().name(),
                self.arch.name()
            )))
        }
    }
}

/// The most bytes of held DRAM: the window's addresses stay below 2^31,
/// which `dma.wgsl` reads as one partition (shift 31).
pub(crate) const MAX_HELD_DRAM: u64 = 1 << 31;

/// A storage buffer for device memory of `bytes`.
fn memory_buffer(gpu: &Gpu, bytes: u64) -> Result<wgpu::Buffer, DeviceError> {
    gpu.scoped(|| {
        gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sbuf+psum+dram"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    })
}

/// Below this many bytes an upload is written on the calling thread.
const PARALLEL_UPLOAD: u64 = 4 << 20;

/// Bytes to stage: their offset in an upload's staging bytes, and them.
type Piece<'a> = (usize, &'a [u8]);

/// Writes `pieces` (sorted by offset, covering `total` bytes) into the
/// mapped `buffer` from byte `offset`: large uploads in two halves, two
/// tasks on rayon's pool, when the host has two threads (each half its own
/// mapped view; a view starts at a multiple of 8 bytes).
fn fill(
    buffer: &wgpu::Buffer,
    offset: u64,
    total: u64,
    pieces: &[Piece],
) -> Result<(), DeviceError> {
    let write = |from: usize, to: usize, part: &[Piece]| -> Result<(), DeviceError> {
        let mut view = buffer
            .slice(offset + from as u64..offset + to as u64)
            .get_mapped_range_mut()
            .map_err(|e| DeviceError::Validation(format!("get_mapped_range_mut: {e}")))?;
        for &(at, bytes) in part {
            view.slice(at - from..at - from + bytes.len())
                .copy_from_slice(bytes);
        }
        Ok(())
    };
    // The first piece past half way that a view may start at.
    let split = (total >= PARALLEL_UPLOAD && crate::device::cpu::host_threads() > 1)
        .then(|| {
            pieces.iter().position(|&(at, _)| {
                at as u64 >= total / 2 && (offset + at as u64).is_multiple_of(8)
            })
        })
        .flatten()
        .filter(|&i| i > 0);
    let total = total as usize;
    let Some(i) = split else {
        return write(0, total, pieces);
    };
    let (a, b) = pieces.split_at(i);
    let from = b[0].0;
    // Two tasks on rayon's pool, not a thread started per upload.
    let (mine, other) = rayon::join(|| write(0, from, a), || write(from, total, b));
    mine.and(other)
}

/// `spans` moved `by` bytes on in their staging buffer.
fn shift(spans: &mut [Span], by: u64) {
    for s in spans {
        s.1 += by;
    }
}

/// `r` widened to whole 4-byte words.
fn words(r: &HostRange) -> (usize, usize) {
    (r.bytes.start & !3, r.bytes.end.next_multiple_of(4))
}

/// Spans at most this many, or of at least [`LONG_SPAN`] bytes on average,
/// move by copy commands rather than a spans dispatch.
const FEW_SPANS: usize = 4;
/// See [`FEW_SPANS`].
const LONG_SPAN: u64 = 4096;

/// True when `spans` move best by copy commands: they are few, or long.
pub(crate) fn by_copies(spans: &[Span]) -> bool {
    let bytes: u64 = spans.iter().map(|s| s.2).sum();
    spans.len() <= FEW_SPANS || bytes >= LONG_SPAN * spans.len() as u64
}

/// Where each of a capture's ranges lies in its staging buffer.
pub(crate) type Parts = Vec<std::ops::Range<usize>>;

/// How a DMA's spans move between the host and device memory.
#[derive(Debug)]
pub(crate) enum Route {
    /// Copy commands through staging of the DMA's own: a slice of an
    /// upload belt chunk (the spans' staging offsets point into it), or a
    /// read-back buffer of the pool.
    Own(wgpu::Buffer),
    /// A [`super::batch::Staged`] spans dispatch through the batch's
    /// staging buffer.
    Batch,
}
