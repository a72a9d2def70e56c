//! `tpb-emu why` and `run --snapshot` (issue #36 items 1 and 2): hand-built
//! programs whose chains are known, on the CPU and on the GPU (lavapipe in
//! CI), their values checked against the files' bytes; snapshots after every
//! record against the CPU reference's memory at that point (a run stopped
//! by its record budget); bad input. Every expected value is derived by hand
//! in the comments.

use crate::common::{self, code, s, stderr, tpb};
use serde_json::Value;
use std::path::Path;
use tpb_emu::isa::Record;
use tpb_emu::isa::build::Geometry;
use tpb_emu::isa::enums::{Dtype, Engine, ReduceAxis, ReduceOp, UpdateMode, WaitMode};
use tpb_emu::isa::record::Events;
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::{Addr4, Region};
use tpb_emu::runtime::build::{dma_memcpy, ev_update, ev_wait, on_chip, var, walk, with_events};

/// Elements between SBUF partitions for a 4-byte dtype.
const LANE_F32: i32 = 1 << 16;

/// One variable of a hand-written manifest.
struct Var<'a> {
    name: &'a str,
    id: u32,
    dtype: &'a str,
    shape: &'a [u64],
    /// An input's fp32/int32 elements.
    init: Option<Vec<u8>>,
}

/// Writes `dir/program.toml`, one `.bin` per stream and each input's `.npy`.
fn manifest(dir: &Path, streams: &[(Engine, Vec<Record>)], vars: &[Var]) -> std::path::PathBuf {
    let mut t = String::from("arch = \"cayman\"\n[streams]\n");
    for (e, recs) in streams {
        std::fs::write(dir.join(format!("{}.bin", e.name())), to_bytes(recs)).unwrap();
        t += &format!("{} = \"{}.bin\"\n", e.name(), e.name());
    }
    for v in vars {
        t += &format!(
            "[[variable]]\nname = \"{}\"\nid = {}\ndtype = \"{}\"\nshape = {:?}\nrole = \"{}\"\n",
            v.name,
            v.id,
            v.dtype,
            v.shape,
            if v.init.is_some() { "input" } else { "output" }
        );
        if let Some(bytes) = &v.init {
            let d = if v.dtype == "fp32" {
                Dtype::FP32
            } else {
                Dtype::INT32
            };
            let f = dir.join(format!("{}.npy", v.name));
            tpb_emu::npy::write_npy(&f, d, v.shape, bytes).unwrap();
            t += &format!("file = \"{}.npy\"\n", v.name);
        }
    }
    let p = dir.join("program.toml");
    std::fs::write(&p, t).unwrap();
    p
}

/// `why --json` on `backend`: the object.
fn why_json(source: &Path, element: &str, backend: &str, extra: &[&str]) -> Value {
    let mut args = vec!["why", s(source), element, "--json", "--backend", backend];
    args.extend_from_slice(extra);
    let o = tpb(&args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let line = String::from_utf8(o.stdout).unwrap();
    serde_json::from_str(line.trim()).unwrap()
}

/// The element's bits as a number.
fn bits(e: &Value) -> u64 {
    let b = e["bits"].as_str().unwrap();
    u64::from_str_radix(b.trim_start_matches("0x"), 16).unwrap()
}

/// Element `flat` (of `size` bytes) of an `.npy`'s data, little-endian.
fn npy_elem(path: &Path, flat: usize, size: usize) -> u64 {
    let n = tpb_emu::npy::read_npy(path).unwrap();
    let mut w = [0u8; 8];
    w[..size].copy_from_slice(&n.data[flat * size..(flat + 1) * size]);
    u64::from_le_bytes(w)
}

/// On the GPU (lavapipe in CI: a missing adapter fails there), the same
/// chain as on the CPU, the outputs checked against the CPU reference.
fn same_on_gpu(source: &Path, element: &str, cpu: &Value, extra: &[&str]) {
    if common::gpu().is_none() {
        return;
    }
    let gpu = why_json(source, element, "gpu", extra);
    assert_eq!(gpu["checked_against_cpu"], true);
    assert_eq!(gpu["chain"], cpu["chain"]);
}

#[test]
fn dma_in_pool_max_dma_out() {
    // examples/program: x[l][k] = ((37l + 11k) mod 101)·0.37 − 15 (fp32,
    // [128, 16], a 4×4 map per lane); POOL record 1 is the 2×2 max into
    // SBUF 0x200; ACT record 1 DMAs it to y_max as bf16. y_max[3,1] is lane
    // 3's window (rows 0-1, columns 2-3): k = 2, 3, 6, 7, i.e.
    // (111 + 22) mod 101 = 32, 43, 76, 87: −3.16, 0.91, 13.12, 17.19: the
    // fourth (window element 3, x[3,7]) wins.
    let src = Path::new("examples/program/program.toml");
    let w = why_json(src, "y_max[3,1]", "cpu", &[]);
    assert_eq!(w["element"], "y_max[3,1]");
    let chain = w["chain"].as_array().unwrap();
    assert_eq!(chain.len(), 4, "{w:#}");
    // 1: y_max[3,1], written by ACT record 1 (a DMA) from SBUF partition 3, 0x204.
    assert_eq!(chain[0]["element"]["name"], "y_max[3,1]");
    let out = tempfile::tempdir().unwrap();
    let o = tpb(&["run", s(src), "--backend", "cpu", "--out", s(out.path())]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        bits(&chain[0]["element"]),
        npy_elem(&out.path().join("y_max.npy"), 3 * 4 + 1, 2)
    );
    let w0 = &chain[0]["writer"];
    assert_eq!(
        (
            w0["kind"].as_str(),
            w0["engine"].as_str(),
            w0["index"].as_u64()
        ),
        (Some("record"), Some("act"), Some(1))
    );
    assert_eq!(w0["op"], "DMA");
    assert_eq!(w0["sources"][0]["element"]["name"], "sbuf[3]+0x204");
    // 2: the Pool max: four window elements, the fourth won.
    assert_eq!(chain[1]["element"]["name"], "sbuf[3]+0x204");
    let w1 = &chain[1]["writer"];
    assert_eq!(
        (w1["engine"].as_str(), w1["index"].as_u64()),
        (Some("pool"), Some(1))
    );
    assert_eq!(w1["op"], "Pool max");
    let srcs = w1["sources"].as_array().unwrap();
    let offs: Vec<&str> = srcs
        .iter()
        .map(|s| s["element"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        offs,
        ["sbuf[3]+0x8", "sbuf[3]+0xc", "sbuf[3]+0x18", "sbuf[3]+0x1c"]
    );
    for (s, k) in srcs.iter().zip([32f32, 43.0, 76.0, 87.0]) {
        assert_eq!(bits(&s["element"]) as u32, (k * 0.37 - 15.0).to_bits());
        assert_eq!(s["written_by"], "sp record 0");
    }
    assert_eq!(w1["winner"], 3);
    // 3: that element came in by SP's DMA from x[3,7] ...
    assert_eq!(chain[2]["element"]["name"], "sbuf[3]+0x1c");
    assert_eq!(chain[2]["writer"]["engine"], "sp");
    // 4: ... an input, whose bytes are x.npy's.
    assert_eq!(chain[3]["element"]["name"], "x[3,7]");
    assert_eq!(chain[3]["writer"]["kind"], "input");
    let x = npy_elem(Path::new("examples/program/x.npy"), 3 * 16 + 7, 4);
    assert_eq!(bits(&chain[3]["element"]), x);
    assert_eq!(x as u32, (87f32 * 0.37 - 15.0).to_bits());
    // The text form says the same.
    let o = tpb(&["why", s(src), "y_max[3,1]", "--backend", "cpu"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("window element 3: sbuf[3]+0x1c"), "{text}");
    assert!(text.contains("<- won"), "{text}");
    assert!(text.contains("input `x`"), "{text}");
    same_on_gpu(src, "y_max[3,1]", &w, &[]);
}

/// POOL: IOTA (int32, base 10, step 3, 100 per lane) over 4 lanes × 8 into
/// SBUF 0x2000, then sem[0] += 1; ACT: wait, DMA it into y[l][0..8] of an
/// int32 [4, 16] output (y[l][8..16] never written).
fn iota_program(dir: &Path) -> std::path::PathBuf {
    let g = Geometry {
        channels: 4,
        elements: 8,
        dst: Addr4::new(Region::Sbuf, 0, 0x2000),
        ..Geometry::default()
    };
    let iota = with_events(
        g.iota(Dtype::INT32, 10, 3, 100).encode(),
        ev_update(UpdateMode::SEM_INC, 0, 0),
    );
    let out = with_events(
        dma_memcpy(
            walk(on_chip(0x2000), [1, LANE_F32], [8, 4], 4),
            walk(var(1, 0), [1, 16], [8, 4], 4),
            Dtype::INT32,
            Dtype::INT32,
            1,
            1,
        ),
        ev_wait(WaitMode::SEM_GE, 0, 1),
    );
    manifest(
        dir,
        &[(Engine::Pool, vec![iota]), (Engine::Act, vec![out])],
        &[Var {
            name: "y",
            id: 1,
            dtype: "int32",
            shape: &[4, 16],
            init: None,
        }],
    )
}

#[test]
fn an_iota_constant_and_an_element_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = iota_program(dir.path());
    // EC-47: lane 2, x = 5: 10 + 2·100 + 5·3 = 225.
    let w = why_json(&p, "y[2,5]", "cpu", &[]);
    let chain = w["chain"].as_array().unwrap();
    assert_eq!(chain.len(), 2, "{w:#}");
    assert_eq!(chain[0]["element"]["value"], "225");
    assert_eq!(chain[0]["writer"]["engine"], "act");
    assert_eq!(chain[1]["element"]["name"], "sbuf[2]+0x2014");
    assert_eq!(chain[1]["element"]["value"], "225");
    assert_eq!(chain[1]["writer"]["op"], "Iota");
    assert_eq!(chain[1]["writer"]["rule"], "constant");
    let out = tempfile::tempdir().unwrap();
    let o = tpb(&["run", s(&p), "--backend", "cpu", "--out", s(out.path())]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        bits(&chain[0]["element"]),
        npy_elem(&out.path().join("y.npy"), 2 * 16 + 5, 4)
    );
    assert_eq!(npy_elem(&out.path().join("y.npy"), 2 * 16 + 5, 4), 225);
    same_on_gpu(&p, "y[2,5]", &w, &[]);
    // y[1,12]: no record wrote it: the output's initial zeros.
    let w = why_json(&p, "y[1,12]", "cpu", &[]);
    let chain = w["chain"].as_array().unwrap();
    assert_eq!(chain.len(), 1, "{w:#}");
    assert_eq!(chain[0]["element"]["value"], "0");
    assert_eq!(chain[0]["writer"]["kind"], "never");
    assert!(
        chain[0]["writer"]["what"]
            .as_str()
            .unwrap()
            .contains("never written")
    );
    assert_eq!(npy_elem(&out.path().join("y.npy"), 16 + 12, 4), 0);
    same_on_gpu(&p, "y[1,12]", &w, &[]);
}

#[test]
fn a_cross_lane_reduce() {
    // x[p][k] = 10p + k (fp32 [4, 8]); SP DMAs lane p into SBUF partition
    // p; POOL adds the 4 lanes per position (EC-54) into partition 0,
    // 0x2000; ACT DMAs those 8 to y. y[3] = 3 + 13 + 23 + 33 = 72.
    let dir = tempfile::tempdir().unwrap();
    let x: Vec<u8> = (0..4)
        .flat_map(|p| (0..8).map(move |k| (10 * p + k) as f32))
        .flat_map(f32::to_le_bytes)
        .collect();
    let g = Geometry {
        channels: 4,
        elements: 8,
        src: Addr4::new(Region::Sbuf, 0, 0),
        dst: Addr4::new(Region::Sbuf, 0, 0x2000),
        ..Geometry::default()
    };
    let clr = with_events(
        g.cross_lane_reduce(
            ReduceOp::ADD,
            ReduceAxis::PARTITIONS,
            Dtype::FP32,
            Dtype::FP32,
            1.0,
        )
        .encode(),
        Events {
            update_mode: UpdateMode::SEM_INC,
            update_idx: 1,
            ..ev_wait(WaitMode::SEM_GE, 0, 1)
        },
    );
    let x_in = dma_memcpy(
        walk(var(1, 0), [1, 8], [8, 4], 4),
        walk(on_chip(0), [1, LANE_F32], [8, 4], 4),
        Dtype::FP32,
        Dtype::FP32,
        0,
        1,
    );
    let y_out = with_events(
        dma_memcpy(
            walk(on_chip(0x2000), [1, 0], [8, 1], 4),
            walk(var(2, 0), [1, 0], [8, 1], 4),
            Dtype::FP32,
            Dtype::FP32,
            2,
            1,
        ),
        ev_wait(WaitMode::SEM_GE, 1, 1),
    );
    let p = manifest(
        dir.path(),
        &[
            (Engine::Sp, vec![x_in]),
            (Engine::Pool, vec![clr]),
            (Engine::Act, vec![y_out]),
        ],
        &[
            Var {
                name: "x",
                id: 1,
                dtype: "fp32",
                shape: &[4, 8],
                init: Some(x),
            },
            Var {
                name: "y",
                id: 2,
                dtype: "fp32",
                shape: &[8],
                init: None,
            },
        ],
    );
    let w = why_json(&p, "y[3]", "cpu", &[]);
    let chain = w["chain"].as_array().unwrap();
    assert_eq!(chain.len(), 4, "{w:#}");
    assert_eq!(chain[0]["element"]["value"], "72");
    let r = &chain[1]["writer"];
    assert_eq!(chain[1]["element"]["name"], "sbuf[0]+0x200c");
    assert_eq!(r["engine"], "pool");
    let lanes: Vec<(&str, &str)> = r["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["element"]["name"].as_str().unwrap(),
                s["element"]["value"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        lanes,
        [
            ("sbuf[0]+0xc", "3"),
            ("sbuf[1]+0xc", "13"),
            ("sbuf[2]+0xc", "23"),
            ("sbuf[3]+0xc", "33")
        ]
    );
    assert_eq!(chain[3]["element"]["name"], "x[0,3]");
    assert_eq!(chain[3]["writer"]["kind"], "input");
    assert_eq!(
        bits(&chain[3]["element"]),
        npy_elem(&dir.path().join("x.npy"), 3, 4)
    );
    let out = tempfile::tempdir().unwrap();
    let o = tpb(&["run", s(&p), "--backend", "cpu", "--out", s(out.path())]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        npy_elem(&out.path().join("y.npy"), 3, 4),
        72f32.to_bits() as u64
    );
    assert_eq!(bits(&chain[0]["element"]), 72f32.to_bits() as u64);
    same_on_gpu(&p, "y[3]", &w, &[]);
}

#[test]
fn why_of_a_neff() {
    let dir = tempfile::tempdir().unwrap();
    let neff = dir.path().join("m.neff");
    let o = tpb(&["pack", "examples/program/program.toml", "-o", s(&neff)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let x = "x=examples/program/x.npy";
    let w = why_json(&neff, "y_max[3,1]", "cpu", &["--input", x]);
    let chain = w["chain"].as_array().unwrap();
    assert_eq!(chain.last().unwrap()["element"]["name"], "x[3,7]", "{w:#}");
    // An output the NEFF does not have: exit 2, no file.
    let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    let o = tpb(&["why", s(&neff), "nope[0]", "--input", x, "--backend", "cpu"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no output of that name"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), before.len());
}

#[test]
fn why_bad_input_is_exit_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::env::current_dir()
        .unwrap()
        .join("examples/program/program.toml");
    let src = s(&src);
    // Run in an empty folder: `why` writes no file there, whatever happens.
    let tpb_in = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tpb-emu"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    for (el, msg) in [
        ("nope[0,0]", "no output of that name"),
        ("y_max[128,0]", "out of range"),
        ("y_max[0,4]", "out of range"),
        ("y_max[0]", "indices for an output of shape"),
        ("y_max[0,x]", "expected OUTPUT[INDEX]"),
        ("y_max[0,0", "expected OUTPUT[INDEX]"),
        ("y_max", "expected OUTPUT[INDEX]"),
        ("[0]", "expected OUTPUT[INDEX]"),
    ] {
        let o = tpb_in(&["why", src, el, "--backend", "cpu"]);
        assert_eq!(code(&o), 2, "{el}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{el}: {}", stderr(&o));
        let o = tpb_in(&["why", src, el, "--backend", "cpu", "--json"]);
        assert_eq!(code(&o), 2, "{el}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["exit"], 2);
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// SBUF, PSUM and each DRAM variable (by name).
type Memory = (Vec<u8>, Vec<u8>, Vec<(String, Vec<u8>)>);

/// SBUF, PSUM and DRAM of the example after its first `n` records, from
/// the CPU reference run stopped by its record budget.
fn reference_after(n: u64) -> Memory {
    use tpb_emu::runtime::Machine;
    let program =
        tpb_emu::runtime::manifest::load(Path::new("examples/program/program.toml")).unwrap();
    let mut m = Machine::new(tpb_emu::runtime::stage(&program).unwrap());
    m.set_max_records(n);
    let _ = m.run(
        &mut tpb_emu::CpuExecutor::default(),
        &mut tpb_emu::device::NoTrace,
    );
    assert_eq!(m.total_executed(), n);
    let vars = ["x", "y_avg", "y_max"]
        .iter()
        .map(|v| (v.to_string(), m.variable(v).unwrap().to_vec()))
        .collect();
    (
        m.memory().region_bytes(Region::Sbuf).to_vec(),
        m.memory().region_bytes(Region::Psum).to_vec(),
        vars,
    )
}

#[test]
fn snapshots_after_each_record_equal_the_cpu_reference() {
    // The scheduler's order (EC-31): SP 0, POOL 0, POOL 1, ACT 0, ACT 1.
    let order = ["sp:0", "pool:0", "pool:1", "act:0", "act:1"];
    let mut backends = vec!["cpu"];
    if common::gpu().is_some() {
        backends.push("gpu");
    }
    for backend in backends {
        let dir = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = vec![
            "run".into(),
            "examples/program/program.toml".into(),
            "--backend".into(),
            backend.into(),
            "--out".into(),
            s(&dir.path().join("out")).into(),
        ];
        for (k, at) in order.iter().enumerate() {
            args.push("--snapshot".into());
            args.push(format!("{at}={}", s(&dir.path().join(format!("s{k}")))));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = tpb(&args);
        assert_eq!(code(&o), 0, "{backend}: {}", stderr(&o));
        for (k, at) in order.iter().enumerate() {
            let (sbuf, psum, vars) = reference_after(k as u64 + 1);
            let d = dir.path().join(format!("s{k}"));
            let got = |f: &str| tpb_emu::npy::read_npy(&d.join(f)).unwrap();
            let g = got("sbuf.npy");
            assert_eq!(g.shape, [128, sbuf.len() as u64 / 128]);
            assert!(*g.data == sbuf[..], "{backend} {at}: sbuf");
            assert!(*got("psum.npy").data == psum[..], "{backend} {at}: psum");
            for (name, bytes) in vars {
                let g = got(&format!("{name}.npy"));
                assert!(*g.data == bytes[..], "{backend} {at}: {name}");
            }
        }
    }
}

#[test]
fn snapshot_bad_input_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let snap = d.join("snap");
    for (arg, want, msg) in [
        ("pool:0", 2, "expected ENGINE:N=DIR"),
        ("gpu:0=X", 2, "expected ENGINE:N=DIR"),
        ("pool:x=X", 2, "expected ENGINE:N=DIR"),
        ("pool:2=X", 2, "has 2 records"),
        ("pe:0=X", 2, "has 0 records"),
    ] {
        let arg = arg.replace('X', s(&snap));
        let o = tpb(&[
            "run",
            "examples/program/program.toml",
            "--backend",
            "cpu",
            "--out",
            s(&out),
            "--snapshot",
            &arg,
        ]);
        assert_eq!(code(&o), want, "{arg}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{arg}: {}", stderr(&o));
        assert!(!out.exists() && !snap.exists(), "{arg}");
    }
    // A snapshot folder holding the program's input: refused before anything runs.
    for f in ["program.toml", "sp.bin", "pool.bin", "act.bin", "x.npy"] {
        std::fs::copy(Path::new("examples/program").join(f), d.join(f)).unwrap();
    }
    let o = tpb(&[
        "run",
        s(&d.join("program.toml")),
        "--backend",
        "cpu",
        "--out",
        s(&out),
        "--snapshot",
        &format!("sp:0={}", s(d)),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(!out.exists());
    assert!(!d.join("sbuf.npy").exists());
}

#[test]
fn a_reused_tile_is_explained_as_it_was_when_read() {
    // Two tiles through the same SBUF bytes: x[t][p][k] = 100t + 10p + k
    // (fp32 [2, 4, 8]). SP DMAs tile 0 to SBUF 0 (lane p: partition p);
    // POOL copies it to 0x2000; ACT DMAs that to y[0]; only then SP DMAs
    // tile 1 over SBUF 0, POOL copies it over 0x2000, ACT DMAs it to y[1].
    // y[0,2,5] = 25 came from x[0,2,5] through POOL record 0 and SP record
    // 0, although at the end SBUF holds tile 1 (125 there) and POOL record 1
    // and SP record 1 were the last to write those bytes.
    let dir = tempfile::tempdir().unwrap();
    let x: Vec<u8> = (0..2)
        .flat_map(|t| (0..4).flat_map(move |p| (0..8).map(move |k| (100 * t + 10 * p + k) as f32)))
        .flat_map(f32::to_le_bytes)
        .collect();
    let g = Geometry {
        channels: 4,
        elements: 8,
        src: Addr4::new(Region::Sbuf, 0, 0),
        dst: Addr4::new(Region::Sbuf, 0, 0x2000),
        ..Geometry::default()
    };
    let tile_in = |t: u32| {
        dma_memcpy(
            walk(var(1, t * 128), [1, 8], [8, 4], 4),
            walk(on_chip(0), [1, LANE_F32], [8, 4], 4),
            Dtype::FP32,
            Dtype::FP32,
            0,
            1,
        )
    };
    let tile_out = |t: u32| {
        dma_memcpy(
            walk(on_chip(0x2000), [1, LANE_F32], [8, 4], 4),
            walk(var(2, t * 128), [1, 8], [8, 4], 4),
            Dtype::FP32,
            Dtype::FP32,
            2,
            1,
        )
    };
    let copy = |n: u32| {
        with_events(
            g.copy(Dtype::FP32).encode(),
            Events {
                update_mode: UpdateMode::SEM_INC,
                update_idx: 1,
                ..ev_wait(WaitMode::SEM_GE, 0, n)
            },
        )
    };
    let p = manifest(
        dir.path(),
        &[
            (
                Engine::Sp,
                vec![
                    tile_in(0),
                    with_events(tile_in(1), ev_wait(WaitMode::SEM_GE, 2, 1)),
                ],
            ),
            (Engine::Pool, vec![copy(1), copy(2)]),
            (
                Engine::Act,
                vec![
                    with_events(tile_out(0), ev_wait(WaitMode::SEM_GE, 1, 1)),
                    with_events(tile_out(1), ev_wait(WaitMode::SEM_GE, 1, 2)),
                ],
            ),
        ],
        &[
            Var {
                name: "x",
                id: 1,
                dtype: "fp32",
                shape: &[2, 4, 8],
                init: Some(x),
            },
            Var {
                name: "y",
                id: 2,
                dtype: "fp32",
                shape: &[2, 4, 8],
                init: None,
            },
        ],
    );
    let w = why_json(&p, "y[0,2,5]", "cpu", &[]);
    let chain = w["chain"].as_array().unwrap();
    let names: Vec<&str> = chain
        .iter()
        .map(|l| l["element"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["y[0,2,5]", "sbuf[2]+0x2014", "sbuf[2]+0x14", "x[0,2,5]"],
        "{w:#}"
    );
    let values: Vec<&str> = chain
        .iter()
        .map(|l| l["element"]["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["25", "25", "25", "25"]);
    let writers: Vec<(&str, u64)> = chain[..3]
        .iter()
        .map(|l| {
            (
                l["writer"]["engine"].as_str().unwrap(),
                l["writer"]["index"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(writers, [("act", 0), ("pool", 0), ("sp", 0)]);
    // The tile-1 element of the same place: the second set of records.
    let w1 = why_json(&p, "y[1,2,5]", "cpu", &[]);
    let chain1 = w1["chain"].as_array().unwrap();
    assert_eq!(
        chain1.last().unwrap()["element"]["name"],
        "x[1,2,5]",
        "{w1:#}"
    );
    assert_eq!(chain1[0]["element"]["value"], "125");
    let writers: Vec<(&str, u64)> = chain1[..3]
        .iter()
        .map(|l| {
            (
                l["writer"]["engine"].as_str().unwrap(),
                l["writer"]["index"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(writers, [("act", 1), ("pool", 1), ("sp", 1)]);
    same_on_gpu(&p, "y[0,2,5]", &w, &[]);
}
