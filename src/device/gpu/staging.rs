//! Host-visible staging buffers, kept for reuse.
//!
//! A fresh mapped buffer costs the host a page fault per page the first
//! time it is touched: on lavapipe, whose buffers are host memory, that is
//! about as long as copying the bytes. So uploads go through a
//! [`wgpu::util::StagingBelt`] (its chunks are mapped again for writing once
//! the GPU has copied from them) and read-backs through a [`ReadPool`] of
//! `MAP_READ` buffers handed back after the host has read them. Both live as
//! long as the device memory they serve, so a machine run again and again
//! touches the same pages. The cost is memory held: the belt keeps every
//! chunk it made (at most what was in flight at once: `pool2d` on a
//! 1×128×720×720 map on lavapipe peaked 22 MB higher, one band's upload),
//! the pool at most `KEEP_BUFFERS` buffers and `KEEP_BYTES` bytes.

use super::context::{DeviceError, Gpu};
use std::sync::Mutex;
use std::sync::mpsc::Receiver;

/// Read-back buffers kept for reuse at most.
const KEEP_BUFFERS: usize = 8;
/// Bytes of read-back buffers kept for reuse at most.
const KEEP_BYTES: u64 = 512 << 20;
/// Read-back buffers of at least this many bytes are made in multiples of
/// it, so that sizes that differ a little share buffers; smaller ones are
/// a power of two of at least [`SMALLEST`] bytes (a small DMA's capture
/// must not hold a large buffer until it is collected).
const GRAIN: u64 = 64 << 10;
/// The smallest read-back buffer.
const SMALLEST: u64 = 256;
/// Sub-allocation unit of the upload belt: smaller uploads share a chunk,
/// a larger one gets a chunk of its own size (kept for the next as large).
pub(crate) const UPLOAD_CHUNK: u64 = 1 << 20;

/// `MAP_READ | COPY_DST` buffers the host has finished reading.
#[derive(Debug, Default)]
pub(crate) struct ReadPool {
    free: Mutex<Vec<wgpu::Buffer>>,
}

impl ReadPool {
    /// A buffer of at least `size` bytes to copy into and map for reading:
    /// the smallest free one that is at most twice as large, or a new one.
    pub(crate) fn take(&self, gpu: &Gpu, size: u64) -> Result<wgpu::Buffer, DeviceError> {
        let size = if size >= GRAIN {
            size.next_multiple_of(GRAIN)
        } else {
            size.max(SMALLEST).next_power_of_two()
        };
        {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            let best = (free.iter().enumerate())
                .filter(|(_, b)| b.size() >= size && b.size() <= 2 * size)
                .min_by_key(|(_, b)| b.size())
                .map(|(i, _)| i);
            if let Some(i) = best {
                return Ok(free.swap_remove(i));
            }
        }
        gpu.scoped(|| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// Keeps `buf` (unmapped) for a later [`ReadPool::take`]; the oldest
    /// go when more than `KEEP_BUFFERS` buffers or `KEEP_BYTES` bytes are kept.
    pub(crate) fn give_back(&self, buf: wgpu::Buffer) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        free.push(buf);
        while free.len() > KEEP_BUFFERS || free.iter().map(|b| b.size()).sum::<u64>() > KEEP_BYTES {
            free.remove(0);
        }
    }
}

/// A read-back buffer whose first `size` bytes' mapping was requested.
pub(crate) struct Staging {
    buf: wgpu::Buffer,
    size: u64,
    mapped: Receiver<Result<(), wgpu::BufferAsyncError>>,
}

impl Staging {
    /// Requests the mapping of `buf`'s first `size` bytes (the copies into
    /// them must be submitted).
    pub(crate) fn map(buf: wgpu::Buffer, size: u64) -> Staging {
        let size = size.max(4);
        let (tx, mapped) = std::sync::mpsc::channel();
        buf.map_async(wgpu::MapMode::Read, ..size, move |r| {
            let _ = tx.send(r);
        });
        Staging { buf, size, mapped }
    }

    /// Its mapped bytes; the device must have been waited for since it was
    /// started.
    pub(crate) fn open(self) -> Result<Mapped, DeviceError> {
        match self.mapped.try_recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(DeviceError::Lost(format!("map_async: {e}"))),
            Err(_) => return Err(DeviceError::Lost("map_async never completed".into())),
        }
        let view = self
            .buf
            .get_mapped_range(..self.size)
            .map_err(|e| DeviceError::Validation(format!("get_mapped_range: {e}")))?;
        Ok(Mapped {
            view,
            buf: self.buf,
        })
    }
}

/// A read-back buffer's mapped bytes.
pub(crate) struct Mapped {
    view: wgpu::BufferView,
    buf: wgpu::Buffer,
}

impl Mapped {
    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.view
    }

    /// Unmaps the buffer and gives it back to `pool`.
    pub(crate) fn release(self, pool: &ReadPool) {
        drop(self.view);
        self.buf.unmap();
        pool.give_back(self.buf);
    }
}

/// Reads a whole buffer back to the host through a staging buffer.
pub(crate) fn read_buffer(gpu: &Gpu, buf: &wgpu::Buffer) -> Result<Vec<u8>, DeviceError> {
    let size = buf.size();
    read_spans(
        gpu,
        &ReadPool::default(),
        size,
        |enc, staging| enc.copy_buffer_to_buffer(buf, 0, staging, 0, size),
        |b| b.to_vec(),
    )
}

/// Hands `read` the `size` bytes that `copy` gathers into a staging buffer
/// of `pool`: one submission, one wait.
pub(super) fn read_spans<T>(
    gpu: &Gpu,
    pool: &ReadPool,
    size: u64,
    copy: impl FnOnce(&mut wgpu::CommandEncoder, &wgpu::Buffer),
    read: impl FnOnce(&[u8]) -> T,
) -> Result<T, DeviceError> {
    let buf = pool.take(gpu, size)?;
    let buf = gpu.scoped(|| {
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        copy(&mut enc, &buf);
        gpu.queue.submit([enc.finish()]);
        buf
    })?;
    let staging = Staging::map(buf, size);
    gpu.wait()?;
    let mapped = staging.open()?;
    let out = read(mapped.bytes());
    mapped.release(pool);
    Ok(out)
}
