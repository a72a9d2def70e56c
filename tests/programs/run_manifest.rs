//! `tpb-emu run` through the binary: every malformed manifest is exit 4 with
//! a message naming the key; invalid programs are exit 3 naming the engine;
//! run-time failures (deadlock, bad branch, record budget) are exit 1. Never a panic.

use crate::common;
use common::tpb;

use npyz::WriterBuilder;
use std::path::Path;
use tpb_emu::isa::Record;
use tpb_emu::isa::enums::{Dtype, Engine, WaitMode};
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::runtime::build::*;

fn write_npy_f32(path: &Path, shape: &[u64], data: &[f32]) {
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(std::fs::File::create(path).unwrap())
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

fn write_npy_i32(path: &Path, shape: &[u64], data: &[i32]) {
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(std::fs::File::create(path).unwrap())
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

/// A folder holding a valid program: `x` (fp32 [4]) copied to `y` by SP.
struct Fixture {
    dir: tempfile::TempDir,
}

const GOOD: &str = r#"
arch = "cayman"
[streams]
sp = "sp.bin"
[[variable]]
name = "x"
id = 1
dtype = "fp32"
shape = [4]
role = "input"
file = "x.npy"
[[variable]]
name = "y"
id = 2
dtype = "fp32"
shape = [4]
role = "output"
"#;

impl Fixture {
    fn new() -> Fixture {
        let f = Fixture {
            dir: tempfile::tempdir().unwrap(),
        };
        f.stream(
            "sp.bin",
            &[dma_memcpy(
                contiguous(var(1, 0), 4, 4),
                contiguous(var(2, 0), 4, 4),
                Dtype::FP32,
                Dtype::FP32,
                0,
                0,
            )],
        );
        write_npy_f32(&f.path("x.npy"), &[4], &[1.0, 2.0, 3.0, 4.0]);
        f
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn stream(&self, name: &str, recs: &[Record]) {
        std::fs::write(self.path(name), to_bytes(recs)).unwrap();
    }

    /// Runs `run` on `manifest` text; returns (exit code, stdout, stderr).
    fn run(&self, manifest: &str, extra: &[&str]) -> (i32, String, String) {
        let m = self.path("program.toml");
        std::fs::write(&m, manifest).unwrap();
        let out = self.path("out");
        let mut args = vec![
            "run",
            m.to_str().unwrap(),
            "--backend",
            "cpu",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = tpb(&args);
        (
            o.status.code().unwrap(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

#[test]
fn the_fixture_runs() {
    let f = Fixture::new();
    let (code, out, err) = f.run(GOOD, &[]);
    assert_eq!(code, 0, "{out}{err}");
    let bytes = std::fs::read(f.path("out/y.npy")).unwrap();
    let y: Vec<f32> = npyz::NpyFile::new(&bytes[..]).unwrap().into_vec().unwrap();
    assert_eq!(y, [1.0, 2.0, 3.0, 4.0]);
    assert!(out.contains("records executed: pe 0, act 0, pool 0, dve 0, sp 1 (total 1)"));
}

#[test]
fn every_malformed_manifest_is_exit_4() {
    let f = Fixture::new();
    std::fs::write(f.path("odd.bin"), [0u8; 100]).unwrap();
    write_npy_i32(&f.path("xi.npy"), &[4], &[1, 2, 3, 4]);
    write_npy_f32(&f.path("x5.npy"), &[5], &[0.0; 5]);
    write_npy_f32(&f.path("x22.npy"), &[2, 2], &[0.0; 4]);
    std::fs::write(f.path("junk.npy"), b"not an npy").unwrap();
    let sub = |from: &str, to: &str| {
        assert!(GOOD.contains(from), "{from}");
        GOOD.replacen(from, to, 1)
    };
    let dup_var = format!(
        "{GOOD}[[variable]]\nname = \"z\"\nid = 2\ndtype = \"fp32\"\nshape = [1]\nrole = \"scratch\"\n"
    );
    let dup_name = format!(
        "{GOOD}[[variable]]\nname = \"y\"\nid = 3\ndtype = \"fp32\"\nshape = [1]\nrole = \"scratch\"\n"
    );
    // (manifest text, what the message must contain)
    let cases: Vec<(String, &str)> = vec![
        ("this is not toml".into(), "TOML parse error"),
        (sub("arch = \"cayman\"", ""), "missing field `arch`"),
        (
            sub("cayman", "trainium"),
            "arch: unknown generation `trainium`",
        ),
        (
            sub("arch = \"cayman\"", "arch = \"cayman\"\nseed = 4"),
            "unknown field `seed`",
        ),
        (
            sub("sp = ", "gpsimd = "),
            "streams.gpsimd: unknown engine key `gpsimd` (expected pe, act, pool, dve or sp)",
        ),
        (sub("\"sp.bin\"", "3"), "streams.sp: expected a file name"),
        (sub("sp.bin", "missing.bin"), "streams.sp: "),
        (sub("sp.bin", "odd.bin"), "streams.sp: "),
        (
            sub("name = \"x\"", "name = \"x\"\ncolour = 1"),
            "unknown field `colour`",
        ),
        (
            sub("dtype = \"fp32\"", "dtype = \"float32\""),
            "variable #1 (`x`) dtype: unknown dtype `float32`",
        ),
        (
            sub("dtype = \"fp32\"", "dtype = \"invalid\""),
            "variable #1 (`x`) dtype: unknown dtype `invalid`",
        ),
        (
            sub("role = \"input\"", "role = \"weights\""),
            "variable #1 (`x`) role: unknown role `weights`",
        ),
        (
            sub("id = 1", "id = -1"),
            "variable #1 (`x`) id: id -1 is not in 0..=16777215",
        ),
        (
            sub("id = 1", "id = 16777216"),
            "variable #1 (`x`) id: id 16777216 is not in",
        ),
        (
            sub("id = 2", "id = 1"),
            "variable #2 (`y`) id: id 1 is already used by variable #1",
        ),
        (
            dup_var,
            "variable #3 (`z`) id: id 2 is already used by variable #2",
        ),
        (
            dup_name,
            "variable #3 (`y`) name: the name is already used by variable #2",
        ),
        (
            sub("name = \"y\"", "name = \"../y\""),
            "variable #2 (`../y`) name: a name is",
        ),
        (
            sub("shape = [4]", "shape = []"),
            "variable #1 (`x`) shape: a shape has at least one axis",
        ),
        (
            sub("shape = [4]", "shape = [4, 0]"),
            "variable #1 (`x`) shape: a shape has at least one axis",
        ),
        (
            sub("shape = [4]", "shape = [-4]"),
            "variable #1 (`x`) shape: an axis is negative",
        ),
        (
            sub("file = \"x.npy\"", ""),
            "variable #1 (`x`) file: an input variable needs a `file`",
        ),
        (sub("x.npy", "nope.npy"), "variable #1 (`x`) file: "),
        (sub("x.npy", "junk.npy"), "variable #1 (`x`) file: "),
        (
            sub("x.npy", "xi.npy"),
            "variable #1 (`x`) file: the .npy holds `<i4` elements; the variable's dtype needs `<f4`",
        ),
        (
            sub("x.npy", "x5.npy"),
            "variable #1 (`x`) file: the .npy has shape [5]; the variable's shape is [4]",
        ),
        (
            sub("x.npy", "x22.npy"),
            "variable #1 (`x`) file: the .npy has shape [2, 2]; the variable's shape is [4]",
        ),
        (
            sub("role = \"output\"", "role = \"output\"\nfile = \"x.npy\""),
            "variable #2 (`y`) file: only input variables take a `file`",
        ),
        (
            sub("role = \"output\"", "role = \"scratch\""),
            "variable: the manifest declares no output variable",
        ),
    ];
    for (text, want) in cases {
        let (code, out, err) = f.run(&text, &[]);
        assert_eq!(code, 4, "{want}: stdout {out} stderr {err}");
        assert!(err.starts_with("tpb-emu: "), "{err}");
        assert!(err.contains("program.toml: "), "{err}");
        assert!(err.contains(want), "want `{want}` in: {err}");
        assert!(out.is_empty(), "{out}");
    }
    // The manifest itself missing.
    let o = tpb(&[
        "run",
        f.path("none.toml").to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read the manifest"));
    // A missing stream file names its path.
    let (_, _, err) = f.run(&sub("sp.bin", "missing.bin"), &[]);
    assert!(err.contains("missing.bin"), "{err}");
}

#[test]
fn invalid_programs_are_exit_3_naming_the_engine() {
    let f = Fixture::new();
    // A DMA leaving y (4 floats) by one element.
    f.stream(
        "sp.bin",
        &[
            drain(),
            dma_memcpy(
                contiguous(var(1, 0), 4, 4),
                contiguous(var(2, 4), 4, 4),
                Dtype::FP32,
                Dtype::FP32,
                0,
                0,
            ),
        ],
    );
    let (code, _, err) = f.run(GOOD, &[]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("sp stream, DMA_MEMCPY at byte offset 64: Found invalid instruction! opcode=184, offset=64: emu_footprint_in_bounds (dst walk touches bytes 4..20 of variable `y` (id 2), which holds 16 bytes"), "{err}");
    // A VAR_ID naming nothing.
    f.stream(
        "sp.bin",
        &[dma_memcpy(
            contiguous(var(9, 0), 4, 4),
            contiguous(var(2, 0), 4, 4),
            Dtype::FP32,
            Dtype::FP32,
            0,
            0,
        )],
    );
    let (code, _, err) = f.run(GOOD, &[]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("src ADDR8 names variable id 9, which the program does not declare"),
        "{err}"
    );
    // A record the emulator cannot execute, reported by name, engine and offset.
    f.stream(
        "act.bin",
        &[drain(), drain(), header(tpb_emu::isa::Opcode::IOTA)],
    );
    let text = GOOD.replace("[streams]", "[streams]\nact = \"act.bin\"");
    let (code, _, err) = f.run(&text, &[]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("act stream, IOTA at byte offset 128: Found invalid instruction! opcode=126, offset=128: instruction_engine_check"), "{err}");
    f.stream(
        "pool.bin",
        &[header(tpb_emu::isa::Opcode::TENSOR_REDUCE_BITVEC)],
    );
    let text = GOOD.replace("[streams]", "[streams]\npool = \"pool.bin\"");
    let (code, _, err) = f.run(&text, &[]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("pool stream, TENSOR_REDUCE_BITVEC at byte offset 0: Found invalid instruction! opcode=82, offset=0: emu_opcode_supported (TENSOR_REDUCE_BITVEC is known but not emulated)"), "{err}");
}

#[test]
fn run_time_failures_are_exit_1() {
    let f = Fixture::new();
    // Deadlock: SP waits for an event nobody sets.
    f.stream(
        "sp.bin",
        &[event_semaphore(ev_wait(WaitMode::EVT_SET, 8, 0))],
    );
    let (code, out, err) = f.run(GOOD, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("deadlock after 0 records: no engine can run (EC-31)\n  sp engine at byte offset 0 (EVENT_SEMAPHORE) waits for event[8] set (event[8] is clear)"), "{err}");
    assert!(
        !f.path("out/y.npy").exists(),
        "no outputs after a failed run"
    );
    // A branch into the middle of a record.
    f.stream("sp.bin", &[drain(), jump(BranchTarget::Rel(8))]);
    let (code, _, err) = f.run(GOOD, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("sp stream, COMPARE_BRANCH at byte offset 64: target 72 is not a record boundary in 0..=128 (EC-28)"), "{err}");
    // An endless loop against a small budget.
    f.stream("sp.bin", &[jump(BranchTarget::Rel(0))]);
    let (code, _, err) = f.run(GOOD, &["--max-records", "1000"]);
    assert_eq!(code, 1);
    assert!(err.contains("stopped after 1000 records"), "{err}");
    let _ = Engine::Sp;
}

#[test]
fn trace_shows_waits_and_json_is_one_object() {
    let f = Fixture::new();
    f.stream(
        "sp.bin",
        &[
            with_events(drain(), ev_update(tpb_emu::isa::UpdateMode::EVT_SET, 1, 0)),
            dma_memcpy(
                contiguous(var(1, 0), 4, 4),
                contiguous(var(2, 0), 4, 4),
                Dtype::FP32,
                Dtype::FP32,
                0,
                0,
            ),
        ],
    );
    f.stream(
        "pe.bin",
        &[event_semaphore(ev_wait(WaitMode::EVT_SET, 1, 0))],
    );
    let text = GOOD.replace("[streams]", "[streams]\npe = \"pe.bin\"");
    let (code, out, _) = f.run(&text, &["--trace", "--json"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "pe   0: blocked: waits for event[1] set (event[1] is clear)"
    );
    assert_eq!(lines[1], "sp   0: DRAIN update=evt_set[1]");
    assert_eq!(
        lines[2],
        "pe   0: EVENT_SEMAPHORE wait=evt_set[1] ; wait event[1] set satisfied (event[1] is set)"
    );
    assert_eq!(lines[3], "pe   end of program after 1 records");
    assert!(lines[4].starts_with("sp   64: .raw b8"), "{}", lines[4]);
    let v: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(v["records"]["pe"], 1);
    assert_eq!(v["records"]["sp"], 2);
    assert_eq!(v["outputs"][0]["name"], "y");
}
