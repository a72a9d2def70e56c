//! A plain copy kernel: the reference that kernels' GB/s is read against.
//! Its pipeline comes from the same cache as every kernel's.

use super::context::{DeviceError, Gpu};
use super::kernels::{Kernels, PipelineKey, Shader, grid};
use super::shaders::program;
use super::timer::Timer;
use std::time::{Duration, Instant};

/// The benchmarks' reference copy kernel (its own buffers, no device memory).
pub const SHADER: Shader = program!("copy.wgsl", Derived, ["copy.wgsl"]);

/// The copy kernel's one pipeline.
pub fn key() -> PipelineKey {
    PipelineKey {
        shader: SHADER,
        entry: "copy",
        constants: Vec::new(),
    }
}

/// Two buffers of `bytes` and a pipeline that copies one into the other.
pub struct CopyKernel {
    gpu: Gpu,
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    grid: (u32, u32),
    bytes: u64,
}

impl CopyKernel {
    /// Allocates source and destination of `bytes` (rounded up to 16); the
    /// pipeline comes from `kernels`.
    pub fn new(kernels: &Kernels, bytes: u64) -> Result<CopyKernel, DeviceError> {
        let gpu = kernels.gpu();
        let bytes = bytes.div_ceil(16).max(1) * 16;
        let device = &gpu.device;
        let words = (bytes / 16) as u32;
        let (gx, gy) = grid(
            words as u64,
            device.limits().max_compute_workgroups_per_dimension,
        );
        let pipeline = kernels.pipeline(&key())?;
        gpu.scoped(|| {
            let buf = |label, usage| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: bytes,
                    usage,
                    mapped_at_creation: false,
                })
            };
            let src = buf("copy src", wgpu::BufferUsages::STORAGE);
            let dst = buf("copy dst", wgpu::BufferUsages::STORAGE);
            let params = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("copy params"),
                size: 16,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut p = [0u8; 16];
            p[0..4].copy_from_slice(&words.to_le_bytes());
            p[4..8].copy_from_slice(&gx.to_le_bytes());
            gpu.queue.write_buffer(&params, 0, &p);
            let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("copy"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: src.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: dst.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: params.as_entire_binding(),
                    },
                ],
            });
            CopyKernel {
                gpu: gpu.clone(),
                pipeline,
                bind,
                grid: (gx, gy),
                bytes,
            }
        })
    }

    /// Bytes copied per run.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// One copy: GPU time when timestamps exist, else wall time of submit + wait.
    pub fn run(&self) -> Result<Duration, DeviceError> {
        let timer = Timer::new(&self.gpu);
        let t0 = Instant::now();
        self.gpu.scoped(|| {
            let mut enc = self.gpu.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("copy"),
                    timestamp_writes: timer.as_ref().map(|t| t.writes()),
                });
                pass.set_pipeline(&self.pipeline);
                pass.set_bind_group(0, &self.bind, &[]);
                pass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
            }
            if let Some(t) = &timer {
                t.resolve(&mut enc);
            }
            self.gpu.queue.submit([enc.finish()]);
        })?;
        self.gpu.wait()?;
        let wall = t0.elapsed();
        match timer {
            Some(t) => t.read(&self.gpu),
            None => Ok(wall),
        }
    }

    /// The wall time of one empty submission (submit + wait), the floor under
    /// any record stream's time.
    pub fn empty_submit(gpu: &Gpu) -> Result<Duration, DeviceError> {
        let t0 = Instant::now();
        gpu.scoped(|| {
            let enc = gpu.device.create_command_encoder(&Default::default());
            gpu.queue.submit([enc.finish()]);
        })?;
        gpu.wait()?;
        Ok(t0.elapsed())
    }
}
