//! The built `libnrt.so.1` through C clients compiled with the system `cc`
//! against `nrt/include` only: the developer guide's flow on a `pool2d
//! --emit-neff` NEFF and a `pack` NEFF, compared byte for byte with `tpb-emu
//! run` (CPU, and lavapipe when present), the §9 checklist, valgrind, and
//! the exports' symbol versions.
//!
//! Needs `scripts/build-libnrt.sh` and `target/release/tpb-emu` built first
//! (cargo cannot be run from inside `cargo test`); a staticlib newer than
//! the shared object is relinked (`NRT_LINK_ONLY=1`). With `CI=true`, a
//! missing valgrind or lavapipe fails instead of skipping.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use tpb_emu::isa::enums::Dtype;
use tpb_emu::model::{LoadOptions, Model};
use tpb_emu::npy::{read_npy, write_npy};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn release() -> PathBuf {
    root().join("target/release")
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The library, relinked when the staticlib is newer.
fn library() -> PathBuf {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let so = release().join("libnrt.so.1");
        let a = release().join("libtpb_emu_nrt.a");
        let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        assert!(
            so.exists(),
            "{} is missing: run scripts/build-libnrt.sh first",
            so.display()
        );
        if let (Some(s), Some(x)) = (mtime(&so), mtime(&a))
            && x > s
        {
            let o = Command::new(root().join("scripts/build-libnrt.sh"))
                .env("NRT_LINK_ONLY", "1")
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
    });
    release()
}

fn tpb() -> PathBuf {
    let p = release().join("tpb-emu");
    assert!(
        p.exists(),
        "{} is missing: cargo build --release --bin tpb-emu",
        p.display()
    );
    p
}

fn run(cmd: &mut Command) -> Output {
    let o = cmd.output().expect("the command starts");
    assert!(
        o.status.success(),
        "{cmd:?}: {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Compiles `nrt/tests/c/<name>.c` against the project's header and the library.
fn compile(name: &str, dir: &Path) -> PathBuf {
    let exe = dir.join(name);
    let src = root().join(format!("nrt/tests/c/{name}.c"));
    run(Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-I"])
        .arg(root().join("nrt/include"))
        .arg(&src)
        .arg("-L")
        .arg(library())
        .args(["-lnrt", "-lpthread", "-o"])
        .arg(&exe));
    exe
}

/// A client run with the library on the loader's path.
fn client(exe: &Path, backend: &str) -> Command {
    let mut c = Command::new(exe);
    c.env("LD_LIBRARY_PATH", library())
        .env("TPB_EMU_BACKEND", backend);
    c
}

/// The NEFF `tpb-emu pack examples/program/program.toml` writes.
fn packed(dir: &Path) -> PathBuf {
    let p = dir.join("packed.neff");
    run(Command::new(tpb())
        .current_dir(root())
        .arg("pack")
        .arg("examples/program/program.toml")
        .arg("-o")
        .arg(&p));
    p
}

/// A `pool2d --emit-neff` NEFF of an fp32 `shape` map (3x3 max pool, stride 2),
/// with a deterministic input.
fn pooled(dir: &Path, shape: [u64; 4]) -> PathBuf {
    let x = dir.join("pool_x.npy");
    let n: u64 = shape.iter().product();
    let data: Vec<u8> = (0..n)
        .flat_map(|i| ((i * 37 % 1009) as f32 * 0.25 - 120.0).to_le_bytes())
        .collect();
    write_npy(&x, Dtype::FP32, &shape, &data).unwrap();
    let p = dir.join("pool.neff");
    run(Command::new(tpb())
        .args([
            "pool2d", "--mode", "max", "--kernel", "3,3", "--stride", "2,2",
        ])
        .arg("--input")
        .arg(&x)
        .arg("--output")
        .arg(dir.join("pool_y.npy"))
        .args(["--backend", "cpu", "--emit-neff"])
        .arg(&p));
    p
}

/// Writes every input of `neff` as `DIR/<name>.in` (raw) and `.npy`, runs
/// `tpb-emu run` on `backend`, runs the C client, and compares each output.
fn compare_with_cli(neff: &Path, dir: &Path, exe: &Path, backend: &str) {
    let model = Model::open(neff, &LoadOptions::default()).unwrap();
    let mut cmd = Command::new(tpb());
    cmd.arg("run").arg(neff);
    for (k, t) in model.inputs().iter().enumerate() {
        let data: Vec<u8> = (0..t.bytes)
            .map(|i| (i.wrapping_mul(2654435761).wrapping_add(k as u64) >> 7) as u8)
            .collect();
        // Keep float inputs finite and ordinary: byte 3 of each fp32 in 0x3C..0x43.
        let data: Vec<u8> = if t.dtype == Dtype::FP32 {
            data.chunks(4)
                .flat_map(|c| {
                    let v = (u32::from_le_bytes([c[0], c[1], c[2], c[3]]) % 20000) as f32 - 10000.0;
                    (v / 64.0).to_le_bytes()
                })
                .collect()
        } else {
            data
        };
        std::fs::write(dir.join(format!("{}.in", t.name)), &data).unwrap();
        let npy = dir.join(format!("{}.npy", t.name));
        write_npy(&npy, t.dtype, &t.shape, &data).unwrap();
        cmd.arg("--input")
            .arg(format!("{}={}", t.name, npy.display()));
    }
    let out = dir.join("cli");
    run(cmd.arg("--out").arg(&out).args(["--backend", backend]));
    let o = run(client(exe, backend).arg(neff).arg(dir));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("ok\n"));
    for t in model.outputs() {
        let want = read_npy(&out.join(format!("{}.npy", t.name))).unwrap();
        let got = std::fs::read(dir.join(format!("{}.out", t.name))).unwrap();
        assert_eq!(got.len() as u64, t.bytes, "{}", t.name);
        assert!(
            want.data == got,
            "{}: output {} differs from tpb-emu run ({backend})",
            neff.display(),
            t.name
        );
    }
}

fn have_lavapipe() -> bool {
    std::fs::read_dir("/usr/share/vulkan/icd.d").is_ok_and(|d| {
        d.flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("lvp_icd"))
    })
}

#[test]
fn the_c_client_matches_tpb_emu_run_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("run_neff", dir.path());
    for neff in [packed(dir.path()), pooled(dir.path(), [1, 8, 13, 11])] {
        let d = tempfile::tempdir().unwrap();
        compare_with_cli(&neff, d.path(), &exe, "cpu");
    }
    // An input of 1 MiB or more: tensors of that size live in a memory file (nrt/src/state.rs,
    // FILE_BACKED); a run reads every input tensor in place (api.rs, Lent).
    let big = tempfile::tempdir().unwrap();
    let neff = pooled(big.path(), [1, 16, 128, 130]);
    let d = tempfile::tempdir().unwrap();
    compare_with_cli(&neff, d.path(), &exe, "cpu");
}

#[test]
fn the_c_client_matches_tpb_emu_run_on_lavapipe() {
    if !have_lavapipe() {
        assert!(!ci(), "CI=true and no lavapipe");
        eprintln!("skipped: no lavapipe");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("run_neff", dir.path());
    for neff in [packed(dir.path()), pooled(dir.path(), [1, 8, 13, 11])] {
        let d = tempfile::tempdir().unwrap();
        compare_with_cli(&neff, d.path(), &exe, "gpu");
    }
}

#[test]
fn the_checklist_table_passes_in_both_dtype_numberings() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("checklist", dir.path());
    let neff = packed(dir.path());
    for abi in [None, Some("legacy")] {
        let mut c = client(&exe, "cpu");
        if let Some(a) = abi {
            c.env("TPB_EMU_NRT_DTYPE_ABI", a);
        }
        let o = run(c.arg(&neff));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains(" 0 failed"), "{text}");
        // Nothing but the library's log lines on stderr (NRT-60: never stdout).
        for line in String::from_utf8_lossy(&o.stderr).lines() {
            assert!(line.starts_with("tpb-emu libnrt "), "stray stderr: {line}");
        }
    }
}

#[test]
fn the_clients_are_clean_under_valgrind() {
    if Command::new("valgrind").arg("--version").output().is_err() {
        assert!(!ci(), "CI=true and no valgrind");
        eprintln!("skipped: no valgrind");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let neff = packed(dir.path());
    // 1 MiB or more: the memory-file storage, read in place by a run.
    let pool = pooled(dir.path(), [1, 16, 128, 130]);
    let run_neff = compile("run_neff", dir.path());
    let checklist = compile("checklist", dir.path());
    let vg = |exe: &Path, args: &[&Path]| {
        let mut c = Command::new("valgrind");
        c.args([
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--show-leak-kinds=definite",
            "-q",
        ])
        .arg(exe)
        .args(args)
        .env("LD_LIBRARY_PATH", library())
        .env("TPB_EMU_BACKEND", "cpu");
        c
    };
    for n in [&neff, &pool] {
        let d = tempfile::tempdir().unwrap();
        let model = Model::open(n, &LoadOptions::default()).unwrap();
        for t in model.inputs() {
            std::fs::write(
                d.path().join(format!("{}.in", t.name)),
                vec![0x3fu8; t.bytes as usize],
            )
            .unwrap();
        }
        run(&mut vg(&run_neff, &[n.as_path(), d.path()]));
    }
    run(&mut vg(&checklist, &[neff.as_path()]));
}

#[test]
fn exports_carry_libnrt_symbol_versions_and_match_the_header() {
    let so = library().join("libnrt.so.1");
    let o = run(Command::new("readelf").arg("-d").arg(&so));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Library soname: [libnrt.so.1]"));
    let o = run(Command::new("readelf").arg("-V").arg(&so));
    let v = String::from_utf8_lossy(&o.stdout);
    assert!(
        v.contains("Name: NRT_2.0.0") && v.contains("Name: NRT_3.0.0"),
        "{v}"
    );
    assert!(v.contains("Parent 1: NRT_2.0.0"), "{v}");
    let o = run(Command::new("nm")
        .args(["-D", "--defined-only", "--with-symbol-versions"])
        .arg(&so));
    let mut exported = Vec::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let mut f = line.split_whitespace();
        let (_, kind, sym) = (f.next(), f.next().unwrap(), f.next().unwrap());
        if kind == "A" {
            assert!(sym.starts_with("NRT_"), "{line}");
            continue;
        }
        let (name, ver) = sym
            .split_once("@@")
            .unwrap_or_else(|| panic!("unversioned: {line}"));
        let want = if name.starts_with("nrta_") {
            "NRT_3.0.0"
        } else {
            "NRT_2.0.0"
        };
        assert!(
            ["nrt_", "nrta_", "nec_"]
                .iter()
                .any(|p| name.starts_with(p)),
            "{line}"
        );
        assert_eq!(ver, want, "{line}");
        exported.push(name.to_string());
    }
    // The headers declare exactly the exported functions.
    let mut declared = declared_functions();
    exported.sort();
    declared.sort();
    assert_eq!(exported, declared);
}

/// The headers of `nrt/include/nrt`, file names sorted.
fn headers() -> Vec<String> {
    let mut hs: Vec<String> = std::fs::read_dir(root().join("nrt/include/nrt"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".h"))
        .collect();
    hs.sort();
    hs
}

/// Every function the project's headers declare (a declaration starts a line; continuation
/// lines are indented).
fn declared_functions() -> Vec<String> {
    let mut declared = Vec::new();
    for h in headers() {
        let text = std::fs::read_to_string(root().join("nrt/include/nrt").join(h)).unwrap();
        for line in text.lines() {
            if line.starts_with([' ', '#', '/', '}']) || line.starts_with("typedef") {
                continue;
            }
            if let Some(i) = line.find('(') {
                let name = line[..i].rsplit([' ', '*']).next().unwrap();
                if name.starts_with("nrt") || name.starts_with("nec_") {
                    declared.push(name.to_string());
                }
            }
        }
    }
    declared
}

/// NRT-4 and NRT-53: a C program that includes every header and references every declared
/// function links with `-lnrt -z now` and starts under `LD_BIND_NOW=1`; the stubs return what
/// SPEC-NRT §8 says for their return type and write through no argument.
#[test]
fn every_declared_name_links_and_the_stubs_return_what_section_8_says() {
    let dir = tempfile::tempdir().unwrap();
    let names = declared_functions();
    assert!(names.len() >= 149, "{} names", names.len());
    let mut c = String::new();
    for h in headers() {
        c.push_str(&format!("#include \"nrt/{h}\"\n"));
    }
    c.push_str("#include <stdio.h>\n#include <string.h>\n");
    c.push_str("typedef void (*fn_t)(void);\nstatic fn_t const all[] = {\n");
    for n in &names {
        c.push_str(&format!("    (fn_t){n},\n"));
    }
    c.push_str("};\n");
    c.push_str(include_str!("c/stubs_main.c"));
    let src = dir.path().join("exports.c");
    std::fs::write(&src, c).unwrap();
    let exe = dir.path().join("exports");
    run(Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(root().join("nrt/include"))
        .arg(&src)
        .arg("-L")
        .arg(library())
        .args(["-lnrt", "-Wl,-z,now", "-o"])
        .arg(&exe));
    let o = run(client(&exe, "cpu").env("LD_BIND_NOW", "1"));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("{} functions", names.len())),
        "{text}"
    );
    assert!(text.contains(" 0 failed"), "{text}");
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("version"),
        "loader message: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `misc init` under `env`: its stdout and stderr.
fn init_with(exe: &Path, env: &[(&str, &str)]) -> (String, String) {
    let mut c = Command::new(exe);
    c.arg("init")
        .env("LD_LIBRARY_PATH", library())
        .env_remove("NEURON_RT_VISIBLE_CORES")
        .env_remove("NEURON_RT_NUM_CORES")
        .env_remove("NEURON_RT_LOG_LEVEL")
        .env_remove("TPB_EMU_BACKEND")
        .envs(env.iter().copied());
    let o = run(&mut c);
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn nrt_init_reads_the_core_and_log_variables() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("misc", dir.path());
    // NRT-12, NRT-13: (variables, nrt_init's status), one process each.
    let table: &[(&[(&str, &str)], i32)] = &[
        (&[("NEURON_RT_VISIBLE_CORES", "0")], 0),
        (&[("NEURON_RT_VISIBLE_CORES", "0-0")], 0),
        (&[("NEURON_RT_VISIBLE_CORES", "0,0")], 0),
        (&[("NEURON_RT_VISIBLE_CORES", "1")], 1),
        (&[("NEURON_RT_VISIBLE_CORES", "0,2")], 2),
        (&[("NEURON_RT_VISIBLE_CORES", "x")], 2),
        (&[("NEURON_RT_NUM_CORES", "0")], 0),
        (&[("NEURON_RT_NUM_CORES", "1")], 0),
        (&[("NEURON_RT_NUM_CORES", "2")], 1),
        (&[("NEURON_RT_NUM_CORES", "two")], 2),
        (
            &[
                ("NEURON_RT_VISIBLE_CORES", "0"),
                ("NEURON_RT_NUM_CORES", "2"),
            ],
            0,
        ),
        // NRT-58: an unknown backend warns and initialises.
        (&[("TPB_EMU_BACKEND", "bogus")], 0),
    ];
    for (env, want) in table {
        let (out, err) = init_with(&exe, env);
        assert!(out.starts_with("pre 0 1\n"), "{env:?}: {out}");
        assert!(
            out.contains(&format!("init {want}\n")),
            "{env:?}: {out}{err}"
        );
        if *want == 0 {
            assert!(out.contains("total 0 1\n"), "{env:?}: {out}");
        }
    }
    // NRT-60: an unknown level initialises with one WARN on stderr, nothing extra on stdout.
    let (out, err) = init_with(&exe, &[("NEURON_RT_LOG_LEVEL", "bogus")]);
    assert_eq!(out, "pre 0 1\ninit 0\ntotal 0 1\n");
    assert_eq!(err.matches("WARN").count(), 1, "{err}");
    // Quiet by default: a good init writes nothing to stderr.
    let (_, err) = init_with(&exe, &[("TPB_EMU_BACKEND", "cpu")]);
    assert_eq!(err, "");
}

#[test]
fn four_threads_share_one_model_and_a_forked_child_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("misc", dir.path());
    let neff = packed(dir.path());
    // NRT-52
    let o = run(client(&exe, "cpu").arg("threads").arg(&neff));
    assert!(String::from_utf8_lossy(&o.stdout).contains("threads ok"));
    // NRT-14
    let o = run(client(&exe, "cpu").arg("fork").arg(&neff));
    assert!(String::from_utf8_lossy(&o.stdout).contains("fork ok"));
}

/// `neff` with its kelf json (the one-graph list) rewritten by `f`, repackaged (gzip, MD5).
fn with_kelf(neff: &[u8], f: impl Fn(&str) -> String) -> Vec<u8> {
    let (head, gz) = neff.split_at(1024);
    let tar = tpb_emu::neff::gunzip(gz, 1 << 30).unwrap();
    let index = tpb_emu::neff::walk(&tar).unwrap();
    let members: Vec<(String, Vec<u8>)> = index
        .members
        .iter()
        .map(|m| {
            let data = tar[m.data.clone()].to_vec();
            if m.name.starts_with("kelf") {
                let text = String::from_utf8(data).unwrap();
                (m.name.clone(), f(&text).into_bytes())
            } else {
                (m.name.clone(), data)
            }
        })
        .collect();
    let gz = tpb_emu::neff::gzip(&tpb_emu::neff::write_tar(&members));
    let mut out = head.to_vec();
    out[16..24].copy_from_slice(&(gz.len() as u64).to_le_bytes());
    out[0xAC..0xBC].copy_from_slice(&tpb_emu::neff::md5(&gz));
    out.extend_from_slice(&gz);
    out
}

/// `misc load NEFF` under `env`: nrt_load's status and stderr.
fn load_with(exe: &Path, neff: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let mut c = client(exe, "cpu");
    c.arg("load")
        .arg(neff)
        .env_remove("TPB_EMU_ARCH")
        .env_remove("NEURON_RT_ALLOW_LEGACY_NEFF")
        .env_remove("NEURON_RT_EXEC_TIMEOUT")
        .env("NEURON_RT_LOG_LEVEL", "WARN")
        .envs(env.iter().copied());
    let o = run(&mut c);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let status = out
        .lines()
        .find_map(|l| l.strip_prefix("load "))
        .unwrap_or_else(|| panic!("no status: {out}"))
        .parse()
        .unwrap();
    (status, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn graph_counts_legacy_neffs_and_the_exec_timeout_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("misc", dir.path());
    let neff = packed(dir.path());
    let bytes = std::fs::read(&neff).unwrap();
    let graph = r#"{"definition":"sg00/def.json","name":"sg00"}"#;
    let write = |name: &str, b: Vec<u8>| {
        let p = dir.path().join(name);
        std::fs::write(&p, b).unwrap();
        p
    };
    // NRT-21 / NRT-EC-10: two graphs → NRT_LOAD_NOT_ENOUGH_NC (9); none → 2.
    let two = write(
        "two.neff",
        with_kelf(&bytes, |k| {
            assert!(k.contains(graph), "{k}");
            k.replacen(graph, &format!("{graph},{graph}"), 1)
        }),
    );
    let none = write("none.neff", with_kelf(&bytes, |k| k.replacen(graph, "", 1)));
    let same = write("same.neff", with_kelf(&bytes, |k| k.to_string()));
    assert_eq!(load_with(&exe, &same, &[]).0, 0);
    assert_eq!(load_with(&exe, &two, &[]).0, 9);
    assert_eq!(load_with(&exe, &none, &[]).0, 2);
    // NRT-EC-4 NEURON_RT_ALLOW_LEGACY_NEFF: the packed NEFF targets cayman.
    let sunda = [("TPB_EMU_ARCH", "sunda")];
    let (s, err) = load_with(&exe, &neff, &sunda);
    assert_eq!(s, 2, "{err}");
    assert!(err.contains("different arch"), "{err}");
    for v in ["1", "TRUE", "yes"] {
        let (s, err) = load_with(
            &exe,
            &neff,
            &[
                ("TPB_EMU_ARCH", "sunda"),
                ("NEURON_RT_ALLOW_LEGACY_NEFF", v),
            ],
        );
        assert_eq!(s, 0, "{v}: {err}");
        assert!(err.contains("NEURON_RT_ALLOW_LEGACY_NEFF"), "{err}");
    }
    let (s, _) = load_with(
        &exe,
        &neff,
        &[
            ("TPB_EMU_ARCH", "sunda"),
            ("NEURON_RT_ALLOW_LEGACY_NEFF", "false"),
        ],
    );
    assert_eq!(s, 2);
    // NRT-EC-4 NEURON_RT_EXEC_TIMEOUT, read at load: 0 (none) and numbers load quietly; a value
    // that is not a number warns and keeps the default.
    for v in ["0", "2", "600"] {
        let (s, err) = load_with(&exe, &neff, &[("NEURON_RT_EXEC_TIMEOUT", v)]);
        assert_eq!(s, 0, "{v}: {err}");
        assert!(!err.contains("NEURON_RT_EXEC_TIMEOUT"), "{v}: {err}");
    }
    let (s, err) = load_with(&exe, &neff, &[("NEURON_RT_EXEC_TIMEOUT", "soon")]);
    assert_eq!(s, 0);
    assert!(err.contains("NEURON_RT_EXEC_TIMEOUT"), "{err}");
}

/// SPEC-NRT §7.3: an output variable starts with its tensor's bytes, so bytes the program never
/// writes keep the caller's values (a device tensor written in place).
#[test]
fn outputs_start_with_their_tensors_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("misc", dir.path());
    let prog = dir.path().join("program");
    std::fs::create_dir(&prog).unwrap();
    for f in ["act.bin", "pool.bin", "sp.bin", "x.npy", "program.toml"] {
        std::fs::copy(root().join("examples/program").join(f), prog.join(f)).unwrap();
    }
    let mut toml = std::fs::read_to_string(prog.join("program.toml")).unwrap();
    toml.push_str(
        "\n[[variable]]\nname = \"y_extra\"\nid = 4\ndtype = \"fp32\"\nshape = [4]\nrole = \"output\"\n",
    );
    std::fs::write(prog.join("program.toml"), toml).unwrap();
    let neff = dir.path().join("extra.neff");
    run(Command::new(tpb())
        .arg("pack")
        .arg(prog.join("program.toml"))
        .arg("-o")
        .arg(&neff));
    let o = run(client(&exe, "cpu").arg("seed").arg(&neff));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("execute 0"), "{out}");
    assert!(out.contains("y_extra kept"), "{out}");
    assert!(out.contains("y_avg changed"), "{out}");
    assert!(out.contains("y_max changed"), "{out}");
}

/// NRT-51: with `NEURON_RT_EXEC_TIMEOUT` set before `nrt_load`, a program that never ends
/// returns `NRT_TIMEOUT` (5) soon after the limit (checked every 65,536 records).
#[test]
fn a_run_past_the_exec_timeout_returns_nrt_timeout() {
    use tpb_emu::isa::Engine;
    use tpb_emu::isa::control::cmp;
    use tpb_emu::runtime::build::{BranchTarget, compare_branch};
    use tpb_emu::runtime::{Program, Variable};
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("misc", dir.path());
    let mut p = Program::default();
    p.variables
        .push(Variable::output("y", 1, Dtype::FP32, &[4]));
    // A branch to itself, forever (until the record budget: 100,000,000 records).
    p.set_stream(
        Engine::Act,
        &[compare_branch(cmp::ALWAYS, 0, 0, BranchTarget::Rel(0))],
    );
    let neff = dir.path().join("forever.neff");
    std::fs::write(&neff, tpb_emu::neff::pack::pack(&p, "forever").unwrap()).unwrap();
    let o = run(client(&exe, "cpu")
        .arg("exec")
        .arg(&neff)
        .env("NEURON_RT_EXEC_TIMEOUT", "1"));
    let out = String::from_utf8_lossy(&o.stdout);
    let f: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(f[..2], ["execute", "5"], "{out}");
    let ms: f64 = f[2].parse().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    // Either the timeout stopped it, or (a machine fast enough to run the budget within the
    // limit) the record budget did: both are NRT_TIMEOUT; the limit is never far exceeded.
    assert!(
        err.contains("NEURON_RT_EXEC_TIMEOUT") || err.contains("record"),
        "{err}"
    );
    assert!(ms < 10_000.0, "{ms} ms");
}
