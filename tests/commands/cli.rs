//! The binary's contract: outputs, messages and exit codes of validate,
//! disasm, asm and demo. No input may end in a panic (exit 101).

use crate::common;
use crate::common::code;
use crate::common::{s, stderr};
use common::tpb;
use std::process::Output;

use std::path::{Path, PathBuf};
use tpb_emu::isa::enums::{PoolDim, PoolFunc};
use tpb_emu::isa::samples::{seed_max_pool_select, seed_pool};
use tpb_emu::isa::stream::to_bytes;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn stream_with_bad_second_record() -> Vec<u8> {
    let good = seed_pool(PoolFunc::MAX_POOL, 16);
    let mut bad = seed_pool(PoolFunc::AVG_POOL, 16);
    bad.pool_dim = PoolDim(1);
    to_bytes(&[
        good.encode(),
        bad.encode(),
        seed_max_pool_select(4).encode(),
    ])
}

#[test]
fn validate_ok_and_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(
        dir.path(),
        "good.bin",
        &to_bytes(&[seed_pool(PoolFunc::MAX_POOL, 16).encode()]),
    );
    let o = tpb(&["validate", s(&good)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("1 records valid"), "{}", stdout(&o));

    let bad = write(dir.path(), "bad.bin", &stream_with_bad_second_record());
    let o = tpb(&["validate", s(&bad)]);
    assert_eq!(code(&o), 3);
    assert!(
        stderr(&o).contains("Found invalid instruction! opcode=69, offset=64: is_valid_subdim (pool_dim byte 37 = 0x01"),
        "{}",
        stderr(&o)
    );

    // The engine and generation flags change the verdict.
    let o = tpb(&["validate", s(&good), "--engine", "act"]);
    assert_eq!(code(&o), 3);
    assert!(
        stderr(&o).contains("instruction_engine_check"),
        "{}",
        stderr(&o)
    );
    let o = tpb(&["validate", s(&good), "--engine", "pool", "--arch", "sunda"]);
    assert_eq!(code(&o), 0);
}

#[test]
fn validate_json_goes_on_past_invalid_records() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.bin", &stream_with_bad_second_record());
    let o = tpb(&["validate", "--json", s(&bad)]);
    assert_eq!(code(&o), 3);
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is one JSON object"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["offset"], 0);
    assert_eq!(lines[0]["valid"], true);
    assert!(lines[0]["predicate"].is_null());
    assert_eq!(lines[1]["offset"], 64);
    assert_eq!(lines[1]["opcode"], 69);
    assert_eq!(lines[1]["valid"], false);
    assert_eq!(lines[1]["predicate"], "is_valid_subdim");
    assert!(
        lines[1]["detail"]
            .as_str()
            .unwrap()
            .contains("pool_dim byte 37")
    );
    assert_eq!(lines[2]["opcode"], 0x58);
    assert_eq!(lines[2]["valid"], true);
}

#[test]
fn bad_input_exits_4_and_usage_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let short = write(dir.path(), "short.bin", &[0x45; 100]);
    for sub in ["validate", "disasm"] {
        let o = tpb(&[sub, s(&short)]);
        assert_eq!(code(&o), 4, "{sub}");
        assert!(
            stderr(&o).contains("100 bytes is not a multiple of 64"),
            "{}",
            stderr(&o)
        );
        let o = tpb(&[sub, s(&dir.path().join("missing.bin"))]);
        assert_eq!(code(&o), 4, "{sub}");
    }
    assert_eq!(code(&tpb(&["validate"])), 2);
    assert_eq!(code(&tpb(&["validate", s(&short), "--arch", "tonga"])), 2);
    assert_eq!(code(&tpb(&["frobnicate"])), 2);
    let o = tpb(&[
        "asm",
        s(&dir.path().join("missing.tpbs")),
        "-o",
        s(&dir.path().join("x.bin")),
    ]);
    assert_eq!(code(&o), 4);
}

#[test]
fn asm_and_disasm_round_trip_through_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = stream_with_bad_second_record();
    bytes.extend_from_slice(&[0x7E; 64]); // an unknown-layout record: printed as .raw
    let bin = write(dir.path(), "in.bin", &bytes);
    let o = tpb(&["disasm", s(&bin)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 4, "{text}");
    let tpbs = write(dir.path(), "out.tpbs", text.as_bytes());
    let back = dir.path().join("back.bin");
    let o = tpb(&["asm", s(&tpbs), "-o", s(&back)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read(&back).unwrap(), bytes);
}

#[test]
fn asm_parse_errors_name_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let src = "; a comment\n\nPOOL func=max dim=xy in=fp33 out=fp32 ch=1 scale=1 src=sbuf[0]+0x0{1:1 1:1 1:1 1:1} dst=sbuf[0]+0x40{1:1 1:1 1:1 1:1}\n";
    let tpbs = write(dir.path(), "bad.tpbs", src.as_bytes());
    let o = tpb(&["asm", s(&tpbs), "-o", s(&dir.path().join("x.bin"))]);
    assert_eq!(code(&o), 4);
    assert!(stderr(&o).contains("line 3, column"), "{}", stderr(&o));
    let latin1 = write(dir.path(), "latin1.tpbs", &[0xE9, b'\n']);
    assert_eq!(
        code(&tpb(&[
            "asm",
            s(&latin1),
            "-o",
            s(&dir.path().join("y.bin"))
        ])),
        4
    );
}

#[test]
fn demo_validates_and_disassembles_the_seed_example() {
    let o = tpb(&["demo"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("POOL func=max"), "{out}");
    assert!(out.contains("POOL func=avg"), "{out}");
    assert!(out.contains("MAX_POOL_SELECT"), "{out}");
    assert!(out.contains("3 records valid"), "{out}");
}

#[test]
fn random_files_never_panic_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = fastrand::Rng::with_seed(0x0c11);
    for i in 0..40 {
        let len = if i % 2 == 0 {
            64 * rng.usize(0..6)
        } else {
            rng.usize(0..400)
        };
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
        if i % 3 == 0 {
            for r in bytes.chunks_mut(64) {
                r[0] = [0x45, 0x58, 0xA9, 0xB8][rng.usize(..4)];
            }
        }
        let f = write(dir.path(), &format!("r{i}.bin"), &bytes);
        for args in [
            vec!["validate", s(&f)],
            vec!["validate", "--json", s(&f)],
            vec!["disasm", s(&f)],
        ] {
            let c = code(&tpb(&args));
            assert!([0, 3, 4].contains(&c), "{args:?} exited {c}");
        }
        let c = code(&tpb(&["asm", s(&f), "-o", s(&dir.path().join("o.bin"))]));
        assert!([0, 4].contains(&c), "asm exited {c}");
    }
}

/// `validate` reads a large stream in pieces (1 MiB) on a second thread:
/// offsets stay those of the whole file across the pieces, the first
/// invalid record past the first piece is the one reported, and `--json`
/// prints every record once.
#[test]
fn validate_reads_in_pieces_and_keeps_whole_file_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let good = seed_pool(PoolFunc::MAX_POOL, 16).encode();
    let mut bad = seed_pool(PoolFunc::AVG_POOL, 16);
    bad.pool_dim = PoolDim(1);
    let n = 40_000; // 2.56 MB: three pieces
    let bad_at = 17_000; // in the second piece
    let mut recs = vec![good; n];
    recs[bad_at] = bad.encode();
    let f = write(dir.path(), "big.bin", &to_bytes(&recs));
    let o = tpb(&["validate", s(&f)]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("opcode=69, offset={}:", bad_at * 64)),
        "{}",
        stderr(&o)
    );
    let o = tpb(&["validate", "--json", s(&f)]);
    assert_eq!(code(&o), 3);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), n);
    assert!(lines[n - 1].contains(&format!("\"offset\":{}", (n - 1) * 64)));
    assert!(lines[bad_at].contains("\"valid\":false"));
    // All valid: the count is the whole file's.
    recs[bad_at] = good;
    let f = write(dir.path(), "good.bin", &to_bytes(&recs));
    let o = tpb(&["validate", s(&f)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains(&format!("ok: {n} records valid")));
}
