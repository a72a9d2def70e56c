//! `--png DIR` on `tpb-emu run` and `tpb-emu exec`: the pictures exist and
//! are not blank.

use crate::common;
use common::tpb;

use npyz::WriterBuilder;
use std::process::Output;
use tpb_emu::isa::PoolFunc;
use tpb_emu::isa::samples::seed_pool;
use tpb_emu::isa::stream::to_bytes;

fn exe(args: &[&str]) -> Output {
    let out = tpb(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Opens a PNG and checks it holds more than the background.
fn assert_drawn(path: &std::path::Path) {
    let img = image::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgb8();
    let colours: std::collections::HashSet<_> = img.pixels().map(|p| p.0).collect();
    assert!(colours.len() > 2, "{}: blank picture", path.display());
    let drawn = img
        .pixels()
        .filter(|p| **p != tpb_emu::viz::BACKGROUND && **p != tpb_emu::viz::TEXT)
        .count();
    assert!(drawn > 0, "{}: nothing but background", path.display());
}

#[test]
fn run_draws_every_output() {
    let d = tempfile::tempdir().unwrap();
    let (out, png) = (d.path().join("out"), d.path().join("png"));
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/program/program.toml");
    exe(&[
        "run",
        manifest,
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
        "--png",
        png.to_str().unwrap(),
    ]);
    for name in ["y_avg", "y_max"] {
        assert!(out.join(format!("{name}.npy")).exists());
        assert_drawn(&png.join(format!("{name}.png")));
    }
}

#[test]
fn exec_draws_every_dump() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("s.bin");
    std::fs::write(&s, to_bytes(&[seed_pool(PoolFunc::MAX_POOL, 4).encode()])).unwrap();
    // Lane k holds 16 values k*16 .. k*16+15, so the maxima differ per lane.
    let x = d.path().join("x.npy");
    let values: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&[4, 16])
        .writer(std::io::BufWriter::new(std::fs::File::create(&x).unwrap()))
        .begin_nd()
        .unwrap();
    w.extend(values).unwrap();
    w.finish().unwrap();
    let png = d.path().join("png");
    let max = d.path().join("max.npy");
    exe(&[
        "exec",
        s.to_str().unwrap(),
        "--backend",
        "cpu",
        "--load",
        &format!("sbuf:0:0={}", x.display()),
        "--dump",
        &format!("sbuf:0:0x100:fp32:4x2x2={}", max.display()),
        "--png",
        png.to_str().unwrap(),
    ]);
    assert!(max.exists());
    assert_drawn(&png.join("max.png"));
}
