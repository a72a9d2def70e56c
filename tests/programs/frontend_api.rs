//! The pooling front end's program: tiling over rows and planes, the first-max
//! rule, `--emit`'s manifest, and errors instead of panics.

use crate::common::ramp;
use tpb_emu::frontend::{self, Pool2d, PoolMode, Tensor, emit};
use tpb_emu::isa::enums::Dtype;

#[test]
fn large_planes_are_cut_into_row_bands_and_match_the_reference() {
    // 300x300 fp32 = 352 KiB a plane: more than one partition's SBUF.
    let x = ramp(&[1, 3, 300, 300], 1);
    for p in [
        Pool2d::new(PoolMode::Max, 3, 3)
            .stride(2, 2)
            .padding(1, 1)
            .indices(true),
        Pool2d::new(PoolMode::Avg, 3, 3)
            .stride(2, 2)
            .padding(1, 1)
            .include_pad(false),
        Pool2d::new(PoolMode::Max, 2, 2).ceil(true).dilation(2, 1),
    ] {
        let c = frontend::compile(&p, &x).unwrap();
        assert!(
            c.bands > 1,
            "{p}: expected several row bands, got {}",
            c.bands
        );
        let got = c.run(&mut tpb_emu::device::CpuExecutor::default()).unwrap();
        assert_eq!(got, frontend::reference(&p, &x).unwrap(), "{p}");
    }
}

#[test]
fn other_dtypes_match_the_reference() {
    let x = ramp(&[2, 3, 9, 10], 2);
    let v = x.to_f32();
    let mk = |dtype: Dtype, f: &dyn Fn(f32) -> Vec<u8>| Tensor {
        dtype,
        shape: x.shape.clone(),
        data: v.iter().flat_map(|&a| f(a)).collect(),
    };
    let inputs = [
        mk(Dtype::FP16, &|a| {
            half::f16::from_f32(a).to_le_bytes().to_vec()
        }),
        mk(Dtype::BFLOAT16, &|a| {
            half::bf16::from_f32(a).to_le_bytes().to_vec()
        }),
        mk(Dtype::UINT8, &|a| vec![a.abs().min(255.0) as u8]),
    ];
    for x in &inputs {
        for p in [
            Pool2d::new(PoolMode::Max, 3, 3)
                .stride(2, 2)
                .padding(1, 1)
                .indices(true),
            Pool2d::new(PoolMode::Max, 3, 2).padding(1, 1).ceil(true),
            Pool2d::new(PoolMode::Avg, 3, 3).stride(2, 2).padding(1, 1),
        ] {
            let got = frontend::run_cpu(&p, x).unwrap();
            assert_eq!(got, frontend::reference(&p, x).unwrap(), "{} {p}", x.dtype);
        }
    }
}

#[test]
fn indices_follow_the_first_max_rule() {
    // Every element equal: each window's first in-bounds element wins.
    let x = Tensor::from_f32(&[1, 1, 4, 4], &[1.0; 16]);
    let p = Pool2d::new(PoolMode::Max, 3, 3)
        .stride(2, 2)
        .padding(1, 1)
        .indices(true);
    let got = frontend::run_cpu(&p, &x).unwrap();
    // Windows start at (-1,-1), (-1,1), (1,-1), (1,1): first in-bounds (0,0), (0,1), (1,0), (1,1).
    assert_eq!(got.indices.unwrap(), [0, 1, 4, 5]);
    // Ties later in the window do not win; a larger value does.
    let mut v = [0.0f32; 16];
    v[5] = 2.0;
    v[6] = 2.0;
    v[10] = 2.0;
    let x = Tensor::from_f32(&[1, 1, 4, 4], &v);
    let got = frontend::run_cpu(&Pool2d::new(PoolMode::Max, 4, 4).indices(true), &x).unwrap();
    assert_eq!(got.indices.unwrap(), [5]);
}

#[test]
fn emitted_programs_run_with_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let x = ramp(&[1, 130, 5, 6], 3);
    let p = Pool2d::new(PoolMode::Max, 2, 2).padding(1, 1).ceil(true);
    let c = frontend::compile(&p, &x).unwrap();
    let files = emit::write_program(&c.program, dir.path()).unwrap();
    let program = tpb_emu::runtime::manifest::load(&files[0]).unwrap();
    let m = tpb_emu::runtime::run_cpu(&program).unwrap();
    let want = frontend::reference(&p, &x).unwrap();
    assert_eq!(m.variable("y").unwrap(), &want.output.data[..]);
}

#[test]
fn bad_parameters_are_errors_not_panics() {
    let x = ramp(&[1, 2, 5, 5], 4);
    let bad = [
        Pool2d::new(PoolMode::Max, 0, 2),
        Pool2d::new(PoolMode::Max, 6, 6),
        Pool2d::new(PoolMode::Max, 2, 2).stride(0, 1),
        Pool2d::new(PoolMode::Avg, 2, 2).indices(true),
        Pool2d::new(PoolMode::Max, 2, 2).padding(3, 0),
        Pool2d::new(PoolMode::Max, 2, 2).dilation(70000, 1),
    ];
    for p in bad {
        assert!(frontend::compile(&p, &x).is_err(), "{p}");
        assert!(frontend::reference(&p, &x).is_err(), "{p}");
    }
    let one_d = ramp(&[1, 2, 7], 5);
    assert!(frontend::compile(&Pool2d::new(PoolMode::Max, 2, 2), &one_d).is_err());
    assert!(frontend::compile(&Pool2d::new(PoolMode::Max, 1, 2), &one_d).is_ok());
    let wrong = Tensor {
        dtype: Dtype::INT32,
        shape: vec![1, 1, 2, 2],
        data: vec![0; 16].into(),
    };
    assert!(frontend::compile(&Pool2d::new(PoolMode::Max, 2, 2), &wrong).is_err());
    let short = Tensor {
        dtype: Dtype::FP32,
        shape: vec![1, 1, 2, 2],
        data: vec![0; 15].into(),
    };
    assert!(frontend::compile(&Pool2d::new(PoolMode::Max, 2, 2), &short).is_err());
    let rank2 = Tensor::from_f32(&[4, 4], &[0.0; 16]);
    assert!(frontend::compile(&Pool2d::new(PoolMode::Max, 2, 2), &rank2).is_err());
}

/// A global average pool whose window (384 × 384 uint8) is longer than an
/// invocation may loop on llvmpipe: on a software rasterizer the GPU
/// executor runs the Pool record on the CPU reference between its DMAs, and
/// the whole program gives the reference's bytes (it gave 0 in every lane
/// but the first while the host ranges spanned whole regions); on any GPU
/// the output equals the reference's.
#[test]
fn a_global_pool_longer_than_the_loop_budget_runs_whole() {
    let Some(gpu) = crate::common::gpu() else {
        return;
    };
    let (h, w) = (384u64, 384u64);
    let data: Vec<u8> = (0..128 * h * w).map(|i| ((i * 7919) % 251) as u8).collect();
    let x = Tensor {
        dtype: Dtype::UINT8,
        shape: vec![1, 128, h, w],
        data: data.into(),
    };
    let p = Pool2d::new(PoolMode::Avg, h as u32, w as u32);
    let mut exec = tpb_emu::device::gpu::GpuExecutor::new(&gpu, tpb_emu::limits::Arch::Cayman)
        .expect("pipelines");
    let got = frontend::run(&p, &x, &mut exec).unwrap();
    assert_eq!(got, frontend::reference(&p, &x).unwrap(), "{p}");
    let budget =
        tpb_emu::device::gpu::batch::EncodeCx::of(&gpu, tpb_emu::limits::Arch::Cayman).loop_budget;
    assert_eq!(exec.host_ops(), budget.is_some() as u64);
}
