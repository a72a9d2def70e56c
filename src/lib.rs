//! tpb-emu: an emulator of the AWS Neuron TPB POOL engine.
//!
//! It takes the device's own 64-byte instruction records, validates them as
//! the vendor runtime does ([`isa::validate`]), and executes the POOL
//! engine's kernels ([`device`]) with a CPU reference that every GPU backend
//! matches bit for bit. See `ARCHITECTURE.md` for the map and
//! `docs/conventions.md` for every emulator convention (EC-n).
//!
//! The command line (`tpb-emu`) is the crate's binary, not part of this
//! library. The GPU backend (`gpu` feature: wgpu) and the PNG pictures
//! (`png` feature: [`viz`]) are optional; with `default-features = false`
//! the library is the ISA layer, the CPU device, programs, NEFF files and
//! the front end, with none of the GPU or image dependencies.
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
pub mod files;
pub mod frontend;
pub mod isa;
pub mod limits;
pub mod model;
pub mod neff;
pub mod npy;
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
