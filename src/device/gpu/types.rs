//! The leaf of the GPU backend: the plain types and layout facts the other
//! files share, using none of theirs but the program table ([`Shader`],
//! from `shaders.rs`) — where SBUF, PSUM and held DRAM sit in
//! the memory buffer ([`region_base`], [`memory_bytes`]), a [`Span`] the
//! host's bytes move along, and what an encoder knows of the device
//! ([`EncodeCx`], made by [`EncodeCx::of`] in [`super::tuning`]), what
//! names a compiled pipeline ([`Shader`], [`PipelineKey`]; the device's
//! pipeline cache is keyed by them), an encoded [`Dispatch`] and the grid
//! it runs on, and [`GpuKernel`], what each op's family implements.

pub use super::shaders::Shader;
use crate::isa::tensor::Region;
use crate::limits::{Arch, PARTITIONS};

/// Byte offset of a region's partition 0 in the GPU memory buffer: SBUF, then PSUM.
pub fn region_base(region: Region, arch: Arch) -> u32 {
    match region {
        Region::Sbuf => 0,
        Region::Psum => PARTITIONS * Region::Sbuf.active_bytes(arch),
    }
}

/// Bytes of SBUF and PSUM in the GPU memory buffer for `arch`: where held
/// DRAM starts.
pub fn memory_bytes(arch: Arch) -> u64 {
    PARTITIONS as u64 * (Region::Sbuf.active_bytes(arch) + Region::Psum.active_bytes(arch)) as u64
}

/// A span the host's bytes move along: `(memory byte, staging byte,
/// bytes)`, all multiples of 4.
pub type Span = (u64, u64, u64);

/// What a kernel family's encoder needs to know of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeCx {
    /// The generation of the device memory.
    pub arch: Arch,
    /// The adapter's most workgroups per grid dimension.
    pub max_x: u32,
    /// Pool's `pool_rows`: most runs of 4 outputs per invocation
    /// (`tuning::rows_max_chunks`).
    pub rows_max_chunks: u32,
    /// Pool AVG: add in integer arithmetic (`ADD_BY_BITS`,
    /// `tuning::add_by_bits`).
    pub add_by_bits: bool,
    /// Elementwise row path: most positions per invocation
    /// (`tuning::row_per_max`).
    pub row_per_max: u32,
    /// CrossLaneReduce: most vec4s per lane per invocation (1 or 4,
    /// `tuning::clr_quads_max`).
    pub clr_quads_max: u32,
    /// The most loop iterations one invocation may make
    /// (`tuning::loop_budget`); `None`: no limit.
    pub loop_budget: Option<u64>,
}

/// What identifies a compiled pipeline: the program, the entry point and
/// the values of its override constants.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PipelineKey {
    /// The program.
    pub shader: Shader,
    /// The entry point.
    pub entry: &'static str,
    /// Override constants by name.
    pub constants: Vec<(&'static str, u32)>,
}

/// Bytes of every kernel's parameter block as bound (binding 1): each
/// kernel's `Params` struct fits in it.
pub const PARAMS_BYTES: u64 = 256;

/// Invocations per workgroup of every kernel (`WORKGROUP` in memory.wgsl).
pub const WORKGROUP: u32 = 64;

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

/// A device op's GPU kernel: one impl per op, in its family's file
/// (`pool.rs`, `elementwise.rs`, `lane_kernels.rs`), which also declares its
/// programs (`shaders::program!`). The executor's encode match and the
/// lists of every program and pipeline (`test_support`) are made from the
/// op registry.
pub trait GpuKernel {
    /// The programs its dispatches run.
    const SHADERS: &'static [Shader];
    /// The op as one dispatch on device memory of `cx`'s device.
    fn encode(&self, cx: &EncodeCx) -> Dispatch;
    /// Every pipeline [`GpuKernel::encode`] can ask for, or a covering set
    /// (`elementwise::variants`).
    fn variants() -> Vec<PipelineKey>;
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
