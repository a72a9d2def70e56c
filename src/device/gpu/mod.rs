//! The wgpu executor: the same ops as the CPU reference, on a GPU, with
//! bit-identical results (SPEC §6).
//!
//! Getting a device ([`context`]) is separate from running on it. Device
//! memory ([`memory`]) is separate from the kernels ([`kernels`]: the WGSL
//! library and one pipeline cache); each kernel family encodes its op as a
//! [`batch::Dispatch`] ([`pool`], `elementwise`), and [`batch::run`] runs a batch of them
//! on the memory. [`GpuExecutor`] puts these together behind the
//! [`crate::device::Executor`] contract. [`types`] is the leaf every file
//! may use, [`tuning`] what the encoders choose by the adapter's type, and
//! [`test_support`] lists every pipeline the families can ask for, for the
//! tests. The files import each other without a cycle
//! (`tests/isa/layers.rs`).

pub mod batch;
pub mod context;
pub mod copy;
pub mod dma;
pub(crate) mod elementwise;
pub mod executor;
pub mod kernels;
pub(crate) mod lane_kernels;
pub mod memory;
pub(crate) mod newer;
pub mod params;
pub mod pool;
pub mod staging;
pub mod test_support;
pub(crate) mod timer;
pub mod tuning;
pub mod types;

pub use context::{AdapterSummary, BackendChoice, DeviceError, Gpu};
pub use executor::GpuExecutor;
pub use kernels::Kernels;
pub use memory::GpuMemory;
