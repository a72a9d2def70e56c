//! No writer loses a user's data (issue #31): the output policy for every
//! writer (a symlink is followed and stays, a FIFO is streamed and stays a
//! FIFO, a folder is refused), every output checked against every input and
//! other output for manifests and NEFFs alike, `run MODEL.neff` taking every
//! option a manifest run takes, and temporary files removed on SIGINT and
//! SIGTERM. FIFOs and symlinks live in temporary folders, never in /dev.

use crate::common::tpb;
use crate::common::{s, stderr};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn mkfifo(p: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success(), "mkfifo {}", p.display());
}

/// The example program and its input, copied into `dir` (tests write beside them).
fn example(dir: &Path) -> (PathBuf, PathBuf) {
    for f in ["program.toml", "sp.bin", "pool.bin", "act.bin", "x.npy"] {
        std::fs::copy(Path::new("examples/program").join(f), dir.join(f)).unwrap();
    }
    (dir.join("program.toml"), dir.join("x.npy"))
}

/// A small N×C×H×W fp32 input for `pool2d` and `viz`.
fn tensor(dir: &Path) -> PathBuf {
    let p = dir.join("t.npy");
    let data: Vec<u8> = (0..2 * 3 * 8 * 8)
        .flat_map(|i| ((i % 17) as f32).to_le_bytes())
        .collect();
    tpb_emu::npy::write_npy(&p, tpb_emu::isa::Dtype::FP32, &[2, 3, 8, 8], &data).unwrap();
    p
}

/// The arguments that make a command write its output at a path.
type Args = Box<dyn Fn(&Path) -> Vec<String>>;

/// One writer and its arguments.
struct Writer {
    name: &'static str,
    args: Args,
}

/// A run's exit code, stdout and files (name, bytes).
type Ran = (Option<i32>, String, Vec<(String, Vec<u8>)>);

/// Every command with a single-file output (`exec --dump` stands for the
/// dumps, `run --timeline` for a run's extra files).
fn writers(dir: &Path) -> Vec<Writer> {
    let (manifest, _) = example(dir);
    let t = tensor(dir);
    let empty = dir.join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let text = dir.join("p.tpbs");
    let o = tpb(&["disasm", "examples/program/pool.bin"]);
    std::fs::write(&text, &o.stdout).unwrap();
    let outdir = dir.join("run-out");
    let st = |p: &Path| p.to_str().unwrap().to_string();
    let (m, t2, e, tx, od) = (st(&manifest), st(&t), st(&empty), st(&text), st(&outdir));
    let (m2, t3) = (m.clone(), t2.clone());
    vec![
        Writer {
            name: "pool2d --output",
            args: Box::new(move |o| {
                let v = ["pool2d", "--input", &t2, "--mode", "max", "--kernel", "2"];
                let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
                v.extend(["--backend", "cpu", "--output", s(o)].map(String::from));
                v
            }),
        },
        Writer {
            name: "asm -o",
            args: Box::new(move |o| vec!["asm".into(), tx.clone(), "-o".into(), st(o)]),
        },
        Writer {
            name: "viz -o",
            args: Box::new(move |o| vec!["viz".into(), t3.clone(), "-o".into(), st(o)]),
        },
        Writer {
            name: "pack -o",
            args: Box::new(move |o| vec!["pack".into(), m.clone(), "-o".into(), st(o)]),
        },
        Writer {
            name: "run --timeline",
            args: Box::new(move |o| {
                let v = ["run", &m2, "--backend", "cpu", "--out", &od, "--timeline"];
                let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
                v.push(st(o));
                v
            }),
        },
        Writer {
            name: "exec --dump",
            args: Box::new(move |o| {
                vec![
                    "exec".into(),
                    e.clone(),
                    "--backend".into(),
                    "cpu".into(),
                    "--dump".into(),
                    format!("sbuf:0:0:fp32:4x4={}", s(o)),
                ]
            }),
        },
    ]
}

fn run(args: &[String]) -> std::process::Output {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tpb(&a)
}

#[test]
fn every_writer_follows_symlinks_streams_fifos_and_refuses_folders() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (i, w) in writers(d).iter().enumerate() {
        // The bytes the writer makes, to a plain new file.
        let plain = d.join(format!("plain{i}"));
        let o = run(&(w.args)(&plain));
        assert_eq!(o.status.code(), Some(0), "{}: {}", w.name, stderr(&o));
        let want = std::fs::read(&plain).unwrap();
        assert!(!want.is_empty(), "{}", w.name);

        // A symlink: its target gets the bytes, the link stays a link.
        let target = d.join(format!("target{i}"));
        std::fs::write(&target, b"old").unwrap();
        let link = d.join(format!("link{i}"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let o = run(&(w.args)(&link));
        assert_eq!(o.status.code(), Some(0), "{}: {}", w.name, stderr(&o));
        let meta = std::fs::symlink_metadata(&link).unwrap();
        assert!(
            meta.file_type().is_symlink(),
            "{}: the link was replaced",
            w.name
        );
        assert_eq!(std::fs::read(&target).unwrap(), want, "{}", w.name);

        // A dangling symlink: the file it names is created.
        let dangling = d.join(format!("dangling{i}"));
        let named = d.join(format!("named{i}"));
        std::os::unix::fs::symlink(&named, &dangling).unwrap();
        let o = run(&(w.args)(&dangling));
        assert_eq!(o.status.code(), Some(0), "{}: {}", w.name, stderr(&o));
        assert!(
            std::fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&named).unwrap(), want, "{}", w.name);

        // A FIFO: streamed to its reader, and still a FIFO afterwards.
        let fifo = d.join(format!("fifo{i}"));
        mkfifo(&fifo);
        let f2 = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(f2).unwrap());
        let o = run(&(w.args)(&fifo));
        assert_eq!(o.status.code(), Some(0), "{}: {}", w.name, stderr(&o));
        // Checked before the reader is joined: a replaced FIFO never gets a writer.
        let ft = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(ft.is_fifo(), "{}: the FIFO was replaced", w.name);
        assert_eq!(reader.join().unwrap(), want, "{}", w.name);

        // A folder: refused before anything runs (exit 2), left as it was.
        let folder = d.join(format!("folder{i}"));
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("keep"), b"k").unwrap();
        let o = run(&(w.args)(&folder));
        assert_eq!(o.status.code(), Some(2), "{}: {}", w.name, stderr(&o));
        assert!(
            stderr(&o).contains("is a folder"),
            "{}: {}",
            w.name,
            stderr(&o)
        );
        assert_eq!(std::fs::read(folder.join("keep")).unwrap(), b"k");

        // `-`: the bytes alone on stdout (the report goes to stderr).
        let o = run(&(w.args)(Path::new("-")));
        assert_eq!(o.status.code(), Some(0), "{}: {}", w.name, stderr(&o));
        assert_eq!(
            o.stdout, want,
            "{}: stdout holds more than the output",
            w.name
        );

        // No temporary file is left anywhere.
        let left: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tpb-emu-"))
            .collect();
        assert!(left.is_empty(), "{}: {left:?}", w.name);
    }
}

#[test]
fn a_symlink_loop_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let t = tensor(dir.path());
    let o = tpb(&["viz", s(&t), "-o", s(&a)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic links"), "{}", stderr(&o));
}

/// The example packed as a NEFF in `dir`.
fn packed(dir: &Path) -> PathBuf {
    let neff = dir.join("m.neff");
    let o = tpb(&["pack", "examples/program/program.toml", "-o", s(&neff)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    neff
}

#[test]
fn a_neff_run_never_overwrites_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let neff = packed(d);
    // The input file has an output's name in the output folder.
    let x = d.join("y_avg.npy");
    std::fs::copy("examples/program/x.npy", &x).unwrap();
    let before = std::fs::read(&x).unwrap();
    let o = tpb(&[
        "run",
        s(&neff),
        "--input",
        &format!("x={}", s(&x)),
        "--out",
        s(d),
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is the same file as --input x"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&x).unwrap(), before);
    // The model itself as the timeline.
    let model = std::fs::read(&neff).unwrap();
    let o = tpb(&[
        "run",
        s(&neff),
        "--input",
        "x=examples/program/x.npy",
        "--out",
        s(&d.join("o")),
        "--timeline",
        s(&neff),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&neff).unwrap(), model);
    // The timeline onto an output: refused, nothing written.
    let o = tpb(&[
        "run",
        s(&neff),
        "--input",
        "x=examples/program/x.npy",
        "--out",
        s(&d.join("o")),
        "--timeline",
        s(&d.join("o/y_max.npy")),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!d.join("o").exists());
}

#[test]
fn an_unwritable_timeline_leaves_no_outputs_and_no_folders() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let neff = packed(d);
    let file = d.join("a-file");
    std::fs::write(&file, b"f").unwrap();
    let (manifest, _) = example(d);
    for source in [&neff, &manifest] {
        let mut args = vec!["run", s(source)];
        if source == &neff {
            args.extend(["--input", "x=examples/program/x.npy"]);
        }
        let out = d.join("new/deeper");
        let tl = file.join("t.json");
        args.extend(["--out", s(&out), "--timeline", s(&tl), "--backend", "cpu"]);
        let o = tpb(&args);
        assert_eq!(o.status.code(), Some(4), "{args:?}: {}", stderr(&o));
        assert!(!d.join("new").exists(), "{args:?}: folders were left");
    }
}

#[test]
fn pack_and_emit_neff_never_overwrite_inputs_or_other_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (manifest, x) = example(d);
    for f in [&manifest, &d.join("sp.bin"), &x] {
        let before = std::fs::read(f).unwrap();
        let o = tpb(&["pack", s(&manifest), "-o", s(f)]);
        assert_eq!(o.status.code(), Some(2), "{}: {}", f.display(), stderr(&o));
        assert_eq!(std::fs::read(f).unwrap(), before);
    }
    let t = tensor(d);
    let before = std::fs::read(&t).unwrap();
    let base = ["pool2d", "--input", s(&t), "--mode", "max", "--kernel", "2"];
    let y = d.join("y.npy");
    let emit = d.join("emitted");
    for extra in [
        vec!["--output", s(&y), "--emit-neff", s(&t)],
        vec!["--output", s(&y), "--emit-neff", s(&y)],
        vec![
            "--output",
            s(&y),
            "--emit",
            s(&emit),
            "--emit-neff",
            "PLACEHOLDER",
        ],
    ] {
        let toml = emit.join("program.toml");
        let extra: Vec<&str> = extra
            .iter()
            .map(|a| if *a == "PLACEHOLDER" { s(&toml) } else { a })
            .collect();
        let mut a = base.to_vec();
        a.extend(extra.iter());
        a.extend(["--backend", "cpu"]);
        let o = tpb(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("refusing to overwrite"),
            "{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read(&t).unwrap(), before);
        assert!(!y.exists() && !emit.exists(), "{a:?}: wrote something");
    }
}

/// Runs `run` on the source with `opts`; returns (exit code, stdout, the
/// files under `out` and `png`, by name).
fn run_with(source: &[&str], opts: &[&str], d: &Path, tag: &str) -> Ran {
    let out = d.join(format!("{tag}-out"));
    let png = d.join(format!("{tag}-png"));
    let tl = d.join(format!("{tag}-tl.json"));
    let mut a: Vec<String> = source.iter().map(|s| s.to_string()).collect();
    a.extend([
        "--out".into(),
        s(&out).into(),
        "--backend".into(),
        "cpu".into(),
    ]);
    for o in opts {
        a.push(match *o {
            "PNG" => s(&png).into(),
            "TL" => s(&tl).into(),
            o => o.into(),
        });
    }
    let o = run(&a);
    let mut files = Vec::new();
    for dir in [&out, &png] {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd {
                let e = e.unwrap();
                files.push((
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                ));
            }
        }
    }
    if let Ok(b) = std::fs::read(&tl) {
        // The same events at the same virtual times (their names hold the
        // source's path and raw bytes, which differ).
        let j: serde_json::Value = serde_json::from_slice(&b).unwrap();
        let times: Vec<String> = j["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| format!("{} {} {} {}", e["ph"], e["ts"], e["dur"], e["tid"]))
            .collect();
        files.push(("timeline".into(), times.join("\n").into_bytes()));
    }
    files.sort();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        files,
    )
}

#[test]
fn a_neff_run_takes_every_option_a_manifest_run_takes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let neff = packed(d);
    let manifest = ["run", "examples/program/program.toml"];
    let model = ["run", s(&neff), "--input", "x=examples/program/x.npy"];
    let options: [&[&str]; 7] = [
        &[],
        &["--trace"],
        &["--png", "PNG"],
        &["--timeline", "TL"],
        &["--max-work", "10"],
        &["--max-records", "2"],
        &["--json"],
    ];
    for (i, opts) in options.iter().enumerate() {
        let (mc, mo, mf) = run_with(&manifest, opts, d, &format!("m{i}"));
        let (nc, no, nf) = run_with(&model, opts, d, &format!("n{i}"));
        assert_eq!(mc, nc, "{opts:?}: exit codes differ");
        assert_eq!(mf, nf, "{opts:?}: the files written differ");
        match opts.first().copied() {
            Some("--max-work") | Some("--max-records") => {
                assert_eq!(mc, Some(1), "{opts:?}: the budget stops the run");
                assert!(mf.is_empty(), "{opts:?}: a stopped run writes nothing");
            }
            Some("--trace") => {
                // The same per-record lines (engine, offset, disassembly, waits);
                // a DMA's raw bytes differ only in the NEFF's VAR_IDs (0-based).
                let lines = |t: &str| -> Vec<String> {
                    t.lines()
                        .filter(|l| l.starts_with("sp ") || l.starts_with("pool "))
                        .map(|l| match l.split_once(".raw ") {
                            Some((head, raw)) => {
                                format!("{head}{}", &raw[raw.find(" ; ").unwrap()..])
                            }
                            None => l.to_string(),
                        })
                        .collect()
                };
                assert!(lines(&mo).len() >= 3, "{mo}");
                assert_eq!(lines(&mo), lines(&no));
            }
            Some("--png") => assert_eq!(mf.iter().filter(|f| f.0.ends_with(".png")).count(), 2),
            Some("--timeline") => assert!(mf.iter().any(|f| f.0 == "timeline")),
            Some("--json") => {
                let j: serde_json::Value = serde_json::from_str(no.trim()).unwrap();
                let m: serde_json::Value = serde_json::from_str(mo.trim()).unwrap();
                assert_eq!(j["model"].as_str(), Some(s(&neff)));
                assert_eq!(m["manifest"].as_str(), Some(manifest[1]));
                assert!(j["total_records"].as_u64().unwrap() >= 3);
                assert_eq!(j["total_records"], m["total_records"]);
                assert_eq!(j["engines"], m["engines"]);
            }
            _ => assert_eq!(mc, Some(0)),
        }
    }
}

/// Starts `pool2d` writing its output to a new file and its indices to a
/// FIFO nobody reads: it stops with the output's temporary file made and
/// waits. Returns the child once that file exists.
fn stuck_writer(d: &Path) -> std::process::Child {
    let t = tensor(d);
    let fifo = d.join("never-read");
    mkfifo(&fifo);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_tpb-emu"))
        .args(["pool2d", "--input", s(&t), "--mode", "max", "--kernel", "2"])
        .args(["--backend", "cpu", "--output", s(&d.join("y.npy"))])
        .args(["--indices", s(&fifo)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while temporaries(d).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no temporary file appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn temporaries(d: &Path) -> Vec<String> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") && n.contains(".tpb-emu-"))
        .collect()
}

#[test]
fn sigint_and_sigterm_remove_temporary_files() {
    for signal in ["INT", "TERM"] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut child = stuck_writer(d);
        let st = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "SIG{signal}");
        assert!(
            temporaries(d).is_empty(),
            "SIG{signal}: {:?}",
            temporaries(d)
        );
        assert!(
            !d.join("y.npy").exists(),
            "SIG{signal}: the output appeared"
        );
    }
}
