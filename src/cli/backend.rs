//! `--backend gpu|cpu|auto`: the library's [`Backend`], with GPU failures
//! mapped to the exit-code contract.

use super::CliError;
use crate::device::gpu::DeviceError;
pub use tpb_emu::model::backend::Backend;

/// Maps a GPU failure to the exit-code contract: no adapter is 5, the rest 1.
pub fn gpu_error(e: DeviceError) -> CliError {
    match e {
        DeviceError::NoAdapter(_) => CliError::NoAdapter(e.to_string()),
        _ => CliError::Exec(e.to_string()),
    }
}

impl From<DeviceError> for CliError {
    fn from(e: DeviceError) -> CliError {
        gpu_error(e)
    }
}
