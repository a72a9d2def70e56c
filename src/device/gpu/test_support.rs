//! Test support: every program and every pipeline the device can ask for,
//! made from the op registry (each op's `GpuKernel` impl) and the programs
//! that run no op (the benchmarks' copy kernel, DMAs, the host's spans), for
//! the tests that must see them all (tests/isa/shaders.rs validates every
//! program; tests/isa/shader_portability.rs translates each pipeline for
//! every backend; tests/device/backends.rs checks that the encoders ask for
//! nothing else). Nothing in the backend uses it: it sits above the
//! families, so the pipeline cache ([`super::kernels`]) knows none of them.

use super::kernels::{PipelineKey, Shader};
use super::types::GpuKernel;

/// Every WGSL program of the device: each op's, then the copy kernel, the
/// DMA kernel and the spans.
pub fn every_shader() -> Vec<Shader> {
    macro_rules! shaders {
        ($($(#[$doc:meta])* $v:ident($file:ident::$t:ident),)*) => {
            [$(<crate::device::ops::$t as GpuKernel>::SHADERS,)*].concat()
        };
    }
    let mut all = crate::device::ops::for_each_op!(shaders);
    all.extend([super::copy::SHADER, super::dma::SHADER, super::batch::SPANS]);
    all
}

/// The pipelines the portability test (tests/isa/shader_portability.rs)
/// translates for every backend, from each op's own list and the other
/// programs': every Pool variant, the elementwise families' covering set
/// (`elementwise::variants`), every lane kernel's, the copy kernel, the
/// spans and the DMA kernel. [`is_listed`] says whether the encoders can
/// produce a key, so the lists cannot go stale.
pub fn every_pipeline() -> Vec<PipelineKey> {
    macro_rules! variants {
        ($($(#[$doc:meta])* $v:ident($file:ident::$t:ident),)*) => {
            [$(<crate::device::ops::$t as GpuKernel>::variants(),)*].concat()
        };
    }
    let mut keys = crate::device::ops::for_each_op!(variants);
    keys.push(super::copy::key());
    keys.extend(super::batch::span_keys());
    keys.extend(super::dma::variants());
    keys
}

/// Whether the lists hold `key` (every key an encoder produces must be
/// listed: tests/device/backends.rs checks it on random records); the
/// elementwise families list a covering set, so their keys are checked
/// against the whole product (`elementwise::covers`).
pub fn is_listed(key: &PipelineKey) -> bool {
    super::elementwise::covers(key) || every_pipeline().contains(key)
}
