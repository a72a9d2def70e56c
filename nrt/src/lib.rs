//! A drop-in `libnrt.so.1`: the AWS Neuron Runtime's C API (SPEC-NRT) over
//! tpb-emu's model API, so that a program written for the real runtime —
//! C linked with `-lnrt`, Python `ctypes` — loads its NEFF and runs it on
//! one emulated NeuronCore, on the CPU reference or a GPU.
//!
//! Every export is `extern "C"` with the [H28] signature of
//! `nrt/include/nrt/nrt.h`; handles are opaque tokens (NRT-EC-3), so no Rust
//! type crosses the boundary, and every entry point catches panics
//! ([`guard`]) and returns a status instead. `scripts/build-libnrt.sh` links
//! this staticlib into `libnrt.so.1` with the symbol versions of SPEC-NRT §2.1.
//!
//! The one path from NEFF bytes to a run is `tpb_emu::model` (the same
//! reader, gates and lowering as `tpb-emu inspect`/`run`); this crate only
//! maps handles, bytes and statuses.

mod api;
mod state;
pub mod status;
mod stubs;

use state::{Level, log};
use status::{NRT_FAILURE, Status};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs an entry point's body, turning a panic into `fail` (logged at
/// ERROR, §4.2): no panic unwinds into C.
pub fn guard<T>(name: &str, fail: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(v) => v,
        Err(_) => {
            log(Level::Error, &format!("{name}: internal failure"));
            fail
        }
    }
}

/// [`guard`] for the `NRT_STATUS` entry points: a panic is `NRT_FAILURE`.
pub fn guard_status(name: &str, body: impl FnOnce() -> Result<(), Status>) -> Status {
    guard(name, NRT_FAILURE, || match body() {
        Ok(()) => status::NRT_SUCCESS,
        Err(s) => s,
    })
}
