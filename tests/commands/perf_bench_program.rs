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

#[test]
fn bench_sizes_past_their_bounds_are_usage_errors() {
    // `--bytes 99999999999999` used to abort on its allocation.
    for (args, flag) in [
        (
            &["program", "--bytes", "99999999999999"][..],
            "--bytes 99999999999999: at most 3221225472",
        ),
        (
            &["pool", "--bytes", "99999999999999"][..],
            "--bytes 99999999999999: input per lane",
        ),
        (
            &["pool", "--records", "4294967295"][..],
            "--records 4294967295: at most 1048576",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tpb-emu"))
            .arg("bench")
            .args(args)
            .args(["--backend", "cpu"])
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}
