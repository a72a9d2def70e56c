//! Every GPU failure, as a value: a leaf of `device`, so that the backend
//! contract ([`super::exec::BackendError`]) keeps a GPU failure typed
//! without importing the GPU backend (re-exported as
//! [`super::gpu::DeviceError`]).

use std::time::Duration;

/// Every GPU failure, as a value (STYLE: "GPU errors are values").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// No adapter (or none of the requested kind): the detail, then what
    /// to install on this OS ([`no_adapter_hint`]).
    #[error("no GPU adapter found{0}; {hint}", hint = no_adapter_hint())]
    NoAdapter(String),
    /// A shader or pipeline failed to compile: which program, which entry
    /// point, and what the backend said.
    #[error(
        "GPU pipeline {shader} (entry point {entry}) failed to compile on {backend}: {message}"
    )]
    Pipeline {
        /// The program (`pool.wgsl`, …).
        shader: &'static str,
        /// Its entry point.
        entry: &'static str,
        /// The API backend (Vulkan, Metal, Dx12, Gl).
        backend: String,
        /// The backend's message.
        message: String,
    },
    /// wgpu reported a validation error.
    #[error("GPU validation error: {0}")]
    Validation(String),
    /// The device was lost (or destroyed).
    #[error("GPU device lost: {0}")]
    Lost(String),
    /// A submission did not finish in time.
    #[error("GPU submission timed out after {0:?}")]
    Timeout(Duration),
    /// An allocation failed.
    #[error("GPU out of memory: {0}")]
    OutOfMemory(String),
}

/// What to install when no adapter exists, for the OS this was built for.
pub fn no_adapter_hint() -> &'static str {
    if cfg!(target_os = "macos") {
        "Metal is built into macOS: check that this machine's GPU supports Metal, \
         or use --backend cpu"
    } else if cfg!(target_os = "windows") {
        "install or update the GPU vendor's driver (DX12 or Vulkan), or use --backend cpu"
    } else {
        "install a Vulkan driver (headless Debian/Ubuntu: apt-get install \
         mesa-vulkan-drivers libvulkan1) or use --backend cpu"
    }
}
