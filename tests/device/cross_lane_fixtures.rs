//! CrossLaneReduce (0x7C, 0x7D) against cases computed independently with
//! numpy/ml_dtypes and Python integers (scripts/gen_clr_fixtures.py →
//! tests/fixtures/cross_lane), on the CPU reference and, when an adapter
//! exists, the GPU. Every file is one record; all records run as one
//! program, each in its own slot of partitions 0..LANES.

use crate::common;
use crate::hand::loc;
use std::path::{Path, PathBuf};
use tpb_emu::device::gpu::GpuExecutor;
use tpb_emu::device::{CpuExecutor, DeviceMemory, Executor, NoTrace, Program, run_program};
use tpb_emu::isa::enums::{Dtype, ReduceAxis, ReduceOp};
use tpb_emu::isa::record::Record;
use tpb_emu::isa::validate::Target;
use tpb_emu::isa::{Addr4, Opcode, Region, S4d4Cr, Tensor4d};
use tpb_emu::limits::Arch;

const ARCH: Arch = Arch::Cayman;
/// Bytes of one case's slot: src at +0 (M elements), dst at +128.
const SLOT: u32 = 256;

struct Case {
    name: String,
    op: ReduceOp,
    all: bool,
    in_d: Dtype,
    out_d: Dtype,
    scale: u32,
    src: Vec<Vec<u32>>,
    out: Vec<u32>,
}

fn hex(s: &str) -> Vec<u32> {
    s.split_whitespace()
        .skip(1)
        .map(|h| u32::from_str_radix(h, 16).expect("hex"))
        .collect()
}

fn cases() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cross_lane");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("fixture directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let parts: Vec<&str> = name.split('_').collect();
            let op = match parts[0] {
                "add" => ReduceOp::ADD,
                "average" => ReduceOp::AVERAGE,
                "max" => ReduceOp::MAX,
                "or" => ReduceOp::BITWISE_OR,
                "and" => ReduceOp::BITWISE_AND,
                _ => ReduceOp::BITWISE_XOR,
            };
            let dtype = |n: &str| Dtype::from_name(n).unwrap_or_else(|| panic!("dtype {n}"));
            let text = std::fs::read_to_string(p).expect("fixture");
            let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
            Case {
                name: name.clone(),
                op,
                all: parts[1] == "all",
                in_d: dtype(parts[2]),
                out_d: dtype(parts[3]),
                scale: hex(lines[0])[0],
                src: lines
                    .iter()
                    .filter(|l| l.starts_with("src"))
                    .map(|l| hex(l))
                    .collect(),
                out: hex(lines.last().expect("out line")),
            }
        })
        .collect()
}

fn bytes(vals: &[u32], size: usize) -> Vec<u8> {
    vals.iter()
        .flat_map(|v| v.to_le_bytes()[..size].to_vec())
        .collect()
}

#[test]
fn cross_lane_reduce_matches_numpy() {
    let cases = cases();
    assert!(cases.len() >= 150, "{} cases", cases.len());
    let mut mem = DeviceMemory::new(ARCH);
    mem.fill(0xEE);
    let mut records: Vec<Record> = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let base = i as u32 * SLOT;
        let (is, os) = (
            c.in_d.size().unwrap() as usize,
            c.out_d.size().unwrap() as usize,
        );
        for (p, lane) in c.src.iter().enumerate() {
            mem.write(loc(p as u32, base), 1, &bytes(lane, is))
                .expect("in range");
        }
        let m = c.src[0].len() as u16;
        let opcode = if c.op.is_arith() {
            Opcode::CROSS_LANE_REDUCE_ARITH
        } else {
            Opcode::CROSS_LANE_REDUCE_BITVEC
        };
        let axis = if c.all {
            ReduceAxis::ALL
        } else {
            ReduceAxis::PARTITIONS
        };
        let row = |off: u32, n: u16| {
            Tensor4d::new(
                Addr4::new(Region::Sbuf, 0, off),
                [(n, 1), (1, 0), (1, 0), (1, 0)],
            )
        };
        let r = S4d4Cr::new(
            opcode,
            c.op,
            axis,
            c.in_d,
            c.out_d,
            c.src.len() as u8,
            f32::from_bits(c.scale),
            row(base, m),
            row(base + 128, c.out.len() as u16),
        );
        assert!(os * c.out.len() <= 128);
        records.push(r.encode());
    }
    let program = Program::from_stream(
        &tpb_emu::isa::stream::to_bytes(&records),
        Target::pool(ARCH),
    )
    .unwrap_or_else(|e| panic!("invalid: {e}"));
    let mut cpu = mem.clone();
    run_program(
        &mut CpuExecutor::default(),
        &program,
        &mut cpu,
        &mut NoTrace,
    )
    .expect("cpu");
    let check = |got: &DeviceMemory, who: &str| {
        for (i, c) in cases.iter().enumerate() {
            let os = c.out_d.size().unwrap() as usize;
            let want = bytes(&c.out, os);
            let have = got
                .read(loc(0, i as u32 * SLOT + 128), 1, want.len() as u64)
                .expect("in range");
            assert_eq!(have, want, "{who}: {}", c.name);
        }
    };
    check(&cpu, "cpu");
    if let Some(g) = common::gpu() {
        let mut gpu = mem.clone();
        let mut exec = GpuExecutor::new(&g, ARCH).expect("gpu executor");
        run_program(
            &mut exec as &mut dyn Executor,
            &program,
            &mut gpu,
            &mut NoTrace,
        )
        .expect("gpu");
        check(&gpu, "gpu");
        assert_eq!(common::first_difference(&cpu, &gpu), None);
    }
}
