//! GPU tuning: what the encoders choose by the adapter's type, each choice
//! with the measurement behind it, and the encoding context
//! ([`EncodeCx::of`]) that carries them. A software rasterizer (llvmpipe:
//! lavapipe, and GL through Mesa) runs a few invocations per CPU core and
//! pays per invocation, so it gets more work per invocation; a hardware GPU
//! wants adjacent invocations on adjacent bytes. [`super::GpuExecutor`]'s
//! setters override these for tests and tuning.

use super::context::Gpu;
use super::types::EncodeCx;
use crate::limits::Arch;

impl EncodeCx {
    /// The encoding context of `gpu`'s adapter for memory of `arch`.
    pub fn of(gpu: &Gpu, arch: Arch) -> EncodeCx {
        EncodeCx {
            arch,
            max_x: gpu.device.limits().max_compute_workgroups_per_dimension,
            rows_max_chunks: rows_max_chunks(gpu.adapter.device_type),
            add_by_bits: add_by_bits(gpu.adapter.device_type),
            row_per_max: row_per_max(gpu.adapter.device_type),
            clr_quads_max: clr_quads_max(gpu.adapter.device_type),
            loop_budget: loop_budget(gpu.adapter.device_type),
        }
    }
}

/// Most runs of 4 outputs one `pool_rows` invocation folds on an adapter
/// of type `device_type`. A software rasterizer (llvmpipe) runs a few
/// invocations per CPU core at a time and pays per invocation for the
/// coordinate arithmetic, so 4 runs (16 outputs) spread it over more bytes
/// (lavapipe, the 16 MiB MAX 2×2 of `tpb-emu bench pool`: 1, 2, 4, 8 runs
/// took 4.9, 4.0, 2.9, 3.0 ms beside a 2.5 ms copy). A hardware GPU wants adjacent invocations to read
/// adjacent bytes, so each reads one run: its two vec4 loads per window row
/// then coalesce across a warp (not yet measured on hardware).
pub fn rows_max_chunks(device_type: wgpu::DeviceType) -> u32 {
    match device_type {
        wgpu::DeviceType::Cpu => 4,
        _ => 1,
    }
}

/// The most walk positions one invocation of the elementwise kernels' row
/// path takes on an adapter of type `device_type`. llvmpipe pays per
/// invocation (coordinates, addresses), so 64 positions spread that over
/// more bytes (lavapipe, `tpb-emu bench pool`: Copy, Cast fp32→bf16 and ADD
/// at 16 positions 0.47, 0.37, 0.47 of the copy kernel; at 64, 0.60, 0.47,
/// 0.56). A hardware GPU keeps 16, so that adjacent invocations stay near
/// adjacent bytes (not yet measured on hardware).
pub(crate) fn row_per_max(device_type: wgpu::DeviceType) -> u32 {
    match device_type {
        wgpu::DeviceType::Cpu => 64,
        _ => 16,
    }
}

/// The most loop iterations one invocation may make on llvmpipe: Mesa's
/// gallivm counts every loop's back edges in one counter per invocation
/// (`LP_MAX_TGSI_LOOP_ITERATIONS`, 65,535) and, when it runs out, leaves the
/// loops and goes on — a silently wrong result, not an error. Measured on
/// lavapipe (Mesa 22.3), an All-axis CrossLaneReduce of nac lanes × M
/// elements in one invocation: 127 × 514 and 64 × 1,022 right, 127 × 515 and
/// 64 × 1,023 wrong (a few more iterations than the shader's loops show).
pub(crate) const LLVMPIPE_LOOP_ITERATIONS: u64 = 65_535;

/// The loop iterations one invocation may make on an adapter of type
/// `device_type`: [`LLVMPIPE_LOOP_ITERATIONS`] on a software rasterizer
/// (lavapipe, and llvmpipe through GL), no limit on a hardware GPU.
pub(crate) fn loop_budget(device_type: wgpu::DeviceType) -> Option<u64> {
    match device_type {
        wgpu::DeviceType::Cpu => Some(LLVMPIPE_LOOP_ITERATIONS),
        _ => None,
    }
}

/// The most vec4s per lane one CrossLaneReduce invocation folds (`QUADS` in
/// `shaders/cross_lane.wgsl`) on an adapter of type `device_type`. llvmpipe
/// runs 8 invocations side by side, so 4 vec4s each read 512 neighbouring
/// bytes of a partition before the fold moves to the next partition, where 1
/// reads 128 — too little for the CPU's prefetchers across 128 partitions
/// (lavapipe, `tpb-emu bench pool`, 128 partitions × 16,384 fp32 ADD: 0.31 of
/// the copy kernel at 1, 0.73–0.76 at 2, 0.81 at 4, 0.39 at 8, whose 32
/// accumulators spill). A hardware GPU keeps 1: neighbouring invocations
/// read neighbouring vec4s, and 4 times the invocations fill its cores.
pub(crate) fn clr_quads_max(device_type: wgpu::DeviceType) -> u32 {
    match device_type {
        wgpu::DeviceType::Cpu => 4,
        _ => 1,
    }
}

/// Whether Pool AVG adds in integer arithmetic on an adapter of type
/// `device_type` (`ADD_BY_BITS`). Integer adds give IEEE round-to-nearest-
/// even bits whatever a backend's fast-math setting (Metal leaves it on;
/// DXC may mark adds fast), so every hardware GPU uses them. A software
/// rasterizer (llvmpipe) compiles SPIR-V and GLSL adds as IEEE adds and pays
/// about 2.5x for the integer add (lavapipe: AVG 2x2 fp32 0.48 GB/s beside MAX's
/// 1.20 under load), so it keeps its own adds; `tests/device/backends.rs` runs the
/// integer adds on it too, bit for bit against the CPU.
pub(crate) fn add_by_bits(device_type: wgpu::DeviceType) -> bool {
    !matches!(device_type, wgpu::DeviceType::Cpu)
}
