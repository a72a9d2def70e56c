//! Test support: every pipeline the kernel families can ask for, listed
//! family by family from each family's own list, for the tests that must
//! see them all (tests/isa/shader_portability.rs translates each one for
//! every backend; tests/device/backends.rs checks that the encoders ask for
//! nothing else). Nothing in the backend uses it: it sits above the
//! families, so the pipeline cache ([`super::kernels`]) knows none of them.

use super::kernels::{PipelineKey, Shader};

/// The pipelines the portability test (tests/isa/shader_portability.rs)
/// translates for every backend, family by family from each family's own
/// list: every Pool variant, the copy kernel, and the elementwise families'
/// covering set (`elementwise::variants`). [`is_listed`] says
/// whether the families can produce a key, so the lists cannot go stale.
pub fn every_pipeline() -> Vec<PipelineKey> {
    let mut keys = super::pool::variants();
    keys.extend(super::elementwise::variants());
    keys.push(super::copy::key());
    keys.extend(super::lane_kernels::variants());
    keys.extend(super::batch::span_keys());
    keys.extend(super::dma::variants());
    keys
}

/// Whether the families' lists hold `key` (every key an encoder produces
/// must be listed: tests/device/backends.rs checks it on random records).
pub fn is_listed(key: &PipelineKey) -> bool {
    match key.shader {
        Shader::Pool | Shader::Copy | Shader::Spans | Shader::Dma => every_pipeline().contains(key),
        _ => super::elementwise::covers(key),
    }
}
