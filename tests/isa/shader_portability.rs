//! Every pipeline the device can create, on every API a laptop has: each
//! pipeline of the kernel library (`test_support::every_pipeline`, the code's own
//! list) has its override constants applied and is translated by naga — the
//! translator wgpu uses — to SPIR-V (Vulkan), MSL 2.1 (Metal), HLSL SM 5.1
//! and 6.0 (DX12) and GLSL ES 3.10 and desktop 4.30 (GL). One pipeline per
//! shape is also handed to the reference validators `spirv-val` and
//! `glslangValidator` (installed by .ci/run; with CI=true their absence
//! fails the test).

use naga::back::{glsl, hlsl, msl, spv};
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{Module, ShaderStage};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;
use tpb_emu::device::gpu::kernels::{PipelineKey, Shader};
use tpb_emu::device::gpu::test_support::every_pipeline;

/// A program parsed and validated with the capabilities every backend has.
fn parse(shader: Shader) -> (Module, ModuleInfo) {
    let module = naga::front::wgsl::parse_str(shader.source())
        .unwrap_or_else(|e| panic!("{}: {}", shader.label(), e.emit_to_string(shader.source())));
    let info = Validator::new(ValidationFlags::all(), Capabilities::default())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}: {e:?}", shader.label()));
    (module, info)
}

/// The pipeline's module with its override constants applied.
fn specialise(module: &Module, info: &ModuleInfo, key: &PipelineKey) -> (Module, ModuleInfo) {
    let mut constants = naga::back::PipelineConstants::default();
    for &(name, value) in &key.constants {
        constants.insert(name.to_owned(), value as f64);
    }
    let (m, i) = naga::back::pipeline_constants::process_overrides(
        module,
        info,
        Some((ShaderStage::Compute, key.entry)),
        &constants,
    )
    .unwrap_or_else(|e| panic!("{key:?}: overrides: {e:?}"));
    (m.into_owned(), i.into_owned())
}

/// The pipeline's source for every target: (target name, text or SPIR-V words).
enum Out {
    Text(String),
    Words(Vec<u32>),
}

fn translate(module: &Module, info: &ModuleInfo, key: &PipelineKey) -> Vec<(&'static str, Out)> {
    let fail = |target: &str, e: &dyn std::fmt::Debug| -> ! {
        panic!("{key:?}: {target}: {e:?}");
    };
    let mut out = Vec::new();
    let spv = spv::write_vec(
        module,
        info,
        &spv::Options::default(),
        Some(&spv::PipelineOptions {
            shader_stage: ShaderStage::Compute,
            entry_point: key.entry.to_owned(),
        }),
    )
    .unwrap_or_else(|e| fail("spir-v", &e));
    out.push(("spv", Out::Words(spv)));
    let msl_options = msl::Options {
        lang_version: (2, 1),
        fake_missing_bindings: true,
        ..Default::default()
    };
    let (text, _) = msl::write_string(
        module,
        info,
        &msl_options,
        &msl::PipelineOptions {
            entry_point: Some((ShaderStage::Compute, key.entry.to_owned())),
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| fail("msl 2.1", &e));
    out.push(("msl", Out::Text(text)));
    for (name, model) in [
        ("hlsl 5.1", hlsl::ShaderModel::V5_1),
        ("hlsl 6.0", hlsl::ShaderModel::V6_0),
    ] {
        let options = hlsl::Options {
            shader_model: model,
            fake_missing_bindings: true,
            ..Default::default()
        };
        let pipeline = hlsl::PipelineOptions {
            entry_point: Some((ShaderStage::Compute, key.entry.to_owned())),
        };
        let mut text = String::new();
        hlsl::Writer::new(&mut text, &options, &pipeline)
            .write(module, info, None)
            .unwrap_or_else(|e| fail(name, &e));
        out.push((name, Out::Text(text)));
    }
    for (name, version) in [
        (
            "glsl es 3.10",
            glsl::Version::Embedded {
                version: 310,
                is_webgl: false,
            },
        ),
        ("glsl 4.30", glsl::Version::Desktop(430)),
    ] {
        let options = glsl::Options {
            version,
            ..Default::default()
        };
        let pipeline = glsl::PipelineOptions {
            shader_stage: ShaderStage::Compute,
            entry_point: key.entry.to_owned(),
            multiview: None,
        };
        let mut text = String::new();
        glsl::Writer::new(
            &mut text,
            module,
            info,
            &options,
            &pipeline,
            naga::proc::BoundsCheckPolicies::default(),
        )
        .and_then(|mut w| w.write())
        .unwrap_or_else(|e| fail(name, &e));
        out.push((name, Out::Text(text)));
    }
    out
}

/// One pipeline per shape: per (shader, entry point, constants other than
/// the dtypes), the first in the list.
fn one_per_shape(keys: &[PipelineKey]) -> Vec<&PipelineKey> {
    let mut seen = BTreeMap::new();
    for k in keys {
        let shape: Vec<_> = k
            .constants
            .iter()
            .filter(|(n, _)| !n.ends_with("DTYPE"))
            .collect();
        seen.entry(format!("{:?} {} {shape:?}", k.shader, k.entry))
            .or_insert(k);
    }
    seen.into_values().collect()
}

#[test]
fn every_pipeline_translates_for_every_backend() {
    let keys = every_pipeline();
    assert!(keys.len() > 1000, "only {} pipelines listed", keys.len());
    let mut programs = HashMap::new();
    let mut translated = 0;
    for key in &keys {
        let (module, info) = programs
            .entry(key.shader)
            .or_insert_with(|| parse(key.shader));
        let (m, i) = specialise(module, info, key);
        translated += translate(&m, &i, key).len();
    }
    assert_eq!(translated, 6 * keys.len());
}

fn tool(name: &str) -> Option<&'static str> {
    let found = Command::new(name).arg("--version").output().is_ok();
    if !found && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{name} is missing; .ci/run installs it (spirv-tools, glslang-tools)");
    }
    found.then_some(if name == "spirv-val" {
        "spirv-val"
    } else {
        "glslangValidator"
    })
}

fn run(tool: &str, args: &[&str], file: &Path, key: &PipelineKey, target: &str) {
    let out = Command::new(tool)
        .args(args)
        .arg(file)
        .output()
        .expect("run the validator");
    assert!(
        out.status.success(),
        "{tool} rejects {target} of {key:?}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn one_pipeline_per_shape_passes_the_reference_validators() {
    let (spirv_val, glslang) = (tool("spirv-val"), tool("glslangValidator"));
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = every_pipeline();
    let shapes = one_per_shape(&keys);
    assert!(shapes.len() >= 10, "only {} shapes", shapes.len());
    let mut programs = HashMap::new();
    for (n, key) in shapes.into_iter().enumerate() {
        let (module, info) = programs
            .entry(key.shader)
            .or_insert_with(|| parse(key.shader));
        let (m, i) = specialise(module, info, key);
        for (target, out) in translate(&m, &i, key) {
            match (target, out) {
                ("spv", Out::Words(words)) => {
                    let Some(t) = spirv_val else { continue };
                    let f = dir.path().join(format!("{n}.spv"));
                    std::fs::write(&f, bytemuck::cast_slice::<u32, u8>(&words)).unwrap();
                    run(t, &["--target-env", "vulkan1.0"], &f, key, target);
                }
                (t @ ("glsl es 3.10" | "glsl 4.30"), Out::Text(text)) => {
                    let Some(g) = glslang else { continue };
                    let f = dir.path().join(format!("{n}-{}.comp", t.replace(' ', "_")));
                    std::fs::write(&f, text).unwrap();
                    run(g, &[], &f, key, t);
                }
                _ => {}
            }
        }
    }
}
