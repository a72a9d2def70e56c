//! The leaf of the GPU backend: the plain types and layout facts the other
//! files share, using none of theirs — where SBUF, PSUM and held DRAM sit in
//! the memory buffer ([`region_base`], [`memory_bytes`]), a [`Span`] the
//! host's bytes move along, and what an encoder knows of the device
//! ([`EncodeCx`], made by [`EncodeCx::of`] in [`super::tuning`]), and what
//! names a compiled pipeline ([`Shader`], [`PipelineKey`]; the device's
//! pipeline cache is keyed by them).

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
    /// ([`super::tuning::rows_max_chunks`]).
    pub rows_max_chunks: u32,
    /// Pool AVG: add in integer arithmetic (`ADD_BY_BITS`,
    /// `super::tuning::add_by_bits`).
    pub add_by_bits: bool,
    /// Elementwise row path: most positions per invocation
    /// (`super::tuning::row_per_max`).
    pub row_per_max: u32,
    /// CrossLaneReduce: most vec4s per lane per invocation (1 or 4,
    /// `super::tuning::clr_quads_max`).
    pub clr_quads_max: u32,
    /// The most loop iterations one invocation may make
    /// (`super::tuning::loop_budget`); `None`: no limit.
    pub loop_budget: Option<u64>,
}

/// A WGSL program of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shader {
    /// Pool and MaxPoolSelect ([`super::kernels::POOL_WGSL`]).
    Pool,
    /// The reference copy ([`super::kernels::COPY_WGSL`]).
    Copy,
    /// Copy and Cast records ([`super::kernels::CAST_WGSL`]).
    Cast,
    /// Iota records ([`super::kernels::IOTA_WGSL`]).
    Iota,
    /// Tensor-Tensor records ([`super::kernels::TENSOR_TENSOR_WGSL`]).
    TensorTensor,
    /// CrossLaneReduce records ([`super::kernels::CROSS_LANE_WGSL`]).
    CrossLane,
    /// NonzeroWithCount records ([`super::kernels::NONZERO_WGSL`]).
    Nonzero,
    /// GetSequenceBounds records ([`super::kernels::SEQ_BOUNDS_WGSL`]).
    SeqBounds,
    /// DMAs between on-chip places ([`super::kernels::DMA_WGSL`]).
    Dma,
    /// The host's spans ([`super::kernels::SPANS_WGSL`]; the memory layout plus bindings 3
    /// and 4, [`super::kernels::Kernels::spans_layout`]).
    Spans,
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
