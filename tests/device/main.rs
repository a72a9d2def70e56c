//! The device: the CPU reference of every kernel (hand-derived values, independent fixtures) and the GPU compared with it bit for bit.
//!
//! One test binary per group (fewer binaries to link); each module is one
//! former test file.

#[path = "../common/mod.rs"]
mod common;

mod backends;
mod cpu_convert;
mod cpu_dispatch;
mod cpu_memory;
mod cpu_pool;
mod hand;
mod kernels2_backends;
mod kernels2_fixtures;
mod kernels2_hand;
mod kernels_dispatch;
mod kernels_fixtures;
mod kernels_hand;
mod random_walks;
