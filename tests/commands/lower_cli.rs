//! `tpb-emu lower`, `tpb-emu validate --lower` and `tpb-emu run` on a
//! program with pseudo-instructions: outputs, messages and exit codes.

use crate::common;
use crate::common::named;
use common::tpb;

use std::path::Path;
use tpb_emu::isa::enums::{Dtype, UpdateMode, WaitMode};
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::{Opcode, Record};
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::lower::{lower, pseudo};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Main calls `f` twice; `f` copies x -> y (DMA, sem 3 += 1) and returns.
fn program() -> Vec<Record> {
    let mut f = named(Opcode::PSEUDO_FUNCTION_BEGIN, "f");
    f.0[pseudo::RET_LO] = 10;
    f.0[pseudo::RET_HI] = 11;
    vec![
        named(Opcode::PSEUDO_FUNCTION_CALL, "f"),
        named(Opcode::PSEUDO_FUNCTION_CALL, "f"),
        event_semaphore(ev((WaitMode::SEM_EQ, 3), (UpdateMode::SEM_INC, 4), 2)),
        f,
        dma_memcpy(
            contiguous(var(1, 0), 4, 4),
            contiguous(var(2, 0), 4, 4),
            Dtype::FP32,
            Dtype::FP32,
            3,
            1,
        ),
        header(Opcode::PSEUDO_FUNCTION_RETURN),
    ]
}

fn write_program(dir: &Path, act: &[Record]) -> String {
    std::fs::write(dir.join("act.bin"), to_bytes(act)).unwrap();
    let x: Vec<f32> = vec![1.0, 2.0, 3.0, 4.0];
    tpb_emu::npy::write_npy(
        &dir.join("x.npy"),
        Dtype::FP32,
        &[4],
        &x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
    )
    .unwrap();
    let m = dir.join("p.toml");
    std::fs::write(
        &m,
        "arch = \"cayman\"\n[streams]\nact = \"act.bin\"\n\
         [[variable]]\nname = \"x\"\nid = 1\ndtype = \"fp32\"\nshape = [4]\nrole = \"input\"\nfile = \"x.npy\"\n\
         [[variable]]\nname = \"y\"\nid = 2\ndtype = \"fp32\"\nshape = [4]\nrole = \"output\"\n",
    )
    .unwrap();
    m.display().to_string()
}

#[test]
fn lower_writes_the_lowered_streams_and_run_executes_them() {
    let dir = tempfile::tempdir().unwrap();
    let m = write_program(dir.path(), &program());
    let out = dir.path().join("lowered");
    let o = tpb(&["lower", &m, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    // 6 records in; 3 + 3 + 1 (main) + 1 + 2 (f) = 10 out; exit point at 7*64.
    assert!(
        s.contains("act: 6 records in, 10 out (4 pseudo, 1 functions)"),
        "{s}"
    );
    assert!(s.contains("exit points [448]"), "{s}");
    let written = std::fs::read(out.join("act.bin")).unwrap();
    assert_eq!(written, lower(&to_bytes(&program())).unwrap().bytes());
    let d = tpb(&["disasm", out.join("act.bin").to_str().unwrap()]);
    assert_eq!(d.status.code(), Some(0));
    assert_eq!(text(&d.stdout).lines().count(), 10);

    let res = dir.path().join("res");
    let r = tpb(&[
        "run",
        &m,
        "--backend",
        "cpu",
        "--out",
        res.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    // main 7 records + f's 3 twice = 13.
    assert!(text(&r.stdout).contains("act 13"), "{}", text(&r.stdout));
}

#[test]
fn validate_lower_gives_both_offsets_and_rejections_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.bin");
    std::fs::write(
        &bad,
        to_bytes(&[header(Opcode::PSEUDO_BRANCH_LABEL), drain(), mov32(70, 0)]),
    )
    .unwrap();
    let o = tpb(&[
        "validate",
        "--lower",
        "--engine",
        "act",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    let e = text(&o.stderr);
    assert!(
        e.contains("Found invalid instruction! opcode=167, offset=64: emu_opcode_supported"),
        "{e}"
    );
    assert!(e.contains("[lowered offset 64, input offset 128]"), "{e}");

    let jpeg = dir.path().join("jpeg.bin");
    std::fs::write(
        &jpeg,
        to_bytes(&[drain(), header(Opcode::PSEUDO_JPEG_DECODE)]),
    )
    .unwrap();
    let o = tpb(&["validate", "--lower", jpeg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        text(&o.stderr).contains("opcode=215, offset=64: emu_opcode_supported"),
        "{}",
        text(&o.stderr)
    );

    let ok = dir.path().join("ok.bin");
    std::fs::write(&ok, to_bytes(&program()[..3])).unwrap();
    // An unknown callee (no FUNCTION_BEGIN in this fragment).
    let o = tpb(&[
        "validate",
        "--lower",
        "--engine",
        "act",
        ok.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(text(&o.stderr).contains("unknown callee \"f\""));

    let m = write_program(dir.path(), &[drain(), header(Opcode::PSEUDO_JPEG_DECODE)]);
    let o = tpb(&["lower", &m, "--out", dir.path().join("o").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    let o = tpb(&["run", &m, "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(text(&o.stderr).contains("act stream, PSEUDO_JPEG_DECODE at byte offset 64"));
}
