//! The `tpb-emu` binary: outputs, messages, exit codes and files of every subcommand.
//!
//! One test binary per group (fewer binaries to link); each module is one
//! subject.

#[path = "../common/mod.rs"]
mod common;
#[path = "../neff_fixture/mod.rs"]
mod neff_fixture;

mod cli;
mod cpu_cli;
mod frontend_cli;
mod gpu_cli;
mod lower_cli;
// Peak RSS from wait4, in KiB: Linux's units.
#[cfg(target_os = "linux")]
mod neff_bounds;
mod neff_cli;
mod no_lost_data;
mod perf_bench_program;
mod png_cli;
mod reliability;
mod report;
mod viz_footprint;
mod viz_png;
mod why;
