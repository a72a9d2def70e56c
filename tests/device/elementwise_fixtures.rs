//! Cast (0x47) and Tensor-Tensor (0x41, 0x51) against vectors computed
//! independently with numpy/ml_dtypes and Python integers
//! (scripts/gen_kernel_fixtures.py → tests/fixtures/cast,
//! tests/fixtures/tensor_tensor), on the CPU reference and, when an adapter
//! exists, the GPU. Each file becomes one record on its own partition; all
//! records of a directory run as one program.

use crate::common;
use std::path::{Path, PathBuf};
use tpb_emu::device::DeviceMemory;
use tpb_emu::isa::enums::{AluOp, Dtype};
use tpb_emu::isa::record::Record;
use tpb_emu::isa::tensor::Tensor3d;
use tpb_emu::isa::{Addr4, Location, Opcode, Region, S3s3d3Tt, S4d4Tr, Tensor4d};
use tpb_emu::limits::{Arch, PARTITIONS};

const ARCH: Arch = Arch::Cayman;
/// Bytes of one file's slot in its partition: src0, src1, dst at 0, 1/3, 2/3.
const SLOT: u32 = 0x6000;

/// One fixture file: its record's dtypes and op, and its vectors.
struct Fixture {
    name: String,
    opcode: Opcode,
    op: AluOp,
    dtypes: Vec<Dtype>, // sources then out
    rows: Vec<Vec<u32>>,
}

fn dtype(name: &str) -> Dtype {
    Dtype::from_name(name).unwrap_or_else(|| panic!("dtype {name}"))
}

fn read_dir(dir: &str) -> Vec<Fixture> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir);
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
            let (opcode, op, dtypes) = if dir == "cast" {
                let (a, b) = name.split_once("_to_").expect("<in>_to_<out>");
                (Opcode::CAST, AluOp::BYPASS, vec![dtype(a), dtype(b)])
            } else {
                let n = parts.len();
                let opcode = match parts[0] {
                    "arith" => Opcode::TENSOR_TENSOR_ARITH,
                    _ => Opcode::TENSOR_TENSOR_BITVEC,
                };
                let op = AluOp::from_name(&parts[1..n - 3].join("_")).expect("op name");
                (
                    opcode,
                    op,
                    parts[n - 3..].iter().map(|d| dtype(d)).collect(),
                )
            };
            let text = std::fs::read_to_string(p).expect("fixture");
            let rows = text
                .lines()
                .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
                .map(|l| {
                    l.split_whitespace()
                        .map(|h| u32::from_str_radix(h, 16).expect("hex"))
                        .collect()
                })
                .collect();
            Fixture {
                name,
                opcode,
                op,
                dtypes,
                rows,
            }
        })
        .collect()
}

fn at(i: usize, part: u32) -> Addr4 {
    let p = (i as u32) % PARTITIONS;
    let slot = (i as u32) / PARTITIONS;
    Addr4::new(Region::Sbuf, p, slot * SLOT + part * (SLOT / 3))
}

fn loc(a: Addr4) -> Location {
    a.location().expect("plain address")
}

fn write_column(mem: &mut DeviceMemory, a: Addr4, d: Dtype, vals: impl Iterator<Item = u32>) {
    let size = d.size().unwrap() as usize;
    let bytes: Vec<u8> = vals
        .flat_map(|v| v.to_le_bytes()[..size].to_vec())
        .collect();
    mem.write(loc(a), 1, &bytes).expect("in range");
}

/// The program and initial memory of a directory's fixtures.
fn setup(fx: &[Fixture]) -> (Vec<Record>, DeviceMemory) {
    let mut mem = DeviceMemory::new(ARCH);
    let mut records = Vec::new();
    for (i, f) in fx.iter().enumerate() {
        let n = f.rows.len();
        assert!(
            n * 4 <= (SLOT / 3) as usize && n < 65536,
            "{}: too many vectors",
            f.name
        );
        let sources = f.dtypes.len() - 1;
        for s in 0..sources {
            write_column(
                &mut mem,
                at(i, s as u32),
                f.dtypes[s],
                f.rows.iter().map(|r| r[s]),
            );
        }
        let dst = at(i, 2);
        let n = n as u16;
        records.push(if f.opcode == Opcode::CAST {
            let row = |a| Tensor4d::new(a, [(n, 1), (1, 0), (1, 0), (1, 0)]);
            S4d4Tr::new(
                f.opcode,
                f.dtypes[0],
                f.dtypes[1],
                1,
                row(at(i, 0)),
                row(dst),
            )
            .encode()
        } else {
            let row = |a| Tensor3d::new(a, [(n, 1), (1, 0), (1, 0)]);
            S3s3d3Tt::new(
                f.opcode,
                f.op,
                f.dtypes[0],
                f.dtypes[1],
                f.dtypes[2],
                1,
                row(at(i, 0)),
                row(at(i, 1)),
                row(dst),
            )
            .encode()
        });
    }
    (records, mem)
}

fn check(fx: &[Fixture], mem: &DeviceMemory, backend: &str) {
    let mut bad = Vec::new();
    for (i, f) in fx.iter().enumerate() {
        let out = *f.dtypes.last().unwrap();
        let size = out.size().unwrap() as usize;
        let got = mem
            .read(loc(at(i, 2)), 1, (f.rows.len() * size) as u64)
            .expect("in range");
        for (j, r) in f.rows.iter().enumerate() {
            let want = &r.last().unwrap().to_le_bytes()[..size];
            if &got[j * size..(j + 1) * size] != want {
                bad.push(format!(
                    "{backend} {}: {:x?} -> {:02x?}, want {:02x?}",
                    f.name,
                    &r[..r.len() - 1],
                    &got[j * size..(j + 1) * size],
                    want
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches, first: {:#?}",
        bad.len(),
        &bad[..bad.len().min(10)]
    );
}

fn run_dir(dir: &str) {
    let fx = read_dir(dir);
    assert!(!fx.is_empty());
    let (records, mem) = setup(&fx);
    let (cpu, gpu) = common::run_cpu_and_gpu(&records, &mem, ARCH, "fixture record");
    check(&fx, &cpu, "cpu");
    if let Some(gpu) = gpu {
        check(&fx, &gpu, "gpu");
    }
}

#[test]
fn cast_matches_numpy_for_every_pair_of_different_dtypes() {
    run_dir("cast");
}

#[test]
fn tensor_tensor_matches_numpy_and_python_integers() {
    run_dir("tensor_tensor");
}
