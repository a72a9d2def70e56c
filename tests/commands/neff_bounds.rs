//! Bounded NEFF loads (#31): hostile NEFFs — gzip bombs, a lying ISIZE
//! trailer, 200,000 variables, 100,000 DMA blocks, a descriptor whose sizes
//! overflow, mutants — are refused (exit 4, the file named) or loaded, each
//! in bounded time and memory. Both are measured on the child process: its
//! wall time, and its peak RSS as `wait4` reports it for that one child. The
//! figures are printed; the time bound is generous (a loaded CI machine),
//! the memory bound is the issue's.
//!
//! A child's `ru_maxrss` also counts the memory of the process it was
//! spawned from (Linux keeps the high-water mark of the address space an
//! `exec` replaces, and a spawned child starts on its parent's), and this
//! test process holds hundreds of MB. So each run is spawned by a small
//! helper: this test binary run afresh for [`measure_helper`] alone, which
//! spawns the command, reaps it with `wait4` and prints the figures.

use crate::neff_fixture::*;
use flate2::{Compress, Compression, Crc, FlushCompress};
use std::path::Path;
use std::time::Instant;

/// The issue's bounds for a NEFF of at most 2 MB: 1 s (asserted with a
/// margin for a loaded machine: the figure is printed) and 512 MiB.
const MAX_SECS: f64 = 5.0;
const MAX_PEAK_KIB: u64 = 512 << 10;
const MAX_FILE: usize = 2_000_000;

/// The environment variable that makes [`measure_helper`] run a command:
/// the command line as a JSON array, then `ulimit -v` in KiB or null.
const HELPER_ENV: &str = "TPB_EMU_NEFF_BOUNDS_MEASURE";
/// The start of the helper's line of figures on its stdout.
const MARK: &str = "measured: ";

/// One run of the binary: how it ended, its stderr, wall time and peak RSS.
#[derive(serde::Serialize, serde::Deserialize)]
struct Measured {
    code: Option<i32>,
    signal: Option<i32>,
    stderr: String,
    secs: f64,
    peak_kib: u64,
}

impl std::fmt::Display for Measured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?} signal {:?}, {:.3} s, peak RSS {:.1} MiB",
            self.code,
            self.signal,
            self.secs,
            self.peak_kib as f64 / 1024.0
        )
    }
}

/// Reaps `pid` and returns its wait status and resource usage.
///
/// `unsafe` in this test crate only: `wait4` is the one call that gives one
/// child's own peak RSS, and std has no wrapper for it.
#[allow(unsafe_code)]
fn wait4(pid: u32) -> (libc::c_int, libc::rusage) {
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data, valid when zeroed.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to locals; `pid` is our own unreaped child.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if r == pid as libc::pid_t {
            return (status, usage);
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted, "wait4: {e}");
    }
}

/// Not a check: in a run of this binary that [`measured`] starts, runs the
/// command [`HELPER_ENV`] names and prints its figures; otherwise nothing.
#[test]
// The child is reaped by `wait4`, which std's `wait` cannot replace.
#[allow(clippy::zombie_processes)]
fn measure_helper() {
    let Ok(spec) = std::env::var(HELPER_ENV) else {
        return;
    };
    let (args, vmem_kib): (Vec<String>, Option<u64>) = serde_json::from_str(&spec).unwrap();
    let mut cmd = match vmem_kib {
        None => std::process::Command::new(&args[0]),
        Some(k) => {
            // `exec`: the shell becomes the binary, the pid measured.
            let mut c = std::process::Command::new("/bin/sh");
            c.args([
                "-c",
                &format!("ulimit -v {k} && exec \"$0\" \"$@\""),
                &args[0],
            ]);
            c
        }
    };
    let t = Instant::now();
    let mut child = cmd
        .args(&args[1..])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let (status, usage) = wait4(child.id());
    let m = Measured {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        stderr,
        secs: t.elapsed().as_secs_f64(),
        // Kilobytes on Linux.
        peak_kib: usage.ru_maxrss as u64,
    };
    println!("{MARK}{}", serde_json::to_string(&m).unwrap());
}

/// Runs the binary with `args` (under `ulimit -v` when `vmem_kib` is given)
/// and measures it through [`measure_helper`]. Its stdout is discarded (a
/// report of 200,000 variables).
fn measured(args: &[&str], vmem_kib: Option<u64>) -> Measured {
    let mut line = vec![env!("CARGO_BIN_EXE_tpb-emu")];
    line.extend_from_slice(args);
    let spec = serde_json::to_string(&(line, vmem_kib)).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "neff_bounds::measure_helper", "--nocapture"])
        .args(["--test-threads", "1", "--quiet"])
        .env(HELPER_ENV, spec)
        .output()
        .expect("the test binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let m = text
        .lines()
        .find_map(|l| l.strip_prefix(MARK))
        .unwrap_or_else(|| panic!("no figures from the helper: {text}"));
    serde_json::from_str(m).unwrap()
}

/// `prefix` then `mib` MiB of zeros as one gzip member, built without
/// deflating the zeros: one MiB of them, deflated after a full flush (no
/// reference before it), is repeated; the CRC is combined.
fn zeros_gzip(prefix: &[u8], mib: u64) -> Vec<u8> {
    fn deflate_flushed(data: &[u8]) -> Vec<u8> {
        let mut c = Compress::new(Compression::best(), false);
        let mut out = Vec::new();
        loop {
            out.reserve(64 << 10);
            let at = c.total_in() as usize;
            c.compress_vec(&data[at..], &mut out, FlushCompress::Full)
                .unwrap();
            // The flush is done when the input is in and room was left.
            if c.total_in() as usize == data.len() && out.len() < out.capacity() {
                return out;
            }
        }
    }
    let zeros = vec![0u8; 1 << 20];
    let block = deflate_flushed(&zeros);
    let mut z = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    z.extend(deflate_flushed(prefix));
    let mut crc = Crc::new();
    crc.update(prefix);
    let mut mib_crc = Crc::new();
    mib_crc.update(&zeros);
    for _ in 0..mib {
        z.extend_from_slice(&block);
        crc.combine(&mib_crc);
    }
    // The final block: fixed Huffman, end of block only.
    z.extend_from_slice(&[0x03, 0x00]);
    z.extend_from_slice(&crc.sum().to_le_bytes());
    let isize = (prefix.len() as u64 + (mib << 20)) as u32;
    z.extend_from_slice(&isize.to_le_bytes());
    z
}

/// `z` with its ISIZE trailer replaced.
fn with_isize(mut z: Vec<u8>, v: u32) -> Vec<u8> {
    let n = z.len();
    z[n - 4..].copy_from_slice(&v.to_le_bytes());
    z
}

/// A ustar header of a regular member `name` claiming `size` bytes.
fn member_header(name: &str, size: u64) -> Vec<u8> {
    let mut h = vec![0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..108].copy_from_slice(b"0000644\0");
    h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    h[156] = b'0';
    h[257..265].copy_from_slice(b"ustar  \0");
    let sum: u32 = h
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                b as u32
            }
        })
        .sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

/// The fixture's def.json with `n` more tmp-buf variables (ids from 5), and
/// a variable repeating id 9 at the end when `repeat`.
fn many_vars(n: usize, repeat: bool) -> Vec<u8> {
    let mut extra: String = (0..n)
        .map(|i| {
            format!(
                r#","t{i}":{{"type":"tmp-buf","var_id":{},"size":4}}"#,
                i + 5
            )
        })
        .collect();
    if repeat {
        extra.push_str(r#","again":{"type":"tmp-buf","var_id":9,"size":4}"#);
    }
    let def = DEF_JSON.replacen(
        r##""gradient_out": {"#transfer-type": "tmp-buf", "type": "tmp-buf", "var_id": 4, "size": 128}"##,
        &format!(r#""gradient_out": {{"type": "tmp-buf", "var_id": 4, "size": 128}}{extra}"#),
        1,
    );
    assert!(def.len() > DEF_JSON.len());
    pkg2(&fixture_tar(&Parts {
        def_json: Some(def),
        ..Parts::default()
    }))
}

/// `n` DMA blocks on the fixture's input queue (ids 0..n), and a pool
/// stream that triggers each once, then the fixture's output trigger and
/// semaphore wait.
fn many_blocks(n: u32) -> Vec<u8> {
    let desc = r#""desc": [{"from": "input", "to": "gradient_in",
      "from_sizes": [128, 1], "from_steps": [1, 128], "to_sizes": [128, 1], "to_steps": [1, 128]}]"#;
    let mut dma: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id": {i}, "queue": "q_gradient_in", {desc}}}"#))
        .collect();
    dma.push(
        r#"{"id": 0, "queue": "q_gradient_out", "desc": [{"from": "gradient_out", "to": "output",
    "from_sizes": [128, 1], "from_steps": [1, 128], "to_sizes": [128, 1], "to_steps": [1, 128]}]}"#
            .into(),
    );
    let pool_json = format!(
        r#"{{"dma": [{}], "instr": "pool.bin", "name": "pool_array_json"}}"#,
        dma.join(",")
    );
    let one = pool_bin();
    let mut bin = Vec::new();
    for i in 0..n {
        let mut r = one[..64].to_vec();
        r[48..52].copy_from_slice(&i.to_le_bytes());
        bin.extend(r);
    }
    bin.extend_from_slice(&one[64..]);
    pkg2(&fixture_tar(&Parts {
        pool_json: Some(pool_json),
        pool_bin: Some(bin),
        ..Parts::default()
    }))
}

/// The fixture with a first DMA descriptor whose outer sizes' product
/// (32768^5 = 2^75) overflows 64 bits.
fn overflowing_descriptor() -> Vec<u8> {
    let big = "[1, 1, 32768, 32768, 32768, 32768, 32768]";
    let zero = "[0, 0, 0, 0, 0, 0, 0]";
    let pool_json = POOL_JSON.replacen(
        r#""from_sizes": [128, 1], "from_steps": [1, 128], "to_sizes": [128, 1], "to_steps": [1, 128]"#,
        &format!(r#""from_sizes": {big}, "from_steps": {zero}, "to_sizes": {big}, "to_steps": {zero}"#),
        1,
    );
    assert_ne!(pool_json, POOL_JSON);
    pkg2(&fixture_tar(&Parts {
        pool_json: Some(pool_json),
        ..Parts::default()
    }))
}

/// A hostile shape: its name, the file, the command, the exit code wanted
/// and a part of the message wanted on stderr (with the file's name) when
/// refused.
struct Shape {
    name: &'static str,
    bytes: Vec<u8>,
    command: &'static str,
    code: i32,
    message: String,
}

fn shapes() -> Vec<Shape> {
    let fixture_tar = fixture_tar(&Parts::default());
    // About 1.9 GiB of zeros in under 2 MB.
    let mib = 1900;
    let mut tail = fixture_tar.clone();
    tail.extend(std::iter::repeat_n(0x5Au8, 4096));
    let mut noise = fixture_tar.clone();
    let mut rng = fastrand::Rng::with_seed(31);
    noise.extend((0..1_900_000).map(|_| rng.u8(..)));
    // The archive's members, then a header claiming 5 GiB.
    let end = tpb_emu::neff::walk(&fixture_tar)
        .unwrap()
        .members
        .iter()
        .map(|m| m.data.end.next_multiple_of(512))
        .max()
        .unwrap();
    let mut doomed = fixture_tar[..end].to_vec();
    doomed.extend(member_header("huge.bin", 5 << 30));
    vec![
        Shape {
            name: "zeros only (a bomb, no archive)",
            bytes: pkg2_raw(&zeros_gzip(&[], mib)),
            command: "inspect",
            code: 4,
            message: "neff.json is missing".into(),
        },
        Shape {
            name: "a valid NEFF, then a bomb after its archive",
            bytes: pkg2_raw(&zeros_gzip(&tail, mib)),
            command: "inspect",
            code: 0,
            message: String::new(),
        },
        Shape {
            name: "a member claiming 5 GiB, then a bomb",
            bytes: pkg2_raw(&zeros_gzip(&doomed, mib)),
            command: "inspect",
            code: 4,
            message: format!(
                "member huge.bin truncated ({} of 5368709120 bytes)",
                mib << 20
            ),
        },
        Shape {
            name: "ISIZE claims 4 GiB",
            bytes: pkg2_raw(&with_isize(tpb_emu::neff::gzip(&fixture_tar), 0xFEFF_FFFF)),
            command: "inspect",
            code: 4,
            message: "gzip ISIZE mismatch".into(),
        },
        Shape {
            name: "ISIZE claims 4 GiB of 1.9 MB of noise",
            bytes: pkg2_raw(&with_isize(tpb_emu::neff::gzip(&noise), 0xFEFF_FFFF)),
            command: "inspect",
            code: 4,
            message: "gzip ISIZE mismatch".into(),
        },
        Shape {
            name: "200,000 variables",
            bytes: many_vars(200_000, false),
            command: "validate",
            code: 0,
            message: String::new(),
        },
        Shape {
            name: "200,000 variables, the last repeating an id",
            bytes: many_vars(200_000, true),
            command: "inspect",
            code: 4,
            message: "duplicate var_id 9 (t4, again)".into(),
        },
        Shape {
            name: "100,000 DMA blocks, each triggered",
            bytes: many_blocks(100_000),
            command: "validate",
            code: 0,
            message: String::new(),
        },
        Shape {
            name: "a descriptor whose outer sizes overflow",
            bytes: overflowing_descriptor(),
            command: "validate",
            code: 4,
            message: "sg00/pool.json: dma block 0 (queue \"q_gradient_in\", id 0), descriptor 0: \
                      the product of its 7 from_sizes overflows 64 bits"
                .into(),
        },
    ]
}

/// Runs `command FILE` and checks the bounds; returns the measure.
fn bounded(command: &str, file: &Path, what: &str, extra: &[&str]) -> Measured {
    let path = file.to_str().unwrap();
    let mut args = vec![command, path];
    args.extend_from_slice(extra);
    let m = measured(&args, None);
    eprintln!("{what}: {command}: {m}");
    assert!(
        m.signal.is_none() && m.code != Some(101),
        "{what}: {m}: {}",
        m.stderr
    );
    assert!(m.secs < MAX_SECS, "{what}: {m}");
    assert!(m.peak_kib < MAX_PEAK_KIB, "{what}: {m}");
    m
}

#[test]
fn hostile_neffs_of_2_mb_load_or_are_refused_in_bounded_time_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    for (i, s) in shapes().into_iter().enumerate() {
        assert!(
            s.bytes.len() <= MAX_FILE,
            "{}: {} bytes",
            s.name,
            s.bytes.len()
        );
        let file = dir.path().join(format!("shape{i}.neff"));
        std::fs::write(&file, &s.bytes).unwrap();
        let m = bounded(s.command, &file, s.name, &[]);
        assert_eq!(m.code, Some(s.code), "{}: {}", s.name, m.stderr);
        if s.code != 0 {
            let path = file.to_str().unwrap();
            assert!(
                m.stderr.contains(path) && m.stderr.contains(&s.message),
                "{}: wanted {:?} with {path}: {}",
                s.name,
                s.message,
                m.stderr
            );
        }
    }
    // Mutants of the fixture, read past the digest: exit 0 or 4 only.
    let base = fixture();
    let mut rng = fastrand::Rng::with_seed(3131);
    let file = dir.path().join("mutant.neff");
    for i in 0..40 {
        let mut b = base.clone();
        for _ in 0..rng.usize(1..4) {
            let n = b.len();
            match rng.usize(0..4) {
                0 => b[1024 + rng.usize(..n - 1024)] ^= 1 << rng.u8(0..8),
                1 => b[n - 1 - rng.usize(..8)] = rng.u8(..),
                2 => b.truncate(rng.usize(1024..n)),
                _ => b[rng.usize(..1024)] ^= 1 << rng.u8(0..8),
            }
        }
        std::fs::write(&file, &b).unwrap();
        let m = bounded("inspect", &file, &format!("mutant {i}"), &["--no-verify"]);
        assert!(
            matches!(m.code, Some(0 | 4)),
            "mutant {i}: {m}: {}",
            m.stderr
        );
    }
}

#[test]
fn a_bomb_past_the_limit_is_refused_without_its_memory() {
    // 5 GiB of zeros in 5 MB: past the 4 GiB limit. It used to cost 4.2 GB
    // before the refusal, and to abort under `ulimit -v`.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bomb.neff");
    let bytes = pkg2_raw(&zeros_gzip(&[], 5 << 10));
    std::fs::write(&file, &bytes).unwrap();
    let path = file.to_str().unwrap();
    let want = "the payload inflates beyond the limit of 4294967296 bytes";
    let m = measured(&["inspect", path], None);
    eprintln!("5 GiB bomb ({} bytes): {m}", bytes.len());
    assert_eq!(m.code, Some(4), "{}", m.stderr);
    assert!(
        m.stderr.contains(path) && m.stderr.contains(want),
        "{}",
        m.stderr
    );
    assert!(m.peak_kib < MAX_PEAK_KIB, "{m}");
    assert!(m.secs < 4.0 * MAX_SECS, "{m}");
    // Under 2 GB of address space: the same refusal, not an abort.
    let m = measured(&["inspect", path], Some(2_000_000));
    eprintln!("5 GiB bomb under ulimit -v 2000000: {m}");
    assert_eq!(m.code, Some(4), "{m}: {}", m.stderr);
    assert!(m.stderr.contains(want), "{}", m.stderr);
}

#[test]
fn a_lying_isize_exits_4_under_a_small_address_space() {
    // 5 MB of noise claiming 4 GiB: the claim used to be allocated at once
    // ("memory allocation of 4278190080 bytes failed", exit 134).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("isize.neff");
    let mut tar = fixture_tar(&Parts::default());
    let mut rng = fastrand::Rng::with_seed(7);
    tar.extend((0..5_000_000).map(|_| rng.u8(..)));
    let gz = with_isize(tpb_emu::neff::gzip(&tar), 0xFEFF_FFFF);
    std::fs::write(&file, pkg2_raw(&gz)).unwrap();
    let path = file.to_str().unwrap();
    let m = measured(&["inspect", path], Some(2_000_000));
    eprintln!("lying ISIZE under ulimit -v 2000000: {m}");
    assert_eq!(m.code, Some(4), "{m}: {}", m.stderr);
    assert!(
        m.stderr.contains(path) && m.stderr.contains("gzip ISIZE mismatch"),
        "{}",
        m.stderr
    );
}

/// A program whose DRAM is larger than the process may hold: exit 4 naming
/// the manifest, not an abort on the allocation (exit 134); and a 256 MiB
/// output written without a second copy of it.
#[test]
fn dram_past_the_address_space_exits_4_and_outputs_are_not_doubled() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = |bytes: u64| {
        let p = dir.path().join(format!("p{bytes}.toml"));
        std::fs::write(
            &p,
            format!(
                "arch = \"cayman\"\n[streams]\n[[variable]]\nname = \"y\"\nid = 1\n\
                 dtype = \"uint8\"\nshape = [{bytes}]\nrole = \"output\"\n"
            ),
        )
        .unwrap();
        p
    };
    let big = manifest(4_000_000_000);
    let out = dir.path().join("out");
    let (b, o) = (big.to_str().unwrap(), out.to_str().unwrap());
    let m = measured(&["run", b, "--out", o, "--backend", "cpu"], Some(2_000_000));
    eprintln!("4 GB of DRAM under ulimit -v 2000000: {m}");
    assert_eq!(m.code, Some(4), "{m}: {}", m.stderr);
    assert!(
        m.stderr.contains(b) && m.stderr.contains("out of host memory"),
        "{}",
        m.stderr
    );
    assert!(!out.exists(), "a refused run writes nothing");
    // 256 MiB out: one copy (the DRAM image), never the image and a file's worth more.
    let mib = 256u64;
    let p = manifest(mib << 20);
    let m = measured(
        &["run", p.to_str().unwrap(), "--out", o, "--backend", "cpu"],
        None,
    );
    eprintln!("a {mib} MiB output: {m}");
    assert_eq!(m.code, Some(0), "{m}: {}", m.stderr);
    assert_eq!(
        std::fs::metadata(out.join("y.npy")).unwrap().len(),
        (mib << 20) + 128
    );
    assert!(m.peak_kib < (mib * 1024) * 12 / 10 + 64 * 1024, "{m}");
}
