//! `tpb-emu bench program`: runs, and its `--json` last line has the keys the
//! issue names. (Speed is measured, never asserted.)

use std::process::Command;

#[test]
fn bench_program_prints_its_json_last() {
    let out = Command::new(env!("CARGO_BIN_EXE_tpb-emu"))
        .args(["bench", "program", "--backend", "cpu", "--bytes", "262144"])
        .args(["--repeat", "1", "--json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let last = text.lines().last().expect("a last line");
    let v: serde_json::Value = serde_json::from_str(last).expect("JSON");
    assert_eq!(v["backend"], "cpu");
    for key in ["program_ms", "copy_ms", "copy_over_program"] {
        assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {last}");
    }
    assert_eq!(v["shape"], serde_json::json!([1, 128, 2, 256]));
}
