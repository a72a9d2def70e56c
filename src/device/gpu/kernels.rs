//! The kernel library: every WGSL program the device runs, composed from the
//! shared files, and one pipeline cache keyed by (shader, entry point,
//! override constants) that serves every kernel, the benchmark's copy
//! kernel included.
//!
//! The shared files are composed in front of each kernel family's source
//! (`concat!` of `include_str!`s, never generated text): `memory.wgsl` (the
//! device memory bindings and the grid), `convert.wgsl` (SPEC §6 loads,
//! EC-13 stores, EC-19, EC-20), `arith.wgsl` (f32 add and multiply in
//! integer arithmetic) and `walk.wgsl` (coordinates), so a fix there
//! reaches every kernel at once.

use super::context::lock;
use super::context::{DeviceError, Gpu};
pub use super::types::{PARAMS_BYTES, PipelineKey, Shader};

/// The Pool/MaxPoolSelect program: the shared files, then `shaders/pool.wgsl`.
pub const POOL_WGSL: &str = concat!(
    include_str!("../../../shaders/memory.wgsl"),
    include_str!("../../../shaders/convert.wgsl"),
    include_str!("../../../shaders/arith.wgsl"),
    include_str!("../../../shaders/walk.wgsl"),
    include_str!("../../../shaders/pool.wgsl"),
);

/// Copy and Cast: the shared files, `elementwise.wgsl`, then `cast.wgsl`.
pub const CAST_WGSL: &str = concat!(
    include_str!("../../../shaders/memory.wgsl"),
    include_str!("../../../shaders/convert.wgsl"),
    include_str!("../../../shaders/walk.wgsl"),
    include_str!("../../../shaders/elementwise.wgsl"),
    include_str!("../../../shaders/cast.wgsl"),
);

/// Iota: the shared files, `elementwise.wgsl`, then `iota.wgsl`.
pub const IOTA_WGSL: &str = concat!(
    include_str!("../../../shaders/memory.wgsl"),
    include_str!("../../../shaders/convert.wgsl"),
    include_str!("../../../shaders/walk.wgsl"),
    include_str!("../../../shaders/elementwise.wgsl"),
    include_str!("../../../shaders/iota.wgsl"),
);

/// Tensor-Tensor: the shared files, `elementwise.wgsl`, then
/// `tensor_tensor.wgsl`.
pub const TENSOR_TENSOR_WGSL: &str = concat!(
    include_str!("../../../shaders/memory.wgsl"),
    include_str!("../../../shaders/convert.wgsl"),
    include_str!("../../../shaders/arith.wgsl"),
    include_str!("../../../shaders/walk.wgsl"),
    include_str!("../../../shaders/elementwise.wgsl"),
    include_str!("../../../shaders/tensor_tensor.wgsl"),
);

/// CrossLaneReduce: the shared files, `lane_walk.wgsl`, then `cross_lane.wgsl`.
pub const CROSS_LANE_WGSL: &str = concat!(
    include_str!("../../../shaders/memory.wgsl"),
    include_str!("../../../shaders/convert.wgsl"),
    include_str!("../../../shaders/arith.wgsl"),
    include_str!("../../../shaders/walk.wgsl"),
    include_str!("../../../shaders/lane_walk.wgsl"),
    include_str!("../../../shaders/cross_lane.wgsl"),
);

/// NonzeroWithCount: the shared files, `lane_walk.wgsl`, then `nonzero.wgsl`.
pub const NONZERO_WGSL: &str = concat!(
    include_str!("../../../shaders/memory.wgsl"),
    include_str!("../../../shaders/convert.wgsl"),
    include_str!("../../../shaders/walk.wgsl"),
    include_str!("../../../shaders/lane_walk.wgsl"),
    include_str!("../../../shaders/nonzero.wgsl"),
);

/// GetSequenceBounds: the shared files, `lane_walk.wgsl`, then `seq_bounds.wgsl`.
pub const SEQ_BOUNDS_WGSL: &str = concat!(
    include_str!("../../../shaders/memory.wgsl"),
    include_str!("../../../shaders/convert.wgsl"),
    include_str!("../../../shaders/walk.wgsl"),
    include_str!("../../../shaders/lane_walk.wgsl"),
    include_str!("../../../shaders/seq_bounds.wgsl"),
);

/// On-chip DMAs: the shared memory and conversion files, then `dma.wgsl`.
pub const DMA_WGSL: &str = concat!(
    include_str!("../../../shaders/memory.wgsl"),
    include_str!("../../../shaders/convert.wgsl"),
    include_str!("../../../shaders/dma.wgsl"),
);

/// The host's spans (a DMA's bytes up, captures down): `spans.wgsl` alone
/// (device memory as plain words, binding 0 of [`Kernels::spans_layout`]).
pub const SPANS_WGSL: &str = include_str!("../../../shaders/spans.wgsl");

/// The benchmarks' reference copy kernel (its own buffers, no device memory).
pub const COPY_WGSL: &str = include_str!("../../../shaders/copy.wgsl");

/// Invocations per workgroup of every kernel (`WORKGROUP` in memory.wgsl).
pub const WORKGROUP: u32 = 64;

impl Shader {
    /// The composed source.
    pub fn source(self) -> &'static str {
        match self {
            Shader::Pool => POOL_WGSL,
            Shader::Copy => COPY_WGSL,
            Shader::Cast => CAST_WGSL,
            Shader::Iota => IOTA_WGSL,
            Shader::TensorTensor => TENSOR_TENSOR_WGSL,
            Shader::CrossLane => CROSS_LANE_WGSL,
            Shader::Nonzero => NONZERO_WGSL,
            Shader::SeqBounds => SEQ_BOUNDS_WGSL,
            Shader::Dma => DMA_WGSL,
            Shader::Spans => SPANS_WGSL,
        }
    }

    /// Its name in labels and errors.
    pub fn label(self) -> &'static str {
        match self {
            Shader::Pool => "pool.wgsl",
            Shader::Copy => "copy.wgsl",
            Shader::Cast => "cast.wgsl",
            Shader::Iota => "iota.wgsl",
            Shader::TensorTensor => "tensor_tensor.wgsl",
            Shader::CrossLane => "cross_lane.wgsl",
            Shader::Nonzero => "nonzero.wgsl",
            Shader::SeqBounds => "seq_bounds.wgsl",
            Shader::Dma => "dma.wgsl",
            Shader::Spans => "spans.wgsl",
        }
    }

    /// Whether the program binds device memory with the shared layout
    /// ([`Kernels::memory_layout`]); otherwise its layout is derived from
    /// the shader.
    pub fn binds_device_memory(self) -> bool {
        !matches!(self, Shader::Copy)
    }
}

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
