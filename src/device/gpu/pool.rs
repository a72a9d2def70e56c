//! Running Pool and MaxPoolSelect on a device: memory upload at the start of
//! a run, one submission for a batch of records, readback at the end.

use super::context::{DeviceError, Gpu};
use super::params::{
    PoolParams, Variant, WORKGROUP, memory_bytes, pack, region_base, rows_max_chunks,
};
use crate::device::memory::DeviceMemory;
use crate::device::pool::PoolOp;
use crate::isa::tensor::Region;
use crate::limits::{Arch, PARTITIONS};
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

/// The Pool kernel (`include_str!`, never generated text).
pub const POOL_WGSL: &str = include_str!("../../../shaders/pool.wgsl");

/// Most records recorded into one submission; longer batches are split.
const RECORDS_PER_SUBMIT: usize = 16_384;

/// The emulated SBUF and PSUM on a GPU, with the Pool pipeline.
pub struct GpuPool<'g> {
    gpu: &'g Gpu,
    arch: Arch,
    module: wgpu::ShaderModule,
    pipeline_layout: wgpu::PipelineLayout,
    /// One pipeline per variant, compiled on first use.
    pipelines: RefCell<HashMap<Variant, wgpu::ComputePipeline>>,
    layout: wgpu::BindGroupLayout,
    mem: wgpu::Buffer,
    params_stride: u64,
    rows_max_chunks: u32,
}

impl<'g> GpuPool<'g> {
    /// Compiles the kernel and allocates zeroed memory for `arch`.
    pub fn new(gpu: &'g Gpu, arch: Arch) -> Result<GpuPool<'g>, DeviceError> {
        let device = &gpu.device;
        let bytes = memory_bytes(arch);
        let limits = device.limits();
        if bytes > limits.max_storage_buffer_binding_size || bytes > limits.max_buffer_size {
            return Err(DeviceError::OutOfMemory(format!(
                "{bytes} bytes of SBUF+PSUM exceed the adapter's storage binding limit ({})",
                limits.max_storage_buffer_binding_size
            )));
        }
        gpu.scoped(|| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("pool.wgsl"),
                source: wgpu::ShaderSource::Wgsl(POOL_WGSL.into()),
            });
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("pool"),
                entries: &[
                    storage_entry(0),
                    storage_entry(2),
                    wgpu::BindGroupLayoutEntry {
                        binding: 1,
                        visibility: wgpu::ShaderStages::COMPUTE,
                        ty: wgpu::BindingType::Buffer {
                            ty: wgpu::BufferBindingType::Uniform,
                            has_dynamic_offset: true,
                            min_binding_size: wgpu::BufferSize::new(size_of::<PoolParams>() as u64),
                        },
                        count: None,
                    },
                ],
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("pool"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let mem = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("sbuf+psum"),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let align = limits.min_uniform_buffer_offset_alignment as u64;
            GpuPool {
                gpu,
                arch,
                module,
                pipeline_layout,
                pipelines: RefCell::default(),
                layout,
                mem,
                params_stride: (size_of::<PoolParams>() as u64).div_ceil(align) * align,
                rows_max_chunks: rows_max_chunks(gpu.adapter.device_type),
            }
        })
    }

    /// Compiles (once) the pipeline of `v`.
    fn pipeline(&self, v: Variant) -> Result<wgpu::ComputePipeline, DeviceError> {
        if let Some(p) = self.pipelines.borrow().get(&v) {
            return Ok(p.clone());
        }
        let constants = [
            ("OP", v.op as f64),
            ("IN_DTYPE", v.in_dtype as f64),
            ("OUT_DTYPE", v.out_dtype as f64),
            ("DST_RUN", v.dst_run as f64),
            ("WIN_ROWS", v.win_rows as f64),
        ];
        let p = self.gpu.scoped(|| {
            self.gpu
                .device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some("pool"),
                    layout: Some(&self.pipeline_layout),
                    module: &self.module,
                    entry_point: Some(v.entry_point()),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &constants,
                        zero_initialize_workgroup_memory: false,
                    },
                    cache: None,
                })
        })?;
        self.pipelines.borrow_mut().insert(v, p.clone());
        Ok(p)
    }

    /// The parameters of `op` for this adapter.
    pub fn params(&self, op: &PoolOp) -> PoolParams {
        PoolParams::new(op, self.arch, self.rows_max_chunks)
    }

    /// Overrides how many runs of 4 outputs a `pool_rows` invocation folds
    /// at most (1, 2 or 4; the adapter's [`rows_max_chunks`] by default):
    /// for tests that run the other adapters' choice, and for tuning.
    pub fn set_rows_max_chunks(&mut self, max: u32) {
        self.rows_max_chunks = max;
    }

    /// The generation this memory was laid out for.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The memory buffer (SBUF then PSUM), for kernels that share it.
    pub fn memory_buffer(&self) -> &wgpu::Buffer {
        &self.mem
    }

    /// Copies all of `mem` to the GPU.
    pub fn upload(&self, mem: &DeviceMemory) -> Result<(), DeviceError> {
        assert_eq!(mem.arch(), self.arch, "memory of another generation");
        self.gpu
            .scoped(|| self.gpu.queue.write_buffer(&self.mem, 0, &pack(mem)))?;
        Ok(())
    }

    /// Copies the GPU's SBUF and PSUM back into `mem`.
    pub fn download(&self, mem: &mut DeviceMemory) -> Result<(), DeviceError> {
        assert_eq!(mem.arch(), self.arch, "memory of another generation");
        let bytes = read_buffer(self.gpu, &self.mem)?;
        let split = (PARTITIONS * Region::Sbuf.active_bytes(self.arch)) as usize;
        debug_assert_eq!(region_base(Region::Psum, self.arch) as usize, split);
        mem.region_bytes_mut(Region::Sbuf)
            .copy_from_slice(&bytes[..split]);
        mem.region_bytes_mut(Region::Psum)
            .copy_from_slice(&bytes[split..]);
        Ok(())
    }

    /// Runs records (as parameter blocks of validated ops) in order, each
    /// complete before the next starts: wgpu orders the dispatches of a pass
    /// that share a writable buffer. Returns the GPU time when timestamp
    /// queries are available.
    pub fn run(&self, records: &[PoolParams]) -> Result<Option<Duration>, DeviceError> {
        let mut gpu_time: Option<Duration> = None;
        for chunk in records.chunks(RECORDS_PER_SUBMIT) {
            if let Some(t) = self.submit(chunk)? {
                *gpu_time.get_or_insert(Duration::ZERO) += t;
            }
        }
        Ok(gpu_time)
    }

    fn submit(&self, records: &[PoolParams]) -> Result<Option<Duration>, DeviceError> {
        let device = &self.gpu.device;
        let max_x = device.limits().max_compute_workgroups_per_dimension;
        let mut blob = vec![0u8; self.params_stride as usize * records.len().max(1)];
        let mut grids = Vec::with_capacity(records.len());
        for (i, r) in records.iter().enumerate() {
            let mut p = *r;
            let groups = p.invocations().div_ceil(WORKGROUP as u64);
            let gx = groups.min(max_x as u64) as u32;
            let gy = groups.div_ceil(gx.max(1) as u64) as u32;
            p.groups_x = gx;
            let at = i * self.params_stride as usize;
            blob[at..at + size_of::<PoolParams>()].copy_from_slice(bytemuck::bytes_of(&p));
            grids.push((self.pipeline(p.variant())?, gx, gy));
        }
        let timer = Timer::new(self.gpu);
        self.gpu.scoped(|| {
            let params = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("pool params"),
                size: blob.len() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.gpu.queue.write_buffer(&params, 0, &blob);
            let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("pool"),
                layout: &self.layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: self.mem.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: self.mem.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: &params,
                            offset: 0,
                            size: wgpu::BufferSize::new(size_of::<PoolParams>() as u64),
                        }),
                    },
                ],
            });
            let mut enc = device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("pool"),
                    timestamp_writes: timer.as_ref().map(|t| t.writes()),
                });
                for (i, (pipeline, gx, gy)) in grids.iter().enumerate() {
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, &bind, &[(i as u64 * self.params_stride) as u32]);
                    // One layer: the shader's `opaque` relies on workgroup_id.z == 0.
                    pass.dispatch_workgroups(*gx, *gy, 1);
                }
            }
            if let Some(t) = &timer {
                t.resolve(&mut enc);
            }
            self.gpu.queue.submit([enc.finish()]);
        })?;
        self.gpu.wait()?;
        match timer {
            Some(t) => t.read(self.gpu).map(Some),
            None => Ok(None),
        }
    }
}

fn storage_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: false },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Reads a whole buffer back to the host through a staging buffer.
pub fn read_buffer(gpu: &Gpu, buf: &wgpu::Buffer) -> Result<Vec<u8>, DeviceError> {
    let size = buf.size();
    let staging = gpu.scoped(|| {
        let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(buf, 0, &staging, 0, size);
        gpu.queue.submit([enc.finish()]);
        staging
    })?;
    let (tx, rx) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    gpu.wait()?;
    match rx.try_recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(DeviceError::Lost(format!("map_async: {e}"))),
        Err(_) => return Err(DeviceError::Lost("map_async never completed".into())),
    }
    let bytes = staging
        .get_mapped_range(..)
        .map_err(|e| DeviceError::Validation(format!("get_mapped_range: {e}")))?
        .to_vec();
    staging.unmap();
    Ok(bytes)
}

/// GPU timestamps around one compute pass, when the device has them.
pub struct Timer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
}

impl Timer {
    /// A timer, or `None` without timestamp queries.
    pub fn new(gpu: &Gpu) -> Option<Timer> {
        if !gpu.timestamps {
            return None;
        }
        let set = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass time"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Some(Timer { set, resolve })
    }

    /// The pass descriptor's timestamp writes.
    pub fn writes(&self) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        }
    }

    /// Records the query resolve after the pass.
    pub fn resolve(&self, enc: &mut wgpu::CommandEncoder) {
        enc.resolve_query_set(&self.set, 0..2, &self.resolve, 0);
    }

    /// The pass's duration (after the submission completed).
    pub fn read(&self, gpu: &Gpu) -> Result<Duration, DeviceError> {
        let b = read_buffer(gpu, &self.resolve)?;
        let t0 = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
        let t1 = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes"));
        let ns = t1.saturating_sub(t0) as f64 * gpu.queue.get_timestamp_period() as f64;
        Ok(Duration::from_nanos(ns as u64))
    }
}
