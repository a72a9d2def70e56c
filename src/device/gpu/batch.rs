//! Running a batch of kernel dispatches on device memory: one parameter
//! buffer and one bind group for the whole batch, one compute pass, one
//! submission per [`DISPATCHES_PER_SUBMIT`] dispatches. Dispatches run in
//! order, each complete before the next starts: wgpu orders the dispatches
//! of a pass that share a writable buffer.

use super::context::DeviceError;
use super::kernels::{Kernels, PARAMS_BYTES, PipelineKey};
use super::memory::GpuMemory;
use super::timer::Timer;
use crate::limits::Arch;
use std::time::Duration;

/// Most dispatches recorded into one submission; longer batches are split.
pub const DISPATCHES_PER_SUBMIT: usize = 16_384;

/// What a kernel family's encoder needs to know of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeCx {
    /// The generation of the device memory.
    pub arch: Arch,
    /// The adapter's most workgroups per grid dimension.
    pub max_x: u32,
    /// Pool's `pool_rows`: most runs of 4 outputs per invocation
    /// ([`super::params::rows_max_chunks`]).
    pub rows_max_chunks: u32,
    /// Pool AVG: add in integer arithmetic (`ADD_BY_BITS`,
    /// [`super::params::add_by_bits`]).
    pub add_by_bits: bool,
}

/// One kernel dispatch, encoded: its pipeline, its parameter block (at most
/// [`PARAMS_BYTES`]) and its grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// The pipeline.
    pub key: PipelineKey,
    /// The parameter block's bytes.
    pub params: Vec<u8>,
    /// Workgroups along x and y.
    pub grid: (u32, u32),
}

/// Runs `dispatches` in order on `memory`. Returns the GPU time when
/// timestamp queries are available.
pub fn run(
    kernels: &Kernels,
    memory: &GpuMemory,
    dispatches: &[Dispatch],
) -> Result<Option<Duration>, DeviceError> {
    let mut gpu_time: Option<Duration> = None;
    for chunk in dispatches.chunks(DISPATCHES_PER_SUBMIT) {
        if let Some(t) = submit(kernels, memory, chunk)? {
            *gpu_time.get_or_insert(Duration::ZERO) += t;
        }
    }
    Ok(gpu_time)
}

fn submit(
    kernels: &Kernels,
    memory: &GpuMemory,
    dispatches: &[Dispatch],
) -> Result<Option<Duration>, DeviceError> {
    let gpu = kernels.gpu();
    let device = &gpu.device;
    let align = device.limits().min_uniform_buffer_offset_alignment as u64;
    let stride = PARAMS_BYTES.div_ceil(align) * align;
    let mut blob = vec![0u8; (stride as usize) * dispatches.len().max(1)];
    let mut pipelines = Vec::with_capacity(dispatches.len());
    for (i, d) in dispatches.iter().enumerate() {
        debug_assert!(d.params.len() as u64 <= PARAMS_BYTES);
        let at = i * stride as usize;
        blob[at..at + d.params.len()].copy_from_slice(&d.params);
        pipelines.push(kernels.pipeline(&d.key)?);
    }
    let timer = Timer::new(gpu);
    gpu.scoped(|| {
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("kernel params"),
            size: blob.len() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        gpu.queue.write_buffer(&params, 0, &blob);
        let mem = memory.buffer();
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("device memory"),
            layout: kernels.memory_layout(),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: mem.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: mem.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &params,
                        offset: 0,
                        size: wgpu::BufferSize::new(PARAMS_BYTES),
                    }),
                },
            ],
        });
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("records"),
                timestamp_writes: timer.as_ref().map(|t| t.writes()),
            });
            for (i, (pipeline, d)) in pipelines.iter().zip(dispatches).enumerate() {
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, &bind, &[(i as u64 * stride) as u32]);
                // One layer: the shaders' `opaque` relies on workgroup_id.z == 0.
                pass.dispatch_workgroups(d.grid.0, d.grid.1, 1);
            }
        }
        if let Some(t) = &timer {
            t.resolve(&mut enc);
        }
        gpu.queue.submit([enc.finish()]);
    })?;
    gpu.wait()?;
    match timer {
        Some(t) => t.read(gpu).map(Some),
        None => Ok(None),
    }
}
