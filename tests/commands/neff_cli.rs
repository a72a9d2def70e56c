//! The NEFF commands end to end: every reader gate exits 4 with its message,
//! `--input` usage errors exit 2, a rejected trigger exits 3, the rebuilt
//! fixture runs to output == input on both backends, and `pack` → `run`
//! gives the outputs of the source program (the example manifest and a
//! `pool2d` program).

use crate::common;
use crate::common::{s, stderr};
use crate::neff_fixture;
use common::tpb;
use neff_fixture::*;
use std::path::Path;
use tpb_emu::isa::enums::Dtype;
use tpb_emu::npy::{read_npy, write_npy};

/// The fixture's input: 32 fp32 values.
fn fixture_input(dir: &Path) -> (std::path::PathBuf, Vec<u8>) {
    let data: Vec<u8> = (0..32)
        .flat_map(|i| (i as f32 * 0.25 - 3.0).to_le_bytes())
        .collect();
    let p = dir.join("in.npy");
    write_npy(&p, Dtype::FP32, &[32], &data).unwrap();
    (p, data)
}

#[test]
fn every_gate_exits_4_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture();
    let len = f.len() as u64;
    let mut md5 = f.clone();
    md5[0x400 + 30] ^= 0x10;
    let tar = fixture_tar(&Parts::default());
    let mut sha = pkg1(&tar);
    sha[0x400 + 700] ^= 1;
    let part = |p: Parts| pkg2(&fixture_tar(&p));
    let cases: Vec<(Vec<u8>, String)> = vec![
        (
            f[..1000].to_vec(),
            "Invalid number of NEFF bytes received 3e8".into(),
        ),
        (
            with_u64(&f, 8, len + 5),
            format!(
                "Invalid NEFF file size hdr sz: {:x}, file sz: {len:x}",
                len + 5
            ),
        ),
        (
            with_u64(&f, 0x18, 3),
            "NEFF version: 3.0 is not supported, accepted version range: 0.x-2.x".into(),
        ),
        (
            with_u64(&f, 0x220, 1 << 33),
            "features: 0x200000000) has been compiled by a newer version of Neuron compiler".into(),
        ),
        (
            with_u64(&f, 0x10, len),
            format!("Invalid NEFF data size({len:x} vs {len:x})"),
        ),
        (with_u64(&f, 0, 7), "Unsupported NEFF packager: 7".into()),
        (md5, "MD5 mismatch!".into()),
        (sha, "SHA256 mismatch!".into()),
        (
            part(Parts {
                neff_json: Some(NEFF_JSON.replace("__kelf", "x")),
                ..Parts::default()
            }),
            "No KELF node found in NEFF JSON".into(),
        ),
        (
            part(Parts {
                drop: vec!["sg00/def.json"],
                ..Parts::default()
            }),
            "sg00/def.json is missing".into(),
        ),
        (
            part(Parts {
                def_json: Some(DEF_JSON.replace("\"var_id\": 1}", "\"var_id\": 9}")),
                ..Parts::default()
            }),
            "Unexpected var_ids set! max=9, size=5".into(),
        ),
        (
            part(Parts {
                def_json: Some(DEF_JSON.replace("\"type\": \"output\"", "\"type\": \"input\"")),
                ..Parts::default()
            }),
            "subgraph sg00 has no Outputs".into(),
        ),
        (
            part(Parts {
                pe_bin: Some(vec![0; 65]),
                ..Parts::default()
            }),
            "sg00/pe.bin: stream length 65 is not a multiple of 64".into(),
        ),
    ];
    for (i, (bytes, want)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("g{i}.neff"));
        std::fs::write(&p, bytes).unwrap();
        let o = tpb(&["inspect", s(&p)]);
        assert_eq!(o.status.code(), Some(4), "case {i}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(want.as_str()),
            "case {i}: {} lacks {want}",
            stderr(&o)
        );
        let o = tpb(&[
            "run",
            s(&p),
            "--input",
            "input=none.npy",
            "--backend",
            "cpu",
        ]);
        assert_eq!(o.status.code(), Some(4), "run case {i}: {}", stderr(&o));
    }
    // --no-verify skips the digest: the MD5 case then loads if the gzip still inflates,
    // and in any case no longer says "MD5 mismatch!".
    let p = dir.path().join("g6.neff");
    let o = tpb(&["inspect", s(&p), "--no-verify"]);
    assert!(!stderr(&o).contains("MD5 mismatch!"));
}

#[test]
fn fixture_runs_to_output_eq_input_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("fixture.neff");
    std::fs::write(&p, fixture()).unwrap();
    let (input, data) = fixture_input(dir.path());
    let arg = format!("input={}", s(&input));
    let mut backends = vec!["cpu"];
    if common::gpu().is_some() {
        backends.push("gpu");
    }
    for b in backends {
        let out = dir.path().join(b);
        let o = tpb(&[
            "run",
            s(&p),
            "--input",
            &arg,
            "--out",
            s(&out),
            "--backend",
            b,
        ]);
        assert_eq!(o.status.code(), Some(0), "{b}: {}", stderr(&o));
        let y = read_npy(&out.join("output.npy")).unwrap();
        assert_eq!(y.shape, [32]);
        assert_eq!(y.data, data, "{b}: output == input");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("pe 1, act 0, pool 3, dve 0, sp 0 (total 4)"),
            "{text}"
        );
    }
    // inspect: the histogram says what happens to each opcode.
    let o = tpb(&["inspect", s(&p)]);
    assert_eq!(o.status.code(), Some(0));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("0xc1 PSEUDO_DMA_TRIGGER") && t.contains("lowered (NEFF-EC-4)"),
        "{t}"
    );
    assert!(t.contains("0xc8 PSEUDO_TRIGGER_COLLECTIVE") && t.contains("lowered (NEFF-EC-5)"));
    assert!(t.contains("0xa0 EVENT_SEMAPHORE") && t.contains("executes"));
    let o = tpb(&["inspect", s(&p), "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["header"]["uuid"], "561826fb-125f-4bb8-991c-29e085c8949a");
    assert_eq!(j["engines"][2]["records"], 3);
    assert_eq!(j["engines"][2]["opcodes"][0]["opcode"], 0xA0);
    assert_eq!(j["engines"][2]["opcodes"][1]["count"], 2);
    assert_eq!(j["variables"][1]["kind"], "state-buffer");
    assert_eq!(j["outputs"][0]["shape"], serde_json::json!([32]));
    // validate, disasm and lower take the NEFF too.
    let o = tpb(&["validate", s(&p)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = tpb(&["disasm", s(&p), "--engine", "pool"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 3);
    let o = tpb(&["lower", s(&p), "--out", s(&dir.path().join("low"))]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(dir.path().join("low/pool.bin"))
            .unwrap()
            .len(),
        192
    );
}

#[test]
fn input_names_are_usage_errors_and_contents_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("fixture.neff");
    std::fs::write(&p, fixture()).unwrap();
    let (input, _) = fixture_input(dir.path());
    let good = format!("input={}", s(&input));
    for args in [
        vec![],
        vec!["--input", "nope=x.npy"],
        vec!["--input", "input"],
        vec!["--input", good.as_str(), "--input", good.as_str()],
    ] {
        let mut a = vec!["run", s(&p), "--backend", "cpu"];
        a.extend(args.iter());
        let o = tpb(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
    }
    let wrong = dir.path().join("w.npy");
    write_npy(&wrong, Dtype::FP32, &[31], &[0; 124]).unwrap();
    let o = tpb(&[
        "run",
        s(&p),
        "--input",
        &format!("input={}", s(&wrong)),
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("has shape [31], the input needs [32]"),
        "{}",
        stderr(&o)
    );
    // A rejected trigger: exit 3, named by engine and NEFF offset.
    let mut pool = pool_bin();
    pool[64 + 48] = 5; // block_id 5
    let q = dir.path().join("q.neff");
    std::fs::write(
        &q,
        pkg2(&fixture_tar(&Parts {
            pool_bin: Some(pool),
            ..Parts::default()
        })),
    )
    .unwrap();
    let o = tpb(&["run", s(&q), "--input", &good, "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("opcode=193, offset=64: emu_opcode_supported"),
        "{}",
        stderr(&o)
    );
}

fn same_outputs(a: &Path, b: &Path, names: &[&str]) {
    for n in names {
        let x = std::fs::read(a.join(format!("{n}.npy"))).unwrap();
        let y = std::fs::read(b.join(format!("{n}.npy"))).unwrap();
        assert_eq!(x, y, "{n}.npy");
    }
}

#[test]
fn pack_then_run_matches_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let neff = dir.path().join("program.neff");
    let o = tpb(&["pack", "examples/program/program.toml", "-o", s(&neff)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let again = dir.path().join("again.neff");
    tpb(&["pack", "examples/program/program.toml", "-o", s(&again)]);
    // NEFF-EC-13: reproducible bytes (the name field holds the stem, the same for both).
    assert_eq!(
        std::fs::read(&neff).unwrap(),
        std::fs::read(&again).unwrap()
    );
    let bytes = std::fs::read(&neff).unwrap();
    assert_eq!(&bytes[0..8], &2u64.to_le_bytes());
    assert_eq!(&bytes[0x28..0x28 + 14], b"tpb-emu 0.1.0\0");
    assert_eq!(&bytes[0xDC..0xDC + 8], b"program\0");
    assert_eq!(&bytes[0xAC + 16..0xAC + 32], &[b'0'; 16]);
    assert_eq!(bytes[0xCC + 6] >> 4, 4, "uuid version 4");
    assert_eq!(bytes[0xCC + 8] >> 6, 2, "uuid variant");
    assert_eq!(&bytes[0x400..0x40A], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let o = tpb(&[
        "run",
        "examples/program/program.toml",
        "--out",
        s(&a),
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = tpb(&[
        "run",
        s(&neff),
        "--input",
        "x=examples/program/x.npy",
        "--out",
        s(&b),
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    same_outputs(&a, &b, &["y_avg", "y_max"]);
}

#[test]
fn pool2d_emit_neff_runs_to_the_same_output() {
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("x.npy");
    let data: Vec<u8> = (0..2 * 3 * 6 * 6)
        .flat_map(|i| ((i * 37 % 101) as f32 - 50.0).to_le_bytes())
        .collect();
    write_npy(&x, Dtype::FP32, &[2, 3, 6, 6], &data).unwrap();
    let y = dir.path().join("y.npy");
    let neff = dir.path().join("p.neff");
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&x),
        "--mode",
        "max",
        "--kernel",
        "2,2",
        "--output",
        s(&y),
        "--backend",
        "cpu",
        "--emit-neff",
        s(&neff),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = tpb(&["inspect", s(&neff), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let input = j["inputs"][0]["name"].as_str().unwrap().to_string();
    let output = j["outputs"][0]["name"].as_str().unwrap().to_string();
    let out = dir.path().join("o");
    let o = tpb(&[
        "run",
        s(&neff),
        "--input",
        &format!("{input}={}", s(&x)),
        "--out",
        s(&out),
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let want = read_npy(&y).unwrap();
    let got = read_npy(&out.join(format!("{output}.npy"))).unwrap();
    assert_eq!(got.shape, want.shape);
    assert_eq!(got.data, want.data);
}

#[test]
fn validate_reports_the_first_invalid_engine_in_engine_order() {
    use tpb_emu::isa::enums::UpdateMode;
    use tpb_emu::runtime::build::{ev_update, event_semaphore};
    // Valid EVENT_SEMAPHORE records; `bad` gets an unknown opcode.
    let stream = |n: usize, bad: usize| -> Vec<u8> {
        (0..n)
            .flat_map(|i| {
                let mut r = event_semaphore(ev_update(UpdateMode::SEM_INC, 1, 0)).0;
                if i == bad {
                    r[0] = 0xFF;
                }
                r
            })
            .collect()
    };
    // ACT fails late in a long stream, DVE at once: ACT is reported, after PE's line.
    let f = pkg2(&fixture_tar(&Parts {
        extra: vec![
            ("sg00/act.bin".into(), stream(100_000, 99_999)),
            ("sg00/dve.bin".into(), stream(4, 0)),
        ],
        ..Parts::default()
    }));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("two.neff");
    std::fs::write(&p, f).unwrap();
    let o = tpb(&["validate", s(&p)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("ok: pe: "), "{out}");
    let err = stderr(&o);
    assert!(err.contains("act stream: "), "{err}");
    assert!(
        err.contains(&format!("[NEFF offset {}]", 99_999 * 64)),
        "{err}"
    );
    assert!(!err.contains("dve stream"), "{err}");
}
