//! The instruction set and the shaders without a device: validation, the text form, the golden corpus, the layer and convention rules, WGSL checks and portability.
//!
//! One test binary per group (fewer binaries to link); each module is one
//! subject.

#[path = "../common/mod.rs"]
mod common;

mod conventions;
mod golden;
mod layers;
mod shader_arith;
mod shader_portability;
mod shader_udiv;
mod shaders;
mod text_props;
mod validate;
mod validate_kernels;
