//! Every program of the kernel library, checked by naga without a GPU:
//! it parses and validates, and it keeps the portability rules that
//! ARCHITECTURE.md states for the shaders.

use naga::valid::{Capabilities, ValidationFlags, Validator};
use naga::{Expression, ScalarKind, TypeInner};
use tpb_emu::device::gpu::kernels::Shader;
use tpb_emu::device::gpu::test_support::every_shader;

/// Every program of the library: each op's, the copy kernel, the DMA kernel
/// and the spans (made from the op registry, so a new kernel's program is
/// checked without a row here).
fn shaders() -> Vec<Shader> {
    every_shader()
}

#[test]
fn every_program_is_listed_once_by_label() {
    let labels: Vec<&str> = shaders().iter().map(|s| s.label()).collect();
    let mut unique = labels.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), labels.len(), "{labels:?}");
    for l in [
        "pool.wgsl",
        "copy.wgsl",
        "cast.wgsl",
        "iota.wgsl",
        "tensor_tensor.wgsl",
        "cross_lane.wgsl",
        "nonzero.wgsl",
        "seq_bounds.wgsl",
        "dma.wgsl",
        "spans.wgsl",
    ] {
        assert!(labels.contains(&l), "{l} missing from {labels:?}");
    }
}

fn module(shader: Shader) -> (naga::Module, naga::valid::ModuleInfo) {
    let module = naga::front::wgsl::parse_str(shader.source())
        .unwrap_or_else(|e| panic!("{}: {}", shader.label(), e.emit_to_string(shader.source())));
    let info = Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}: {e:?}", shader.label()));
    (module, info)
}

#[test]
fn every_program_parses_and_validates() {
    for shader in shaders() {
        let (module, _) = module(shader);
        assert!(
            !module.entry_points.is_empty(),
            "{} has no entry point",
            shader.label()
        );
    }
}

/// The functions (entry points included) with a `select` of integer
/// vectors by a vector condition.
fn vector_selects(module: &naga::Module, info: &naga::valid::ModuleInfo) -> Vec<String> {
    let functions = module.functions.iter().map(|(h, f)| (f, &info[h])).chain(
        module
            .entry_points
            .iter()
            .enumerate()
            .map(|(i, ep)| (&ep.function, info.get_entry_point(i))),
    );
    let mut found = Vec::new();
    for (f, fi) in functions {
        for (_, e) in f.expressions.iter() {
            let Expression::Select {
                condition, accept, ..
            } = *e
            else {
                continue;
            };
            let vector_condition = matches!(
                fi[condition].ty.inner_with(&module.types),
                TypeInner::Vector { .. }
            );
            let integer_vector = matches!(
                fi[accept].ty.inner_with(&module.types),
                TypeInner::Vector { scalar, .. }
                    if matches!(scalar.kind, ScalarKind::Sint | ScalarKind::Uint)
            );
            if vector_condition && integer_vector {
                found.push(f.name.clone().unwrap_or_default());
            }
        }
    }
    found
}

/// A `select` of integer vectors by a vector condition becomes an integer
/// `mix()` in GLSL, which desktop GL has only from 4.50: every select on
/// integer vectors must be per component (or take a scalar condition).
#[test]
fn no_select_of_integer_vectors_by_a_vector_condition() {
    for shader in shaders() {
        let (module, info) = module(shader);
        let found = vector_selects(&module, &info);
        assert!(
            found.is_empty(),
            "{}: vector selects on integers in {found:?}",
            shader.label()
        );
    }
}

#[test]
fn the_rule_is_detected_where_it_is_broken() {
    // The same scan on a program that breaks the rule must find it, so the
    // test above cannot pass by seeing nothing.
    let src = "fn pick(a: vec4<u32>, c: vec4<bool>) -> vec4<u32> {\n\
               return select(a, vec4<u32>(2u), c);\n}\n\
               @compute @workgroup_size(1) fn main() {\n\
               _ = pick(vec4<u32>(1u), vec4<bool>(true));\n}";
    let module = naga::front::wgsl::parse_str(src).expect("parses");
    let info = Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .expect("valid");
    assert_eq!(vector_selects(&module, &info), ["pick"]);
}
