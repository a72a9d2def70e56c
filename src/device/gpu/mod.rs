//! The wgpu executor: the same records as the CPU reference, on a GPU, with
//! bit-identical results (SPEC §6).

pub mod context;
pub mod copy;
pub mod executor;
pub mod params;
pub mod pool;

pub use context::{AdapterSummary, BackendChoice, DeviceError, Gpu};
pub use executor::GpuExecutor;
pub use pool::GpuPool;
