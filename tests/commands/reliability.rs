//! The reliability issue: no hang, no runaway memory, no lost data, one
//! exit-code contract. Each test names the item of the issue it checks.

use crate::common;
use crate::common::s;
use crate::common::{code, le32, named};
use common::{tpb, tpb_env};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};
use tpb_emu::isa::enums::{Dtype, PoolFunc};
use tpb_emu::isa::samples::seed_pool;
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::{Engine, Opcode, Record};
use tpb_emu::runtime::build::*;
use tpb_emu::runtime::lower::pseudo;
use tpb_emu::runtime::{Program, Variable};

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn copy(src: u32, dst: u32) -> Record {
    dma_memcpy(
        contiguous(var(src, 0), 4, 4),
        contiguous(var(dst, 0), 4, 4),
        Dtype::UINT32,
        Dtype::UINT32,
        0,
        0,
    )
}

/// main: call f (y = z), then y = x; f: y = z, return. Run as written, y ends
/// as x. Without its exit point the main program would fall into f again
/// and end with y = z (or loop: f returns to `y = x` and falls into f again).
fn call_then_copy() -> Program {
    let mut begin = named(Opcode::PSEUDO_FUNCTION_BEGIN, "f");
    begin.0[pseudo::RET_LO] = 10;
    begin.0[pseudo::RET_HI] = 11;
    let mut p = Program::default();
    p.set_stream(
        Engine::Sp,
        &[
            named(Opcode::PSEUDO_FUNCTION_CALL, "f"),
            copy(1, 3),
            begin,
            copy(2, 3),
            header(Opcode::PSEUDO_FUNCTION_RETURN),
        ],
    )
    .add(Variable::input(
        "x",
        1,
        Dtype::UINT32,
        &[4],
        le32(&[1, 2, 3, 4]),
    ))
    .add(Variable::input(
        "z",
        2,
        Dtype::UINT32,
        &[4],
        le32(&[9, 9, 9, 9]),
    ))
    .add(Variable::output("y", 3, Dtype::UINT32, &[4]));
    p
}

/// `tpb-emu run MANIFEST --backend cpu LIMITS.. --out OUT`.
fn run_on_cpu(manifest: &Path, limits: &[&str], out: &Path) -> Output {
    let mut args = vec!["run", s(manifest), "--backend", "cpu"];
    args.extend_from_slice(limits);
    args.extend(["--out", s(out)]);
    tpb(&args)
}

fn y_of(dir: &Path) -> Vec<u8> {
    tpb_emu::npy::read_npy(&dir.join("y.npy"))
        .unwrap()
        .data
        .into_vec()
}

/// Item 1: a call as the main program's last action ends (through the CLI).
#[test]
fn item1_a_call_at_the_end_of_the_main_program_ends_with_the_right_output() {
    let d = tempfile::tempdir().unwrap();
    let mut begin = named(Opcode::PSEUDO_FUNCTION_BEGIN, "f");
    begin.0[pseudo::RET_LO] = 10;
    begin.0[pseudo::RET_HI] = 11;
    let mut p = call_then_copy();
    // main: y = x, then call f (y = z) as the last action: y ends as z.
    p.set_stream(
        Engine::Sp,
        &[
            copy(1, 3),
            named(Opcode::PSEUDO_FUNCTION_CALL, "f"),
            begin,
            copy(2, 3),
            header(Opcode::PSEUDO_FUNCTION_RETURN),
        ],
    );
    let files = tpb_emu::frontend::emit::write_program(&p, &d.path().join("src")).unwrap();
    let res = d.path().join("res");
    let t = Instant::now();
    let o = run_on_cpu(&files[0], &["--max-records", "1000"], &res);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(y_of(&res), le32(&[9, 9, 9, 9]));
    // y = x (1), MOV, MOV, BR (3), f: y = z, DRAIN, BR (3) = 7 records.
    assert!(out(&o).contains("sp 7 (total 7)"), "{}", out(&o));
}

/// Item 2: the lowered program runs like its source; lowering into the
/// manifest's own folder is refused with the sources intact.
#[test]
fn item2_the_lowered_program_runs_like_its_source() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    let files = tpb_emu::frontend::emit::write_program(&call_then_copy(), &src).unwrap();
    let manifest = &files[0];
    let lowered = d.path().join("lowered");
    let o = tpb(&["lower", s(manifest), "--out", s(&lowered)]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    // Lowered: 0 MOV, 64 MOV, 128 BR->256, 192 y = x, [exit 256] 256 y = z, 320 DRAIN, 384 BR.
    let toml = std::fs::read_to_string(lowered.join("program.toml")).unwrap();
    assert!(toml.contains("[exits]\nsp = [256]"), "{toml}");
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    for (m, dir) in [(manifest.clone(), &a), (lowered.join("program.toml"), &b)] {
        let o = run_on_cpu(&m, &["--max-records", "1000"], dir);
        assert_eq!(code(&o), 0, "{}: {}", m.display(), err(&o));
        assert!(out(&o).contains("sp 7 (total 7)"), "{}", out(&o));
    }
    assert_eq!(y_of(&a), le32(&[1, 2, 3, 4]));
    assert_eq!(y_of(&b), y_of(&a));

    let before: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let o = tpb(&["lower", s(manifest), "--out", s(&src)]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("which the program reads"), "{}", err(&o));
    let after: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert_eq!(before, after);
    // The same folder spelled through `..` is refused too.
    let dotted = src.join("..").join("src");
    let o = tpb(&["lower", s(manifest), "--out", s(&dotted)]);
    assert_eq!(code(&o), 2, "{}", err(&o));
}

/// Item 3: `/dev/zero` and a lying `.npy` header exit 4, naming the file and the limit.
#[test]
fn item3_bounded_reading() {
    let d = tempfile::tempdir().unwrap();
    // Under a 1 GiB address-space cap the default 4 GiB limit cannot be met:
    // the read stops with exit 4 instead of being killed or aborting.
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1048576; exec {} disasm /dev/zero",
            env!("CARGO_BIN_EXE_tpb-emu")
        ))
        .output()
        .unwrap();
    assert_eq!(code(&o), 4, "{}", err(&o));
    assert!(err(&o).contains("/dev/zero"), "{}", err(&o));
    assert!(err(&o).contains("4294967296"), "{}", err(&o));

    let o = tpb_env(
        &["disasm", "/dev/zero"],
        &[("TPB_EMU_MAX_INPUT_BYTES", "1M")],
    );
    assert_eq!(code(&o), 4);
    assert!(
        err(&o).contains("/dev/zero: more bytes than the input limit of 1048576 bytes"),
        "{}",
        err(&o)
    );
    let big = d.path().join("big.bin");
    std::fs::write(&big, [0u8; 128]).unwrap();
    let o = tpb(&["validate", s(&big), "--max-input-bytes", "64"]);
    assert_eq!(code(&o), 4);
    assert!(
        err(&o).contains("128 bytes exceed the input limit of 64 bytes"),
        "{}",
        err(&o)
    );
    let o = tpb_env(&["disasm", s(&big)], &[("TPB_EMU_MAX_INPUT_BYTES", "lots")]);
    assert_eq!(code(&o), 2, "{}", err(&o));

    // A manifest whose stream is /dev/zero.
    let m = d.path().join("p.toml");
    std::fs::write(
        &m,
        "arch = \"cayman\"\n[streams]\npool = \"/dev/zero\"\n[[variable]]\nname = \"y\"\nid = 1\n\
         dtype = \"fp32\"\nshape = [4]\nrole = \"output\"\n",
    )
    .unwrap();
    let o = tpb_env(
        &["run", s(&m), "--backend", "cpu"],
        &[("TPB_EMU_MAX_INPUT_BYTES", "1M")],
    );
    assert_eq!(code(&o), 4);
    assert!(err(&o).contains("/dev/zero"), "{}", err(&o));

    // An .npy header claiming 2^40 x 2^40 elements over 16 data bytes.
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let mut h =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }"
            .to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    npy.extend_from_slice(&(h.len() as u16).to_le_bytes());
    npy.extend_from_slice(h.as_bytes());
    npy.extend_from_slice(&[0u8; 16]);
    let huge = d.path().join("huge.npy");
    std::fs::write(&huge, &npy).unwrap();
    let o = tpb(&["viz", s(&huge), "-o", s(&d.path().join("h.png"))]);
    assert_eq!(code(&o), 4, "{}", err(&o));
    assert!(
        err(&o).contains("needs more than the 16 data bytes"),
        "{}",
        err(&o)
    );
    // A version-2 header whose length field claims 4 GiB.
    let mut lie = b"\x93NUMPY\x02\x00".to_vec();
    lie.extend_from_slice(&u32::MAX.to_le_bytes());
    lie.extend_from_slice(b"{'descr'");
    std::fs::write(&huge, &lie).unwrap();
    let o = tpb(&["viz", s(&huge), "-o", s(&d.path().join("h.png"))]);
    assert_eq!(code(&o), 4, "{}", err(&o));
    assert!(
        err(&o).contains("the header claims 4294967295 bytes"),
        "{}",
        err(&o)
    );
}

/// Item 4: the work budget stops a heavy loop quickly, naming the budget,
/// the engine and the record.
#[test]
fn item4_the_work_budget_stops_a_heavy_loop_within_a_second() {
    let d = tempfile::tempdir().unwrap();
    // A loop forever of a 1024x1024-byte DMA (1 Mi elements each time).
    let mut p = Program::default();
    let dma = dma_memcpy(
        walk(var(1, 0), [1, 1024], [1024, 1024], 1),
        walk(var(2, 0), [1, 1024], [1024, 1024], 1),
        Dtype::UINT8,
        Dtype::UINT8,
        0,
        0,
    );
    p.set_stream(Engine::Sp, &[dma, jump(BranchTarget::Rel(-64))])
        .add(Variable::input(
            "a",
            1,
            Dtype::UINT8,
            &[1 << 20],
            vec![7; 1 << 20],
        ))
        .add(Variable::output("b", 2, Dtype::UINT8, &[1 << 20]));
    let files = tpb_emu::frontend::emit::write_program(&p, &d.path().join("p")).unwrap();
    let res = d.path().join("res");
    let t = Instant::now();
    // 2^24 elements: 16 DMAs (16 * 2^20) and 16 jumps (1 each) fit; the 17th DMA does not.
    let o = run_on_cpu(&files[0], &["--max-work", "16777232"], &res);
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert_eq!(code(&o), 1, "{}", err(&o));
    let e = err(&o);
    assert!(e.contains("work budget of 16777232 elements"), "{e}");
    assert!(e.contains("sp record at byte offset 0"), "{e}");
    assert!(e.contains("(16777232 done, 1048576 more"), "{e}");
    assert!(!res.exists(), "a failing run writes nothing");

    // exec refuses, before running, a stream whose Pool records fold too much:
    // the seed record folds 4 channels x 16 elements = 64.
    let stream = d.path().join("s.bin");
    std::fs::write(
        &stream,
        to_bytes(&[
            seed_pool(PoolFunc::MAX_POOL, 4).encode(),
            seed_pool(PoolFunc::MAX_POOL, 4).encode(),
        ]),
    )
    .unwrap();
    let o = tpb(&["exec", s(&stream), "--backend", "cpu", "--max-work", "100"]);
    assert_eq!(code(&o), 1, "{}", err(&o));
    assert!(
        err(&o).contains(
            "record at byte offset 64: it would take the work past the work budget of 100 elements"
        ),
        "{}",
        err(&o)
    );
    let o = tpb(&["exec", s(&stream), "--backend", "cpu", "--max-work", "128"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
}

fn pool2d_input(dir: &Path) -> PathBuf {
    let x = dir.join("x.npy");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pool2d/max_k3_s2_p1.x.npy"),
        &x,
    )
    .unwrap();
    x
}

/// Item 5: every overwrite of an input or of another output is refused
/// (exit 2) with the input intact.
#[test]
fn item5_overwrites_are_refused_with_the_input_intact() {
    let d = tempfile::tempdir().unwrap();
    let x = pool2d_input(d.path());
    let x_bytes = std::fs::read(&x).unwrap();
    let y = d.path().join("y.npy");
    let pool = |extra: &[&str]| {
        let mut a = vec!["pool2d", "--input", s(&x), "--mode", "max", "--kernel", "2"];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--backend", "cpu"]);
        tpb(&a)
    };
    let dotted = d.path().join("sub").join("..").join("x.npy");
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let link = d.path().join("link.npy");
    std::os::unix::fs::symlink(&x, &link).unwrap();
    for (extra, what) in [
        (vec!["--indices", s(&x), "--output", s(&y)], "--indices"),
        (vec!["--output", s(&y), "--indices", s(&y)], "--indices"),
        (vec!["--output", s(&dotted)], "--output"),
        (vec!["--output", s(&link)], "--output"),
    ] {
        let o = pool(&extra);
        assert_eq!(code(&o), 2, "{extra:?}: {}", err(&o));
        assert!(err(&o).contains(what), "{}", err(&o));
        assert!(err(&o).contains("refusing to overwrite"), "{}", err(&o));
        assert_eq!(std::fs::read(&x).unwrap(), x_bytes);
        assert!(!y.exists());
    }

    // exec --dump onto the stream, two dumps to one path.
    let stream = d.path().join("s.bin");
    let sb = to_bytes(&[seed_pool(PoolFunc::MAX_POOL, 4).encode()]);
    std::fs::write(&stream, &sb).unwrap();
    let o = tpb(&[
        "exec",
        s(&stream),
        "--backend",
        "cpu",
        "--dump",
        &format!("sbuf:0:0:fp32:4x4={}", s(&stream)),
    ]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert_eq!(std::fs::read(&stream).unwrap(), sb);
    let dump = d.path().join("d.npy");
    let o = tpb(&[
        "exec",
        s(&stream),
        "--backend",
        "cpu",
        "--dump",
        &format!("sbuf:0:0:fp32:4x4={}", s(&dump)),
        "--dump",
        &format!("sbuf:0:64:fp32:4x4={}", s(&dump)),
    ]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(!dump.exists());

    // viz -o onto its tensor; asm -o onto its text.
    let o = tpb(&["viz", s(&x), "-o", s(&x)]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert_eq!(std::fs::read(&x).unwrap(), x_bytes);
    let text = d.path().join("s.tpbs");
    let dis = tpb(&["disasm", s(&stream)]);
    std::fs::write(&text, &dis.stdout).unwrap();
    let o = tpb(&["asm", s(&text), "-o", s(&text)]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert_eq!(std::fs::read(&text).unwrap(), dis.stdout);
}

/// A program that deadlocks: its only record waits for a semaphore nobody
/// raises.
fn deadlock() -> Program {
    let mut p = Program::default();
    p.set_stream(
        Engine::Sp,
        &[event_semaphore(ev_wait(
            tpb_emu::isa::WaitMode::SEM_EQ,
            0,
            1,
        ))],
    )
    .add(Variable::output("y", 1, Dtype::FP32, &[4]));
    p
}

/// Item 5: a failing command leaves its output folder as it was.
#[test]
fn item5_a_failing_run_leaves_its_output_folder_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    // Deadlock: the only record waits for a semaphore nobody raises.
    let p = deadlock();
    let files = tpb_emu::frontend::emit::write_program(&p, &d.path().join("p")).unwrap();
    let fresh = d.path().join("fresh").join("deeper");
    let o = run_on_cpu(&files[0], &[], &fresh);
    assert_eq!(code(&o), 1, "{}", err(&o));
    assert!(!d.path().join("fresh").exists());
    let old = d.path().join("old");
    std::fs::create_dir(&old).unwrap();
    std::fs::write(old.join("y.npy"), b"previous").unwrap();
    let o = run_on_cpu(&files[0], &[], &old);
    assert_eq!(code(&o), 1);
    let names: Vec<_> = std::fs::read_dir(&old)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["y.npy"]);
    assert_eq!(std::fs::read(old.join("y.npy")).unwrap(), b"previous");

    // pool2d stopped by its work budget writes neither output nor pictures.
    let x = pool2d_input(d.path());
    let y = d.path().join("y.npy");
    let png = d.path().join("png");
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&x),
        "--mode",
        "max",
        "--kernel",
        "2",
        "--output",
        s(&y),
        "--png",
        s(&png),
        "--backend",
        "cpu",
        "--max-work",
        "10",
    ]);
    assert_eq!(code(&o), 1, "{}", err(&o));
    assert!(!y.exists() && !png.exists());
}

/// Item 6: every exit code of the README table from at least one subcommand,
/// and `--json` errors as a JSON object.
#[test]
fn item6_one_exit_code_contract() {
    let d = tempfile::tempdir().unwrap();
    let stream = d.path().join("s.bin");
    std::fs::write(
        &stream,
        to_bytes(&[seed_pool(PoolFunc::MAX_POOL, 4).encode()]),
    )
    .unwrap();
    let x = pool2d_input(d.path());
    // 0
    assert_eq!(code(&tpb(&["validate", s(&stream)])), 0);
    // 1: a deadlock (execution error).
    let p = deadlock();
    let m = tpb_emu::frontend::emit::write_program(&p, &d.path().join("p")).unwrap();
    let run_out = d.path().join("o");
    assert_eq!(code(&run_on_cpu(&m[0], &[], &run_out)), 1);
    // 2: an unknown flag, a malformed flag value, a bad --mode.
    assert_eq!(code(&tpb(&["validate", s(&stream), "--frobnicate"])), 2);
    let pool = |extra: &[&str]| {
        let mut a = vec![
            "pool2d",
            "--input",
            s(&x),
            "--output",
            "/tmp/never-written.npy",
        ];
        a.extend_from_slice(extra);
        tpb(&a)
    };
    assert_eq!(code(&pool(&["--mode", "max", "--kernel", "2,2,2"])), 2);
    assert_eq!(code(&pool(&["--mode", "median", "--kernel", "2"])), 2);
    assert_eq!(code(&pool(&["--mode", "max", "--kernel", "two"])), 2);
    let o = tpb(&[
        "exec",
        s(&stream),
        "--dump",
        "sbuf:0:0:fp32:4y4=/tmp/never.npy",
    ]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    // 3: an invalid record.
    let bad = d.path().join("bad.bin");
    std::fs::write(&bad, [0xFFu8; 64]).unwrap();
    assert_eq!(code(&tpb(&["validate", s(&bad)])), 3);
    // 4: a bad input file; an unwritable output, the same for every command.
    assert_eq!(code(&tpb(&["disasm", s(&d.path().join("missing.bin"))])), 4);
    let blocker = d.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let unwritable = blocker.join("out");
    let o = tpb(&["viz", s(&x), "-o", s(&unwritable.with_extension("png"))]);
    assert_eq!(code(&o), 4, "{}", err(&o));
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&x),
        "--mode",
        "max",
        "--kernel",
        "2",
        "--backend",
        "cpu",
        "--output",
        s(&unwritable.with_extension("npy")),
    ]);
    assert_eq!(code(&o), 4, "{}", err(&o));
    let o = tpb(&["asm", s(&x), "-o", s(&unwritable)]);
    assert_eq!(code(&o), 4, "{}", err(&o));
    // 5: no adapter (no such backend on Linux).
    let o = tpb_env(
        &["exec", s(&stream), "--backend", "gpu"],
        &[("WGPU_BACKEND", "dx12")],
    );
    assert_eq!(code(&o), 5, "{}", err(&o));
    // --json failures answer with one JSON object.
    let o = tpb(&["run", s(&d.path().join("missing.toml")), "--json"]);
    assert_eq!(code(&o), 4);
    let v: serde_json::Value = serde_json::from_str(out(&o).trim()).expect("a JSON object");
    assert_eq!(v["exit"], 4);
    assert!(v["error"].as_str().unwrap().contains("missing.toml"));
    let o = tpb(&["validate", "--json", s(&d.path().join("missing.bin"))]);
    let v: serde_json::Value = serde_json::from_str(out(&o).trim()).expect("a JSON object");
    assert_eq!(v["exit"], 4);
}

/// Item 7: no Vulkan-loader noise without XDG_RUNTIME_DIR; `auto` opens no
/// adapter for a program without Pool records.
#[test]
fn item7_no_loader_noise_and_a_lazy_gpu() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tpb-emu"))
        .arg("info")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("NODEVICE_SELECT")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0);
    let all = format!("{}{}", out(&o), err(&o));
    assert!(!all.contains("XDG_RUNTIME_DIR"), "{all}");
    assert!(out(&o).contains("--backend auto:"), "{all}");

    // A DMA-only program under `auto`: the Vulkan loader, asked to log what
    // it does, says nothing, because no adapter is opened.
    let d = tempfile::tempdir().unwrap();
    let mut p = Program::default();
    p.set_stream(Engine::Sp, &[copy(1, 2)])
        .add(Variable::input(
            "x",
            1,
            Dtype::UINT32,
            &[4],
            le32(&[1, 2, 3, 4]),
        ))
        .add(Variable::output("y", 2, Dtype::UINT32, &[4]));
    let m = tpb_emu::frontend::emit::write_program(&p, &d.path().join("p")).unwrap();
    let env = [
        ("WGPU_BACKEND", "vulkan"),
        ("VK_LOADER_DEBUG", "error,warn,info"),
    ];
    let o = tpb_env(&["run", s(&m[0]), "--out", s(&d.path().join("o"))], &env);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains(", cpu)"), "{}", out(&o));
    assert!(!err(&o).contains("Vulkan Loader"), "{}", err(&o));
    // The same logging does show when an adapter is opened (`info`), where a driver exists.
    let o = tpb_env(&["info"], &env);
    if !out(&o).contains("adapters: none") {
        assert!(err(&o).contains("Vulkan Loader"), "{}", err(&o));
    }
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn i64s(b: &[u8]) -> Vec<i64> {
    b.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Item 8: a 1×3×40000 signal (one row too long for an i16 row step, and too
/// wide for one partition with its outputs and indices) pools like PyTorch's
/// `max_pool1d(kernel_size=3, stride=2, padding=1, return_indices=True)`.
#[test]
fn item8_a_long_1d_signal_pools_like_pytorch() {
    let d = tempfile::tempdir().unwrap();
    let l = 40_000usize;
    let val = |c: usize, i: usize| ((i * 7 + c * 13) % 101) as f32 - 50.0;
    let x: Vec<f32> = (0..3)
        .flat_map(|c| (0..l).map(move |i| val(c, i)))
        .collect();
    let xp = d.path().join("x.npy");
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    tpb_emu::npy::write_npy(&xp, Dtype::FP32, &[1, 3, l as u64], &bytes).unwrap();
    let (yp, ip) = (d.path().join("y.npy"), d.path().join("i.npy"));
    let o = tpb(&[
        "pool2d",
        "--input",
        s(&xp),
        "--mode",
        "max",
        "--kernel",
        "3",
        "--stride",
        "2",
        "--padding",
        "1",
        "--indices",
        s(&ip),
        "--output",
        s(&yp),
        "--backend",
        "cpu",
    ]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let y = tpb_emu::npy::read_npy(&yp).unwrap();
    // PyTorch: Lo = floor((L + 2·1 − 3) / 2) + 1 = 20000.
    assert_eq!(y.shape, [1, 3, 20_000]);
    let (y, idx) = (
        f32s(&y.data),
        i64s(&tpb_emu::npy::read_npy(&ip).unwrap().data),
    );
    for c in 0..3 {
        for j in 0..20_000 {
            // Window taps 2j−1, 2j, 2j+1 inside [0, L); the first maximum wins.
            let mut best = (f32::NEG_INFINITY, -1i64);
            for i in (2 * j as i64 - 1)..=(2 * j as i64 + 1) {
                if (0..l as i64).contains(&i) && val(c, i as usize) > best.0 {
                    best = (val(c, i as usize), i);
                }
            }
            assert_eq!(y[c * 20_000 + j], best.0, "c {c} j {j}");
            assert_eq!(idx[c * 20_000 + j], best.1, "c {c} j {j}");
        }
    }
}

/// Item 8: a map wider than a partition holds is tiled along the width.
#[test]
fn item8_a_wide_map_is_tiled_along_the_width() {
    let (h, w) = (4usize, 70_000usize);
    let val = |p: usize, r: usize, c: usize| ((r * 31 + c * 3 + p * 5) % 64) as f32 / 16.0;
    let data: Vec<u8> = (0..2)
        .flat_map(|p| (0..h).flat_map(move |r| (0..w).map(move |c| val(p, r, c))))
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let x = tpb_emu::frontend::Tensor {
        dtype: Dtype::FP32,
        shape: vec![1, 2, h as u64, w as u64],
        data: data.into(),
    };
    let p = tpb_emu::frontend::Pool2d::new(tpb_emu::frontend::PoolMode::Avg, 2, 2);
    let c = tpb_emu::frontend::compile(&p, &x).expect("wide maps compile");
    assert!(
        c.band_cols < 35_000,
        "tiled: {} columns per band",
        c.band_cols
    );
    let got = tpb_emu::frontend::run_cpu(&p, &x).unwrap();
    assert_eq!(got.output.shape, [1, 2, 2, 35_000]);
    let y = f32s(&got.output.data);
    for pl in 0..2 {
        for oh in 0..2 {
            for ow in 0..35_000 {
                // Multiples of 1/16: the sum is exact, and × 0.25 is exact.
                let sum: f32 = [(0, 0), (0, 1), (1, 0), (1, 1)]
                    .iter()
                    .map(|&(a, b)| val(pl, 2 * oh + a, 2 * ow + b))
                    .sum();
                assert_eq!(y[(pl * 2 + oh) * 35_000 + ow], sum * 0.25);
            }
        }
    }
}

/// Item 8: PyTorch's padding rule (pad ≤ effective kernel / 2) and message.
#[test]
fn item8_padding_follows_pytorchs_rule() {
    let d = tempfile::tempdir().unwrap();
    let x = pool2d_input(d.path());
    let y = d.path().join("y.npy");
    let pool = |extra: &[&str]| {
        let mut a = vec![
            "pool2d",
            "--input",
            s(&x),
            "--mode",
            "max",
            "--output",
            s(&y),
        ];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--backend", "cpu"]);
        tpb(&a)
    };
    let o = pool(&["--kernel", "3", "--padding", "2"]);
    assert_eq!(code(&o), 4, "{}", err(&o));
    assert!(
        err(&o).contains(
            "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1"
        ),
        "{}",
        err(&o)
    );
    // Dilation 2 makes the effective kernel 5: pad 2 is allowed.
    let o = pool(&["--kernel", "3", "--dilation", "2", "--padding", "2"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
}

/// Item 10: the input fuzzing found (an `.npy` header of ~120 nested braces
/// that the header parser took minutes over) is refused at once.
#[test]
fn item10_the_fuzzers_hang_is_refused_quickly() {
    let d = tempfile::tempdir().unwrap();
    let npy =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/npy/nested-braces-timeout.npy");
    let t = Instant::now();
    let o = tpb(&["viz", s(&npy), "-o", s(&d.path().join("x.png"))]);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(code(&o), 4, "{}", err(&o));
    assert!(err(&o).contains("nests brackets"), "{}", err(&o));
}
