//! tpb-emu: an emulator of the AWS Neuron TPB POOL engine.
//!
//! It takes the device's own 64-byte instruction records, validates them as
//! the vendor runtime does ([`isa::validate`]), and executes Pool and
//! MaxPoolSelect ([`device`]) with a CPU reference that every GPU backend
//! matches bit for bit. See `ARCHITECTURE.md` for the map and
//! `docs/conventions.md` for every emulator convention (EC-n).

pub mod cli;
pub mod device;
pub mod files;
pub mod frontend;
pub mod isa;
pub mod limits;
pub mod neff;
pub mod npy;
pub mod runtime;
pub mod viz;
