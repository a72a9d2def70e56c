//! Whole programs through the library: manifests, DMA, the scheduler, lowering, NEFF files, the front end and timelines.
//!
//! One test binary per group (fewer binaries to link); each module is one
//! subject.

#[path = "../common/mod.rs"]
mod common;
#[path = "../neff_fixture/mod.rs"]
mod neff_fixture;

mod class_walk;
mod frontend_3d;
mod frontend_api;
mod frontend_fixtures;
mod lower_props;
mod lower_run;
mod model_api;
mod neff;
mod perf_owned;
mod run_coherence;
mod run_control;
mod run_dma;
mod run_executor;
mod run_held;
mod run_manifest;
mod run_pipeline;
mod run_props;
mod run_sync;
mod timeline;
