//! The kernel library: every WGSL program the device runs (composed in
//! `shaders.rs`, one row per program, from the shared files in front
//! of each kernel family's source, so a fix there reaches every kernel at
//! once), and one pipeline cache keyed by (shader, entry point, override
//! constants) that serves every kernel, the benchmark's copy kernel
//! included.

use super::context::lock;
use super::context::{DeviceError, Gpu};
pub use super::shaders::{
    CAST_WGSL, COPY_WGSL, CROSS_LANE_WGSL, DMA_WGSL, IOTA_WGSL, NONZERO_WGSL, POOL_WGSL,
    SEQ_BOUNDS_WGSL, SPANS_WGSL, TENSOR_TENSOR_WGSL,
};
pub use super::types::{PARAMS_BYTES, PipelineKey, Shader};

/// Invocations per workgroup of every kernel (`WORKGROUP` in memory.wgsl).
pub const WORKGROUP: u32 = 64;

/// The kernel library of one device: its programs and pipelines, compiled
/// on first use into the device's one cache ([`Gpu`] holds it behind a
/// lock, shared by every executor and handle on the device). A cheap handle:
/// cloning it clones the [`Gpu`] handle.
#[derive(Clone, Debug)]
pub struct Kernels {
    gpu: Gpu,
}

impl Kernels {
    /// The library of `gpu`'s device: the shared device-memory layout and
    /// its pipeline cache. Every `Kernels` of one device shares them.
    pub fn new(gpu: &Gpu) -> Result<Kernels, DeviceError> {
        gpu.check_lost()?;
        Ok(Kernels { gpu: gpu.clone() })
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The bind group layout of every kernel that runs on device memory.
    pub fn memory_layout(&self) -> &wgpu::BindGroupLayout {
        &self.gpu.layouts().memory
    }

    /// The bind group layout of [`Shader::Spans`]: binding 0 the memory as
    /// u32 words, 1 the parameter block (dynamic offset), 3 the batch's
    /// staging words, 4 its spans.
    pub fn spans_layout(&self) -> &wgpu::BindGroupLayout {
        &self.gpu.layouts().spans
    }

    fn module(&self, shader: Shader) -> Result<wgpu::ShaderModule, DeviceError> {
        let cache = self.gpu.cache();
        if let Some(m) = lock(&cache.modules).get(&shader) {
            return Ok(m.clone());
        }
        // Compiled outside the lock: two threads may both compile a module
        // the first time; the first one in the cache wins.
        let m = self
            .gpu
            .scoped(|| {
                self.gpu
                    .device
                    .create_shader_module(wgpu::ShaderModuleDescriptor {
                        label: Some(shader.label()),
                        source: wgpu::ShaderSource::Wgsl(shader.source().into()),
                    })
            })
            .map_err(|e| self.compile_error(shader, "(module)", e))?;
        Ok(lock(&cache.modules).entry(shader).or_insert(m).clone())
    }

    /// The pipeline of `key`, compiled once per device.
    pub fn pipeline(&self, key: &PipelineKey) -> Result<wgpu::ComputePipeline, DeviceError> {
        let cache = self.gpu.cache();
        if let Some(p) = lock(&cache.pipelines).get(key) {
            return Ok(p.clone());
        }
        let module = self.module(key.shader)?;
        let constants: Vec<(&str, f64)> =
            key.constants.iter().map(|&(n, v)| (n, v as f64)).collect();
        let layouts = self.gpu.layouts();
        let layout = match key.shader {
            Shader::Spans => Some(&layouts.spans_pipeline),
            s if s.binds_device_memory() => Some(&layouts.memory_pipeline),
            _ => None,
        };
        let p = self.gpu.scoped(|| {
            self.gpu
                .device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(key.entry),
                    layout,
                    module: &module,
                    entry_point: Some(key.entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &constants,
                        zero_initialize_workgroup_memory: false,
                    },
                    cache: None,
                })
        });
        let p = p.map_err(|e| self.compile_error(key.shader, key.entry, e))?;
        Ok(lock(&cache.pipelines)
            .entry(key.clone())
            .or_insert(p)
            .clone())
    }

    /// A failure while compiling `shader`'s `entry` as its own error: some
    /// backends (GL) report a shader the driver rejects as a lost device.
    fn compile_error(&self, shader: Shader, entry: &'static str, e: DeviceError) -> DeviceError {
        match e {
            DeviceError::Validation(message) | DeviceError::Lost(message) => {
                DeviceError::Pipeline {
                    shader: shader.label(),
                    entry,
                    backend: self.gpu.adapter.backend.clone(),
                    message,
                }
            }
            other => other,
        }
    }

    /// Pipelines compiled so far on this device.
    pub fn compiled(&self) -> usize {
        lock(&self.gpu.cache().pipelines).len()
    }
}

/// Whether a walk over `num`/`step` (elements, dim 0 fastest) visits
/// consecutive elements: position k is element k.
pub(crate) fn in_order(num: [u32; 4], step: [i32; 4]) -> bool {
    let mut span = 1i64;
    for d in 0..4 {
        if num[d] > 1 && step[d] as i64 != span {
            return false;
        }
        span *= num[d] as i64;
    }
    true
}

/// The 2-D grid of workgroups for `invocations`: rows of at most `max_x`
/// workgroups (the kernel reads the row length from its parameters).
pub fn grid(invocations: u64, max_x: u32) -> (u32, u32) {
    let groups = invocations.div_ceil(WORKGROUP as u64);
    let gx = groups.min(max_x as u64).max(1) as u32;
    let gy = groups.div_ceil(gx as u64) as u32;
    (gx, gy)
}
