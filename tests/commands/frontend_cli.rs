//! `tpb-emu pool2d`, `viz` and `demo` as a user runs them.

use crate::common::code;
use crate::common::s;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tpb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tpb-emu"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pool2d")
        .join(name)
}

fn data(p: &Path) -> Vec<u8> {
    tpb_emu::npy::read_npy(p).unwrap().data.into_vec()
}

#[test]
fn pool2d_writes_the_fixture_answer_and_indices() {
    let d = tempfile::tempdir().unwrap();
    let (y, idx, png) = (
        d.path().join("y.npy"),
        d.path().join("i.npy"),
        d.path().join("png"),
    );
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&fixture("max_k3_s2_p1.x.npy")),
        "--mode",
        "max",
        "--kernel",
        "3,3",
        "--stride",
        "2,2",
        "--padding",
        "1,1",
        "--indices",
        s(&idx),
        "--output",
        s(&y),
        "--backend",
        "cpu",
        "--png",
        s(&png),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(data(&y), data(&fixture("max_k3_s2_p1.y.npy")));
    assert_eq!(data(&idx), data(&fixture("max_k3_s2_p1.idx.npy")));
    for f in ["input.png", "output.png", "indices.png"] {
        assert!(png.join(f).exists(), "{f}");
    }
}

#[test]
fn pool2d_reads_bf16_bits_and_1d_inputs() {
    let d = tempfile::tempdir().unwrap();
    let y = d.path().join("y.npy");
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&fixture("max_bf16.x.npy")),
        "--dtype",
        "bf16",
        "--mode",
        "max",
        "--kernel",
        "3",
        "--stride",
        "2",
        "--pads",
        "1,1,1,1",
        "--output",
        s(&y),
        "--backend",
        "cpu",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(data(&y), data(&fixture("max_bf16.y.npy")));
    // Without --dtype a uint16 .npy is refused with a hint.
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&fixture("max_bf16.x.npy")),
        "--mode",
        "max",
        "--kernel",
        "3",
        "--output",
        s(&y),
    ]);
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(text(&o).contains("--dtype bf16"), "{}", text(&o));
    // 1-D: a single number is the width.
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&fixture("avg1d_k3_s2_p1_excl.x.npy")),
        "--mode",
        "avg",
        "--kernel",
        "3",
        "--stride",
        "2",
        "--padding",
        "1",
        "--output",
        s(&y),
        "--backend",
        "cpu",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let (got, want) = (data(&y), data(&fixture("avg1d_k3_s2_p1_excl.y.npy")));
    assert_eq!(got.len(), want.len());
}

#[test]
fn pool2d_emit_writes_a_program_that_run_executes() {
    let d = tempfile::tempdir().unwrap();
    let (y, prog, out) = (
        d.path().join("y.npy"),
        d.path().join("prog"),
        d.path().join("out"),
    );
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&fixture("avg_planes140.x.npy")),
        "--mode",
        "avg",
        "--kernel",
        "2,2",
        "--output",
        s(&y),
        "--backend",
        "cpu",
        "--emit",
        s(&prog),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = tpb(&[
        "run",
        s(&prog.join("program.toml")),
        "--backend",
        "cpu",
        "--out",
        s(&out),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(data(&out.join("y.npy")), data(&y));
    let o = tpb(&["disasm", s(&prog.join("pool.bin"))]);
    assert!(text(&o).contains("POOL func=avg"), "{}", text(&o));
}

#[test]
fn bad_pool2d_arguments_exit_2_or_4_without_panicking() {
    let d = tempfile::tempdir().unwrap();
    let y = d.path().join("y.npy");
    let x = fixture("max_k2.x.npy");
    // Malformed flag values and flag combinations: 2; values the input cannot take: 4.
    let cases: &[(&[&str], i32)] = &[
        (&["--mode", "max", "--kernel", "0,2"], 4),
        (&["--mode", "max", "--kernel", "a,b"], 2),
        (&["--mode", "max", "--kernel", "1,2,3"], 2),
        (&["--mode", "max", "--kernel", "9,9"], 4),
        (&["--mode", "avg", "--kernel", "2", "--indices", "i.npy"], 2),
        (&["--mode", "max", "--kernel", "2", "--padding", "5"], 4),
        (&["--mode", "max", "--kernel", "2", "--pads", "1,1"], 2),
        (
            &[
                "--mode",
                "max",
                "--kernel",
                "2",
                "--padding",
                "1",
                "--pads",
                "1,1,1,1",
            ],
            2,
        ),
        (&["--mode", "mean", "--kernel", "2"], 2),
        (&["--kernel", "2"], 2),
    ];
    for (extra, want) in cases {
        let mut args = vec![
            "pool2d",
            "--input",
            s(&x),
            "--output",
            s(&y),
            "--backend",
            "cpu",
        ];
        args.extend_from_slice(extra);
        let o = tpb(&args);
        assert_eq!(code(&o), *want, "{extra:?}: {}", text(&o));
        assert!(
            !text(&o).contains("internal error"),
            "{extra:?}: {}",
            text(&o)
        );
    }
    let o = tpb(&[
        "pool2d",
        "--input",
        "/nonexistent.npy",
        "--mode",
        "max",
        "--kernel",
        "2",
        "--output",
        s(&y),
    ]);
    assert_eq!(code(&o), 4, "{}", text(&o));
}

#[test]
fn viz_draws_a_montage_and_an_argmax_map() {
    let d = tempfile::tempdir().unwrap();
    let png = d.path().join("x.png");
    let o = tpb(&[
        "viz",
        s(&fixture("max_planes140.x.npy")),
        "-o",
        s(&png),
        "--cmap",
        "magma",
        "--normalize",
        "global",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("140 planes"), "{}", text(&o));
    let img = image::open(&png).unwrap().to_rgb8();
    assert!(img.width() > 100 && img.height() > 100);
    // Integers are drawn by value unless --argmax asks for window positions.
    let o = tpb(&["viz", s(&fixture("max_k2.idx.npy")), "-o", s(&png)]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("viridis"), "{}", text(&o));
    let o = tpb(&[
        "viz",
        s(&fixture("max_k2.idx.npy")),
        "-o",
        s(&png),
        "--argmax",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("argmax map"), "{}", text(&o));
    let o = tpb(&[
        "viz",
        s(&fixture("max_k2.idx.npy")),
        "-o",
        s(&png),
        "--argmax",
        "--cmap",
        "magma",
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let o = tpb(&["viz", "/nonexistent.npy", "-o", s(&png)]);
    assert_eq!(code(&o), 4, "{}", text(&o));
}

/// Writes `values` as an `.npy` of `dtype` and `shape`.
fn npy_of(path: &Path, dtype: tpb_emu::isa::enums::Dtype, shape: &[u64], values: &[i64]) {
    use tpb_emu::isa::enums::Dtype;
    let bytes: Vec<u8> = values
        .iter()
        .flat_map(|&v| match dtype {
            Dtype::UINT8 => vec![v as u8],
            Dtype::INT32 => (v as i32).to_le_bytes().to_vec(),
            Dtype::FP32 => (v as f32).to_le_bytes().to_vec(),
            _ => unreachable!(),
        })
        .collect();
    tpb_emu::npy::write_npy(path, dtype, shape, &bytes).unwrap();
}

#[test]
fn viz_draws_integer_data_by_value_like_floats() {
    use tpb_emu::isa::enums::Dtype;
    let d = tempfile::tempdir().unwrap();
    let draw = |name: &str, dtype: Dtype, values: &[i64]| {
        let (x, png) = (
            d.path().join(format!("{name}.npy")),
            d.path().join(format!("{name}.png")),
        );
        npy_of(&x, dtype, &[2, 4, 8], values);
        let o = tpb(&["viz", s(&x), "-o", s(&png)]);
        assert_eq!(code(&o), 0, "{name}: {}", text(&o));
        assert!(!text(&o).contains("argmax"), "{name}: {}", text(&o));
        (text(&o), image::open(&png).unwrap().to_rgb8())
    };
    // A smooth ramp over two 4x8 planes: uint8 and int32 give the float32 picture.
    let ramp: Vec<i64> = (0..64).map(|i| i * 4).collect();
    let (t, f32_img) = draw("ramp_f32", Dtype::FP32, &ramp);
    assert!(t.contains("viridis"), "{t}");
    let (t, u8_img) = draw("ramp_u8", Dtype::UINT8, &ramp);
    assert!(t.contains("viridis"), "{t}");
    assert!(u8_img == f32_img, "uint8 is drawn as its float32 values");
    let (_, i32_img) = draw("ramp_i32", Dtype::INT32, &ramp);
    assert!(i32_img == f32_img, "int32 is drawn as its float32 values");
    // Signed integers take the diverging map, as signed floats do.
    let signed: Vec<i64> = (0..64).map(|i| i - 32).collect();
    let (t, f32_img) = draw("signed_f32", Dtype::FP32, &signed);
    assert!(t.contains("diverging"), "{t}");
    let (t, i32_img) = draw("signed_i32", Dtype::INT32, &signed);
    assert!(t.contains("diverging"), "{t}");
    assert!(
        i32_img == f32_img,
        "signed int32 is drawn as its float32 values"
    );
}

#[test]
fn viz_says_when_it_leaves_planes_out() {
    use tpb_emu::isa::enums::Dtype;
    let d = tempfile::tempdir().unwrap();
    let png = d.path().join("p.png");
    let (many, limit) = (d.path().join("many.npy"), d.path().join("limit.npy"));
    let values: Vec<i64> = (0..1100).collect();
    npy_of(&many, Dtype::INT32, &[1100, 1, 1], &values);
    npy_of(&limit, Dtype::INT32, &[1024, 1, 1], &values[..1024]);
    for extra in [&[][..], &["--argmax"][..]] {
        let mut args = vec!["viz", s(&many), "-o", s(&png)];
        args.extend_from_slice(extra);
        let o = tpb(&args);
        assert_eq!(code(&o), 0, "{extra:?}: {}", text(&o));
        assert!(
            text(&o).contains("drew 1,024 of 1,100 planes (the montage's limit)"),
            "{extra:?}: {}",
            text(&o)
        );
    }
    let o = tpb(&["viz", s(&limit), "-o", s(&png)]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(!text(&o).contains("drew"), "{}", text(&o));
}

#[test]
fn pool2d_names_a_dilated_window_that_steps_over_the_input() {
    use tpb_emu::isa::enums::Dtype;
    // A 2-row input, kernel 2 dilated 3, padding 2 (PyTorch's limit for this
    // kernel: ((2 - 1)·3 + 1) / 2 = 2), stride 1: output row 1's taps sit on
    // rows -1 and 2, in the padding on both sides of the input.
    let d = tempfile::tempdir().unwrap();
    let (x, y) = (d.path().join("x.npy"), d.path().join("y.npy"));
    npy_of(&x, Dtype::FP32, &[1, 1, 2, 2], &[0, 1, 2, 3]);
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&x),
        "--mode",
        "max",
        "--kernel",
        "2",
        "--dilation",
        "3",
        "--padding",
        "2",
        "--stride",
        "1",
        "--output",
        s(&y),
        "--backend",
        "cpu",
    ]);
    assert_eq!(code(&o), 4, "{}", text(&o));
    let t = text(&o);
    for want in [
        "output row 1's window reads no input element",
        "dilation 3",
        "rows -1 to 2 in steps of 3",
        "the input's rows 0 to 1",
        "within PyTorch's limit",
    ] {
        assert!(t.contains(want), "{want:?} in {t}");
    }
    assert!(!t.contains("PyTorch requires"), "{t}");
    assert!(!y.exists());
    // One more pad than PyTorch allows is PyTorch's own refusal.
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&x),
        "--mode",
        "max",
        "--kernel",
        "2",
        "--dilation",
        "3",
        "--padding",
        "3",
        "--output",
        s(&y),
        "--backend",
        "cpu",
    ]);
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(
        text(&o).contains("pad should be at most half of effective kernel size"),
        "{}",
        text(&o)
    );
}

#[test]
fn demo_runs_end_to_end_on_the_cpu_and_its_checks_pass() {
    let d = tempfile::tempdir().unwrap();
    let o = tpb(&["demo", "--backend", "cpu", "--out", s(d.path())]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("all 5 configurations match the reference"),
        "{t}"
    );
    assert!(!t.contains("MISMATCH"), "{t}");
    for f in [
        "image.png",
        "features.png",
        "max_2x2.png",
        "max_3x3_s2_p1_indices_indices.png",
    ] {
        let img = image::open(d.path().join(f)).unwrap().to_rgb8();
        // Not blank: many distinct colours.
        let mut colours: Vec<[u8; 3]> = img.pixels().map(|p| p.0).collect();
        colours.sort();
        colours.dedup();
        assert!(colours.len() >= 5, "{f}: {} colours", colours.len());
    }
}

fn fixture3(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pool3d")
        .join(name)
}

/// ONNX's explicit pads are accepted up to the kernel (its node tests'
/// shapes), PyTorch's symmetric padding keeps its half-kernel rule, and a
/// pad as large as the kernel is refused naming the axis.
#[test]
fn pads_follow_onnx_and_padding_follows_pytorch() {
    let d = tempfile::tempdir().unwrap();
    let y = d.path().join("y.npy");
    for (name, mode, extra) in [
        ("max2d_k3_pads2_onnx", "max", None),
        ("avg2d_k3_pads2_onnx_excl", "avg", None),
        (
            "avg2d_k3_pads2_onnx_incl",
            "avg",
            Some("--count-include-pad"),
        ),
    ] {
        let x = fixture3(&format!("{name}.x.npy"));
        let mut a = vec![
            "pool2d",
            "--input",
            s(&x),
            "--mode",
            mode,
            "--kernel",
            "3,3",
        ];
        a.extend(["--stride", "1", "--pads", "2,2,2,2", "--output", s(&y)]);
        a.extend(["--backend", "cpu"]);
        a.extend(extra);
        let o = tpb(&a);
        assert_eq!(code(&o), 0, "{name}: {}", text(&o));
        let want = data(&fixture3(&format!("{name}.y.npy")));
        let got = data(&y);
        // Max exactly; averages within 1 ulp of fp32 (sum × fp32(1/n) against sum / n).
        for (g, w) in got.chunks_exact(4).zip(want.chunks_exact(4)) {
            let (g, w) = (
                i32::from_le_bytes(g.try_into().unwrap()),
                i32::from_le_bytes(w.try_into().unwrap()),
            );
            assert!((g - w).abs() <= (mode == "avg") as i32, "{name}");
        }
    }
    let x = fixture("max_k2.x.npy");
    let base = [
        "pool2d",
        "--input",
        s(&x),
        "--mode",
        "max",
        "--output",
        s(&y),
    ];
    let o = tpb(&[&base[..], &["--kernel", "3", "--padding", "2"]].concat());
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(
        text(&o).contains("pad should be at most half of effective kernel size"),
        "{}",
        text(&o)
    );
    let o = tpb(&[&base[..], &["--kernel", "3,3", "--pads", "3,3,3,3"]].concat());
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(
        text(&o).contains("the begin pad of axis H is 3, not smaller than the kernel's 3"),
        "{}",
        text(&o)
    );
}

/// `pool` takes N×C×D×H×W with three numbers per option (or one for all),
/// writes PyTorch's indices flat over D×H×W, and refuses a count that does
/// not match the input's rank.
#[test]
fn pool_takes_3d_maps() {
    let d = tempfile::tempdir().unwrap();
    let (y, idx) = (d.path().join("y.npy"), d.path().join("i.npy"));
    let name = "max3d_k3_s2_pads_asym_onnx";
    let x = fixture3(&format!("{name}.x.npy"));
    let o = tpb(&[
        "pool",
        "--input",
        s(&x),
        "--mode",
        "max",
        "--kernel",
        "3",
        "--stride",
        "2,2,2",
        "--pads",
        "0,2,1,2,0,1",
        "--indices",
        s(&idx),
        "--output",
        s(&y),
        "--backend",
        "cpu",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("k=3x3x3"), "{}", text(&o));
    assert_eq!(data(&y), data(&fixture3(&format!("{name}.y.npy"))));
    assert_eq!(data(&idx), data(&fixture3(&format!("{name}.idx.npy"))));
    assert_eq!(tpb_emu::npy::read_npy(&y).unwrap().shape, [1, 2, 3, 3, 3]);
    for (kernel, want) in [("2,2", 2), ("2,2,2,2", 2), ("9,2,2", 4)] {
        let o = tpb(&[
            "pool",
            "--input",
            s(&x),
            "--mode",
            "max",
            "--kernel",
            kernel,
            "--output",
            s(&y),
        ]);
        assert_eq!(code(&o), want, "--kernel {kernel}: {}", text(&o));
    }
    let o = tpb(&[
        "pool",
        "--input",
        s(&x),
        "--mode",
        "max",
        "--kernel",
        "2",
        "--pads",
        "1,1,1,1",
        "--output",
        s(&y),
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(
        text(&o).contains("FRONT,TOP,LEFT,BACK,BOTTOM,RIGHT"),
        "{}",
        text(&o)
    );
}
