//! tpb-emu: an emulator of the AWS Neuron TPB POOL engine.
//!
//! It takes the device's own 64-byte instruction records, validates them as
//! the vendor runtime does ([`isa::validate`]), and executes the POOL
//! engine's kernels ([`device`]) with a CPU reference that every GPU backend
//! matches bit for bit. See `ARCHITECTURE.md` for the map and
//! `docs/conventions.md` for every emulator convention (EC-n).
//!
//! The command line (`tpb-emu`) is the crate's binary, not part of this
//! library. Every layer above the device is a feature, all on by default:
//! `program` (files, `.npy`, manifests and the runtime, the front end),
//! `neff` (NEFF files and the model API), `gpu` (the wgpu backend) and `png`
//! (the pictures, `viz`). With `default-features = false` the library is the
//! ISA layer and the CPU device alone ([`limits`], [`isa`], [`device`]).
//!
//! ```
//! use tpb_emu::{Arch, Target, check, records};
//! // An all-zero record is not a valid POOL instruction; validation names
//! // the first predicate it fails.
//! let stream = [0u8; 64];
//! for (offset, record) in records(&stream).unwrap() {
//!     let fail = check(&record, Target::pool(Arch::Cayman)).unwrap_err();
//!     println!("record at byte {offset}: {}", fail.predicate());
//! }
//! ```

pub mod device;
#[cfg(feature = "program")]
pub mod files;
#[cfg(feature = "program")]
pub mod frontend;
pub mod isa;
pub mod limits;
#[cfg(feature = "neff")]
pub mod model;
#[cfg(feature = "neff")]
pub mod neff;
#[cfg(feature = "program")]
pub mod npy;
#[cfg(feature = "program")]
pub mod runtime;
#[cfg(feature = "png")]
pub mod viz;

// The handful of types most users need; everything else is reached through
// its module.
pub use device::{CpuExecutor, DeviceMemory, Executor, Op, Program, Validated, run_program};
pub use isa::stream::records;
pub use isa::validate::{Fail, InvalidRecord, Target, check, is_valid};
pub use isa::{Engine, Opcode, Record};
pub use limits::Arch;
