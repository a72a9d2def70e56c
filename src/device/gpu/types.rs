//! The leaf of the GPU backend: the plain types and layout facts the other
//! files share, using none of theirs but the program table ([`Shader`],
//! from `shaders.rs`) — where SBUF, PSUM and held DRAM sit in
//! the memory buffer ([`region_base`], [`memory_bytes`]), a [`Span`] the
//! host's bytes move along, and what an encoder knows of the device
//! ([`EncodeCx`], made by [`EncodeCx::of`] in [`super::tuning`]), and what
//! names a compiled pipeline ([`Shader`], [`PipelineKey`]; the device's
//! pipeline cache is keyed by them).

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
