//! Device memory on a GPU: SBUF then PSUM of one generation in one storage
//! buffer, uploaded whole when the host's copy is the truth, otherwise moved
//! in ranges (what a DMA touches, what kernels wrote). Kernels borrow
//! it ([`super::batch::run`]); it knows nothing of them.

use super::batch::Span;
use super::context::{DeviceError, Gpu};
use crate::device::exec::HostRange;
use crate::device::memory::DeviceMemory;
use crate::isa::tensor::Region;
use crate::limits::{Arch, PARTITIONS};

/// Byte offset of a region's partition 0 in the GPU memory buffer: SBUF, then PSUM.
pub fn region_base(region: Region, arch: Arch) -> u32 {
    match region {
        Region::Sbuf => 0,
        Region::Psum => PARTITIONS * Region::Sbuf.active_bytes(arch),
    }
}

/// Bytes of the GPU memory buffer for `arch`.
pub fn memory_bytes(arch: Arch) -> u64 {
    PARTITIONS as u64 * (Region::Sbuf.active_bytes(arch) + Region::Psum.active_bytes(arch)) as u64
}

/// Copies SBUF then PSUM of `mem` into one byte vector in the buffer layout.
pub fn pack(mem: &DeviceMemory) -> Vec<u8> {
    let mut v = Vec::with_capacity(memory_bytes(mem.arch()) as usize);
    v.extend_from_slice(mem.region_bytes(Region::Sbuf));
    v.extend_from_slice(mem.region_bytes(Region::Psum));
    v
}

/// The emulated SBUF and PSUM of one generation on a GPU.
pub struct GpuMemory<'g> {
    gpu: &'g Gpu,
    arch: Arch,
    buf: wgpu::Buffer,
}

impl<'g> GpuMemory<'g> {
    /// Allocates zeroed memory for `arch`, or says why the adapter cannot hold it.
    pub fn new(gpu: &'g Gpu, arch: Arch) -> Result<GpuMemory<'g>, DeviceError> {
        let bytes = memory_bytes(arch);
        let limits = gpu.device.limits();
        if bytes > limits.max_storage_buffer_binding_size || bytes > limits.max_buffer_size {
            return Err(DeviceError::OutOfMemory(format!(
                "{bytes} bytes of SBUF+PSUM exceed the adapter's storage binding limit ({})",
                limits.max_storage_buffer_binding_size
            )));
        }
        let buf = gpu.scoped(|| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("sbuf+psum"),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        })?;
        Ok(GpuMemory { gpu, arch, buf })
    }

    /// The generation this memory was laid out for.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The buffer (SBUF then PSUM), for the kernels that bind it.
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buf
    }

    /// Copies all of `mem` to the GPU.
    pub fn upload(&self, mem: &DeviceMemory) -> Result<(), DeviceError> {
        self.check_arch(mem)?;
        self.gpu
            .scoped(|| self.gpu.queue.write_buffer(&self.buf, 0, &pack(mem)))
    }

    /// Copies the GPU's SBUF and PSUM back into `mem`.
    pub fn download(&self, mem: &mut DeviceMemory) -> Result<(), DeviceError> {
        self.check_arch(mem)?;
        let bytes = read_buffer(self.gpu, &self.buf)?;
        let split = region_base(Region::Psum, self.arch) as usize;
        mem.region_bytes_mut(Region::Sbuf)
            .copy_from_slice(&bytes[..split]);
        mem.region_bytes_mut(Region::Psum)
            .copy_from_slice(&bytes[split..]);
        Ok(())
    }

    /// Sets every byte to zero on the GPU (no copy from the host).
    pub fn zero(&self) -> Result<(), DeviceError> {
        self.gpu.scoped(|| {
            let mut enc = self.gpu.device.create_command_encoder(&Default::default());
            enc.clear_buffer(&self.buf, 0, None);
            self.gpu.queue.submit([enc.finish()]);
        })
    }

    /// The spans that copy `ranges` of `mem` to the GPU (widened to whole
    /// 4-byte words, wgpu's copy alignment: partitions are whole words, so
    /// a widened range stays in its partition, and the widening bytes are
    /// `mem`'s too), their bytes appended to `data`, a batch's upload bytes
    /// ([`super::batch::Staged`]).
    pub fn upload_spans(
        &self,
        mem: &DeviceMemory,
        ranges: &[HostRange],
        data: &mut Vec<u8>,
    ) -> Result<Vec<Span>, DeviceError> {
        self.check_arch(mem)?;
        let (spans, _) = self.spans(ranges);
        let at = data.len() as u64;
        for &(region, lo, hi) in &spans {
            data.extend_from_slice(&mem.region_bytes(region)[lo..hi]);
        }
        Ok(self.copy_spans(&spans, at))
    }

    /// The spans that copy `ranges` (widened to words) into a batch's
    /// capture buffer from byte `*at` on ([`super::batch::Staged`];
    /// `*at` moves past them), and where each range's own bytes lie there.
    pub fn capture_spans(
        &self,
        ranges: &[HostRange],
        at: &mut u64,
    ) -> (Vec<Span>, Vec<std::ops::Range<usize>>) {
        let (spans, total) = self.spans(ranges);
        let base = *at;
        let mut parts = Vec::with_capacity(ranges.len());
        let mut off = base as usize;
        for r in ranges.iter().filter(|r| !r.bytes.is_empty()) {
            let (lo, hi) = words(r);
            parts.push(off + r.bytes.start - lo..off + r.bytes.end - lo);
            off += hi - lo;
        }
        *at += total;
        (self.copy_spans(&spans, base), parts)
    }

    /// For `ranges` that move best by copy commands
    /// ([`super::batch::by_copies`]): a staging buffer of their own holding
    /// their bytes of `mem` (widened to words), and the spans from it. One
    /// copy of the bytes, straight into the mapped buffer.
    pub fn own_upload(
        &self,
        mem: &DeviceMemory,
        ranges: &[HostRange],
    ) -> Result<Option<(wgpu::Buffer, Vec<Span>)>, DeviceError> {
        self.check_arch(mem)?;
        let (spans, total) = self.spans(ranges);
        let copy = self.copy_spans(&spans, 0);
        if total == 0 || !super::batch::by_copies(&copy) {
            return Ok(None);
        }
        let gpu = self.gpu;
        let buffer = gpu.scoped(|| {
            let b = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("dma upload"),
                size: total,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            });
            {
                // One view of the whole buffer: a view's offset must be a
                // multiple of 8, a span's only of 4.
                let mut view = b
                    .get_mapped_range_mut(0..total)
                    .map_err(|e| DeviceError::Validation(format!("get_mapped_range_mut: {e}")))?;
                for (&(region, lo, hi), &(_, off, len)) in spans.iter().zip(&copy) {
                    view.slice(off as usize..(off + len) as usize)
                        .copy_from_slice(&mem.region_bytes(region)[lo..hi]);
                }
            }
            b.unmap();
            Ok::<_, DeviceError>(b)
        })??;
        Ok(Some((buffer, copy)))
    }

    /// For `ranges` that move best by copy commands: a buffer of their own
    /// the host maps, the spans into it, and where each range's own bytes
    /// lie there.
    pub fn own_capture(&self, ranges: &[HostRange]) -> Result<Option<OwnCapture>, DeviceError> {
        let mut at = 0;
        let (copy, parts) = self.capture_spans(ranges, &mut at);
        if at == 0 || !super::batch::by_copies(&copy) {
            return Ok(None);
        }
        let gpu = self.gpu;
        let buffer = gpu.scoped(|| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("dma capture"),
                size: at,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        Ok(Some(OwnCapture {
            buffer,
            spans: copy,
            parts,
        }))
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
    /// out back to back in the staging buffer from byte `at`.
    fn copy_spans(&self, spans: &[(Region, usize, usize)], mut at: u64) -> Vec<Span> {
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
    pub fn download_ranges(
        &self,
        mem: &mut DeviceMemory,
        ranges: &[HostRange],
    ) -> Result<(), DeviceError> {
        self.check_arch(mem)?;
        let (spans, total) = self.spans(ranges);
        if total == 0 {
            return Ok(());
        }
        let bytes = read_spans(self.gpu, total, |enc, staging| {
            let mut at = 0;
            for &(region, lo, hi) in &spans {
                let from = region_base(region, self.arch) as u64 + lo as u64;
                enc.copy_buffer_to_buffer(&self.buf, from, staging, at, (hi - lo) as u64);
                at += (hi - lo) as u64;
            }
        })?;
        let mut at = 0;
        for &(region, lo, hi) in &spans {
            mem.region_bytes_mut(region)[lo..hi].copy_from_slice(&bytes[at..at + hi - lo]);
            at += hi - lo;
        }
        Ok(())
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

/// `r` widened to whole 4-byte words.
fn words(r: &HostRange) -> (usize, usize) {
    (r.bytes.start & !3, r.bytes.end.next_multiple_of(4))
}

/// Reads a whole buffer back to the host through a staging buffer.
pub fn read_buffer(gpu: &Gpu, buf: &wgpu::Buffer) -> Result<Vec<u8>, DeviceError> {
    let size = buf.size();
    read_spans(gpu, size, |enc, staging| {
        enc.copy_buffer_to_buffer(buf, 0, staging, 0, size)
    })
}

/// A capture's own buffer ([`GpuMemory::own_capture`]).
pub struct OwnCapture {
    /// The buffer the host maps.
    pub buffer: wgpu::Buffer,
    /// The spans into it.
    pub spans: Vec<Span>,
    /// Where each range's own bytes lie in it.
    pub parts: Vec<std::ops::Range<usize>>,
}

/// A staging buffer whose mapping was requested.
pub struct Staging {
    buf: wgpu::Buffer,
    mapped: std::sync::mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
}

impl Staging {
    /// Requests the mapping of `buf` (its copies must be submitted).
    pub fn map(buf: wgpu::Buffer) -> Staging {
        let (tx, mapped) = std::sync::mpsc::channel();
        buf.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        Staging { buf, mapped }
    }

    /// Its bytes; the device must have been waited for since it was started.
    pub fn take(self) -> Result<Vec<u8>, DeviceError> {
        match self.mapped.try_recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(DeviceError::Lost(format!("map_async: {e}"))),
            Err(_) => return Err(DeviceError::Lost("map_async never completed".into())),
        }
        let bytes = self
            .buf
            .get_mapped_range(..)
            .map_err(|e| DeviceError::Validation(format!("get_mapped_range: {e}")))?
            .to_vec();
        self.buf.unmap();
        Ok(bytes)
    }
}

/// Submits a copy of `size` bytes that `copy` gathers into a new staging
/// buffer, and requests its mapping; nothing waits.
fn start_spans(
    gpu: &Gpu,
    size: u64,
    copy: impl FnOnce(&mut wgpu::CommandEncoder, &wgpu::Buffer),
) -> Result<Staging, DeviceError> {
    let buf = gpu.scoped(|| {
        let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        copy(&mut enc, &staging);
        gpu.queue.submit([enc.finish()]);
        staging
    })?;
    Ok(Staging::map(buf))
}

/// Reads `size` bytes that `copy` gathers from `buf` into a staging buffer.
fn read_spans(
    gpu: &Gpu,
    size: u64,
    copy: impl FnOnce(&mut wgpu::CommandEncoder, &wgpu::Buffer),
) -> Result<Vec<u8>, DeviceError> {
    let staging = start_spans(gpu, size, copy)?;
    gpu.wait()?;
    staging.take()
}
