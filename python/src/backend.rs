//! The backends a call runs on: the CPU reference, or a GPU opened once per
//! process, lazily (on the first call that needs it), and shared by every
//! later call from any thread.
//!
//! `tpb_emu::device::gpu::Gpu` (wgpu's device and queue, and the error
//! slots behind `Arc<Mutex>`) is `Send + Sync`, which the assertion below
//! checks at compile time, so the opened [`Backend`] is shared as it is and
//! two threads may run on it at once (each run has its own executor: its
//! memory buffers and pipelines). Were it not, [`Shared`] would become
//! `Mutex<Backend>` and [`open`] would lock it: a one-line change.

use crate::errors::{Failure, Family};
use std::sync::OnceLock;
use tpb_emu::device::gpu::{BackendChoice, DeviceError, Gpu};
use tpb_emu::model::backend::{self, Backend};

/// How the process holds an opened backend (see the module's note).
type Shared = Backend;

const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Gpu>();
};

/// The CPU reference (no state to share).
static CPU: Shared = Backend::Cpu;
/// `backend="gpu"`: any adapter, software ones (lavapipe) included.
static ANY: OnceLock<Result<Shared, DeviceError>> = OnceLock::new();
/// `backend="auto"`: the first hardware adapter, else the CPU reference.
static AUTO: OnceLock<Result<Shared, DeviceError>> = OnceLock::new();

/// The choice `name` spells (`"cpu"`, `"gpu"`, `"auto"`), else a usage error.
pub fn choice(name: &str) -> Result<BackendChoice, Failure> {
    backend::choice(name).ok_or_else(|| {
        Failure::new(
            Family::Usage,
            format!("backend={name:?}: expected \"cpu\", \"gpu\" or \"auto\""),
        )
    })
}

/// The backend `choice` asks for, opened on first use and kept for the
/// process (a failure to open is kept too: `NoGpuError` every time). With
/// `needs_device` false, `auto` takes the CPU reference without looking
/// for an adapter (as [`Backend::open_for`]). Call it with the GIL released:
/// the first open of a GPU takes a while.
pub fn open(choice: BackendChoice, needs_device: bool) -> Result<&'static Backend, Failure> {
    let cell = match choice {
        BackendChoice::Cpu => return Ok(&CPU),
        BackendChoice::Auto if !needs_device => return Ok(&CPU),
        BackendChoice::Gpu => &ANY,
        BackendChoice::Auto => &AUTO,
    };
    match cell.get_or_init(|| Backend::open(choice)) {
        Ok(b) => Ok(b),
        Err(e) => Err(e.clone().into()),
    }
}
