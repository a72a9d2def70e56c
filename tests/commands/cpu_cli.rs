//! `tpb-emu exec` end to end: the seed's example through --load/--dump with
//! hand-computed outputs, and the exit-code contract (3 invalid record, 1 wait
//! or update modes / not a Pool record, 4 bad ADDR, SHAPE, .npy, or an access
//! outside active memory; never 101).

use crate::common;
use crate::common::code;
use crate::common::stderr;
use common::tpb;

use npyz::WriterBuilder;
use std::path::{Path, PathBuf};

use tpb_emu::isa::samples::{SEED_SRC, seed_dst, seed_max_pool_select, seed_pool};
use tpb_emu::isa::stream::to_bytes;
use tpb_emu::isa::{Addr4, Opcode, PoolFunc, Record, Region, S4d4Pl, UpdateMode, WaitMode};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("tpb-emu-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
    fn arg(&self, f: &str) -> String {
        self.path(f).to_string_lossy().into_owned()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write_stream(path: &Path, recs: &[Record]) {
    std::fs::write(path, to_bytes(recs)).unwrap();
}

fn write_f32_npy(path: &Path, shape: &[u64], data: &[f32]) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(std::io::BufWriter::new(f))
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

fn read_npy(path: &Path) -> (String, Vec<u64>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let descr = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => panic!("{other:?}"),
    };
    let shape = npy.shape().to_vec();
    let raw: Vec<u8> =
        bytes[bytes.len() - (npy.len() as usize * descr[2..].parse::<usize>().unwrap())..].to_vec();
    (descr, shape, raw)
}

fn f32s(raw: &[u8]) -> Vec<f32> {
    raw.chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The seed's 4×4 maps for four lanes, as in tests/device/cpu_pool.rs.
fn seed_data() -> Vec<f32> {
    let mut v: Vec<f32> = (1..=16).map(|x| x as f32).collect();
    v.extend((1..=16).rev().map(|x| x as f32));
    #[rustfmt::skip]
    v.extend([
        0.0, -1.0, 7.0,  7.0,
       -2.0, -3.0, 7.0,  2.0,
        5.0,  9.0, 9.0, -9.0,
        1.0,  9.0, 0.0,  8.0,
    ]);
    v.extend((1..=16).map(|x| x as f32 + 100.0));
    v
}

fn with_dst(mut p: S4d4Pl, offset: u32) -> S4d4Pl {
    p.dst = seed_dst();
    p.dst.addr = Addr4::new(Region::Sbuf, 0, offset);
    p
}

fn seed_stream() -> Vec<Record> {
    vec![
        with_dst(seed_pool(PoolFunc::MAX_POOL, 4), 0x100).encode(),
        with_dst(seed_pool(PoolFunc::AVG_POOL, 4), 0x200).encode(),
        with_dst(seed_max_pool_select(4), 0x300).encode(),
    ]
}

#[test]
fn seed_example_through_load_and_dump() {
    let d = Dir::new("seed");
    write_stream(&d.path("s.bin"), &seed_stream());
    write_f32_npy(&d.path("in.npy"), &[4, 4, 4], &seed_data());
    let out = tpb(&[
        "exec",
        &d.arg("s.bin"),
        "--load",
        &format!("sbuf:0:0={}", d.arg("in.npy")),
        "--dump",
        &format!("sbuf:0:0x100:fp32:4x2x2={}", d.arg("max.npy")),
        "--dump",
        &format!("sbuf:0:512:fp32:4x4={}", d.arg("avg.npy")),
        "--dump",
        &format!("0x00000300:uint8:4x2x2={}", d.arg("sel.npy")),
        "--dump",
        &format!("sbuf:0:0x300:bf16:4x1={}", d.arg("bits.npy")),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (descr, shape, raw) = read_npy(&d.path("max.npy"));
    assert_eq!(
        (descr.as_str(), shape.as_slice()),
        ("<f4", &[4u64, 2, 2][..])
    );
    #[rustfmt::skip]
    assert_eq!(f32s(&raw), [
        6.0, 8.0, 14.0, 16.0,
        16.0, 14.0, 8.0, 6.0,
        0.0, 7.0, 9.0, 9.0,
        106.0, 108.0, 114.0, 116.0,
    ]);
    let (descr, shape, raw) = read_npy(&d.path("avg.npy"));
    assert_eq!((descr.as_str(), shape.as_slice()), ("<f4", &[4u64, 4][..]));
    #[rustfmt::skip]
    assert_eq!(f32s(&raw), [
        3.5, 5.5, 11.5, 13.5,
        13.5, 11.5, 5.5, 3.5,
        -1.5, 5.75, 6.0, 2.0,
        103.5, 105.5, 111.5, 113.5,
    ]);
    let (descr, shape, raw) = read_npy(&d.path("sel.npy"));
    assert_eq!(
        (descr.as_str(), shape.as_slice()),
        ("|u1", &[4u64, 2, 2][..])
    );
    assert_eq!(raw, [3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 1, 0, 3, 3, 3, 3]);
    // bf16 dumps as uint16 bits: the first two index bytes of each lane.
    let (descr, shape, raw) = read_npy(&d.path("bits.npy"));
    assert_eq!((descr.as_str(), shape.as_slice()), ("<u2", &[4u64, 1][..]));
    assert_eq!(raw, [3, 3, 0, 0, 0, 0, 3, 3]);
}

#[test]
fn trace_prints_records_and_cores() {
    let d = Dir::new("trace");
    let mut p = seed_pool(PoolFunc::MAX_POOL, 20);
    p.src = SEED_SRC;
    write_stream(&d.path("s.bin"), &[p.encode()]);
    let out = tpb(&["exec", &d.arg("s.bin"), "--trace"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("0: POOL "), "{}", lines[0]);
    assert_eq!(lines[1], "P0: Entering Dispatch");
    assert_eq!(lines[2], "P0: In dispatch, CPU ID: 0, got opcode 0x45.");
    assert_eq!(lines[3], "P0: Pool : num_chans = 16");
    assert_eq!(
        lines[4],
        "P0: Running max_pool with period = 4 and num = 4."
    );
    assert_eq!(lines[9], "P1: Pool : num_chans = 4");
    assert_eq!(lines.iter().filter(|l| l.starts_with("P1:")).count(), 6);
    assert!(!lines.iter().any(|l| l.starts_with("P2:")));
}

#[test]
fn big_endian_fortran_npy_loads_like_c_order() {
    let d = Dir::new("fortran");
    write_stream(&d.path("s.bin"), &seed_stream()[..1]);
    // shape (4, 16) stored column-major as big-endian f4.
    let data = seed_data();
    let mut fortran = vec![];
    for c in 0..16 {
        for lane in 0..4 {
            fortran.push(data[lane * 16 + c]);
        }
    }
    let f = std::fs::File::create(d.path("in.npy")).unwrap();
    let mut w = npyz::WriteOptions::new()
        .dtype(npyz::DType::Plain(">f4".parse().unwrap()))
        .order(npyz::Order::Fortran)
        .shape(&[4, 16])
        .writer(std::io::BufWriter::new(f))
        .begin_nd()
        .unwrap();
    w.extend(fortran).unwrap();
    w.finish().unwrap();
    let out = tpb(&[
        "exec",
        &d.arg("s.bin"),
        "--load",
        &format!("sbuf:0:0={}", d.arg("in.npy")),
        "--dump",
        &format!("sbuf:0:0x100:fp32:4x4={}", d.arg("max.npy")),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (_, _, raw) = read_npy(&d.path("max.npy"));
    assert_eq!(
        &f32s(&raw)[..8],
        [6.0, 8.0, 14.0, 16.0, 16.0, 14.0, 8.0, 6.0]
    );
}

#[test]
fn malformed_addresses_and_shapes_exit_2_bad_npy_and_ranges_exit_4() {
    let d = Dir::new("bad");
    write_stream(&d.path("s.bin"), &seed_stream());
    write_f32_npy(&d.path("in.npy"), &[4, 4, 4], &seed_data());
    std::fs::write(d.path("junk.npy"), b"not an npy file at all").unwrap();
    let f64_npy = d.path("f64.npy");
    npyz::to_file_1d(&f64_npy, vec![1.0f64, 2.0]).unwrap();
    let load = |spec: String| tpb(&["exec", &d.arg("s.bin"), "--load", &spec]);
    let dump = |spec: String| tpb(&["exec", &d.arg("s.bin"), "--dump", &spec]);
    // Malformed flag values: usage errors (exit 2).
    for out in [
        load(format!("sbuf:128:0={}", d.arg("in.npy"))),
        load(format!("dram:0:0={}", d.arg("in.npy"))),
        load(format!("0x80000010={}", d.arg("in.npy"))),
        load(format!("sbuf:0:zz={}", d.arg("in.npy"))),
        load(d.arg("in.npy")),
        dump(format!("sbuf:0:0:fp32:4x0={}", d.arg("o.npy"))),
        dump(format!("sbuf:0:0:fp32:={}", d.arg("o.npy"))),
        dump(format!("sbuf:0:0:float32:4={}", d.arg("o.npy"))),
        dump("sbuf:0:0:fp32:4".to_string()),
    ] {
        assert_eq!(code(&out), 2, "{}", stderr(&out));
    }
    // Bad files, and loads or dumps outside active memory: bad input (exit 4).
    for out in [
        load(format!("sbuf:0:0={}", d.arg("junk.npy"))),
        load(format!("sbuf:0:0={}", d.arg("f64.npy"))),
        load(format!("sbuf:0:0={}", d.arg("missing.npy"))),
        // Outside active memory: 4 lanes from partition 126; past 224 KiB in a lane.
        load(format!("sbuf:126:0={}", d.arg("in.npy"))),
        load(format!("sbuf:0:0x37fc4={}", d.arg("in.npy"))),
        load(format!("psum:0:0x3ff0={}", d.arg("in.npy"))),
        dump(format!("sbuf:127:0:fp32:2x4={}", d.arg("o.npy"))),
        dump(format!("sbuf:0:0x37ffc:fp32:1x2={}", d.arg("o.npy"))),
        dump(format!("psum:0:0x4000:fp32:1x1={}", d.arg("o.npy"))),
    ] {
        assert_eq!(code(&out), 4, "{}", stderr(&out));
    }
    assert!(!d.path("o.npy").exists());
    // The same dump fits on MARIANA (256 KiB) but not on SUNDA (192 KiB).
    let spec = format!("sbuf:0:0x30000:fp32:1x2={}", d.arg("o.npy"));
    assert_eq!(
        code(&tpb(&[
            "exec",
            &d.arg("s.bin"),
            "--arch",
            "mariana",
            "--dump",
            &spec
        ])),
        0
    );
    assert_eq!(
        code(&tpb(&[
            "exec",
            &d.arg("s.bin"),
            "--arch",
            "sunda",
            "--dump",
            &spec
        ])),
        4
    );
    // A stream whose length is not a multiple of 64.
    std::fs::write(d.path("short.bin"), [0u8; 65]).unwrap();
    assert_eq!(code(&tpb(&["exec", &d.arg("short.bin")])), 4);
}

#[test]
fn invalid_record_exits_3_like_validate() {
    let d = Dir::new("invalid");
    let mut bad = seed_pool(PoolFunc::AVG_POOL, 4);
    bad.pool_scale_bits = 0;
    let mut recs = seed_stream();
    recs.insert(1, bad.encode());
    write_stream(&d.path("s.bin"), &recs);
    let out = tpb(&["exec", &d.arg("s.bin")]);
    assert_eq!(code(&out), 3);
    let v = tpb(&["validate", &d.arg("s.bin")]);
    assert_eq!(code(&v), 3);
    assert_eq!(stderr(&out), stderr(&v));
    assert!(stderr(&out).contains("offset=64"));
    assert!(stderr(&out).contains("s4d4_pool_scale_valid"));
}

#[test]
fn wait_or_update_modes_exit_1_pointing_to_run() {
    let d = Dir::new("events");
    for (wait, update) in [
        (WaitMode::SEM_GE, UpdateMode::NONE),
        (WaitMode::NONE, UpdateMode::SEM_INC),
    ] {
        let mut p = seed_pool(PoolFunc::MAX_POOL, 4);
        p.events.wait_mode = wait;
        p.events.update_mode = update;
        let mut recs = seed_stream();
        recs.push(p.encode());
        write_stream(&d.path("s.bin"), &recs);
        let out = tpb(&[
            "exec",
            &d.arg("s.bin"),
            "--dump",
            &format!("sbuf:0:0x100:fp32:1x1={}", d.arg("o.npy")),
        ]);
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        assert!(stderr(&out).contains("tpb-emu run"), "{}", stderr(&out));
        assert!(stderr(&out).contains("offset 192"), "{}", stderr(&out));
        assert!(!d.path("o.npy").exists(), "nothing runs");
    }
}

#[test]
fn records_exec_does_not_run_exit_1() {
    let d = Dir::new("drain");
    let mut drain = Record::default();
    drain.0[0] = Opcode::DRAIN.0;
    drain.0[1] = 16;
    write_stream(&d.path("s.bin"), &[seed_stream()[0], drain]);
    let out = tpb(&["exec", &d.arg("s.bin")]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("DRAIN"));
}

#[test]
fn psum_round_trip_with_a_raw_addr4() {
    let d = Dir::new("psum");
    let mut p = seed_pool(PoolFunc::MAX_POOL, 2);
    p.src.addr = Addr4::new(Region::Psum, 5, 0);
    p.dst.addr = Addr4::new(Region::Psum, 5, 0x800);
    write_stream(&d.path("s.bin"), &[p.encode()]);
    write_f32_npy(&d.path("in.npy"), &[2, 16], &seed_data()[16..48]);
    let out = tpb(&[
        "exec",
        &d.arg("s.bin"),
        "--load",
        &format!("psum:5:0={}", d.arg("in.npy")),
        "--dump",
        // psum partition 5, offset 0x800, as a raw ADDR4.
        &format!(
            "0x{:08x}:int32:2x4={}",
            0x0200_0000 + (5 << 15) + 0x800,
            d.arg("o.npy")
        ),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let (descr, _, raw) = read_npy(&d.path("o.npy"));
    assert_eq!(descr, "<i4");
    let ints: Vec<i32> = raw
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // The fp32 bits of the maxima, read back as int32 (no conversion on dump).
    let want: Vec<i32> = [16.0f32, 14.0, 8.0, 6.0, 0.0, 7.0, 9.0, 9.0]
        .iter()
        .map(|x| x.to_bits() as i32)
        .collect();
    assert_eq!(ints, want);
}
