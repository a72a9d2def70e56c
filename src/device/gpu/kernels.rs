//! The kernel library: every WGSL program the device runs (each declared
//! by the file that encodes it, composed from the shared files in front of
//! its family's source, so a fix there reaches every kernel at once:
//! `shaders.rs`), and one pipeline cache keyed by (shader, entry point,
//! override constants) that serves every kernel, the benchmark's copy
//! kernel included.

use super::context::lock;
use super::context::{DeviceError, Gpu};
pub use super::pool::POOL_WGSL;
pub use super::shaders::Layout;
pub use super::types::{PARAMS_BYTES, PipelineKey, Shader, WORKGROUP, grid};

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

    /// The bind group layout of the spans program (`batch::SPANS`): binding 0 the memory as
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
        let layout = match key.shader.layout() {
            Layout::Spans => Some(&layouts.spans_pipeline),
            Layout::Memory => Some(&layouts.memory_pipeline),
            Layout::Derived => None,
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
