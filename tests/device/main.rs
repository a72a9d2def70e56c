//! The device: the CPU reference of every kernel (hand-derived values, independent fixtures) and the GPU compared with it bit for bit.
//!
//! One test binary per group (fewer binaries to link); each module is one
//! subject. Where each kernel's tests are:
//!
//! | kernel | hand-derived values | numpy fixtures | CPU = GPU |
//! |---|---|---|---|
//! | Pool, MaxPoolSelect | `cpu_pool` | `cpu_convert` (loads/stores) | `backends` |
//! | Copy, Cast | `elementwise_hand` (`cast_*`, `copy_*`) | `elementwise_fixtures` (Cast) | `backends` |
//! | Iota | `elementwise_hand` (`iota_*`) | | `backends` |
//! | Tensor-Tensor | `elementwise_hand` | `elementwise_fixtures` | `backends` |
//! | CrossLaneReduce | `lane_kernels_hand` (`clr_*`) | `cross_lane_fixtures` | `lane_kernels_backends` |
//! | NonzeroWithCount | `lane_kernels_hand` (`nonzero_*`) | | `lane_kernels_backends` |
//! | GetSequenceBounds | `lane_kernels_hand` (`sequence_bounds_*`) | | `lane_kernels_backends` |
//! | 0xF0 specs 0, 2 | `lane_kernels_hand` | | `lane_kernels_backends` |
//!
//! The dispatch loop (errors, bypasses, traces) is `cpu_dispatch` and, for
//! the kernel-table rows, `kernel_table`; `hand` and `random_walks` are the
//! helpers, `cpu_memory` the untouched-bytes property.

#[path = "../common/mod.rs"]
mod common;

mod backends;
mod cpu_convert;
mod cpu_dispatch;
mod cpu_memory;
mod cpu_pool;
mod cross_lane_fixtures;
mod elementwise_fixtures;
mod elementwise_hand;
mod hand;
mod kernel_table;
mod lane_kernels_backends;
mod lane_kernels_hand;
mod random_walks;
