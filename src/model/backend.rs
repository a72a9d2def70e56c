//! Opening the executor a run uses: the CPU reference or a GPU device, as
//! `--backend gpu|cpu|auto` asks (every executing command of the CLI and
//! the Python bindings share it; `gpu` feature).

use crate::device::gpu::{BackendChoice, DeviceError, Gpu, GpuExecutor};
use crate::device::{CpuExecutor, Executor};
use crate::limits::Arch;

/// An opened backend: the CPU reference or a GPU device.
pub enum Backend {
    /// The CPU reference executor.
    Cpu,
    /// A GPU device (an owned handle: every executor opened on it shares
    /// the device and its pipeline cache).
    Gpu(Gpu),
}

/// The backend named `gpu`, `cpu` or `auto` (what `--backend` takes).
pub fn choice(name: &str) -> Option<BackendChoice> {
    match name {
        "gpu" => Some(BackendChoice::Gpu),
        "cpu" => Some(BackendChoice::Cpu),
        "auto" => Some(BackendChoice::Auto),
        _ => None,
    }
}

impl Backend {
    /// Opens what `choice` asks for. `gpu` without an adapter is
    /// [`DeviceError::NoAdapter`]; `auto` without a hardware adapter falls
    /// back to the CPU backend.
    pub fn open(choice: BackendChoice) -> Result<Backend, DeviceError> {
        match choice {
            BackendChoice::Cpu => Ok(Backend::Cpu),
            BackendChoice::Gpu => Gpu::open(choice).map(Backend::Gpu),
            BackendChoice::Auto => match Gpu::open(choice) {
                Ok(g) => Ok(Backend::Gpu(g)),
                Err(DeviceError::NoAdapter(_)) => Ok(Backend::Cpu),
                Err(e) => Err(e),
            },
        }
    }

    /// [`Backend::open`] for a program that may have no record for a device:
    /// with `needs_device` false, `auto` opens no adapter and takes the CPU
    /// backend (nothing would run on a GPU anyway); `gpu` still insists on one.
    pub fn open_for(choice: BackendChoice, needs_device: bool) -> Result<Backend, DeviceError> {
        if !needs_device && choice == BackendChoice::Auto {
            return Ok(Backend::Cpu);
        }
        Backend::open(choice)
    }

    /// `cpu`, or `gpu (<adapter name>)`.
    pub fn describe(&self) -> String {
        match self {
            Backend::Cpu => "cpu".into(),
            Backend::Gpu(g) => format!("gpu: {}", g.adapter.name),
        }
    }

    /// An executor for memory of `arch`: owned, and `Send`, so a thread of
    /// its own may run it (each thread opens its own executor; the
    /// backend, `Send + Sync`, is shared).
    pub fn executor(&self, arch: Arch) -> Result<Box<dyn Executor + Send>, DeviceError> {
        Ok(match self {
            Backend::Cpu => Box::new(CpuExecutor::default()),
            Backend::Gpu(g) => Box::new(GpuExecutor::new(g, arch)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handles the bindings share across threads (the Python package
    /// releases the GIL; libnrt runs models from several threads): a
    /// compile-time check.
    const _: fn() = || {
        fn shared<T: Send + Sync + Clone + 'static>() {}
        fn owned<T: Send + 'static>() {}
        shared::<Gpu>();
        shared::<crate::device::gpu::Kernels>();
        owned::<Backend>();
        fn sync<T: Sync>() {}
        sync::<Backend>();
        owned::<GpuExecutor>();
        owned::<Box<dyn Executor + Send>>();
    };
}
