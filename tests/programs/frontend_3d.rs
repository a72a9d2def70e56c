//! 3-D pooling (N×C×D×H×W) through the front end: every band shape (whole
//! volumes, depth bands, row bands of one depth, column tiles) against the
//! plain reference, bit for bit, on the CPU and on the GPU; the two pad rules.
//! (The reference against an independent implementation: frontend_fixtures.rs.)

use crate::common::ramp;
use tpb_emu::frontend::{self, Depth, PadRule, Pool, PoolMode, Tensor};
use tpb_emu::isa::enums::Dtype;

fn depth(kernel: u32, stride: u32, pads: [u32; 2], dilation: u32) -> Depth {
    Depth {
        kernel,
        stride,
        pads,
        dilation,
    }
}

/// The parameters every band shape is checked with.
fn params() -> Vec<Pool> {
    vec![
        Pool::new_3d(PoolMode::Max, 2, 2, 2),
        Pool::new(PoolMode::Max, 3, 3)
            .stride(2, 2)
            .padding(1, 1)
            .with_depth(depth(3, 2, [1, 1], 1))
            .indices(true),
        Pool::new(PoolMode::Max, 3, 2)
            .padding(1, 1)
            .with_depth(depth(3, 1, [1, 1], 1)),
        Pool::new(PoolMode::Avg, 3, 3)
            .stride(2, 2)
            .padding(1, 1)
            .with_depth(depth(2, 2, [1, 0], 1))
            .ceil(true),
        Pool::new(PoolMode::Avg, 2, 3)
            .padding(1, 1)
            .with_depth(depth(3, 2, [1, 1], 1))
            .include_pad(false),
        Pool::new(PoolMode::Max, 2, 2)
            .dilation(2, 1)
            .with_depth(depth(2, 1, [0, 0], 2))
            .indices(true),
        // A depth kernel of one tap: records fold xy, one per output depth.
        Pool::new(PoolMode::Avg, 2, 2).with_depth(depth(1, 2, [0, 0], 1)),
        // ONNX's explicit pads, past PyTorch's half-kernel limit.
        Pool::new(PoolMode::Max, 3, 3)
            .stride(1, 1)
            .with_depth(depth(3, 1, [2, 2], 1))
            .rule(PadRule::Onnx)
            .indices(true),
    ]
}

#[test]
fn every_band_shape_matches_the_reference() {
    // (shape, the band shape it must take)
    let cases: [(&[u64], &str); 4] = [
        (&[2, 3, 5, 6, 7], "whole volumes"),
        // 48 slices of 40×40 fp32 (6.25 KiB each, 300 KiB in all): more
        // than one partition's SBUF.
        (&[1, 2, 48, 40, 40], "depth bands"),
        // One 230×230 fp32 slice is 207 KiB: rows of one depth a band.
        (&[1, 1, 3, 230, 230], "row bands"),
        // One row of 50,000 fp32 (195 KiB) does not fit: column tiles.
        (&[1, 1, 3, 3, 50_000], "column tiles"),
    ];
    for (shape, what) in cases {
        let x = ramp(shape, shape.iter().sum());
        for p in params() {
            let c = frontend::compile(&p, &x).unwrap_or_else(|e| panic!("{what} {p}: {e}"));
            let shape_ok = match what {
                "whole volumes" => c.bands == 1,
                "depth bands" => c.bands > 1 && c.band_rows == c.plan.ho && c.band_depths >= 1,
                "row bands" => c.band_depths == 1 && c.band_rows < c.plan.ho,
                _ => c.band_cols < c.plan.wo,
            };
            assert!(
                shape_ok,
                "{what} {p}: {} bands of {}x{}x{}",
                c.bands, c.band_depths, c.band_rows, c.band_cols
            );
            let got = c.run(&mut tpb_emu::device::CpuExecutor::default()).unwrap();
            let want = frontend::reference(&p, &x).unwrap();
            assert_eq!(got.output.shape.len(), 5);
            assert_eq!(got, want, "{what} {p}");
        }
    }
}

#[test]
fn other_dtypes_match_the_reference() {
    let x = ramp(&[1, 3, 5, 7, 6], 9);
    let v = x.to_f32();
    let mk = |dtype: Dtype, f: &dyn Fn(f32) -> Vec<u8>| Tensor {
        dtype,
        shape: x.shape.clone(),
        data: v.iter().flat_map(|&a| f(a)).collect(),
    };
    for x in [
        mk(Dtype::FP16, &|a| {
            half::f16::from_f32(a).to_le_bytes().to_vec()
        }),
        mk(Dtype::BFLOAT16, &|a| {
            half::bf16::from_f32(a).to_le_bytes().to_vec()
        }),
        mk(Dtype::UINT8, &|a| vec![a.abs().min(255.0) as u8]),
    ] {
        for p in params() {
            let got = frontend::run_cpu(&p, &x).unwrap();
            assert_eq!(got, frontend::reference(&p, &x).unwrap(), "{} {p}", x.dtype);
        }
    }
}

#[test]
fn the_gpu_gives_the_cpu_bytes() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let mut exec = tpb_emu::device::gpu::GpuExecutor::new(&gpu, tpb_emu::limits::Arch::Cayman)
        .expect("pipelines");
    for shape in [&[2u64, 3, 5, 6, 7][..], &[1, 2, 48, 40, 40]] {
        let x = ramp(shape, 5);
        for p in params() {
            let got = frontend::run(&p, &x, &mut exec).unwrap();
            assert_eq!(got, frontend::run_cpu(&p, &x).unwrap(), "{shape:?} {p}");
        }
    }
}

#[test]
fn each_pad_rule_refuses_with_its_own_message() {
    let x = ramp(&[1, 1, 6, 6, 6], 3);
    // PyTorch's rule: pad 2 > 3 / 2.
    let torch = Pool::new(PoolMode::Max, 3, 3).with_depth(depth(3, 3, [2, 2], 1));
    let e = frontend::compile(&torch, &x).unwrap_err().to_string();
    assert!(
        e.contains("pad should be at most half of effective kernel size"),
        "{e}"
    );
    // The same pads are ONNX-legal.
    assert!(frontend::compile(&torch.rule(PadRule::Onnx), &x).is_ok());
    // ONNX's rule: a pad of 3 is not smaller than the kernel's 3, named by axis.
    let onnx = Pool::new(PoolMode::Max, 3, 3)
        .with_depth(depth(3, 3, [0, 3], 1))
        .rule(PadRule::Onnx);
    let e = frontend::compile(&onnx, &x).unwrap_err().to_string();
    assert!(
        e.contains("the end pad of axis D is 3, not smaller than the kernel's 3"),
        "{e}"
    );
    // A depth axis needs a 5-D input.
    let e = frontend::compile(
        &Pool::new_3d(PoolMode::Max, 2, 2, 2),
        &ramp(&[1, 1, 4, 4], 1),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("needs an N×C×D×H×W input"), "{e}");
}
