//! tpb-emu: an emulator of the AWS Neuron TPB POOL engine.
//!
//! It takes the device's own 64-byte instruction records, validates them as
//! the vendor runtime does ([`isa::validate`]), and (in later layers)
//! executes Pool and MaxPoolSelect on a GPU through wgpu with a bit-identical
//! CPU reference. See `ARCHITECTURE.md` for the map and `docs/conventions.md`
//! for every emulator convention (EC-n).

pub mod isa;
pub mod limits;
