//! The backend flag end to end: `exec --backend gpu` dumps the same bytes as
//! `--backend cpu`; no adapter is exit 5; `info` and `bench pool` report.

use crate::common;
use crate::common::s;
use common::tpb_env;

use npyz::WriterBuilder;
use std::path::Path;
use tpb_emu::isa::enums::PoolFunc;
use tpb_emu::isa::samples::{seed_max_pool_select, seed_pool};
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::{Addr4, Region};

fn write_input(path: &Path) {
    // 16 lanes of a 4×4 map: lane l holds l*100 + 0..16.
    let data: Vec<f32> = (0..16)
        .flat_map(|l| (0..16).map(move |v| (l * 100 + v) as f32))
        .collect();
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&[16, 16])
        .writer(std::fs::File::create(path).unwrap())
        .begin_nd()
        .unwrap();
    w.extend(data).unwrap();
    w.finish().unwrap();
}

#[test]
fn exec_on_the_gpu_dumps_what_the_cpu_dumps() {
    if common::gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut avg = seed_pool(PoolFunc::AVG_POOL, 16);
    avg.dst.addr = Addr4::new(Region::Sbuf, 0, 0x200);
    let mut sel = seed_max_pool_select(16);
    sel.dst.addr = Addr4::new(Region::Sbuf, 0, 0x300);
    let stream = dir.path().join("s.bin");
    std::fs::write(
        &stream,
        to_bytes(&[
            seed_pool(PoolFunc::MAX_POOL, 16).encode(),
            avg.encode(),
            sel.encode(),
        ]),
    )
    .unwrap();
    let input = dir.path().join("x.npy");
    write_input(&input);
    let mut outs = Vec::new();
    for backend in ["cpu", "gpu"] {
        let dump = |off: &str, dt: &str, name: &str| {
            format!(
                "sbuf:0:{off}:{dt}:16,2,2={}",
                s(&dir.path().join(format!("{backend}-{name}.npy")))
            )
        };
        let o = tpb_env(
            &[
                "exec",
                s(&stream),
                "--backend",
                backend,
                "--load",
                &format!("sbuf:0:0={}", s(&input)),
                "--dump",
                &dump("0x100", "fp32", "max"),
                "--dump",
                &dump("0x200", "fp32", "avg"),
                "--dump",
                &dump("0x300", "uint8", "sel"),
            ],
            &[],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{backend}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("({}", "cayman, ")));
        let files: Vec<Vec<u8>> = ["max", "avg", "sel"]
            .iter()
            .map(|n| std::fs::read(dir.path().join(format!("{backend}-{n}.npy"))).unwrap())
            .collect();
        outs.push(files);
    }
    assert_eq!(outs[0], outs[1], "cpu and gpu dumps differ");
    // Hand values, lane 3: max of windows of 300+{0,1,4,5}… = 305, 307, 313, 315.
    let npy = npyz::NpyFile::new(&outs[1][0][..]).unwrap();
    let v: Vec<f32> = npy.into_vec().unwrap();
    assert_eq!(&v[12..16], &[305.0, 307.0, 313.0, 315.0]);
}

#[test]
fn gpu_backend_without_an_adapter_exits_5() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("s.bin");
    std::fs::write(
        &stream,
        to_bytes(&[seed_pool(PoolFunc::MAX_POOL, 4).encode()]),
    )
    .unwrap();
    // No adapter of a backend this machine cannot have.
    let env = [("WGPU_BACKEND", "dx12")];
    let o = tpb_env(&["exec", s(&stream), "--backend", "gpu"], &env);
    assert_eq!(o.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&o.stderr).contains("apt-get install mesa-vulkan-drivers"));
    // auto falls back to the CPU backend.
    let o = tpb_env(&["exec", s(&stream), "--backend", "auto"], &env);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains(", cpu)"));
    let o = tpb_env(&["bench", "pool", "--backend", "gpu"], &env);
    assert_eq!(o.status.code(), Some(5));
}

#[test]
fn info_lists_adapters_and_the_auto_choice() {
    let o = tpb_env(&["info"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("--backend auto: "), "{out}");
    if common::gpu().is_some() {
        assert!(out.contains("[0] "), "{out}");
        assert!(!out.contains("--backend gpu: none"), "{out}");
    }
}

/// `--rows-runs` picks the fast path's runs per invocation on the GPU, is
/// refused on the CPU backend, and takes only 1, 2 or 4.
#[test]
fn bench_pool_rows_runs() {
    if common::gpu().is_none() {
        return;
    }
    let args = |backend: &'static str, runs: &'static str| {
        let base = ["bench", "pool", "--backend", backend, "--bytes", "524288"];
        let rest = ["--repeat", "1", "--records", "10", "--rows-runs", runs];
        base.into_iter().chain(rest).collect::<Vec<_>>()
    };
    let o = tpb_env(&args("gpu", "1"), &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("pool/copy ratio"));
    let o = tpb_env(&args("cpu", "1"), &[]);
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--rows-runs applies to the GPU"));
    let o = tpb_env(&args("gpu", "3"), &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bench_pool_reports_rows_and_ratio() {
    if common::gpu().is_none() {
        return;
    }
    for backend in ["cpu", "gpu"] {
        let o = tpb_env(
            &[
                "bench",
                "pool",
                "--backend",
                backend,
                "--bytes",
                "524288",
                "--repeat",
                "1",
                "--records",
                "300",
                "--json",
            ],
            &[],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        let rows = v["rows"].as_array().unwrap();
        assert!(rows.len() >= 4, "{v}");
        assert_eq!(rows[0]["bytes"], 524288 + 524288 / 4);
        assert!(rows[0]["gb_per_s"].as_f64().unwrap() > 0.0);
        assert!(v["pool_over_copy"][0].as_f64().unwrap() > 0.0);
        assert_eq!(v["nonzero_fraction"], 1.0);
    }
    // A flag's value out of its bounds is a usage error (exit 2).
    let o = tpb_env(&["bench", "pool", "--bytes", "7"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--bytes 7"));
    let o = tpb_env(&["bench", "pool", "--nonzero-fraction", "1.5"], &[]);
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--nonzero-fraction 1.5"));
}
