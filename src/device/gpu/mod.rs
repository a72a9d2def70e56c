//! The wgpu executor: the same ops as the CPU reference, on a GPU, with
//! bit-identical results (SPEC §6).
//!
//! Getting a device ([`context`]) is separate from running on it. Device
//! memory (`memory`) is separate from the kernels ([`kernels`]: the WGSL
//! library and one pipeline cache); each kernel family encodes its op as a
//! [`batch::Dispatch`] (`pool`, `elementwise`), and [`batch::run`] runs a batch of them
//! on the memory. [`GpuExecutor`] puts these together behind the
//! [`crate::device::Executor`] contract. `types` is the leaf every file
//! may use, `tuning` what the encoders choose by the adapter's type, and
//! [`test_support`] lists every pipeline the families can ask for, for the
//! tests. The files import each other without a cycle
//! (`tests/isa/layers.rs`).

// The API boundary: `Gpu`, `GpuExecutor`, `BackendChoice`, `DeviceError`
// and `AdapterSummary` (re-exported below; `context` for `tpb-emu info`)
// are the GPU backend's public API. `batch`, `copy`, `executor::encode`,
// `kernels` and `GpuMemory` are public for `tpb-emu bench` (the binary is
// a user of the library); `params` and `test_support` only for tests, and
// hidden from the docs. Everything else is the crate's own.
#[doc(hidden)]
pub mod batch;
pub mod context;
#[doc(hidden)]
pub mod copy;
pub(crate) mod dma;
pub(crate) mod elementwise;
pub mod executor;
#[doc(hidden)]
pub mod kernels;
pub(crate) mod lane_kernels;
pub(crate) mod memory;
pub(crate) mod newer;
#[doc(hidden)]
pub mod params;
pub(crate) mod pool;
pub(crate) mod shaders;
pub(crate) mod staging;
#[doc(hidden)]
pub mod test_support;
pub(crate) mod timer;
pub(crate) mod tuning;
pub(crate) mod types;

pub use context::{AdapterSummary, BackendChoice, DeviceError, Gpu};
pub use executor::GpuExecutor;
#[doc(hidden)]
pub use kernels::Kernels;
#[doc(hidden)]
pub use memory::GpuMemory;
