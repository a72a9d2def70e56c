//! The pooling front end against answers from an independent implementation
//! (onnx's ReferenceEvaluator; `scripts/gen_pool2d_fixtures.py` wrote
//! `tests/fixtures/pool2d/`): max values and indices bit-identical, averages
//! within 1 ulp, and the emulator bit-identical to the plain Rust reference.

use std::path::{Path, PathBuf};
use tpb_emu::frontend::{self, Depth, PadRule, Pool2d, PoolMode, Tensor, read_tensor};
use tpb_emu::isa::enums::Dtype;
use tpb_emu::npy::read_npy;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pool2d")
}

fn pair(v: &serde_json::Value) -> [u32; 2] {
    [v[0].as_u64().unwrap() as u32, v[1].as_u64().unwrap() as u32]
}

fn params(c: &serde_json::Value) -> Pool2d {
    let p = &c["pads"];
    Pool2d {
        mode: if c["mode"] == "max" {
            PoolMode::Max
        } else {
            PoolMode::Avg
        },
        kernel: pair(&c["kernel"]),
        stride: pair(&c["stride"]),
        pads: std::array::from_fn(|i| p[i].as_u64().unwrap() as u32),
        dilation: pair(&c["dilation"]),
        ceil_mode: c["ceil_mode"].as_bool().unwrap(),
        count_include_pad: c["count_include_pad"].as_bool().unwrap(),
        return_indices: c["return_indices"].as_bool().unwrap(),
        depth: Depth::NONE,
        pad_rule: PadRule::Torch,
    }
}

/// Ordered integer of a float's bits (so adjacent floats differ by 1).
fn ordered(bits: u32, sign: u32) -> i64 {
    if bits & sign != 0 {
        -((bits & !sign) as i64)
    } else {
        bits as i64
    }
}

/// Elementwise distance in ulps of the output dtype.
fn ulps(t: &Tensor, a: usize, b: &[u8]) -> i64 {
    let e = t.elem();
    let get = |d: &[u8]| {
        d[a * e..(a + 1) * e]
            .iter()
            .rev()
            .fold(0u32, |x, &y| (x << 8) | y as u32)
    };
    let (x, y) = (get(&t.data), get(b));
    let sign = match t.dtype {
        Dtype::FP32 => 0x8000_0000,
        Dtype::FP16 | Dtype::BFLOAT16 => 0x8000,
        _ => return (x as i64 - y as i64).abs(),
    };
    (ordered(x, sign) - ordered(y, sign)).abs()
}

fn cases() -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir().join("cases.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

/// Runs case `c` of the fixtures in `dir` on the CPU with `p`: max values
/// and indices exact, averages within 1 ulp, and the plain reference equal
/// bit for bit. Returns the input, the output and whether indices were checked.
fn check_case(
    dir: &Path,
    c: &serde_json::Value,
    p: &Pool2d,
) -> (Tensor, frontend::PoolOutput, bool) {
    let name = c["name"].as_str().unwrap();
    let x = read_tensor(&dir.join(format!("{name}.x.npy")), c["dtype"] == "bf16").unwrap();
    let want = read_npy(&dir.join(format!("{name}.y.npy"))).unwrap();
    let got = frontend::run_cpu(p, &x).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(got.output.shape, want.shape, "{name}: shape");
    assert_eq!(got.output.dtype, x.dtype, "{name}: dtype");
    let tol = if p.mode == PoolMode::Max { 0 } else { 1 };
    for i in 0..want.data.len() / want.elem {
        let d = ulps(&got.output, i, &want.data);
        assert!(
            d <= tol,
            "{name} ({p}): element {i} is {d} ulps from the reference"
        );
    }
    if p.return_indices {
        let want = read_npy(&dir.join(format!("{name}.idx.npy"))).unwrap();
        let want: Vec<i64> = want
            .data
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(
            got.indices.as_ref().unwrap(),
            &want,
            "{name} ({p}): indices"
        );
    }
    // The plain reference agrees with the emulator bit for bit.
    let plain = frontend::reference(p, &x).unwrap();
    assert_eq!(plain, got, "{name} ({p}): emulator vs plain reference");
    (x, got, p.return_indices)
}

#[test]
fn front_end_matches_the_onnx_reference_on_the_grid() {
    let cases = cases();
    assert!(cases.len() >= 25, "the grid shrank: {}", cases.len());
    let mut checked_indices = 0;
    for c in &cases {
        checked_indices += check_case(&dir(), c, &params(c)).2 as usize;
    }
    assert!(checked_indices >= 10);
}

#[test]
fn more_planes_than_partitions_are_tiled() {
    let c = cases()
        .into_iter()
        .find(|c| c["name"] == "max_planes140")
        .unwrap();
    let x = read_tensor(&dir().join("max_planes140.x.npy"), false).unwrap();
    let compiled = frontend::compile(&params(&c), &x).unwrap();
    assert_eq!(compiled.plan.planes(), 140);
    assert_eq!(compiled.bands, 2, "two plane groups (128 + 12)");
}

fn dir3() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pool3d")
}

/// A 3-D (or explicit-pads 2-D) case of `tests/fixtures/pool3d/`: per-axis
/// lists outermost first, pads as every begin then every end (ONNX's order).
fn params3(c: &serde_json::Value) -> Pool2d {
    let v = |k: &str| -> Vec<u32> {
        c[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect()
    };
    let (k, s, d, p) = (v("kernel"), v("stride"), v("dilation"), v("pads"));
    let three = k.len() == 3;
    let o = k.len() - 2; // index of H
    let r = k.len(); // pads: begins, then ends
    Pool2d {
        mode: if c["mode"] == "max" {
            PoolMode::Max
        } else {
            PoolMode::Avg
        },
        kernel: [k[o], k[o + 1]],
        stride: [s[o], s[o + 1]],
        pads: [p[o], p[o + 1], p[r + o], p[r + o + 1]],
        dilation: [d[o], d[o + 1]],
        ceil_mode: c["ceil_mode"].as_bool().unwrap(),
        count_include_pad: c["count_include_pad"].as_bool().unwrap(),
        return_indices: c["return_indices"].as_bool().unwrap(),
        depth: if three {
            Depth {
                kernel: k[0],
                stride: s[0],
                pads: [p[0], p[3]],
                dilation: d[0],
            }
        } else {
            Depth::NONE
        },
        pad_rule: if c["pad_rule"] == "onnx" {
            PadRule::Onnx
        } else {
            PadRule::Torch
        },
    }
}

#[test]
fn three_d_and_explicit_pads_match_the_onnx_reference() {
    let text = std::fs::read_to_string(dir3().join("cases.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert!(cases.len() >= 25, "the grid shrank: {}", cases.len());
    let gpu = crate::common::gpu();
    let mut exec = gpu.as_ref().map(|g| {
        tpb_emu::device::gpu::GpuExecutor::new(g, tpb_emu::limits::Arch::Cayman).expect("pipelines")
    });
    let mut checked_indices = 0;
    for c in cases {
        let p = params3(c);
        let (x, got, indices) = check_case(&dir3(), c, &p);
        checked_indices += indices as usize;
        // The GPU (lavapipe in CI) gives the CPU's bytes.
        if let Some(exec) = exec.as_mut() {
            let on_gpu = frontend::run(&p, &x, exec).unwrap();
            assert_eq!(on_gpu, got, "{} ({p}): GPU vs CPU", c["name"]);
        }
    }
    assert!(checked_indices >= 10, "{checked_indices}");
}
